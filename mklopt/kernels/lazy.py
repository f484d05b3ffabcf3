"""Kernels computed on the fly from data: no n × n matrix is ever formed (the Large n guide).

A :class:`LazyKernelSet` keeps the data X (n, d) and the kernel specs. A
column :math:`K_m[:, i]` for every kernel costs one product :math:`X x_i`
(shared by all kernels, cached by the solver) and M elementwise maps:

.. math::

    \\text{linear: } \\langle x_t, x_i\\rangle, \\qquad
    \\text{rbf: } \\exp(-\\gamma\\|x_t - x_i\\|^2), \\qquad
    \\text{poly: } (\\gamma\\langle x_t, x_i\\rangle + c_0)^{d},

with :math:`\\|x_t-x_i\\|^2 = \\|x_t\\|^2 + \\|x_i\\|^2 - 2\\langle x_t, x_i\\rangle` clipped at 0
(scikit-learn's ``euclidean_distances``; exactly 0 on the diagonal). Diagonals
and traces are exact, so ``"trace"`` and ``"spherical"`` normalization are
exact on the fly; ``"multiplicative"`` needs the sum of every kernel's entries,
computed once in one pass over blocks of columns (:meth:`LazyKernelSet.entry_sums`);
``"tail_sum"`` needs the spectrum and is refused with an error naming the dense path.

Everything the certificates need is here: :meth:`products` (:math:`s_m` and
:math:`K_m c` from the columns of the non-zero entries of c), diagonals,
:meth:`max_abs` (the largest diagonal entry: the kernels are PSD by
construction). Test decision values are computed in blocks
(:meth:`decision_values`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from ..exceptions import KernelError
from ._lazy_specs import (_check_data, _check_precision, _diagonal, _normalization, _parse,
                          _view_layout, lazy_supported)
from ._arguments import point_coefficients
from ._build import built_kernel_set
from ._stack import OwnedStack, check_names, check_points
from ._subset_sketch import subset_sketch
from .._compiled.column_cache import new_cache
from .._compiled.columns import lazy_oracle, product_length
from .._compiled.gradient_updates import add_columns
from .construct import _is_view, kernel_stack, spec_name, trusted_spec
from .feature_variance import feature_variances
from .kernelset import VARIANTS, KernelSet
from .._compiled.rbf_table import NO_KERNEL_TABLE

__all__ = ["LazyKernelSet", "subset_sketch", "lazy_supported"]

_BLOCK_BYTES = 64 * 2**20




class LazyKernelSet(KernelSet):
    """M kernels over the rows of X, evaluated column by column when needed.

    Build it with ``KernelSet.from_data(X, specs, lazy=True)``. Drivers that
    work on kernel columns (``"chunking"``) and the certificates take it;
    operations that need the (M, n, n) stack raise :class:`KernelError`
    (:meth:`dense` builds it on request, for small n).

    Parameters
    ----------
    X : array of shape (n, d)
        Training features, finite.
    specs : sequence
        ``"linear"``, ``"rbf"``, ``("rbf", {"gamma": g})``,
        ``("poly", {"degree": k, "gamma": g, "coef0": c})`` (integer ``k >= 1``,
        ``g > 0``, ``c >= 0``: PSD by construction). Defaults as scikit-learn's
        (``gamma = 1/d``; ``degree=3, coef0=1``). Any of them on a view
        (:class:`~mklopt.kernels.views.ViewKernel`; ``gamma="scale"`` from the view's
        variance, ``1/d_v`` by default).
    names : sequence of str, optional
    normalization : {None, "trace", "spherical", "multiplicative"}
        ``"trace"``: :math:`K_m/\\operatorname{Tr}K_m`; ``"spherical"``:
        :math:`K(x,x')/\\sqrt{K(x,x)K(x',x')}`; ``"multiplicative"``:
        :math:`K_m/(\\tfrac1n\\operatorname{Tr}K_m-\\tfrac1{n^2}1^\\top K_m1)` (one pass
        over the columns at construction).
    """

    lazy = True
    factored = False
    psd = True
    symmetric = True
    validated_by = "construction"
    sketch_kind = "subset"

    def __init__(self, X: Any, specs: Sequence[Any], names: Sequence[str] | None = None, *,
                 normalization: str | None = None) -> None:
        X = _check_data(X)
        if len(specs) == 0:
            raise KernelError("no kernel specs given; pass at least one, e.g. ['rbf'].")
        self.X = X
        self.specs = [spec.resolved(X) if _is_view(spec) else spec for spec in specs]
        self.M, self.n = len(self.specs), X.shape[0]
        self.names = check_names([spec_name(s, i) for i, s in enumerate(self.specs)]
                                 if names is None else names, self.M)
        views, view_of = _view_layout(self.specs, X.shape[1])
        kinds, params = zip(*(_parse(spec.spec if _is_view(spec) else spec, views[v].size)
                              for spec, v in zip(self.specs, view_of)))
        self.kinds, self.params = np.array(kinds, dtype=np.int64), np.array(params, dtype=float)
        sqn = [np.einsum("ij,ij->i", X[:, cols], X[:, cols]) for cols in views]
        base = np.stack([_diagonal(k, p, sqn[v]) for k, p, v in zip(self.kinds, self.params, view_of)])
        for v, cols in enumerate(views):
            mine = view_of == v
            _check_precision(X[:, cols], self.kinds[mine], self.params[mine], base[mine],
                             [name for name, keep in zip(self.names, mine) if keep])
        self._views, self._view_of = views, view_of
        if normalization == "multiplicative":  # needs every entry: one pass over the columns
            self.oracle = lazy_oracle(X, self.kinds, self.params, np.ones_like(base), np.ones(self.M),
                                      views, view_of)
            exact = feature_variances(X, self.specs)
            sums = self.entry_sums() if not np.all(np.isfinite(exact)) else np.zeros(self.M)
            scale, rowscale = _multiplicative_scale(base, sums, exact, self.names), np.ones_like(base)
        else:
            scale, rowscale = _normalization(normalization, base, self.names)
        self.normalization = normalization
        self.scales = scale
        self.rowscale = rowscale
        self._diag = scale[:, None] * rowscale**2 * base
        self.oracle = lazy_oracle(X, self.kinds, self.params, rowscale, scale, views, view_of)
        self.clipped: dict[str, float] = {}
        self._train_diag = base if normalization == "spherical" else None
        self._sketch: np.ndarray | None = None
        #: The interleaved core's per-kernel table, built by its first solver on these kernels.
        self._kernel_table: tuple | None = None

    @property
    def K(self) -> np.ndarray:
        raise KernelError(
            "these kernels are computed on the fly (lazy=True): the (M, n, n) stack is never "
            "formed. Use driver='chunking' (or mklopt.certify), or .dense() for a dense KernelSet "
            "(small n only).")

    def __repr__(self) -> str:
        return f"LazyKernelSet(M={self.M}, n={self.n}, d={self.X.shape[1]}, names={self.names})"

    def __getitem__(self, index) -> "LazyKernelSet":
        idx = np.atleast_1d(np.arange(self.M)[index])
        return LazyKernelSet(self.X, [self.specs[m] for m in idx], [self.names[m] for m in idx],
                             normalization=self.normalization)

    def points(self, index) -> "LazyKernelSet":
        """The same kernels on the points ``index`` only (distinct positions or a boolean mask of
        the n points), normalized as this set is (the divisors and row scales of all the points:
        a subproblem of this training set, one-vs-one's pairs)."""
        index = check_points(index, self.n)
        sub = object.__new__(LazyKernelSet)
        sub.__dict__.update(self.__dict__)
        sub.X = np.ascontiguousarray(self.X[index])
        sub.n = int(index.size)
        sub.rowscale = np.ascontiguousarray(self.rowscale[:, index])
        sub._diag = np.ascontiguousarray(self._diag[:, index])
        sub._train_diag = None if self._train_diag is None else self._train_diag[:, index]
        sub.oracle = lazy_oracle(sub.X, self.kinds, self.params, sub.rowscale, self.scales, self._views,
                                 self._view_of)
        sub._sketch, sub._kernel_table = None, None
        return sub

    def factor(self, m: int) -> np.ndarray:
        raise KernelError(
            "an exact solve (mklopt.solve) states the problem with factors of the dense kernels; these "
            "are computed on the fly. Pass ks.dense() (small n), or use mklopt.fit(..., 'chunking').")

    def factors(self) -> list[np.ndarray]:
        return [self.factor(m) for m in range(self.M)]

    def dense(self) -> KernelSet:
        """The same kernels as a dense :class:`KernelSet` (M n² memory: small n only).

        Kernel functions that are PSD by construction (:func:`~mklopt.kernels.construct.trusted_spec`,
        as this set itself trusts them) skip the PSD screen and, with scalar scales, are checked
        (finite, symmetric, their sketch) while each is built, as :meth:`KernelSet.from_data`
        does; others are scanned and screened after."""
        trusted = all(trusted_spec(spec, self.X) for spec in self.specs)
        if trusted and np.all(self.rowscale == 1.0):
            return built_kernel_set(KernelSet, self.X, self.specs, self.names, None, scales=self.scales)
        stack = kernel_stack(self.X, self.specs)
        stack *= self.scales[:, None, None] * self.rowscale[:, :, None] * self.rowscale[:, None, :]
        return KernelSet(OwnedStack(stack, trusted), self.names, psd_tol=1e-6)

    # ------------------------------------------------------------ quantities
    def diagonals(self) -> np.ndarray:
        """:math:`K_m(x_i, x_i)`, shape (M, n) (exact)."""
        return self._diag.copy()

    @property
    def traces(self) -> np.ndarray:
        return self._diag.sum(axis=1)

    def _largest_entries(self) -> np.ndarray:
        """:math:`\\max_{ij}|K_{m,ij}| = \\max_i K_m(x_i, x_i)` (PSD kernels)."""
        return self._diag.max(axis=1)

    def combined(self, weights: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        raise KernelError(
            "these kernels are computed on the fly: K_mu is never formed. Use driver='chunking', "
            "or KernelSet.from_data(X, specs) (dense) for the other drivers.")

    def products(self, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:math:`s_m = c^\\top K_m c` and :math:`K_m c` from the columns of the non-zero entries of c."""
        coef = point_coefficients(coef, self.n)
        if coef.ndim == 2:
            parts = [self.products(row) for row in coef]
            return np.sum([p[0] for p in parts], axis=0), np.stack([p[1] for p in parts], axis=1)
        support = np.flatnonzero(coef).astype(np.int64)
        Kc = np.zeros((self.M, self.n))
        add_columns(self.oracle, self._dots(), support, coef[support], Kc, NO_KERNEL_TABLE, numba.get_num_threads())
        return Kc @ coef, Kc

    def entry_sums(self) -> np.ndarray:
        """:math:`1^\\top K_m1` for every kernel, in one pass over blocks of columns."""
        total = np.zeros(self.M)
        block = max(1, _BLOCK_BYTES // (8 * max(self.n, 1)))
        for start in range(0, self.n, block):
            ones = np.zeros(self.n)
            ones[start:start + block] = 1.0
            total += self.products(ones)[1].sum(axis=1)
        return total

    def quadratic_terms(self, coef: np.ndarray) -> np.ndarray:
        return self.products(coef)[0]

    def _dots(self) -> tuple:
        return new_cache(product_length(self.oracle), 1)

    def sketch(self) -> np.ndarray:
        """Fingerprint on a fixed subset of the points (:func:`subset_sketch`)."""
        if self._sketch is None:
            self._sketch = subset_sketch(self)
        return self._sketch

    # ------------------------------------------------------------ prediction
    def test_kernels(self, X_test: Any) -> np.ndarray:
        """(M, n_test, n) kernel values between test and training points, normalized like training."""
        X_test = _check_data(X_test, self.X.shape[1])
        T = kernel_stack(X_test, self.specs, self.X)
        T *= self.scales[:, None, None] * self.rowscale[:, None, :]
        if self.normalization == "spherical":
            sqn = [np.einsum("ij,ij->i", X_test[:, cols], X_test[:, cols]) for cols in self._views]
            test_diag = np.stack([_diagonal(k, p, sqn[v])
                                  for k, p, v in zip(self.kinds, self.params, self._view_of)])
            T /= np.sqrt(test_diag)[:, :, None]
        return T

    def decision_values(self, X_test: Any, weights: np.ndarray, coef: np.ndarray,
                        bias: float) -> np.ndarray:
        """:math:`f(x) = \\sum_m \\mu_m \\sum_i c_i K_m(x, x_i) + b` in blocks of test points."""
        X_test = _check_data(X_test, self.X.shape[1])
        block = max(1, _BLOCK_BYTES // (8 * self.M * self.n))
        out = np.empty(X_test.shape[0])
        for start in range(0, X_test.shape[0], block):
            T = self.test_kernels(X_test[start:start + block])
            out[start:start + block] = np.tensordot(weights, T, axes=1) @ coef + bias
        return out


def _multiplicative_scale(diagonals: np.ndarray, sums: np.ndarray, exact: np.ndarray,
                         names: list[str]) -> np.ndarray:
    """:math:`1/(\\tfrac1n\\operatorname{Tr}K_m-\\tfrac1{n^2}1^\\top K_m1)` (unit variance in feature space);
    the variances ``exact`` from centred data where finite (linear, polynomial), else the entries'."""
    n = diagonals.shape[1]
    variance = np.where(np.isfinite(exact), exact, diagonals.sum(axis=1) / n - sums / n**2)
    bad = [names[m] for m in np.flatnonzero(~(variance > 0))]
    if bad:
        raise KernelError(f"cannot normalize by feature-space variance: it is not positive for kernel(s) {bad}.")
    return 1.0 / variance


VARIANTS["lazy"] = LazyKernelSet
