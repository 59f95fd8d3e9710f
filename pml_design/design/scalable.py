"""Scalable design by column generation on the extreme-ray LP, with exact (or bounded) pricing.

Implements: the extreme-ray LP of [15, Theorem 6] (core paper Section V) solved by column generation
(Dantzig–Wolfe): a restricted master LP over generated rays (HiGHS, warm-started) and a pricing problem
``max_{r ∈ K1} v(r) − λ·r`` over the normalised column cone, whose structure (derived in ``docs/design.md``)
is the union over ``S`` of boxes ``{S ≤ c ≤ T(S), ν·c = 1}`` with ``T(S) = a + bS``:

* fixed prior P (ν = P):      ``S = 0``, ``T = e^ε``                       ([15, Lemma 1])
* ℓ1 ball, β < 2 min P̂ (ν = P̂): ``T(S) = e^{ε'}(1 + (β/2) S)``            (Proposition 2, eq. (13))
* simplex (ν = prior):         ``T(S) = e^ε S``                             (ε-LDP, Remark 1)

Optimality certificate
----------------------
Every mechanism decomposes into normalised rays with weights θ summing to ``ν·1 = 1``; hence for master
duals λ, ``U* ≤ 1ᵀλ + max_r (v(r) − λ·r)`` (the Lagrangian/Lasdon bound). The pricing returns an *upper
bound* on that maximum, so every reported ``upper_bound`` is valid; optimality is proven when it meets the
master value.

Pricing oracles
---------------
* linear (LinearUtility, one per output column; MAP accuracy as ``max_x`` of linear functions): for fixed S a
  fractional knapsack, concave in S → golden-section search; exact to ~1e-12.
* separable sub-convex (mutual information, χ², TV with the utility prior equal to ν): maximise a separable
  convex function — spatial branch and bound with chord (concave-envelope) relaxations over S-intervals and
  coordinate intervals (Falk–Soland); node limit → an upper bound from the open nodes.
* other (user μ): randomised vertex local search, no bound (``upper_bound = inf``).
"""

from __future__ import annotations

import heapq
import math
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..uncertainty import FiniteSet, L1Ball, Simplex, UncertaintySet
from .certify import certified_result
from .result import DesignResult, PMLDesignWarning, SolverFailedError
from .utilities import (
    ChiSquareInformation,
    LinearUtility,
    MapAccuracy,
    MutualInformation,
    SubConvexUtility,
    TotalVariationInformation,
    Utility,
)

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "SliceStructure",
    "ball_column_generation",
    "column_generation",
    "design_scalable",
    "slice_structure",
]

WIDTH_MIN = 1e-2
#: Default wall-clock limit (seconds) of ``method="scalable"`` (``solver_options={"time_limit": ...}``).
DEFAULT_TIME_LIMIT: float = 60.0
#: Relative gap above which a :class:`PMLDesignWarning` is emitted.
WARN_GAP: float = 0.01
#: Relative gap at which column generation counts as proven optimal.
PROOF_RTOL = 1e-6
#: Columns added per column-generation iteration from the heuristic pool.
MAX_NEW_COLUMNS = 8
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class SliceStructure:
    """Normalised column cone ``K1 = ∪_{S ∈ [s_lo, s_hi]} {S ≤ c ≤ a + bS, ν·c = 1}``."""

    nu: np.ndarray
    a: float
    b: float
    s_lo: float
    s_hi: float

    def top(self, s: np.ndarray | float) -> np.ndarray | float:
        return self.a + self.b * np.asarray(s)


def slice_structure(uset: UncertaintySet, epsilon: float, prior: np.ndarray) -> SliceStructure:
    """The two-level box structure of the column cone for the supported sets (see module docstring)."""
    e = math.exp(epsilon)
    if isinstance(uset, FiniteSet) and uset.distributions.shape[0] == 1:
        uset = L1Ball(uset.distributions[0], 0.0)
    if isinstance(uset, L1Ball):
        if uset.radius == 0:
            return SliceStructure(uset.center, e, 0.0, 0.0, 0.0)
        if not uset.in_interior_regime:
            raise ValueError(
                "the scalable method supports L1 balls with radius < 2 min(center) (Proposition 2), a fixed prior, "
                f"or the simplex; got radius {uset.radius!r} >= 2 min(center) = {2 * uset.center.min()!r} "
                "(use method='exact' for small alphabets)"
            )
        beta = uset.radius
        a = e / (1.0 + beta * e / 2.0)
        b = a * beta / 2.0
        s_lo = max(0.0, (1.0 - a) / b) if a < 1 else 0.0
        return SliceStructure(uset.center, a, b, s_lo, 1.0)
    if isinstance(uset, Simplex):
        return SliceStructure(prior, 0.0, e, 1.0 / e, 1.0)
    raise ValueError(f"the scalable method does not support {uset!r}; use method='exact'")


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
    """``max_{c ∈ K1} A_i·c`` for every row; returns (values, maximisers (rows × N))."""
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
# separable convex pricing: max Σ_x psi_x(c_x) − λ·c over K1, branch and bound
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


def _chord_knapsack(lo, hi, f_lo, f_hi, nu):
    """max Σ chord_x(c_x) s.t. lo ≤ c ≤ hi, ν·c = 1 (fractional knapsack). Returns (value, c) or None."""
    if nu @ lo > 1.0 + 1e-12 or nu @ hi < 1.0 - 1e-12:
        return None
    width = hi - lo
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(width > 0, (f_hi - f_lo) / np.where(width > 0, width, 1.0), 0.0)
        ratio = np.where(nu > 0, slope / np.where(nu > 0, nu, 1.0), np.inf)
    order = np.argsort(-ratio, kind="stable")
    budget = 1.0 - nu @ lo
    cap = (width * nu)[order]
    before = np.cumsum(cap) - cap
    take = np.clip(budget - before, 0.0, cap)
    c = lo.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        c[order] += np.where(nu[order] > 0, take / nu[order], 0.0)
    c = np.minimum(c, hi)
    val = float(np.sum(f_lo + slope * (c - lo)))
    return val, c


def _vertices_from_pattern(top: np.ndarray, free: np.ndarray, st: SliceStructure) -> list[np.ndarray]:
    """Feasible vertices of K1 sharing a relaxation's pattern (``top`` mask; ``free`` indices may go either way).

    Family (b): tops at ``T(S)``, the rest at ``S`` with ``S = (1 − a m)/(b m + 1 − m)``, ``m = ν(tops)``;
    family (a) (when ``S = 0`` is allowed): tops at ``T(0)``, one free coordinate solving ``ν·c = 1``, rest 0.
    """
    nu = st.nu
    out: list[np.ndarray] = []
    patterns = [top.copy()]
    for f in free[:2]:
        t2 = top.copy()
        t2[f] = True
        patterns.append(t2)
    for U in patterns:
        m = float(nu[U].sum())
        denom = st.b * m + (1.0 - m)
        if st.b > 0 and 0 < m < 1 and denom > 0:
            S = (1.0 - st.a * m) / denom
            T = st.a + st.b * S
            if S >= 0 and S <= T:
                out.append(np.where(U, T, S))
    if st.s_lo == 0.0:
        T0 = float(st.top(0.0))
        base = np.where(top, T0, 0.0)
        rem = 1.0 - nu @ base
        cands = list(free[:3]) + list(np.flatnonzero(~top)[:3])
        for f in cands:
            if nu[f] <= 0 or top[f]:
                continue
            cf = rem / nu[f]
            if 0 <= cf <= T0 * (1 + 1e-12):
                c = base.copy()
                c[f] = min(cf, T0)
                out.append(c)
    return out


def _in_slice(c: np.ndarray, st: SliceStructure) -> bool:
    return bool(
        c.min() >= -1e-15
        and abs(st.nu @ c - 1.0) <= 1e-9
        and c.max() <= float(st.top(c.min())) * (1 + 1e-12) + 1e-15
    )


def prefix_pool(phi, const: float, lam: np.ndarray, st: SliceStructure) -> tuple[np.ndarray, np.ndarray]:
    """Heuristic pricing over structured vertices: prefixes in ascending ``λ_x/ν_x`` order.

    Family (a) (S = 0): prefix at ``T0``, one free coordinate anywhere, rest 0; family (b) (S > 0): prefix at
    ``T(S)``, rest at ``S``, with ``S`` fixed by ``ν·c = 1``. Returns every candidate (rows of the second array)
    with its exact reduced value, best first; no optimality claim.
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


def prefix_candidates(phi, const: float, lam: np.ndarray, st: SliceStructure) -> tuple[float, np.ndarray | None]:
    """The best candidate of :func:`prefix_pool` (value, ray)."""
    vals, C = prefix_pool(phi, const, lam, st)
    if vals.size == 0:
        return -np.inf, None
    return float(vals[0]), C[0]


def _lagrangian_interval_bound(psi, const: float, st: SliceStructure, A: float, B: float, iters: int = 80):
    """Upper bound on ``max Σψ_x(c_x) + const`` over ``S ∈ [A, B]``, ``S ≤ c ≤ T(S)``, ``ν·c = 1``.

    Dualising ``ν·c = 1`` with μ gives, for fixed S, ``g_μ(S) = μ + const + Σ_x max(ψ_x(S) − μν_xS,
    ψ_x(T(S)) − μν_xT(S))`` (a convex function maximised at an interval end), which is convex in S (each term is
    a maximum of two convex functions of S). Hence ``max_{S∈[A,B]} ≤ max(g_μ(A), g_μ(B))`` for every μ; the μ is
    chosen by ternary search (any μ gives a valid bound). Returns ``(bound, μ, top patterns at A and B)``.
    """
    nu = st.nu
    n = nu.shape[0]
    ends = []
    for S in (A, B):
        T = float(st.top(S))
        ends.append((S, T, psi(np.full(n, S)), psi(np.full(n, T))))

    def g(mu: float) -> float:
        return max(mu + const + float(np.sum(np.maximum(pS - mu * nu * S, pT - mu * nu * T))) for S, T, pS, pT in ends)

    bps = []
    for S, T, pS, pT in ends:
        if T > S:
            with np.errstate(divide="ignore", invalid="ignore"):
                bp = (pT - pS) / (nu * (T - S))
            bps.append(bp[np.isfinite(bp)])
    allbp = np.concatenate(bps) if bps else np.zeros(1)
    lo, hi = float(allbp.min()) - 1.0, float(allbp.max()) + 1.0
    for _ in range(iters):
        m1 = lo + (hi - lo) / 3
        m2 = hi - (hi - lo) / 3
        if g(m1) <= g(m2):
            hi = m2
        else:
            lo = m1
    mu = 0.5 * (lo + hi)
    bound = g(mu)
    pats = [(pT - mu * nu * T) >= (pS - mu * nu * S) for S, T, pS, pT in ends]
    return bound, mu, pats


def separable_pricing(
    phi, const: float, lam: np.ndarray, st: SliceStructure, *, max_nodes: int = 20000, rtol: float = 1e-9,
    incumbent: float = -np.inf,
    stop_above: float = np.inf,
    collect: list | None = None,
    deadline: float = np.inf,
) -> tuple[float, np.ndarray | None, float, int]:
    """Branch and bound for ``max_{c∈K1} Σ φ_x(c_x) + const − λ·c`` (a separable convex maximisation).

    With a finite ``stop_above`` the search returns as soon as a feasible value exceeds it (column generation
    only needs an improving column); the returned upper bound is then ``inf``. ``collect`` (a list) receives
    every feasible vertex found whose value exceeds ``incumbent``, as ``(value, ray)`` pairs. The search also
    stops (keeping the open nodes' bounds) when ``time.perf_counter()`` passes ``deadline``.

    Nodes are (S-interval, per-coordinate interval) boxes containing every feasible point of their region;
    their bound replaces each term by its chord on the interval (a concave overestimator of a convex function)
    and solves the fractional knapsack over ``ν·c = 1``. Nodes whose bound cannot beat ``incumbent`` are pruned,
    and every pruned or unexplored node's bound is kept, so the returned upper bound is always valid.

    Returns
    -------
    (best_value, best_ray, upper_bound, nodes)
    """
    nu = st.nu
    n = nu.shape[0]

    def psi(c):
        return phi(c) - lam * c

    best_v, best_c = -np.inf, None
    closed_ub = -np.inf  # max bound over nodes discarded without full resolution

    def node_bound(lo, hi):
        rel = _chord_knapsack(lo, hi, psi(lo), psi(hi), nu)
        if rel is None:
            return None
        return rel[0] + const, rel[1]

    def try_feasible(c_rel, lo, hi):
        nonlocal best_v, best_c
        at_top = c_rel >= hi - 1e-12
        at_bot = c_rel <= lo + 1e-12
        free = np.flatnonzero(~at_top & ~at_bot)
        cands = _vertices_from_pattern(at_top, free, st)
        if _in_slice(c_rel, st):
            cands.append(c_rel)
        for c in cands:
            if not _in_slice(c, st):
                continue
            v = float(np.sum(psi(c)) + const)
            if collect is not None and v > incumbent:
                collect.append((v, c))
            if v > best_v:
                best_v, best_c = v, c

    heap: list = []
    counter = 0
    nodes = 0
    width_min = WIDTH_MIN * (st.s_hi - st.s_lo)

    def push_coordinate_node(A, B, lo, hi, cap=np.inf):
        nonlocal counter, closed_ub
        nb = node_bound(lo, hi)
        if nb is None:
            return
        ub_ = min(nb[0], cap)
        if ub_ <= max(best_v, incumbent):
            closed_ub = max(closed_ub, ub_)
            return
        counter += 1
        heapq.heappush(heap, (-ub_, counter, 1, A, B, lo, hi, nb[1]))

    def push_interval_node(A, B):
        nonlocal counter, closed_ub
        ub_, _, pats = _lagrangian_interval_bound(psi, const, st, A, B)
        box = node_bound(np.full(n, A), np.full(n, float(st.top(B))))
        if box is None:
            return
        ub_ = min(ub_, box[0])
        for pat in pats:  # feasible vertices suggested by the dual solution
            for c in _vertices_from_pattern(pat, np.zeros(0, dtype=int), st):
                if _in_slice(c, st):
                    v = float(np.sum(psi(c)) + const)
                    nonlocal_best(v, c)
        if ub_ <= max(best_v, incumbent):
            closed_ub = max(closed_ub, ub_)
            return
        if B - A <= width_min:
            push_coordinate_node(A, B, np.full(n, A), np.full(n, float(st.top(B))), cap=ub_)
            return
        counter += 1
        heapq.heappush(heap, (-ub_, counter, 0, A, B, None, None, None))

    def nonlocal_best(v, c):
        nonlocal best_v, best_c
        if collect is not None and v > incumbent:
            collect.append((v, c))
        if v > best_v:
            best_v, best_c = v, c

    if st.s_hi > st.s_lo:
        push_interval_node(st.s_lo, st.s_hi)
    else:
        push_coordinate_node(st.s_lo, st.s_hi, np.full(n, st.s_lo), np.full(n, float(st.top(st.s_hi))))
    while heap and nodes < max_nodes:
        if nodes & 63 == 0 and time.perf_counter() > deadline:
            break
        if best_v > stop_above:
            return best_v, best_c, np.inf, nodes
        negub, _, kind, s_lo, s_hi, lo, hi, c_rel = heapq.heappop(heap)
        ub = -negub
        nodes += 1
        if ub <= max(best_v, incumbent) + rtol * max(1.0, abs(max(best_v, incumbent))):
            closed_ub = max(closed_ub, ub)
            continue
        if kind == 0:
            mid = 0.5 * (s_lo + s_hi)
            push_interval_node(s_lo, mid)
            push_interval_node(mid, s_hi)
            continue
        try_feasible(c_rel, lo, hi)
        target = max(best_v, incumbent)
        if ub <= target + rtol * max(1.0, abs(target)):
            closed_ub = max(closed_ub, ub)
            continue
        frac = np.flatnonzero((c_rel > lo + 1e-12) & (c_rel < hi - 1e-12))
        f = int(frac[0]) if frac.size else -1
        gap_f = 0.0
        if f >= 0:
            chord = psi(lo)[f] + (psi(hi)[f] - psi(lo)[f]) * (c_rel[f] - lo[f]) / (hi[f] - lo[f])
            val_f = float((phi(np.full(n, c_rel[f])) - lam * c_rel[f])[f])
            gap_f = chord - val_f
        children = []
        if s_hi - s_lo > 1e-12 and (f < 0 or gap_f < 0.5 * (ub - target)):
            mid = 0.5 * (s_lo + s_hi)
            for a_, b_ in ((s_lo, mid), (mid, s_hi)):
                children.append((a_, b_, np.maximum(lo, a_), np.minimum(hi, float(st.top(b_)))))
        elif f >= 0 and hi[f] - lo[f] > 1e-13:
            cut = c_rel[f]
            h_left = hi.copy()
            h_left[f] = cut
            l_right = lo.copy()
            l_right[f] = cut
            children = [(s_lo, s_hi, lo, h_left), (s_lo, s_hi, l_right, hi)]
        else:
            closed_ub = max(closed_ub, ub)  # cannot refine further: keep its bound
            continue
        for a_, b_, l2, h2 in children:
            if np.any(l2 > h2 + 1e-15):
                continue  # empty region
            h2 = np.maximum(h2, l2)
            nb = node_bound(l2, h2)
            if nb is None:
                continue  # no point with nu.c = 1 in this box
            if nb[0] <= max(best_v, incumbent):
                closed_ub = max(closed_ub, nb[0])
                continue
            counter += 1
            heapq.heappush(heap, (-nb[0], counter, 1, a_, b_, l2, h2, nb[1]))
    open_ub = max([-h[0] for h in heap], default=-np.inf)
    upper = max(best_v, open_ub, closed_ub)
    return best_v, best_c, upper, nodes


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


# ----------------------------------------------------------------------------------------------------
# master problem
# ----------------------------------------------------------------------------------------------------
class _Master:
    def __init__(self, n: int):
        import highspy

        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.inf = highspy.kHighsInf
        self.n = n
        ones = np.ones(n)
        self.h.addRows(n, ones, ones, 0, np.zeros(n, dtype=np.int32), np.array([], dtype=np.int32), np.array([]))
        self.h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.cols: list[np.ndarray] = []
        self.vals: list[float] = []
        self.tags: list[int] = []

    def add(self, R: np.ndarray, v: np.ndarray, tags: np.ndarray) -> None:
        R = np.atleast_2d(R)
        k = R.shape[0]
        nz = R != 0
        starts = np.concatenate([[0], np.cumsum(nz.sum(axis=1))[:-1]]).astype(np.int32)
        idx = np.nonzero(nz)[1].astype(np.int32)
        vals = R[nz]
        self.h.addCols(k, np.asarray(v, float), np.zeros(k), np.full(k, self.inf), int(vals.size), starts, idx, vals)
        self.cols.extend(list(R))
        self.vals.extend(list(np.asarray(v, float)))
        self.tags.extend(list(np.asarray(tags, int)))

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        import highspy

        self.h.run()
        status = self.h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolverFailedError("column-generation master LP failed", str(status))
        sol = self.h.getSolution()
        return float(self.h.getInfo().objective_function_value), np.asarray(sol.row_dual), np.asarray(sol.col_value)


def _progress_update(bar, value: float, upper: float) -> None:
    """One iteration on a column-generation progress bar: value, bound and relative gap."""
    bar.update(1)
    gap = (upper - value) / max(abs(upper), 1e-300) if np.isfinite(upper) else np.inf
    bar.set_postfix(value=f"{value:.6g}", bound=f"{upper:.6g}", gap=f"{gap:.2e}", refresh=False)


def column_generation(
    uset: UncertaintySet,
    epsilon: float,
    util: Utility,
    prior: np.ndarray,
    *,
    max_iter: int = 5000,
    time_limit: float = 60.0,
    rtol: float = PROOF_RTOL,
    max_nodes: int = 20000,
    rng: np.random.Generator | None = None,
    progress: bool = False,
) -> dict:
    """Column generation on the extreme-ray LP. Returns a dict with the matrix, bounds and diagnostics."""
    st = slice_structure(uset, epsilon, prior)
    n = st.nu.shape[0]
    rng = rng or np.random.default_rng(0)
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    master = _Master(n)
    linear = isinstance(util, LinearUtility)
    W8 = util.weights(prior).T if linear else None  # (M, N): weights of each output
    sep = None if linear or isinstance(util, MapAccuracy) else _separable_terms(util, prior)
    if sep is not None and not np.allclose(st.nu, prior, atol=1e-12):
        sep = None  # separable form needs the slice normalisation ν = utility prior
    if linear:
        m = W8.shape[0]
        master.add(np.ones((m, n)), W8.sum(axis=1), np.arange(m))
    else:
        master.add(np.ones((1, n)), util.mu(np.ones((n, 1)), prior), np.array([0]))
        # seed with the rays of the fixed linear directions (prior-weighted unit vectors)
        _, C = linear_pricing(np.eye(n) * prior[None, :] - 1e-9, st)
        master.add(C, util.mu(C.T, prior), np.zeros(n, dtype=int))
    upper = np.inf
    history = []
    proven = False
    value = -np.inf
    it = 0
    nodes_total = 0
    from ..progress import progress_bar  # noqa: PLC0415

    bar = progress_bar(desc="column generation", enabled=progress)
    for it in range(1, max_iter + 1):
        value, lam, theta = master.solve()
        _progress_update(bar, value, upper)
        if linear:
            A = W8 - lam[None, :]
            rc, C = linear_pricing(A, st)
            best_rc = float(rc.max())
            ub_rc = best_rc + 1e-12
            new = np.flatnonzero(rc > rtol * max(1.0, abs(value)))
            if new.size:
                sel = new[np.argsort(-rc[new])][: max(1, min(new.size, 4 * n))]
                master.add(C[sel], (W8[sel] * C[sel]).sum(axis=1), sel)
        elif isinstance(util, MapAccuracy):
            A = np.eye(n) * prior[None, :] - lam[None, :]
            rc, C = linear_pricing(A, st)
            best_rc = float(rc.max())
            ub_rc = best_rc + 1e-12
            new = np.flatnonzero(rc > rtol * max(1.0, abs(value)))
            if new.size:
                master.add(C[new], util.mu(C[new].T, prior), np.zeros(new.size, dtype=int))
        elif sep is not None:
            phi, const = sep
            thresh = rtol * max(1.0, abs(value))
            vals, C = prefix_pool(phi, const, lam, st)
            best_rc, c = (float(vals[0]), C[0]) if vals.size else (-np.inf, None)
            ub_rc = np.inf
            if best_rc > thresh:
                # add several improving columns at once (distinct, best first): fewer master iterations
                good = C[vals > thresh][:MAX_NEW_COLUMNS]
                good = np.unique(np.round(good, 14), axis=0)
                master.add(good, util.mu(good.T, prior), np.zeros(good.shape[0], dtype=int))
            else:  # no improving column from the heuristic: prove (or find one) by B&B
                found: list = []
                bb_v, bb_c, ub_rc, nodes = separable_pricing(
                    phi, const, lam, st, max_nodes=max_nodes, rtol=1e-12, incumbent=max(best_rc, thresh),
                    stop_above=10 * thresh, collect=found, deadline=deadline,
                )
                nodes_total += nodes
                if bb_v > best_rc:
                    best_rc, c = bb_v, bb_c
                if found:
                    found.sort(key=lambda vc: -vc[0])
                    good = np.unique(np.round(np.array([vc[1] for vc in found[:MAX_NEW_COLUMNS]]), 14), axis=0)
                    master.add(good, util.mu(good.T, prior), np.zeros(good.shape[0], dtype=int))
        else:
            best_rc, c = _local_search_pricing(util, prior, lam, st, rng)  # type: ignore[arg-type]
            ub_rc = np.inf
            if c is not None and best_rc > rtol * max(1.0, abs(value)):
                master.add(c[None, :], util.mu(c[:, None], prior), np.array([0]))
        bound = float(lam.sum() + max(ub_rc, 0.0))
        upper = min(upper, bound)
        history.append((it, value, upper))
        if upper - value <= rtol * max(1.0, abs(value)):
            proven = True
            break
        if best_rc <= rtol * max(1.0, abs(value)):
            break  # no improving column found (heuristic pricing: no proof)
        if time.perf_counter() > deadline:
            break
    bar.close()
    value, lam, theta = master.solve()
    if not proven and sep is not None and not np.isfinite(upper):
        # stopped by the time/iteration limit while columns were still improving: bound the final pricing
        # (within a small extra budget; the open nodes' bounds keep it valid)
        _, _, ub_rc, nodes = separable_pricing(
            sep[0], sep[1], lam, st, max_nodes=max_nodes, rtol=1e-12,
            deadline=time.perf_counter() + min(1.0, 0.05 * time_limit),
        )
        nodes_total += nodes
        upper = float(lam.sum() + max(ub_rc, 0.0))
    R = np.array(master.cols)
    tags = np.array(master.tags)
    used = theta > 1e-13
    if linear:
        m = W8.shape[0]
        W = np.zeros((n, m))
        np.add.at(W.T, tags[used], theta[used, None] * R[used])
    else:
        W = (R[used] * theta[used, None]).T
    return {
        "matrix": W,
        "value": value,
        "upper_bound": max(upper, value),
        "proven": proven,
        "iterations": it,
        "n_columns": int(R.shape[0]),
        "time": time.perf_counter() - t0,
        "history": history,
        "pricing_nodes": nodes_total,
        "duals": lam,
    }


def _mix_into_cone(C: np.ndarray, ball: L1Ball, epsilon: float) -> np.ndarray:
    """Columns (rows of C, ``P̂·c = 1``) mixed with the constant column just enough to lie in ``K(ε, ball)``.

    ``(1 − t) c + t 1`` has maximum ``(1 − t)T + t`` and worst-case mass ``(1 − t)F + t`` (``F = min_Q Q·c``), so
    ``t = (T − e^ε F)/(T − e^ε F + e^ε − 1)`` (0 when already inside) is the smallest admissible weight.
    """
    e = math.exp(epsilon)
    T = C.max(axis=1)
    F = ball.min_output_probability(C.T)
    excess = T - e * F
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(excess > 0, excess / (excess + e - 1.0), 0.0) if e > 1 else np.where(excess > 0, 1.0, 0.0)
    t = np.clip(np.nan_to_num(t, nan=1.0) * (1 + 1e-9), 0.0, 1.0)
    return (1.0 - t)[:, None] * C + t[:, None]


def _normalised_columns(W: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Columns of a mechanism (rows of the result) scaled to ``P̂·c = 1`` (columns of zero P̂-mass dropped)."""
    C = np.asarray(W, dtype=float).T
    s = C @ p
    return C[s > 1e-300] / s[s > 1e-300, None]


def ball_column_generation(
    ball: L1Ball,
    epsilon: float,
    util: Utility,
    prior: np.ndarray,
    *,
    deadline: float,
    time_limit: float,
    max_nodes: int = 20000,
    rtol: float = PROOF_RTOL,
    progress: bool = False,
    seed_columns: list | None = None,
    max_iter: int = 100000,
) -> dict:
    """Column generation over the exact cone of ``M(ε, B_β(P̂))`` for any radius (nested-pair pricing).

    Implements: [15, Theorem 6]'s ray LP by column generation with the exact pricing of
    :mod:`.ball_pricing` (prefix pairs, then branch and bound over the labels U / V∖U / out), for mutual
    information, χ², total variation (``mass_phi``) and MAP accuracy (one linear pricing per row). Every
    iteration's Lagrangian bound ``1ᵀλ + max_r (μ(r) − λ·r)`` is valid when the pricing bound is (the B&B
    keeps the bounds of unexplored nodes at its node limit or deadline); when no iteration produced one, the
    root bound of the final duals is used. ``seed_columns`` (rows, ``P̂·c = 1``, inside the cone) start the master.
    """
    from .ball_pricing import BallCone, PairPricer, mass_phi  # noqa: PLC0415
    from ..progress import progress_bar  # noqa: PLC0415

    t0 = time.perf_counter()
    p = ball.center
    n = p.shape[0]
    cone = BallCone(p, ball.radius, epsilon)
    spec = mass_phi(util)
    is_map = isinstance(util, MapAccuracy)
    if spec is None and not is_map:
        raise ValueError(f"no exact pricing for utility {util.name!r} outside Proposition 2")
    rows_map = np.argsort(-p, kind="stable")[: n if n <= 60 else 30] if is_map else None
    # MAP accuracy is a maximum of linear column values; with full support and every row priced, the prefix pairs
    # are exact (rearrangement argument, docs/design.md §5), so no branch and bound is needed
    linear_exact = bool(is_map and rows_map.size == n and np.all(p > 0))
    master = _Master(n)
    start = [np.ones((1, n))] + [np.atleast_2d(c) for c in (seed_columns or []) if np.size(c)]
    C0 = np.unique(np.round(np.vstack(start), 14), axis=0)
    master.add(C0, util.mu(C0.T, prior), np.zeros(C0.shape[0], dtype=int))

    def pricers(lam):
        if is_map:
            return [PairPricer(cone, None, lam - p[x] * np.eye(n)[x]) for x in rows_map]
        return [PairPricer(cone, spec, lam)]

    def add_columns(U, V):
        C = cone.columns(U, V)
        C = np.unique(np.round(C, 14), axis=0)
        master.add(C, util.mu(C.T, prior), np.zeros(C.shape[0], dtype=int))

    upper, value, proven, it, nodes_total = np.inf, -np.inf, False, 0, 0
    history = []
    bar = progress_bar(desc="column generation (l1 ball)", enabled=progress)
    lam = np.zeros(n)
    for it in range(1, max_iter + 1):
        value, lam, _ = master.solve()
        _progress_update(bar, value, upper)
        thresh = rtol * max(1.0, abs(value))
        prs = pricers(lam)
        cand, pool_max = [], [-np.inf]
        for pr in prs:
            vals, i, j = pr.prefix_pool()
            if vals.size:
                pool_max.append(float(vals.max()))
                top = np.argsort(-vals, kind="stable")[:MAX_NEW_COLUMNS]
                top = top[vals[top] > thresh]
                if top.size:
                    U, V = pr.prefix_masks(i[top], j[top])
                    cand.extend(zip(vals[top], U, V))
        ub_rc = np.inf
        if linear_exact:  # linear column values: the best prefix pair is the exact pricing optimum (docs §5)
            ub_rc = max(pool_max)
        if cand:
            cand.sort(key=lambda t: -t[0])
            cand = cand[:MAX_NEW_COLUMNS]
            best_rc = float(cand[0][0])
        elif linear_exact:
            best_rc = ub_rc
        else:  # the heuristic found nothing: prove (or find an improving pair) by branch and bound
            best_rc, ub_rc = -np.inf, -np.inf
            budget = max_nodes
            for pr in prs:
                found: list = []
                while True:  # node limit reached with time left and nothing found: search again, 4x deeper
                    bv, _, ub, nodes = pr.branch_and_bound(
                        incumbent=thresh, stop_above=10 * thresh, max_nodes=budget, deadline=deadline, collect=found
                    )
                    nodes_total += nodes
                    if found or ub <= thresh or nodes < budget or time.perf_counter() > deadline:
                        break
                    budget *= 4
                best_rc, ub_rc = max(best_rc, bv), max(ub_rc, ub)
                cand.extend(found)
                if len(cand) >= MAX_NEW_COLUMNS or time.perf_counter() > deadline:
                    if len(cand) and pr is not prs[-1]:
                        ub_rc = np.inf  # not every row was priced: no bound this iteration
                    break
            cand.sort(key=lambda t: -t[0])
            cand = cand[:MAX_NEW_COLUMNS]
        if cand:
            add_columns(np.array([c[1] for c in cand]), np.array([c[2] for c in cand]))
        upper = min(upper, float(lam.sum() + max(ub_rc, 0.0)))
        history.append((it, value, upper))
        if upper - value <= rtol * max(1.0, abs(value)):
            proven = True
            break
        if not cand or time.perf_counter() > deadline:
            break
    bar.close()
    value, lam, theta = master.solve()
    if not proven and not np.isfinite(upper):
        # stopped while columns still improved: a bound from the final duals (short B&B; root bound at worst)
        extra = time.perf_counter() + min(1.0, 0.05 * time_limit)
        ub_rc = -np.inf
        for pr in pricers(lam):
            _, _, ub, nodes = pr.branch_and_bound(max_nodes=max_nodes, deadline=extra)
            nodes_total += nodes
            ub_rc = max(ub_rc, ub)
        upper = float(lam.sum() + max(ub_rc, 0.0))
    R = np.array(master.cols)
    # drop columns so light that clipping their entries (certify zeroes entries < 1e-13) would change their
    # shape: a column's leakage does not depend on its weight
    used = theta * R.max(axis=1) > 1e-10
    return {
        "matrix": (R[used] * theta[used, None]).T,
        "value": value,
        "upper_bound": max(upper, value),
        "proven": proven,
        "iterations": it,
        "n_columns": int(R.shape[0]),
        "time": time.perf_counter() - t0,
        "history": history,
        "pricing_nodes": nodes_total,
        "duals": lam,
        "columns": R,
    }


def _check_time_limit(time_limit: object) -> float:
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float, np.integer, np.floating)):
        raise TypeError(f"solver_options['time_limit'] must be a number of seconds, got {time_limit!r}")
    t = float(time_limit)
    if not t > 0 or math.isnan(t):
        raise ValueError(f"solver_options['time_limit'] must be > 0 seconds, got {time_limit!r}")
    return t


def _ball_seeds(ball: L1Ball, eps: float, util: Utility, prior: np.ndarray, time_limit: float, max_nodes: int) -> list:
    """Certifiable starting mechanisms outside Proposition 2: ``[(name, matrix)]``.

    Randomized response at the largest admissible ε (:func:`~pml_design.mechanisms.randomized_response_for_pml`),
    the inner approximation ``M(ε', P̂) ⊆ M(ε, B_β(P̂))`` with ``ε' = log(e^ε/(1 + βe^ε/2))`` (docs/errata.md C4)
    designed by column generation within 10 % of the time limit, and for N ≤ 30 the linear "truth" design
    (``LinearUtility(I)``, one LP over the exact dual form).
    """
    from ..mechanisms.closed_form import randomized_response_for_pml  # noqa: PLC0415

    n = ball.size
    seeds = [("randomized_response", randomized_response_for_pml(ball, eps).matrix)]
    e = math.exp(eps)
    eps_in = math.log(e / (1.0 + ball.radius * e / 2.0)) if e / (1.0 + ball.radius * e / 2.0) >= 1 else 0.0
    inner = column_generation(
        L1Ball(ball.center, 0.0), eps_in, util, prior, time_limit=max(0.1 * time_limit, 1e-3), max_nodes=max_nodes
    )
    seeds.append(("inner_approximation", inner["matrix"]))
    if n <= 30:
        from . import design  # noqa: PLC0415

        try:
            seeds.append(("truth", design(ball, eps, utility=LinearUtility(np.eye(n)), method="convex").matrix))
        except SolverFailedError:  # pragma: no cover - a seed is optional
            pass
    return seeds


def _a_priori_bound(util: Utility, eps: float, prior: np.ndarray, uset: UncertaintySet) -> float:
    """A bound every mechanism of ``M(ε, 𝒫)`` obeys: ``I(X; Y) ≤ min(ε, H(P))`` for mutual information, else ``inf``.

    If the utility prior P lies in 𝒫, ``I(X; Y) = E[log P(y|x)/P(y)] ≤ max_y ℓ(X → y) ≤ ε`` (Definition 5 under P),
    and always ``I(X; Y) ≤ H(X)``.
    """
    if not isinstance(util, MutualInformation):
        return np.inf
    inside = isinstance(uset, Simplex) or (
        isinstance(uset, L1Ball) and float(np.abs(prior - uset.center).sum()) <= uset.radius + 1e-12
    )
    if not inside:
        return np.inf
    q = prior[prior > 0]
    return float(min(eps, -(q * np.log(q)).sum()))


def _warn_gap(res: DesignResult, time_limit: float) -> None:
    """Emit a :class:`PMLDesignWarning` when the relative gap left is above :data:`WARN_GAP`."""
    rel = res.gap / max(abs(res.upper_bound), 1e-300) if res.gap > 0 else 0.0
    if rel > WARN_GAP:
        warnings.warn(
            PMLDesignWarning(
                f"the {res.utility_name} design is within {rel:.2%} of optimal (utility {res.utility:.6g}, upper bound "
                f"{res.upper_bound:.6g}) after the time limit of {time_limit:g} s; raise "
                "solver_options={'time_limit': ...} (or use method='exact' for small alphabets) to reduce the gap"
            ),
            stacklevel=3,
        )


def design_scalable(
    uset: UncertaintySet,
    eps: float,
    util: Utility,
    prior: np.ndarray,
    *,
    solver: str | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    max_nodes: int = 20000,
    progress: bool | None = None,
    warm_columns: np.ndarray | None = None,
) -> DesignResult:
    """``design(..., method="scalable")``: column generation with a certified result and a valid bound.

    Anytime: the whole call honours ``time_limit`` (seconds; the clock is checked inside the pricing too), and the
    result is never worse than the best certified seed (randomized response at the largest admissible ε, the
    inner approximation and the linear "truth" design outside Proposition 2). ``progress`` (default: whether
    stderr is a terminal) shows value, bound and gap. ``warm_columns`` (rows ``P̂·c = 1``, e.g. ``info["columns"]``
    of a design at a nearby ε) start the master outside Proposition 2, mixed into the cone where needed. A
    :class:`PMLDesignWarning` is emitted when the relative gap left exceeds 1 %.
    """
    if solver not in (None, "HIGHS", "HIGHS_SCIPY"):
        raise ValueError(f"the scalable method uses HiGHS for its master LP; solver {solver!r} is not supported")
    time_limit = _check_time_limit(time_limit)
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    t_start = time.perf_counter()
    info: dict = {}
    seeds: list = []
    if isinstance(uset, L1Ball) and uset.radius > 0 and not uset.in_interior_regime:
        # Outside Proposition 2 (beta >= 2 min P̂): exact pricing over the nested-pair rays of the ball's cone
        # (docs/design.md §5), started from certified seeds.
        if not np.allclose(prior, uset.center, atol=1e-12):
            raise ValueError("method='scalable' outside Proposition 2 needs the utility prior to be the ball's center")
        from .ball_pricing import mass_phi  # noqa: PLC0415

        seeds = _ball_seeds(uset, eps, util, prior, time_limit, max_nodes)
        if mass_phi(util) is not None or isinstance(util, MapAccuracy):
            cols = [_normalised_columns(W, uset.center) for _, W in seeds]
            if warm_columns is not None and np.size(warm_columns):
                cols.append(_mix_into_cone(_normalised_columns(np.asarray(warm_columns).T, uset.center), uset, eps))
            out = ball_column_generation(
                uset, eps, util, prior, deadline=t_start + time_limit, time_limit=time_limit, max_nodes=max_nodes,
                progress=progress, seed_columns=cols,
            )
            info = {"pricing": "exact (nested-pair rays of the ball's cone)"}
        else:  # a user utility: the inner approximation, bounded by the outer relaxation M(eps, P̂) ⊇ M(eps, ball)
            left = max(t_start + time_limit - time.perf_counter(), 1e-3)
            out = column_generation(
                L1Ball(uset.center, 0.0), eps, util, prior, time_limit=left, max_nodes=max_nodes, progress=progress
            )
            out["matrix"] = seeds[1][1]
            out["proven"] = False
            info = {"pricing": "inner M(eps', P_hat) seed, outer M(eps, P_hat) bound"}
    else:
        out = column_generation(uset, eps, util, prior, time_limit=time_limit, max_nodes=max_nodes, progress=progress)
        if isinstance(uset, L1Ball) and not isinstance(util, LinearUtility):
            from ..mechanisms.closed_form import randomized_response_for_pml  # noqa: PLC0415

            seeds = [("randomized_response", randomized_response_for_pml(uset, eps).matrix)]
    upper = min(float(out["upper_bound"]), _a_priori_bound(util, eps, prior, uset))
    kw = dict(
        method="scalable", solver="HIGHS (column generation)", drop_empty_columns=not isinstance(util, LinearUtility),
        gap_rtol=PROOF_RTOL,
    )
    res = certified_result(
        out["matrix"], uset, eps, util, prior, upper=upper, solved_optimally=bool(out["proven"]),
        status="optimal" if out["proven"] else "bounded", solve_time=out["time"],
        info={k: out[k] for k in ("iterations", "n_columns", "pricing_nodes")} | info, **kw,
    )
    for name, W in seeds:  # never worse than a certified seed
        alt = certified_result(
            W, uset, eps, util, prior, upper=res.upper_bound, solved_optimally=bool(out["proven"]),
            status=res.status, solve_time=out["time"], info=res.info | {"seed_used": name}, **kw,
        )
        if alt.utility > res.utility + 1e-12 * max(1.0, abs(res.utility)):
            res = alt
    if "columns" in out:
        used = out["matrix"].max(axis=0) > 0
        res.info["columns"] = _normalised_columns(out["matrix"][:, used], uset.center)  # type: ignore[union-attr]
    res.info["wall_time"] = time.perf_counter() - t_start
    _warn_gap(res, time_limit)
    return res
