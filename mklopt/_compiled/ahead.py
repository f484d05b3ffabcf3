"""The machine code the first fits need, built when mklopt is installed.

Every default fit on kernels held as a dense stack — ``MKLClassifier()`` and
``MKLRegressor()`` with their default kernels, binary or one-vs-rest, predictions
included — calls seven compiled functions, each with one signature: the SMO chunk on a
dense stack and its shrinking (:mod:`~mklopt._compiled.smo`), the per-kernel gradient
update (:mod:`~mklopt._compiled.gradient_updates`), the second-order step's model
(:mod:`~mklopt._compiled.newton_model`) and QP (:mod:`~mklopt._compiled.face_qp`), the PSD
screen of small kernels (:mod:`~mklopt._compiled.small_kernels`) and the RBF, linear and
polynomial kernels of the training stack in one pass
(:mod:`~mklopt._compiled.training_stack`); ``driver="auto"`` takes the interleaved core for
the default kernels at every size. Compiled on first use they cost a fresh environment's
first fit about three seconds. Six more serve other first contacts: the outer loops
(cutting plane, wrapper, DCA; ``mklopt demo``) solve their SVMs by SMO on the combined
kernel (:mod:`~mklopt._compiled.smo_qp`, :mod:`~mklopt._compiled.products`: 4.8 s of a
first demo's 15 s); one-vs-one copies each pair's kernels out of the training stack
(:mod:`~mklopt._compiled.blocks`); a fit on precomputed kernels copies them into mklopt's
layout (:mod:`~mklopt._compiled.blocks`) and screens them for PSD, exactly when small
(:mod:`~mklopt._compiled.small_kernels`), by Lanczos when larger
(:mod:`~mklopt._compiled.lanczos`): 3.5-4.5 s of its first fit. Installing the package (its
build hook) runs :func:`build`, which compiles them with numba for the installing machine
and writes numba's cache entries into the package (``_ahead``, read through
:mod:`~mklopt._compiled.cache`), so the first fit loads machine code like the hundredth.
Other fits (kernels on the fly, factors, the threads' variants of large problems) compile
on first use, announced in the log, or ahead with ``mklopt compile``.

:data:`AHEAD` names the functions and builds their argument types from the constructors
the fits use (:func:`~mklopt._compiled.columns.oracle_of`,
:func:`~mklopt._compiled.column_cache.new_cache`, ...), so the signatures cannot drift
from the calls.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from .cache import AHEAD_FOLDER, save_ahead
from .layout import frozen

__all__ = ["AHEAD", "ahead_signature", "build", "built_ahead"]


def _dense_chunk_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.smo.smo_chunk` on a dense stack, as the
    chunking driver passes them (a one-kernel, two-point problem)."""
    from .column_cache import new_cache
    from .columns import oracle_of
    from .rbf_table import NO_TABLE

    n = 2
    vector, index = np.zeros(n), np.zeros(n, dtype=np.int64)
    oracle = oracle_of(SimpleNamespace(K=np.zeros((1, n, n))))
    return (oracle, new_cache(n, 0), NO_TABLE, new_cache(n, 2), np.ones(1), index, vector, vector, vector,
            vector, vector, vector, np.zeros(n, dtype=np.int8), index, index, vector, np.zeros(n, dtype=np.bool_),
            np.zeros(n + 1, dtype=np.int64), 1, 1e-3, 1, 1e-12)


def _gradient_update_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.gradient_updates._add_dense`: the oracle's
    read-only stack, the changed points, their changes, the gradients."""
    from .columns import oracle_of

    stack = oracle_of(SimpleNamespace(K=np.zeros((1, 2, 2))))[1]
    return stack, np.zeros(1, dtype=np.int64), np.zeros(1), np.zeros((1, 2))


def _screen_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.small_kernels.scan_chunk`: a chunk of the
    read-only stack, the read-only sketch directions, the per-kernel outputs."""
    return (frozen(np.zeros((1, 2, 2))), frozen(np.zeros((2, 3))), np.zeros(1), np.zeros(1),
            np.zeros(1, dtype=np.bool_), np.zeros(1), np.zeros((1, 3, 3)))


def _training_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.training_stack.training_tiles` as the build passes
    them: the Gram matrices (kernels of the stack) and the norms, the RBF widths and slots, the
    product forms and slots, the stack, the tiles, the extremes."""
    stack, vector, index = np.zeros((2, 2, 2)), np.ones(1), np.zeros(1, dtype=np.int64)
    return (stack[0], np.zeros(2), stack[1], vector, index, vector, vector, index, index, stack,
            np.zeros((1, 2), dtype=np.int64), np.zeros((2, 2)))


def _copy_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.blocks.kernels_first` as a precomputed fit passes
    them: the read-only (n, n, M) array, the read-only order, the stack written, the rows."""
    return frozen(np.zeros((2, 2, 1))), frozen(np.arange(2), np.int64), np.zeros((1, 2, 2)), 0, 2


def _gather_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.blocks.gather_block` as the second-order step passes
    them: the read-only stack, the free points as rows, the support as columns, the block written."""
    index = np.zeros(1, dtype=np.int64)
    return frozen(np.zeros((1, 2, 2))), index, index, np.zeros((1, 1, 1))


def _points_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.blocks.gather_points` as one-vs-one's pairs pass them
    (:meth:`~mklopt.kernels.KernelSet.points`): the read-only stack, the points, the sketch's
    vectors, the pair's stack, its largest entries and its products with the vectors written."""
    return (frozen(np.zeros((1, 2, 2))), np.zeros(1, dtype=np.int64), np.zeros((1, 3)), np.zeros((1, 1, 1)),
            np.zeros(1), np.zeros((1, 1, 3)))


def _combined_sum_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.products._weighted_sum` as
    :func:`~mklopt._compiled.products.combined_kernel` passes them: the read-only flattened
    stack, the kernels in use and their weights, the combined kernel written."""
    return frozen(np.zeros((1, 4))), frozen(np.zeros(1), np.int64), frozen(np.ones(1)), np.zeros(4)


def _smo_qp_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.smo_qp.smo_qp` as the outer loops' SMO on a combined
    kernel passes them (:mod:`~mklopt.drivers.smo_inner`): the read-only K_mu, rows, signs,
    base and bounds, the variables and gradient written, the tolerance, the budget, ``tau``
    left at its default."""
    from numba import types

    vector = frozen(np.ones(2))
    return (frozen(np.eye(2)), frozen(np.arange(2), np.int64), vector, vector, vector, np.zeros(2), np.zeros(2),
            1e-3, 10, types.Omitted(1e-12))


def _lanczos_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.lanczos.lanczos_tridiagonal` as the PSD screen of a
    given kernel passes them: the read-only kernel, the start and its product, exact symmetry,
    whether the product is given, the basis, the tridiagonal written."""
    vector = np.ones(2)
    return frozen(np.eye(2)), vector, vector, True, True, np.zeros((2, 2)), vector, vector


def _small_screen_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.small_kernels.shifted_cholesky` as the exact PSD
    test of small given kernels passes them: the read-only kernels and scales, the noise per
    norm, the levels and LAPACK's answers written."""
    return frozen(np.zeros((1, 2, 2))), frozen(np.ones(1)), 1e-12, np.zeros(1), np.zeros(1, dtype=np.int32)


def _shrink_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.smo.shrink` as the chunking driver passes them: the
    variables' points, signs, base, bounds and values, the combined gradient, their moves, the
    active list and the points' marks written, whether to shrink."""
    vector, index = np.zeros(2), np.zeros(2, dtype=np.int64)
    return (index, vector, vector, vector, vector, vector, np.zeros(2, dtype=np.int8), index,
            np.zeros(2, dtype=np.bool_), True)


def _model_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.newton_model.model_hessian` as the second-order
    step passes them: the read-only stack, the kernels in use, their read-only weights, the
    free points, their labels, the gradient rows, ridge and floor, the block and H written."""
    index = np.zeros(1, dtype=np.int64)
    return (frozen(np.zeros((1, 2, 2))), index, frozen(np.ones(1)), index, np.ones(1), np.zeros((1, 1)), 1e-10,
            1e-8, np.zeros((1, 1)), np.zeros((1, 1)))


def _qp_arguments() -> tuple:
    """Arguments of :func:`~mklopt._compiled.face_qp.face_qp` as :class:`~mklopt.drivers._theta_qp.ThetaQP`
    passes them: H, c, the weights, the bounds, the row, whether Θ has it, the scale, the
    two tolerances, the faces at most, the answer written."""
    vector = np.ones(1)
    return np.ones((1, 1)), vector, vector, vector, vector, True, vector, 1e-12, 1e-9, 24, np.zeros(1)


def _compiled(module: str, name: str) -> Callable[[], Any]:
    """The compiled function ``name`` of this subpackage's ``module`` (imported when asked)."""
    return lambda: getattr(importlib.import_module(f".{module}", __package__), name)


def _dense_chunk():
    from .columns import DENSE
    from .smo import _CHUNKS

    return _CHUNKS[DENSE, 0]


#: ``(name, dispatcher, sample arguments)`` of the functions built with the package.
AHEAD: list[tuple[str, Callable, Callable[[], tuple]]] = [
    ("smo_chunk_dense", _dense_chunk, _dense_chunk_arguments),
    ("shrink", _compiled("smo", "shrink"), _shrink_arguments),
    ("_add_dense", _compiled("gradient_updates", "_add_dense"), _gradient_update_arguments),
    ("training_tiles", _compiled("training_stack", "training_tiles"), _training_arguments),
    ("model_hessian", _compiled("newton_model", "model_hessian"), _model_arguments),
    ("face_qp", _compiled("face_qp", "face_qp"), _qp_arguments),
    ("scan_chunk", _compiled("small_kernels", "scan_chunk"), _screen_arguments),
    # the outer loops (cutting plane, wrapper, DCA: mklopt demo): SMO on the combined kernel
    ("_weighted_sum", _compiled("products", "_weighted_sum"), _combined_sum_arguments),
    ("smo_qp", _compiled("smo_qp", "smo_qp"), _smo_qp_arguments),
    # the second-order step's rows; one-vs-one: each pair's kernels copied out of the training stack
    ("gather_block", _compiled("blocks", "gather_block"), _gather_arguments),
    ("gather_points", _compiled("blocks", "gather_points"), _points_arguments),
    # a fit on precomputed kernels: copied into mklopt's layout, then screened for PSD
    ("kernels_first", _compiled("blocks", "kernels_first"), _copy_arguments),
    ("shifted_cholesky", _compiled("small_kernels", "shifted_cholesky"), _small_screen_arguments),
    ("lanczos_tridiagonal", _compiled("lanczos", "lanczos_tridiagonal"), _lanczos_arguments),
]


def ahead_signature(arguments: Callable[[], tuple]) -> tuple:
    """numba's argument types of a sample call (an argument left out is given as its numba
    type): the key a call with these types looks up."""
    from numba import typeof, types

    return tuple(argument if isinstance(argument, types.Type) else typeof(argument)
                 for argument in arguments())


def build(folder: Path = AHEAD_FOLDER) -> list[tuple[str, float]]:
    """Compile every function of :data:`AHEAD` at its signature and write it into
    ``folder``; ``[(name, seconds)]``.

    Run by the package's build hook in a child process whose numba cache is an empty
    throwaway folder and which ignores any code built before (``MKLOPT_NO_AHEAD=1``): a
    function loaded from a cache has no machine code to write again. A checkout rebuilds
    the folder with ``pip install -e .``.
    """
    done = []
    for name, dispatcher_of, arguments in AHEAD:
        start = time.perf_counter()
        dispatcher = dispatcher_of()
        dispatcher.compile(ahead_signature(arguments))
        save_ahead(dispatcher, Path(folder))
        done.append((name, time.perf_counter() - start))
    return done


def built_ahead() -> list[str]:
    """The functions of :data:`AHEAD` whose code built with the package this process can
    load (this numba, this machine, these sources)."""
    if not AHEAD_FOLDER.is_dir():
        return []
    found = []
    for name, dispatcher_of, arguments in AHEAD:
        dispatcher = dispatcher_of()
        key = dispatcher._cache._index_key(ahead_signature(arguments), dispatcher.targetctx.codegen())
        if dispatcher._cache.ahead_file().load(key) is not None:
            found.append(name)
    return found
