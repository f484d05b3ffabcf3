"""The certificate of a Voted Kernel Regularization candidate (Cortes et al., Voted Kernel Regularization, 2015, §3, §5.1).

For :math:`\\Lambda_k = \\lambda r_k + \\beta` and the margins
:math:`z_i = y_i\\sum_{k,j}\\alpha_{k,j}y_jK_k(x_i,x_j)`, the primal objective is

.. math:: F(\\alpha) = \\frac1m\\sum_i\\max(0, 1 - z_i) + \\sum_{k,j}\\Lambda_k|\\alpha_{k,j}|,

and any :math:`u\\in[0, 1/m]^m`, rescaled into :math:`|A^\\top u|\\le\\Lambda`, gives the
lower bound :math:`1^\\top u` (the LP's dual). It lives on the certificates' floor
(beside :mod:`mklopt.certificates`) so that a saved VKR result re-certifies
(:func:`mklopt.certificates.recertify.certify_result`) without the LP's module; the LP
itself is :mod:`mklopt.formulations.vkr_lp`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import lsq_linear

from ..exceptions import InvalidInputError, KernelError
from ..kernels import KernelSet
from .bounds import Certificate, relative_gap

__all__ = ["vkr_margins", "vkr_objective", "dual_value", "margin_dual", "vkr_certificate", "MARGIN_TOL"]

#: Margins within this distance of 1 count as "on the margin" when a dual point is
#: reconstructed from a primal one (only a heuristic: the bound is valid for any choice).
MARGIN_TOL = 1e-6


def vkr_margins(K: np.ndarray, y: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Margins :math:`z_i = y_i\\sum_{k,j}\\alpha_{k,j}y_jK_k(x_i,x_j)`, one pass over the support."""
    coef = alpha * y
    ks, js = np.nonzero(coef)
    if ks.size == 0:
        return np.zeros(K.shape[1])
    if ks.size > 0.3 * coef.size:
        return y * np.einsum("kij,kj->i", K, coef)
    return y * (coef[ks, js] @ K[ks, :, js])


def vkr_objective(K: np.ndarray, y: np.ndarray, alpha: np.ndarray, Lam: np.ndarray) -> float:
    """:math:`F(\\alpha)=\\frac1m\\sum_i\\max(0,1-z_i)+\\sum_{k,j}\\Lambda_k|\\alpha_{k,j}|`."""
    return _objective(vkr_margins(K, y, alpha), alpha, Lam)


def dual_value(K: np.ndarray, y: np.ndarray, u: np.ndarray, Lam: np.ndarray) -> float:
    """Dual objective at ``u`` clipped to :math:`[0,1/m]` and rescaled into :math:`|A^\\top u|\\le\\Lambda`.

    Returns 0 (the trivial bound, :math:`F\\ge0`) when a kernel with
    :math:`\\Lambda_k=0` has :math:`(A^\\top u)_{k,\\cdot}\\ne0`, which no rescaling can fix.
    """
    m = K.shape[1]
    u = np.clip(np.nan_to_num(np.asarray(u, dtype=float).ravel(), nan=0.0), 0.0, 1.0 / m)
    g = np.abs(np.matmul(y * u, K))  # (M, m): |(A^T u)_{k,j}| = |sum_i u_i y_i K_k[i, j]|
    ratio = 0.0
    for k in range(K.shape[0]):
        top = float(g[k].max())
        if Lam[k] > 0:
            ratio = max(ratio, top / Lam[k])
        elif top > 0:
            return 0.0
    return max(0.0, float(u.sum()) / max(1.0, ratio))


def margin_dual(K: np.ndarray, y: np.ndarray, alpha: np.ndarray, z: np.ndarray,
                Lam: np.ndarray) -> np.ndarray:
    """A dual candidate from a primal point (the optimality conditions of the LP).

    :math:`u_i=1/m` where :math:`z_i<1`, :math:`0` where :math:`z_i>1`; on the margin
    (:math:`|z_i-1|\\le` ``MARGIN_TOL``) :math:`u_E` solves the bounded least-squares
    problem :math:`\\min_{0\\le u_E\\le1/m}\\|A_{E,S}^\\top u_E-(\\Lambda_S\\operatorname{sgn}\\alpha_S-A_{L,S}^\\top u_L)\\|`
    on the support S (entries above 1e-8 of :math:`\\max|\\alpha|`), i.e. it tries to make
    :math:`(A^\\top u)_S=\\Lambda_S\\operatorname{sgn}\\alpha_S`. Large systems are skipped
    (:math:`u_E=1/(2m)`): the candidate is only a heuristic, the bound is valid for any :math:`u`.
    """
    m = z.size
    low, on = z < 1 - MARGIN_TOL, np.abs(z - 1) <= MARGIN_TOL
    u = np.where(low, 1.0 / m, 0.0)
    size = np.abs(alpha)
    ks, js = np.nonzero(size > 1e-8 * size.max()) if size.size and size.max() > 0 else ((), ())
    if not on.any() or len(ks) == 0 or len(ks) > 5000 or len(ks) * on.sum() > 2_000_000:
        u[on] = 0.5 / m
        return u
    cols = K[ks, :, js] * (y * y[js][:, None])  # (s, m): columns a_{(k,j)} of A
    target = Lam[ks] * np.sign(alpha[ks, js]) - cols[:, low].sum(axis=1) / m
    sol = lsq_linear(cols[:, on], target, bounds=(0.0, 1.0 / m), method="bvls")
    u[on] = sol.x
    return u


def vkr_certificate(kernels, y: np.ndarray, alpha: np.ndarray, Lam: np.ndarray,
                    duals: Sequence[np.ndarray] = ()) -> Certificate:
    """mklopt's certificate of a VKR candidate :math:`\\alpha` (shape (M, m)).

    .. math::

        P = F(\\alpha),\\qquad \\bar u = \\operatorname{clip}(u, 0, 1/m),

        G = \\max_{u\\in U}\\frac{1^\\top \\bar u}{\\max\\bigl(1,\\ \\max_{k,j}|(A^\\top\\bar u)_{k,j}|/\\Lambda_k\\bigr)},

    over the candidates U = ``duals`` (e.g. LP multipliers) plus :func:`margin_dual`
    at :math:`\\alpha`. Every rescaled :math:`\\bar u` is dual feasible, so
    :math:`G\\le\\mathrm{OPT}\\le P` for any α (the problem is unconstrained in α).

    Interior-point answers carry tiny nonzero entries everywhere; entries below
    1e-9, 1e-7 or 1e-5 of :math:`\\max|\\alpha|` are set to zero when that raises
    :math:`P` by at most a tenth of the gap (the sparsest such α is kept).

    Returns
    -------
    Certificate
        ``bias = 0``; ``weights`` the per-kernel ℓ1 masses :math:`\\sum_j|\\alpha_{k,j}|`;
        ``alpha`` the (M, m) coefficients.
    """
    K = as_stack(kernels)
    y, alpha, Lam = _check_candidate(K, y, alpha, Lam)
    z = vkr_margins(K, y, alpha)
    primal = _objective(z, alpha, Lam)
    candidates = [*duals, margin_dual(K, y, alpha, z, Lam)]
    dual = max(dual_value(K, y, u, Lam) for u in candidates)
    alpha, primal = _sparsified(K, y, alpha, Lam, primal, slack=0.1 * max(primal - dual, 0.0))
    gap, message = primal - dual, ""
    if gap < 0:  # only rounding may do this: widen P by its bound, else certify nothing
        bound = (K.shape[0] * K.shape[-1] + 2) * np.finfo(float).eps * (abs(primal) + abs(dual)
                                                      + float(np.max(np.abs(K))) * float(np.abs(alpha).sum()))
        if -gap <= bound:
            primal, gap = primal + bound, gap + bound
        else:
            message = _negative_gap_message(gap, bound)
    return Certificate(primal=primal, dual=dual, gap=gap, rel_gap=relative_gap(gap, primal, dual, 1.0),
                       bias=0.0, weights=np.abs(alpha).sum(axis=1), alpha=alpha, message=message)


def _check_candidate(K: np.ndarray, y, alpha, Lam) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    M, m = K.shape[0], K.shape[1]
    y = np.asarray(y, dtype=float).ravel()
    alpha = np.array(alpha, dtype=float)
    Lam = np.asarray(Lam, dtype=float).ravel()
    if y.size != m or not np.all(np.abs(y) == 1):
        raise InvalidInputError(f"y must hold {m} labels in {{-1, +1}} (map them with mklopt's check_labels).")
    if alpha.size != M * m or not np.all(np.isfinite(alpha)):
        raise InvalidInputError(f"alpha must be a finite ({M}, {m}) array, got shape {alpha.shape}.")
    if Lam.size != M or not np.all(np.isfinite(Lam)) or np.any(Lam < 0):
        raise InvalidInputError(f"Lam must hold {M} finite nonnegative values Lambda_k.")
    return y, alpha.reshape(M, m), Lam


def _objective(z: np.ndarray, alpha: np.ndarray, Lam: np.ndarray) -> float:
    return float(np.mean(np.maximum(0.0, 1.0 - z)) + Lam @ np.abs(alpha).sum(axis=1))


def _sparsified(K, y, alpha, Lam, primal: float, slack: float) -> tuple[np.ndarray, float]:
    top = float(np.max(np.abs(alpha))) if alpha.size else 0.0
    allowed = primal + max(slack, 1e-12 * max(1.0, abs(primal)))
    for rel in (1e-5, 1e-7, 1e-9):
        small = (alpha != 0) & (np.abs(alpha) <= rel * top)
        if not small.any():
            continue
        clean = np.where(small, 0.0, alpha)
        value = _objective(vkr_margins(K, y, clean), clean, Lam)
        if value <= allowed:
            return clean, value
    return alpha, primal




def as_stack(kernels) -> np.ndarray:
    """The (M, m, m) stack of a :class:`~mklopt.kernels.KernelSet` or an array (one kernel: 2-D)."""
    K = kernels.K if isinstance(kernels, KernelSet) else np.asarray(kernels, dtype=float)
    if K.ndim == 2:
        K = K[None]
    if K.ndim != 3 or K.shape[1] != K.shape[2]:
        raise KernelError(f"kernels must be an (M, m, m) array, got shape {K.shape}.")
    return K


def _negative_gap_message(gap: float, bound: float) -> str:
    return (f"uncertified: the dual value exceeds the primal value by {-gap:.3g}, beyond the "
            f"rounding bound {bound:.3g} of the certificate's arithmetic")
