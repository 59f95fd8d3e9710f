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
stability_histogram          non-empty bars + Lap(1/ε), kept if > 1 + ln(1/(2δ))/ε (BNS19)  (ε, δ)-DP
choosing_histogram           J bars by exponential mechanism (score = height) without     ε-DP
                             replacement, + Lap noise on chosen counts (BNS16-style)
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

from pml_design._validation import as_generator, check_delta, check_epsilon, check_positive_int
from pml_design.flexible._checks import check_histogram
from pml_design.flexible.statistics import UNDEFINED, evaluate_statistic

__all__ = [
    "distance_to_instability",
    "exponential_mechanism",
    "propose_test_release",
    "smooth_sensitivity_mechanism",
    "stability_histogram",
    "choosing_histogram",
]

Stat = Literal["max", "max_k", "mode"]


def distance_to_instability(x: Any, statistic: Stat, k: int = 1) -> float:
    """Add/remove distance from x to {y : LS_f(y) > 0} (undefined counts as a distinct value).

    * max_k (max = max_1), m = max_k(x): min(x(m) - k, min_{i>m} (k - 1 - x(i))); if undefined,
      k - 1 - max(x).
    * mode (a, h1 = x(a), smallest index on ties): min(|x| - 1, min_{b != a} (h1 - x(b) - [b < a]));
      0 if x is empty.

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


def stability_histogram(x: Any, epsilon: float, delta: float, *, n_runs: int = 1, rng: Any = None) -> np.ndarray:
    """Stability-based sanitized histogram: ỹ(g) = x(g) + Lap(1/ε) on supp(x), kept iff ỹ > 1 + ln(1/(2δ))/ε.

    Privacy (add/remove-one): a bar present in both inputs is ε-DP (Laplace, sensitivity 1); a bar
    present in one input only is released with probability Pr[1 + Lap(1/ε) > T] = δ; so (ε, δ)-DP.

    Returns
    -------
    numpy.ndarray, shape (n_runs, B)

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), App. L.2 (Stability-Based Sanitized Histogram,
    Bun-Nissim-Stemmer 2019 / Vadhan 2017 Thm 3.5, add/remove form).
    """
    xv = check_histogram(x, "x")
    eps = check_epsilon(epsilon, positive=True)
    d = check_delta(delta)
    n_runs = check_positive_int(n_runs, "n_runs")
    gen = as_generator(rng)
    T = 1.0 + np.log(1.0 / (2.0 * d)) / eps
    noisy = xv[None, :] + gen.laplace(0.0, 1.0 / eps, size=(n_runs, xv.size))
    return np.where((xv[None, :] > 0) & (noisy > T), noisy, 0.0)


def choosing_histogram(x: Any, epsilon: float, *, n_rounds: int = 10, n_runs: int = 1, rng: Any = None) -> np.ndarray:
    """Choosing-based histogram: J rounds of the exponential mechanism (score = bar height, sensitivity 1)
    choosing bars without replacement, then Laplace noise on the chosen counts; pure ε-DP.

    Each of the J choices uses ε_0 = ε/(J+1) (Pr ∝ exp(ε_0 h/2), sampled jointly by the Gumbel-top-J
    trick), and the chosen counts get Lap(1/ε_0) (one bar changes between neighbours): ε in total.

    Returns
    -------
    numpy.ndarray, shape (n_runs, B)
        Noisy counts (clipped at 0) on the chosen bars, 0 elsewhere.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), App. L.2 (Choosing-Based Histogram, after
    Beimel-Nissim-Stemmer 2016); J and the ε split are choices (paper: unspecified).
    """
    xv = check_histogram(x, "x")
    eps = check_epsilon(epsilon, positive=True)
    J = min(check_positive_int(n_rounds, "n_rounds"), xv.size)
    n_runs = check_positive_int(n_runs, "n_runs")
    gen = as_generator(rng)
    e0 = eps / (J + 1)
    keys = e0 * xv[None, :] / 2.0 + gen.gumbel(size=(n_runs, xv.size))
    chosen = np.argpartition(-keys, J - 1, axis=1)[:, :J]
    out = np.zeros((n_runs, xv.size))
    rows = np.arange(n_runs)[:, None]
    out[rows, chosen] = np.maximum(0.0, xv[chosen] + gen.laplace(0.0, 1.0 / e0, size=chosen.shape))
    return out
