"""Releasing a Laplace-noised histogram, and measuring its error.

The mechanism of pml-histogram-laplace, Theorem 4: ``Y_j = count_j + N_j``, ``N_j ~ Lap(b)`` i.i.d.,
optionally followed by the post-processing of Section III-B (clip to non-negative values, round to the
nearest integer), which cannot increase PML or DP. Privacy parameters and calibration live in
:mod:`pml_design.histogram`; everything here is vectorised over repetitions (an extra leading axis).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pml_design._validation import as_generator, check_finite_array, check_positive_int, check_real
from .bounds import _check_codes

__all__ = [
    "histogram_counts",
    "laplace_histogram",
    "normalize_histogram",
    "release_histogram",
    "total_variation_distance",
]


def histogram_counts(data: Any, bins: int | Sequence[Any] | None = None, *, edges: Any = None) -> np.ndarray:
    """Counts of a data array over declared bins.

    Parameters
    ----------
    data : array_like
        One value per record (1-D, non-empty).
    bins : int or sequence, optional
        ``int k``: ``data`` holds integer codes ``0..k−1``. A sequence: the declared category labels,
        bin j counts the records equal to ``bins[j]`` (labels must be distinct).
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
        silently change), duplicate labels, or both / neither of ``bins`` and ``edges``.

    Notes
    -----
    Implements: pml-histogram-laplace, Section III-A (``Σ_i h_j(D_i)``, the histogram query).
    """
    if (bins is None) == (edges is None):
        raise ValueError("give exactly one of bins (int k or category labels) or edges (numeric bin edges)")
    if edges is not None:
        e = check_finite_array(edges, "edges", ndim=1)
        if e.shape[0] < 2 or np.any(np.diff(e) <= 0):
            raise ValueError(f"edges must be strictly increasing with at least 2 entries, got {e!r}")
        x = check_finite_array(data, "data", ndim=1)
        outside = (x < e[0]) | (x > e[-1])
        if np.any(outside):
            raise ValueError(
                f"data holds {int(outside.sum())} value(s) outside the declared bins [{e[0]!r}, {e[-1]!r}], "
                f"first {x[np.flatnonzero(outside)[0]]!r}"
            )
        idx = np.clip(np.searchsorted(e, x, side="right") - 1, 0, e.shape[0] - 2)
        return np.bincount(idx, minlength=e.shape[0] - 1).astype(np.int64)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        k = check_positive_int(bins, "bins")
        codes = _check_codes(data, k, "data")
        return np.bincount(codes, minlength=k).astype(np.int64)
    if isinstance(bins, (str, bytes)) or not isinstance(bins, Sequence | np.ndarray):
        raise TypeError(f"bins must be an int or a sequence of category labels, got {type(bins).__name__}")
    labels = list(bins)
    if len(labels) == 0:
        raise ValueError("bins must declare at least one category")
    index = {label: j for j, label in enumerate(labels)}
    if len(index) != len(labels):
        raise ValueError("bins must hold distinct category labels")
    arr = np.asarray(data)
    if arr.ndim != 1:
        raise ValueError(f"data must be 1-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("data must not be empty")
    uniques, inverse = np.unique(arr, return_inverse=True)
    unknown = [u for u in uniques.tolist() if u not in index]
    if unknown:
        raise ValueError(
            f"data holds values outside the declared bins: {unknown[:5]!r}"
            + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        )
    lookup = np.array([index[u] for u in uniques.tolist()], dtype=np.int64)
    return np.bincount(lookup[inverse.ravel()], minlength=len(labels)).astype(np.int64)


def laplace_histogram(
    counts: Any,
    scale: float,
    *,
    repetitions: int | None = None,
    clip: bool = False,
    round: bool = False,  # noqa: A002 - the paper's word
    rng: Any = None,
) -> np.ndarray:
    """Add i.i.d. Laplace noise to histogram counts (optionally clip and round).

    Parameters
    ----------
    counts : array_like, shape (..., k)
        True counts; leading axes (e.g. one dataset per repetition) are kept.
    scale : float
        Laplace scale ``b ≥ 0``; ``0`` releases the exact counts (see
        :func:`pml_design.histogram.histogram_scale_for`, which returns 0 when no noise is needed).
    repetitions : int, optional
        If given, draw that many independent releases: the result gets a leading axis of this length.
    clip : bool, default False
        Post-processing: replace negative values by 0.
    round : bool, default False
        Post-processing: round to the nearest integer.
    rng : numpy.random.Generator, int or None
        Randomness source.

    Returns
    -------
    numpy.ndarray of float
        Noisy histogram(s), shape ``(repetitions, *counts.shape)`` or ``counts.shape``.

    Notes
    -----
    Implements: pml-histogram-laplace, Theorem 4 (``Y_j = Σ_i h_j(D_i) + N_j``, ``N_j ~ Lap(b)``) and the
    post-processing of Section III-B.
    """
    c = check_finite_array(counts, "counts")
    if c.ndim == 0:
        raise ValueError("counts must have at least one axis (the k bins)")
    if np.any(c < 0):
        raise ValueError(f"counts must be non-negative, got minimum {c.min()!r}")
    b = check_real(scale, "scale")
    if not (np.isfinite(b) and b >= 0):
        raise ValueError(f"scale (the Laplace scale b) must be a finite number >= 0, got {b!r}")
    gen = as_generator(rng)
    shape = c.shape if repetitions is None else (check_positive_int(repetitions, "repetitions"), *c.shape)
    y = np.broadcast_to(c, shape).astype(float) if b == 0 else c + gen.laplace(0.0, b, size=shape)
    if clip:
        np.maximum(y, 0.0, out=y)
    if round:
        np.rint(y, out=y)
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
    """Histogram of ``data`` over declared bins, released with Laplace noise.

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
        Laplace scale ``b ≥ 0`` (``0`` releases the exact counts).
    edges : array_like, optional
        Instead of ``bins``: increasing numeric bin edges (as :func:`histogram_counts`).
    repetitions, clip, round, rng
        As for :func:`laplace_histogram`.

    Returns
    -------
    numpy.ndarray of float
        Shape ``(k,)`` or ``(repetitions, k)``.

    Notes
    -----
    Implements: pml-histogram-laplace, Theorem 4 mechanism with the Section III-B post-processing.

    Examples
    --------
    >>> from pml_design.histogram import histogram_scale_for
    >>> b = histogram_scale_for(1.0, alpha=0.2, n_bins=3)
    >>> release_histogram(["a", "b", "a", "c"], ["a", "b", "c"], b, clip=True, round=True, rng=0).shape
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
    c = check_finite_array(counts, "counts")
    if np.any(c < 0):
        raise ValueError("counts must be non-negative")
    total = c.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("counts must not be all zero (empty data)")
    if c.shape[-1] != q.shape[-1]:
        raise ValueError(f"released has {q.shape[-1]} bins but counts has {c.shape[-1]}")
    tvd = 0.5 * np.abs(q - c / total).sum(axis=-1)
    return float(tvd) if tvd.ndim == 0 else tvd
