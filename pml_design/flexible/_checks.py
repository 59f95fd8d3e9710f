"""Argument checks specific to histograms (built on :mod:`pml_design._validation`).

Histograms and points are the *protected data* of this package.  The checks here therefore never echo a value,
a count of bad entries, or a position of the data in a message (nor chain numpy's own message, which may quote
a value): they name the argument and what is wrong, and only public facts (the number of dimensions, the dtype,
a documented limit).  Counts stay integer end to end: integer input is kept exactly (below 2**62, :data:`MAX_COUNT`),
float input is accepted only where float64 represents every integer exactly (up to :data:`MAX_FLOAT_COUNT`).
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any

import numpy as np

from pml_design._validation import MAX_COUNT, MAX_FLOAT_COUNT, check_integer_counts, check_real

# MAX_COUNT (2**62 − 1), the largest count and largest total |x| handled exactly (int64 with one bit of headroom for
# sums), and MAX_FLOAT_COUNT (2**53), the largest integral float accepted as a count, are the package's limits
# (pml_design._validation), the same as the DP count release's and the histogram release's.
#: Largest number of buckets (or bars) a bucketing may allocate (2**26 int64 counts = 512 MiB).
MAX_BUCKETS: int = 2**26


def _numeric(value: Any, name: str) -> np.ndarray:
    """``numpy.asarray(value)`` for an array of numbers; refuses text, booleans and ragged input without values."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got text")
    if isinstance(value, (list, tuple)):
        try:
            raw = np.asarray(value, dtype=object)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a rectangular array of numbers") from None
        flat = raw.ravel()
        if any(isinstance(v, (str, bytes)) for v in flat):
            raise TypeError(f"{name} must be an array of numbers, got text")
        if any(isinstance(v, (bool, np.bool_)) for v in flat):
            raise TypeError(f"{name} must be an array of numbers, got booleans (True/False are not counts)")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a rectangular array of numbers") from None
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError(f"{name} must be an array of numbers, got booleans (True/False are not counts)")
    if kind in "USaV":
        raise TypeError(f"{name} must be an array of numbers, got an array of dtype {arr.dtype.str}")
    if kind == "c":
        raise TypeError(f"{name} must be an array of real numbers, got complex numbers")
    if kind == "O":
        flat = arr.ravel()
        if any(isinstance(v, (str, bytes, bool, np.bool_)) for v in flat):
            raise TypeError(f"{name} must be an array of numbers")
        if flat.size and all(isinstance(v, numbers.Integral) for v in flat):
            return arr  # Python integers beyond int64: the callers refuse them with their own message
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"{name} must be an array of real numbers") from None
    elif kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers, got an array of dtype {arr.dtype.str}")
    return arr


def _check_shape(arr: np.ndarray, name: str, ndim: int | None, what: str) -> None:
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got {arr.ndim} dimension(s)")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty (at least one {what})")


def check_real_array(value: Any, name: str, *, ndim: int | None = None, allow_inf: bool = False) -> np.ndarray:
    """A non-empty float array, finite (or not NaN with ``allow_inf``); messages never quote a value."""
    arr = _numeric(value, name)
    if arr.dtype.kind == "O":
        raise ValueError(f"{name} has integers too large for float64")
    arr = arr.astype(float)
    _check_shape(arr, name, ndim, "value")
    if np.any(np.isnan(arr)) or not (allow_inf or np.all(np.isfinite(arr))):
        raise ValueError(f"{name} must contain only {'non-NaN' if allow_inf else 'finite'} values")
    return arr


def check_histogram(value: Any, name: str = "x", *, ndim: int | None = 1) -> np.ndarray:
    """Validate a histogram: a non-empty array of non-negative integer counts; returns ``int64``, exactly.

    The shared :func:`pml_design._validation.check_integer_counts` with the total bounded too: an all-zero
    histogram (no items) is accepted, an array with no bars is not; integer input is kept exact (each count and the
    total below :data:`MAX_COUNT` + 1 = 2**62); float input must be integral and at most :data:`MAX_FLOAT_COUNT` =
    2**53 (above it float64 has already rounded the counts); booleans and text are refused. Messages never quote a
    count.
    """
    return check_integer_counts(value, name, ndim=ndim, max_total=MAX_COUNT,
                                hidden="not shown: a histogram is protected data")


def check_mass_vector(value: Any, name: str) -> tuple[np.ndarray, list[int] | None]:
    """Masses of a distribution or histogram: (float masses, exact Python-int masses or None).

    The exact integers are returned for integer input and for integral float input up to 2**53; the float
    array is the same masses as float64.  Refuses negative, non-finite, all-zero input without quoting values.
    """
    arr = _numeric(value, name)
    _check_shape(arr, name, 1, "bar")
    if arr.dtype.kind == "O" or arr.dtype.kind in "iu":
        ints = [int(v) for v in arr.tolist()]
        if any(v < 0 for v in ints):
            raise ValueError(f"{name} must be non-negative")
        if sum(ints) <= 0:
            raise ValueError(f"{name} must have positive total mass (an empty histogram has no distribution)")
        return np.array([float(v) for v in ints]), ints
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative")
    if not arr.sum() > 0:
        raise ValueError(f"{name} must have positive total mass (an empty histogram has no distribution)")
    exact = bool(np.all(arr == np.floor(arr)) and arr.max() <= MAX_FLOAT_COUNT)
    return arr, ([int(v) for v in arr.tolist()] if exact else None)


def exact_fraction(value: Any) -> Fraction:
    """γ as an exact rational: ints and Fractions as given, a float as its shortest decimal (0.3 is 3/10)."""
    if isinstance(value, (Fraction, numbers.Integral)) and not isinstance(value, (bool, np.bool_)):
        return Fraction(value)
    return Fraction(repr(float(value)))


def check_n_buckets(n: float, name: str) -> float:
    """Refuse a bucketing of more than :data:`MAX_BUCKETS` buckets before allocating anything."""
    if n > MAX_BUCKETS:
        raise ValueError(f"{name} gives {n:.4g} buckets, more than the limit {MAX_BUCKETS} (2**26) of this "
                         f"package; use fewer buckets (a wider bucket / larger beta, or a smaller range)")
    return n


def check_unit_interval(value: Any, name: str, *, open_left: bool = False, open_right: bool = False) -> float:
    """Validate a real number in [0, 1] (ends excluded on request)."""
    v = check_real(value, name)
    lo_ok = v > 0 if open_left else v >= 0
    hi_ok = v < 1 if open_right else v <= 1
    if not (np.isfinite(v) and lo_ok and hi_ok):
        lo = "(" if open_left else "["
        hi = ")" if open_right else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}, got {v!r}")
    return v
