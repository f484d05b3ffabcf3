"""Issue 22 (trust, round 3): the audit's reproducers, the C sweep, save -> load -> verify.

The audit's instance: X = 20 x 2 standard normal (seed 0), K = [linear, RBF
gamma = 1], y = sign of the first feature, yr = first feature + noise.
Each reproducer failed at adaf41d (the audit's numbers are in the comments).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import mklopt
from mklopt.certificates.feasibility import relative_violation
from mklopt.certificates.recertify import certify_result
from mklopt.cli import main
from mklopt.exceptions import MKLError, NotPSDError
from mklopt.regularizers import ConstraintSet, L1, LpBall, WeightedL1

LOSSES = ("hinge", "epsilon_insensitive", "squared_error", "one_class", "ovr_hinge")


@pytest.fixture(scope="module")
def audit():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    K = np.stack([X @ X.T, rbf_kernel(X, gamma=1.0)])
    y = np.sign(X[:, 0])
    yr = X[:, 0] + 0.1 * rng.standard_normal(20)
    classes = np.arange(20) % 3
    return K, y, yr, classes


def labels_for(audit, loss):
    K, y, yr, classes = audit
    return {"hinge": y, "epsilon_insensitive": yr, "squared_error": yr,
            "one_class": None, "ovr_hinge": classes}[loss]


def loss_kwargs(loss):
    return {"epsilon_insensitive": {"epsilon": 0.1}, "one_class": {"nu": 0.5}}.get(loss, {})


# ----------------------------------------------------------------- defect 1
def test_tiny_C_squared_loss_certificate_is_not_negative(audit):
    """Audit: primal 6.6e-170, dual 1.3e-169, rel_gap -0.5 and certified() True."""
    K, _, yr, _ = audit
    C = 1e-170
    cert = mklopt.certify(K, yr, [0.5, 0.5], C * (yr - yr.mean()), C=C, loss="squared_error")
    assert cert.gap >= 0 and cert.rel_gap >= 0
    # the candidate is the exact answer to first order in C: P and G agree to rounding
    assert cert.rel_gap <= 1e-10 and np.isclose(cert.primal, 0.5 * C * np.sum((yr - yr.mean()) ** 2))


def test_tiny_C_wrapper_converges_with_a_nonnegative_gap(audit):
    K, _, yr, _ = audit
    result = mklopt.fit(K, yr, "wrapper", C=1e-170, loss="squared_error")
    assert result.status == "converged" and 0 <= result.rel_gap <= 1e-4


def test_negative_gap_beyond_the_rounding_bound_is_never_certified(audit):
    """Any future bug that makes G > P: status 'uncertified', a message, no verdict."""
    K, y, _, _ = audit
    cert = mklopt.certify(K, y, [0.5, 0.5], np.full(20, 0.1), C=1.0)
    cert.gap, cert.rel_gap = -0.3, -0.3 / cert.primal  # what the underflow did
    assert not cert.consistent() and not cert.certified(1e-6)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("C", [1e-300, 1e-170, 1e-30, 1.0, 1e30, 1e300])
def test_C_sweep_never_certifies_G_above_P(audit, loss, C):
    """Every loss at C from 1e-300 to 1e300: a certified candidate has P >= G."""
    K, *_ = audit
    y = labels_for(audit, loss)
    if loss == "one_class":
        C = 1.0  # the one-class loss has nu instead of C; its scale is set by 1/(nu n)
    n = K.shape[1]
    rng = np.random.default_rng(1)
    shape = (3, n) if loss == "ovr_hinge" else (n,)
    scale = {"squared_error": C, "one_class": 1.0 / n}.get(loss, C)
    candidates = [scale * rng.uniform(0, 1, shape), scale * rng.standard_normal(shape)]
    if loss in ("squared_error", "epsilon_insensitive"):  # the audit's: C times the centred targets
        candidates.append(C * (y - y.mean()))
    for alpha in candidates:
        for weights in ([0.5, 0.5], [1.0, 0.0]):
            cert = mklopt.certify(K, y, weights, alpha, C=C, loss=loss, **loss_kwargs(loss))
            if cert.certified(1.0):
                assert cert.primal >= cert.dual and cert.gap >= 0


@pytest.mark.parametrize("loss", ["hinge", "squared_error", "epsilon_insensitive"])
@pytest.mark.parametrize("C", [1e-170, 1e-30, 1e30])
def test_C_sweep_fits_are_consistent(audit, loss, C):
    """A fit either fails with mklopt's error or reports a consistent certificate that re-certifies."""
    K, *_ = audit
    y = labels_for(audit, loss)
    try:
        result = mklopt.fit(K, y, "wrapper", C=C, loss=loss, max_iter=50, **loss_kwargs(loss))
    except MKLError:
        return
    cert = mklopt.certify(K, y, result.weights, result.alpha, C=C, loss=loss, **loss_kwargs(loss))
    if result.status == "converged":
        assert cert.consistent() and 0 <= result.rel_gap <= 1e-4
        assert np.isclose(cert.rel_gap, result.rel_gap, rtol=1e-6, atol=1e-15)
    else:  # not converged: then it must not look converged
        assert not 0 <= result.rel_gap <= 1e-4


# --------------------------------------------------------- defects 2, 3, 4
@pytest.mark.parametrize("form, kwargs", [("lp_dual", {"p": np.inf}), ("lp_primal", {"p": np.inf}),
                                          ("lp_block_primal", {"b": np.inf}),
                                          ("lp_block_primal", {"b": 3.0})])
def test_non_finite_and_block_norm_results_load_and_recertify(audit, form, kwargs, tmp_path):
    """Audit: p = inf / b = inf did not load; b = 3 re-certified at 1.6e-6 (solved at 8e-9)."""
    K, y, _, _ = audit
    result = mklopt.solve(K, y, form, **kwargs)
    result.save(tmp_path / "r.npz")
    loaded = mklopt.MKLResult.load(tmp_path / "r.npz")
    assert repr(loaded.regularizer) == repr(result.regularizer)
    cert = certify_result(K, y, loaded)
    assert np.isclose(cert.rel_gap, result.rel_gap, rtol=1e-4, atol=1e-14)
    assert np.isclose(cert.primal, result.primal, rtol=1e-12)


def test_verify_of_an_ovr_result_prints_a_verdict(audit, tmp_path, capsys):
    """Audit: 'internal error: TypeError: unsupported format string' and exit 1."""
    K, _, _, classes = audit
    mklopt.solve(K, classes, "lp_dual", loss="ovr_hinge").save(tmp_path / "ovr.npz")
    np.savez(tmp_path / "inst.npz", K=K, y=classes)
    code = main(["verify", "--kernels", str(tmp_path / "inst.npz"), "--candidate", str(tmp_path / "ovr.npz")])
    out = capsys.readouterr().out
    assert code == 0 and "CERTIFIED" in out and "bias [" in out


def test_internal_error_has_its_own_exit_code(audit, tmp_path, monkeypatch, capsys):
    K, y, _, _ = audit
    np.savez(tmp_path / "inst.npz", K=K, y=y)
    mklopt.solve(K, y, "lp_dual").save(tmp_path / "r.npz")

    def broken(*args, **kwargs):
        raise TypeError("a bug")

    monkeypatch.setattr("mklopt.cli.verify.certify_candidate", broken)
    code = main(["verify", "--kernels", str(tmp_path / "inst.npz"), "--candidate", str(tmp_path / "r.npz")])
    assert code == 70 and "internal error" in capsys.readouterr().err


# ----------------------------------------------------------------- defect 5
@pytest.mark.parametrize("scale", [1e-12, 1e-9, 1e-3, 1.0, 1e3, 1e12])
def test_feasibility_is_relative_to_the_set_scale(scale):
    """Audit: (3e-9, 3e-9) in {sum mu <= 1e-9} (6x outside) was feasible, then silently shrunk."""
    reg = ConstraintSet(lambda mu: [mu[0] + mu[1] <= scale])
    outside = np.array([3.0, 3.0]) * scale
    inside_with_noise = np.array([0.5, 0.5 + 1e-10]) * scale
    assert relative_violation(reg, outside) > 1.0
    assert relative_violation(reg, inside_with_noise) <= 1e-8
    weighted = WeightedL1(np.array([1.0, 1.0]) / scale)  # the same set, closed form
    assert relative_violation(weighted, outside) > 1.0
    assert relative_violation(weighted, inside_with_noise) <= 1e-8


def test_candidate_outside_a_tiny_set_is_not_certified(audit):
    K, y, _, _ = audit
    reg = ConstraintSet(lambda mu: [mu[0] + mu[1] <= 1e-9])  # the audit's set
    cert = mklopt.certify(K, y, [3e-9, 3e-9], np.full(20, 0.1), regularizer=reg)
    assert not cert.feasible and not cert.certified(1.0) and not cert.repaired
    repaired = mklopt.certify(K, y, [3e-9, 3e-9], np.full(20, 0.1), regularizer=reg, repair=True)
    assert repaired.repaired and repaired.feasible


def test_noise_below_the_unit_set_is_still_feasible(audit):
    """A weight of -1e-10 beside a unit-size set is noise (relative to the set's extent)."""
    assert relative_violation(L1(), np.array([-1e-10, 0.0])) <= 1e-8
    assert relative_violation(LpBall(2.0), np.array([0.6, 0.8 + 1e-10])) <= 1e-8


# ----------------------------------------------------------------- defect 6
@pytest.mark.parametrize("driver", ["wrapper", "cutting_plane", "simplemkl"])
def test_nu_one_is_the_closed_form_in_every_driver(audit, driver):
    """Audit: SolverError from libsvm at nu = 1; the dual set is the point alpha = 1/n."""
    K, *_ = audit
    result = mklopt.fit(K, None, driver, loss="one_class", nu=1.0)
    exact = mklopt.solve(K, None, "lp_dual", loss="one_class", nu=1.0)
    assert result.status == "converged"
    np.testing.assert_allclose(result.alpha, np.full(20, 1 / 20), atol=1e-12)
    slack = 1e-6 * abs(exact.primal)
    assert result.dual <= exact.primal + slack and exact.dual <= result.primal + slack


# ----------------------------------------------------------------- defect 7
@pytest.mark.parametrize("inner", ["exact", "wrapper"])
def test_saved_dca_result_recertifies_its_last_subproblem(audit, inner, tmp_path, capsys):
    """Audit: saved with the L1 ball, re-certified at rel_gap 1.7 (NOT CERTIFIED)."""
    K, y, _, _ = audit
    result = mklopt.fit(K, y, "dca", theta=1, inner=inner)
    assert isinstance(result.regularizer, WeightedL1)
    result.save(tmp_path / "dca.npz")
    cert = certify_result(K, y, mklopt.MKLResult.load(tmp_path / "dca.npz"))
    assert np.isclose(cert.rel_gap, result.rel_gap, rtol=1e-6, atol=1e-14)
    np.savez(tmp_path / "inst.npz", K=K, y=y)
    code = main(["verify", "--kernels", str(tmp_path / "inst.npz"), "--candidate", str(tmp_path / "dca.npz")])
    assert code == 3 and "CERTIFIED LOCALLY" in capsys.readouterr().out


# ------------------------------------------------------- defect 8 (certify)
def test_certify_on_psd_false_kernels_is_refused_when_not_psd(audit):
    K, y, _, _ = audit
    indefinite = K.copy()
    indefinite[0] -= 3.0 * np.eye(20)
    with pytest.raises(NotPSDError, match="certificates assume PSD kernels"):
        mklopt.certify(mklopt.KernelSet(indefinite, psd=False), y, [0.5, 0.5], np.full(20, 0.1))
    psd = mklopt.certify(mklopt.KernelSet(K, psd=False), y, [0.5, 0.5], np.full(20, 0.1))
    assert psd.primal == mklopt.certify(K, y, [0.5, 0.5], np.full(20, 0.1)).primal
