"""Weights of any sign with a PSD combination of fixed trace (Lanckriet et al. 2004).

.. math::

    \\Theta_c=\\Big\\{\\mu\\in\\mathbb R^M:\\ K_\\mu=\\sum_m\\mu_mK_m\\succeq0,\\ \\operatorname{Tr}K_\\mu=c\\Big\\}

The one weight set of mklopt whose weights may be negative (``signed = True``): a
combination may subtract a kernel as long as the result stays PSD. It holds the
kernel stack (its constraints are an :math:`n\\times n` LMI), so it is for small
:math:`n`; a problem stated over it is a semidefinite program (Clarabel, SCS). The
support function :math:`\\sigma(s)=\\max_{\\mu\\in\\Theta_c}s^\\top\\mu` that the certificate
needs is computed by a primal-dual interior point on the kernels' joint range
(:mod:`~mklopt.regularizers.lmi_interior`: Newton systems in the M - 1 free weights; on a
subspace of the range above order 80, :mod:`~mklopt.regularizers.lmi_subspace`)
and bounded from above by its dual matrix, so the dual bound stays valid whatever
the accuracy of the steps. Candidates are repaired
explicitly: the trace by scaling, a slightly indefinite :math:`K_\\mu` by mixing in the
uniform combination :math:`\\mu_u` (PSD, same trace) just enough.
"""

from __future__ import annotations

import numbers
import cvxpy as cp
import numpy as np

from ..exceptions import InvalidInputError
from .auxiliary import solve_auxiliary
from .._options import real_array
from .base import Regularizer
from ._joint_range import _JointRange

__all__ = ["Spectrahedron"]


#: Eigenvalues above -NOISE * eps * n * ||K_mu|| count as PSD (rounding noise).
NOISE = 10.0


class Spectrahedron(_JointRange, Regularizer):
    """:math:`\\{\\mu: \\sum_m\\mu_mK_m\\succeq0,\\ \\operatorname{Tr}K_\\mu=c\\}` for a stack ``K`` (M, n, n).

    Parameters
    ----------
    K : array (M, n, n), optional
        The kernels (symmetric PSD; small n: the set's constraints are an n x n LMI).
        Without them (a saved result's set, loaded) only ``trace`` is known, and
        :meth:`bind` gives the set on the kernels again.
    trace : float, optional
        :math:`c > 0`; default the mean of the kernels' traces.
    """

    signed = True

    def __init__(self, K=None, trace: float | None = None) -> None:
        self.name = "spectrahedron"
        if K is None:
            if not isinstance(trace, numbers.Real) or isinstance(trace, bool) or not np.isfinite(trace) \
                    or trace <= 0:
                raise InvalidInputError("Spectrahedron without kernels needs its trace c > 0.")
            self.K, self.c = None, float(trace)
            return
        K = real_array(K, "Spectrahedron's kernels")
        if K.ndim != 3 or K.shape[1] != K.shape[2] or not np.all(np.isfinite(K)):
            raise InvalidInputError("Spectrahedron needs a finite (M, n, n) kernel stack.")
        self.K = K
        self.traces = np.einsum("mii->m", K)
        c = float(np.mean(self.traces)) if trace is None else trace
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Real) or not np.isfinite(c) \
                or c <= 0:
            raise InvalidInputError(f"Spectrahedron: trace must be a positive number, got {trace!r}.")
        self.c = float(c)
        positive = self.traces > 0
        if not np.any(positive):
            raise InvalidInputError("Spectrahedron: every kernel has trace 0; no combination has trace c > 0.")
        self.uniform = np.where(positive, 1.0, 0.0) * self.c / self.traces[positive].sum()

    def __repr__(self) -> str:
        if self.K is None:
            return f"Spectrahedron(trace={self.c:.6g}, unbound)"
        return f"Spectrahedron(M={self.K.shape[0]}, n={self.K.shape[1]}, trace={self.c:.6g})"

    def bind(self, K) -> Spectrahedron:
        """The same set (same trace) on the kernel stack ``K``."""
        return Spectrahedron(K, self.c)

    def check(self, M: int) -> None:
        if self.K is None:
            raise InvalidInputError("this Spectrahedron was loaded without its kernels; bind it with "
                                    ".bind(K) (mklopt.certify_result does so from the kernels it is given).")
        if M != self.K.shape[0]:
            raise InvalidInputError(f"Spectrahedron holds {self.K.shape[0]} kernels but there are {M}.")

    def check_points(self, n: int) -> None:
        if self.K is not None and n != self.K.shape[1]:
            raise InvalidInputError(f"this Spectrahedron was built on kernels over {self.K.shape[1]} "
                                    f"points but the kernels have {n}; build it on the same kernels.")

    def combined(self, mu) -> cp.Expression:
        """:math:`K_\\mu` as a symmetric CVXPY expression."""
        M, n = self.K.shape[0], self.K.shape[1]
        flat = self.K.reshape(M, n * n).T @ mu
        square = cp.reshape(flat, (n, n), order="C")
        return (square + square.T) / 2

    def constraints(self, mu: cp.Variable) -> list[cp.Constraint]:
        self.check(mu.shape[0])
        return [self.combined(mu) >> 0, self.traces @ mu == self.c]

    def contains_zero(self, M: int) -> bool:
        return False

    def support(self, s) -> float:
        """A guaranteed upper bound on :math:`\\sigma(s)=\\max_{\\mu\\in\\Theta_c}s^\\top\\mu`.

        For any :math:`Z\\succeq0` and :math:`\\tau`, with :math:`w_m=s_m+\\langle Z,K_m\\rangle`
        and :math:`r=w-\\tau t` (:math:`t` the traces): on :math:`\\Theta_c`,
        :math:`s^\\top\\mu\\le w^\\top\\mu=\\tau c+r^\\top\\mu\\le\\tau c+\\|r\\|_2\\,c/\\sqrt{\\lambda_{\\min}(Q)}`,
        because :math:`\\mu^\\top Q\\mu=\\|K_\\mu\\|_F^2\\le(\\operatorname{Tr}K_\\mu)^2=c^2`
        (:math:`Q_{kl}=\\langle K_k,K_l\\rangle_F`); sharper, :math:`r^\\top\\mu\\le c\\sqrt{r^\\top Q^{-1}r}`
        (Cauchy-Schwarz in the :math:`Q` inner product), computed from the singular values
        :math:`\\sigma_j` of the flattened kernels (:meth:`gram`), each lowered by its rounding
        bound. Nearly dependent kernels (four RBF widths in ratio 1.2) keep a finite bound that
        way: the components of :math:`r` along a direction of small :math:`\\sigma_j` are as small.
        :math:`Z=WZ_rW^\\top` is the interior point's dual matrix at its last iterate
        (:meth:`maximize`); the bound holds whatever its accuracy.
        """
        s = np.asarray(s, dtype=float)
        self.check(s.size)
        size = float(np.max(np.abs(s), initial=0.0))
        if size == 0.0:
            return 0.0
        sigma, V = self.gram()
        u = s / size
        mu, Z = self.maximize(u)
        terms = np.einsum("mij,ij->m", self.reduced()[1], Z)
        w = u + terms
        tau = float(w @ self.traces) / float(self.traces @ self.traces)
        r = w - tau * self.traces
        bound = tau * self.c + self.c * float(np.linalg.norm((V.T @ r) / sigma))
        rounding = 1e-12 * (abs(tau * self.c) + self.c * float(np.abs(w).sum() + abs(tau) * np.abs(self.traces).sum())
                            / float(sigma[-1]))
        bound += rounding
        inside = float(u @ mu) if self.violation(mu) <= 0.0 else -np.inf
        return size * max(bound, inside)

    def maximize(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The interior point's last iterate for :math:`\\max_{\\mu\\in\\Theta_c}u^\\top\\mu`: ``(mu, Z_r)``.

        In :math:`\\mu=\\mu_u+Nd` (:math:`N` an orthonormal basis of :math:`t^\\perp`) the
        set is :math:`\\{d: I+\\sum_id_iW^\\top K_{N_i}W\\succ0\\}` on the joint range.
        """
        N = self.reduced()[0]
        scale = abs(float(u @ self.uniform)) + float(np.abs(u).sum()) * self.radius()
        solution = self.lmi().minimize(-(N.T @ u), gap=1e-11 * scale)
        return self.uniform + N @ solution.x, solution.Z

    def _lambda_min(self, mu: np.ndarray) -> tuple[float, float]:
        combined = np.tensordot(mu, self.K, axes=1)
        eigs = np.linalg.eigvalsh((combined + combined.T) / 2)
        noise = NOISE * np.finfo(float).eps * self.K.shape[1] * max(abs(eigs[0]), abs(eigs[-1]), 1e-300)
        return float(eigs[0]), float(noise)

    def violation(self, mu) -> float:
        """Trace and PSD violation relative to :math:`c`, rounding noise of both not counted."""
        mu = np.asarray(mu, dtype=float)
        low, noise = self._lambda_min(mu)
        rounding = NOISE * np.finfo(float).eps * float(np.abs(self.traces) @ np.abs(mu))
        trace = max(abs(float(self.traces @ mu) - self.c) - rounding, 0.0) / self.c
        return max(trace, max(-low - noise, 0.0) / self.c, 0.0)

    def boundary(self, mu: np.ndarray) -> float:
        """The least :math:`\\theta` with :math:`(1-\\theta)K_\\mu+\\theta K_{\\mu_u}\\succeq0` on the joint range.

        With :math:`\\gamma` the smallest eigenvalue of :math:`W^\\top K_\\mu W`:
        :math:`\\theta=-\\gamma/(1-\\gamma)` for :math:`\\gamma<0`, else 0.
        """
        W = self.whitening()
        A = W.T @ np.tensordot(mu, self.K, axes=1) @ W
        low = float(np.linalg.eigvalsh((A + A.T) / 2)[0]) if A.size else 0.0
        return -low / (1.0 - low) if low < 0 else 0.0

    def _uniform_inside(self) -> bool:
        """Whether the uniform combination is in the set (one eigendecomposition, kept)."""
        if not hasattr(self, "_uniform_ok"):
            self._uniform_ok = self.violation(self.uniform) <= 0.0
        return self._uniform_ok

    def into_set(self, mu, tol: float = 1e-12) -> np.ndarray:
        """Scale to the trace, then mix with the uniform combination just enough (exactly, on its range)."""
        mu = np.asarray(mu, dtype=float)
        trace = float(self.traces @ mu)
        if trace > 0:
            mu = mu * (self.c / trace)
        if self.violation(mu) <= 0.0 or not self._uniform_inside():
            return mu
        theta = self.boundary(mu)
        for extra in (0.0, 1e-14, 1e-12, 1e-10, 1e-8):  # rounding may leave the exact mix just outside
            mixed = (1 - min(theta + extra, 1.0)) * mu + min(theta + extra, 1.0) * self.uniform
            if self.violation(mixed) <= 0.0:
                return mixed
        return mu  # left infeasible, never certified

    def project(self, mu) -> np.ndarray:
        """The nearer of the SDP projection (repaired) and :meth:`into_set`, among those feasible.

        An interior-point projection onto a boundary point (a singular :math:`K_\\mu`)
        stops strictly inside, about the square root of its tolerance away; the
        explicit repair is exact there.
        """
        mu = np.asarray(mu, dtype=float)
        nu = cp.Variable(mu.size)
        scale = max(1.0, float(np.max(np.abs(mu))))
        solve_auxiliary(cp.Problem(cp.Minimize(cp.sum_squares((nu - mu) / scale)), self.constraints(nu)), self)
        points = [self.into_set(mu)] + ([] if nu.value is None else [self.into_set(nu.value)])
        feasible = [point for point in points if self.violation(point) <= 0.0] or points[-1:]
        return min(feasible, key=lambda point: float(np.linalg.norm(point - mu)))

    def nearby_point(self, mu) -> np.ndarray:
        """:meth:`into_set` (scaled to the trace, mixed with the uniform combination): an
        eigendecomposition, where the projection is an :math:`n\\times n` SDP. Its distance is at
        least the projection's, so a violation measured with it is never too small."""
        return self.into_set(mu)

    def distance_bounds(self, mu) -> tuple[float, float]:
        """``(low, high)`` around :math:`\\min_{\\nu\\in\\Theta_c}\\|\\mu-\\nu\\|_\\infty` without an SDP.

        High: the distance to :meth:`nearby_point`. Low: for :math:`\\nu\\in\\Theta_c`,
        :math:`\\lambda_{\\min}(K_\\mu)\\ge-\\|\\mu-\\nu\\|_\\infty\\sum_m\\|K_m\\|_2` and
        :math:`|t^\\top\\mu-c|\\le\\|\\mu-\\nu\\|_\\infty\\|t\\|_1`.
        """
        mu = np.asarray(mu, dtype=float)
        high = float(np.max(np.abs(mu - self.nearby_point(mu))))
        if not hasattr(self, "_norms"):
            self._norms = float(sum(np.abs(np.linalg.eigvalsh(K)).max() for K in self.K))
        low_eig, noise = self._lambda_min(mu)
        by_psd = max(-low_eig - noise, 0.0) / self._norms
        by_trace = abs(float(self.traces @ mu) - self.c) / float(np.abs(self.traces).sum())
        return min(max(by_psd, by_trace), high), high

    def centre(self, M: int) -> np.ndarray:
        """The uniform combination :math:`\\mu_u` (same trace c, PSD)."""
        self.check(M)
        return self.uniform.copy()

    def cut_master(self):
        """The cutting plane's master over this set (an interior point on the LMI, no SDP statement)."""
        from .spectrahedron_master import SpectrahedronMaster

        return SpectrahedronMaster(self)

    def argmin_weights(self, wnorm2):
        raise InvalidInputError("the spectrahedron has signed weights: there is no wrapper weight step; "
                                "solve it with formulation='lanckriet_sdp'.")
