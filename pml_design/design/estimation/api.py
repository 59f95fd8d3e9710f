"""``design(..., utility="frequency_estimation")``: column generation from the best compact ε-LDP channel.

Implements: core paper eq. (9) with the A-optimal (or D-optimal) estimation criterion over ``M(ε, 𝒫)``
(docs/design.md §7): seeds (:mod:`.seeds`), restricted master (:mod:`.master`), pricing (:mod:`.pricing`), the
Frank–Wolfe lower bound (complete enumeration or :func:`.bound.max_ray_value`), fewer outputs (:mod:`.reduce`);
every candidate certified (:func:`~pml_design.design.certify.certify`) and the best certified one kept, so the result
is monotone in the time spent and never above the compact LDP channel's error.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable

import numpy as np

from ...mechanisms.frequency_oracles.optimum import ldp_optimum
from ...uncertainty import FiniteSet, L1Ball, UncertaintySet
from ..anytime import PROOF_RTOL, WARN_GAP, _default_progress, _progress_update, warn_result_gap
from ..result import DesignResult, PMLDesignWarning, SolverFailedError, proven_optimal
from ..utilities import FrequencyEstimation
from .affordable import check_affordable
from .bound import ray_value_bounds, scaled_frank_wolfe_bound
from .incumbent import CertifiedIncumbent as _Incumbent
from .cap_bound import box_coordinate_bound, box_log_det_bound, cap_affordable, cap_bound
from .coordinate_bound import coordinate_bound
from .moment_bound import MOMENT_POOL_PER_SYMBOL, moment_bound, moment_dual
from .master import gradients, solve_master
from .mixture import mixture_stage as _mixture_stage
from .parallel_bound import MOMENT_MAX_N as MOMENT_BACKGROUND_MAX_N
from .parallel_bound import BackgroundBound, available
from .pricing import NESTED_RESTARTS, local_pricing, nested_pricing, reduced_costs
from .reduce import mechanism_on_fewer_outputs, prune
from .seeds import first_seed, offer_larger_seed
from .seeds import rank_seeds as _rank_seeds
from .seeds import ray_seeds

__all__ = ["design_frequency_estimation"]

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
#: Largest alphabet on which column generation runs (above it the compact LDP channel is returned, certified).
MAX_COLUMN_GENERATION_N: int = 1200
#: Output budget of the compact LDP channel: ``min(LDP_OUTPUTS_CAP, max(4096, LDP_OUTPUTS_PER_SYMBOL · N))``; where its
#: best closed form is more than ``seeds.SEED_BUDGET_RTOL`` above the LDP optimum, a channel on a larger budget (up to
#: the cap) is offered to the incumbent too (``seeds.offer_larger_seed``).
LDP_OUTPUTS_PER_SYMBOL: int = 8
LDP_OUTPUTS_CAP: int = 32768
#: Generated columns kept in the master between rounds (at least 2N; the heaviest are kept), and the weight a new
#: column starts at (docs/design.md §7: fewer columns, cheaper Newton steps, more rounds).
MASTER_COLUMNS: int = 400
NEW_WEIGHT: float = 1e-5
#: The first-order master of :mod:`.mixture` (A or D criterion): the best mixture of the LDP seed and ε-PML partition
#: channels, a candidate beside the column generation and, above MAX_COLUMN_GENERATION_N, instead of it, up to this
#: many symbols (a step costs ~N³ + N²·outputs: ~4 s at N = 3 000). docs/design.md §7.5.
MIXTURE_MAX_N: int = 4000
#: Steps of the mixture before the column generation (a work budget: the rounds that follow run the same path under
#: any time limit); above MAX_COLUMN_GENERATION_N the time limit ends it.
MIXTURE_STEPS: int = 100
MIXTURE_STEPS_LARGE: int = 1000
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


def design_frequency_estimation(
    uset: UncertaintySet,
    epsilon: float,
    util: FrequencyEstimation,
    prior: np.ndarray,
    *,
    time_limit: float = 60.0,
    progress: bool | None = None,
    max_iter: int = 10_000,
    rng: object = None,
) -> DesignResult:
    """``design(..., utility="frequency_estimation")``: minimise the asymptotic MSE of estimating P.

    Implements: core paper eq. (9) with the A-optimal (or D-optimal) estimation criterion (docs/design.md §7)
    over ``M(ε, 𝒫)``, by column generation on extreme rays started at the best compact ε-LDP channel; certified
    like every design.

    Parameters
    ----------
    uset : UncertaintySet
        The set the guarantee must hold for (ℓ1 ball of any radius, simplex, finite set, prior).
    epsilon : float
        ε > 0 (at ε = 0 no mechanism identifies anything).
    util : FrequencyEstimation
    prior : numpy.ndarray
        The distribution the error is evaluated at (every entry > 0).
    time_limit : float, default 60
        Seconds for the whole call (≤ 1.1 × time_limit + a few seconds, the final reduction and certification
        included); the result is the best certified design found by then.
    progress : bool, optional
        Show a progress bar (value, bound, gap); default: when stderr is a terminal.
    max_iter : int, default 10 000
        Column-generation rounds (stopping there returns the best certified design, not the last iterate); the valid
        bound then gets its usual share of the time (:data:`BOUND_SHARE`, at most :data:`BOUND_SECONDS`), not the
        rest of the limit.
    rng : numpy.random.Generator, int or None
        For the sampled seeds and the pricing's random starts (default: a fixed seed, so designs are reproducible).

    Returns
    -------
    DesignResult
        ``utility`` = the MSE per report (lower is better, ``sense="min"``), ``lower_bound`` the best valid bound
        seen (``-inf`` when none), ``upper_bound`` = ``utility``. ``info`` names the LDP optimum
        (``ldp_optimum``, ``ldp_optimum_mse``), the compact LDP seed (``ldp_seed``, ``ldp_seed_mse``; the master's
        column) and ``larger_seed``, the channel on a larger budget offered to the incumbent (or None);
        ``info["relaxation_floor"]`` is ``1 − relaxed/utility``, with ``relaxed`` the lowest value of the
        diagonal-moment relaxed master over its pools of rays: no bound of that relaxation (its best is
        ``info["relaxation_bound"]``) proves a smaller relative gap for this design, however long it runs; other
        bounds (Frank–Wolfe) may (docs/design.md §7.4, §12). Both are None when that relaxation did not run or solved
        no master in time.
    """
    from ..._validation import as_generator  # noqa: PLC0415
    from ...progress import progress_bar  # noqa: PLC0415

    if epsilon <= 0:
        raise ValueError(
            "utility 'frequency_estimation' needs epsilon > 0: at epsilon = 0 every PML mechanism has identical rows "
            "and no distribution can be estimated"
        )
    progress = _default_progress(progress)
    t0 = time.perf_counter()
    time_limit = float(time_limit)
    deadline = t0 + time_limit
    gen = as_generator(0 if rng is None else rng)
    n = uset.size
    d_opt = util.criterion == "D"
    sq = 0.0 if d_opt else float(prior @ prior)
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    ldp = ldp_optimum(n, epsilon, prior)
    max_outputs = min(LDP_OUTPUTS_CAP, max(4096, LDP_OUTPUTS_PER_SYMBOL * n))
    if n > MAX_COLUMN_GENERATION_N:
        check_affordable(n, epsilon, prior, max_outputs, time_limit - (time.perf_counter() - t0))
    state = {"it": 0, "lower": -math.inf, "K": 0, "enumerated": False}
    # dense algebra of at most a few hundred: one BLAS thread is fastest and never oversubscribes a shared machine
    with threadpool_limits(1 if n <= MAX_COLUMN_GENERATION_N else None):
        seed, t_build = first_seed(n, epsilon, prior, max_outputs)
        best = _Incumbent(uset, epsilon, util, prior)
        t_offer = time.perf_counter()
        best.offer(seed.matrix, "ldp_seed")
        t_offer = time.perf_counter() - t_offer
        if not math.isfinite(best.value):  # F of order ε² is singular in double precision (ε ≲ 1e-7)
            raise ValueError(
                f"epsilon is too small for utility 'frequency_estimation' (epsilon={epsilon!r}, N={n} symbols): the Fisher "
                "information of the best compact epsilon-LDP channel is numerically singular (the error grows like "
                "1/epsilon^2); use a larger epsilon, or deploy an LDP oracle (pml_design.frequency_oracles)"
            )
        seed, out_of_time, t_offer = _rank_seeds(n, epsilon, prior, max_outputs, seed, best, deadline, t_build,
                                                 t_offer, state)
        if not out_of_time and n <= MAX_COLUMN_GENERATION_N:  # a channel nearer LDP's best, for the incumbent only
            out_of_time = offer_larger_seed(n, epsilon, prior, max_outputs, LDP_OUTPUTS_CAP, ldp.mse, best, deadline,
                                            t_build + t_offer, seed.matrix.shape[1], state)
        seed_value = best.value
        if out_of_time:
            deadline = -math.inf  # nothing after the seeds (every limit runs the same stages in the same order)
        # the seed's Fisher information, computed once, when a stage first needs it (never before its time checks)
        G_seed = functools.cache(lambda: best.fisher_of(seed.matrix))
        # above MAX_COLUMN_GENERATION_N the capped dual (A) gets the bound's share after the mixture, where it fits
        bound_s = min(BOUND_SHARE * time_limit, BOUND_SECONDS)
        large = not d_opt and n > MAX_COLUMN_GENERATION_N and cap_affordable(n, bound_s)
        try:
            if n <= MIXTURE_MAX_N and time.perf_counter() < deadline:
                _mixture_stage(uset, epsilon, prior, seed.matrix, G_seed, best, gen,
                               deadline - (bound_s if large else 0.0), t_offer, state,
                               MIXTURE_STEPS if n <= MAX_COLUMN_GENERATION_N else MIXTURE_STEPS_LARGE)
            if large and time.perf_counter() < deadline:  # (leaving the clean-up's offer its time, as the mixture)
                _cap_stage(uset, epsilon, prior, deadline - t_offer, state)
            if n <= MAX_COLUMN_GENERATION_N and time.perf_counter() < deadline:
                _column_generation(uset, epsilon, util, prior, seed, G_seed, best, state, gen, deadline, max_iter,
                                   progress_bar(total=None, desc="estimation design", enabled=progress), time_limit)
        except (SolverFailedError, np.linalg.LinAlgError) as exc:  # tiny ε: the incumbent stays (certified)
            state["numerical_failure"] = str(exc)
    _offer_cleaned(best)
    return _finish(uset, epsilon, util, prior, best, state, ldp, seed, seed_value, time_limit, t0)


def _offer_cleaned(best: _Incumbent) -> None:
    """Offer the incumbent without its interior-point noise: entries ≤ 1e-6 × their column's maximum and "ghost"
    outputs (reached with probability ~1e-8) become exact zeros (:func:`~pml_design.design.linear.lp.clean_tiny`); it is
    certified again and kept when its error is within 1e-6 (relative) on fewer outputs, as the output reduction is."""
    from ..linear.lp import clean_tiny  # noqa: PLC0415

    W = clean_tiny(best.cert.matrix, rtol=1e-6)
    W = W[:, W.sum(axis=0) > 0]
    if W.shape[1] < best.cert.matrix.shape[1] and np.all(W.sum(axis=1) > 0):
        best.offer(W, best.source + " (cleaned)", rtol=1e-6)


def _column_generation(uset, epsilon, util, prior, seed, G_seed: Callable[[], np.ndarray], best: _Incumbent,
                       state: dict, gen, deadline: float, max_iter: int, bar, time_limit: float) -> None:
    """Rounds of master + pricing; every master iterate is certified and offered to ``best``; fills ``state``.
    ``G_seed()``: the LDP seed's Fisher information, the master's matrix column."""
    n = uset.size
    d_opt = util.criterion == "D"
    R_all = _all_rays(uset, epsilon, prior) if time.perf_counter() < deadline else None
    state["enumerated"] = R_all is not None
    # without the complete ray list, the last share of the time goes to the valid bound (bound.py)
    loop_deadline = deadline if R_all is not None else deadline - min(BOUND_SHARE * time_limit, BOUND_SECONDS)
    cap = max(2 * n, MASTER_COLUMNS)  # generated columns kept between rounds
    V = ray_seeds(uset, epsilon, seed.matrix, gen, budget=n)
    V = V / (prior @ V)
    G = G_seed()[None]
    x = np.concatenate([np.full(V.shape[1], 1e-6 / V.shape[1]), [1.0]])  # all weight on the LDP seed: feasible
    density = float(np.mean(seed.matrix > seed.matrix.min(axis=0) * (1 + 1e-9)))
    W_seed = seed.matrix
    # the moment bound on the CPU the column generation leaves idle, from the first round on (docs/design.md §7.4)
    background = not d_opt and R_all is None and n <= BACKGROUND_MAX_N and available(time_limit)
    bg = None
    level = 0  # escalations of the three-level search so far (ESCALATIONS)
    work, exact, f_prev = max(NESTED_WORK // n, 1), False, math.inf  # exact: centre this round's master exactly

    def covered() -> bool:  # the background process has a value: the end-of-run relaxations' share is the rounds'
        return bg is not None and BACKGROUND_TAIL is not None and bg.has_value()

    def search(M, nu, starts=None):  # the three-level search at the current escalation level
        return nested_pricing(uset, epsilon, prior, M, nu, gen, starts=starts, restarts=NESTED_RESTARTS * 4 ** level,
                              deadline=loop_deadline, work=work)

    def start(Rb, wb):
        nonlocal background
        try:
            return BackgroundBound(uset, epsilon, prior, Rb, wb, deadline=deadline)
        except (OSError, RuntimeError, AssertionError, ValueError):  # no process to be had: no matter
            background = False
        return None

    try:
        if background and n > MOMENT_BACKGROUND_MAX_N:  # only the capped dual runs there: no rays needed, so now
            bg = start(V, np.ones(V.shape[1]))
        for it in range(1, max_iter + 1):
            state["it"] = it
            x, nu, (f, _, M) = solve_master(V, G, d_opt, x, loop_deadline, warm=it > 1, loose=R_all is None and not exact,
                                            rtol=1e-8 if R_all is not None else MASTER_RTOL)
            best.offer(_design_matrix(V, x, W_seed), f"master round {it}")
            state["x"], state["V"] = x, V
            if background and n <= MOMENT_BACKGROUND_MAX_N and time.perf_counter() < loop_deadline:
                Rb, wb = _heaviest_rays(V, x, W_seed, prior, MOMENT_POOL_PER_SYMBOL * n)
                if bg is None:
                    bg = start(Rb, wb)
                else:
                    bg.offer(Rb, wb)
            if covered():
                loop_deadline = max(loop_deadline, deadline - BACKGROUND_TAIL * time_limit)
            g_all = np.concatenate([gradients(V, M), [-float(np.sum(G[0] * M))]])
            g_theta, nu_sum = float(g_all @ x), float(nu.sum())

            def fw(q_max: float, f=f, g_theta=g_theta, nu_sum=nu_sum) -> float:  # at the best scale (§7.1)
                return scaled_frank_wolfe_bound(f, g_theta, nu_sum, q_max, d_optimal=d_opt, n=n)
            if R_all is not None:
                d_all = reduced_costs(R_all, M, nu)
                state["lower"] = max(state["lower"], fw(-float(d_all.min())))
                cand, d_c = R_all, d_all
            else:
                state["last"] = (fw, M, nu, V)  # bounded once, after the rounds (bound.py costs ~a round)
                cand = local_pricing(uset, epsilon, prior, M, nu, gen, density=density)
                # rays with zeros outside V (three levels) are out of the two-level search's reach
                cand = np.hstack([cand, search(M, nu, _level_states(V, x[:-1], NESTED_MASTER_STARTS))])
                d_c = reduced_costs(cand, M, nu)
                # a stalled search searches again, larger (work budgets: the path does not depend on the clock)
                while (level < ESCALATIONS and time.perf_counter() < loop_deadline
                       and not np.any(d_c < -1e-9 * max(1.0, abs(f)))):
                    level += 1
                    cand = search(M, nu)
                    d_c = reduced_costs(cand, M, nu)
                state["level"] = level
            lower = state["lower"] - (0.0 if d_opt else float(prior @ prior))
            _progress_update(bar, best.value, lower)
            if proven_optimal(best.value, lower):  # the one rule (relative): no absolute tolerance below 1
                break
            improving = np.flatnonzero(d_c < -1e-9 * max(1.0, abs(f)))
            if improving.size == 0 and R_all is None and time.perf_counter() < loop_deadline - STALL_SECONDS:
                # the local pricing is stuck: the branch and bound of bound.py prices (and bounds) this point
                rb = ray_value_bounds(uset, epsilon, prior, M, nu, rays=V, deadline=loop_deadline,
                                      work=max(STALL_WORK * 100 // max(n, 100), 10))
                if math.isfinite(rb.upper):
                    state["lower"] = max(state["lower"], fw(rb.upper))
                    if proven_optimal(best.value, state["lower"] - (0.0 if d_opt else float(prior @ prior))):
                        break
                if rb.rays is not None and rb.rays.shape[1]:
                    cand, d_c = rb.rays, reduced_costs(rb.rays, M, nu)
                    improving = np.flatnonzero(d_c < -1e-9 * max(1.0, abs(f)))
            if improving.size == 0 or time.perf_counter() > loop_deadline:
                break
            # the master stalled (moved < 1e-6 |f|): centre it exactly next round, so that the rounds can end there
            exact, f_prev = not exact and f > f_prev - 0.01 * MASTER_RTOL * max(1.0, abs(f)), f
            pick = improving[np.argsort(d_c[improving])][: max(4, n)]
            keep = prune(V, x[:-1], cap)
            V = np.hstack([V[:, keep], cand[:, pick]])
            x = np.concatenate([x[keep], np.full(pick.size, NEW_WEIGHT), x[-1:]])
        else:  # max_iter rounds done: the bound gets its usual share, not the rest of the limit (the caller asked
            # for few rounds; a run that stops because nothing prices out keeps the rest for its proof)
            deadline = min(deadline, time.perf_counter() + min(BOUND_SHARE * time_limit, BOUND_SECONDS))
        if not state["enumerated"] and "last" in state:  # a valid bound at every N (docs/design.md §7.1, §7.2)
            fw, M, nu, V_last = state.pop("last")
            # the coordinate relaxation first (A criterion); not when the background process computing the moment
            # bound on the other CPU already has a value (BACKGROUND_TAIL)
            if not d_opt and n <= COORDINATE_BOUND_MAX_N and not covered():
                R, w = _as_rays(state["V"], state["x"], W_seed, prior)
                inside = isinstance(uset, L1Ball) and uset.in_interior_regime  # there the Frank–Wolfe bound is exact
                t_bound = time.perf_counter()
                share = (0.3 if inside else COORDINATE_SHARE) * max(deadline - t_bound, 0.0)
                # the diagonal-moment relaxation first (§7.3), then the coordinate one's faster rounds, each of
                # its multipliers also valued by the moment dual (never below its own for g ≥ 0)
                mb = moment_bound(uset, epsilon, prior, R, deadline=time.perf_counter() + MOMENT_SHARE * share,
                                  weights=w)
                cb = coordinate_bound(uset, epsilon, prior, R, deadline=t_bound + share, weights=w,
                                      dual_value=moment_dual(prior, uset, epsilon))
                for value in (mb.value, cb.value):
                    if math.isfinite(value):
                        state["lower"] = max(state["lower"], value + float(prior @ prior))
                _ceiling(state, mb.relaxed, mb.value)
            if not d_opt and n > COORDINATE_BOUND_MAX_N and bg is None:  # no second CPU: the capped dual here (§7.6)
                _cap_stage(uset, epsilon, prior, time.perf_counter() + CAP_SHARE * max(deadline - time.perf_counter(), 0),
                           state)
            rb = ray_value_bounds(uset, epsilon, prior, M, nu, deadline=max(deadline, time.perf_counter() + 0.1),
                                  rays=V_last)
            if math.isfinite(rb.upper):  # the Frank–Wolfe bound at the last master: valid for every design
                state["lower"] = max(state["lower"], fw(rb.upper))
                _progress_update(bar, best.value, state["lower"] - (0.0 if d_opt else float(prior @ prior)))
        if bg is not None:  # the background bound's result, in by the deadline (a proven design does not wait)
            done = proven_optimal(best.value, state["lower"] - float(prior @ prior))  # A criterion only
            mbg = bg.result(until=time.perf_counter() if done else deadline)
            state["background_bound"] = ({"value": mbg.value, "relaxed": mbg.relaxed, "rounds": mbg.rounds,
                                          "cap": bg.cap_value} if mbg is not None else {"error": bg.error})
            if mbg is not None:
                _ceiling(state, mbg.relaxed, mbg.value)
            for v in (mbg.value, bg.cap_value) if mbg is not None else ():
                if math.isfinite(v):
                    state["lower"] = max(state["lower"], v + float(prior @ prior))
                _progress_update(bar, best.value, state["lower"] - float(prior @ prior))
    finally:
        bar.close()
        if bg is not None:
            bg.close()
    state["K"] = V.shape[1]
    if best.cert is not None:  # the incumbent on fewer outputs, same F, within what is left of the budget (+5 %)
        small = mechanism_on_fewer_outputs(best.cert.matrix, prior, deadline + 0.05 * time_limit - time.perf_counter())
        if small is not None:
            best.offer(small, best.source + " (fewer outputs)", rtol=1e-6)  # the LP meets F to its tolerance


def _cap_stage(uset: UncertaintySet, epsilon: float, prior: np.ndarray, until: float, state: dict) -> None:
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


def _finish(uset, epsilon, util, prior, best: _Incumbent, state: dict, ldp, seed, seed_value: float,
            time_limit: float, t0: float) -> DesignResult:
    d_opt = util.criterion == "D"
    value = best.value
    lower = state["lower"]
    lower_val = (lower if d_opt else lower - float(prior @ prior)) if math.isfinite(lower) else -math.inf
    # data processing for Fisher information: a report of X carries at most what X does, F ⪯ diag(1/P), so
    # tr F⁻¹ ≥ 1 (A) and log det F⁻¹ ≥ Σ log P (D) for every mechanism, private or not (docs/design.md §7.1)
    lower_val = max(lower_val, float(np.sum(np.log(prior))) if d_opt else 1.0 - float(prior @ prior))
    # the caps every ray obeys (no pricing, never below that; docs/design.md §7.6): the coordinate dual at them (A),
    # Hadamard's inequality with F_xx ≤ T_x (D)
    lower_val = max(lower_val, (box_log_det_bound if d_opt else box_coordinate_bound)(uset, epsilon, prior))
    optimal = bool(proven_optimal(value, lower_val, rtol=10 * PROOF_RTOL))  # every bound kept is valid
    n = uset.size
    if not d_opt and value > ldp.mse * (1 + 1e-9):
        warnings.warn(
            PMLDesignWarning(
                f"the frequency-estimation design (error {value:.6g} per report) is above the local-DP optimum "
                f"{ldp.name} ({ldp.mse:.6g}) on N={n} symbols: the compact LDP channel "
                f"({state.get('larger_seed') or seed.name}) did not reach it and column generation did not close the gap"
                + (f" within the time limit of {time_limit:g} s; raise solver_options={{'time_limit': ...}}, or "
                   if n <= MAX_COLUMN_GENERATION_N else "; ")
                + f"deploy the {ldp.name} oracle (pml_design.frequency_oracles), which is epsilon-PML for every "
                "distribution"
            ),
            stacklevel=3,
        )
    if "numerical_failure" in state:
        warnings.warn(
            PMLDesignWarning(
                f"the frequency-estimation design stopped early at epsilon={epsilon:g} on N={n} symbols: "
                f"{state['numerical_failure']} (the Fisher information of every epsilon-PML mechanism is of order "
                "epsilon^2 here); the result is the best certified design found before that (from "
                f"{best.source}); at this epsilon an LDP oracle (pml_design.frequency_oracles) is about as good"
            ),
            stacklevel=3,
        )
    # the relaxation's floor for this design: no bound of the diagonal-moment relaxation is above its relaxed master's
    # value over a pool, so no run of *it* proves a relative gap below 1 − relaxed/value (docs/design.md §7.4, §12)
    relaxed, moment = state.get("relaxed", math.inf), state.get("moment", -math.inf)
    floor = max(0.0, 1.0 - relaxed / value) if math.isfinite(relaxed) and value > 0 else None
    cert = best.cert
    res = DesignResult(
        matrix=cert.matrix,
        utility=value,
        certified_epsilon=cert.capacity,
        epsilon=epsilon,
        uncertainty=uset,
        prior=prior,
        upper_bound=value,
        lower_bound=min(lower_val, value),
        sense="min",
        optimal=optimal,
        status="optimal" if optimal else ("bounded" if math.isfinite(lower_val) else "feasible"),
        method="estimation",
        solver="barrier Newton (column generation)",
        utility_name=util.name,
        repair_weight=cert.repair_weight,
        solve_time=time.perf_counter() - t0,
        info={
            "iterations": state["it"],
            "n_outputs": int(cert.matrix.shape[1]),
            "n_columns": int(state["K"]),
            "rays_enumerated": state["enumerated"],
            "capacity_before_repair": cert.capacity_before_repair,
            "criterion": util.criterion,
            "best_seed_value": float(seed_value),
            "best_ldp_oracle": ldp.name,
            "best_ldp_mse": float(ldp.mse),
            "ldp_optimum": ldp.name,
            "ldp_optimum_mse": float(ldp.mse),
            "ldp_optimum_k": int(ldp.k),
            "ldp_oracles_mse": dict(ldp.oracles),
            "ldp_seed": seed.name,
            "ldp_seed_mse": float(seed.mse),
            "returned_seed": best.source.startswith("ldp_seed"),
            "time_limit": float(time_limit),
            "larger_seed": state.get("larger_seed"),
            "source": best.source,
            "background_bound": state.get("background_bound"),
            "cap_bound": state.get("cap_bound"),
            "search_escalations": int(state.get("level", 0)),
            "mixture": state.get("mixture"),
            "seeds": state.get("seeds"),
            "relaxation_floor": floor,
            "relaxation_bound": moment if math.isfinite(moment) else None,
        },
    )
    # the one gap warning of every method (above 1 % or unknown), with the floor where it is known to matter
    detail = ""
    from_moment = math.isfinite(moment) and res.lower_bound <= moment * (1 + 1e-12) + 1e-300
    if floor is not None and floor > 0.5 * WARN_GAP and from_moment:  # the bound reported is that relaxation's
        detail = (f"the diagonal-moment relaxation that gives this bound cannot prove less than {floor:.2%} for this "
                  "design, its own loss at the optimum included")
        if res.relative_gap <= 1.25 * floor + 0.005:  # at its floor: more time for the bound alone does little
            detail += ", so more time for the bound alone will not lower the gap much"
    elif n > MAX_COLUMN_GENERATION_N:  # the bound's time is capped there (docs/design.md §7.6)
        detail = f"above N = {MAX_COLUMN_GENERATION_N} the bound gets {BOUND_SECONDS:g} s at most: more time is the design's"
    warn_result_gap(res, time_limit, detail=detail)
    return res
