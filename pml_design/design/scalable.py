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
import time
from dataclasses import dataclass

import numpy as np

from ..uncertainty import FiniteSet, L1Ball, Simplex, UncertaintySet
from .certify import certified_result
from .result import DesignResult, SolverFailedError
from .utilities import (
    ChiSquareInformation,
    LinearUtility,
    MapAccuracy,
    MutualInformation,
    SubConvexUtility,
    TotalVariationInformation,
    Utility,
)

__all__ = ["SliceStructure", "column_generation", "design_scalable", "slice_structure"]

WIDTH_MIN = 1e-2
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
) -> tuple[float, np.ndarray | None, float, int]:
    """Branch and bound for ``max_{c∈K1} Σ φ_x(c_x) + const − λ·c`` (a separable convex maximisation).

    With a finite ``stop_above`` the search returns as soon as a feasible value exceeds it (column generation
    only needs an improving column); the returned upper bound is then ``inf``. ``collect`` (a list) receives
    every feasible vertex found whose value exceeds ``incumbent``, as ``(value, ray)`` pairs.

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


def column_generation(
    uset: UncertaintySet,
    epsilon: float,
    util: Utility,
    prior: np.ndarray,
    *,
    max_iter: int = 5000,
    time_limit: float = 600.0,
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

    bar = progress_bar(total=max_iter, desc="column generation", enabled=progress)
    for it in range(1, max_iter + 1):
        value, lam, theta = master.solve()
        bar.update(1)
        bar.set_postfix(value=f"{value:.6g}", bound=f"{upper:.6g}", refresh=False)
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
                    stop_above=10 * thresh, collect=found,
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
        if time.perf_counter() - t0 > time_limit:
            break
    bar.close()
    value, lam, theta = master.solve()
    if not proven and sep is not None and not np.isfinite(upper):
        # stopped by the time/iteration limit while columns were still improving: bound the final pricing
        _, _, ub_rc, nodes = separable_pricing(sep[0], sep[1], lam, st, max_nodes=max_nodes, rtol=1e-12)
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


def design_scalable(
    uset: UncertaintySet,
    eps: float,
    util: Utility,
    prior: np.ndarray,
    *,
    solver: str | None = None,
    time_limit: float = 600.0,
    max_nodes: int = 20000,
    progress: bool = False,
) -> DesignResult:
    """``design(..., method="scalable")``: column generation with a certified result and a valid bound."""
    if solver not in (None, "HIGHS", "HIGHS_SCIPY"):
        raise ValueError(f"the scalable method uses HiGHS for its master LP; solver {solver!r} is not supported")
    info: dict = {}
    if isinstance(uset, L1Ball) and uset.radius > 0 and not uset.in_interior_regime:
        # Outside Proposition 2 (beta >= 2 min P̂): inner approximation M(eps', P̂) ⊆ M(eps, ball) with
        # eps' = log(e^eps / (1 + beta e^eps / 2)) (Theorem 4's k > 1 bound holds for every beta, docs/errata.md
        # C4), and the outer bound M(eps, ball) ⊆ M(eps, P̂) (P̂ is in the ball) for the upper bound.
        if not np.allclose(prior, uset.center, atol=1e-12):
            raise ValueError("method='scalable' outside Proposition 2 needs the utility prior to be the ball's center")
        e = math.exp(eps)
        eps_in = math.log(e / (1.0 + uset.radius * e / 2.0))
        fixed = L1Ball(uset.center, 0.0)
        out = column_generation(
            fixed, eps_in, util, prior, time_limit=time_limit / 2, max_nodes=max_nodes, progress=progress
        )
        outer = column_generation(
            fixed, eps, util, prior, time_limit=time_limit / 2, max_nodes=max_nodes, progress=progress
        )
        out["upper_bound"] = outer["upper_bound"]
        out["proven"] = False
        info = {"inner_epsilon": eps_in, "approximation": "inner M(eps', P_hat), outer M(eps, P_hat)"}
    else:
        out = column_generation(uset, eps, util, prior, time_limit=time_limit, max_nodes=max_nodes, progress=progress)
    return certified_result(
        out["matrix"],
        uset,
        eps,
        util,
        prior,
        upper=float(out["upper_bound"]),
        solved_optimally=bool(out["proven"]),
        status="optimal" if out["proven"] else "bounded",
        method="scalable",
        solver="HIGHS (column generation)",
        solve_time=out["time"],
        info={k: out[k] for k in ("iterations", "n_columns", "pricing_nodes")} | info,
        drop_empty_columns=not isinstance(util, LinearUtility),
        gap_rtol=PROOF_RTOL,
    )
