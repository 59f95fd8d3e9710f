"""``design(..., utility="frequency_estimation")``: column generation from the best compact ε-LDP channel.

Implements: core paper eq. (9) with the A-optimal (or D-optimal) estimation criterion over ``M(ε, 𝒫)``
(docs/design.md §7): seeds (:mod:`.seeds`), the mixture (:mod:`.mixture`), the column generation (:mod:`.rounds`:
restricted master, pricing, the Frank–Wolfe and relaxation bounds, fewer outputs), then the result (:func:`_finish`);
every candidate certified (:func:`~pml_design.design.certify.certify`) and the best certified one kept, so the result
is monotone in the time spent and never above the compact LDP channel's error.
"""

from __future__ import annotations

import functools
import math
import time
import warnings

import numpy as np

from ...mechanisms.frequency_oracles.optimum import ldp_optimum
from ...uncertainty import UncertaintySet, leakage_capacity
from ..._validation import check_positive_int
from ..anytime import PROOF_RTOL, WARN_GAP, _default_progress, warn_result_gap
from ..result import DesignResult, PMLDesignWarning, SolverFailedError, proven_optimal
from ..utilities import FrequencyEstimation
from .affordable import check_affordable
from .cap_bound import box_coordinate_bound, box_log_det_bound, cap_affordable
from .incumbent import CertifiedIncumbent as _Incumbent
from .incumbent import without_noise
from .mixture import mixture_stage as _mixture_stage
from .rounds import BOUND_SECONDS, BOUND_SHARE, MASTER_COLUMNS, cap_stage, column_generation
from .seeds import first_seed, offer_larger_seed
from .seeds import rank_seeds as _rank_seeds

__all__ = ["design_frequency_estimation", "output_budgets"]

#: Largest alphabet on which column generation runs (above it the compact LDP channel is returned, certified).
MAX_COLUMN_GENERATION_N: int = 1200
#: Output budget of the compact LDP channel: ``min(LDP_OUTPUTS_CAP, max(4096, LDP_OUTPUTS_PER_SYMBOL · N))``; where its
#: best closed form is more than ``seeds.SEED_BUDGET_RTOL`` above the LDP optimum, a channel on a larger budget (up to
#: the cap) is offered to the incumbent too (``seeds.offer_larger_seed``).
LDP_OUTPUTS_PER_SYMBOL: int = 8
LDP_OUTPUTS_CAP: int = 32768
#: ``max_outputs`` above this is taken as this (no design comes near it; a review's ``10**30`` overflowed numpy).
MAX_OUTPUTS_CLIP: int = 1 << 40
#: The first-order master of :mod:`.mixture` (A or D criterion): the best mixture of the LDP seed and ε-PML partition
#: channels, a candidate beside the column generation and, above MAX_COLUMN_GENERATION_N, instead of it, up to this
#: many symbols (a step costs ~N³ + N²·outputs: ~4 s at N = 3 000). docs/design.md §7.5.
MIXTURE_MAX_N: int = 4000
#: Steps of the mixture before the column generation (a work budget: the rounds that follow run the same path under
#: any time limit); above MAX_COLUMN_GENERATION_N the time limit ends it.
MIXTURE_STEPS: int = 100
MIXTURE_STEPS_LARGE: int = 1000


#: Up to this many symbols the design first checks whether publishing X itself is ε-PML over the set (an N × N
#: identity's exact capacity).
IDENTITY_MAX_N: int = 2000


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
    max_outputs: int | None = None,
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
    max_outputs : int, optional
        The most outputs the mechanism may have (at least N: fewer cannot identify N frequencies); default: no cap
        (the compact LDP channel's budget, up to :data:`LDP_OUTPUTS_CAP`, plus the columns generated). Every stage
        honours it (:func:`output_budgets`): the compact channel gets a smaller budget, leaving room for the columns
        the later stages add, the mixture keeps its heaviest channels that fit, and a candidate with more outputs is
        never kept. A mechanism file and its CSV take ~40 bytes per entry (N × outputs): the CLI caps the outputs so
        that the files fit ``--time-limit``. ``info["max_outputs"]`` and ``info["seed_budget"]`` say what was used.

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
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    cap = _check_max_outputs(max_outputs, n)
    ldp = ldp_optimum(n, epsilon, prior)
    max_outputs, larger_cap = output_budgets(n, cap)
    if n > MAX_COLUMN_GENERATION_N:
        check_affordable(n, epsilon, prior, max_outputs, time_limit - (time.perf_counter() - t0))
    state = {"it": 0, "lower": -math.inf, "K": 0, "enumerated": False, "max_outputs": cap,
             "seed_budget": max_outputs}
    # dense algebra of at most a few hundred: one BLAS thread is fastest and never oversubscribes a shared machine
    with threadpool_limits(1 if n <= MAX_COLUMN_GENERATION_N else None):
        seed, t_build = first_seed(n, epsilon, prior, max_outputs)
        best = _Incumbent(uset, epsilon, util, prior, max_outputs=cap)
        t_offer = time.perf_counter()
        best.offer(seed.matrix, "ldp_seed")
        t_offer = time.perf_counter() - t_offer
        if not math.isfinite(best.value):  # F of order ε² is singular in double precision (ε ≲ 1e-7)
            raise ValueError(
                f"epsilon is too small for utility 'frequency_estimation' (epsilon={epsilon!r}, N={n} symbols): the Fisher "
                "information of the best compact epsilon-LDP channel is numerically singular (the error grows like "
                "1/epsilon^2); use a larger epsilon, or deploy an LDP oracle (pml_design.frequency_oracles)"
            )
        if n <= IDENTITY_MAX_N and leakage_capacity(np.eye(n), uset) <= epsilon:
            # X itself is ε-PML over the set: F(W) ⪯ diag(1/P) for every W (data processing, _finish), so publishing X
            # is the optimum, proven; nothing else runs (at ε ≈ 700 the stages' levels e^ε overflowed, and numpy's
            # warnings reached the command line: a new user's trial)
            best.offer(np.eye(n), "identity (epsilon allows publishing X)")
            deadline = -math.inf
        if proven_optimal(best.value, _data_processing_bound(prior, d_opt), rtol=PROOF_RTOL):
            deadline = -math.inf  # the seed meets the data-processing bound already (large ε: GRR is X up to e^-ε)
        seed, out_of_time, t_offer = _rank_seeds(n, epsilon, prior, max_outputs, seed, best, deadline, t_build,
                                                 t_offer, state)
        if not out_of_time and n <= MAX_COLUMN_GENERATION_N:  # a channel nearer LDP's best, for the incumbent only
            out_of_time = offer_larger_seed(n, epsilon, prior, max_outputs, larger_cap, ldp.mse, best, deadline,
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
                               MIXTURE_STEPS if n <= MAX_COLUMN_GENERATION_N else MIXTURE_STEPS_LARGE, cap)
            if large and time.perf_counter() < deadline:  # (leaving the clean-up's offer its time, as the mixture)
                cap_stage(uset, epsilon, prior, deadline - t_offer, state)
            if n <= MAX_COLUMN_GENERATION_N and time.perf_counter() < deadline:
                column_generation(uset, epsilon, util, prior, seed, G_seed, best, state, gen, deadline, max_iter,
                                   progress_bar(total=None, desc="estimation design", enabled=progress), time_limit,
                                   cap)
        except (SolverFailedError, np.linalg.LinAlgError) as exc:  # tiny ε: the incumbent stays (certified)
            state["numerical_failure"] = str(exc)
    _offer_cleaned(best)
    return _finish(uset, epsilon, util, prior, best, state, ldp, seed, seed_value, time_limit, t0)


def _check_max_outputs(max_outputs: object, n: int) -> int | None:
    """``max_outputs`` as an int ≥ N, or None (``ValueError``/``TypeError`` naming the option and the value)."""
    if max_outputs is None:
        return None
    try:
        cap = check_positive_int(max_outputs, "solver_options['max_outputs']", minimum=n)
    except ValueError:
        raise ValueError(
            f"solver_options['max_outputs'] must be at least N = {n} (the number of symbols): a mechanism with fewer "
            f"outputs cannot identify {n} frequencies, got {max_outputs!r}"
        ) from None
    return min(cap, MAX_OUTPUTS_CLIP)  # (any larger cap is no cap; numpy counts stay in int64)


def _cap_binds(n: int, state: dict) -> bool:
    """Whether the design's ``max_outputs`` made the compact channel's budget smaller than it is without one."""
    return state["max_outputs"] is not None and state["seed_budget"] < output_budgets(n, None)[0]


def output_budgets(n: int, cap: int | None) -> tuple[int, int]:
    """``(seed budget, larger seed's cap)``: the compact LDP channel's output budget and the largest a channel
    offered to the incumbent only may have, under the design's output cap ``cap`` (None: none).

    Implements: the ``max_outputs`` option of :func:`design_frequency_estimation` (docs/design.md §7, "An output cap").
    Without a cap: ``min(LDP_OUTPUTS_CAP, max(4096, 8N))`` and :data:`LDP_OUTPUTS_CAP`. With one, up to
    :data:`MAX_COLUMN_GENERATION_N` the seed leaves room for the master's generated columns (``max(2N, 400)`` kept
    between rounds, up to ``max(4, N)`` new ones), never below N (the smallest compact channel, randomized response,
    has N), and a channel on a larger budget, up to the cap, may still be offered to the incumbent
    (:func:`~.seeds.offer_larger_seed`). Above it the seed is the result unless the mixture runs (a long limit), so it
    gets the whole cap; the mixture then keeps the channels that fit beside it (:func:`~.mixture.fit_outputs`). At
    N = 2 000, ε = 2 (Zipf), a cap of 4 700 split in halves gave a seed 22 % above the LDP optimum, the whole cap one
    within 2 %.

    Parameters
    ----------
    n : int
        The number of symbols N.
    cap : int or None
        The design's ``max_outputs`` (≥ N), or None.

    Returns
    -------
    (int, int)
        The seed's budget and the larger seed's cap (both ≤ ``cap``).
    """
    base = min(LDP_OUTPUTS_CAP, max(4096, LDP_OUTPUTS_PER_SYMBOL * n))
    if cap is None:
        return base, LDP_OUTPUTS_CAP
    room = max(2 * n, MASTER_COLUMNS) + max(4, n) if n <= MAX_COLUMN_GENERATION_N else 0
    return max(n, min(base, cap - room)), min(LDP_OUTPUTS_CAP, cap)


def _offer_cleaned(best: _Incumbent) -> None:
    """Offer the incumbent without its interior-point noise: entries ≤ 1e-6 × their column's maximum and "ghost"
    outputs (reached with probability ~1e-8) become exact zeros (:func:`~pml_design.design.linear.lp.clean_tiny`); it is
    certified again and kept when its error is within 1e-6 (relative) on fewer outputs, as the output reduction is."""
    W = without_noise(best.cert.matrix)
    if W.shape[1] < best.cert.matrix.shape[1] and np.all(W.sum(axis=1) > 0):
        best.offer(W, best.source + " (cleaned)", rtol=1e-6)


def _data_processing_bound(prior: np.ndarray, d_opt: bool) -> float:
    """The criterion of X itself, a bound for every mechanism: a report of X carries at most what X does,
    ``F ⪯ diag(1/P)``, so ``tr F⁻¹ − ‖P‖² ≥ 1 − ‖P‖²`` (A) and ``log det F⁻¹ ≥ Σ log P`` (D) (docs/design.md §7.1)."""
    return float(np.sum(np.log(prior))) if d_opt else 1.0 - float(prior @ prior)


def _finish(uset, epsilon, util, prior, best: _Incumbent, state: dict, ldp, seed, seed_value: float,
            time_limit: float, t0: float) -> DesignResult:
    d_opt = util.criterion == "D"
    value = best.value
    lower = state["lower"]
    lower_val = (lower if d_opt else lower - float(prior @ prior)) if math.isfinite(lower) else -math.inf
    # data processing for Fisher information: a report of X carries at most what X does, F ⪯ diag(1/P), so
    # tr F⁻¹ ≥ 1 (A) and log det F⁻¹ ≥ Σ log P (D) for every mechanism, private or not (docs/design.md §7.1)
    lower_val = max(lower_val, _data_processing_bound(prior, d_opt))
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
                + (f"allow more outputs (now at most {state['max_outputs']}: solver_options['max_outputs']; the "
                   f"compact channel had a budget of {state['seed_budget']}), or " if _cap_binds(n, state) else "")
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
            "max_outputs": state["max_outputs"],
            "seed_budget": int(state["seed_budget"]),
            "over_max_outputs": int(best.over_cap),
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
