"""The second-order step's QP over Θ: the face's KKT system against HiGHS' QP solver.

Reference: HiGHS (``ThetaQP.highs``) on the same QP; the objective of the face's answer must
equal HiGHS' optimum and the point be in Θ, whatever face the guess starts from.
"""

from __future__ import annotations

import numpy as np
import pytest

from mklopt.drivers._theta_qp import ThetaQP
from mklopt.drivers.lp_master import polyhedral_set
from mklopt.regularizers import L1, LpBall, WeightedL1


def _theta(kind: str, M: int):
    return {"l1": polyhedral_set(L1(), M), "box": polyhedral_set(LpBall(np.inf), M),
            "weighted": polyhedral_set(WeightedL1(np.linspace(0.5, 2.0, M)), M)}[kind]


def _value(x, c, H):
    return float(c @ x + 0.5 * x @ H @ x)


def _random_qp(rng, M: int):
    """A convex model like the second-order step's: H PSD with a spread of eigenvalues."""
    A = rng.normal(size=(M, M)) * rng.uniform(0.1, 3.0, size=M)
    return rng.normal(size=M) * rng.uniform(0.1, 5.0), A @ A.T + 1e-6 * np.eye(M)


def _in_theta(x, theta) -> bool:
    ok = np.all(x >= 0) and np.all(x <= theta.upper)
    return bool(ok and (theta.a is None or theta.a @ x <= 1 + 1e-12))


@pytest.mark.parametrize("kind", ["l1", "box", "weighted"])
@pytest.mark.parametrize("M", [1, 2, 5, 12])
def test_the_face_minimizer_is_highs_minimizer(kind, M):
    rng = np.random.default_rng(M)
    theta = _theta(kind, M)
    qp = ThetaQP(theta)
    for trial in range(60):
        c, H = _random_qp(rng, M)
        start = rng.dirichlet(np.ones(M)) * rng.integers(0, 2, size=M)  # some weights at 0
        start = start if kind != "box" else np.clip(rng.normal(0.5, 0.6, size=M), 0, 1)
        x = qp(start, c, H)
        reference = qp.highs(c, H)
        assert x is not None and reference is not None
        assert _in_theta(x, theta)
        scale = max(1.0, abs(_value(reference, c, H)))
        assert _value(x, c, H) <= _value(reference, c, H) + 1e-8 * scale, (trial, x, reference)
    assert qp.face_hits > 0  # the closed form answered some of them


def test_a_face_that_fails_the_kkt_conditions_is_left_for_the_minimizers_face():
    """From the uniform weights, a model whose minimizer is a vertex: the step towards the
    face's minimizer is stopped by the bounds, which join the face, until the vertex; no HiGHS."""
    theta = _theta("l1", 3)
    qp = ThetaQP(theta)
    H, c = np.eye(3), np.array([-10.0, 0.0, 0.0])
    x = qp(np.full(3, 1 / 3), c, H)
    np.testing.assert_allclose(x, [1.0, 0.0, 0.0], atol=1e-12)
    assert qp.highs_calls == 0 and qp.face_hits == 1


def test_a_constraint_with_a_negative_multiplier_leaves_the_face():
    """From a vertex, a model whose minimizer is inside the simplex: the fixed weights' multipliers
    are negative, they leave the face one at a time, and the answer is the closed form's."""
    theta = _theta("l1", 3)
    qp = ThetaQP(theta)
    H, c = np.eye(3), np.array([-0.5, -0.4, -0.3])  # the simplex's row active: x = -c + lam, sum 1
    x = qp(np.array([1.0, 0.0, 0.0]), c, H)
    np.testing.assert_allclose(x, -c + (1 - (-c).sum()) / 3, atol=1e-12)
    assert qp.highs_calls == 0


@pytest.mark.parametrize("M", [2, 5, 12])
def test_from_any_feasible_start_no_highs_call_is_needed(M):
    """Random models and random feasible weights (interior, faces, vertices): the active-set
    method alone answers, HiGHS' optimum to 1e-8."""
    rng = np.random.default_rng(100 + M)
    theta = _theta("l1", M)
    qp = ThetaQP(theta)
    for _ in range(100):
        c, H = _random_qp(rng, M)
        start = rng.dirichlet(np.ones(M)) * rng.integers(0, 2, size=M) * rng.uniform(0.5, 1.0)
        x, reference = qp(start, c, H), qp.highs(c, H)
        scale = max(1.0, abs(_value(reference, c, H)))
        assert _in_theta(x, theta) and _value(x, c, H) <= _value(reference, c, H) + 1e-8 * scale
    assert qp.highs_calls == 0


def test_a_singular_face_system_goes_to_highs():
    """A Hessian that is zero on the free weights: no face answer, HiGHS' (a vertex) instead."""
    qp = ThetaQP(_theta("l1", 2))
    x = qp(np.array([0.5, 0.5]), np.array([-1.0, -2.0]), np.zeros((2, 2)))
    assert qp.highs_calls == 1
    np.testing.assert_allclose(x, [0.0, 1.0], atol=1e-9)
