"""STLap (Algorithm 1), bucketing (Algorithms 2, 4) and BucketHist (Algorithms 3, 5).

Implements: Bansal et al. (AISTATS 2022), Section 5.1 (Algorithm 1, Theorem 3), Algorithms 2-3
(Theorem 4), Appendix J (Algorithms 4-5, Claim 13), with the corrections of
``docs/errata-flexible.md``:

* Algorithm 1's duplicated line 5 is dropped; only the support of x is noised (empty bars stay 0).
* Algorithm 3 uses t = ceil(B/w) (printed floor), and τ = α/t in both accuracy and privacy.
* Algorithm 5 uses w = 2β/√d for the ℓ2 ground metric (printed w = 2β gives error β√d).
* ``q_mode="relative"`` is the paper's q = τ|x|; its printed δ is wrong for several non-empty bars,
  and the guarantee reported here is the proven replacement bound.  ``q_mode="fixed"`` uses a
  public q = τ·n_public and has the exact guarantee (ε, F_q(-q+1)).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import replace
from typing import Any, Literal

import numpy as np

from pml_design._validation import as_generator, check_epsilon, check_positive_int, check_positive_real
from pml_design.flexible._checks import (MAX_BUCKETS, MAX_COUNT, check_histogram, check_n_buckets, check_real_array,
                                         check_unit_interval)
from pml_design.flexible.accounting import guarantee_fixed_q, guarantee_relative_q
from pml_design.flexible.noise import sample_stlap_noise
from pml_design.flexible.release import BucketHistRelease, STLapRelease

__all__ = [
    "STLapRelease",
    "BucketHistRelease",
    "stlap",
    "stlap_release",
    "stlap_with_q",
    "bucketing",
    "bucketing_points",
    "bucket_hist",
    "bucket_hist_points",
    "stlap_q",
]

QMode = Literal["relative", "fixed"]


def _check_tau(tau: Any) -> float:
    tau = check_positive_real(tau, "tau")
    if tau > 1:
        raise ValueError(f"tau must lie in (0, 1] (fraction of |x| dropped per bar at most), got {tau!r}")
    return tau


def _check_n_items(n_items: Any) -> int:
    """|x| as a Python int >= 0; the message never quotes it (it is a statistic of the protected data)."""
    integral_float = isinstance(n_items, (float, np.floating)) and float(n_items).is_integer() and abs(
        float(n_items)) <= 2**53
    if isinstance(n_items, (bool, np.bool_)) or not (isinstance(n_items, (numbers.Integral, np.integer))
                                                     or integral_float):
        raise TypeError(f"n_items must be an integer (the number of items |x|), got a {type(n_items).__name__}")
    n = int(n_items)
    if n < 0 or n > MAX_COUNT:
        raise ValueError("n_items must be an integer in [0, 2**62 - 1] (the number of items |x|; the exact limit "
                         "of this package)")
    return n


def stlap_q(n_items: int, tau: float, *, q_mode: QMode = "relative", n_public: int | None = None) -> float:
    """Truncation width q used by STLap: τ|x| (``"relative"``) or τ·n_public (``"fixed"``).

    Parameters
    ----------
    n_items : int
        |x| >= 0, the number of items of the input (used by ``"relative"``; an integer, not a float or text).
    tau : float
        Per-bar drop fraction τ ∈ (0, 1].
    q_mode : {"relative", "fixed"}, default "relative"
        ``"relative"``: q = τ·``n_items``; ``"fixed"``: q = τ·``n_public``.
    n_public : int, optional
        Public, data-independent size ≥ 1; required by ``"fixed"`` and refused by ``"relative"``.

    Returns
    -------
    float
        The truncation width q.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 1, line 2 (q := τ|x|), plus the fixed-q variant.
    """
    tau = _check_tau(tau)
    if q_mode == "relative":
        if n_public is not None:
            raise ValueError("n_public is only used with q_mode='fixed'")
        return tau * _check_n_items(n_items)
    if q_mode == "fixed":
        if n_public is None:
            raise ValueError("q_mode='fixed' needs n_public (a public, data-independent size): q = tau * n_public")
        return tau * check_positive_int(n_public, "n_public")
    raise ValueError(f"q_mode must be 'relative' or 'fixed', got {q_mode!r}")


def stlap_with_q(x: Any, q: float, epsilon: float, *, rng: Any = None, n_draws: int | None = None) -> np.ndarray:
    """STLap with an explicit truncation width q: y(g) = max(0, round(x(g) + z_g)), z_g ~ π_q, on supp(x).

    Parameters
    ----------
    x : array_like of int
        Histogram (any shape; each entry one bar).
    q : float
        Truncation width q >= 0.
    epsilon : float
        ε > 0 of the noise.
    rng : Generator, int or None
        Randomness.
    n_draws : int, optional
        If given, return ``n_draws`` independent releases stacked on a new leading axis.

    Returns
    -------
    numpy.ndarray of int64
        Released histogram(s); y <= x pointwise and x - y <= min(x, round(q)) bar by bar.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 1 (lines 1-4, 6; line 5 is a duplicate).
    Rounding is to the nearest integer (ties have probability 0, resolved upwards), computed as
    x + round(z) in integer arithmetic, so y <= x holds exactly for every count below 2**62.
    """
    xv = check_histogram(x, "x", ndim=None)
    q = check_positive_real(q, "q", allow_zero=True)
    eps = check_epsilon(epsilon, positive=True)
    gen = as_generator(rng)
    flat = xv.ravel()
    idx = np.flatnonzero(flat)
    shape = (idx.size,) if n_draws is None else (check_positive_int(n_draws, "n_draws"), idx.size)
    z = sample_stlap_noise(q, eps, size=shape, rng=gen)
    # round(x + z) = x + round(z) for integer x: the count never passes through float64 (exact below 2**62)
    vals = np.maximum(0, flat[idx] + np.floor(z + 0.5).astype(np.int64))
    if n_draws is None:
        out = np.zeros_like(flat)
        out[idx] = vals
        return out.reshape(xv.shape)
    out = np.zeros((shape[0], flat.size), dtype=np.int64)
    out[:, idx] = vals
    return out.reshape((shape[0],) + xv.shape)


def stlap(x: Any, tau: float, epsilon: float, *, rng: Any = None, q_mode: QMode = "relative",
          n_public: int | None = None) -> np.ndarray:
    """Shifted-truncated Laplace mechanism M_STLap^{τ,ε,G}: release a histogram with flexible accuracy.

    Parameters
    ----------
    x : array_like of int
        Histogram over a finite ground set (1-D counts; non-negative integers).
    tau : float
        Per-bar drop fraction τ in (0, 1].
    epsilon : float
        ε > 0 of the noise (the privacy ε of the fixed-q guarantee).
    rng : Generator, int or None
        Randomness.
    q_mode : {"relative", "fixed"}
        ``"relative"``: q = τ|x| as in the paper (privacy: :func:`guarantee_relative_q`, NOT the
        paper's δ*); ``"fixed"``: q = τ·``n_public`` (privacy: exactly (ε, F_q(-q+1))).
    n_public : int, optional
        Public, data-independent size used by ``q_mode="fixed"``.

    Returns
    -------
    numpy.ndarray of int64
        The released histogram y, with y <= x and x(g) - y(g) <= round(q) for every bar.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 1 and Theorem 3.  Use :func:`stlap_release`
    to also get the certified privacy and accuracy parameters of the run.
    """
    xv = check_histogram(x, "x", ndim=1)
    q = stlap_q(int(xv.sum()), tau, q_mode=q_mode, n_public=n_public)
    return stlap_with_q(xv, q, epsilon, rng=rng)


def _accuracy_alpha(counts: np.ndarray, q: float) -> float:
    """Certified ∂_drop of STLap: Σ_g min(x(g), round(q)) / |x| (<= τ t + t/(2|x|) for q = τ|x|)."""
    n = int(counts.sum())
    if n == 0:
        return 0.0
    return float(np.minimum(counts, math.floor(q + 0.5)).sum() / n)


def stlap_release(x: Any, tau: float, epsilon: float, *, rng: Any = None, q_mode: QMode = "relative",
                  n_public: int | None = None) -> STLapRelease:
    """Run :func:`stlap` and return the release with its certified privacy and accuracy parameters.

    The privacy statement is never the paper's δ* in relative mode: it is the proven replacement bound
    for all neighbour pairs of size >= |x| - 1 and support <= len(x) bars.

    Parameters
    ----------
    x : array_like of int
        Histogram over a finite ground set (1-D counts; non-negative integers).
    tau : float
        Per-bar drop fraction τ ∈ (0, 1].
    epsilon : float
        ε > 0 of the noise.
    rng : numpy.random.Generator, int or None
        Randomness.
    q_mode : {"relative", "fixed"}, default "relative"
        As in :func:`stlap`.
    n_public : int, optional
        As in :func:`stlap`.

    Returns
    -------
    STLapRelease
        The released histogram, q, the certified ``accuracy_alpha``, the certified ``privacy``
        (:func:`~pml_design.flexible.accounting.guarantee_fixed_q` or
        :func:`~pml_design.flexible.accounting.guarantee_relative_q` at N = |x| - 1 and K = len(x) - 1) and
        ``paper_delta`` (δ*(ε, q) when ε q >= 2, else None).  In relative mode q, ``accuracy_alpha``,
        ``privacy`` and ``paper_delta`` are PRIVATE (they reveal |x|); publish only ``rel.publishable()``.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 1 / Theorem 3 (accuracy with rounding slack,
    privacy corrected, erratum E1-E2).
    """
    from pml_design.flexible.accounting import delta_star

    xv = check_histogram(x, "x", ndim=1)
    eps = check_epsilon(epsilon, positive=True)
    n = int(xv.sum())
    q = stlap_q(n, tau, q_mode=q_mode, n_public=n_public)
    y = stlap_with_q(xv, q, eps, rng=rng)
    if q_mode == "fixed":
        priv = guarantee_fixed_q(eps, q)
    else:
        priv = guarantee_relative_q(eps, tau, max(n - 1, 0), xv.size)
    paper = delta_star(eps, q) if q > 0 and eps * q >= 2 else None
    return STLapRelease(y=y, q=q, accuracy_alpha=_accuracy_alpha(xv, q), privacy=priv, paper_delta=paper,
                        tau=float(tau), epsilon=eps, q_mode=q_mode,
                        n_public=None if n_public is None else int(n_public), _n_items=n)


# ----------------------------------------------------------------------------- bucketing

def _n_buckets(B: float, w: float, name: str = "w", d: int = 1) -> int:
    """t = ceil(B/w) buckets per axis; refuses (before any allocation) t**d above MAX_BUCKETS, naming ``name``."""
    ratio = B / w
    log_t = d * math.log(max(ratio, 1.0)) if math.isfinite(ratio) else math.inf
    if log_t > math.log(2.0 * MAX_BUCKETS):  # far beyond the limit: refuse before forming a huge integer
        check_n_buckets(math.exp(min(log_t, 700.0)), name)
    t = int(math.ceil(ratio - 1e-12))
    check_n_buckets(t**d, name)
    return t


def bucketing(x: Any, w: float, *, B: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Bucketing M_buc^{w,[0,B)} of a histogram over the unit grid 0, 1, ..., len(x)-1.

    Item g goes to bucket i = floor(g/w) (0-based), whose centre is w(i + 1/2); there are
    t = ceil(B/w) buckets (B defaults to len(x)).

    Parameters
    ----------
    x : array_like of int
        Histogram over the grid 0..len(x)-1.
    w : float
        Bucket width w > 0.
    B : float, optional
        Range, B >= len(x) (default len(x)).

    Returns
    -------
    (counts, centres) : (numpy.ndarray of int64, numpy.ndarray of float)
        Bucket counts (|y| = |x|) and bucket centres w(i - 1/2), i = 1..t.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 2 (interval [-w/2, w/2), printed with ceiling
    brackets; erratum E5), Claim 6 ((0, w/2, 0)-accuracy w.r.t. d_hist; each item moves < = w/2).
    """
    xv = check_histogram(x, "x", ndim=1)
    w = check_positive_real(w, "w")
    B = float(xv.size) if B is None else check_positive_real(B, "B")
    if B < xv.size:
        raise ValueError(f"B must be >= len(x) = {xv.size} (the grid is 0..len(x)-1 inside [0, B)), got {B!r}")
    t = _n_buckets(B, w)
    g = np.arange(xv.size)
    b = np.minimum(np.floor(g / w).astype(np.int64), t - 1)
    counts = np.zeros(t, dtype=np.int64)
    used, first = np.unique(b, return_index=True)  # b is non-decreasing: one run of grid points per bucket
    counts[used] = np.add.reduceat(xv, first)  # integer sums (no float64 weights): exact below 2**62
    return counts, w * (np.arange(t) + 0.5)


def _check_points(points: Any) -> np.ndarray:
    """Points as a float array of shape (n, d), n >= 0; messages never quote a point or n."""
    if isinstance(points, (list, tuple)) and len(points) == 0:
        return np.zeros((0, 1))
    if isinstance(points, np.ndarray) and points.size == 0:
        return np.zeros((0, 1 if points.ndim < 2 else points.shape[1]))
    pts = check_real_array(points, "points")
    if pts.ndim == 1:
        pts = pts[:, None]
    if pts.ndim != 2:
        raise ValueError(f"points must be 1-dimensional (n,) or 2-dimensional (n, d), got {pts.ndim} dimensions")
    return pts


def bucketing_points(points: Any, w: float, B: float) -> tuple[np.ndarray, np.ndarray]:
    """Bucketing of raw data points in [0, B)^d (Algorithms 2 and 4).

    Parameters
    ----------
    points : array_like, shape (n,) or (n, d)
        Data items in [0, B)^d.
    w : float
        Bucket side length.
    B : float
        Range.

    Returns
    -------
    (counts, centres)
        ``counts`` has shape (t,)*d with t = ceil(B/w); ``centres`` is the 1-D array of the t
        per-axis centres w(i - 1/2) (the bucket centres are its d-fold product).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 2 and Appendix J, Algorithm 4 (input over
    [0, B)^d; printed "[0, B)").
    """
    w = check_positive_real(w, "w")
    B = check_positive_real(B, "B")
    pts = _check_points(points)
    d = pts.shape[1]
    t = _n_buckets(B, w, "w (with B and the dimension d)", d)
    if pts.size and (pts.min() < 0 or pts.max() >= B):
        # never quote the data: no value, no count and no position of the offending points
        raise ValueError(f"points must lie in [0, B) = [0, {B!r})^d; some do not")
    idx = np.minimum(np.floor(pts / w).astype(np.int64), t - 1)
    flat = np.ravel_multi_index(idx.T, (t,) * d) if pts.shape[0] else np.zeros(0, dtype=np.int64)
    counts = np.bincount(flat, minlength=t**d).astype(np.int64).reshape((t,) * d)
    return counts, w * (np.arange(t) + 0.5)


def _bucket_hist_core(counts: np.ndarray, centres: np.ndarray, w: float, alpha: float, beta: float,
                      epsilon: float, rng: Any, q_mode: QMode, n_public: int | None) -> BucketHistRelease:
    t = counts.size
    tau = alpha / t
    n = int(counts.sum())
    q = stlap_q(n, tau, q_mode=q_mode, n_public=n_public)
    y = stlap_with_q(counts, q, epsilon, rng=rng)
    if q_mode == "fixed":
        priv = guarantee_fixed_q(epsilon, q)
    else:
        priv = guarantee_relative_q(epsilon, tau, max(n - 1, 0), t)
    acc = _accuracy_alpha(counts, q)
    return BucketHistRelease(y=y, centres=centres, w=w, tau=tau, q=q, n_buckets=t, alpha=alpha, beta=beta,
                             accuracy_alpha=acc, privacy=priv, bucketed=counts, epsilon=epsilon, q_mode=q_mode,
                             n_public=None if n_public is None else int(n_public), _n_items=n)


def _check_ab(alpha: Any, beta: Any) -> tuple[float, float]:
    alpha = check_unit_interval(alpha, "alpha", open_left=True)
    beta = check_positive_real(beta, "beta")
    return alpha, beta


def bucket_hist(x: Any, alpha: float, beta: float, epsilon: float, *, B: float | None = None, rng: Any = None,
                q_mode: QMode = "relative", n_public: int | None = None) -> BucketHistRelease:
    """BucketHist M_BucHist^{α,β,[0,B)} = STLap^{τ,ε} ∘ M_buc^{w} on a histogram over the unit grid.

    w = 2β, t = ceil(B/w), τ = α/t.  Accuracy: (α, β, 0) for the identity w.r.t. ∂_drop and d_hist
    (up to the rounding slack t/(2|x|) in relative mode, reported in ``accuracy_alpha``).

    Parameters
    ----------
    x : array_like of int
        Histogram over the grid 0..len(x)-1 ⊂ [0, B).
    alpha : float
        Drop fraction α in (0, 1].
    beta : float
        Output error β > 0 in d_hist (half the bucket width).
    epsilon : float
        Noise ε > 0.
    B : float, optional
        Range (default len(x)).
    rng, q_mode, n_public
        As in :func:`stlap`.

    Returns
    -------
    BucketHistRelease

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 3 and Theorem 4 (t = ceil, erratum E3;
    privacy corrected, erratum E1).
    """
    alpha, beta = _check_ab(alpha, beta)
    eps = check_epsilon(epsilon, positive=True)
    w = 2.0 * beta
    xv = check_histogram(x, "x", ndim=1)
    _n_buckets(float(xv.size) if B is None else check_positive_real(B, "B"), w, "beta (buckets of width w = 2*beta)")
    counts, centres = bucketing(xv, w, B=B)
    return _bucket_hist_core(counts, centres, w, alpha, beta, eps, rng, q_mode, n_public)


def bucket_hist_points(points: Any, alpha: float, beta: float, epsilon: float, B: float, *, rng: Any = None,
                       q_mode: QMode = "relative", n_public: int | None = None) -> BucketHistRelease:
    """BucketHist on raw points in [0, B)^d (Algorithm 5, corrected): w = 2β/√d, t = ceil(B/w)^d, τ = α/t.

    With w = 2β/√d every point moves at most (w/2)√d = β in ℓ2, so the release is (α, β, 0)-accurate
    w.r.t. ∂_drop and d_hist with the ℓ2 ground metric, and τ = α/t matches Remark 5's
    τ = α (2β/(B√d))^d when B√d/(2β) is an integer.

    Parameters
    ----------
    points : array_like, shape (n,) or (n, d)
        Data items in [0, B)^d.
    alpha : float
        Drop fraction α ∈ (0, 1].
    beta : float
        Output error β > 0 (ℓ2 ground metric).
    epsilon : float
        Noise ε > 0.
    B : float
        Range: the points lie in [0, B)^d.
    rng, q_mode, n_public
        As in :func:`stlap`.

    Returns
    -------
    BucketHistRelease
        ``y`` and ``bucketed`` of shape (t,)*d with t = ceil(B/w) per axis; ``centres`` the per-axis centres.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Appendix J, Algorithm 5, Claim 13, Remark 5 (with
    w = 2β/√d instead of the printed 2β; erratum E4).  For d = 1 this is Algorithm 3 on real points.
    """
    alpha, beta = _check_ab(alpha, beta)
    eps = check_epsilon(epsilon, positive=True)
    pts = _check_points(points)
    d = pts.shape[1]
    w = 2.0 * beta / math.sqrt(d)
    _n_buckets(check_positive_real(B, "B"), w, "beta (with B and the dimension d: t = ceil(B*sqrt(d)/(2*beta))**d)", d)
    counts, centres = bucketing_points(pts, w, B)
    flat = _bucket_hist_core(counts.ravel(), centres, w, alpha, beta, eps, rng, q_mode, n_public)
    return replace(flat, y=flat.y.reshape(counts.shape), bucketed=counts)
