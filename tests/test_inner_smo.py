"""Issue 35 point 0: the compiled SMO is the inner SVM of the outer loops, for every loss it has.

References: the inner SVM's own certified duality gap at fixed weights, the CVXPY ``svm``
formulation on an interior-point backend (another formulation of the same problem), and
libsvm's inner solver inside the same outer loops.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mklopt
from mklopt.certificates.gap import certificate
from mklopt.drivers.inner import CvxpyInner, LibsvmInner, make_inner
from mklopt.drivers.smo_inner import SmoInner
from mklopt.exceptions import MKLWarning, SolverError
from mklopt.formulations import MKLData
from mklopt.losses import as_loss
from mklopt.regularizers import as_regularizer

SMO_LOSSES = ["hinge", "epsilon_insensitive", "one_class", "ovr_hinge"]


def _labels(loss: str, X: np.ndarray, rng) -> np.ndarray:
    if loss == "hinge":
        return np.where(X[:, 0] + 0.5 * rng.standard_normal(len(X)) > 0, 1.0, -1.0)
    if loss == "ovr_hinge":
        return np.digitize(X[:, 0] + 0.3 * rng.standard_normal(len(X)), [-0.5, 0.5]).astype(float)
    return X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.standard_normal(len(X))


def problem(loss: str, C: float = 1.0, n: int = 60, scale: float = 1.0) -> MKLData:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 4))
    ks = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.5}), "linear", ("poly", {"degree": 2})])
    if scale != 1.0:
        ks = ks._derived(ks.K * scale, ks.names)
    the_loss = as_loss(loss)
    y, _ = the_loss.check_labels(None if loss == "one_class" else _labels(loss, X, rng), n)
    return MKLData(ks, y, 1.0 if loss == "one_class" else C, as_regularizer(None, p=1.0), loss=the_loss)


def inner_gap(data: MKLData, weights: np.ndarray, alpha: np.ndarray) -> tuple[float, float]:
    """The inner SVM's duality gap at fixed weights and its primal value."""
    cert = certificate(data.kernels, data.y, weights, alpha, data.C, data.regularizer, data.loss)
    return cert.primal - (cert.gain - 0.5 * float(cert.weights @ cert.s)), cert.primal


@pytest.mark.parametrize("loss", SMO_LOSSES)
@pytest.mark.parametrize("C", [1.0, 100.0])
def test_fixed_weights_optimum_matches_the_interior_point_svm(loss, C):
    data = problem(loss, C)
    weights = np.array([0.5, 0.2, 0.3])
    smo = SmoInner(data, 1e-12)
    alpha = smo(weights)
    gap, primal = inner_gap(data, weights, alpha)
    assert gap <= 1e-9 * max(1.0, abs(primal))
    _, reference = inner_gap(data, weights, CvxpyInner(data, 1e-8)(weights))
    assert primal == pytest.approx(reference, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("loss", SMO_LOSSES)
def test_answers_are_feasible(loss):
    data = problem(loss, C=10.0)
    alpha = np.atleast_2d(SmoInner(data, 1e-8)(np.array([0.2, 0.4, 0.4])))
    if loss == "epsilon_insensitive":
        assert np.all(np.abs(alpha) <= 10.0) and abs(alpha.sum()) <= 1e-10
    elif loss == "one_class":
        assert np.all((alpha >= 0) & (alpha <= 1 / (0.5 * data.n))) and alpha.sum() == pytest.approx(1, abs=1e-12)
    else:
        y = np.atleast_2d(data.y)
        assert np.all((alpha >= 0) & (alpha <= 10.0))
        assert np.all(np.abs(np.sum(y * alpha, axis=1)) <= 1e-9)


def test_warm_start_costs_nothing_at_the_same_weights_and_little_nearby():
    data = problem("hinge", C=10.0)
    smo = SmoInner(data, 1e-6)
    first = smo(np.array([0.5, 0.2, 0.3]))
    cold = smo.pairs
    again = smo(np.array([0.5, 0.2, 0.3]))
    assert smo.pairs == cold and np.array_equal(first, again)
    nearby = np.array([0.49, 0.21, 0.30])
    smo(nearby)
    fresh = SmoInner(data, 1e-6)
    fresh(nearby)
    assert smo.pairs - cold < 0.75 * fresh.pairs


def test_tighten_reaches_a_floor():
    smo = SmoInner(problem("hinge"), 1e-4)
    steps = 0
    while smo.tighten():
        steps += 1
    assert 5 <= steps <= 12 and not smo.tighten()


def test_budget_warns_once_and_still_returns_alpha():
    smo = SmoInner(problem("hinge", C=1e3), 1e-10, max_iter=3)
    with pytest.warns(MKLWarning, match="budget of 3 pair updates"):
        alpha = smo(np.array([0.5, 0.2, 0.3]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        smo(np.array([0.4, 0.3, 0.3]))
    assert smo.budget_hits == 2 and np.all(np.isfinite(alpha))


def test_non_finite_kernel_mix_is_a_solver_error():
    with pytest.raises(SolverError, match="rescale"):
        SmoInner(problem("hinge"), 1e-4)(np.array([np.inf, 0.5, 0.5]))


def test_default_inner_by_loss():
    assert isinstance(make_inner("smo", problem("hinge"), 1e-4), SmoInner)
    assert isinstance(make_inner("libsvm", problem("hinge"), 1e-4), LibsvmInner)
    assert isinstance(make_inner("smo", problem("squared_error"), 1e-4), LibsvmInner)


@pytest.mark.parametrize("driver", ["wrapper", "cutting_plane", "simplemkl"])
@pytest.mark.parametrize("loss", SMO_LOSSES)
def test_outer_loops_at_large_C_stay_on_smo_and_agree_with_libsvm(driver, loss):
    """At C = 100 the loops certify 1e-6 with the compiled SMO alone (no interior-point
    fallback); libsvm's loop (which may fall back) reaches the same optimum."""
    data = problem(loss, C=100.0)
    y = {"one_class": None, "ovr_hinge": np.argmax(np.atleast_2d(data.y), axis=0)}.get(loss, data.y)
    fits = {inner: mklopt.fit(data.kernels, y, driver, C=data.C, p=1.0, tol=1e-6, inner=inner,
                              max_iter=5000, loss=loss) for inner in ("smo", "libsvm")}
    smo = fits["smo"]
    assert smo.status == "converged" and smo.rel_gap <= 1e-6 and smo.backend == "smo"
    assert "switched" not in smo.message
    other = fits["libsvm"]
    assert smo.primal == pytest.approx(other.primal, rel=3e-6)
