"""Pricing of the estimation design's column generation: exact (complete ray list) or a local search.

Implements: docs/design.md §7 "Algorithm". The reduced cost of a normalised ray r is ``d = −rᵀ M r + ν·r``
(``M = F⁻²`` for A-, ``F⁻¹`` for D-optimality; ν the master's multipliers); rays with ``d < 0`` improve the
master. With the complete list of extreme rays pricing is exact; otherwise a greedy local search over two-level
subset directions (:func:`~.seeds.subset_directions`) proposes columns, and the bound comes from
:func:`~.bound.max_ray_value`.
"""

from __future__ import annotations

import math

import numpy as np

from .master import gradients
from .seeds import subset_directions

__all__ = ["local_pricing", "reduced_costs"]


def reduced_costs(R: np.ndarray, M: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``d_k = −r_kᵀ M r_k + ν·r_k`` for every column of R."""
    return gradients(R, M) + nu @ R


def local_pricing(uset, epsilon: float, prior: np.ndarray, M: np.ndarray, nu: np.ndarray,
                  gen: np.random.Generator, *, density: float | None = None, restarts: int = 6,
                  sweeps: int = 4, per_sweep: int = 4) -> np.ndarray:
    """Heuristic pricing over two-level subset directions: greedy single flips from several starts.

    Starts: the symbols with the largest ``M_xx − ν_x`` and random masks of the given ``density`` (default
    ``1/(e^ε + 1)``, subset selection's k/N) alternating with 1/2 (Hadamard response's half-sets). Returns the
    normalised candidate columns (``prior·r = 1``): each local optimum and the ``per_sweep`` best improving
    neighbours met on the way.
    """
    n = prior.shape[0]
    rho = 1.0 / (math.exp(min(epsilon, 700.0)) + 1.0) if density is None else float(density)

    def score(masks):
        C = subset_directions(uset, epsilon, masks)
        C = C / (prior @ C)
        return reduced_costs(C, M, nu), C

    first = np.zeros(n, dtype=bool)
    first[np.argsort(-np.diag(M) + nu)[: max(1, int(round(n * rho)))]] = True
    starts = [first] + [gen.random(n) < (rho if i % 2 else 0.5) for i in range(restarts - 1)]
    out = []
    for m in starts:
        if not m.any():
            m[gen.integers(n)] = True
        if m.all():
            m[gen.integers(n)] = False
        cur = float(score(m[None, :])[0][0])
        for _ in range(sweeps):
            flips = np.tile(m, (n, 1))
            flips[np.arange(n), np.arange(n)] ^= True
            ok = flips.any(axis=1) & ~flips.all(axis=1)
            vals, _ = score(flips[ok])
            order = np.argsort(vals)[:per_sweep]
            out.extend(flips[ok][order[vals[order] < 0]])  # every good neighbour is a candidate column
            j = int(order[0])
            if vals[j] < cur - 1e-15:
                cur = float(vals[j])
                m = flips[ok][j]
            else:
                break
        out.append(m)
    return score(np.unique(np.array(out), axis=0))[1]
