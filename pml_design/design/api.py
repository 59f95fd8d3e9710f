"""The entry point :func:`design`: one call from an uncertainty set, ε and a utility to a certified mechanism.

Implements: core paper eq. (9) (``max U(P_{Y|X}, P̂_X)`` over ``M(ε, 𝒫)``) by dispatching on the utility and the
size: linear utilities to the sparse LP (:mod:`.lp`) or the cvxpy polytope (:mod:`.polytope`, Proposition 2 /
Corollary 1 / [15, Lemma 1] / Remark 1), concave ones to the cvxpy polytope, sub-convex ones to [15, Theorem 6]'s
extreme-ray LP (:mod:`.exact`) or its column generation (:mod:`.scalable`), the frequency-estimation criterion to
:mod:`.estimation`; every result certified (:mod:`.certify`).
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from .._validation import check_design_epsilon, check_positive_int, check_probability_vector, fmt
from ..uncertainty import FiniteSet, L1Ball, UncertaintySet, as_uncertainty_set
from .anytime import DEFAULT_TIME_LIMIT, _check_time_limit, warn_result_gap
from .linear.backends import BACKENDS as LP_BACKENDS
from .certify import certified_result
from .exact import TRIVIAL_STATUS, _design_subconvex_exact
from .linear.lp import solve_linear_design, use_sparse_path, valid_linear_bound
from .polytope import _solve, build_polytope, check_form
from .rays import AUTO_EXACT_SIZE_FINITE, auto_exact_size
from .result import DesignResult, SolverFailedError
from .utilities import FrequencyEstimation, LinearUtility, as_utility

__all__ = ["DEFAULT_SOLVER", "design"]

#: Default cvxpy solver for linear/concave designs (measured in ``benchmarks/bench_designer.py``).
DEFAULT_SOLVER: str = "CLARABEL"


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


#: ``solver_options`` keys of the column-generation method (also of ``method="auto"`` for sub-convex utilities,
#: which may pick it; ``max_nodes`` acts only when it does).
SCALABLE_OPTIONS: tuple[str, ...] = ("time_limit", "max_nodes", "progress")
#: ``solver_options`` keys of the exact ray method (``progress`` is accepted and has nothing to show).
EXACT_OPTIONS: tuple[str, ...] = ("time_limit", "progress")


def _check_options(options: object, accepted: tuple[str, ...], what: str) -> dict:
    """``solver_options`` as a dict whose keys are all in ``accepted`` (``ValueError`` naming the unknown ones)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"solver_options must be a dict or None, got {fmt(options)}")
    unknown = sorted((k for k in options if k not in accepted), key=str)
    if unknown:
        raise ValueError(
            f"unknown solver_options key(s) {unknown} for {what}; accepted: {', '.join(repr(a) for a in accepted)}"
        )
    return dict(options)


def _scalable_opts(options: dict | None) -> dict:
    return _check_options(options, SCALABLE_OPTIONS, "method='scalable'")


#: The time-limit option of the cvxpy solvers that have one (``solver_options["time_limit"]`` is translated).
CVXPY_TIME_KEYS: dict[str, str] = {"CLARABEL": "time_limit", "SCS": "time_limit_secs", "HIGHS": "time_limit"}
#: Largest N for which ``form="literal"`` (cvxpy's O(N³) transcription, built before any solver clock starts)
#: accepts a ``time_limit``: its construction takes ~1 s at N = 30 on one core and grows as N³.
LITERAL_TIMED_SIZE: int = 30


def _cvxpy_time_limit(options: dict | None, solver: str, form: str, n: int) -> tuple[dict, float | None]:
    """Split ``solver_options["time_limit"]`` (seconds for the whole call) from the options passed to cvxpy."""
    opts = dict(options or {})
    if "time_limit" not in opts:
        return opts, None
    t = _check_time_limit(opts.pop("time_limit"))
    if solver not in CVXPY_TIME_KEYS:
        raise ValueError(
            f"solver_options['time_limit'] needs a solver with a time limit ({', '.join(sorted(CVXPY_TIME_KEYS))}); "
            f"solver {solver!r} has none"
        )
    if form == "literal" and n > LITERAL_TIMED_SIZE:
        raise ValueError(
            f"form='literal' (the O(N^3) transcription, built before the solver's clock starts) cannot honour "
            f"solver_options['time_limit'] at N={n} > {LITERAL_TIMED_SIZE}; use form='auto' (the sparse LP) or no "
            "time limit"
        )
    return opts, t


def _at_limit(time_limit: float | None) -> str:
    return "" if time_limit is None else f" within solver_options['time_limit']={time_limit:g} s (raise it)"


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
        solved as a sparse LP without cvxpy (:func:`~pml_design.design.linear.lp.solve_linear_design`) by the LP
        backend "CLARABEL" (default), "HIGHS", "CUPDLPX" (GPU, extra ``pml-design[gpu]``; chosen automatically
        from N = :data:`~pml_design.design.linear.backends.GPU_AUTO_SIZE` when it imports and a CUDA device exists)
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
        ("auto", "sparse" or "cvxpy": the cvxpy model, e.g. as a cross-check), ``tol``, ``time_limit`` (whole
        call; default None: to optimality), ``polish``, ``polish_solver``, ``progress`` (a start and an end line
        on stderr) (:func:`~pml_design.design.linear.lp.solve_linear_design`); for ``method="scalable"``
        (also chosen by "auto" for large alphabets) and ``utility="frequency_estimation"``:
        ``time_limit`` (wall-clock seconds for the whole call, default 60, honoured within 1.1 × time_limit + 5 s),
        ``max_nodes`` (branch-and-bound nodes per pricing call, default 20000) and ``progress`` (a tqdm bar with
        the current value, bound and gap; default: shown when stderr is a terminal; silenced by
        ``PML_DESIGN_NO_PROGRESS=1``); ``utility="frequency_estimation"`` also takes ``max_outputs`` (the most
        outputs the mechanism may have, at least N; default: no cap, up to 32 768 at large N). The exact method accepts ``time_limit`` (its ray LP gets what the enumeration
        left; stopped by it, the design continues by column generation) and ``progress`` (nothing to show); the cvxpy
        model translates ``time_limit`` to the solver's own option (CLARABEL, SCS, HIGHS) and passes the other keys to
        cvxpy. Any other key is a ``ValueError`` naming it and the accepted ones.

    Returns
    -------
    DesignResult
        With ``.matrix``, ``.utility``, the exactly computed ``.certified_epsilon`` (≤ ε + 1e-12), the proven
        ``.bound`` and ``.relative_gap``, ``.optimal`` (relative gap ≤ 1e-6), ``.upper_bound``/``.lower_bound``
        (bracketing the optimum), ``.status`` and more.

    Raises
    ------
    ValueError, TypeError
        Bad arguments (naming them); a utility of the wrong kind for ``method``.
    SolverFailedError
        The solver failed or returned a non-optimal status (never a half-solved matrix).

    Warns
    -----
    PMLDesignWarning
        Whenever the relative gap ``|bound − utility| / |utility|`` is above 1 % or unknown (no proven bound), in
        every method (the message says how to reduce it); the mechanism is certified all the same.
    """
    uset = as_uncertainty_set(uncertainty)
    eps = check_design_epsilon(epsilon)
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
    t_call = time.perf_counter()
    time_limit: float | None = None
    if isinstance(util, FrequencyEstimation):
        if method not in ("auto", "scalable"):
            raise ValueError(f"utility 'frequency_estimation' is designed by column generation; use method='auto', got {method!r}")
        if solver_name is not None or n_outputs is not None:  # they would be silently ignored
            what = "solver" if solver_name is not None else "n_outputs"
            raise ValueError(
                f"{what} has no effect on utility 'frequency_estimation' (its column generation uses its own barrier "
                f"method and chooses its outputs), got {what}={solver if what == 'solver' else n_outputs!r}; leave it "
                "unset"
            )
        from .estimation import design_frequency_estimation  # noqa: PLC0415

        if isinstance(solver_options, dict) and "max_nodes" in solver_options:  # a key of method='scalable'
            raise ValueError(
                "solver_options['max_nodes'] has no effect on utility='frequency_estimation' (no branch and bound); "
                "it accepts 'time_limit', 'progress' and 'max_outputs'"
            )
        opts = _check_options(solver_options, ("time_limit", "progress", "max_outputs"), "utility='frequency_estimation'")
        return design_frequency_estimation(
            uset,
            eps,
            util,
            util.check_prior(p_util),
            time_limit=_check_time_limit(opts.get("time_limit", DEFAULT_TIME_LIMIT)),
            progress=opts.get("progress"),
            max_outputs=opts.get("max_outputs"),
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
        used_solver = solver_name or DEFAULT_SOLVER
        solver_options, time_limit = _cvxpy_time_limit(solver_options, used_solver, form, uset.size)
        poly = build_polytope(uset, eps, n_outputs=m, form=form)
        if isinstance(util, LinearUtility):
            objective = cp.sum(cp.multiply(util.weights(p_util), poly.P))
        else:
            objective = util.objective(poly.P, p_util)  # type: ignore[union-attr]
        prob = poly.problem(objective)
        if not prob.is_dcp():
            raise ValueError("the utility's objective is not concave (DCP) in the mechanism")
        if time_limit is not None:  # the solver gets what the model's construction left
            solver_options[CVXPY_TIME_KEYS[used_solver]] = max(t_call + time_limit - time.perf_counter(), 1e-3)
        t_solve = _solve(prob, used_solver, solver_options, at=_at_limit(time_limit))
        raw = np.asarray(poly.P.value, dtype=float)
        upper = float(prob.value)  # (the solver's objective: a bound only for a linear utility, below)
        status = str(prob.status)
        if isinstance(util, LinearUtility):  # a proof, not the solver's word: weak duality on the sparse LP
            left = None if time_limit is None else max(t_call + 1.05 * time_limit - time.perf_counter(), 0.05)
            upper = valid_linear_bound(uset, eps, util.weights(p_util), time_limit=left)
        drop = not isinstance(util, LinearUtility)
        info["form"] = poly.form
    else:
        if method == "convex":
            raise ValueError(f"utility {util.name!r} is sub-convex; use method='exact' (or 'auto'/'scalable')")
        if n_outputs is not None or form != "auto":  # they would be silently ignored (a review)
            what = f"n_outputs={n_outputs!r}" if n_outputs is not None else f"form={form!r}"
            raise ValueError(f"{what} has no effect on a sub-convex utility ({util.name!r}: the design chooses its "
                             "outputs, one per extreme ray it uses, and builds no polytope); leave it out")
        opts = _check_options(
            solver_options, SCALABLE_OPTIONS if method in ("auto", "scalable") else EXACT_OPTIONS,
            f"method={method!r} ({util.name})",
        )
        if "time_limit" in opts:
            time_limit = _check_time_limit(opts["time_limit"])
        too_big = uset.size > auto_exact_size(uset, time_limit)
        multi = isinstance(uset, FiniteSet) and uset.distributions.shape[0] > 1
        if multi and method == "auto" and uset.size > AUTO_EXACT_SIZE_FINITE:
            raise ValueError(
                f"method='auto' designs over a FiniteSet of several distributions exactly only up to N = "
                f"{AUTO_EXACT_SIZE_FINITE} symbols (double description grows exponentially; column generation does "
                f"not cover such sets), got N={uset.size}: use method='exact' to try anyway, or an L1Ball around "
                "an estimate"
            )
        if method == "scalable" or (method == "auto" and too_big and not multi):
            from .scalable import design_scalable  # noqa: PLC0415 - optional heavier module

            return design_scalable(uset, eps, util, p_util, solver=solver_name, **_scalable_opts(solver_options))  # type: ignore[arg-type]
        method_used = "exact"
        used_solver = solver_name or "HIGHS_SCIPY"
        try:
            raw, upper, status, t_solve, info = _design_subconvex_exact(  # type: ignore[arg-type]
                uset, eps, util, p_util, solver_name, deadline=None if time_limit is None else t_call + time_limit
            )
        except SolverFailedError as exc:
            if time_limit is not None and multi:
                # a multi-point FiniteSet has no column generation: within the limit, the best certified design of
                # what is left is randomized response at its largest ε-PML ratio (certified below, no bound: the
                # gap warning says so; a review found 8 s for a 2 s limit, then an error advising method='scalable')
                from ..mechanisms.closed_form import randomized_response_for_pml  # noqa: PLC0415

                raw, upper, status = randomized_response_for_pml(uset, eps).matrix, np.inf, "time limit"
                t_solve, info = time.perf_counter() - t_call, {"exact_failure": str(exc)}
            elif time_limit is None or multi or (isinstance(uset, L1Ball) and not np.allclose(p_util, uset.center)):
                raise
            else:  # the ray LP did not finish within the limit: the best certified design of what is left, anytime
                from .scalable import design_scalable  # noqa: PLC0415

                left = max(t_call + 1.05 * time_limit - time.perf_counter(), 0.05 * time_limit)
                opts = {k: v for k, v in opts.items() if k != "time_limit"}
                return design_scalable(uset, eps, util, p_util, time_limit=left, **opts)  # type: ignore[arg-type]
        if (status == TRIVIAL_STATUS and isinstance(uset, L1Ball) and uset.radius > 0
                and np.allclose(p_util, uset.center, rtol=0.0, atol=1e-12)):
            # HiGHS called the ray LP infeasible (it is feasible for every ε): at tiny ε the trivial design is right
            # to rounding, but a review found it at ε = 16–30 with β just under 2 min P̂ (57 of 150 such balls
            # here: rays spanning e^ε), where the column generation reaches the optimum. Its result (certified, with
            # its own bound) replaces the trivial one when it is better.
            from .scalable import design_scalable  # noqa: PLC0415

            left = DEFAULT_TIME_LIMIT if time_limit is None else max(
                t_call + 1.05 * time_limit - time.perf_counter(), 0.05 * time_limit)
            opts = {k: v for k, v in opts.items() if k != "time_limit"}
            try:
                alt = design_scalable(uset, eps, util, p_util, time_limit=left, **opts)  # type: ignore[arg-type]
            except (SolverFailedError, ValueError):
                alt = None
            if alt is not None and alt.utility > float(np.max(util.mu(np.ones((uset.size, 1)), p_util))) + 1e-12:
                return alt
        drop = True

    res = certified_result(
        raw,
        uset,
        eps,
        util,
        p_util,
        upper=upper,
        solved_optimally=status in (cp.OPTIMAL, TRIVIAL_STATUS),  # (the trivial design's bound is its own proof)
        status=status,
        method=method_used,
        solver=used_solver,
        solve_time=t_solve,
        info=info,
        drop_empty_columns=drop,
    )
    warn_result_gap(res, float("inf") if time_limit is None else time_limit, stacklevel=3)
    return res
