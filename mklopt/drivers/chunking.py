"""Interleaved optimization: θ-steps inside the SVM's decomposition solver (thesis Alg. 3.2, D.1).

The state is the SMO variables of the loss (:meth:`~mklopt.losses.Loss.smo_forms`:
:math:`\\alpha` for the hinge and one-class losses, :math:`(\\alpha^+, \\alpha^-)` for ε-SVR), the
weights μ and one gradient per kernel :math:`g_m = K_m w` (:math:`w` the point weights,
:math:`y\\circ\\alpha` for the hinge; M × n floats: no n × n matrix is formed). Each
iteration is

1. an α-step: ``Q`` SMO pair updates at fixed μ (:mod:`mklopt._compiled.smo`, compiled),
   after which the per-kernel gradients are updated from the touched indices only. While
   the θ-steps leave μ where it was (:math:`\\|\\Delta\\mu\\|_1 \\le` :data:`SETTLED`
   :math:`\\|\\mu\\|_1`), each α-step gets twice the pairs of the last, up to
   :data:`~mklopt.drivers._chunk_size.MAX_CHUNK` ``Q``: what is left then is the SVM at those weights, and a weight step
   every ``Q`` pairs would only add its fixed cost;
2. the certificate from the gradients alone: :math:`s_m = w^\\top g_m`,
   :math:`f = \\sum_m\\mu_m g_m`, the exact bias (the Certificates page). When it reaches
   ``tol``, the pair is re-certified from the kernels themselves (α projected,
   gradients recomputed exactly) and the loop stops only if that certifies;
3. a θ-step: for :math:`\\|\\mu\\|_p\\le1`, :math:`1<p<\\infty`, the analytic update
   :math:`\\mu_m\\propto(\\mu_m^2 s_m)^{1/(p+1)}` (thesis Prop. 3.1); for a polyhedral Θ
   (ℓ1, box, weighted simplex) the cutting-plane master on the cuts collected
   so far (App. D: the analytic step has no convergence guarantee at p = 1),
   whose value is a lower bound, or, for the binary hinge loss on a dense stack, the
   second-order step (HessianMKL) while it improves the certificate; for any other Θ the regularizer's own
   :meth:`~mklopt.regularizers.Regularizer.argmin_weights`
   (:mod:`mklopt.drivers._weight_step`).

Each α-step shrinks (libsvm's heuristic, :mod:`mklopt._compiled.smo`): its pairs run on the
variables that can still move, chosen afresh at each step from the exact gradients.

SMO's own tolerance ``eps`` on :math:`\\max_{up}F - \\min_{low}F` starts at
``min(1e-3, tol)`` and is divided by 10 whenever SMO is optimal at the current
weights but the SVM's duality gap there is still above a tenth of the target.
"""

from __future__ import annotations

import numba
import numpy as np

from .._options import Flag, Integer, Real, Vector
from ..formulations import MKLData
from .._compiled.columns import LAZY, kernel_diagonals, oracle_of, product_length
from .._compiled.gradient_updates import add_columns, add_columns_into, update_scratch
from ..kernels._blas import single_blas_thread
from .._compiled.rbf_table import NO_KERNEL_TABLE, fill_table
from ._progress import REPEATS, Progress, Repeats
from ..results.result import Certificate
from ._core_memory import CACHE_MB, KeptColumns, column_caches, rbf_table_of, shared_kernel_table
from .._compiled.smo import shrink, smo_chunk
from .._compiled.smo import violation as smo_violation
from .base import Driver, Step
from ._chunk_size import checked_Q, next_chunk
from ._core_certificates import from_gradients, from_kernels, svm_gap
from ._newton_step import SETTLED, moved_share
from ._weight_step import WeightStep

__all__ = ["Chunking", "CACHE_MB"]

_MIN_EPS = 1e-12


class Chunking(Driver):
    """Interleaved α- and θ-steps on kernel columns (dense, factors or computed on the fly).

    Parameters
    ----------
    data : MKLData
        A loss with SMO forms (hinge, ε-insensitive, one-class; ``ovr_hinge``: one per
        class, the classes' chunks in turn at the same weights); the kernels a
        :class:`~mklopt.kernels.KernelSet`,
        :class:`~mklopt.kernels.factorset.FactorKernelSet` or
        :class:`~mklopt.kernels.lazy.LazyKernelSet`.
    tol : float
        Target certified relative gap.
    Q : int, optional
        SMO pair updates between θ-steps (at least 2; default 100); doubled, up to
        ``MAX_CHUNK * Q``, while the θ-steps leave the weights where they were.
    cache_mb : float
        Memory for cached kernel columns, in MB (default 256): columns of
        :math:`K_\\mu` while the weights are fixed and, for kernels on the fly, the
        inner products :math:`X x_i` across θ-steps.
    init_weights, init_alpha : array, optional
        Warm start (e.g. from an earlier fit on the same kernels).
    max_cuts : int
        Cuts kept by the ℓ1/polyhedral master (the most slack one is dropped beyond).
    shrinking : bool
        Run each α-step on the variables that can still move (default True; libsvm's
        heuristic, chosen afresh at each step from exact gradients, so the answer is
        certified either way).
    second_order : bool
        For a polyhedral Θ, the binary hinge loss and a dense stack: θ-steps by the quadratic
        model of the SVM's optimum in μ (:mod:`~mklopt.drivers._newton_step`, HessianMKL),
        the cutting plane where that does not help (default True; False: the cutting plane only).
    """

    method = ("the thesis' interleaved optimization (Kloft's thesis, §3.2): compiled SMO steps on α "
              "and the weight step in one loop, on a dense stack, low-rank factors or kernels "
              "computed on the fly")
    notes = ("the hinge (binary and multiclass), ε-insensitive and one-class losses from a few hundred points "
             "(`driver=\"auto\"` picks it where its estimated time is lower); no n × n matrix on the fly")

    stall_rule = ("a step made no SMO pair update at the finest stopping violation (1e-12) and the "
                  "weight step left the weights where they were: the next step would repeat it; "
                  f"max_cuts + {REPEATS} steps in a row did so at a coarser one; or the "
                  "best certified gap fell by less than 0.1 % over the last 200 steps with SMO pair updates")
    #: Why the loop stopped when its steps no longer brought the certified gap down.
    slow_reason = ("the certified gap fell by less than 0.1 % over the last 200 steps with SMO pair "
                   "updates, at rel_gap "
                   "{rel_gap:.1e}: the problem is ill-conditioned for SMO (a very large C, kernels of very "
                   "different scales or nearly constant, entries far larger than their variation as of "
                   "features with a large offset); a smaller C, centred features, kernels normalized by their "
                   "trace, or driver='cutting_plane' goes further")
    #: Why the loop stopped when its steps repeated the last one exactly.
    repeat_reason = (f"max_cuts + {REPEATS} steps in a row repeated the last one (SMO optimal at its stopping "
                     "violation, the weight step leaving the weights where they were) at rel_gap {rel_gap:.1e}: "
                     "the weight step finds no better weights from this α (kernels whose entries are far "
                     "larger than their variation, e.g. linear or polynomial kernels of features with a large "
                     "offset, leave it products of rounding: centre the features, e.g. with StandardScaler); "
                     "driver='cutting_plane' may go further")
    stall_reason = ("no SMO pair could improve α at the finest stopping violation (1e-12) and the "
                    "weight step did not move the weights, which limits the certificate at rel_gap "
                    "{rel_gap:.1e}; a smaller C, or driver='cutting_plane' with inner='cvxpy', goes further")

    name = "chunking"
    losses = ("hinge", "epsilon_insensitive", "one_class", "ovr_hinge")
    options = {"init_alpha": Vector("alpha"), "max_cuts": Integer(1), "Q": Integer(2, optional=True),
               "cache_mb": Real(0, open="low"), "shrinking": Flag(), "second_order": Flag()}
    default_max_iter = 100_000

    def __init__(self, data: MKLData, *, tol: float = 1e-4, Q: int | None = None,
                 cache_mb: float = CACHE_MB, init_weights=None, init_alpha=None, max_cuts: int = 500,
                 shrinking: bool = True, second_order: bool = True, inner=None, backend=None) -> None:
        super().__init__(data)
        n, M = data.n, data.M
        self.tol = tol
        self.Q = checked_Q(Q)
        self.oracle = oracle_of(data.kernels)
        views = product_length(self.oracle) // n if self.oracle[0] == LAZY else 0
        self.y = np.asarray(data.y, dtype=float)
        self.forms = data.loss.smo_forms(self.y, data.C)  # one per output (class of ovr_hinge)
        T = len(self.forms)
        # the outputs share the weights: K_mu columns serve all of them within a step
        self.dots, self.cache = column_caches(data.kernels, cache_mb, views, self.Q * T)
        self.columns = KeptColumns(self.cache, n, M)
        self.table = rbf_table_of(self.oracle)
        lazy = self.oracle[0] == LAZY
        self.ktable = shared_kernel_table(data.kernels, self.oracle, self.table) if lazy else NO_KERNEL_TABLE
        self.scratch = update_scratch(self.oracle, self.ktable)
        self.diag = kernel_diagonals(data.kernels)
        self.bases = [form.base for form in self.forms]
        self.betas = [np.zeros(form.start.size) for form in self.forms]
        self.G, self.ghat, self.dmu = np.zeros((T, M, n)), np.zeros((T, n)), np.zeros(n)
        self.delta, self.touched = np.zeros(n), np.zeros(n, dtype=np.bool_)
        self.count = np.zeros(n + 1, dtype=np.int64)
        self.shrinking = bool(shrinking)
        self.actives = [np.empty(form.start.size, dtype=np.int64) for form in self.forms]
        self.states = [np.empty(form.start.size, dtype=np.int8) for form in self.forms]
        self.marks, self.active = np.zeros(n, dtype=np.bool_), n
        self.eps = min(1e-3, tol)
        self.init_weights = init_weights
        self.weight_step = WeightStep(data, max_cuts, second_order)
        self.pairs = 0
        self.chunk = self.Q
        self.progress, self.repeats = Progress(), Repeats(max_cuts)
        self._exact: Certificate | None = None
        starts = [form.start for form in self.forms] if init_alpha is None else data.loss.smo_betas(
            data.loss.project(np.asarray(init_alpha, dtype=float), self.y, data.C), self.y)
        self._set_betas(starts)

    # ------------------------------------------------------------- state
    @property
    def alpha(self) -> np.ndarray:
        """The loss's dual variables from the SMO variables."""
        return self.data.loss.smo_alpha(self.betas, self.y)

    @property
    def _Kc(self) -> np.ndarray:
        """The per-kernel gradients as certificates take them: (M, n), or (M, T, n) for T outputs."""
        return self.G[0] if len(self.forms) == 1 else np.moveaxis(self.G, 0, 1)

    def _set_betas(self, betas: list) -> None:
        """Replace the SMO variables and recompute every per-kernel gradient exactly from the
        non-zero point weights."""
        self.G[:] = 0.0
        for form, beta, new, G in zip(self.forms, self.betas, betas, self.G):
            beta[:] = new
            coef = form.point_weights(beta, self.data.n)
            support = np.flatnonzero(coef).astype(np.int64)
            add_columns(self.oracle, self.dots, support, coef[support], G, NO_KERNEL_TABLE,
                        numba.get_num_threads())

    def _flush(self, G: np.ndarray, threads: int) -> None:
        """Bring one output's per-kernel gradients up to date with the chunk's changes of w."""
        k = int(self.count[0])
        index = self.count[1:k + 1].copy()
        add_columns_into(self.oracle, self.dots, index, self.delta[index], G, self.ktable, self.scratch, threads)
        self.delta[index] = 0.0
        self.touched[index] = False
        self.count[0] = 0

    # -------------------------------------------------------------- step
    def step(self, weights: np.ndarray) -> Step:
        # the step's few BLAS products are small; BLAS threads left spinning after them
        # would take the cores from the compiled loops' own threads
        with single_blas_thread():
            return self._step(weights)

    def _step(self, weights: np.ndarray) -> Step:
        mu = np.asarray(weights, dtype=float)
        np.dot(mu, self.diag, out=self.dmu)
        if self.table[0].shape[0]:
            fill_table(self.oracle, mu, self.table)
        points, actives = self._active_sets(mu)
        self.columns.keep_for(mu, points)
        threads = numba.get_num_threads()  # once a step: numba checks its thread pool at each call
        pairs, violation, self.active = 0, 0.0, sum(active.size for active in actives)
        for form, base, beta, ghat, G, state, active in zip(self.forms, self.bases, self.betas, self.ghat,
                                                             self.G, self.states, actives):
            done, worst = smo_chunk(self.oracle, self.dots, self.table, self.cache, mu, form.rows,
                                    form.signs, base, form.upper, beta, ghat, self.dmu, state, active, points,
                                    self.delta, self.touched, self.count, self.chunk, self.eps, threads)
            self._flush(G, threads)
            if worst <= self.eps and active.size < beta.size:  # optimal on the active set: and on all?
                np.dot(mu, G, out=ghat)
                worst = smo_violation(state, form.rows, base, ghat)
            pairs, violation = pairs + int(done), max(violation, float(worst))
        self.pairs += pairs
        cert, eps = self._gradient_certificate(mu), self.eps
        if violation <= self.eps and svm_gap(mu, cert) > 0.1 * self.tol * _scale(cert):
            self.eps = max(self.eps / 10.0, _MIN_EPS)  # SMO optimal here, yet not precise enough
        if 0.0 <= cert.rel_gap <= self.tol:
            cert = self._exact_certificate(mu)
        next_weights, lower = self.weight_step(mu, cert, self._Kc if len(self.forms) == 1 else None)
        # no pair to update at the finest stopping violation, and weights the θ-step leaves
        # where they were: the next step would repeat this one exactly; at a coarser one (the
        # SVM's gap not asking for less), more such steps in a row than the θ-step holds cuts
        repeated = pairs == 0 and np.array_equal(next_weights, mu)
        self.stalled = repeated and self.eps <= _MIN_EPS
        if not self.stalled and self.repeats.update(repeated and self.eps == eps):
            self.stalled, self.stall_reason = True, self.repeat_reason
        # steps whose SMO pairs brought no progress (steps of the weights alone, pairs == 0,
        # may gather cuts for hundreds of steps before the gap moves: not counted)
        if not self.stalled and pairs > 0 and self.progress.update(cert.rel_gap):
            self.stalled, self.stall_reason = True, self.slow_reason
        self._next_chunk(mu, next_weights)
        return Step(self.alpha.copy(), cert, next_weights, lower=lower, extra=self._extra(pairs, violation))

    def _next_chunk(self, mu: np.ndarray, next_weights: np.ndarray) -> None:
        """Twice the pairs (up to ``MAX_CHUNK * Q``) after a θ-step that left the weights
        where they were, ``Q`` after one that moved them."""
        self.chunk = next_chunk(self.chunk, self.Q, moved_share(next_weights, mu) <= SETTLED)

    def _active_sets(self, mu: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """The step's points and each output's active variables, from exact :math:`\\hat g = \\sum_m \\mu_m g_m`."""
        actives = []
        for form, base, beta, ghat, G, state, active in zip(self.forms, self.bases, self.betas, self.ghat,
                                                             self.G, self.states, self.actives):
            np.dot(mu, G, out=ghat)
            k, _ = shrink(form.rows, form.signs, base, form.upper, beta, ghat, state, active, self.marks,
                          self.shrinking)
            actives.append(active[:k])
        points = np.flatnonzero(self.marks)
        self.marks[points] = False
        return points, actives

    def _gradient_certificate(self, mu: np.ndarray) -> Certificate:
        return from_gradients(self.data, self.y, self.alpha.copy(), self.G, self._Kc, mu)

    def _exact_certificate(self, mu: np.ndarray) -> Certificate:
        """The certificate from the kernels themselves; the state continues from it."""
        terms, self._exact = from_kernels(self.data, self.y, self.alpha, mu)
        for beta, new in zip(self.betas, self.data.loss.smo_betas(terms.alpha, self.y)):
            beta[:] = new
        self._Kc[:] = terms.Kc
        return self._exact

    def confirm(self, cert: Certificate) -> Certificate:
        """Re-certify the answer from the kernels (the loop's certificates came from gradients)."""
        return cert if cert is self._exact else from_kernels(self.data, self.y, cert.alpha, cert.weights)[1]

    def _extra(self, pairs: int, violation: float) -> dict:
        counters = self.cache[4]
        extra = {"pairs": int(pairs), "smo_violation": float(violation), "smo_eps": self.eps,
                 "cache_hits": int(counters[1]), "cache_misses": int(counters[2]), "active": self.active}
        if self.dots[0].shape[0]:
            extra["dot_cache_hits"], extra["dot_cache_misses"] = int(self.dots[4][1]), int(self.dots[4][2])
        return extra

    def warm_start(self, previous: Driver, result) -> None:
        self.init_weights = np.asarray(result.weights, dtype=float)
        d = self.data
        if isinstance(previous, Chunking) and previous.data.n == d.n and previous.data.loss == d.loss:
            alpha = d.loss.project(np.asarray(result.alpha, dtype=float), self.y, d.C)
            self._set_betas(d.loss.smo_betas(alpha, self.y))

    def finish(self, result) -> None:
        result.info["smo_pairs"] = self.pairs
        result.info["Q"] = self.Q


def _scale(cert: Certificate) -> float:
    return max(abs(cert.primal), abs(cert.dual), 1e-300)
