"""Interleaved optimization (issue 24): the compiled SMO core with θ-steps, on every kernel representation.

Every answer is checked against an independent reference: the exact
formulations (``lp_dual``/``qcqp_l1``/``lp_primal`` on the dense stack, Clarabel)
and the certified reference instances; its reported gap against
:func:`mklopt.certify` on the dense kernels.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import mklopt
from mklopt.drivers import _chunk_size as chunk_size, chunking
from mklopt.exceptions import FormulationError, InvalidInputError, KernelError, UncertifiedWarning
from mklopt.kernels import KernelSet, LazyKernelSet
from mklopt.testing import reference_instances

SPECS = [("rbf", {"gamma": 0.05}), ("rbf", {"gamma": 0.5}), ("rbf", {"gamma": 3.0}), "linear",
         ("poly", {"degree": 2, "gamma": 0.2, "coef0": 1.0})]
ENET = mklopt.ConstraintSet(lambda mu: [cp.norm1(mu) + cp.sum_squares(mu) <= 1], name="enet")


def _data(seed: int, n: int = 60, d: int = 4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.4 * rng.standard_normal(n) > 0.3, 1.0, -1.0)
    return X, y


def _factors(ks: KernelSet) -> KernelSet:
    """The same kernels as exact factors (eigendecomposition, clipped at 1e-12)."""
    factors = []
    for K in ks.K:
        vals, vecs = np.linalg.eigh(K)
        keep = vals > 1e-12 * vals[-1]
        factors.append(vecs[:, keep] * np.sqrt(vals[keep]))
    return KernelSet.from_factors(factors, ks.names)


def _representation(kind: str, X, specs, normalization=None):
    dense = KernelSet.from_data(X, specs, normalization=normalization)
    if kind == "dense":
        return dense, dense
    if kind == "factors":
        return _factors(dense), dense
    return KernelSet.from_data(X, specs, lazy=True, normalization=normalization), dense


def _exact(dense, y, p, C, regularizer=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertifiedWarning)
        if regularizer is not None:
            return mklopt.solve(dense, y, "lp_primal", regularizer=regularizer, C=C, tol=1e-9)
        return mklopt.solve(dense, y, "qcqp_l1" if p == 1 else "lp_dual", p=p, C=C, tol=1e-9)


def _assert_brackets(result, exact) -> None:
    """Both certified intervals [dual, primal] contain OPT, so they overlap (up to rounding)."""
    slack = 1e-9 * max(1.0, abs(exact.primal))
    assert result.dual <= exact.primal + slack
    assert exact.dual <= result.primal + slack


CASES = [(kind, p, seed) for seed in range(7) for kind, p in
         [("dense", 4 / 3), ("factors", 1.0), ("lazy", 2.0)]][:20]


@pytest.mark.parametrize("kind,p,seed", CASES)
def test_random_instances_reach_the_exact_optimum(kind, p, seed):
    X, y = _data(seed, n=40 + 5 * seed)
    kernels, dense = _representation(kind, X, SPECS, normalization="trace")
    C = [0.3, 1.0, 5.0][seed % 3]
    result = mklopt.fit(kernels, y, "chunking", p=p, C=C, tol=1e-6)
    assert result.status == "converged" and 0 <= result.rel_gap <= 1e-6
    _assert_brackets(result, _exact(dense, y, p, C))
    again = mklopt.certify(dense, y, result.weights, result.alpha, C=C, p=p)
    assert again.rel_gap == pytest.approx(result.rel_gap, rel=1e-6, abs=1e-12)
    assert again.certified(1e-6)


@pytest.mark.parametrize("name", ["l1_iris", "lp43_wine", "lp2_digits", "enet_wine"])
@pytest.mark.parametrize("kind", ["dense", "factors"])
def test_reference_instances(name, kind):
    inst = reference_instances([name])[0]
    kernels = inst.kernels if kind == "dense" else _factors(inst.kernels)
    result = mklopt.fit(kernels, inst.y, "chunking", C=inst.C, tol=1e-7, **inst.params)
    assert result.status == "converged"
    slack = 1e-9 * max(1.0, abs(inst.optimal_value))
    assert result.dual <= inst.optimal_value + slack
    assert inst.dual_value <= result.primal + slack
    assert result.history[-1]["pairs"] >= 1


@pytest.mark.parametrize("normalization", [None, "trace", "spherical", "multiplicative"])
def test_lazy_kernels_are_the_dense_kernels(normalization, monkeypatch):
    # entry sums (multiplicative) in blocks of 8 columns: 7 blocks, the last one short
    monkeypatch.setattr(mklopt.kernels.lazy, "_BLOCK_BYTES", 8 * 8 * 50)
    X, y = _data(3, n=50)
    lazy = KernelSet.from_data(X, SPECS, lazy=True, normalization=normalization)
    dense = KernelSet.from_data(X, SPECS, normalization=normalization)
    np.testing.assert_allclose(lazy.dense().K, dense.K, rtol=1e-12, atol=1e-14)
    coef = np.random.default_rng(1).standard_normal(50)
    s_lazy, Kc_lazy = lazy.products(coef)
    s_dense, Kc_dense = dense.products(coef)
    np.testing.assert_allclose(Kc_lazy, Kc_dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(s_lazy, s_dense, rtol=1e-12)
    np.testing.assert_allclose(lazy.diagonals(), np.einsum("mii->mi", dense.K), rtol=1e-14)
    result = mklopt.fit(lazy, y, "chunking", p=4 / 3, tol=1e-6)
    X_test = np.random.default_rng(2).standard_normal((7, X.shape[1]))
    test = dense.transform_test(mklopt.kernels.kernel_stack(X_test, SPECS, X)) \
        if normalization != "spherical" else lazy.test_kernels(X_test)
    expected = result.decision_function(test)
    got = lazy.decision_values(X_test, result.weights, result.dual_coef, result.bias)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_same_iterates_on_every_representation():
    """Dense and on-the-fly columns are the same numbers: the runs take the same steps."""
    X, y = _data(5, n=70)
    dense = KernelSet.from_data(X, SPECS[:3] + SPECS[4:])
    lazy = KernelSet.from_data(X, SPECS[:3] + SPECS[4:], lazy=True)
    a = mklopt.fit(dense, y, "chunking", p=2, tol=1e-6)
    b = mklopt.fit(lazy, y, "chunking", p=2, tol=1e-6)
    assert a.iterations == b.iterations
    assert [r["pairs"] for r in a.history] == [r["pairs"] for r in b.history]
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-9)


def test_user_weight_set_uses_its_own_argmin():
    X, y = _data(4, n=50)
    dense = KernelSet.from_data(X, SPECS, normalization="trace")
    result = mklopt.fit(dense, y, "chunking", regularizer=ENET, tol=1e-6)
    assert result.status == "converged"
    _assert_brackets(result, _exact(dense, y, None, 1.0, regularizer=ENET))


def test_l1_master_gives_lower_bounds():
    X, y = _data(6, n=60)
    dense = KernelSet.from_data(X, SPECS, normalization="trace")
    result = mklopt.fit(dense, y, "chunking", p=1, tol=1e-6)
    exact = _exact(dense, y, 1.0, 1.0)
    lower = [r["lower_bound"] for r in result.history]
    assert all(value <= exact.primal + 1e-9 * abs(exact.primal) for value in lower)
    assert np.count_nonzero(result.weights > 1e-8) < dense.M  # the simplex master selects kernels


def test_warm_start_along_a_path_takes_fewer_pairs():
    X, y = _data(2, n=80)
    dense = KernelSet.from_data(X, SPECS, normalization="trace")
    cold = mklopt.fit(dense, y, "chunking", p=4 / 3, C=1.1, tol=1e-6)
    warm = mklopt.path(dense, y, "chunking", Cs=[1.0, 1.1], p=4 / 3, tol=1e-6)[-1]
    assert warm.status == "converged"
    assert warm.info["smo_pairs"] < cold.info["smo_pairs"]
    assert warm.primal == pytest.approx(cold.primal, rel=2e-6)


def test_chunks_double_while_the_weights_stay_put(monkeypatch):
    """Fixed weights never move: each α-step gets twice the pairs of the last, and the
    certified answer is the one of Q pairs per step."""
    X, y = _data(3, n=200)
    dense = KernelSet.from_data(X, SPECS, normalization="trace")
    fixed = mklopt.regularizers.Fixed(np.full(dense.M, 1 / dense.M))
    doubled = mklopt.fit(dense, y, "chunking", regularizer=fixed, C=10, tol=1e-6, Q=10)
    pairs = [row["pairs"] for row in doubled.history]
    assert pairs[:3] == [10, 20, 40]
    monkeypatch.setattr(chunk_size, "MAX_CHUNK", 1)
    steady = mklopt.fit(dense, y, "chunking", regularizer=fixed, C=10, tol=1e-6, Q=10)
    assert max(row["pairs"] for row in steady.history) == 10
    assert doubled.status == steady.status == "converged"
    assert doubled.iterations < steady.iterations
    _assert_brackets(doubled, steady)


def test_a_chunk_after_weights_that_moved_has_Q_pairs():
    X, y = _data(6, n=120)
    dense = KernelSet.from_data(X, SPECS, normalization="trace")
    result = mklopt.fit(dense, y, "chunking", p=1, C=10, tol=1e-6, Q=15)
    rows = result.history
    moved = [np.abs(b["weights"] - a["weights"]).sum() > chunking.SETTLED * np.abs(a["weights"]).sum()
             for a, b in zip(rows, rows[1:])]
    assert any(moved) and not all(moved)
    assert all(b["pairs"] <= 15 for a, b, m in zip(rows, rows[1:], moved) if m)
    assert max(row["pairs"] for row in rows) > 15  # and some chunk after settled weights ran longer


def test_interrupt_returns_the_best_certified_pair():
    X, y = _data(1, n=60)
    dense = KernelSet.from_data(X, SPECS, normalization="trace")

    def stop(record):
        if record["iteration"] == 3:
            raise KeyboardInterrupt

    result = mklopt.fit(dense, y, "chunking", p=2, tol=1e-12, Q=5, callback=stop)
    assert result.status == "interrupted" and result.iterations == 3
    again = mklopt.certify(dense, y, result.weights, result.alpha, C=1.0, p=2)
    assert again.primal == pytest.approx(result.primal, rel=1e-9)
    assert again.dual == pytest.approx(result.dual, rel=1e-9)


@pytest.mark.parametrize("options,match", [
    ({"Q": 1}, "Q"), ({"Q": 2.5}, "Q"), ({"Q": True}, "Q"), ({"cache_mb": 0}, "cache_mb"),
    ({"cache_mb": -1.0}, "cache_mb"), ({"cache_mb": float("nan")}, "cache_mb"),
    ({"cache_mb": 1e-4}, "raise cache_mb")])
def test_bad_options_are_refused(options, match):
    X, y = _data(0, n=40)
    lazy = KernelSet.from_data(X, SPECS, lazy=True)
    with pytest.raises(InvalidInputError, match=match):
        mklopt.fit(lazy, y, "chunking", **options)


def test_bad_inputs_are_refused_and_nothing_is_mutated():
    X, y = _data(0, n=40)
    X_before, y_before = X.copy(), y.copy()
    lazy = KernelSet.from_data(X, SPECS, lazy=True)
    with pytest.raises(FormulationError, match="hinge"):
        mklopt.fit(lazy, X[:, 0], "chunking", loss="squared_error")
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match="NaN"):
        KernelSet.from_data(bad, SPECS, lazy=True)
    with pytest.raises(KernelError, match="on the fly"):
        KernelSet.from_data(X, ["sigmoid"], lazy=True)
    with pytest.raises(KernelError, match="spectrum.*dense"):
        KernelSet.from_data(X, SPECS, lazy=True, normalization="tail_sum")
    with pytest.raises(KernelError, match="chunking"):
        mklopt.fit(lazy, y, "wrapper")
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(y, y_before)
    assert isinstance(lazy, LazyKernelSet)


def test_fast_exponential_matches_libm():
    from numba import njit

    from mklopt._compiled.fastexp import exp_nonpositive

    @njit
    def apply(v):
        out = np.empty_like(v)
        for k in range(v.size):
            out[k] = exp_nonpositive(v[k])
        return out

    rng = np.random.default_rng(0)
    v = np.concatenate([-rng.random(200_000) * 745, -rng.random(10_000) * 1e-3,
                        [0.0, -5e-324, -0.5 * np.log(2), -708.4, -744.4, -745.2, -1e5]])
    got, want = apply(v), np.exp(v)
    normal = want > 1e-300
    assert np.max(np.abs(got[normal] - want[normal]) / want[normal]) <= 3e-16
    assert np.max(np.abs(got[~normal] - want[~normal])) <= 1e-300


def test_rbf_table_columns():
    from mklopt.drivers._core_memory import rbf_table_of as _table
    from mklopt._compiled.column_cache import new_cache
    from mklopt._compiled.columns import oracle_of
    from mklopt._compiled.kmu_columns import lazy_column
    from mklopt._compiled.rbf_table import NO_TABLE, fill_table

    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 6)) * 3
    specs = [("rbf", {"gamma": g}) for g in np.geomspace(1e-3, 30, 12)]
    lazy = KernelSet.from_data(X, specs, lazy=True)
    oracle = oracle_of(lazy)
    table = _table(oracle)
    mu = rng.random(12)
    fill_table(oracle, mu, table)
    dots = new_cache(300, 2)
    tabulated, exact = np.empty(300), np.empty(300)
    for i in (0, 17, 299):
        lazy_column(oracle, dots, table, mu, i, np.arange(300), tabulated, 1)
        lazy_column(oracle, dots, NO_TABLE, mu, i, np.arange(300), exact, 1)
        assert np.max(np.abs(tabulated - exact)) <= 1e-11 * mu.sum()
        assert tabulated[i] == pytest.approx(mu.sum(), rel=1e-15)


@pytest.mark.parametrize("count, ratio", [(12, 2.5), (60, 1.15)])
def test_gradient_updates_from_the_shared_basis_match_the_exact_kernels(count, ratio):
    """The per-kernel gradient update reads R basis functions, not the M kernels: with many
    close widths R < M, every kernel is still reproduced to ~1e-12 of the update's size."""
    from mklopt.drivers._core_memory import rbf_table_of as _table
    from mklopt._compiled.column_cache import new_cache
    from mklopt._compiled.columns import oracle_of
    from mklopt._compiled.gradient_updates import add_columns
    from mklopt._compiled.rbf_table import NO_KERNEL_TABLE, kernel_table

    rng = np.random.default_rng(5)
    n = 400
    X = rng.standard_normal((n, 5)) * 2
    specs = [("rbf", {"gamma": 3.0 * ratio ** -k}) for k in range(count)] + ["linear"]
    lazy = KernelSet.from_data(X, specs, lazy=True, normalization="trace")
    oracle = oracle_of(lazy)
    ktable = kernel_table(_table(oracle), oracle[8][:, 0], oracle[10])
    mix = ktable[5]
    R = int(np.count_nonzero(np.abs(mix).sum(axis=0)))
    assert mix.shape[1] % 8 == 0 and np.allclose(mix[:, :R].T @ mix[:, :R], np.eye(R))
    assert not mix[count:].any()  # the linear kernel is not tabulated: updated exactly
    if count == 60:
        assert R < count / 1.5  # close widths: far fewer basis functions than kernels
    index = rng.choice(n, 50, replace=False).astype(np.int64)
    delta = rng.standard_normal(50)
    shared, exact = np.zeros((lazy.M, n)), np.zeros((lazy.M, n))
    add_columns(oracle, new_cache(n, 4), index, delta, shared, ktable, 1)
    add_columns(oracle, new_cache(n, 4), index, delta, exact, NO_KERNEL_TABLE, 1)
    dense = np.einsum("mtk,k->mt", lazy.dense().K[:, :, index], delta)
    assert np.max(np.abs(exact - dense)) <= 1e-12 * np.abs(delta).sum()
    scale = np.abs(delta).sum() * np.abs(oracle[10]).max()
    assert np.max(np.abs(shared - exact)) <= 1e-11 * scale


def test_estimator_chunking_on_the_fly_matches_dense(monkeypatch):
    """MKLClassifier(driver="chunking") computes kernels on the fly above LAZY_STACK_BYTES."""
    from mklopt.estimators import _base

    X, y = _data(8, n=90)
    specs = SPECS[:3]
    dense = mklopt.MKLClassifier(kernels=specs, driver="chunking", p=4 / 3, tol=1e-6).fit(X, y)
    monkeypatch.setattr(_base, "LAZY_STACK_BYTES", 0)
    sums = []  # the default multiplicative normalization, on the fly: one pass for the entry sums
    original = LazyKernelSet.entry_sums
    monkeypatch.setattr(LazyKernelSet, "entry_sums", lambda self: sums.append(1) or original(self))
    lazy = mklopt.MKLClassifier(kernels=specs, driver="chunking", p=4 / 3, tol=1e-6).fit(X, y)
    assert lazy.normalization == "multiplicative" and sums == [1]
    assert lazy.result_.info["smo_pairs"] == dense.result_.info["smo_pairs"]
    np.testing.assert_allclose(lazy.weights_, dense.weights_, rtol=1e-8)
    X_test = np.random.default_rng(9).standard_normal((20, X.shape[1]))
    np.testing.assert_allclose(lazy.decision_function(X_test), dense.decision_function(X_test),
                               rtol=1e-8, atol=1e-10)


def test_auto_driver_uses_chunking_where_estimated_faster_and_for_factors(monkeypatch):
    from mklopt.estimators import cost

    X, y = _data(9, n=300)
    clf = mklopt.MKLClassifier(kernels=SPECS[:2], rank=20).fit(X, y)
    assert clf.driver_ == "chunking" and clf.result_.status == "converged"
    monkeypatch.setattr(cost, "STEP_SECONDS", 0.0)  # the core estimated faster at 300 points
    clf = mklopt.MKLClassifier(kernels=SPECS[:2]).fit(X, y)
    assert clf.driver_ == "chunking" and clf.result_.rel_gap <= 1e-4
    regressor = mklopt.MKLRegressor(kernels=SPECS[:2]).fit(X, X[:, 0])
    assert regressor.driver_ == "chunking" and regressor.result_.rel_gap <= 1e-4  # ε-SVR: in the core
    ridge = mklopt.MKLRegressor(kernels=SPECS[:2], loss="squared_error").fit(X, X[:, 0])
    assert ridge.driver_ in ("wrapper", "cutting_plane")  # the core has no squared error


def test_cli_solve_lazy(tmp_path, capsys):
    from mklopt import cli

    X, y = _data(10, n=80)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    code = cli.main(["solve", "--data", str(tmp_path / "d.npz"), "--driver", "chunking", "--lazy",
                     "--normalize", "trace", "--p", "4/3", "--tol", "1e-6",
                     "--param", "Q=20", "--param", "shrinking=false", "--out", str(tmp_path / "r.npz")])
    assert code == 0
    saved = mklopt.MKLResult.load(tmp_path / "r.npz")
    dense = KernelSet.from_data(X, mklopt.estimators.resolve_kernel_specs(None, X),
                                normalization="trace")
    again = mklopt.certify(dense, y, saved.weights, saved.alpha, p=4 / 3)
    assert again.certified(1e-6)
    assert cli.main(["solve", "--data", str(tmp_path / "d.npz"), "--lazy"]) == 2
    assert "--lazy" in capsys.readouterr().err
    assert cli.main(["solve", "--data", str(tmp_path / "d.npz"), "--driver", "chunking",
                     "--param", "shrinking=maybe"]) == 2
    assert "shrinking must be True or False" in capsys.readouterr().err


@parametrize_with_checks([mklopt.MKLClassifier(driver="chunking")])
def test_chunking_estimator_follows_scikit_learn(estimator, check):
    check(estimator)
