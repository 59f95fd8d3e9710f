"""Exact pricing over the column cone of an ℓ1 ball of any radius: nested-pair rays and a branch and bound.

Implements: the pricing problem of the column generation of :mod:`.scalable` for ``M(ε, B_β(P̂))`` outside
Proposition 2 (``β ≥ 2 min P̂``), using the extreme-ray structure of :func:`.rays.l1_ball_rays` (derived in
``docs/design.md`` §3 and §5).

With ``h(m) = e^ε max(0, m − β/2) − 1`` for a proper subset of mass ``m`` and ``h = e^ε − 1`` for the whole
alphabet, every extreme ray of the column cone normalised to ``P̂·r = 1`` is, for a nested pair ``U ⊊ V``
with ``h(U) < 0 ≤ h(V)`` (``U`` may be empty), the three-level column

    ``r = a 1_U + b 1_{V∖U}``,  ``a = (h_V − h_U)/D``, ``b = −h_U/D``, ``D = h_V u − h_U v``,

with ``u = P̂(U)``, ``v = P̂(V)``. The levels depend on the pair only through its masses. For a utility whose
column term is ``Σ_x P̂_x φ(c_x)`` on the slice ``P̂·c = 1`` (mutual information: ``φ(c) = c log c``; χ²:
``c²``, constant −1; total variation: ``|c − 1|/2``; a linear utility: ``φ = 0``) the reduced value of a pair is

    ``val(U, V) = G(u, v) − (a − b) Λ(U) − b Λ(V)``,   ``G = u φ(a) + (v − u) φ(b) + (1 − v) φ(0) + const``,

where ``Λ`` is the dual vector minus the linear weights. Since ``a − b > 0`` and ``b > 0``, for fixed masses the
pair is best when ``Λ(U)`` and ``Λ(V)`` are smallest; relaxing membership to fractions, both minima are the
fractional knapsack ``L(m)`` (items in ascending ``Λ_x/P̂_x``), attained by *prefix sets* in that order when
``m`` is a prefix mass. Hence (i) the prefix pairs give exact values of actual rays (the heuristic pool), and
(ii) ``val ≤ G(u, v) − (a − b) L(u) − b L(v)`` (a valid bound, used with interval arithmetic over (u, v) cells)
for every pair of a branch-and-bound node whose memberships are partly fixed.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..utilities import ChiSquareInformation, MutualInformation, TotalVariationInformation

__all__ = ["MAX_ENUMERATION_SIZE", "BallCone", "PairPricer", "mass_phi"]

#: Largest alphabet priced by complete enumeration of the 3^N nested pairs (43 M words at N = 16, ~1-2 s).
MAX_ENUMERATION_SIZE: int = 16
#: (u, v) cells per axis in a node bound before refinement.
GRID = 8
#: Halvings of a node bound's cells (cell width down to 1/2^REFINE_LEVELS of the first grid's).
REFINE_LEVELS = 10
#: Most cells a node bound refines at once.
MAX_CELLS = 4096
#: A node bound is refined until it exceeds the relaxation's value by at most this share of its excess over the
#: pruning target.
BOUND_RTOL = 0.1


def _xlogx(c):
    c = np.asarray(c, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(c > 0, c * np.log(np.where(c > 0, c, 1.0)), 0.0)


def mass_phi(util: object) -> tuple[Callable[[np.ndarray], np.ndarray], float] | None:
    """``(φ, const)`` with ``μ(c) = Σ_x P̂_x φ(c_x) + const`` on ``P̂·c = 1`` (prior = P̂), or None.

    Implements: the column term of the module docstring (docs/design.md §5); φ is convex (maximal at interval ends).

    Parameters
    ----------
    util : Utility
        The design utility.

    Returns
    -------
    tuple of (callable, float) or None
        MI ``(c log c, 0)``, χ² ``(c², −1)``, total variation ``(|c − 1|/2, 0)``; None for any other utility.
    """
    if isinstance(util, MutualInformation):
        return _xlogx, 0.0
    if isinstance(util, ChiSquareInformation):
        return _square, -1.0
    if isinstance(util, TotalVariationInformation):
        return _half_abs, 0.0
    return None


def _square(c):
    return np.asarray(c, dtype=float) ** 2


def _half_abs(c):
    return 0.5 * np.abs(np.asarray(c, dtype=float) - 1.0)


#: Right derivatives φ' of the column terms (non-decreasing: φ is convex), for ``φ(a) − φ(b) ≤ φ'(a)(a − b)``.
_DPHI = {
    _xlogx: lambda c: np.log(np.maximum(c, 1e-300)) + 1.0,
    _square: lambda c: 2.0 * np.asarray(c, dtype=float),
    _half_abs: lambda c: np.where(np.asarray(c, dtype=float) >= 1.0, 0.5, -0.5),
}


@dataclass(frozen=True)
class BallCone:
    """The normalised column cone of ``M(ε, B_β(P̂))``: the mass function ``h`` and the ray levels."""

    p: np.ndarray
    beta: float
    epsilon: float

    @property
    def e(self) -> float:
        return math.exp(self.epsilon)

    @property
    def threshold(self) -> float:
        """Mass ``θ = β/2 + e^{−ε}`` at which ``h`` of a proper subset turns non-negative."""
        return self.beta / 2.0 + math.exp(-self.epsilon)

    @property
    def h_full(self) -> float:
        return self.e - 1.0

    def h(self, m):
        return self.e * np.maximum(0.0, np.asarray(m, dtype=float) - self.beta / 2.0) - 1.0

    def levels(self, u, v, hv):
        """Levels ``(a, b)`` of the ray of a pair with masses u, v and ``h_V = hv``."""
        nu_ = -self.h(u)
        d = hv * u + nu_ * v
        return (hv + nu_) / d, nu_ / d

    def columns(self, U: np.ndarray, V: np.ndarray) -> np.ndarray:
        """Rays (rows) of pairs given as boolean masks (rows of U, V), normalised to ``P̂·r = 1``."""
        U = np.atleast_2d(U)
        V = np.atleast_2d(V)
        u = U.astype(float) @ self.p
        v = V.astype(float) @ self.p
        hv = np.where(V.all(axis=1), self.h_full, self.h(v))
        a, b = self.levels(u, v, hv)
        return np.where(U, a[:, None], np.where(V, b[:, None], 0.0))

    def feasible(self, u, v, hv) -> np.ndarray:
        return (self.h(u) < 0) & (hv >= 0)


def _pair_values(cone: BallCone, spec, u, v, hv, X, Y):
    """Exact reduced values ``G(u, v) − (a − b) X − b Y`` of pairs with ``X = Λ(U)``, ``Y = Λ(V)``."""
    a, b = cone.levels(u, v, hv)
    val = -(a - b) * X - b * Y
    if spec is not None:
        phi, const = spec
        val = val + u * phi(a) + (v - u) * phi(b) + (1.0 - v) * phi(0.0) + const
    return val


def _kappa_order(p: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Items in ascending ``Λ_x/P̂_x`` (zero-mass items: negative Λ first, the others last)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(p > 0, lam / np.where(p > 0, p, 1.0), np.where(lam < 0, -np.inf, np.inf))
    return np.argsort(kappa, kind="stable")


def _cpos(c1, c2, f):
    """max of ``c·f`` over ``c ∈ [c1, c2]`` (c ≥ 0), with ``0·inf = 0``."""
    with np.errstate(invalid="ignore"):
        out = np.where(f >= 0, c2 * f, c1 * f)
    return np.where((c2 == 0) | (f == 0), np.where(f >= 0, 0.0, c1 * f), out)


@dataclass
class _Free:
    """The free items of a branch-and-bound depth, in ascending κ (positive-mass ones for the bound)."""

    cm: np.ndarray  # cumulative mass, positive-mass items
    cl: np.ndarray  # cumulative Λ, positive-mass items
    neg0: float  # Σ Λ over zero-mass items with Λ < 0 (always in the fractional optimum)
    tstar: float  # mass at which the fractional knapsack cost is smallest
    total: float  # Σ Λ over all free items
    order: np.ndarray  # all free items in ascending κ (for completions)
    cmA: np.ndarray  # cumulative mass along ``order``


@dataclass
class PairPricer:
    """``max val(U, V)`` over the nested-pair rays for one dual vector (see module docstring).

    Parameters
    ----------
    cone : BallCone
    spec : (φ, const) or None
        From :func:`mass_phi`; None for a linear column value.
    lam : numpy.ndarray
        ``Λ`` (duals minus linear weights).
    """

    cone: BallCone
    spec: object
    lam: np.ndarray
    grid: int = GRID
    _free_cache: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        p = self.cone.p
        pos = np.flatnonzero(p > 0)
        zero = np.flatnonzero(p <= 0)
        self.branch = np.concatenate([pos[np.argsort(-p[pos], kind="stable")], zero])

    # ---------------- prefix pairs (heuristic pool, exact values) ----------------
    def prefix_pool(self, max_pairs: int = 2_000_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All prefix pairs ``U = first i``, ``V = first j`` (i < j) in ascending κ: ``(values, U masks, V masks)``.

        Returns the values of every feasible pair and lazily builds masks only for the best ones (see
        :meth:`masks`); here the masks are (i, j) index pairs into :attr:`pool_order`.
        """
        p, lam, cone = self.cone.p, self.lam, self.cone
        n = p.shape[0]
        order = _kappa_order(p, lam)
        cm = np.concatenate([[0.0], np.cumsum(p[order])])
        cl = np.concatenate([[0.0], np.cumsum(lam[order])])
        i_all = np.arange(n + 1)
        if (n + 1) * n // 2 > max_pairs:  # thin the U prefixes (large N): every j, a strided subset of i
            stride = int(math.ceil((n + 1) * n / 2 / max_pairs))
            i_all = np.unique(np.concatenate([i_all[::stride], i_all[: min(n, 64)]]))
        ii, jj = np.meshgrid(i_all, np.arange(n + 1), indexing="ij")
        keep = ii < jj
        i, j = ii[keep], jj[keep]
        u, v = cm[i], cm[j]
        hv = np.where(j == n, cone.h_full, cone.h(v))
        ok = cone.feasible(u, v, hv)
        i, j, u, v, hv = i[ok], j[ok], u[ok], v[ok], hv[ok]
        vals = _pair_values(cone, self.spec, u, v, hv, cl[i], cl[j])
        self.pool_order = order
        return vals, i, j

    def prefix_masks(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = self.cone.p.shape[0]
        rank = np.empty(n, dtype=np.int64)
        rank[self.pool_order] = np.arange(n)
        return rank[None, :] < np.asarray(i)[:, None], rank[None, :] < np.asarray(j)[:, None]

    # ---------------- branch and bound ----------------
    def _free(self, d: int) -> _Free:
        fr = self._free_cache.get(d)
        if fr is not None:
            return fr
        p, lam = self.cone.p, self.lam
        items = self.branch[d:]
        order = items[_kappa_order(p[items], lam[items])]
        posm = order[p[order] > 0]
        cm = np.concatenate([[0.0], np.cumsum(p[posm])])
        cl = np.concatenate([[0.0], np.cumsum(lam[posm])])
        zero = items[p[items] <= 0]
        neg0 = float(np.minimum(lam[zero], 0.0).sum())
        k = int(np.searchsorted(lam[posm] / p[posm], 0.0, side="left")) if posm.size else 0
        fr = _Free(cm, cl, neg0, float(cm[k]), float(lam[items].sum()), order, np.cumsum(p[order]))
        self._free_cache[d] = fr
        return fr

    @staticmethod
    def _min_L(fr: _Free, t1, t2):
        """``min_{t ∈ [t1, t2]} L(t)`` for the fractional knapsack cost L (convex, piecewise linear)."""
        r = fr.cm[-1]
        t = np.clip(fr.tstar, np.clip(t1, 0.0, r), np.clip(t2, 0.0, r))
        return fr.neg0 + np.interp(t, fr.cm, fr.cl)

    def _cells(self, u1, u2, Xlo, v1, v2, hv1, hv2, Ylo, Zlo=None, proper=None):
        """Upper bounds of ``G − (a − b)X − bY`` on (u, v) cells, element-wise (arrays broadcast together).

        Interval arithmetic: ``b`` falls in u and v, ``a − b`` rises in v, ``a, b ≤ e^ε`` (a column's largest
        entry is at most ``e^ε P̂·r``); each term is bounded over the cell separately, so the bound exceeds the
        cell's maximum by O(cell width) (refined in :meth:`node_bound`). With ``Zlo ≤ Λ(V∖U)`` the same value
        written ``G − aX − bZ`` gives a second bound (the smaller is kept): it stays tight where ``a − b`` and
        ``b`` are both uncertain but ``a`` is not (u and v near the threshold θ, where ``V∖U`` is light). Where
        ``proper`` (V not the whole alphabet) and ``u ≥ β/2``, ``a = 1/θ`` exactly: ``n_U = e^ε(θ − u)``,
        ``h_V = e^ε(v − θ)``, so ``a = (h_V + n_U)/(h_V u + n_U v) = (v − u)/(θ(v − u))``.
        """
        cone = self.cone
        nlo = np.maximum(-cone.h(u2), 0.0)
        nhi = -cone.h(u1)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_u1 = np.where(u1 > 0, 1.0 / np.where(u1 > 0, u1, 1.0), np.inf)
            b_lo = np.nan_to_num(nlo / (hv2 * u2 + nlo * v2), nan=0.0)
            b_hi = np.minimum(np.nan_to_num(nhi / (hv1 * u1 + nhi * v1), nan=np.inf), 1.0 / v1)
            d_lo = np.nan_to_num(hv1 / (hv1 * u2 + nhi * v2), nan=0.0)
            d_hi = np.minimum(np.nan_to_num(hv2 / (hv2 * u1 + nlo * v1), nan=np.inf, posinf=np.inf), inv_u1)
            w_lo = np.nan_to_num(hv1 / (hv1 + nhi), nan=0.0)
            w_hi = np.nan_to_num(hv2 / (hv2 + nlo), nan=1.0)
            den_lo = v1 - w_hi * (v1 - u1)
            a_hi = np.minimum(np.where(den_lo > 0, 1.0 / np.where(den_lo > 0, den_lo, 1.0), np.inf), b_hi + d_hi)
            a_lo = np.maximum(1.0 / (v2 - w_lo * (v2 - u2)), b_lo + d_lo)
            a_hi = np.minimum(a_hi, cone.e)
            b_hi = np.minimum(b_hi, cone.e)
            if proper is not None:
                flat = proper & (u1 >= 0.5 * cone.beta)
                a_lo = np.where(flat, 1.0 / cone.threshold, a_lo)
                a_hi = np.where(flat, 1.0 / cone.threshold, a_hi)
        ub = 0.0
        if self.spec is not None:
            phi, const = self.spec
            fa = np.maximum(phi(a_lo), phi(a_hi))
            fb = np.maximum(phi(b_lo), phi(b_hi))
            f0 = float(phi(0.0))
            rest = _cpos(np.maximum(1.0 - v2, 0.0), np.maximum(1.0 - v1, 0.0), np.full_like(fa, f0)) + const
            ub = _cpos(u1, u2, fa) + _cpos(np.maximum(v1 - u2, 0.0), v2 - u1, fb) + rest
            dphi = _DPHI.get(phi)
            if dphi is not None:  # G = vφ(b) + u(φ(a) − φ(b)) + …, φ(a) − φ(b) ≤ φ'(a)(a − b), 0 ≤ u(a − b) ≤ 1
                sl = dphi(a_hi)
                with np.errstate(invalid="ignore"):
                    t = np.where(sl >= 0, np.minimum(u2 * d_hi, 1.0) * sl, u1 * d_lo * sl)
                ub = np.fmin(ub, _cpos(v1, v2, fb) + np.where(np.isnan(t), np.inf, t) + rest)
        with np.errstate(invalid="ignore"):
            tx = np.where(Xlo == 0, 0.0, np.where(Xlo > 0, -d_lo * Xlo, -d_hi * Xlo))
            ty = np.where(Ylo == 0, 0.0, np.where(Ylo > 0, -b_lo * Ylo, -b_hi * Ylo))
            lin = tx + ty
            if Zlo is not None:
                tx2 = np.where(Xlo == 0, 0.0, np.where(Xlo > 0, -a_lo * Xlo, -a_hi * Xlo))
                tz = np.where(Zlo == 0, 0.0, np.where(Zlo > 0, -b_lo * Zlo, -b_hi * Zlo))
                lin = np.fmin(lin, np.where(np.isnan(tx2 + tz), np.inf, tx2 + tz))
        out = np.where(np.isnan(ub + lin), np.inf, ub + lin)
        if proper is not None and Zlo is not None and self.spec is not None and self.spec[0] is _xlogx:
            out = np.fmin(out, self._flat_mi(u1, u2, Xlo, b_lo, b_hi, Zlo, proper & (u1 >= 0.5 * cone.beta)))
        return out

    def _flat_mi(self, u1, u2, Xlo, b_lo, b_hi, Zlo, flat):
        """Mutual information where ``a = 1/θ`` (see :meth:`_cells`): a bound exact in (u, b) jointly.

        With ``m = 1 − u/θ = b(v − u)`` the value is ``u φ(1/θ) + m log b − X/θ − bZ``: linear in u for fixed b and,
        with ``Z ≥ Z_lo``, concave in b for fixed u, so its maximum over ``u ∈ [u1, u2]``, ``b ∈ [b_lo, b_hi]`` is
        at ``u ∈ {u1, u2}`` and ``b* = clip(m/Z_lo, b_lo, b_hi)`` (``b_hi`` when ``Z_lo ≤ 0``). ``+inf`` off ``flat``.
        """
        th = self.cone.threshold
        out = np.full(np.broadcast(u1, b_lo).shape, -np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            for u in (u1, u2):
                m = np.maximum(1.0 - u / th, 0.0)
                bs = np.where(Zlo > 0, np.clip(m / np.where(Zlo > 0, Zlo, 1.0), b_lo, b_hi), b_hi)
                t = np.where(m > 0, m * np.log(bs), 0.0) - bs * Zlo + u * float(_xlogx(1.0 / th)) - Xlo / th
                out = np.maximum(out, np.where(np.isnan(t), np.inf, t))
        return np.where(flat, out, np.inf)

    def _relaxed(self, fr: _Free, uf, vf, Xf, Yf, u, v, full):
        """The relaxation ``G(u, v) − (a − b)(X_f + L(u − u_f)) − b(Y_f + L(v − v_f))`` at points (no bound)."""
        cone = self.cone
        X = Xf + fr.neg0 + np.interp(u - uf, fr.cm, fr.cl)
        Y = np.where(full, Yf + fr.total, Yf + fr.neg0 + np.interp(v - vf, fr.cm, fr.cl))
        hv = np.where(full, cone.h_full, cone.h(v))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            val = _pair_values(cone, self.spec, u, v, hv, X, Y)
        return np.where(np.isnan(val), -np.inf, val)

    def node_bound(self, d: int, uf: float, vf: float, Xf: float, Yf: float, any_out: bool, target: float = -np.inf):
        """Valid upper bound over every completion of a node; returns (bound, (u, v, full) target) or None.

        Every completion with masses (u, v) has ``Λ(U) ≥ X_f + L(u − u_f)``, ``Λ(V) ≥ Y_f + L(v − v_f)`` and
        ``Λ(V∖U) ≥ Y_f − X_f + L(·)`` (fractional knapsack over the free items), and ``u − u_f ≤ v − v_f`` (the free
        part of U lies in that of V), so its value is at most the relaxation ``R(u, v)`` of :meth:`_relaxed`.
        ``max R`` over the node's (u, v) box is bounded by interval arithmetic on cells (:meth:`_cells`), refined
        adaptively (docs/design.md §5): with ``R*`` the largest relaxation value seen at a point of a cell, cells
        whose bound is at most ``max(target, R* + BOUND_RTOL·(R* − target))`` are closed (their bounds kept), the
        others split 2 × 2, until every cell is closed or :data:`REFINE_LEVELS` / :data:`MAX_CELLS` is reached.
        So a node is either closed below ``target`` or gets a bound close to its relaxation's maximum (for the
        best-first order). The bound is the largest over closed and remaining cells: valid for any ``target``.
        """
        cone = self.cone
        th = cone.threshold
        if cone.h(uf) >= 0:
            return None
        fr = self._free(d)
        r = float(fr.cm[-1])
        K = self.grid
        u_hi = min(uf + r, th)
        ue = np.linspace(uf, u_hi, K + 1) if u_hi > uf else np.array([uf, uf])
        parts = []  # (u1, u2, v1, v2, full)
        v_lo, v_hi = max(vf, th), min(vf + r, 1.0)
        if v_lo <= v_hi and (vf + r >= th):
            ve = np.linspace(v_lo, v_hi, K + 1) if v_hi > v_lo else np.array([v_lo, v_lo])
            U1, V1 = np.meshgrid(ue[:-1], ve[:-1], indexing="ij")
            U2, V2 = np.meshgrid(ue[1:], ve[1:], indexing="ij")
            parts.append((U1.ravel(), U2.ravel(), V1.ravel(), V2.ravel(), np.zeros(U1.size, dtype=bool)))
        if not any_out:  # V = the whole alphabet: h = e^ε − 1, Λ(V) known exactly
            m = ue.size - 1
            parts.append((ue[:-1], ue[1:], np.ones(m), np.ones(m), np.ones(m, dtype=bool)))
        if not parts:
            return None
        u1, u2, v1, v2, full = (np.concatenate(x) for x in zip(*parts))
        closed, best_pt, best_val = -np.inf, None, -np.inf
        for level in range(REFINE_LEVELS + 1):
            # the free part of U lies in that of V: P̂(U∖U_f) ≤ P̂(V∖V_f)
            nest = u1 - uf <= np.where(full, r, v2 - vf) + 1e-12
            u1, u2, v1, v2, full = u1[nest], u2[nest], v1[nest], v2[nest], full[nest]
            if not u1.size:
                return (closed, best_pt) if best_pt is not None else None
            Xlo = Xf + self._min_L(fr, u1 - uf, u2 - uf)
            Ylo = np.where(full, Yf + fr.total, Yf + self._min_L(fr, v1 - vf, v2 - vf))
            hv1 = np.where(full, cone.h_full, cone.h(v1))
            hv2 = np.where(full, cone.h_full, cone.h(v2))
            # Λ(V∖U) ≥ Y_f − X_f + min L over the masses its free part can have
            tz1 = np.where(full, r, v1 - vf) - (u2 - uf)
            tz2 = np.where(full, r, v2 - vf) - (u1 - uf)
            Zlo = Yf - Xf + self._min_L(fr, tz1, tz2)
            ub = self._cells(u1, u2, Xlo, v1, v2, hv1, hv2, Ylo, Zlo, proper=~full)
            # a point of the cell where the free part of U fits in that of V (a value of the relaxation)
            uc = np.maximum(u1, np.minimum(0.5 * (u1 + u2), uf + np.where(full, r, v2 - vf)))
            vc = np.where(full, 1.0, np.clip(vf + (uc - uf), 0.5 * (v1 + v2), v2))
            val = self._relaxed(fr, uf, vf, Xf, Yf, uc, vc, full)
            k = int(np.argmax(val))
            if best_pt is None or val[k] > best_val:
                best_val, best_pt = float(val[k]), (float(uc[k]), float(vc[k]), bool(full[k]))
            # cells are refined until their bounds are within BOUND_RTOL of the relaxation's excess over the target
            bar = target if best_val <= target else best_val + BOUND_RTOL * (best_val - target)
            live = ub > bar
            if not live.any():
                return max(closed, float(ub.max())), best_pt
            if level == REFINE_LEVELS or 4 * int(live.sum()) > MAX_CELLS:
                break
            closed = max(closed, float(ub[~live].max(initial=-np.inf)))
            u1, u2, v1, v2, full = u1[live], u2[live], v1[live], v2[live], full[live]
            um, vm = 0.5 * (u1 + u2), 0.5 * (v1 + v2)
            # split 2 × 2 (full-V cells only in u: their v is 1)
            u1 = np.concatenate([u1, um, u1, um])
            u2 = np.concatenate([um, u2, um, u2])
            v1n = np.concatenate([v1, v1, np.where(full, v1, vm), np.where(full, v1, vm)])
            v2n = np.concatenate([np.where(full, v2, vm), np.where(full, v2, vm), v2, v2])
            v1, v2, full = v1n, v2n, np.concatenate([full] * 4)
        return max(closed, float(ub.max())), best_pt

    def _complete(self, d, labels, target):
        """Feasible pairs completing a node near a (u, v) target: κ-prefixes of the free items (≤ 4)."""
        fr = self._free(d)
        p = self.cone.p
        U0 = labels == 2
        V0 = labels >= 1
        uf, vf = float(p[U0].sum()), float(p[V0].sum())
        ut, vt, full = target
        nfree = fr.order.size
        ku = np.searchsorted(fr.cmA, ut - uf)
        kus = {int(min(max(ku, 0), nfree)), int(min(max(ku + 1, 0), nfree))}
        kvs = {nfree} if full else {int(min(max(k, 0), nfree)) for k in (np.searchsorted(fr.cmA, vt - vf), np.searchsorted(fr.cmA, vt - vf) + 1)}
        out = []
        for a in kus:
            for b in kvs:
                if a > b:
                    continue
                U = U0.copy()
                V = V0.copy()
                U[fr.order[:a]] = True
                V[fr.order[:b]] = True
                if full and not V.all():
                    continue
                out.append((U, V))
        return out

    def _evaluate(self, U: np.ndarray, V: np.ndarray) -> float:
        cone, p, lam = self.cone, self.cone.p, self.lam
        u, v = float(p[U].sum()), float(p[V].sum())
        hv = cone.h_full if V.all() else float(cone.h(v))
        if not (cone.h(u) < 0 <= hv) or np.array_equal(U, V):
            return -np.inf
        return float(_pair_values(cone, self.spec, u, v, hv, float(lam[U].sum()), float(lam[V].sum())))

    def enumerate_pairs(
        self, *, top: int = 8, chunk: int = 1 << 21, deadline: float = np.inf
    ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """Exact pricing by complete enumeration of the nested pairs (N ≤ :data:`MAX_ENUMERATION_SIZE`).

        Every pair is a word over {out, in U, in V∖U}; the value depends on it only through ``P̂(U)``, ``P̂(V)``,
        ``Λ(U)``, ``Λ(V)``, which are sums over the two halves of the alphabet. The 3^N words are the outer
        product of the halves' 3^(N/2) words, evaluated in chunks: the maximum is exact (no bound needed).

        Returns
        -------
        (max_value, values, U, V)
            The largest reduced value (``inf`` when the ``deadline`` stopped the enumeration: no bound) and the
            ``top`` best pairs found (values descending, boolean masks as rows).
        """
        p, lam = self.cone.p, self.lam
        n = p.shape[0]
        n1 = n // 2
        halves = []
        for items in (np.arange(n1), np.arange(n1, n)):
            k = items.size
            words = (np.arange(3**k)[:, None] // (3 ** np.arange(k))[None, :]) % 3  # (3^k, k) digits
            inU, inV = words == 1, words >= 1
            halves.append((words, inU.astype(float) @ p[items], inU.astype(float) @ lam[items],
                           inV.astype(float) @ p[items], inV.astype(float) @ lam[items],
                           inV.all(axis=1), inU.any(axis=1), (words == 2).any(axis=1), inV.any(axis=1)))
        (w1, u1, X1, v1, Y1, f1, a1, b1, e1), (w2, u2, X2, v2, Y2, f2, a2, b2, e2) = halves
        step = max(1, chunk // max(1, w2.shape[0]))
        best_v, best_idx = np.empty(0), np.empty((0, 2), dtype=np.int64)
        vmax = -np.inf
        for s0 in range(0, w1.shape[0], step):
            sl = slice(s0, s0 + step)
            u = u1[sl, None] + u2[None, :]
            v = v1[sl, None] + v2[None, :]
            X = X1[sl, None] + X2[None, :]
            Y = Y1[sl, None] + Y2[None, :]
            full = f1[sl, None] & f2[None, :]
            anyU = a1[sl, None] | a2[None, :]
            anyB = b1[sl, None] | b2[None, :]
            anyV = e1[sl, None] | e2[None, :]
            hv = np.where(full, self.cone.h_full, self.cone.h(v))
            ok = anyV & (~anyU | anyB) & self.cone.feasible(np.where(anyU, u, 0.0), v, hv)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                val = _pair_values(self.cone, self.spec, np.where(anyU, u, 0.0), v, hv, np.where(anyU, X, 0.0), Y)
            val = np.where(ok & np.isfinite(val), val, -np.inf)
            flat = val.ravel()
            kk = min(top, flat.size)
            idx = np.argpartition(-flat, kk - 1)[:kk]
            vmax = max(vmax, float(flat[idx].max()))
            i, j = np.divmod(idx, w2.shape[0])
            best_v = np.concatenate([best_v, flat[idx]])
            best_idx = np.vstack([best_idx, np.column_stack([i + s0, j])])
            keep = np.argsort(-best_v, kind="stable")[:top]
            best_v, best_idx = best_v[keep], best_idx[keep]
            if time.perf_counter() > deadline and s0 + step < w1.shape[0]:
                vmax = np.inf  # not every pair was priced: no bound
                break
        words = np.hstack([w1[best_idx[:, 0]], w2[best_idx[:, 1]]])
        good = np.isfinite(best_v)
        return vmax, best_v[good], (words == 1)[good], (words >= 1)[good]

    def branch_and_bound(
        self,
        *,
        incumbent: float = -np.inf,
        stop_above: float = np.inf,
        max_nodes: int = 20000,
        deadline: float = np.inf,
        rtol: float = 1e-12,
        collect: list | None = None,
        collect_above: float | None = None,
    ) -> tuple[float, tuple | None, float, int]:
        """Best-first branch and bound over the labels (in U / in V∖U / out) of the items, heaviest first.

        Nodes whose bound cannot beat ``max(best, incumbent)`` are closed, keeping their bound; at the node
        limit or the ``deadline`` (a ``time.perf_counter()`` value) the open nodes' bounds are kept, so the
        returned upper bound is always valid. With a finite ``stop_above`` it returns as soon as a pair beats it
        (the bound is then ``inf``). ``collect`` receives ``(value, U, V)`` for every pair found above
        ``collect_above`` (default ``incumbent``).

        Returns
        -------
        (best_value, best_pair (U, V) or None, upper_bound, nodes)
        """
        n = self.cone.p.shape[0]
        p, lam = self.cone.p, self.lam
        best_v, best_pair = -np.inf, None
        closed = -np.inf
        heap: list = []
        counter = 0
        nodes = 0

        def consider(U, V):
            nonlocal best_v, best_pair
            val = self._evaluate(U, V)
            if collect is not None and val > (incumbent if collect_above is None else collect_above):
                collect.append((val, U, V))
            if val > best_v:
                best_v, best_pair = val, (U, V)

        def push(d, labels, uf, vf, Xf, Yf, any_out):
            nonlocal counter, closed
            if d == n:
                consider(labels == 2, labels >= 1)
                return
            nb = self.node_bound(d, uf, vf, Xf, Yf, any_out, target=max(best_v, incumbent))
            if nb is None:
                return
            ub, target = nb
            for U, V in self._complete(d, labels, target):
                consider(U, V)
            if ub <= max(best_v, incumbent):
                closed = max(closed, ub)
                return
            counter += 1
            heapq.heappush(heap, (-ub, counter, d, labels, uf, vf, Xf, Yf, any_out))

        push(0, np.zeros(n, dtype=np.int8), 0.0, 0.0, 0.0, 0.0, False)
        while heap:
            if best_v > stop_above:
                return best_v, best_pair, np.inf, nodes
            if nodes >= max_nodes or time.perf_counter() > deadline:
                break
            negub, _, d, labels, uf, vf, Xf, Yf, any_out = heapq.heappop(heap)
            ub = -negub
            target = max(best_v, incumbent)
            if ub <= target + rtol * max(1.0, abs(target)):
                closed = max(closed, ub)
                continue
            nodes += 1
            x = self.branch[d]
            for lab in (2, 1, 0):
                child = labels.copy()
                child[x] = lab
                if lab == 2:
                    push(d + 1, child, uf + p[x], vf + p[x], Xf + lam[x], Yf + lam[x], any_out)
                elif lab == 1:
                    push(d + 1, child, uf, vf + p[x], Xf, Yf + lam[x], any_out)
                else:
                    push(d + 1, child, uf, vf, Xf, Yf, True)
        open_ub = max((-h[0] for h in heap), default=-np.inf)
        return best_v, best_pair, max(best_v, open_ub, closed), nodes
