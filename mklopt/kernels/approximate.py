"""Low-rank kernel factors from features: Nyström or random Fourier features.

Each spec (as for :func:`~mklopt.kernels.kernel_stack`) becomes a fitted
scikit-learn transformer whose output :math:`G_m` (n, r) satisfies
:math:`K_m \\approx G_m G_m^\\top`:

* ``"nystroem"`` — :class:`sklearn.kernel_approximation.Nystroem` on ``rank``
  training points sampled with ``random_state`` (any pairwise kernel);
* ``"rff"`` — :class:`sklearn.kernel_approximation.RBFSampler` (random Fourier
  features, RBF kernels only).

The kernels mklopt optimizes over are then *exactly* :math:`G_m G_m^\\top`: the
certificates are exact for them (not for the kernels they approximate).
Shift-invariant kernels (RBF, Laplacian, random Fourier features) see the
data centred at the training mean (a :class:`~sklearn.pipeline.Pipeline` with
:class:`~sklearn.preprocessing.StandardScaler` ``(with_std=False)``), so data far
from the origin loses no digits to cancellation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ..exceptions import KernelError, NotPSDError
from .construct import KernelSpec, _is_view, _parse_spec, spec_name
from .rounding import SHIFT_INVARIANT
from .user_kernel import call_user_kernel

__all__ = ["APPROXIMATIONS", "approximate_factors"]

APPROXIMATIONS = ("nystroem", "rff")
_NYSTROEM_ARGS = ("gamma", "coef0", "degree")


def _transformer(spec: KernelSpec, rank: int, approximation: str, random_state: int) -> Any:
    from sklearn.kernel_approximation import Nystroem, RBFSampler

    metric, params = (spec, {}) if callable(spec) else _parse_spec(spec)
    if approximation == "rff":
        if metric != "rbf":
            raise KernelError(f"approximation='rff' (random Fourier features) approximates RBF "
                              f"kernels only, got {spec!r}; use approximation='nystroem'.")
        return RBFSampler(gamma=params.get("gamma", 1.0), n_components=rank,
                          random_state=random_state)
    if callable(metric):  # a matrix function: scikit-learn's Nystroem would call it per pair of rows
        return MatrixNystroem(metric, n_components=rank, random_state=random_state)
    direct = {k: v for k, v in params.items() if k in _NYSTROEM_ARGS}
    other = {k: v for k, v in params.items() if k not in _NYSTROEM_ARGS}
    return Nystroem(kernel=metric, n_components=rank, random_state=random_state,
                    kernel_params=other or None, **direct)


def _centred(transformer: Any, spec: KernelSpec, approximation: str) -> Any:
    """The transformer behind centring when its kernel is shift-invariant."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    metric = spec if callable(spec) else _parse_spec(spec)[0]
    if approximation == "rff" or (isinstance(metric, str) and metric in SHIFT_INVARIANT):
        return Pipeline([("centre", StandardScaler(with_std=False)), ("map", transformer)])
    return transformer


def _final(transformer: Any) -> Any:
    while hasattr(transformer, "steps"):
        transformer = transformer[-1]
    return transformer


def _factor_map(spec: KernelSpec, d: int, rank: int, approximation: str, random_state: int) -> Any:
    """The feature map of one spec; a :class:`~mklopt.kernels.views.ViewKernel` maps its columns."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer

    inner = spec.spec if _is_view(spec) else spec
    transformer = _centred(_transformer(inner, rank, approximation, random_state), inner, approximation)
    if not _is_view(spec):
        return transformer
    select = FunctionTransformer(np.take, kw_args={"indices": spec.index(d), "axis": 1})
    return Pipeline([("view", select), ("map", transformer)])


#: Landmark-kernel eigenvalues below this fraction of the largest are rounding noise.
LANDMARK_RANK_TOL = 1e-10
#: Negative landmark-kernel eigenvalues beyond this fraction of the largest: not a PSD kernel.
LANDMARK_PSD_TOL = 1e-8


def _reveal_rank(nystroem: Any) -> None:
    """:func:`landmark_map` of a fitted scikit-learn ``Nystroem``, installed in it."""
    from sklearn.metrics.pairwise import pairwise_kernels

    basis = pairwise_kernels(nystroem.components_, metric=nystroem.kernel, filter_params=True,
                             **nystroem._get_kernel_params())
    nystroem.normalization_ = landmark_map(basis, repr(nystroem.kernel))  # transform: k_L(x) @ this.T
    nystroem._n_features_out = nystroem.normalization_.shape[0]


def landmark_map(basis: np.ndarray, name: str) -> np.ndarray:
    """Keep the landmark kernel's numerically nonzero spectrum: :math:`K_{LL} = U\\Lambda U^\\top`,

    .. math:: \\phi(x) = \\Lambda_k^{-1/2} U_k^\\top k_L(x),\\qquad
              \\lambda_j > \\text{LANDMARK\\_RANK\\_TOL}\\cdot\\lambda_{\\max}.

    scikit-learn's ``Nystroem`` clips eigenvalues at an absolute 1e-12, so for a
    low-rank kernel (linear or polynomial on few features) the noise directions
    are scaled by up to :math:`10^6` and the test features change by 1e-9 between
    batches of the same points; here they are dropped (k <= rank columns).

    A landmark kernel with an eigenvalue below :math:`-`:data:`LANDMARK_PSD_TOL` times the
    largest is not a kernel: its negative directions would be dropped silently and the
    factors certified for a different, PSD kernel, so it is refused.
    """
    vals, vecs = np.linalg.eigh(0.5 * (basis + basis.T))
    top = max(float(vals[-1]), 0.0)
    if vals[0] < -LANDMARK_PSD_TOL * top or top == 0.0 and vals[0] < 0.0:
        raise NotPSDError(
            f"kernel {name} is not positive semidefinite: its kernel matrix on the Nyström landmarks has "
            f"the eigenvalue {vals[0]:.3g} (largest {top:.3g}), which a low-rank factor cannot represent. "
            "Use a PSD kernel, or the 'vkr_lp' formulation on a dense indefinite kernel.")
    keep = vals > LANDMARK_RANK_TOL * top
    if not np.any(keep):
        raise KernelError(f"the Nyström landmark kernel of {name} is zero; check the kernel parameters.")
    return (vecs[:, keep] / np.sqrt(vals[keep])).T


class MatrixNystroem(TransformerMixin, BaseEstimator):
    """Nyström features of a kernel function ``k(X, Y) -> (n_x, n_y)`` called on whole blocks.

    Landmarks are ``n_components`` training points drawn with ``random_state`` (as
    scikit-learn's ``Nystroem`` draws them); :math:`\\phi(x) = ` :func:`landmark_map` applied
    to :math:`k(x, L)`.
    """

    def __init__(self, kernel: Any, n_components: int = 100, random_state: int = 0) -> None:
        self.kernel, self.n_components, self.random_state = kernel, n_components, random_state

    def fit(self, X: np.ndarray, y: Any = None) -> "MatrixNystroem":
        rng = np.random.RandomState(self.random_state)
        landmarks = rng.permutation(X.shape[0])[: self.n_components]
        self.components_ = np.asarray(X, dtype=float)[landmarks]
        basis = call_user_kernel(self.kernel, self.components_, self.components_)
        self.normalization_ = landmark_map(basis, repr(getattr(self.kernel, "__name__", self.kernel)))
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return call_user_kernel(self.kernel, np.asarray(X, dtype=float), self.components_) @ self.normalization_.T


def approximate_factors(X: np.ndarray, specs: Sequence[KernelSpec], rank: int,
                        approximation: str = "nystroem",
                        random_state: int = 0) -> tuple[list[np.ndarray], list[Any], list[str]]:
    """Fitted factors, transformers and names, one per spec.

    Parameters
    ----------
    X : array (n, d)
    specs : sequence of kernel specs
    rank : int
        Columns per factor (``<= n`` for Nyström).
    approximation : {"nystroem", "rff"}
    random_state : int
        Seed of the landmark sample / random features (fixed: refits agree).
    """
    if approximation not in APPROXIMATIONS:
        raise KernelError(f"unknown approximation {approximation!r}; use one of {APPROXIMATIONS}.")
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise KernelError("X must be a finite 2-D array (n_samples, n_features).")
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
        raise KernelError(f"rank must be a positive integer, got {rank!r}.")
    if approximation == "nystroem" and rank > X.shape[0]:
        raise KernelError(f"rank={rank} exceeds the number of points ({X.shape[0]}); Nyström "
                          "samples rank landmarks among them.")
    if len(specs) == 0:
        raise KernelError("no kernel specs given; pass at least one, e.g. ['linear'].")
    transformers = [_factor_map(s, X.shape[1], int(rank), approximation, random_state).fit(X)
                    for s in specs]
    for t in transformers:
        if hasattr(_final(t), "normalization_") and not isinstance(_final(t), MatrixNystroem):
            _reveal_rank(_final(t))
    factors = [t.transform(X) for t in transformers]
    names = [f"{spec_name(s, i)}[{approximation} r={rank}]" for i, s in enumerate(specs)]
    return factors, transformers, names
