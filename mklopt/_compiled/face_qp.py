"""The second-order step's QP over a polyhedral Θ by the primal active-set method, compiled.

.. math:: \\min_{\\mu\\in\\Theta}\\ c^\\top\\mu + \\tfrac12\\mu^\\top H\\mu,\\qquad
          \\Theta = \\{\\mu : 0\\le\\mu\\le u,\\ a^\\top\\mu\\le 1\\}

(J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer 2006, Algorithm
16.3; the method and its stopping rule are on :mod:`~mklopt.drivers._theta_qp`). A face is
the weights at 0 (``at_zero``), those at their bound (``at_upper``) and whether the row
:math:`a^\\top\\mu = 1` is kept (``row``). Each face is one KKT solve of at most M + 1
equations and a handful of vector passes: a few microseconds here against ~40 µs as NumPy
calls holding the GIL, once per weight step of every class running side by side.

:func:`face_qp` writes the minimizer into ``x`` and returns True, or returns False where
the faces run out (``max_faces``) or a face's system is singular (the caller asks HiGHS).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cache import locked_cache

__all__ = ["face_qp"]


@locked_cache
@njit(cache=True, inline="always")
def _dot(u, v):
    """:math:`u^\\top v` in a loop (a BLAS call costs its compile time, not worth it at M)."""
    total = 0.0
    for m in range(u.size):
        total += u[m] * v[m]
    return total


@locked_cache
@njit(cache=True, inline="always", error_model="numpy")
def _face_minimizer(H, c, target, at_zero, at_upper, row, a):
    """Write the face's minimizer on its free weights into ``target`` (its other entries: the
    bound values); ``(solved, row multiplier)``."""
    free = np.empty(target.size, np.int64)
    size = 0
    for m in range(target.size):
        if not (at_zero[m] or at_upper[m]):
            free[size] = m
            size += 1
    k = size + (1 if row else 0)
    if k == 0:
        return True, 0.0
    system, rhs = np.zeros((k, k)), np.empty(k)
    for i in range(size):
        s = free[i]
        total = c[s]
        for m in range(target.size):
            total += H[s, m] * target[m]  # target: 0 on the free weights
        rhs[i] = -total
        for j in range(size):
            system[i, j] = H[s, free[j]]
    if row:
        rhs[k - 1] = 1.0 - _dot(a, target)
        for i in range(size):
            system[k - 1, i] = system[i, k - 1] = a[free[i]]
    if not _solve_small(system, rhs):
        return False, 0.0
    for i in range(size):
        target[free[i]] = rhs[i]
    return True, rhs[k - 1] if row else 0.0


@locked_cache
@njit(cache=True, inline="always", error_model="numpy")
def _solve_small(A, b):
    """``b <- A^{-1} b`` by Gaussian elimination with partial pivoting (A overwritten), as
    LAPACK's ``gesv`` (at most M + 1 equations: no call worth its compile time); False where
    a pivot is exactly 0 or the solution is not finite."""
    k = b.size
    for j in range(k):
        pivot = j
        for i in range(j + 1, k):
            if abs(A[i, j]) > abs(A[pivot, j]):
                pivot = i
        if A[pivot, j] == 0.0:
            return False
        if pivot != j:
            for col in range(k):
                A[j, col], A[pivot, col] = A[pivot, col], A[j, col]
            b[j], b[pivot] = b[pivot], b[j]
        for i in range(j + 1, k):
            factor = A[i, j] / A[j, j]
            for col in range(j, k):
                A[i, col] -= factor * A[j, col]
            b[i] -= factor * b[j]
    for j in range(k - 1, -1, -1):
        total = b[j]
        for col in range(j + 1, k):
            total -= A[j, col] * b[col]
        b[j] = total / A[j, j]
    for j in range(k):
        if not np.isfinite(b[j]):
            return False
    return True


@locked_cache
@njit(cache=True, inline="always", error_model="numpy")
def _towards(x, target, at_zero, at_upper, row, upper, a, has_row):
    """Move ``x`` as far towards ``target`` as Θ allows; add the bound that stops it to the
    face (in place). Returns ``(reached, row)``: the target reached, the row on the face."""
    M = x.size
    blocked, limit = -1, np.inf
    for m in range(M):
        step = target[m] - x[m]
        if at_zero[m] or at_upper[m]:
            continue
        if step < 0.0:
            bound_limit = x[m] / -step
        elif step > 0.0 and upper[m] < np.inf:
            bound_limit = (upper[m] - x[m]) / step
        else:
            continue
        if bound_limit < limit:
            blocked, limit = m, bound_limit
    row_limit = np.inf
    if not row and has_row:
        along = 0.0
        for m in range(M):
            along += a[m] * (target[m] - x[m])
        if along > 0.0:
            row_limit = max(1.0 - _dot(a, x), 0.0) / along
    length = min(limit, row_limit)
    if length >= 1.0:
        for m in range(M):
            x[m] = target[m]
        return True, row
    falling = blocked >= 0 and target[blocked] < x[blocked]
    for m in range(M):
        x[m] += length * (target[m] - x[m])
    if row_limit <= limit:
        return False, True
    if falling:
        at_zero[blocked], x[blocked] = True, 0.0
    else:
        at_upper[blocked], x[blocked] = True, upper[blocked]
    return False, row


@locked_cache
@njit(cache=True, inline="always", error_model="numpy")
def _leaving(at_zero, at_upper, row, x, lam, c, H, a, kkt_tol):
    """Drop from the face the constraint with the most negative multiplier at its minimizer
    ``x`` (in place). Returns ``(optimal, row)``: no multiplier negative, the row kept."""
    Hx = np.empty(x.size)
    for m in range(x.size):
        Hx[m] = _dot(H[m], x)
    scale = 1e-300
    for m in range(x.size):
        scale = max(scale, abs(c[m]), abs(Hx[m]))
    worst, lowest = -1, np.inf
    for m in range(x.size):
        gradient = Hx[m] + c[m] + (lam * a[m] if row else 0.0)
        multiplier = gradient if at_zero[m] else (-gradient if at_upper[m] else np.inf)
        if multiplier < lowest:
            worst, lowest = m, multiplier
    if min(lowest, lam if row else np.inf) >= -kkt_tol * scale:
        return True, row
    if row and lam < lowest:
        return False, False
    at_zero[worst] = at_upper[worst] = False
    return False, row


@locked_cache
@njit(cache=True, nogil=True, error_model="numpy")
def face_qp(H, c, mu, upper, a, has_row, scale, on_bound, kkt_tol, max_faces, x):
    """The minimizer over Θ into ``x``, from the face of ``mu``; False where the faces ran
    out or a system was singular. ``a`` is zero where Θ has no row (``has_row`` False);
    ``scale``: the bounds where finite, else 1 (what "on a bound" is measured against)."""
    M = mu.size
    at_zero, at_upper = np.empty(M, np.bool_), np.empty(M, np.bool_)
    for m in range(M):
        at_zero[m] = mu[m] <= on_bound * scale[m]
        at_upper[m] = not at_zero[m] and mu[m] >= upper[m] - on_bound * scale[m]
        x[m] = 0.0 if at_zero[m] else (upper[m] if at_upper[m] else min(max(mu[m], 0.0), upper[m]))
    row = has_row and _dot(a, mu) >= 1.0 - on_bound
    target = np.empty(M)
    for _ in range(max_faces):
        for m in range(M):
            target[m] = upper[m] if at_upper[m] else 0.0
        solved, lam = _face_minimizer(H, c, target, at_zero, at_upper, row, a)
        if not solved:
            return False
        reached, row = _towards(x, target, at_zero, at_upper, row, upper, a, has_row)
        if not reached:
            continue
        optimal, row = _leaving(at_zero, at_upper, row, x, lam, c, H, a, kkt_tol)
        if optimal:
            for m in range(M):
                x[m] = min(max(x[m], 0.0), upper[m])
            return True
    return False
