"""Exact sub-convex design: [15, Theorem 6]'s extreme-ray LP and its valid bound from approximate duals.

Implements: [15, Theorem 6] (core paper Section V): for a sub-convex utility (eq. (2)) the optimal mechanism is a
non-negative combination of the extreme rays of the column cone ``K(ε, 𝒫)`` (enumerated by
:func:`~pml_design.design.rays.enumerate_rays`), found by the LP ``max Σ_k θ_k μ(r_k) s.t. Σ_k θ_k r_k = 1,
θ ≥ 0`` (:func:`solve_ray_lp`); weak duality made robust to solver tolerance gives a bound valid for every
mechanism of the polytope (:func:`ray_lp_upper_bound`). ``design(..., method="exact")`` runs
:func:`_design_subconvex_exact`; large alphabets use column generation on the same LP (:mod:`.scalable`).
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from ..uncertainty import UncertaintySet
from .polytope import _solve
from .rays import enumerate_rays
from .result import SolverFailedError
from .utilities import SubConvexUtility

__all__ = ["ray_lp_upper_bound", "solve_ray_lp"]


#: The status of the trivial design returned where HiGHS calls the ray LP infeasible (tiny ε); its bound is weak
#: duality at y = 0, valid on its own, so optimality is claimed when it meets the certified value.
TRIVIAL_STATUS = "trivial (ray LP failed numerically)"

def solve_ray_lp(
    rays: np.ndarray, values: np.ndarray, *, solver: str | None = None, time_limit: float | None = None
) -> tuple[np.ndarray, float, str, np.ndarray | None]:
    """Solve ``max valuesᵀθ s.t. rays θ = 1, θ ≥ 0`` ([15, Theorem 6]).

    Parameters
    ----------
    rays : numpy.ndarray, shape (N, K)
        The ray columns.
    values : numpy.ndarray, shape (K,)
        Their utilities (finite).
    solver : str or None, default None
        ``None`` or ``"HIGHS_SCIPY"`` solves with SciPy's HiGHS (dual simplex, then interior point); any other
        name is passed to cvxpy.
    time_limit : float or None, default None
        Seconds the solver may take (SciPy path); a solve it stops is a :class:`SolverFailedError`.

    Returns
    -------
    theta : numpy.ndarray, shape (K,)
        The optimal weights, clipped at 0.
    optimum : float
        The LP's optimal value.
    status : str
        ``"optimal"`` on the SciPy path, else cvxpy's status.
    duals : numpy.ndarray or None
        The duals ``y`` of the equality rows (``raysᵀ y ≥ values`` up to solver tolerance);
        :func:`ray_lp_upper_bound` turns them into a valid bound.

    Raises
    ------
    ValueError
        If ``rays`` is not a non-empty (N, K) matrix or ``values`` not a finite K-vector.
    SolverFailedError
        If HiGHS (dual simplex, then interior point) cannot solve the LP.
    """
    R = np.asarray(rays, dtype=float)
    v = np.asarray(values, dtype=float)
    if R.ndim != 2 or R.shape[1] == 0:
        raise ValueError(f"rays must be a non-empty (N, K) matrix of columns, got shape {R.shape}")
    if v.shape != (R.shape[1],) or not np.all(np.isfinite(v)):
        raise ValueError(f"values must be a finite vector of length K={R.shape[1]}, got shape {v.shape}")
    n, k = R.shape
    if solver is None or solver == "HIGHS_SCIPY":
        from scipy.optimize import linprog

        res = None
        t_end = None if time_limit is None else time.perf_counter() + time_limit
        for method in ("highs-ds", "highs-ipm"):
            opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
            if t_end is not None:
                opts["time_limit"] = max(t_end - time.perf_counter(), 1e-3)
            res = linprog(-v, A_eq=R, b_eq=np.ones(n), bounds=(0, None), method=method, options=opts)
            if res.status == 0 or (t_end is not None and time.perf_counter() >= t_end):
                break
        if res.status != 0:
            late = "" if t_end is None or time.perf_counter() < t_end else (
                f" within solver_options['time_limit'] ({time_limit:g} s left after the ray enumeration); raise it or "
                "use method='scalable'")
            raise SolverFailedError(f"extreme-ray LP failed{late}: {res.message}", f"scipy-highs:{res.status}")
        duals = -np.asarray(res.eqlin.marginals, dtype=float)
        return np.maximum(res.x, 0.0), float(-res.fun), "optimal", duals
    theta = cp.Variable(k, nonneg=True)
    prob = cp.Problem(cp.Maximize(v @ theta), [R @ theta == 1])
    _solve(prob, solver, {})
    duals = np.asarray(prob.constraints[0].dual_value, dtype=float).ravel()
    return np.maximum(theta.value, 0.0), float(prob.value), str(prob.status), duals


def ray_lp_upper_bound(rays: np.ndarray, values: np.ndarray, duals: np.ndarray) -> tuple[float, float]:
    """A valid upper bound on the ray LP's optimum from approximate duals.

    Implements: weak duality for [15, Theorem 6]'s LP, made robust to solver tolerance. With columns scaled to
    ``‖r_k‖₁ = 1``, every feasible θ has ``Σ θ_k = N`` (sum the N equality rows), so for any ``y``

        ``Σ θ_k μ_k ≤ Σ θ_k (r_kᵀy + δ‖r_k‖₁) = 1ᵀy + N δ``,  ``δ = max_k (μ_k − r_kᵀy)₊ / ‖r_k‖₁``.

    When ``rays`` contains every extreme ray of the column cone, this bounds the utility of *every* mechanism
    in the polytope (each column is a non-negative combination of rays and μ is sublinear).

    Parameters
    ----------
    rays : numpy.ndarray, shape (N, K)
        The ray columns ``r_k`` (non-negative).
    values : numpy.ndarray, shape (K,)
        Their utilities ``μ_k``.
    duals : numpy.ndarray, shape (N,)
        Approximate duals ``y`` of the equality rows (e.g. from :func:`solve_ray_lp`).

    Returns
    -------
    (bound, delta) : tuple of float
        The bound and the largest normalised reduced cost ``δ`` (0 for exactly dual-feasible ``y``).
    """
    R = np.asarray(rays, dtype=float)
    y = np.asarray(duals, dtype=float)
    norms = R.sum(axis=0)
    rc = (np.asarray(values, dtype=float) - y @ R) / np.where(norms > 0, norms, 1.0)
    delta = float(max(0.0, rc.max()))
    return float(y.sum() + R.shape[0] * delta), delta


def _design_subconvex_exact(
    uset: UncertaintySet, eps: float, util: SubConvexUtility, prior: np.ndarray, solver: str | None,
    deadline: float | None = None,
) -> tuple[np.ndarray, float, str, float, dict]:
    """[15, Theorem 6]'s LP over every extreme ray; the LP solver gets the time left until ``deadline`` (if any)."""
    t0 = time.perf_counter()
    R = enumerate_rays(uset, eps, deadline=deadline)
    R = R / R.sum(axis=0, keepdims=True)  # ‖r‖₁ = 1: better scaled LP, and Σθ = N for the bound
    t_enum = time.perf_counter() - t0
    vals = np.asarray(util.mu(R, prior), dtype=float)
    t1 = time.perf_counter()
    left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
    try:
        theta, opt, status, duals = solve_ray_lp(R, vals, solver=solver, time_limit=left)
    except SolverFailedError as exc:
        if (deadline is not None and time.perf_counter() >= deadline) or "infeasible" not in str(exc).lower():
            raise
        # The LP is feasible for every ε ≥ 0 (the constant column is in the cone), but at tiny ε its rays agree to
        # ~ε and HiGHS calls it infeasible (ε = 1e-9, 1e-10: a review; adding the constant column did not help).
        # Then the trivial design (one constant output), with weak duality at y = 0 as its bound: N·max_k μ_k,
        # O(ε²) for these utilities (at ε = 1e-9 within the absolute floor of proven_optimal)
        upper, delta = ray_lp_upper_bound(R, vals, np.zeros(R.shape[0]))
        info = {"n_rays": int(R.shape[1]), "enumeration_time": t_enum, "lp_time": time.perf_counter() - t1,
                "dual_infeasibility": delta, "lp_failure": str(exc)}
        return np.ones((R.shape[0], 1)), upper, TRIVIAL_STATUS, info["lp_time"], info
    t_lp = time.perf_counter() - t1
    used = theta > 1e-13
    W = R[:, used] * theta[used]
    info = {"n_rays": int(R.shape[1]), "enumeration_time": t_enum, "lp_time": t_lp}
    upper = opt
    if duals is not None and np.all(np.isfinite(duals)):
        upper, delta = ray_lp_upper_bound(R, vals, duals)
        info["dual_infeasibility"] = delta
    else:  # no duals: no certificate of optimality
        upper, status = np.inf, "no dual bound"
    return W, upper, status, t_lp, info

