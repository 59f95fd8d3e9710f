"""Exact pricing of separable sub-convex utilities by spatial branch and bound (with a valid bound).

Implements: ``max_{c∈K1} Σ_x φ_x(c_x) + const − λ·c`` over the normalised column cone ``K1`` of :mod:`.cone`
(a separable convex maximisation; the pricing problem of column generation on [15, Theorem 6]'s ray LP for
mutual information, χ² and total variation): Falk–Soland branch and bound with chord (concave-envelope)
relaxations over S-intervals and coordinate intervals, a Lagrangian bound per S-interval, and the bounds of
every pruned or unexplored node kept, so the returned upper bound is valid at any node limit or deadline
(``docs/design.md`` §5).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable

import numpy as np

from .cone import SliceStructure, _in_slice, _vertices_from_pattern

__all__ = ["separable_pricing"]

WIDTH_MIN = 1e-2


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
    phi: Callable[[np.ndarray], np.ndarray], const: float, lam: np.ndarray, st: SliceStructure, *,
    max_nodes: int = 20000, rtol: float = 1e-9,
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

    Parameters
    ----------
    phi : callable
        ``c ↦ (φ_x(c_x))_x`` on an array of shape (N,) (convex in each coordinate).
    const : float
        The constant term.
    lam : numpy.ndarray, shape (N,)
        The dual vector λ.
    st : SliceStructure
        The normalised column cone ``K1``.
    max_nodes : int, default 20000
        Most nodes explored.
    rtol : float, default 1e-9
        Relative tolerance below which a node cannot beat the incumbent and is closed.
    incumbent : float, default -inf
        Value to beat: nodes whose bound does not exceed it are pruned.
    stop_above : float, default inf
        Return as soon as a feasible value exceeds it.
    collect : list or None, default None
        Receives ``(value, ray)`` for every feasible vertex found above ``incumbent``.
    deadline : float, default inf
        ``time.perf_counter()`` value at which the search stops.

    Returns
    -------
    best_value : float
        The best feasible value found (``-inf`` if none).
    best_ray : numpy.ndarray or None
        Its column ``c``.
    upper_bound : float
        A valid upper bound on the maximum (``inf`` when stopped by ``stop_above``).
    nodes : int
        Nodes explored.
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
