"""EasyMKL (Aiolli & Donini, "EasyMKL: a scalable multiple kernel learning algorithm",
Neurocomputing 169, 2015).

One QP on the sum of the kernels, then each kernel's weight from its own
margin term at that QP's solution:

.. math::

    \\gamma^* = \\arg\\min_{\\gamma\\in\\Gamma}\\ (1-\\lambda)\\,\\gamma^\\top Y\\Big(\\sum_m K_m\\Big)Y\\gamma
        + \\lambda\\|\\gamma\\|^2, \\qquad
    \\mu_m \\propto d_m(\\gamma^*) = \\gamma^{*\\top} Y K_m Y \\gamma^* ,

with :math:`\\Gamma` one probability simplex per class. The QP is solved by a
CVXPY backend and certified by its Frank–Wolfe gap
(:func:`~mklopt.weight_methods._simplex_qp.class_margin`); the weights are
then fixed and the SVM at them is certified like every mklopt result.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._options import Choice, Real
from ..exceptions import InvalidInputError
from ._access import binary_labels, dense_kernels, normalized
from ._simplex_qp import class_margin
from .registry import WeightFit, WeightMethod, register

__all__ = ["easymkl"]


def easymkl(kernels, y, *, lam: float = 0.1, norm: int = 1, backend=None) -> WeightFit:
    """EasyMKL weights.

    Parameters
    ----------
    kernels : KernelSet, array (M, n, n) or list of (n, n) arrays
        The paper uses trace-normalized kernels (``KernelSet(K, normalize="trace")``);
        the scale of :math:`\\sum_m K_m` against :math:`\\lambda` matters.
    y : array (n,)
        Two-class labels (any two values).
    lam : float in [0, 1], default 0.1
        :math:`\\lambda` (MKLpy's default): 0 maximizes the hard margin of the sum
        kernel, 1 gives each kernel the distance between its class centroids.
    norm : {1, 2}, default 1
        :math:`\\|\\mu\\|_1 = 1` (MKLpy) or :math:`\\|\\mu\\|_2 = 1` (the paper's
        :math:`\\eta = d/\\|d\\|_2`); the same direction, only the SVM's effective C differs.
    backend : str, optional
        QP backend.

    Returns
    -------
    WeightFit
        ``weights`` and ``info``: the QP's value, certified gap and ``gamma``.
    """
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not 0 <= lam <= 1:
        raise InvalidInputError(f"easymkl: lam must be a number in [0, 1], got {lam!r}.")
    ks, K = dense_kernels(kernels, "easymkl")
    y = binary_labels(y, ks.n, "easymkl")
    qp = class_margin(K.sum(axis=0), y, float(lam), backend)
    signed = y * qp.point
    scores = (K @ signed) @ signed
    weights = normalized(np.clip(scores, 0.0, None), norm, "easymkl")
    info = {"method": "easymkl", "lam": float(lam), "qp_value": qp.value, "qp_gap": qp.gap,
            "qp_rel_gap": qp.rel_gap, "backend": qp.backend, "gamma": qp.point, "scores": scores}
    return WeightFit(weights, info)


register(WeightMethod(
    "easymkl", easymkl, targets="labels",
    summary="margin of the sum kernel, weights from each kernel's margin term (Aiolli & Donini 2015)",
    certified="the QP by its Frank-Wolfe gap; the SVM at the weights", page="peer_methods.md",
    options={"lam": Real(0, 1), "norm": Choice((1, 2))}))
