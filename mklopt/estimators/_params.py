"""The parameters the MKL estimators share, checked before a fit: the driver's name (the
registered outer loops, ``"exact"``, the two-stage weight methods), the normalization, θ,
the tolerances, the regularizer and the low-rank options."""

from __future__ import annotations

import numbers

from .._validation import check_max_iter, check_tol
from ..exceptions import InvalidInputError
from ..kernels import NORMALIZATIONS
from ..kernels.approximate import APPROXIMATIONS
from ..regularizers import as_regularizer
from ..weight_methods import METHODS as WEIGHT_METHODS

__all__ = ["EXACT", "AUTO", "VKR_DRIVERS", "WEIGHT_METHODS", "driver_names", "check_rank",
           "check_common_params"]

#: Drivers run once to the certified optimum (everything else goes to :func:`mklopt.fit`).
EXACT = "exact"
#: The default: an outer loop to the certified gap (never the exact interior-point solve,
#: 10-100x slower than the loops already at 150 points, on every loss).
AUTO = "auto"
#: Registered drivers of other problems (not MKL over a weight set).
VKR_DRIVERS = ("vkr_cd",)
#: Losses whose labels or targets give the target kernel yy' of the two-stage ``WEIGHT_METHODS``.
_ALIGN_LOSSES = ("hinge", "epsilon_insensitive", "squared_error")


def check_rank(rank) -> int:
    """``rank=`` of an estimator: an integer >= 1 (columns of each kernel's factor)."""
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
        raise InvalidInputError(f"rank must be None (dense kernels) or an integer >= 1, got {rank!r}.")
    return int(rank)


def driver_names(loss: str = "hinge") -> list[str]:
    """``"exact"``, the registered MKL drivers written for ``loss`` and the weight methods.

    The weight methods (:func:`mklopt.learn_weights`: ``"align"``, ``"alignf"``,
    ``"easymkl"``, ``"rmkl"``, ``"gram"``, ``"memo"``, ``"pwmk"``, ``"fheuristic"``)
    fix the weights from the labels first, then fit the loss at those weights;
    they need two-class labels (the alignment methods also real targets), not
    the one-class or shared multiclass problems.
    """
    from ..drivers import DRIVERS

    usable = [d for d, cls in DRIVERS.items() if d not in VKR_DRIVERS
              and (getattr(cls, "losses", None) is None or loss in cls.losses)]
    labels = "any" if loss in _ALIGN_LOSSES and loss != "hinge" else "labels"
    two_stage = [name for name, method in WEIGHT_METHODS.items()
                 if loss in _ALIGN_LOSSES and method.targets in ("any", labels)]
    return [EXACT, *sorted(usable), *two_stage]


def check_common_params(estimator) -> None:
    """Every shared parameter of ``estimator`` valid, else an :class:`~mklopt.exceptions.InvalidInputError`
    that names it."""
    if estimator.normalization is not None and estimator.normalization not in NORMALIZATIONS:
        raise InvalidInputError(
            f"normalization must be None or one of {NORMALIZATIONS}, got {estimator.normalization!r}.")
    drivers = [AUTO, *driver_names(estimator._loss_name())]
    if estimator.driver in VKR_DRIVERS:
        raise InvalidInputError(
            f"driver {estimator.driver!r} solves Voted Kernel Regularization, not MKL; use "
            f"mklopt.VKRClassifier(solver='cd'), or one of {drivers}.")
    if estimator.driver not in drivers:
        raise InvalidInputError(f"driver must be one of {drivers}, got {estimator.driver!r}.")
    if not (isinstance(estimator.theta, numbers.Integral) and estimator.theta >= 0):
        raise InvalidInputError(f"theta must be an integer >= 0, got {estimator.theta!r}.")
    if estimator.tol is not None:
        check_tol(estimator.tol)
    if estimator.max_iter is not None:
        check_max_iter(estimator.max_iter)
    as_regularizer(estimator.regularizer, estimator.p)  # validates p and the regularizer type
    if getattr(estimator, "rank", None) is not None:
        check_rank(estimator.rank)
        if estimator.approximation not in APPROXIMATIONS:
            raise InvalidInputError(f"approximation must be one of {APPROXIMATIONS}, "
                                    f"got {estimator.approximation!r}.")
