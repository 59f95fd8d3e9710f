"""Baselines of Section 6 / Appendix L.2, each with its own privacy statement (add/remove-one neighbours).

All act on a histogram x over the grid 0..B-1 and a statistic in {"max", "max_k", "mode"}; scalar
mechanisms return ``n_runs`` outputs (indices in [0, B-1]), histogram mechanisms return ``n_runs``
sanitised histograms on which the statistic is then evaluated.

===========================  ===========================================================  =============
mechanism                    construction                                                 privacy
===========================  ===========================================================  =============
exponential_mechanism        Pr[r] ∝ exp(-ε |f(x) - r| / (2Δ)), Δ = B-1 (McSherry-Talwar)  ε-DP
propose_test_release         d(x) + Lap(1/ε) > ln(1/δ)/ε ? f(x) : uniform (Dwork-Lei)     (ε, δ)-DP
smooth_sensitivity           f(x) + (2S(x)/ε) Lap(1), S = (B-1) e^{-b d(x)},               (ε, δ)-DP
                             b = ε/(2 ln(2/δ)) (Nissim-Raskhodnikova-Smith)
stability_histogram          non-empty bars + discrete Lap(ε), kept if >= k* (BNS19)         (ε, δ)-DP
choosing_mechanism           best + Lap(2/ε) >= t ? exponential mechanism (score = height)  (ε, δ)-DP
                             over the NON-EMPTY bars : ⊥  (Beimel-Nissim-Stemmer 2016)
choosing_histogram           J choosing rounds without repetition (ε/2J, δ/J each), then  (ε, δ)-DP
                             Lap(2/ε) on the chosen counts (SanPoints, BNS16)
===========================  ===========================================================  =============

d(x) is the add/remove distance from x to the set of histograms with non-zero local sensitivity
(:func:`distance_to_instability`); S(x) is a β-smooth upper bound on the local sensitivity
(S >= LS because d = 0 whenever LS > 0, and S(x) <= e^b S(x') because d is 1-Lipschitz).

Undefined values: an undefined f(x) is treated as index 0 by the smooth-sensitivity mechanism (the
bound above holds for that extension) and released as a uniform random index by PTR and the
exponential mechanism (post-processing of "undefined").

Implements: Bansal et al. (AISTATS 2022), Section 6 and Appendix L.2; completions from the cited works
(McSherry-Talwar 2007; Dwork-Lei 2009 / Vadhan 2017 §3.3; Nissim et al. 2007; Bun-Nissim-Stemmer
2019 / Vadhan Thm 3.5; Beimel-Nissim-Stemmer 2016), choices documented in ``docs/flexible.md``.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from pml_design._validation import as_generator, check_delta, check_epsilon, check_positive_int, fmt
from pml_design.flexible._checks import check_histogram
from pml_design.priors import dp_release_counts
from pml_design.flexible.statistics import UNDEFINED, evaluate_statistic

__all__ = [
    "distance_to_instability",
    "exponential_mechanism",
    "propose_test_release",
    "smooth_sensitivity_mechanism",
    "stability_histogram",
    "stability_threshold",
    "choosing_histogram",
    "choosing_mechanism",
    "choosing_threshold",
]

Stat = Literal["max", "max_k", "mode"]


def distance_to_instability(x: Any, statistic: Stat, k: int = 1) -> float:
    """Add/remove distance from x to {y : LS_f(y) > 0} (undefined counts as a distinct value).

    * max_k (max = max_1), m = max_k(x): min(x(m) - k, min_{i>m} (k - 1 - x(i))); if undefined,
      k - 1 - max(x).
    * mode (a, h1 = x(a), smallest index on ties): min(|x| - 1, min_{b != a} (h1 - x(b) - [b < a]));
      0 if x is empty.

    Parameters
    ----------
    x : array_like of int
        The histogram over the grid 0..B-1.
    statistic : {"max", "max_k", "mode"}
        Which statistic.
    k : int, default 1
        Threshold of ``"max_k"`` (``"max"`` uses 1; ignored by ``"mode"``).

    Returns
    -------
    float
        d(x) (negative values mean x itself is unstable: d = 0 in effect).

    Notes
    -----
    Implements: the stability radius used by PTR in Bansal et al. (AISTATS 2022), App. L.2
    (derived here; checked by breadth-first search over small histograms).
    """
    xv = check_histogram(x, "x")
    k = check_positive_int(k, "k")
    if statistic == "max":
        k = 1
    if statistic in ("max", "max_k"):
        m = evaluate_statistic(xv, "max_k", k)
        if m == UNDEFINED:
            return float(k - 1 - xv.max())
        right = xv[m + 1:]
        tail = float(np.min(k - 1 - right)) if right.size else float("inf")
        return float(min(xv[m] - k, tail))
    if statistic == "mode":
        n = int(xv.sum())
        if n == 0:
            return 0.0
        a = int(np.argmax(xv))
        h1 = xv[a]
        b = np.arange(xv.size)
        gaps = h1 - xv - (b < a)
        gaps = np.delete(gaps, a)
        return float(min(n - 1, gaps.min() if gaps.size else np.inf))
    raise ValueError(f"statistic must be 'max', 'max_k' or 'mode', got {statistic!r}")


def _true_value(xv: np.ndarray, statistic: Stat, k: int) -> int:
    return int(evaluate_statistic(xv, statistic, k if statistic == "max_k" else 1))


def exponential_mechanism(x: Any, statistic: Stat, epsilon: float, *, k: int = 1, n_runs: int = 1,
                          rng: Any = None) -> np.ndarray:
    """Exponential mechanism with utility -|f(x) - r| over r in {0..B-1}, sensitivity Δ = B - 1; ε-DP.

    Parameters
    ----------
    x : array_like of int
        The histogram over the grid 0..B-1.
    statistic : {"max", "max_k", "mode"}
        Which statistic.
    epsilon : float
        ε > 0.
    k : int, default 1
        Threshold of ``"max_k"``.
    n_runs : int, default 1
        Number of independent outputs.
    rng : numpy.random.Generator, int or None
        Randomness (see :func:`~pml_design._validation.as_generator`).

    Returns
    -------
    numpy.ndarray, shape (n_runs,)
        Released indices in 0..B-1 (uniform when f(x) is undefined).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), App. L.2 (Exponential Mechanism, McSherry-Talwar 2007).
    """
    xv = check_histogram(x, "x")
    eps = check_epsilon(epsilon, positive=True)
    n_runs = check_positive_int(n_runs, "n_runs")
    gen = as_generator(rng)
    B = xv.size
    f = _true_value(xv, statistic, k)
    r = np.arange(B)
    score = np.zeros(B) if f == UNDEFINED else -np.abs(f - r).astype(float)
    logits = eps * score / (2.0 * max(B - 1, 1))
    p = np.exp(logits - logits.max())
    return gen.choice(B, size=n_runs, p=p / p.sum())


def propose_test_release(x: Any, statistic: Stat, epsilon: float, delta: float, *, k: int = 1, n_runs: int = 1,
                         rng: Any = None) -> np.ndarray:
    """PTR "releasing stable values": f(x) if d(x) + Lap(1/ε) > ln(1/δ)/ε, else a uniform index; (ε, δ)-DP.

    Parameters
    ----------
    x : array_like of int
        The histogram over the grid 0..B-1.
    statistic : {"max", "max_k", "mode"}
        Which statistic.
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1).
    k : int, default 1
        Threshold of ``"max_k"``.
    n_runs : int, default 1
        Number of independent outputs.
    rng : numpy.random.Generator, int or None
        Randomness (see :func:`~pml_design._validation.as_generator`).

    Returns
    -------
    numpy.ndarray, shape (n_runs,)
        f(x) where the test passes (and f(x) is defined), else a uniform index in 0..B-1.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), App. L.2 (PTR; Dwork-Lei 2009, Vadhan 2017 §3.3).
    """
    xv = check_histogram(x, "x")
    eps = check_epsilon(epsilon, positive=True)
    d = check_delta(delta)
    n_runs = check_positive_int(n_runs, "n_runs")
    gen = as_generator(rng)
    B = xv.size
    f = _true_value(xv, statistic, k)
    dist = distance_to_instability(xv, statistic, k)
    noisy = dist + gen.laplace(0.0, 1.0 / eps, size=n_runs)
    rand = gen.integers(0, B, size=n_runs)
    ok = (noisy > np.log(1.0 / d) / eps) & (f != UNDEFINED)
    return np.where(ok, f, rand)


def smooth_sensitivity_mechanism(x: Any, statistic: Stat, epsilon: float, delta: float, *, k: int = 1,
                                 n_runs: int = 1, rng: Any = None) -> np.ndarray:
    """Smooth-sensitivity mechanism with Laplace noise: f(x) + (2 S(x)/ε) Lap(1), rounded and clipped; (ε, δ)-DP.

    S(x) = (B - 1) e^{-b d(x)}, b = ε / (2 ln(2/δ)), is a b-smooth upper bound on the local sensitivity
    (NRS07, Lemma 2.6 / Example: Laplace with α = ε/2, β = ε/(2 ln(2/δ))).

    Parameters
    ----------
    x : array_like of int
        The histogram over the grid 0..B-1.
    statistic : {"max", "max_k", "mode"}
        Which statistic (undefined f(x) counts as index 0).
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1).
    k : int, default 1
        Threshold of ``"max_k"``.
    n_runs : int, default 1
        Number of independent outputs.
    rng : numpy.random.Generator, int or None
        Randomness (see :func:`~pml_design._validation.as_generator`).

    Returns
    -------
    numpy.ndarray of int64, shape (n_runs,)
        The noisy values rounded to the nearest index and clipped to 0..B-1.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), App. L.2 (Smooth-sensitivity Mechanism, Nissim et al. 2007).
    """
    xv = check_histogram(x, "x")
    eps = check_epsilon(epsilon, positive=True)
    d = check_delta(delta)
    n_runs = check_positive_int(n_runs, "n_runs")
    gen = as_generator(rng)
    B = xv.size
    f = _true_value(xv, statistic, k)
    f = 0 if f == UNDEFINED else f
    b = eps / (2.0 * np.log(2.0 / d))
    S = max(B - 1, 0) * np.exp(-b * distance_to_instability(xv, statistic, k))
    out = f + (2.0 * S / eps) * gen.laplace(0.0, 1.0, size=n_runs)
    return np.clip(np.floor(out + 0.5), 0, B - 1).astype(np.int64)


def stability_threshold(epsilon: float, delta: float) -> int:
    """Integer release threshold k* of :func:`stability_histogram`: a noisy count is kept iff it is >= k*.

    k* = 1 + m with m the least integer >= 0 such that Pr[Z >= m] = e^{-εm}/(1 + e^{-ε}) <= δ for the
    discrete Laplace Z (P(Z = z) ∝ e^{-ε|z|}): a bar with one item, absent from the neighbour, is then released
    with probability <= δ.  This is the integer counterpart of the continuous threshold 1 + ln(1/(2δ))/ε.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    int
        k* >= 1.

    Notes
    -----
    Implements: the threshold of the stability-based histogram (Bun-Nissim-Stemmer 2019; Vadhan 2017,
    Thm 3.5; Bansal et al. (AISTATS 2022), App. L.2), re-derived for discrete Laplace noise on integer counts
    under add/remove-one neighbours.
    """
    eps = check_epsilon(epsilon, positive=True)
    d = check_delta(delta)
    log_tail = lambda m: -eps * m - np.log1p(np.exp(-eps))  # noqa: E731  log Pr[Z >= m], m >= 0
    m = max(0, int(np.ceil((-np.log(d) - np.log1p(np.exp(-eps))) / eps)))
    while m > 0 and log_tail(m - 1) <= np.log(d):  # guard the ceiling against rounding, both ways
        m -= 1
    while log_tail(m) > np.log(d):
        m += 1
    return 1 + m


def stability_histogram(x: Any, epsilon: float, delta: float, *, n_runs: int = 1, rng: Any = None) -> np.ndarray:
    """Stability-based sanitized histogram: ỹ(g) = x(g) + Z_g on supp(x), Z_g discrete Laplace, kept iff ỹ >= k*.

    The noise is the exact discrete Laplace sampler of :func:`pml_design.priors.dp_release_counts`
    (P(Z = z) ∝ e^{-ε|z|}; OpenDP's exact integer sampler when ``rng`` is None), never floating-point Laplace,
    whose low-order bits can rule out neighbours (Mironov 2012).  k* = :func:`stability_threshold`.

    Privacy (add/remove-one, counts are integers): a bar present in both inputs differs by at most 1, and the
    discrete Laplace law has the same likelihood ratio e^{ε|shift|} on the integers as Lap(1/ε) on the reals,
    so its noisy count is ε-DP; keeping it or not (ỹ >= k*) is post-processing.  A bar present in one input
    only (one item) is released with probability Pr[1 + Z >= k*] = e^{-ε(k*-1)}/(1 + e^{-ε}) <= δ.  Hence
    (ε, δ)-DP.  The continuous threshold 1 + ln(1/(2δ))/ε would NOT do on integers (its δ can be up to
    2/(1 + e^{-ε}) times too large), so the threshold is re-derived for the discrete tail.

    Parameters
    ----------
    x : array_like of int
        The histogram over the grid 0..B-1.
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1).
    n_runs : int, default 1
        Number of independent sanitised histograms.
    rng : numpy.random.Generator, int or None
        None (the default; what a release must use): OpenDP's exact sampler with OS randomness.  A seed or
        Generator gives reproducible noise (difference of two geometric variables) for tests and simulations
        only: whoever knows the seed can remove the noise.

    Returns
    -------
    numpy.ndarray of int64, shape (n_runs, B)
        The kept noisy counts, 0 elsewhere.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), App. L.2 (Stability-Based Sanitized Histogram,
    Bun-Nissim-Stemmer 2019 / Vadhan 2017 Thm 3.5, add/remove form), with discrete Laplace noise (Ghosh,
    Roughgarden, Sundararajan 2009) and the threshold re-derived for it.
    """
    xv = check_histogram(x, "x")
    eps = check_epsilon(epsilon, positive=True)
    k_star = stability_threshold(eps, delta)
    n_runs = check_positive_int(n_runs, "n_runs")
    gen = None if rng is None else as_generator(rng)
    supp = np.flatnonzero(xv)
    out = np.zeros((n_runs, xv.size), dtype=np.int64)
    if supp.size:
        noisy = dp_release_counts(np.tile(xv[supp], n_runs), eps, rng=gen).reshape(n_runs, supp.size)
        out[:, supp] = np.where(noisy >= k_star, noisy, 0)
    return out


def choosing_threshold(epsilon: float, delta: float) -> float:
    """Gate threshold t = 1 + 2 ln(1/(2δ))/ε of :func:`choosing_mechanism` (test noise Lap(2/ε)).

    With this t the empty histogram and a one-item histogram (the extremal neighbours) are at hockey-stick
    divergence exactly δ at e^ε: Pr[1 + Lap(2/ε) >= t] = δ.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    float
        t = 1 + 2 ln(1/(2δ))/ε, or 1.0 when δ >= 1/2.

    Notes
    -----
    Implements: the threshold of the choosing mechanism of Beimel-Nissim-Stemmer (Theory of Computing 12,
    2016, Sec. 3, "Choosing Mechanism"), re-derived for the quality "bar height" (1-bounded growth) under
    add/remove-one neighbours with the split ε/2 (test) + ε/2 (selection); see :func:`choosing_mechanism`.
    """
    eps = check_epsilon(epsilon, positive=True)
    d = check_delta(delta)
    return 1.0 + 2.0 * np.log(1.0 / (2.0 * d)) / eps if d < 0.5 else 1.0


def _choose(xv: np.ndarray, excluded: np.ndarray, eps: float, t: float, gen: np.random.Generator) -> np.ndarray:
    """One choosing round per row of ``excluded`` (n_runs, B); returns chosen indices or UNDEFINED (⊥)."""
    n_runs = excluded.shape[0]
    cand = (xv[None, :] > 0) & ~excluded                                  # G(S): positive quality only
    best = np.where(cand, xv[None, :], 0).max(axis=1)
    passed = cand.any(axis=1) & (best + gen.laplace(0.0, 2.0 / eps, size=n_runs) >= t)
    keys = np.where(cand, (eps / 2.0) * xv[None, :] + gen.gumbel(size=excluded.shape), -np.inf)
    return np.where(passed, np.argmax(keys, axis=1), UNDEFINED)


def choosing_mechanism(x: Any, epsilon: float, delta: float, *, exclude: Any = None, n_runs: int = 1,
                       rng: Any = None) -> np.ndarray:
    """Choosing mechanism (BNS16) for "which bar is the highest?": (ε, δ)-DP under add/remove-one.

    1. best = max{x(g) : g not excluded}; if best + Lap(2/ε) < t (:func:`choosing_threshold`), output ⊥.
    2. Otherwise output g from G(x) = {g not excluded : x(g) >= 1} with Pr ∝ exp((ε/2) x(g)).

    Only bars with positive quality (non-empty, not excluded) can be chosen; ⊥ is returned as ``UNDEFINED``.

    Parameters
    ----------
    x : array_like of int
        Histogram (counts per bar).
    epsilon, delta : float
        Privacy parameters (ε > 0, δ in (0, 1]).
    exclude : array_like of bool or int, optional
        Public set of bars that may not be chosen (bool mask of length B or index list).
    n_runs : int
        Number of independent runs.
    rng : Generator, int or None
        Randomness.

    Returns
    -------
    numpy.ndarray of int64, shape (n_runs,)
        Chosen bar per run, ``UNDEFINED`` (-1) for ⊥.

    Notes
    -----
    Implements: Beimel, Nissim, Stemmer, "Private Learning and Sanitization: Pure vs. Approximate
    Differential Privacy", Theory of Computing 12 (2016), Sec. 3 (Choosing Mechanism: noisy test of
    best(S) against a threshold, then the exponential mechanism restricted to G(S) = {f : q(S, f) >= 1}),
    as used by Bansal et al. (AISTATS 2022), App. L.2.  The constants are re-derived for this quality
    (bar height; monotone, 1-bounded growth) and add/remove neighbours, instead of the generic ones:

    * same support: the test is ε/2-DP, the selection ε/2-DP (monotone scores), ε in total;
    * a new non-empty bar j (x(j) = 0 -> 1): Pr[output j] = Pr[best + Lap >= t] e^{ε/2} / Z'
      <= δ for every x (worst case x = 0, where it equals Pr[1 + Lap(2/ε) >= t] = δ), and the
      other outputs lose at most the same mass.

    ``tests/test_flexible_baselines.py`` certifies δ(ε) <= δ (with equality) by exact enumeration of the
    output law over all neighbour pairs of small histograms.
    """
    xv = check_histogram(x, "x")
    eps = check_epsilon(epsilon, positive=True)
    d = check_delta(delta)
    n_runs = check_positive_int(n_runs, "n_runs")
    gen = as_generator(rng)
    mask = _exclusion_mask(exclude, xv.size)
    return _choose(xv, np.broadcast_to(mask, (n_runs, xv.size)), eps, choosing_threshold(eps, d), gen)


def _exclusion_mask(exclude: Any, B: int) -> np.ndarray:
    if exclude is None:
        return np.zeros(B, dtype=bool)
    e = np.asarray(exclude)
    if e.dtype == bool:
        if e.shape != (B,):
            raise ValueError(f"exclude as a mask must have shape ({B},), got {e.shape}")
        return e.copy()
    if e.size and (not np.issubdtype(e.dtype, np.integer) or e.min() < 0 or e.max() >= B):
        raise ValueError(f"exclude must be a boolean mask or indices in [0, {B - 1}], got {fmt(e)}")
    mask = np.zeros(B, dtype=bool)
    mask[e.astype(np.int64).ravel()] = True
    return mask


def choosing_histogram(x: Any, epsilon: float, delta: float, *, n_rounds: int = 10, n_runs: int = 1,
                       rng: Any = None) -> np.ndarray:
    """Choosing-based sanitised histogram (SanPoints of BNS16): J choosing rounds without repetition,
    then Laplace noise on the chosen counts; (ε, δ)-DP under add/remove-one neighbours.

    Budget (basic composition): each of the J rounds runs :func:`choosing_mechanism` with (ε/(2J), δ/J)
    and excludes the bars chosen before; the chosen counts get discrete Laplace noise of scale 2/ε (the exact
    sampler of :func:`pml_design.priors.dp_release_counts`; one count changes between
    neighbours, ε/2).  Bars that are never chosen, and chosen bars whose noisy count is <= 0, are 0.

    Parameters
    ----------
    x : array_like of int
        Histogram.
    epsilon, delta : float
        Privacy parameters of the whole release.
    n_rounds : int
        Number J of choosing rounds (at most J bars are released; the paper leaves J open).
    n_runs : int
        Number of independent releases.
    rng : Generator, int or None
        Randomness.

    Returns
    -------
    numpy.ndarray of int64, shape (n_runs, B)
        Noisy integer counts (clipped at 0) on the chosen bars, 0 elsewhere.  Only non-empty bars of x can be
        non-zero.  ``rng=None`` draws the count noise with OpenDP's exact sampler; a seed is for simulations.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), App. L.2 (Choosing-Based Histogram), i.e. algorithm SanPoints
    of Beimel-Nissim-Stemmer (Theory of Computing 12, 2016): bars "iteratively chosen without repetition as
    per a choosing mechanism", then Laplace noise on their heights.  J and the budget split are choices
    (see docs/errata-flexible.md, E21).
    """
    xv = check_histogram(x, "x")
    eps = check_epsilon(epsilon, positive=True)
    d = check_delta(delta)
    J = min(check_positive_int(n_rounds, "n_rounds"), xv.size)
    n_runs = check_positive_int(n_runs, "n_runs")
    gen = as_generator(rng)
    e_round, d_round = eps / (2.0 * J), d / J
    t = choosing_threshold(e_round, d_round)
    chosen = np.zeros((n_runs, xv.size), dtype=bool)
    rows = np.arange(n_runs)
    for _ in range(J):  # adaptive composition over rounds; each round is vectorised over runs and bars
        g = _choose(xv, chosen, e_round, t, gen)
        ok = g != UNDEFINED
        chosen[rows[ok], g[ok]] = True
    # discrete Laplace of scale 2/ε on the integer counts (exact sampler of priors.dp_release_counts; OpenDP when
    # rng is None): ε/2-DP per chosen count like Lap(2/ε), without floating-point Laplace (Mironov 2012)
    noisy = dp_release_counts(np.tile(xv, n_runs), eps / 2.0, rng=None if rng is None else gen)
    return np.where(chosen, np.maximum(0, noisy.reshape(chosen.shape)), 0)
