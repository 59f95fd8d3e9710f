"""Argument checks specific to histograms (built on :mod:`pml_design._validation`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from pml_design._validation import check_finite_array, check_real, fmt


def check_histogram(value: Any, name: str = "x", *, ndim: int | None = 1) -> np.ndarray:
    """Validate a histogram: a non-empty array of non-negative integer counts; returns ``int64``.

    An all-zero histogram (no items) is accepted; an array with no bars is not.
    """
    arr = check_finite_array(value, name, ndim=ndim)
    if np.any(arr < 0):
        raise ValueError(f"{name} must have non-negative counts, got minimum {arr.min()!r}")
    if np.any(arr != np.floor(arr)):
        bad = arr[arr != np.floor(arr)].ravel()[0]
        raise ValueError(f"{name} must have integer counts, got non-integer value {bad!r}")
    if arr.max(initial=0) > 2**62:
        raise ValueError(f"{name} has counts too large to handle exactly: {fmt(arr.max())}")
    return arr.astype(np.int64)


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
