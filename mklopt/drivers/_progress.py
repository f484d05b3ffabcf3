"""When a loop that still makes steps has stopped making progress: the best certified gap.

The interleaved core's steps always move α somewhere; on an ill-conditioned problem
(a very large C on kernels with a nearly constant direction, say) they move it by so
little that the certified gap creeps down in its fifth digit over thousands of steps,
and the default budget of steps would take minutes to say so. :class:`Progress` keeps
the best certified relative gap of each step that made SMO pair updates and reports a
stall when, over the last :data:`WINDOW` such steps, it fell by less than :data:`MIN_DROP`
of itself. A loop that converges halves its gap in far fewer steps (the measured fits
of the Benchmarks page: at most 189 steps in all); steps of the weights alone (no pair
to update) are not counted, as a cutting plane may gather cuts for hundreds of them
before its gap moves (iris' reference instance on low-rank factors at tol 1e-7: 1,053
steps, two plateaus of 500).
"""

from __future__ import annotations

__all__ = ["Progress", "WINDOW", "MIN_DROP"]

#: Steps over which the best certified gap must fall.
WINDOW = 200
#: Least relative fall of the best certified gap over :data:`WINDOW` steps.
MIN_DROP = 1e-3


class Progress:
    """``update(rel_gap) -> True`` once the best certified gap stalls (see the module)."""

    def __init__(self, window: int = WINDOW, min_drop: float = MIN_DROP) -> None:
        self.window, self.min_drop = int(window), float(min_drop)
        self.best: list[float] = []

    def update(self, rel_gap: float) -> bool:
        rel_gap = float(rel_gap) if rel_gap == rel_gap else float("inf")  # NaN: no progress
        best = min(rel_gap, self.best[-1]) if self.best else rel_gap
        self.best.append(best)
        if len(self.best) <= self.window:
            return False
        before = self.best[-1 - self.window]
        return best > (1.0 - self.min_drop) * before
