"""Issue 35, point 4: ``driver="auto"`` chooses by estimated cost (:mod:`mklopt.estimators.cost`).

The estimates are a model, so these tests check its shape against what it must
express (column reads against stack passes, cores, classes side by side, the
kernels with weight) and that the estimators take the model's choice; the model's
fit to measured times is printed by ``mklopt bench chunking`` (part 3), not timed here.
"""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.estimators import _base, cost
from mklopt.estimators.cost import choose_driver, core_seconds, outer_seconds

SPECS = [("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 1.0}), "linear"]


#: Measured on a 2-core AMD EPYC (letter, A-M vs N-Z, standardized; RBF widths; certified gap
#: 1e-4; milliseconds of mklopt.fit): (n, M, p, C, core, outer loop).
MEASURED = [(60, 5, 1.0, 1.0, 4.2, 5.0), (250, 5, 4 / 3, 100.0, 12.5, 26.7), (400, 5, 1.0, 1.0, 16.3, 34.8),
            (1000, 5, 4 / 3, 100.0, 95.5, 348.9), (2000, 5, 1.0, 1.0, 480.1, 1699.4),
            (250, 50, 4 / 3, 1.0, 67.4, 45.0), (250, 50, 1.0, 1.0, 30.8, 66.7), (600, 50, 1.0, 1.0, 108.9, 299.2),
            (1000, 50, 4 / 3, 1.0, 313.4, 682.5), (2000, 50, 4 / 3, 1.0, 719.5, 2437.8)]


@pytest.mark.parametrize("n, M, p, C, core, outer", MEASURED)
def test_the_estimates_name_the_faster_driver_of_these_measurements(n, M, p, C, core, outer):
    """Small problems with 50 kernels at p > 1 go to the wrapper, the rest to the core, as
    measured (the estimates themselves are not seconds of this machine)."""
    choice = choose_driver(n, M, polyhedral=p == 1.0, C=C, threads=2)
    assert choice.driver == ("chunking" if core <= outer else choice.outer_driver)
    assert choice.outer_driver == ("cutting_plane" if p == 1.0 else "wrapper")
    assert "estimated faster" in choice.reason


def test_more_cores_speed_the_stack_passes_not_one_problems_columns():
    few, many = dict(polyhedral=False, threads=2), dict(polyhedral=False, threads=16)
    assert core_seconds(2000, 50, **few) == core_seconds(2000, 50, **many)  # below PARALLEL_POINTS
    assert outer_seconds(2000, 50, **many) < outer_seconds(2000, 50, **few)
    assert choose_driver(1000, 50, **few).driver == "chunking"
    assert choose_driver(1000, 50, **many).driver == "wrapper"


def test_columns_read_the_weighted_kernels_only():
    """At p > 1 every kernel has weight and each column reads all M; ℓ1 reads a few."""
    assert core_seconds(3000, 50, polyhedral=False) > 5 * core_seconds(3000, 5, polyhedral=False)
    assert core_seconds(3000, 50, polyhedral=True) == pytest.approx(
        core_seconds(3000, 5, polyhedral=True))


def test_classes_side_by_side_make_the_core_cheaper_per_class():
    one = core_seconds(400, 5, polyhedral=True)
    assert core_seconds(400, 5, polyhedral=True, problems=10, threads=2) < 10 * one
    assert core_seconds(400, 5, polyhedral=True, problems=10, threads=1) == pytest.approx(10 * one)
    assert outer_seconds(400, 5, polyhedral=True, problems=10, threads=2) == pytest.approx(
        10 * outer_seconds(400, 5, polyhedral=True, threads=2))  # one class at a time


def test_kernels_on_the_fly_go_to_the_core_whatever_the_estimates():
    choice = choose_driver(100, 50, polyhedral=False, threads=64, stack_bytes_over=True)
    assert choice.driver == "chunking" and choice.outer_seconds < choice.core_seconds
    assert "on the fly" in choice.reason


def test_the_one_class_loss_costs_the_core_more_pairs_than_the_hinge():
    for n in (100, 1000):
        assert core_seconds(n, 5, polyhedral=True, loss="one_class") > core_seconds(n, 5, polyhedral=True)
        assert outer_seconds(n, 5, polyhedral=True, loss="one_class") == outer_seconds(n, 5, polyhedral=True)


@pytest.mark.parametrize("threads", [1, 2, 16])
def test_estimators_run_the_driver_the_estimates_choose(monkeypatch, threads):
    monkeypatch.setattr(_base, "machine_threads", lambda: threads)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 4))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(150) > 0, 1, -1)
    for p in (1.0, 4 / 3):
        clf = mklopt.MKLClassifier(kernels=SPECS, p=p, C=10.0).fit(X, y)
        expected = choose_driver(150, 3, polyhedral=p == 1.0, C=10.0, threads=threads)
        assert clf.driver_choice_ == expected and clf.driver_ == expected.driver
        assert clf.result_.status == "converged"
    stack = mklopt.KernelSet.from_data(X, SPECS).K
    pre = mklopt.MKLClassifier(kernels="precomputed", normalization=None).fit(list(stack), y)
    assert pre.driver_choice_ == choose_driver(150, 3, polyhedral=True, threads=threads)


def test_the_core_wins_where_its_estimate_is_lower(monkeypatch):
    """With the core's costs set to nothing, auto takes it for every loss it has."""
    monkeypatch.setattr(cost, "STEP_SECONDS", 0.0)
    monkeypatch.setattr(cost, "PAIR_ENTRY_SECONDS", 0.0)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 3))
    assert mklopt.MKLClassifier(kernels=SPECS).fit(X, X[:, 0] > 0).driver_ == "chunking"
    assert mklopt.MKLRegressor(kernels=SPECS).fit(X, X[:, 1]).driver_ == "chunking"
    assert mklopt.MKLOneClass(kernels=SPECS).fit(X).driver_ == "chunking"
    ridge = mklopt.MKLRegressor(kernels=SPECS, loss="squared_error").fit(X, X[:, 1])
    assert ridge.driver_ != "chunking" and ridge.driver_choice_ is None  # not the core's loss
    named = mklopt.MKLClassifier(kernels=SPECS, driver="wrapper").fit(X, X[:, 0] > 0)
    assert named.driver_ == "wrapper" and named.driver_choice_ is None
    factors = mklopt.MKLClassifier(kernels=SPECS, rank=10).fit(X, X[:, 0] > 0)
    assert factors.driver_ == "chunking" and factors.driver_choice_ is None


def test_the_documented_16_core_case_keeps_the_wrapper():
    """The one 16-core measurement the model leans on: letter, n = 8,000, 50 kernels, p = 4/3
    on a dense stack, the wrapper 14 s against chunking's 26 s; on 2 cores chunking."""
    assert choose_driver(8000, 50, polyhedral=False, threads=16).driver == "wrapper"
    assert choose_driver(8000, 50, polyhedral=False, threads=2).driver == "chunking"
