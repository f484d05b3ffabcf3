"""mklopt.datasets: shapes and class counts as UCI documents them, labels, imputation, names."""

from __future__ import annotations

import numpy as np
import pytest

import mklopt
from mklopt import datasets

#: (n, d, n_positive, n_negative) as documented by UCI (german: d of our one-hot encoding).
UCI = {
    "breastcancer": (699, 9, 241, 458),   # 241 malignant, 458 benign
    "diabetes": (768, 8, 268, 500),       # 268 tested positive, 500 negative
    "ionosphere": (351, 34, 225, 126),    # 225 good, 126 bad
    "german": (1000, 61, 700, 300),       # 700 good, 300 bad
    "bupa": (345, 6, 145, 200),           # selector 1: 145, selector 2: 200
    "sonar": (208, 60, 111, 97),          # 111 mines, 97 rocks
    "digits49": (361, 64, 180, 181),      # scikit-learn digits: 180 nines, 181 fours
}


@pytest.mark.parametrize("name", sorted(UCI))
def test_shape_counts_labels(name):
    X, y = datasets.load(name, return_X_y=True)
    n, d, pos, neg = UCI[name]
    assert X.shape == (n, d) and X.dtype == np.float64
    assert not np.isnan(X).any()
    assert set(np.unique(y).tolist()) == {-1, 1}
    assert (int(np.sum(y == 1)), int(np.sum(y == -1))) == (pos, neg)
    info = datasets.DATASETS[name]
    assert (info.n, info.d, info.n_positive, info.n_negative) == (n, d, pos, neg)
    assert info.citation and info.licence and info.origin and info.copy


def test_breastcancer_imputation():
    data = datasets.load_breastcancer()
    assert data.n_imputed == 16 and data.imputed.sum() == 16
    raw = datasets.load("breastcancer", impute=None)
    missing = np.isnan(raw.X)
    assert missing.sum() == 16 and np.array_equal(missing.any(axis=1), data.imputed)
    column = raw.feature_names.index("bare_nuclei")
    assert np.all(missing[:, [j for j in range(9) if j != column]] == 0)
    median = np.median(raw.X[~missing[:, column], column])
    assert np.all(data.X[data.imputed, column] == median)
    np.testing.assert_array_equal(data.X[~data.imputed], raw.X[~raw.imputed])
    assert np.all((raw.X[~missing] >= 1) & (raw.X[~missing] <= 10))


def test_known_feature_facts():
    X, _ = datasets.load_pima(return_X_y=True)
    # UCI's documented attribute means of Pima Indians Diabetes
    np.testing.assert_allclose(X.mean(axis=0)[[0, 1, 7]], [3.845, 120.895, 33.241], atol=1e-3)
    ion = datasets.load_ionosphere()
    assert ion.feature_names[1] == "a02" and np.all(ion.X[:, 1] == 0)
    assert np.all(np.abs(ion.X) <= 1)
    ger = datasets.load_german()
    onehot = [j for j, f in enumerate(ger.feature_names) if "=" in f]
    assert len(onehot) == 54 and np.all(ger.X[:, onehot].sum(axis=1) == 13)


def test_unknown_name_lists_available():
    with pytest.raises(mklopt.InvalidInputError) as err:
        datasets.load("no-such-set")
    for name in datasets.DATASETS:
        assert name in str(err.value)
    with pytest.raises(mklopt.InvalidInputError):
        datasets.describe("wdbc")
    with pytest.raises(mklopt.InvalidInputError):
        datasets.load("breastcancer", impute="mean")


def test_stand_in_is_never_called_by_the_papers_name():
    assert "ocr49" not in datasets.DATASETS
    with pytest.raises(mklopt.InvalidInputError, match="digits49.*stand-in"):
        datasets.load("ocr49")
    info = datasets.DATASETS["digits49"]
    assert info.stand_in_for == "ocr49" and "stand-in" in info.title
    assert "not the same data" in datasets.describe("digits49")
    assert all(i.stand_in_for is None for n, i in datasets.DATASETS.items() if n != "digits49")


def test_describe_mentions_origin_and_licence():
    text = datasets.describe("breastcancer")
    assert "699" in text and "CC BY 4.0" in text and "median" in text and "MASS" in text
    assert "24-attribute" in datasets.describe("german")


def test_bupa_and_sonar_facts():
    """Liver Disorders and Sonar as UCI has them (values, order, duplicates, KEEL's rounding)."""
    liver = datasets.load_bupa()
    assert liver.feature_names == ["mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks"]
    np.testing.assert_array_equal(liver.X[0], [85, 92, 45, 27, 31, 0.0])  # UCI's first row
    assert liver.y[0] == 1 and len(np.unique(liver.X, axis=0)) == 345 - 4  # 4 duplicate rows
    assert np.all(np.mod(liver.X[:, 5], 0.5) == 0)  # drinks in half-pints
    assert "selector" in liver.info.notes and "McDermott" in liver.info.citation
    X, y = datasets.load_sonar(return_X_y=True)
    assert np.all((X >= 0) & (X <= 1))
    np.testing.assert_array_equal(X[0, :3], [0.02, 0.037, 0.043])  # UCI: 0.0200, 0.0371, 0.0428
    np.testing.assert_allclose(X, np.round(X, 3), atol=1e-12)      # KEEL's 3 decimals
    np.testing.assert_array_equal(y, np.r_[-np.ones(97), np.ones(111)])  # 97 rocks, 111 mines
    assert "3 decimals" in datasets.describe("sonar")


#: UCI's documented class distribution of Letter Recognition.
LETTER_COUNTS = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                         [789, 766, 736, 805, 768, 775, 773, 734, 755, 747, 739, 761, 792,
                          783, 753, 803, 783, 758, 748, 796, 813, 764, 752, 787, 786, 734]))


def test_letter_classes_are_uci_counts_and_agree_with_the_binary_labels():
    X, letters = datasets.load_letter_classes()
    Xb, y = datasets.load("letter", return_X_y=True)
    assert np.array_equal(X, Xb) and letters.shape == (20000,)
    values, counts = np.unique(letters, return_counts=True)
    assert dict(zip(values.tolist(), counts.tolist())) == LETTER_COUNTS
    assert np.array_equal(np.where(letters <= "M", 1, -1), y)


def test_load_diabetes_is_a_deprecated_alias_of_load_pima():
    with pytest.warns(DeprecationWarning, match="load_pima"):
        X, y = datasets.load_diabetes(return_X_y=True)
    X2, y2 = datasets.load_pima(return_X_y=True)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
