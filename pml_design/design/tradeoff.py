"""Privacy–utility trade-off curves: designs for many ε, reusing one compiled problem where possible.

Implements: eq. (9) of the core paper solved over a grid of ε. For linear and concave utilities the polytope
of Proposition 2 (or the dual / Lemma 1 / LDP form) is built once with ``e^{−ε}`` as a cvxpy Parameter
(:class:`~pml_design.design.polytope.MechanismPolytope`), compiled once (``canon_backend="COO"``, which stays
fast for N × N variables, see ``benchmarks/bench_scalable.py``) and re-solved per ε; sub-convex utilities are
designed per ε (their extreme rays depend on ε). Every point is certified like :func:`~pml_design.design`.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._validation import check_epsilon, check_finite_array
from ..uncertainty import L1Ball, as_uncertainty_set
from .api import DEFAULT_SOLVER, _check_solver, _lp_only_solver, _scalable_opts, _utility_prior, design
from .certify import certified_result
from .polytope import _solve, build_polytope
from .rays import AUTO_EXACT_SIZE_GENERIC
from .result import DesignResult
from .utilities import LinearUtility, as_utility

__all__ = ["tradeoff_curve"]


def tradeoff_curve(
    uncertainty: object,
    epsilons: object,
    *,
    utility: object = "mutual_information",
    reuse: bool = True,
    solver: str | None = None,
    prior: object | None = None,
    method: str = "auto",
    solver_options: dict | None = None,
) -> list[DesignResult]:
    """Optimal designs for every ε of a grid (certified), e.g. to plot utility against ε.

    Implements: core paper eq. (9) over a grid of ε (Proposition 2 polytope with ε as a parameter).

    Parameters
    ----------
    uncertainty : UncertaintySet or array_like
    epsilons : array_like of float
        Non-negative privacy parameters.
    utility : str, Utility or array_like
        As in :func:`pml_design.design`.
    reuse : bool, default True
        For linear/concave utilities, compile once and re-solve with a new ``e^{−ε}`` parameter value
        (False rebuilds per ε; both give the same designs).
    solver, prior, method, solver_options
        As in :func:`pml_design.design`. With ``reuse`` and a sub-convex utility designed by column generation (an
        ℓ1 ball outside Proposition 2 too large for the exact method, or ``method="scalable"``), each ε starts
        from the previous ε's columns, mixed into the new cone where needed (measured in
        ``benchmarks/bench_scale_subconvex.py``).

    Returns
    -------
    list of DesignResult
        One per ε, in the given order.
    """
    uset = as_uncertainty_set(uncertainty)
    eps_arr = check_finite_array(epsilons, "epsilons", ndim=1)
    eps_list = [check_epsilon(e, "epsilons") for e in eps_arr]
    util = as_utility(utility)
    generic = isinstance(uset, L1Ball) and uset.radius > 0 and not uset.in_interior_regime
    if (
        reuse
        and util.kind == "subconvex"
        and generic
        and (method == "scalable" or (method == "auto" and uset.size > AUTO_EXACT_SIZE_GENERIC))
    ):
        from .scalable import design_scalable  # noqa: PLC0415

        opts = _scalable_opts(solver_options)
        p_util = _utility_prior(uset, prior)
        results, warm = [], None
        for e in eps_list:  # warm start: the previous epsilon's columns (rays), mixed into the new cone
            r = design_scalable(uset, e, util, p_util, solver=_check_solver(solver), warm_columns=warm, **opts)
            warm = r.info.get("columns")
            results.append(r)
        return results
    if util.kind in ("subconvex", "estimation") or not reuse or method == "scalable" or _lp_only_solver(_check_solver(solver)):
        return [
            design(uset, e, utility=util, solver=solver, prior=prior, method=method, solver_options=solver_options)
            for e in eps_list
        ]
    p_util = _utility_prior(uset, prior)
    used_solver = _check_solver(solver) or DEFAULT_SOLVER
    m = util.gain.shape[1] if isinstance(util, LinearUtility) else (util.n_outputs or uset.size)  # type: ignore[union-attr]
    poly = build_polytope(uset, eps_list[0], n_outputs=m)
    objective = (
        cp.sum(cp.multiply(util.weights(p_util), poly.P))
        if isinstance(util, LinearUtility)
        else util.objective(poly.P, p_util)  # type: ignore[union-attr]
    )
    prob = poly.problem(objective)
    opts: dict = {"canon_backend": cp.COO_CANON_BACKEND}
    results = []
    for e in eps_list:
        poly.set_epsilon(e)
        elapsed = _solve(prob, used_solver, opts, at=f" at epsilon={e!r}")
        results.append(
            certified_result(
                np.asarray(poly.P.value),
                uset,
                e,
                util,
                p_util,
                upper=float(prob.value),
                solved_optimally=prob.status == cp.OPTIMAL,
                status=str(prob.status),
                method="convex",
                solver=used_solver,
                solve_time=elapsed,
                info={"form": poly.form, "reused": True},
                drop_empty_columns=not isinstance(util, LinearUtility),
            )
        )
    return results
