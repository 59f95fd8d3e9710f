"""Tests of the bundled UCI Adult loader (pml_design.datasets)."""

from __future__ import annotations

import gzip
from importlib import resources

import numpy as np
import pytest

from pml_design.datasets import ADULT_COLUMNS, AdultData, load_adult


def _raw_lines(fname: str) -> list[str]:
    raw = resources.files("pml_design.datasets").joinpath("data", fname).read_bytes()
    return [ln for ln in gzip.decompress(raw).decode("ascii").splitlines() if ln.strip() and not ln.startswith("|")]


@pytest.mark.parametrize("split,n", [("train", 32561), ("test", 16281), ("all", 48842)])
def test_split_sizes(split: str, n: int) -> None:
    data = load_adult(split)
    assert isinstance(data, AdultData)
    assert data.n_records == n
    assert data.split == split
    assert list(data.columns) == [c for c, _ in ADULT_COLUMNS]
    for arr in data.columns.values():
        assert arr.shape == (n,)


def test_default_split_is_all() -> None:
    assert load_adult().n_records == 48842


def test_known_label_and_sex_counts() -> None:
    # Published facts about Adult: 7,841 / 3,846 records with income >50K in train / test,
    # 32,650 men and 16,192 women overall.
    train, test, full = load_adult("train"), load_adult("test"), load_adult("all")
    assert (train.income == 1).sum() == 7841
    assert (test.income == 1).sum() == 3846
    assert (full.sex == 1).sum() == 32650
    assert (full.sex == -1).sum() == 16192
    for arr in (full.income, full.sex):
        assert arr.dtype.kind == "i"
        assert set(np.unique(arr).tolist()) == {-1, 1}


def test_binary_features_match_raw_text() -> None:
    # Independent of the parser: count substrings in the raw lines.
    lines = _raw_lines("adult.data.gz") + _raw_lines("adult.test.gz")
    data = load_adult()
    rich = sum(1 for ln in lines if ln.rstrip(".").endswith(">50K"))
    men = sum(1 for ln in lines if ", Male," in ln)
    assert (data.income == 1).sum() == rich
    assert (data.sex == 1).sum() == men
    # Record order preserved: first train record and first test record.
    assert data.columns["age"][0] == 39.0 and data.columns["workclass"][0] == "State-gov"
    assert data.columns["age"][32561] == 25.0 and data.columns["income"][32561] == "<=50K"


def test_test_labels_have_no_period() -> None:
    labels = set(load_adult("test").columns["income"].tolist())
    assert labels == {">50K", "<=50K"}


def test_numeric_columns_are_float_and_complete() -> None:
    data = load_adult()
    for name, kind in ADULT_COLUMNS:
        arr = data.columns[name]
        if kind == "numeric":
            assert arr.dtype == np.float64
            assert np.all(np.isfinite(arr))
        else:
            assert arr.dtype.kind == "U"
            assert not np.any(np.char.find(arr, "?") >= 0)
    assert data.columns["age"].min() == 17 and data.columns["age"].max() == 90


def test_missing_values_and_categorical_codes() -> None:
    data = load_adult("train")
    # Known numbers of '?' in the training file: workclass 1836, occupation 1843, native-country 583.
    for name, n_missing in [("workclass", 1836), ("occupation", 1843), ("native-country", 583)]:
        col = data.column(name)
        assert (col == "").sum() == n_missing
        codes, cats = data.categorical(name)
        assert codes.shape == (data.n_records - n_missing,)
        assert "" not in cats and cats == sorted(cats)
        assert codes.min() == 0 and codes.max() == len(cats) - 1
        np.testing.assert_array_equal(np.array(cats)[codes], col[col != ""])
        codes_all, cats_all = data.categorical(name, dropna=False)
        assert cats_all == cats
        assert codes_all.shape == (data.n_records,)
        assert (codes_all == -1).sum() == n_missing
    codes, cats = data.categorical("race")
    assert cats == ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"]
    assert codes.shape == (data.n_records,)
    assert len(data.categorical("education")[1]) == 16
    assert len(load_adult().categorical("native_country")[1]) == 41


def test_columns_are_read_only() -> None:
    data = load_adult("test")
    with pytest.raises(ValueError):
        data.columns["age"][0] = 1.0


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="split"):
        load_adult("validation")
    with pytest.raises(ValueError, match="split"):
        load_adult(1)  # type: ignore[arg-type]
    data = load_adult("test")
    with pytest.raises(ValueError, match="name"):
        data.categorical("height")
    with pytest.raises(ValueError, match="categorical"):
        data.categorical("age")
    with pytest.raises(TypeError, match="name"):
        data.column(3)  # type: ignore[arg-type]
