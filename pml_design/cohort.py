"""Fully local deployment: P̂ from a first cohort's LDP reports, and the PML design for everyone else.

Implements: the core paper's Figure 1 with the estimate taken from ε₁-LDP frequency-oracle reports ([WBLJ17]'s
unbiased estimator, projected onto the simplex) instead of raw samples, and the ℓ1 ball of
:func:`pml_design.priors.ldp_ball_radius` (docs/design.md, "P̂ from a first cohort's LDP reports") that contains
the true distribution with probability ≥ 1 − δ. No one holds raw data: the first cohort's records are protected by
ε₁-LDP, every later record by (ε, δ)-PML. :func:`combined_estimate`: the maximum-likelihood estimate of the
distribution from both cohorts' reports together, with its asymptotic covariance (docs/design.md §11.2).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._validation import check_positive_int, check_positive_real, check_real, fmt
from .estimation import prior_radius
from .mechanisms.fit import ReportFit
from .mechanisms.mechanism import FrequencyEstimate
from .pipeline import EstimatedDesign, _check_target, _design_over_ball

__all__ = ["CombinedEstimate", "combined_estimate", "design_from_report_counts", "design_from_reports"]


@dataclasses.dataclass(frozen=True)
class CombinedEstimate(FrequencyEstimate):
    """:func:`combined_estimate`'s result: a :class:`FrequencyEstimate` with the fit tests behind its warnings.

    Attributes
    ----------
    fit : ReportFit or None
        The likelihood-ratio test of one distribution for both cohorts (``check_fit``): ``statistic`` G, ``df``
        N − 1, ``p_value`` (it warns below ``FIT_LEVEL``) and ``cells``, the distinct reports of both cohorts in the
        likelihood. None where it was not run: ``check_fit=False``, a cohort empty, a mechanism that does not identify
        every frequency.
    second_fit : ReportFit or None
        The second cohort's reports against the mechanism at their own maximum-likelihood estimate
        (:func:`~pml_design.mechanisms.fit.report_fit`, the test of :meth:`Mechanism.estimate`, which warns too);
        None where ``fit`` is.
    """

    fit: ReportFit | None = None
    second_fit: ReportFit | None = None


def _oracle_params(oracle: object, n_reports: int) -> dict:
    """``prior_params`` of :func:`pml_design.estimation.prior_radius` for an oracle and a report count."""
    from .mechanisms.frequency_oracles import (  # noqa: PLC0415
        GeneralizedRandomizedResponse,
        HadamardResponse,
        OptimizedUnaryEncoding,
        SubsetSelection,
    )
    from .priors import HADAMARD_BALL, UNARY_BALL  # noqa: PLC0415

    params: dict = {"oracle": oracle.name, "ldp_epsilon": float(oracle.epsilon), "n_reports": int(n_reports)}  # type: ignore[attr-defined]
    if isinstance(oracle, GeneralizedRandomizedResponse):
        params["oracle"] = "GRR"
    elif isinstance(oracle, SubsetSelection):
        params.update(oracle="SS", k=int(oracle.k))  # type: ignore[arg-type]
    else:  # any other pure protocol: the coordinate-wise bound, or the oracle's own ball (HR, OUE)
        params.update(p_star=float(oracle.p_star), q_star=float(oracle.q_star))  # type: ignore[attr-defined]
        ball = {HadamardResponse: HADAMARD_BALL, OptimizedUnaryEncoding: UNARY_BALL}.get(type(oracle))
        if ball is not None:  # a sharper ball from the oracle's structure (not for a subclass: it may change it)
            params["ball"] = ball
        if params["oracle"] in ("GRR", "SS"):
            params["oracle"] = f"{params['oracle']} (subclass {type(oracle).__name__})"
    return params


def design_from_reports(
    reports: object,
    oracle: object,
    epsilon: float | None = None,
    delta: float | None = None,
    *,
    categories: object = None,
    utility: object = "mutual_information",
    method: str = "auto",
    solver: str | None = None,
    allow_zero: bool = False,
    solver_options: dict | None = None,
) -> EstimatedDesign:
    """A first cohort's ε₁-LDP reports + target (ε, δ) → P̂, its ℓ1 ball, and the (ε, δ)-PML design for the rest.

    Implements: docs/design.md, "P̂ from a first cohort's LDP reports": ``P̂`` is the Euclidean projection onto
    the simplex of the unbiased estimate of [WBLJ17] Theorem 2 (:meth:`FrequencyOracle.estimate`), and the ball
    radius is :func:`pml_design.priors.ldp_ball_radius` (GRR, k-subset selection: a Chernoff bound with the exact
    distribution of one report, union over sign vectors), :func:`pml_design.priors.hadamard_ball_radius` or
    :func:`pml_design.priors.unary_ball_radius` (Hadamard response, OUE: Bernstein per sign vector) or
    :func:`pml_design.priors.ldp_generic_radius` (any other pure protocol: coordinate-wise, looser), so that the
    ball contains the true
    distribution with probability ≥ 1 − δ; then the design of eq. (9) over that ball (core paper, Proposition 2).

    Parameters
    ----------
    reports : array_like
        The first cohort's reports, in ``oracle``'s format (:meth:`FrequencyOracle.privatize`).
    oracle : FrequencyOracle
        The ε₁-LDP oracle that produced them (its ``n`` is the alphabet size N, its ``epsilon`` is ε₁).
    epsilon : float
        Target ε of the PML design for the other users (≤ 700).
    delta : float
        Failure probability of the ball, in (0, 1).
    categories : sequence, optional
        Labels of the N inputs in code order (default: the codes ``0 … N−1``).
    utility, method, solver, solver_options
        As in :func:`pml_design.design_from_samples`.
    allow_zero : bool, default False
        Keep categories whose projected estimate is 0 (common with few reports or small ε₁).

    Returns
    -------
    EstimatedDesign
        With ``prior_source="ldp reports"``, ``m`` = the number of reports and ``prior_params`` holding the
        oracle's name, ε₁, the number of reports (and k for subset selection, p*, q* for other oracles, and for
        Hadamard response and OUE the ``ball`` their radius comes from).

    Raises
    ------
    ValueError
        For reports that do not match the oracle (format, alphabet), too few reports for δ (the radius would be
        ≥ 2), zero estimates without ``allow_zero``, and bad arguments (naming them).
    TypeError
        If ``oracle`` is not a :class:`~pml_design.mechanisms.frequency_oracles.FrequencyOracle`.
    """
    _check_target(epsilon, delta, "design_from_reports")
    oracle = _check_oracle(oracle)
    try:
        counts = oracle.support_counts(reports)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"reports do not match the oracle {oracle.name} (n = {oracle.n}, epsilon = {oracle.epsilon:g}"
                         + (f", k = {oracle.k}" if hasattr(oracle, "k") else "") + f"): {exc}") from None
    return design_from_report_counts(counts, int(np.shape(reports)[0]), oracle, epsilon, delta, categories=categories,
                                     utility=utility, method=method, solver=solver, allow_zero=allow_zero,
                                     solver_options=solver_options)


def design_from_report_counts(
    support_counts: object,
    n_reports: int,
    oracle: object,
    epsilon: float | None = None,
    delta: float | None = None,
    *,
    categories: object = None,
    utility: object = "mutual_information",
    method: str = "auto",
    solver: str | None = None,
    allow_zero: bool = False,
    solver_options: dict | None = None,
) -> EstimatedDesign:
    """:func:`design_from_reports` from the reports' support counts: reports read in batches, never held at once.

    Implements: the same design as :func:`design_from_reports` (docs/design.md §11.2); the estimator of [WBLJ17]
    Theorem 2 needs only ``C_v`` (how many reports support each value) and the number of reports, and the support
    counts of batches add up (``pml-design design --reports`` streams its file this way).

    Parameters
    ----------
    support_counts : array_like, shape (N,)
        ``C_v`` of all the first cohort's reports: the sum of :meth:`FrequencyOracle.support_counts` over batches.
    n_reports : int
        How many reports they count (n₁ ≥ 1).
    oracle : FrequencyOracle
        The ε₁-LDP oracle that produced them.
    epsilon, delta, categories, utility, method, solver, allow_zero, solver_options
        As in :func:`design_from_reports`.

    Returns
    -------
    EstimatedDesign
        As :func:`design_from_reports` returns it for the same reports.

    Raises
    ------
    ValueError
        Counts that no set of ``n_reports`` reports of ``oracle`` gives (wrong length, negative, above
        ``n_reports``, a total other than ``k · n_reports`` for GRR / subset selection), and as
        :func:`design_from_reports`.
    TypeError
        If ``oracle`` is not a :class:`~pml_design.mechanisms.frequency_oracles.FrequencyOracle`.
    """
    from .mechanisms.frequency_oracles import GeneralizedRandomizedResponse, SubsetSelection  # noqa: PLC0415
    from .mechanisms.labels import counts_by_index  # noqa: PLC0415
    from .mechanisms.mechanism import check_labels, project_to_simplex  # noqa: PLC0415

    eps, d = _check_target(epsilon, delta, "design_from_report_counts")
    oracle = _check_oracle(oracle)
    n = oracle.n
    labels = None if categories is None else check_labels(categories, None, "categories")
    if labels is not None and len(labels) != n:
        raise ValueError(f"categories has {len(labels)} entries but the oracle's alphabet has n = {n}")
    if oracle.gap <= 0:
        raise ValueError(f"oracle: epsilon = {oracle.epsilon!r} makes the reports independent of the inputs")
    n1 = check_positive_int(n_reports, "n_reports")
    counts = np.asarray(counts_by_index(support_counts, n, labels, "support_counts"))
    if counts.shape != (n,) or not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 0) or np.any(counts > n1):
        raise ValueError(f"support_counts must be {n} integers in [0, n_reports = {n1}], got {fmt(support_counts)}")
    k = int(oracle.k) if isinstance(oracle, SubsetSelection) else 1 if isinstance(oracle, GeneralizedRandomizedResponse) \
        else None
    if k is not None and int(counts.sum()) != k * n1:  # every report supports exactly k values
        raise ValueError(f"support_counts sum to {int(counts.sum())}, but {n1} reports of {oracle.name} support "
                         f"exactly {k * n1} values")
    params = _oracle_params(oracle, n1)
    est = oracle.estimate_from_counts(counts, n1, project=False)
    if "p_star" in params:  # no constant support size: shift to sum 1 first (docs/design.md)
        est = est + (1.0 - est.sum()) / n
    p_hat = project_to_simplex(est)
    beta = prior_radius("ldp reports", n, d, params)
    if not beta < 2.0:
        raise ValueError(f"{n1} reports of {params['oracle']} at epsilon = {oracle.epsilon:g} are too few for "
                         f"delta={d!r} on {n} symbols: the radius {beta:.3g} >= 2 rules out no distribution; about "
                         f"{_reports_needed(params, n, d)} reports are needed for radius < 1")
    if not allow_zero and np.any(p_hat <= 0):
        zero = np.flatnonzero(p_hat <= 0).tolist()
        named = [labels[i] for i in zero] if labels is not None else zero
        raise ValueError(f"the estimate from the reports is 0 for categories {named} (lacks full support); pass "
                         "allow_zero=True to keep the zeros, or collect more reports")
    return _design_over_ball(p_hat, n1, d, beta, eps, labels, "ldp reports", params, utility=utility,
                             method=method, solver=solver, solver_options=solver_options)


def combined_estimate(
    *,
    oracle: object,
    mechanism: object,
    first_reports: object = None,
    first_counts: tuple[object, object] | None = None,
    second_reports: object = None,
    second_counts: object = None,
    ci: float = 0.95,
    categories: object = None,
    check_fit: bool = True,
    max_iter: int = 10_000,
    tol: float = 1e-10,
) -> CombinedEstimate:
    """The maximum-likelihood estimate of P from a first cohort's ε₁-LDP reports and the other users' PML reports.

    Implements: docs/design.md §11.2, "Both cohorts, one estimate". The two groups answer independently, so the
    joint log-likelihood is ``L(π) = Σ_y c1_y log(π·w1_y) + Σ_y c2_y log(π·w2_y)`` (``w1_y``, ``w2_y`` the columns
    of the oracle's channel and of the mechanism's). Up to a constant it is the log-likelihood of the concatenated
    counts under the stacked channel ``[α W1 | (1 − α) W2]``, α = n₁/n (the mixture channel of a user who is in the
    first cohort with probability α), maximised on the simplex by the barrier Newton method of
    :meth:`Mechanism.estimate` (EM as its fallback). Only observed outputs enter the likelihood, and ``Σ π = 1``
    makes the probabilities of all outputs sum to one, so no normalisation over the outputs never observed is
    needed: subset selection, whose ``C(N, k)`` outputs may be far too many to list, enters through the report sets
    observed. The Fisher informations of independent samples add, ``F = n₁ F₁(π̂) + n₂ F₂(π̂)``,
    ``F_i = Σ_y w_y w_yᵀ/(π̂·w_y)``, and the covariance is the constrained Cramér–Rao bound on the simplex,
    ``U (Uᵀ F U)⁺ Uᵀ`` (Aitchison & Silvey 1958; = ``F⁻¹ − π πᵀ/n`` inside the simplex), as in
    :meth:`Mechanism.estimate_covariance`; the intervals are its Wald intervals. ``F₁`` is the *expected*
    information at π̂, summed over every output of the oracle: from its channel where it can be written out
    (``N · outputs ≤ MAX_CHANNEL_ENTRIES``: GRR up to N = 2 048, Hadamard response, subset selection up to e.g.
    N = 20, k = 5); beyond that, for GRR from its closed form (:func:`grr_fisher_information`, O(N²); its reports
    enter as the observed outputs, as subset selection's with k = 1), for subset selection from the integral of
    :func:`~pml_design.mechanisms.frequency_oracles.subsets.subset_fisher_information` over all ``C(N, k)`` sets,
    unlisted (exact to rounding; up to N ≈ 200 within its work budget). Above that budget it is the *observed*
    information of the first cohort's reports, ``Σ_S c_S w_S w_Sᵀ/(π̂·w_S)²`` (the Hessian of ``−L``; Efron &
    Hinkley 1978), which has the same limit. For Hadamard response beyond it from two fast Walsh–Hadamard transforms
    (:func:`~pml_design.mechanisms.frequency_oracles.hadamard.hadamard_fisher_information`, exact, O(K log K + N²);
    its reports enter as their columns, computed without the channel).

    The two cohorts must be disjoint: every report comes from a different person, and no one is in both groups.
    The likelihood and the added informations assume the two groups' reports are independent, so a person in both
    makes the intervals too narrow; and that person's two reports leak together (ε₁-LDP and ε-PML compose), more
    than either guarantee states.

    Parameters
    ----------
    oracle : FrequencyOracle
        The ε₁-LDP oracle of the first cohort (ε₁ > 0).
    mechanism : Mechanism
        The PML mechanism of everyone else (e.g. a loaded mechanism file), over the same N categories in the same
        order as the oracle's codes ``0 … N−1``.
    first_reports : array_like, optional
        The first cohort's reports in ``oracle``'s format (:meth:`FrequencyOracle.privatize`); an empty array for
        an empty cohort.
    first_counts : (array_like, array_like), optional
        Instead of ``first_reports``: the distinct reports (in ``oracle``'s format) and how many times each was
        received, as ``numpy.unique(reports, axis=0, return_counts=True)`` gives them; all-zero counts for an
        empty cohort. Exactly one of ``first_reports`` and ``first_counts``.
    second_reports : array_like, optional
        The other users' reports (codes or the mechanism's output labels, as :meth:`Mechanism.estimate` takes them).
    second_counts : array_like, shape (M,), optional
        Instead of ``second_reports``: the number of reports per output of ``mechanism`` (zeros for an empty
        cohort). Exactly one of ``second_reports`` and ``second_counts``.
    ci : float in (0, 1), default 0.95
        Level of the pointwise intervals.
    categories : sequence, optional
        The labels of the oracle's codes ``0 … N−1``, checked against ``mechanism.labels`` (same labels, same
        order).
    check_fit : bool, default True
        With both cohorts present (and an identifiable mechanism): test that their reports fit one distribution,
        the likelihood-ratio statistic ``G = 2[L₁(π̂₁) + L₂(π̂₂) − L(π̂)]`` of each cohort's own MLE against the
        combined one, asymptotically χ² on N − 1 degrees of freedom (Wilks; conservative at the boundary), and warn
        (:class:`~pml_design.mechanisms.fit.ReportsFitWarning`) below p = ``FIT_LEVEL`` (1e-6): the cohorts come
        from different populations, or one was privatized by another oracle or mechanism than declared. The second
        cohort's own MLE is :meth:`Mechanism.estimate`'s, with its fit test of the reports against the mechanism.
    max_iter, tol : int, float
        EM's stopping rule, where the Newton method cannot run (as in :meth:`Mechanism.estimate`).

    Returns
    -------
    CombinedEstimate
        A :class:`FrequencyEstimate`: ``estimate``, ``ci_low``, ``ci_high``, ``covariance``, ``level``, ``n = n₁ +
        n₂``, ``method = "combined-mle"`` (always, whichever cohort is empty) and ``categories`` (the mechanism's
        labels, else ``categories``); and ``fit``, ``second_fit``, the tests of ``check_fit`` (None where they were
        not run). With an empty first cohort it is :meth:`Mechanism.estimate`'s maximum-likelihood estimate
        (the same point, the same covariance and intervals; for a non-identifiable mechanism its starting point and
        warning); with an empty second cohort the MLE from the oracle's reports alone.

    Raises
    ------
    ValueError
        Alphabets or labels that disagree, reports the oracle or the mechanism cannot output, both or neither of
        a cohort's two forms, both cohorts empty, ε₁ = 0, an oracle other than GRR, Hadamard response and subset
        selection whose channel is too large to write out (above ``MAX_CHANNEL_ENTRIES``); each message names the
        argument.
    TypeError
        If ``oracle`` is not a :class:`FrequencyOracle` or ``mechanism`` not a :class:`Mechanism`.
    """
    from .mechanisms.fit import check_possible_reports  # noqa: PLC0415
    from .mechanisms.frequency_oracles.fisher import fisher_information  # noqa: PLC0415
    from .mechanisms.mle import log_likelihood_gradient  # noqa: PLC0415
    from .mechanisms.mechanism import (  # noqa: PLC0415
        Mechanism,
        check_labels,
        simplex_covariance,
        wald_estimate,
    )

    oracle = _check_oracle(oracle)
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a Mechanism (e.g. pml_design.load_mechanism(path)), got {fmt(mechanism)} "
                        f"of type {type(mechanism).__name__}")
    level = check_real(ci, "ci")
    if not 0.0 < level < 1.0:
        raise ValueError(f"ci must lie in (0, 1), e.g. 0.95, got {ci!r}")
    max_iter, tol = check_positive_int(max_iter, "max_iter"), check_positive_real(tol, "tol")
    n_cat = oracle.n
    if mechanism.n_inputs != n_cat:
        raise ValueError(f"mechanism has {mechanism.n_inputs} inputs but the oracle's alphabet has n = {n_cat}: both "
                         "cohorts must answer about the same categories")
    labels = mechanism.labels
    if categories is not None:
        cats = check_labels(categories, n_cat, "categories")
        if labels is not None and cats != labels:
            how = "in another order than" if set(cats) == set(labels) else "other than"
            raise ValueError(f"categories {fmt(list(cats))} (the oracle's codes 0 … {n_cat - 1}) are {how} the "
                             f"mechanism's labels {fmt(list(labels))}")
        labels = labels if labels is not None else cats
    cols1, c1, info1 = _first_cohort(oracle, first_reports, first_counts, fisher_information)
    c2 = _second_cohort(mechanism, second_reports, second_counts)
    W2 = mechanism.matrix
    check_possible_reports(W2, c2, mechanism.output_labels)
    n1, n2 = int(c1.sum()), int(c2.sum())
    n = n1 + n2
    if n == 0:
        raise ValueError("first_reports/first_counts and second_reports/second_counts: both cohorts are empty")
    if n1 == 0 and not mechanism.identifiable:  # the MLE is not unique: Mechanism.estimate's start and warning
        est = mechanism.estimate(c2, counts=True, ci=level, max_iter=max_iter, tol=tol)
        return _combined(est, method="combined-mle", categories=labels)
    used2 = c2 > 0
    m1 = cols1.shape[1]
    stacked = np.empty((n_cat, m1 + int(used2.sum())))  # filled in place: no scaled copy of each part first
    np.multiply(cols1, n1 / n, out=stacked[:, :m1])
    np.multiply(W2[:, used2], n2 / n, out=stacked[:, m1:])
    pi = _maximise(stacked, np.concatenate([c1, c2[used2]]) / n, max_iter, tol)
    fits = (None, None)
    if check_fit and n1 and n2 and mechanism.identifiable:
        fits = _check_one_distribution(cols1, c1, mechanism, c2, pi, max_iter, tol)
    fisher = info1(pi) + (n2 * fisher_information(W2, pi) if n2 else 0.0)
    blind = None if n1 else ~mechanism._identifiable_components()
    score = log_likelihood_gradient(stacked, np.concatenate([c1, c2[used2]]), pi)  # (the columns' scale cancels)
    return _combined(wald_estimate(pi, simplex_covariance(fisher), level, n=n, method="combined-mle",
                                   categories=labels, blind=blind, score=score), fit=fits[0], second_fit=fits[1])


def _combined(est: FrequencyEstimate, **changes: object) -> CombinedEstimate:
    """``est`` as a :class:`CombinedEstimate`, with ``changes`` (fields of either) applied."""
    fields = {f.name: getattr(est, f.name) for f in dataclasses.fields(est)}
    return CombinedEstimate(**{**fields, **changes})  # type: ignore[arg-type]


def _maximise(columns: np.ndarray, freq: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
    """The maximiser of ``Σ_y f_y log(π·c_y)`` on the simplex (observed outputs' columns c_y), from the uniform point:
    the barrier Newton method of :meth:`Mechanism.estimate` where affordable, SQUAREM above, EM where Newton cannot
    run (:func:`pml_design.mechanisms.mle.maximum_likelihood`)."""
    from .mechanisms.mle import maximum_likelihood  # noqa: PLC0415

    return maximum_likelihood(columns, freq, np.full(columns.shape[0], 1.0 / columns.shape[0]), max_iter, tol)


def _check_one_distribution(cols1: np.ndarray, c1: np.ndarray, mechanism: object, c2: np.ndarray, pi: np.ndarray,
                            max_iter: int, tol: float) -> tuple[ReportFit, ReportFit]:
    """``(fit, second_fit)`` of :class:`CombinedEstimate`; warn when the two cohorts' reports do not fit one
    distribution (``check_fit`` of :func:`combined_estimate`)."""
    import warnings  # noqa: PLC0415

    from scipy.stats import chi2  # noqa: PLC0415

    from .mechanisms.fit import FIT_LEVEL, ReportsFitWarning, report_fit  # noqa: PLC0415

    used = c2 > 0
    W2 = mechanism.matrix[:, used]
    pi1 = _maximise(cols1, c1 / c1.sum(), max_iter, tol)
    pi2 = mechanism.estimate(c2, counts=True, max_iter=max_iter, tol=tol)  # (warns if they do not fit the mechanism)
    second = report_fit(mechanism.matrix, c2, pi2, rank=pi.shape[0])  # (its test; the mechanism identifies)

    def loglik(p1: np.ndarray, p2: np.ndarray) -> float:
        return float(c1 @ np.log(p1 @ cols1) + c2[used] @ np.log(p2 @ W2))

    g = max(2.0 * (loglik(pi1, pi2) - loglik(pi, pi)), 0.0)
    df = pi.shape[0] - 1
    p_value = float(chi2.sf(g, df))
    if p_value < FIT_LEVEL:
        warnings.warn(f"the two cohorts' reports do not fit one distribution: likelihood-ratio test G = {g:.4g} on "
                      f"{df} degree(s) of freedom, p = {p_value:.2g} < {FIT_LEVEL:g}; they come from different "
                      "populations, or one was privatized by another oracle or mechanism than declared, so the "
                      "combined estimate is not trustworthy", ReportsFitWarning, stacklevel=3)
    return ReportFit(g, df, p_value, int(cols1.shape[1] + used.sum())), second


def _first_cohort(oracle: object, reports: object, counts: object, fisher_information: object) -> tuple:
    """``(columns, counts, information)`` of the first cohort: the oracle's channel columns of the distinct reports
    received (N × m), how many of each, and ``π ↦`` the cohort's Fisher information (see :func:`combined_estimate`)."""
    from .mechanisms.frequency_oracles import (  # noqa: PLC0415
        MAX_CHANNEL_ENTRIES,
        GeneralizedRandomizedResponse,
        HadamardResponse,
        SubsetSelection,
    )
    from .mechanisms.frequency_oracles.hadamard import hadamard_columns, hadamard_fisher_information  # noqa: PLC0415
    from .mechanisms.frequency_oracles.subsets import subset_fisher_information  # noqa: PLC0415

    if (reports is None) == (counts is None):
        raise ValueError("give exactly one of first_reports and first_counts (the first cohort's reports, or its "
                         f"distinct reports and their counts), got {'both' if reports is not None else 'neither'}")
    name = "first_reports" if reports is not None else "first_counts"
    if reports is not None:
        distinct, cnt = np.asarray(reports), None
    else:
        if not isinstance(counts, (tuple, list)) or len(counts) != 2:
            raise ValueError(f"first_counts must be a pair (distinct reports, counts), got {fmt(counts)}")
        distinct, cnt = np.asarray(counts[0]), np.asarray(counts[1])
        if cnt.ndim != 1 or cnt.shape[0] != (distinct.shape[0] if distinct.ndim else -1) \
                or not np.all(np.isfinite(cnt)) or np.any(cnt < 0) or np.any(cnt != np.round(cnt)):
            raise ValueError(f"first_counts: the counts must be one non-negative integer per distinct report, got "
                             f"{fmt(cnt)} for {distinct.shape[0] if distinct.ndim else 0} report(s)")
    empty = distinct.ndim == 0 or distinct.shape[0] == 0 or (cnt is not None and cnt.sum() == 0)
    if empty:
        return np.zeros((oracle.n, 0)), np.zeros(0), lambda pi: 0.0
    if oracle.gap <= 0:
        raise ValueError(f"oracle: epsilon = {oracle.epsilon!r} makes the reports independent of the inputs")
    cnt = np.ones(distinct.shape[0]) if cnt is None else cnt.astype(float)
    explicit = oracle.n * oracle.n_outputs <= MAX_CHANNEL_ENTRIES
    is_grr = isinstance(oracle, GeneralizedRandomizedResponse)
    is_hr = isinstance(oracle, HadamardResponse)
    if not explicit and not (is_grr or is_hr or isinstance(oracle, SubsetSelection)):
        raise ValueError(f"oracle: {oracle.name} over n = {oracle.n} has {oracle.n_outputs} possible reports, too many "
                         f"to write its channel out ({oracle.n} x {oracle.n_outputs} > MAX_CHANNEL_ENTRIES = "
                         f"{MAX_CHANNEL_ENTRIES}); only GRR, Hadamard response and subset selection are estimated "
                         "without it")
    try:
        oracle.support_counts(distinct)  # validates the reports' format and values
        if explicit:
            symbols = oracle.to_symbols(distinct)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} do not match the oracle {oracle.name} (n = {oracle.n}, epsilon = "
                         f"{oracle.epsilon:g}" + (f", k = {oracle.k}" if hasattr(oracle, "k") else "")
                         + f"): {exc}") from None
    if explicit:  # the expected information over every output of the channel
        W = oracle.matrix
        full = np.bincount(symbols, weights=cnt, minlength=W.shape[1])
        used = full > 0
        n1 = float(full.sum())
        return W[:, used], full[used], lambda pi: n1 * fisher_information(W, pi)
    if is_hr:  # the observed reports' columns ∝ 1 where H[x + 1, y] = +1, e^{−ε} elsewhere; F₁ by fast transforms
        full = np.bincount(distinct.astype(np.int64).ravel(), weights=cnt, minlength=oracle.n_outputs)
        ys = np.flatnonzero(full)  # (as the explicit channel's counts above, without the channel)
        c = full[ys]
        n1 = float(c.sum())
        return (hadamard_columns(oracle.n, oracle.epsilon, ys), c,
                lambda pi: n1 * hadamard_fisher_information(oracle.n, oracle.epsilon, pi))
    # subset selection beyond the explicit channel: the observed sets S, with columns ∝ e^{−ε} + (1 − e^{−ε}) 1_S
    # (P(S | x) ∝ e^ε if x ∈ S else 1; a column's scale is a constant of the likelihood and cancels in its Hessian);
    # GRR is subset selection with k = 1, its report y the set {y}
    sets = distinct.astype(np.int64).reshape(distinct.shape[0], -1)
    rows, inverse = np.unique(np.sort(sets, axis=1), axis=0, return_inverse=True)
    c = np.bincount(inverse.ravel(), weights=cnt, minlength=rows.shape[0])
    keep = c > 0
    member = np.zeros((int(keep.sum()), oracle.n), dtype=bool)
    np.put_along_axis(member, rows[keep], True, axis=1)
    cols = np.where(member.T, 1.0, math.exp(-oracle.epsilon))
    c = c[keep]
    n1 = float(c.sum())

    def information(pi: np.ndarray) -> np.ndarray:  # expected over all C(N, k) sets, else observed
        expected = grr_fisher_information(oracle.n, oracle.epsilon, pi) if is_grr else \
            subset_fisher_information(oracle.n, int(oracle.k), oracle.epsilon, pi)
        if expected is not None:
            return n1 * expected
        X = cols * (np.sqrt(c) / (pi @ cols))  # observed: XXᵀ, one symmetric rank-k update (as fisher_information)
        return X @ X.T

    return cols, c, information


def grr_fisher_information(n: int, epsilon: float, pi: np.ndarray) -> np.ndarray:
    """The Fisher information of one GRR report about π, ``F = Σ_y w_y w_yᵀ/(π·w_y)``, without the N × N channel.

    Implements: the expected information of :func:`combined_estimate` for GRR beyond ``MAX_CHANNEL_ENTRIES``.
    GRR's column y is ``w_y = c (1 + g e_y)``, ``g = e^ε − 1``, ``c = 1/(g + N)``, so ``π·w_y = c (1 + g π_y)``
    and, with ``h_y = 1/(1 + g π_y)``, ``F = c [(Σ h) 1 1ᵀ + g (1 hᵀ + h 1ᵀ) + g² diag(h)]`` (O(N²); ``c g`` and
    ``c g²`` are formed as ``g/(g + N)`` and ``g · g/(g + N)``, which do not overflow for ε ≤ 700).

    Parameters
    ----------
    n : int
        The alphabet size N.
    epsilon : float
        ε₁ > 0.
    pi : numpy.ndarray, shape (N,)
        The distribution at which it is evaluated.

    Returns
    -------
    numpy.ndarray, shape (N, N)
        F, symmetric.
    """
    g = math.expm1(epsilon)
    h = 1.0 / (1.0 + g * pi)
    cg = g / (g + n)
    F = np.full((n, n), h.sum() / (g + n))
    F += cg * (h[:, None] + h[None, :])
    F[np.diag_indices(n)] += g * cg * h
    return F


def _second_cohort(mechanism: object, reports: object, counts: object) -> np.ndarray:
    """The second cohort's report counts per output of ``mechanism`` (validated; all zero for an empty cohort)."""
    from .mechanisms.labels import counts_by_index  # noqa: PLC0415
    from .mechanisms.mechanism import _as_counts  # noqa: PLC0415

    if (reports is None) == (counts is None):
        raise ValueError("give exactly one of second_reports and second_counts (the mechanism's reports, or their "
                         f"counts per output), got {'both' if reports is not None else 'neither'}")
    if reports is not None:
        if np.ndim(reports) > 0 and np.shape(reports)[0] == 0:
            return np.zeros(mechanism.n_outputs)
        return mechanism.report_counts(reports).astype(float)
    return _as_counts(counts_by_index(counts, mechanism.n_outputs, mechanism.output_labels, "second_counts"),
                      mechanism.n_outputs, "second_counts", allow_empty=True)


def _check_oracle(oracle: object) -> object:
    """``oracle`` if it is a :class:`FrequencyOracle`, else a ``TypeError`` saying what to pass."""
    from .mechanisms.frequency_oracles import FrequencyOracle  # noqa: PLC0415

    if not isinstance(oracle, FrequencyOracle):
        raise TypeError(f"oracle must be a FrequencyOracle (e.g. pml_design.grr(n, eps1) or subset_selection(n, eps1)), "
                        f"got {fmt(oracle)} of type {type(oracle).__name__}")
    return oracle


def _reports_needed(params: dict, n: int, delta: float) -> int:
    """The smallest report count whose radius is < 1, to within 1 % above (for the error message): doubling from the
    count given, then bisection (a new user's trial: the power-of-two multiple said 96 000 where 49 874 suffice, and a
    first cohort spends ε₁ on every person recruited)."""
    trial = dict(params)

    def fits(count: int) -> bool:
        trial["n_reports"] = count
        return prior_radius("ldp reports", n, delta, trial) < 1.0

    lo = max(int(params["n_reports"]), 1)
    hi = 2 * lo
    for _ in range(64):
        if fits(hi):
            break
        lo, hi = hi, 2 * hi
    else:
        return math.inf  # type: ignore[return-value]
    while hi - lo > max(1, hi // 100):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi
