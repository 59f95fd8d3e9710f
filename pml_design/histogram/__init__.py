"""PML of Laplace histograms: the histogram paper ("A Tight Context-aware Privacy Bound for Histogram Publication").

==========================  ==========================================================================
module                      implements
==========================  ==========================================================================
:mod:`.bounds`              Theorem 4, eq. (1)–(2), Section IV composition, DP baseline, calibration,
                            α from an estimate and the (ε, δ)-PML statement from samples (extension)
:mod:`.release`             the released histogram ``count + Lap(b)`` (and post-processing), its error
:mod:`.exact`               exact per-record leakage by brute force for small n, k (independent check)
==========================  ==========================================================================

Every public name of the three modules is re-exported here.
"""

from __future__ import annotations

from .bounds import (
    HistogramGuarantee,
    alpha_from_estimate,
    histogram_dp_epsilon,
    histogram_dp_scale_for,
    histogram_guarantee_from_estimate,
    histogram_guarantee_from_samples,
    histogram_noiseless_epsilon,
    histogram_pml_epsilon,
    histogram_pml_epsilon_composition,
    histogram_pml_epsilon_relaxed,
    histogram_scale_for,
)
from .exact import ExactLeakage, histogram_leakage_exact, histogram_max_leakage_exact
from .release import (
    histogram_counts,
    laplace_histogram,
    normalize_histogram,
    release_histogram,
    total_variation_distance,
)

__all__ = [
    "ExactLeakage",
    "HistogramGuarantee",
    "alpha_from_estimate",
    "histogram_counts",
    "histogram_dp_epsilon",
    "histogram_dp_scale_for",
    "histogram_guarantee_from_estimate",
    "histogram_guarantee_from_samples",
    "histogram_leakage_exact",
    "histogram_max_leakage_exact",
    "histogram_noiseless_epsilon",
    "histogram_pml_epsilon",
    "histogram_pml_epsilon_composition",
    "histogram_pml_epsilon_relaxed",
    "histogram_scale_for",
    "laplace_histogram",
    "normalize_histogram",
    "release_histogram",
    "total_variation_distance",
]
