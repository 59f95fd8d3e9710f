"""A valid bound for the pricing of the estimation design (owned by the bound work of issue 21, item 2).

Implements: the quantity that turns the Frank–Wolfe / Kiefer–Wolfowitz inequality of docs/design.md §7 into a
valid lower bound at every N: ``f* ≥ f(x̄) − ∇f·x̄ − ν·1 − max_r (rᵀ M r − ν·r)`` over the normalised extreme
rays r of the cone (``prior·r = 1``), with ``M = F⁻²`` (A-optimal) or ``F⁻¹`` (D-optimal).
"""

from __future__ import annotations

__all__ = ["max_ray_value"]


def max_ray_value(uset, epsilon, prior, M, nu, *, deadline=None) -> float:
    """A valid upper bound on max over normalised extreme rays r of the cone (prior·r = 1) of rᵀ M r − ν·r
    (M symmetric PSD). Placeholder: +inf (no bound)."""
    return float("inf")
