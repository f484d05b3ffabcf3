"""Validated stacks of kernel matrices.

A :class:`KernelSet` holds ``M`` kernel matrices of size ``n x n`` in one
contiguous float64 array of shape ``(M, n, n)``. It validates its input once,
never mutates it, and caches what the formulations need: rank-revealing
factors :math:`K_m = L_m L_m^\\top`, traces and tail sums.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

from .exceptions import KernelError, MKLWarning, NotPSDError, RankError

__all__ = ["KernelSet", "kernel_stack", "tail_sum", "NORMALIZATIONS"]

NORMALIZATIONS = ("trace", "multiplicative", "spherical", "tail_sum")

KernelSpec = Any  # ("rbf", {"gamma": 0.1}) | "linear" | callable(X, Y) -> array


def _spec_name(spec: KernelSpec, index: int) -> str:
    if callable(spec):
        return getattr(spec, "__name__", f"kernel{index}")
    metric, params = _parse_spec(spec)
    if callable(metric):
        metric = getattr(metric, "__name__", "callable")
    args = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in sorted(params.items()))
    return f"{metric}({args})" if args else str(metric)


def _parse_spec(spec: KernelSpec) -> tuple[Any, dict]:
    if isinstance(spec, str) or callable(spec):
        return spec, {}
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[1], dict):
        return spec[0], dict(spec[1])
    raise KernelError(
        f"kernel spec {spec!r} is not understood; use a metric name such as "
        "'rbf', a pair like ('rbf', {'gamma': 0.1}), or a callable k(X, Y)."
    )


def kernel_stack(X: np.ndarray, specs: Sequence[KernelSpec],
                 Y: np.ndarray | None = None) -> np.ndarray:
    """Evaluate kernel specs on data with scikit-learn's pairwise kernels.

    Parameters
    ----------
    X : array of shape (n_x, d)
        Rows at which the kernels are evaluated (test points for prediction).
    specs : sequence
        Each a metric name accepted by
        :func:`sklearn.metrics.pairwise.pairwise_kernels`, a pair
        ``(name, params)``, or a callable ``k(X, Y) -> (n_x, n_y)`` array.
    Y : array of shape (n_y, d), optional
        Columns (training points). Defaults to ``X``.

    Returns
    -------
    ndarray of shape (M, n_x, n_y)
    """
    from sklearn.metrics.pairwise import pairwise_kernels

    X = np.asarray(X, dtype=float)
    Y = X if Y is None else np.asarray(Y, dtype=float)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
        raise KernelError(
            f"kernel_stack needs 2-D feature arrays with the same number of "
            f"columns, got shapes {X.shape} and {Y.shape}."
        )
    if len(specs) == 0:
        raise KernelError("no kernel specs given; pass at least one, e.g. ['linear'].")
    out = np.empty((len(specs), X.shape[0], Y.shape[0]))
    for m, spec in enumerate(specs):
        if callable(spec):
            out[m] = spec(X, Y)
            continue
        metric, params = _parse_spec(spec)
        out[m] = pairwise_kernels(X, Y, metric=metric, **params)
    return out


def tail_sum(K: np.ndarray, theta: int) -> float:
    """Sum of all but the ``theta`` largest eigenvalues of a symmetric matrix.

    .. math:: \\tau(K) = \\sum_{j > \\theta} \\lambda_j(K)
              = \\operatorname{Tr} K - \\sum_{j \\le \\theta} \\lambda_j(K)

    Only the top ``theta`` eigenvalues are computed: ARPACK (``eigsh``) when
    ``theta`` is small relative to ``n``, LAPACK ``eigh`` with
    ``subset_by_index`` otherwise.
    """
    n = K.shape[0]
    theta = int(theta)
    if theta < 0:
        raise RankError(f"tail-sum cutoff theta must be >= 0, got {theta}.")
    trace = float(np.trace(K))
    if theta == 0:
        return trace
    if theta >= n:
        return 0.0
    return trace - float(np.sum(top_eigenvalues(K, theta)))


def top_eigenvalues(K: np.ndarray, k: int, vectors: bool = False):
    """The ``k`` largest eigenvalues (descending) of a symmetric matrix.

    .. math:: \\lambda_1(K) \\ge \\dots \\ge \\lambda_k(K)

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric matrix.
    k : int
        Number of eigenvalues, ``1 <= k < n``.
    vectors : bool, default False
        Also return the matching unit eigenvectors as the columns of an
        ``(n, k)`` array (same order).

    Returns
    -------
    vals : ndarray of shape (k,)
        Or ``(vals, vecs)`` when ``vectors`` is true.

    Notes
    -----
    ARPACK Lanczos (``eigsh``, fixed start vector so results are
    reproducible, ``tol=0`` i.e. machine precision) is used when
    ``n >= 200`` and ``k <= n // 16``; LAPACK ``eigh(subset_by_index=...)``
    (a full tridiagonal reduction, cost independent of ``k``) otherwise, and
    as the fallback if ARPACK does not converge. Measured single-threaded
    (RBF kernels of several widths, a linear kernel and a Wishart matrix on
    digits): for ``n = 100`` ``eigh`` always wins (eigsh 1.0-2.4x slower);
    from ``n = 200`` ``eigsh`` is 2-10x faster for ``k <= n/16``; the worst
    case is a clustered spectrum (narrow RBF, nearly the identity) where
    Lanczos loses from about ``k = n/12`` (``n = 400, k = 32``: 1.2x slower;
    ``n = 800, k = 64``: 1.1x slower).
    """
    n = K.shape[0]
    if n >= 200 and k <= n // 16:
        try:
            v0 = np.random.default_rng(0).standard_normal(n)
            vals, vecs = eigsh(K, k=k, which="LA", tol=0.0, v0=v0)
        except ArpackNoConvergence:
            vals, vecs = _top_eigh(K, k)
    else:
        vals, vecs = _top_eigh(K, k)
    order = np.argsort(vals)[::-1]
    return (vals[order], vecs[:, order]) if vectors else vals[order]


def _top_eigh(K: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    n = K.shape[0]
    return _eigh(K, subset=[n - k, n - 1])


def _eigh(K: np.ndarray, subset: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.linalg.eigh`` (ascending eigenvalues, eigenvectors) with a fallback driver.

    LAPACK's MRRR driver ``?syevr`` (scipy's default) can fail with
    ``LinAlgError: Internal Error`` on some kernel matrices with clustered
    eigenvalues (scipy/scipy#17880; e.g. a narrow RBF kernel on 100
    breast-cancer points). Divide and conquer (``evd``, what numpy uses) or,
    for a subset of eigenvalues, bisection (``evx``) then succeeds.
    """
    try:
        return scipy.linalg.eigh(K, subset_by_index=subset, check_finite=False)
    except np.linalg.LinAlgError:
        driver = "evd" if subset is None else "evx"
        return scipy.linalg.eigh(K, subset_by_index=subset, driver=driver, check_finite=False)


class KernelSet:
    """A validated stack of ``M`` kernel matrices over the same ``n`` points.

    Parameters
    ----------
    kernels : array of shape (M, n, n), sequence of (n, n) arrays, or KernelSet
        The kernel matrices. The input is copied, never modified.
    names : sequence of str, optional
        One name per kernel (used in error messages, tables and plots).
    psd : bool, default True
        Require positive semidefinite kernels. Negative eigenvalues smaller
        than ``psd_tol`` times the largest eigenvalue are clipped and
        reported (attribute ``clipped`` and an :class:`MKLWarning`); larger
        ones raise :class:`NotPSDError`. Only the Voted Kernel
        Regularization LP accepts ``psd=False``.
    symmetric : bool, default True
        Require symmetric kernels (within ``sym_tol`` relative); the stored
        stack is exactly symmetrized. ``symmetric=False`` is for VKR only.
    psd_tol, sym_tol : float
        Relative tolerances of the checks above.

    Attributes
    ----------
    K : ndarray of shape (M, n, n)
        The contiguous float64 stack (read-only).
    names : list of str
    clipped : dict
        Kernel name -> most negative eigenvalue removed by clipping.
    scales : ndarray of shape (M,)
        Factors applied to the original kernels by :meth:`normalized`
        (ones for a set built directly).
    """

    def __init__(self, kernels: Any, names: Sequence[str] | None = None, *,
                 psd: bool = True, symmetric: bool = True,
                 psd_tol: float = 1e-8, sym_tol: float = 1e-8) -> None:
        if isinstance(kernels, KernelSet):
            names = kernels.names if names is None else names
            kernels = kernels.K
        stack = _as_stack(kernels)
        self.M, self.n = stack.shape[0], stack.shape[1]
        self.names = _check_names(names, self.M)
        self.psd = bool(psd)
        self.symmetric = bool(symmetric) or self.psd
        self.clipped: dict[str, float] = {}
        _check_nonzero(stack, self.names)
        if self.symmetric:
            _check_symmetric(stack, self.names, sym_tol)
            stack = 0.5 * (stack + stack.transpose(0, 2, 1))
        if self.psd:
            self._check_and_clip_psd(stack, psd_tol)
        self.K = np.ascontiguousarray(stack)
        self.K.setflags(write=False)
        self.scales = np.ones(self.M)
        self._train_diag: np.ndarray | None = None  # spherical normalization
        self._factors: dict[int, np.ndarray] = {}
        self._eig: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    # ------------------------------------------------------------------ build
    @classmethod
    def from_data(cls, X: np.ndarray, specs: Sequence[KernelSpec],
                  names: Sequence[str] | None = None, **kwargs) -> "KernelSet":
        """Build kernels from features with scikit-learn's pairwise kernels.

        See :func:`kernel_stack` for the accepted ``specs``. For prediction,
        evaluate test points against training points with
        ``kernel_stack(X_test, specs, X_train)`` and pass the result through
        :meth:`transform_test` of the (normalized) training set.
        """
        stack = kernel_stack(X, specs)
        if names is None:
            names = [_spec_name(s, i) for i, s in enumerate(specs)]
        return cls(stack, names, **kwargs)

    def _check_and_clip_psd(self, stack: np.ndarray, psd_tol: float) -> None:
        for m in range(self.M):
            K = stack[m]
            jitter = psd_tol * max(float(np.max(np.abs(np.diag(K)))), 1e-300)
            try:
                scipy.linalg.cholesky(K + jitter * np.eye(self.n), lower=True,
                                      check_finite=False)
                continue  # smallest eigenvalue >= -jitter: PSD within tolerance
            except scipy.linalg.LinAlgError:
                pass
            vals, vecs = _eigh(K)
            top = max(float(vals[-1]), 0.0)
            if vals[0] < -psd_tol * max(top, 1e-300):
                raise NotPSDError(
                    f"kernel '{self.names[m]}' is not positive semidefinite: its "
                    f"smallest eigenvalue is {vals[0]:.3g} (largest {top:.3g}). "
                    "Use a PSD kernel, shift it (K + c*I), or use the 'vkr_lp' "
                    "formulation, which accepts indefinite kernels."
                )
            stack[m] = (vecs * np.clip(vals, 0.0, None)) @ vecs.T
            stack[m] = 0.5 * (stack[m] + stack[m].T)
            self.clipped[self.names[m]] = float(vals[0])
        if self.clipped:
            warnings.warn(
                "clipped small negative eigenvalues (numerical noise) of kernels "
                + ", ".join(f"'{k}' ({v:.2g})" for k, v in self.clipped.items()),
                MKLWarning, stacklevel=3)

    # ---------------------------------------------------------------- access
    def __len__(self) -> int:
        return self.M

    def __repr__(self) -> str:
        return f"KernelSet(M={self.M}, n={self.n}, names={self.names})"

    def __getitem__(self, index) -> "KernelSet":
        """Sub-set of kernels (``ks[[0, 2]]``, ``ks[1:]``) as a new set."""
        idx = np.arange(self.M)[index]
        idx = np.atleast_1d(idx)
        sub = self._derived(self.K[idx], [self.names[i] for i in idx])
        sub.scales = self.scales[idx].copy()
        if self._train_diag is not None:
            sub._train_diag = self._train_diag[idx]
        return sub

    def _derived(self, stack: np.ndarray, names: Sequence[str]) -> "KernelSet":
        """A new set from an already validated stack (no re-validation)."""
        new = object.__new__(KernelSet)
        new.M, new.n = stack.shape[0], stack.shape[1]
        new.names = list(names)
        new.psd, new.symmetric = self.psd, self.symmetric
        new.clipped = dict(self.clipped)
        new.K = np.ascontiguousarray(stack, dtype=float)
        new.K.setflags(write=False)
        new.scales = self.scales.copy()
        new._train_diag = self._train_diag
        new._factors, new._eig = {}, {}
        return new

    @property
    def traces(self) -> np.ndarray:
        """Traces :math:`\\operatorname{Tr} K_m`, shape (M,)."""
        return np.einsum("mii->m", self.K)

    def combined(self, weights: np.ndarray) -> np.ndarray:
        """:math:`K_\\mu = \\sum_m \\mu_m K_m`, one tensordot over the stack."""
        return np.tensordot(np.asarray(weights, dtype=float), self.K, axes=1)

    def quadratic_terms(self, coef: np.ndarray) -> np.ndarray:
        """:math:`s_m = c^\\top K_m c` for all m (``coef = y * alpha``).

        Restricted to the non-zero entries of ``coef`` (support vectors).
        """
        return quadratic_terms(self.K, coef, self.symmetric)[0]

    # --------------------------------------------------------------- factors
    def eig(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Full eigendecomposition of kernel ``m`` (ascending), cached."""
        if m not in self._eig:
            self._eig[m] = _eigh(self.K[m])
        return self._eig[m]

    def factor(self, m: int, rank_tol: float = 1e-12) -> np.ndarray:
        """Rank-revealing factor :math:`L_m` with :math:`K_m \\approx L_m L_m^\\top`.

        Eigenvalues below ``rank_tol`` times the largest one are dropped, so
        ``L_m`` has ``r_m`` = numerical-rank columns. Cached.
        """
        self._require_psd("factor")
        if m not in self._factors:
            vals, vecs = self.eig(m)
            keep = vals > rank_tol * max(vals[-1], 1e-300)
            self._factors[m] = np.ascontiguousarray(
                vecs[:, keep][:, ::-1] * np.sqrt(vals[keep][::-1]))
        return self._factors[m]

    def combined_factor(self, weights: np.ndarray, rank_tol: float = 1e-12) -> np.ndarray:
        """Rank-revealing factor of :math:`K_\\mu = \\sum_m \\mu_m K_m` (not cached)."""
        self._require_psd("combined_factor")
        vals, vecs = _eigh(self.combined(weights))
        keep = vals > rank_tol * max(vals[-1], 1e-300)
        return np.ascontiguousarray(vecs[:, keep] * np.sqrt(vals[keep]))

    def factors(self) -> list[np.ndarray]:
        """All factors :math:`L_1, \\dots, L_M`."""
        return [self.factor(m) for m in range(self.M)]

    @property
    def ranks(self) -> np.ndarray:
        """Numerical ranks :math:`r_m` of the factors."""
        return np.array([self.factor(m).shape[1] for m in range(self.M)])

    def _require_psd(self, what: str) -> None:
        if not self.psd:
            raise NotPSDError(
                f"{what} needs positive semidefinite kernels, but this KernelSet "
                "was built with psd=False. Build it with psd=True (the default) "
                "or use the 'vkr_lp' formulation, which accepts indefinite kernels."
            )

    # ------------------------------------------------------------ tail sums
    def tail_sums(self, theta: int) -> np.ndarray:
        """Tail sums :math:`\\tau_m = \\sum_{j>\\theta} \\lambda_j(K_m)`, shape (M,)."""
        self._require_psd("tail sums")
        return np.array([tail_sum(self.K[m], theta) for m in range(self.M)])

    def checked_tail_sums(self, theta: int) -> np.ndarray:
        """:meth:`tail_sums`, raising :class:`RankError` naming every kernel of rank <= theta.

        Such a kernel has a tail sum of ~0 (below 1e-10 of its trace): it can be
        neither tail-sum normalized nor bounded by a tail-sum constraint.
        """
        tails = self.tail_sums(theta)
        bad = [m for m in range(self.M) if not tails[m] > 1e-10 * max(self.traces[m], 1e-300)]
        if bad:
            raise RankError(
                "tail sum is ~0 (rank <= theta) for kernel(s) "
                + ", ".join(f"'{self.names[m]}' (rank {self._rank_hint(m)})" for m in bad)
                + f"; choose theta smaller than their rank (theta={theta}), or drop them.")
        return tails

    # ------------------------------------------------------------ alignment
    def centered_alignment(self, y: np.ndarray | None = None) -> np.ndarray:
        """Pairwise centered alignments.

        .. math:: \\rho(K, K') = \\frac{\\langle K^c, K'^c \\rangle_F}
                  {\\|K^c\\|_F \\|K'^c\\|_F},\\quad K^c = H K H,\\ H = I - \\tfrac1n 11^\\top

        Returns the (M, M) matrix; with labels ``y`` returns instead the
        alignment of each kernel with the target kernel :math:`yy^\\top`, shape (M,).
        """
        centered = self.K - self.K.mean(axis=1, keepdims=True)
        centered = centered - centered.mean(axis=2, keepdims=True)
        flat = centered.reshape(self.M, -1)
        norms = np.linalg.norm(flat, axis=1)
        if y is not None:
            y = np.asarray(y, dtype=float)
            yc = y - y.mean()
            target = np.outer(yc, yc).ravel()
            return flat @ target / (norms * np.linalg.norm(target))
        gram = flat @ flat.T
        return gram / np.outer(norms, norms)

    # --------------------------------------------------------- normalization
    def normalized(self, method: str = "trace", *, target: float = 1.0,
                   theta: int | None = None) -> "KernelSet":
        """Return a new, normalized set (this one is unchanged).

        Parameters
        ----------
        method : {"trace", "multiplicative", "spherical", "tail_sum"}
            * ``"trace"``: :math:`K_m \\mapsto \\text{target}\\,K_m/\\operatorname{Tr}K_m`.
            * ``"multiplicative"`` (Kloft thesis eq. 3.6): unit variance in
              feature space, :math:`K_m \\mapsto K_m / (\\tfrac1n\\operatorname{Tr}K_m
              - \\tfrac1{n^2} 1^\\top K_m 1)`.
            * ``"spherical"`` (eq. 3.7): :math:`K(x,x') \\mapsto
              K(x,x')/\\sqrt{K(x,x)K(x',x')}`.
            * ``"tail_sum"`` (Cortes, Kloft, Mohri 2013, "conv"):
              :math:`K_m \\mapsto K_m/\\tau_m`, :math:`\\tau_m = \\sum_{j>\\theta}\\lambda_j(K_m)`.
              ``theta=0`` is trace normalization to 1.
        target : float
            Trace after ``"trace"`` normalization.
        theta : int
            Tail-sum cutoff, required for ``"tail_sum"``.
        """
        if method == "spherical":
            return self._spherical()
        divisors = self._divisors(method, theta) / (target if method == "trace" else 1.0)
        new = self._derived(self.K / divisors[:, None, None], self.names)
        new.scales = self.scales / divisors
        return new

    def _divisors(self, method: str, theta: int | None) -> np.ndarray:
        if method == "trace":
            div = self.traces
            what = "trace"
        elif method == "multiplicative":
            div = self.traces / self.n - self.K.sum(axis=(1, 2)) / self.n**2
            what = "feature-space variance"
        elif method == "tail_sum":
            if theta is None:
                raise RankError("tail_sum normalization needs a cutoff: normalized('tail_sum', theta=2).")
            div = self.checked_tail_sums(theta)
            what = f"tail sum beyond the {theta} largest eigenvalues"
        else:
            raise KernelError(f"unknown normalization {method!r}; choose one of {NORMALIZATIONS}.")
        bad = [self.names[m] for m in range(self.M) if not div[m] > 0]
        if bad:
            raise KernelError(f"cannot normalize by {what}: it is not positive for kernel(s) {bad}.")
        return div

    def _rank_hint(self, m: int) -> int:
        vals = scipy.linalg.eigvalsh(self.K[m], check_finite=False)
        return int(np.sum(vals > 1e-10 * max(vals[-1], 1e-300)))

    def _spherical(self) -> "KernelSet":
        diag = np.einsum("mii->mi", self.K).copy()
        if np.any(diag <= 0):
            m = int(np.nonzero((diag <= 0).any(axis=1))[0][0])
            raise KernelError(
                f"spherical normalization needs K(x, x) > 0, but kernel "
                f"'{self.names[m]}' has a zero diagonal entry; use 'trace' instead.")
        root = np.sqrt(diag)
        new = self._derived(self.K / (root[:, :, None] * root[:, None, :]), self.names)
        new._train_diag = diag if self._train_diag is None else self._train_diag
        return new

    def transform_test(self, test_kernels: np.ndarray,
                       test_diag: np.ndarray | None = None) -> np.ndarray:
        """Apply this set's normalization to test-vs-train kernels.

        Parameters
        ----------
        test_kernels : array of shape (M, n_test, n)
            Raw kernel values between test and training points.
        test_diag : array of shape (M, n_test), optional
            Raw :math:`K_m(x, x)` at the test points; required when the set
            was spherically normalized.
        """
        T = np.asarray(test_kernels, dtype=float)
        if T.ndim == 2:
            T = T[None]
        if T.shape[0] != self.M or T.shape[2] != self.n:
            raise KernelError(
                f"test kernels must have shape (M={self.M}, n_test, n={self.n}), got {T.shape}.")
        T = T * self.scales[:, None, None]
        if self._train_diag is not None:
            if test_diag is None:
                raise KernelError("this set is spherically normalized: pass test_diag=K_m(x, x) of the test points.")
            T = T / np.sqrt(np.asarray(test_diag)[:, :, None] * self._train_diag[:, None, :])
        return T


def quadratic_terms(stack: np.ndarray, coef: np.ndarray,
                    symmetric: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """All :math:`s_m = c^\\top K_m c` and the products :math:`K_m c`.

    One pass over the stack restricted to the support :math:`S = \\{j: c_j\\ne0\\}`
    (support vectors). For symmetric kernels :math:`K_m c = K_m[S,:]^\\top c_S`
    reads whole contiguous rows, about 3x faster than gathering columns.
    Returns ``(s, Kc)`` with shapes (M,) and (M, n).
    """
    coef = np.asarray(coef, dtype=float)
    support = np.flatnonzero(coef)
    if support.size == 0:
        return np.zeros(stack.shape[0]), np.zeros(stack.shape[:2])
    if support.size > 0.7 * coef.size:
        Kc = np.tensordot(stack, coef, axes=([2], [0]))
    elif symmetric:
        Kc = coef[support] @ stack[:, support, :]
    else:
        Kc = stack[:, :, support] @ coef[support]
    return Kc @ coef, Kc


def _as_stack(kernels: Any) -> np.ndarray:
    if isinstance(kernels, np.ndarray) and kernels.ndim == 2:
        kernels = kernels[None]
    try:
        stack = np.array(kernels, dtype=float, copy=True)
    except (TypeError, ValueError) as exc:
        raise KernelError(
            "kernels must be an (M, n, n) array or a list of n x n arrays of the "
            f"same size; could not convert the input ({exc}).") from None
    if stack.ndim != 3:
        raise KernelError(f"kernels must be an (M, n, n) array, got an array with shape {stack.shape}.")
    if stack.shape[0] == 0:
        raise KernelError("no kernels given; pass at least one n x n kernel matrix.")
    if stack.shape[1] != stack.shape[2]:
        raise KernelError(
            f"kernel matrices must be square (n x n), got {stack.shape[1]} x {stack.shape[2]}. "
            "Test-vs-train kernels are passed to decision_function, not to KernelSet.")
    if not np.all(np.isfinite(stack)):
        bad = sorted({int(m) for m in np.nonzero(~np.isfinite(stack))[0]})
        raise KernelError(f"kernel(s) {bad} contain NaN or infinite entries; fix or drop them.")
    return stack


def _check_names(names: Sequence[str] | None, M: int) -> list[str]:
    if names is None:
        return [f"K{m}" for m in range(M)]
    names = [str(n) for n in names]
    if len(names) != M:
        raise KernelError(f"got {len(names)} names for {M} kernels; give one name per kernel.")
    return names


def _check_nonzero(stack: np.ndarray, names: list[str]) -> None:
    zero = [names[m] for m in range(stack.shape[0]) if not np.any(stack[m])]
    if zero:
        raise KernelError(f"kernel(s) {zero} are all zero; they carry no information, drop them.")


def _check_symmetric(stack: np.ndarray, names: list[str], tol: float) -> None:
    for m in range(stack.shape[0]):
        scale = float(np.max(np.abs(stack[m])))
        asym = float(np.max(np.abs(stack[m] - stack[m].T)))
        if asym > tol * scale:
            raise KernelError(
                f"kernel '{names[m]}' is not symmetric (max |K - K^T| = {asym:.3g}, "
                f"max |K| = {scale:.3g}). Symmetrize it with (K + K.T) / 2 if that is "
                "intended, or use 'vkr_lp', which accepts asymmetric kernels.")
