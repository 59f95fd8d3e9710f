"""pml_design: privacy mechanism design with context-aware guarantees.

Flat public API (re-exports only). Module map — *core paper* = Grosse, Saeidian, Oechtering, Skoglund,
"Privacy Mechanism Design based on Empirical Distributions"; *histogram paper* = "PML guarantees of Laplace
histograms"; *flexible paper* = "Flexible accuracy for differential privacy":

==============================  =====================================================================
module                          implements
==============================  =====================================================================
``leakage``                     core §II-A: Theorem 1, Definitions 2–4 (ε_min, (ε,δ) tail, regions)
``estimation``                  core §II-B, §III: eq. (3), φ, κ, Theorem 2, eq. (7) (corrected)
``uncertainty``                 core §IV: L1Ball / FiniteSet / Simplex, Definitions 5–6 (exact)
``bounds``                      core §IV: Theorems 3–4, Corollaries 2–3, eq. (8)
``design``                      core §V: Proposition 2 polytope, eq. (9), [15, Thm 6], certification
``design.scalable``             column generation for large alphabets (bounded/proven optimal)
``mechanisms``                  Mechanism object; Theorem 5, RR, extremal mechanisms; LDP baselines and
                                frequency oracles (GRR, OUE, OLH, subset selection; estimation MSE)
``pipeline``                    core Fig. 1 / §IV-D: samples → (ε, δ)-PML design, and back
``deploy``                      mechanism files: save, load (hash-checked, re-certified)
``dataframe``                   privatize a column of a pandas / Dask DataFrame
``streaming``                   streamed CSV / Parquet privatize and estimate (the CLI's engine)
``additive``                    core §VI: binary Laplace (Prop. 3, eq. (16)) and Gaussian (eq. (17))
``datasets``                    the bundled UCI Adult data
``sweep``                       joblib sweeps (local, Dask, Ray) with per-task SeedSequence seeds
``cli``                         the ``pml-design`` command
``histogram*``                  histogram paper: eq. (1)–(2), calibration, release, exact leakage
``flexible``                    flexible paper: STLap, BucketHist, distances, accounting, baselines
==============================  =====================================================================
"""

from __future__ import annotations

from . import flexible
from .additive import (
    binary_decision,
    empirical_mutual_information,
    gaussian_delta1,
    gaussian_mechanism,
    gaussian_pml_guarantee,
    laplace_ldp_scale,
    laplace_mechanism,
    laplace_pml_epsilon,
    laplace_pml_epsilon_estimated,
    laplace_scale_for,
    pldp_gaussian_sigma,
)
from .bounds import (
    capacity_bound,
    corollary2_bound,
    delta_min,
    epsilon_prime,
    lipschitz_constant,
    sensitivity_bound,
)
from .dataframe import privatize_dataframe
from .datasets import AdultData, load_adult
from .deploy import MechanismFileError, load_mechanism, save_mechanism
from .design import (
    ChiSquareInformation,
    ConcaveUtility,
    DesignResult,
    FrequencyEstimation,
    LinearProgram,
    LinearUtility,
    MapAccuracy,
    MutualInformation,
    PMLDesignWarning,
    SolverFailedError,
    SubConvexUtility,
    TotalVariationInformation,
    build_polytope,
    certify,
    design,
    linear_design_lp,
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
from .histogram import (
    HistogramGuarantee,
    alpha_from_estimate,
    histogram_dp_epsilon,
    histogram_dp_scale_for,
    histogram_guarantee_from_estimate,
    histogram_guarantee_from_samples,
    histogram_pml_epsilon,
    histogram_pml_epsilon_composition,
    histogram_pml_epsilon_relaxed,
    histogram_scale_for,
)
from .histogram_release import histogram_counts, laplace_histogram, release_histogram, total_variation_distance
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
from .mechanisms import (
    FrequencyOracle,
    FrequencyEstimate,
    LdpComparison,
    Mechanism,
    binary_ldp,
    binary_optimal,
    compare_with_ldp,
    estimation_mse,
    first_region_mechanism,
    grr,
    k_singular,
    olh,
    optimal_ldp,
    oue,
    randomized_response,
    randomized_response_for_pml,
    subset_selection,
    theorem5_binary,
    uniform_optimal,
)
from .pipeline import EstimatedDesign, PmlStatement, delta_for_epsilon, design_from_samples, guarantee_for_mechanism
from .sweep import SweepResult, grid, sweep, task_seed
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
    "AdultData",
    "ChiSquareInformation",
    "ConcaveUtility",
    "DesignResult",
    "FrequencyEstimation",
    "EstimatedDesign",
    "FiniteSet",
    "FrequencyOracle",
    "FrequencyEstimate",
    "HistogramGuarantee",
    "L1Ball",
    "LdpComparison",
    "LinearProgram",
    "LinearUtility",
    "MapAccuracy",
    "Mechanism",
    "MechanismFileError",
    "MutualInformation",
    "PmlStatement",
    "PrivacyRegions",
    "Simplex",
    "PMLDesignWarning",
    "SolverFailedError",
    "SubConvexUtility",
    "SweepResult",
    "TotalVariationInformation",
    "UncertaintySet",
    "alpha_from_estimate",
    "binary_decision",
    "binary_ldp",
    "binary_optimal",
    "build_polytope",
    "capacity_bound",
    "certify",
    "compare_with_ldp",
    "corollary2_bound",
    "counts_distribution",
    "delta_for_epsilon",
    "delta_min",
    "design",
    "design_from_samples",
    "empirical_distribution",
    "empirical_mutual_information",
    "epsilon_max",
    "epsilon_min",
    "epsilon_prime",
    "estimation_mse",
    "first_region_mechanism",
    "flexible",
    "gaussian_delta1",
    "grid",
    "grr",
    "gaussian_mechanism",
    "gaussian_pml_guarantee",
    "guarantee_for_mechanism",
    "histogram_counts",
    "histogram_dp_epsilon",
    "histogram_dp_scale_for",
    "histogram_guarantee_from_estimate",
    "histogram_guarantee_from_samples",
    "histogram_pml_epsilon",
    "histogram_pml_epsilon_composition",
    "histogram_pml_epsilon_relaxed",
    "histogram_scale_for",
    "k_singular",
    "kappa",
    "l1_deviation_delta",
    "l1_radius",
    "laplace_histogram",
    "laplace_ldp_scale",
    "laplace_mechanism",
    "laplace_pml_epsilon",
    "laplace_pml_epsilon_estimated",
    "laplace_scale_for",
    "leakage",
    "leakage_capacity",
    "leakage_sensitivity",
    "leakage_tail",
    "linear_design_lp",
    "lipschitz_constant",
    "load_adult",
    "load_mechanism",
    "max_divergence_shift",
    "olh",
    "optimal_ldp",
    "oue",
    "output_distribution",
    "phi",
    "pldp_gaussian_sigma",
    "privacy_region",
    "privacy_regions",
    "privatize_dataframe",
    "randomized_response",
    "randomized_response_for_pml",
    "release_histogram",
    "samples_needed",
    "save_mechanism",
    "sensitivity_bound",
    "subset_selection",
    "sweep",
    "task_seed",
    "theorem5_binary",
    "total_variation_distance",
    "uniform_optimal",
    "worst_case_distribution",
]
