"""Outer loops. One generic loop (:mod:`.base`); each driver is a thin specialization.

``DRIVERS`` maps the names accepted by :func:`mklopt.fit` to driver classes;
``register(name, cls)`` adds one.
"""

from __future__ import annotations

from .base import Driver, Step, run
from .chunking import Chunking
from .cutting_plane import CuttingPlane
from .dca import DCA
from .simplemkl import SimpleMKL
from .wrapper import Wrapper
from .vkr_cd import VKRCoordinateDescent
from .mirror_descent import MirrorDescent
from .newton import Newton
from .krr_interpolated import KRRInterpolated
from .krr_pgd import KRRProjectedGradient
from .polynomial_krr import PolynomialKRR

DRIVERS: dict[str, type] = {"wrapper": Wrapper, "cutting_plane": CuttingPlane, "dca": DCA}
DRIVERS["vkr_cd"] = VKRCoordinateDescent
DRIVERS["simplemkl"] = SimpleMKL
DRIVERS["chunking"] = Chunking
DRIVERS["newton"] = Newton
DRIVERS["mirror_descent"] = MirrorDescent
DRIVERS["krr_projected_gradient"] = KRRProjectedGradient
DRIVERS["krr_interpolated"] = KRRInterpolated
DRIVERS["polynomial_krr"] = PolynomialKRR


def register(name: str, cls: type) -> None:
    """Make a driver class available as ``mklopt.fit(..., driver=name)``."""
    DRIVERS[name] = cls


__all__ = ["DRIVERS", "Driver", "Step", "run", "register", "Wrapper", "CuttingPlane"]
