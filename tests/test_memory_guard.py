"""Issue 35 point 0: no path allocates a kernel stack that cannot fit in memory."""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt import MKLClassifier
from mklopt.exceptions import InvalidInputError, KernelError
from mklopt.kernels import _memory

X = np.random.default_rng(0).standard_normal((50, 3))
y = np.where(X[:, 0] > 0, 1, -1)
SPECS = [("rbf", {"gamma": g}) for g in (0.1, 1.0, 10.0)]


@pytest.fixture
def little_memory(monkeypatch):
    """The system reports 50 kB available: 3 kernels on 50 points (60 kB) do not fit."""
    monkeypatch.setattr(_memory, "available_bytes", lambda: 50_000)


def test_a_stack_that_does_not_fit_is_refused_before_allocation(little_memory):
    with pytest.raises(KernelError, match=r"needs 0\.06 MiB but 0\.05 MiB.*lazy=True.*rank=r") as caught:
        mklopt.KernelSet.from_data(X, SPECS)
    assert isinstance(caught.value, InvalidInputError) and "\n" not in str(caught.value)


def test_the_representations_without_a_stack_still_work(little_memory):
    lazy = mklopt.KernelSet.from_data(X, SPECS, lazy=True)
    assert mklopt.fit(lazy, y, "chunking", p=2, tol=1e-4).status == "converged"
    assert mklopt.KernelSet.from_data(X, SPECS, rank=10).factored


def test_the_estimator_says_which_options_avoid_the_stack(little_memory):
    with pytest.raises(KernelError, match="driver='chunking'"):
        MKLClassifier(kernels=SPECS, normalization="multiplicative", driver="wrapper").fit(X, y)


def test_memory_is_measured():
    free = _memory.available_bytes()
    assert free is None or free > 2**20
