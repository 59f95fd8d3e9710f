"""Step 3 of :mod:`.bound`: the separable bound's maximum over the ℓ1 ball's rays, by branch and bound.

Implements: the cell bound of docs/design.md §7 ("A valid bound at every N") for the ray family of
:func:`..rays.l1_ball_rays` (docs/design.md §3): every extreme ray of ``K(ε, B_β(P̂))`` is
``(h_V − h_U)1_U − h_U 1_{V∖U}`` normalised by the prior π; cells are boxes in ``(u, ρ)`` (``u = P̂(U)``,
``ρ = −h_U/(h_V − h_U)``) or in ``u`` alone when V is everything, refined best first, with branching on the
heaviest items' memberships; each cell is bounded, on per-item level intervals, by the smaller of two fractional
knapsacks (``U ⊂ V`` dropped) and the Lagrangian dual of the three-choice assignment LP (U, V∖U or out). When
the prior π differs from P̂ (smoothed rare categories) cells also bound ``π(U)``; incumbents are actual rays (climbed).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from .cell_lp import (_ab_max, _ab_min, _down, _knapsack, _line_min, _line_min_any, _meet, _up, ab_range, exact_levels,
                      quad_max, quad_min)

__all__ = ["BallCells", "branch_and_bound", "quad_max"]

#: Cells per axis of the first grid.
GRID: int = 8
#: Cells split per refinement round.
BATCH: int = 32
#: Most live cells.
MAX_CELLS: int = 200_000
#: Most items fixed by branching (the heaviest first); every item up to ``SMALL_N`` symbols.
MAX_DEPTH: int = 24
SMALL_N: int = 64
#: Rounds of the three exact line searches of the cells' Lagrangian dual (every iterate is a valid bound).
DUAL_ROUNDS: int = 2
#: Stop the branch and bound after this many rounds (None: deadline and tolerance only; for measurements).
MAX_ROUNDS: int | None = None
#: A cell branches on its next item only when that item is this many times heavier than the cell's mass ranges.
#: With the three-choice dual, fractional items cost little, and branching on them multiplies near-equal cells
#: (Zipf N = 50, 600 rounds: upper bound 14.4 at factor 1, 6.1 at 16, 5.8 with no item branching; docs/design.md §7.1).
ITEM_FACTOR: float = 16.0
#: The share of a proper cell's P̂(V) range in that rule (docs/design.md §7.1, measured at 0.5).
V_ITEM_WEIGHT: float = 0.5
#: A cell is halved in the π-mass of U (π ≠ P̂) when that range's share of the level spread is this many times its
#: relative (u, ρ, v) widths; otherwise along the widest of those three (v: P̂(V) over 1 − θ).
S_FACTOR: float = 3.0
#: π = P̂: proper cells take their levels from the exact ``s + ρω = θ − (1 − ρ)(β/2 − u)₊`` (docs/design.md §7.1).
TOP_LEVEL: bool = True


class BallCells:
    """The branch and bound of step 3 for ``K(ε, B_β(P̂))`` normalised by π (see module docstring)."""

    def __init__(self, center, radius, epsilon, prior, d, w, M, nu, *, pi_mass: bool = True, y=None):
        """``y`` (optional, ``y[h] = 0`` where h is the heaviest symbol, :attr:`branch` ``[0]``): the value is
        ``Φ(r) = Σ d_x r_x² − w·r + 2 r_h Σ_x y_x r_x`` (the arrow form of docs/design.md §7.3)."""
        self.p, self.pi, self.d, self.w, self.M, self.nu = center, prior, d, w, M, nu
        self.beta, self.e = float(radius), math.exp(epsilon)
        self.theta = self.beta / 2.0 + math.exp(-epsilon)  # h(S) < 0 iff P̂(S) < θ (proper S)
        self.psum = float(prior.sum())
        pos = center > 0
        # fractional knapsacks of π-mass against P̂-mass: smallest / largest π(S) given P̂(S) = m
        ratio = prior[pos] / center[pos]
        up, down = np.argsort(ratio, kind="stable"), np.argsort(-ratio, kind="stable")
        cp = center[pos]
        self._lo_m = np.concatenate([[0.0], np.cumsum(cp[up])])
        self._lo_pi = np.concatenate([[0.0], np.cumsum(prior[pos][up])])
        self._hi_m = np.concatenate([[0.0], np.cumsum(cp[down])])
        self._hi_pi = np.concatenate([[0.0], np.cumsum(prior[pos][down])]) + float(prior[~pos].sum())
        # the π-mass ranges multiply a rounding of P̂-mass by up to max π/P̂: their margin (docs/design.md §7.1)
        self._slope = float(ratio.max()) if ratio.size else 1.0
        self.exact_pi = bool(np.allclose(prior, center, rtol=0, atol=0))
        # π ≠ P̂: bound the π-mass of U too (tighter cells, slower rounds; off for quick ray finding)
        self.pi_mass = bool(pi_mass) and not self.exact_pi
        self.top_level = TOP_LEVEL
        heavy = np.flatnonzero(pos)
        # items fixed by branching: the heaviest first, then the zero-mass ones (only π-mass moves with them: a cell
        # whose widths are all 0 can still hold several rays through them)
        order = np.concatenate([heavy[np.argsort(-center[heavy], kind="stable")], np.flatnonzero(~pos)])
        self.branch = order[: max(MAX_DEPTH, min(center.size, SMALL_N))]
        self.y = None
        if y is not None and np.any(y != 0):
            if not self.branch.size or y[self.branch[0]] != 0:
                raise ValueError("y must vanish on the heaviest symbol (the arrow's row), and one must have mass")
            self.y = np.asarray(y, dtype=float)

    def value(self, R: np.ndarray) -> np.ndarray:
        """``Φ`` of the columns of ``R`` (with the arrow row when ``y`` is set)."""
        out = (self.d[:, None] * R * R).sum(axis=0) - self.w @ R
        if self.y is not None:
            out = out + 2.0 * R[self.branch[0]] * (self.y @ R)
        return out

    def h(self, m):
        return self.e * np.maximum(0.0, m - self.beta / 2.0) - 1.0

    def _s_margin(self, s, m):
        """Rounding margin of a π-mass ``s`` computed at P̂-mass ``m``: 1e-12 of ``s`` and of ``m`` times max π/P̂."""
        return 1e-12 * (np.where(np.isfinite(s), np.abs(s), 0.0) + self._slope * np.abs(m)) + 1e-15

    def _smin(self, m):
        if self.exact_pi:
            return m
        s = np.interp(m, self._lo_m, self._lo_pi)
        return np.maximum(s - self._s_margin(s, m), 0.0)

    def _smax(self, m):
        if self.exact_pi:
            return m
        s = np.interp(m, self._hi_m, self._hi_pi, right=self._hi_pi[-1])
        return s + self._s_margin(s, m)

    def hinv(self, hv):
        """Smallest mass with ``h = hv ≥ 0``."""
        return self.beta / 2.0 + (np.asarray(hv, dtype=float) + 1.0) / self.e

    def geometry(self, ulo, uhi, rlo, rhi, full, slc=None, shc=None, vlc=None, vhc=None):
        """Per cell: ρ range, ``P̂(V)`` range, π-mass bounds ``(s_lo, s_hi)`` of U and ``(ω_lo, ω_hi)`` of V∖U.

        Proper cells are boxes in ``(u, ρ)``, ``ρ = −h_U/(h_V − h_U) = b/a`` (this resolves the corner
        ``u, v → θ`` where ρ takes every value); then ``h_V = −h_U (1 − ρ)/ρ`` bounds ``v``. Cells with V = everything
        have ``h_V = e^ε − 1`` and ρ follows from ``u``. When π ≠ P̂ a cell may also bound the π-mass of U,
        ``s ∈ [slc, shc]`` (the third axis: ``u`` alone leaves ``s`` a knapsack range, wide when π smooths rare
        symbols); ``s_lo > s_hi`` marks an empty cell. A proper cell may also bound ``v ∈ [vlc, vhc]`` (the corner
        ``u → θ``, ``ρ → 0``, where ``h_V = −h_U(1 − ρ)/ρ`` is a ratio of two vanishing numbers and ``v`` spreads
        however small the box); ``ρ = −h_U/(h_V − h_U)`` then also follows from the ``v`` range.
        """
        mu_lo, mu_hi = -np.minimum(self.h(uhi), 0.0), -self.h(ulo)  # −h_U ∈ [mu_lo, mu_hi]
        ef = self.e - 1.0
        h1 = self.h(1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            hv_lo = np.where(rhi > 0, mu_lo * (1.0 - rhi) / rhi, np.inf)
            hv_hi = np.where(rlo > 0, mu_hi * (1.0 - rlo) / rlo, np.inf)
        feasible = full | (hv_lo <= _up(h1))
        vlo = np.where(full, 1.0, self.hinv(np.clip(hv_lo, 0.0, h1)))
        vhi = np.where(full, 1.0, np.minimum(self.hinv(np.clip(hv_hi, 0.0, h1)), 1.0))
        rmin = np.where(full, mu_lo / (ef + mu_lo), rlo)
        rmax = np.where(full, mu_hi / (ef + mu_hi), rhi)
        if vlc is not None:  # ρ = μ/(h_V + μ) rises with μ = −h_U and falls with h_V
            vlo, vhi = np.where(full, vlo, np.maximum(vlo, vlc)), np.where(full, vhi, np.minimum(vhi, vhc))
            # at widened masses: near θ both h are tiny, and a rounding of P̂(V) (vhi from hinv can fall an ulp
            # below a ray's) moves ρ far more than any relative margin (a review: a symbol of mass 6.5e-13 in
            # V∖U, h_U = −1.4e-12, h_V = 1.7e-13, declared the cell holding that ray empty)
            hvl, hvh = np.maximum(self.h(_down(vlo)), 0.0), np.maximum(self.h(_up(vhi)), 0.0)
            m_lo, m_hi = -np.minimum(self.h(_up(uhi)), 0.0), -self.h(_down(ulo))
            with np.errstate(divide="ignore", invalid="ignore"):
                r_lo = np.where(hvh + m_lo > 0, m_lo / (hvh + m_lo), 0.0)
                r_hi = np.where(hvl + m_hi > 0, m_hi / (hvl + m_hi), 1.0)
            rmin = np.where(full, rmin, np.maximum(rmin, np.nan_to_num(r_lo, nan=0.0) * (1 - 1e-9)))
            rmax = np.where(full, rmax, np.minimum(rmax, np.nan_to_num(r_hi, nan=1.0) * (1 + 1e-9) + 1e-300))
            feasible = feasible & (full | (vlo <= _up(vhi)) & (rmin <= rmax))
        slo, shi = self._smin(ulo), self._smax(uhi)
        if slc is not None:
            slo, shi = np.maximum(slo, slc), np.minimum(shi, shc)
        olo = np.where(full, self.psum - shi, self._smin(np.maximum(vlo - uhi, 0.0)))
        ohi = np.where(full, self.psum - slo, self._smax(np.maximum(vhi - ulo, 0.0)))
        return feasible, rmin, rmax, vlo, vhi, slo, shi, olo, ohi

    def fixed(self, depth, codes):
        """Masks ``(in U, in V∖U, out)`` of the items fixed by branching (codes 1, 2, 0 along :attr:`branch`)."""
        n, k = self.p.size, self.branch.size
        on = np.arange(k)[None, :] < depth[:, None]
        masks = []
        for code in (1, 2, 0):
            m = np.zeros((depth.size, n), bool)
            m[:, self.branch] = on & (codes[:, :k] == code)
            masks.append(m)
        return masks

    def bounds(self, ulo, uhi, rlo, rhi, full, depth, codes, slc=None, shc=None, vlc=None, vhc=None) -> np.ndarray:
        """Upper bounds of the separable value over the rays of each cell (module docstring, step 3).

        The smaller of two valid bounds on the same per-item level intervals (:meth:`items`): the two independent
        fractional knapsacks of :meth:`knapsack_bounds` and the Lagrangian dual of the three-choice assignment LP
        that keeps ``U ⊂ V`` (:meth:`dual_bounds`).
        """
        it = self.items(ulo, uhi, rlo, rhi, full, depth, codes, slc, shc, vlc, vhc)
        out = np.minimum(self.knapsack_bounds(it), self.dual_bounds(it))
        return np.where(it["feas"], out, -np.inf)

    def items(self, ulo, uhi, rlo, rhi, full, depth, codes, slc=None, shc=None, vlc=None, vhc=None) -> dict:
        """Per cell and item, the value bounds shared by both cell bounds.

        ``A = 1/(s + ρω)`` falls with s, ρ, ω and ``B = ρ/(s + ρω)`` rises with ρ and falls with s, ω; when V is
        everything ``ω = Σπ − s`` and both fall with s (each s is paired with its own ω). Per item, ``x ∈ U``
        needs ``s ≥ π_x`` and ``x ∈ V∖U`` needs ``ω ≥ π_x``, which caps its level; items heavier than the cell's
        mass cannot be in U (or V). Items fixed by branching enter with their own values and masses.
        Returns ``a`` (max of ``φ_x`` over the A-interval), ``gain_u`` (``a`` minus the min over the B-interval),
        ``bmax`` (max over the capped B-interval), the fixed masks and masses, the membership masks and the free
        items' U- and V-mass ranges.
        """
        fu, fw, fo = self.fixed(depth, codes)
        uF, wF, sF, oF = fu @ self.p, fw @ self.p, fu @ self.pi, fw @ self.pi
        feas, rmin, rmax, vlo, vhi, slo, shi, olo, ohi = self.geometry(ulo, uhi, rlo, rhi, full, slc, shc, vlc, vhc)
        feas = feas & (sF <= _up(shi)) & (slo <= _up(shi))
        feas = feas & (uF <= _up(uhi)) & ~(full & fo.any(axis=1))
        feas = feas & (full | (uF + wF <= _up(vhi)))
        slo, olo = np.maximum(slo, sF), np.where(full, olo, np.maximum(olo, oF))
        col = (lambda z: z[:, None])  # noqa: E731
        fl, pi, p = col(full), self.pi[None, :], self.p[None, :]
        free = ~(fu | fw | fo)
        # an item heavier than what is left of a range cannot join it (with a rounding margin: 1 − P̂(V) can round
        # below the last item's mass; allowing more items keeps every bound valid)
        room = lambda hi, used: col(hi - used + 1e-12 * np.abs(hi) + 1e-15)  # noqa: E731
        in_u = free & (p <= room(uhi, uF)) & (pi <= room(shi, sF))
        if self.pi_mass:  # the π-mass the free items allowed in U can have at P̂-mass u (fractional knapsacks)
            ul, uh = _down(np.maximum(ulo - uF, 0.0)), _up(uhi - uF)
            pis = np.broadcast_to(pi, in_u.shape)
            smin, smax = -_knapsack(-pis, self.p, ul, uh, in_u), _knapsack(pis, self.p, ul, uh, in_u)
            slo = np.maximum(slo, sF + smin - self._s_margin(smin, uh))
            shi = np.minimum(shi, sF + smax + self._s_margin(smax, uh))
            feas = feas & (slo <= _up(shi))
        s_u = np.maximum(col(slo), pi)  # x ∈ U
        o_u = np.where(fl, self.psum - s_u, col(olo))
        o_w = np.where(fl, col(self.psum - slo), np.maximum(col(olo), pi))  # x ∈ V∖U
        s_hi_f, o_hi_f = col(shi), np.where(fl, col(self.psum - shi), col(ohi))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            a_lo = 1.0 / (s_hi_f + col(rmax) * o_hi_f)
            a_hi = np.maximum(1.0 / (s_u + col(rmin) * o_u), a_lo)
            b_lo = np.nan_to_num(col(rmin) / (s_hi_f + col(rmin) * o_hi_f), nan=0.0)
            b_hi = col(rmax) / (col(slo) + col(rmax) * np.where(fl, col(self.psum - slo), col(olo)))
            b_cap = np.maximum(np.minimum(col(rmax) / (col(slo) + col(rmax) * o_w), b_hi), b_lo)
        if self.exact_pi and self.top_level:  # π = P̂: the exact levels (both enclose them: intersected)
            fix, n_alo, n_ahi, n_blo, n_bhi = exact_levels(self.theta, self.beta, self.e, ulo, uhi, rmin, rmax, full)
            fix, n_alo, n_ahi, n_blo, n_bhi = col(fix), col(n_alo), col(n_ahi), col(n_blo), col(n_bhi)
            a_lo, a_hi = _meet(a_lo, a_hi, n_alo, n_ahi, fix)
            b_lo, b_hi = _meet(b_lo, b_hi, n_blo, n_bhi, fix)
            b_cap = np.where(fix, np.maximum(np.minimum(b_cap, b_hi), b_lo), b_cap)
        if self.y is not None:  # the arrow's cross terms: the range of the product AB over the cell
            self._ab = tuple(col(z) for z in ab_range(slo, shi, olo, ohi, rmin, rmax, full, self.psum))
        bad = ~(np.all(np.isfinite(a_hi), axis=1) & np.isfinite(b_hi[:, 0]) & np.isfinite(a_lo[:, 0]))
        zero = lambda z: np.where(col(bad), 0.0, z)  # noqa: E731
        a_lo, a_hi, b_lo, b_hi, b_cap = (zero(z) for z in (a_lo, a_hi, b_lo, b_hi, b_cap))
        d, w = self.d[None, :], self.w[None, :]
        a, bmin, bmax = quad_max(d, w, a_lo, a_hi), quad_min(d, w, b_lo, b_hi), quad_max(d, w, b_lo, b_cap)
        if self.y is not None:  # the row of the heaviest symbol h: + 2 r_h Σ_x y_x r_x (docs/design.md §7.3)
            y2 = 2.0 * self.y[None, :]
            hc = np.where(depth >= 1, codes[:, 0], -1)[:, None]  # h: 1 in U, 2 in V∖U, 0 out, −1 not fixed
            # h in U (r_h = A): U items have d + 2y, V∖U items add 2y·A·B; h in V∖U (r_h = B): the other way round
            # (a V∖U item's own cap on A does not hold: the level A there is h's, capped as h's)
            h = self.branch[0]
            full_shape = (a_hi.shape[0], self.p.size)
            ah_lo, ah_hi = (np.broadcast_to(z, full_shape)[:, h:h + 1] for z in (a_lo, a_hi))
            ab = self._ab
            a1, n1, x1 = quad_max(d + y2, w, a_lo, a_hi), bmin + _ab_min(y2, ah_lo, ah_hi, b_lo, b_hi, ab), \
                bmax + _ab_max(y2, ah_lo, ah_hi, b_lo, b_cap, ab)
            a2, n2, x2 = a + _ab_max(y2, a_lo, a_hi, b_lo, b_hi, ab), quad_min(d + y2, w, b_lo, b_hi), \
                quad_max(d + y2, w, b_lo, b_cap)
            free_h = hc < 0
            a = np.where(hc == 1, a1, np.where(hc == 2, a2, np.where(free_h, np.maximum(a, np.maximum(a1, a2)), a)))
            bmin = np.where(hc == 1, n1, np.where(hc == 2, n2, np.where(free_h, np.minimum(bmin, np.minimum(n1, n2)),
                                                                          bmin)))
            bmax = np.where(hc == 1, x1, np.where(hc == 2, x2, np.where(free_h, np.maximum(bmax, np.maximum(x1, x2)),
                                                                          bmax)))
        bmax = np.maximum(bmax, bmin)  # (true of the values; the arrow's product range can part the two bounds)
        vF = uF + wF
        slo, shi = np.where(feas, slo, 0.0), np.where(feas, shi, 0.0)  # finite where the cell holds no ray
        return {"feas": feas, "bad": bad, "full": full, "fu": fu, "fw": fw, "free": free, "a": a,
                "gain_u": a - bmin, "bmax": bmax,
                "in_u": in_u,
                "in_v": free & (p <= room(vhi, vF)),
                "u_lo": np.maximum(ulo - uF, 0.0), "u_hi": uhi - uF, "v_lo": np.maximum(vlo - vF, 0.0),
                "v_hi": vhi - vF, "s_lo": np.maximum(slo - sF, 0.0), "s_hi": shi - sF}

    def knapsack_bounds(self, it: dict) -> np.ndarray:
        """``K(gain_u, [u]) + K(bmax, [v])``: two independent fractional knapsacks (nestedness ``U ⊂ V`` dropped)."""
        fu, fw, full, gain_u, bmax = it["fu"], it["fw"], it["full"], it["gain_u"], it["bmax"]
        out = _knapsack(gain_u, self.p, _down(it["u_lo"]), _up(it["u_hi"]), it["in_u"]) + np.where(fu, gain_u, 0).sum(1)
        rest_v = _knapsack(bmax, self.p, _down(it["v_lo"]), _up(it["v_hi"]), it["in_v"])
        rest_v = rest_v + np.where(fu | fw, bmax, 0).sum(1)
        out = out + np.where(full, bmax.sum(axis=1), rest_v)
        return np.where(it["bad"] | np.isnan(out), np.inf, out)

    def dual_bounds(self, it: dict, rounds: int = DUAL_ROUNDS) -> np.ndarray:
        """The Lagrangian dual of the three-choice assignment LP of each cell (docs/design.md §7.1).

        Each free item is in U (value ``a_x``), in V∖U (``b_x`` = ``bmax``) or out (0; not when V is everything),
        with ``P̂(U)`` and ``P̂(V)`` of the free items in the cell's ranges. For every real ``(λ, μ)``

            ``L = Σ_x max(a_x − (λ+μ)p_x, b_x − μp_x, 0) + max(λu_lo, λu_hi) + max(μv_lo, μv_hi) + fixed items``

        is an upper bound (weak duality); it is minimised by exact line searches along the only directions in
        which ``L`` has kinks, ``λ``, ``μ`` and ``(−1, 1)`` (where none descends, ``L`` is at its minimum).
        Items fixed in U count ``a_x``, in V∖U ``b_x``; the membership rules of :meth:`items` are kept.
        """
        full, p = it["full"], self.p[None, :]
        fl = full[:, None]
        in_v = np.where(fl, it["free"], it["in_v"])
        in_u = it["in_u"] & in_v
        a = np.where(in_u, it["a"], -np.inf)
        b = np.where(in_v, it["bmax"], -np.inf)
        z = np.where(fl | ~it["free"], -np.inf, 0.0)  # "out" is allowed to free items of proper cells
        fx = np.where(it["fu"], it["a"], 0.0) + np.where(it["fw"], it["bmax"], 0.0)
        fixed, fixed_abs = fx.sum(axis=1), np.abs(fx).sum(axis=1)
        rel = max(1e-12, (p.size + 8) * np.finfo(float).eps)  # rounding of the sums (γ_N Σ|terms|) and products
        ulo, uhi = _down(it["u_lo"]), _up(it["u_hi"])  # widened: still valid
        vlo = np.where(full, 0.0, _down(it["v_lo"]))
        vhi = np.where(full, 0.0, _up(it["v_hi"]))
        uw, vw = uhi - ulo, vhi - vlo
        # π-mass of U (a constraint only when π ≠ P̂; with π = P̂ it repeats the P̂-mass one and κ stays 0)
        slo, shi = _down(it["s_lo"]), _up(it["s_hi"])
        sw, pis = shi - slo, self.pi[None, :]
        ratio = np.where(shi + slo > 0, (uhi + ulo) / np.maximum(shi + slo, 1e-300), 0.0)  # the direction (1, −ratio)

        def dual_value(lam, mu, kap):
            A, Bv = a - (lam + mu)[:, None] * p - kap[:, None] * pis, b - mu[:, None] * p
            terms = np.where(it["free"], np.maximum(np.maximum(A, Bv), z), 0.0)
            g = np.maximum(lam * ulo, lam * uhi) + np.maximum(mu * vlo, mu * vhi) + np.maximum(kap * slo, kap * shi)
            err = (np.abs(terms) + (np.abs(lam + mu) + np.abs(mu))[:, None] * p + np.abs(kap)[:, None] * pis).sum(1)
            err = err + np.abs(lam) * (np.abs(ulo) + np.abs(uhi)) + np.abs(mu) * (np.abs(vlo) + np.abs(vhi))
            err = rel * (err + fixed_abs + np.abs(kap) * (np.abs(slo) + np.abs(shi)))
            return np.nan_to_num(terms.sum(axis=1) + g + fixed + err, nan=np.inf), A, Bv

        # rounds of the three searches in (λ, μ); then, with a π-mass range (π ≠ P̂), rounds that also move κ, so
        # the result is never above the (λ, μ) searches' alone
        cycles = [(0, 1, 2)] * rounds + ([(3, 4, 0, 1, 2)] * rounds if self.pi_mass else [])
        lam, mu, kap = np.zeros(full.size), np.zeros(full.size), np.zeros(full.size)
        best, A, Bv = dual_value(lam, mu, kap)
        c = 0
        while c < len(cycles):
            start = best
            for step in cycles[c]:
                if step == 0:  # λ
                    t = _line_min(np.column_stack([A, -uw * lam]), np.column_stack([np.maximum(Bv, z), 0 * lam]),
                                  np.column_stack([np.broadcast_to(p, A.shape), uw]), uhi)
                    lam = lam + t
                elif step == 1:  # μ
                    t = _line_min(np.column_stack([np.maximum(A, Bv), -vw * mu]), np.column_stack([z, 0 * mu]),
                                  np.column_stack([np.broadcast_to(p, A.shape), vw]), vhi)
                    mu = mu + np.where(full, 0.0, t)
                elif step == 2:  # λ − t, μ + t: only the V∖U option and the two range terms move
                    t = _line_min(np.column_stack([Bv, uw * lam, -vw * mu]),
                                  np.column_stack([np.maximum(A, z), 0 * lam, 0 * mu]),
                                  np.column_stack([np.broadcast_to(p, A.shape), uw, vw]), vhi - ulo)
                    t = np.where(full, 0.0, t)
                    lam, mu = lam - t, mu + t
                elif step == 3:  # κ (the π-mass of U): only the U option and the range term move
                    t = _line_min(np.column_stack([A, -sw * kap]), np.column_stack([np.maximum(Bv, z), 0 * kap]),
                                  np.column_stack([np.broadcast_to(pis, A.shape), sw]), shi)
                    kap = kap + t
                else:  # λ + t, κ − ratio·t: prices the P̂- and π-mass of U against each other
                    dk = -ratio
                    t = _line_min_any(np.column_stack([A, -uw * lam, -sw * kap]),
                                      np.column_stack([np.maximum(Bv, z), 0 * lam, 0 * kap]),
                                      np.column_stack([p + dk[:, None] * pis, uw, dk * sw]), uhi + dk * shi)
                    lam, kap = lam + t, kap + dk * t
                val, A, Bv = dual_value(lam, mu, kap)
                best = np.minimum(best, val)
            c += 1
            with np.errstate(invalid="ignore"):
                still = (best >= start - 1e-12 * np.abs(start)) | ~np.isfinite(start)
            if np.all(still):  # a round moved no bound: on to the κ rounds, or done
                if c > rounds or not self.pi_mass:
                    break
                c = rounds
        # the LP is empty (the cell holds no ray) when the U range starts above the mass of the items allowed in U,
        # the V range above that of the items allowed in V, or the U range above the V range (U ⊂ V)
        pu, pv = np.where(in_u, p, 0.0).sum(axis=1), np.where(in_v, p, 0.0).sum(axis=1)
        empty = (ulo > _up(np.minimum(uhi, pu))) | ~full & ((vlo > _up(pv)) | (ulo > _up(vhi)))
        empty |= slo > _up(np.minimum(shi, np.where(in_u, pis, 0.0).sum(axis=1)))
        return np.where(it["bad"], np.inf, np.where(empty, -np.inf, best))

    def rays(self, ulo, uhi, rlo, rhi, full, depth, codes, slc=None, shc=None, vlc=None, vhc=None) -> np.ndarray:
        """Actual normalised rays (columns) built greedily around cells (heuristic incumbents)."""
        feas, rmin, rmax, vlo, vhi, slo, shi, olo, ohi = self.geometry(ulo, uhi, rlo, rhi, full, slc, shc, vlc, vhc)
        fu, fw, fo = self.fixed(depth, codes)
        n = self.p.size
        cols = []
        for k in np.flatnonzero(feas):
            for um, vm, rho in ((0.5 * (ulo[k] + uhi[k]), 0.5 * (vlo[k] + vhi[k]), 0.5 * (rmin[k] + rmax[k])),
                                (ulo[k], vhi[k], rmin[k]), (uhi[k], vlo[k], rmax[k])):
                den = 0.5 * (slo[k] + shi[k]) + rho * 0.5 * (olo[k] + ohi[k])
                if not den > 0:
                    continue
                A, B = 1.0 / den, rho / den
                fa, fb = self.d * A * A - self.w * A, self.d * B * B - self.w * B
                if self.y is not None and depth[k] >= 1 and codes[k, 0] in (1, 2):  # h fixed: its row's terms
                    rh = A if codes[k, 0] == 1 else B
                    fa, fb = fa + 2.0 * self.y * rh * A, fb + 2.0 * self.y * rh * B
                U = fu[k] | _greedy_set(fa - fb, self.p, um - self.p[fu[k]].sum(), fu[k] | fw[k] | fo[k])
                if self.p[U].sum() >= self.theta:
                    continue
                V = U | fw[k]
                V = np.ones(n, bool) if full[k] else V | _greedy_set(fb, self.p, vm - self.p[V].sum(), V | fo[k])
                c = self.column(U, V)
                if c is None:
                    continue
                start = float(self.value(c[:, None])[0])
                polished = self.column(*self.climb(U, V, start))
                # the climb's running sums may round a mass across θ: its start is kept then (and wherever its
                # end is not above the start by the exact value)
                if polished is not None and self.value(polished[:, None])[0] < start:
                    polished = None
                cols.append(c if polished is None else polished)
        return np.array(cols).T if cols else np.zeros((n, 0))

    def climb(self, U, V, start: float):
        """Best-improvement local search of the separable value over actual rays from the ray ``(U, V)`` (whose
        value is ``start``).

        One item moves per step between out, V∖U and U; every move's value is O(1) from the sums of ``d`` and ``w``
        over U and V∖U (``Φ = A²Σ_U d − AΣ_U w + B²Σ_{V∖U} d − BΣ_{V∖U} w``, levels from §3), so a step is O(N).
        With the arrow row (``y``) the value also has ``2 r_h (AΣ_U y + BΣ_{V∖U} y)``, ``r_h`` the level of the
        row's symbol h (A, B or 0 by its label; a move of h changes it), still O(1) a move (before 2026-11-26 the
        climb ignored the row, so with it the rounds' rays rarely cut the master and the rounds ended early).
        Only moves to valid rays (``h_U < 0 ≤ h_V``, V non-empty, U not everything) are taken. A heuristic: the
        branch and bound's incumbents (its cell bounds are what is proven).
        """
        p, pi, d, w = self.p, self.pi, self.d, self.w
        hs = int(self.branch[0]) if self.y is not None else -1
        n = p.size
        # what each item adds, by its label (0 out, 1 U, 2 V∖U), to the sums P̂(U), P̂(V), π(U), π(V∖U), Σ_U d, Σ_U w,
        # Σ_{V∖U} d, Σ_{V∖U} w, #out, #U (and Σ_U y, Σ_{V∖U} y with the arrow row): a move's sums are the current
        # ones minus the item's old column plus its new one, every move at once
        zero, one = np.zeros(n), np.ones(n)
        rows = [(zero, p, zero), (zero, p, p), (zero, pi, zero), (zero, zero, pi), (zero, d, zero), (zero, w, zero),
                (zero, zero, d), (zero, zero, w), (one, zero, zero), (zero, one, zero)]
        if hs >= 0:
            rows += [(zero, self.y, zero), (zero, zero, self.y)]
        C = np.array(rows).transpose(1, 0, 2)  # (label, sum, item)
        items = np.arange(n)
        lab = np.where(U, 1, np.where(V, 2, 0))
        tgt = np.arange(3)[:, None]
        is_h = (items == hs)[None, :]
        cur = start
        for _ in range(4 * n):
            now = C[lab, :, items].T  # (sum, item): each item's current column
            S = now.sum(axis=1)[:, None, None] - now[:, None, :] + C.transpose(1, 0, 2)  # (sum, target, item)
            u, v, s_u, s_w, du, wu, dw, ww, nout, nu_ = S[:10]
            hu = self.h(u)
            hv = np.where(nout < 0.5, self.e - 1.0, self.h(v))
            den = s_u * (hv - hu) - s_w * hu
            ok = (hu < 0) & (hv >= 0) & (nu_ < n - 0.5) & (nout < n - 0.5) & (den > 0) & (tgt != lab[None, :])
            with np.errstate(divide="ignore", invalid="ignore"):
                A, B = (hv - hu) / den, -hu / den
                val = A * A * du - A * wu + B * B * dw - B * ww
                if hs >= 0:
                    hl = np.where(is_h, tgt, lab[hs])  # h's label after the move
                    val = val + 2.0 * np.where(hl == 1, A, np.where(hl == 2, B, 0.0)) * (A * S[10] + B * S[11])
                val = np.where(ok, val, -np.inf)
            k = int(np.argmax(val))
            if not val.flat[k] > cur + 1e-12 * abs(cur):
                break
            lab[k % n] = k // n
            cur = float(val.flat[k])
        return lab == 1, lab > 0

    def column(self, U, V):
        hu = self.h(self.p[U].sum())
        hv = self.e - 1.0 if V.all() else self.h(self.p[V].sum())
        if not (hu < 0 <= hv) or V.all() and U.all():
            return None
        c = np.where(U, hv - hu, np.where(V, -hu, 0.0))
        return c / float(self.pi @ c)


def _greedy_set(vals, m, mass, taken):
    """Items not in ``taken`` by descending ``vals/m`` (zero-mass positive items first) up to P̂-mass ``mass``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        key = np.where(m > 0, vals / np.where(m > 0, m, 1.0), np.where(vals > 0, np.inf, -np.inf))
    key = np.where(taken, -np.inf, key)
    order = np.argsort(-key, kind="stable")
    order = order[~taken[order]]
    cm = np.cumsum(m[order])
    k = int(np.searchsorted(cm, mass - 1e-15, side="left")) + 1
    out = np.zeros(m.size, bool)
    out[order[: min(k, order.size)]] = True
    if mass <= 0:  # only free items worth taking
        out[:] = False
        out[order[(m[order] == 0) & (key[order] > 0)]] = True
    return out


def branch_and_bound(cone: BallCells, deadline: float, atol: float, q_of: Callable[[np.ndarray], np.ndarray],
                     max_rounds: int | None = None) -> tuple[float, np.ndarray, float, np.ndarray | None, int]:
    """Best-first branch and bound on cells (u, ρ) and items' memberships (docs/design.md §7.1): a cell whose next
    unfixed item is :data:`ITEM_FACTOR` times heavier than its mass ranges branches on it, else it is halved.

    Parameters
    ----------
    cone, deadline, atol, q_of, max_rounds
        The cells' problem; the stop time; the closing tolerance; the exact value of rays; the most rounds.

    Returns
    -------
    (float, numpy.ndarray, float, numpy.ndarray or None, int)
        The upper bound, the rays of largest separable value, the best value q, its ray, the live cells.
    """
    th = min(cone.theta, 1.0)
    g = np.linspace(0.0, th, GRID + 1)
    cols = {"ulo": [g[:-1]], "uhi": [g[1:]], "rlo": [np.zeros(GRID)], "rhi": [np.ones(GRID)],
            "full": [np.ones(GRID, bool)]}
    if cone.theta < 1.0:  # proper V: cells in (u, ρ), ρ ∈ [0, 1]
        gv = np.linspace(0.0, 1.0, GRID + 1)
        U0, V0 = (z.ravel() for z in np.meshgrid(np.arange(GRID), np.arange(GRID), indexing="ij"))
        cols["ulo"].append(g[U0]), cols["uhi"].append(g[U0 + 1]), cols["rlo"].append(gv[V0])
        cols["rhi"].append(gv[V0 + 1]), cols["full"].append(np.zeros(U0.size, bool))
    c = {k: np.concatenate(v) for k, v in cols.items()}
    c["depth"] = np.zeros(c["ulo"].size, int)
    c["codes"] = np.zeros((c["ulo"].size, max(cone.branch.size, 1)), np.int8)
    c["slc"], c["shc"] = np.zeros(c["ulo"].size), np.full(c["ulo"].size, np.inf)
    c["vlc"], c["vhc"] = np.zeros(c["ulo"].size), np.full(c["ulo"].size, np.inf)
    keys = ("ulo", "uhi", "rlo", "rhi", "full", "depth", "codes", "slc", "shc", "vlc", "vhc")

    def evaluate(cc):
        return cone.bounds(*(cc[k] for k in keys))

    ub = evaluate(c)
    best_sep, best_q, best_ray = -np.inf, -np.inf, None
    cap = min(r for r in (MAX_ROUNDS, max_rounds, math.inf) if r is not None)
    found, found_sep = [], []
    rounds = 0
    frozen = -np.inf  # the largest bound of the cells no split can change (every width 0, no item left to fix)
    while True:
        live = ub > -np.inf
        c, ub = {k: v[live] for k, v in c.items()}, ub[live]
        if rounds % 3 == 0 and ub.size:
            pick = np.argsort(-ub)[:4]
            R = cone.rays(*(c[k][pick] for k in keys))
            if R.shape[1]:
                sep = cone.value(R)
                qv = q_of(R)
                best_sep = max(best_sep, float(sep.max()))
                found.append(R)
                found_sep.append(sep)
                if qv.max() > best_q:
                    best_q, best_ray = float(qv.max()), R[:, int(np.argmax(qv))]
        rounds += 1
        top = max(float(ub.max()) if ub.size else -np.inf, frozen)
        if top - best_sep <= atol or time.perf_counter() > deadline or ub.size > MAX_CELLS or rounds >= cap \
                or not ub.size:
            break
        k = min(BATCH, ub.size)
        pick = np.argpartition(-ub, k - 1)[:k]
        P = {key: v[pick] for key, v in c.items()}
        geo = cone.geometry(*(P[k] for k in ("ulo", "uhi", "rlo", "rhi", "full", "slc", "shc", "vlc", "vhc")))
        vwidth = np.where(P["full"], 0.0, geo[4] - geo[3])  # P̂(V) range (proper cells)
        wmass = np.maximum(P["uhi"] - P["ulo"], V_ITEM_WEIGHT * vwidth)
        can = P["depth"] < cone.branch.size
        nxt = np.where(can, cone.p[cone.branch[np.minimum(P["depth"], max(cone.branch.size - 1, 0))]]
                       if cone.branch.size else 0.0, 0.0)
        item = can & (nxt >= ITEM_FACTOR * wmass)
        if cone.y is not None:  # the arrow row's symbol h is branched on first
            item |= can & (P["depth"] == 0)
        wu = (P["uhi"] - P["ulo"]) / max(th, 1e-300)
        wr = np.where(P["full"], 0.0, P["rhi"] - P["rlo"])
        # P̂(V) (proper cells): near u → θ, ρ → 0 it spreads however small the (u, ρ) box (self-similar cells: on
        # Zipf 50, ε = 4, the top cells had u- and ρ-widths of 1e-15 and a v-width of 0.0035 after 100 000 cells)
        wv = vwidth / max(1.0 - th, 1e-300)
        # the π-mass of U (π ≠ P̂ only): its share of the spread of the level A = 1/(s + ρω), split when it
        # dominates the (u, ρ) widths by S_FACTOR
        slo, shi, olo = geo[5], geo[6], geo[7]
        with np.errstate(divide="ignore", invalid="ignore"):
            ws = np.nan_to_num((shi - slo) / (shi + geo[1] * olo), nan=0.0, posinf=0.0)
        ws = np.where((shi <= slo) | (not cone.pi_mass), 0.0, ws)  # (`~` on a Python bool is -2: truthy)
        stuck = ~item & (np.maximum(np.maximum(wu, wr), np.maximum(ws, wv)) < 1e-13)
        if stuck.any():  # halving them made identical copies (an Adult run held thousands of one cell): set aside
            frozen = max(frozen, float(ub[pick][stuck].max()))
            keep = np.ones(ub.size, bool)
            keep[pick[stuck]] = False
            c, ub = {key: v[keep] for key, v in c.items()}, ub[keep]
            continue
        children = []
        geo_cells = {key: v[~item] for key, v in P.items()}
        if geo_cells["ulo"].size:
            ss = (ws >= S_FACTOR * np.maximum(np.maximum(wu, wr), wv))[~item]
            sv = (wv > np.maximum(wu, wr))[~item] & ~ss
            su = (wu >= wr)[~item] & ~ss & ~sv
            sr = ~su & ~ss & ~sv
            mu = 0.5 * (geo_cells["ulo"] + geo_cells["uhi"])
            mr = 0.5 * (geo_cells["rlo"] + geo_cells["rhi"])
            ms = 0.5 * (slo + shi)[~item]
            mv = 0.5 * (geo[3] + geo[4])[~item]
            left, right = dict(geo_cells), dict(geo_cells)
            left["vhc"] = np.where(sv, mv, geo_cells["vhc"])
            right["vlc"] = np.where(sv, mv, geo_cells["vlc"])
            left["uhi"] = np.where(su, mu, geo_cells["uhi"])
            right["ulo"] = np.where(su, mu, geo_cells["ulo"])
            left["rhi"] = np.where(sr, mr, geo_cells["rhi"])
            right["rlo"] = np.where(sr, mr, geo_cells["rlo"])
            left["shc"] = np.where(ss, ms, geo_cells["shc"])
            right["slc"] = np.where(ss, ms, geo_cells["slc"])
            children += [left, right]
        it = {key: v[item] for key, v in P.items()}
        if it["ulo"].size:
            for code in (0, 1, 2):
                ch = {key: v.copy() for key, v in it.items()}
                ch["codes"][np.arange(ch["depth"].size), ch["depth"]] = code
                ch["depth"] = ch["depth"] + 1
                children.append(ch)
        new = {key: np.concatenate([ch[key] for ch in children]) for key in keys}
        new_ub = evaluate(new)
        keep = np.ones(ub.size, bool)
        keep[pick] = False
        c = {key: np.concatenate([c[key][keep], new[key]]) for key in keys}
        ub = np.concatenate([ub[keep], new_ub])
    top = max(float(ub.max()) if ub.size else -np.inf, frozen)
    R = np.hstack(found) if found else np.zeros((cone.p.size, 0))
    R = R[:, np.argsort(-np.concatenate(found_sep))[:64]] if found else R
    return max(top, best_sep), R, best_q, best_ray, int(ub.size)
