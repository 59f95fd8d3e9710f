"""LDP baselines: k-ary randomized response, the binary mechanism, and the optimal ε-LDP mechanism.

Implements: core paper Remark 1 / Remark 3 (ε-PML for every distribution = ε-LDP; Warner's mechanism),
Kairouz, Oh & Viswanath 2016 ("Extremal mechanisms for local differential privacy": the optimal ε-LDP
mechanism for a sub-convex utility is an LP over the staircase patterns {1, e^ε}^N, which are exactly the
extreme rays of the simplex's column cone, :func:`pml_design.design.rays.enumerate_rays`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._validation import check_epsilon, check_probability_vector
from ..uncertainty import Simplex, as_uncertainty_set
from .closed_form import randomized_response, randomized_response_for_pml
from .mechanism import Mechanism

if TYPE_CHECKING:  # pragma: no cover
    from ..design.result import DesignResult

__all__ = ["LdpComparison", "binary_ldp", "compare_with_ldp", "optimal_ldp"]


def binary_ldp(epsilon: float) -> Mechanism:
    """The binary ε-LDP mechanism (Warner's randomized response; core paper Remark 3)."""
    return randomized_response(2, epsilon).with_name("binary-LDP")


def optimal_ldp(
    prior: object, epsilon: float, *, utility: object = "mutual_information", method: str = "auto"
) -> "DesignResult":
    """The utility-optimal ε-LDP mechanism (the designer with the whole simplex as the uncertainty set).

    Implements: core paper Remark 1 with [15, Theorem 6] / Kairouz et al. 2016's staircase LP.

    Returns
    -------
    DesignResult
    """
    from ..design import design

    p = check_probability_vector(prior, "prior")
    return design(Simplex(p.shape[0]), epsilon, utility=utility, prior=p, method=method)


@dataclass(frozen=True)
class LdpComparison:
    """Utility of a PML design against LDP baselines at the same ε (all under the same prior).

    Attributes
    ----------
    epsilon : float
    pml : float
        Utility of the PML design.
    optimal_ldp : float
        Utility of the optimal ε-LDP mechanism.
    randomized_response : float
        Utility of k-ary randomized response at ε (ε-LDP).
    rr_pml : float
        Utility of randomized response calibrated to the PML budget over the same set.
    """

    epsilon: float
    pml: float
    optimal_ldp: float
    randomized_response: float
    rr_pml: float

    @property
    def gain_over_ldp(self) -> float:
        """``pml / optimal_ldp`` (``inf`` if the LDP utility is 0)."""
        return float(self.pml / self.optimal_ldp) if self.optimal_ldp > 0 else float("inf")


def compare_with_ldp(result: object, *, utility: object | None = None) -> LdpComparison:
    """Compare a :class:`~pml_design.design.DesignResult` with the LDP baselines at the same ε.

    Implements: the PML-vs-LDP comparison of the core paper (Sections I, V–VI) for discrete mechanisms.
    """
    from ..design.utilities import as_utility

    eps = check_epsilon(result.epsilon)  # type: ignore[attr-defined]
    prior = result.prior  # type: ignore[attr-defined]
    util = as_utility(utility if utility is not None else result.utility_name)  # type: ignore[attr-defined]
    n = prior.shape[0]
    ldp = optimal_ldp(prior, eps, utility=util)
    rr = randomized_response(n, eps)
    rr_pml = randomized_response_for_pml(as_uncertainty_set(result.uncertainty), eps)  # type: ignore[attr-defined]
    return LdpComparison(
        epsilon=eps,
        pml=float(util.value(np.asarray(result.matrix), prior)),  # type: ignore[attr-defined]
        optimal_ldp=ldp.utility,
        randomized_response=util.value(rr.matrix, prior),
        rr_pml=util.value(rr_pml.matrix, prior),
    )
