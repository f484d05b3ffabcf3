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

Those steps of the weights alone can also repeat the last one exactly: SMO optimal at its
tolerance (no pair to update), the weight step leaving the weights where they were. Each
such step hands the cutting plane the same cut again, and only once its master is full
(``max_cuts``) does the cut with the most slack give way, which may move the weights (the
iris instance above: 496 steps in a row repeated before its gap moved). :class:`Repeats`
reports a stall after :data:`REPEATS` more steps in a row than the master holds cuts:
features offset by 1e8, 60 points, whose linear and quadratic kernels' rounding swamps
their variation, had one-vs-one's pairs repeat one step to the 100,000-step default (nine
minutes) at a certified gap of 0.86.
"""

from __future__ import annotations

__all__ = ["Progress", "Repeats", "WINDOW", "MIN_DROP", "REPEATS"]

#: Steps over which the best certified gap must fall.
WINDOW = 200
#: Least relative fall of the best certified gap over :data:`WINDOW` steps.
MIN_DROP = 1e-3
#: Steps in a row that changed nothing, beyond the cuts the master holds, before the loop is
#: at a fixed point: well past the second-order step's patience
#: (:data:`~mklopt.drivers._newton_step.PATIENCE`), after which the cutting plane takes over.
REPEATS = 20


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


class Repeats:
    """``update(unchanged) -> True`` once ``max_cuts`` + :data:`REPEATS` steps in a row changed
    nothing (see the module)."""

    def __init__(self, max_cuts: int) -> None:
        self.limit, self.count = int(max_cuts) + REPEATS, 0

    def update(self, unchanged: bool) -> bool:
        self.count = self.count + 1 if unchanged else 0
        return self.count >= self.limit
