"""The interleaved core's certificates: from its per-kernel gradients at every step, and
from the kernels themselves before it stops.

At each step the core knows the per-kernel gradients :math:`g_m = K_m c(\\alpha)` (M × n,
kept up to date from the SMO's changes), so :math:`s_m = c^\\top g_m` and
:math:`f = \\sum_m\\mu_m g_m` cost no pass over the stack (:func:`from_gradients`). Those
gradients carry the rounding of many small updates; a certificate that reaches the target
is therefore made again from the kernels (:func:`from_kernels`: α projected onto the
loss's feasible set, the products recomputed) before the loop may stop on it.
"""

from __future__ import annotations

import numpy as np

from ..certificates.gap import _AlphaTerms, _alpha_terms, _evaluate
from ..formulations import MKLData
from ..results.result import Certificate

__all__ = ["from_gradients", "from_kernels", "svm_gap"]


def from_gradients(data: MKLData, y: np.ndarray, alpha: np.ndarray, G: np.ndarray, Kc: np.ndarray,
                   mu: np.ndarray) -> Certificate:
    """The certificate at (μ, α) from the gradients ``G`` (T, M, n) of the T outputs (``Kc``: the
    same as certificates take them, (M, n) or (M, T, n))."""
    coef = data.loss.coef(alpha, y)
    s = (G @ coef.reshape(G.shape[0], -1, 1)).sum(axis=0)[:, 0]  # one batched product for all T outputs
    gain = data.loss.gain(alpha, y, data.C)
    terms = _AlphaTerms(alpha, coef, s, Kc, gain, gain - data.regularizer.dual_penalty(s), data.kernels)
    return _evaluate(terms, y, mu, data.C, data.regularizer, loss=data.loss)


def from_kernels(data: MKLData, y: np.ndarray, alpha: np.ndarray, mu: np.ndarray) -> tuple[_AlphaTerms, Certificate]:
    """The certificate at (μ, α) from the kernels, with its α-terms (projected α, exact gradients)."""
    terms = _alpha_terms(data.kernels, y, alpha, data.C, data.regularizer, data.loss)
    cert = _evaluate(terms, y, data.regularizer.into_set(mu), data.C, data.regularizer, loss=data.loss)
    return terms, cert


def svm_gap(mu: np.ndarray, cert: Certificate) -> float:
    """The SVM's own duality gap at the weights μ: the primal against the dual at fixed μ."""
    return float(cert.primal - (cert.gain - 0.5 * float(mu @ cert.s)))
