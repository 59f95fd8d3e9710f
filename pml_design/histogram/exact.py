"""Exact per-record leakage of the Laplace histogram, computed numerically for small n and k.

Independent of the closed-form bound of :mod:`pml_design.histogram`: the densities of the released vector
are built by brute-force enumeration of every bin assignment of the other ``n − 1`` records (``k^(n−1)``
configurations, each with its product probability), and PML is evaluated from its definition

    ℓ(D_i → y) = log max_{c : P(D_i ∈ c) > 0}  f(y | D_i ∈ c) / f(y),
    f(y | D_i ∈ c) = Σ_config P(config) Π_{j released} (1/2b) exp(−|y_j − m_j(config) − [j = c]| / b),

with log-sum-exp for stability (the factor ``(2b)^{-k}`` cancels). Records may have different bin
distributions (any product distribution). ``scale = 0`` evaluates the exact (noiseless) histogram, whose
output is the integer count vector. The mechanism releasing only some bins (e.g. ``k − 1`` counts, the
setting of the paper's composition bound) is available through ``released_bins``.

Used by the tests to certify Theorem 4 of pml-histogram-laplace (never exceeded, attained when a bin's
probability equals α).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

from pml_design._validation import (
    check_finite_array,
    check_positive_int,
    check_probability_vector,
    check_real,
)

__all__ = ["ExactLeakage", "histogram_leakage_exact", "histogram_max_leakage_exact"]

#: Largest number of configurations ``k^(n−1)`` the brute force accepts.
MAX_CONFIGURATIONS: int = 2_000_000


def _check_class_probs(class_probs: Any) -> np.ndarray:
    P = check_finite_array(class_probs, "class_probs", ndim=2)
    for i in range(P.shape[0]):
        P[i] = check_probability_vector(P[i], f"class_probs[{i}]")
    return P


def _others_distribution(P: np.ndarray, record: int) -> tuple[np.ndarray, np.ndarray]:
    """Brute force: all k^(n−1) bin assignments of the other records -> (count vectors, probabilities)."""
    n, k = P.shape
    others = np.delete(P, record, axis=0)
    m = n - 1
    if k**m > MAX_CONFIGURATIONS:
        raise ValueError(
            f"k^(n-1) = {k}^{m} configurations exceed the brute-force limit {MAX_CONFIGURATIONS}; use smaller n, k"
        )
    if m == 0:
        return np.zeros((1, k), dtype=np.int64), np.ones(1)
    assign = np.indices((k,) * m).reshape(m, -1).T  # (C, m): bin of each other record
    prob = np.prod(others[np.arange(m), assign], axis=1)  # (C,)
    counts = np.zeros((assign.shape[0], k), dtype=np.int64)
    for j in range(k):
        counts[:, j] = (assign == j).sum(axis=1)
    keep = prob > 0
    counts, prob = counts[keep], prob[keep]
    uniq, inverse = np.unique(counts, axis=0, return_inverse=True)
    agg = np.zeros(uniq.shape[0])
    np.add.at(agg, inverse.ravel(), prob)
    return uniq, agg


def _released(released_bins: Sequence[int] | None, k: int) -> np.ndarray:
    if released_bins is None:
        return np.arange(k)
    idx = np.asarray(list(released_bins), dtype=np.int64)
    if idx.ndim != 1 or idx.size == 0 or np.any((idx < 0) | (idx >= k)) or np.unique(idx).size != idx.size:
        raise ValueError(f"released_bins must be distinct bin indices in 0..{k - 1}, got {released_bins!r}")
    return np.sort(idx)


def histogram_leakage_exact(
    outputs: Any,
    class_probs: Any,
    scale: float,
    *,
    record: int = 0,
    released_bins: Sequence[int] | None = None,
    chunk: int = 16384,
) -> np.ndarray:
    """Exact ``ℓ(D_i → y)`` of the Laplace histogram at given outputs, by brute-force enumeration.

    Parameters
    ----------
    outputs : array_like, shape (m, r) or (r,)
        Released vectors y (``r`` = number of released bins). For ``scale = 0`` they must be count vectors
        with positive probability.
    class_probs : array_like, shape (n, k)
        Row i: the bin distribution of record i (a product distribution over records).
    scale : float
        Laplace scale ``b ≥ 0`` (0 = exact histogram).
    record : int, default 0
        The record i whose leakage is computed.
    released_bins : sequence of int, optional
        Bins whose noisy counts are released (default: all k).
    chunk : int
        Outputs processed per block (memory control).

    Returns
    -------
    numpy.ndarray, shape (m,)
        ``ℓ(D_i → y)`` in nats for each output.

    Notes
    -----
    Implements: pml-histogram-laplace, Definition 1 (simplified form, Section II-B) for the mechanism of
    Theorem 4, evaluated exactly (independent of eq. (1)).
    """
    P = _check_class_probs(class_probs)
    n, k = P.shape
    i = check_positive_int(record, "record", minimum=0)
    if i >= n:
        raise ValueError(f"record must be in 0..{n - 1}, got {i}")
    b = check_real(scale, "scale")
    if not (np.isfinite(b) and b >= 0):
        raise ValueError(f"scale must be a finite number >= 0, got {b!r}")
    rel = _released(released_bins, k)
    Y = check_finite_array(outputs, "outputs")
    Y = np.atleast_2d(Y)
    if Y.ndim != 2 or Y.shape[1] != rel.size:
        raise ValueError(f"outputs must have shape (m, {rel.size}), got {np.shape(outputs)}")
    M, w = _others_distribution(P, i)  # (C, k), (C,)
    p = P[i]
    classes = np.flatnonzero(p > 0)
    shifts = M[None, :, :] + np.eye(k, dtype=np.int64)[classes][:, None, :]  # (c, C, k): counts incl. D_i
    shifts = shifts[:, :, rel]
    if b == 0:
        return _noiseless(Y, shifts, w, p[classes])
    logw = np.log(w)
    logp = np.log(p[classes])
    out = np.empty(Y.shape[0])
    for start in range(0, Y.shape[0], chunk):
        y = Y[start : start + chunk]
        # log f(y | c) up to the common constant: (m, c)
        dist = np.abs(y[:, None, None, :] - shifts[None, :, :, :]).sum(axis=-1)  # (m, c, C)
        log_cond = logsumexp(logw[None, None, :] - dist / b, axis=-1)
        log_marg = logsumexp(logp[None, :] + log_cond, axis=-1)
        out[start : start + chunk] = log_cond.max(axis=-1) - log_marg
    return out


def _noiseless(Y: np.ndarray, shifts: np.ndarray, w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Exact histogram: P(y | c) = Σ_config w · [counts(config) + e_c = y]."""
    if np.any(Y != np.round(Y)):
        raise ValueError("outputs of the exact histogram (scale = 0) must be integer count vectors")
    Yi = Y.astype(np.int64)
    eq = np.all(Yi[:, None, None, :] == shifts[None, :, :, :], axis=-1)  # (m, c, C)
    cond = (eq * w[None, None, :]).sum(axis=-1)  # (m, c)
    marg = cond @ p
    if np.any(marg <= 0):
        raise ValueError("outputs contain a count vector of probability 0")
    with np.errstate(divide="ignore"):
        return np.log(cond.max(axis=-1) / marg)


@dataclass(frozen=True)
class ExactLeakage:
    """Maximum of the exact leakage over a set of outputs.

    Attributes
    ----------
    max_leakage : float
        ``max_y ℓ(D_i → y)`` over the evaluated outputs (nats).
    argmax : numpy.ndarray
        An output attaining it.
    n_outputs : int
        Number of outputs evaluated.
    """

    max_leakage: float
    argmax: np.ndarray
    n_outputs: int


def histogram_max_leakage_exact(
    class_probs: Any,
    scale: float,
    *,
    record: int = 0,
    released_bins: Sequence[int] | None = None,
    points_per_unit: int = 2,
    margin: float = 2.0,
) -> ExactLeakage:
    """Maximise the exact leakage over a grid of outputs covering every region of the output space.

    For ``b > 0`` the grid is ``{−margin, …, n + margin}^r`` with ``points_per_unit`` points per unit.
    The likelihood ratio depends on y only through ``|y_j − m|`` for integers ``0 ≤ m ≤ n``; beyond
    ``[0, n]`` in a coordinate it is constant, so the outer grid points represent the unbounded regions
    (where the extreme value of Theorem 4 is attained: ``y_c ≥ n`` and ``y_j ≤ 0`` for ``j ≠ c``). For
    ``b = 0`` every count vector of positive probability is evaluated.

    Parameters
    ----------
    class_probs : array_like, shape (n, k)
        Per-record bin distributions.
    scale : float
        Laplace scale ``b ≥ 0``.
    record : int, default 0
        Record whose leakage is computed.
    released_bins : sequence of int, optional
        Bins released (default all).
    points_per_unit : int, default 2
        Grid resolution.
    margin : float, default 2
        Grid extension beyond ``[0, n]``.

    Returns
    -------
    ExactLeakage

    Notes
    -----
    Implements: pml-histogram-laplace, Theorem 4 tightness claim, checked numerically (sup over y of
    Definition 1).
    """
    P = _check_class_probs(class_probs)
    n, k = P.shape
    rel = _released(released_bins, k)
    b = check_real(scale, "scale")
    if b == 0:
        grid_1d = np.arange(n + 1, dtype=float)
        Y = np.stack(np.meshgrid(*([grid_1d] * rel.size), indexing="ij"), axis=-1).reshape(-1, rel.size)
        if rel.size == k:
            Y = Y[Y.sum(axis=1) == n]
        # drop impossible vectors (probability 0) before evaluating
        M, w = _others_distribution(P, check_positive_int(record, "record", minimum=0))
        possible = set()
        for c in np.flatnonzero(P[record] > 0):
            for row in (M + np.eye(k, dtype=np.int64)[c])[:, rel]:
                possible.add(tuple(row.tolist()))
        Y = np.array(sorted(possible), dtype=float)
    else:
        ppu = check_positive_int(points_per_unit, "points_per_unit")
        grid_1d = np.linspace(-margin, n + margin, int(round((n + 2 * margin) * ppu)) + 1)
        Y = np.stack(np.meshgrid(*([grid_1d] * rel.size), indexing="ij"), axis=-1).reshape(-1, rel.size)
    vals = histogram_leakage_exact(Y, P, b, record=record, released_bins=released_bins)
    j = int(np.argmax(vals))
    return ExactLeakage(max_leakage=float(vals[j]), argmax=Y[j].copy(), n_outputs=int(Y.shape[0]))
