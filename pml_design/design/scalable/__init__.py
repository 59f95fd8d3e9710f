"""Scalable design by column generation on the extreme-ray LP, with exact (or bounded) pricing.

Implements: the extreme-ray LP of [15, Theorem 6] (core paper Section V) solved by column generation
(Dantzig–Wolfe): a restricted master LP over generated rays (HiGHS, warm-started) and a pricing problem
``max_{r ∈ K1} v(r) − λ·r`` over the normalised column cone, whose structure (derived in ``docs/design.md``)
is the union over ``S`` of boxes ``{S ≤ c ≤ T(S), ν·c = 1}`` with ``T(S) = a + bS``:

* fixed prior P (ν = P):      ``S = 0``, ``T = e^ε``                       ([15, Lemma 1])
* ℓ1 ball, β < 2 min P̂ (ν = P̂): ``T(S) = e^{ε'}(1 + (β/2) S)``            (Proposition 2, eq. (13))
* simplex (ν = prior):         ``T(S) = e^ε S``                             (ε-LDP, Remark 1)

and, for an ℓ1 ball outside Proposition 2 (β ≥ 2 min P̂), the nested-pair rays of the ball's cone
(:mod:`~pml_design.design.scalable.ball_pricing`).

Optimality certificate
----------------------
Every mechanism decomposes into normalised rays with weights θ summing to ``ν·1 = 1``; hence for master
duals λ, ``U* ≤ 1ᵀλ + max_r (v(r) − λ·r)`` (the Lagrangian/Lasdon bound). The pricing returns an *upper
bound* on that maximum, so every reported ``upper_bound`` is valid; optimality is proven when it meets the
master value.

Modules
-------
* :mod:`.cone`: the normalised column cone ``K1`` (:class:`SliceStructure`) and its structured vertices;
* :mod:`.pricing`: linear pricing (fractional knapsack, golden section; exact to ~1e-12), the prefix heuristic
  for separable utilities, local search for any other μ (no bound);
* :mod:`.branch_bound`: exact separable pricing (mutual information, χ², TV): spatial branch and bound with
  chord relaxations (Falk–Soland); node limit → an upper bound from the open nodes;
* :mod:`.master`: the restricted master LP and :func:`column_generation` inside Proposition 2;
* :mod:`.ball`: :func:`ball_column_generation` outside Proposition 2 and its certified seeds;
* :mod:`.api`: :func:`design_scalable` (``design(..., method="scalable")``), anytime and certified.

Time limit, progress bar and gap warning follow :mod:`pml_design.design.anytime`.
"""

from __future__ import annotations

from ..anytime import DEFAULT_TIME_LIMIT, PROOF_RTOL, WARN_GAP, _check_time_limit  # noqa: F401
from .api import design_scalable
from .ball import ball_column_generation
from .branch_bound import WIDTH_MIN, separable_pricing  # noqa: F401
from .cone import SliceStructure, slice_structure
from .master import MAX_NEW_COLUMNS, column_generation  # noqa: F401
from .pricing import linear_pricing, prefix_candidates, prefix_pool  # noqa: F401

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "SliceStructure",
    "ball_column_generation",
    "column_generation",
    "design_scalable",
    "slice_structure",
]
