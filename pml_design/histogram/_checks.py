"""Checks of protected inputs shared by :mod:`pml_design.histogram.bounds` and :mod:`pml_design.histogram.release`.

The records are the protected data: no message here quotes a record, a count of bad records or a position.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__: list[str] = []


def _check_codes(values: Any, n_bins: int, name: str) -> np.ndarray:
    """1-D non-empty integer codes in ``0..n_bins−1`` (shared with :mod:`pml_design.histogram.release`).

    The codes are protected records: no message quotes a value, a count of bad values or a position. Booleans
    are refused (``True`` is not the code 1), and so are non-integer, non-finite and out-of-range values, checked
    before any conversion to integers (a float such as 1e300 would otherwise wrap around).
    """
    if not isinstance(values, np.ndarray):
        if isinstance(values, (str, bytes)):
            raise TypeError(f"{name} must be a 1-D array of integer bin codes, got a string")
        try:
            obj = np.asarray(values, dtype=object)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a 1-D array of integer bin codes") from None
        if obj.ndim != 1:
            raise ValueError(f"{name} must be 1-dimensional, got a {obj.ndim}-dimensional array")
        kinds = set(map(type, obj.tolist()))
        if any(issubclass(t, (bool, np.bool_)) for t in kinds):
            raise TypeError(f"{name} must hold integer bin codes, got booleans (True is not the code 1; values "
                            "not shown: they are protected records)")
        if not all(issubclass(t, (numbers.Integral, numbers.Real, np.integer, np.floating)) for t in kinds):
            raise TypeError(f"{name} must hold integer bin codes, got entries that are not numbers (not shown: "
                            "they are protected records)")
        arr = np.asarray(obj.tolist())
        if arr.dtype == object:  # Python ints beyond 64 bits
            raise ValueError(f"{name} holds values outside the declared bins 0..{n_bins - 1} (not shown: they are "
                             "protected records)")
    else:
        arr = values
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got a {arr.ndim}-dimensional array")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold integer bin codes, got dtype {arr.dtype} (True is not the code 1)")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integer bin codes, got non-integer or non-finite values (not shown: "
                             "they are protected records)")
    bad = (arr < 0) | (arr >= n_bins)  # compared in the input's own dtype: no wrap-around
    if np.any(bad):
        raise ValueError(f"{name} holds values outside the declared bins 0..{n_bins - 1} (not shown: they are "
                         "protected records)")
    return arr.astype(np.int64, copy=False)

