"""Issue 56 (trust, round 5): each defect of the audit, one regression test that failed on the
code before the fix. Independent references: CVXPY solves, closed forms, scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt.exceptions import MKLError, NotPSDError


def _indefinite(n: int, low: float, high: float, seed: int = 0) -> np.ndarray:
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    K = (Q * np.linspace(low, high, n)) @ Q.T
    return 0.5 * (K + K.T)


@pytest.mark.parametrize("dtype, n, low, high", [(np.float16, 60, -25.0, 70.0),
                                                 (np.float16, 120, -1.0, 70.0),
                                                 (np.float32, 300, -0.053, 191.0)])
def test_low_precision_stacks_are_checked_in_float64(dtype, n, low, high):
    K = _indefinite(n, low, high).astype(dtype)
    with pytest.raises(NotPSDError, match="not positive semidefinite"):
        mklopt.KernelSet(K)


def test_chunking_stops_stalled_when_no_pair_can_move():
    rng = np.random.default_rng(0)
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    X, y = load_breast_cancer(return_X_y=True)
    idx = rng.choice(len(y), 20, replace=False)
    X, y = StandardScaler().fit_transform(X)[idx], np.where(y[idx] == 1, 1, -1)
    ks = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.1}), ("linear", {})])
    result = mklopt.fit(ks, y, "chunking", C=1e9, max_iter=2000)
    assert result.status in ("stalled", "converged")
    assert result.iterations < 100
    cert = mklopt.certify(ks, y, result.weights, result.alpha, C=1e9)  # the interval is the pair's own
    assert cert.dual <= result.primal * (1 + 1e-9) and result.dual <= cert.primal * (1 + 1e-9)
    if result.status == "stalled":
        assert "no SMO pair" in result.message


def _exact_feature_variance(X: np.ndarray, gamma: float, degree: int, coef0: float) -> float:
    """1/n Tr K - 1/n^2 1'K1 in exact rational arithmetic."""
    from fractions import Fraction
    rows = [[Fraction(float(v)) for v in row] for row in X]
    g, c = Fraction(gamma), Fraction(coef0)
    n = len(rows)
    K = [[(g * sum(a * b for a, b in zip(ri, rj)) + c) ** degree for rj in rows] for ri in rows]
    value = sum(K[i][i] for i in range(n)) / n - sum(map(sum, K)) / n**2
    return float(value)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("shift", [1e7, 1e8])
def test_multiplicative_normalization_of_offset_linear_data(shift, lazy):
    Z = np.random.default_rng(0).standard_normal((50, 3))
    reference = 1.0 / _exact_feature_variance(Z + shift, 1.0, 1, 0.0)
    ks = mklopt.KernelSet.from_data(Z + shift, ["linear"], normalization="multiplicative", lazy=lazy)
    assert ks.scales[0] == pytest.approx(reference, rel=1e-9)


@pytest.mark.parametrize("degree", [2, 3])
def test_multiplicative_variance_of_offset_polynomial_data(degree):
    from mklopt.kernels.feature_variance import feature_variances
    Z = np.random.default_rng(1).standard_normal((9, 2))
    X = Z + 1e4
    exact = _exact_feature_variance(X, 0.5, degree, 1.0)
    spec = ("poly", {"degree": degree, "gamma": 0.5, "coef0": 1.0})
    assert feature_variances(X, [spec])[0] == pytest.approx(exact, rel=1e-8)


def _indexed_kernel(X: np.ndarray, K: np.ndarray):
    """A matrix kernel function whose Gram matrix on X is K (rows looked up)."""
    def kernel(A, B):
        rows = [int(np.flatnonzero((X == a).all(axis=1))[0]) for a in A]
        cols = [int(np.flatnonzero((X == b).all(axis=1))[0]) for b in B]
        return K[np.ix_(rows, cols)]
    return kernel


@pytest.mark.parametrize("rank", [None, 40, 20])
def test_indefinite_kernel_function_is_refused_dense_and_low_rank(rank):
    X = np.random.default_rng(0).standard_normal((40, 4))
    kernel = _indexed_kernel(X, _indefinite(40, -80.0, 50.0))
    with pytest.raises(NotPSDError):
        mklopt.KernelSet.from_data(X, [kernel], rank=rank)


def test_low_rank_calls_the_kernel_function_with_matrices():
    X = np.random.default_rng(0).standard_normal((30, 3))
    calls = []

    def linear(A, B):
        calls.append((A.shape, B.shape))
        return A @ B.T

    ks = mklopt.KernelSet.from_data(X, [linear], rank=30)
    assert all(a[0] > 1 for a, _ in calls) and len(calls) <= 3
    np.testing.assert_allclose(ks.dense().K[0], X @ X.T, atol=1e-9)


@pytest.mark.parametrize("rank", [None, 10])
@pytest.mark.parametrize("bad", [lambda A, B: 1.0, lambda A, B: np.ones(len(A)), lambda A, B: 1 / 0,
                                 lambda A, B: np.full((len(A), len(B)), np.nan)])
def test_bad_kernel_functions_end_in_a_kernel_error(bad, rank):
    X = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(mklopt.exceptions.KernelError, match="kernel function"):
        mklopt.KernelSet.from_data(X, [bad], rank=rank)


# --------------------------------------------------------------- saved results and verify
import json  # noqa: E402

from mklopt.certificates.recertify import certify_result  # noqa: E402
from mklopt.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def saved_problem(tmp_path_factory):
    from sklearn.metrics.pairwise import rbf_kernel
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    y = np.sign(X[:, 0] + 0.3 * rng.standard_normal(30))
    ks = mklopt.KernelSet(np.stack([X @ X.T, rbf_kernel(X, gamma=1.0)])).normalized("trace")
    folder = tmp_path_factory.mktemp("saved")
    data = folder / "data.npz"
    np.savez(data, K=ks.K, y=y)
    result = mklopt.fit(ks, y, "cutting_plane", C=1.0, tol=1e-5)
    path = folder / "result.json"
    result.save(path)
    return ks, y, X, data, path, result


def _tampered(path, tmp_path, change):
    meta = json.loads(path.read_text())
    change(meta)
    out = tmp_path / "tampered.json"
    out.write_text(json.dumps(meta))
    return out


@pytest.mark.parametrize("tol", [1e300, 0.9, 5e-3])
def test_verify_never_takes_a_tampered_tolerance(saved_problem, tmp_path, capsys, tol):
    _, _, _, data, path, _ = saved_problem

    def zero_weights(meta):
        meta["weights"] = [0.0] * len(meta["weights"])
        meta["info"]["tol"] = tol
    code = main(["verify", "--kernels", str(data), "--candidate", str(_tampered(path, tmp_path, zero_weights))])
    out = capsys.readouterr()
    assert code in (1, 2), out
    assert "CERTIFIED:" not in out.out.replace("NOT CERTIFIED:", "")


def test_verify_still_certifies_the_untouched_file(saved_problem, capsys):
    _, _, _, data, path, _ = saved_problem
    assert main(["verify", "--kernels", str(data), "--candidate", str(path)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("change", [
    lambda meta: meta.__setitem__("fingerprint", "abc"),
    lambda meta: meta.__setitem__("fingerprint", {"M": 2}),
    lambda meta: meta.__setitem__("history", {"a": 1}),
    lambda meta: meta["info"].__setitem__("tol", "abc"),
])
def test_damaged_result_files_exit_2_with_their_name(saved_problem, tmp_path, capsys, change):
    _, _, _, data, path, _ = saved_problem
    damaged = _tampered(path, tmp_path, change)
    assert main(["verify", "--kernels", str(data), "--candidate", str(damaged)]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "tampered.json" in err


def test_a_result_file_without_a_field_names_it(saved_problem, tmp_path, capsys):
    _, _, _, data, path, _ = saved_problem
    damaged = _tampered(path, tmp_path, lambda meta: meta.pop("message"))
    assert main(["verify", "--kernels", str(data), "--candidate", str(damaged)]) == 2
    assert "its field 'message' is missing" in capsys.readouterr().err


def test_dense_result_recertifies_against_the_same_kernels_on_the_fly():
    X = np.random.default_rng(2).standard_normal((40, 3))
    y = np.sign(X[:, 0])
    specs = [("rbf", {"gamma": 0.5}), "linear"]
    dense = mklopt.KernelSet.from_data(X, specs, normalization="trace")
    lazy = mklopt.KernelSet.from_data(X, specs, normalization="trace", lazy=True)
    result = mklopt.fit(dense, y, "cutting_plane", tol=1e-6)
    cert = certify_result(lazy, y, result)
    assert cert.rel_gap == pytest.approx(result.rel_gap, rel=1e-4, abs=1e-12)
    other = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.6}), "linear"], normalization="trace", lazy=True)
    with pytest.raises(MKLError, match="other kernels"):
        certify_result(other, y, result)


@pytest.mark.parametrize("loss, params", [("one_class", {"nu": 0.3}),
                                          ("epsilon_insensitive", {"epsilon": 0.25})])
def test_recertifying_by_loss_name_keeps_the_saved_parameters(saved_problem, tmp_path, capsys, loss, params):
    ks, _, X, _, _, _ = saved_problem
    y = None if loss == "one_class" else X[:, 0]
    result = mklopt.fit(ks, y, "cutting_plane", loss=loss, tol=1e-6, **params)
    assert result.status == "converged"
    assert certify_result(ks, y, result, loss=loss).certified(1e-5)
    path = tmp_path / "r.json"
    result.save(path)
    data = tmp_path / "d.npz"
    np.savez(data, K=ks.K, y=np.zeros(ks.n) if y is None else y)
    assert main(["verify", "--kernels", str(data), "--candidate", str(path), "--loss", loss]) == 0, \
        capsys.readouterr()
    other = type(mklopt.losses.as_loss(loss))(**{k: v * 2 for k, v in params.items()})
    with pytest.raises(MKLError, match="contradict"):
        certify_result(ks, y, result, loss=other)


# --------------------------------------------------------------- foreign exceptions
@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = np.sign(X[:, 0] + 0.1)
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.5})]).normalized("trace")
    return X, y, ks


@pytest.mark.parametrize("formulation", ["lp_dual", "lp_primal", "lp_block_primal"])
@pytest.mark.parametrize("p", [1.0001, 2000.0, 1e4])
def test_exponents_cvxpy_cannot_state_are_refused(small, formulation, p):
    _, y, ks = small
    try:
        result = mklopt.solve(ks, y, formulation, p=p)
    except MKLError as exc:
        assert "power cones" in str(exc) and "driver='wrapper'" in str(exc)
    else:  # the block primal's b = 2p/(p+1) is representable for large p: then it must be certified
        assert result.status == "optimal", result.message
        reference = mklopt.fit(ks, y, "wrapper", p=p, tol=1e-6)
        assert result.dual <= reference.primal + 1e-6 and reference.dual <= result.primal + 1e-6


def test_certify_with_huge_finite_weights_projects_them(small):
    _, y, ks = small
    cert = mklopt.certify(ks, y, np.array([1e16, 1.0]), np.zeros(ks.n), repair=True)
    np.testing.assert_allclose(cert.weights, [1.0, 0.0])
    assert not mklopt.certify(ks, y, np.array([1e16, 1.0]), np.zeros(ks.n)).feasible


@pytest.mark.parametrize("X, match", [
    (np.full((30, 3), np.nan), "NaN"), (np.full((30, 3), np.inf), "NaN or infinite"),
    (np.zeros((30, 0)), "at least one row and one feature"), (np.zeros((0, 3)), "at least one row"),
    (np.zeros(30), "2-D"), (np.zeros((1, 30, 3)), "2-D"), (np.ones((30, 3)) + 1j, "complex"),
    (np.full((30, 3), 1e300), "overflow"), (np.array([["a", "b"]] * 30, dtype=object), "not numbers"),
])
@pytest.mark.parametrize("path", [{}, {"rank": 5}, {"lazy": True}])
def test_bad_features_end_in_a_kernel_error(X, match, path):
    before = X.copy()
    with pytest.raises(mklopt.exceptions.KernelError, match=match):
        mklopt.KernelSet.from_data(X, ["linear"], **path)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("columns, ok", [(None, False), (1, True), (2.5, False), ([0, 2], True)])
def test_view_columns(columns, ok):
    X = np.random.default_rng(0).standard_normal((20, 3))
    view = mklopt.ViewKernel("linear", columns)
    if ok:
        ks = mklopt.KernelSet.from_data(X, [view])
        cols = np.atleast_1d(columns)
        np.testing.assert_allclose(ks.K[0], X[:, cols] @ X[:, cols].T, atol=1e-12)
    else:
        with pytest.raises(mklopt.exceptions.KernelError, match="columns must be"):
            mklopt.KernelSet.from_data(X, [view])


@pytest.mark.parametrize("path", [{}, {"rank": 20}, {"lazy": True}])
def test_view_with_scale_gamma_on_every_path(path):
    from sklearn.metrics.pairwise import rbf_kernel
    X = np.random.default_rng(0).standard_normal((20, 4))
    view = mklopt.ViewKernel(("rbf", {"gamma": "scale"}), [0, 1])
    ks = mklopt.KernelSet.from_data(X, [view], **path)
    dense = ks.dense() if hasattr(ks, "dense") else ks
    gamma = 1.0 / (2 * X[:, :2].var())
    np.testing.assert_allclose(dense.K[0], rbf_kernel(X[:, :2], gamma=gamma), atol=1e-8)


def test_exact_solve_on_kernels_on_the_fly_says_what_to_do(small):
    X, y, _ = small
    lazy = mklopt.KernelSet.from_data(X, ["linear"], lazy=True)
    with pytest.raises(MKLError, match="dense"):
        mklopt.solve(lazy, y, "qcqp_l1")


def test_predict_refuses_nan_test_kernels_and_kernel_sets_it_cannot_use(small):
    X, y, ks = small
    result = mklopt.fit(ks, y, "cutting_plane")
    T = ks.K.copy()
    T[0, 0, 0] = np.nan
    for call in (result.predict, result.decision_function):
        with pytest.raises(MKLError, match="NaN"):
            call(T)
    np.testing.assert_allclose(result.decision_function(ks), result.decision_function(ks.K))
    for other in (mklopt.KernelSet.from_data(X, ["linear", "rbf"], lazy=True),
                  mklopt.KernelSet.from_data(X, ["linear", "rbf"], rank=5)):
        with pytest.raises(MKLError, match="test_kernels|transform_test"):
            result.predict(other)


def test_one_vs_rest_warm_start_takes_the_result_alpha(small):
    _, _, ks = small
    classes = np.arange(ks.n) % 3
    first = mklopt.fit(ks, classes, "chunking", loss="ovr_hinge")
    for init in (first.alpha, first.alpha.ravel()):
        again = mklopt.fit(ks, classes, "chunking", loss="ovr_hinge", init_alpha=init)
        assert again.status == "converged" and again.iterations <= first.iterations
    with pytest.raises(MKLError, match="shaped like the result's alpha"):
        mklopt.fit(ks, classes, "chunking", loss="ovr_hinge", init_alpha=np.zeros(ks.n))


# --------------------------------------------------------------- sweep fingerprints
def _fingerprint(kernels, resume):
    from mklopt.model_selection.sweep_log import sweep_fingerprint
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1] * 3)
    splits = [(np.arange(3), np.arange(3, 6))]
    return sweep_fingerprint(X, y, [{"C": 1.0, "kernels": kernels}], mklopt.MKLClassifier(kernels=kernels),
                             "accuracy", splits, resume=resume)


def test_sweep_fingerprint_tells_partial_kernels_apart():
    import functools
    from sklearn.metrics.pairwise import rbf_kernel
    first = _fingerprint([functools.partial(rbf_kernel, gamma=0.1)], True)
    assert first == _fingerprint([functools.partial(rbf_kernel, gamma=0.1)], True)
    assert first != _fingerprint([functools.partial(rbf_kernel, gamma=1000)], True)


def test_sweep_with_lambda_kernels_refuses_resume_and_never_shares_a_log():
    with pytest.raises(MKLError, match="resume is refused"):
        _fingerprint([lambda A, B: A @ B.T], True)
    assert _fingerprint([lambda A, B: A @ B.T], False) != _fingerprint([lambda A, B: A @ B.T], False)


# --------------------------------------------------------------- spectrahedron
def _nearly_dependent(n: int):
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    X, y = load_breast_cancer(return_X_y=True)
    X, y = StandardScaler().fit_transform(X)[:n], np.where(y[:n] == 1, 1, -1)
    specs = [("rbf", {"gamma": 1e-3 * 1.2**k}) for k in range(4)]
    return mklopt.KernelSet.from_data(X, specs).normalized("trace"), y


def test_lanckriet_sdp_on_nearly_dependent_kernels_is_certified_by_an_independent_bound():
    import cvxpy as cp
    from mklopt import Spectrahedron
    ks, y = _nearly_dependent(40)
    flat = ks.K.reshape(4, -1)
    values = np.linalg.eigvalsh(flat @ flat.T)
    assert values[0] < 1e-10 * values[-1]  # what made the old bound infinite (an SDP per certificate)
    result = mklopt.solve(ks, y, "lanckriet_sdp", C=1.0)
    assert result.status == "optimal" and result.rel_gap <= 1e-6
    reg = Spectrahedron(ks.K, result.info["trace"])
    s = np.einsum("mij,i,j->m", ks.K, y * result.alpha, y * result.alpha)
    # the maximum of s'mu over the set, by CVXPY's SDP (independent of the bound), at a point
    # moved exactly into the set: a value the certified bound must not undercut
    mu = cp.Variable(4)
    cp.Problem(cp.Maximize(s @ mu), reg.constraints(mu)).solve(solver="CLARABEL")
    inside = reg.into_set(mu.value)
    assert reg.violation(inside) <= 0.0
    ours = reg.support(s)
    assert ours >= float(s @ inside)
    # and not loose: within 1e-4 (the interior point stops at a gap scaled by the set's radius)
    assert ours <= float(s @ inside) * (1 + 1e-4)


def test_spectrahedron_of_exactly_dependent_kernels_names_them():
    from mklopt import Spectrahedron
    ks, y = _nearly_dependent(30)
    K = np.concatenate([ks.K, (0.5 * (ks.K[0] + ks.K[1]))[None]])
    with pytest.raises(MKLError, match=r"kernels \[0, 1, 4\] are linearly dependent"):
        mklopt.certify(K, y, np.full(5, 0.2), np.full(30, 0.01), regularizer=Spectrahedron(K))


def test_certify_infeasible_spectrahedron_candidate_does_not_project_without_repair(monkeypatch):
    from mklopt import Spectrahedron
    ks, y = _nearly_dependent(30)
    reg = Spectrahedron(ks.K)

    def no_sdp(*args, **kwargs):
        raise AssertionError("the SDP projection ran without repair=True")

    monkeypatch.setattr(Spectrahedron, "project", no_sdp)
    cert = mklopt.certify(ks, y, np.array([3.0, -2.0, 0.5, 0.0]), np.full(30, 0.01), regularizer=reg)
    assert not cert.feasible and "nearby feasible point" in cert.message


def test_cli_refuses_a_kernel_parameter_given_twice(tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = tmp_path / "data.npz"
    X = rng.standard_normal((20, 2))
    np.savez(data, X=X, y=np.sign(X[:, 0] + 0.1))
    with pytest.raises(SystemExit) as stop:  # argparse's usage error
        main(["solve", "--data", str(data), "--kernel", "rbf:gamma=0.1,gamma=0.2"])
    assert stop.value.code == 2
    assert "given twice" in capsys.readouterr().err


@pytest.mark.parametrize("arrays, args", [
    ({"X": np.zeros((20, 0))}, []),
    ({"X": np.random.default_rng(0).standard_normal((20, 2))}, ["--formulation", "lp_dual", "--p", "1.0001"]),
])
def test_cli_bad_input_exits_2_not_70(tmp_path, capsys, arrays, args):
    data = tmp_path / "data.npz"
    np.savez(data, y=np.sign(np.arange(20) - 9.5), **arrays)
    assert main(["solve", "--data", str(data), "--kernel", "linear", "--kernel", "rbf", *args]) == 2
    assert "internal error" not in capsys.readouterr().err
