"""Exception and warning types raised by mklopt.

Every error a user can trigger derives from :class:`MKLError`; input errors
also derive from :class:`ValueError` so generic ``except ValueError`` code
keeps working. Messages say what is wrong *and* what to do about it.
"""

from __future__ import annotations


class MKLError(Exception):
    """Base class of every exception raised by mklopt."""


class InvalidInputError(MKLError, ValueError):
    """An argument (kernels, labels, C, p, weights, ...) is invalid."""


class InputTypeError(InvalidInputError, TypeError):
    """An argument is of a type mklopt cannot use (also a ``TypeError``, as scikit-learn's checks expect)."""


class KernelError(InvalidInputError):
    """A kernel matrix is malformed (shape, finiteness, symmetry, zero)."""


class NotPSDError(KernelError):
    """A kernel matrix has materially negative eigenvalues."""


class RankError(KernelError):
    """A kernel's rank is too small for the requested tail-sum cutoff."""


class BackendError(MKLError):
    """A solver backend is unknown, missing, or cannot solve the problem."""


class BackendNotInstalledError(BackendError, ImportError):
    """The requested backend is known but not installed."""


class IncapableBackendError(BackendError):
    """The requested backend cannot handle the formulation's cone class."""


class MissingDependencyError(MKLError, ImportError):
    """An optional dependency (an extra such as ``docs``) is not installed; says what to install."""


class SolverError(MKLError, RuntimeError):
    """A backend failed, or returned a status mklopt cannot accept."""


class FormulationError(InvalidInputError):
    """Unknown formulation, or one that cannot express the request."""


class MKLWarning(UserWarning):
    """Something worth knowing happened, e.g. eigenvalues were clipped."""


class UncertifiedWarning(MKLWarning):
    """A backend claimed success but mklopt's certificate does not agree."""


class DisagreementWarning(MKLWarning):
    """``verify=True`` found backends that disagree beyond tolerance."""
