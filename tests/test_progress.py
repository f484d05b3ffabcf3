"""A loop that still steps but no longer brings the certified gap down stops "stalled"."""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.drivers._progress import MIN_DROP, WINDOW, Progress


def test_a_gap_that_keeps_falling_never_stalls():
    progress = Progress()
    assert not any(progress.update(0.5 * 0.999**k) for k in range(5 * WINDOW))


def test_a_flat_or_creeping_gap_stalls_after_the_window():
    flat, creeping = Progress(), Progress()
    stops = [k for k in range(3 * WINDOW) if flat.update(0.3)]
    assert stops[0] == WINDOW  # the step after a full window
    drop = 0.5 * MIN_DROP / WINDOW  # half the least fall, spread over the window
    assert any(creeping.update(0.3 * (1 - drop) ** k) for k in range(3 * WINDOW))


def test_nan_gaps_are_no_progress_and_a_worse_gap_is_not_counted():
    progress = Progress(window=3)
    assert [progress.update(g) for g in (0.2, float("nan"), 0.9, 0.2)] == [False, False, False, True]
    assert progress.best == [0.2, 0.2, 0.2, 0.2]


@pytest.mark.parametrize("labels", [[1, -1, 1, -1, 1, -1], [1, 1, -1, -1, 1, -1]])
def test_an_ill_conditioned_core_fit_stops_stalled_in_a_window_not_minutes(labels):
    """C = 1e12 on six points whose features are 1e-4 apart: the normalized RBF kernel is nearly
    constant (eigenvalues 5e-7 ... 4e7). The steps kept α moving and the gap at 1 - 1e-5 for the
    default 100,000 steps (two minutes); now the loop says it stalled, its answer certified."""
    X = np.array([[1.2573e-4], [-1.321e-4], [6.4042e-4], [1.049e-4], [-5.3567e-4], [3.616e-4]])
    y = np.array(labels, dtype=float)
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.5})], normalization="multiplicative")
    result = mklopt.fit(ks, y, "chunking", C=1e12)
    assert result.status == "stalled" and result.iterations == WINDOW + 1
    assert "fell by less than 0.1 % over the last 200 steps with SMO pair updates" in result.message
    assert result.dual <= result.primal and result.certificate.consistent()
