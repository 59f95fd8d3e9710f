"""Releasing a noisy histogram, and measuring its error.

The mechanism of pml-histogram-laplace, Theorem 4: ``Y_j = count_j + N_j`` with i.i.d. noise of scale b,
optionally followed by the post-processing of Section III-B (clip to non-negative values, round), which cannot
increase PML or DP. The noise is the **discrete** Laplace (two-sided geometric) law
``P(N = z) = (1 − t)/(1 + t)·t^{|z|}``, ``t = e^{−1/b}``, drawn by an exact integer sampler
(:func:`pml_design.priors.dp_release_counts`, OpenDP), instead of numpy's floating-point Laplace, which leaks
through the gaps of its output grid (Mironov 2012): every bound of Theorem 4 still holds, see
``docs/histogram.md`` ("Discrete noise"). Privacy parameters and calibration live in
:mod:`pml_design.histogram`; everything here is vectorised over repetitions (an extra leading axis).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from pml_design._validation import MAX_COUNT, MAX_FLOAT_COUNT  # noqa: F401 - the limits of the counts, re-exported
from pml_design._validation import (as_generator, check_finite_array, check_integer_counts, check_positive_int,
                                    check_real, fmt)
from pml_design.priors import DP_EPSILON_MIN, dp_release_counts
from ._checks import _check_codes

__all__ = [
    "histogram_counts",
    "laplace_histogram",
    "normalize_histogram",
    "release_histogram",
    "total_variation_distance",
]

# MAX_COUNT (2**62 − 1: counts below 2**62, room for the noise in 64-bit integers) and MAX_FLOAT_COUNT (2**53: beyond
# it floats skip integers) are the package's limits of pml_design._validation.check_integer_counts, re-exported here.
#: Largest scale b the shared discrete Laplace sampler accepts (its ε₀ = 1/b must be ≥ DP_EPSILON_MIN = 1e-9;
#: 1/1e9 rounds to 1.0000000000000001e-09, so b = 1e9 itself is accepted, as the message says).
MAX_SCALE: float = 1e9
_HIDDEN = "not shown: they are protected records"
_HIDDEN_COUNTS = "not shown: they are counts of protected records"


def histogram_counts(data: Any, bins: int | Sequence[Any] | None = None, *, edges: Any = None) -> np.ndarray:
    """Counts of a data array over declared bins.

    Parameters
    ----------
    data : array_like
        One value per record (1-D, non-empty).
    bins : int or sequence, optional
        ``int k``: ``data`` holds integer codes ``0..k−1`` (booleans are refused). A sequence: the declared
        category labels, bin j counts the records equal to ``bins[j]``; labels are distinct, hashable, and
        matched by type and value: ``1`` is not ``'1'``, ``True`` is not ``1``, ``None`` is a label like any
        other; integers and floats of equal value (``1`` and ``1.0``) are the same label.
    edges : array_like, optional
        Instead of ``bins``: increasing numeric bin edges ``e_0 < … < e_k``; bin j is ``[e_j, e_{j+1})``, the
        last bin is closed on the right (as :func:`numpy.histogram`).

    Returns
    -------
    numpy.ndarray of int64, shape (k,)
        Bin counts, summing to the number of records.

    Raises
    ------
    ValueError
        Empty data, values outside the declared bins (the histogram's k and the public n would otherwise
        silently change), duplicate labels, or both / neither of ``bins`` and ``edges``. No message quotes a
        record, a count of bad records or a position: the records are the protected data.
    TypeError
        ``bins`` of the wrong type, unhashable labels, or records of the wrong kind (e.g. text with ``edges``).

    Notes
    -----
    Implements: pml-histogram-laplace, Section III-A (``Σ_i h_j(D_i)``, the histogram query).
    """
    if (bins is None) == (edges is None):
        raise ValueError("give exactly one of bins (int k or category labels) or edges (numeric bin edges)")
    if edges is not None:
        e = check_finite_array(edges, "edges", ndim=1)
        if e.shape[0] < 2 or np.any(np.diff(e) <= 0):
            raise ValueError(f"edges must be strictly increasing with at least 2 entries, got {fmt(e)}")
        x = _numeric_data(data)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"data holds non-finite values (NaN or inf; {_HIDDEN})")
        outside = (x < e[0]) | (x > e[-1])
        if np.any(outside):
            raise ValueError(f"data holds values outside the declared bins [{float(e[0])!r}, {float(e[-1])!r}] ({_HIDDEN})")
        idx = np.clip(np.searchsorted(e, x, side="right") - 1, 0, e.shape[0] - 2)
        return np.bincount(idx, minlength=e.shape[0] - 1).astype(np.int64)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        k = check_positive_int(bins, "bins")
        codes = _check_codes(data, k, "data")
        return np.bincount(codes, minlength=k).astype(np.int64)
    if isinstance(bins, (str, bytes)) or not isinstance(bins, Sequence | np.ndarray):
        raise TypeError(f"bins must be an int or a sequence of category labels, got {type(bins).__name__}")
    labels = list(bins.tolist() if isinstance(bins, np.ndarray) else bins)
    if len(labels) == 0:
        raise ValueError("bins must declare at least one category")
    index: dict[tuple[Any, ...], int] = {}
    for j, label in enumerate(labels):
        try:
            key = _label_key(label)
            hash(key)
        except TypeError:
            raise TypeError(f"bins[{j}] must be a hashable label, got {type(label).__name__}") from None
        if key in index:
            raise ValueError(f"bins must hold distinct category labels: bins[{index[key]}] and bins[{j}] are the "
                             "same label")
        index[key] = j
    codes = _label_codes(data, index)
    return np.bincount(codes, minlength=len(labels)).astype(np.int64)


def _numeric_data(data: Any) -> np.ndarray:
    """``data`` as a 1-D float array for ``edges``, without quoting it (booleans and text refused)."""
    if isinstance(data, np.ndarray):
        arr = data
    else:
        if isinstance(data, (str, bytes)):
            raise TypeError("data must be a 1-D array of numbers when edges are given, got a string")
        obj = np.asarray(data, dtype=object)
        kinds = set(map(type, obj.ravel().tolist()))
        if not all(issubclass(t, (numbers.Real, np.number)) and not issubclass(t, (bool, np.bool_)) for t in kinds):
            raise TypeError(f"data must hold numbers when edges are given; some entries are not ({_HIDDEN})")
        arr = np.asarray(obj.tolist())
    if arr.ndim != 1:
        raise ValueError(f"data must be 1-dimensional, got a {arr.ndim}-dimensional array")
    if arr.size == 0:
        raise ValueError("data must not be empty")
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"data must hold numbers when edges are given, got dtype {arr.dtype}")
    return arr.astype(float)


def _label_key(value: Any) -> tuple[Any, ...]:
    """The matching key of a label or record: its kind and value (bool ≠ int, 1 ≠ '1', 1 == 1.0, NaN == NaN)."""
    if value is None:
        return ("none",)
    if isinstance(value, (bool, np.bool_)):
        return ("bool", bool(value))
    if isinstance(value, (numbers.Real, np.integer, np.floating)):
        v = value.item() if isinstance(value, np.generic) else value
        if isinstance(v, float) and v != v:
            return ("number", "nan")
        return ("number", v)
    if isinstance(value, (str, np.str_)):
        return ("str", str(value))
    if isinstance(value, (bytes, np.bytes_)):
        return ("bytes", bytes(value))
    return ("other", type(value), value)


def _label_codes(data: Any, index: dict[tuple[Any, ...], int]) -> np.ndarray:
    """Bin index of every record (vectorised per type of record); ValueError if a record matches no label."""
    if isinstance(data, np.ndarray) and data.dtype != object:
        arr = data
        groups = [(None, arr)]
    else:
        if isinstance(data, (str, bytes)):
            raise TypeError("data must be a 1-D sequence of records, got a string")
        arr = np.asarray(data, dtype=object) if not isinstance(data, np.ndarray) else data
        groups = []
    if arr.ndim != 1:
        raise ValueError(f"data must be 1-dimensional, got a {arr.ndim}-dimensional array")
    if arr.size == 0:
        raise ValueError("data must not be empty")
    codes = np.full(arr.shape[0], -1, dtype=np.int64)
    if not groups:  # Python objects: one group per type, each converted to a native array when possible
        types = np.array(list(map(type, arr.tolist())), dtype=object)
        for t in set(types.tolist()):
            mask = types == t
            groups.append((mask, _native(arr[mask], t)))
    for mask, values in groups:
        sub = _group_codes(values, index)
        if mask is None:
            codes = sub
        else:
            codes[mask] = sub
    if np.any(codes < 0):
        raise ValueError("data holds values outside the declared bins (labels match by type and value: 1 is not "
                         f"'1' and True is not 1; {_HIDDEN})")
    return codes


def _native(values: np.ndarray, kind: type) -> np.ndarray:
    """Records of one Python type as a native numpy array when that is exact, else the object array."""
    if issubclass(kind, (bool, np.bool_)):
        return values.astype(bool)
    if issubclass(kind, (str, np.str_)):
        return values.astype(str)
    if issubclass(kind, (int, np.integer)):
        try:
            return values.astype(np.int64)
        except OverflowError:
            return values
    if issubclass(kind, (float, np.floating)):
        return values.astype(float)
    return values


def _group_codes(values: np.ndarray, index: dict[tuple[Any, ...], int]) -> np.ndarray:
    """Codes of records of one kind: :func:`numpy.unique` (vectorised), then one lookup per distinct value."""
    if values.dtype == object and values.size and values[0] is None:
        uniques, inverse = [None], np.zeros(values.shape[0], dtype=np.intp)
    else:
        try:
            u, inverse = np.unique(values, return_inverse=True)
            uniques = u.tolist()
        except TypeError:  # unorderable objects of one type: hash them
            first: dict[tuple[Any, ...], int] = {}
            keys = [_label_key(v) for v in values.tolist()]
            inverse = np.array([first.setdefault(key, len(first)) for key in keys], dtype=np.intp)
            return np.array([index.get(key, -1) for key in first], dtype=np.int64)[inverse]
    lookup = np.array([index.get(_safe_key(u), -1) for u in uniques], dtype=np.int64)
    return lookup[np.asarray(inverse).ravel()]


def _safe_key(value: Any) -> tuple[Any, ...]:
    """:func:`_label_key`, or a key that matches no label for unhashable records."""
    key = _label_key(value)
    try:
        hash(key)
    except TypeError:
        return ("unhashable",)
    return key


def _check_counts(counts: Any) -> np.ndarray:
    """Non-negative integer counts as an int64 array, never through float64 (no message quotes a count): the shared
    :func:`pml_design._validation.check_integer_counts`, with leading axes (repetitions) allowed."""
    return check_integer_counts(counts, "counts", ndim=None, hidden=_HIDDEN_COUNTS)


def laplace_histogram(
    counts: Any,
    scale: float,
    *,
    repetitions: int | None = None,
    clip: bool = False,
    round: bool = False,  # noqa: A002 - the paper's word
    rng: Any = None,
) -> np.ndarray:
    """Add i.i.d. discrete Laplace noise of scale b to histogram counts (optionally clip).

    ``Y_j = count_j + N_j`` with ``P(N_j = z) = (1 − t)/(1 + t)·t^{|z|}``, ``t = e^{−1/b}``: the integer
    version of ``Lap(b)``. Every guarantee of Theorem 4 holds unchanged: eq. (1) ``ε_PML(b, α)`` for every
    product distribution with bin probabilities ≥ α, and ε-DP with ``ε = 2/b`` (substitution neighbours),
    because the discrete pmf has, at integer counts, the same likelihood ratios as the continuous density
    (derivation in ``docs/histogram.md``, "Discrete noise"; checked against
    :func:`pml_design.histogram.exact.histogram_leakage_exact` in the tests).

    Parameters
    ----------
    counts : array_like of int, shape (..., k)
        True counts: non-negative integers (an integer array, or floats that are whole numbers ≤ 2**53;
        booleans are refused). Leading axes (e.g. one dataset per repetition) are kept.
    scale : float
        Noise scale ``b`` in ``[0, 1e9]``; ``0`` releases the exact counts (see
        :func:`pml_design.histogram.histogram_scale_for`, which returns 0 when no noise is needed). A b so
        small that ``1/b`` overflows (below ~5.6e-309) also releases the exact counts (the noise would be 0
        with probability ``1 − 2e^{−1/b}/(1 + e^{−1/b})``, i.e. 1 in double precision); this is within the
        PML bound, whose limit as b → 0 is the noiseless ``log(1/α)``.
    repetitions : int, optional
        If given, draw that many independent releases: the result gets a leading axis of this length. These
        are for simulation: **publishing several releases of the same data composes their privacy cost**
        (r releases are (2r/b)-DP, and the PML bounds add up likewise, composition as in Section IV).
    clip : bool, default False
        Post-processing: replace negative values by 0.
    round : bool, default False
        Kept for compatibility: the release is integer-valued already, rounding changes nothing.
    rng : numpy.random.Generator, int or None, default None
        None for a release: OpenDP's exact integer sampler with OS randomness (~10 µs per noisy count). A seed
        or Generator gives reproducible noise (the difference of two numpy geometric variables) **for tests
        and simulations only**: whoever knows the seed can remove the noise, and numpy's geometric sampler
        uses floating point. See :func:`pml_design.priors.dp_release_counts`, which draws the noise.

    Returns
    -------
    numpy.ndarray of int64
        Noisy histogram(s), shape ``(repetitions, *counts.shape)`` or ``counts.shape``.

    Raises
    ------
    ValueError
        If counts are negative, not whole numbers, not finite, too large, or empty; if the scale is outside
        ``[0, 1e9]``. No message quotes a count.
    TypeError
        If counts are booleans or not numbers, or ``rng`` is of the wrong type.

    Notes
    -----
    Implements: pml-histogram-laplace, Theorem 4 (``Y_j = Σ_i h_j(D_i) + N_j``) with discrete Laplace noise
    (two-sided geometric mechanism, Ghosh, Roughgarden & Sundararajan 2009) in place of ``Lap(b)``, and the
    post-processing of Section III-B.
    """
    c = _check_counts(counts)
    b = check_real(scale, "scale")
    if not (np.isfinite(b) and 0 <= b <= MAX_SCALE):
        raise ValueError(f"scale (the noise scale b) must be a finite number in [0, {MAX_SCALE:g}], got {b!r}")
    gen = None if rng is None else as_generator(rng)
    shape = c.shape if repetitions is None else (check_positive_int(repetitions, "repetitions"), *c.shape)
    full = np.broadcast_to(c, shape)
    rate = 1.0 / b if b > 0 else np.inf
    if not np.isfinite(rate):
        y = full.copy()
    else:
        y = dp_release_counts(full.ravel(), rate, rng=gen).reshape(shape)
    if clip:
        np.maximum(y, 0, out=y)
    return y


def release_histogram(
    data: Any,
    bins: int | Sequence[Any] | None,
    scale: float,
    *,
    edges: Any = None,
    repetitions: int | None = None,
    clip: bool = False,
    round: bool = False,  # noqa: A002
    rng: Any = None,
) -> np.ndarray:
    """Histogram of ``data`` over declared bins, released with discrete Laplace noise.

    :func:`histogram_counts` followed by :func:`laplace_histogram`; see those for the parameters. Calibrate
    ``scale`` with :func:`pml_design.histogram.histogram_scale_for` (PML, needs α) or
    :func:`pml_design.histogram.histogram_dp_scale_for` (DP).

    Parameters
    ----------
    data : array_like
        One value per record (1-D, non-empty).
    bins : int, sequence or None
        ``int k`` (integer codes ``0..k−1``) or the declared category labels; None when ``edges`` is given.
    scale : float
        Noise scale ``b ≥ 0`` (``0`` releases the exact counts).
    edges : array_like, optional
        Instead of ``bins``: increasing numeric bin edges (as :func:`histogram_counts`).
    repetitions, clip, round, rng
        As for :func:`laplace_histogram` (``rng=None`` for a release; seeds for simulations only; publishing
        several repetitions composes the privacy cost).

    Returns
    -------
    numpy.ndarray of int64
        Shape ``(k,)`` or ``(repetitions, k)``.

    Notes
    -----
    Implements: pml-histogram-laplace, Theorem 4 mechanism (discrete Laplace noise, see
    :func:`laplace_histogram`) with the Section III-B post-processing.

    Examples
    --------
    >>> from pml_design.histogram import histogram_scale_for
    >>> b = histogram_scale_for(1.0, alpha=0.2, n_bins=3)
    >>> release_histogram(["a", "b", "a", "c"], ["a", "b", "c"], b, clip=True, rng=0).shape
    (3,)
    """
    counts = histogram_counts(data, bins, edges=edges)
    return laplace_histogram(counts, scale, repetitions=repetitions, clip=clip, round=round, rng=rng)


def normalize_histogram(histogram: Any) -> np.ndarray:
    """Turn (noisy) histogram(s) into distributions along the last axis.

    Negative entries are clipped to 0 first; a histogram whose clipped sum is 0 (possible only for heavy
    noise) carries no information and is mapped to the uniform distribution.

    Parameters
    ----------
    histogram : array_like, shape (..., k)

    Returns
    -------
    numpy.ndarray, shape (..., k)
        Non-negative, each row summing to 1.

    Notes
    -----
    Implements: pml-histogram-laplace, Section III-B ("privatized ... empirical distribution"); the
    zero-sum convention is ours.
    """
    h = np.maximum(check_finite_array(histogram, "histogram"), 0.0)
    if h.ndim == 0:
        raise ValueError("histogram must have at least one axis (the k bins)")
    total = h.sum(axis=-1, keepdims=True)
    k = h.shape[-1]
    safe = np.where(total > 0, total, 1.0)
    return np.where(total > 0, h / safe, 1.0 / k)


def total_variation_distance(released: Any, counts: Any) -> np.ndarray | float:
    """Total variation distance between released histogram(s) and the true empirical distribution.

    ``TVD = ½ Σ_j |q_j − p_j|`` with ``q`` = :func:`normalize_histogram` of the release and
    ``p = counts / Σ counts``.

    Parameters
    ----------
    released : array_like, shape (..., k)
        Released (noisy, possibly clipped/rounded) histogram(s).
    counts : array_like, shape (k,) or broadcastable to ``released``
        True counts (non-negative, not all zero).

    Returns
    -------
    float or numpy.ndarray
        TVD in [0, 1] per histogram (a float for a single histogram).

    Notes
    -----
    Implements: pml-histogram-laplace, Section III-B (utility metric of Figure 1).
    """
    q = normalize_histogram(released)
    try:
        c = np.asarray(counts, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"counts must be an array of non-negative numbers ({_HIDDEN_COUNTS})") from None
    if c.ndim == 0 or c.size == 0:
        raise ValueError("counts must have at least one axis (the k bins) and not be empty")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(f"counts must be non-negative and finite ({_HIDDEN_COUNTS})")
    total = c.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("counts must not be all zero (empty data)")
    if c.shape[-1] != q.shape[-1]:
        raise ValueError(f"released has {q.shape[-1]} bins but counts has {c.shape[-1]}")
    tvd = 0.5 * np.abs(q - c / total).sum(axis=-1)
    return float(tvd) if tvd.ndim == 0 else tvd
