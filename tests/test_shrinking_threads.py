"""Shrinking and threads in the interleaved core (issue 35, points 2 and 3).

Shrinking only chooses which variables a chunk's pairs may touch; the answer is
certified either way, so with and without it the certified intervals must contain
the same optimum. The blocked (multi-thread) scans, columns and updates must give
the same numbers as one pass: the pair rule's ties are broken the same way and each
entry is computed by one thread, so a fit on 1 and on 2 threads is the same bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

import mklopt
from mklopt._compiled import smo as _smo, smo_select as _smo_select
from mklopt.drivers._core_memory import rbf_table_of as _table
from mklopt.kernels import KernelSet
from mklopt._compiled.column_cache import new_cache
from mklopt._compiled.columns import dot_column, oracle_of
from mklopt._compiled.gradient_updates import add_columns
from mklopt._compiled.kmu_columns import lazy_column, lazy_column_serial
from mklopt._compiled.rbf_table import NO_TABLE, fill_table, kernel_table
from mklopt.losses import as_loss

SPECS = [("rbf", {"gamma": 0.05}), ("rbf", {"gamma": 0.5}), ("rbf", {"gamma": 3.0}), "linear",
         ("poly", {"degree": 2, "gamma": 0.2, "coef0": 1.0})]
LOSSES = {"hinge": (1.0, {}), "epsilon_insensitive": (10.0, {"epsilon": 0.2}),
          "one_class": (1.0, {"nu": 0.3}), "ovr_hinge": (10.0, {})}


def _problem(loss_name: str, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    t = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(n)
    y = {"hinge": np.where(t > 0.4, 1.0, -1.0), "one_class": None,
         "ovr_hinge": np.digitize(t, [0.0, 0.8])}.get(loss_name, t)
    return X, y


@pytest.mark.parametrize("kind", ["dense", "lazy"])
@pytest.mark.parametrize("loss_name", sorted(LOSSES))
def test_with_and_without_shrinking_the_same_optimum_is_certified(loss_name, kind):
    X, y = _problem(loss_name, 150)
    kernels = KernelSet.from_data(X, SPECS, lazy=kind == "lazy", normalization="trace")
    C, params = LOSSES[loss_name]
    loss = as_loss(loss_name, **params)
    active = []
    results = [mklopt.fit(kernels, y, "chunking", loss=loss, p=4 / 3, C=C, tol=1e-6, shrinking=shrinking,
                          callback=lambda record: active.append(record["active"]) if shrinking else None)
               for shrinking in (False, True)]
    for result in results:
        assert result.status == "converged" and 0 <= result.rel_gap <= 1e-6
    plain, shrunk = results
    slack = 1e-9 * max(1.0, abs(plain.primal))
    assert shrunk.dual <= plain.primal + slack and plain.dual <= shrunk.primal + slack
    variables = len(np.ravel(shrunk.alpha)) * (2 if loss_name == "epsilon_insensitive" else 1)
    assert min(active) < variables  # it did set variables aside
    dense = kernels.dense() if kind == "lazy" else kernels
    again = mklopt.certify(dense, y, shrunk.weights, shrunk.alpha, C=C, p=4 / 3, loss=loss)
    assert again.certified(1e-6)


def test_shrinking_must_be_a_boolean():
    X, y = _problem("hinge", 40)
    kernels = KernelSet.from_data(X, SPECS[:2])
    with pytest.raises(mklopt.InvalidInputError, match="shrinking must be True or False"):
        mklopt.fit(kernels, y, "chunking", shrinking=1)


def test_shrink_sets_aside_exactly_the_bound_variables_that_cannot_pair():
    # hinge form: s = y, base = y (p = -1), u = C = 1; F_t = y_t - ghat_t
    signs = np.array([1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 1.0])
    beta = np.array([0.0, 0.0, 0.0, 1.0, 0.5, 0.5, 1.0])
    ghat = np.array([1.9, -0.5, -2.5, 0.0, 0.0, 0.0, -3.0])
    rows, upper = np.arange(7), np.ones(7)
    state, active, marks = np.empty(7, dtype=np.int8), np.empty(7, dtype=np.int64), np.zeros(7, dtype=np.bool_)
    k, violation = _smo.shrink(rows, signs, signs, upper, beta, ghat, state, active, marks, True)
    F = signs - ghat
    rise = np.array([1, 1, 0, 1, 1, 1, 0], dtype=bool)  # y=+1 below C, y=-1 above 0
    fall = np.array([0, 0, 1, 0, 1, 1, 1], dtype=bool)
    high, low = F[rise].max(), F[fall].min()
    assert violation == high - low
    assert np.array_equal(state, rise * _smo_select.RISE + fall * _smo_select.FALL)
    keep = (rise & fall) | (rise & ~fall & (F >= low)) | (fall & ~rise & (F <= high))
    assert not keep.all() and keep.any()
    assert np.array_equal(active[:k], np.flatnonzero(keep)) and np.array_equal(marks, keep)
    k_all, _ = _smo.shrink(rows, signs, signs, upper, beta, ghat, state, active, marks, False)
    assert k_all == 7 and np.array_equal(active, np.arange(7))


@pytest.mark.parametrize("blocks", [2, 3, 7])
def test_blocked_scans_pick_the_pair_one_pass_picks(blocks):
    rng = np.random.default_rng(blocks)
    n = 5000
    rows, base = np.arange(n), np.round(rng.standard_normal(n), 1)  # many ties in F
    ghat = np.round(rng.standard_normal(n), 1)
    state = rng.integers(0, 4, n).astype(np.int8)
    active = np.sort(rng.choice(n, 3000, replace=False))
    one = _smo_select._first_range(state, rows, base, ghat, active, 0, active.size)
    assert _smo_select._first_blocks(state, rows, base, ghat, active, blocks) == one
    Ki, dmu = rng.random(n), 1.0 + rng.random(n)
    high, ri = one[1], rows[one[0]]
    j = _smo_select._second_range(state, rows, base, ghat, high, Ki, ri, dmu, 1e-12, active, 0, active.size)[0]
    assert _smo_select._second_blocks(state, rows, base, ghat, high, Ki, ri, dmu, 1e-12, active, blocks) == j


def _lazy(n: int, specs, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5)) * 2.0 + 30.0  # far from the origin: the centring matters
    return KernelSet.from_data(X, specs, lazy=True), X


@pytest.mark.parametrize("tabulated", [True, False])
def test_columns_at_points_in_blocks_are_the_columns_of_one_pass(tabulated):
    n = 3000  # points x kernels above the parallel threshold
    kernels, X = _lazy(n, SPECS + [("rbf", {"gamma": g}) for g in (0.01, 0.2, 1.0)])
    oracle = oracle_of(kernels)
    table = _table(oracle) if tabulated else NO_TABLE
    mu = np.random.default_rng(1).random(kernels.M)
    if tabulated:
        fill_table(oracle, mu, table)
    dots, everywhere = new_cache(n, 4), np.arange(n)
    exact = kernels.dense().combined(mu)
    points = np.sort(np.random.default_rng(2).choice(n, 1200, replace=False))
    for i in (0, 1234, n - 1):
        one, blocked = np.empty(n), np.empty(n)
        serial = np.empty(n)
        lazy_column(oracle, dots, table, mu, i, everywhere, one, 1)
        lazy_column(oracle, dots, table, mu, i, everywhere, blocked, 3)
        lazy_column_serial(oracle, new_cache(n, 1), table, mu, i, everywhere, serial)
        assert np.array_equal(one, blocked)
        assert np.array_equal(one, serial)
        assert np.max(np.abs(one - exact[:, i])) <= 1e-11 * mu.sum() * np.abs(exact).max()
        partial = np.full(n, np.nan)
        lazy_column(oracle, dots, table, mu, i, points, partial, 3)
        assert np.array_equal(partial[points], one[points])
        assert np.isnan(np.delete(partial, points)).all()  # nothing written outside the points


def test_product_columns_and_gradient_updates_in_blocks_equal_one_pass():
    n = 4000  # n x d above the parallel threshold of the products
    kernels, X = _lazy(n, [("rbf", {"gamma": g}) for g in (0.01, 0.1, 1.0)] + ["linear"])
    oracle = oracle_of(kernels)
    one, blocked = new_cache(n, 2), new_cache(n, 2)
    assert np.array_equal(dot_column(oracle, one, 17, 1), dot_column(oracle, blocked, 17, 4))
    table = _table(oracle)
    ktable = kernel_table(table, oracle[8][:, 0], oracle[10])
    index = np.array([3, 500, 2999, 3999], dtype=np.int64)
    delta = np.array([0.5, -1.0, 0.25, 2.0])
    G1, G3 = np.zeros((kernels.M, n)), np.zeros((kernels.M, n))
    add_columns(oracle, new_cache(n, 8), index, delta, G1, ktable, 1)
    add_columns(oracle, new_cache(n, 8), index, delta, G3, ktable, 3)
    assert np.array_equal(G1, G3)
    exact = np.einsum("mtk,k->mt", kernels.dense().K[:, :, index], delta)
    assert np.max(np.abs(G1 - exact)) <= 1e-10 * np.abs(exact).max()


def test_a_fit_on_one_and_on_two_threads_is_the_same():
    X, y = _problem("hinge", 400, seed=3)
    kernels = KernelSet.from_data(X, SPECS, lazy=True, normalization="trace")
    before = numba.get_num_threads()
    results = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            results.append(mklopt.fit(kernels, y, "chunking", p=4 / 3, C=1.0, tol=1e-6))
    finally:
        numba.set_num_threads(before)
    one, two = results
    assert one.iterations == two.iterations
    assert np.array_equal(one.alpha, two.alpha) and np.array_equal(one.weights, two.weights)


@pytest.mark.parametrize("kind", ["dense", "factors", "lazy"])
@pytest.mark.parametrize("loss_name", ["hinge", "epsilon_insensitive"])
def test_the_threaded_and_the_serial_compiled_variants_give_the_same_fit(kind, loss_name):
    """Issue 57: a problem below the parallel thresholds runs the SMO chunk and the dense
    update compiled without parallel code (a first fit compiles less); forced onto the
    threaded variants (``split_small``, what ``mklopt compile`` uses) it gives the same
    numbers bit for bit, for each kind of kernel oracle."""
    from mklopt._compiled.splitting import split_small

    X, y = _problem(loss_name, 200, seed=5)
    options = {"dense": {}, "factors": {"rank": 30}, "lazy": {"lazy": True}}[kind]
    kernels = KernelSet.from_data(X, SPECS, normalization="trace", **options)
    C, params = LOSSES[loss_name]
    before = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        serial = mklopt.fit(kernels, y, "chunking", loss=as_loss(loss_name, **params), C=C, tol=1e-6)
        with split_small():
            threaded = mklopt.fit(kernels, y, "chunking", loss=as_loss(loss_name, **params), C=C, tol=1e-6)
    finally:
        numba.set_num_threads(before)
    assert serial.status == threaded.status == "converged"
    assert serial.iterations == threaded.iterations
    assert np.array_equal(serial.alpha, threaded.alpha) and np.array_equal(serial.weights, threaded.weights)


def test_a_small_problem_runs_the_serial_variant_and_a_large_one_the_threaded():
    from mklopt._compiled.splitting import split_small

    X, _ = _problem("hinge", 50)
    dense, lazy = (oracle_of(KernelSet.from_data(X, SPECS, lazy=flag)) for flag in (False, True))
    assert not _smo.uses_threads(dense, 50, 50, 5, blocks=2)
    assert _smo.uses_threads(dense, _smo.PARALLEL_SCAN, 50, 5, blocks=2)  # many variables
    assert not _smo.uses_threads(dense, _smo.PARALLEL_SCAN, 50, 5, blocks=1)  # one thread: never
    assert _smo.uses_threads(lazy, 50, 2000, 5, blocks=2)  # long columns on the fly
    with split_small():
        assert _smo.uses_threads(dense, 50, 50, 5, blocks=2)
