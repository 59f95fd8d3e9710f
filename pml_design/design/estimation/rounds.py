"""The column generation of the frequency-estimation design: rounds of restricted master and pricing, then the bounds.

Implements: docs/design.md §7 (restricted master :mod:`.master`, pricing :mod:`.pricing`, Frank–Wolfe bound
:mod:`.bound`), §7.1–§7.3 (the end-of-run relaxations), §7.4 (the moment bound in a second process), §7.6 (the
capped dual). One round: the master over the pool of rays (every iterate certified and offered to the incumbent),
then pricing (complete enumeration where affordable, else the two-level local search and the three-level search,
escalated when it stalls, then the branch and bound of :mod:`.bound` at a stalled point). After the rounds: the
relaxations' bounds, the background process's result, and the incumbent on fewer outputs.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ...mechanisms.frequency_oracles.optimum import PairBalancedChannel
from ...uncertainty import FiniteSet, L1Ball, UncertaintySet
from ..anytime import _progress_update
from ..result import proven_optimal
from ..utilities import FrequencyEstimation
from .bound import ray_value_bounds, scaled_frank_wolfe_bound
from .cap_bound import cap_affordable, cap_bound
from .coordinate_bound import coordinate_bound
from .incumbent import CertifiedIncumbent
from .master import gradients, solve_master
from .moment_bound import MOMENT_POOL_PER_SYMBOL, moment_bound, moment_dual
from .parallel_bound import MOMENT_MAX_N as MOMENT_BACKGROUND_MAX_N
from .parallel_bound import BackgroundBound, available
from .pricing import NESTED_RESTARTS, local_pricing, nested_pricing, reduced_costs
from .reduce import mechanism_on_fewer_outputs, prune
from .seeds import ray_seeds

__all__ = ["column_generation"]

#: Share of the time limit (at most :data:`BOUND_SECONDS`) kept for the valid bound of :mod:`.bound` at the end.
BOUND_SHARE: float = 0.15
BOUND_SECONDS: float = 8.0
#: When the local pricing finds no improving column and STALL_SECONDS of the loop's time are left: the branch and
#: bound of :mod:`.bound` prices that point for ``STALL_WORK · 100 / max(N, 100)`` rounds (at least 10; a work
#: budget, not seconds: the path of the column generation does not depend on the clock, so a longer time limit runs
#: the same rounds further; ≈ 1 s at N = 50, 1.1–1.8 s at N = 100, ~3 s at N = 300).
STALL_SECONDS: float = 1.0
STALL_WORK: int = 150
#: Work budget of one round's three-level pricing (:func:`.pricing.nested_pricing`), in symbol-moves: at most
#: ``NESTED_WORK // N`` moves over all its starts (binds above N ≈ 600: 2 000 moves, ~1.2 s at N = 1 000).
NESTED_WORK: int = 2_000_000
#: Starts of the three-level search taken from the master's heaviest columns (their level sets), besides random ones.
NESTED_MASTER_STARTS: int = 4
#: When a round's search finds no improving column, it searches again with 4× the random starts (the same work
#: budget, so the same bounded cost after a deadline), up to this many times, and later rounds keep the larger search
#: (before the branch and bound of a stalled round). The cheap search stalls at points where heavier ones still find
#: columns: Adult ε = 4, 300 s, the run stopped at 251 s with 1.486, while 500 starts a round priced columns at −0.44
#: (docs/design.md §7).
ESCALATIONS: int = 3
#: Once the background bound of :mod:`.parallel_bound` has a value, the rounds go on until this share of the limit is
#: left (not BOUND_SHARE for the end-of-run relaxations, which that process computes on the other CPU). 30 s: Zipf 100
#: ε = 1 90.55 → 90.14, ε = 2 33.39 → 32.78, Adult ε = 4, Zipf 50 ε = 1 within 0.1 %. None: end-of-run relaxations.
BACKGROUND_TAIL: float | None = 0.02
#: Share of the bound's time given to the coordinate relaxation (:mod:`.coordinate_bound`, A criterion) before the
#: Frank–Wolfe bound of :mod:`.bound` (0.3 inside Proposition 2, where the latter is exact); the alphabets it runs on.
COORDINATE_SHARE: float = 0.8
#: Share of that time given to the diagonal-moment relaxation (:mod:`.moment_bound`) before the coordinate one
#: (30 s runs, 0.55 → 0.8: Adult ε = 1 gap 2.9 → 2.5 %, Zipf 50 ε = 1, 2 8.4 → 6.9 %, 10.0 → 8.6 %, Zipf 100 ε = 1, 2
#: 17.1 → 15.3 %, 34.4 → 31.1 %).
MOMENT_SHARE: float = 0.8
COORDINATE_BOUND_MAX_N: int = 150
#: Above COORDINATE_BOUND_MAX_N without a second CPU, this share of the bound's time goes to the capped coordinate dual
#: (:mod:`.cap_bound`, docs/design.md §7.6), the rest to the Frank–Wolfe bound; above MAX_COLUMN_GENERATION_N the
#: capped dual gets the bound's share of the limit (BOUND_SHARE, at most BOUND_SECONDS) where its pricing fits.
CAP_SHARE: float = 0.6
#: Largest alphabet on which a second process bounds the design from the first round on (:mod:`.parallel_bound`,
#: docs/design.md §7.4, §7.6: the moment bound up to its MOMENT_MAX_N, where one relaxed master costs ~3.5 s at
#: N = 300, and the capped coordinate dual from its CAP_MIN_N; it takes nothing from the design's CPU).
BACKGROUND_MAX_N: int = 1200
#: Largest number of extreme rays for which pricing enumerates all of them (and a lower bound is proven).
MAX_ENUMERATED_RAYS: int = 1_100_000
#: Generated columns kept in the master between rounds (at least 2N; the heaviest are kept), and the weight a new
#: column starts at (docs/design.md §7: fewer columns, cheaper Newton steps, more rounds).
MASTER_COLUMNS: int = 400
NEW_WEIGHT: float = 1e-5
#: Relative accuracy of each restricted-master solve when the pricing is heuristic (not enumerated; 1e-8 then):
#: multipliers that good price as well, and rounds are 2–3× cheaper, so more of them fit (docs/design.md §7).
MASTER_RTOL: float = 1e-4


def _all_rays(uset: UncertaintySet, epsilon: float, prior: np.ndarray) -> np.ndarray | None:
    """The complete normalised ray list when it is affordable (pricing exact, bound valid), else None."""
    from ..rays import AUTO_EXACT_SIZE_FINITE, AUTO_EXACT_SIZE_GENERIC, MAX_EXACT_SIZE, enumerate_rays  # noqa: PLC0415

    n = uset.size
    generic = isinstance(uset, L1Ball) and uset.radius > 0 and not uset.in_interior_regime
    multi = isinstance(uset, FiniteSet) and uset.distributions.shape[0] > 1  # rays by pycddlib: slow beyond N = 10
    limit = AUTO_EXACT_SIZE_GENERIC if generic else AUTO_EXACT_SIZE_FINITE if multi else MAX_EXACT_SIZE
    if n > limit:  # tested first: 3^n overflows a float at n ≥ 647
        return None
    est_rays = 3.0**n if generic else n * 2.0**n
    if est_rays > 4 * MAX_ENUMERATED_RAYS:
        return None
    try:
        R = enumerate_rays(uset, epsilon)
    except ValueError:
        return None
    if R.shape[1] > MAX_ENUMERATED_RAYS:
        return None
    return R / (prior @ R)


def _level_states(V: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """The three-level states (0 = out, 1 = V∖U, 2 = U) of the ``k`` heaviest columns of ``V``: the top level is U,
    zeros (≤ 1e-9 × the column's maximum) are out, the rest V∖U; starts of :func:`.pricing.nested_pricing`."""
    top = np.argsort(-w)[:k]
    C = V[:, top]
    mx = C.max(axis=0)
    return np.where(C >= mx * (1 - 1e-9), 2, np.where(C > 1e-9 * mx, 1, 0)).T.astype(np.int64)


def _kept_under(cap: int, max_outputs: int, x: np.ndarray, n: int, W_seed: np.ndarray) -> int:
    """The generated columns the next master may keep under the design's ``max_outputs``: beside a round's new
    columns (up to ``max(4, N)``) and the seed's outputs while it has weight in the iterate (:func:`_design_matrix`
    leaves it out below 1e-6), so that the next iterate fits (docs/design.md §7, "An output cap"). Never fewer than
    ``2N``: a master on fewer went singular (a review: N = 5–100 at caps below ~3N, "stopped early ... Singular
    matrix"); where the cap leaves less room its iterates are not kept, and the rounds still give the bound."""
    seed = W_seed.shape[1] if x[-1] > 1e-6 else 0
    room = max_outputs - max(4, n) - seed
    return min(cap, room) if room >= 2 * n else cap


def _design_matrix(V: np.ndarray, x: np.ndarray, W_seed: np.ndarray) -> np.ndarray:
    K = V.shape[1]
    used = x[:K] > 1e-12 * max(float(x.max()), 1e-300)
    parts = [V[:, used] * x[:K][used]]
    if x[K] > 1e-6:  # a negligible share of the seed is left out (rows renormalised, certified): fewer outputs
        parts.append(W_seed * x[K])
    return np.hstack(parts)


def _heaviest_rays(V: np.ndarray, x: np.ndarray, W_seed: np.ndarray, prior: np.ndarray,
                   k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` heaviest of the design's normalised rays and their weights (those of :func:`_as_rays`), heaviest
    first; only those columns are built (the seed has thousands, and this runs every round)."""
    K = V.shape[1]
    scale = prior @ W_seed
    ok = np.flatnonzero(scale > 0)
    w = np.concatenate([x[:K], x[K] * scale[ok]])
    top = np.argsort(-w)[:k]
    generated = top < K
    seed_cols = ok[top[~generated] - K]
    R = np.empty((V.shape[0], top.size))
    R[:, generated] = V[:, top[generated]]
    R[:, ~generated] = W_seed[:, seed_cols] / scale[seed_cols]
    return R, w[top]


def _as_rays(V: np.ndarray, x: np.ndarray, W_seed: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The design as normalised rays and weights (the seed mechanism's columns become rays)."""
    K = V.shape[1]
    scale = prior @ W_seed
    ok = scale > 0
    R = np.hstack([V, W_seed[:, ok] / scale[ok]])
    return R, np.concatenate([x[:K], x[K] * scale[ok]])


class _Rounds:
    """The state one column generation shares between its rounds and its end (docs/design.md §7)."""

    def __init__(self, uset: UncertaintySet, epsilon: float, util: FrequencyEstimation, prior: np.ndarray,
                 best: CertifiedIncumbent,
                 state: dict, gen: np.random.Generator, deadline: float, time_limit: float) -> None:
        self.uset, self.epsilon, self.prior, self.best, self.state, self.gen = uset, epsilon, prior, best, state, gen
        self.n = uset.size
        self.d_opt = util.criterion == "D"
        self.sq = 0.0 if self.d_opt else float(prior @ prior)  # tr F⁻¹ − ‖π‖² (A) or log det F⁻¹ (D)
        self.deadline, self.time_limit = deadline, time_limit
        self.R_all = _all_rays(uset, epsilon, prior) if time.perf_counter() < deadline else None
        state["enumerated"] = self.R_all is not None
        # without the complete ray list, the last share of the time goes to the valid bound (bound.py)
        self.loop_deadline = deadline if self.R_all is not None else deadline - min(BOUND_SHARE * time_limit,
                                                                                   BOUND_SECONDS)
        # the moment bound on the CPU the column generation leaves idle, from the first round on (§7.4)
        self.background = (not self.d_opt and self.R_all is None and self.n <= BACKGROUND_MAX_N
                           and available(time_limit))
        self.bg: BackgroundBound | None = None
        self.level = 0  # escalations of the three-level search so far (ESCALATIONS)
        self.work = max(NESTED_WORK // self.n, 1)

    def covered(self) -> bool:
        """The background process has a value: the end-of-run relaxations' share is the rounds'."""
        return self.bg is not None and BACKGROUND_TAIL is not None and self.bg.has_value()

    def start_background(self, R: np.ndarray, w: np.ndarray) -> None:
        """Start the second process on the rays ``R`` (weights ``w``); without one, go on without it."""
        try:
            self.bg = BackgroundBound(self.uset, self.epsilon, self.prior, R, w, deadline=self.deadline)
        except (OSError, RuntimeError, AssertionError, ValueError):  # no process to be had: no matter
            self.background = False

    def feed_background(self, V: np.ndarray, x: np.ndarray, W_seed: np.ndarray) -> None:
        """Give the moment bound in the second process this round's heaviest rays (started at the first round)."""
        if self.background and self.n <= MOMENT_BACKGROUND_MAX_N and time.perf_counter() < self.loop_deadline:
            Rb, wb = _heaviest_rays(V, x, W_seed, self.prior, MOMENT_POOL_PER_SYMBOL * self.n)
            if self.bg is None:
                self.start_background(Rb, wb)
            else:
                self.bg.offer(Rb, wb)
        if self.covered():
            self.loop_deadline = max(self.loop_deadline, self.deadline - BACKGROUND_TAIL * self.time_limit)

    def raise_lower(self, value: float) -> bool:
        """Keep a valid lower bound (of the criterion plus ‖π‖² for A); True when it proves the incumbent optimal."""
        self.state["lower"] = max(self.state["lower"], value)
        return bool(proven_optimal(self.best.value, self.state["lower"] - self.sq))

    def search(self, M: np.ndarray, nu: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
        """The three-level search at the current escalation level."""
        return nested_pricing(self.uset, self.epsilon, self.prior, M, nu, self.gen, starts=starts,
                              restarts=NESTED_RESTARTS * 4**self.level, deadline=self.loop_deadline, work=self.work)

    def price(self, M: np.ndarray, nu: np.ndarray, fw: Callable[[float], float], V: np.ndarray, x: np.ndarray,
              density: float, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """Candidate rays and their reduced costs at the master's ``(M, ν)``: every ray where they are enumerated
        (and the Frank–Wolfe bound there, exact), else the local search and the three-level one, escalated while
        it finds none (work budgets: the path does not depend on the clock)."""
        if self.R_all is not None:
            d_all = reduced_costs(self.R_all, M, nu)
            self.raise_lower(fw(-float(d_all.min())))
            return self.R_all, d_all
        self.state["last"] = (fw, M, nu, V)  # bounded once, after the rounds (bound.py costs ~a round)
        cand = local_pricing(self.uset, self.epsilon, self.prior, M, nu, self.gen, density=density)
        # rays with zeros outside V (three levels) are out of the two-level search's reach
        cand = np.hstack([cand, self.search(M, nu, _level_states(V, x[:-1], NESTED_MASTER_STARTS))])
        d_c = reduced_costs(cand, M, nu)
        while self.level < ESCALATIONS and time.perf_counter() < self.loop_deadline and not np.any(d_c < -tol):
            self.level += 1
            cand = self.search(M, nu)
            d_c = reduced_costs(cand, M, nu)
        self.state["level"] = self.level
        return cand, d_c

    def price_stalled(self, M: np.ndarray, nu: np.ndarray, fw: Callable[[float], float],
                      V: np.ndarray) -> tuple[np.ndarray | None, bool]:
        """The local pricing is stuck: the branch and bound of bound.py prices (and bounds) this point. Returns its
        rays (or None) and whether its bound proves the incumbent optimal."""
        rb = ray_value_bounds(self.uset, self.epsilon, self.prior, M, nu, rays=V, deadline=self.loop_deadline,
                              work=max(STALL_WORK * 100 // max(self.n, 100), 10))
        if math.isfinite(rb.upper) and self.raise_lower(fw(rb.upper)):
            return None, True
        return (rb.rays if rb.rays is not None and rb.rays.shape[1] else None), False

    def final_bounds(self, W_seed: np.ndarray, bar: Any) -> None:
        """A valid bound at every N after the rounds (docs/design.md §7.1–§7.3, §7.6): the relaxations in the
        bound's share, then the Frank–Wolfe bound at the last master."""
        state = self.state
        fw, M, nu, V_last = state.pop("last")
        n, t = self.n, time.perf_counter
        # the coordinate relaxation first (A criterion); not when the background process computing the moment
        # bound on the other CPU already has a value (BACKGROUND_TAIL)
        if not self.d_opt and n <= COORDINATE_BOUND_MAX_N and not self.covered():
            R, w = _as_rays(state["V"], state["x"], W_seed, self.prior)
            inside = isinstance(self.uset, L1Ball) and self.uset.in_interior_regime  # the Frank–Wolfe bound is exact
            t_bound = t()
            share = (0.3 if inside else COORDINATE_SHARE) * max(self.deadline - t_bound, 0.0)
            # the diagonal-moment relaxation first (§7.3), then the coordinate one's faster rounds, each of its
            # multipliers also valued by the moment dual (never below its own for g ≥ 0)
            mb = moment_bound(self.uset, self.epsilon, self.prior, R, deadline=t() + MOMENT_SHARE * share, weights=w)
            cb = coordinate_bound(self.uset, self.epsilon, self.prior, R, deadline=t_bound + share, weights=w,
                                  dual_value=moment_dual(self.prior, self.uset, self.epsilon))
            for value in (mb.value, cb.value):
                if math.isfinite(value):
                    self.raise_lower(value + self.sq)  # (the A criterion here: sq = ‖π‖²)
            _ceiling(state, mb.relaxed, mb.value)
        if not self.d_opt and n > COORDINATE_BOUND_MAX_N and self.bg is None:  # no second CPU: the capped dual (§7.6)
            cap_stage(self.uset, self.epsilon, self.prior, t() + CAP_SHARE * max(self.deadline - t(), 0), state)
        rb = ray_value_bounds(self.uset, self.epsilon, self.prior, M, nu, deadline=max(self.deadline, t() + 0.1),
                              rays=V_last)
        if math.isfinite(rb.upper):  # the Frank–Wolfe bound at the last master: valid for every design
            self.raise_lower(fw(rb.upper))
            _progress_update(bar, self.best.value, state["lower"] - self.sq)

    def background_result(self, bar: Any) -> None:
        """The background bound's result, in by the deadline (a proven design does not wait; A criterion only, so
        ``sq`` is ‖π‖²)."""
        sq = self.sq
        done = proven_optimal(self.best.value, self.state["lower"] - sq)
        mbg = self.bg.result(until=time.perf_counter() if done else self.deadline)
        self.state["background_bound"] = ({"value": mbg.value, "relaxed": mbg.relaxed, "rounds": mbg.rounds,
                                           "cap": self.bg.cap_value} if mbg is not None else {"error": self.bg.error})
        if mbg is not None:
            _ceiling(self.state, mbg.relaxed, mbg.value)
        for v in (mbg.value, self.bg.cap_value) if mbg is not None else ():
            if math.isfinite(v):
                self.raise_lower(v + sq)
            _progress_update(bar, self.best.value, self.state["lower"] - sq)


def column_generation(uset: UncertaintySet, epsilon: float, util: FrequencyEstimation, prior: np.ndarray,
                      seed: PairBalancedChannel, G_seed: Callable[[], np.ndarray], best: CertifiedIncumbent,
                      state: dict, gen: np.random.Generator, deadline: float, max_iter: int, bar: Any,
                      time_limit: float, max_outputs: int | None = None) -> None:
    """Rounds of master + pricing from the LDP ``seed``; every master iterate is certified and offered to ``best``.

    Implements: core paper eq. (9) with the A- or D-optimal estimation criterion, by column generation over the
    normalised extreme rays of ``M(ε, 𝒫)`` (docs/design.md §7), and the valid bounds after the rounds (§7.1–§7.4,
    §7.6).

    Parameters
    ----------
    uset, epsilon, util, prior
        The uncertainty set, ε, the criterion and the prior π of the error ``tr F⁻¹ − ‖π‖²`` (A) or ``log det F⁻¹`` (D).
    seed : PairBalancedChannel
        The compact LDP channel the master starts from (all its weight on it: feasible).
    G_seed : callable
        The seed's Fisher information (cached; the master's matrix column).
    best : CertifiedIncumbent
        The incumbent every candidate is offered to (certified there; the result is the best of them).
    state : dict
        Filled with ``it``, ``lower`` (a valid lower bound, plus ``‖π‖²`` for A), ``K``, ``enumerated``, ``level``
        and the bounds' records.
    gen : numpy.random.Generator
        Randomness of the pricing's searches.
    deadline : float
        ``time.perf_counter()`` time by which the rounds and bounds end (the output reduction may take 5 % more
        of ``time_limit``).
    max_iter : int
        Most rounds; after them the bound gets its usual share, not the rest of the time.
    bar : progress bar
        :func:`pml_design.progress.progress_bar`'s bar (value, bound, gap); closed at the end.
    time_limit : float
        The design's time limit in seconds (the shares are of it).
    max_outputs : int, optional
        The design's output cap: the generated columns kept between rounds are fewer where the seed's outputs, the new
        columns and those kept would exceed it (an iterate with more outputs is not kept by ``best``).
    """
    run = _Rounds(uset, epsilon, util, prior, best, state, gen, deadline, time_limit)
    n, d_opt = run.n, run.d_opt
    cap = max(2 * n, MASTER_COLUMNS)  # generated columns kept between rounds
    V = ray_seeds(uset, epsilon, seed.matrix, gen, budget=n)
    V = V / (prior @ V)
    G = G_seed()[None]
    x = np.concatenate([np.full(V.shape[1], 1e-6 / V.shape[1]), [1.0]])  # all weight on the LDP seed: feasible
    density = float(np.mean(seed.matrix > seed.matrix.min(axis=0) * (1 + 1e-9)))
    W_seed = seed.matrix
    exact, f_prev = False, math.inf  # exact: centre this round's master exactly
    try:
        if run.background and n > MOMENT_BACKGROUND_MAX_N:  # only the capped dual runs there: no rays needed, so now
            run.start_background(V, np.ones(V.shape[1]))
        for it in range(1, max_iter + 1):
            state["it"] = it
            x, nu, (f, _, M) = solve_master(V, G, d_opt, x, run.loop_deadline, warm=it > 1,
                                            loose=run.R_all is None and not exact,
                                            rtol=1e-8 if run.R_all is not None else MASTER_RTOL)
            best.offer(_design_matrix(V, x, W_seed), f"master round {it}")
            state["x"], state["V"] = x, V
            run.feed_background(V, x, W_seed)
            g_all = np.concatenate([gradients(V, M), [-float(np.sum(G[0] * M))]])
            fw = functools.partial(scaled_frank_wolfe_bound, f, float(g_all @ x), float(nu.sum()), d_optimal=d_opt,
                                   n=n)  # the Frank–Wolfe bound at the best scale (§7.1), of a pricing maximum
            tol = 1e-9 * max(1.0, abs(f))
            cand, d_c = run.price(M, nu, fw, V, x, density, tol)
            _progress_update(bar, best.value, state["lower"] - run.sq)
            if proven_optimal(best.value, state["lower"] - run.sq):  # the one rule (relative): no absolute tolerance
                break
            improving = np.flatnonzero(d_c < -tol)
            if improving.size == 0 and run.R_all is None and time.perf_counter() < run.loop_deadline - STALL_SECONDS:
                rays, proven = run.price_stalled(M, nu, fw, V)
                if proven:
                    break
                if rays is not None:
                    cand, d_c = rays, reduced_costs(rays, M, nu)
                    improving = np.flatnonzero(d_c < -tol)
            if improving.size == 0 or time.perf_counter() > run.loop_deadline:
                break
            # the master stalled (moved < 1e-6 |f|): centre it exactly next round, so that the rounds can end there
            exact, f_prev = not exact and f > f_prev - 0.01 * MASTER_RTOL * max(1.0, abs(f)), f
            pick = improving[np.argsort(d_c[improving])][: max(4, n)]
            keep = prune(V, x[:-1], cap if max_outputs is None else _kept_under(cap, max_outputs, x, n, W_seed))
            V = np.hstack([V[:, keep], cand[:, pick]])
            x = np.concatenate([x[keep], np.full(pick.size, NEW_WEIGHT), x[-1:]])
        else:  # max_iter rounds done: the bound gets its usual share, not the rest of the limit (the caller asked
            # for few rounds; a run that stops because nothing prices out keeps the rest for its proof)
            run.deadline = min(run.deadline, time.perf_counter() + min(BOUND_SHARE * time_limit, BOUND_SECONDS))
        if not state["enumerated"] and "last" in state:  # a valid bound at every N (docs/design.md §7.1, §7.2)
            run.final_bounds(W_seed, bar)
        if run.bg is not None:
            run.background_result(bar)
    finally:
        bar.close()
        if run.bg is not None:
            run.bg.close()
    state["K"] = V.shape[1]
    if best.cert is not None:  # the incumbent on fewer outputs, same F, within what is left of the budget (+5 %)
        small = mechanism_on_fewer_outputs(best.cert.matrix, prior,
                                           run.deadline + 0.05 * time_limit - time.perf_counter())
        if small is not None:
            best.offer(small, best.source + " (fewer outputs)", rtol=1e-6)  # the LP meets F to its tolerance


def cap_stage(uset: UncertaintySet, epsilon: float, prior: np.ndarray, until: float, state: dict) -> None:
    """The capped coordinate dual (docs/design.md §7.6) until ``until``, where it fits; its value joins ``state``."""
    if cap_affordable(uset.size, until - time.perf_counter()):
        cb = cap_bound(uset, epsilon, prior, deadline=until)
        state["cap_bound"] = {"value": cb.value, "cap": cb.cap, "pricings": cb.pricings}
        state["lower"] = max(state["lower"], cb.value + float(prior @ prior))  # (-inf stays -inf)


def _ceiling(state: dict, relaxed: float, value: float) -> None:
    """Keep the diagonal-moment relaxation's best bound ``value`` and lowest relaxed-master value ``relaxed`` (over any
    pool of rays the relaxed value is at least that relaxation's optimum, so no bound *of that relaxation* is above
    it: docs/design.md §7.4, the floor; the Frank–Wolfe bound bounds the design problem itself and may be higher)."""
    if math.isfinite(relaxed):
        state["relaxed"] = min(state.get("relaxed", math.inf), float(relaxed))
    if math.isfinite(value):
        state["moment"] = max(state.get("moment", -math.inf), float(value))
