"""The interleaved core's working memory: one per-kernel table per kernel set, update memory
allocated once per solver (mklopt.drivers._core_memory, mklopt._compiled.columns)."""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.drivers import _core_memory
from mklopt.drivers.chunking import Chunking
from mklopt.formulations import MKLData
from mklopt.regularizers import as_regularizer
from mklopt.kernels import KernelSet
from mklopt._compiled.column_cache import new_cache
from mklopt._compiled.columns import oracle_of
from mklopt._compiled.gradient_updates import add_columns, add_columns_into, update_scratch
from mklopt._compiled.rbf_table import NO_KERNEL_TABLE, kernel_table


def _lazy(n: int = 160, widths: int = 12, linear: bool = False, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    specs = [("rbf", {"gamma": 2.0 * 1.2 ** -k}) for k in range(widths)] + (["linear"] if linear else [])
    return X, KernelSet.from_data(X, specs, lazy=True, normalization="trace")


def _solver(kernels, y) -> Chunking:
    return Chunking(MKLData(kernels, y, 1.0, as_regularizer(None, p=4 / 3)), tol=1e-3)


def test_solvers_on_one_kernel_set_share_its_per_kernel_table():
    X, kernels = _lazy()
    first = _solver(kernels, np.where(X[:, 0] > 0, 1.0, -1.0))
    second = _solver(kernels, np.where(X[:, 1] > 0, 1.0, -1.0))
    assert second.ktable is first.ktable  # one copy for every class of a one-vs-rest fit
    oracle = oracle_of(kernels)
    fresh = kernel_table(_core_memory.rbf_table_of(oracle), oracle[8][:, 0], oracle[10])
    for shared, built in zip(first.ktable, fresh):
        assert np.array_equal(shared, built)
    other = _solver(kernels[:-1], np.where(X[:, 0] > 0, 1.0, -1.0))  # other kernels: a table of their own
    assert other.ktable is not first.ktable and other.ktable[5].shape[0] == kernels.M - 1


def test_a_one_vs_rest_fit_on_the_fly_builds_the_per_kernel_table_once(monkeypatch):
    from mklopt.estimators import _base

    monkeypatch.setattr(_base, "LAZY_STACK_BYTES", 1)  # on the fly at this size
    builds = []

    def counted(*args):
        builds.append(1)
        return kernel_table(*args)

    monkeypatch.setattr(_core_memory, "kernel_table", counted)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 3))
    y = np.argmax(X, axis=1)  # three classes
    model = mklopt.MKLClassifier(kernels=[("rbf", {"gamma": g}) for g in (0.3, 0.6, 1.2)], normalization=None,
                                 driver="chunking", tol=1e-3, multiclass="ovr").fit(X, y)
    assert len(builds) == 1  # on the fly (a dense stack builds none), once for the three classes
    assert all(result.status == "converged" and result.certificate.certified(1e-3) for result in model.result_)


@pytest.mark.parametrize("representation", ["lazy", "dense"])
def test_gradient_updates_in_reused_memory_equal_fresh_ones(representation):
    """add_columns_into re-zeroes its reused memory: every update equals add_columns' own,
    bitwise, whatever the previous update left there (blocks of 64 changed points and a
    kernel that is updated exactly); on a dense stack it is add_columns."""
    _, kernels = _lazy(n=300, linear=True)
    kernels = kernels if representation == "lazy" else kernels.dense()
    oracle = oracle_of(kernels)
    table = _core_memory.rbf_table_of(oracle)
    ktable = kernel_table(table, oracle[8][:, 0], oracle[10]) if table[2].size else NO_KERNEL_TABLE
    scratch = update_scratch(oracle, ktable)
    rng = np.random.default_rng(1)
    reused, fresh = np.zeros((kernels.M, kernels.n)), np.zeros((kernels.M, kernels.n))
    for size in (10, 150, 1, 64):
        index = np.sort(rng.choice(kernels.n, size, replace=False)).astype(np.int64)
        delta = rng.standard_normal(size)
        add_columns_into(oracle, new_cache(kernels.n, 4), index, delta, reused, ktable, scratch, 1)
        add_columns(oracle, new_cache(kernels.n, 4), index, delta, fresh, ktable, 1)
        assert np.array_equal(reused, fresh)


def test_a_column_cache_fills_its_empty_slots_in_order_then_evicts_the_least_recently_used():
    from mklopt._compiled.column_cache import cached_slot, reset_cache

    cache = new_cache(10, 3)
    assert [cached_slot(cache, i) for i in (4, 7, 4, 2)] == [(0, False), (1, False), (0, True), (2, False)]
    assert cached_slot(cache, 9) == (1, False)  # full: 7 was used least recently
    assert cached_slot(cache, 7) == (0, False)  # then 4
    reset_cache(cache)  # the weights changed: every column forgotten, the slots filled afresh
    assert [cached_slot(cache, i) for i in (9, 4)] == [(0, False), (1, False)]
    assert list(cache[4][1:3]) == [1, 7]  # hits and misses counted across the reset


def test_stack_columns_get_a_slot_per_point_within_the_memory_budget():
    _, lazy = _lazy(n=200)
    dense = lazy.dense()
    assert _core_memory.column_caches(dense, 256.0, 0, 100)[1][0].shape == (200, 200)
    assert _core_memory.column_caches(dense, 0.05, 0, 100)[1][0].shape == (32, 200)  # 50 kB: 32 columns
    assert _core_memory.column_caches(lazy, 256.0, 1, 100)[1][0].shape == (202, 200)  # on the fly: 2Q + 2


def _digits_class(n: int = 500):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = (X[:n] - X[:n].mean(axis=0)) / (X[:n].std(axis=0) + 1e-12)
    specs = ["linear", ("rbf", {"gamma": 1 / 64}), ("rbf", {"gamma": 10 / 64})]
    return KernelSet.from_data(X, specs, normalization="multiplicative"), np.where(y[:n] == 8, 1.0, -1.0)


def test_columns_kept_at_settled_weights_give_the_answer_of_columns_made_afresh(monkeypatch):
    """The SVM's last chunks at weights the weight step left where they were reuse the cached
    K_mu columns (more hits, fewer misses); every column is the one a fresh cache would make, so
    the fit is the same bit for bit."""
    from mklopt._compiled.column_cache import reset_cache

    kernels, y = _digits_class()
    kept = mklopt.fit(kernels, y, "chunking", C=100.0, tol=1e-4)

    def afresh(self, mu, points):
        reset_cache(self.cache)

    monkeypatch.setattr(_core_memory.KeptColumns, "keep_for", afresh)
    fresh = mklopt.fit(kernels, y, "chunking", C=100.0, tol=1e-4)
    assert kept.status == fresh.status == "converged" and kept.certificate.certified(1e-4)
    assert np.array_equal(kept.alpha, fresh.alpha) and np.array_equal(kept.weights, fresh.weights)
    assert kept.history[-1]["cache_misses"] < fresh.history[-1]["cache_misses"]
    assert kept.history[-1]["cache_hits"] > fresh.history[-1]["cache_hits"]


def test_kept_columns_hold_only_where_every_column_has_entries():
    from mklopt._compiled.column_cache import cached_slot

    cache = new_cache(6, 6)
    kept = _core_memory.KeptColumns(cache, 6, 2)
    mu, points = np.array([0.5, 0.5]), np.arange(6)

    def cached() -> int:
        return int((cache[2] >= 0).sum())

    kept.keep_for(mu, points)
    cached_slot(cache, 0)
    kept.keep_for(mu, np.array([0, 1, 2]))  # fewer points: the column holds there
    assert cached() == 1
    cached_slot(cache, 1)  # made at points 0, 1, 2 only
    kept.keep_for(mu, np.array([0, 1, 3]))  # point 3: the first column has it, the second not
    assert cached() == 0
    cached_slot(cache, 1)
    kept.keep_for(mu.copy(), np.array([0, 1, 3]))  # the same weights, the same points
    assert cached() == 1
    kept.keep_for(np.array([0.4, 0.6]), np.array([0, 1]))  # other weights
    assert cached() == 0
