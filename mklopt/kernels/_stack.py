"""Turning user input into an (M, n, n) float64 stack, without copying it when valid.

A float64, C-contiguous array is used in place; anything else (float32,
integers, lists, DataFrames, strided views) is converted once. Also the
helpers every pass over the stack shares: kernel names, the fingerprint's
sketch vectors and one kernel per core
(:func:`map_kernels`). The checks themselves are :mod:`~mklopt.kernels._scan`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import KernelError
from ._pool import on_kept_threads
from ._threads import granted_threads
from ._blas import single_blas_thread
from .._compiled.symmetric import symmetrize_tiles

__all__ = ["as_stack", "dense_stack", "OwnedStack", "symmetrize", "symmetrize_matrix", "check_names", "check_points", "StackInput",
           "map_kernels", "sketch_vectors", "sketch_of", "SKETCH_COLUMNS", "read_only", "low_precision_name"]

#: Columns of the fixed random matrix W of a kernel's fingerprint sketch W^T K W.
SKETCH_COLUMNS = 3


def dense_stack(kernels: Any) -> bool:
    """Whether a kernel set holds its kernels as a dense (M, n, n) stack ``kernels.K`` (not
    low-rank factors, not computed on the fly)."""
    return not getattr(kernels, "lazy", False) and not getattr(kernels, "factored", False)


def sketch_vectors(n: int) -> np.ndarray:
    """The fixed random (n, 3) matrix :math:`W` of the fingerprint sketch :math:`W^\\top K_m W`."""
    return np.random.default_rng(20261123).standard_normal((n, SKETCH_COLUMNS))


def sketch_of(W: np.ndarray, KW: np.ndarray) -> np.ndarray:
    """The sketch :math:`W^\\top K_m W`, shape (M, 3, 3), from the products ``KW`` (M, n, 3)."""
    return np.einsum("ia,mib->mab", W, KW)


#: Entries (kernels × rows × columns) below which a kernel build runs on the calling thread:
#: handing its passes to the kept threads costs more than they save there (digits' five default
#: kernels on 2 cores, medians of 15 builds: 100 points 2.9 ms against 4.8 ms on the threads,
#: 200 points 5.2 against 7.1, 360 points 7.8 against 10.6; the threads faster from about 500
#: points, 11.0 against 13.5 ms, and 1.7× at 1,797).
SMALL_BUILD_ENTRIES = 800_000
_build = threading.local()


@contextmanager
def on_one_thread_if_small(entries: int) -> Iterator[None]:
    """Inside the block, on this thread, :func:`cores` is 1 where ``entries`` is below
    :data:`SMALL_BUILD_ENTRIES`."""
    previous = getattr(_build, "small", False)
    _build.small = previous or entries < SMALL_BUILD_ENTRIES
    try:
        yield
    finally:
        _build.small = previous


def cores() -> int:
    """The cores the caller grants (:func:`~mklopt.kernels._threads.granted_threads`), as the thread
    pools of kernel builds use them; 1 inside :func:`on_one_thread_if_small` for a small build."""
    return 1 if getattr(_build, "small", False) else granted_threads()


def map_kernels(work: Callable[[int], Any], M: int) -> list:
    """``[work(m) for m in range(M)]`` on all cores, BLAS single-threaded inside each call.

    Each call reads one kernel (in cache) with NumPy/BLAS, which release the
    GIL; one thread per core beats threaded BLAS on these small products.
    """
    threads = cores()
    with single_blas_thread():
        if min(M, threads) <= 1:
            return [work(m) for m in range(M)]
        return on_kept_threads("kernels", work, range(M), threads)


@dataclass
class StackInput:
    """A float64 C-contiguous stack, whether mklopt owns it, and the caller's float dtype
    when it was less precise than float64 (``"float16"``, ``"float32"``; for messages only:
    every check runs in double precision)."""

    stack: np.ndarray
    owned: bool
    low_precision: str | None = None


class OwnedStack:
    """A stack mklopt has just built (``KernelSet.from_data``): it may be changed in place.

    ``psd_by_construction``: every kernel came from a kernel function that is PSD for
    any input and its computed matrix is PSD to within the certificate's precision
    (:func:`~mklopt.kernels.construct.trusted_spec`), so the PSD screen is skipped;
    only mklopt builds such a stack (user arrays are screened). ``visits``: the
    validation scan's visit of each kernel, made while it was built
    (:mod:`~mklopt.kernels._build`), so that the scan need not read the stack again.
    """

    def __init__(self, stack: np.ndarray, psd_by_construction: bool = False,
                 visits: list | None = None) -> None:
        self.stack = stack
        self.psd_by_construction = bool(psd_by_construction)
        self.visits = visits


def low_precision_name(dtype) -> str | None:
    """The name of a float dtype less precise than float64 (``"float32"``, ``"float16"``), else None."""
    return str(dtype) if dtype is not None and dtype.kind == "f" and dtype.itemsize < 8 else None


def as_stack(kernels: Any) -> StackInput:
    """Convert ``kernels`` to an (M, n, n) float64 stack, copying only when needed.

    Accepted: an (M, n, n) or (n, n) array, a pandas DataFrame, or a sequence
    of (n, n) arrays/DataFrames. Real numeric input only. A user's float64
    C-contiguous array is not owned (never written to); an :class:`OwnedStack` is.
    """
    if isinstance(kernels, OwnedStack):
        return StackInput(kernels.stack, True)
    owned = not isinstance(kernels, np.ndarray)
    arr = _to_array(kernels)
    if arr.ndim == 2:
        arr = arr[None]
    _check_shape(arr)
    low = low_precision_name(arr.dtype)
    if arr.dtype != np.float64 or not arr.flags.c_contiguous:
        arr, owned = np.ascontiguousarray(arr, dtype=np.float64), True
    return StackInput(arr, owned, low)


def _refuse_sparse(kernel: Any) -> None:
    """A :class:`KernelError` for a SciPy sparse matrix or array (kernel matrices are dense here)."""
    import scipy.sparse

    if scipy.sparse.issparse(kernel):
        raise KernelError(f"kernels must be dense arrays, got a SciPy sparse {type(kernel).__name__}; "
                          "pass K.toarray().")


def _to_array(kernels: Any) -> np.ndarray:
    _refuse_sparse(kernels)
    if hasattr(kernels, "to_numpy") and getattr(kernels, "ndim", 0) == 2:
        kernels = kernels.to_numpy()
    elif isinstance(kernels, (list, tuple)):
        kernels = [k.to_numpy() if hasattr(k, "to_numpy") else k for k in kernels]
    for kernel in kernels if isinstance(kernels, list) else ():
        _refuse_sparse(kernel)
    try:
        arr = np.asarray(kernels)
    except (TypeError, ValueError) as exc:
        raise KernelError(
            "kernels must be an (M, n, n) array or a list of n x n arrays of the "
            f"same size; could not convert the input ({exc}).") from None
    if arr.dtype.kind == "c":
        raise KernelError(
            f"kernels are complex ({arr.dtype}); mklopt needs real kernel matrices, "
            "pass K.real if the imaginary part is numerical noise.")
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64) if arr.ndim else arr.astype(str)
        except (TypeError, ValueError):
            arr = arr.astype(str)
    if arr.dtype.kind not in "biuf" or arr.ndim == 0:
        raise KernelError(
            f"kernels must be numeric (M, n, n) arrays or lists of n x n arrays, got "
            f"values of type {arr.dtype} ({type(kernels).__name__}).")
    return arr


def _check_shape(stack: np.ndarray) -> None:
    if stack.ndim != 3:
        raise KernelError(f"kernels must be an (M, n, n) array, got an array with shape {stack.shape}.")
    if stack.shape[0] == 0:
        raise KernelError("no kernels given; pass at least one n x n kernel matrix.")
    if stack.shape[1] != stack.shape[2]:
        raise KernelError(
            f"kernel matrices must be square (n x n) over the training points, got "
            f"{stack.shape[1]} x {stack.shape[2]} (kernels between test and training points are "
            "for prediction only).")
    if stack.shape[1] == 0:
        raise KernelError("kernel matrices are empty (n = 0); pass kernels over at least one point.")


def check_names(names: Sequence[str] | None, M: int) -> list[str]:
    """One string name per kernel (``K0, K1, ...`` by default)."""
    if names is None:
        return [f"K{m}" for m in range(M)]
    names = [str(n) for n in names]
    if len(names) != M:
        raise KernelError(f"got {len(names)} names for {M} kernels; give one name per kernel.")
    return names


def check_points(index, n: int) -> np.ndarray:
    """The positions (int64) of the points ``index`` selects: a boolean mask of the ``n`` points,
    or distinct integer positions in ``[0, n)``; a :class:`KernelError` for anything else (a
    mask read as positions 0 and 1 would pick the wrong points without a word)."""
    array = np.asarray(index)
    if array.dtype == np.bool_:
        if array.shape != (n,):
            raise KernelError(f"a boolean mask of the points needs shape ({n},), got {array.shape}.")
        array = np.flatnonzero(array)
    elif array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise KernelError(f"points are selected by a 1-D array of integer positions or a boolean mask of the "
                          f"{n} points, got an array of dtype {array.dtype} and shape {array.shape}.")
    if array.size == 0:
        raise KernelError("the selection holds no point; select at least one.")
    if array.min() < 0 or array.max() >= n:
        raise KernelError(f"point positions must lie in [0, {n}), got {array.min()} to {array.max()}.")
    increasing = bool(np.all(array[1:] > array[:-1]))  # sorted positions (masks, flatnonzero): no sort
    if not increasing and np.unique(array).size != array.size:
        raise KernelError("a point position repeats: a subproblem takes each point once.")
    return array.astype(np.int64, copy=False)


def read_only(stack: np.ndarray) -> np.ndarray:
    """A non-writeable view; the caller's array keeps its own flags."""
    view = stack.view()
    view.flags.writeable = False
    return view


def symmetrize(stack: np.ndarray, indices: list[int]) -> None:
    """In place :math:`K_m \\leftarrow \\tfrac12 (K_m + K_m^\\top)` for the listed kernels."""
    for m in indices:
        symmetrize_matrix(stack[m])


def symmetrize_matrix(K: np.ndarray) -> None:
    """In place :math:`K \\leftarrow \\tfrac12 (K + K^\\top)`: every pair averaged once and both
    entries given the same value, in compiled tiles (:mod:`~mklopt._compiled.symmetric`) that
    form no transpose and release the GIL."""
    symmetrize_tiles(K)
