"""How many SMO pairs an α-step of the interleaved core makes: ``Q``, doubled while the weights stay put.

An α-step after a θ-step that moved the weights makes ``Q`` pairs (:data:`DEFAULT_Q` unless
given); after one that left them where they were (:math:`\\|\\Delta\\mu\\|_1 \\le`
:data:`~mklopt.drivers._newton_step.SETTLED` :math:`\\|\\mu\\|_1`) twice the pairs of the last,
up to :data:`MAX_CHUNK` ``Q``: what is left then is the SVM at those weights, and a weight step
every ``Q`` pairs would only add its fixed cost.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InvalidInputError

__all__ = ["DEFAULT_Q", "MAX_CHUNK", "checked_Q", "next_chunk"]

#: Default SMO pair updates between weight steps.
DEFAULT_Q = 100
#: A chunk grows to at most this many times ``Q`` pairs.
MAX_CHUNK = 16


def checked_Q(Q) -> int:
    """``Q`` as given (an integer of at least 2), or :data:`DEFAULT_Q` for None."""
    if Q is None:
        return DEFAULT_Q
    if isinstance(Q, bool) or not isinstance(Q, (int, np.integer)) or Q < 2:
        raise InvalidInputError(
            f"Q (SMO pair updates between weight steps) must be an integer >= 2, got {Q!r}.")
    return int(Q)


def next_chunk(chunk: int, Q: int, settled: bool) -> int:
    """The pairs of the next α-step after one of ``chunk`` pairs: twice as many (at most
    :data:`MAX_CHUNK` ``Q``) when the θ-step between them left the weights ``settled``, else ``Q``."""
    return min(2 * chunk, MAX_CHUNK * Q) if settled else Q
