"""Estimation-aware design: the PML mechanism that estimates the input distribution best.

Implements: core paper eq. (9) with the utility replaced by the (negated) asymptotic estimation error of the
input distribution, over ``M(ε, 𝒫)`` of Proposition 2 / Corollary 1 (any ℓ1 radius); the objective is the
A-optimal (or D-optimal) experimental-design criterion of the channel's Fisher information (docs/design.md §7).

Derivation
----------
One report ``Y`` of a mechanism ``W`` has Fisher information ``F(W) = Σ_y w_y w_yᵀ / (P·w_y)`` about ``P``
(columns ``w_y``). Because ``F P = Σ_y w_y = 1``, the Cramér–Rao bound on the simplex is ``(F⁻¹ − P Pᵀ)/n``, and
the MLE attains it asymptotically, so the per-report MSE is ``tr F⁻¹ − ‖P‖²`` (A-optimality); ``log det F⁻¹``
is the D-optimal variant. A column ``w = θ r`` contributes ``θ r rᵀ/(P·r)``: F is linear in the weights of
normalised cone directions (``P·r = 1``), and splitting a column into extreme rays only adds PSD terms, so the
problem is ``min_θ tr((Σ_k θ_k r_k r_kᵀ)⁻¹) s.t. Σ_k θ_k r_k = 1, θ ≥ 0`` over extreme rays.

Modules
-------
* :mod:`.api`: :func:`design_frequency_estimation` (column generation, anytime incumbent, result);
* :mod:`.seeds`: the compact ε-LDP seed channel and rank-one seeds (:func:`subset_directions`);
* :mod:`.master`: the restricted master (barrier Newton over rays and whole seed mechanisms);
* :mod:`.pricing`: exact and local pricing; :mod:`.bound`: the pricing bound at every N;
* :mod:`.coordinate_bound`, :mod:`.moment_bound`: lower bounds from relaxations whose pricing is separable (the
  per-symbol inequality, and one Fisher information with free off-diagonal entries); :mod:`.cap_bound`: the
  coordinate relaxation's dual from one parameter (a bound at every N; :mod:`.parallel_bound` runs it and the moment
  bound on a second CPU);
* :mod:`.reduce`: fewer outputs with the same Fisher information, within a time budget.
"""

from __future__ import annotations

from ...mechanisms.frequency_oracles.fisher import fisher_information
from .api import design_frequency_estimation
from .seeds import subset_directions

__all__ = ["design_frequency_estimation", "fisher_information", "subset_directions"]
