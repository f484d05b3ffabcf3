"""``mklopt.compile()``: compile mklopt's core for this machine ahead of the first fit.

numba compiles the interleaved core on its first use and caches it on disk
(:mod:`mklopt._compiled.watch`). ``compile()`` makes small fits that reach every compiled
path a fit can take — kernels dense, as low-rank factors and on the fly, each with and
without the threads' splits of large problems; the hinge,
ε-insensitive, one-class and one-vs-rest losses of the SMO core; the PSD tests of small
and large kernels; the pairwise weight methods — so that a later fit (in this process or any other
on this machine using the same cache) compiles nothing. For images and CI: run
``mklopt compile`` once after installing.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._compiled.watch import WATCH, watching

__all__ = ["compile", "CompileReport", "WARMUPS"]


def _data(n: int = 60, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1, -1)


def _specs(X: np.ndarray) -> list:
    from ..estimators.kernel_specs import default_kernels
    from ..kernels.views import scale_gamma

    return default_kernels(scale_gamma(X))


def _dense() -> None:
    from ..api import fit
    from ..kernels import KernelSet

    X, y = _data()
    ks = KernelSet.from_data(X, _specs(X), normalization="multiplicative")
    for loss, target, extra in (("hinge", y, {}), ("epsilon_insensitive", X[:, 0], {"epsilon": 0.1}),
                                ("one_class", None, {"nu": 0.5}), ("ovr_hinge", np.arange(y.size) % 3, {})):
        fit(ks, target, "chunking", loss=loss, **extra)
    fit(ks, y, "wrapper", p=2.0, inner="smo")


def _on_the_fly() -> None:
    from ..api import fit
    from ..kernels import KernelSet

    X, y = _data(80)
    for normalization in ("multiplicative", "spherical"):
        ks = KernelSet.from_data(X, _specs(X), lazy=True, normalization=normalization)
        fit(ks, y, "chunking")
        fit(ks, np.arange(y.size) % 3, "chunking", loss="ovr_hinge")


def _factors() -> None:
    from ..api import fit
    from ..kernels import KernelSet

    X, y = _data()
    fit(KernelSet.from_data(X, _specs(X), rank=10), y, "chunking")


def _validation() -> None:
    from ..kernels import KernelSet
    from ..kernels._small_screens import SMALL_N

    for n in (40, SMALL_N + 10):  # the small kernels' exact test, the large ones' Lanczos screen
        X, _ = _data(n)
        KernelSet(np.stack([X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))]))


def _estimators() -> None:
    from ..estimators import MKLClassifier

    X, y = _data(90)
    MKLClassifier().fit(X, np.arange(y.size) % 3)
    MKLClassifier().fit(X, y)


def _threaded() -> None:
    from .._compiled.splitting import split_small

    with split_small():
        _dense()
        _on_the_fly()
        _factors()


def _weight_methods() -> None:
    from ..kernels import KernelSet
    from ..weight_methods import learn_weights

    X, y = _data(40)
    learn_weights(KernelSet.from_data(X, _specs(X)), y, "pwmk")


#: (what, function) of the warm-up fits, in order.
WARMUPS: list[tuple[str, Callable[[], None]]] = [
    ("kernel validation (PSD tests of small and large kernels)", _validation),
    ("dense kernels: SMO core, four losses, wrapper", _dense),
    ("kernels on the fly", _on_the_fly),
    ("low-rank factors", _factors),
    ("the threaded variants (large problems' code, on small ones)", _threaded),
    ("estimators (default kernels, binary and multiclass)", _estimators),
    ("pairwise weight methods", _weight_methods),
]


@dataclass
class CompileReport:
    """What :func:`compile` did: per warm-up, its seconds and the functions it compiled."""

    steps: list[tuple[str, float, list[tuple[str, float]]]] = field(default_factory=list)
    #: The default fit's functions whose machine code came with the package (loaded, not compiled).
    built_with_package: list[str] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(seconds for _, seconds, _ in self.steps)

    @property
    def compiled(self) -> list[tuple[str, float]]:
        return [record for _, _, records in self.steps for record in records]

    def lines(self) -> list[str]:
        out = [f"built with the package (the default fit's): {len(self.built_with_package)} functions"
               + (f" ({', '.join(self.built_with_package)})" if self.built_with_package else
                  " (none for this machine: reinstalling builds them)")]
        for what, seconds, records in self.steps:
            out.append(f"{what}: {seconds:.1f} s, {len(records)} compiled")
            for name, spent in sorted(records, key=lambda r: -r[1]):
                out.append(f"    {spent:6.2f} s  {name}")
        out.append(f"total {self.seconds:.1f} s; {len(self.compiled)} compilations "
                   f"({'none needed: the cache was warm' if not self.compiled else 'now cached on disk'})")
        return out


def compile(progress: Callable[[str], None] | None = None) -> CompileReport:  # noqa: A001 (the public name)
    """Compile everything a fit can use, now; return what was compiled and how long it took.

    Parameters
    ----------
    progress : callable, optional
        Called with one line before each warm-up (``mklopt compile`` prints them).
    """
    from .._compiled.ahead import built_ahead

    report = CompileReport(built_with_package=built_ahead())
    WATCH.announced = True  # compiling is what was asked for: no notice about it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for what, run in WARMUPS:
            if progress is not None:
                progress(what)
            start = time.perf_counter()
            with watching() as records:
                run()
            report.steps.append((what, time.perf_counter() - start, records))
    return report
