"""Two-stage kernel weights from centered alignment (Cortes, Mohri, Rostamizadeh, JMLR 2012).

Stage one picks the weights :math:`\\mu` from the kernels and the labels alone;
stage two trains an SVM (or any loss) on :math:`K_\\mu=\\sum_m\\mu_mK_m` at those
weights (``mklopt.solve(K, y, "svm", weights=mu)`` or
``MKLClassifier(driver="align" | "alignf")``, both certified for that fixed
combination). With :math:`H = I - \\tfrac1n 11^\\top` and :math:`K^c = HKH`,

.. math::

    a_m = \\langle K_m^c, yy^\\top\\rangle_F, \\qquad
    \\mathbf M_{kl} = \\langle K_k^c, K_l^c\\rangle_F .

* ``"align"`` (independent alignments):
  :math:`\\mu_m \\propto \\max(0, a_m)/\\|K_m^c\\|_F`, i.e. proportional to the centered
  alignment :math:`\\hat\\rho(K_m, yy^\\top)` (the factor :math:`1/\\|yy^\\top\\|_F` is common),
  normalized to :math:`\\sum_m\\mu_m = 1`.
* ``"alignf"`` (alignment maximization over :math:`\\mu\\ge0`): :math:`\\mu = v/\\|v\\|_2` with

  .. math:: v = \\arg\\min_{v\\ge0}\\ v^\\top \\mathbf M v - 2 v^\\top a .

Because :math:`H` is idempotent, :math:`\\langle K^c, yy^\\top\\rangle_F = \\langle K^c, (Hy)(Hy)^\\top\\rangle_F`:
the labels are centered implicitly, and the weights do not change under any
affine recoding :math:`y\\mapsto sy+t` (:math:`s\\neq0`) of the labels. So two-class labels
(any two values, mapped to :math:`\\pm1`) and real regression targets are both accepted.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import nnls

from ._validation import as_kernel_set, check_labels, check_targets
from .exceptions import InvalidInputError
from .kernels._centering import centered_kernels, largest_magnitude, scaled_centered

__all__ = ["METHODS", "learn_weights", "alignment_terms", "centered_kernels"]

#: Weight methods of :func:`learn_weights`.
METHODS = ("align", "alignf")
#: Eigenvalues of :math:`\\mathbf M` below this fraction of the largest are its null space.
RANK_TOL = 1e-12


def _targets(y, n: int) -> np.ndarray:
    """Real targets as given, or two-class labels of any type mapped to :math:`\\pm1`."""
    arr = np.asarray(getattr(y, "to_numpy", lambda: y)()) if y is not None else None
    if arr is not None and arr.dtype.kind in "biuf":
        y = check_targets(arr, n)
    else:
        y = check_labels(y, n)[0]
    if np.ptp(y) == 0:
        raise InvalidInputError("y is constant: its centered target kernel is 0, so no kernel "
                                "aligns with it; pass labels with two classes or varying targets.")
    return y


def alignment_terms(kernels, y) -> tuple[np.ndarray, np.ndarray]:
    """:math:`(\\mathbf M, a)`: centered Frobenius products of the kernels and with :math:`yy^\\top`.

    Parameters
    ----------
    kernels : KernelSet, array (M, n, n) or list of (n, n) arrays
        Validated like every mklopt input (finite, square, symmetric, PSD).
    y : array (n,)
        Two-class labels (any two values) or real targets.

    Returns
    -------
    M : ndarray (M, M)
        :math:`\\langle K_k^c, K_l^c\\rangle_F`.
    a : ndarray (M,)
        :math:`\\langle K_m^c, yy^\\top\\rangle_F = y^\\top K_m^c y`.
    """
    gram, a, scales = _scaled_terms(kernels, y)
    return scales[:, None] * gram * scales[None, :], scales * a


def _scaled_terms(kernels, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`alignment_terms` of the kernels divided by ``scales`` (each centered kernel's, or
    factor block's, largest entry): :math:`\\mathbf M = D\\mathbf M'D`, :math:`a = Da'`. Products
    of kernels of 1e-160 underflow to 0 otherwise (a wrong "align" weight of 0)."""
    ks = as_kernel_set(kernels)
    y = _targets(y, ks.n)
    if getattr(ks, "factored", False):  # K_m = G_m G_m': centered factors, no n x n matrix
        blocks = [G - G.mean(axis=0) for G in ks.factors()]
        roots = np.array([largest_magnitude(G) for G in blocks])
        blocks = [G / root for G, root in zip(blocks, roots)]
        gram = np.array([[np.sum((Gk.T @ Gl) ** 2) for Gl in blocks] for Gk in blocks])
        return gram, np.array([np.sum((Gk.T @ y) ** 2) for Gk in blocks]), roots ** 2
    flat, scales = scaled_centered(ks.K)
    centered = flat.reshape(ks.K.shape)
    return flat @ flat.T, (centered @ y) @ y, scales


def learn_weights(kernels, y, method: str = "align", *, norm: float | None = None) -> np.ndarray:
    """Kernel weights from centered alignment with the target kernel :math:`yy^\\top`.

    Parameters
    ----------
    kernels : KernelSet, array (M, n, n) or list of (n, n) arrays
    y : array (n,)
        Two-class labels (any two values) or real regression targets; the
        weights are invariant to affine recodings of ``y``.
    method : {"align", "alignf"}
        ``"align"``: :math:`\\mu_m\\propto\\max(0,a_m)/\\|K_m^c\\|_F`;
        ``"alignf"``: :math:`\\mu\\propto\\arg\\min_{v\\ge0} v^\\top\\mathbf Mv-2v^\\top a`
        (see the module docstring).
    norm : {1, 2}, optional
        Normalization of the returned weights: :math:`\\|\\mu\\|_1=1` or
        :math:`\\|\\mu\\|_2=1`. Default: 1 for ``"align"``, 2 for ``"alignf"``
        (the paper's :math:`v/\\|v\\|`). Alignment is scale-invariant, so only
        the SVM's effective C depends on it.

    Returns
    -------
    ndarray (M,)
        Nonnegative weights. A kernel that is constant after centering
        (:math:`K^c=0`) gets weight 0.

    Raises
    ------
    InvalidInputError
        Unknown method or norm, invalid kernels or labels, or no kernel
        positively aligned with ``y`` (all weights would be 0).

    Notes
    -----
    ``"alignf"`` is solved as the nonnegative least-squares problem
    :math:`\\min_{v\\ge0}\\|Rv-b\\|^2` with :math:`\\mathbf M=R^\\top R`,
    :math:`R=\\Lambda^{1/2}V^\\top` (eigenvalues below ``RANK_TOL`` times the largest
    dropped) and :math:`b=\\Lambda^{-1/2}V^\\top a`; since :math:`a` lies in the
    range of :math:`\\mathbf M` (:math:`a=G^\\top\\mathrm{vec}(yy^\\top)` for :math:`G` the
    centered kernels as columns) the objective differs from the QP's by a
    constant. SciPy's Lawson–Hanson active-set ``nnls`` finds the exact minimizer
    in finitely many steps: no backend, no solver tolerance.
    """
    if method not in METHODS:
        raise InvalidInputError(f"unknown weight method {method!r}; choose one of {list(METHODS)}.")
    if norm is None:
        norm = 1 if method == "align" else 2
    if norm not in (1, 2) or isinstance(norm, bool):
        raise InvalidInputError(f"norm must be 1 or 2, got {norm!r}.")
    gram, a, scales = _scaled_terms(kernels, y)  # alignf's v of the kernels is its v of the scaled ones / D
    v = _independent(gram, a) if method == "align" else _alignf(gram, a) / scales
    v = v / largest_magnitude(v)  # alignf's v of a kernel of 1e-160 is ~1e160: its square overflows
    size = float(np.sum(v) if norm == 1 else np.linalg.norm(v))
    if not size > 0:
        raise InvalidInputError(
            "no kernel is positively aligned with the labels (every centered alignment is <= 0), "
            "so every weight would be 0; check the labels or add kernels.")
    return v / size


def _independent(gram: np.ndarray, a: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.clip(np.diag(gram), 0, None))
    safe = np.where(norms > 0, norms, 1.0)
    return np.where(norms > 0, np.clip(a, 0, None) / safe, 0.0)


def _alignf(gram: np.ndarray, a: np.ndarray) -> np.ndarray:
    lam, V = np.linalg.eigh((gram + gram.T) / 2)
    keep = lam > RANK_TOL * max(float(lam[-1]), 0.0)
    if not np.any(keep):
        return np.zeros(a.size)
    root = np.sqrt(lam[keep])
    R = root[:, None] * V[:, keep].T
    b = (V[:, keep].T @ a) / root
    return nnls(R, b)[0]
