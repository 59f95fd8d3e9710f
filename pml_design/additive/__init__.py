"""Additive-noise mechanisms for a binary attribute under PML with an estimated distribution.

Implements: pml-design-empirical-distributions (the "core paper"), Section VI. The secret is ``X ∈ {-1, +1}``
throughout; priors are written ``p_minus = P(X = -1)``.

==========================  ==========================================================================
module                      implements
==========================  ==========================================================================
:mod:`.common`              eq. (14): the binary ℓ1 radius ``β*(δ)``; shared argument checks
:mod:`.laplace`             §VI-A: per-outcome PML, Proposition 3, eq. (16), the calibrated scale, Remark 4
:mod:`.gaussian`            §VI-B: per-outcome PML, ``E_ε``, eq. (17), ``(ε*, δ*)``; pLDP baseline [34, Thm 8]
:mod:`.release`             §VI: the samplers, the binary decision rule, the empirical MI of §VI-C
:mod:`.adult`               §VI-C1: the Adult utility experiment (Fig. 4 and Fig. 5); not re-exported here
==========================  ==========================================================================
"""

from __future__ import annotations

from .common import binary_l1_radius
from .gaussian import (
    Delta1Sup,
    GaussianPMLGuarantee,
    ViolationSet,
    gaussian_delta1,
    gaussian_delta1_sup,
    gaussian_leakage,
    gaussian_pml_curve,
    gaussian_pml_guarantee,
    gaussian_violation_probability,
    gaussian_violation_set,
    pldp_gaussian_delta,
    pldp_gaussian_sigma,
)
from .laplace import (
    laplace_leakage,
    laplace_ldp_scale,
    laplace_pml_epsilon,
    laplace_pml_epsilon_ball,
    laplace_pml_epsilon_estimated,
    laplace_scale_for,
    laplace_scale_for_radius,
    laplace_worst_p_min,
)
from .release import (
    binary_decision,
    empirical_mutual_information,
    gaussian_mechanism,
    gaussian_noise,
    laplace_mechanism,
    laplace_noise,
)

__all__ = [
    "Delta1Sup",
    "GaussianPMLGuarantee",
    "ViolationSet",
    "binary_decision",
    "binary_l1_radius",
    "empirical_mutual_information",
    "gaussian_delta1",
    "gaussian_delta1_sup",
    "gaussian_leakage",
    "gaussian_mechanism",
    "gaussian_noise",
    "gaussian_pml_curve",
    "gaussian_pml_guarantee",
    "gaussian_violation_probability",
    "gaussian_violation_set",
    "laplace_leakage",
    "laplace_ldp_scale",
    "laplace_mechanism",
    "laplace_noise",
    "laplace_pml_epsilon",
    "laplace_pml_epsilon_ball",
    "laplace_pml_epsilon_estimated",
    "laplace_scale_for",
    "laplace_scale_for_radius",
    "laplace_worst_p_min",
    "pldp_gaussian_delta",
    "pldp_gaussian_sigma",
]
