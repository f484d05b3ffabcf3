"""Re-certifying a (saved) :class:`~mklopt.results.result.MKLResult` in the form it was solved in.

A result records its C, weight set (or penalty), loss and a fingerprint of
its kernels and labels (:mod:`mklopt.results.result_io`); :func:`certify_result`
recomputes mklopt's certificate from them: the generic certificate of
:mod:`mklopt.certificates` for weight sets, the per-kernel primal point for
block norms :math:`b > 2`, the LP certificate for Voted Kernel Regularization.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._validation import as_kernel_set, check_C
from .bounds import Certificate
from .gap import HINGE, FEASIBILITY_TOL, PrimalPoint, certify, primal_point_certificate, psd_kernel_set
from ..exceptions import InvalidInputError
from ..kernels import KernelSet
from .krr import krr_certificate
from ..losses import LOSSES, Loss, as_loss
from ..regularizers import BlockNorm, KRRProblem, LpBall, Regularizer, Spectrahedron, VKRPenalty, check_p
from .fingerprint import check_fingerprint
from .vkr import vkr_certificate

__all__ = ["certify_result", "result_loss", "block_norm_point"]


def certify_result(kernels, y, result, *, C: float | None = None, p: float | None = None,
                   regularizer: Regularizer | None = None, repair: bool = False,
                   feasibility_tol: float = FEASIBILITY_TOL, loss=None) -> Certificate:
    """Re-certify a (saved) :class:`MKLResult` against its kernels and labels.

    C and the weight set come from the result; an explicit ``C``/``p`` that
    contradicts it is an error, and so are kernels or labels whose
    fingerprint differs from the one saved. A result whose weight set is
    user code (a :class:`ConstraintSet`) needs ``regularizer=``, and one whose
    loss is a user subclass of :class:`~mklopt.losses.Loss` needs ``loss=``.

    A result without a global certificate (``info["certified_globally"] is
    False``: DCA, polynomial KRR) gives a certificate with ``local=True``: never
    :meth:`~mklopt.certificates.bounds.Certificate.certified`, at most ``certified_locally``.
    """
    cert = _certify_result(kernels, y, result, C, p, regularizer, repair, feasibility_tol, loss)
    if result.info.get("certified_globally") is False:
        cert = dataclasses.replace(cert, local=True)
    return cert


def _certify_result(kernels, y, result, C, p, regularizer, repair, feasibility_tol,
                    loss) -> Certificate:
    if isinstance(result.regularizer, VKRPenalty):  # kernels need not be PSD there
        return _recertify_vkr(kernels, y, result, C, p)
    if isinstance(result.regularizer, KRRProblem):  # kernel ridge regression: lam, mu0, radius saved
        return _recertify_krr(kernels, y, result, C, p, regularizer, repair, feasibility_tol)
    ks = psd_kernel_set(kernels)
    loss = result_loss(result, loss)
    y_pm, _ = loss.check_labels(y, ks.n)
    check_fingerprint(result.fingerprint, ks, y_pm)
    if C is not None and result.C is not None and not np.isclose(check_C(C), result.C, rtol=1e-12):
        raise InvalidInputError(f"C = {C} contradicts the result, which was solved with C = {result.C}.")
    C = result.C if result.C is not None else C
    if C is None:
        raise InvalidInputError("the result does not record C; pass C=.")
    reg = regularizer if regularizer is not None else result.regularizer
    if isinstance(reg, Spectrahedron) and reg.K is None:  # a loaded result: its set on these kernels
        reg = reg.bind(ks.K)
    if p is not None:
        p = check_p(p)
        if reg is not None and not (isinstance(reg, LpBall) and reg.p == p):
            raise InvalidInputError(f"p = {p:g} contradicts the result's weight set {reg!r}.")
    if reg is None and p is None:
        raise InvalidInputError(
            "the result's weight set is user code that cannot be saved; pass regularizer=.")
    coef = None if result.dual_coef is None else np.asarray(result.dual_coef)
    if isinstance(reg, BlockNorm) and coef is not None and coef.shape == (ks.M, ks.n):
        # solved and certified as a per-kernel primal point (b > 2): re-certify that point
        point = block_norm_point(ks, coef, reg.b, result.weights)
        return primal_point_certificate(ks, y_pm, C, result.alpha, reg, point)
    return certify(ks, y, result.weights, result.alpha, C=C, p=1.0 if p is None else p,
                   regularizer=reg, repair=repair, feasibility_tol=feasibility_tol, loss=loss)


def _recertify_vkr(kernels, y, result, C, p) -> Certificate:
    """A saved VKR result: its LP certificate at the :math:`\\Lambda` it was solved with."""
    if C is not None or p is not None:
        raise InvalidInputError("a VKR result has no C or p (its penalties are saved with it); drop them.")
    ks = as_kernel_set(kernels, psd=False, symmetric=False)
    y_pm, _ = HINGE.check_labels(y, ks.n)
    check_fingerprint(result.fingerprint, ks, y_pm)
    return vkr_certificate(ks.K, y_pm, result.alpha, result.regularizer.Lam)


def _recertify_krr(kernels, y, result, C, p, regularizer, repair: bool,
                   feasibility_tol: float) -> Certificate:
    """A saved KRR result (``krr_l2`` and its drivers): its certificate at the saved problem."""
    if (C is not None and C != 1.0) or p is not None or regularizer is not None:
        raise InvalidInputError("a kernel ridge regression result has no C, p or regularizer (its "
                                "lam, mu0 and radius are saved with it); drop them.")
    ks = psd_kernel_set(kernels)
    targets, _ = LOSSES["squared_error"]().check_labels(y, ks.n)
    check_fingerprint(result.fingerprint, ks, targets)
    return krr_certificate(ks, targets, result.weights, result.regularizer, repair=repair,
                           feasibility_tol=feasibility_tol)


def block_norm_point(kernels: KernelSet, coef: np.ndarray, b: float, weights: np.ndarray) -> PrimalPoint:
    """The block-norm primal point of per-kernel coefficients :math:`\\beta` (shape (M, n)).

    .. math:: w_m = L_m^\\top\\beta_m,\\quad \\|w_m\\|^2 = \\beta_m^\\top K_m\\beta_m,\\quad
              f = \\sum_m K_m\\beta_m,\\quad R(w) = \\tfrac12\\big\\|(\\|w_m\\|)_m\\big\\|_b^2,

    which is how ``lp_block_primal`` (b > 2) certifies its answer, so a saved
    result is re-certified in the form it was solved in.
    """
    coef = np.asarray(coef, dtype=float)
    Kb = np.einsum("mij,mj->mi", kernels.K, coef)
    norms = np.sqrt(np.clip(np.einsum("mi,mi->m", coef, Kb), 0.0, None))
    penalty = 0.5 * float(np.linalg.norm(norms, ord=b)) ** 2
    return PrimalPoint(penalty=penalty, outputs=Kb.sum(axis=0), weights=np.asarray(weights, float), coef=coef)


def result_loss(result, loss=None) -> Loss:
    """The loss of a (saved) result, rebuilt from its name and parameters (or ``loss=``).

    A loss given by name takes the result's saved parameters (ν, ε); a loss object
    whose parameters differ from the saved ones is an error, never silently used.
    """
    if loss is not None:
        named = isinstance(loss, str)
        loss = as_loss(loss)
        if loss.name != result.loss:
            raise InvalidInputError(f"loss {loss.name!r} contradicts the result, solved with {result.loss!r}.")
        saved = result.loss_params or {}
        if named and result.loss in LOSSES:
            return LOSSES[result.loss](**saved)
        given = loss.params()
        if any(not np.isclose(given.get(k, v), v, rtol=1e-12, atol=0.0) for k, v in saved.items()):
            raise InvalidInputError(f"loss parameters {given} contradict the result, solved with {saved}.")
        return loss
    if result.loss not in LOSSES:
        raise InvalidInputError(f"the result's loss {result.loss!r} is user code; pass loss=.")
    return LOSSES[result.loss](**(result.loss_params or {}))
