"""Bad input found by fuzzing the public API raises mklopt's own exceptions, naming what is wrong.

Each case raised a foreign exception before (scikit-learn's ``ValueError``, NumPy's
``TypeError``, a Sphinx traceback): a class label that is continuous or of mixed types, a
``kernels=`` or ``specs`` that is not a spec or a sequence of them, a SciPy sparse kernel,
complex features cast silently to their real parts, test features so large that the kernels
overflow, a grid ``Cs=`` that is a number, an ``n_jobs`` of 0 or a string (joblib's errors), an
output folder that cannot be made, regularizers made of strings, a kernel set's methods given a
wrong index, weights or coefficients, a reference catalogue that cannot be read. And two wrong answers: a penalty (``BlockNorm``,
``VKRPenalty``) given to an outer loop ran it to ``max_iter`` (minutes by default) with weights
growing without bound and a gap of 1 (now refused at once), and spherically normalized test
kernels of tiny features underflowed to NaN decisions from a converged fit.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mklopt
import mklopt.datasets
import mklopt.testing
from mklopt.exceptions import FormulationError, InvalidInputError, KernelError, SolverError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((40, 3))
Y = np.where(X[:, 0] > 0, 1.0, -1.0)
KERNELS = mklopt.kernel_stack(X, ["linear", ("rbf", {"gamma": 0.5})])
MIXED = np.array([1, "a"] * 20, dtype=object)


def _fitted() -> mklopt.MKLClassifier:
    return mklopt.MKLClassifier().fit(X, Y)


CASES = {
    "continuous labels": (lambda: mklopt.MKLClassifier().fit(X, X[:, 0]), InvalidInputError, "Unknown label type"),
    "mixed labels": (lambda: mklopt.MKLClassifier().fit(X, MIXED), InvalidInputError, "Unknown label type"),
    "missing labels, VKR": (lambda: mklopt.VKRClassifier().fit(X, np.where(Y > 0, "a", None)), InvalidInputError,
                            "missing labels"),
    "mixed labels, VKR": (lambda: mklopt.VKRClassifier().fit(X, MIXED), InvalidInputError, "Unknown label type"),
    "kernels=5": (lambda: mklopt.MKLClassifier(kernels=5).fit(X, Y), KernelError, "got int 5"),
    "kernels=5, VKR": (lambda: mklopt.VKRClassifier(kernels=5).fit(X, Y), KernelError, "got int 5"),
    "specs=None": (lambda: mklopt.kernel_stack(X, None), KernelError, "got NoneType"),
    "specs=5, from_data": (lambda: mklopt.KernelSet.from_data(X, 5), KernelError, "got int 5"),
    "specs=5, views": (lambda: mklopt.views({"a": [0, 1]}, 5), KernelError, "got int 5"),
    "sparse kernel": (lambda: mklopt.KernelSet(sp.csr_matrix(KERNELS[0])), KernelError, r"K\.toarray\(\)"),
    "sparse kernels in a list": (lambda: mklopt.fit([sp.csr_matrix(K) for K in KERNELS], Y), KernelError, "sparse"),
    "complex features": (lambda: mklopt.kernel_stack(X + 1j, ["linear"]), KernelError, "complex"),
    "sparse features": (lambda: mklopt.kernel_stack(sp.csr_matrix(X), ["linear"]), KernelError, "sparse"),
    "huge test features": (lambda: _fitted().predict(X * 1e160), KernelError, "their products overflow"),
    "Cs=5": (lambda: mklopt.path(mklopt.KernelSet(KERNELS), Y, Cs=5), InvalidInputError, r"Cs=\[C\]"),
    "BlockNorm('x')": (lambda: mklopt.BlockNorm("x"), InvalidInputError, "a number >= 1"),
    "WeightedL1('x')": (lambda: mklopt.WeightedL1("x"), InvalidInputError, "real numbers"),
    "Fixed({})": (lambda: mklopt.Fixed({"a": 1}), InvalidInputError, "real numbers"),
    "NonIsotropic('x')": (lambda: mklopt.NonIsotropic("x"), InvalidInputError, "real numbers"),
    "NonIsotropic(vector)": (lambda: mklopt.NonIsotropic(np.ones(3)), InvalidInputError, "square matrix"),
    "VKRPenalty('x')": (lambda: mklopt.VKRPenalty("x"), InvalidInputError, "real numbers"),
    "GroupSimplex(ragged)": (lambda: mklopt.GroupSimplex([[0], [1, 2]]), InvalidInputError, r"e\.g\. \[0, 0, 1\]"),
    "Spectrahedron('x')": (lambda: mklopt.Spectrahedron("x"), InvalidInputError, "real numbers"),
    "combined(2 weights)": (lambda: mklopt.KernelSet(KERNELS).combined(np.ones(3)), KernelError,
                            r"2 numbers .* shape \(3,\)"),
    "combined(None)": (lambda: mklopt.KernelSet(KERNELS).combined(None), KernelError, "real numbers"),
    "centered_alignment(NaN y)": (lambda: mklopt.KernelSet(KERNELS).centered_alignment(Y * np.nan), KernelError, "NaN"),
    "factor(5)": (lambda: mklopt.KernelSet(KERNELS).factor(5), KernelError, r"integer in \[0, 2\)"),
    "eig(1.5)": (lambda: mklopt.KernelSet(KERNELS).eig(1.5), KernelError, "integer"),
    "products(short)": (lambda: mklopt.KernelSet(KERNELS).products(np.ones(5)), KernelError, "over the 40 points"),
    "quadratic_terms('x')": (lambda: mklopt.KernelSet(KERNELS).quadratic_terms("x"), KernelError, "real numbers"),
    "centered_alignment(short y)": (lambda: mklopt.KernelSet(KERNELS).centered_alignment(Y[:5]), KernelError,
                                    "40 points"),
    "spherical, K(x, x) = 0 at a test point": (
        lambda: mklopt.MKLClassifier(kernels=["linear"], normalization="spherical").fit(X, Y).predict(np.zeros((2, 3))),
        KernelError, "needs K\\(x, x\\) > 0, but kernel 0 is 0 at test point 0"),
    "reference catalogue missing": (lambda: mklopt.testing.reference_instances(path="/no/such/catalogue.json"),
                                    InvalidInputError, "cannot read the catalogue"),
    "reference catalogue not JSON": (lambda: mklopt.testing.load_catalogue(__file__), InvalidInputError,
                                     "is not a JSON catalogue"),
    "reference names not names": (lambda: mklopt.testing.reference_instances(5), InvalidInputError, "instance names"),
    "check_solver instances=5": (lambda: mklopt.testing.check_solver(lambda *a, **k: None, 5), InvalidInputError,
                                 "a sequence of ReferenceInstance"),
    "reference definition without kernels": (lambda: mklopt.testing.build_kernels({"name": "mine", "dataset": "iris"}),
                                             InvalidInputError, "'mine' has no 'kernels'"),
    "pwmk on a kernel of 1e100": (lambda: mklopt.learn_weights(np.stack([KERNELS[0] * 1e100, KERNELS[1]]), Y, "pwmk"),
                                  SolverError, "libsvm could not fit kernel 'K0'.*normalize"),
    "load_mfeat(views=5)": (lambda: mklopt.datasets.load_mfeat(views=5), InvalidInputError, "mfeat has the views"),
    "transform_test(None)": (lambda: mklopt.KernelSet(KERNELS).transform_test(None), KernelError, "real numbers"),
    "transform_test(4-D)": (lambda: mklopt.KernelSet(KERNELS).transform_test(np.ones((2, 3, 40, 1))), KernelError,
                            "shape"),
    "n_jobs=0": (lambda: mklopt.MKLClassifier(n_jobs=0).fit(X, np.arange(40) % 3), InvalidInputError,
                 "non-zero integer"),
    "n_jobs='x'": (lambda: mklopt.MKLClassifier(n_jobs="x", multiclass="ovo").fit(X, np.arange(40) % 3),
                   InvalidInputError, "non-zero integer"),
    "one class": (lambda: mklopt.MKLClassifier().fit(X, np.ones(40)), InvalidInputError,
                  r"got 1 class \(1\.0\)\."),  # the label as written, not NumPy's np.float64(1.0)
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_bad_input_raises_mklopts_own_error(case):
    call, error, phrase = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)  # never a silent cast
        with pytest.raises(error, match=phrase):
            call()


def test_one_spec_is_a_list_of_one_everywhere():
    """A lone spec is one kernel in every entry point (``kernel_stack(X, "linear")`` made a
    kernel of each letter before): the same stack as the list of one."""
    one = mklopt.kernel_stack(X, ["linear"])
    np.testing.assert_array_equal(mklopt.kernel_stack(X, "linear"), one)
    from_one = mklopt.KernelSet.from_data(X, "linear").K
    np.testing.assert_array_equal(from_one, mklopt.KernelSet.from_data(X, ["linear"]).K)
    assert len(mklopt.views({"a": [0, 1], "b": [2]}, ("rbf", {"gamma": 1.0}))) == 2


def test_docs_refuses_an_output_folder_it_cannot_make(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    done = subprocess.run([sys.executable, "-m", "mklopt", "docs", "--out", str(blocker / "site")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr + done.stdout
    assert "cannot make the folder" in done.stderr


@pytest.mark.parametrize("penalty", [mklopt.BlockNorm(1.0), mklopt.BlockNorm(1.5), mklopt.VKRPenalty(np.ones(2))],
                         ids=repr)
@pytest.mark.parametrize("driver", [None, "wrapper", "chunking"])
def test_a_penalty_is_refused_by_an_outer_loop_at_once(penalty, driver):
    with pytest.raises(FormulationError, match="is a penalty, not a bounded set of weights"):
        mklopt.fit(mklopt.KernelSet(KERNELS), Y, driver, regularizer=penalty)


def test_a_block_norm_penalty_is_solved_by_its_formulation_as_with_b():
    """``lp_block_primal`` takes the penalty that names it, ``regularizer=BlockNorm(b)``: the
    same problem as ``b=``, and for b < 2 the weight-norm problem of p = b/(2-b) that an outer
    loop solves (Kloft's thesis, the block and weight norm formulations)."""
    ks = mklopt.KernelSet(KERNELS)
    by_penalty = mklopt.solve(ks, Y, "lp_block_primal", regularizer=mklopt.BlockNorm(1.5))
    by_b = mklopt.solve(ks, Y, "lp_block_primal", b=1.5)
    loop = mklopt.fit(ks, Y, p=1.5 / 0.5, tol=1e-6)
    assert by_penalty.status == by_b.status == "optimal" and loop.status == "converged"
    assert by_penalty.objective == pytest.approx(by_b.objective, rel=1e-9)
    assert by_penalty.objective == pytest.approx(loop.objective, rel=1e-5)


def test_spherical_test_kernels_of_tiny_features_are_finite_and_those_of_training():
    """Features of 1e-140: a linear kernel's diagonal is ~1e-280 and the product of a test and
    a training diagonal underflowed to 0 at prediction (NaN decisions from a converged fit).
    Divided by one root at a time, as in training, the training points' test kernels are the
    training kernels bit for bit."""
    tiny = X * 1e-140
    model = mklopt.MKLClassifier(normalization="spherical").fit(tiny, Y)
    assert model.result_.status == "converged" and np.all(np.isfinite(model.decision_function(tiny)))
    ks = mklopt.KernelSet(mklopt.kernel_stack(tiny, ["linear", ("rbf", {"gamma": 1.0})])).normalized("spherical")
    raw = mklopt.kernel_stack(tiny, ["linear", ("rbf", {"gamma": 1.0})])
    np.testing.assert_array_equal(ks.transform_test(raw, np.einsum("mii->mi", raw)), ks.K)


@pytest.mark.parametrize("scale", [1e-200, 1e-100, 1e100])
def test_fheuristic_weights_do_not_depend_on_a_kernels_scale(scale):
    """The alignment y'Ky/(n ||K||_F) is scale-free; with NumPy's norm a kernel of 1e-200 had a
    norm of 0 and FHeuristic returned NaN weights as an answer."""
    reference = mklopt.learn_weights(KERNELS, Y, "fheuristic")
    scaled = mklopt.learn_weights(np.stack([KERNELS[0] * scale, KERNELS[1]]), Y, "fheuristic")
    np.testing.assert_allclose(scaled, reference, rtol=1e-12)


@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1e100])
def test_alignments_of_a_tiny_or_huge_kernel_are_those_of_the_kernel(scale):
    """Centered alignments are scale-free, and alignf's weights of s K are its weights of K / s:
    the squares of a kernel of 1e-160 underflowed (align gave it the weight 0, alignf NaN or 0,
    centered_alignment inf and NaN)."""
    reference = mklopt.KernelSet(KERNELS)
    scaled = mklopt.KernelSet(np.stack([KERNELS[0] * scale, KERNELS[1]]))
    np.testing.assert_allclose(scaled.centered_alignment(Y), reference.centered_alignment(Y), rtol=1e-12)
    np.testing.assert_allclose(scaled.centered_alignment(), reference.centered_alignment(), rtol=1e-12)
    np.testing.assert_allclose(mklopt.learn_weights(scaled, Y, "align"), mklopt.learn_weights(reference, Y, "align"),
                               rtol=1e-12)
    alignf, alignf_reference = mklopt.learn_weights(scaled, Y, "alignf"), mklopt.learn_weights(reference, Y, "alignf")
    assert np.all(np.isfinite(alignf))
    assert alignf[1] / alignf[0] == pytest.approx(scale * alignf_reference[1] / alignf_reference[0], rel=1e-10)


def test_one_mfeat_view_name_is_one_view():
    one = mklopt.datasets.load_mfeat(views="fou")
    listed = mklopt.datasets.load_mfeat(views=["fou"])
    assert list(one.views) == ["fou"]
    np.testing.assert_array_equal(one.views["fou"], listed.views["fou"])


def test_a_candidate_of_another_shape_is_not_taken_apart_silently():
    """Weights of shape (2, 2) for four kernels, or alpha of the three classes transposed (n, k),
    were flattened and certified as the candidate they were not; the shape named is accepted."""
    four = mklopt.KernelSet(np.concatenate([KERNELS, KERNELS]))
    with pytest.raises(InvalidInputError, match=r"weights must be a 1-D array of 4 real numbers, got shape \(2, 2\)"):
        mklopt.certify(four, Y, np.full((2, 2), 0.25), np.zeros(40))
    classes = np.arange(40) % 3
    with pytest.raises(InvalidInputError, match=r"alpha must be a 1-D array of 120 real numbers or of shape "
                                                 r"\(3, 40\), got shape \(40, 3\)"):
        mklopt.certify(KERNELS, classes, [0.5, 0.5], np.zeros((40, 3)), loss="ovr_hinge")
    by_class = mklopt.certify(KERNELS, classes, [0.5, 0.5], np.zeros((3, 40)), loss="ovr_hinge")
    flat = mklopt.certify(KERNELS, classes, [0.5, 0.5], np.zeros(120), loss="ovr_hinge")
    assert by_class.primal == flat.primal and by_class.dual == flat.dual


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_precomputed_kernels_with_labels_of_another_shape_or_length(multiclass):
    """scikit-learn's ValueError ("y should be a 1d array", "inconsistent numbers of samples")
    came through from precomputed kernels' fits."""
    K = np.moveaxis(KERNELS, 0, 2)
    classes = np.arange(40) % 3
    clf = mklopt.MKLClassifier(kernels="precomputed", multiclass=multiclass)
    with pytest.raises(InvalidInputError, match="MKLClassifier: y should be a 1d array"):
        clf.fit(K, np.column_stack([classes, classes]))
    with pytest.raises(InvalidInputError, match="30"):
        clf.fit(K, classes[:30])


def test_precomputed_regression_targets_of_text():
    """NumPy's "could not convert string to float" came through from a precomputed regressor."""
    K = np.moveaxis(KERNELS, 0, 2)
    for text in (np.array(["a"] * 40), MIXED):
        with pytest.raises(InvalidInputError, match="regression targets must be real numbers"):
            mklopt.MKLRegressor(kernels="precomputed").fit(K, text)
