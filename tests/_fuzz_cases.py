"""The fuzz battery of issue 33 (trust, round 4): bad values for every public entry point's parameters.

Run by ``tests/test_fuzz_battery.py`` in a child process (a segmentation fault
or an abort would otherwise kill the test run): ``python tests/_fuzz_cases.py
START STOP`` prints one line per case, ``index<TAB>outcome<TAB>detail``, where
outcome is ``mklopt`` (an mklopt error with a message), ``other`` (any other
exception), ``accepted`` (no error) or ``mutated`` (an input changed).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

BAD_REALS = [float("nan"), float("inf"), -1.0, "a", True, [1, 2], 1e308]
BAD_INTS = [0, -1, 2.5, "a", True, float("nan")]
BAD_VECTORS = ["weights", [float("nan"), 1.0], [1.0], [[1.0, 1.0]], [1.0, 1.0, 1.0, 1.0, 1.0]]

#: (method, option, bad values): each value outside the option's range, or of the wrong type.
WEIGHT_OPTIONS = [
    ("align", "norm", [3, "a", 1.5, True]),
    ("alignf", "norm", [3, "a", 0, True]),
    ("easymkl", "lam", [v for v in BAD_REALS if v != -1.0] + [2.0, -0.5]),
    ("easymkl", "norm", [3, "a", True]),
    ("rmkl", "C", [v for v in BAD_REALS if v != 1e308] + [0.0]),
    ("rmkl", "tol", [0.0, 1.0, "a", float("nan")]),
    ("gram", "lam", BAD_REALS + [2.0]),
    ("gram", "tol", [0.0, -1e-3, 2.0, "a"]),
    ("gram", "max_iter", BAD_INTS),
    ("memo", "theta", BAD_REALS),
    ("memo", "lam", [1.0, -0.1, float("nan"), "a"]),
    ("memo", "tol", ["a", 0.0, float("inf")]),
    ("memo", "max_iter", [-1, 0, 2.5, "a"]),
    ("pwmk", "C", [-1.0, float("nan"), 0.0, "a"]),
    ("pwmk", "delta", [2.0, float("nan"), "a"]),
    ("pwmk", "cv", [1, 2.5, "a", True]),
    ("fheuristic", "norm", [3, "a", True]),
]

#: (driver, options, fit keywords): bad driver options.
DRIVER_CASES = (
    [(d, {"init_weights": v}, {}) for d in ("wrapper", "cutting_plane", "chunking", "simplemkl",
                                            "newton", "mirror_descent") for v in BAD_VECTORS]
    + [("chunking", {"init_alpha": v}, {}) for v in ([float("nan")] * 30, [0.0] * 3, "a")]
    + [("chunking", {"max_cuts": v}, {"p": 1}) for v in ("a", 0, 2.5)]
    + [("chunking", {"Q": v}, {}) for v in (1, "a", 2.5)]
    + [("chunking", {"cache_mb": v}, {}) for v in (0, -5, float("nan"), "a")]
    + [("cutting_plane", {"max_cuts": v}, {"p": 1}) for v in ("a", 0)]
    + [("cutting_plane", {"master": v}, {"p": 2}) for v in ("x", 1)]
    + [("simplemkl", {"line_search_tol": v}, {}) for v in (0.0, 2.0, "a")]
    + [("dca", {"theta": v}, {}) for v in ("a", -1, 2.5)]
    + [("dca", {"theta": 1, "inner_max_iter": v}, {}) for v in (1, "a")]
    + [("krr_projected_gradient", {"max_halvings": v}, {"loss": "squared_error"}) for v in ("a", 0, -3)]
    + [("krr_projected_gradient", {"lam": v}, {"loss": "squared_error"}) for v in (0.0, float("nan"), "a")]
    + [("krr_projected_gradient", {"radius": v}, {"loss": "squared_error"}) for v in (-1.0, "a")]
    + [("krr_projected_gradient", {"mu0": v}, {"loss": "squared_error"}) for v in ([-1.0] * 3, "a")]
    + [("krr_interpolated", {"eta": v}, {"loss": "squared_error"}) for v in (1.0, -0.1, "a")]
    + [("wrapper", {}, {"C": v}) for v in (float("nan"), -1.0, 0.0, "a")]
    + [("wrapper", {}, {"p": v}) for v in (float("nan"), 0.5, "a")]
    + [("wrapper", {}, {"tol": v}) for v in (0.0, 2.0, float("nan"))]
    + [("wrapper", {}, {"max_iter": v}) for v in (0, 2.5, "a")]
)

#: Kernel specs that must be refused, dense and on the fly.
BAD_SPECS = [
    ("poly", {"coef0": "a"}), ("poly", {"degree": "3"}), ("poly", {"degree": True}),
    ("poly", {"degree": 2000}), ("poly", {"degree": 2.5}), ("rbf", {"gamma": float("nan")}),
    ("rbf", {"gamma": -1.0}), ("rbf", {"gamma": "a"}), ("nonsense", {}), ("rbf", {"bogus": 1}),
]

#: (formulation, parameters, solve keywords)
FORMULATION_CASES = (
    [("lanckriet_sdp", {"trace": v}, {}) for v in ([1, 2], "x", -1.0, float("nan"), True)]
    + [("krr_l2", {"lam": v}, {"loss": "squared_error"}) for v in (0.0, "a", float("inf"))]
    + [("krr_l2", {"mu0": v}, {"loss": "squared_error"}) for v in ([-1.0] * 3, [1.0])]
    + [("dc_subproblem", {"theta": v}, {}) for v in ("a", -2, 1.5)]
    + [("vkr_lp", {"lam": v}, {}) for v in (-1.0, float("nan"))]
)


def problem(n: int = 30):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    import mklopt
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.3}), ("rbf", {"gamma": 3.0})])
    return X, ks.K.copy(), y


def cases() -> list:
    """Every case as ``(label, thunk, inputs)``; ``inputs`` are arrays the call must leave unchanged."""
    import mklopt
    from mklopt.regularizers.spectrahedron import Spectrahedron

    X, K, y = problem()
    out = []
    for method, option, values in WEIGHT_OPTIONS:
        for v in values:
            out.append((f"learn_weights {method} {option}={v!r}",
                        lambda m=method, o=option, v=v: mklopt.learn_weights(K, y, m, **{o: v}), (K, y)))
    for driver, options, keywords in DRIVER_CASES:
        target = y.astype(float) if keywords.get("loss") == "squared_error" else y
        out.append((f"fit {driver} {options!r} {keywords!r}",
                    lambda d=driver, o=options, k=keywords, t=target: mklopt.fit(K, t, d, **k, **o),
                    (K, y)))
    for spec in BAD_SPECS:
        for lazy in (False, True):
            out.append((f"from_data {spec!r} lazy={lazy}",
                        lambda s=spec, lz=lazy: mklopt.KernelSet.from_data(X, [s], lazy=lz), (X,)))
    for name, params, keywords in FORMULATION_CASES:
        target = y.astype(float) if keywords.get("loss") == "squared_error" else y
        out.append((f"solve {name} {params!r}",
                    lambda f=name, p=params, k=keywords, t=target: mklopt.solve(K, t, f, **k, **p), (K, y)))
    for trace in ("x", [1, 2], float("nan"), -1.0):
        out.append((f"Spectrahedron trace={trace!r}", lambda t=trace: Spectrahedron(K, trace=t), (K,)))
    small = Spectrahedron(K[:, :20, :20])
    out.append(("certify with a Spectrahedron of another n",
                lambda: mklopt.certify(K, y, np.ones(3) / 3, np.zeros(30), regularizer=small), (K, y)))
    for params in ({"C": float("nan")}, {"C": -1.0}, {"p": 0.5}, {"driver": "nope"}, {"tol": 5.0},
                   {"kernels": [("rbf", {"gamma": float("nan")})]}, {"kernels": "nonsense"},
                   {"max_iter": 0}):
        out.append((f"MKLClassifier {params!r}",
                    lambda p=params: mklopt.MKLClassifier(**p).fit(X, y), (X, y)))
    for params in ({"C": float("nan")}, {"epsilon": -1.0}, {"p": "a"}):
        out.append((f"MKLRegressor {params!r}",
                    lambda p=params: mklopt.MKLRegressor(**p).fit(X, X[:, 0]), (X,)))
    return out


def main(start: int, stop: int) -> None:
    from mklopt.exceptions import MKLError

    warnings.simplefilter("ignore")
    for index, (label, thunk, inputs) in enumerate(cases()[start:stop], start):
        print(f"{index}\tstart\t{label}", flush=True)
        before = [np.array(a, copy=True) for a in inputs]
        try:
            thunk()
            outcome, detail = "accepted", ""
        except MKLError as exc:
            text = str(exc).strip()
            outcome, detail = ("mklopt" if text and "\n" not in text else "other"), f"{type(exc).__name__}: {text}"
        except Exception as exc:  # noqa: BLE001 - the battery reports whatever escaped
            outcome, detail = "other", f"{type(exc).__name__}: {exc}"
        if any(not np.array_equal(a, b) for a, b in zip(before, inputs)):
            outcome = "mutated"
        print(f"{index}\t{outcome}\t{label} -> {detail[:300]}".replace("\n", " "), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["count"]:
        print(len(cases()))
    else:
        main(int(sys.argv[1]), int(sys.argv[2]))
