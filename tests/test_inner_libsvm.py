"""Issue 12: the libsvm inner solver's iteration budget and its errors are mklopt's own."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mklopt
from mklopt.drivers.inner import LibsvmInner
from mklopt.exceptions import MKLWarning, SolverError
from mklopt.formulations import MKLData
from mklopt.regularizers import as_regularizer


def data(scale: float = 1.0, C: float = 1.0) -> MKLData:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    ks = mklopt.KernelSet.from_data(X, [("rbf", {"gamma": 0.5}), "linear"])
    if scale != 1.0:
        ks = ks._derived(ks.K * scale, ks.names)
    return MKLData(ks, y, C, as_regularizer(None, p=1.0))


def test_default_budget_grows_with_n():
    assert LibsvmInner(data(), 1e-3).max_iter == 10_000
    inner = LibsvmInner(data(), 1e-3)
    alpha = inner(np.array([0.5, 0.5]))
    assert np.all(alpha >= 0) and inner.budget_hits == 0


def test_hitting_the_budget_warns_once_and_still_returns_alpha():
    inner = LibsvmInner(data(C=1e3), 1e-6, max_iter=3)
    with pytest.warns(MKLWarning, match="budget of 3 iterations"):
        alpha = inner(np.array([0.5, 0.5]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inner(np.array([0.4, 0.6]))  # the second hit is counted, not repeated
    assert inner.budget_hits == 2 and np.all(np.isfinite(alpha))


def test_non_finite_dual_coefficients_raise_solver_error():
    inner = LibsvmInner(data(), 1e-3)
    with pytest.raises(SolverError, match="rescale"):
        inner(np.array([np.inf, 0.5]))
