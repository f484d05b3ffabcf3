"""Duality-gap certificates for any MKL candidate (the Certificates and Losses pages).

Given weights :math:`\\mu` and dual coefficients :math:`\\alpha` from *any*
solver, mklopt computes by itself, for the problem's loss :math:`\\ell`,

.. math::

    P &= \\tfrac12 \\sum_m \\mu_m s_m(\\alpha) + C \\min_b \\sum_i \\ell(y_i, f_i + b),
         \\qquad f = \\sum_m \\mu_m K_m c(\\alpha),\\\\
    G &= D_\\ell(\\alpha) - \\tfrac12 \\sigma_\\Theta\\bigl(s(\\alpha)\\bigr),

for weights :math:`\\mu` in Θ *as given* (their violation of Θ is part of the
certificate: an infeasible candidate is never certified, and repair by
projection onto Θ is explicit), after projecting :math:`\\alpha` onto the
loss's dual set :math:`A_\\ell`. For the hinge :math:`c = y\\circ\\alpha`,
:math:`D = 1^\\top\\alpha`, :math:`A = \\{0\\le\\alpha\\le C,\\ y^\\top\\alpha=0\\}`, and the best
bias is found exactly at the breakpoints :math:`b = y_i - f_i`; every loss
supplies its exact offset rule (:mod:`mklopt.losses`). Weak duality gives
:math:`G \\le \\mathrm{OPT} \\le P`; the gap is reported absolute and relative
to the problem's value (:func:`relative_gap`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_kernel_set, check_C, check_vector
from ..kernels import KernelSet
from ..exceptions import InvalidInputError, NotPSDError
from ..losses import Hinge, Loss, as_loss, best_bias, hinge_sum, project_alpha
from ..regularizers import Regularizer, as_regularizer
from .bounds import Certificate, objective_scale, relative_gap
from .feasibility import FEASIBILITY_TOL, convention_hint, relative_violation

__all__ = ["certify", "psd_kernel_set", "PrimalPoint", "certificate", "check_loss_C", "rounding_bound",
           "ROUNDING_SHARE",
           "primal_point_certificate", "project_alpha",
           "best_bias", "hinge_sum", "relative_gap", "relative_violation", "FEASIBILITY_TOL"]


HINGE = Hinge()


@dataclass
class _AlphaTerms:
    """Everything of a certificate that depends on alpha only: one pass over the stack."""

    alpha: np.ndarray  # projected onto the loss's dual-feasible set
    coef: np.ndarray  # signed coefficients c(alpha), (n,) or (T, n)
    s: np.ndarray  # quadratic terms s_m(alpha)
    Kc: np.ndarray  # K_m c, shape (M, n) or (M, T, n)
    gain: float  # D(alpha), the loss's part of the dual
    dual: float  # D(alpha) - sigma_Theta(s) / 2: a lower bound whatever the weights
    kernels: KernelSet | None = None  # for the rounding bound (no copy)


def _alpha_terms(kernels: KernelSet, y: np.ndarray, alpha: np.ndarray, C: float,
                 regularizer: Regularizer, loss: Loss = HINGE) -> _AlphaTerms:
    a = loss.project(alpha, y, C)
    coef = loss.coef(a, y)
    s, Kc = kernels.products(coef)
    gain = loss.gain(a, y, C)
    return _AlphaTerms(a, coef, s, Kc, gain, gain - regularizer.dual_penalty(s), kernels)


def weighted_sum(mu: np.ndarray, Kc: np.ndarray) -> np.ndarray:
    """:math:`\\sum_m \\mu_m (K_m c)`: ``np.tensordot(mu, Kc, axes=1)``'s own product, without its
    Python bookkeeping (a tenth of a millisecond, paid at every step of the interleaved loop)."""
    weights = np.asarray(mu, dtype=float).reshape(1, -1)
    return np.dot(weights, Kc.reshape(Kc.shape[0], -1)).reshape(Kc.shape[1:])


def _evaluate(terms: _AlphaTerms, y: np.ndarray, mu: np.ndarray, C: float,
              regularizer: Regularizer, feasible: bool = True, loss: Loss = HINGE) -> Certificate:
    """Primal value at weights ``mu`` (``+inf`` with negative weights, where
    :math:`\\|w_m\\|^2/\\mu_m` is undefined) against the alpha-only dual value."""
    outputs = weighted_sum(mu, terms.Kc)
    bias, data_term = loss.data_term(outputs, y, C)
    negative = bool((mu < 0).any()) and not getattr(regularizer, "signed", False)  # signed: K_mu PSD in Θ
    primal = np.inf if negative else regularizer.primal_penalty(mu, terms.s) + data_term
    gap = primal - terms.dual
    message = ""
    if np.isfinite(gap):  # P and G as computed may be off by rounding: see ROUNDING_SHARE
        bound = rounding_bound(terms, mu, C, regularizer, loss, y, bias, data_term, outputs)
        if -gap > bound:  # only rounding may make the gap negative, and not by more than its bound
            message = negative_gap_message(gap, bound, C)
        elif gap < 0 or bound > ROUNDING_SHARE * max(abs(primal), abs(terms.dual)):
            primal, gap = primal + bound, gap + bound
    return Certificate(primal=primal, dual=terms.dual, gap=gap,
                       rel_gap=relative_gap(gap, primal, terms.dual, objective_scale(C, y.shape[-1])), bias=bias,
                       weights=mu.copy(), alpha=terms.alpha, s=terms.s, feasible=feasible,
                       gain=terms.gain, dual_coef=terms.coef, message=message)


#: The share of the objective above which the rounding bound widens a certified interval (it
#: always covers a negative gap): a tenth of the loops' default tolerance. Below it the bound
#: is left out: it is a worst case (every rounding error of one sign, every output counted in
#: the loss's sum) far above the errors measured (kernels scaled 1e6 to 1e-6: a bound of 1.8e-6
#: of P, the products 1e-15 off), and would refuse the gaps exact solvers reach there. Above
#: it the products themselves are in doubt: linear kernels of features offset by 1e8 (entries
#: ~1e16 after the default normalization) gave :math:`s_m` tens off, and a gap of 3e-4 was
#: certified around a dual value that was too high; widened, nothing is.
ROUNDING_SHARE = 1e-5


def negative_gap_message(gap: float, bound: float, C: float) -> str:
    """Why a certificate whose dual value exceeds its primal value certifies nothing."""
    return (f"uncertified: the dual value exceeds the primal value by {-gap:.3g}, beyond the "
            f"rounding bound {bound:.3g} of the certificate's arithmetic; weak duality cannot "
            f"fail, so a value under- or overflowed (C = {C:.3g}) or the candidate's data is "
            "not what it was solved on")


def rounding_bound(terms: _AlphaTerms, mu: np.ndarray, C: float, regularizer: Regularizer,
                   loss: Loss, y: np.ndarray, bias, data_term: float = 0.0,
                   outputs: np.ndarray | None = None) -> float:
    """A bound on the floating-point error of :math:`P - G`: added to a gap that came out
    negative, and to any gap where it exceeds :data:`ROUNDING_SHARE` of the objective.

    With :math:`\\gamma = (n + M + 2)\\,u` (:math:`u` the unit roundoff),
    :math:`\\kappa_m = \\max|K_m|` and :math:`\\|c\\|_1` the coefficients' 1-norm, each
    output :math:`f_i` is off by at most :math:`e = \\gamma\\sum_m\\mu_m\\kappa_m\\|c\\|_1`
    and each :math:`s_m` by :math:`\\delta_m = \\gamma\\kappa_m\\|c\\|_1^2`, so

    .. math:: |\\Delta(P - G)| \\le C L\\, N e + \\tfrac12\\mu^\\top\\delta + \\tfrac12\\sigma_\\Theta(\\delta),

    :math:`N` the number of outputs and :math:`L` the loss's Lipschitz constant in
    :math:`f` (:meth:`Loss.output_lipschitz`; 0 when the loss does not say, then
    only the quadratic terms are covered). The sums that form :math:`P` and :math:`G`
    themselves add :math:`\\gamma` times the magnitudes summed: the data term, the
    penalties, :math:`|D(\\alpha)|` and :math:`\\|y\\|_\\infty\\|c\\|_1` (the linear part
    of :math:`D`, whose terms may cancel). ``outputs``: :math:`\\sum_m\\mu_m K_m c` where the
    caller has it. The kernels' largest entries take one pass over a dense stack, once (the set
    keeps them).
    """
    M, n = terms.kernels.M, terms.kernels.n
    gamma = (n + M + 2) * np.finfo(float).eps
    kappa = terms.kernels.max_abs()
    c1 = float(np.sum(np.abs(terms.coef)))
    e = gamma * float(np.dot(np.abs(mu), kappa)) * c1
    delta = gamma * kappa * c1 ** 2
    outputs = weighted_sum(mu, terms.Kc) if outputs is None else outputs
    lip = loss.output_lipschitz(outputs, y, C, bias)
    sums = (abs(data_term) + abs(terms.gain) + float(np.max(np.abs(y), initial=0.0)) * c1
            + 0.5 * float(np.dot(np.abs(mu), np.abs(terms.s))) + abs(terms.gain - terms.dual))
    return (C * lip * outputs.size * e + 0.5 * float(np.dot(np.abs(mu), delta))
            + regularizer.dual_penalty(delta) + gamma * sums)


def certificate(kernels: KernelSet, y: np.ndarray, weights: np.ndarray, alpha: np.ndarray,
                C: float, regularizer: Regularizer, loss: Loss = HINGE) -> Certificate:
    """Certificate of a candidate whose weights are in Θ up to solver noise; see :func:`certify`.

    The weights are moved into Θ (``into_set``: noise-level repairs only) and
    alpha is projected onto the dual-feasible set. One pass over the kernel
    stack yields all :math:`s_m` and :math:`K_m(y\\circ\\alpha)`; :math:`f` is
    their weighted sum.
    """
    terms = _alpha_terms(kernels, y, alpha, C, regularizer, loss)
    return _evaluate(terms, y, regularizer.into_set(weights), C, regularizer, loss=loss)


@dataclass
class PrimalPoint:
    """A primal solution in function form: :math:`f = \\sum_m K_m \\beta_m` on the training set."""

    penalty: float
    outputs: np.ndarray
    weights: np.ndarray
    coef: np.ndarray


def primal_point_certificate(kernels: KernelSet, y: np.ndarray, C: float, alpha: np.ndarray,
                             regularizer: Regularizer, point) -> Certificate:
    """Certificate whose upper bound comes from an explicit primal point.

    For formulations whose primal solution has no kernel-weight form (block
    norms :math:`b > 2`): ``point`` gives the regularization value
    :math:`R(w)`, the training outputs :math:`f = \\sum_m L_m w_m`, the reported
    weights and the per-kernel coefficients :math:`\\beta` with
    :math:`K_m\\beta_m = L_m w_m`. Then :math:`P = R(w) + C\\min_b\\sum_i
    \\max(0, 1-y_i(f_i+b))` and :math:`G = 1^\\top\\alpha - \\text{dual_penalty}(s(\\alpha))`.
    """
    a = project_alpha(alpha, y, C)
    s, _ = kernels.products(y * a)
    bias, hinge = best_bias(point.outputs, y)
    primal = point.penalty + C * hinge
    dual = float(np.sum(a)) - regularizer.dual_penalty(s)
    gap = primal - dual
    message = negative_gap_message(gap, 0.0, C) if gap < 0 else ""
    return Certificate(primal=primal, dual=dual, gap=gap,
                       rel_gap=relative_gap(gap, primal, dual, objective_scale(C, y.size)),
                       bias=bias, weights=point.weights, alpha=a, s=s, dual_coef=point.coef,
                       gain=float(np.sum(a)), message=message)


def certify(kernels, y, weights, alpha, *, C: float = 1.0, p: float = 1.0,
            regularizer: Regularizer | None = None, repair: bool = False,
            feasibility_tol: float = FEASIBILITY_TOL, loss="hinge", epsilon: float | None = None,
            nu: float | None = None) -> Certificate:
    """Certify any candidate ``(weights, alpha)`` as given: feasibility, primal, dual and gap.

    Parameters
    ----------
    kernels : KernelSet or array (M, n, n)
    y : array (n,)
        Labels as the loss takes them: two classes for the hinge (the larger
        maps to +1), real targets for regression, classes for ``"ovr_hinge"``,
        ignored (may be None) for ``"one_class"``.
    weights : array (M,)
        Candidate kernel weights, certified **as given**: their violation of
        Θ (relative to the larger of :math:`\\|\\mu\\|_\\infty` and the extent of Θ in
        their direction, :func:`relative_violation`; negativity included)
        must be at most ``feasibility_tol``; a larger one gives
        ``feasible=False`` and the candidate is never certified.
    alpha : array (n,) or (n_classes, n)
        Candidate dual coefficients; projected onto the loss's dual set (for
        the hinge :math:`\\{0\\le\\alpha\\le C, y^\\top\\alpha=0\\}`; any alpha gives
        a valid dual value).
    C : float
        Soft-margin constant.
    p : float
        Weight norm (Θ = {μ >= 0, ||μ||_p <= 1}) when ``regularizer`` is None.
    regularizer : Regularizer, optional
        Any weight set Θ.
    repair : bool
        Certify the Euclidean projection of ``weights`` onto Θ instead (and
        say so in ``message``; ``repaired=True``).
    feasibility_tol : float
        Relative violation of Θ still accepted as solver noise (default 1e-8).
    loss : str or Loss
        ``"hinge"`` (default), ``"epsilon_insensitive"``, ``"squared_error"``,
        ``"one_class"``, ``"ovr_hinge"`` or a :class:`~mklopt.losses.Loss`.
    epsilon, nu : float, optional
        Parameters of ``"epsilon_insensitive"`` and ``"one_class"``.

    Returns
    -------
    Certificate
        ``dual <= OPT <= primal`` when ``feasible``; ``rel_gap = (primal - dual)
        / max(|primal|, |dual|, 1e-12 min(C, 1) n)``; ``certified(tol)`` is the verdict.
    """
    from .._validation import check_tol

    ks = psd_kernel_set(kernels)
    loss = as_loss(loss, epsilon=epsilon, nu=nu)
    y_pm, _ = loss.check_labels(y, ks.n)
    C = check_loss_C(C, loss)
    reg = as_regularizer(regularizer, p)
    feasibility_tol = check_tol(feasibility_tol, "feasibility_tol")
    weights = check_vector(weights, ks.M, "weights")
    alpha = check_vector(alpha, y_pm.size, "alpha", shape=y_pm.shape).reshape(y_pm.shape)
    reg.check(ks.M)
    reg.check_points(ks.n)
    violation = relative_violation(reg, weights, feasibility_tol)
    terms = _alpha_terms(ks, y_pm, alpha, C, reg, loss)  # shared by every verdict below
    if violation <= feasibility_tol:
        cert = _evaluate(terms, y_pm, reg.into_set(weights), C, reg, loss=loss)
        cert.violation = violation
        return cert
    # the message's point is a cheap feasible one (the projection itself where it is cheap);
    # a repair asked for is the projection
    nearest = _evaluate(terms, y_pm, reg.project(weights) if repair else reg.nearby_point(weights), C,
                        reg, loss=loss)
    outside = f"the weights are outside the weight set {reg.name} by {violation:.3g} (relative)"
    if repair:
        nearest.violation, nearest.repaired = violation, True
        nearest.message = f"repaired: {outside}; certified their projection onto it"
        return nearest
    cert = _evaluate(terms, y_pm, weights, C, reg, feasible=False, loss=loss)
    cert.violation = violation
    cert.message = (f"not certified: {outside}; a nearby feasible point certifies at rel_gap "
                    f"{nearest.rel_gap:.2e} (repair=True / --repair)."
                    + convention_hint(reg, weights))
    return cert


def psd_kernel_set(kernels) -> KernelSet:
    """The kernels as a PSD-validated :class:`KernelSet`: certificates assume PSD kernels.

    Weak duality :math:`G \\le \\mathrm{OPT} \\le P` needs the problem convex,
    i.e. every :math:`K_m \\succeq 0`. A set built with ``psd=False`` is
    validated again (the PSD screen); one that is not PSD is refused.
    """
    ks = as_kernel_set(kernels)
    if ks.psd:
        return ks
    try:
        return KernelSet(ks)
    except NotPSDError as exc:
        raise NotPSDError(f"certificates assume PSD kernels (weak duality needs a convex problem), "
                          f"and these were accepted with psd=False: {exc}") from None


def check_loss_C(C, loss: Loss) -> float:
    """C for a loss that uses it; 1 (the only accepted value) for one that does not."""
    C = check_C(C)
    if not loss.uses_C and C != 1.0:
        raise InvalidInputError(f"loss '{loss.name}' has no C (its parameter sets the trade-off); "
                                f"leave C at 1, got C = {C:g}.")
    return C
