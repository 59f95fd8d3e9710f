"""Records and reports as integer codes or category labels: validation and fast lookup.

Implements: the data interface of :class:`~pml_design.mechanisms.mechanism.Mechanism` (no paper result):
records and reports may be integer codes (``0 … N−1`` / ``0 … M−1``) or, when a mechanism carries ``labels``,
the category labels themselves (strings, numbers, any hashable values, a pandas Series or Categorical),
mapped to codes by hash lookup in O(n) (:func:`label_codes`; pyarrow's for pandas string arrays).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._validation import fmt

__all__ = ["check_labels", "counts_by_index", "label_codes"]


def _as_symbols(data: object, n: int, name: str, protected: bool = False) -> np.ndarray:
    arr = np.asarray(data)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
            raise TypeError(f"{name} must be integers in [0, {n}), got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= n)  # (before any cast: 1e300 became -2**63 and was reported as such)
    if np.any(bad):
        found = "" if protected else f"; found {arr[bad].ravel()[0].item()!r}"
        raise ValueError(f"{name} must lie in [0, {n}){found}")
    return arr.astype(np.int64, copy=False)


def _is_missing(v: object) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and math.isnan(v))


def check_labels(labels: object, size: int | None = None, name: str = "labels") -> tuple:
    """Validate category labels: a sequence of distinct, hashable, non-missing values (length ``size``).

    Parameters
    ----------
    labels : sequence
        E.g. a list of strings, a numpy array, a pandas Index.
    size : int, optional
        Required length.
    name : str
        Argument name for error messages.

    Returns
    -------
    tuple
        The labels as plain Python scalars (numpy scalars converted with ``.item()``).
    """
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__") or not hasattr(labels, "__iter__"):
        raise TypeError(f"{name} must be a sequence of category labels, got {fmt(labels)}")
    out = tuple(v.item() if isinstance(v, np.generic) else v for v in labels)
    if size is not None and len(out) != size:
        raise ValueError(f"{name} must have {size} entries (one per category), got {len(out)}: {fmt(list(out))}")
    seen: dict = {}
    for i, v in enumerate(out):
        if _is_missing(v):
            raise ValueError(f"{name} must not contain missing values, got {v!r} at position {i}")
        try:
            j = seen.setdefault(v, i)
        except TypeError:
            raise TypeError(f"{name} must be hashable values, got {fmt(v)} at position {i}") from None
        if j != i:
            raise ValueError(f"{name} must be distinct; {v!r} appears at positions {j} and {i}")
    check_whitespace_distinct(out, name)
    return out


def check_whitespace_distinct(labels: Sequence, name: str = "labels") -> None:
    """Refuse text labels that differ only in surrounding whitespace (``' sp '`` and ``'sp'``), and labels that are
    the same text (``1`` and ``'1'``: a review found such a design saved, then refused by ``privatize``).

    The one rule of the library, its command line and mechanism files: a label is its exact text (nothing is
    stripped, as in pandas); two labels that would look the same to a reader are an error, not two categories.
    """
    first: dict[str, object] = {}
    as_text: dict[str, object] = {}
    for v in labels:
        if isinstance(v, str):
            other = first.setdefault(v.strip(), v)
            if other != v:
                raise ValueError(f"{name} {other!r} and {v!r} differ only in surrounding whitespace; labels are "
                                 "compared as exact text (strip the values first if they are the same category)")
        other = as_text.setdefault(str(v), v)
        if other is not v and other != v:  # 1 and '1': one text in a CSV and a mechanism file, two categories here
            raise ValueError(f"{name} {other!r} and {v!r} are the same text; labels are written and read as text "
                             "(files, privatize), so they must be distinct as text (convert the values to one type)")


def _all_integers(labels: Sequence) -> bool:
    return all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in labels)


def _all_numbers(labels: Sequence) -> bool:
    return all(isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_)) for v in labels)


def label_codes(values: object, labels: Sequence, name: str, unknown_as: str = "the mechanism does not know",
                protected: bool = False) -> np.ndarray:
    """Integer codes (positions in ``labels``) of label values; unknown or missing values raise ``ValueError``
    (``"{name} contains … value(s) {unknown_as}"``; the pipeline says ``"outside categories"``).

    Hash-based (:meth:`pandas.Index.get_indexer`), O(n). A pandas Categorical/Series is matched through its
    categories, so only its (few) categories are looked up.

    Implements: the label lookup of the module docstring (the data interface of ``Mechanism``).

    Parameters
    ----------
    values : array_like, pandas.Series, pandas.Index or pandas.Categorical
        The label values (non-empty).
    labels : sequence
        The declared labels; a value's code is its position here.
    name : str
        Name of ``values`` in error messages.
    unknown_as : str, default "the mechanism does not know"
        How error messages describe values not in ``labels``.
    protected : bool, default False
        ``values`` are protected records (the inputs of ``privatize``): error messages then name neither the
        values, nor how many, nor where (a message ends up in logs that no guarantee covers).

    Returns
    -------
    numpy.ndarray of int64
        The codes, of the shape of ``values``.

    Raises
    ------
    ValueError
        If ``values`` is empty or holds a value (or a missing value) not in ``labels``.
    """
    import pandas as pd  # noqa: PLC0415 - only needed for labelled data

    raw = values.array if isinstance(values, (pd.Series, pd.Index)) else values
    index = pd.Index(list(labels))
    if isinstance(raw, pd.Categorical):
        cat_codes = index.get_indexer(raw.categories)
        present = np.zeros(len(raw.categories), dtype=bool)
        present[raw.codes[raw.codes >= 0]] = True
        unknown = [c for c, k, seen in zip(raw.categories, cat_codes, present) if k < 0 and seen]
        if (raw.codes < 0).any():
            unknown.append(None)
        if unknown:
            if protected:
                raise ValueError(_withheld(name, unknown_as, labels))
            raise ValueError(f"{name} contains values {unknown_as}: {fmt(unknown[:5])} "
                             f"(the labels are {fmt(list(labels))})")
        return cat_codes[raw.codes].astype(np.int64)
    if isinstance(raw, pd.api.extensions.ExtensionArray) and isinstance(raw.dtype, pd.StringDtype):
        arrow = _arrow_codes(raw, labels)
        if arrow is not None:
            raw, flat_codes = arrow
            if (flat_codes >= 0).all():
                return flat_codes
    arr = np.asarray(raw)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    flat = arr.ravel()
    codes = index.get_indexer(flat)
    bad = codes < 0
    if bad.any():
        if protected:
            raise ValueError(_withheld(name, unknown_as, labels))
        unknown = list(dict.fromkeys(flat[bad][:1000].tolist()))[:5]
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} contains {int(bad.sum())} value(s) {unknown_as}, e.g. "
                         f"{fmt(unknown)} (first at position {first}); the labels are {fmt(list(labels))}")
    return codes.astype(np.int64).reshape(arr.shape)


def _withheld(name: str, unknown_as: str, labels: Sequence) -> str:
    """The unknown-value error for protected records: no value, count or position of them."""
    return (f"{name} holds values {unknown_as} (missing, or not among the labels {fmt(list(labels)[:20])}"
            f"{' …' if len(labels) > 20 else ''}); they are not shown, as they are protected records: find them "
            "with e.g. ~series.isin(mechanism.labels)")


def _arrow_codes(values: Any, labels: Sequence) -> tuple[Any, np.ndarray] | None:
    """Fast path for a pandas string array: (values, codes with −1 for unknown) by pyarrow's hash lookup."""
    if not all(isinstance(v, str) for v in labels):
        return None
    try:
        import pyarrow as pa  # noqa: PLC0415
        import pyarrow.compute as pc  # noqa: PLC0415

        idx = pc.index_in(pa.array(values), value_set=pa.array(list(labels), type=pa.string()))
    except Exception:  # noqa: BLE001 - no pyarrow or a storage it cannot take: use the generic path
        return None
    return values, np.asarray(pc.fill_null(idx, -1).to_numpy(), dtype=np.int64)


def _encode(data: object, labels: tuple | None, n: int, name: str, protected: bool = False) -> tuple[np.ndarray, bool]:
    """(codes, given_as_labels): integer codes pass through; label values are looked up in ``labels``
    (``protected``: error messages withhold the values, see :func:`label_codes`)."""
    if labels is None:
        return _as_symbols(data, n, name, protected), False
    kind = getattr(getattr(data, "dtype", None), "kind", None)
    if kind is None:
        kind = np.asarray(data).dtype.kind
    if (kind in "iu" and not _all_integers(labels)) or (kind == "f" and not _all_numbers(labels)):
        return _as_symbols(data, n, name, protected), False
    return label_codes(data, labels, name, protected=protected), True


def _label_array(labels: tuple) -> np.ndarray:
    """Labels as a numpy array to index into: a str array when that is lossless (fast), else object."""
    arr = np.asarray(labels) if all(isinstance(v, str) for v in labels) else None
    if arr is None or arr.tolist() != list(labels):  # numpy str arrays drop trailing NUL characters
        arr = np.empty(len(labels), dtype=object)
        arr[:] = list(labels)
    return arr


def _default_output_labels(W: np.ndarray, labels: tuple) -> tuple:
    """Output y is named after input x when every column's largest entry is a unique row and the map is 1-1.

    That is the case for randomized response and other "noisy copy" designs, so a privatized column keeps
    the alphabet of the original; otherwise the outputs are named ``y0 … y{M−1}``.
    """
    n, m = W.shape
    if n == m:
        top = W.argmax(axis=0)
        unique_top = (W == W[top, np.arange(m)]).sum(axis=0) == 1
        if unique_top.all() and np.unique(top).size == m:
            return tuple(labels[i] for i in top)
    names = tuple(f"y{j}" for j in range(m))
    return names


def counts_by_index(data: object, size: int, labels: Sequence | None, name: str) -> object:
    """Counts per category (or output) from a pandas Series or a mapping by its *index* (keys), not by position;
    other data unchanged.

    A Series of counts says which category each count belongs to through its index (``value_counts`` sorts by
    count, not by category): read by position, the counts land on other categories — a new user's trial designed on
    such a Series, and the mechanism leaked 3.35 where ε = 1 was certified. The rules:

    * a Series indexed ``0 … size − 1`` in order (the default) is read by position, unless integer labels would
      read it otherwise (refused);
    * an index (or a mapping's keys) of labels is read by label; integers, booleans and floats are kept apart
      (``1 == True`` in Python);
    * a mapping's integer keys are codes where no label reading differs; a Series' integer index other than the
      whole ``0 … size − 1`` in order is refused as ambiguous (codes from ``value_counts()``, row numbers left by
      ``sort_values()`` or a filter: reviews found both read as codes, permuted), as is a key that could be a code
      or an integer label meaning another category.

    Categories omitted count 0; no index value is ever quoted (it may be the protected categories in order of their
    counts).

    Implements: the data interface of :class:`~pml_design.mechanisms.mechanism.Mechanism` (no paper result).

    Parameters
    ----------
    data : object
        Counts; only a pandas Series or a mapping is converted.
    size : int
        The number of categories (or outputs).
    labels : sequence, optional
        Their labels, if any.
    name : str
        The argument's name, for messages.

    Returns
    -------
    object
        ``data`` itself, or for a Series or mapping an array of shape ``(size,)`` in code order (the values' own
        dtype; the caller validates them).
    """
    if isinstance(data, Mapping):  # keys are explicit: category codes or labels
        index, values, keyed = list(data), np.asarray(list(data.values()), dtype=object), True  # (True stays a bool)
    elif type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "index") and getattr(data, "ndim", 0) == 1:
        index, values, keyed = list(data.index), np.asarray(data.to_numpy()), False
    else:
        return data
    if len(set(index)) != len(index):
        raise ValueError(f"{name}: counts in a Series or mapping are read by their index, which repeats a value")
    integers = all(_kind(v)[0] == "int" for v in index)
    as_codes = integers and all(0 <= v < size for v in index)
    where = None if labels is None else {_kind(v): i for i, v in enumerate(labels)}
    as_labels = where is not None and all(_kind(v) in where for v in index)  # (1 and True are different keys)
    if as_codes and as_labels and [where[_kind(v)] for v in index] != [int(v) for v in index]:
        as_codes = as_labels = False  # a key could be a code or an integer label, meaning different categories
    elif as_codes and not as_labels and not keyed and index != list(range(size)):
        # a Series' integer index is codes only as the whole default 0 … N−1 in order: value_counts() sorts by count,
        # sort_values() leaves row numbers, a filter leaves fewer rows, and all of these look like codes (reviews)
        as_codes = False
    if as_codes and not keyed:  # the default index: positions and codes agree
        return values
    # no value of the index is quoted: it may be the protected categories in order of their counts (a review)
    if as_labels:
        codes = [where[_kind(v)] for v in index]  # type: ignore[index]
    elif as_codes:
        codes = [int(v) for v in index]
    elif integers:
        raise ValueError(f"{name}: counts whose index is integers other than 0 … {size - 1} in order are ambiguous "
                         "(category codes, as from value_counts(), or row numbers left by sort_values() or a filter? "
                         "or, with integer labels, codes or labels?): pass series.reindex(range(N), fill_value=0) (or "
                         "reindex by the labels) if the index holds the categories, or series.to_numpy() if its "
                         "positions do")
    else:
        wanted = "the labels" if labels is not None else f"the codes 0 … {size - 1} (counts keyed by label: pass categories)"
        raise ValueError(f"{name}: counts in a Series or mapping are read by their index (which category each count "
                         f"is), which must hold {wanted}; its values are not shown (they may be the protected "
                         "categories)")
    out = np.zeros(size, dtype=values.dtype)  # (the caller's count check sees the values' own type)
    out[codes] = values
    if out.dtype == object and not any(isinstance(v, (bool, np.bool_, str)) for v in out):
        out = np.array(out.tolist())  # a mapping's plain numbers get their own dtype (a bool or text stays visible)
    return out


def _kind(v: object) -> tuple:
    """A hashable key that keeps integers, booleans and other values apart (``1 == True`` in a set)."""
    if isinstance(v, (bool, np.bool_)):
        return ("bool", bool(v))
    if isinstance(v, (int, np.integer)):
        return ("int", int(v))
    return ("other", v)
