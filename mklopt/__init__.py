"""mklopt: a convex-modeling suite for Multiple Kernel Learning.

Every formulation is declarative CVXPY solved by pluggable backends, and every
result carries mklopt's own duality-gap certificate. **p is the weight norm**
(:math:`\\|\\mu\\|_p \\le 1`) everywhere.
"""

from importlib import metadata as _metadata

from .api import fit, solve
from .backends import available_backends
from .certificates import certify
from .path import path
from .estimators import MKLClassifier, MKLOneClass, MKLRegressor, VKRClassifier
from .exceptions import (BackendError, InvalidInputError, KernelError, MKLError, NotPSDError,
                         SolverError)
from .kernels import KernelSet, kernel_stack
from .losses import Loss
from .regularizers import (L1, BlockNorm, ConstraintSet, ElasticNet, Fixed, GroupSimplex, LpBall,
                           NonIsotropic, Regularizer, Spectrahedron, VKRPenalty, WeightedL1,
                           block_from_weight_norm, weight_from_block_norm)
from .result import Certificate, MKLResult
from .weight_methods import learn_weights

try:  # the installed distribution's own version: one source, pyproject.toml
    __version__ = _metadata.version("mklopt")
except _metadata.PackageNotFoundError:  # a checkout that was never installed
    __version__ = "0+unknown"

__all__ = [
    "solve", "fit", "path", "certify", "learn_weights", "available_backends", "KernelSet", "kernel_stack", "MKLResult",
    "Certificate", "Regularizer", "LpBall", "L1", "WeightedL1", "ElasticNet", "NonIsotropic",
    "ConstraintSet", "GroupSimplex", "Spectrahedron", "Fixed", "BlockNorm", "VKRPenalty", "block_from_weight_norm", "weight_from_block_norm",
    "MKLClassifier", "MKLRegressor", "MKLOneClass", "VKRClassifier", "Loss",
    "MKLError", "InvalidInputError", "KernelError", "NotPSDError", "BackendError", "SolverError",
]
