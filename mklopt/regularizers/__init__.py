"""Kernel-weight sets :math:`\\Theta` (the MKL regularizers).

Throughout, **p is the weight norm**: ``LpBall(p)`` is
:math:`\\{\\mu \\ge 0 : \\|\\mu\\|_p \\le 1\\}`, equivalent to the block norm
:math:`\\|w\\|_{2,b}` with :math:`b = 2p/(p+1)` (see :func:`block_from_weight_norm`).

* :mod:`.base` — :class:`Regularizer` and the generic CVXPY machinery;
* :mod:`.lp` — ℓp balls (closed forms);
* :mod:`.sets` — weighted ℓ1, user constraints, elastic net, ellipsoids,
  fixed weights;
* :mod:`.penalties` — the block-norm and VKR penalties (not weight sets);
* :mod:`.spec` — ``as_regularizer`` and the specs stored in saved results.
"""

from .auxiliary import solve_auxiliary
from .base import Regularizer
from .groups import GroupSimplex
from .spectrahedron import Spectrahedron
from .krr import KRRProblem
from .lp import L1, LpBall, stable_norm
from .norms import block_from_weight_norm, check_p, conjugate_exponent, weight_from_block_norm
from .penalties import BlockNorm, VKRPenalty
from .sets import ConstraintSet, ElasticNet, Fixed, NonIsotropic, WeightedL1
from .spec import as_regularizer, from_spec, spec_of

__all__ = [
    "Regularizer", "LpBall", "L1", "WeightedL1", "ElasticNet", "NonIsotropic",
    "ConstraintSet", "GroupSimplex", "Spectrahedron", "Fixed", "BlockNorm", "VKRPenalty", "as_regularizer",
    "conjugate_exponent",
    "block_from_weight_norm", "weight_from_block_norm", "check_p", "from_spec", "spec_of",
    "solve_auxiliary", "stable_norm",
]
__all__ += ["KRRProblem"]
