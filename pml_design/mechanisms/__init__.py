"""Usable mechanisms: the :class:`Mechanism` object, closed forms, and LDP baselines."""

from .closed_form import (
    binary_optimal,
    first_region_mechanism,
    k_singular,
    randomized_response,
    randomized_response_for_pml,
    theorem5_binary,
    uniform_optimal,
    uniform_optimal_mutual_information,
)
from .ldp import LdpComparison, binary_ldp, compare_with_ldp, optimal_ldp
from .mechanism import FrequencyEstimate, Mechanism, project_to_simplex

__all__ = [
    "FrequencyEstimate",
    "LdpComparison",
    "Mechanism",
    "binary_ldp",
    "binary_optimal",
    "compare_with_ldp",
    "first_region_mechanism",
    "k_singular",
    "optimal_ldp",
    "project_to_simplex",
    "randomized_response",
    "randomized_response_for_pml",
    "theorem5_binary",
    "uniform_optimal",
    "uniform_optimal_mutual_information",
]
