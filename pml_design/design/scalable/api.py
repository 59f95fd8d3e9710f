"""``design(..., method="scalable")``: anytime column generation with a certified result and a valid bound.

Implements: core paper eq. (9) over ``M(ε, 𝒫)`` by [15, Theorem 6]'s extreme-ray LP solved by column generation
(:mod:`.master` inside Proposition 2, fixed prior or simplex; :mod:`.ball` for an ℓ1 ball outside it), the
result certified exactly (:func:`~pml_design.design.certify.certified_result`), never worse than its certified
seeds, with the upper bound tightened by the a priori bound ``I(X; Y) ≤ min(ε, H(P))`` (Definition 5) and the
anytime conventions of :mod:`..anytime` (time limit, progress, gap warning).
"""

from __future__ import annotations

import time

import numpy as np

from ...uncertainty import L1Ball, Simplex, UncertaintySet
from ..anytime import DEFAULT_TIME_LIMIT, PROOF_RTOL, _check_time_limit, _default_progress, warn_result_gap
from ..certify import certified_result, certify, clean_matrix
from ..result import DesignResult, SolverFailedError
from ..utilities import LinearUtility, MapAccuracy, MutualInformation, Utility
from .ball import _ball_seeds, _mix_into_cone, _normalised_columns, ball_column_generation
from .master import column_generation

__all__ = ["design_scalable"]


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


#: Seconds per matrix entry of the dense N × N work before any iteration (randomized response, its certification,
#: the column generation's set-up): 3.7e-7 measured at N = 5000 on the shared 2-core machine under load.
DENSE_S_PER_ENTRY: float = 3e-7
#: Largest share of the time limit that this dense work may take; beyond it the call returns the trivial design.
DENSE_SHARE: float = 0.25


def _trivial(util: Utility, n: int) -> np.ndarray:
    """The best output-independent mechanism (leaks nothing): one constant output, the best one for a linear gain."""
    if isinstance(util, LinearUtility):
        W = np.zeros((n, util.gain.shape[1]))
        W[:, int(np.argmax(util.gain.sum(axis=0)))] = 1.0
        return W
    return np.ones((n, 1))


def _no_iteration(util: Utility, n: int, t0: float, why: str) -> dict:
    return {"matrix": _trivial(util, n), "upper_bound": np.inf, "proven": False, "iterations": 0, "n_columns": 0,
            "pricing_nodes": 0, "time": time.perf_counter() - t0, "failure": why}


def _guarded(cg):  # noqa: ANN001, ANN202
    """Run a column generation; if its master LP fails, the result of no iteration: the trivial mechanism, no bound.

    The certified seeds (randomized response, the inner approximation) are compared with it afterwards, so the
    call still returns the best certified design found, with an infinite gap and its warning.
    """

    def run(uset, eps, util, prior, **kw):  # noqa: ANN001, ANN003, ANN202
        t0 = time.perf_counter()
        deadline = kw.get("deadline", t0 + kw.get("time_limit", np.inf))
        if t0 >= deadline:
            # the seeds used the time: the set-up alone (dense N × N work) would run past the limit
            return _no_iteration(util, uset.size, t0, "the time limit was reached before the column generation started")
        try:
            return cg(uset, eps, util, prior, **kw)
        except SolverFailedError as exc:
            return _no_iteration(util, uset.size, t0, str(exc))

    return run


def _certify_first_seed(seeds: list, certs: dict, uset: UncertaintySet, eps: float, util: Utility) -> float:
    """Certify the first seed (randomized response, N × N) now, keep its certificate in ``certs``, and return 1.2×
    the time it took: the time kept back from the column generation for the final certification (a few seconds
    at N = 5000, where it otherwise ran after the deadline)."""
    if not seeds:
        return 0.0
    t0 = time.perf_counter()
    name, W = seeds[0]
    certs[name] = certify(W, uset, eps, drop_empty_columns=not isinstance(util, LinearUtility))
    return 1.2 * (time.perf_counter() - t0)


def _loop_deadline(t_start: float, time_limit: float, reserve: float) -> float:
    """End of the column-generation loop: 90 % of the limit less the certification reserve (a loop that would start
    after it is skipped: :func:`_guarded`)."""
    return t_start + 0.9 * time_limit - reserve


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

    Implements: column generation on [15, Theorem 6]'s extreme-ray LP under the anytime contract of
    ``docs/design.md`` §5 (exact nested-pair pricing outside Proposition 2).

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set (a fixed prior, an ℓ1 ball or the simplex).
    eps : float
        The PML target ε.
    util : Utility
        The utility to maximise.
    prior : numpy.ndarray, shape (N,)
        The distribution the utility is evaluated at (outside Proposition 2: the ball's centre).
    solver : {None, "HIGHS", "HIGHS_SCIPY"}, default None
        The master LP's solver (HiGHS only).
    time_limit : float, default DEFAULT_TIME_LIMIT
        Seconds for the whole call.
    max_nodes : int, default 20000
        Node limit of the pricing's branch and bound.
    progress : bool or None, default None
        Show a progress bar (None: when stderr is a terminal).
    warm_columns : numpy.ndarray or None, default None
        Columns of a nearby design to start the master from (outside Proposition 2).

    Returns
    -------
    DesignResult
        The certified design with its valid upper bound; ``info`` holds the iterations, the number of columns,
        the pricing nodes, the wall time, the normalised columns used and, if better, the seed used.

    Raises
    ------
    ValueError
        If ``solver`` is not a HiGHS one, or, outside Proposition 2, ``prior`` is not the ball's centre.
    """
    if solver not in (None, "HIGHS", "HIGHS_SCIPY"):
        raise ValueError(f"the scalable method uses HiGHS for its master LP; solver {solver!r} is not supported")
    time_limit = _check_time_limit(time_limit)
    progress = _default_progress(progress)
    # (a review: -5, 0, 1.5, True and nan were accepted, None and "a" raised a bare TypeError from the B&B)
    why = f"solver_options['max_nodes'] must be a positive integer (branch-and-bound nodes per pricing call), got "
    if isinstance(max_nodes, (bool, np.bool_)) or not isinstance(max_nodes, (int, float, np.integer, np.floating)):
        raise TypeError(why + repr(max_nodes))
    if not isinstance(max_nodes, (int, np.integer)) or max_nodes < 1:
        raise ValueError(why + repr(max_nodes))
    t_start = time.perf_counter()
    info: dict = {}
    seeds: list = []
    seed_certs: dict = {}
    if uset.size**2 * DENSE_S_PER_ENTRY > DENSE_SHARE * time_limit:
        # the seeds' and the column generation's dense N × N work alone would overrun the limit: the best certified
        # design within it is the trivial one (with the a priori bound and the gap warning saying what to do)
        out = _no_iteration(util, uset.size, t_start, f"N = {uset.size} needs about "
                            f"{uset.size**2 * DENSE_S_PER_ENTRY / DENSE_SHARE:.0f} s for its dense N x N work")
    elif isinstance(uset, L1Ball) and uset.radius > 0 and not uset.in_interior_regime:
        # Outside Proposition 2 (beta >= 2 min P̂): exact pricing over the nested-pair rays of the ball's cone
        # (docs/design.md §5), started from certified seeds.
        if not np.allclose(prior, uset.center, rtol=0.0, atol=1e-12):  # the bounds are computed with the center
            raise ValueError("method='scalable' outside Proposition 2 needs the utility prior to be the ball's center")
        from .ball_pricing import mass_phi  # noqa: PLC0415

        seeds = _ball_seeds(uset, eps, util, prior, time_limit, max_nodes)
        if isinstance(util, LinearUtility):  # a gain with M outputs values only mechanisms with those M outputs
            seeds = [(name, W) for name, W in seeds if W.shape[1] == util.gain.shape[1]]
        reserve = _certify_first_seed(seeds, seed_certs, uset, eps, util)
        if mass_phi(util) is not None or isinstance(util, MapAccuracy):
            # start the master from the seeds that are informative (a near-constant seed's many light columns make
            # a degenerate start on which the master stalls; docs/design.md §5, sliding windows)
            cols = [
                _mix_into_cone(_normalised_columns(W, uset.center), uset, eps)
                for _, W in seeds
                if time.perf_counter() < _loop_deadline(t_start, time_limit, reserve)
                and util.value(clean_matrix(W), prior) > 1e-6 * max(1.0, _a_priori_bound(util, eps, prior, uset))
            ]
            if warm_columns is not None and np.size(warm_columns):
                cols.append(_mix_into_cone(_normalised_columns(np.asarray(warm_columns).T, uset.center), uset, eps))
            out = _guarded(ball_column_generation)(
                # the loop stops at 90 % of the limit: the last master solve, the final bound and the certification
                # of a large design (N = 1000: several seconds) fit in the remaining 10 % + 1 s
                uset, eps, util, prior, deadline=_loop_deadline(t_start, time_limit, reserve), time_limit=time_limit,
                max_nodes=max_nodes,
                progress=progress, seed_columns=cols,
            )
            info = {"pricing": "exact (nested-pair rays of the ball's cone)"}
        else:  # a user utility: the inner approximation, bounded by the outer relaxation M(eps, P̂) ⊇ M(eps, ball)
            left = t_start + time_limit - time.perf_counter()
            out = _guarded(column_generation)(
                L1Ball(uset.center, 0.0), eps, util, prior, time_limit=left, max_nodes=max_nodes, progress=progress
            )
            inner = [W for name, W in seeds if name == "inner_approximation"]
            out["matrix"] = inner[0] if inner else _trivial(util, uset.size)
            out["proven"] = False
            info = {"pricing": "inner M(eps', P_hat) seed, outer M(eps, P_hat) bound"}
    else:
        reserve = 0.0
        if isinstance(uset, L1Ball) and not isinstance(util, LinearUtility):
            from ...mechanisms.closed_form import randomized_response_for_pml  # noqa: PLC0415

            seeds = [("randomized_response", randomized_response_for_pml(uset, eps).matrix)]
            reserve = _certify_first_seed(seeds, seed_certs, uset, eps, util)
        out = _guarded(column_generation)(
            uset, eps, util, prior, time_limit=_loop_deadline(t_start, time_limit, reserve) - time.perf_counter(),
            max_nodes=max_nodes, progress=progress,
        )
    upper = min(float(out["upper_bound"]), _a_priori_bound(util, eps, prior, uset))
    kw = dict(
        method="scalable", solver="HIGHS (column generation)", drop_empty_columns=not isinstance(util, LinearUtility),
        gap_rtol=PROOF_RTOL,
    )
    # every bound reported by the column generations is valid (the pricing bounds over-estimate), so optimality
    # follows from the gap rule alone (proven_optimal), whichever branch produced the bound
    res = certified_result(
        out["matrix"], uset, eps, util, prior, upper=upper, solved_optimally=True,
        status="optimal" if out["proven"] else "bounded", solve_time=out["time"],
        info={k: out[k] for k in ("iterations", "n_columns", "pricing_nodes", "failure") if k in out} | info, **kw,
    )
    for name, W in seeds:  # never worse than a certified seed
        if not isinstance(util, LinearUtility) and util.value(clean_matrix(W), prior) <= res.utility:
            # certifying mixes in the non-informative mechanism: a garbling, which a sub-convex utility never gains
            # from (eq. (2)), so a seed whose raw value is no better is skipped (its certification is O(N² log N))
            continue
        alt = certified_result(
            W, uset, eps, util, prior, upper=res.upper_bound, solved_optimally=True,
            status=res.status, solve_time=out["time"], info=res.info | {"seed_used": name}, cert=seed_certs.get(name), **kw,
        )
        if alt.utility > res.utility + 1e-12 * max(1.0, abs(res.utility)):
            res = alt
    if "columns" in out:
        used = out["matrix"].max(axis=0) > 0
        res.info["columns"] = _normalised_columns(out["matrix"][:, used], uset.center)  # type: ignore[union-attr]
    res.info["wall_time"] = time.perf_counter() - t_start
    if res.optimal != (res.status == "optimal"):
        from dataclasses import replace  # noqa: PLC0415

        res = replace(res, status="optimal" if res.optimal else "bounded")
    warn_result_gap(
        res, time_limit, " (and 'max_nodes' for the branch and bound, or use method='exact' for small alphabets)",
        stacklevel=4,
    )
    return res
