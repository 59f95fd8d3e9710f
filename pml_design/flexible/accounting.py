"""Privacy accounting for the shifted-truncated Laplace mechanism (STLap) and BucketHist.

Three layers, never mixed up:

1. The paper's formulas, reproduced as stated (``paper_*``): Theorem 3 / Corollary 1 / Lemmas 9-10,
   Theorem 4.  They are *not* valid guarantees for ``q = τ|x|`` on inputs with several non-empty bars
   (see ``docs/errata-flexible.md``, erratum E1, and :mod:`pml_design.flexible.pld`).
2. Proven bounds for what the library runs (``guarantee_*``):
   * fixed, public q: (ε, F_q(-q+1))-DP, exactly (:func:`fixed_q_delta`);
   * q = τ|x| (the paper's Algorithm 1): the per-coordinate + basic-composition replacement bound
     (ε', δ') of :func:`relative_q_bound`.
3. Exact δ(ε) for concrete neighbouring inputs: :func:`pml_design.flexible.pld.exact_delta`.

Implements: Bansal et al. (AISTATS 2022), Theorem 3, Lemma 9 (Claims 3-5), Lemma 10, Corollary 1,
Theorem 4, Appendix F; corrected where documented.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pml_design._validation import check_epsilon, check_positive_int, check_positive_real, check_real
from pml_design.flexible.noise import log_expm1, stlap_noise_cdf

__all__ = [
    "PrivacyGuarantee",
    "delta_star",
    "q_for_delta",
    "paper_lemma9_min_n",
    "paper_lemma10_min_n",
    "paper_corollary1_applies",
    "paper_theorem3_delta",
    "paper_delta_explicit_bound",
    "fixed_q_delta",
    "relative_q_bound",
    "guarantee_fixed_q",
    "guarantee_relative_q",
    "paper_buckethist_tau",
    "buckethist_tau",
]


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ)-DP statement w.r.t. add/remove-one neighbours (∼_hist), with its provenance.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee.  Data-dependent (and then PRIVATE) when it was computed at the input's own size, as the
        relative-q guarantee of ``stlap_release`` / ``bucket_hist`` is.
    statement : str
        The scope under which it holds (e.g. "all neighbour pairs whose smaller input has >= n items").
    source : str
        Which proven result backs it.
    """

    epsilon: float
    delta: float
    statement: str
    source: str


def delta_star(epsilon: float, q: float) -> float:
    """δ*(ε, q) = (e^ε - 1) / (2 (e^{εq/2} - 1)), the paper's δ for STLap and the Boolean frontier.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    q : float
        Truncation width q > 0.

    Returns
    -------
    float
        δ*(ε, q), evaluated in log space (min(·, 1) is *not* applied).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.1 (Pareto relation δ (e^{εq/2}-1)/(e^ε-1) = 1/2)
    and Lemma 9 / Corollary 1 / Theorem 3 (δ = (e^ε - 1)/(2(e^{ετn/2} - 1))).
    """
    eps = check_epsilon(epsilon, positive=True)
    q = check_positive_real(q, "q")
    return float(np.exp(log_expm1(eps) - np.log(2.0) - log_expm1(eps * q / 2.0)))


def q_for_delta(epsilon: float, delta: float) -> float:
    """Inverse of :func:`delta_star` in q: q(ε, δ) = (2/ε) ln(1 + (e^ε - 1)/(2δ)).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        Target δ ∈ (0, 1).

    Returns
    -------
    float
        The width q with δ*(ε, q) = δ.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Corollary 1 solved for q (used in Section 6 / App. L,
    "parameters given in Corollary 1").  With a *fixed* q (``q_mode="fixed"``), ``F_q(-q+1)`` — the
    exact δ of :func:`fixed_q_delta` — equals δ for q >= 2.
    """
    eps = check_epsilon(epsilon, positive=True)
    d = check_real(delta, "delta")
    if not (0 < d < 1):
        raise ValueError(f"delta must lie in (0, 1), got {d!r}")
    # q = (2/ε) log(1 + e^L), L = log(e^ε - 1) - log(2δ): log-space, so a tiny δ (1e-320) gives a finite q
    big_l = float(log_expm1(eps)) - np.log(2.0) - np.log(d)
    return float(2.0 / eps * np.logaddexp(0.0, big_l))


def paper_lemma9_min_n(epsilon: float, tau: float, nu: float = 0.0) -> float:
    """Lemma 9 / Claim 5 threshold N9 = (2/(ετ)) ln(1 + (1 - e^{-ετ/2}) / (e^{ε(ν+τ/2)} - 1)).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    tau : float
        Relative width τ > 0 (q = τ|x|).
    nu : float, default 0.0
        Slack ν ≥ 0 of the lemma.

    Returns
    -------
    float
        The threshold N9 on the input size, as printed in the paper.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Lemma 9 and Claim 5 (Appendix F).  As stated, for
    inputs with more than one non-empty bar this threshold does *not* certify privacy (erratum E1).
    """
    eps = check_epsilon(epsilon, positive=True)
    tau = check_positive_real(tau, "tau")
    nu = check_positive_real(nu, "nu", allow_zero=True)
    inner = -np.expm1(-eps * tau / 2.0) / np.expm1(eps * (nu + tau / 2.0))
    return float(2.0 / (eps * tau) * np.log1p(inner))


def paper_lemma10_min_n(epsilon: float, nu: float) -> float:
    """Lemma 10 threshold: |x| > 1/(e^{εν} - 1) (the τ -> 0+ limit of N9).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    nu : float
        Slack ν > 0.

    Returns
    -------
    float
        The threshold 1/(e^{εν} - 1) on |x|.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Lemma 10 / Remark 3.
    """
    eps = check_epsilon(epsilon, positive=True)
    nu = check_positive_real(nu, "nu")
    return float(1.0 / np.expm1(eps * nu))


def paper_corollary1_applies(epsilon: float, tau: float, n: int) -> bool:
    """Corollary 1 / Theorem 3 condition ε τ n >= 2.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    tau : float
        Relative width τ > 0.
    n : int
        Input size n ≥ 0.

    Returns
    -------
    bool
        Whether ε τ n >= 2.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Corollary 1 and Theorem 3 (privacy part).
    """
    eps = check_epsilon(epsilon, positive=True)
    tau = check_positive_real(tau, "tau")
    n = check_positive_int(n, "n", minimum=0)
    return bool(eps * tau * n >= 2.0)


def paper_theorem3_delta(epsilon: float, tau: float, n: int) -> float:
    """The paper's δ for STLap on inputs of size n: δ*(ε, τ n) (valid only when ε τ n >= 2).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    tau : float
        Relative width τ > 0.
    n : int
        Input size n ≥ 0 (ε τ n >= 2 is required).

    Returns
    -------
    float
        δ*(ε, τ n) (:func:`delta_star`).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Theorem 3 / Corollary 1 *as printed*.  This is a
    correct guarantee only for ``q_mode="fixed"`` (with q = τ n public) or for a single non-empty bar;
    see erratum E1.  Raises ``ValueError`` when the stated condition ε τ n >= 2 fails.
    """
    if not paper_corollary1_applies(epsilon, tau, n):
        raise ValueError(f"Theorem 3 requires epsilon*tau*n >= 2, got {epsilon}*{tau}*{n} = {epsilon * tau * n}")
    return delta_star(epsilon, tau * n)


def paper_delta_explicit_bound(epsilon: float, q: float) -> float:
    """Explicit form of Theorem 3's ε e^{-Ω(ετn)}: for εq >= 2, δ* <= (e^ε - 1) e^{-εq/2} / (2(1 - 1/e)).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    q : float
        Truncation width q > 0, with ε q >= 2.

    Returns
    -------
    float
        (e^ε - 1) e^{-εq/2} / (2(1 - 1/e)), an upper bound on δ*(ε, q).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Theorem 3, with the Ω-constant made explicit (derived:
    e^{a} - 1 >= e^{a}(1 - 1/e) for a = εq/2 >= 1).
    """
    eps = check_epsilon(epsilon, positive=True)
    q = check_positive_real(q, "q")
    if eps * q < 2:
        raise ValueError(f"the explicit bound needs epsilon*q >= 2, got {eps * q!r}")
    return float(np.expm1(eps) * np.exp(-eps * q / 2.0) / (2.0 * (1.0 - np.exp(-1.0))))


def fixed_q_delta(epsilon: float, q: float) -> float:
    """Exact δ of STLap with a fixed, public width q: F_q(-q + 1) (1 if q <= 1).

    With q independent of the data, neighbours differ in one bar only, whose noisy (pre-rounding)
    count is a unit shift of a density with log-ratio <= ε on the overlap, so the hockey-stick
    divergence at ε is the non-overlap mass F_q(-q+1) (rounding is post-processing).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    q : float
        The fixed, public truncation width q ≥ 0.

    Returns
    -------
    float
        F_q(-q + 1), the STLap noise CDF at -q + 1; 1.0 when q <= 1.

    Notes
    -----
    Implements: the corrected privacy statement for Algorithm 1 with ``q_mode="fixed"`` (replaces
    Bansal et al. (AISTATS 2022), Theorem 3 / Claim 4); equals δ*(ε, q) for q >= 2.
    """
    eps = check_epsilon(epsilon, positive=True)
    q = check_positive_real(q, "q", allow_zero=True)
    if q <= 1:
        return 1.0
    return float(stlap_noise_cdf(-q + 1.0, q, eps))


def relative_q_bound(epsilon: float, tau: float, n_min: int, other_bars: int) -> tuple[float, float]:
    """Proven (ε', δ') for STLap with q = τ|x| (the paper's Algorithm 1), for one neighbour pair size.

    Let the smaller neighbour have N = ``n_min`` items, q' = τN, q = τ(N+1), A = ln((1-e^{-εq/2}) /
    (1-e^{-εq'/2})), and let K = ``other_bars`` be the number of non-empty bars other than the one
    that differs.  Then

        ε' = ε(1 - τ/2) + A + K (A + ετ/2),
        δ' = max(F_{q'}(-q' + 1 - τ),  F_q(-q + 1) + K F_q(-q + τ)).

    Proof: per-coordinate privacy-loss bounds of the unrounded noisy counts (bar i*: |loss| <=
    ε(1-τ/2)+A off a non-overlap set of mass F_q(-q+1) resp. F_{q'}(-q'+1-τ); every other non-empty
    bar: |loss| <= A + ετ/2 off an x-only set of mass F_q(-q+τ)), then basic composition over the
    independent bars and post-processing (rounding).  Requires 0 < τ <= 1.

    Parameters
    ----------
    epsilon : float
        The noise ε > 0.
    tau : float
        Relative width τ ∈ (0, 1].
    n_min : int
        Size N ≥ 0 of the smaller neighbour (N = 0 gives (inf, 1.0)).
    other_bars : int
        K ≥ 0, the number of non-empty bars other than the one that differs.

    Returns
    -------
    (float, float)
        (ε', δ'), δ' capped at 1.

    Notes
    -----
    Implements: a corrected replacement for Bansal et al. (AISTATS 2022), Lemma 9 / Claim 3 (App. F),
    whose proof assumes the other bars keep their noise law; checked against the exact δ(ε) of
    :func:`pml_design.flexible.pld.exact_delta` in ``tests/test_flexible_accounting.py``.
    """
    eps = check_epsilon(epsilon, positive=True)
    tau = check_positive_real(tau, "tau")
    if tau > 1:
        raise ValueError(f"relative_q_bound needs 0 < tau <= 1, got tau={tau!r}")
    n = check_positive_int(n_min, "n_min", minimum=0)
    k = check_positive_int(other_bars, "other_bars", minimum=0)
    qp, q = tau * n, tau * (n + 1)
    a_big = float(np.log(-np.expm1(-eps * q / 2.0)) - (np.log(-np.expm1(-eps * qp / 2.0)) if qp > 0 else -np.inf))
    if qp == 0:
        return float("inf"), 1.0
    eps_prime = eps * (1 - tau / 2.0) + a_big + k * (a_big + eps * tau / 2.0)
    d_rev = float(stlap_noise_cdf(-qp + 1.0 - tau, qp, eps))
    d_fwd = float(stlap_noise_cdf(-q + 1.0, q, eps)) + k * float(stlap_noise_cdf(-q + tau, q, eps))
    return float(eps_prime), float(min(1.0, max(d_rev, d_fwd)))


def guarantee_fixed_q(epsilon: float, q: float) -> PrivacyGuarantee:
    """Certified guarantee of STLap / BucketHist run with a fixed public q (any input, any support).

    Parameters
    ----------
    epsilon : float
        The noise ε > 0.
    q : float
        The fixed, public truncation width q ≥ 0.

    Returns
    -------
    PrivacyGuarantee
        (ε, :func:`fixed_q_delta`) for all add/remove-one neighbour pairs.

    Notes
    -----
    Implements: :func:`fixed_q_delta` (corrected Theorem 3 / Theorem 4 of Bansal et al., AISTATS 2022).
    """
    eps = check_epsilon(epsilon, positive=True)
    delta = fixed_q_delta(eps, q)
    return PrivacyGuarantee(
        epsilon=eps,
        delta=delta,
        statement="all add/remove-one neighbour pairs, any size and support (q fixed and public)",
        source="fixed-q STLap: delta = F_q(-q+1), exact for the unrounded mechanism",
    )


def guarantee_relative_q(epsilon: float, tau: float, n_min: int, support_bound: int) -> PrivacyGuarantee:
    """Certified guarantee of STLap with q = τ|x| for all neighbour pairs of size >= ``n_min``.

    ``support_bound`` bounds the number of non-empty bars of either input (e.g. the number of bars of
    the grid, or the number of buckets in BucketHist), so K <= support_bound - 1.  ε' and δ' decrease
    in N, hence the bound at N = ``n_min`` covers every larger pair.

    Parameters
    ----------
    epsilon : float
        The noise ε > 0.
    tau : float
        Relative width τ ∈ (0, 1].
    n_min : int
        Smallest size of the smaller neighbour covered.
    support_bound : int
        Bound ≥ 1 on the number of non-empty bars of either input.

    Returns
    -------
    PrivacyGuarantee
        The (ε', δ') of :func:`relative_q_bound` at N = ``n_min``, K = ``support_bound - 1``, with its scope.
        Its ``statement`` names ``n_min``, and ε', δ' are strictly monotone in it: when ``n_min`` is computed
        from the data (``stlap_release`` and ``bucket_hist`` use |x| - 1) the whole object is PRIVATE and must
        not be published.  Publish only a guarantee computed at a public N chosen without looking at the data
        (``release.publishable(n_min_public=N)``).

    Notes
    -----
    Implements: :func:`relative_q_bound` (corrected Lemma 9 / Theorem 3 / Theorem 4 of Bansal et al.).
    """
    support_bound = check_positive_int(support_bound, "support_bound")
    e1, d1 = relative_q_bound(epsilon, tau, n_min, support_bound - 1)
    return PrivacyGuarantee(
        epsilon=e1,
        delta=d1,
        statement=(
            f"all add/remove-one neighbour pairs whose smaller input has >= {int(n_min)} items and "
            f"<= {support_bound} non-empty bars (q = tau*|x|, tau = {tau:g}, noise epsilon = {epsilon:g})"
        ),
        source="relative-q STLap: per-bar loss bounds + basic composition (replaces Lemma 9 / Theorem 3)",
    )


def paper_buckethist_tau(alpha: float, beta: float, B: float, d: int = 1) -> float:
    """τ as printed in Theorem 4 (d = 1: α·2β/B) and Remark 5 (α (2β/(B√d))^d).

    Parameters
    ----------
    alpha : float
        α > 0, the fraction of items BucketHist may drop ((α, β, γ)-accuracy, Definition 3).
    beta : float
        β > 0, the accuracy radius (buckets have width w = 2β/√d).
    B : float
        B > 0, the data domain is [0, B)^d.
    d : int, default 1
        Dimension d ≥ 1.

    Returns
    -------
    float
        α (2β/(B√d))^d.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Theorem 4 / Theorems 5-6 / Remark 5, as printed.  It
    equals the τ the mechanism uses (:func:`buckethist_tau`) only when B√d/(2β) is an integer
    (erratum E3).
    """
    alpha = check_positive_real(alpha, "alpha")
    beta = check_positive_real(beta, "beta")
    B = check_positive_real(B, "B")
    d = check_positive_int(d, "d")
    return float(alpha * (2.0 * beta / (B * np.sqrt(d))) ** d)


def buckethist_tau(alpha: float, beta: float, B: float, d: int = 1) -> float:
    """τ = α/t actually used by BucketHist: t = ceil(B/w)^d with w = 2β/√d (w = 2β for d = 1).

    Parameters
    ----------
    alpha : float
        α > 0, the fraction of items BucketHist may drop ((α, β, γ)-accuracy, Definition 3).
    beta : float
        β > 0, the accuracy radius (buckets have width w = 2β/√d).
    B : float
        B > 0, the data domain is [0, B)^d.
    d : int, default 1
        Dimension d ≥ 1.

    Returns
    -------
    float
        α / ceil(B/w)^d with w = 2β/√d.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 3 (t = ceil, erratum E3) and Algorithm 5
    (w = 2β/√d, erratum E4).
    """
    alpha = check_positive_real(alpha, "alpha")
    beta = check_positive_real(beta, "beta")
    B = check_positive_real(B, "B")
    d = check_positive_int(d, "d")
    w = 2.0 * beta / np.sqrt(d)
    return float(alpha / int(np.ceil(B / w - 1e-12)) ** d)
