"""SimpleMKL driver (issue 17): certified convergence to the ℓ1-MKL optimum of the reference instances."""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.backends import accuracy, capable_backends
from mklopt.drivers import DRIVERS
from mklopt.drivers.simplemkl import SimpleMKL, descent_direction, max_step
from mklopt.exceptions import InvalidInputError
from mklopt.testing import reference_instances

#: Inner solvers that can certify rel_gap 1e-6: the compiled SMO, libsvm, and interior-point QP backends.
INNERS = ["smo", "libsvm", *(f"cvxpy:{b}" for b in capable_backends("QP") if accuracy(b, "QP") <= 1e-8)]


def _inner(spec: str) -> dict:
    kind, _, backend = spec.partition(":")
    return {"inner": kind, "backend": backend or None}


def _fit(inst, **options):
    return mklopt.fit(inst.kernels, inst.y, "simplemkl", C=inst.C, loss=inst.loss,
                      **inst.loss_params, **options)


def _assert_brackets(res, inst) -> None:
    """G <= OPT <= P for the answer and every record, OPT known to the reference's own accuracy."""
    scale = max(1.0, abs(inst.optimal_value))
    slack = inst.rel_gap * scale + 1e-12 * scale
    lo, hi = inst.dual_value, inst.optimal_value  # the reference's certified interval around OPT
    assert res.dual <= hi + slack and res.primal >= lo - slack
    for rec in res.history:
        assert rec["dual"] <= hi + slack and rec["lower_bound"] <= hi + slack
        assert rec["primal"] >= lo - slack and rec["upper_bound"] >= lo - slack


def test_registered():
    assert DRIVERS["simplemkl"] is SimpleMKL
    assert "simplemkl" in mklopt.estimators._base.driver_names("hinge")


@pytest.mark.parametrize("inner", INNERS)
def test_reaches_the_l1_reference_optimum(inner):
    """Acceptance: every hinge p = 1 reference instance to rel_gap 1e-6 with valid bounds."""
    l1 = [i for i in reference_instances() if i.loss == "hinge" and i.p == 1]
    assert l1, "the catalogue has a hinge l1 instance"
    for inst in l1:
        res = _fit(inst, tol=1e-6, **_inner(inner))
        assert res.status == "converged" and res.rel_gap <= 1e-6
        _assert_brackets(res, inst)
        assert abs(res.primal - inst.optimal_value) <= 1e-6 * abs(inst.optimal_value)
        assert np.isclose(res.weights.sum(), 1.0) and np.all(res.weights >= 0)
        np.testing.assert_allclose(res.weights, inst.weights, atol=1e-3)
        cert = inst.certify(res.weights, res.alpha)  # the returned pair reproduces its gap
        assert cert.rel_gap <= 1e-6 and abs(cert.primal - res.primal) <= 1e-9 * abs(res.primal)


def test_descends_and_records_history():
    inst = reference_instances(["l1_iris"])[0]
    res = _fit(inst, tol=1e-7, inner="cvxpy")
    objective = [rec["objective"] for rec in res.history]
    scale = abs(objective[0])
    assert all(b <= a + 1e-9 * scale for a, b in zip(objective, objective[1:])), objective
    assert objective[-1] < objective[0]  # it did descend from the uniform start
    solves = [rec["svm_solves"] for rec in res.history]
    assert solves == sorted(solves) and res.info["svm_solves"] == solves[-1] >= len(solves)
    for key in ("rel_gap", "upper_bound", "lower_bound", "time", "weights", "step"):
        assert key in res.history[0]
    np.testing.assert_allclose(res.history[0]["objective"], mklopt.solve(
        inst.kernels, inst.y, "svm", C=inst.C, weights=np.full(inst.kernels.M, 0.25)).primal,
        rtol=1e-6)  # the first objective is the SVM at the uniform start 1/M


def test_other_loss_one_class():
    """The gradient -s/2 holds for every loss of the generic dual: the one-class l1 instance."""
    inst = reference_instances(["one_class_l1_wine"])[0]
    res = _fit(inst, tol=1e-6, inner="cvxpy")
    assert res.status == "converged" and res.rel_gap <= 1e-6
    _assert_brackets(res, inst)


def test_same_optimum_as_cutting_plane_and_estimator():
    inst = reference_instances(["l1_iris"])[0]
    cp_res = mklopt.fit(inst.kernels, inst.y, "cutting_plane", C=inst.C, tol=1e-6)
    sm_res = _fit(inst, tol=1e-6)
    assert abs(sm_res.primal - cp_res.primal) <= 2e-6 * abs(cp_res.primal)
    X = np.random.default_rng(1).normal(size=(60, 3))
    labels = np.where(X[:, 0] + 0.3 * X[:, 1] ** 2 > 0.2, 1, -1)
    clf = mklopt.MKLClassifier(kernels=["linear", ("rbf", {"gamma": 0.5})], driver="simplemkl",
                               tol=1e-5).fit(X, labels)
    assert clf.result_.rel_gap <= 1e-5 and clf.score(X, labels) > 0.9


def test_descent_direction_properties():
    rng = np.random.default_rng(0)
    for _ in range(50):
        mu = rng.dirichlet(np.ones(6))
        mu[rng.random(6) < 0.3] = 0.0
        if mu.sum() == 0:
            continue
        mu /= mu.sum()
        grad = -0.5 * rng.random(6) * 10
        D = descent_direction(mu, grad)
        assert abs(D.sum()) <= 1e-12 * max(1.0, np.abs(D).max())
        assert grad @ D <= 1e-12
        k = int(np.argmax(mu))
        stuck = (mu == 0) & (grad - grad[k] >= 0)
        assert np.all(D[stuck] == 0)  # zero weights only enter when it lowers J
        gmax, nu = max_step(mu, D)
        if nu >= 0:
            assert np.all(mu + gmax * D >= -1e-12) and abs(mu[nu] + gmax * D[nu]) <= 1e-12
    # at a point where the gradient is equal on the support and larger elsewhere: no direction
    D = descent_direction(np.array([0.5, 0.5, 0.0]), np.array([-2.0, -2.0, -1.0]))
    np.testing.assert_array_equal(D, 0.0)


@pytest.mark.parametrize("options, match", [
    ({"p": 2.0}, "wrapper"),
    ({"regularizer": mklopt.ElasticNet(1.0, 1.0)}, "cutting_plane"),
    ({"regularizer": mklopt.WeightedL1(np.array([1.0, 2.0, 1.0, 1.0]))}, "p=1"),
    ({"line_search_tol": 0.0}, "line_search_tol"),
    ({"init_weights": [1.0, 0.0]}, "init_weights"),
    ({"init_weights": [0.0, 0.0, 0.0, 0.0]}, "init_weights"),
])
def test_bad_input(options, match):
    inst = reference_instances(["l1_iris"])[0]
    with pytest.raises(InvalidInputError, match=match):
        mklopt.fit(inst.kernels, inst.y, "simplemkl", C=inst.C, **options)
