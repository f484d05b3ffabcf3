"""Normalizations of a kernel set and their application to test kernels.

Each normalization divides every kernel by a scalar (or, spherically, by
:math:`\\sqrt{K(x,x)K(x',x')}`) and returns a new set built from exactly one
new stack.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._options import real_array
from ..exceptions import KernelError, RankError


__all__ = ["NORMALIZATIONS", "SCALAR_NORMALIZATIONS", "normalize_test", "scalar_divisors", "check_divisors"]

NORMALIZATIONS = ("trace", "multiplicative", "spherical", "tail_sum")
#: Normalizations that divide each kernel by a number read off the kernel in one pass.
SCALAR_NORMALIZATIONS = ("trace", "multiplicative")


def scalar_divisors(stack: np.ndarray, method: str) -> np.ndarray:
    """Each kernel's divisor: :math:`\\operatorname{Tr}K_m` (``"trace"``) or its feature-space
    variance :math:`\\tfrac1n\\operatorname{Tr}K_m - \\tfrac1{n^2}1^\\top K_m1` (``"multiplicative"``);
    the same numbers for a kernel alone (``stack[m:m + 1]``) as within its stack."""
    traces = np.einsum("mii->m", stack)
    if method == "trace":
        return traces
    n = stack.shape[1]
    return traces / n - stack.sum(axis=(1, 2)) / n**2


def check_divisors(divisors: np.ndarray, names: list[str], method: str, theta: int | None = None) -> None:
    """Raise :class:`KernelError` unless every divisor is positive."""
    what = {"trace": "trace", "multiplicative": "feature-space variance"}.get(
        method, f"tail sum beyond the {theta} largest eigenvalues")
    bad = [names[m] for m in range(len(names)) if not divisors[m] > 0]
    if bad:
        raise KernelError(f"cannot normalize by {what}: it is not positive for kernel(s) {bad}.")


class _Normalizing:
    """Mixin of :class:`~mklopt.kernels.KernelSet`: normalizations and test transforms."""

    def normalized(self, method: str = "trace", *, target: float = 1.0,
                   theta: int | None = None) -> "_Normalizing":
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
        return self._divided(self._divisors(method, theta) / (target if method == "trace" else 1.0))

    @classmethod
    def normalized_in_place(cls, stack: np.ndarray, names: list[str], method: str) -> "_Normalizing":
        """``cls(stack, names).normalized(method)`` for a scalar normalization (``"trace"``,
        ``"multiplicative"``) of a stack the caller hands over: each kernel is divided in
        place, no second stack of :math:`Mn^2` floats is made. The kernels are checked as
        given (the checks are relative to each kernel's scale); where a divisor is not
        positive, the stack is checked and normalized as ``cls(stack, names)`` would be, so
        that the error says what is wrong with the kernel."""
        from ._stack import OwnedStack, map_kernels

        # kernel by kernel on all cores: the same numbers as the whole stack's (see scalar_divisors)
        divisors = np.array(map_kernels(lambda m: float(scalar_divisors(stack[m:m + 1], method)[0]),
                                        stack.shape[0]))
        if not np.all(np.isfinite(divisors) & (divisors > 0)):
            return cls(stack, names).normalized(method)
        map_kernels(lambda m: np.divide(stack[m], divisors[m], out=stack[m]), stack.shape[0])
        new = cls(OwnedStack(stack), names)
        new.scales = new.scales / divisors
        return new

    def _divided(self, divisors: np.ndarray) -> "_Normalizing":
        """A new set from one new stack: :math:`K_m / d_m`."""
        new = self._derived(np.divide(self.K, divisors[:, None, None]), self.names)
        new._keep_divided(self, divisors)
        return new

    def _keep_divided(self, source: "_Normalizing", divisors: np.ndarray) -> None:
        """``source``'s scales and kept numbers for its kernels divided by ``divisors`` (this set's
        stack): the sketch is linear in K, and the largest entries are those of the quotients
        bit for bit (rounding to nearest is monotone)."""
        sketch, largest = getattr(source, "_sketch", None), getattr(source, "_max_abs", None)
        self.scales = source.scales / divisors
        self._sketch = None if sketch is None else sketch / divisors[:, None, None]
        self._max_abs = None if largest is None else largest / divisors

    def _divisors(self, method: str, theta: int | None, exact: np.ndarray | None = None) -> np.ndarray:
        """Each kernel's divisor; ``exact`` holds the multiplicative ones known from the data
        (NaN where not), which replace those read off the entries."""
        if method == "trace":
            div = self.traces
        elif method == "multiplicative":
            div = self._feature_variance()
            if exact is not None:
                div = np.where(np.isfinite(exact), exact, div)
        elif method == "tail_sum":
            if theta is None:
                raise RankError("tail_sum normalization needs a cutoff: normalized('tail_sum', theta=2).")
            div = self.checked_tail_sums(theta)
        else:
            raise KernelError(f"unknown normalization {method!r}; choose one of {NORMALIZATIONS}.")
        check_divisors(div, self.names, method, theta)
        return div

    def _feature_variance(self) -> np.ndarray:
        """:math:`\\tfrac1n\\operatorname{Tr}K_m - \\tfrac1{n^2}1^\\top K_m1` (multiplicative normalization)."""
        return scalar_divisors(self.K, "multiplicative")

    def _rank_hint(self, m: int) -> int:
        vals = scipy.linalg.eigvalsh(self.K[m], check_finite=False)
        return int(np.sum(vals > 1e-10 * max(vals[-1], 1e-300)))

    def _spherical(self) -> "_Normalizing":
        diag = np.einsum("mii->mi", self.K).copy()
        if np.any(diag <= 0):
            m = int(np.nonzero((diag <= 0).any(axis=1))[0][0])
            raise KernelError(
                f"spherical normalization needs K(x, x) > 0, but kernel "
                f"'{self.names[m]}' has a zero diagonal entry; use 'trace' instead.")
        root = np.sqrt(diag)
        stack = np.divide(self.K, root[:, :, None])  # the one new stack
        stack /= root[:, None, :]
        new = self._derived(stack, self.names)
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
        T = real_array(test_kernels, "test kernels", KernelError, copy=True)  # the one new array, normalized in place
        if T.ndim == 2:
            T = T[None]
        if T.ndim != 3 or T.shape[0] != self.M or T.shape[2] != self.n:
            raise KernelError(
                f"test kernels must have shape (M={self.M}, n_test, n={self.n}), got {T.shape}.")
        if self._train_diag is not None and test_diag is None:
            raise KernelError("this set is spherically normalized: pass test_diag=K_m(x, x) of the test points.")
        return normalize_test(T, self.scales, self._train_diag, test_diag)


def normalize_test(T: np.ndarray, scales: np.ndarray, train_diag: np.ndarray | None,
                   test_diag: np.ndarray | None) -> np.ndarray:
    """In place: :math:`T_m \\leftarrow s_m T_m`, then divided by
    :math:`\\sqrt{K_m(x,x)K_m(x_j,x_j)}` for a spherically normalized set.

    ``T`` is (M, n_test, n_cols) against any subset of the training points
    (``train_diag`` restricted to the same columns); returns ``T``.
    """
    T *= np.asarray(scales, dtype=float)[:, None, None]
    if train_diag is not None:
        test_diag = np.asarray(test_diag, dtype=float)
        if not np.all(test_diag > 0):  # also NaN
            m, i = (int(k) for k in np.argwhere(~(test_diag > 0))[0])
            raise KernelError(
                f"spherical normalization needs K(x, x) > 0, but kernel {m} is {test_diag[m, i]:g} at test point "
                f"{i}; use normalization='trace' or 'multiplicative' for such points.")
        # one root at a time, as in training: the product of two diagonals of 1e-160 underflows
        T /= np.sqrt(test_diag)[:, :, None]
        T /= np.sqrt(train_diag)[:, None, :]
    return T
