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

__all__ = ["block_masks", "ray_seeds", "subset_directions"]


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
    """Rank-one seed columns: constant, singletons, and up to ``budget`` blocks of the LDP channel, boosted to 𝒫."""
    n = uset.size
    masks = block_masks(ldp_matrix)
    if masks.shape[0] > budget:
        masks = masks[gen.choice(masks.shape[0], size=budget, replace=False)]
    masks = np.vstack([np.eye(n, dtype=bool), masks])
    return np.hstack([np.ones((n, 1)), subset_directions(uset, epsilon, masks)])
