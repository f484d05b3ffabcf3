"""mklopt: a convex-modeling suite for Multiple Kernel Learning.

Every formulation is declarative CVXPY solved by pluggable backends, and every
result carries mklopt's own duality-gap certificate. **p is the weight norm**
(:math:`\\|\\mu\\|_p \\le 1`) everywhere.
"""

import os as _os

# The compiled loops' OpenMP threads wait passively at barriers (set before numba starts its
# threading layer): with another busy process, spinning threads made 2 threads slower than 1.
# Set OMP_WAIT_POLICY yourself before importing mklopt to choose otherwise.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import importlib as _importlib
import importlib.abc as _abc
import importlib.util as _util
import sys as _sys
import warnings as _warnings

from ._version import __version__
from .api import fit, solve
from .backends import available_backends
from .certificates import certify
from .model_selection import path
from .estimators import MKLClassifier, MKLOneClass, MKLRegressor, VKRClassifier
from .exceptions import (BackendError, InvalidInputError, KernelError, MKLError, NotPSDError,
                         SolverError)
from .kernels import KernelSet, ViewKernel, kernel_stack, views
from .losses import Loss
from .regularizers import (L1, BlockNorm, ConstraintSet, ElasticNet, Fixed, GroupSimplex, LpBall,
                           NonIsotropic, Regularizer, Spectrahedron, VKRPenalty, WeightedL1,
                           block_from_weight_norm, weight_from_block_norm)
from .certificates import Certificate
from .results import MKLResult
from .weight_methods import learn_weights
from .compiling import compile
from .compiling import install as _watch_compilation

_watch_compilation()  # one log line when a fit waits for numba to compile mklopt's core

#: Modules that moved into the subpackages ``certificates``, ``results`` and
#: ``model_selection`` in 0.2.0: the old names still import, with a DeprecationWarning.
MOVED = {f"mklopt.{old}": f"mklopt.{new}" for old, new in {
    "bounds": "certificates.bounds", "feasibility": "certificates.feasibility",
    "recertify": "certificates.recertify", "krr_certificate": "certificates.krr",
    "vkr_certificate": "certificates.vkr", "result": "results.result",
    "result_io": "results.result_io", "polish": "results.polish", "sweep": "model_selection.search",
    "sweep_run": "model_selection.sweep_run", "sweep_log": "model_selection.sweep_log",
    "sweep_tasks": "model_selection.sweep_tasks"}.items()}


class _MovedModules(_abc.MetaPathFinder, _abc.Loader):
    """Import an old module name as its new module (the same object), saying where it went."""

    def find_spec(self, fullname, path=None, target=None):
        return _util.spec_from_loader(fullname, self) if fullname in MOVED else None

    def create_module(self, spec):
        _warnings.warn(f"{spec.name} moved to {MOVED[spec.name]}; import it from there "
                       "(the old name goes in a later release)", DeprecationWarning, stacklevel=2)
        return _importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):
        """The new module is already executed."""


if not any(isinstance(finder, _MovedModules) for finder in _sys.meta_path):
    _sys.meta_path.append(_MovedModules())


def __getattr__(name: str):
    if f"mklopt.{name}" in MOVED:  # ``mklopt.result.X`` without importing it first
        return _importlib.import_module(f"mklopt.{name}")
    raise AttributeError(f"module 'mklopt' has no attribute {name!r}")


__all__ = [
    "solve", "fit", "path", "certify", "compile", "learn_weights", "available_backends", "KernelSet", "kernel_stack", "views", "ViewKernel", "MKLResult",
    "Certificate", "Regularizer", "LpBall", "L1", "WeightedL1", "ElasticNet", "NonIsotropic",
    "ConstraintSet", "GroupSimplex", "Spectrahedron", "Fixed", "BlockNorm", "VKRPenalty", "block_from_weight_norm", "weight_from_block_norm",
    "MKLClassifier", "MKLRegressor", "MKLOneClass", "VKRClassifier", "Loss",
    "MKLError", "InvalidInputError", "KernelError", "NotPSDError", "BackendError", "SolverError",
]
