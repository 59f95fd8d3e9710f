"""LDP baselines: k-ary randomized response, the binary mechanism, the optimal ε-LDP mechanism, and the
LDP frequency oracles (GRR, OUE, OLH, subset selection) with their estimators.

Implements: core paper Remark 1 / Remark 3 (ε-PML for every distribution = ε-LDP; Warner's mechanism),
Kairouz, Oh & Viswanath 2016 ("Extremal mechanisms for local differential privacy": the optimal ε-LDP
mechanism for a sub-convex utility is an LP over the staircase patterns {1, e^ε}^N, which are exactly the
extreme rays of the simplex's column cone, :func:`pml_design.design.rays.enumerate_rays`), and — re-exported
from :mod:`pml_design.mechanisms.frequency_oracles` — the frequency oracles of Wang et al. (USENIX Security
2017) and k-subset selection (Wang et al. 2016; Ye & Barg 2018) with :func:`estimation_mse`, the
per-report MSE of a channel's MLE (trace of the inverse Fisher information on the simplex).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import math
from dataclasses import field

import numpy as np

from .._validation import check_epsilon, check_positive_int, check_probability_vector
from ..uncertainty import Simplex, as_uncertainty_set
from .closed_form import randomized_response, randomized_response_for_pml
from .frequency_oracles import (
    FrequencyOracle,
    GeneralizedRandomizedResponse,
    HadamardResponse,
    OptimizedLocalHashing,
    OptimizedUnaryEncoding,
    SubsetSelection,
    estimation_mse,
    grr,
    hadamard_response,
    ldp_optimum,
    olh,
    oue,
    subset_selection,
)
from .mechanism import Mechanism

if TYPE_CHECKING:  # pragma: no cover
    from ..design.result import DesignResult

__all__ = [
    "FrequencyOracle",
    "GeneralizedRandomizedResponse",
    "HadamardResponse",
    "LdpComparison",
    "OptimizedLocalHashing",
    "OptimizedUnaryEncoding",
    "SubsetSelection",
    "binary_ldp",
    "compare_with_ldp",
    "estimation_mse",
    "grr",
    "hadamard_response",
    "olh",
    "optimal_ldp",
    "oue",
    "subset_selection",
]


def binary_ldp(epsilon: float) -> Mechanism:
    """The binary ε-LDP mechanism (Warner's randomized response; core paper Remark 3).

    Parameters
    ----------
    epsilon : float
        The LDP level ε.

    Returns
    -------
    Mechanism
        :func:`randomized_response` on 2 symbols, named ``"binary-LDP"``.
    """
    return randomized_response(2, epsilon).with_name("binary-LDP")


def optimal_ldp(
    prior: object, epsilon: float, *, utility: object = "mutual_information", method: str = "auto",
    solver_options: dict | None = None,
) -> "DesignResult":
    """The utility-optimal ε-LDP mechanism (the designer with the whole simplex as the uncertainty set).

    Implements: core paper Remark 1 with [15, Theorem 6] / Kairouz et al. 2016's staircase LP.

    Parameters
    ----------
    prior : array_like
        The distribution the utility is evaluated at.
    epsilon : float
        ε > 0.
    utility : str or Utility, default "mutual_information"
    method : str, default "auto"
    solver_options : dict, optional
        Passed to :func:`~pml_design.design.design`, e.g. ``{"time_limit": 10}`` (the frequency-estimation
        design runs column generation until its time limit, 60 s by default).

    Returns
    -------
    DesignResult
        Its ``relative_gap`` says how far from proven optimal it is.
    """
    from ..design import design

    p = check_probability_vector(prior, "prior")
    return design(Simplex(p.shape[0]), epsilon, utility=utility, prior=p, method=method,
                  solver_options=solver_options)



#: Keys of :attr:`LdpComparison.estimation_mse`, with their table labels.
_MSE_LABELS: dict[str, str] = {
    "pml": "PML design (MLE)",
    "optimal_ldp": "optimal ε-LDP (MLE) for the utility",
    "rr_pml": "RR at the PML budget (MLE)",
    "grr": "GRR = k-ary RR",
    "oue": "OUE",
    "olh": "OLH",
    "subset_selection": "subset selection",
    "hadamard_response": "Hadamard response",
    "ldp_optimum": "best standard LDP oracle",
}
#: Said under the estimation rows: why the two LDP rows differ (docs/ldp.md §4; a review found them unexplained).
_MSE_NOTE: tuple[str, ...] = (
    "  (optimal ε-LDP: the ε-LDP channel optimal for {utility}, its error read by the MLE;",
    "   best standard LDP oracle: the least error of the oracles above, subset selection at its best k, with their",
    "   unbiased estimators)",
)


@dataclass(frozen=True)
class LdpComparison:
    """Utility and estimation accuracy of a PML design against LDP baselines at the same ε and prior.

    ``print(comparison)`` shows :meth:`to_table`.

    Attributes
    ----------
    epsilon : float
    pml : float
        Utility of the PML design.
    optimal_ldp : float
        Utility of the optimal ε-LDP mechanism.
    randomized_response : float
        Utility of k-ary randomized response at ε (ε-LDP); ``nan`` for a linear utility whose gain has a
        number of outputs other than N.
    rr_pml : float
        Utility of randomized response calibrated to the PML budget over the same set (``nan`` as above).
    utility_name : str
        The utility all four values are measured with.
    estimation_mse : dict[str, float]
        ``n · E‖P̂ − P‖²`` per report under the design's prior (records i.i.d. from it), or ``E‖P̂ − P‖²`` for
        ``n_reports`` reports: for the channels ``"pml"`` (the design), ``"optimal_ldp"`` and ``"rr_pml"`` the
        MLE's asymptotic value (:func:`~pml_design.mechanisms.frequency_oracles.estimation_mse`; ``inf`` when
        the channel cannot identify every category); for the ε-LDP frequency oracles ``"grr"``, ``"oue"``,
        ``"olh"``, ``"subset_selection"`` and ``"hadamard_response"`` the exact value of their standard unbiased
        estimator (:meth:`~pml_design.mechanisms.frequency_oracles.FrequencyOracle.mse`, ``inputs="iid"``), and
        ``"ldp_optimum"``: the smallest of these with subset selection at its best k over all
        ``k ∈ [1, N − 1]`` (:func:`~pml_design.mechanisms.frequency_oracles.ldp_optimum`).
    n_reports : int or None
        The number of reports ``estimation_mse`` is for (None: per report).
    optimal_ldp_gap : float
        The proven relative gap of the optimal ε-LDP design (0 when proven optimal).
    sense : {"max", "min"}
        Whether the utility is maximised (``"max"``: mutual information, accuracy, ...) or is an error that is
        minimised (``"min"``: ``frequency_estimation``); says which way :attr:`gain_over_ldp` reads.
    """

    epsilon: float
    pml: float
    optimal_ldp: float
    randomized_response: float
    rr_pml: float
    utility_name: str = "mutual_information"
    estimation_mse: dict[str, float] = field(default_factory=dict, hash=False)
    n_reports: int | None = None
    #: ``relative_gap`` of the optimal ε-LDP design (0 when proven optimal; ``inf`` when no bound was proven):
    #: its row is then the best ε-LDP mechanism *found*, within this fraction of the optimum.
    optimal_ldp_gap: float = 0.0
    #: "max" for a utility, "min" for an error (frequency_estimation): which way :attr:`gain_over_ldp` reads.
    sense: str = "max"

    @property
    def gain_over_ldp(self) -> float:
        """``pml / optimal_ldp`` (``inf`` if the LDP utility is 0 and the PML one is not; 1 when both are 0, e.g. at
        ε = 0, where both designs are constant: a review found "gain infx" there).

        For a utility (:attr:`sense` ``"max"``) above 1 means the PML design is better; for an error
        (``"min"``, e.g. ``frequency_estimation``) it is the PML error over the optimal LDP error, and *below* 1
        means the PML design is better (the table then prints it as "PML error / optimal LDP error").
        """
        if self.optimal_ldp > 0:
            return float(self.pml / self.optimal_ldp)
        return 1.0 if self.pml <= 0 else float("inf")

    def to_table(self) -> str:
        """A small plain-text table of the comparison."""

        def num(v: float, digits: int = 6) -> str:
            return f"{v:.{digits}g}" if np.isfinite(v) else str(v)

        w = 36
        error = self.sense == "min"  # an error: pml / optimal_ldp below 1 is better (it read "gain over ... 0.23x")
        ratio_row = (f"  {'PML error / optimal LDP error':<{w}}{num(self.gain_over_ldp, 4):>14}  (lower is better)"
                     if error else f"  {'gain over optimal LDP':<{w}}{num(self.gain_over_ldp, 4) + 'x':>14}")
        lines = [
            f"LdpComparison at ε = {self.epsilon:.6g} (utility: {self.utility_name})",
            f"  {'error (lower is better)' if error else 'utility':<{w}}{'value':>14}",
            f"  {'PML design':<{w}}{num(self.pml):>14}",
            f"  {self._ldp_label('optimal ε-LDP'):<{w}}{num(self.optimal_ldp):>14}",
            f"  {'randomized response (ε-LDP)':<{w}}{num(self.randomized_response):>14}",
            f"  {'RR at the PML budget':<{w}}{num(self.rr_pml):>14}",
            ratio_row,
        ]
        if self.estimation_mse:
            what = "per report" if self.n_reports is None else f"for {self.n_reports} reports"
            lines.append(f"  {'estimation MSE ' + what:<{w}}{'value':>14}{'÷ design':>12}")
            ref = self.estimation_mse.get("pml", math.nan)
            for key, val in self.estimation_mse.items():
                ratio = num(val / ref, 4) + "x" if np.isfinite(ref) and ref > 0 else "-"
                label = _MSE_LABELS.get(key, key)
                if key == "optimal_ldp":
                    label = self._ldp_label(label)
                lines.append(f"  {label:<{w}}{num(val):>14}{ratio:>12}")
            if "optimal_ldp" in self.estimation_mse and "ldp_optimum" in self.estimation_mse:
                lines += [ln.format(utility=self.utility_name) for ln in _MSE_NOTE]
        return "\n".join(lines)

    def _ldp_label(self, label: str) -> str:
        """The optimal ε-LDP row's label, with its proven gap when it is not proven optimal (above 1 %)."""
        g = self.optimal_ldp_gap
        if not g > 0.01:
            return label
        # not proven optimal: named as what it is (the CLI's "best LDP design found"; a new user took it for the optimum)
        return (label.replace("optimal ε-LDP", "best ε-LDP found")
                + (" [no bound]" if not math.isfinite(g) else f" [within {100 * g:.3g}% of the optimum]"))

    def __str__(self) -> str:
        return self.to_table()


def compare_with_ldp(result: object, *, utility: object | None = None, n: int | None = None,
                     solver_options: dict | None = None) -> LdpComparison:
    """Compare a :class:`~pml_design.design.DesignResult` with the LDP baselines at the same ε and prior.

    Utility view: the design's utility next to the optimal ε-LDP mechanism (:func:`optimal_ldp`), k-ary
    randomized response, and randomized response calibrated to the design's PML budget. Estimation view
    (:attr:`LdpComparison.estimation_mse`): the MSE of estimating the distribution from the design's reports
    (its MLE, :func:`~pml_design.mechanisms.frequency_oracles.estimation_mse`) next to the same for the
    optimal ε-LDP mechanism and the ε-LDP frequency oracles GRR, OUE, OLH, subset selection and Hadamard response
    (Wang et al. 2017; Ye & Barg 2018; Acharya, Sun & Zhang 2019) with their standard estimators, and the LDP
    optimum (the best of them, subset selection at its best k).

    How the ratio reads: :attr:`LdpComparison.gain_over_ldp` is ``pml / optimal_ldp``. For a utility that is
    maximised (mutual information, accuracy) above 1 means the PML design is better; for an error that is
    minimised (``frequency_estimation``, :attr:`LdpComparison.sense` ``"min"``) it is the PML error over the optimal
    LDP error, and below 1 means the PML design is better (``to_table`` prints it so).

    Implements: the PML-vs-LDP comparison of the core paper (Sections I, V–VI) for discrete mechanisms.

    Parameters
    ----------
    result : DesignResult
        Any design (sub-convex, linear or concave utility; exact or scalable method).
    utility : str, Utility or array_like, optional
        The utility to compare with; default: the design's own. A DesignResult stores only its utility's
        *name*, so for a :class:`~pml_design.design.LinearUtility` / ``ConcaveUtility`` / custom design pass the
        utility object here; without it the comparison falls back to mutual information (with a
        ``UserWarning``). A linear utility is optimised over the simplex with its own M outputs.
    n : int, optional
        Number of reports for the estimation view (default: per report, ``n · E‖P̂ − P‖²``).
    solver_options : dict, optional
        For the optimal ε-LDP design (:func:`optimal_ldp`), e.g. ``{"time_limit": 10}``: for frequency estimation
        it is a column generation that runs until its time limit (by default the design's own,
        ``result.info["time_limit"]``, else 60 s). Its proven gap is :attr:`LdpComparison.optimal_ldp_gap`.

    Returns
    -------
    LdpComparison

    Raises
    ------
    TypeError
        ``result`` is not a DesignResult.
    ValueError
        ``n`` < 1, or a linear ``utility`` whose gain does not have the design's shape.
    """
    import warnings

    from ..design.result import DesignResult
    from ..design.utilities import LinearUtility, as_utility

    if not isinstance(result, DesignResult):
        hint = ""
        if isinstance(getattr(result, "result", None), DesignResult):
            hint = " (this object holds one: pass its .result)"
        raise TypeError(
            f"result must be a DesignResult (from pml_design.design), got {type(result).__name__}{hint}"
        )
    n_reports = None if n is None else check_positive_int(n, "n")
    eps = check_epsilon(result.epsilon)
    prior = check_probability_vector(result.prior, "result.prior")
    size = prior.shape[0]
    W = np.asarray(result.matrix, dtype=float)
    if utility is not None:
        util = as_utility(utility)
    else:
        try:
            util = as_utility(result.utility_name)
        except ValueError:
            warnings.warn(
                f"compare_with_ldp: the design's utility {result.utility_name!r} cannot be rebuilt from a "
                "DesignResult (only its name is stored); comparing under mutual information. Pass utility=... "
                "to compare under the design's own utility.",
                UserWarning,
                stacklevel=2,
            )
            util = as_utility("mutual_information")
    linear = isinstance(util, LinearUtility)
    if linear and util.gain.shape != W.shape:  # type: ignore[union-attr]
        raise ValueError(
            f"utility: the gain has shape {util.gain.shape} but the design's matrix has shape {W.shape}"  # type: ignore[union-attr]
        )

    def value(matrix: np.ndarray) -> float:
        if linear and util.gain.shape != matrix.shape:  # type: ignore[union-attr]
            return math.nan  # the gain does not define a value for this output alphabet
        return float(util.value(matrix, prior))

    own = (result.info or {}).get("time_limit")
    if solver_options is None and isinstance(own, (int, float)) and math.isfinite(own) and own > 0:
        solver_options = {"time_limit": float(own)}  # as long as the design took (a frequency-estimation design)
    with warnings.catch_warnings(record=True) as caught:  # said again below, naming the comparison's own design
        warnings.simplefilter("always")
        ldp = optimal_ldp(prior, eps, utility=util, solver_options=solver_options)
    for w in caught:
        warnings.warn(f"compare_with_ldp, the optimal epsilon-LDP row: {w.message}", w.category, stacklevel=2)
    rr = randomized_response(size, eps)
    rr_pml = randomized_response_for_pml(as_uncertainty_set(result.uncertainty), eps)
    m = 1 if n_reports is None else n_reports
    mse = {
        "pml": estimation_mse(W, prior) / m,
        "optimal_ldp": estimation_mse(ldp.matrix, prior) / m,
        "rr_pml": estimation_mse(rr_pml.matrix, prior) / m,
    }
    for key, oracle in (
        ("grr", grr(size, eps)),
        ("oue", oue(size, eps)),
        ("olh", olh(size, eps)),
        ("subset_selection", subset_selection(size, eps)),
        ("hadamard_response", hadamard_response(size, eps)),
    ):
        mse[key] = oracle.mse(prior, m, inputs="iid")
    mse["ldp_optimum"] = ldp_optimum(size, eps, prior).mse / m  # subset selection at its best k over all k, …
    return LdpComparison(
        epsilon=eps,
        pml=value(W),
        optimal_ldp=float(ldp.utility),
        randomized_response=value(rr.matrix),
        rr_pml=value(rr_pml.matrix),
        utility_name=str(util.name),
        estimation_mse=mse,
        n_reports=n_reports,
        optimal_ldp_gap=float(ldp.relative_gap) if not ldp.optimal else 0.0,
        sense="min" if getattr(util, "kind", None) == "estimation" else "max",
    )
