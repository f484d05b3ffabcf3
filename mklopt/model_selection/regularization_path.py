"""Regularization paths: one certified fit per grid value, each warm-started from the last.

In the spirit of :func:`sklearn.linear_model.lasso_path`. Along a path over
``C`` (or over the weight norm ``p``) the kernels are validated and
normalized once; each fit starts from the previous optimum's kernel
weights, and the cutting plane also keeps its cuts where they stay valid:
a cut :math:`\\eta \\ge D_C(\\alpha^r) - \\tfrac12\\mu^\\top s(\\alpha^r)` is a lower
bound at the next value of C whenever :math:`\\alpha^r` is still in the
loss's dual set, which holds for every stored cut when C increases (the
dual sets :math:`\\{0\\le\\alpha\\le C, \\dots\\}` grow with C); its offset
:math:`D_C(\\alpha^r)` is re-evaluated at the new C. Every returned result
carries its own certificate, exactly as a cold :func:`mklopt.fit`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .._validation import check_C
from ..exceptions import InvalidInputError
from ..regularizers import as_regularizer, check_p
from ..results.result import MKLResult

__all__ = ["path"]


def path(kernels, y, driver: str | None = None, *, Cs: Sequence[float] | None = None,
         p: float | Sequence[float] = 1.0, C: float = 1.0, warm_start: bool = True,
         **options) -> list[MKLResult]:
    """Certified fits along a grid of ``C`` values (or of weight norms ``p``), warm-started.

    Parameters
    ----------
    kernels, y
        As in :func:`mklopt.fit`; validated (and built) once for the whole path.
    driver : str, optional
        ``"wrapper"`` or ``"cutting_plane"`` (default: as :func:`mklopt.fit`).
    Cs : sequence of float, optional
        The C grid (then ``p`` is one weight norm). Fitted in the order given;
        increasing order lets the cutting plane keep its cuts.
    p : float or sequence of float
        The weight norm, or a grid of weight norms at fixed ``C`` (then ``Cs``
        is None).
    C : float
        The fixed C of a path over ``p``.
    warm_start : bool
        Start each fit from the previous one (False: cold fits, for comparison).
    **options
        Everything else :func:`mklopt.fit` takes (``tol``, ``max_iter``, ``loss``,
        ``inner``, ``regularizer`` for a C path, ...).

    Returns
    -------
    list of MKLResult
        One per grid value, in grid order; ``result.C`` and
        ``result.regularizer`` say which.

    Examples
    --------
    >>> results = mklopt.path(ks, y, "wrapper", Cs=np.logspace(0, 4, 8), p=4/3, tol=1e-4)
    >>> [r.rel_gap <= 1e-4 for r in results]
    """
    from ..api import FitSettings, prepare_fit, run_fit
    from ..losses import as_loss

    grid, vary = _grid(Cs, p, C, options)
    fixed = {k: options.pop(k) for k in ("regularizer", "loss", "epsilon", "nu") if k in options}
    loss = as_loss(fixed.get("loss", "hinge"), epsilon=fixed.get("epsilon"), nu=fixed.get("nu"))
    settings = FitSettings(driver, options.pop("tol", 1e-4), options.pop("max_iter", None),
                           options.pop("time_limit", None), options.pop("inner", "smo"),
                           options.pop("backend", None), options.pop("callback", None),
                           options.pop("progress", False), options)
    data, classes, settings = prepare_fit(
        kernels, y, settings, C=grid[0] if vary == "C" else C, p=grid[0] if vary == "p" else p,
        regularizer=fixed.get("regularizer"), loss=loss)
    results: list[MKLResult] = []
    previous = None
    for value in grid:
        if vary == "C":
            point = dataclasses.replace(data, C=value)
        else:
            point = dataclasses.replace(data, regularizer=as_regularizer(None, value))
        result, loop = run_fit(point, classes, settings, previous if warm_start else None)
        previous = (loop, result)
        results.append(result)
    return results


def _grid(Cs, p, C, options: dict) -> tuple[list[float], str]:
    """The grid values and which parameter varies (``"C"`` or ``"p"``)."""
    p_grid = np.ndim(p) > 0
    if (Cs is None) == (not p_grid):
        raise InvalidInputError("give a grid of Cs= (one p) or of p= (one C), not both or neither.")
    if p_grid and "regularizer" in options:
        raise InvalidInputError("a path over p needs Lp balls; drop regularizer=.")
    if Cs is not None and np.ndim(Cs) != 1:
        raise InvalidInputError(f"Cs= must be a sequence of values of C, got {Cs!r}; for one C, pass Cs=[C].")
    values = list(Cs) if Cs is not None else list(p)
    if not values:
        raise InvalidInputError("the grid is empty; give at least one value.")
    if Cs is not None:
        return [check_C(c) for c in values], "C"
    return [check_p(q) for q in values], "p"
