"""The property-based battery of issue 56 (trust, round 5), run in a child process.

``python tests/_property_battery.py ENTRY EXAMPLES`` draws ``EXAMPLES`` inputs with
hypothesis (derandomized: the same draws on every run) for one public entry point
(``kernelset``, ``from_data``, ``solve``, ``fit``, ``certify``, ``estimator``) over
dtypes (int, float16/32/64, complex, object), shapes (0-3-D, 0 rows or columns, 1-2
points), values (NaN, +-inf, 1e+-300), layouts (non-contiguous, read-only), p near 1
and very large and C from 1e-8 to 1e12. Every case must end in

* an mklopt exception (:class:`~mklopt.exceptions.MKLError`) with a one-line message, or
* an answer; one reported certified must have an interval that contains an
  independent reference (another formulation, or scikit-learn's SVC on the combined
  kernel at a fixed weight vector), and its own pair must re-certify to it;

within :data:`CASE_SECONDS` (a SIGALRM inside the case; a hang in compiled code that
never returns to Python is caught by the parent's time limit on this process, which
prints ``start <i>`` before each case), with its inputs unchanged. A signal kills this
process and fails the parent test. The first violation is shrunk by hypothesis and
printed; the exit status is then 1.
"""

from __future__ import annotations

import math
import signal
import sys
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mklopt
from mklopt.exceptions import MKLError

CASE_SECONDS = 60
#: Slack of the reference comparisons, relative to the objective's scale.
REFERENCE_SLACK = 1e-5

DTYPES = ["float64", "float32", "float16", "int64", "complex128", "object"]
SPECIALS = [np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300]
P_VALUES = [1.0, 4.0 / 3.0, 2.0, math.inf, 1.001, 1000.0, 1.0 + 1e-9, 1.0001, 2000.0, 1e6]


#: Outcomes of the run, printed at the end (the parent checks the battery is not vacuous).
STATS = {"mklopt_error": 0, "answer": 0, "certified": 0, "reference": 0}


class Hang(Exception):
    """The case ran past :data:`CASE_SECONDS`."""


def _alarm(signum, frame):
    raise Hang(f"no answer within {CASE_SECONDS} s")


# ----------------------------------------------------------------- strategies
@st.composite
def features(draw, clean: bool = False):
    """X as a user might pass it: mostly sane, sometimes not."""
    n = draw(st.sampled_from([6, 10, 14] if clean else [0, 1, 2, 6, 10]))
    d = draw(st.sampled_from([1, 3] if clean else [0, 1, 3]))
    seed = draw(st.integers(0, 2**16))
    X = np.random.default_rng(seed).standard_normal((n, d)) * draw(st.sampled_from([1.0, 1e-3, 1e3]))
    if clean:
        return X
    shape = draw(st.sampled_from(["2d", "2d", "2d", "1d", "3d"]))
    X = X.ravel() if shape == "1d" else X[None] if shape == "3d" else X
    return _dressed(draw, X)


def _dressed(draw, arr: np.ndarray) -> np.ndarray:
    """``arr`` with a drawn dtype, special values, layout and write flag."""
    if arr.size and draw(st.booleans()):
        flat = arr.reshape(-1).copy()
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from(SPECIALS))
        arr = flat.reshape(arr.shape)
    dtype = draw(st.sampled_from(DTYPES))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arr = arr.astype(object) if dtype == "object" else (
            arr.astype(dtype) if dtype != "int64" else np.nan_to_num(arr).clip(-1e6, 1e6).astype(dtype))
    layout = draw(st.sampled_from(["c", "fortran", "strided", "readonly"]))
    if layout == "fortran" and arr.ndim >= 2:
        arr = np.asfortranarray(arr)
    elif layout == "strided" and arr.ndim >= 1:
        wide = np.repeat(arr, 2, axis=-1)
        arr = wide[..., ::2]
    elif layout == "readonly":
        arr = arr.copy()
        arr.flags.writeable = False
    return arr


@st.composite
def kernel_stacks(draw, clean: bool = False):
    """(M, n, n) stacks of PSD kernels from random features, then dressed."""
    n = draw(st.sampled_from([6, 10] if clean else [1, 2, 6, 10]))
    M = draw(st.sampled_from([1, 2, 3]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.standard_normal((n, 3))
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    stack = np.stack([X @ X.T + 1e-3 * np.eye(n)] + [np.exp(-g * sq) for g in (0.3, 3.0)][: M - 1])
    stack *= draw(st.sampled_from([1.0, 1e-8, 1e8]))
    if clean:
        return stack
    shape = draw(st.sampled_from(["3d", "3d", "2d", "nonsquare", "4d"]))
    stack = (stack[0] if shape == "2d" else stack[:, :, : max(n - 1, 0)] if shape == "nonsquare"
             else stack[None] if shape == "4d" else stack)
    return _dressed(draw, stack)


def labels(draw, n: int):
    kinds = ["pm", "01"] if draw(SANE) else ["one_class_only", "nan", "three"]
    kind = draw(st.sampled_from(kinds))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    if kind == "01":
        return (y > 0).astype(int)
    if kind == "one_class_only":
        return np.ones(n)
    if kind == "nan" and n:
        y[0] = np.nan
    if kind == "three":
        return np.arange(n) % 3
    return y


#: Mostly sane inputs (the answers are then checked against references), sometimes not.
SANE = st.sampled_from([True, True, True, False])
C_VALUES = st.sampled_from([1.0, 1e-8, 1e-4, 100.0, 1e6, 1e12])


# ----------------------------------------------------------------- checks
def unchanged(before: list, after: list) -> bool:
    for (a, writeable), b in zip(before, after):
        if isinstance(a, np.ndarray):
            if a.dtype != b.dtype or a.shape != b.shape or writeable != b.flags.writeable:
                return False
            if a.dtype == object:
                if a.tolist() != b.tolist() and not all(
                        (x != x and y != y) or x == y for x, y in zip(a.ravel(), b.ravel())):
                    return False
            elif not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                return False
    return True


def snapshot(*arrays) -> list:
    """Copies of the inputs and their write flags."""
    return [(np.array(a, copy=True), a.flags.writeable) if isinstance(a, np.ndarray) else (a, None)
            for a in arrays]


def contains(result, reference, scale: float) -> None:
    """The certified interval of ``result`` holds the reference's (overlapping to the slack)."""
    slack = REFERENCE_SLACK * scale
    assert result.dual <= reference.primal + slack, (result.dual, reference.primal)
    assert reference.dual <= result.primal + slack, (reference.dual, result.primal)


def certified(result, tol: float) -> bool:
    return result.status in ("optimal", "converged") and 0.0 <= result.rel_gap <= tol


def _clean_copy(stack) -> mklopt.KernelSet:
    return mklopt.KernelSet(np.array(stack, dtype=float))


def _reference(ks, y, C, p):
    """Another formulation of the same problem: the wrapper's analytic loop to 1e-7."""
    return mklopt.fit(ks, y, "wrapper", C=C, p=p, tol=1e-7, max_iter=5000)


def check_answer(result, ks, y, C, p, tol) -> None:
    if not certified(result, tol):
        return
    STATS["certified"] += 1
    scale = max(abs(result.primal), abs(result.dual), 1e-12)
    again = mklopt.certify(ks, y, result.weights, result.alpha, C=C, p=p)
    assert abs(again.primal - result.primal) <= 1e-6 * scale and abs(again.dual - result.dual) <= 1e-6 * scale
    try:
        reference = _reference(ks, y, C, p)
    except MKLError:
        return
    if certified(reference, 1e-4):
        contains(result, reference, scale)
        STATS["reference"] += 1


# ----------------------------------------------------------------- entry points
def case_kernelset(draw):
    stack = draw(kernel_stacks())
    before = snapshot(stack)
    mklopt.KernelSet(stack)
    return before, [stack]


def case_from_data(draw):
    X = draw(features())
    spec = draw(st.sampled_from(["linear", ("rbf", {"gamma": 0.5}), ("poly", {"degree": 2})]))
    path = draw(st.sampled_from([{}, {"rank": 2}, {"lazy": True}, {"normalization": "multiplicative"}]))
    before = snapshot(X)
    ks = mklopt.KernelSet.from_data(X, [spec], **path)
    assert ks.n == np.shape(X)[0]
    return before, [X]


def case_solve(draw):
    stack = draw(kernel_stacks(clean=draw(SANE)))
    n = np.shape(stack)[1] if np.ndim(stack) >= 2 else 0
    y = labels(draw, n)
    C, p = draw(C_VALUES), draw(st.sampled_from(P_VALUES))
    formulation = draw(st.sampled_from(["lp_dual", "lp_primal", "qcqp_l1"]))
    before = snapshot(stack, y)
    result = mklopt.solve(stack, y, formulation, C=C, p=p)
    check_answer(result, _clean_copy(stack), y, C, p, 1e-6)
    return before, [stack, y]


def case_fit(draw):
    stack = draw(kernel_stacks(clean=draw(SANE)))
    n = np.shape(stack)[1] if np.ndim(stack) >= 2 else 0
    y = labels(draw, n)
    C, p = draw(C_VALUES), draw(st.sampled_from(P_VALUES))
    driver = draw(st.sampled_from(["wrapper", "cutting_plane", "chunking", "simplemkl"]))
    before = snapshot(stack, y)
    result = mklopt.fit(stack, y, driver, C=C, p=p, tol=1e-4, max_iter=3000, time_limit=30)
    check_answer(result, _clean_copy(stack), y, C, p, 1e-4)
    return before, [stack, y]


def case_certify(draw):
    stack = draw(kernel_stacks(clean=True))
    n = stack.shape[1]
    y = labels(draw, n)
    weights = np.abs(np.random.default_rng(n).standard_normal(stack.shape[0]))
    weights = weights / weights.sum() if draw(SANE) else _dressed(draw, weights)
    alpha = np.full(n, 0.1) if draw(SANE) else _dressed(draw, np.full(n, 0.1))
    C, p = draw(C_VALUES), draw(st.sampled_from(P_VALUES))
    before = snapshot(stack, y, weights, alpha)
    cert = mklopt.certify(stack, y, weights, alpha, C=C, p=p)
    if cert.feasible and cert.consistent():
        # weak duality against a reference optimum: dual <= OPT <= primal
        reference = _reference(_clean_copy(stack), y, C, p)
        if certified(reference, 1e-4):
            scale = max(abs(cert.primal), abs(reference.primal), 1e-12)
            assert cert.dual <= reference.primal + REFERENCE_SLACK * scale
            assert reference.dual <= cert.primal + REFERENCE_SLACK * scale
            STATS["reference"] += 1
    return before, [stack, y, weights, alpha]


def case_estimator(draw):
    X = draw(features(clean=draw(SANE)))
    n = np.shape(X)[0] if np.ndim(X) else 0
    y = labels(draw, n)
    C = draw(C_VALUES)
    before = snapshot(X, y)
    clf = mklopt.MKLClassifier(kernels=["linear", ("rbf", {"gamma": 0.5})], C=C).fit(X, y)
    assert np.all(np.isfinite(clf.decision_function(X)))
    return before, [X, y]


ENTRIES = {"kernelset": case_kernelset, "from_data": case_from_data, "solve": case_solve,
           "fit": case_fit, "certify": case_certify, "estimator": case_estimator}


def main(entry: str, examples: int) -> int:
    case = ENTRIES[entry]
    counter = {"i": 0}
    signal.signal(signal.SIGALRM, _alarm)

    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(st.data())
    def battery(data):
        counter["i"] += 1
        print(f"start {counter['i']}", flush=True)
        signal.alarm(CASE_SECONDS)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                before, after = case(data.draw)
        except MKLError as exc:
            message = str(exc)
            assert message and "\n" not in message.strip(), f"not one line: {message!r}"
            STATS["mklopt_error"] += 1
            return
        except Hang:
            raise AssertionError(f"hang: no answer within {CASE_SECONDS} s") from None
        finally:
            signal.alarm(0)
        assert unchanged(before, after), "an input was modified"
        STATS["answer"] += 1

    try:
        battery()
    except BaseException as exc:  # hypothesis re-raises the shrunk failure(s)
        for failure in getattr(exc, "exceptions", [exc]):
            notes = " | ".join(getattr(failure, "__notes__", []))
            print(f"FAILED {entry}: {type(failure).__name__}: {str(failure)[:500]} [{notes[:1500]}]", flush=True)
        return 1
    print(f"passed {entry} {counter['i']} " + " ".join(f"{k}={v}" for k, v in STATS.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
