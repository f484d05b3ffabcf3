"""Certificates that account for their own rounding, and loops that stop when their steps repeat.

Features offset by 1e8 make linear and polynomial kernels whose entries (~1e16 after the
default normalization) dwarf their variation: the products :math:`s_m = c^\\top K_m c`
computed in double precision came out tens below their exact values, and a certificate that
ignored its rounding claimed a gap of 3e-4 around a dual value far too high. One-vs-one on
60 such points ran its pairs to the 100,000-step default (nine minutes) at a gap of 0.86,
and the estimator said nothing of a ``"stalled"`` fit.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import mklopt
from mklopt.certificates.gap import _alpha_terms, rounding_bound
from mklopt.drivers._progress import REPEATS, Repeats
from mklopt.drivers._weight_step import WeightStep
from mklopt.estimators.kernel_specs import resolve_kernel_specs
from mklopt.losses import as_loss
from mklopt.regularizers import as_regularizer

RNG = np.random.default_rng(1)
X = RNG.standard_normal((60, 4))
Y = np.repeat([0, 1, 2], 20)


def _pair(offset: float):
    """Classes 0 and 2 of the offset features and their default kernels, normalized as the estimators do."""
    keep = (Y == 0) | (Y == 2)
    Xp, yp = X[keep] + offset, np.where(Y[keep] == 0, 1.0, -1.0)
    return mklopt.KernelSet.from_data(Xp, resolve_kernel_specs(None, Xp), normalization="multiplicative"), yp


def _bound(kernels, y, result) -> float:
    loss, reg = as_loss("hinge"), as_regularizer(None, 1.0)
    terms = _alpha_terms(kernels, y, result.alpha, 1.0, reg, loss)
    return rounding_bound(terms, result.weights, 1.0, reg, loss, y, result.bias)


def _exact_products(K: np.ndarray, c: np.ndarray) -> float:
    """:math:`c^\\top K c` of the stored doubles in exact rational arithmetic, rounded once."""
    terms = [Fraction(float(v)) for v in c]
    return float(sum(ci * sum(Fraction(float(k)) * cj for k, cj in zip(row, terms)) for ci, row in zip(terms, K)))


def test_the_bound_covers_the_rounding_of_the_products():
    """s_m in double precision against the exact value of the same stored kernels: the
    difference is material, and inside the bound."""
    kernels, y = _pair(1e8)
    result = mklopt.fit(kernels, y, "cutting_plane", max_iter=50)
    coef = y * result.alpha
    exact = np.array([_exact_products(K, coef) for K in kernels.K])
    double = np.array([coef @ (K @ coef) for K in kernels.K])
    assert np.max(np.abs(double - exact)) > 1.0  # the rounding is material here
    gamma = (kernels.n + kernels.M + 2) * np.finfo(float).eps
    delta = gamma * kernels.max_abs() * np.abs(coef).sum() ** 2  # the bound's share of each s_m
    assert np.all(np.abs(double - exact) <= delta)


@pytest.mark.parametrize("driver", ["cutting_plane", "chunking", "simplemkl"])
def test_offset_kernels_are_not_certified(driver):
    """Before, the cutting plane and SimpleMKL stopped "converged" here (gaps of 2e-5 to 3e-4)."""
    kernels, y = _pair(1e8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mklopt.fit(kernels, y, driver, max_iter=300)
    assert result.status != "converged"
    assert result.gap >= _bound(kernels, y, result)  # the interval holds the rounding
    assert result.rel_gap > 0.1


def test_the_bound_is_negligible_on_well_scaled_kernels():
    kernels, y = _pair(0.0)
    result = mklopt.fit(kernels, y, "cutting_plane")
    assert result.status == "converged" and result.rel_gap <= 1e-4
    assert _bound(kernels, y, result) <= 1e-9 * abs(result.primal)
    again = mklopt.certify(kernels, y, result.weights, result.alpha)  # the same interval, the same bound
    assert again.primal == pytest.approx(result.primal, rel=1e-12)


def test_max_abs_is_kept_and_exact():
    kernels, _ = _pair(1e4)
    first = kernels.max_abs()
    assert np.array_equal(first, np.abs(kernels.K).max(axis=(1, 2)))
    assert kernels.max_abs() is first
    sub = kernels[[1, 3]]
    assert np.array_equal(sub.max_abs(), first[[1, 3]])


def _made_sets():
    """Kernel sets made every way a fit makes them, each with the largest entries its
    construction kept (no pass of their own)."""
    specs = resolve_kernel_specs(None, X)
    asymmetric = mklopt.kernel_stack(X, specs)
    asymmetric[:, 0, 1] += 1e-12  # within the symmetry tolerance: symmetrized
    offset = X + 1e3  # larger entries than variation
    return {
        "built, trace": mklopt.KernelSet.from_data(X, specs),
        "built, multiplicative": mklopt.KernelSet.from_data(offset, specs, normalization="multiplicative"),
        "built, none": mklopt.KernelSet.from_data(X, specs, normalization=None),
        "built, a callable": mklopt.KernelSet.from_data(X, [*specs, lambda A, B: A @ B.T]),
        "built, validated": mklopt.KernelSet.from_data(X, specs, psd_tol=1e-6),
        "on the fly, dense": mklopt.KernelSet.from_data(X, specs, lazy=True).dense(),
        "a user's stack": mklopt.KernelSet(mklopt.kernel_stack(offset, specs)),
        "float32": mklopt.KernelSet((mklopt.kernel_stack(X, ["rbf"]) + 0.1 * np.eye(60)).astype(np.float32)),
        "float32, clipped": mklopt.KernelSet(mklopt.kernel_stack(X, ["rbf", "linear"]).astype(np.float32),
                                             psd_tol=1e-4),
        "symmetrized": mklopt.KernelSet(asymmetric),
        "normalized": mklopt.KernelSet(mklopt.kernel_stack(offset, specs)).normalized("multiplicative"),
        "in place": mklopt.KernelSet.normalized_in_place(mklopt.kernel_stack(X, specs), None, "trace"),
    }


@pytest.mark.filterwarnings("ignore:clipped small negative eigenvalues")
@pytest.mark.parametrize("how", list(_made_sets()))
def test_a_set_keeps_its_largest_entries_exactly(how):
    """The rounding bound's largest entries, kept from the set's build or validation scan (and
    carried through its scale and divisors), are the stack's own, bit for bit."""
    kernels = _made_sets()[how]
    kept = kernels._max_abs
    assert (kept is None) == (how in ("symmetrized", "float32, clipped"))  # changed after its scan: read once
    assert np.array_equal(kernels.max_abs(), np.abs(kernels.K).max(axis=(1, 2)))


def test_one_vs_one_on_offset_features_stops_in_steps_and_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = mklopt.MKLClassifier(multiclass="ovo").fit(X + 1e8, Y)
    assert all(result.iterations < 1_000 for result in model.result_)  # the default is 100,000
    uncertified = [result for result in model.result_ if result.rel_gap > 1e-4]
    assert uncertified and all(result.status == "stalled" for result in uncertified)
    said = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(said) >= len(uncertified) and all("stalled" in text for text in said)


def test_stalled_fits_warn_in_the_estimators():
    """C = 1e12: the core stops "stalled" at gaps of 0.09-0.14; the estimator used to say nothing."""
    with pytest.warns(ConvergenceWarning, match="stalled .* tol was 0.0001"):
        mklopt.MKLClassifier(C=1e12).fit(X, Y)


def test_repeated_steps_stop_the_interleaved_core(monkeypatch):
    """A weight step that never moves the weights: SMO optimal, no pair, the same step over and
    over. The loop stops "stalled" after ``max_cuts`` + REPEATS of them, not at ``max_iter``."""
    monkeypatch.setattr(WeightStep, "__call__", lambda self, mu, cert, Kc=None: (mu, -math.inf))
    kernels, y = _pair(0.0)
    max_cuts = 5
    result = mklopt.fit(kernels, y, "chunking", max_cuts=max_cuts, max_iter=10_000)
    assert result.status == "stalled" and "repeated the last one" in result.message
    assert result.iterations <= 100 + max_cuts + REPEATS
    assert result.rel_gap > 1e-4  # uniform weights are not the optimum here


def test_repeats_counts_steps_in_a_row():
    repeats = Repeats(max_cuts=2)
    assert not any(repeats.update(True) for _ in range(1 + REPEATS))
    assert not repeats.update(False)  # a step that changed something starts the count again
    assert not any(repeats.update(True) for _ in range(1 + REPEATS))
    assert repeats.update(True)


def test_a_failed_master_says_what_its_cuts_were():
    """One-class MKL on the offset features: the linear kernel's products (~1e16) against the RBF
    kernels' (~1) leave HiGHS's master unsolvable ('Unbounded', 'Not Set'), which it said alone."""
    from mklopt.drivers.lp_master import _cuts_hint
    from mklopt.exceptions import SolverError

    assert "centre the features" in _cuts_hint(-3.0, 5.0)
    assert "normalization='trace'" in _cuts_hint(0.04, 1e16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = mklopt.MKLOneClass().fit(X + 1e8)
        except SolverError as error:
            assert "ranged over" in str(error)
        else:  # a backend that solves it must not pass the fit off as certified
            assert model.result_.status == "converged" or any(
                issubclass(w.category, ConvergenceWarning) for w in caught)


def test_a_failed_master_names_targets_far_from_the_kernels_scale():
    """ε-SVR on targets ~1e20: the cuts' offsets y'α dwarf their products and HiGHS's master
    ends 'Unbounded'; the message blamed the kernels' scales (normalize them), which are fine."""
    from mklopt.drivers.lp_master import _cuts_hint
    from mklopt.exceptions import SolverError

    assert "scale the targets" in _cuts_hint(5.0, 12.9, 3.4e20)
    assert "scale the targets" not in _cuts_hint(5.0, 12.9, 1e3)
    rng = np.random.default_rng(0)
    y = rng.standard_normal(X.shape[0]) * 1e20
    try:
        model = mklopt.MKLRegressor().fit(X, y)
    except SolverError as error:
        assert "scale the targets" in str(error)
    else:  # a master that solves it: the fit is certified or warned like any other
        assert model.result_.status in ("converged", "stalled", "max_iter")
