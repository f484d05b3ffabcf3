"""How ``driver="auto"`` chooses: the interleaved core or an outer loop, by estimated seconds.

Both ways to an ℓp-MKL optimum read the kernels over and over; they differ in how.

* **The interleaved core** (``"chunking"``) makes :math:`P` SMO pairs; each reads two
  columns of :math:`K_\\mu = \\sum_m \\mu_m K_m`, :math:`M_w n` entries of the stack
  (:math:`M_w` kernels with non-zero weight), scattered, on one core, and each of its
  :math:`S = \\max(P/Q,\\ S_0)` steps (:math:`Q = 100` pairs) pays a weight step, a
  certificate and the per-kernel gradient update:

  .. math:: t_{\\text{core}} = (a S + b\\, P M_w n) / c_{\\text{core}}.

* **An outer loop** (the wrapper for :math:`p > 1`, the cutting plane for ℓ1 and
  other polyhedral sets) makes :math:`I` iterations; each streams the whole stack
  twice (:math:`K_\\mu`, then :math:`s_m = \\alpha^\\top K_m\\alpha`), shared by the
  machine's :math:`T` cores, and solves one SVM on :math:`K_\\mu` (libsvm, one core):

  .. math:: t_{\\text{outer}} = I\\,(e + d\\, M n^2 / T + f\\, n^2).

The pairs follow :math:`P = \\min(1000 + 1.5 n,\\ 6n)\\,k_C k_{\\text{loss}}`
(:math:`k_C = 1 + \\tfrac12\\log_{10} C` for C > 1), with at least :math:`S_0 = 15\\,k_C`
steps; the outer loops take :math:`I = 14` iterations (the wrapper) and
:math:`15\\,(1 + \\tfrac14\\log_{10} C)` (the cutting plane); :math:`M_w = M` for p > 1 and
:math:`\\min(M, 5)` for ℓ1 (its weights are sparse). The constants were chosen, by a search
over them, for the model to name the faster of the two on 56 problems measured on a 2-core
AMD EPYC: letter (A–M vs N–Z, standardized) with 5 and 50 RBF kernels, n = 60 … 2,000,
C = 1 and 100, p = 1 and 4/3, certified gap 1e-4. It names the faster in 47 of the 56, and
where it does not, the time it picks is at most 1.5× the faster one's (1.03× on average;
1.29× and up to 3.65× with the constants fitted before the second-order weight step and
the faster weight steps since; re-measured after the compiled weight step and the faster
SMO scans, 16 of these problems: it names the faster in 14, the other two within 1.15×, so
the constants were kept). On 24 problems it was not chosen on (scikit-learn's digits,
even against odd, and breast cancer, the default kernels, n = 150 … 1,500) it names the faster
in 22 (the other two within 3 %). The core is the faster on most of them: its steps got
cheaper with the second-order step and the compiled blocks. The outer loops are left the small
problems with many kernels where every weight is used (p > 1, 50 kernels on 2 cores: the
wrapper from about 100 to 400 points at C = 1, up to 2,000 at C = 100).

Where problems run side by side (the classes of a one-vs-rest fit on
:math:`T` threads) :math:`c_{\\text{core}} = 1 + 0.3(\\min(\\text{classes}, T) - 1)`
(digits' 10 classes ran 1.3× faster on 2 threads than on one, 1.15-1.55× from run to run, since
the weight step's model and QP release the GIL; 1.17-1.24× before, when they held it);
the outer loops take one class at a time. One problem of :data:`PARALLEL_POINTS` points
and more splits its scans and columns over the threads: :math:`c_{\\text{core}} = T^{0.6}`
(measured 1.7× on 2 threads, 4.7× on 16). On 16 cores the outer loop's passes are
what makes the wrapper the faster one on a dense stack of letter at n = 8,000 and 50 kernels
(14 s against chunking's 26 s there); the model keeps that pick (on 16 cores the wrapper for
50 kernels at p > 1 up to 8,000 points, on 2 cores the core from 400).

Kernels that would need a dense stack above ``lazy_bytes`` but can be computed on the
fly always go to the core: the outer loops need the stack, the core does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..drivers._chunk_size import DEFAULT_Q

__all__ = ["DriverChoice", "choose_driver", "core_seconds", "outer_seconds"]

#: Points from which one problem's fit is taken to run :math:`T^{0.6}` times faster on T
#: threads (measured 1.7× on 2 and 4.7× on 16 at 20,000 points). The core splits scans
#: from fewer (``mklopt._compiled.smo_select.PARALLEL_SCAN``), but where its passes are that short the
#: whole fit gains far less: on 16 cores chunking took 26 s at 8,000 points and 50 kernels.
PARALLEL_POINTS = 8192
#: Seconds per step besides its pairs' columns: a weight step, a certificate and a
#: gradient update (Q = 100 pairs; ~0.3 ms with the analytic step at 60 points).
STEP_SECONDS = 3.0e-4
#: Steps at least at C = 1 (measured 13-19 with the analytic weight step, 6-16 with the
#: second-order one below 2,000 points): the weights need them even where SMO needs fewer pairs.
MIN_STEPS = 15.0
#: Seconds per entry of the two K_mu columns of a pair (weighted kernels × points).
PAIR_ENTRY_SECONDS = 5.0e-9
#: Seconds per outer iteration besides the stack and the SVM (certificate, master).
ITERATION_SECONDS = 6.0e-4
#: Seconds per stack entry and outer iteration on one core (two streamed passes).
STACK_ENTRY_SECONDS = 2.1e-9
#: Seconds per entry of K_mu and outer iteration for the inner SVM (one core).
SVM_ENTRY_SECONDS = 2.0e-8
#: Pairs: PAIRS_BASE + PAIRS_PER_POINT * n, at most SMALL_PAIRS_PER_POINT * n (few points
#: need few pairs), times the factors below.
PAIRS_BASE, PAIRS_PER_POINT, SMALL_PAIRS_PER_POINT = 1000.0, 1.5, 6.0
#: Problems side by side gain this much per extra thread (what is left of their steps' Python
#: shares the GIL, and their SMO passes the memory: digits' 10 classes on 2 threads ran ~1.3x
#: faster than on one).
SIDE_BY_SIDE_GAIN = 0.3
#: Pairs with a polyhedral Θ (ℓ1, box) relative to the analytic step's: as many since the
#: second-order step (1.8 with the cutting plane's weights alone).
POLYHEDRAL_PAIRS = 1.0
#: Per loss: more pairs (one-class: ν fixes the mass, every point starts in the pair
#: selection) or a larger inner SVM (ε-SVR: 2n variables).
LOSS_PAIRS = {"one_class": 2.5}
LOSS_SVM = {"epsilon_insensitive": 2.0}
#: Outer iterations of the wrapper, and of the cutting plane at C = 1.
WRAPPER_ITERATIONS, CUTTING_PLANE_ITERATIONS = 14.0, 15.0
#: ℓ1's weights are sparse: the columns of K_mu read about this many kernels.
SPARSE_KERNELS = 5


@dataclass(frozen=True)
class DriverChoice:
    """The driver ``"auto"`` takes, the two estimates (seconds) and why."""

    driver: str
    core_seconds: float
    outer_driver: str
    outer_seconds: float
    reason: str


def _c_factor(C: float, slope: float) -> float:
    return 1.0 + slope * math.log10(max(float(C), 1.0))


def core_seconds(n: int, M: int, *, polyhedral: bool, C: float = 1.0, loss: str = "hinge",
                 problems: int = 1, threads: int = 1) -> float:
    """Estimated seconds of the interleaved core for ``problems`` problems of ``n`` points."""
    factor = (POLYHEDRAL_PAIRS if polyhedral else 1.0) * _c_factor(C, 0.5)
    pairs = min(PAIRS_BASE + PAIRS_PER_POINT * n, SMALL_PAIRS_PER_POINT * n) * factor
    pairs *= LOSS_PAIRS.get(loss, 1.0)
    steps = max(pairs / DEFAULT_Q, MIN_STEPS * factor)
    weighted = min(M, SPARSE_KERNELS) if polyhedral else M
    one = steps * STEP_SECONDS + pairs * PAIR_ENTRY_SECONDS * weighted * n
    if problems > 1:
        cores = 1.0 + SIDE_BY_SIDE_GAIN * (min(problems, threads) - 1)
    else:
        cores = threads ** 0.6 if n >= PARALLEL_POINTS else 1.0
    return problems * one / cores


def outer_seconds(n: int, M: int, *, polyhedral: bool, C: float = 1.0, loss: str = "hinge",
                  problems: int = 1, threads: int = 1) -> float:
    """Estimated seconds of the outer loop (cutting plane if ``polyhedral``, else the wrapper)."""
    iterations = CUTTING_PLANE_ITERATIONS * _c_factor(C, 0.25) if polyhedral else WRAPPER_ITERATIONS
    per_iteration = (ITERATION_SECONDS + STACK_ENTRY_SECONDS * M * n * n / max(threads, 1)
                     + SVM_ENTRY_SECONDS * LOSS_SVM.get(loss, 1.0) * n * n)
    return problems * iterations * per_iteration


def choose_driver(n: int, M: int, *, polyhedral: bool, C: float = 1.0, loss: str = "hinge",
                  problems: int = 1, threads: int = 1, core_threads: int = 1,
                  stack_bytes_over: bool = False) -> DriverChoice:
    """``"chunking"`` or the outer loop, whichever is estimated faster.

    ``threads``: the cores the outer loop's stack passes share; ``core_threads``: the
    threads the core runs ``problems`` side by side on; ``stack_bytes_over``: the
    dense stack would exceed the estimators' on-the-fly threshold and the kernels can
    be computed on the fly (the core is then taken without estimates).
    """
    outer = "cutting_plane" if polyhedral else "wrapper"
    core = core_seconds(n, M, polyhedral=polyhedral, C=C, loss=loss, problems=problems,
                        threads=core_threads if problems > 1 else threads)
    other = outer_seconds(n, M, polyhedral=polyhedral, C=C, loss=loss, problems=problems,
                          threads=threads)
    if stack_bytes_over:
        return DriverChoice("chunking", core, outer, other, "kernels on the fly: no dense stack")
    if core <= other:
        return DriverChoice("chunking", core, outer, other, "the core is estimated faster")
    return DriverChoice(outer, core, outer, other, f"the {outer.replace('_', ' ')} is estimated faster")
