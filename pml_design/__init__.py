"""pml_design: privacy mechanism design with context-aware guarantees.

Flat public API (re-exports only). Module map (core paper = Grosse et al., "Privacy Mechanism Design
based on Empirical Distributions"):

* :mod:`pml_design.leakage` — PML per outcome, ε_min, (ε, δ) tail, privacy regions (§II-A)
* :mod:`pml_design.uncertainty` — L1Ball / FiniteSet / Simplex, leakage capacity and sensitivity (§IV)
* :mod:`pml_design.bounds` — Theorems 3–4, Corollaries 2–3, eq. (8) (§IV)
* :mod:`pml_design.estimation` — eq. (3), Theorem 2, φ, κ, eq. (7) (§II-B, §III)
"""

from __future__ import annotations

from .bounds import (
    capacity_bound,
    corollary2_bound,
    delta_min,
    epsilon_prime,
    lipschitz_constant,
    sensitivity_bound,
)
from .estimation import (
    counts_distribution,
    empirical_distribution,
    kappa,
    l1_deviation_delta,
    l1_radius,
    phi,
    samples_needed,
)
from .leakage import (
    PrivacyRegions,
    epsilon_max,
    epsilon_min,
    leakage,
    leakage_tail,
    output_distribution,
    privacy_region,
    privacy_regions,
)
from .uncertainty import (
    FiniteSet,
    L1Ball,
    Simplex,
    UncertaintySet,
    leakage_capacity,
    leakage_sensitivity,
    max_divergence_shift,
    worst_case_distribution,
)

__version__ = "0.1.0"

__all__ = [
    "FiniteSet",
    "L1Ball",
    "PrivacyRegions",
    "Simplex",
    "UncertaintySet",
    "capacity_bound",
    "corollary2_bound",
    "counts_distribution",
    "delta_min",
    "empirical_distribution",
    "epsilon_max",
    "epsilon_min",
    "epsilon_prime",
    "kappa",
    "l1_deviation_delta",
    "l1_radius",
    "leakage",
    "leakage_capacity",
    "leakage_sensitivity",
    "leakage_tail",
    "lipschitz_constant",
    "max_divergence_shift",
    "output_distribution",
    "phi",
    "privacy_region",
    "privacy_regions",
    "samples_needed",
    "sensitivity_bound",
    "worst_case_distribution",
]
