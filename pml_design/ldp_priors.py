"""Radii of the ℓ1 uncertainty ball when P̂ comes from a first cohort's reports through an ε₁-LDP frequency oracle.

Implements: the core paper's Theorem 2 / eq. (7) argument (``‖Q − P‖₁ = max_σ σ·(Q − P)``, a union over the
``2^N − 2`` non-constant sign vectors, one Chernoff bound each) for the unbiased estimate of a pure protocol
([WBLJ17] Thm. 2); the derivations are in ``docs/design.md`` §11.2 ("P̂ from a first cohort's LDP reports"):

* :func:`ldp_ball_radius` — GRR and k-subset selection, with the exact moment generating function of one report
  (a hypergeometric mixture); ``Σ f̂ = 1``, so the Euclidean projection onto the simplex does not increase the
  ℓ1 distance to any distribution;
* :func:`hadamard_ball_radius` — Hadamard response, with Bernstein's inequality per sign vector: the rows of the
  Hadamard matrix are orthogonal, so one report's term has variance ``O(N)`` along every centred sign vector
  (the coordinate-wise bound is ``O(N²)``);
* :func:`unary_ball_radius` — optimized unary encoding, the same with its independent bits;
* :func:`ldp_generic_radius` — any other pure protocol (OLH), Hoeffding per coordinate (linear in N, loose).

The exponents are minimised over a fixed grid of λ (or in closed form): any λ gives a valid bound, so the grid
only costs sharpness, never validity; the radius is found by bisection and the returned end is the one that
satisfies the bound. Everything here is deterministic, so a mechanism file's radius can be re-derived from its
stored parameters (:func:`pml_design.estimation.prior_radius`). :mod:`pml_design.priors` re-exports these names
and uses the bisection for the radius of a DP release.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from ._validation import check_delta, check_positive_int, check_positive_real

__all__ = ["HADAMARD_BALL", "UNARY_BALL", "hadamard_ball_radius", "ldp_ball_radius", "ldp_generic_radius",
           "subset_selection_constants", "unary_ball_radius"]

#: Points of the λ grid of the Chernoff bounds (geometric).
LAMBDA_GRID: int = 1201
#: Work budget (array entries) of the exact per-report MGF of subset selection (its λ grid is thinned above it).
EXACT_MGF_WORK: float = 3e7
#: Bisection steps for a radius (the interval [0, 2] is halved this many times).
BISECTION_STEPS: int = 56


def _log_binom(n: int) -> np.ndarray:
    """``log C(n, j)`` for j = 1, …, n − 1."""
    j = np.arange(1, n)
    return gammaln(n + 1.0) - gammaln(j + 1.0) - gammaln(n - j + 1.0)


def _solve_radius(log_failure, delta: float) -> float:  # type: ignore[no-untyped-def]
    """Smallest β in [0, 2] (up to bisection) with ``log_failure(β) ≤ log δ``; ``inf`` if even β = 2 fails.

    ``log_failure`` must be non-increasing in β. The returned end satisfies the bound (conservative).
    """
    target = math.log(delta)
    if log_failure(2.0) > target:
        return math.inf
    lo, hi = 0.0, 2.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if log_failure(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def subset_selection_constants(n: int, k: int, epsilon: float) -> tuple[float, float, float]:
    """``(p*, q*, p* − q*)`` of k-subset selection over N values at ε (k = 1: GRR); see docs/ldp.md.

    ``p* = k/(k + (N − k)e^{−ε})``, ``q* = k((k − 1) + (N − k)e^{−ε}) / ((N − 1)(k + (N − k)e^{−ε}))``.

    Implements: k-subset selection (docs/ldp.md §2, "k-subset selection").

    Parameters
    ----------
    n : int
        N ≥ 2, the number of values (not validated).
    k : int
        Subset size 1 ≤ k ≤ N − 1.
    epsilon : float
        ε.

    Returns
    -------
    (float, float, float)
        ``(p*, q*, p* − q*)``.
    """
    t, s = math.exp(-epsilon), -math.expm1(-epsilon)
    d = k + (n - k) * t
    p = k / d
    q = k * ((k - 1) + (n - k) * t) / ((n - 1) * d)
    return p, q, k * (n - k) * s / ((n - 1) * d)


def _log_lchoose(a: object, b: object) -> np.ndarray:
    return gammaln(np.asarray(a) + 1.0) - gammaln(np.asarray(b) + 1.0) - gammaln(np.asarray(a) - np.asarray(b) + 1.0)


def _log_hypergeom(h: np.ndarray, total: int, good: int, draws: int) -> np.ndarray:
    """``log P(H = h)`` for H hypergeometric: ``draws`` from ``total`` items of which ``good`` are marked."""
    return _log_lchoose(good, h) + _log_lchoose(total - good, draws - h) - _log_lchoose(total, draws)


def _ss_report_log_mgf(n: int, k: int, epsilon: float, lam: np.ndarray) -> np.ndarray:
    """Per-report bound ψ_j(λ) on ``log E exp(λ σ·(g(Y) − P))`` for σ with j = 1…N−1 entries +1; (N−1, G).

    ``g(y)_v = (1{v ∈ S(y)} − q*)/(p* − q*)`` is one report's term of the unbiased estimator, so
    ``σ·g(y) = (2 #{v ∈ S(y): σ_v = +1} − k − q*(2j − N))/(p* − q*)``. Minimum of two valid bounds:
    (a) the exact conditional MGF of ``σ·g(Y) − σ_x`` given the input x (mean 0; a mixture of two
    hypergeometric laws), maximised over ``σ_x = ±1``, times Hoeffding's ``e^{λ²/2}`` for ``σ_X − σ·P``
    (range 2); (b) Hoeffding's lemma for ``σ·g(Y)`` on its range ``2ρ_j/(p* − q*)``,
    ``ρ_j = min(k, j) − max(0, k − N + j)``. Part (a) costs O(N k) per λ: it is evaluated on every s-th point
    of the λ grid only, s chosen to keep the work under :data:`EXACT_MGF_WORK` (the other points keep (b);
    every λ gives a valid bound).
    """
    p, q, gap = subset_selection_constants(n, k, epsilon)
    j_all = np.arange(1, n)
    rho = np.minimum(k, j_all) - np.maximum(0, k - (n - j_all))
    out = lam[None, :] ** 2 * ((2.0 * rho / gap) ** 2 / 8.0)[:, None]
    step = max(1, math.ceil(4.0 * n * (k + 1) * lam.shape[0] / EXACT_MGF_WORK))
    sub = lam[::step]
    for j in j_all:
        worst = np.full(sub.shape[0], -np.inf)
        for s, jo in ((1, j - 1), (-1, j)):  # σ_x, and how many of the N − 1 other values have σ = +1
            vals, logw = [], []
            # with probability p*: S = {x} ∪ (k − 1 others); else k others (uniform subsets of the others)
            for r, w, extra in ((k - 1, p, int(s == 1)), (k, 1.0 - p, 0)):
                h = np.arange(max(0, r - (n - 1 - jo)), min(r, jo) + 1)
                if w <= 0 or h.size == 0:
                    continue
                vals.append((2.0 * (h + extra) - k - q * (2 * j - n)) / gap - s)
                logw.append(math.log(w) + _log_hypergeom(h, n - 1, jo, r))
            v, lw = np.concatenate(vals), np.concatenate(logw)
            worst = np.maximum(worst, logsumexp(lw[None, :] + sub[:, None] * v[None, :], axis=1))
        out[j - 1, ::step] = np.minimum(out[j - 1, ::step], sub**2 / 2.0 + worst)
    return out


def _ldp_lambda_grid(gap: float) -> np.ndarray:
    return np.geomspace(1e-9, 1e3, LAMBDA_GRID) * gap


def ldp_ball_radius(support_size: int, k: int, ldp_epsilon: float, n_reports: int, delta: float) -> float:
    """Radius β with ``P(‖P̂ − P‖₁ ≥ β) ≤ δ`` for P̂ from n₁ reports of k-subset selection (k = 1: GRR).

    ``P̂`` is the Euclidean projection onto the simplex of the unbiased estimate ``f̂`` ([WBLJ17] Thm. 2);
    ``Σ f̂ = 1`` for these oracles, so the projection is not farther from any distribution in ℓ1. Then
    ``‖f̂ − P‖₁ = max_σ σ·(f̂ − P)`` over the ``2^N − 2`` non-constant sign vectors (constant ones give 0),
    and for each: ``P(σ·(f̂ − P) ≥ β) ≤ exp(n₁ inf_λ (ψ_j(λ) − λβ))`` with the per-report bound ψ_j of
    docs/design.md ("P̂ from a first cohort's LDP reports"). Reduces to eq. (7) (corrected) with m = n₁ for
    GRR as ε₁ → ∞.

    Parameters
    ----------
    support_size : int
        Alphabet size N ≥ 2.
    k : int
        Subset size in [1, N − 1] (1 is GRR).
    ldp_epsilon : float
        ε₁ > 0 of the oracle.
    n_reports : int
        Number of reports n₁.
    delta : float
        Failure probability in (0, 1).

    Returns
    -------
    float
        β in (0, 2], or ``inf`` when no β ≤ 2 reaches δ.
    """
    n = check_positive_int(support_size, "support_size", minimum=2)
    k = check_positive_int(k, "k")
    if k > n - 1:
        raise ValueError(f"k must be <= support_size - 1 = {n - 1}, got {k}")
    eps1 = check_positive_real(ldp_epsilon, "ldp_epsilon")
    n1 = check_positive_int(n_reports, "n_reports")
    d = check_delta(delta)
    lam = _ldp_lambda_grid(subset_selection_constants(n, k, eps1)[2])
    psi = _ss_report_log_mgf(n, k, eps1, lam)
    logc = _log_binom(n)

    def log_failure(beta: float) -> float:
        g = n1 * np.min(psi - lam[None, :] * beta, axis=1)
        return float(logsumexp(logc + np.minimum(g, 0.0)))

    return _solve_radius(log_failure, d)


def ldp_generic_radius(support_size: int, gap: float, n_reports: int, delta: float) -> float:
    """Coordinate-wise radius for any pure protocol (support counts ``C_v ~ Bin(n₁, q* + (p* − q*)P_v)``).

    Hoeffding per coordinate and a union over the N coordinates: ``|f̂_v − P_v| ≤ τ/(p* − q*)`` with
    ``τ = sqrt(log(2N/δ)/(2n₁))`` for all v with probability ≥ 1 − δ. The estimate is shifted to sum to one
    (``f̃ = f̂ + (1 − Σf̂)/N``, at most doubling the ℓ1 error) and projected onto the simplex, so
    ``β = 2Nτ/(p* − q*)``. Valid for every pure protocol, loose (linear in N); used for oracles without a
    sharper bound here.

    Implements: docs/design.md §11.2 (P̂ from a first cohort's LDP reports); [WBLJ17] pure protocols (docs/ldp.md §2).

    Parameters
    ----------
    support_size : int
        N ≥ 2.
    gap : float
        p* − q* > 0 of the protocol.
    n_reports : int
        n₁ ≥ 1, the number of reports.
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        β, or ``inf`` when it exceeds 2.
    """
    n = check_positive_int(support_size, "support_size", minimum=2)
    g = check_positive_real(gap, "gap")
    n1 = check_positive_int(n_reports, "n_reports")
    d = check_delta(delta)
    beta = 2.0 * n * math.sqrt(math.log(2.0 * n / d) / (2.0 * n1)) / g
    return beta if beta <= 2.0 else math.inf


#: ``prior_params["ball"]`` of a Hadamard-response first cohort whose radius is :func:`hadamard_ball_radius`
#: (mechanism files written before session 21 lack the key; their radius is :func:`ldp_generic_radius`).
HADAMARD_BALL: str = "sign vectors, Bernstein (Hadamard response)"


def hadamard_ball_radius(support_size: int, ldp_epsilon: float, n_reports: int, delta: float) -> float:
    """Radius β with ``P(‖P̂ − P‖₁ ≥ β) ≤ δ`` for P̂ from n₁ reports of Hadamard response at ε₁.

    ``P̂ = Π(f̃)``, the Euclidean projection onto the simplex of the unbiased estimate shifted to sum to one,
    ``f̃ = f̂ + (1 − Σf̂)/N`` (``f̂_v = (C_v/n₁ − q*)/(p* − q*)``, [WBLJ17] Thm. 2, C_v the reports supporting v).
    As ``f̃ − P = (I − 11ᵀ/N)(f̂ − P)``, ``‖f̃ − P‖₁ = max_σ σ̃·(f̂ − P)`` over the non-constant sign vectors σ with
    ``σ̃ = σ − mean(σ)1``. One report's term ``ξ = σ̃·g(Y) − σ̃·P``, ``g(y)_v = H[v + 1, y]/(2(p* − q*))``, has
    mean 0, ``E ξ² ≤ p*‖σ̃‖²/(2(p* − q*)²)`` (every output has probability at most ``2p*/K`` and the rows of the
    K × K Sylvester matrix H are orthogonal, ``Σ_y (Hᵀσ̃)_y² = K‖σ̃‖²``) and ``ξ ≤ ‖σ̃‖₁/(2(p* − q*)) + 2j/N``; for σ
    with j entries +1, ``‖σ̃‖² = ‖σ̃‖₁ = 4j(N − j)/N``. Bernstein's inequality per sign vector, the union over
    the ``C(N, j)`` vectors of each j, and the projection lemma (``Σf̃ = 1``) give β; the smaller of it and
    :func:`ldp_generic_radius` is returned (both are fixed before the reports are seen, so the smaller is valid
    at δ).

    Implements: docs/design.md §11.2 ("Hadamard response"); Hadamard response (Acharya, Sun & Zhang 2019);
    Bernstein's inequality (Boucheron, Lugosi & Massart 2013, Thm. 2.10).

    Parameters
    ----------
    support_size : int
        Alphabet size N ≥ 2.
    ldp_epsilon : float
        ε₁ > 0 of the oracle.
    n_reports : int
        Number of reports n₁ ≥ 1.
    delta : float
        Failure probability in (0, 1).

    Returns
    -------
    float
        β in (0, 2], or ``inf`` when no β ≤ 2 reaches δ.
    """
    return _bernstein_radius(support_size, ldp_epsilon, n_reports, delta, _hadamard_moments)


#: ``prior_params["ball"]`` of an optimized-unary-encoding first cohort whose radius is :func:`unary_ball_radius`.
UNARY_BALL: str = "sign vectors, Bernstein (optimized unary encoding)"


def unary_ball_radius(support_size: int, ldp_epsilon: float, n_reports: int, delta: float) -> float:
    """Radius β with ``P(‖P̂ − P‖₁ ≥ β) ≤ δ`` for P̂ from n₁ reports of optimized unary encoding (OUE) at ε₁.

    As :func:`hadamard_ball_radius`, with OUE's moments: given the input x the N bits are independent (bit x is 1
    with probability ``p* = 1/2``, the others with ``q* = 1/(e^ε₁ + 1)``), so with ``g(y)_v = (y_v − q*)/(p* − q*)``,
    ``E ξ² ≤ (q*(1 − q*)‖σ̃‖² + (1/4 − q*(1 − q*)) max_v σ̃_v²)/(p* − q*)² + 1`` (the conditional variances, plus the
    variance of ``σ̃_X``, whose range is 2) and ``ξ ≤ ‖σ̃‖₁/(2(p* − q*)) + 2j/N`` (each bit's term lies in
    ``[−q*, 1 − q*]/(p* − q*)``, and σ̃'s positive and negative parts each weigh ``‖σ̃‖₁/2``).

    Implements: docs/design.md §11.2 ("Hadamard response", "optimized unary encoding"); OUE ([WBLJ17] §4.3);
    Bernstein's inequality (Boucheron, Lugosi & Massart 2013, Thm. 2.10).

    Parameters
    ----------
    support_size : int
        Alphabet size N ≥ 2.
    ldp_epsilon : float
        ε₁ > 0 of the oracle.
    n_reports : int
        Number of reports n₁ ≥ 1.
    delta : float
        Failure probability in (0, 1).

    Returns
    -------
    float
        β in (0, 2], or ``inf`` when no β ≤ 2 reaches δ.
    """
    return _bernstein_radius(support_size, ldp_epsilon, n_reports, delta, _unary_moments)


def _bernstein_radius(support_size, ldp_epsilon, n_reports, delta, moments) -> float:  # type: ignore[no-untyped-def]
    """The smaller of the Bernstein sign-vector radius with ``moments(n, ε₁) = (gap, E ξ² bounds, ξ bounds)``
    per j and :func:`ldp_generic_radius` (both fixed before the reports are seen, so the smaller is valid at δ)."""
    n = check_positive_int(support_size, "support_size", minimum=2)
    eps1 = check_positive_real(ldp_epsilon, "ldp_epsilon")
    n1 = check_positive_int(n_reports, "n_reports")
    d = check_delta(delta)
    gap, var, top = moments(n, eps1)
    logc = _log_binom(n)

    def log_failure(beta: float) -> float:
        return float(logsumexp(logc + np.minimum(-n1 * beta * beta / (2.0 * (var + top * beta / 3.0)), 0.0)))

    return min(_solve_radius(log_failure, d), ldp_generic_radius(n, gap, n1, d))


def _centred_signs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per j = 1…N−1 (σ with j entries +1, σ̃ = σ − mean σ): j, ``‖σ̃‖² = ‖σ̃‖₁ = 4j(N − j)/N`` and ``max σ̃_v²``."""
    j = np.arange(1, n, dtype=float)
    return j, 4.0 * j * (n - j) / n, (2.0 * np.maximum(j, n - j) / n) ** 2


def _hadamard_moments(n: int, epsilon: float) -> tuple[float, np.ndarray, np.ndarray]:
    """``(p* − q*, bound on E ξ², bound on ξ)`` per j for one Hadamard-response report's term
    ``ξ = σ̃·g(Y) − σ̃·P``, valid for every P (:func:`hadamard_ball_radius`)."""
    t = math.exp(-epsilon)
    p_star, gap = 1.0 / (1.0 + t), -math.expm1(-epsilon) / (2.0 * (1.0 + t))
    j, norm, _ = _centred_signs(n)
    return gap, p_star * norm / (2.0 * gap * gap), norm / (2.0 * gap) + 2.0 * j / n


def _unary_moments(n: int, epsilon: float) -> tuple[float, np.ndarray, np.ndarray]:
    """As :func:`_hadamard_moments`, for optimized unary encoding (:func:`unary_ball_radius`)."""
    t = math.exp(-epsilon)
    q, gap = t / (1.0 + t), -math.expm1(-epsilon) / (2.0 * (1.0 + t))
    j, norm, peak = _centred_signs(n)
    bern = q * (1.0 - q)
    return gap, (bern * norm + (0.25 - bern) * peak) / (gap * gap) + 1.0, norm / (2.0 * gap) + 2.0 * j / n
