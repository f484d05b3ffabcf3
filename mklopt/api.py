"""Public entry points: :func:`solve` (one exact convex solve) and :func:`fit` (outer loops)."""

from __future__ import annotations

from typing import Any

from .exact import gap_tolerance, prepare, solve
from ._validation import check_max_iter, check_time_limit, check_tol
from .exceptions import FormulationError, InvalidInputError
from .losses import as_loss
from .regularizers import LpBall, Regularizer, as_regularizer
from .result import MKLResult

__all__ = ["solve", "fit", "prepare", "gap_tolerance"]


def fit(kernels, y, driver: str | None = None, *, C: float = 1.0, p: float = 1.0,
        regularizer: Regularizer | None = None, tol: float = 1e-4, max_iter: int | None = None,
        time_limit: float | None = None, inner: Any = "libsvm", backend: Any = None,
        callback=None, progress: bool = False, loss="hinge", epsilon: float | None = None,
        nu: float | None = None, **params) -> MKLResult:
    """Run an outer loop until its certified relative gap is below ``tol``.

    Parameters
    ----------
    kernels, y, C, p, regularizer
        As in :func:`solve` (``p`` is the weight norm).
    driver : {"wrapper", "cutting_plane", "dca", ...}, optional
        Default: ``"cutting_plane"`` for p = 1 (the wrapper is slow there),
        ``"wrapper"`` otherwise.
    tol : float in (0, 1)
        Stop when the certified ``rel_gap = (P - G) / max(|P|, |G|)`` of the
        best (weights, alpha) pair is ``<= tol``.
    max_iter : int, optional
        Iteration cap, a positive integer (default 1000; 5000 for the wrapper at p = 1).
    time_limit : float, optional
        Seconds (positive), honoured to within one iteration.
    inner : {"libsvm", "cvxpy"} or callable
        Inner SVM solver (``inner(weights) -> alpha``); "cvxpy" uses ``backend``.
    callback : callable, optional
        ``callback(record)`` after every iteration; return False to stop.
    progress : bool
        Show a tqdm progress bar with the gap.
    loss, epsilon, nu
        The loss and its parameter, as in :func:`solve` (wrapper and cutting
        plane take any loss; DCA and VKR the hinge).
    **params
        Driver options (``max_cuts=``, ``master="taylor"``, ``theta=`` for DCA, ...).

    Returns
    -------
    MKLResult
        ``status`` is the stop reason ("converged", "max_iter", "time_limit",
        "callback"); ``history`` has one record per iteration.
    """
    from .drivers import DRIVERS, run

    if driver is None:
        reg = as_regularizer(regularizer, p)
        driver = "cutting_plane" if isinstance(reg, LpBall) and reg.p == 1 else "wrapper"
    if not isinstance(driver, str) or driver not in DRIVERS:
        raise FormulationError(f"unknown driver {driver!r}; choose one of {sorted(DRIVERS)}.")
    tol = check_tol(tol)
    time_limit = check_time_limit(time_limit)
    if max_iter is not None:
        max_iter = check_max_iter(max_iter)
    if callback is not None and not callable(callback):
        raise InvalidInputError(f"callback must be callable or None, got {callback!r}.")
    loss = as_loss(loss, epsilon=epsilon, nu=nu)
    allowed = getattr(DRIVERS[driver], "losses", None)
    if allowed is not None and loss.name not in allowed:
        raise FormulationError(f"driver '{driver}' is written for loss {' or '.join(allowed)}, not "
                               f"'{loss.name}'; use driver='wrapper' or 'cutting_plane' (any loss).")
    psd = getattr(DRIVERS[driver], "needs_psd", True)
    data, classes = prepare(kernels, y, C=C, p=p, regularizer=regularizer, psd=psd, loss=loss)
    if max_iter is None:
        max_iter = 5000 if driver == "wrapper" and getattr(data.regularizer, "p", None) == 1 else 1000
    try:
        loop = DRIVERS[driver](data, inner=inner, tol=tol, backend=backend, **params)
    except TypeError as exc:
        raise InvalidInputError(f"driver '{driver}' got unexpected options {sorted(params)}: {exc}") from None
    result = run(loop, tol=tol, max_iter=int(max_iter), time_limit=time_limit,
                 callback=callback, progress=progress)
    result.classes = classes
    if result.backend is None:
        result.backend = getattr(getattr(loop, "inner", None), "name", None) or str(inner)
    return result
