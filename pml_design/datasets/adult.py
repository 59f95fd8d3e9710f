"""The UCI Adult ("Census Income") data set, bundled with the package.

Source: B. Becker and R. Kohavi, *Adult*, UCI Machine Learning Repository, 1996,
https://doi.org/10.24432/C5XW20 (licence CC BY 4.0). The two raw files ``adult.data`` (training split,
32,561 records) and ``adult.test`` (test split, 16,281 records) ship gzip-compressed in
``pml_design/datasets/data/`` and are parsed here; nothing is downloaded.

Raw format handled by the parser: 15 fields per line separated by a comma and whitespace, ``?`` for a
missing value, blank lines at the end of both files, a comment line (``|1x3 Cross validator``) at the top
of ``adult.test``, and test labels with a trailing period (``>50K.``), which is stripped.

Column names follow ``adult.names`` with hyphens replaced by underscores (``education-num`` becomes
``education_num``); :meth:`AdultData.column` and :meth:`AdultData.categorical` accept either spelling.
Used by: pml-design-empirical-distributions, Section VI-C1 (Fig. 4, Fig. 5), and the PML histogram work.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Mapping

import numpy as np

__all__ = ["ADULT_COLUMNS", "ADULT_SPLIT_SIZES", "AdultData", "load_adult"]

#: Column names in file order, with their kind ("numeric" -> float array, "categorical" -> str array).
ADULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("age", "numeric"),
    ("workclass", "categorical"),
    ("fnlwgt", "numeric"),
    ("education", "categorical"),
    ("education_num", "numeric"),
    ("marital_status", "categorical"),
    ("occupation", "categorical"),
    ("relationship", "categorical"),
    ("race", "categorical"),
    ("sex", "categorical"),
    ("capital_gain", "numeric"),
    ("capital_loss", "numeric"),
    ("hours_per_week", "numeric"),
    ("native_country", "categorical"),
    ("income", "categorical"),
)

#: Number of records in each split of the raw files.
ADULT_SPLIT_SIZES: Mapping[str, int] = MappingProxyType({"train": 32561, "test": 16281, "all": 48842})

_FILES = {"train": "adult.data.gz", "test": "adult.test.gz"}
_KINDS = dict(ADULT_COLUMNS)
#: Representation of a missing categorical value (raw ``?``) in :attr:`AdultData.columns`.
MISSING = ""


def _canonical(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a column name (str), got {name!r}")
    key = name.strip().replace("-", "_")
    if key not in _KINDS:
        raise ValueError(f"name must be one of the Adult columns {sorted(_KINDS)}, got {name!r}")
    return key


def _parse(text: str, source: str) -> dict[str, np.ndarray]:
    """Parse one raw UCI Adult file into column arrays (pure function of the text)."""
    rows: list[list[str]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("|"):
            continue  # blank trailing lines, the test file's comment line
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(ADULT_COLUMNS):
            raise ValueError(f"{source}, line {lineno}: expected {len(ADULT_COLUMNS)} fields, got {len(fields)}")
        rows.append(fields)
    cols: dict[str, np.ndarray] = {}
    for j, (name, kind) in enumerate(ADULT_COLUMNS):
        raw = [r[j] for r in rows]
        if name == "income":
            raw = [v[:-1] if v.endswith(".") else v for v in raw]
            bad = set(raw) - {">50K", "<=50K"}
            if bad:
                raise ValueError(f"{source}: unexpected income labels {sorted(bad)}")
        if kind == "numeric":
            arr = np.array([np.nan if v == "?" else float(v) for v in raw], dtype=float)
        else:
            arr = np.array([MISSING if v == "?" else v for v in raw], dtype=str)
        arr.setflags(write=False)
        cols[name] = arr
    return cols


@lru_cache(maxsize=None)
def _load_split(split: str) -> Mapping[str, np.ndarray]:
    raw = resources.files("pml_design.datasets").joinpath("data", _FILES[split]).read_bytes()
    text = gzip.decompress(raw).decode("ascii")
    return MappingProxyType(_parse(text, _FILES[split]))


@dataclass(frozen=True)
class AdultData:
    """The Adult records of one split, as read-only column arrays.

    Attributes
    ----------
    split : str
        ``"train"``, ``"test"`` or ``"all"`` (train records first, then test records).
    columns : Mapping[str, numpy.ndarray]
        Column name -> array of length :attr:`n_records`, in the order of :data:`ADULT_COLUMNS`.
        Numeric columns are ``float`` arrays (``nan`` if missing; no numeric value is missing in Adult).
        Categorical columns are ``str`` arrays with a missing value (raw ``?``) stored as the empty string
        ``""``. ``columns["income"]`` holds ``">50K"`` / ``"<=50K"`` (test-file periods stripped).
        The arrays are read-only.
    """

    split: str
    columns: Mapping[str, np.ndarray] = field(repr=False)

    @property
    def n_records(self) -> int:
        """Number of records (rows)."""
        return int(self.columns["age"].shape[0])

    @property
    def income(self) -> np.ndarray:
        """Binary income label in {-1, +1}: ``+1`` for ``">50K"``, ``-1`` for ``"<=50K"`` (never missing)."""
        return np.where(self.columns["income"] == ">50K", 1, -1).astype(np.int64)

    @property
    def sex(self) -> np.ndarray:
        """Binary sex in {-1, +1}: ``+1`` for ``"Male"``, ``-1`` for ``"Female"`` (never missing in Adult)."""
        return np.where(self.columns["sex"] == "Male", 1, -1).astype(np.int64)

    def column(self, name: str) -> np.ndarray:
        """Return one column by name (``"education-num"`` and ``"education_num"`` are both accepted)."""
        return self.columns[_canonical(name)]

    def categorical(self, name: str, *, dropna: bool = True) -> tuple[np.ndarray, list[str]]:
        """Integer-code a categorical column.

        Parameters
        ----------
        name : str
            A categorical column (see :data:`ADULT_COLUMNS`), hyphens or underscores.
        dropna : bool, default True
            If True, records whose value is missing (raw ``?``) are **dropped**, so the result can be shorter
            than :attr:`n_records` (e.g. ``workclass``, ``occupation``, ``native_country``). If False, they are
            kept with code ``-1``.

        Returns
        -------
        codes : numpy.ndarray of int
            ``categories[codes[i]]`` is the value of the i-th kept record.
        categories : list of str
            The observed (non-missing) values of this split, sorted lexicographically.
        """
        key = _canonical(name)
        if _KINDS[key] != "categorical":
            raise ValueError(f"name must be a categorical column, got numeric column {name!r}")
        values = self.columns[key]
        present = values != MISSING
        categories, inverse = np.unique(values[present], return_inverse=True)
        if dropna:
            codes = inverse.astype(np.int64)
        else:
            codes = np.full(values.shape[0], -1, dtype=np.int64)
            codes[present] = inverse
        return codes, [str(c) for c in categories]


def load_adult(split: str = "all") -> AdultData:
    """Load the bundled UCI Adult data set (no network access).

    Parameters
    ----------
    split : {"train", "test", "all"}, default "all"
        ``"train"`` is ``adult.data`` (32,561 records), ``"test"`` is ``adult.test`` (16,281 records),
        ``"all"`` their concatenation, train first (48,842 records).

    Returns
    -------
    AdultData
        Read-only columns plus the binary features :attr:`AdultData.income` and :attr:`AdultData.sex`.

    Notes
    -----
    Data: B. Becker and R. Kohavi, "Adult", UCI Machine Learning Repository, 1996,
    https://doi.org/10.24432/C5XW20, CC BY 4.0. Implements the data set used in pml-design-empirical-
    distributions, Section VI-C1 (ref. [33]). Parsing happens once per process (cached).

    Examples
    --------
    >>> data = load_adult()
    >>> data.n_records
    48842
    >>> codes, cats = data.categorical("race")
    """
    if not isinstance(split, str) or split not in ADULT_SPLIT_SIZES:
        raise ValueError(f"split must be one of 'train', 'test', 'all', got {split!r}")
    if split != "all":
        return AdultData(split=split, columns=_load_split(split))
    train, test = _load_split("train"), _load_split("test")
    cols = {}
    for name, _ in ADULT_COLUMNS:
        arr = np.concatenate([train[name], test[name]])
        arr.setflags(write=False)
        cols[name] = arr
    return AdultData(split="all", columns=MappingProxyType(cols))
