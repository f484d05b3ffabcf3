"""Trust, round 4 (issue 33.3 and 33.5): "certified" only with finite bounds, one verdict in Python
and on the command line, and warm starts strictly inside the weight set."""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.certificates.bounds import Certificate, closes
from mklopt.cli.verify import verdict
from mklopt.exceptions import InvalidInputError
from mklopt.certificates.recertify import certify_result


def _contradictory_points():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[1], y[1] = X[0], -y[0]  # one point twice, with opposite labels
    return mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.3})]).K, y


@pytest.mark.parametrize("method", ["gram", "memo"])
def test_intersecting_class_hulls_are_refused_not_certified(method):
    K, y = _contradictory_points()
    with pytest.raises(InvalidInputError, match="class hulls intersect"):
        mklopt.learn_weights(K, y, method)  # was: gram "certified" with ratio inf and rel_gap nan


@pytest.mark.parametrize("lower, upper", [(1.0, np.inf), (-np.inf, 1.0), (np.nan, 1.0), (1.0, np.nan),
                                          (np.inf, np.inf), (2.0, 1.0)])
def test_bounds_that_are_not_finite_or_crossed_certify_nothing(lower, upper):
    assert not closes(lower, upper, tol=1.0)


def test_closes_accepts_finite_bounds_within_tol():
    assert closes(1.0, 1.0 + 1e-7, tol=1e-6) and not closes(1.0, 1.1, tol=1e-6)


@pytest.mark.parametrize("field", ["primal", "dual"])
def test_a_certificate_with_an_infinite_bound_is_not_certified(field):
    values = {"primal": 1.0, "dual": 1.0, "gap": 0.0, "rel_gap": 0.0}
    values[field] = np.inf
    cert = Certificate(**values, bias=0.0, weights=np.ones(2), alpha=np.zeros(3))
    assert not cert.consistent() and not cert.certified(1.0) and not cert.certified_locally(1.0)


def _krr_instance():
    from sklearn.datasets import load_diabetes
    from sklearn.preprocessing import StandardScaler

    X, y = load_diabetes(return_X_y=True)
    X, y = StandardScaler().fit_transform(X[:60]), (y[:60] - y[:60].mean()) / y[:60].std()
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.1}), ("rbf", {"gamma": 0.01})])
    return ks, y


def test_a_local_certificate_is_never_certified_in_python_and_says_so_on_the_command_line():
    ks, y = _krr_instance()
    res = mklopt.fit(ks, y, "polynomial_krr", loss="squared_error", tol=1e-8, max_iter=300,
                     lam=0.5, radius=1.0)
    assert res.status == "converged" and res.info["certified_globally"] is False
    cert = certify_result(ks, y, res)
    assert cert.local and not cert.certified(1e-6) and cert.certified_locally(1e-6)
    ok, line = verdict(cert, 1e-6, local=True)
    assert ok and line.startswith("CERTIFIED LOCALLY")
    ok, line = verdict(cert, 1e-6, local=False)  # nobody may read it as a global certificate
    assert not ok


def _zero_weight_instance():
    X = np.random.default_rng(11).standard_normal((60, 2))
    y = np.sign(X[:, 0])
    return mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.5}), "linear"]), y


@pytest.mark.parametrize("driver", ["chunking", "wrapper"])
def test_a_warm_start_with_a_zero_weight_still_converges(driver):
    ks, y = _zero_weight_instance()
    res = mklopt.fit(ks, y, driver, p=2, C=1, tol=1e-6, init_weights=[0, 1])
    assert res.status == "converged" and res.rel_gap <= 1e-6  # was: stalled at rel_gap 0.155
    reference = mklopt.solve(ks, y, "lp_dual", p=2, C=1)
    assert res.dual <= reference.primal + 1e-9 and reference.dual <= res.primal + 1e-9


def test_the_chunking_path_from_l1_weights_to_p_2_converges():
    ks, y = _zero_weight_instance()
    results = mklopt.path(ks, y, "chunking", p=[1, 2], C=1, tol=1e-6)
    assert results[0].weights.min() == 0  # the l1 answer that used to trap the p = 2 fit
    assert all(r.status == "converged" and r.rel_gap <= 1e-6 for r in results)
