"""Exact δ(ε) of STLap for concrete neighbouring inputs, via privacy-loss distributions (PLDs).

The released histogram is a product over bars of independent integer outputs
y(g) = max(0, round(x(g) + z_g)), z_g ~ π_q, whose probability mass functions are computed exactly
from the CDF of π_q (rounding and clipping included).  For neighbours x, x' the privacy loss
L = log P_x(y)/P_{x'}(y) is a sum of independent per-bar losses, and

    δ_{x||x'}(ε) = Pr_{y~P_x}[L = ∞] + E_{y~P_x}[(1 - e^{ε - L})_+].

Per-bar losses are put on a grid of width h, rounded *up* (giving an upper bound on δ) and *down*
(a lower bound), and convolved with FFTs; identical bars are convolved by repeated squaring.  The
result is a certified bracket [δ_lower, δ_upper] of the true δ(ε) (up to floating-point error of the
FFT, about 1e-13 absolute), in both directions (the reported δ is the max of the two).

Implements: an exact numerical computation of δ(ε) for Bansal et al. (AISTATS 2022), Algorithm 1,
used to confirm the privacy gap of Lemma 9 / Theorem 3 with q = τ|x| (erratum E1) and to check
the fixed-q and replacement bounds of :mod:`pml_design.flexible.accounting`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.signal import fftconvolve

from pml_design._validation import check_epsilon, check_finite_array, check_positive_real
from pml_design.flexible._checks import check_histogram
from pml_design.flexible.mechanisms import stlap_q
from pml_design.flexible.noise import stlap_noise_cdf

__all__ = ["DeltaCurve", "bar_output_pmf", "exact_delta", "brute_force_delta"]


def _interval_prob(a: np.ndarray, b: np.ndarray, q: float, eps: float) -> np.ndarray:
    """Pr[a < Z <= b] for Z ~ π_q, accurate in both tails (uses the symmetry Z -> -q - Z)."""
    lower_half = (a + b) / 2.0 <= -q / 2.0
    direct = stlap_noise_cdf(b, q, eps) - stlap_noise_cdf(a, q, eps)
    mirrored = stlap_noise_cdf(-q - a, q, eps) - stlap_noise_cdf(-q - b, q, eps)
    return np.maximum(np.where(lower_half, direct, mirrored), 0.0)


def bar_output_pmf(count: int, q: float, epsilon: float) -> np.ndarray:
    """Exact pmf of one released bar y = max(0, round(count + z)), z ~ π_q, over y = 0..count.

    Parameters
    ----------
    count : int
        The bar's true count c ≥ 0.
    q : float
        Truncation width q ≥ 0 (q = 0: no noise, y = c).
    epsilon : float
        ε > 0 of the noise.

    Returns
    -------
    numpy.ndarray, shape (count + 1,)
        Pr[y = k] for k = 0..count.

    Notes
    -----
    Implements: the output law of Bansal et al. (AISTATS 2022), Algorithm 1, line 3, for one bar.
    """
    eps = check_epsilon(epsilon, positive=True)
    q = check_positive_real(q, "q", allow_zero=True)
    c = int(count)
    k = np.arange(c + 1, dtype=float)
    if q == 0:
        out = np.zeros(c + 1)
        out[c] = 1.0
        return out
    # y = k (k >= 1)  <=>  k - 1/2 <= c + z < k + 1/2 ; y = 0 <=> c + z < 1/2 (ties have prob. 0)
    a = np.where(k == 0, -np.inf, k - 0.5 - c)
    b = k + 0.5 - c
    a = np.maximum(a, -q - 1.0)
    return _interval_prob(a, b, q, eps)


@dataclass(frozen=True)
class DeltaCurve:
    """δ(ε) bracket for one neighbour pair.

    Attributes
    ----------
    epsilons : numpy.ndarray
        ε grid.
    delta_lower, delta_upper : numpy.ndarray
        Certified bracket of max(δ_{x||x'}(ε), δ_{x'||x}(ε)).
    q, q_prime : float
        Truncation widths used for x and x'.
    grid_width : float
        Loss discretisation h.
    """

    epsilons: np.ndarray
    delta_lower: np.ndarray
    delta_upper: np.ndarray
    q: float
    q_prime: float
    grid_width: float


def _self_convolve(p: np.ndarray, off: int, m: int) -> tuple[np.ndarray, int]:
    res, roff = np.ones(1), 0
    base, boff = p, off
    while m:
        if m & 1:
            res = _conv(res, base)
            roff += boff
        m >>= 1
        if m:
            base = _conv(base, base)
            boff *= 2
    return res, roff


def _conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.size * b.size <= 2_000_000:
        return np.convolve(a, b)
    return np.maximum(fftconvolve(a, b), 0.0)


def _direction(groups: list[tuple[np.ndarray, np.ndarray, int]], h: float, eps_grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """δ bracket of P||Q for independent bars; groups = (pmf_P, pmf_Q, multiplicity)."""
    out = []
    for rounding in (np.floor, np.ceil):
        finite_total = 1.0
        pmf, off = np.ones(1), 0
        for pp, qq, mult in groups:
            n = max(pp.size, qq.size)
            pp = np.pad(pp, (0, n - pp.size))
            qq = np.pad(qq, (0, n - qq.size))
            keep = pp > 0
            fin = keep & (qq > 0)
            inf_mass = float(pp[keep & (qq <= 0)].sum())
            finite_total *= (1.0 - inf_mass) ** mult
            if not np.any(fin):
                continue
            loss = np.log(pp[fin]) - np.log(qq[fin])
            idx = rounding(loss / h).astype(np.int64)
            lo = int(idx.min())
            bar = np.bincount(idx - lo, weights=pp[fin])
            bar_m, off_m = _self_convolve(bar, lo, mult)
            pmf = _conv(pmf, bar_m)
            off += off_m
        losses = (off + np.arange(pmf.size)) * h
        inf_total = max(0.0, 1.0 - finite_total)
        d = [inf_total + float(np.sum(pmf * np.maximum(0.0, -np.expm1(e - losses)))) for e in eps_grid]
        out.append(np.minimum(np.array(d), 1.0))
    return out[0], out[1]


def _pairs(x: np.ndarray, xp: np.ndarray) -> tuple[int, int]:
    diff = x - xp
    if not (np.abs(diff).sum() == 1):
        raise ValueError("x and x_prime must be add/remove-one neighbours (sum |x - x'| = 1)")
    return int(x.sum()), int(xp.sum())


def exact_delta(x: Any, x_prime: Any, tau: float, epsilon: float, epsilons: Any, *,
                q_mode: Literal["relative", "fixed"] = "relative", n_public: int | None = None,
                grid_width: float | None = None) -> DeltaCurve:
    """Exact (bracketed) δ(ε) of STLap between two concrete neighbouring histograms.

    Parameters
    ----------
    x, x_prime : array_like of int
        Neighbouring histograms over the same bars (sum |x - x'| = 1).
    tau, epsilon : float
        STLap parameters (ε is the noise parameter).
    epsilons : array_like
        Values of ε at which δ(ε) is evaluated.
    q_mode, n_public
        As in :func:`pml_design.flexible.stlap`.
    grid_width : float, optional
        Loss grid h (default: min(1e-4, 1e-3 / #non-empty bars), at least 1e-6).

    Returns
    -------
    DeltaCurve

    Notes
    -----
    Implements: exact privacy accounting of Bansal et al. (AISTATS 2022), Algorithm 1 (with rounding),
    to test Lemma 9 / Corollary 1 / Theorem 3 (erratum E1).
    """
    a = check_histogram(x, "x")
    b = check_histogram(x_prime, "x_prime")
    if a.shape != b.shape:
        raise ValueError(f"x and x_prime must have the same shape, got {a.shape} and {b.shape}")
    eps = check_epsilon(epsilon, positive=True)
    eg = check_finite_array(epsilons, "epsilons", ndim=1) if np.ndim(epsilons) else check_finite_array([epsilons], "epsilons", ndim=1)
    na, nb = _pairs(a, b)
    qa = stlap_q(na, tau, q_mode=q_mode, n_public=n_public)
    qb = stlap_q(nb, tau, q_mode=q_mode, n_public=n_public)
    nz = (a > 0) | (b > 0)
    pairs = Counter(zip(a[nz].tolist(), b[nz].tolist()))
    h = grid_width if grid_width is not None else float(np.clip(1e-3 / max(1, int(nz.sum())), 1e-6, 1e-4))
    h = check_positive_real(h, "grid_width")
    cache: dict[tuple[int, float], np.ndarray] = {}

    def pmf(c: int, q: float) -> np.ndarray:
        if (c, q) not in cache:
            cache[(c, q)] = bar_output_pmf(c, q, eps)
        return cache[(c, q)]

    fwd = [(pmf(ca, qa), pmf(cb, qb), m) for (ca, cb), m in pairs.items()]
    rev = [(pmf(cb, qb), pmf(ca, qa), m) for (ca, cb), m in pairs.items()]
    lo1, up1 = _direction(fwd, h, eg)
    lo2, up2 = _direction(rev, h, eg)
    return DeltaCurve(epsilons=eg, delta_lower=np.maximum(lo1, lo2), delta_upper=np.maximum(up1, up2),
                      q=qa, q_prime=qb, grid_width=h)


def brute_force_delta(x: Any, x_prime: Any, tau: float, epsilon: float, eps_eval: float, *,
                      q_mode: Literal["relative", "fixed"] = "relative", n_public: int | None = None) -> float:
    """δ(ε) by enumerating every joint output (tiny inputs only: product of bar sizes <= 10^6).

    Parameters
    ----------
    x : array_like of int
        The first histogram.
    x_prime : array_like of int
        A neighbour of ``x`` (add/remove one item).
    tau : float
        Per-bar drop fraction τ ∈ (0, 1].
    epsilon : float
        ε > 0 of the noise.
    eps_eval : float
        The ε ≥ 0 at which δ is evaluated.
    q_mode : {"relative", "fixed"}, default "relative"
        As in :func:`~pml_design.flexible.mechanisms.stlap`.
    n_public : int, optional
        As in :func:`~pml_design.flexible.mechanisms.stlap`.

    Returns
    -------
    float
        max(δ_{x||x'}(ε), δ_{x'||x}(ε)) at ε = ``eps_eval``, exact up to rounding.

    Notes
    -----
    Implements: an independent exact check of :func:`exact_delta` (no discretisation, no FFT).
    """
    a = check_histogram(x, "x")
    b = check_histogram(x_prime, "x_prime")
    eps = check_epsilon(epsilon, positive=True)
    na, nb = _pairs(a, b)
    qa = stlap_q(na, tau, q_mode=q_mode, n_public=n_public)
    qb = stlap_q(nb, tau, q_mode=q_mode, n_public=n_public)
    nz = np.flatnonzero((a > 0) | (b > 0))
    size = math.prod(int(max(a[i], b[i])) + 1 for i in nz)  # exact: no int64 overflow on large counts
    if size > 1_000_000:  # the size is a function of the counts: not quoted
        raise ValueError("output space too large for brute force (more than 10^6 joint outputs)")
    PA = np.ones(1)
    PB = np.ones(1)
    for i in nz:
        m = max(a[i], b[i]) + 1
        pa = np.pad(bar_output_pmf(a[i], qa, eps), (0, m - a[i] - 1))
        pb = np.pad(bar_output_pmf(b[i], qb, eps), (0, m - b[i] - 1))
        PA = np.multiply.outer(PA, pa).ravel()
        PB = np.multiply.outer(PB, pb).ravel()
    e = np.exp(check_epsilon(eps_eval))
    return float(max(np.maximum(PA - e * PB, 0).sum(), np.maximum(PB - e * PA, 0).sum()))
