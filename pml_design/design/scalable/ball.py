"""Column generation for the ℓ1 ball outside Proposition 2: exact nested-pair pricing and certified seeds.

Implements: [15, Theorem 6]'s extreme-ray LP for ``M(ε, B_β(P̂))`` at any radius (β ≥ 2 min P̂ included) by column
generation with the exact pricing of :mod:`~pml_design.design.scalable.ball_pricing` over the nested-pair rays
``a·1_U + b·1_{V∖U}`` of the ball's cone (``docs/design.md`` §5, prefix-pair lemmas), started from certified
seeds: randomized response at the largest admissible ε, the inner approximation ``M(ε', P̂) ⊆ M(ε, B_β(P̂))``
with ``ε' = log(e^ε/(1 + βe^ε/2))`` (``docs/errata.md`` C4) and, for small N, the linear "truth" design.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...uncertainty import L1Ball
from ..anytime import PROOF_RTOL, _progress_update, cg_threshold
from ..result import SolverFailedError, proven_optimal, utility_scale
from ..utilities import LinearUtility, MapAccuracy, Utility
from .master import MAX_NEW_COLUMNS, _cg_result, _final_solve, _lagrangian_bound, _Master, column_generation

__all__ = ["ball_column_generation"]

#: Largest share of the elapsed time spent in complete (exact) pricing while the heuristic still finds columns.
BB_SHARE = 0.5
#: Longest complete pricing round, as a share of the time limit.
BB_ROUND = 0.1
#: Share of the gap left below which a complete pricing round closes its nodes.
BB_GAP_SHARE = 0.3
#: Relative distance of the value to the best-column bound below which columns near the threshold θ are sought.
NEAR_BEST_COLUMN = 0.1
#: Largest N given the inner-approximation seed (beyond it, the seed's dense set-up does not fit a time limit).
INNER_SEED_MAX_SIZE = 1000
#: Columns added per iteration beyond N = 16 (prefix pairs with distinct V first, then branch-and-bound pairs).
BALL_NEW_COLUMNS = 24


def _diverse_top(vals: np.ndarray, j: np.ndarray, thresh: float) -> np.ndarray:
    """Indices of the best prefix pairs above ``thresh``, at most one per V prefix ``j`` (:data:`BALL_NEW_COLUMNS`)."""
    order = np.argsort(-vals, kind="stable")
    order = order[vals[order] > thresh]
    _, first = np.unique(j[order], return_index=True)
    return order[np.sort(first)][:BALL_NEW_COLUMNS]


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
    C = np.clip(np.asarray(W, dtype=float).T, 0.0, None)
    s = C @ p
    keep = s > 1e-9 * max(float(s.max(initial=0.0)), 1e-300)  # light columns would be noise blown up
    return C[keep] / s[keep, None]


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
    root bound of the final duals is used. For the mass utilities the bound is also at most the best single column
    (:func:`.ball_column_bound.max_column_value`, the Lagrangian bound at zero duals), which the master's duals
    cannot certify when the best columns are near-uniform on a set of mass θ (a subset-sum question; docs §5).
    ``seed_columns`` (rows, ``P̂·c = 1``, inside the cone) start the master.

    Parameters
    ----------
    ball : L1Ball
        The uncertainty set ``B_β(P̂)`` (any radius).
    epsilon : float
        The PML target ε.
    util : Utility
        Mutual information, χ², total variation or MAP accuracy.
    prior : numpy.ndarray, shape (N,)
        The distribution the utility is evaluated at.
    deadline : float
        ``time.perf_counter()`` value at which the iterations stop.
    time_limit : float
        The call's time limit in seconds (sizes the pricing rounds and the final solve).
    max_nodes : int, default 20000
        Node limit of a branch and bound.
    rtol : float, default PROOF_RTOL
        Relative gap at which the run counts as proven optimal.
    progress : bool, default False
        Show a progress bar.
    seed_columns : list or None, default None
        Arrays of columns (rows) added to the master's start.
    max_iter : int, default 100000
        Most iterations.

    Returns
    -------
    dict
        ``matrix`` (N × K mechanism), ``value``, ``upper_bound`` (valid, at least ``value``), ``proven``,
        ``iterations``, ``n_columns``, ``time``, ``history`` (``(iteration, value, bound)``), ``pricing_nodes``,
        ``duals`` and ``columns`` (every column of the master, as rows).

    Raises
    ------
    ValueError
        If ``util`` has no exact pricing (neither a mass utility nor MAP accuracy).
    """
    from .ball_column_bound import max_column_value, threshold_pairs  # noqa: PLC0415
    from .ball_pricing import MAX_ENUMERATION_SIZE, BallCone, PairPricer, mass_phi  # noqa: PLC0415
    from ...progress import progress_bar  # noqa: PLC0415

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
    enumerate_all = bool(not is_map and n <= MAX_ENUMERATION_SIZE)
    master = _Master(n)
    start = [np.ones((1, n))] + [np.atleast_2d(c) for c in (seed_columns or []) if np.size(c)]
    C0 = np.unique(np.round(np.vstack(start), 14), axis=0)
    master.add(C0, util.mu(C0.T, prior), np.zeros(C0.shape[0], dtype=int))
    # U = Σ t_k μ(r_k) with Σ t_k = 1: the best single column bounds every mechanism (docs/design.md §5)
    col_ub = max_column_value(cone, spec, deadline=min(deadline, t0 + 0.02 * time_limit)) if spec is not None else np.inf

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
    scale = utility_scale(util, prior)  # proven_optimal's absolute floor in the utility's own units
    bar = progress_bar(desc="column generation (l1 ball)", enabled=progress)
    lam = np.zeros(n)
    bb_time = 0.0
    rounds_futile = False  # a complete round's bound did not beat the best-column bound: rounds stop
    for it in range(1, max_iter + 1):
        step = master.solve_before(deadline, first=it == 1)
        if step is None:  # stopped by the deadline: the last iteration's solution stands
            break
        value, lam, theta = last_ok = step
        t_it = time.perf_counter()
        _progress_update(bar, value, upper)
        thresh = cg_threshold(value, rtol)
        prs = pricers(lam)
        cand, pool_max = [], [-np.inf]
        for pr in prs:
            vals, i, j = pr.prefix_pool()
            if vals.size:
                pool_max.append(float(vals.max()))
                if enumerate_all or is_map:  # N ≤ 16 and MAP accuracy: the best MAX_NEW_COLUMNS, as before
                    top = np.argsort(-vals, kind="stable")[:MAX_NEW_COLUMNS]
                    top = top[vals[top] > thresh]
                else:
                    top = _diverse_top(vals, j, thresh)
                if top.size:
                    U, V = pr.prefix_masks(i[top], j[top])
                    cand.extend(zip(vals[top], U, V))
        if not cand and not enumerate_all and col_ub - value <= NEAR_BEST_COLUMN * abs(value):
            # the value nears the best single column's: sets of mass near θ, which prefix pairs miss (docs §5)
            cand.extend(threshold_pairs(prs[0], thresh)[:BALL_NEW_COLUMNS])
        ub_rc = np.inf
        if linear_exact:  # linear column values: the best prefix pair is the exact pricing optimum (docs §5)
            ub_rc = max(pool_max)
        elif cand and not enumerate_all and not rounds_futile and bb_time <= BB_SHARE * (time.perf_counter() - t0):
            # the heuristic improves, but exact pricing (whose bound ends the run) gets its share of the time:
            # a complete branch and bound adds its best pairs and gives this iteration a Lagrangian bound
            # nodes are closed below a share of the gap left: each round shrinks the gap geometrically
            tau = max(thresh, BB_GAP_SHARE * (upper - value)) if np.isfinite(upper) else thresh
            ub_rc, found, nodes = _exact_round(prs, thresh, tau, max_nodes, min(deadline, t_it + BB_ROUND * time_limit))
            nodes_total += nodes
            cand = cand + found
            bb_time += time.perf_counter() - t_it
            rounds_futile = bool(np.isfinite(ub_rc) and _lagrangian_bound(lam, ub_rc) >= col_ub)
        if cand:
            cand.sort(key=lambda t: -t[0])
            best_rc = float(cand[0][0])
        elif linear_exact:
            best_rc = ub_rc
        elif enumerate_all:  # small alphabet: exact pricing by complete enumeration (a proof, no bound slack)
            ub_rc, vals, U, V = prs[0].enumerate_pairs(top=MAX_NEW_COLUMNS, deadline=deadline)
            best_rc = float(vals[0]) if vals.size else -np.inf
            cand = [(float(x), u_, v_) for x, u_, v_ in zip(vals, U, V) if x > thresh]
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
            bb_time += time.perf_counter() - t_it
        if cand:
            cand.sort(key=lambda t: -t[0])
            # the branch and bound may meet one pair at several nodes: distinct pairs only
            cand = list({(c[1].tobytes(), c[2].tobytes()): c for c in reversed(cand)}.values())[::-1]
            cand = cand[: MAX_NEW_COLUMNS if enumerate_all or is_map else BALL_NEW_COLUMNS]
            add_columns(np.array([c[1] for c in cand]), np.array([c[2] for c in cand]))
        upper = min(upper, _lagrangian_bound(lam, ub_rc))
        history.append((it, value, min(upper, col_ub)))
        if proven_optimal(value, min(upper, col_ub), rtol, scale):
            proven = True
            break
        if not cand or time.perf_counter() > deadline:
            break
    bar.close()
    value, lam, theta = _final_solve(master, last_ok, time_limit)
    if not proven and not np.isfinite(upper):
        # stopped while columns still improved: a bound from the final duals (short B&B; root bound at worst)
        extra = time.perf_counter() + min(1.0, 0.05 * time_limit)
        ub_rc = -np.inf
        for pr in pricers(lam):
            if enumerate_all:  # exact maximum (a few seconds at N = 16)
                ub, *_ = pr.enumerate_pairs(top=1, deadline=time.perf_counter() + max(5.0, 0.1 * time_limit))
            else:
                tau = max(thresh, BB_GAP_SHARE * (upper - value)) if np.isfinite(upper) else thresh
                _, _, ub, nodes = pr.branch_and_bound(incumbent=tau, max_nodes=max_nodes, deadline=extra)
                nodes_total += nodes
            ub_rc = max(ub_rc, ub)
        upper = _lagrangian_bound(lam, ub_rc)
    upper = min(upper, col_ub)
    R = np.array(master.cols)
    # drop columns so light that clipping their entries (certify zeroes entries < 1e-13) would change their
    # shape: a column's leakage does not depend on its weight
    used = theta * R.max(axis=1) > 1e-10
    out = _cg_result(master, (R[used] * theta[used, None]).T, value, upper, proven, it, t0, history, nodes_total, lam)
    out["columns"] = R
    return out


def _exact_round(prs: list, thresh: float, tau: float, max_nodes: int, deadline: float) -> tuple[float, list, int]:
    """One complete branch and bound per pricer (no early stop): ``(bound on the max reduced value, pairs, nodes)``.

    Nodes whose bound is at most ``tau ≥ thresh`` are closed (their bounds kept, so the bound is at most ``tau``
    when the search completes); the pairs are every ``(value, U, V)`` found above ``thresh``. The bound keeps the
    open nodes' bounds at the node limit or the ``deadline``, so it is valid (``inf`` when a pricer was not
    reached).
    """
    ub_rc, found, nodes_total = -np.inf, [], 0
    for pr in prs:
        if time.perf_counter() > deadline:
            return np.inf, found, nodes_total
        _, _, ub, nodes = pr.branch_and_bound(
            incumbent=tau, max_nodes=max_nodes, deadline=deadline, collect=found, collect_above=thresh
        )
        ub_rc, nodes_total = max(ub_rc, ub), nodes_total + nodes
    return ub_rc, found, nodes_total


def _ball_seeds(ball: L1Ball, eps: float, util: Utility, prior: np.ndarray, time_limit: float, max_nodes: int) -> list:
    """Certifiable starting mechanisms outside Proposition 2: ``[(name, matrix)]``.

    Randomized response at the largest admissible ε (:func:`~pml_design.mechanisms.randomized_response_for_pml`),
    the inner approximation ``M(ε', P̂) ⊆ M(ε, B_β(P̂))`` with ``ε' = log(e^ε/(1 + βe^ε/2))`` (docs/errata.md C4)
    designed by column generation within 10 % of the time limit, and for N ≤ 30 the linear "truth" design
    (``LinearUtility(I)``, one LP over the exact dual form).
    """
    from ...mechanisms.closed_form import randomized_response_for_pml  # noqa: PLC0415

    n = ball.size
    seeds = [("randomized_response", randomized_response_for_pml(ball, eps).matrix)]
    e = math.exp(eps)
    eps_in = math.log(e / (1.0 + ball.radius * e / 2.0)) if e / (1.0 + ball.radius * e / 2.0) >= 1 else 0.0
    if n > INNER_SEED_MAX_SIZE:  # its untimed set-up (N dense rays of the fixed directions) alone took 40 s at N = 5000
        return seeds
    try:
        inner = column_generation(
            L1Ball(ball.center, 0.0), eps_in, util, prior, time_limit=max(0.1 * time_limit, 1e-3), max_nodes=max_nodes
        )
        seeds.append(("inner_approximation", inner["matrix"]))
    except SolverFailedError:  # a seed is optional (the master failed on degenerate masses)
        pass
    if n <= 30:
        from .. import design  # noqa: PLC0415

        try:
            seeds.append(("truth", design(ball, eps, utility=LinearUtility(np.eye(n)), method="convex").matrix))
        except SolverFailedError:  # pragma: no cover - a seed is optional
            pass
    return seeds
