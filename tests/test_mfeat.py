"""Issue 36 point 3: UCI Multiple Features shipped with its provenance, views by name."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import mklopt
from mklopt.datasets import MFEAT_VIEWS, load_mfeat, multiview
from mklopt.exceptions import InvalidInputError
from mklopt.kernels import kernel_stack


@pytest.fixture(scope="module")
def mfeat():
    return load_mfeat()


def test_the_six_views_have_their_documented_sizes_and_one_label_column(mfeat):
    assert list(mfeat.views) == ["fou", "fac", "kar", "pix", "zer", "mor"]
    for name, view in mfeat.views.items():
        assert view.shape == (2000, MFEAT_VIEWS[name][0]) and np.isfinite(view).all()
    assert np.array_equal(np.bincount(mfeat.target), np.full(10, 200))
    assert np.array_equal(mfeat.target, np.repeat(np.arange(10), 200))
    assert "CC BY 4.0" in mfeat.description and "Duin" in mfeat.description


def test_concatenated_groups_give_each_views_own_kernel(mfeat):
    X, groups = mfeat.concatenated()
    assert X.shape == (2000, 649)
    rows = np.arange(0, 2000, 50)
    ks = mklopt.KernelSet.from_data(X[rows], mklopt.views(groups, "linear"))
    for m, name in enumerate(groups):
        np.testing.assert_allclose(ks.K[m], kernel_stack(mfeat.views[name][rows], ["linear"])[0], rtol=1e-12)


def test_a_subset_of_views_and_unknown_views(mfeat):
    two = load_mfeat(["mor", "zer"])
    assert list(two.views) == ["mor", "zer"] and np.array_equal(two.views["mor"], mfeat.views["mor"])
    with pytest.raises(InvalidInputError, match="mfeat has the views fou, fac"):
        load_mfeat(["pixels"])


def test_a_damaged_file_is_refused(tmp_path, monkeypatch):
    for name in MFEAT_VIEWS:
        shutil.copy(multiview.DATA / f"mfeat-{name}.csv.gz", tmp_path)
    damaged = tmp_path / "mfeat-mor.csv.gz"
    damaged.write_bytes(damaged.read_bytes()[:-10])
    monkeypatch.setattr(multiview, "DATA", tmp_path)
    with pytest.raises(InvalidInputError, match="mfeat-mor.csv.gz is damaged"):
        load_mfeat(["mor"])
