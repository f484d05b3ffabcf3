"""The :class:`KernelSet`: a validated stack of kernel matrices over the same points.

A :class:`KernelSet` holds ``M`` kernel matrices of size ``n x n`` in one
contiguous float64 array of shape ``(M, n, n)``. It validates its input once,
uses a valid float64 stack in place (read-only, never written to), and caches
what the formulations need: rank-revealing factors
:math:`K_m = L_m L_m^\\top`, eigendecompositions and tail sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._arguments import kernel_weights, point_coefficients
from ._from_data import data_kernel_set
from ._normalize import _Normalizing
from ._spectral import _Spectral
from ._checked_stack import checked_stack
from ._scan import SYM_TOL
from ._stack import check_names, check_points, read_only, sketch_of, sketch_vectors
from .construct import KernelSpec
from .._compiled.products import combine, quadratic_terms

__all__ = ["KernelSet"]


#: The other representations, registered by their own modules (``factorset``: "factors",
#: ``lazy``: "lazy") so that this module never imports them: name -> class.
VARIANTS: dict[str, type] = {}


def _satisfies(kernels: "KernelSet", psd: bool, symmetric: bool) -> bool:
    """An existing set was validated at least as strictly as requested."""
    return (kernels.psd or not psd) and (kernels.symmetric or not symmetric)


class KernelSet(_Normalizing, _Spectral):
    """A validated stack of ``M`` kernel matrices over the same ``n`` points.

    Parameters
    ----------
    kernels : array of shape (M, n, n) or (n, n), DataFrame, sequence of (n, n) arrays, or KernelSet
        The kernel matrices, real and numeric. A float64, C-contiguous,
        symmetric array that passes the checks is **used in place**:
        :attr:`K` is a read-only view of it, and mklopt never writes to it
        (do not modify it yourself while the set is in use). Any other input
        (float32, integers, lists, DataFrames, non-contiguous views, kernels
        that need symmetrizing or clipping) is converted in one copy.
    names : sequence of str, optional
        One name per kernel (used in error messages, tables and plots).
    psd : bool, default True
        Require positive semidefinite kernels. Eigenvalues below the noise
        level :math:`-10\\,\\varepsilon\\, n\\,\\|K\\|` (:math:`\\varepsilon` of
        float64, whatever the input's dtype) but above ``-psd_tol`` times the largest eigenvalue
        are clipped and reported (attribute ``clipped`` and an
        :class:`MKLWarning`); larger ones raise :class:`NotPSDError`. Only the
        Voted Kernel Regularization LP accepts ``psd=False``.
    symmetric : bool, default True
        Require symmetric kernels (within ``sym_tol`` relative); kernels
        asymmetric within tolerance are symmetrized in the copy, except that an
        asymmetry of at most a few units of roundoff of max|K| (pairwise kernels
        computed through a GEMM) is rounding noise and does not cause a copy.
        ``symmetric=False`` is for VKR only.
    psd_tol, sym_tol : float
        Relative tolerances of the checks above.
    psd_check : {"lanczos", "full"}, default "lanczos"
        ``"lanczos"``: the exact test (a Cholesky factorization of
        :math:`K + \\tau_{\\text{noise}} I`) up to n = 300, where it is as cheap, and
        above a 40-step Lanczos estimate of the smallest eigenvalue from a
        random start seeded by the kernel (:math:`O(n^2)`; it finds clearly
        indefinite kernels, and any kernel it flags is checked exactly);
        ``"full"``: the Cholesky test at every n (:math:`O(n^3)`), which also
        finds small negative eigenvalues the estimate can miss.

    Attributes
    ----------
    K : ndarray of shape (M, n, n)
        The contiguous float64 stack (read-only; a view of the input when it
        was used in place).
    names : list of str
    clipped : dict
        Kernel name -> most negative eigenvalue removed by clipping.
    scales : ndarray of shape (M,)
        Factors applied to the original kernels by :meth:`normalized`
        (ones for a set built directly).
    validated_by : str
        How positive semidefiniteness was established: ``"construction"``
        (:meth:`from_data` with kernel functions PSD for every input — linear,
        RBF, Laplacian, cosine, chi2, polynomials with ``coef0 >= 0``; no screen),
        ``"cholesky"`` (the exact test: :math:`n \\le 300`, or ``psd_check="full"``),
        ``"lanczos"`` (the screen, larger n), ``"none"`` (``psd=False``). Derived
        sets (:meth:`normalized`, subsets) keep their parent's.
    """

    #: Kernels held as low-rank factors (:class:`~mklopt.kernels.factorset.FactorKernelSet`).
    factored = False

    def __init__(self, kernels: Any, names: Sequence[str] | None = None, *,
                 psd: bool = True, symmetric: bool = True,
                 psd_tol: float = 1e-8, sym_tol: float = SYM_TOL,
                 psd_check: str = "lanczos") -> None:
        self.psd = bool(psd)
        self.symmetric = bool(symmetric) or self.psd
        self.clipped: dict[str, float] = {}
        self.scales = np.ones(0)
        self._train_diag: np.ndarray | None = None  # spherical normalization
        self._factors: dict[int, np.ndarray] = {}
        self._eig: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._sketch: np.ndarray | None = None
        self._max_abs: np.ndarray | None = None  # the scan's, or computed once when asked
        self.validated_by = "none"
        if isinstance(kernels, KernelSet) and _satisfies(kernels, self.psd, self.symmetric):
            stack = kernels.K  # already validated at least as strictly
            self._sketch, self._max_abs = kernels._sketch, getattr(kernels, "_max_abs", None)
            self.validated_by = kernels.validated_by if self.psd else "none"
            names = kernels.names if names is None else names
        else:
            if isinstance(kernels, KernelSet):
                names = kernels.names if names is None else names
                kernels = kernels.K
            checked = checked_stack(kernels, names, self.psd, self.symmetric, psd_tol, sym_tol, psd_check)
            stack, self._sketch, self._max_abs = checked.stack, checked.sketch, checked.largest
            self.validated_by, self.clipped = checked.validated_by, checked.clipped
        self.M, self.n = stack.shape[0], stack.shape[1]
        self.names = check_names(names, self.M)
        self.K = read_only(stack)
        self.scales = np.ones(self.M)

    # ------------------------------------------------------------------ build
    @classmethod
    def from_data(cls, X: np.ndarray, specs: Sequence[KernelSpec],
                  names: Sequence[str] | None = None, *, rank: int | None = None,
                  approximation: str = "nystroem", random_state: int = 0,
                  normalization: str | None = None, theta: int | None = None,
                  lazy: bool = False, **kwargs) -> "KernelSet":
        """Build kernels from features with scikit-learn's pairwise kernels.

        See :func:`kernel_stack` for the accepted ``specs``. For prediction,
        evaluate test points against training points with
        ``kernel_stack(X_test, specs, X_train)`` and pass the result through
        :meth:`transform_test` of the (normalized) training set.

        With ``rank=r`` the kernels are low-rank factors instead
        (:func:`~mklopt.kernels.approximate.approximate_factors`: ``"nystroem"``
        or ``"rff"``, seeded by ``random_state``) and a
        :class:`~mklopt.kernels.factorset.FactorKernelSet` is returned; its
        :meth:`transform_test` takes raw test features.

        ``normalization`` (``"trace"``, ``"multiplicative"``, ``"tail_sum"``
        with ``theta``) gives the same set as ``.normalized(normalization)``
        but divides the freshly built stack in place (no second stack).

        With ``lazy=True`` nothing is computed now: a
        :class:`~mklopt.kernels.lazy.LazyKernelSet` keeps X and the specs and
        evaluates kernel columns when a solver asks (``driver="chunking"``);
        ``normalization`` may then be None, ``"trace"`` or ``"spherical"``.
        """
        return data_kernel_set(cls, VARIANTS, X, specs, names, rank=rank, approximation=approximation,
                               random_state=random_state, normalization=normalization, theta=theta,
                               lazy=lazy, **kwargs)

    @classmethod
    def from_factors(cls, factors: Sequence[np.ndarray],
                     names: Sequence[str] | None = None) -> "KernelSet":
        """Kernels :math:`K_m = G_m G_m^\\top` given by M factors (n, r_m), never formed.

        Returns a :class:`~mklopt.kernels.factorset.FactorKernelSet` (wrapper,
        cutting plane, certificates and the exact formulations accept it).
        """
        return VARIANTS["factors"](factors, names)

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
        new.validated_by = self.validated_by
        new.clipped = dict(self.clipped)
        new.K = read_only(np.ascontiguousarray(stack, dtype=float))
        new.scales = self.scales.copy()
        new._train_diag = self._train_diag
        new._factors, new._eig = {}, {}
        new._sketch = new._max_abs = None
        return new

    def points(self, index) -> "KernelSet":
        """The same kernels on the points ``index`` only (rows and columns; distinct positions
        or a boolean mask of the n points), normalized as this set (a subproblem of this
        training set: the pairs of one-vs-one). Its largest entries and its fingerprint's
        sketch come from the same pass as the copy."""
        from .._compiled.blocks import gather_points

        index = check_points(index, self.n).astype(np.int64)
        W = sketch_vectors(index.size)
        stack, largest = np.empty((self.M, index.size, index.size)), np.empty(self.M)
        KW = np.empty((self.M, index.size, W.shape[1]))
        gather_points(self.K, index, W, stack, largest, KW)
        sub = self._derived(stack, self.names)
        sub._train_diag = None if self._train_diag is None else self._train_diag[:, index]
        sub._max_abs, sub._sketch = largest, sketch_of(W, KW)
        return sub

    def as_precomputed(self) -> np.ndarray:
        """The kernels in the layout of the estimators' ``kernels="precomputed"``: a copy of shape
        (n, n, M) (this set's stack is (M, n, n)); ``MKLClassifier(kernels="precomputed")`` also
        takes the set itself."""
        return np.moveaxis(self.K, 0, 2).copy()  # a copy also of one kernel (moveaxis is then contiguous)

    def sketch(self) -> np.ndarray:
        """Fingerprint sketch :math:`W^\\top K_m W` (M, 3, 3) for a fixed random :math:`W`.

        Computed during validation while each kernel is in cache (or once, on
        demand, for derived sets); any material change of a kernel changes it.
        """
        if self._sketch is None:
            W = sketch_vectors(self.n)
            KW = (self.K.reshape(self.M * self.n, self.n) @ W).reshape(self.M, self.n, -1)  # one GEMM
            self._sketch = sketch_of(W, KW)
        return self._sketch

    @property
    def traces(self) -> np.ndarray:
        """Traces :math:`\\operatorname{Tr} K_m`, shape (M,)."""
        return np.einsum("mii->m", self.K)

    def combined(self, weights: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """:math:`K_\\mu = \\sum_m \\mu_m K_m` from the kernels in use (:func:`combine`), into ``out``."""
        return combine(self.K, kernel_weights(weights, self.M), out=out)

    def products(self, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`s_m = c^\\top K_m c` and :math:`K_m c` in one pass (:func:`quadratic_terms`)."""
        return quadratic_terms(self.K, point_coefficients(coef, self.n), self.symmetric)

    def max_abs(self) -> np.ndarray:
        """:math:`\\max_{ij}|K_{m,ij}|`, shape (M,): kept from the pass that built or validated the
        kernels (through their scales and divisors), else computed once (the kernels are
        read-only; every certificate's rounding bound asks for it)."""
        kept = getattr(self, "_max_abs", None)
        if kept is None or kept.shape[0] != self.M:
            kept = self._max_abs = self._largest_entries()
        return kept

    def _largest_entries(self) -> np.ndarray:
        """:meth:`max_abs` made afresh: one pass over the stack."""
        return np.abs(self.K.reshape(self.M, -1)).max(axis=1)

    def quadratic_terms(self, coef: np.ndarray) -> np.ndarray:
        """:math:`s_m = c^\\top K_m c` for all m (``coef = y * alpha``).

        Restricted to the non-zero entries of ``coef`` (support vectors).
        """
        return quadratic_terms(self.K, point_coefficients(coef, self.n), self.symmetric)[0]
