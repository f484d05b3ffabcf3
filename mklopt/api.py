"""Public entry points: :func:`solve` (one exact convex solve) and :func:`fit` (outer loops)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .exact import gap_tolerance, prepare, solve
from ._options import check_options
from ._validation import check_max_iter, check_time_limit, check_tol
from .exceptions import FormulationError, InvalidInputError
from .losses import as_loss
from .regularizers import LpBall, Regularizer, as_regularizer
from .regularizers.penalties import Penalty
from .results.result import MKLResult

__all__ = ["solve", "fit", "prepare", "gap_tolerance", "FitSettings", "prepare_fit", "run_fit"]


def fit(kernels, y, driver: str | None = None, *, C: float = 1.0, p: float = 1.0,
        regularizer: Regularizer | None = None, tol: float = 1e-4, max_iter: int | None = None,
        time_limit: float | None = None, inner: Any = "smo", backend: Any = None,
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
    inner : {"smo", "libsvm", "cvxpy"} or callable
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
    settings = FitSettings(driver, tol, max_iter, time_limit, inner, backend, callback, progress,
                           params)
    data, classes, settings = prepare_fit(kernels, y, settings, C=C, p=p, regularizer=regularizer,
                                          loss=as_loss(loss, epsilon=epsilon, nu=nu))
    return run_fit(data, classes, settings)[0]


@dataclass
class FitSettings:
    """The options of one :func:`fit` call besides the problem data (validated by :func:`prepare_fit`)."""

    driver: str | None
    tol: float
    max_iter: int | None
    time_limit: float | None
    inner: Any
    backend: Any
    callback: Any
    progress: bool
    params: dict


def prepare_fit(kernels, y, settings: FitSettings, *, C, p, regularizer, loss):
    """Validate the options and the problem once: ``(MKLData, classes, settings)``."""
    from .drivers import DRIVERS

    driver, reg = settings.driver, as_regularizer(regularizer, p)
    if isinstance(reg, Penalty):
        raise FormulationError(f"{reg!r} is a penalty, not a bounded set of weights, and an outer loop moves "
                               f"the weights within such a set (with only mu >= 0 they grow without bound); "
                               f"{reg.instead}.")
    if driver is None:
        driver = "cutting_plane" if isinstance(reg, LpBall) and reg.p == 1 else "wrapper"
    if not isinstance(driver, str) or driver not in DRIVERS:
        raise FormulationError(f"unknown driver {driver!r}; choose one of {sorted(DRIVERS)}.")
    tol = check_tol(settings.tol)
    time_limit = check_time_limit(settings.time_limit)
    max_iter = settings.max_iter
    if max_iter is not None:
        max_iter = check_max_iter(max_iter)
    if settings.callback is not None and not callable(settings.callback):
        raise InvalidInputError(f"callback must be callable or None, got {settings.callback!r}.")
    allowed = getattr(DRIVERS[driver], "losses", None)
    if allowed is not None and loss.name not in allowed:
        raise FormulationError(f"driver '{driver}' is written for loss {' or '.join(allowed)}, not "
                               f"'{loss.name}'; use driver='wrapper' or 'cutting_plane' (any loss).")
    psd = getattr(DRIVERS[driver], "needs_psd", True)
    dense = f"driver '{driver}'" if getattr(DRIVERS[driver], "needs_dense", False) else None
    data, classes = prepare(kernels, y, C=C, p=p, regularizer=regularizer, psd=psd, loss=loss,
                            needs_dense=dense)
    params = check_options(f"driver '{driver}'", DRIVERS[driver].declared_options(), settings.params,
                           n=data.n, M=data.M, alpha=np.shape(data.y))
    settings = dataclasses.replace(settings, driver=driver, tol=tol, time_limit=time_limit,
                                   max_iter=max_iter, params=params)
    return data, classes, settings


def run_fit(data, classes, settings: FitSettings, previous=None):
    """Run the driver on prepared data: ``(result, loop)``.

    ``previous``, a ``(loop, result)`` pair of an earlier run on the same
    kernels, warm-starts it (:meth:`Driver.warm_start`).
    """
    from .drivers import DRIVERS, run

    driver, max_iter = settings.driver, settings.max_iter
    if max_iter is None:
        max_iter = 5000 if driver == "wrapper" and getattr(data.regularizer, "p", None) == 1 \
            else getattr(DRIVERS[driver], "default_max_iter", 1000)
    try:
        loop = DRIVERS[driver](data, inner=settings.inner, tol=settings.tol, backend=settings.backend,
                               **settings.params)
    except TypeError as exc:
        raise InvalidInputError(_unknown_options(driver, settings.params, exc)) from None
    if previous is not None:
        loop.warm_start(*previous)
    result = run(loop, tol=settings.tol, max_iter=int(max_iter), time_limit=settings.time_limit,
                 callback=settings.callback, progress=settings.progress)
    result.classes = classes
    result.info["tol"] = settings.tol  # what "converged" means here (verify's default tol)
    if result.backend is None:
        result.backend = getattr(getattr(loop, "inner", None), "name", None) or str(settings.inner)
    return result, loop


def _unknown_options(driver: str, params: dict, error: TypeError) -> str:
    """What a driver that refused its options takes instead."""
    import inspect

    from .drivers import DRIVERS

    taken = [name for name in inspect.signature(DRIVERS[driver]).parameters
             if name not in ("data", "inner", "backend", "tol")]
    unknown = sorted(set(params) - set(taken))
    if not unknown:  # the constructor refused something else
        return f"driver '{driver}' got unexpected options {sorted(params)}: {error}"
    return f"driver '{driver}' takes no option {', '.join(map(repr, unknown))}; its options are {', '.join(taken)}."
