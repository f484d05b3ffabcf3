"""Load the shipped data sets as float64 features and +-1 labels (numpy only).

Each data set is a gzipped CSV under ``data/`` with a header row, the
features, and a last column ``label`` in {-1, +1}; missing values are empty
fields. ``digits49`` is built from scikit-learn's digits instead.
"""

from __future__ import annotations

import gzip
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .catalog import DatasetInfo, get_info

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Dataset:
    """One loaded data set.

    Attributes
    ----------
    X : ndarray of shape (n, d), float64
        Features as shipped (no scaling); imputed where ``imputed`` says so.
    y : ndarray of shape (n,), int
        Labels in {-1, +1} (meaning in ``info.positive`` / ``info.negative``).
    feature_names : list of str
        Column names.
    imputed : ndarray of shape (n,), bool
        Rows in which at least one value was missing and has been imputed.
    info : DatasetInfo
        Origin, citation, licence and notes (see :func:`mklopt.datasets.describe`).
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    imputed: np.ndarray
    info: DatasetInfo

    @property
    def n_imputed(self) -> int:
        """Number of rows with an imputed value."""
        return int(self.imputed.sum())


#: An empty field of a CSV line (a missing value): at the start, between commas or at the end.
_EMPTY_FIELD = re.compile(r"^(?=,)|(?<=,)(?=,|$)", re.MULTILINE)


def read_csv(path: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Features (NaN where empty), labels and feature names of a shipped CSV."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        header = handle.readline().strip().split(",")
        body = _EMPTY_FIELD.sub("nan", handle.read())  # numpy's C reader then parses it
    table = np.loadtxt(io.StringIO(body), delimiter=",", dtype=np.float64, ndmin=2)
    return table[:, :-1], table[:, -1].astype(int), header[:-1]


def impute_median(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Replace NaNs by their column's median (over the non-missing rows).

    Returns
    -------
    X : ndarray
        Copy without NaNs.
    rows : ndarray of bool
        Rows that had a missing value.
    """
    missing = np.isnan(X)
    X = X.copy()
    for j in np.flatnonzero(missing.any(axis=0)):
        X[missing[:, j], j] = np.median(X[~missing[:, j], j])
    return X, missing.any(axis=1)


def _digits49() -> tuple[np.ndarray, np.ndarray, list[str]]:
    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    keep = (digit == 4) | (digit == 9)
    names = [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
    return X[keep].astype(np.float64), np.where(digit[keep] == 9, 1, -1), names


def load(name: str, return_X_y: bool = False,
         impute: str | None = "median") -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Load a data set by name.

    Parameters
    ----------
    name : str
        One of :data:`mklopt.datasets.DATASETS` (``breastcancer``, ``diabetes``,
        ``ionosphere``, ``german``, ``letter``, ``bupa``, ``sonar``, ``digits49``).
    return_X_y : bool, default False
        Return ``(X, y)`` instead of a :class:`Dataset`.
    impute : {"median", None}, default "median"
        How to fill missing values (only ``breastcancer`` has any: 16 in
        ``bare_nuclei``): the column median over all rows, or ``None`` to
        keep NaN.

    Returns
    -------
    Dataset or (X, y)
        ``X`` float64 of shape (n, d), ``y`` int in {-1, +1}.

    Raises
    ------
    mklopt.InvalidInputError
        For an unknown name (the message lists the available ones) or an
        unknown ``impute``.
    """
    from ..exceptions import InvalidInputError

    info = get_info(name)
    if impute not in ("median", None):
        raise InvalidInputError(f"impute must be 'median' or None, got {impute!r}.")
    X, y, names = read_csv(DATA / info.file) if info.file else _digits49()
    if impute == "median":
        X, rows = impute_median(X)
    else:
        rows = np.isnan(X).any(axis=1)
    data = Dataset(X=X, y=y, feature_names=names, imputed=rows, info=info)
    return (data.X, data.y) if return_X_y else data


def load_breastcancer(return_X_y: bool = False, impute: str | None = "median"):
    """UCI Breast Cancer Wisconsin (Original), 699 x 9; see :func:`load`."""
    return load("breastcancer", return_X_y, impute)


def load_pima(return_X_y: bool = False):
    """Pima Indians Diabetes, 768 x 8, two classes (catalogue name ``"diabetes"``); see :func:`load`."""
    return load("diabetes", return_X_y)


def load_diabetes(return_X_y: bool = False):
    """Deprecated alias of :func:`load_pima` (scikit-learn's ``load_diabetes`` is a regression set)."""
    import warnings

    warnings.warn("mklopt.datasets.load_diabetes is Pima Indians Diabetes (binary), not scikit-learn's "
                  "regression set; call it load_pima (load_diabetes goes in a later release)",
                  DeprecationWarning, stacklevel=2)
    return load_pima(return_X_y)


def load_ionosphere(return_X_y: bool = False):
    """UCI Ionosphere, 351 x 34; see :func:`load`."""
    return load("ionosphere", return_X_y)


def load_german(return_X_y: bool = False):
    """UCI Statlog German Credit, 1000 x 61 (one-hot of the categorical version); see :func:`load`."""
    return load("german", return_X_y)


def load_bupa(return_X_y: bool = False):
    """UCI Liver Disorders (BUPA), 345 x 6, label = UCI's 'selector' field; see :func:`load`."""
    return load("bupa", return_X_y)


def load_sonar(return_X_y: bool = False):
    """UCI Sonar, Mines vs. Rocks, 208 x 60 (+1 = mine); see :func:`load`."""
    return load("sonar", return_X_y)


def load_digits49(return_X_y: bool = False):
    """scikit-learn's 8x8 digits 4 vs 9 (361 x 64), a stand-in for ocr49; see :func:`load`."""
    return load("digits49", return_X_y)


def load_letter_classes() -> tuple[np.ndarray, np.ndarray]:
    """UCI Letter Recognition with its 26 classes: ``(X, letters)``.

    ``X`` (20,000 x 16) is :func:`load` ``("letter")``'s, row for row; ``letters`` holds
    each row's capital letter "A" … "Z" (UCI's class attribute, from the same KEEL copy),
    for multiclass use — ``load("letter")`` keeps the binary A–M (+1) vs N–Z (-1) labels.
    """
    X, _ = load("letter", return_X_y=True)
    with gzip.open(DATA / "letter-classes.csv.gz", "rt") as handle:
        header = handle.readline().strip()
        letters = np.array(handle.read().split())
    if header != "letter" or letters.shape[0] != X.shape[0]:  # a damaged copy, never a silent mismatch
        raise RuntimeError("mklopt's letter-classes.csv.gz does not match letter.csv.gz; reinstall mklopt.")
    return X, letters
