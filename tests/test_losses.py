"""Losses beyond the binary hinge (DESIGN §11): every formulation and driver against an
independent CVXPY optimum, estimators against libsvm, round trips, bad input, a user loss."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.datasets import load_diabetes, load_iris
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.svm import SVC, SVR, OneClassSVM

import mklopt
from mklopt import InvalidInputError, KernelSet
from mklopt.exceptions import FormulationError
from mklopt.backends import capable_backends
from mklopt.losses import DualPart, Loss, PrimalPart

NEW_LOSSES = {"epsilon_insensitive": {"epsilon": 0.1}, "squared_error": {},
              "one_class": {"nu": 0.3}, "ovr_hinge": {}}
SOCP_BACKENDS = capable_backends("SOCP")


def _kernels(X: np.ndarray) -> KernelSet:
    stack = np.stack([rbf_kernel(X, gamma=0.1), rbf_kernel(X, gamma=1.0),
                      polynomial_kernel(X, degree=2, coef0=1.0), linear_kernel(X)])
    return KernelSet(stack).normalized("trace")


def _regression():
    X, y = load_diabetes(return_X_y=True)
    idx = np.random.default_rng(0).choice(y.size, 80, replace=False)
    X, y = X[idx], y[idx]
    return X / X.std(axis=0), (y - y.mean()) / y.std()


def _multiclass():
    X, y = load_iris(return_X_y=True)
    idx = np.random.default_rng(1).choice(y.size, 80, replace=False)
    return X[idx], y[idx]


@pytest.fixture(scope="module")
def problems():
    Xr, yr = _regression()
    Xc, yc = _multiclass()
    return {"epsilon_insensitive": (_kernels(Xr), yr), "squared_error": (_kernels(Xr), yr),
            "one_class": (_kernels(Xc), None), "ovr_hinge": (_kernels(Xc), yc)}


def reference_optimum(ks: KernelSet, y, loss: str, p: float, C: float = 1.0, **params) -> float:
    """The MKL dual written out here from DESIGN §11 (not mklopt's code), solved tightly."""
    factors = []
    for K in ks.K:
        lam, U = np.linalg.eigh(K)
        keep = lam > 1e-12 * lam.max()
        factors.append(U[:, keep] * np.sqrt(lam[keep]))
    n = ks.n
    if loss == "ovr_hinge":
        classes = np.unique(y)
        Y = np.where(y[None, :] == classes[:, None], 1.0, -1.0)
        a = cp.Variable(Y.shape)
        coef = cp.multiply(Y, a)
        gain, cons = cp.sum(a), [a >= 0, a <= C, cp.sum(coef, axis=1) == 0]
        s = [cp.sum_squares(L.T @ coef.T) for L in factors]
    else:
        a = cp.Variable(n)
        if loss == "epsilon_insensitive":
            gain = y @ a - params["epsilon"] * cp.norm1(a)
            cons = [cp.abs(a) <= C, cp.sum(a) == 0]
        elif loss == "squared_error":
            gain, cons = y @ a - cp.sum_squares(a) / (2 * C), [cp.sum(a) == 0]
        else:  # one_class
            gain = cp.Constant(0.0)
            cons = [a >= 0, a <= 1 / (params["nu"] * n), cp.sum(a) == 1]
        s = [cp.sum_squares(L.T @ a) for L in factors]
    penalty = cp.max(cp.hstack(s)) if p == 1 else cp.norm(cp.hstack(s), p / (p - 1))
    problem = cp.Problem(cp.Maximize(gain - 0.5 * penalty), cons)
    # Gap 1e-9; feasibility 1e-8: Clarabel 0.11 reports 'optimal_inaccurate' at tol_feas 1e-9 on
    # the one-class instance with the very same value (to 16 digits) it reports 'optimal' at 1e-8.
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-8)
    assert problem.status == "optimal"
    return float(problem.value)


def _assert_brackets(result, optimum: float, rtol: float = 1e-4) -> None:
    scale = max(abs(optimum), 1e-12)
    assert abs(result.primal - optimum) <= rtol * scale
    slack = 1e-7 * scale  # the reference's own accuracy
    assert result.dual <= optimum + slack <= result.primal + 2 * slack


@pytest.mark.parametrize("p", [1.0, 2.0])
@pytest.mark.parametrize("loss", sorted(NEW_LOSSES))
def test_exact_formulations_and_drivers_reach_the_independent_optimum(problems, loss, p):
    ks, y = problems[loss]
    params = NEW_LOSSES[loss]
    optimum = reference_optimum(ks, y, loss, p, **params)
    for backend in SOCP_BACKENDS:
        result = mklopt.solve(ks, y, "lp_primal", p=p, loss=loss, backend=backend, **params)
        assert result.status == "optimal", (backend, result.message)
        _assert_brackets(result, optimum)
    for formulation in ("lp_dual", "qcqp_l1" if p == 1 else "svm"):
        if formulation == "svm":
            continue  # a fixed combination: not the MKL optimum
        _assert_brackets(mklopt.solve(ks, y, formulation, p=p, loss=loss, **params), optimum)
    driver = "cutting_plane" if p == 1 else "wrapper"
    result = mklopt.fit(ks, y, driver, p=p, loss=loss, tol=1e-5, **params)
    assert result.status == "converged" and result.rel_gap <= 1e-5
    assert result.loss == loss
    _assert_brackets(result, optimum)


@pytest.mark.parametrize("loss", sorted(NEW_LOSSES))
def test_saved_results_recertify_with_their_loss(problems, loss, tmp_path):
    ks, y = problems[loss]
    result = mklopt.fit(ks, y, "wrapper", p=2.0, loss=loss, tol=1e-5, **NEW_LOSSES[loss])
    path = tmp_path / "result.npz"
    result.save(path)
    loaded = mklopt.MKLResult.load(path)
    assert loaded.loss == loss and loaded.loss_params == result.loss_params
    np.testing.assert_array_equal(np.asarray(loaded.bias), np.asarray(result.bias))
    again = mklopt.certificates.recertify.certify_result(ks, y, loaded)
    assert again.primal == pytest.approx(result.primal, rel=1e-12)
    assert again.rel_gap == pytest.approx(result.rel_gap, rel=1e-6, abs=1e-14)
    # predictions of the loaded result on the training kernels agree with the original
    np.testing.assert_allclose(loaded.decision_function(ks.K), result.decision_function(ks.K))


def test_one_class_and_ovr_decision_values_match_the_certificate(problems):
    ks, _ = problems["one_class"]
    res = mklopt.fit(ks, None, "wrapper", p=2.0, loss="one_class", nu=0.3, tol=1e-6)
    f = res.decision_function(ks.K)
    assert np.mean(f < -1e-9) <= 0.3 + 1e-9  # nu bounds the fraction of outliers
    assert set(np.unique(res.predict(ks.K))) <= {-1, 1}
    ks, y = problems["ovr_hinge"]
    res = mklopt.fit(ks, y, "wrapper", p=2.0, loss="ovr_hinge", tol=1e-6)
    assert res.alpha.shape == (3, ks.n) and np.shape(res.bias) == (3,)
    assert res.decision_function(ks.K).shape == (ks.n, 3)
    assert np.mean(res.predict(ks.K) == y) > 0.9


# ----------------------------------------------------------------- single kernel = libsvm
def _single(ks: KernelSet) -> np.ndarray:
    """One kernel, scaled to unit mean diagonal: free support vectors make the offset unique."""
    return ks.K[:1] * ks.n


def test_one_kernel_matches_libsvm(problems):
    """With one kernel the weight is 1: the MKL problems are libsvm's SVR, OneClassSVM, SVCs.

    Solved to tol 1e-10: the decision values move like the square root of the gap.
    """
    ks, y = problems["epsilon_insensitive"]
    K = _single(ks)
    res = mklopt.solve(K, y, "lp_dual", loss="epsilon_insensitive", epsilon=0.1, C=2.0,
                       tol=1e-10)
    svr = SVR(kernel="precomputed", C=2.0, epsilon=0.1, tol=1e-12).fit(K[0], y)
    np.testing.assert_allclose(res.decision_function(K), svr.predict(K[0]), atol=1e-5)
    ks, y = problems["ovr_hinge"]
    K = _single(ks)
    res = mklopt.solve(K, y, "lp_dual", loss="ovr_hinge", C=2.0, tol=1e-10)
    for t, c in enumerate(np.unique(y)):
        svc = SVC(kernel="precomputed", C=2.0, tol=1e-12).fit(K[0], np.where(y == c, 1, -1))
        np.testing.assert_allclose(res.decision_function(K)[:, t], svc.decision_function(K[0]), atol=1e-5)
    ks, _ = problems["one_class"]
    K = _single(ks)
    res = mklopt.solve(K, None, "lp_dual", loss="one_class", nu=0.3, tol=1e-10)
    ocs = OneClassSVM(kernel="precomputed", nu=0.3, tol=1e-12).fit(K[0])
    np.testing.assert_allclose(res.decision_function(K) * 0.3 * ks.n, ocs.decision_function(K[0]), atol=1e-5)


def test_squared_error_with_one_kernel_is_the_bordered_linear_system(problems):
    ks, y = problems["squared_error"]
    K, C = ks.K[0], 3.0
    n = ks.n
    system = np.block([[K + np.eye(n) / C, np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    solution = np.linalg.solve(system, np.append(y, 0.0))
    res = mklopt.solve(ks.K[:1], y, "lp_dual", loss="squared_error", C=C, tol=1e-10)
    assert res.status == "optimal"
    # The dual is (1/C)-strongly concave on {1'a = 0}: the certified gap bounds the distance
    # to the exact alpha, |a - a*|^2 <= 2 C (OPT - D(a)) <= 2 C gap, and b = mean(y - (K + I/C) a)
    # moves by at most |K + I/C|_2 |a - a*| / sqrt(n). (An absolute 1e-6 on alpha is not
    # implied by any certificate: Clarabel 0.11 gives 9e-6 at a certified rel_gap of 4e-12.)
    distance = np.sqrt(2 * C * res.gap)
    assert np.linalg.norm(res.alpha - solution[:n]) <= distance
    spread = (np.linalg.eigvalsh(K)[-1] + 1 / C) * distance / np.sqrt(n)
    assert abs(res.bias - solution[n]) <= spread
    inner = mklopt.fit(ks.K[:1], y, "wrapper", loss="squared_error", C=C, p=2.0)  # Cholesky + Schur
    np.testing.assert_allclose(inner.alpha, solution[:n], atol=1e-10)
    assert inner.bias == pytest.approx(solution[n], abs=1e-10)
    assert inner.rel_gap <= 1e-12


# -------------------------------------------------------------------------- user loss
class SquaredHinge(Loss):
    """:math:`\\tfrac12\\max(0, 1-yf)^2`; dual gain :math:`1^\\top\\alpha - \\|\\alpha\\|^2/(2C)`."""

    name = "squared_hinge"

    def check_labels(self, y, n):
        return mklopt._validation.check_labels(y, n)

    def coef(self, alpha, y):
        return y * alpha

    def project(self, alpha, y, C):
        from mklopt.losses._projection import project_box_hyperplane
        return project_box_hyperplane(alpha, y, 0.0, 0.0, np.inf)

    def gain(self, alpha, y, C):
        return float(np.sum(alpha) - alpha @ alpha / (2 * C))

    def dual_part(self, y, C):
        a = cp.Variable(y.size)
        return DualPart(a, cp.multiply(y, a), cp.sum(a) - cp.sum_squares(a) / (2 * C),
                        [a >= 0, y @ a == 0])

    def data_term(self, outputs, y, C):
        def value(b):
            return 0.5 * C * float(np.sum(np.maximum(0.0, 1 - y * (outputs + b)) ** 2))
        best = minimize_scalar(value, bracket=(-1.0, 1.0), tol=1e-12)
        return float(best.x), float(best.fun)

    def primal_part(self, outputs, y, C):
        b = cp.Variable()
        xi = cp.Variable(y.size)
        margin = cp.multiply(y, outputs + b) >= 1 - xi
        return PrimalPart(0.5 * C * cp.sum_squares(cp.pos(xi)), [margin],
                          lambda: np.asarray(margin.dual_value, dtype=float), lambda: float(b.value))


def test_a_user_loss_works_everywhere_without_driver_edits():
    X, y = load_iris(return_X_y=True)
    X, y = X[y > 0], y[y > 0]
    ks = _kernels(X)
    loss = SquaredHinge()
    exact = mklopt.solve(ks, y, "lp_primal", p=2.0, loss=loss)
    dual = mklopt.solve(ks, y, "lp_dual", p=2.0, loss=loss)
    assert exact.status == dual.status == "optimal"
    assert exact.primal == pytest.approx(dual.primal, rel=1e-6)
    looped = mklopt.fit(ks, y, "wrapper", p=2.0, loss=loss, tol=1e-5)  # CVXPY inner fallback
    assert looped.backend == "cvxpy" and looped.rel_gap <= 1e-5
    assert looped.dual <= exact.primal * (1 + 1e-7) and looped.primal >= exact.dual * (1 - 1e-7)
    cert = mklopt.certify(ks, y, looped.weights, looped.alpha, p=2.0, loss=loss)
    assert cert.rel_gap == pytest.approx(looped.rel_gap, rel=1e-6)


# ------------------------------------------------------------------------- bad input
BAD = [
    (dict(loss="logistic"), "unknown loss"),
    (dict(loss=3), "unknown loss"),
    (dict(loss="epsilon_insensitive", epsilon=-0.1), "epsilon must be"),
    (dict(loss="epsilon_insensitive", epsilon=float("nan")), "epsilon must be"),
    (dict(loss="one_class", nu=0.0), "nu must be"),
    (dict(loss="one_class", nu=1.5), "nu must be"),
    (dict(loss="hinge", epsilon=0.1), "takes no epsilon"),
    (dict(loss="squared_error", nu=0.5), "takes no nu"),
    (dict(loss="one_class", nu=0.5, C=10.0), "has no C"),
]


@pytest.mark.parametrize("kwargs,fragment", BAD)
def test_bad_loss_arguments_are_mklopt_errors(problems, kwargs, fragment):
    ks, y = problems["squared_error"]
    with pytest.raises(InvalidInputError, match=fragment) as info:
        mklopt.solve(ks, y, "lp_dual", **kwargs)
    assert "\n" not in str(info.value)


def test_labels_that_do_not_fit_the_loss(problems):
    ks, y = problems["squared_error"]
    with pytest.raises(InvalidInputError, match="regression targets"):
        mklopt.solve(ks, y, "lp_dual")  # continuous y with the hinge
    ks3, y3 = problems["ovr_hinge"]
    with pytest.raises(InvalidInputError, match="ovr_hinge"):
        mklopt.fit(ks3, y3, "wrapper", p=2.0)  # three classes with the hinge
    with pytest.raises(InvalidInputError, match="real numbers"):
        mklopt.solve(ks, np.array(["a", "b"] * 40), "lp_dual", loss="squared_error")
    with pytest.raises(InvalidInputError, match="NaN"):
        mklopt.solve(ks, np.where(np.arange(80) == 3, np.nan, y), "lp_dual", loss="squared_error")
    with pytest.raises(InvalidInputError, match="at least two classes"):
        mklopt.solve(ks3, np.zeros(80), "lp_dual", loss="ovr_hinge")


def test_formulations_and_drivers_written_for_the_hinge_say_so(problems):
    ks, y = problems["squared_error"]
    with pytest.raises(FormulationError, match="written for loss hinge"):
        mklopt.solve(ks, y, "vkr_lp", loss="squared_error")
    with pytest.raises(FormulationError, match="written for loss hinge"):
        mklopt.fit(ks, y, "dca", loss="squared_error")
