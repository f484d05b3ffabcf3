"""Voted Kernel Regularization: the LP, its certificate, coordinate descent, penalties, estimator.

Backend-dependent tests run on every installed LP-capable backend. A backend may
fail (``SolverError``) or be labelled "uncertified", but whenever mklopt says
"optimal" the value must be right.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

import mklopt
from mklopt import backends as bk
from mklopt.estimators.vkr import VKRClassifier
from mklopt.api import gap_tolerance
from mklopt.drivers.vkr_cd import exact_line_search
from mklopt.exceptions import InvalidInputError, KernelError, NotPSDError, SolverError
from mklopt.formulations.vkr_lp import vkr_certificate, vkr_lambda, vkr_objective, vkr_penalties

LP_BACKENDS = bk.capable_backends("LP")
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def scaled_breast_cancer(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` breast-cancer points, features in [-1, 1] / sqrt(30) (so ||x|| <= 1), labels +-1."""
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(seed).choice(len(y), size=n, replace=False)
    X = X[idx]
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (2 * (X - lo) / (hi - lo) - 1) / np.sqrt(X.shape[1]), np.where(y[idx] == 1, 1.0, -1.0)


def poly_stack(X: np.ndarray, degrees) -> np.ndarray:
    G = X @ X.T + 1.0
    return np.stack([G**d for d in degrees])


def solve_quiet(*args, **kwargs) -> mklopt.MKLResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return mklopt.solve(*args, **kwargs)


@pytest.fixture(scope="module")
def small_problem():
    X, y = scaled_breast_cancer(40)
    return poly_stack(X, (1, 2, 3)), y


# ----------------------------------------------------------------- the LP itself
def norm1_svm_value(K: np.ndarray, y: np.ndarray, beta: float) -> float:
    """Independent norm-1 SVM: min (1/m) sum_i (1 - y_i sum_k K_k[i] c_k)_+ + beta ||c||_1."""
    M, m, _ = K.shape
    c = cp.Variable((M, m))
    f = sum(K[k] @ c[k] for k in range(M))
    problem = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, f))) / m + beta * cp.sum(cp.abs(c))))
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert problem.status == "optimal"
    return float(problem.value)


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_lambda_zero_is_the_norm1_svm(small_problem, backend):
    K, y = small_problem
    reference = norm1_svm_value(K[:2], y, beta=1e-2)
    try:
        res = solve_quiet(K[:2], y, "vkr_lp", lam=0.0, beta=1e-2, backend=backend)
    except SolverError:
        assert backend not in ("HIGHS", "CLARABEL"), "the default LP backends must solve this"
        return
    assert res.dual <= reference + 1e-9 <= res.primal + 2e-9        # mklopt's bounds bracket it
    if res.status == "optimal":
        assert res.primal - reference <= gap_tolerance(backend, 1e-8, "LP") * max(1.0, reference)
    if backend == "HIGHS":
        assert res.status == "optimal" and abs(res.primal - reference) <= 1e-8


def test_lp_result_layout(small_problem):
    K, y = small_problem
    res = mklopt.solve(K, y, "vkr_lp", lam=1e-2, beta=1e-3)
    M, m = K.shape[:2]
    assert res.status == "optimal" and res.backend == "HIGHS" and res.bias == 0.0
    assert res.alpha.shape == (M, m) and res.dual_coef.shape == (M, m)
    np.testing.assert_allclose(res.weights, np.abs(res.alpha).sum(axis=1))
    margins = y * res.decision_function(K)              # f on the training points
    Lam = vkr_lambda(K, 1e-2, 1e-3)
    assert res.primal == pytest.approx(np.mean(np.maximum(0, 1 - margins)) + Lam @ res.weights, rel=1e-12)
    assert np.count_nonzero(res.alpha) <= np.sum(np.abs(margins - 1) <= 1e-7)   # vertex: |S| <= |E|


def test_certificate_brackets_the_optimum_for_any_alpha(small_problem):
    K, y = small_problem
    Lam = vkr_lambda(K, 1e-2, 1e-3)
    opt = mklopt.solve(K, y, "vkr_lp", lam=1e-2, beta=1e-3).primal
    rng = np.random.default_rng(3)
    for scale in (0.0, 1e-3, 1e-1):
        alpha = scale * rng.standard_normal(K.shape[:2]) * (rng.random(K.shape[:2]) < 0.2)
        cert = vkr_certificate(K, y, alpha, Lam, [rng.random(y.size)])
        assert cert.dual <= opt + 1e-12 <= cert.primal + 2e-12
        assert cert.primal == pytest.approx(vkr_objective(K, y, cert.alpha, Lam), rel=1e-12)
    zero = vkr_certificate(K, y, np.zeros(K.shape[:2]), Lam)
    assert zero.primal == 1.0


def test_non_psd_kernels_accepted_by_vkr_and_rejected_by_lp_dual():
    X, y = scaled_breast_cancer(30, seed=1)
    D = -np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))   # negative distance: indefinite
    assert np.linalg.eigvalsh(D)[0] < -1e-3
    asym = D + 0.05 * np.triu(np.abs(D))                            # not even symmetric
    res = mklopt.solve([D, asym], y, "vkr_lp", lam=1.0, beta=1e-2)
    assert res.status == "optimal" and res.primal < 1.0
    with pytest.raises(NotPSDError, match="vkr_lp"):
        mklopt.solve([D], y, "lp_dual")
    with pytest.raises(NotPSDError):                                # Lemma 3 needs K(x, x) >= 0
        mklopt.solve([D - np.eye(30)], y, "vkr_lp", penalty="trace")


# ------------------------------------------------ unnormalized polynomial kernels
@pytest.fixture(scope="module", params=[5, 6], ids=["degree<=5", "degree<=6"])
def unnormalized(request):
    """Standardized features, (x'x' + 1)^d up to ~1e15, and HiGHS' optimum of the same
    problem with each kernel and its Lambda_k divided by max|K_k| (an equivalent LP)."""
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(y), size=30, replace=False)
    K = poly_stack(StandardScaler().fit_transform(X[idx]), range(1, request.param + 1))
    Lam = vkr_lambda(K, 1e-3, 1e-4, "trace")
    s = np.abs(K).max(axis=(1, 2))
    ref = mklopt.solve(K / s[:, None, None], y[idx], "vkr_lp", lam=1.0, beta=0.0, penalty=Lam / s)
    assert ref.status == "optimal"
    return K, y[idx], Lam, ref.primal


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_unnormalized_polynomial_kernels_never_wrongly_optimal(unnormalized, backend):
    K, y, Lam, reference = unnormalized
    try:
        res = solve_quiet(K, y, "vkr_lp", lam=1.0, beta=0.0, penalty=Lam, backend=backend)
    except SolverError:
        return                                                       # failing loudly is fine
    assert res.dual <= reference * (1 + 1e-9) + 1e-12                # bounds are always valid
    assert res.primal >= reference * (1 - 1e-9) - 1e-12
    if res.status != "optimal":
        return
    assert res.rel_gap <= gap_tolerance(backend, 1e-8, "LP") <= 1e-6
    assert abs(res.primal - reference) <= 1e-6 * max(1.0, reference)


# ------------------------------------------------------------- coordinate descent
def test_exact_line_search_is_exact():
    rng = np.random.default_rng(0)
    grid = np.linspace(-30, 30, 60001)
    for trial in range(300):
        m = int(rng.integers(1, 9))
        z = rng.normal(1, 1, m)
        z[: m // 2] = 1.0 if trial % 2 else z[: m // 2]              # ties on the margin
        a = rng.normal(0, 1, m) * (rng.random(m) > 0.2)
        alpha_c, lam_c = rng.normal() * (rng.random() > 0.5), abs(rng.normal()) * (rng.random() > 0.2)

        def phi(eta, z=z, a=a, m=m, alpha_c=alpha_c, lam_c=lam_c):
            eta = np.atleast_1d(eta)
            return (np.maximum(0, 1 - z[None] - eta[:, None] * a[None]).sum(1) / m
                    + lam_c * np.abs(alpha_c + eta))

        eta = exact_line_search(z, a, alpha_c, lam_c)
        nz = a != 0
        candidates = np.concatenate([grid, (1 - z[nz]) / a[nz], [-alpha_c, 0.0]])
        assert phi(eta)[0] <= phi(candidates).min() + 1e-12
        if phi(0.0)[0] <= phi(candidates).min() + 1e-15:
            assert eta == 0.0                                        # no needless moves


@pytest.mark.parametrize("lam, beta, penalty", [(1e-2, 1e-3, "trace"), (0.0, 1e-3, "trace"),
                                                (1e-4, 1e-4, "polynomial"), (1.0, 1e-2, "local")])
def test_cd_matches_lp(lam, beta, penalty):
    X, y = scaled_breast_cancer(150, seed=2)
    K = poly_stack(X, (1, 2, 3, 4))
    params = {"lam": lam, "beta": beta, "penalty": penalty, "degrees": [1, 2, 3, 4], "n_features": 30, "r": 0.05}
    lp = mklopt.solve(K, y, "vkr_lp", **params)
    cd = mklopt.fit(K, y, "vkr_cd", tol=1e-7, **params)
    assert lp.status == "optimal" and cd.status == "converged" and cd.rel_gap <= 1e-7
    assert abs(cd.primal - lp.primal) <= 1e-4 * abs(lp.primal)
    assert cd.dual <= lp.primal + 1e-12 and cd.alpha.shape == lp.alpha.shape and cd.bias == 0.0
    assert len(cd.history) == cd.iterations < 50                     # one record per sweep
    assert {"nnz", "working_set", "sweep_objective"} <= set(cd.history[0])


def test_pure_coordinate_descent_is_monotone_and_honest():
    X, y = scaled_breast_cancer(200)
    K = poly_stack(X, range(1, 6))
    opt = mklopt.solve(K, y, "vkr_lp", lam=1e-2, beta=1e-3).primal
    res = mklopt.fit(K, y, "vkr_cd", lam=1e-2, beta=1e-3, corrective=False, tol=1e-6, max_iter=300)
    primal = [h["iterate_primal"] for h in res.history]
    assert all(b <= a + 1e-15 for a, b in itertools.pairwise(primal))
    assert res.dual <= opt + 1e-12 <= res.primal + 2e-12
    # Appendix C alone stops at a kink well above the optimum and says so
    assert res.status == "stalled" and res.primal > opt + 1e-2 and "corrective=True" in res.message


def test_cd_bad_options(small_problem):
    K, y = small_problem
    with pytest.raises(InvalidInputError):
        mklopt.fit(K, y, "vkr_cd", lam=-1.0)
    with pytest.raises(InvalidInputError):
        mklopt.fit(K, y, "vkr_cd", n_add=0)
    with pytest.raises(InvalidInputError):
        mklopt.fit(K, y, "vkr_cd", unknown_option=3)


# ------------------------------------------------------------------- penalties
def test_penalties_match_hand_computed_values():
    K = np.array([[[4.0, 1.0], [1.0, 9.0]], [[4.0, 0.0], [0.0, 1.0]]])
    # Lemma 3: kappa * sqrt(Tr K) / m = 3 * sqrt(13) / 2 and 2 * sqrt(5) / 2
    np.testing.assert_allclose(vkr_penalties(K, "trace"), [3 * math.sqrt(13) / 2, math.sqrt(5)])
    # Lemma 4: kappa^2 sqrt(binom(N + d, d)) with N = 2, d = (3, 1): 9 sqrt(10), 4 sqrt(3)
    np.testing.assert_allclose(vkr_penalties(K, "polynomial", degrees=[3, 1], n_features=2),
                               [9 * math.sqrt(10), 4 * math.sqrt(3)])
    # §5.3: sqrt(2/m sum_j min(r, lambda_j / m)); kernel 2 has eigenvalues 4, 1 -> 2, 0.5
    np.testing.assert_allclose(vkr_penalties(K[1:], "local", r=1.0), [math.sqrt(1.5)])
    np.testing.assert_allclose(vkr_penalties(K[1:], "local", r=0.25), [math.sqrt(0.5)])
    np.testing.assert_allclose(vkr_lambda(K, 2.0, 0.5, [1.0, 3.0]), [2.5, 6.5])


@pytest.mark.parametrize("kwargs, error", [
    ({"penalty": "nope"}, InvalidInputError),
    ({"penalty": [1.0]}, InvalidInputError),
    ({"penalty": [1.0, -1.0]}, InvalidInputError),
    ({"penalty": "polynomial"}, InvalidInputError),
    ({"penalty": "polynomial", "degrees": [1.5, 2], "n_features": 2}, InvalidInputError),
    ({"penalty": "local"}, InvalidInputError),
])
def test_penalty_errors(kwargs, error):
    K = np.array([[[4.0, 1.0], [1.0, 9.0]], [[4.0, 0.0], [0.0, 1.0]]])
    with pytest.raises(error):
        vkr_penalties(K, **kwargs)


def test_local_penalty_needs_symmetric_psd():
    with pytest.raises(KernelError):
        vkr_penalties(np.array([[1.0, 0.5], [0.0, 1.0]]), "local", r=1.0)
    with pytest.raises(NotPSDError):
        vkr_penalties(np.array([[0.0, 1.0], [1.0, 0.0]]), "local", r=1.0)


# ------------------------------------------------------------- Table 1 example
def test_table1_example_small_configuration(tmp_path, capsys):
    import sys

    spec = importlib.util.spec_from_file_location("vkr_table1", EXAMPLES / "vkr_table1.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look the module up there
    spec.loader.exec_module(module)
    out = module.main(small=True, out=tmp_path, datasets=("breastcancer",))
    rows = out["results"]["breastcancer"]
    assert set(rows) - {"_data"} == set(module.ALGORITHMS) and out["figure"].is_file()
    for alg in module.ALGORITHMS:
        assert 0.0 <= rows[alg]["error"][0] <= 50.0 and rows[alg]["sv"][0] >= 1
        assert rows[alg]["fits"] > 0
    assert set(module.PAPER) == {"breastcancer", "diabetes", "ionosphere", "german"}
    assert module.paper_row("breastcancer", out["config"]) is None  # a subsample: no paper numbers
    assert "digits49" not in module.PAPER  # the stand-in never sits beside the paper's numbers


# ------------------------------------------------------------------ estimator
@pytest.fixture(scope="module")
def split():
    X, y = scaled_breast_cancer(300, seed=4)
    labels = np.where(y > 0, "benign", "malignant")
    return X[:200], labels[:200], X[200:], labels[200:]


@pytest.mark.parametrize("solver", ["lp", "cd"])
def test_classifier_fit_predict(split, solver):
    Xtr, ytr, Xte, yte = split
    specs = [("poly", {"degree": d, "gamma": 1, "coef0": 1}) for d in (1, 2, 3)]
    clf = VKRClassifier(kernels=specs, lam=1e-2, beta=1e-3, solver=solver).fit(Xtr, ytr)
    assert set(clf.predict(Xte)) <= {"benign", "malignant"} and clf.score(Xte, yte) > 0.9
    assert 1 <= clf.n_support_points_ <= clf.n_nonzero_ and clf.dual_coef_.shape == (3, clf.n_support_points_)
    K_test = mklopt.kernel_stack(Xte, specs, Xtr)
    np.testing.assert_allclose(clf.decision_function(Xte), clf.result_.decision_function(K_test), atol=1e-10)
    np.testing.assert_allclose(clf.penalties_, vkr_penalties(mklopt.kernel_stack(Xtr, specs), "trace"))


def test_classifier_polynomial_penalty_and_grid_search(split):
    Xtr, ytr, _, _ = split
    clf = VKRClassifier(penalty="polynomial", lam=1e-6, beta=1e-3).fit(Xtr, ytr)
    kappa2 = np.array([2.0**d for d in (1, 2, 3, 4)])               # ||x|| <= 1: K(x, x) <= 2^d
    assert np.all(clf.penalties_ <= kappa2 * np.sqrt([math.comb(30 + d, d) for d in (1, 2, 3, 4)]) + 1e-9)
    Xstd = StandardScaler().fit_transform(Xtr)                      # default kernels: gamma = 1/N
    search = GridSearchCV(VKRClassifier(solver="cd"), {"beta": [1e-3, 1e-2]}, cv=2).fit(Xstd, ytr)
    assert search.best_score_ > 0.85


@pytest.mark.parametrize("change, error", [
    ({"y": np.arange(20) % 3}, InvalidInputError),
    ({"X_nan": True}, InvalidInputError),
    ({"params": {"solver": "simplex"}}, InvalidInputError),
    ({"params": {"lam": -1.0}}, InvalidInputError),
    ({"params": {"penalty": "polynomial", "kernels": [("rbf", {"gamma": 1.0})]}}, InvalidInputError),
    ({"params": {"kernels": []}}, InvalidInputError),
])
def test_classifier_bad_input(change, error):
    X, y = scaled_breast_cancer(20, seed=5)
    y = change.get("y", y)
    if change.get("X_nan"):
        X = X.copy()
        X[0, 0] = np.nan
    with pytest.raises(error):
        VKRClassifier(**change.get("params", {})).fit(X, y)


def test_classifier_predict_errors(split):
    Xtr, ytr, Xte, _ = split
    with pytest.raises(NotFittedError):
        VKRClassifier().predict(Xte)
    clf = VKRClassifier(solver="cd").fit(Xtr, ytr)
    with pytest.raises(InvalidInputError, match="features"):
        clf.predict(Xte[:, :5])
