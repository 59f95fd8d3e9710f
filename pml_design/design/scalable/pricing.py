"""Pricing oracles of the scalable designer: linear (exact), prefix heuristic and local search.

Implements: the pricing problem ``max_{c ∈ K1} v(c) − λ·c`` of column generation on [15, Theorem 6]'s extreme-ray
LP (``K1`` of :mod:`.cone`), for

* linear column values (:class:`~pml_design.design.utilities.LinearUtility`, one per output column; MAP accuracy
  as ``max_x`` of linear functions): for fixed S a fractional knapsack, concave in S → golden-section search;
  exact to ~1e-12 (:func:`linear_pricing`);
* separable sub-convex values (mutual information, χ², TV with the utility prior equal to ν; eq. (2)): the
  per-coordinate terms (:func:`_separable_terms`) and a heuristic over structured vertices, prefixes in
  ascending ``λ_x/ν_x`` order (:func:`prefix_pool`; the exact bound is :mod:`.branch_bound`'s);
* any other μ: randomised vertex local search, no bound (:func:`_local_search_pricing`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..utilities import ChiSquareInformation, MutualInformation, SubConvexUtility, TotalVariationInformation
from .cone import SliceStructure

__all__ = ["linear_pricing", "prefix_candidates", "prefix_pool"]

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


# ----------------------------------------------------------------------------------------------------
# linear pricing: max a·c over K1, vectorised over many weight vectors a (rows of A)
# ----------------------------------------------------------------------------------------------------
def _knapsack_value(A: np.ndarray, order: np.ndarray, nu_sorted: np.ndarray, s: np.ndarray, st: SliceStructure):
    """For each row i of A and its level s[i]: max A_i·c s.t. s ≤ c ≤ T(s), ν·c = 1 (rows pre-sorted)."""
    T = st.top(s)
    width = (T - s)[:, None] * nu_sorted  # mass each coordinate can absorb, in ratio order
    budget = 1.0 - s  # ν·1 = 1
    before = np.cumsum(width, axis=1) - width
    take = np.clip(budget[:, None] - before, 0.0, width)
    A_sorted = np.take_along_axis(A, order, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        extra = np.where(nu_sorted > 0, take / nu_sorted, 0.0)
    value = s * A.sum(axis=1) + (A_sorted * extra).sum(axis=1)
    return value, extra


def linear_pricing(A: np.ndarray, st: SliceStructure, iters: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """``max_{c ∈ K1} A_i·c`` for every row; returns (values, maximisers (rows × N)).

    Implements: exact linear pricing on [15, Theorem 6]'s extreme-ray LP (module docstring): for a fixed level
    ``S`` a fractional knapsack (coordinates filled from ``S`` up to ``T(S) = a + bS`` in descending ``A_x/ν_x``
    order until ``ν·c = 1``), concave in ``S``, maximised by a golden-section search over ``[s_lo, s_hi]`` (the
    two ends and the two final interior points are compared).

    Parameters
    ----------
    A : numpy.ndarray, shape (K, N) or (N,)
        Weight vectors, one per row (a single vector is treated as one row).
    st : SliceStructure
        The normalised column cone ``K1`` (:func:`~.cone.slice_structure`).
    iters : int, default 80
        Golden-section iterations on ``S`` (unused when ``s_hi = s_lo``).

    Returns
    -------
    values : numpy.ndarray, shape (K,)
        ``max_{c ∈ K1} A_i·c`` per row.
    C : numpy.ndarray, shape (K, N)
        A maximiser per row (a normalised column, ``ν·c = 1``).
    """
    A = np.atleast_2d(A)
    nu = st.nu
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(nu > 0, A / np.where(nu > 0, nu, 1.0), -np.inf)
    order = np.argsort(-ratio, axis=1, kind="stable")
    nu_sorted = nu[order]
    k = A.shape[0]
    lo = np.full(k, st.s_lo)
    hi = np.full(k, st.s_hi)
    if st.s_hi > st.s_lo:
        x1 = hi - _GOLDEN * (hi - lo)
        x2 = lo + _GOLDEN * (hi - lo)
        f1, _ = _knapsack_value(A, order, nu_sorted, x1, st)
        f2, _ = _knapsack_value(A, order, nu_sorted, x2, st)
        for _ in range(iters):
            left = f1 >= f2
            hi = np.where(left, x2, hi)
            lo = np.where(left, lo, x1)
            x2n = np.where(left, x1, lo + _GOLDEN * (hi - lo))
            x1n = np.where(left, hi - _GOLDEN * (hi - lo), x2)
            # rows keep different brackets, so both interior points are re-evaluated (once each)
            f1, _ = _knapsack_value(A, order, nu_sorted, x1n, st)
            f2, _ = _knapsack_value(A, order, nu_sorted, x2n, st)
            x1, x2 = x1n, x2n
        cands = [st.s_lo * np.ones(k), st.s_hi * np.ones(k), x1, x2]
    else:
        cands = [st.s_lo * np.ones(k)]
    best_v = np.full(k, -np.inf)
    best_s = np.zeros(k)
    for s in cands:
        v, _ = _knapsack_value(A, order, nu_sorted, s, st)
        better = v > best_v
        best_v = np.where(better, v, best_v)
        best_s = np.where(better, s, best_s)
    v, extra = _knapsack_value(A, order, nu_sorted, best_s, st)
    C = np.empty_like(A, dtype=float)
    np.put_along_axis(C, order, best_s[:, None] + extra, axis=1)
    return v, C


# ----------------------------------------------------------------------------------------------------
# separable convex pricing: max Σ_x φ_x(c_x) − λ·c over K1, heuristics (exact: branch_bound.py)
# ----------------------------------------------------------------------------------------------------
def _separable_terms(util: SubConvexUtility, prior: np.ndarray):
    """Per-coordinate terms φ_x and a constant with μ(c) = Σ φ_x(c_x) + const on the slice prior·c = 1."""
    p = prior
    if isinstance(util, MutualInformation):

        def phi(c):
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(c > 0, p * c * np.log(np.where(c > 0, c, 1.0)), 0.0)

        return phi, 0.0
    if isinstance(util, ChiSquareInformation):
        return (lambda c: p * c * c), -1.0
    if isinstance(util, TotalVariationInformation):
        return (lambda c: 0.5 * p * np.abs(c - 1.0)), 0.0
    return None


def prefix_pool(phi: Callable[[np.ndarray], np.ndarray], const: float, lam: np.ndarray,
                st: SliceStructure) -> tuple[np.ndarray, np.ndarray]:
    """Heuristic pricing over structured vertices: prefixes in ascending ``λ_x/ν_x`` order.

    Family (a) (S = 0): prefix at ``T0``, one free coordinate anywhere, rest 0; family (b) (S > 0): prefix at
    ``T(S)``, rest at ``S``, with ``S`` fixed by ``ν·c = 1``. Returns every candidate (rows of the second array)
    with its exact reduced value, best first; no optimality claim.

    Implements: the heuristic pricing of separable sub-convex values (module docstring; eq. (2)) on
    [15, Theorem 6]'s extreme-ray LP; the exact bound is :mod:`.branch_bound`'s.

    Parameters
    ----------
    phi : callable
        ``phi(C)``: the per-coordinate terms ``φ_x(c_x)`` of the rows of ``C`` (elementwise, shape kept), as
        returned by ``_separable_terms``.
    const : float
        The constant with ``μ(c) = Σ_x φ_x(c_x) + const`` on the slice.
    lam : numpy.ndarray, shape (N,)
        The master's multipliers λ.
    st : SliceStructure
        The normalised column cone ``K1``.

    Returns
    -------
    values : numpy.ndarray, shape (K,)
        ``Σ_x φ_x(c_x) − λ·c + const`` of each candidate, in descending order (empty when no candidate).
    C : numpy.ndarray, shape (K, N)
        The candidates (rows), in the same order.
    """
    nu = st.nu
    n = nu.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(nu > 0, lam / np.where(nu > 0, nu, 1.0), np.inf)
    order = np.argsort(kappa, kind="stable")
    pool_v: list[np.ndarray] = []
    pool_c: list[np.ndarray] = []

    def consider(C):
        if C.shape[0] == 0:
            return
        pool_v.append((phi(C) - lam * C).sum(axis=1) + const)
        pool_c.append(C)

    prefix_mass = np.concatenate([[0.0], np.cumsum(nu[order])])  # mass of the first k items
    if st.s_lo == 0.0:
        T0 = float(st.top(0.0))
        for k in range(n):
            rem = 1.0 - T0 * prefix_mass[k]
            if rem < -1e-12:
                break
            c = np.zeros(n)
            c[order[:k]] = T0
            free = order[k:]
            with np.errstate(divide="ignore", invalid="ignore"):
                cf = rem / nu[free]
            ok = (cf >= 0) & (cf <= T0 * (1 + 1e-12))
            if not np.any(ok):
                continue
            C = np.tile(c, (int(ok.sum()), 1))
            C[np.arange(C.shape[0]), free[ok]] = np.minimum(cf[ok], T0)
            consider(C)
    if st.b > 0 and st.s_hi > 0:
        ks = np.arange(1, n)
        mass = prefix_mass[1:n]
        S = (1.0 - st.a * mass) / (st.b * mass + (1.0 - mass))
        T = st.a + st.b * S
        ok = (S >= st.s_lo - 1e-15) & (S <= T)
        if np.any(ok):
            ks, S, T = ks[ok], np.maximum(S[ok], 0.0), T[ok]
            top = np.arange(n)[None, :] < ks[:, None]
            C = np.empty((ks.shape[0], n))
            C[:, order] = np.where(top, T[:, None], S[:, None])
            consider(C)
    if not pool_v:
        return np.zeros(0), np.zeros((0, n))
    vals = np.concatenate(pool_v)
    C = np.vstack(pool_c)
    order_v = np.argsort(-vals, kind="stable")
    return vals[order_v], C[order_v]


def prefix_candidates(phi: Callable[[np.ndarray], np.ndarray], const: float, lam: np.ndarray,
                      st: SliceStructure) -> tuple[float, np.ndarray | None]:
    """The best candidate of :func:`prefix_pool` (value, ray).

    Implements: the heuristic separable pricing of the module docstring (no optimality claim).

    Parameters
    ----------
    phi, const, lam, st
        As for :func:`prefix_pool`.

    Returns
    -------
    value : float
        The best reduced value ``μ(c) − λ·c`` (``-inf`` when there is no candidate).
    ray : numpy.ndarray of shape (N,) or None
        Its column (None when there is no candidate).
    """
    vals, C = prefix_pool(phi, const, lam, st)
    if vals.size == 0:
        return -np.inf, None
    return float(vals[0]), C[0]


# ----------------------------------------------------------------------------------------------------
# other utilities: local search (no bound)
# ----------------------------------------------------------------------------------------------------
def _local_search_pricing(util: SubConvexUtility, prior, lam, st: SliceStructure, rng, restarts: int = 8):
    """Heuristic pricing for general μ: random vertex + coordinate flips (no bound)."""
    n = st.nu.shape[0]
    best_v, best_c = -np.inf, None
    for _ in range(restarts):
        w = rng.normal(size=n)
        v, C = linear_pricing(w[None, :], st)
        c = C[0]
        val = float(util.mu(c[:, None], prior)[0] - lam @ c)
        improved = True
        while improved:
            improved = False
            for _ in range(3):
                w2 = w + rng.normal(scale=0.5, size=n)
                _, C2 = linear_pricing(w2[None, :], st)
                v2 = float(util.mu(C2[0][:, None], prior)[0] - lam @ C2[0])
                if v2 > val + 1e-12:
                    w, c, val, improved = w2, C2[0], v2, True
        if val > best_v:
            best_v, best_c = val, c
    return best_v, best_c
