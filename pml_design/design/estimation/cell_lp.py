"""The per-cell primitives of :mod:`.bound_cells`: rounding margins, a quadratic's extremes on an interval, the
fractional knapsack, the exact line search of the three-choice dual, the exact levels at π = P̂ and the range of
the levels' product (the arrow row).

Implements: the pieces of the cell bound of docs/design.md §7.1 (step 3) that know nothing of cells: each is an
exact computation (or a bound) on arrays of rows, broadcast over cells and items.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["quad_max", "quad_min"]


def _up(z):
    """``z`` raised by the rounding margin of a computed mass (relative 1e-12, absolute 1e-15): a widened upper end."""
    return z * (1 + 1e-12) + 1e-15


def _down(z):
    """``z`` lowered by the same margin: a widened lower end."""
    return z * (1 - 1e-12) - 1e-15


def quad_max(d: np.ndarray | float, w: np.ndarray | float, lo: np.ndarray | float,
             hi: np.ndarray | float) -> np.ndarray | float:
    """max of ``d z² − w z`` over ``z ∈ [lo, hi]`` (broadcast; ``d`` may be negative).

    Implements: a per-cell primitive of the cell bound, docs/design.md §7.1 (step 3). The extreme is at an end or,
    when ``d < 0``, at the vertex ``z = w/(2d)`` clipped to ``[lo, hi]``.

    Parameters
    ----------
    d : np.ndarray or float
        The quadratic coefficient (any sign).
    w : np.ndarray or float
        The linear coefficient (the term is ``−w z``).
    lo, hi : np.ndarray or float
        The interval's ends, ``lo ≤ hi``; all four inputs broadcast against each other.

    Returns
    -------
    np.ndarray or float
        The maximum of ``d z² − w z`` over ``[lo, hi]``, elementwise in the broadcast shape.
    """
    vlo, vhi = d * lo * lo - w * lo, d * hi * hi - w * hi
    out = np.maximum(vlo, vhi)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.clip(np.where(d < 0, w / (2.0 * d), lo), lo, hi)
    return np.maximum(out, d * z * z - w * z)


def quad_min(d: np.ndarray | float, w: np.ndarray | float, lo: np.ndarray | float,
             hi: np.ndarray | float) -> np.ndarray | float:
    """min of ``d z² − w z`` over ``z ∈ [lo, hi]``.

    Implements: a per-cell primitive of the cell bound, docs/design.md §7.1 (step 3). The extreme is at an end or,
    when ``d > 0``, at the vertex ``z = w/(2d)`` clipped to ``[lo, hi]``.

    Parameters
    ----------
    d : np.ndarray or float
        The quadratic coefficient (any sign).
    w : np.ndarray or float
        The linear coefficient (the term is ``−w z``).
    lo, hi : np.ndarray or float
        The interval's ends, ``lo ≤ hi``; all four inputs broadcast against each other.

    Returns
    -------
    np.ndarray or float
        The minimum of ``d z² − w z`` over ``[lo, hi]``, elementwise in the broadcast shape.
    """
    vlo, vhi = d * lo * lo - w * lo, d * hi * hi - w * hi
    out = np.minimum(vlo, vhi)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.clip(np.where(d > 0, w / (2.0 * d), lo), lo, hi)
    return np.minimum(out, d * z * z - w * z)


def _knapsack(vals: np.ndarray, m: np.ndarray, lo: np.ndarray, hi: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Rows (cells × items): ``max Σ c_x z_x``, ``z ∈ [0, 1]^N`` (0 where not allowed), ``Σ m_x z_x ∈ [lo, hi]``.

    The fractional knapsack (greedy by ``c_x/m_x``; mass-free items with ``c_x > 0`` always taken), −inf if empty;
    an upper bound on the same problem over subsets.
    """
    pos = m > 0
    free = np.where(allowed[:, ~pos] & (vals[:, ~pos] > 0), vals[:, ~pos], 0.0).sum(axis=1)
    ok = allowed[:, pos]
    c, mp = np.where(ok, vals[:, pos], 0.0), m[pos]
    ratio = np.where(ok, c / mp, -np.inf)
    order = np.argsort(-ratio, axis=1, kind="stable")
    rs = np.take_along_axis(ratio, order, axis=1)
    ms = np.where(np.isfinite(rs), mp[order], 0.0)
    rs = np.where(np.isfinite(rs), rs, 0.0)
    cm = np.concatenate([np.zeros((c.shape[0], 1)), np.cumsum(ms, axis=1)], axis=1)
    # an item lighter than the rounding of the running mass leaves it unchanged, and was then counted whatever its
    # value (a review: masses 6e-17 and 4e-17 beside 1 − 1e-16, −8 where the optimum is 2): a negative one is not
    # (dropping it only raises the value: a relaxation of the mass range by that rounding)
    gain = rs * ms
    gain = np.where((gain < 0) & (ms <= 4.0 * np.finfo(float).eps * cm[:, :-1]), 0.0, gain)
    cv = np.concatenate([np.zeros((c.shape[0], 1)), np.cumsum(gain, axis=1)], axis=1)
    peak = np.where(rs > 0, ms, 0.0).sum(axis=1)
    total = cm[:, -1]
    target = np.clip(peak, lo, np.minimum(hi, total))
    j = np.minimum((cm[:, 1:] <= target[:, None]).sum(axis=1), mp.size)
    rows = np.arange(c.shape[0])
    nxt = np.where(j < mp.size, rs[rows, np.minimum(j, mp.size - 1)], 0.0)
    val = cv[rows, j] + (target - cm[rows, j]) * nxt
    return np.where(lo <= _up(total), val + free, -np.inf)


def _line_min(alpha: np.ndarray, c: np.ndarray, m: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Rows: a minimiser ``t`` of ``σt + Σ_k max(α_k − t m_k, c_k)`` (``m ≥ 0``; ``±inf`` entries allowed).

    Convex and piecewise linear with kinks at ``(α_k − c_k)/m_k``; its right slope at ``t`` is
    ``σ − Σ_{kinks > t} m_k``, so the first kink (or 0) with a non-negative right slope is a minimiser. When the
    function is unbounded below, the last finite candidate is returned (any ``t`` gives a valid dual value).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        key = (alpha - c) / m
    use = (m > 0) & ~np.isnan(key)
    key = np.concatenate([np.where(use, key, -np.inf), np.zeros((key.shape[0], 1))], axis=1)
    mass = np.concatenate([np.where(use, m, 0.0), np.zeros((key.shape[0], 1))], axis=1)
    order = np.argsort(key, axis=1)  # ties in any order: every kink of a tie is the same point
    ks, ms = np.take_along_axis(key, order, axis=1), np.take_along_axis(mass, order, axis=1)
    after = ms.sum(axis=1, keepdims=True) - np.cumsum(ms, axis=1)  # mass of the kinks sorted after k
    finite = np.isfinite(ks)
    good = finite & (sigma[:, None] - after >= 0)
    last = (ks < np.inf).sum(axis=1) - 1
    j = np.where(good.any(axis=1), np.argmax(good, axis=1), last)
    return ks[np.arange(ks.shape[0]), j]


def _line_min_any(alpha: np.ndarray, c: np.ndarray, m: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """:func:`_line_min` with slopes ``m`` of either sign.

    A term with ``m < 0`` is ``max(α − tm, c) = (α + t|m|) + max(c − α − t|m|, 0)``: a slope ``|m|`` added to σ and
    a term of the same form with ``α' = c − α``, ``c' = 0``; a term whose option is not allowed (``α = −inf``) is
    the constant ``c`` (slope 0). Only the minimiser is returned, so the dropped constants do not matter.
    """
    m = np.where(np.isneginf(alpha), 0.0, m)
    neg = m < 0
    with np.errstate(invalid="ignore"):
        alpha2 = np.where(neg, c - alpha, alpha)
    c2 = np.where(neg, 0.0, c)
    sigma2 = sigma + np.where(neg, -m, 0.0).sum(axis=1)
    return _line_min(alpha2, c2, np.abs(m), sigma2)


def exact_levels(theta, beta, e, ulo, uhi, rmin, rmax, full):
    """π = P̂: the cells whose levels are exact and enclosures ``(fix, A_lo, A_hi, B_lo, B_hi)`` of them.

    Implements: docs/design.md §7.1, "the levels at π = P̂": ``s + ρω = u + ρ(v − u) = D`` exactly, with
    ``D = θ − (1 − ρ)(β/2 − u)₊`` for proper V, and for V = everything ``D = θ − βρ/2`` when ``u ≥ β/2`` (ρ = e^−ε and
    ``D = e^−ε + u(1 − e^−ε)`` when ``u ≤ β/2``; cells across β/2 are not fixed). ``A = 1/D`` and ``B = ρ/D``; D and
    ρ/D are monotone in u and in ρ separately (D falls with ρ when V is everything), so their extremes over the box
    are at its corners; widened by the rounding margins. D is evaluated as a sum of non-negative terms,
    ``e^−ε + min(u, β/2) + ρ(β/2 − u)₊`` and ``e^−ε + (β/2)(1 − ρ)``: the differences above cancel at large ε (a review
    found a bound 5·10⁻⁷ below a ray at ε = 25).
    """
    half, em = beta / 2.0, 1.0 / e
    above, below = _down(ulo) >= half, _up(uhi) <= half

    def den(u, r):  # sums of non-negative terms (θ − (1 − ρ)(β/2 − u) cancels at large ε: a review, ε = 25)
        return np.where(full, np.where(above, em + half * (1.0 - r), em - u * math.expm1(-math.log(e))),
                        em + np.minimum(u, half) + r * np.maximum(half - u, 0.0))

    r_lo, r_hi = np.where(full & below, em, rmin), np.where(full & below, em, rmax)
    corners = [(uu, rr) for uu in (ulo, uhi) for rr in (r_lo, r_hi)]
    dens = np.array([den(uu, rr) for uu, rr in corners])
    ratios = np.array([rr / den(uu, rr) for uu, rr in corners])
    return (~full | above | below, _down(1.0 / _up(dens.max(axis=0))), _up(1.0 / _down(dens.min(axis=0))),
            _down(_down(ratios.min(axis=0))), _up(_up(ratios.max(axis=0))))


def _meet(lo, hi, nlo, nhi, where):
    """Two enclosures of one interval intersected where ``where`` (the second alone where rounding parts them)."""
    mlo, mhi = np.maximum(lo, nlo), np.minimum(hi, nhi)
    part = mlo > mhi
    return np.where(where, np.where(part, nlo, mlo), lo), np.where(where, np.where(part, nhi, mhi), hi)


def ab_range(slo, shi, olo, ohi, rmin, rmax, full, psum):
    """Range ``(lo, hi)`` of the product of the levels ``AB = ρ/(s + ρω)²`` over cells (docs/design.md §7.3, the
    arrow row): it falls with s and ω (V everything: ``ω = Σπ − s``, and ``s + ρω`` still rises with s) and is
    unimodal in ρ (peak at ``ρ = s/ω``); far narrower than the product of the level intervals when ρ's range is wide."""
    w_l, w_h = np.where(full, psum - slo, olo), np.where(full, psum - shi, ohi)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        peak = np.clip(np.nan_to_num(slo / w_l, nan=1.0, posinf=1.0), rmin, rmax)
        hi = np.nan_to_num(peak / (slo + peak * w_l) ** 2, nan=np.inf) * (1 + 1e-12)
        ends = [r / (shi + r * w_h) ** 2 for r in (rmin, rmax)]
        lo = np.nan_to_num(np.minimum(*ends), nan=0.0, posinf=0.0) * (1 - 1e-12)
    return lo, hi


def _ab_max(c, a_lo, a_hi, b_lo, b_hi, ab=None):
    """max of ``c·A·B`` over ``A ∈ [a_lo, a_hi]``, ``B ∈ [b_lo, b_hi]`` (levels ≥ 0: a corner), and over the
    product's own range ``ab = (lo, hi)`` when given (the smaller of the two)."""
    hi, lo = a_hi * b_hi, a_lo * b_lo
    if ab is not None:
        hi, lo = np.minimum(hi, ab[1]), np.maximum(lo, ab[0])
    return np.where(c >= 0, c * hi, c * lo)


def _ab_min(c, a_lo, a_hi, b_lo, b_hi, ab=None):
    """min of ``c·A·B`` over the same box (and range)."""
    hi, lo = a_hi * b_hi, a_lo * b_lo
    if ab is not None:
        hi, lo = np.minimum(hi, ab[1]), np.maximum(lo, ab[0])
    return np.where(c >= 0, c * lo, c * hi)
