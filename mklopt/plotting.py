"""Figures for results and kernels (matplotlib; works with the non-interactive Agg backend).

Every function returns the figure and axes it drew on and never calls
``plt.show()``; pass ``ax=`` to draw into an existing figure. Relative gaps
are plotted on a log scale with values at or below 0 (numerically exact
certificates) drawn at ``GAP_FLOOR``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .exceptions import InvalidInputError
from .kernels import KernelSet
from .results.result import MKLResult

__all__ = ["plot_convergence", "plot_weights", "plot_tail_sums", "save_ratio_bars", "save_figure", "GAP_FLOOR"]

#: Smallest relative gap drawn on the log axis.
GAP_FLOOR = 1e-16


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


def _named_results(results: Any) -> dict[str, MKLResult]:
    """Normalize one result, a sequence or a name -> result mapping into a dict."""
    if isinstance(results, MKLResult):
        results = [results]
    if isinstance(results, Mapping):
        items = dict(results)
    elif isinstance(results, Sequence) and not isinstance(results, str):
        items = {}
        for i, res in enumerate(results):
            label = f"{res.formulation or 'result'}" if isinstance(res, MKLResult) else str(i)
            items[label if label not in items else f"{label} ({i})"] = res
    else:
        raise InvalidInputError(f"expected an MKLResult, a list or a dict of them, got {type(results).__name__}.")
    if not items:
        raise InvalidInputError("no results to plot.")
    bad = [name for name, res in items.items() if not isinstance(res, MKLResult)]
    if bad:
        raise InvalidInputError(f"not MKLResult objects: {bad}; pass results of mklopt.solve or mklopt.fit.")
    return items


def _gap_curve(result: MKLResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(iterations, seconds, rel_gaps) of a result; one point for an exact solve."""
    if result.history:
        it = np.array([r["iteration"] for r in result.history], dtype=float)
        t = np.array([r["time"] for r in result.history], dtype=float)
        gap = np.array([r["rel_gap"] for r in result.history], dtype=float)
    else:
        it, t, gap = np.array([1.0]), np.array([result.solve_time]), np.array([result.rel_gap])
    return it, t, np.maximum(np.nan_to_num(gap, nan=np.inf), GAP_FLOOR)


def plot_convergence(results: Any, ax: Any = None, *, tol: float | None = None):
    """Certified relative duality gap against iteration and against time.

    Parameters
    ----------
    results : MKLResult, list of MKLResult, or dict name -> MKLResult
        Results of :func:`mklopt.fit` (their ``history``) or of
        :func:`mklopt.solve` (drawn as a single point).
    ax : matplotlib Axes or sequence of two Axes, optional
        Two axes: gap vs iteration and gap vs time (log scale). One axes:
        gap vs iteration only. Default: a new figure with two panels.
        Results without a global certificate (``info["certified_globally"]``
        is False, e.g. DCA) are dashed and labelled "subproblem gap".
    tol : float, optional
        Draw the stopping tolerance as a horizontal line.

    Returns
    -------
    (fig, axes) : matplotlib Figure and list of Axes
    """
    items = _named_results(results)
    axes = _axes(ax, 2, figsize=(10, 4))
    fig = axes[0].figure
    for name, res in items.items():
        it, t, gap = _gap_curve(res)
        local = res.info.get("certified_globally") is False  # e.g. DCA: last subproblem only
        style = dict(marker="o" if it.size == 1 else None, linestyle="--" if local else "-",
                     label=f"{name} (subproblem gap)" if local else name)
        axes[0].plot(it, gap, **style)
        if len(axes) > 1:
            axes[1].plot(np.maximum(t, 1e-4), gap, **style)
    from matplotlib.ticker import MaxNLocator

    xlabels = ["iteration", "time [s]"]
    axes[0].xaxis.set_major_locator(MaxNLocator(integer=True))  # no "2.5 iterations"
    if len(axes) > 1:
        _readable_log_axis(axes[1])
    for axis, xlabel in zip(axes, xlabels):
        axis.set_yscale("log")
        axis.set_xlabel(xlabel)
        axis.set_ylabel("certified relative gap")
        axis.grid(True, which="both", alpha=0.3)
        if tol is not None:
            axis.axhline(tol, color="gray", linestyle="--", linewidth=1)
    axes[0].legend(fontsize="small")
    axes[0].set_title("convergence of the certified gap")
    return fig, axes


def _readable_log_axis(ax: Any) -> None:
    """A log x axis labelled in plain numbers that never run into each other.

    Matplotlib labels the minor ticks of a range shorter than a decade
    ("2x10^-3 3x10^-3 ..."), and 1, 2 and 5 per decade ("0.0020.0050.010.02") crowd a
    narrow panel: the labels are the densest of 1, 2, 5 per decade, 1 and 3, one per
    decade, or one every few decades, that keeps a gap between neighbours as drawn;
    minor ticks unlabelled. Call it after the data are drawn.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.autoscale_view()
    low, high = ax.get_xlim()
    first, last = int(np.floor(np.log10(low))), int(np.ceil(np.log10(high)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    choices = [((1.0, 2.0, 5.0), 1), ((1.0, 3.0), 1)] + [((1.0,), stride) for stride in (1, 2, 3, 5, 10)]
    for subs, stride in choices:
        ticks = [m * 10.0 ** k for k in range(first, last + 1) if k % stride == 0 for m in subs]
        inside = [t for t in ticks if low <= t <= high]
        if len(inside) < 2:  # a span too short for these labels: take denser ones
            continue
        ax.xaxis.set_major_locator(FixedLocator(inside))
        if not _labels_crowded(ax):
            break
    ax.set_xlim(low, high)


def _labels_crowded(ax: Any) -> bool:
    """Whether two neighbouring x tick labels are closer than half a character's width."""
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    left, right = ax.get_window_extent(renderer).x0, ax.get_window_extent(renderer).x1
    boxes = sorted((label.get_window_extent(renderer) for label in ax.get_xticklabels()
                    if label.get_text() and label.get_visible()), key=lambda box: box.x0)
    boxes = [box for box in boxes if box.x1 >= left and box.x0 <= right]
    margin = 0.5 * max((box.height for box in boxes), default=0.0)
    return any(a.x1 + margin > b.x0 for a, b in zip(boxes, boxes[1:]))


def plot_weights(results: Any, ax: Any = None, *, kernel_names: Sequence[str] | None = None):
    """Kernel weights of several methods as grouped bars (one group per kernel).

    Parameters
    ----------
    results : dict name -> MKLResult (or a list / a single result)
        All with the same number of kernels.
    ax : matplotlib Axes, optional
    kernel_names : sequence of str, optional
        Default: the results' ``kernel_names`` or ``K0, K1, ...``.

    Returns
    -------
    (fig, ax)
    """
    items = _named_results(results)
    weights = [np.asarray(r.weights, dtype=float).ravel() for r in items.values()]
    sizes = {w.size for w in weights}
    if len(sizes) != 1:
        raise InvalidInputError(f"results have different numbers of kernels {sorted(sizes)}; compare results on one kernel set.")
    M = sizes.pop()
    names = _kernel_names(kernel_names, items.values(), M)
    axis = _axes(ax, 1, figsize=(max(6, 0.9 * M * len(items) ** 0.5 + 3), 4))[0]
    width = 0.8 / len(items)
    x = np.arange(M)
    for k, (label, w) in enumerate(zip(items, weights)):
        axis.bar(x + (k - (len(items) - 1) / 2) * width, w, width, label=label)
    axis.set_xticks(x)
    axis.set_xticklabels(names, rotation=30, ha="right")
    axis.set_ylabel("kernel weight μ")
    axis.legend()
    axis.set_title("learned kernel weights")
    return axis.figure, axis


def _kernel_names(names: Sequence[str] | None, results, M: int) -> list[str]:
    if names is not None:
        if len(names) != M:
            raise InvalidInputError(f"got {len(names)} kernel names for {M} kernels.")
        return [str(n) for n in names]
    for res in results:
        if res.kernel_names is not None and len(res.kernel_names) == M:
            return list(res.kernel_names)
    return [f"K{m}" for m in range(M)]


def plot_tail_sums(kernels: Any, thetas: Sequence[int] | int = 10, ax: Any = None, *,
                   relative: bool = True):
    """Tail sums :math:`\\tau_m(\\theta) = \\sum_{j>\\theta}\\lambda_j(K_m)` against the cutoff θ.

    Parameters
    ----------
    kernels : KernelSet, array (M, n, n) or list of (n, n) arrays
    thetas : int or sequence of int
        Cutoffs; an int ``t`` means ``0, 1, ..., t``.
    ax : matplotlib Axes, optional
    relative : bool, default True
        Divide by the trace (:math:`\\tau_m(0)`), so the curves start at 1.

    Returns
    -------
    (fig, ax)
    """
    ks = kernels if isinstance(kernels, KernelSet) else KernelSet(kernels)
    grid = np.arange(int(thetas) + 1) if np.isscalar(thetas) else np.asarray(thetas, dtype=int)
    if grid.size == 0 or np.any(grid < 0):
        raise InvalidInputError(f"thetas must be non-negative integers, got {thetas!r}.")
    axis = _axes(ax, 1, figsize=(6, 4))[0]
    for m in range(ks.M):
        eig = np.clip(np.sort(np.linalg.eigvalsh(ks.K[m]))[::-1], 0, None)
        tails = eig.sum() - np.concatenate(([0.0], np.cumsum(eig)))
        values = tails[np.minimum(grid, ks.n)]
        if relative:
            values = values / max(tails[0], 1e-300)
        axis.plot(grid, values, marker=".", label=ks.names[m])
    axis.set_xlabel("cutoff θ (number of leading eigenvalues removed)")
    axis.set_ylabel("tail sum / trace" if relative else "tail sum")
    axis.set_title("tail sums of the kernel spectra")
    axis.legend()
    axis.grid(True, alpha=0.3)
    return axis.figure, axis


def _axes(ax: Any, count: int, figsize: tuple[float, float]) -> list:
    """Axes to draw on: the given ones, or ``count`` new side-by-side panels."""
    if ax is None:
        plt = _pyplot()
        fig, axes = plt.subplots(1, count, figsize=figsize, squeeze=False)
        fig.set_layout_engine("tight")
        return list(axes[0])
    if isinstance(ax, (list, tuple, np.ndarray)):
        axes = list(np.ravel(ax))
        return axes[:count]
    return [ax]


def save_figure(fig: Any, path, *, dpi: int = 110):
    """Save ``fig`` as ``path`` (its folder is created), close it and return the path.

    Every example and benchmark ends a figure this way, so figures never pile up
    in matplotlib's registry across a gallery build.
    """
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    _pyplot().close(fig)
    return path


def save_ratio_bars(labels: Sequence[str], ratios: Sequence[float], path, *, ylabel: str,
                    log: bool = False, target: float | None = None) -> None:
    """Save a bar chart of one benchmark ratio per configuration (the ``bench_*`` examples).

    Parameters
    ----------
    labels, ratios : sequences of equal length
        One configuration per bar.
    path : str or Path
        PNG file; its folder is created.
    ylabel : str
    log : bool
        Logarithmic y axis.
    target : float, optional
        A dashed horizontal line at the target ratio.
    """
    import matplotlib
    matplotlib.use("Agg")
    fig, ax = _pyplot().subplots(figsize=(max(6, 0.6 * len(labels)), 4))
    ax.bar(range(len(labels)), list(ratios))
    if log:
        ax.set_yscale("log")
    if target is not None:
        ax.axhline(target, color="k", lw=0.8, ls="--", label=f"target {target:g}x")
        ax.legend()
    ax.set_ylabel(ylabel)
    ax.set_xticks(range(len(labels)), list(labels), rotation=90, fontsize=6)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
