"""Column generation on [15, Theorem 6]'s extreme-ray LP inside Proposition 2 (restricted master + pricing).

Implements: the extreme-ray LP of [15, Theorem 6] (core paper Section V) by Dantzig–Wolfe column generation: a
restricted master LP over the generated rays (HiGHS, warm-started, :class:`_Master`) and the pricing oracles of
:mod:`.pricing` / :mod:`.branch_bound` over the normalised column cone of :mod:`.cone` (fixed prior, ℓ1 ball
with β < 2 min P̂ — Proposition 2 —, simplex).

Optimality certificate: every mechanism decomposes into normalised rays with weights θ summing to ``ν·1 = 1``;
hence for master duals λ, ``U* ≤ 1ᵀλ + max_r (v(r) − λ·r)`` (the Lagrangian/Lasdon bound). The pricing returns
an *upper bound* on that maximum, so every reported ``upper_bound`` is valid; optimality is proven when it meets
the master value.
"""

from __future__ import annotations

import time

import numpy as np

from ...uncertainty import UncertaintySet
from ..anytime import PROOF_RTOL, _progress_update, cg_threshold
from ..result import SolverFailedError, proven_optimal, utility_scale
from ..utilities import LinearUtility, MapAccuracy, Utility
from .branch_bound import separable_pricing
from .cone import slice_structure, window_columns
from .pricing import _local_search_pricing, _separable_terms, linear_pricing, prefix_pool

__all__ = ["MAX_NEW_COLUMNS", "column_generation"]

#: Columns added per column-generation iteration from the heuristic pool.
MAX_NEW_COLUMNS = 8


class _Master:
    """The restricted master LP ``max vᵀθ s.t. Σ_k θ_k r_k = 1, θ ≥ 0`` over the generated rays (HiGHS, warm-started).

    Rows: one equality per symbol; columns: the generated rays (``cols``), their values (``vals``) and tags
    (the output a linear utility's column belongs to). :meth:`solve` returns ``(value, row duals λ, θ)``.
    """

    def __init__(self, n: int):
        import highspy

        from ..quiet import new_highs  # noqa: PLC0415

        self.h = new_highs()
        self.inf = highspy.kHighsInf
        self.n = n
        ones = np.ones(n)
        self.h.addRows(n, ones, ones, 0, np.zeros(n, dtype=np.int32), np.array([], dtype=np.int32), np.array([]))
        self.h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.cols: list[np.ndarray] = []
        self.vals: list[float] = []
        self.tags: list[int] = []
        #: objective scale: values of order 1e-8 (χ² at ε = 1e-4) would sit below HiGHS's 1e-7 tolerances, so the
        #: LP maximises ``scale·vᵀθ`` with the first columns' largest |v| scaled to 1 (solve() undoes it)
        self.scale: float | None = None

    def add(self, R: np.ndarray, v: np.ndarray, tags: np.ndarray) -> None:
        R = np.atleast_2d(R)
        top = float(np.max(np.abs(v), initial=0.0))
        if self.scale is None and top > 1e-12:  # fixed by the first columns of non-negligible value (a constant
            self.scale = 1.0 / top if top < 1e-2 else 1.0  # column's 1e-16 added before is ~0 at any scale)
        k = R.shape[0]
        nz = R != 0
        starts = np.concatenate([[0], np.cumsum(nz.sum(axis=1))[:-1]]).astype(np.int32)
        idx = np.nonzero(nz)[1].astype(np.int32)
        vals = R[nz]
        self.h.addCols(k, (self.scale or 1.0) * np.asarray(v, float), np.zeros(k), np.full(k, self.inf), int(vals.size), starts, idx, vals)
        self.cols.extend(list(R))
        self.vals.extend(list(np.asarray(v, float)))
        self.tags.extend(list(np.asarray(tags, int)))

    def solve_before(self, deadline: float, first: bool) -> tuple[float, np.ndarray, np.ndarray] | None:
        """One iteration's solve with the time left until ``deadline``; None once it has passed or the solve stops
        short (the caller keeps its last solution), except on the ``first`` solve, whose failure is raised."""
        if not first and time.perf_counter() > deadline:
            return None
        try:
            return self.solve(time_limit=deadline - time.perf_counter())
        except SolverFailedError:
            if first:
                raise
            return None

    def solve(self, time_limit: float | None = None) -> tuple[float, np.ndarray, np.ndarray]:
        """Solve the master within ``time_limit`` seconds (None: no limit); ``(value, duals λ, θ)``.

        Any λ gives a valid Lagrangian bound, so a solve stopped by its time limit is used when its primal point is
        feasible. A failed solve is retried from scratch with the interior-point method (degenerate masses, e.g.
        P̂ entries of 1e-19, can stall the warm-started simplex); :class:`SolverFailedError` if that fails too.
        """
        import highspy

        S = highspy.HighsModelStatus
        self.h.setOptionValue("time_limit", float("inf") if time_limit is None else max(float(time_limit), 1e-3))
        self.h.run()
        status = self.h.getModelStatus()
        if status not in (S.kOptimal, S.kTimeLimit):
            self.h.clearSolver()
            self.h.setOptionValue("solver", "ipm")
            self.h.run()
            self.h.setOptionValue("solver", "choose")
            status = self.h.getModelStatus()
        feasible = self.h.getInfo().primal_solution_status == 2  # kSolutionStatusFeasible
        if status != S.kOptimal and not (status == S.kTimeLimit and feasible):
            raise SolverFailedError("column-generation master LP failed", str(status))
        sol = self.h.getSolution()
        scale = self.scale or 1.0
        value = float(self.h.getInfo().objective_function_value) / scale
        return value, np.asarray(sol.row_dual) / scale, np.asarray(sol.col_value)


def _final_solve(master: _Master, good: tuple, time_limit: float) -> tuple[float, np.ndarray, np.ndarray]:
    """The master with the last columns added, within a short budget (``min(1 s, 5 %)`` of the limit) after the loop;
    the last iteration's solution ``good`` (θ padded with zeros for the new columns) when that does not finish."""
    try:
        return master.solve(time_limit=min(1.0, 0.05 * time_limit))
    except SolverFailedError:
        value, lam, theta = good
        return value, lam, np.concatenate([theta, np.zeros(len(master.cols) - theta.size)])


def _lagrangian_bound(lam: np.ndarray, ub_rc: float) -> float:
    """``1ᵀλ + max(ub_rc, 0)``: the Lagrangian (Lasdon) bound of the master, valid for any duals λ.

    Every mechanism is ``Σ_k θ_k r_k`` over normalised rays with ``Σ θ_k = ν·1 = 1``, so
    ``U* ≤ 1ᵀλ + max_r (v(r) − λ·r)``; ``ub_rc`` must bound that maximum from above (the pricing's bound).
    """
    return float(lam.sum() + max(ub_rc, 0.0))


def _cg_result(
    master: _Master, W: np.ndarray, value: float, upper: float, proven: bool, it: int, t0: float, history: list,
    nodes: int, lam: np.ndarray,
) -> dict:
    """The diagnostics dict both column generations return (``upper_bound`` never below the master value)."""
    return {
        "matrix": W,
        "value": value,
        "upper_bound": max(upper, value),
        "proven": proven,
        "iterations": it,
        "n_columns": len(master.cols),
        "time": time.perf_counter() - t0,
        "history": history,
        "pricing_nodes": nodes,
        "duals": lam,
    }


def column_generation(
    uset: UncertaintySet,
    epsilon: float,
    util: Utility,
    prior: np.ndarray,
    *,
    max_iter: int = 5000,
    time_limit: float = 60.0,
    rtol: float = PROOF_RTOL,
    max_nodes: int = 20000,
    rng: np.random.Generator | None = None,
    progress: bool = False,
) -> dict:
    """Column generation on the extreme-ray LP. Returns a dict with the matrix, bounds and diagnostics.

    Implements: column generation on [15, Theorem 6]'s ray LP over the cone of :func:`.cone.slice_structure`
    (``docs/design.md`` §5): linear pricing for linear utilities and MAP accuracy, prefix pool then branch and
    bound (:func:`.branch_bound.separable_pricing`) for separable ones, local search (no bound) otherwise.

    Parameters
    ----------
    uset : UncertaintySet
        A set supported by :func:`.cone.slice_structure`.
    epsilon : float
        The PML target ε.
    util : Utility
        The utility to maximise.
    prior : numpy.ndarray, shape (N,)
        The distribution the utility is evaluated at.
    max_iter : int, default 5000
        Most iterations.
    time_limit : float, default 60.0
        Seconds for the iterations.
    rtol : float, default PROOF_RTOL
        Relative gap at which the run counts as proven optimal.
    max_nodes : int, default 20000
        Node limit of the branch and bound.
    rng : numpy.random.Generator or None, default None
        Randomness of the local-search pricing (default: seed 0).
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    dict
        ``matrix`` (N × M mechanism), ``value``, ``upper_bound`` (at least ``value``; ``inf`` when no bound was
        proven), ``proven``, ``iterations``, ``n_columns``, ``time``, ``history``, ``pricing_nodes`` and ``duals``.
    """
    st = slice_structure(uset, epsilon, prior)
    n = st.nu.shape[0]
    rng = rng or np.random.default_rng(0)
    t0 = time.perf_counter()
    deadline = t0 + time_limit
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
        # an informative decomposition of the constant column (sliding windows): without it the master starts
        # at the degenerate vertex "constant column alone", whose duals are arbitrary (docs/design.md §5)
        Cw = window_columns(st)
        if Cw.shape[0]:
            master.add(Cw, util.mu(Cw.T, prior), np.zeros(Cw.shape[0], dtype=int))
    upper = np.inf
    history = []
    scale = utility_scale(util, prior)  # proven_optimal's absolute floor in the utility's own units
    proven = False
    value = -np.inf
    it = 0
    nodes_total = 0
    from ...progress import progress_bar  # noqa: PLC0415

    bar = progress_bar(desc="column generation", enabled=progress)
    for it in range(1, max_iter + 1):
        step = master.solve_before(deadline, first=it == 1)
        if step is None:  # stopped by the deadline: the last iteration's solution stands
            break
        value, lam, theta = last_ok = step
        _progress_update(bar, value, upper)
        if linear:
            A = W8 - lam[None, :]
            rc, C = linear_pricing(A, st)
            best_rc = float(rc.max())
            ub_rc = best_rc + 1e-12
            new = np.flatnonzero(rc > cg_threshold(value, rtol))
            if new.size:
                sel = new[np.argsort(-rc[new])][: max(1, min(new.size, 4 * n))]
                master.add(C[sel], (W8[sel] * C[sel]).sum(axis=1), sel)
        elif isinstance(util, MapAccuracy):
            A = np.eye(n) * prior[None, :] - lam[None, :]
            rc, C = linear_pricing(A, st)
            best_rc = float(rc.max())
            ub_rc = best_rc + 1e-12
            new = np.flatnonzero(rc > cg_threshold(value, rtol))
            if new.size:
                master.add(C[new], util.mu(C[new].T, prior), np.zeros(new.size, dtype=int))
        elif sep is not None:
            phi, const = sep
            thresh = cg_threshold(value, rtol)
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
                    stop_above=10 * thresh, collect=found, deadline=deadline,
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
            if c is not None and best_rc > cg_threshold(value, rtol):
                master.add(c[None, :], util.mu(c[:, None], prior), np.array([0]))
        bound = _lagrangian_bound(lam, ub_rc)
        upper = min(upper, bound)
        history.append((it, value, upper))
        if proven_optimal(value, upper, rtol, scale):
            proven = True
            break
        if best_rc <= cg_threshold(value, rtol):
            break  # no improving column found (heuristic pricing: no proof)
        if time.perf_counter() > deadline:
            break
    bar.close()
    value, lam, theta = _final_solve(master, last_ok, time_limit)
    if not proven and sep is not None and not np.isfinite(upper):
        # stopped by the time/iteration limit while columns were still improving: bound the final pricing
        # (within a small extra budget; the open nodes' bounds keep it valid)
        _, _, ub_rc, nodes = separable_pricing(
            sep[0], sep[1], lam, st, max_nodes=max_nodes, rtol=1e-12,
            deadline=time.perf_counter() + min(1.0, 0.05 * time_limit),
        )
        nodes_total += nodes
        upper = _lagrangian_bound(lam, ub_rc)
    R = np.array(master.cols)
    tags = np.array(master.tags)
    used = theta > 1e-13
    if linear:
        m = W8.shape[0]
        W = np.zeros((n, m))
        np.add.at(W.T, tags[used], theta[used, None] * R[used])
    else:
        W = (R[used] * theta[used, None]).T
    return _cg_result(master, W, value, upper, proven, it, t0, history, nodes_total, lam)
