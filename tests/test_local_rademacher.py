"""Local Rademacher MKL (Cortes, Kloft, Mohri 2013): tail sums, conv, the DC subproblem and DCA."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
from sklearn.datasets import load_breast_cancer

import mklopt
import mklopt.kernels.spectra as spectra_mod
from mklopt.api import gap_tolerance
from mklopt.backends import capable_backends
from mklopt.exceptions import FormulationError, InvalidInputError, RankError, UncertifiedWarning
from mklopt.formulations import FORMULATIONS
from mklopt.formulations.dc_subproblem import tail_sum_linearization
from mklopt.kernels import tail_sum, top_eigenvalues
from mklopt.regularizers import ConstraintSet

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plot_local_rademacher.py"
SOCP_BACKENDS = capable_backends(FORMULATIONS["dc_subproblem"].cone)
THETAS = (1, 2, 4)


# ------------------------------------------------------------------ data
def _features(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(seed).choice(y.size, n, replace=False)
    X = X[idx]
    return (X - X.mean(axis=0)) / X.std(axis=0), y[idx]


def _kernel_set(n: int = 40) -> tuple[mklopt.KernelSet, np.ndarray]:
    """Five kernels of different spectral decay on feature groups of breast cancer."""
    X, y = _features(n)
    groups = {"mean": X[:, :10], "se": X[:, 10:20], "worst": X[:, 20:]}
    stack = [mklopt.kernel_stack(Z, [("rbf", {"gamma": 1.0 / Z.shape[1]})])[0] for Z in groups.values()]
    stack.append(X[:, 10:20] @ X[:, 10:20].T)  # rank 10
    stack.append((1.0 + X[:, :8] @ X[:, :8].T / 8) ** 2)
    return mklopt.KernelSet(np.stack(stack), names=[*groups, "linear_se", "poly2"]), y


@pytest.fixture(scope="module")
def problem() -> tuple[mklopt.KernelSet, np.ndarray, float]:
    ks, y = _kernel_set()
    return ks, y, float(ks.n)  # C = n: unit-diagonal scale for tail sums of order one


@pytest.fixture(scope="module")
def dca_runs(problem) -> dict:
    """Exact DCA and conv for each theta (shared by several tests)."""
    ks, y, C = problem
    runs = {}
    for theta in THETAS:
        dc = mklopt.fit(ks, y, "dca", theta=theta, inner="exact", C=C, tol=1e-6)
        with warnings.catch_warnings():  # qcqp_l1 may certify only ~1e-6 here; checked below
            warnings.simplefilter("ignore", UncertifiedWarning)
            conv = mklopt.solve(ks.normalized("tail_sum", theta=theta), y, "qcqp_l1", C=C)
        runs[theta] = (dc, conv)
    return runs


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(b))


def _rbf(n: int, gamma: float = 0.05) -> np.ndarray:
    X = np.random.default_rng(1).standard_normal((n, 6))
    return mklopt.kernel_stack(X, [("rbf", {"gamma": gamma})])[0]


# ------------------------------------------------------------ tail sums
@pytest.mark.parametrize("n, branch", [(60, "eigh"), (256, "eigsh")])
def test_tail_sum_matches_full_eigvalsh(n, branch, monkeypatch):
    K = _rbf(n)
    calls = []
    real = spectra_mod.eigsh
    monkeypatch.setattr(spectra_mod, "eigsh", lambda *a, **k: calls.append(1) or real(*a, **k))
    full = scipy.linalg.eigvalsh(K)  # ascending
    for theta in (0, 1, 2, 4, 8, 16):
        reference = float(np.sum(full[: n - theta]))
        assert abs(tail_sum(K, theta) - reference) <= 1e-10 * reference
    assert bool(calls) == (branch == "eigsh")


@pytest.mark.parametrize("n", [60, 256])
def test_top_eigenpairs_are_eigenpairs_and_reproducible(n):
    K = _rbf(n)
    vals, vecs = top_eigenvalues(K, 8, vectors=True)
    assert np.all(np.diff(vals) <= 0)
    np.testing.assert_allclose(K @ vecs, vecs * vals, atol=1e-10 * vals[0])
    np.testing.assert_array_equal(vals, top_eigenvalues(K, 8))


def test_linearization_is_a_tight_majorant(problem):
    """v matches a full eigendecomposition; g(mu) <= <v, mu> with equality at mu0."""
    ks, _, _ = problem
    rng = np.random.default_rng(3)
    for theta in (0, *THETAS):
        mu0 = rng.uniform(0.1, 1.0, ks.M)
        lin = tail_sum_linearization(ks, mu0, theta)
        vals, U = np.linalg.eigh(ks.combined(mu0))
        bottom = U[:, : ks.n - theta]
        v_ref = np.einsum("ij,mik,kj->m", bottom, ks.K, bottom)
        np.testing.assert_allclose(lin.v, v_ref, rtol=1e-10)
        assert _rel(lin.g, float(np.sum(vals[: ks.n - theta]))) <= 1e-10
        assert _rel(lin.g, float(lin.v @ mu0)) <= 1e-10
        np.testing.assert_allclose(tail_sum_linearization(ks, 5 * mu0, theta).v, lin.v, rtol=1e-10)
        for mu in rng.uniform(0, 1, (20, ks.M)):
            assert tail_sum_linearization(ks, mu, theta).g <= lin.v @ mu * (1 + 1e-12)
    np.testing.assert_allclose(tail_sum_linearization(ks, np.ones(ks.M), 0).v, ks.traces)


# ----------------------------------------------------------------- theta = 0
def test_theta0_dc_equals_conv_equals_trace_l1(problem):
    """theta = 0: v = Tr K for every mu0, so dc = conv = l1-MKL on trace-1 kernels (Prop. 4b)."""
    ks, y, C = problem
    l1 = mklopt.solve(ks.normalized("trace"), y, "qcqp_l1", C=C)
    conv = mklopt.solve(ks.normalized("tail_sum", theta=0), y, "qcqp_l1", C=C)
    sub = mklopt.solve(ks, y, "dc_subproblem", theta=0, C=C)
    dc = mklopt.fit(ks, y, "dca", theta=0, inner="exact", C=C, tol=1e-6)
    for res in (conv, sub, dc):
        assert res.status in ("optimal", "converged")
        assert _rel(res.primal, l1.primal) <= 1e-6
    np.testing.assert_allclose(dc.history[0]["v"], ks.traces)
    assert dc.iterations == 2 and dc.history[1]["weight_change"] <= 1e-6  # fixed point after one step
    # the DC solution, mapped to trace-1 kernels (mu~ = Tr K * mu), is optimal for l1-MKL there
    cert = mklopt.certify(ks.normalized("trace"), y, sub.weights * ks.traces, sub.alpha, C=C)
    assert _rel(cert.primal, l1.primal) <= 1e-6


@pytest.mark.parametrize("backend", SOCP_BACKENDS)
def test_theta0_every_backend_brackets_the_l1_value(problem, backend):
    """On every capable backend the certified interval [dual, primal] contains the l1 optimum."""
    ks, y, C = problem
    l1 = mklopt.solve(ks.normalized("trace"), y, "qcqp_l1", C=C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertifiedWarning)  # ECOS/SCS certify only to ~1e-6/1e-4
        sub = mklopt.solve(ks, y, "dc_subproblem", theta=0, C=C, backend=backend)
        dc = mklopt.fit(ks, y, "dca", theta=0, inner="exact", backend=backend, C=C, tol=1e-6)
    for res in (sub, dc):
        assert res.dual - l1.gap <= l1.primal <= res.primal + l1.gap
        assert res.rel_gap <= 1e-4  # an informative bracket (SCS's nominal accuracy)
    assert dc.backend == backend


# ------------------------------------------------------------------- DCA
@pytest.mark.parametrize("theta", THETAS)
def test_dca_iterates_feasible_and_monotone(problem, dca_runs, theta):
    ks, y, C = problem
    dc, _ = dca_runs[theta]
    assert dc.status == "converged" and dc.iterations >= 2
    mu0 = np.ones(ks.M) / tail_sum_linearization(ks, np.ones(ks.M), theta).g
    start = mklopt.solve(ks, y, "svm", C=C, weights=mu0)
    previous = start.primal + start.gap
    for record in dc.history:
        assert record["tail_sum"] <= 1 + 1e-8
        assert tail_sum_linearization(ks, record["weights"], theta).g <= 1 + 1e-8
        # J(mu^{k+1}) <= J(mu^k): each certified value is within its subproblem gap
        assert record["primal"] <= previous + record["subproblem_gap"]
        previous = record["primal"]
        assert record["subproblem_rel_gap"] <= gap_tolerance("CLARABEL", 1e-8)


@pytest.mark.parametrize("theta", THETAS)
def test_dc_optimum_at_least_conv_optimum(dca_runs, theta):
    """H1 is a subset of H2 (Prop. 4a): the DC value cannot beat conv's optimum."""
    dc, conv = dca_runs[theta]
    assert conv.rel_gap <= 1e-5  # conv.dual is a tight, valid lower bound on the H2 optimum
    assert dc.primal >= conv.dual


def test_dca_result_reports_no_global_certificate(dca_runs):
    dc, _ = dca_runs[2]
    assert "no global certificate" in dc.message
    assert dc.info["certified_globally"] is False
    assert mklopt.drivers.DRIVERS["dca"].certified is False
    for key in ("primal", "tail_sum", "subproblem_rel_gap", "weight_change", "objective_decrease"):
        assert key in dc.history[-1]
    last = dc.history[-1]
    assert last["weight_change"] <= 1e-6 and last["objective_decrease"] <= 1e-6 * abs(last["primal"])


def test_exact_and_wrapper_reach_the_same_fixed_point(problem, dca_runs):
    ks, y, C = problem
    exact, _ = dca_runs[2]
    wrap = mklopt.fit(ks, y, "dca", theta=2, inner="wrapper", svm="libsvm", C=C, tol=1e-5)
    assert wrap.backend == "wrapper/libsvm" and wrap.status == "converged"
    assert _rel(wrap.primal, exact.primal) <= 1e-4
    for record in wrap.history:
        assert record["tail_sum"] <= 1 + 1e-8
    default = mklopt.fit(ks, y, "dca", theta=2, C=C, max_iter=1)  # fit's inner="smo" = wrapper
    assert default.backend == "wrapper/smo" and default.status == "max_iter"


@pytest.mark.parametrize("backend", SOCP_BACKENDS)
def test_dc_subproblem_backends_agree(problem, backend):
    ks, y, C = problem
    mu0 = np.linspace(1.0, 2.0, ks.M)
    ref = mklopt.solve(ks, y, "dc_subproblem", theta=2, weights0=mu0, C=C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UncertifiedWarning)  # ECOS/SCS certify only to ~1e-6/1e-4
        res = mklopt.solve(ks, y, "dc_subproblem", theta=2, weights0=mu0, C=C, backend=backend)
    assert ref.status == "optimal" and res.info["theta"] == 2
    assert abs(res.primal - ref.primal) <= res.gap + ref.gap  # certified intervals overlap
    assert res.rel_gap <= 1e-4  # an informative bracket (SCS's nominal accuracy)
    v = tail_sum_linearization(ks, mu0, 2).v
    assert v @ res.weights <= 1 + 1e-12


# ------------------------------------------------------------------ conv
def test_conv_is_invariant_to_kernel_scaling(problem):
    ks, y, C = problem
    scaled = mklopt.KernelSet(ks.K * np.array([1.0, 7.3, 1.0, 0.01, 1.0])[:, None, None], ks.names)
    for theta in (0, 2):
        a, b = ks.normalized("tail_sum", theta=theta), scaled.normalized("tail_sum", theta=theta)
        np.testing.assert_allclose(b.K, a.K, rtol=1e-10, atol=1e-12 * np.abs(a.K).max())
    # The weights are determined only to about the solver's accuracy (1e-6 apart at a certified
    # 1e-7 on one machine, 3e-9 on another), so invariance is tested on what is certified: each
    # answer, certified on the other scaling's problem, has the same primal, dual and gap.
    ra = mklopt.solve(ks.normalized("tail_sum", theta=2), y, "qcqp_l1", C=C)
    rb = mklopt.solve(scaled.normalized("tail_sum", theta=2), y, "qcqp_l1", C=C)
    for own, other in ((ra, scaled), (rb, ks)):
        cross = mklopt.certify(other.normalized("tail_sum", theta=2), y, own.weights, own.alpha, C=C)
        assert own.status == "optimal" and cross.consistent()
        assert _rel(cross.primal, own.primal) <= 1e-9 and _rel(cross.dual, own.dual) <= 1e-9
    assert _rel(ra.primal, rb.primal) <= ra.rel_gap + rb.rel_gap
    # DC is scale-invariant too: mu_m K_m is unchanged
    da = mklopt.solve(ks, y, "dc_subproblem", theta=2, C=C)
    db = mklopt.solve(scaled, y, "dc_subproblem", theta=2, C=C,
                      weights0=1.0 / np.array([1.0, 7.3, 1.0, 0.01, 1.0]))
    assert _rel(db.primal, da.primal) <= 1e-6


def test_conv_lp_is_lp_mkl_on_tail_normalized_kernels(problem):
    """The paper's l2 version: ||mu~||_2 <= 1 on K_m/tau_m, i.e. ||tau * mu||_2 <= 1 on K_m."""
    ks, y, C = problem
    theta = 2
    conv = ks.normalized("tail_sum", theta=theta)
    tau = ks.tail_sums(theta)
    dual = mklopt.solve(conv, y, "lp_dual", p=2, C=C)
    raw = mklopt.solve(ks, y, "lp_primal", C=C,
                       regularizer=ConstraintSet(lambda mu: [mklopt_norm(tau, mu) <= 1], name="tau-l2"))
    wrapper = mklopt.fit(conv, y, "wrapper", p=2, C=C, tol=1e-6)
    assert dual.status == raw.status == "optimal"
    assert abs(dual.primal - raw.primal) <= dual.gap + raw.gap
    assert wrapper.dual - 1e-9 <= dual.primal and dual.dual <= wrapper.primal + 1e-9
    np.testing.assert_allclose(dual.weights / tau, raw.weights, rtol=1e-4, atol=1e-6 * raw.weights.max())


def mklopt_norm(tau: np.ndarray, mu):
    import cvxpy as cp
    return cp.norm(cp.multiply(tau, mu), 2)


# ----------------------------------------------------------------- errors
def test_rank_at_most_theta_raises_rank_error_naming_the_kernel(problem):
    ks, y, C = problem
    X, _ = _features(ks.n)
    low = np.concatenate([ks.K, (X[:, :2] @ X[:, :2].T)[None]])  # rank 2
    bad = mklopt.KernelSet(low, names=[*ks.names, "rank2"])
    with pytest.raises(RankError, match="rank2"):
        bad.normalized("tail_sum", theta=2)
    with pytest.raises(RankError, match="rank2"):
        mklopt.fit(bad, y, "dca", theta=2, inner="exact", C=C)
    with pytest.raises(RankError, match="theta"):
        mklopt.fit(ks, y, "dca", theta=ks.n, C=C)
    # a kernel inside the top eigenspace of K_mu0 is not bounded by Theta_v
    u = np.linalg.eigh(ks.K[0])[1][:, -1]
    spike = mklopt.KernelSet(np.stack([ks.K[0], 1e3 * np.outer(u, u)]), names=["rbf", "spike"])
    with pytest.raises(RankError, match="spike"):
        mklopt.solve(spike, y, "dc_subproblem", theta=1, C=C)


def test_bad_options_raise_actionable_errors(problem):
    ks, y, C = problem
    with pytest.raises(InvalidInputError, match="tail-sum"):
        mklopt.fit(ks, y, "dca", theta=2, p=2, C=C)
    with pytest.raises(InvalidInputError, match="unknown dca inner"):
        mklopt.fit(ks, y, "dca", theta=2, inner="simplex", C=C)
    with pytest.raises(InvalidInputError, match="svm="):
        mklopt.fit(ks, y, "dca", theta=2, inner="exact", svm="libsvm", C=C)
    with pytest.raises(InvalidInputError, match="theta"):
        mklopt.fit(ks, y, "dca", theta=-1, C=C)
    with pytest.raises(InvalidInputError, match="theta"):
        mklopt.fit(ks, y, "dca", theta=1.5, C=C)
    with pytest.raises(FormulationError, match="Theta_v"):
        mklopt.solve(ks, y, "dc_subproblem", theta=1, p=2, C=C)
    with pytest.raises(InvalidInputError, match="weights0"):
        mklopt.solve(ks, y, "dc_subproblem", theta=1, weights0=np.zeros(ks.M), C=C)


# ---------------------------------------------------------------- example
def test_example_smoke(tmp_path):
    spec = importlib.util.spec_from_file_location("plot_local_rademacher", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    report = example.main(small=True, out=tmp_path, verbose=False)
    assert report["figure"].is_file() and report["figure"].stat().st_size > 10_000
    assert list(report["datasets"]) == ["ionosphere"]  # real data, labelled by name
    data = report["datasets"]["ionosphere"]
    assert data["label"].startswith("ionosphere (351x34")
    assert set(data["methods"]) == {"unif", "l1", "l2", "conv", "dc"}
    for name, m in data["methods"].items():
        assert 0.5 < m["test_auc"] <= 1.0 and 0.5 < m["test_accuracy"] <= 1.0
        assert abs(m["trace_shares"].sum() - 1.0) <= 1e-9
    assert data["methods"]["conv"]["theta"] in example.THETAS
    assert data["methods"]["dc"]["theta"] in example.THETAS
