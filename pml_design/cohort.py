"""Fully local deployment: P̂ from a first cohort's LDP reports, and the PML design for everyone else.

Implements: the core paper's Figure 1 with the estimate taken from ε₁-LDP frequency-oracle reports ([WBLJ17]'s
unbiased estimator, projected onto the simplex) instead of raw samples, and the ℓ1 ball of
:func:`pml_design.priors.ldp_ball_radius` (docs/design.md, "P̂ from a first cohort's LDP reports") that contains
the true distribution with probability ≥ 1 − δ. No one holds raw data: the first cohort's records are protected by
ε₁-LDP, every later record by (ε, δ)-PML.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import fmt
from .estimation import prior_radius
from .pipeline import EstimatedDesign, _check_target, _design_over_ball

__all__ = ["design_from_report_counts", "design_from_reports"]


def _oracle_params(oracle: object, n_reports: int) -> dict:
    """``prior_params`` of :func:`pml_design.estimation.prior_radius` for an oracle and a report count."""
    from .mechanisms.frequency_oracles import GeneralizedRandomizedResponse, SubsetSelection  # noqa: PLC0415

    params: dict = {"oracle": oracle.name, "ldp_epsilon": float(oracle.epsilon), "n_reports": int(n_reports)}  # type: ignore[attr-defined]
    if isinstance(oracle, GeneralizedRandomizedResponse):
        params["oracle"] = "GRR"
    elif isinstance(oracle, SubsetSelection):
        params.update(oracle="SS", k=int(oracle.k))  # type: ignore[arg-type]
    else:  # any other pure protocol (e.g. Hadamard response): the coordinate-wise bound
        params.update(p_star=float(oracle.p_star), q_star=float(oracle.q_star))  # type: ignore[attr-defined]
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
    distribution of one report, union over sign vectors) or :func:`pml_design.priors.ldp_generic_radius` (any
    other pure protocol, e.g. Hadamard response: coordinate-wise, looser), so that the ball contains the true
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
        oracle's name, ε₁, the number of reports (and k for subset selection, p*, q* for other oracles).

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
    from ._validation import check_positive_int  # noqa: PLC0415
    from .mechanisms.frequency_oracles import GeneralizedRandomizedResponse, SubsetSelection  # noqa: PLC0415
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
    counts = np.asarray(support_counts)
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


def _check_oracle(oracle: object) -> object:
    """``oracle`` if it is a :class:`FrequencyOracle`, else a ``TypeError`` saying what to pass."""
    from .mechanisms.frequency_oracles import FrequencyOracle  # noqa: PLC0415

    if not isinstance(oracle, FrequencyOracle):
        raise TypeError(f"oracle must be a FrequencyOracle (e.g. pml_design.grr(n, eps1) or subset_selection(n, eps1)), "
                        f"got {fmt(oracle)} of type {type(oracle).__name__}")
    return oracle


def _reports_needed(params: dict, n: int, delta: float) -> int:
    """Smallest power-of-two multiple of the report count whose radius is < 1 (for the error message)."""
    trial = dict(params)
    n1 = max(int(params["n_reports"]), 1)
    for _ in range(64):
        n1 *= 2
        trial["n_reports"] = n1
        if prior_radius("ldp reports", n, delta, trial) < 1.0:
            return n1
    return math.inf  # type: ignore[return-value]
