"""The formulation catalogue: one short declarative module per formulation.

``FORMULATIONS`` maps each name accepted by :func:`mklopt.solve` to its
:class:`Formulation` (cone class, builder, catalogue page).
"""

from __future__ import annotations

from ._base import Formulation, MKLData, Model
from . import lp_block_primal, lp_dual, lp_primal, qcqp_l1, svm
from . import dc_subproblem
from . import vkr_lp
from . import lanckriet_sdp
from . import krr_l2

FORMULATIONS: dict[str, Formulation] = {
    mod.FORMULATION.name: mod.FORMULATION
    for mod in (svm, qcqp_l1, lp_primal, lp_block_primal, lp_dual, dc_subproblem, vkr_lp, lanckriet_sdp)
}


def register(formulation: Formulation) -> None:
    """Add a formulation to the catalogue (used by later formulation modules)."""
    FORMULATIONS[formulation.name] = formulation


register(krr_l2.FORMULATION)


__all__ = ["FORMULATIONS", "Formulation", "MKLData", "Model", "register"]
