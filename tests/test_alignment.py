"""Two-stage alignment weights (issue 17): ``mklopt.learn_weights`` and ``driver="align"|"alignf"``."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.svm import SVC

import mklopt
from mklopt.alignment import alignment_terms, centered_kernels
from mklopt.backends import accuracy, capable_backends
from mklopt.exceptions import InvalidInputError
from mklopt.testing import reference_instances

#: Instances with labels or real targets (one-class has none, ovr_hinge is multiclass).
INSTANCES = [i for i in reference_instances() if i.loss in ("hinge", "epsilon_insensitive", "squared_error")]
IDS = [i.name for i in INSTANCES]
#: Accurate CVXPY backends for the independent QP.
QP_BACKENDS = [b for b in capable_backends("QP") if accuracy(b, "QP") <= 1e-8]


def explicit(K: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centered kernels, M and a with the explicit centering matrix H (the definition)."""
    n = K.shape[1]
    H = np.eye(n) - np.ones((n, n)) / n
    Kc = np.array([H @ k @ H for k in K])
    a = np.array([np.sum(k * np.outer(y, y)) for k in Kc])
    return Kc, np.einsum("kij,lij->kl", Kc, Kc), a


def independent_qp(gram: np.ndarray, a: np.ndarray, backend: str | None) -> np.ndarray:
    """min_{v>=0} v'Mv - 2v'a by CVXPY on ``backend``, or by L-BFGS-B when ``backend`` is None."""
    scale = np.abs(gram).max()
    G, b = gram / scale, a / scale
    if backend is None:
        res = minimize(lambda v: v @ G @ v - 2 * b @ v, np.ones(a.size), jac=lambda v: 2 * G @ v - 2 * b,
                       bounds=[(0, None)] * a.size, method="L-BFGS-B",
                       options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 10_000})
        return res.x
    v = cp.Variable(a.size)
    problem = cp.Problem(cp.Minimize(cp.quad_form(v, cp.psd_wrap(G)) - 2 * b @ v), [v >= 0])
    problem.solve(solver=backend, **mklopt.backends.solver_options(backend, 1e-10))
    return np.clip(v.value, 0, None)


@pytest.mark.parametrize("inst", INSTANCES, ids=IDS)
def test_align_matches_explicit_centering(inst):
    Kc, gram, a = explicit(inst.kernels.K, inst.y)
    np.testing.assert_allclose(centered_kernels(inst.kernels.K), Kc, atol=1e-12 * np.abs(Kc).max())
    got_gram, got_a = alignment_terms(inst.kernels, inst.y)
    np.testing.assert_allclose(got_gram, gram, rtol=1e-10)
    np.testing.assert_allclose(got_a, a, rtol=1e-10, atol=1e-10 * np.abs(a).max())
    expected = np.clip(a, 0, None) / np.sqrt(np.diag(gram))
    expected /= expected.sum()
    mu = mklopt.learn_weights(inst.kernels, inst.y, "align")
    np.testing.assert_allclose(mu, expected, rtol=1e-10)
    assert abs(mu.sum() - 1) <= 1e-12


@pytest.mark.parametrize("backend", [None, *QP_BACKENDS])
@pytest.mark.parametrize("inst", INSTANCES, ids=IDS)
def test_alignf_matches_an_independent_qp(inst, backend):
    _, gram, a = explicit(inst.kernels.K, inst.y)
    v = independent_qp(gram, a, backend)
    mu = mklopt.learn_weights(inst.kernels, inst.y, "alignf")
    assert abs(np.linalg.norm(mu) - 1) <= 1e-12
    assert np.max(np.abs(mu - v / np.linalg.norm(v))) <= 1e-6
    # KKT of the QP at mklopt's v (any positive multiple of mu scaled to the QP's minimizer)
    t = (mu @ a) / (mu @ gram @ mu)
    grad = 2 * gram @ (t * mu) - 2 * a
    scale = np.abs(a).max()
    assert np.all(grad >= -1e-8 * scale) and np.all(np.abs(grad[mu > 1e-9]) <= 1e-8 * scale)


def test_inputs_forms_and_label_codings_agree_and_nothing_is_mutated():
    inst = reference_instances(["l1_iris"])[0]
    K = np.array(inst.kernels.K)
    K.setflags(write=False)
    y01 = (inst.y > 0).astype(int)
    words = np.where(inst.y > 0, "yes", "no")
    for method in ("align", "alignf"):
        ref = mklopt.learn_weights(inst.kernels, inst.y, method)
        for kernels, y in [(K, inst.y), (list(K), y01), (K, words), (K, 3.0 * inst.y + 7.0)]:
            np.testing.assert_allclose(mklopt.learn_weights(kernels, y, method), ref, rtol=1e-10)
    np.testing.assert_array_equal(K, inst.kernels.K)
    f1 = mklopt.learn_weights(K, inst.y, "alignf", norm=1)
    f2 = mklopt.learn_weights(K, inst.y, "alignf", norm=2)
    np.testing.assert_allclose(f1, f2 / f2.sum(), rtol=1e-12)
    a2 = mklopt.learn_weights(K, inst.y, "align", norm=2)
    assert abs(np.linalg.norm(a2) - 1) <= 1e-12


def test_weights_feed_the_certified_svm():
    inst = reference_instances(["lp2_digits"])[0]
    for method in ("align", "alignf"):
        mu = mklopt.learn_weights(inst.kernels, inst.y, method)
        res = mklopt.solve(inst.kernels, inst.y, "svm", C=inst.C, weights=mu)
        assert res.status == "optimal" and res.rel_gap <= 1e-6
        np.testing.assert_allclose(res.weights, mu)


def _bad(kind: str):
    inst = reference_instances(["l1_iris"])[0]
    K, y = np.array(inst.kernels.K), inst.y.copy()
    if kind == "nan_kernel":
        K[0, 0, 0] = np.nan
    elif kind == "nan_y":
        y = y.astype(float)
        y[3] = np.nan
    elif kind == "short_y":
        y = y[:-1]
    elif kind == "non_square":
        K = K[:, :, :-1]
    elif kind == "constant_y":
        y = np.ones_like(y)
    elif kind == "three_classes":
        y = np.array(["a", "b", "c"] * (y.size // 3) + ["a"] * (y.size % 3))
    elif kind == "unaligned":  # a rank-one kernel orthogonal to y and to 1: every a_m = 0
        z = np.linspace(-1, 1, y.size)
        z -= z.mean()
        yc = y - y.mean()
        z -= (z @ yc) / (yc @ yc) * yc
        K = np.outer(z, z)[None]
    return K, y


@pytest.mark.parametrize("kind, options, match", [
    ("none", {"method": "mkl"}, "unknown weight method"),
    ("none", {"method": "align", "norm": 3}, "norm"),
    ("nan_kernel", {}, "NaN|finite"),
    ("nan_y", {}, "NaN"),
    ("short_y", {}, "labels|targets"),
    ("non_square", {}, "square"),
    ("constant_y", {}, "constant"),
    ("three_classes", {}, "two classes"),
    ("unaligned", {"method": "alignf"}, "aligned"),
    ("unaligned", {"method": "align"}, "aligned"),
])
def test_bad_input(kind, options, match):
    K, y = _bad(kind)
    with pytest.raises(InvalidInputError, match=match):
        mklopt.learn_weights(K, y, **options)


@pytest.mark.parametrize("method", ["align", "alignf"])
def test_estimator_matches_svc_at_the_learned_weights(method):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(160, 4))
    labels = np.where(X[:, 0] * X[:, 1] + 0.5 * X[:, 2] > 0, "pos", "neg")
    Xtr, ytr, Xte = X[:120], labels[:120], X[120:]
    specs = ["linear", ("rbf", {"gamma": 0.3}), ("poly", {"degree": 2})]
    clf = mklopt.MKLClassifier(kernels=specs, normalization=None, driver=method, C=2.0,
                               tol=1e-6).fit(Xtr, ytr)
    ks = mklopt.KernelSet.from_data(Xtr, specs)
    mu = mklopt.learn_weights(ks, ytr, method)
    np.testing.assert_allclose(clf.weights_, mu, rtol=1e-12)
    assert clf.result_.rel_gap <= 1e-6 and clf.result_.info["weights_method"] == method
    cert = mklopt.certify(ks, ytr, mu, clf.result_.alpha, C=2.0, regularizer=mklopt.Fixed(mu))
    assert cert.rel_gap <= 1e-6  # certified as the SVM at those fixed weights
    svc = SVC(C=2.0, kernel="precomputed", tol=1e-10).fit(np.tensordot(mu, ks.K, 1), ytr)
    test_K = np.tensordot(mu, mklopt.kernel_stack(Xte, specs, Xtr), 1)
    ours, theirs = clf.decision_function(Xte), svc.decision_function(test_K)
    assert np.max(np.abs(ours - theirs)) <= 1e-3 * np.max(np.abs(theirs))
    np.testing.assert_array_equal(clf.predict(Xte), svc.predict(test_K))


def test_regressor_and_unsupported_problems():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    target = X[:, 0] ** 2 + 0.1 * rng.normal(size=80)
    reg = mklopt.MKLRegressor(kernels=["linear", ("poly", {"degree": 2})], normalization=None,
                              driver="alignf").fit(X, target)
    ks = mklopt.KernelSet.from_data(X, ["linear", ("poly", {"degree": 2})])
    np.testing.assert_allclose(reg.weights_, mklopt.learn_weights(ks, target, "alignf"), rtol=1e-12)
    assert reg.weights_[1] > reg.weights_[0]  # the quadratic kernel explains a quadratic target
    with pytest.raises(InvalidInputError, match="driver"):
        mklopt.MKLOneClass(driver="align").fit(X)
