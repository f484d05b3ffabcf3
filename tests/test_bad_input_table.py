"""Issue 11: every bad input to the API and the estimators ends in one clear mklopt error.

:data:`ROWS` is the table: an id, the call, the expected mklopt exception class
and a fragment of its message. Each row must raise that class (never a raw
Python, NumPy, scikit-learn or CVXPY exception) and must leave its inputs
untouched. :data:`VALID` lists inputs that are odd but valid and must be
accepted. A Hypothesis fuzz test over stacks, labels and parameters asserts
that every call ends either in an mklopt error or in a result whose bounds
are finite and valid. The command-line rows are in ``test_cli_bad_input.py``.
"""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mklopt
from mklopt import MKLClassifier, VKRClassifier
from mklopt.exceptions import (BackendError, FormulationError, InvalidInputError, KernelError,
                               MKLError, NotPSDError, RankError)
from mklopt.regularizers import ConstraintSet, ElasticNet


def _problem(n: int = 30, M: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    ks = mklopt.KernelSet.from_data(X, ["linear", ("rbf", {"gamma": 0.2}), ("poly", {"degree": 2})][:M])
    return X, ks.K.copy(), y


X, K, Y = _problem()
M, N = K.shape[0], K.shape[1]
W = np.ones(M) / M
A = np.full(N, 0.1)


def _scaled(factor: float) -> np.ndarray:
    return K * factor


def _fit(**kw):
    return mklopt.fit(K, Y, kw.pop("driver", "wrapper"), **{"p": 2.0, **kw})


def _solve(**kw):
    return mklopt.solve(K, Y, kw.pop("formulation", "lp_dual"), **kw)


def _clf(**kw):
    return MKLClassifier(**{"kernels": ["linear", ("rbf", {"gamma": 0.2})], **kw}).fit(X, Y)


ROWS = [
    # --- kernels
    ("kernels NaN", lambda: _solve(kernels=None) if False else mklopt.solve(np.where(K > 1, np.nan, K), Y),
     KernelError, "NaN"),
    ("kernels inf", lambda: mklopt.solve(np.where(K > 1, np.inf, K), Y), KernelError, "infinite"),
    ("kernels complex", lambda: mklopt.KernelSet(K + 1j * K), KernelError, "complex"),
    ("kernels strings", lambda: mklopt.KernelSet([["a", "b"], ["c", "d"]]), KernelError, "numeric"),
    ("kernels ragged", lambda: mklopt.KernelSet([K[0], K[1][:5, :5]]), KernelError, "same size"),
    ("kernels 1-D", lambda: mklopt.KernelSet(np.ones(5)), KernelError, "shape"),
    ("kernels 4-D", lambda: mklopt.KernelSet(K[None]), KernelError, "shape"),
    ("kernels empty list", lambda: mklopt.KernelSet([]), KernelError, "kernel"),
    ("kernels not square", lambda: mklopt.KernelSet(K[:, :, :-1]), KernelError, "square"),
    ("kernels zero", lambda: mklopt.KernelSet(np.zeros((2, 4, 4))), KernelError, "all zero"),
    ("kernels asymmetric", lambda: mklopt.solve(K + np.triu(np.ones((N, N)))[None], Y),
     KernelError, "not symmetric"),
    ("kernels not PSD", lambda: mklopt.solve(K - 5 * np.eye(N)[None], Y), NotPSDError,
     "not positive semidefinite"),
    ("kernels 1e150 wrapper", lambda: mklopt.fit(_scaled(1e150), Y, "wrapper", p=2.0), KernelError,
     "rescale"),
    ("kernels None", lambda: mklopt.solve(None, Y), KernelError, "kernels"),
    ("names count", lambda: mklopt.KernelSet(K, names=["a"]), KernelError, "names"),
    ("normalization unknown", lambda: mklopt.KernelSet(K).normalized("foo"), KernelError,
     "unknown normalization"),
    ("tail_sum no theta", lambda: mklopt.KernelSet(K).normalized("tail_sum"), RankError, "cutoff"),
    ("tail_sum theta 2.7", lambda: mklopt.KernelSet(K).normalized("tail_sum", theta=2.7),
     InvalidInputError, "integer"),
    ("tail_sum theta -1", lambda: mklopt.KernelSet(K).normalized("tail_sum", theta=-1),
     InvalidInputError, ">= 0"),
    ("tail_sum theta n", lambda: mklopt.KernelSet(K).normalized("tail_sum", theta=N), RankError,
     "rank"),
    ("psd_check unknown", lambda: mklopt.KernelSet(K, psd_check="maybe"), KernelError, "psd_check"),
    # --- labels
    ("labels None", lambda: mklopt.solve(K, None), InvalidInputError, "None"),
    ("labels wrong length", lambda: mklopt.solve(K, Y[:-1]), InvalidInputError, "must match"),
    ("labels three classes", lambda: mklopt.solve(K, np.arange(N) % 3), InvalidInputError,
     "two classes"),
    ("labels one class", lambda: mklopt.solve(K, np.ones(N)), InvalidInputError, "two classes"),
    ("labels NaN", lambda: mklopt.solve(K, np.where(Y > 0, np.nan, 0.0)), InvalidInputError, "NaN"),
    ("labels complex", lambda: mklopt.solve(K, Y + 1j), InvalidInputError, "complex"),
    ("labels 2-D", lambda: mklopt.solve(K, np.ones((N, 2))), InvalidInputError, "1-D"),
    ("labels contain None", lambda: mklopt.solve(K, np.array([None] + [1] * (N - 1), dtype=object)),
     InvalidInputError, "None"),
    # --- C, p, tol, max_iter, time_limit
    ("C zero", lambda: _solve(C=0), InvalidInputError, "C must be"),
    ("C negative", lambda: _solve(C=-1.0), InvalidInputError, "C must be"),
    ("C nan", lambda: _solve(C=float("nan")), InvalidInputError, "C must be"),
    ("C inf", lambda: _solve(C=float("inf")), InvalidInputError, "C must be"),
    ("C bool", lambda: _solve(C=True), InvalidInputError, "C must be"),
    ("C string", lambda: _solve(C="1"), InvalidInputError, "C must be"),
    ("p below 1", lambda: _solve(p=0.5), InvalidInputError, "p"),
    ("p nan", lambda: _solve(p=float("nan")), InvalidInputError, "p"),
    ("p string", lambda: _solve(p="2"), InvalidInputError, "p"),
    ("solve tol 0", lambda: _solve(tol=0), InvalidInputError, "tol must be"),
    ("solve tol 10", lambda: _solve(tol=10), InvalidInputError, "tol must be"),
    ("solve tol -1", lambda: _solve(tol=-1), InvalidInputError, "tol must be"),
    ("solve tol nan", lambda: _solve(tol=float("nan")), InvalidInputError, "tol must be"),
    ("solve tol 'a'", lambda: _solve(tol="a"), InvalidInputError, "tol must be"),
    ("fit tol 10", lambda: _fit(tol=10), InvalidInputError, "tol must be"),
    ("fit tol 1", lambda: _fit(tol=1.0), InvalidInputError, "tol must be"),
    ("fit max_iter 0", lambda: _fit(max_iter=0), InvalidInputError, "max_iter"),
    ("fit max_iter 1.5", lambda: _fit(max_iter=1.5), InvalidInputError, "max_iter"),
    ("fit max_iter -3", lambda: _fit(max_iter=-3), InvalidInputError, "max_iter"),
    ("fit max_iter string", lambda: _fit(max_iter="10"), InvalidInputError, "max_iter"),
    ("fit time_limit nan", lambda: _fit(time_limit=float("nan")), InvalidInputError, "time_limit"),
    ("fit time_limit 0", lambda: _fit(time_limit=0), InvalidInputError, "time_limit"),
    ("fit time_limit -1", lambda: _fit(time_limit=-1.0), InvalidInputError, "time_limit"),
    ("fit callback not callable", lambda: _fit(callback=3), InvalidInputError, "callback"),
    ("verify not bool", lambda: _solve(verify="yes"), InvalidInputError, "verify"),
    # --- formulations, drivers, backends, regularizers
    ("formulation unknown", lambda: _solve(formulation="simplex"), FormulationError,
     "unknown formulation"),
    ("formulation extra param", lambda: _solve(formulation="lp_dual", gamma=3), FormulationError,
     "unexpected parameters"),
    ("driver unknown", lambda: _fit(driver="simplex"), FormulationError, "unknown driver"),
    ("driver not a string", lambda: _fit(driver=5), FormulationError, "unknown driver"),
    ("backend unknown", lambda: _solve(backend="NOPE"), BackendError, "NOPE"),
    ("backend incapable", lambda: _solve(formulation="lp_dual", p=2.0, backend="HIGHS"),
     BackendError, "HIGHS"),
    ("svm weights wrong length", lambda: _solve(formulation="svm", weights=np.ones(M + 2)),
     InvalidInputError, "weights"),
    ("regularizer wrong type", lambda: _solve(formulation="lp_primal", regularizer=42),
     InvalidInputError, "regularizer"),
    ("regularizer unbounded", lambda: _solve(formulation="lp_primal",
                                             regularizer=ConstraintSet(lambda mu: [mu >= 0.1])),
     InvalidInputError, "unbounded"),
    ("regularizer empty", lambda: _solve(formulation="lp_primal",
                                         regularizer=ConstraintSet(lambda mu: [cp.sum(mu) <= -1])),
     InvalidInputError, "empty"),
    ("regularizer not DCP", lambda: _solve(formulation="lp_primal", regularizer=ConstraintSet(
        lambda mu: [cp.sum(mu) <= 1, cp.sqrt(mu[0]) <= 0.5])), InvalidInputError, "not DCP"),
    ("regularizer raises", lambda: _solve(formulation="lp_primal", regularizer=ConstraintSet(
        lambda mu: [mu[99] <= 1])), InvalidInputError, "raised"),
    ("regularizer returns non-constraint", lambda: _solve(
        formulation="lp_primal", regularizer=ConstraintSet(lambda mu: [3])), InvalidInputError,
     "CVXPY constraints"),
    ("elastic net negative", lambda: ElasticNet(-1.0, 1.0), InvalidInputError, "ElasticNet"),
    ("p = 1 + 1e-12 wrapper", lambda: _fit(p=1 + 1e-12), InvalidInputError, "p"),
    # --- certify
    ("certify string weights", lambda: mklopt.certify(K, Y, ["a"] * M, A), InvalidInputError,
     "weights"),
    ("certify weights wrong length", lambda: mklopt.certify(K, Y, np.ones(M + 1), A),
     InvalidInputError, "weights"),
    ("certify alpha NaN", lambda: mklopt.certify(K, Y, W, np.full(N, np.nan)), InvalidInputError,
     "alpha"),
    ("certify alpha wrong length", lambda: mklopt.certify(K, Y, W, A[:-2]), InvalidInputError,
     "alpha"),
    ("certify weights None", lambda: mklopt.certify(K, Y, None, A), InvalidInputError, "weights"),
    ("certify feasibility_tol 2", lambda: mklopt.certify(K, Y, W, A, feasibility_tol=2.0),
     InvalidInputError, "feasibility_tol"),
    # --- estimators
    ("clf driver vkr_cd", lambda: _clf(driver="vkr_cd"), InvalidInputError, "driver"),
    ("clf driver unknown", lambda: _clf(driver="simplex"), InvalidInputError, "driver"),
    ("clf C zero", lambda: _clf(C=0.0), InvalidInputError, "C must be"),
    ("clf tol 2", lambda: _clf(tol=2.0), InvalidInputError, "tol must be"),
    ("clf max_iter 0", lambda: _clf(max_iter=0), InvalidInputError, "max_iter"),
    ("clf p 0.5", lambda: _clf(p=0.5), InvalidInputError, "p"),
    ("clf theta -1", lambda: _clf(theta=-1), InvalidInputError, "theta"),
    ("clf normalization unknown", lambda: _clf(normalization="foo"), InvalidInputError,
     "normalization"),
    ("clf kernels empty", lambda: _clf(kernels=[]), InvalidInputError, "empty"),
    ("clf kernel name unknown", lambda: _clf(kernels=["no_such_kernel"]), InvalidInputError,
     "no_such_kernel"),
    ("clf kernel param unknown", lambda: _clf(kernels=[("rbf", {"width": 2})]), InvalidInputError,
     "width"),
    ("clf one class", lambda: MKLClassifier().fit(X, np.ones(N)), InvalidInputError, "class"),
    ("vkr lam negative", lambda: VKRClassifier(lam=-1.0).fit(X, Y), InvalidInputError, "lam"),
]


@pytest.mark.parametrize("name, call, error, fragment", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_row(name, call, error, fragment):
    before = (K.copy(), Y.copy(), X.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mklopt.exceptions.MKLWarning)
        with pytest.raises(error) as info:
            call()
    message = str(info.value)
    assert fragment.lower() in message.lower(), message
    assert "\n" not in message.strip() and len(message) < 600, message  # one clear sentence or two
    for original, now in zip(before, (K, Y, X)):
        np.testing.assert_array_equal(original, now)  # nothing mutated


def test_the_table_has_enough_rows():
    from test_cli_bad_input import ROWS as CLI_ROWS

    assert len(ROWS) + len(CLI_ROWS) >= 60


# ------------------------------------------------------------------ valid though odd
def _low_rank_float32() -> np.ndarray:
    rng = np.random.default_rng(3)
    G = rng.standard_normal((200, 5)).astype(np.float32)
    return np.stack([G @ G.T, (G[:, :3] @ G[:, :3].T)]).astype(np.float32)


VALID = [
    ("float32 low-rank PSD, rounding clipped", lambda: mklopt.KernelSet(_low_rank_float32(), psd_tol=1e-6)),
    ("one pandas DataFrame", lambda: mklopt.KernelSet(__import__("pandas").DataFrame(K[0]))),
    ("list of DataFrames", lambda: mklopt.KernelSet([__import__("pandas").DataFrame(k) for k in K])),
    ("integer kernels", lambda: mklopt.KernelSet(np.round(K * 10).astype(int) + 40 * np.eye(N, dtype=int))),
    ("labels as strings", lambda: mklopt.solve(K, np.where(Y > 0, "yes", "no"))),
    ("labels as a column", lambda: mklopt.solve(K, Y[:, None])),
    ("labels as pandas Series", lambda: mklopt.solve(K, __import__("pandas").Series(Y))),
    ("max_iter 100.0", lambda: _fit(max_iter=100.0)),
    ("theta 2.0", lambda: mklopt.KernelSet(K).normalized("tail_sum", theta=2.0)),
]


@pytest.mark.parametrize("name, call", VALID, ids=[v[0] for v in VALID])
def test_valid_input_is_accepted(name, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mklopt.exceptions.MKLWarning)
        out = call()
    if isinstance(out, mklopt.MKLResult):
        assert math.isfinite(out.primal) and math.isfinite(out.dual) and out.dual <= out.primal


# ------------------------------------------------------------------ fuzz
@st.composite
def instances(draw):
    n = draw(st.integers(2, 12))
    M = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    kind = draw(st.sampled_from(["psd", "psd", "indefinite", "asymmetric", "nan", "scaled"]))
    G = rng.standard_normal((M, n, draw(st.integers(1, n))))
    stack = G @ G.transpose(0, 2, 1)
    if kind == "indefinite":
        stack -= draw(st.floats(0.0, 10.0)) * np.eye(n)
    elif kind == "asymmetric":
        stack += np.triu(rng.standard_normal((n, n)))
    elif kind == "nan":
        stack[0, 0, 0] = np.nan
    elif kind == "scaled":
        stack *= 10.0 ** draw(st.floats(-150, 150))
    y = draw(st.lists(st.sampled_from([-1, 1, 0]), min_size=n, max_size=n))
    C = draw(st.one_of(st.floats(-1.0, 1e4), st.just(0.0), st.just(float("nan"))))
    p = draw(st.one_of(st.floats(0.5, 10.0), st.just(1.0), st.just(1 + 1e-12), st.just(math.inf)))
    method = draw(st.sampled_from(["lp_dual", "qcqp_l1", "wrapper", "cutting_plane"]))
    return stack, np.array(y), C, p, method


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_fuzz_either_an_mklopt_error_or_valid_bounds(case):
    stack, y, C, p, method = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if method in ("wrapper", "cutting_plane"):
                res = mklopt.fit(stack, y, method, C=C, p=p, max_iter=50)
            else:
                res = mklopt.solve(stack, y, method, C=C, p=p)
        except MKLError:
            return
    assert math.isfinite(res.primal) and math.isfinite(res.dual)
    assert res.dual <= res.primal + 1e-9 * max(1.0, abs(res.primal))
    assert res.rel_gap >= 0 and np.all(np.isfinite(res.weights)) and np.all(res.weights >= 0)
