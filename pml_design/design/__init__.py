"""Optimal mechanism design under PML for a set of distributions.

Implements: core paper, eq. (9) (``max U(P_{Y|X}, P̂_X)`` over ``M(ε, B_β(P̂_X))``), Proposition 2 and
Corollary 1 (the feasible polytope, :mod:`.polytope`), [15, Theorem 6] (exact sub-convex design by the
extreme-ray LP, :mod:`.rays`), and the certification of every result (:mod:`.certify`).

Entry point: :func:`design`.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from .._validation import check_epsilon, check_positive_int, check_probability_vector, fmt
from ..uncertainty import FiniteSet, L1Ball, UncertaintySet, as_uncertainty_set
from .backends import BACKENDS as LP_BACKENDS
from .backends import LPSolution, register_backend
from .certify import CERT_TOL, Certificate, CertificationError, certified_result, certify, clean_matrix
from .lp import LinearProgram, linear_design_lp, solve_linear_design, use_sparse_path
from .polytope import FORMS, MechanismPolytope, build_polytope, check_form, default_form
from .rays import (
    AUTO_EXACT_SIZE,
    AUTO_EXACT_SIZE_GENERIC,
    MAX_EXACT_SIZE,
    RayEnumerationError,
    enumerate_rays,
    in_cone,
    l1_ball_rays,
    rays_cdd,
)
from .result import DesignResult, PMLDesignWarning, SolverFailedError
from .utilities import (
    ChiSquareInformation,
    ConcaveUtility,
    FrequencyEstimation,
    LinearUtility,
    MapAccuracy,
    MutualInformation,
    SubConvexUtility,
    TotalVariationInformation,
    Utility,
    as_utility,
    distortion_gain,
    hamming_gain,
)

__all__ = [
    "CERT_TOL",
    "FORMS",
    "Certificate",
    "CertificationError",
    "ChiSquareInformation",
    "ConcaveUtility",
    "FrequencyEstimation",
    "DEFAULT_SOLVER",
    "DesignResult",
    "LPSolution",
    "LP_BACKENDS",
    "LinearProgram",
    "LinearUtility",
    "MapAccuracy",
    "MechanismPolytope",
    "MutualInformation",
    "PMLDesignWarning",
    "SolverFailedError",
    "SubConvexUtility",
    "TotalVariationInformation",
    "Utility",
    "as_utility",
    "build_polytope",
    "certified_result",
    "certify",
    "clean_matrix",
    "default_form",
    "design",
    "distortion_gain",
    "enumerate_rays",
    "hamming_gain",
    "in_cone",
    "l1_ball_rays",
    "linear_design_lp",
    "RayEnumerationError",
    "rays_cdd",
    "ray_lp_upper_bound",
    "register_backend",
    "solve_ray_lp",
    "tradeoff_curve",
]

#: Default cvxpy solver for linear/concave designs (measured in ``benchmarks/bench_designer.py``).
DEFAULT_SOLVER: str = "CLARABEL"

_OK = (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)


def _utility_prior(uset: UncertaintySet, prior: object | None) -> np.ndarray:
    if prior is not None:
        return check_probability_vector(prior, "prior", size=uset.size)
    if isinstance(uset, L1Ball):
        return uset.center
    if isinstance(uset, FiniteSet) and uset.distributions.shape[0] == 1:
        return uset.distributions[0]
    raise ValueError(
        f"prior is required to evaluate the utility for {fmt(uset)} (e.g. prior=np.full(N, 1/N)); "
        "it defaults to the center of an L1Ball or the single distribution of a prior"
    )


def _scalable_opts(options: dict | None) -> dict:
    opts = dict(options or {})
    unknown = set(opts) - {"time_limit", "max_nodes", "progress"}
    if unknown:
        raise ValueError(
            f"solver_options for method='scalable' accept 'time_limit', 'max_nodes' and 'progress', got {sorted(unknown)}"
        )
    return opts


def _check_solver(solver: str | None) -> str | None:
    """Upper-cased solver name: a cvxpy solver or an LP backend of the sparse linear path (:mod:`.backends`)."""
    if solver is None:
        return None
    if not isinstance(solver, str):
        raise TypeError(f"solver must be a cvxpy solver name or LP backend name (str) or None, got {fmt(solver)}")
    name = solver.upper()
    if name not in cp.installed_solvers() and name not in LP_BACKENDS:
        raise ValueError(
            f"solver {solver!r} is not installed; installed cvxpy solvers: {cp.installed_solvers()}; "
            f"LP backends for linear utilities: {sorted(LP_BACKENDS)}"
        )
    return name


def _lp_only_solver(name: str | None) -> bool:
    """An LP backend that cvxpy does not know (e.g. CUPDLPX, PDLP_CPU): linear utilities only."""
    return name is not None and name not in cp.installed_solvers()


def _solve(prob: cp.Problem, solver: str, options: dict) -> float:
    opts = dict(options)
    if solver == "CLARABEL":
        opts.setdefault("direct_solve_method", "qdldl")
    t0 = time.perf_counter()
    try:
        prob.solve(solver=solver, **opts)
    except cp.error.SolverError as exc:
        raise SolverFailedError(f"solver {solver} failed: {exc}", str(prob.status)) from exc
    elapsed = time.perf_counter() - t0
    if prob.status not in _OK:
        raise SolverFailedError("the design problem was not solved", str(prob.status))
    return elapsed


def solve_ray_lp(
    rays: np.ndarray, values: np.ndarray, *, solver: str | None = None
) -> tuple[np.ndarray, float, str, np.ndarray | None]:
    """Solve ``max valuesᵀθ s.t. rays θ = 1, θ ≥ 0`` ([15, Theorem 6]).

    Returns ``(theta, optimum, status, duals)``; duals (``y`` with ``raysᵀ y ≥ values`` up to solver tolerance)
    are returned by the default HiGHS path; :func:`ray_lp_upper_bound` turns them into a valid bound.

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
        for method in ("highs-ds", "highs-ipm"):
            res = linprog(
                -v, A_eq=R, b_eq=np.ones(n), bounds=(0, None), method=method,
                options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
            )
            if res.status == 0:
                break
        if res.status != 0:
            raise SolverFailedError(f"extreme-ray LP failed: {res.message}", f"scipy-highs:{res.status}")
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
    uset: UncertaintySet, eps: float, util: SubConvexUtility, prior: np.ndarray, solver: str | None
) -> tuple[np.ndarray, float, str, float, dict]:
    t0 = time.perf_counter()
    R = enumerate_rays(uset, eps)
    R = R / R.sum(axis=0, keepdims=True)  # ‖r‖₁ = 1: better scaled LP, and Σθ = N for the bound
    t_enum = time.perf_counter() - t0
    vals = np.asarray(util.mu(R, prior), dtype=float)
    t1 = time.perf_counter()
    theta, opt, status, duals = solve_ray_lp(R, vals, solver=solver)
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


def design(
    uncertainty: object,
    epsilon: float,
    *,
    utility: object = "mutual_information",
    method: str = "auto",
    solver: str | None = None,
    prior: object | None = None,
    n_outputs: int | None = None,
    form: str = "auto",
    solver_options: dict | None = None,
) -> DesignResult:
    """Design the utility-maximising mechanism that is ε-PML for every distribution of a set.

    Implements: core paper, eq. (9) with the constraint set of Proposition 2 / Corollary 1 (any ℓ1 radius
    via the exact dual form), [15, Lemma 1] for a fixed prior, Remark 1 (simplex = ε-LDP), and
    [15, Theorem 6] for sub-convex utilities (eq. (2)).

    Parameters
    ----------
    uncertainty : UncertaintySet or array_like
        ``L1Ball(P̂, β)``, ``FiniteSet``, ``Simplex``, or a prior vector (exact knowledge).
    epsilon : float
        Target ε ≥ 0.
    utility : str, Utility or array_like, default "mutual_information"
        A sub-convex utility by name ("mutual_information", "map_accuracy", "chi_square_information",
        "total_variation_information") or object, a :class:`LinearUtility`, a :class:`ConcaveUtility`, or a
        gain matrix (→ LinearUtility).
    method : {"auto", "exact", "convex", "scalable"}
        "convex" for linear/concave utilities (one cvxpy solve over the polytope); "exact" for sub-convex
        ones (extreme-ray LP, N ≤ :data:`MAX_EXACT_SIZE`); "auto" picks the applicable one.
    solver : str, optional
        A cvxpy solver name (e.g. "CLARABEL", "ECOS", "HIGHS"). Default: :data:`DEFAULT_SOLVER` for convex
        designs; SciPy's HiGHS (a vertex solution with duals) for the extreme-ray LP. Linear utilities are
        solved as a sparse LP without cvxpy (:func:`~pml_design.design.lp.solve_linear_design`) by the LP
        backend "CLARABEL" (default), "HIGHS", "CUPDLPX" (GPU, extra ``pml-design[gpu]``; chosen automatically
        from N = :data:`~pml_design.design.backends.GPU_AUTO_SIZE` when it imports and a CUDA device exists)
        or "PDLP_CPU"; other cvxpy names (ECOS, SCS, ...) use the cvxpy model.
    prior : array_like, optional
        Distribution under which the utility is evaluated; defaults to the ball's center (the estimate P̂)
        or the given prior. Required for ``Simplex`` and multi-point ``FiniteSet``.
    n_outputs : int, optional
        Output alphabet size for concave utilities (default N).
    form : str, default "auto"
        Polytope form for convex designs (see :func:`build_polytope`); "literal" uses the cvxpy model.
    solver_options : dict, optional
        Passed to ``cvxpy.Problem.solve``; for a linear utility on the sparse LP path: ``backend``
        ("auto", "sparse" or "cvxpy": the cvxpy model, e.g. as a cross-check), ``tol``, ``time_limit``,
        ``polish``, ``polish_solver`` (:func:`~pml_design.design.lp.solve_linear_design`); for ``method="scalable"``
        (also chosen by "auto" for large alphabets) and ``utility="frequency_estimation"``:
        ``time_limit`` (wall-clock seconds for the whole call, default 60, honoured within 10 % + 1 s),
        ``max_nodes`` (branch-and-bound nodes per pricing call, default 20000) and ``progress`` (a tqdm bar with
        the current value, bound and gap; default: shown when stderr is a terminal; silenced by
        ``PML_DESIGN_NO_PROGRESS=1``). The exact method ignores ``time_limit`` and ``progress`` (it finishes in
        seconds where "auto" picks it).

    Returns
    -------
    DesignResult
        With ``.matrix``, ``.utility``, the exactly computed ``.certified_epsilon`` (≤ ε + 1e-12),
        ``.optimal``, ``.upper_bound``, ``.status`` and more.

    Raises
    ------
    ValueError, TypeError
        Bad arguments (naming them); a utility of the wrong kind for ``method``.
    SolverFailedError
        The solver failed or returned a non-optimal status (never a half-solved matrix).

    Warns
    -----
    PMLDesignWarning
        When the scalable method stops (time limit) with a relative gap above 1 % (the message says how to
        reduce it); the mechanism is certified all the same.
    """
    uset = as_uncertainty_set(uncertainty)
    eps = check_epsilon(epsilon)
    util = as_utility(utility)
    p_util = _utility_prior(uset, prior)
    solver_name = _check_solver(solver)
    if method not in ("auto", "exact", "convex", "scalable"):
        raise ValueError(f"method must be one of 'auto', 'exact', 'convex', 'scalable', got {method!r}")
    check_form(form)
    if n_outputs is not None:
        n_outputs = check_positive_int(n_outputs, "n_outputs")
    if _lp_only_solver(solver_name) and not (isinstance(util, LinearUtility) and method in ("auto", "convex")):
        raise ValueError(f"solver {solver_name!r} is an LP backend for linear utilities (method 'convex'), not for {util.name!r}")

    info: dict = {}
    if isinstance(util, FrequencyEstimation):
        if method not in ("auto", "scalable"):
            raise ValueError(f"utility 'frequency_estimation' is designed by column generation; use method='auto', got {method!r}")
        from .estimation_design import design_frequency_estimation  # noqa: PLC0415

        from .scalable import DEFAULT_TIME_LIMIT, _check_time_limit  # noqa: PLC0415

        opts = _scalable_opts(solver_options)
        return design_frequency_estimation(
            uset,
            eps,
            util,
            util.check_prior(p_util),
            time_limit=_check_time_limit(opts.get("time_limit", DEFAULT_TIME_LIMIT)),
            progress=opts.get("progress"),
        )
    if util.kind in ("linear", "concave"):
        if method == "exact":
            raise ValueError(f"method 'exact' is for sub-convex utilities; {util.name} needs method='convex' or 'scalable'")
        if method == "scalable":
            if not isinstance(util, LinearUtility):
                raise ValueError("method 'scalable' supports linear and sub-convex utilities, not a ConcaveUtility")
            from .scalable import design_scalable  # noqa: PLC0415

            return design_scalable(uset, eps, util, p_util, solver=solver_name, **_scalable_opts(solver_options))
        method_used = "convex"
        if isinstance(util, LinearUtility):
            if util.gain.shape[0] != uset.size:
                raise ValueError(f"gain has {util.gain.shape[0]} rows but the uncertainty set has {uset.size} symbols")
            m = util.gain.shape[1]
            if n_outputs is not None and n_outputs != m:
                raise ValueError(f"n_outputs={n_outputs} disagrees with the gain's {m} columns (the output alphabet)")
            if use_sparse_path(solver_name, form, solver_options):
                return solve_linear_design(uset, eps, util, p_util, solver=solver_name, form=form, options=solver_options)
            solver_options = {k: v for k, v in (solver_options or {}).items() if k != "backend"}
        else:
            m = n_outputs if n_outputs is not None else (util.n_outputs or uset.size)  # type: ignore[union-attr]
        poly = build_polytope(uset, eps, n_outputs=m, form=form)
        if isinstance(util, LinearUtility):
            objective = cp.sum(cp.multiply(util.weights(p_util), poly.P))
        else:
            objective = util.objective(poly.P, p_util)  # type: ignore[union-attr]
        prob = poly.problem(objective)
        if not prob.is_dcp():
            raise ValueError("the utility's objective is not concave (DCP) in the mechanism")
        used_solver = solver_name or DEFAULT_SOLVER
        t_solve = _solve(prob, used_solver, solver_options or {})
        raw = np.asarray(poly.P.value, dtype=float)
        upper = float(prob.value)
        status = str(prob.status)
        drop = not isinstance(util, LinearUtility)
        info["form"] = poly.form
    else:
        if method == "convex":
            raise ValueError(f"utility {util.name!r} is sub-convex; use method='exact' (or 'auto'/'scalable')")
        generic_rays = isinstance(uset, L1Ball) and uset.radius > 0 and not uset.in_interior_regime
        too_big = uset.size > (AUTO_EXACT_SIZE_GENERIC if generic_rays else AUTO_EXACT_SIZE)
        if method == "scalable" or (method == "auto" and too_big):
            from .scalable import design_scalable  # noqa: PLC0415 - optional heavier module

            return design_scalable(uset, eps, util, p_util, solver=solver_name, **_scalable_opts(solver_options))  # type: ignore[arg-type]
        method_used = "exact"
        used_solver = solver_name or "HIGHS_SCIPY"
        raw, upper, status, t_solve, info = _design_subconvex_exact(uset, eps, util, p_util, solver_name)  # type: ignore[arg-type]
        drop = True

    return certified_result(
        raw,
        uset,
        eps,
        util,
        p_util,
        upper=upper,
        solved_optimally=status == cp.OPTIMAL,
        status=status,
        method=method_used,
        solver=used_solver,
        solve_time=t_solve,
        info=info,
        drop_empty_columns=drop,
    )


from .tradeoff import tradeoff_curve  # noqa: E402  (uses design())
