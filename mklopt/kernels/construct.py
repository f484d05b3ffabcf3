"""Kernel matrices from data: specs and :func:`kernel_stack`.

A *spec* is a metric name accepted by
:func:`sklearn.metrics.pairwise.pairwise_kernels` (``"rbf"``), a pair
``(name, params)`` or a callable ``k(X, Y) -> (n_x, n_y)`` array.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..exceptions import KernelError
from ._memory import check_stack_fits
from ._rows import by_row_blocks, squared_distances, training_kernels
from .._options import real_array
from .features import check_finite_features
from ._named import evaluated_spec, is_real, named_kernel, product_form, product_kernel_into
from .user_kernel import call_user_kernel
from .rounding import SHIFT_INVARIANT, DataScales, centred, trusted_by_construction

__all__ = ["kernel_stack", "build_stack", "KernelSpec", "spec_name", "psd_by_construction", "trusted_spec"]

KernelSpec = Any  # ("rbf", {"gamma": 0.1}) | "linear" | callable(X, Y) -> array


def spec_name(spec: KernelSpec, index: int) -> str:
    """A readable name for a spec, e.g. ``rbf(gamma=0.1)``."""
    if callable(spec):
        return getattr(spec, "__name__", f"kernel{index}")
    metric, params = _parse_spec(spec)
    if callable(metric):
        metric = getattr(metric, "__name__", "callable")
    args = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in sorted(params.items()))
    return f"{metric}({args})" if args else str(metric)


#: Metrics of pairwise_kernels whose Gram matrices are PSD for every input (Schoenberg,
#: products and sums of PSD kernels): exp(-gamma d) of a conditionally negative definite d.
_PSD_METRICS = {"linear", "rbf", "laplacian", "cosine", "chi2"}


def psd_by_construction(spec: KernelSpec) -> bool:
    """Whether ``spec`` gives a PSD Gram matrix for every input (up to rounding).

    ``linear``, ``cosine``, ``rbf`` and ``laplacian`` (any ``gamma > 0``), ``chi2``
    (scikit-learn requires non-negative features for it), and ``poly``/``polynomial``
    with an integer ``degree >= 1``, ``gamma > 0`` and ``coef0 >= 0`` (a sum of
    powers of the linear kernel with non-negative coefficients). Not: ``sigmoid``
    (indefinite in general), ``additive_chi2`` (conditionally negative definite),
    a polynomial with ``coef0 < 0``, or any callable (user code keeps the screen). A
    :class:`~mklopt.kernels.views.ViewKernel` is judged by its spec.
    """
    if _is_view(spec):
        return psd_by_construction(spec.spec)
    try:
        metric, params = _parse_spec(spec)
    except KernelError:
        return False
    if callable(metric) or not isinstance(metric, str):
        return False
    gamma = params.get("gamma")
    positive_gamma = gamma is None or gamma == "scale" or (
        isinstance(gamma, (int, float)) and not isinstance(gamma, bool) and gamma > 0)
    if metric in _PSD_METRICS:
        return positive_gamma and set(params) <= {"gamma"}
    if metric in ("poly", "polynomial"):
        degree, coef0 = params.get("degree", 3), params.get("coef0", 1)
        return (positive_gamma and set(params) <= {"gamma", "degree", "coef0"}
                and isinstance(degree, (int, np.integer)) and not isinstance(degree, bool) and degree >= 1
                and isinstance(coef0, (int, float)) and not isinstance(coef0, bool) and coef0 >= 0)
    return False


def trusted_spec(spec: KernelSpec, X: np.ndarray | DataScales) -> bool:
    """Whether the Gram matrix of ``spec`` on ``X`` is PSD by construction *as computed*.

    The kernel function must be PSD (:func:`psd_by_construction`) and its stated
    rounding bound small enough (:mod:`~mklopt.kernels.rounding`); otherwise the
    kernel is screened like user data.
    """
    if not psd_by_construction(spec):
        return False
    if _is_view(spec):  # judged on its own columns
        return not isinstance(X, DataScales) and trusted_spec(spec.spec, np.asarray(X)[:, spec.index(X.shape[1])])
    metric, params = _parse_spec(spec)
    scales = X if isinstance(X, DataScales) else DataScales.of(X)
    if params.get("gamma") == "scale":
        params["gamma"] = 1.0 / (scales.d * scales.variance) if scales.variance > 0 else 1.0
    return trusted_by_construction(metric, params, scales)


#: Largest polynomial degree (higher powers overflow or lose every digit).
MAX_DEGREE = 30


def _parse_spec(spec: KernelSpec) -> tuple[Any, dict]:
    if isinstance(spec, str) or callable(spec):
        return spec, {}
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[1], dict):
        _check_params(spec[0], spec[1])
        return spec[0], dict(spec[1])
    raise KernelError(
        f"kernel spec {spec!r} is not understood; use a metric name such as "
        "'rbf', a pair like ('rbf', {'gamma': 0.1}), or a callable k(X, Y)."
    )


def kernel_stack(X: np.ndarray, specs: Sequence[KernelSpec],
                 Y: np.ndarray | None = None) -> np.ndarray:
    """Evaluate kernel specs on data with scikit-learn's pairwise kernels.

    Parameters
    ----------
    X : array of shape (n_x, d)
        Rows at which the kernels are evaluated (test points for prediction).
    specs : sequence
        Each a metric name accepted by
        :func:`sklearn.metrics.pairwise.pairwise_kernels`, a pair
        ``(name, params)``, or a callable ``k(X, Y) -> (n_x, n_y)`` array.
    Y : array of shape (n_y, d), optional
        Columns (training points). Defaults to ``X``.

    Returns
    -------
    ndarray of shape (M, n_x, n_y)

    Notes
    -----
    RBF specs (scikit-learn's default :math:`\\gamma = 1/d` where a spec gives none) share one
    matrix of squared distances (scikit-learn's ``euclidean_distances``, by row blocks on all cores):
    :math:`K_m = \\exp(-\\gamma_m D)`, the values of ``rbf_kernel``. Training kernels
    (no ``Y``) are all made in one compiled pass over the upper triangle of the Gram
    matrix (:mod:`~mklopt._compiled.rbf_stack`), which writes each entry at both of its
    places: exactly symmetric, with diagonal 1, and :math:`D` never stored; their linear and
    polynomial kernels likewise from one Gram matrix of ``X`` for all of them
    (:mod:`~mklopt._compiled.product_stack`: scikit-learn's operations in its order).
    Shift-invariant kernels (RBF, Laplacian) are evaluated on the data centred
    at the mean of ``Y`` (of ``X`` without ``Y``): the cancellation in
    :math:`\\|x\\|^2 + \\|y\\|^2 - 2\\langle x, y\\rangle` is then relative to the
    spread of the data, not to its distance from the origin; squared distances
    are clipped at 0 and the diagonal of a training kernel is exact. With at least as
    many kernels as cores they are built side by side, each on one core (its BLAS on one
    thread); with fewer, the kernels BLAS makes (linear, polynomial, ...) are built one at a
    time, by row blocks on all cores (:mod:`~mklopt.kernels._rows`: BLAS's own threads would
    go on spinning after the build); the Laplacian kernel whole.
    A callable runs in the calling thread.
    """
    return build_stack(X, specs, Y)[0]


def is_spec_pair(spec: Any) -> bool:
    """``(name, params)``: one kernel spec rather than a sequence of specs."""
    return isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[1], dict)


def spec_list(specs: Any) -> list:
    """``specs`` as a list of kernel specs: one spec (a name, a ``(name, params)`` pair, a
    callable such as a :class:`~mklopt.kernels.views.ViewKernel`) becomes a list of one; anything
    else must be a sequence of specs (a :class:`KernelError` otherwise)."""
    if isinstance(specs, str) or callable(specs) or is_spec_pair(specs):
        return [specs]
    try:
        return list(specs)
    except TypeError:
        raise KernelError(
            f"kernel specs must be one spec or a sequence of them (a name such as 'rbf', a (name, params) "
            f"pair, a callable, a ViewKernel), got {type(specs).__name__} {specs!r}.") from None


def build_stack(X: np.ndarray, specs: Sequence[KernelSpec], Y: np.ndarray | None = None,
                finish: Callable[[int, np.ndarray, tuple | None], Any] | None = None) -> tuple[np.ndarray, list]:
    """:func:`kernel_stack` and ``[finish(m, K_m, extremes_m) for each m]``, each call made on kernel
    m's thread right after it was built, while it is in cache (None without ``finish``);
    ``extremes_m`` is K_m's (largest, smallest) entry where the build kept them, else None."""
    from ._stack import on_one_thread_if_small

    X = real_array(X, "X", KernelError)  # features: complex ones refused, not cast
    Y = X if Y is None else real_array(Y, "Y", KernelError)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
        raise KernelError(
            f"kernel_stack needs 2-D feature arrays with the same number of "
            f"columns, got shapes {X.shape} and {Y.shape}."
        )
    specs = spec_list(specs)
    if len(specs) == 0:
        raise KernelError("no kernel specs given; pass at least one, e.g. ['linear'].")
    parsed = [None if callable(spec) else _parse_spec(spec) for spec in specs]  # bad specs fail here
    if any(spec is not None for spec in parsed):  # a callable gets the features as they are
        check_finite_features(X, "X")
        if Y is not X:
            check_finite_features(Y, "Y")
    check_stack_fits(len(specs), X.shape[0], Y.shape[0])
    out = np.empty((len(specs), X.shape[0], Y.shape[0]))
    if out.size == 0 and finish is None:  # no columns: a model without support vectors (every target within ε)
        return out, [None] * len(specs)
    with on_one_thread_if_small(out.size):
        return out, _filled(out, X, Y, specs, parsed, finish)


def _filled(out: np.ndarray, X: np.ndarray, Y: np.ndarray, specs: list, parsed: list,
            finish: Callable[[int, np.ndarray, tuple | None], Any] | None) -> list:
    """Fill ``out`` with the kernels of :func:`build_stack` (checked features); the ``finish`` calls' values."""
    from ._stack import cores, map_kernels

    same = Y is X
    Xc, Yc = centred(X, None if same else Y)
    Yc = Xc if same else Yc  # the same object: scikit-learn then zeroes the diagonal exactly
    gammas = [_rbf_gamma(spec, X.shape[1]) for spec in specs]
    rbf = [m for m in range(len(specs)) if gammas[m] is not None]
    forms = [product_form(p, X.shape[1]) if same else None for p in parsed]
    products = [m for m in range(len(specs)) if forms[m] is not None]
    distances, extremes = None, np.full((len(specs), 2), np.nan)
    if (rbf or products) and same:  # RBF, linear, polynomial: one pass over their Gram matrices
        extremes = training_kernels(X, Xc, np.array([gammas[m] for m in rbf], dtype=float),
                                    np.array(rbf, dtype=np.int64), np.array([forms[m] for m in products], dtype=float),
                                    np.array(products, dtype=np.int64), out)
    elif rbf:  # one matrix of squared distances for all RBF kernels
        distances = squared_distances(Xc, Yc)

    def evaluated(m: int, rows: slice | None = None) -> np.ndarray:
        """Kernel m, or its rows ``rows`` (a named kernel only)."""
        if parsed[m] is None:
            return call_user_kernel(specs[m], X, Y)
        Xr, Xcr = (X, Xc) if rows is None else (X[rows], Xc[rows])  # the whole X itself: see Yc
        return evaluated_spec(specs[m], lambda: named_kernel(parsed[m], Xr, Y, Xcr, Yc))

    # here, one at a time: user code, and with fewer kernels than cores the other kernels BLAS
    # makes, each split by rows over the cores (the Laplacian whole: its training diagonal is
    # exact only so)
    user = [parsed[m] is None or callable(parsed[m][0]) for m in range(len(specs))]
    few = len(specs) < cores()
    here = [user[m] or (few and gammas[m] is None and forms[m] is None) for m in range(len(specs))]
    for m in np.flatnonzero(here):
        if user[m] or parsed[m][0] in SHIFT_INVARIANT:
            out[m] = evaluated(m)
        else:
            by_row_blocks(lambda rows, m=m: evaluated(m, rows), out[m])

    def build(m: int) -> Any:
        if distances is not None and gammas[m] is not None:
            np.multiply(distances, -gammas[m], out=out[m])
            np.exp(out[m], out=out[m])
        elif not here[m] and gammas[m] is None and forms[m] is None \
                and not product_kernel_into(parsed[m], X, Y, out[m]):
            out[m] = evaluated(m)
        if finish is None:
            return None
        kept = None if np.isnan(extremes[m]).all() else (float(extremes[m, 0]), float(extremes[m, 1]))
        return finish(m, out[m], kept)

    return map_kernels(build, len(specs))


def _check_params(metric: Any, params: dict) -> None:
    """The common parameters of pairwise kernels: ``gamma``, ``degree`` and ``coef0``."""
    gamma, degree, coef0 = params.get("gamma"), params.get("degree", 3), params.get("coef0", 0.0)
    if not (gamma is None or gamma == "scale" or (is_real(gamma) and gamma > 0)):
        raise KernelError(f"kernel spec ({metric!r}, ...): gamma must be a finite number > 0, 'scale' "
                          f"or None, got {gamma!r}.")
    if isinstance(degree, (bool, np.bool_)) or not isinstance(degree, (int, np.integer)) \
            or not 1 <= degree <= MAX_DEGREE:
        raise KernelError(f"kernel spec ({metric!r}, ...): degree must be an integer in [1, {MAX_DEGREE}], "
                          f"got {degree!r}.")
    if not is_real(coef0):
        raise KernelError(f"kernel spec ({metric!r}, ...): coef0 must be a finite number, got {coef0!r}.")


def _is_view(spec: KernelSpec) -> bool:
    """A :class:`~mklopt.kernels.views.ViewKernel` (duck-typed: views.py imports this module)."""
    return callable(spec) and hasattr(spec, "spec") and hasattr(spec, "index")


def symmetric_by_construction(specs: Sequence[KernelSpec], d: int) -> list[bool]:
    """Which training kernels :func:`build_stack` writes exactly symmetric by construction: the
    RBF, linear and polynomial ones, made in compiled passes over the upper triangle of a Gram
    matrix that write each entry at both of its places (:mod:`~mklopt._compiled.rbf_stack`,
    :mod:`~mklopt._compiled.product_stack`)."""
    return [_rbf_gamma(spec, d) is not None or _product_spec(spec, d) for spec in specs]


def _product_spec(spec: KernelSpec, d: int) -> bool:
    """A linear or polynomial spec (:func:`~mklopt.kernels._named.product_form`)."""
    try:
        return not callable(spec) and product_form(_parse_spec(spec), d) is not None
    except KernelError:  # a bad spec: build_stack says what is wrong with it
        return False


def _rbf_gamma(spec: KernelSpec, d: int) -> float | None:
    """``gamma`` of an RBF spec on ``d`` features (scikit-learn's default ``1 / d`` where it
    gives none; computed from the shared distances), else None."""
    if isinstance(spec, str):
        spec = (spec, {})
    if callable(spec) or not isinstance(spec, (tuple, list)) or len(spec) != 2:
        return None
    metric, params = spec
    if metric != "rbf" or not isinstance(params, dict) or not set(params) <= {"gamma"}:
        return None
    gamma = params.get("gamma")
    if gamma is None:
        return 1.0 / d
    return float(gamma) if isinstance(gamma, (int, float)) and gamma > 0 else None
