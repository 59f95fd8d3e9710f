"""Seeds of the estimation design: the best compact ε-LDP channel (a floor by construction) and rank-one rays.

Implements: docs/design.md §7 "Seeds that make LDP a floor". Every ε-LDP mechanism is ε-PML for every
distribution, so the pair-balanced channel of
:func:`~pml_design.mechanisms.frequency_oracles.optimum.compact_ldp_channel` (subset selection's exact variance,
or GRR's, or Hadamard response's, on few outputs) is feasible for any uncertainty set: it enters the master as one
matrix column (:mod:`.master`), so the design's error is never above that channel's MLE error, which is at most its
closed-form variance (Cramér–Rao). Rank-one seeds: the constant column, each symbol's randomized-response direction
and a sample of the channel's blocks, each at the largest two-level ratio the guarantee allows over 𝒫
(:func:`subset_directions`).
"""

from __future__ import annotations

import math

import numpy as np

from ...uncertainty import UncertaintySet


__all__ = ["LARGE_N", "block_masks", "ray_seeds", "subset_directions"]

#: Above this alphabet size the rank-one seeds are only Hadamard response's half-sets (the master's cost grows
#: with the cube of its number of columns; the LDP channel, one matrix column, keeps F invertible).
LARGE_N: int = 400


def subset_directions(uset: UncertaintySet, epsilon: float, masks: np.ndarray) -> np.ndarray:
    """Cone directions ``(e^ε − 1)1_S + (1 − e^ε f(1_S))·1`` (or ``1_S`` when ``e^ε f(1_S) ≥ 1``), as columns.

    ``f(1_S) = min_{Q∈𝒫} Q(S)``. Each is the two-level column with the largest top/bottom ratio that keeps ε-PML
    over 𝒫: its leakage is exactly tight (for the ℓ1 ball these are the rays ``h(1)1_S − h(S)1`` of
    :func:`~pml_design.design.rays.l1_ball_rays`).
    """
    e = math.exp(epsilon)
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    f = uset.min_output_probability(masks.T.astype(float))
    low = 1.0 - e * f
    cols = np.where(masks, (e - 1.0) + np.maximum(low, 0.0)[:, None], np.maximum(low, 0.0)[:, None])
    cols[low <= 0] = masks[low <= 0].astype(float)
    return cols.T


def block_masks(W: np.ndarray) -> np.ndarray:
    """The blocks (rows: boolean masks over the symbols) of a two-level channel's non-constant columns."""
    lo = W.min(axis=0)
    masks = (W > lo * (1.0 + 1e-9)).T
    return masks[masks.any(axis=1) & ~masks.all(axis=1)]


def ray_seeds(uset: UncertaintySet, epsilon: float, ldp_matrix: np.ndarray, gen: np.random.Generator,
              budget: int) -> np.ndarray:
    """Rank-one seed columns, each boosted to the largest level 𝒫 allows (:func:`subset_directions`): constant,
    singletons, the dyadic families of :func:`_dyadic_groups` (Hadamard response's half-sets: at small ε and a wide
    ball their heavy members allow ratios far above e^ε) and up to ``budget`` blocks of the LDP seed channel."""
    n = uset.size
    masks = block_masks(ldp_matrix)
    if masks.shape[0] > budget:
        masks = masks[gen.choice(masks.shape[0], size=budget, replace=False)]
    dyadic = _dyadic_groups(n, epsilon, gen)
    if n > LARGE_N:  # the master is dense in the number of columns: only the dyadic half-sets (≤ 2N) at large N
        masks = np.vstack(dyadic[:1])
    else:
        masks = np.vstack([np.eye(n, dtype=bool), *dyadic, masks])
    return np.hstack([np.ones((n, 1)), subset_directions(uset, epsilon, masks)])


def _dyadic_groups(n: int, epsilon: float, rng: np.random.Generator, budget: int = 512) -> list[np.ndarray]:
    """Balanced designs from F_2^m (K = 2^m > N points, symbols = the first N non-zero points): the Hadamard
    response (complements of the hyperplanes through 0, Acharya, Sun & Zhang 2019: a 2-design) and random parallel
    classes of codimension j ≈ log2(e^ε + 1) (the cosets of a random j-dimensional linear map: a partition, so
    every symbol is in exactly one subset per class), which approximate subset selection with k ≈ N/(e^ε + 1)."""
    m = max(1, int(math.ceil(math.log2(n + 1))))
    pts = np.arange(1, n + 1, dtype=np.int64)
    bits = ((pts[:, None] >> np.arange(m)) & 1).astype(np.int64)  # (n, m) coordinates over F_2
    rows = np.arange(1, 2**m, dtype=np.int64)
    rbits = ((rows[:, None] >> np.arange(m)) & 1).astype(np.int64)
    groups = [((rbits @ bits.T) % 2 == 0)]  # Hadamard response: {x : <r, x> = 0}, r ≠ 0
    j = int(round(math.log2(math.exp(epsilon) + 1.0)))
    classes: list[np.ndarray] = []
    if 2 <= j < m:
        for _ in range(max(1, budget // 2**j)):
            A = rng.integers(0, 2, size=(j, m))
            if np.linalg.matrix_rank(A) < j:  # rank over the reals ≥ rank over F_2 is not enough: retry cheaply
                continue
            code = ((bits @ A.T) % 2) @ (1 << np.arange(j))  # the coset index of every symbol
            cls = code[None, :] == np.arange(2**j)[:, None]
            cls = cls[cls.any(axis=1)]
            if cls.shape[0] > 1:
                classes.append(cls)
        if classes:
            groups.append(np.vstack(classes))  # a union of partitions is balanced: one design
    return [g for g in groups if g.any(axis=1).all() and not g.all(axis=1).any()]


