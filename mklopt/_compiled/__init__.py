"""mklopt's compiled code (numba), all of it, and nothing else compiles.

Everything numba compiles lives in this subpackage, so that the compile surface is in
one place: a fit compiles only the entry points its kernels and loss reach, each with one
signature (every array ``float64`` or ``int64``, C-contiguous; every array of a column
oracle read-only, :func:`~mklopt._compiled.columns.oracle_of`), and ``mklopt compile``
(:func:`mklopt.compiling.compile`) compiles them all ahead. :data:`ENTRY_POINTS` lists
the functions called from Python, by module, with their arguments; the helpers they call
are compiled into them. The on-disk cache is numba's, under an inter-process lock and
stamped with every compiled source (:mod:`~mklopt._compiled.cache`); the entry points a
default fit calls are compiled when the package is installed (:mod:`~mklopt._compiled.ahead`).
"""

from __future__ import annotations

from .watch import install

__all__ = ["ENTRY_POINTS"]

install()  # before any compiled module loads: a fit that waits for numba says so, once

#: ``module: {function: arguments}`` of the compiled functions called from Python. Arrays
#: are float64 unless marked ``int64``/``int8``/``bool``; ``oracle``, ``cache``, ``table``
#: and ``ktable`` are the tuples of arrays of :mod:`~mklopt._compiled.columns`,
#: :mod:`~mklopt._compiled.column_cache` and :mod:`~mklopt._compiled.rbf_table`.
ENTRY_POINTS: dict[str, dict[str, str]] = {
    "smo": {
        "chunk": "smo_chunk_{dense,factors,lazy}[_threads], one per oracle kind x threads (smo_chunk picks it): "
                 "oracle, dots cache, table, "
                 "cache, mu (M,), rows int64 (V,), signs (V,), base (V,), upper (V,), beta (V,), ghat (n,), "
                 "dmu (n,), state int8 (V,), active int64, points int64, delta (n,), touched bool (n,), "
                 "count int64, max_pairs int, eps float, blocks int, tau float",
        "shrink": "rows int64 (V,), signs (V,), base (V,), upper (V,), beta (V,), ghat (n,), state int8 (V,), "
                  "active int64 (V,), marks bool (n,), shrinking bool",
    },
    "smo_qp": {
        "smo_qp": "K (n, n), rows int64, signs, base, upper, beta, ghat, eps float, max_pairs int, tau float",
    },
    "gradient_updates": {
        "_add_dense": "stack (M, n, n) read-only, index int64 (k,), delta (k,), G (M, n)",
        "_add_dense_kernels": "as _add_dense, kernels over the cores (M n >= PARALLEL_DENSE)",
        "_add_factors": "F (n, R) read-only, offsets int64 (M+1,) read-only, index int64, delta, G (M, n)",
        "_add_lazy_columns": "oracle, dots cache, index int64, delta, G (M, n), ktable, buffer (B, L), "
                             "basis (R, n), blocks int",
    },
    "columns": {
        "kernel_entries": "oracle, dots cache, rows int64 (k,), i int, out (M, k)",
    },
    "rbf_table": {
        "fill_table": "oracle, mu (M,), table",
    },
    "products": {
        "_weighted_sum": "flat (M, n n), used int64 (k,), weights (k,), out (n n,)",
        "_weighted_sum_parallel": "as _weighted_sum, blocks over the cores (n n >= PARALLEL_SUM)",
    },
    "symmetric": {
        "symmetrize_tiles": "K (n, n) writable",
    },
    "training_stack": {
        "training_tiles": "Gc (n, n), norms (n,), G (n, n), gammas (k,), rbf_slots int64 (k,), scales (j,), "
                          "coef0s (j,), degrees int64 (j,), product_slots int64 (j,), stack (M, n, n), "
                          "pairs int64 (P, 2), extremes (M, 2)",
    },
    "blocks": {
        "gather_block": "stack (M, n, n) read-only, rows int64 (R,), columns int64 (C,), out (M, R, C)",
        "gather_points": "stack (M, n, n) read-only, index int64 (k,), W (k, 3), out (M, k, k), largest (M,), "
                         "KW (M, k, 3)",
        "kernels_first": "array (n, n, M) read-only, order int64 (n,) read-only, out (M, n, n), start int, "
                         "stop int",
        "same_kernels_first": "array int64 (n, n, M) read-only, stack int64 (M, n, n) read-only, start int, stop int",
        "weighted_block": "stack (M, n, n) read-only, kernels int64 (k,), weights (k,) read-only, "
                          "rows int64 (F,), out (F, F)",
    },
    "newton_model": {
        "model_hessian": "stack (M, n, n) read-only, kernels int64 (k,), weights (k,) read-only, rows int64 (F,), "
                         "yF (F,), B (F, M), ridge float, floor float, Q (F, F), H (M, M)",
        "floored": "H (M, M), floor float, out (M, M)",
    },
    "face_qp": {
        "face_qp": "H (M, M), c (M,), mu (M,), upper (M,), a (M,), has_row bool, scale (M,), on_bound float, "
                   "kkt_tol float, max_faces int, x (M,)",
    },
    "lanczos": {
        "lanczos_tridiagonal": "K (n, n) read-only, v (n,), w (n,), symmetric bool, given bool, V (k, n), "
                               "diag (k,), off (k,)",
    },
    "small_kernels": {
        "scan_chunk": "stack (m, n, n), W (n, 3), hi (m,), lo (m,), finite bool (m,), asymmetry (m,), "
                 "sketch (m, 3, 3)",
        "shifted_cholesky": "stack (m, n, n), scale (m,), noise float, levels (m,), info int32 (m,)",
    },
    "pairwise": {
        "_descend": "K (M, M), s (M,), a float, r float, c (M,), group int64 (M,), groups int, x (M,), "
                    "tol float, steps int",
    },
}
