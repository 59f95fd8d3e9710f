"""The best single column of the ℓ1 ball's cone: a Lagrangian bound at zero duals (``docs/design.md`` §5).

Implements: the upper bound ``U(W) ≤ max_r μ(r)`` on the column-generation LP of ``M(ε, B_β(P̂))`` outside
Proposition 2 (``β ≥ 2 min P̂``) for a utility whose column term is ``μ(r) = Σ_x P̂_x φ(r_x) + const`` on the slice
``P̂·r = 1`` (mutual information, χ², total variation with the utility prior ``P̂``; :func:`.ball_pricing.mass_phi`).

Every mechanism is ``Σ_k t_k r_k`` over normalised columns (``P̂·r_k = 1``), so ``Σ_k t_k = P̂·1 = 1`` and its utility
``Σ_k t_k μ(r_k)`` is at most the largest ``μ`` over the slice of the cone; ``μ`` is convex, so that maximum is
attained at an extreme point: a nested-pair ray ``a 1_U + b 1_{V∖U}`` whose levels depend only on the masses
``(u, v)`` (§3). Its value ``G(u, v) = u φ(a) + (v − u) φ(b) + (1 − v) φ(0) + const`` is bounded over *all* masses
(a relaxation of the subset masses), by the interval cell bounds of :meth:`.ball_pricing.PairPricer._cells` with
``Λ = 0`` on a grid geometric towards the threshold ``θ = β/2 + e^{−ε}`` (where the levels change fastest),
refined adaptively. This is the Lagrangian bound of §5 at duals ``λ = 0``; unlike the bound at the master's duals it
involves no knapsack over the items, so it is tight whenever the best columns are (nearly) uniform on a set of mass
θ (value ``θ φ(1/θ) + (1 − θ) φ(0) + const``; ``log(1/θ)`` for mutual information), as on large balls.

The master reaches that bound only with such columns, which prefix pairs and the branch and bound miss (a
subset-sum question); :func:`threshold_pairs` finds sets of mass just above or below θ by meet in the middle.
"""

from __future__ import annotations

import time

import numpy as np

from .ball_pricing import BallCone, PairPricer, _pair_values

__all__ = ["max_column_value", "threshold_pairs"]

#: Cells per axis of the first grid (uniform and geometric towards θ, merged).
GRID = 64
#: Smallest geometric step towards θ, relative to the axis length.
GEOMETRIC_FLOOR = 1e-12


def _values_at(cone: BallCone, spec, u, v, full) -> np.ndarray:
    """Exact ``G`` at points of the mass domain (``-inf`` where the point is not a feasible pair)."""
    hv = np.where(full, cone.h_full, cone.h(v))
    ok = (u >= 0) & (u < cone.threshold) & (u < v) & (hv >= 0)
    with np.errstate(all="ignore"):
        val = _pair_values(cone, spec, u, v, hv, 0.0, 0.0)
    return np.where(ok & np.isfinite(val), val, -np.inf)


def max_column_value(
    cone: BallCone,
    spec: tuple,
    *,
    rtol: float = 1e-7,
    levels: int = 60,
    max_cells: int = 1 << 16,
    deadline: float = np.inf,
) -> float:
    """Upper bound on ``max_r μ(r)`` over the normalised extreme rays of the ball's cone (see module docstring).

    Parameters
    ----------
    cone : BallCone
        The cone of ``M(ε, B_β(P̂))``.
    spec : tuple
        ``(φ, const)`` from :func:`.ball_pricing.mass_phi` (φ convex).
    rtol : float
        Cells whose bound exceeds the best value found at a point by at most ``rtol·max(1, |best|)`` are closed.
    levels, max_cells : int
        Most rounds of 2 × 2 refinement, and most cells split per round (best bounds first; the search stops at
        ``4·max_cells`` open cells).
    deadline : float
        A ``time.perf_counter()`` value after which the refinement stops. The bound stays valid whichever stops it.

    Returns
    -------
    float
        A valid upper bound on the utility of every mechanism in ``M(ε, B_β(P̂))`` (utility prior ``P̂``),
        within ``rtol`` of ``sup G`` over the mass domain when the refinement completes.
    """
    if spec is None:
        raise ValueError("max_column_value needs a column term (phi, const) from mass_phi, got None")
    th, hb = cone.threshold, 0.5 * cone.beta
    pr = PairPricer(cone, spec, np.zeros(cone.p.shape[0]))
    geo = np.geomspace(GEOMETRIC_FLOOR, 1.0, GRID)
    uh = min(th, 1.0)  # u < θ, and u < v ≤ 1
    ue = np.unique(np.concatenate([np.linspace(0.0, uh, GRID + 1), uh - uh * geo, [min(hb, uh)]]))
    ue = np.clip(ue, 0.0, uh)
    parts = [(ue[:-1], ue[1:], np.ones(ue.size - 1), np.ones(ue.size - 1), np.ones(ue.size - 1, dtype=bool))]
    if th < 1.0:  # proper V: v ∈ [θ, 1]
        ve = np.unique(np.concatenate([th + (1.0 - th) * geo, np.linspace(th, 1.0, GRID + 1)]))
        ve = np.clip(ve, th, 1.0)
        U1, V1 = np.meshgrid(ue[:-1], ve[:-1], indexing="ij")
        U2, V2 = np.meshgrid(ue[1:], ve[1:], indexing="ij")
        parts.append((U1.ravel(), U2.ravel(), V1.ravel(), V2.ravel(), np.zeros(U1.size, dtype=bool)))
    u1, u2, v1, v2, full = (np.concatenate(x) for x in zip(*parts))
    best, closed = -np.inf, -np.inf
    for level in range(levels + 1):
        z = np.zeros_like(u1)
        hv1 = np.where(full, cone.h_full, cone.h(v1))
        hv2 = np.where(full, cone.h_full, cone.h(v2))
        ub = pr._cells(u1, u2, z, v1, v2, hv1, hv2, z, z, proper=~full)
        um = 0.5 * (u1 + u2)
        for uu, vv in ((u1, v1), (u1, v2), (um, v1), (um, 0.5 * (v1 + v2))):
            best = max(best, float(_values_at(cone, spec, uu, np.where(full, 1.0, vv), full).max(initial=-np.inf)))
        live = ub > best + rtol * max(1.0, abs(best))
        closed = max(closed, float(ub[~live].max(initial=-np.inf)))
        if not live.any():
            return closed
        if level == levels or int(live.sum()) > 4 * max_cells or time.perf_counter() > deadline:
            return max(closed, float(ub[live].max()))
        # best first: the cells with the largest bounds are split, the rest wait (their bounds kept)
        idx = np.flatnonzero(live)
        cap = max_cells // 4
        if idx.size > cap:
            idx = idx[np.argsort(-ub[idx], kind="stable")]
            wait, idx = idx[cap:], idx[:cap]
        else:
            wait = idx[:0]
        held = (u1[wait], u2[wait], v1[wait], v2[wait], full[wait])
        u1, u2, v1, v2, full = u1[idx], u2[idx], v1[idx], v2[idx], full[idx]
        um, vm = 0.5 * (u1 + u2), 0.5 * (v1 + v2)
        sp = ~full  # proper-V cells split 2 × 2, whole-alphabet cells (v = 1) in u only
        u1 = np.concatenate([u1, um, u1[sp], um[sp]])
        u2 = np.concatenate([um, u2, um[sp], u2[sp]])
        v1 = np.concatenate([v1, v1, vm[sp], vm[sp]])
        v2 = np.concatenate([np.where(full, v2, vm)] * 2 + [v2[sp]] * 2)
        full = np.concatenate([full, full, full[sp], full[sp]])
        u1, u2, v1, v2, full = (np.concatenate([x, y]) for x, y in zip((u1, u2, v1, v2, full), held))
    return max(closed, best)  # pragma: no cover - the loop returns


def _subset_sums(m: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P̂(S), w(S))`` of all ``2^k`` subsets of k items (bit i of the index = item i), by doubling."""
    ms, ws = np.zeros(1), np.zeros(1)
    for mi, wi in zip(m, w):
        ms, ws = np.concatenate([ms, ms + mi]), np.concatenate([ws, ws + wi])
    return ms, ws


def _window_argmin(items: np.ndarray, m: np.ndarray, w: np.ndarray, t1: np.ndarray, t2: np.ndarray) -> list:
    """For each mass window ``[t1, t2]``: the subset of ``items`` with its mass in it and the least ``w`` (or None).

    Horowitz–Sahni meet in the middle: the subsets of the second half sorted by mass, with a sparse table of
    running arg-minima of ``w``; each subset of the first half looks up the range of masses that completes it.
    """
    k = items.size // 2
    A, B = items[:k], items[k:]
    mA, wA = _subset_sums(m[A], w[A])
    mB, wB = _subset_sums(m[B], w[B])
    srt = np.argsort(mB, kind="stable")
    mB, wB = mB[srt], wB[srt]
    table = [np.arange(mB.size)]
    while 2 ** len(table) <= mB.size:
        prev, h = table[-1], 2 ** (len(table) - 1)
        a, b = prev[:-h], prev[h:]
        table.append(np.where(wB[a] <= wB[b], a, b))
    out = []
    for lo_m, hi_m in zip(t1, t2):
        lo = np.searchsorted(mB, lo_m - mA, side="left")
        hi = np.searchsorted(mB, hi_m - mA, side="right")
        ok = hi > lo
        if not ok.any():
            out.append(None)
            continue
        lev = np.floor(np.log2(np.where(ok, hi - lo, 1))).astype(np.int64)
        best, arg = np.full(mA.size, np.inf), np.zeros(mA.size, dtype=np.int64)
        for L in np.unique(lev[ok]):
            s = ok & (lev == L)
            i1, i2 = table[L][lo[s]], table[L][hi[s] - 2**L]
            j = np.where(wB[i1] <= wB[i2], i1, i2)
            best[s], arg[s] = wB[j] + wA[s], j
        ia = int(np.argmin(best))
        ib = int(srt[arg[ia]])
        S = np.zeros(m.shape[0], dtype=bool)
        S[A[((ia >> np.arange(A.size)) & 1) == 1]] = True
        S[B[((ib >> np.arange(B.size)) & 1) == 1]] = True
        out.append(S)
    return out


#: Items of the meet in the middle (2^(CORE_SIZE/2) subsets a half); beyond, those nearest the fractional break.
CORE_SIZE = 28
#: Widths δ of the mass windows ``[θ, θ + δ]`` (for V) and ``[θ − δ, θ)`` (for U) searched.
WINDOWS = np.geomspace(1e-8, 3e-2, 8)


def threshold_pairs(pr: PairPricer, thresh: float = 0.0) -> list:
    """Nested pairs near the best single column: one set of mass just above or below θ (a heuristic, exact values).

    The best columns are nearly uniform on a set of mass θ (module docstring), so the pricing's hard part is a
    subset-sum question that prefix pairs and the fractional relaxation miss: for each window of :data:`WINDOWS`
    the set with its mass in ``[θ, θ + δ]`` (V) or ``[θ − δ, θ)`` (U) and the least ``Λ − ρP̂`` (ρ: the κ at the
    fractional break of mass θ) is found exactly by meet in the middle over the :data:`CORE_SIZE` items nearest the
    break in κ order (the cheaper ones always in, the dearer ones out). V is completed by its best κ-prefix as U,
    and U by its best single item outside as V∖U.

    Implements: the subset-sum pricing heuristic of the module docstring (``docs/design.md`` §5).

    Parameters
    ----------
    pr : PairPricer
        The pricer of the current duals (its cone, mass spec and ``Λ``).
    thresh : float, default 0.0
        Only pairs whose reduced value exceeds it are returned.

    Returns
    -------
    list of tuple
        ``(value, U, V)`` (float, boolean masks of shape (N,)) above ``thresh``, best first, at most one per window
        and side, distinct V; empty when the threshold mass θ is ≥ 1 or fewer than two symbols have mass.
    """
    cone, p, lam = pr.cone, pr.cone.p, pr.lam
    th = cone.threshold
    pos = np.flatnonzero(p > 0)
    if th >= 1.0 or pos.size < 2:
        return []
    order = pos[np.argsort(lam[pos] / p[pos], kind="stable")]
    brk = int(np.searchsorted(np.cumsum(p[order]), th))
    lo = min(max(brk - CORE_SIZE // 2, 0), max(order.size - CORE_SIZE, 0))
    core, forced = order[lo:lo + CORE_SIZE], order[:lo]
    rho = float(lam[order[min(brk, order.size - 1)]] / p[order[min(brk, order.size - 1)]])
    base = float(p[forced].sum())
    w = lam - rho * p
    sets = _window_argmin(core, p, w, th - base + 0.0 * WINDOWS, th - base + WINDOWS)
    sets_u = _window_argmin(core, p, w, th - base - WINDOWS, th - base - 1e-15 + 0.0 * WINDOWS)
    kappa = np.where(p > 0, lam / np.where(p > 0, p, 1.0), 0.0)
    out = []

    def pick(u, v, X, Y, full, make):
        hv = np.where(full, cone.h_full, cone.h(v))
        with np.errstate(all="ignore"):
            val = _pair_values(cone, pr.spec, u, v, hv, X, Y)
        val = np.where(cone.feasible(u, v, hv) & (u < v) & np.isfinite(val), val, -np.inf)
        k = int(np.argmax(val))
        if val[k] > thresh:
            out.append((float(val[k]), *make(k)))

    for S in sets:  # V = S, U = a κ-prefix of its items (the empty one included)
        if S is not None:
            S[forced] = True
            items = np.flatnonzero(S)
            items = items[np.argsort(kappa[items], kind="stable")]
            u = np.concatenate([[0.0], np.cumsum(p[items])])[:-1]
            X = np.concatenate([[0.0], np.cumsum(lam[items])])[:-1]
            full = bool(S.all())
            pick(u, np.full(u.size, p[S].sum()), X, np.full(u.size, lam[S].sum()), full,
                 lambda k, S=S, items=items: (np.isin(np.arange(S.size), items[:k]), S.copy()))
    for S in sets_u:  # U = S, V∖U = one item outside it
        if S is not None:
            S[forced] = True
            x = np.flatnonzero(~S)
            full = np.full(x.size, S.sum() == S.size - 1)
            pick(np.full(x.size, p[S].sum()), p[S].sum() + p[x], np.full(x.size, lam[S].sum()), lam[S].sum() + lam[x],
                 full, lambda k, S=S, x=x: (S.copy(), S | (np.arange(S.size) == x[k])))
    out.sort(key=lambda t: -t[0])
    return list({t[2].tobytes(): t for t in reversed(out)}.values())[::-1]  # distinct V, best first
