"""Small binary classification data sets shipped with mklopt, with their provenance.

The UCI sets of the Voted Kernel Regularization paper's Table 1 (Cortes et al., Voted Kernel Regularization, 2015)
that a Python package ships, as float64 features and +-1 labels::

    >>> from mklopt import datasets
    >>> X, y = datasets.load("ionosphere", return_X_y=True)
    >>> X.shape, sorted(set(y.tolist()))
    ((351, 34), [-1, 1])
    >>> print(datasets.describe("breastcancer"))  # doctest: +ELLIPSIS
    breastcancer: Breast Cancer Wisconsin (Original)
    ...

``breastcancer`` (699 x 9, 16 missing values imputed by the column median),
``diabetes`` (Pima, 768 x 8), ``ionosphere`` (351 x 34) and ``german``
(1000 examples, one-hot of the categorical version: d = 61, not the paper's
24-attribute numeric encoding) are stored in ``data/`` (see its README for
how each copy was obtained), with ``letter`` (20,000 x 16, A-M vs N-Z; its 26 classes by
:func:`load_letter_classes`) and,
for the SimpleMKL paper's table, ``bupa`` (Liver Disorders, 345 x 6) and
``sonar`` (208 x 60). ``digits49`` is scikit-learn's 8x8 digits 4 vs 9,
a stand-in for the paper's ``ocr49`` - a different data set, never to be
reported under that name. The data are the UCI repository's (CC BY 4.0;
:data:`DATASETS` has each set's citation and licence).

One multi-view set: UCI Multiple Features (:func:`load_mfeat`, 2,000 digits in six views,
:mod:`mklopt.datasets.multiview`), for kernels on views (:func:`mklopt.views`).
"""

from .catalog import DATASETS, DatasetInfo, describe
from .loaders import (Dataset, load, load_breastcancer, load_bupa, load_diabetes, load_digits49, load_pima,
                      load_german, load_ionosphere, load_letter_classes, load_sonar)
from .multiview import MFEAT_VIEWS, MultiView, load_mfeat

__all__ = ["DATASETS", "DatasetInfo", "Dataset", "describe", "load", "load_breastcancer",
           "load_pima", "load_diabetes", "load_ionosphere", "load_german", "load_bupa", "load_sonar",
           "load_digits49", "load_letter_classes", "MultiView", "load_mfeat", "MFEAT_VIEWS"]
