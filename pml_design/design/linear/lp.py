"""The sparse linear design: solve, bound, clean, certify and polish the LP of :mod:`.lp_model`.

Implements: core paper eq. (9) for a linear utility over the polytope of Proposition 2 / Corollary 1 /
[15, Lemma 1] / Remark 1, assembled as a sparse LP (:func:`linear_design_lp`, :mod:`.lp_model`), solved by an LP
backend (:mod:`.backends`), with ``upper_bound`` the weak-duality bound of
:meth:`~pml_design.design.linear.lp_model.LinearProgram.valid_upper_bound` (valid whatever the solver's accuracy); solver
noise becomes exact zeros (:func:`clean_tiny`), a violated guarantee is repaired without filling zeros
(:func:`repair_preserving_zeros`), the matrix is certified exactly (:func:`~pml_design.design.certify.certify`)
and polished while the gap is large (:func:`solve_linear_design`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .lp_model import SPARSE_FORMS, LinearProgram, linear_design_lp

if TYPE_CHECKING:  # pragma: no cover
    from ..result import DesignResult

__all__ = [
    "LINEAR_OPTIONS",
    "POLISH_GAP",
    "SPARSE_FORMS",
    "ZERO_RTOL",
    "LinearProgram",
    "clean_tiny",
    "repair_preserving_zeros",
    "linear_design_lp",
    "solve_linear_design",
    "use_sparse_path",
    "valid_linear_bound",
]

#: ``solver_options`` understood by the sparse linear path (``"backend"`` is read by :func:`use_sparse_path`).
LINEAR_OPTIONS = ("backend", "tol", "time_limit", "polish", "polish_solver", "progress")
#: Polish when the certified utility is more than this (relative to ``max(1, |bound|)``) below the bound.
POLISH_GAP: float = 1e-6
#: Polishing continues until the gap is below this (half the 1e-7 at which ``optimal`` is claimed).
POLISH_TARGET: float = 5e-8
#: Seconds per LP nonzero kept back from a time-limited solve for what follows it (the backend's model transfer,
#: the bound, cleaning and certification; at most 30 % of the time left): 32 s after the solve measured at N = 4000
#: (96 M nonzeros) on the H100 machine, so this keeps about 3× that.
POST_SOLVE_S_PER_NNZ: float = 1e-6
#: Entries at most this times their column's maximum are solver noise and become exact zeros (:func:`clean_tiny`).
ZERO_RTOL: float = 1e-9


def use_sparse_path(solver: str | None, form: str, options: dict | None) -> bool:
    """Whether :func:`~pml_design.design` sends a linear design to the sparse path (else cvxpy).

    Sparse unless: ``form="literal"``, ``solver_options={"backend": "cvxpy"}``, or a cvxpy solver without an LP
    backend of the same name (e.g. "ECOS", "SCS").

    Implements: the choice between the sparse LP path and cvxpy of ``docs/design.md`` §9.

    Parameters
    ----------
    solver : str or None
        The ``solver`` passed to the design (an LP backend name, a cvxpy solver name, or None: automatic).
    form : str
        The formulation (``"literal"`` forces cvxpy).
    options : dict or None
        ``solver_options``; only its ``"backend"`` key (``"auto"`` (default), ``"sparse"`` or ``"cvxpy"``) is read.

    Returns
    -------
    bool
        True for the sparse path, False for cvxpy.

    Raises
    ------
    ValueError
        ``options["backend"]`` is not one of the three; an LP backend that is not a cvxpy solver with
        ``backend="cvxpy"`` or ``form="literal"``; a solver that is not an LP backend with ``backend="sparse"``.
    """
    from .backends import BACKENDS  # noqa: PLC0415

    backend = (options or {}).get("backend", "auto")
    if backend not in ("auto", "sparse", "cvxpy"):
        raise ValueError(f"solver_options['backend'] must be 'auto', 'sparse' or 'cvxpy', got {backend!r}")
    if backend == "cvxpy" or form == "literal":
        if solver is not None and solver.upper() in BACKENDS and solver.upper() not in _cvxpy_solvers():
            raise ValueError(f"solver {solver!r} is an LP backend of the sparse path, not a cvxpy solver")
        return False
    if solver is None or solver.upper() in BACKENDS:
        return True
    if backend == "sparse":
        raise ValueError(f"solver {solver!r} is not an LP backend; sparse backends: {sorted(BACKENDS)}")
    return False


def _cvxpy_solvers() -> list[str]:
    import cvxpy as cp  # noqa: PLC0415

    return cp.installed_solvers()


def _linear_options(options: dict | None) -> dict:
    from ..anytime import _check_time_limit  # noqa: PLC0415

    opts = dict(options or {})
    unknown = set(opts) - set(LINEAR_OPTIONS)
    if unknown:
        raise ValueError(
            f"solver_options for a linear design on the sparse LP path accept {list(LINEAR_OPTIONS)}, got "
            f"{sorted(unknown)}; pass solver_options={{'backend': 'cvxpy', ...}} for cvxpy's solve() options"
        )
    opts.pop("backend", None)
    if "tol" in opts and not (isinstance(opts["tol"], (int, float)) and 0 < opts["tol"] < 1):
        raise ValueError(f"solver_options['tol'] must be a float in (0, 1), got {opts['tol']!r}")
    if opts.get("time_limit") is not None:
        opts["time_limit"] = _check_time_limit(opts["time_limit"])
    if "polish" in opts:
        v = opts["polish"]  # `in (True, False, "support")` let 1, 0.0 through and raised numpy's error for an array
        if not (isinstance(v, (bool, np.bool_)) or (isinstance(v, str) and v == "support")):
            raise ValueError(f"solver_options['polish'] must be True, False or 'support', got {v!r}")
        opts["polish"] = v if isinstance(v, str) else bool(v)
    if "polish_solver" in opts:  # checked before the solve, not when a polish is first needed (or never)
        from .backends import get_backend  # noqa: PLC0415

        try:
            get_backend(opts["polish_solver"])
        except (TypeError, ValueError) as err:
            raise type(err)(f"solver_options['polish_solver']: {err}") from None
    return opts


def clean_tiny(matrix: np.ndarray, rtol: float = ZERO_RTOL) -> np.ndarray:
    """Solver noise to exact zeros: negatives; entries ``≤ rtol ×`` their column's maximum; whole columns whose
    maximum is ``≤ rtol ×`` the largest entry ("ghost" outputs an interior point spreads ~1e-10 over).

    Column-relative, because that is what keeps the column's ratio ``max_x c_x / min_Q Q·c``: removing
    entries below ``rtol · max c`` lowers ``min_Q Q·c ≥ e^{−ε} max c`` by at most a fraction ``rtol e^ε``.

    Implements: the cleaning step of ``docs/design.md`` §9 (before the repair and certification of §6).

    Parameters
    ----------
    matrix : numpy.ndarray, shape (N, M)
        The solver's mechanism (not modified).
    rtol : float, default :data:`ZERO_RTOL`
        Relative threshold, per column and for whole columns.

    Returns
    -------
    numpy.ndarray, shape (N, M)
        A float copy with non-finite and negative entries, entries ``≤ rtol ×`` their column's maximum and
        columns whose maximum is ``≤ rtol ×`` the largest entry set to 0 (rows are not renormalised).
    """
    W = np.array(matrix, dtype=float, copy=True)
    W[~np.isfinite(W) | (W < 0)] = 0.0
    colmax = W.max(axis=0)
    W[W <= rtol * colmax[None, :]] = 0.0
    W[:, colmax <= rtol * max(float(colmax.max(initial=0.0)), 0.0)] = 0.0
    return W


def repair_preserving_zeros(matrix: np.ndarray, uset: object, epsilon: float) -> tuple[np.ndarray, float]:
    """Mix a row-stochastic matrix with ``1vᵀ``, v supported on its violating columns, to restore ε-PML.

    For a column with ``A = max_x c_x`` and ``B = min_{Q∈𝒫} Q·c``, mixing gives ``A' = (1−λ)A + λv_y`` and
    ``B' = (1−λ)B + λv_y`` (Q sums to 1), while columns outside v are only scaled (their ratio is unchanged,
    and their zeros stay zeros). With excesses ``e_y = (A − e^ε B)_+`` and ``S = Σ e_y``, the choice
    ``v = e/S``, ``λ = S / (S + e^ε − 1)`` makes every column satisfy ``A' ≤ e^ε B'`` (λ = 1 at ε = 0: a
    constant mechanism). The uniform repair of :func:`~pml_design.design.certify.certify` needs up to M times
    more weight and fills every zero. Aims at ``ε − CERT_TOL``; the caller certifies the result exactly.

    Implements: the zero-preserving repair of ``docs/design.md`` §9.

    Parameters
    ----------
    matrix : numpy.ndarray, shape (N, M)
        Row-stochastic mechanism.
    uset : UncertaintySet
        The uncertainty set 𝒫 (its ``min_output_probability`` gives ``B`` per column).
    epsilon : float
        The target ε ≥ 0.

    Returns
    -------
    tuple of (numpy.ndarray, float)
        ``(matrix, λ)``: the mixed matrix and the weight λ ∈ (0, 1]; λ = 0 and the input (as a float array) if
        nothing is violated.
    """
    from ..certify import CERT_TOL  # noqa: PLC0415

    W = np.asarray(matrix, dtype=float)
    e = float(np.exp(max(epsilon - CERT_TOL, 0.0)))
    excess = np.maximum(W.max(axis=0) - e * uset.min_output_probability(W), 0.0)  # type: ignore[attr-defined]
    total = float(excess.sum())
    if total <= 0:
        return W, 0.0
    lam = 1.0 if e == 1.0 else min(1.0, total / (total + e - 1.0) * (1 + 1e-12))
    return (1.0 - lam) * W + lam * (excess / total)[None, :], lam


def _fill_empty_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows without mass (an iterate stopped by a time limit can have them) get the mean of the other rows, or the
    whole matrix the uniform (constant) mechanism if none has mass; the repair and certification that follow make it
    private. Returns the matrix and its :func:`clean_tiny` (computed here anyway, so the caller need not again).

    "Without mass" is judged after the cleaning that follows (:func:`clean_tiny`, then entries below
    :data:`~pml_design.design.certify.CLEAN_ZERO_TOL` in ``clean_matrix``): a row of entries ``≤ 1e-9`` times their
    columns' maxima would be emptied there. The output alphabet (columns) is kept: a linear utility's value needs
    the gain's columns.
    """
    from ..certify import CLEAN_ZERO_TOL  # noqa: PLC0415

    W = np.array(matrix, dtype=float, copy=True)
    W[~np.isfinite(W) | (W < 0)] = 0.0

    def cleaned(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        C = clean_tiny(M)
        return C, (C >= CLEAN_ZERO_TOL).any(axis=1)

    C, ok = cleaned(W)
    if ok.all():
        return W, C
    sums = W.sum(axis=1)
    pos = sums > 0
    W[pos] /= sums[pos, None]  # rows on one scale: the mean below stays within every column's maximum
    _, ok = cleaned(W)
    if ok.any():
        W[~ok] = W[ok].mean(axis=0)
        C, alive = cleaned(W)
        if alive.all():
            return W, C
    W = np.full(W.shape, 1.0 / W.shape[1])
    return W, clean_tiny(W)


def _certify_candidate(raw: np.ndarray, uset: object, eps: float, util: object, prior: np.ndarray) -> tuple:
    """Certify a solver matrix: tiny entries to exact zeros, zero-preserving repair, exact certification.

    If a repair was needed, the plain certification of ``raw`` (uniform repair) is computed too and kept
    if its utility is higher by more than :data:`ZERO_RTOL` (relative). Returns ``(matrix passed on, Certificate, utility)``.
    """
    from ...uncertainty import leakage_capacity  # noqa: PLC0415
    from ..certify import CERT_TOL, Certificate, certify, clean_matrix  # noqa: PLC0415

    raw, cleaned = _fill_empty_rows(raw)
    W = clean_matrix(cleaned, drop_empty_columns=False)
    cap0 = leakage_capacity(W, uset)
    lam = 0.0
    if cap0 > eps + CERT_TOL:
        W, lam = repair_preserving_zeros(W, uset, eps)
    cert = certify(W, uset, eps, drop_empty_columns=False)  # type: ignore[arg-type]
    if lam > 0 or cert.repair_weight > 0:
        total = 1.0 - (1.0 - lam) * (1.0 - cert.repair_weight)
        cert = Certificate(cert.matrix, cert.capacity, cap0, total)
    value = util.value(cert.matrix, prior)  # type: ignore[attr-defined]
    if cert.repair_weight > 0:
        cert2 = certify(raw, uset, eps, drop_empty_columns=False)  # type: ignore[arg-type]
        value2 = util.value(cert2.matrix, prior)  # type: ignore[attr-defined]
        if value2 > value + ZERO_RTOL * max(1.0, abs(value)):  # exact zeros are worth a 1e-9 utility
            return raw, cert2, value2
    return W, cert, value


def valid_linear_bound(uset: object, eps: float, weights: np.ndarray, time_limit: float | None = None) -> float:
    """A valid upper bound on the optimum of a linear design over ``M(ε, 𝒫)``, for the cvxpy path.

    cvxpy's ``prob.value`` is the solver's objective at its own iterate, no proof: with SCS a review found it
    below the optimum (0.7331527 against HiGHS's 0.7331529) beside ``optimal=True``. Here the sparse LP of the
    same set (:func:`linear_design_lp`, form "auto") is solved by HiGHS and its multipliers priced by
    :meth:`LinearProgram.valid_upper_bound`, which is valid for *any* multipliers: a solve stopped by
    ``time_limit`` still gives a valid (looser) bound; none at all gives ``inf``.

    Implements: weak duality of ``docs/design.md`` §9 for the cvxpy path of :func:`~pml_design.design.design`.

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set 𝒫.
    eps : float
        ε.
    weights : numpy.ndarray, shape (N, M)
        The objective coefficients (:meth:`LinearUtility.weights`).
    time_limit : float, optional
        Seconds for the HiGHS solve (None: to optimality).

    Returns
    -------
    float
        An upper bound on the optimum (``inf`` when the solve returned no multipliers).
    """
    from .backends import get_backend  # noqa: PLC0415

    lp = linear_design_lp(uset, eps, weights, "auto")
    backend = get_backend("HIGHS")
    sol = backend.solve(lp, tol=backend.default_tol, time_limit=time_limit)  # type: ignore[attr-defined]
    if sol.y is None:
        return float("inf")
    return _bound(lp, sol.y)


def _bound(lp: LinearProgram, y: np.ndarray) -> float:
    # any multipliers give a valid bound: take the better sign (guards against a backend's sign convention)
    return min(lp.valid_upper_bound(y), lp.valid_upper_bound(-np.asarray(y, dtype=float)))


def _polish(
    lp: LinearProgram,
    sol: object,
    backend: object,
    opts: dict,
    best: dict,
    steps: list,
    problem: tuple,
    tol: float,
    remaining: Callable[[], float | None] = lambda: None,
) -> None:
    """Improve ``best`` (raw, cert, value, bound, time) in place; record the steps taken in ``steps``.

    1. "support": an exact backend (``polish_solver``) on the LP restricted to the active support of ``sol``
       (entries > 1e-7, or with reduced cost > −1e-7): a feasible point of the full LP, often a vertex; its
       rows are all kept, so its multipliers bound the full LP too.
    2. "tol=…": while the gap exceeds :data:`POLISH_TARGET`, re-solve with ``sol``'s backend at a 100× tighter
       tolerance (warm-started where the backend supports it), at most twice, down to 1e-11. Under a time limit
       a re-solve starts only with more than ``POST_SOLVE_S_PER_NNZ`` per nonzero left and gets what is left
       minus that reserve (its iterate is certified after it).

    ``remaining()`` is the time left of the whole design's ``time_limit`` (None: no limit): each step gets what is
    left, and no step starts once it is spent.
    """
    from .backends import get_backend  # noqa: PLC0415

    def spent() -> bool:
        left = remaining()
        return left is not None and left <= 0.0

    def consider(x: np.ndarray, y: np.ndarray) -> None:
        best["bound"] = min(best["bound"], _bound(lp, y))
        raw2, cert2, value2 = _certify_candidate(lp.mechanism(x), *problem)
        if value2 > best["value"]:
            best.update(raw=raw2, cert=cert2, value=value2)

    def done() -> bool:
        return best["bound"] - best["value"] <= POLISH_TARGET * max(1.0, abs(best["bound"]))

    pb = get_backend(opts.get("polish_solver", "HIGHS"))
    if pb.first_order:
        raise ValueError(f"solver_options['polish_solver'] must be an exact backend, got {pb.name!r}")
    removable = np.zeros(lp.n_vars, dtype=bool)
    for blk in ("P", "zeta"):
        if blk in lp.blocks:
            removable[lp.blocks[blk]] = True
    r = lp.c - lp.A.T @ np.asarray(sol.y, dtype=float)  # type: ignore[attr-defined]
    keep = ~removable | (sol.x > 1e-7) | (r > -1e-7)  # type: ignore[attr-defined]
    # an exact solve on the support starts only with time for its setup, which no time limit covers (N = 4000:
    # HiGHS given 12 s took 50 s without one iteration on the GPU machine)
    left = remaining()
    reserve = POST_SOLVE_S_PER_NNZ * lp.A.nnz  # its setup (outside its limit), and its certification after it
    setup_fits = left is None or left >= 2.0 * reserve
    if not keep.all() and not spent() and setup_fits:
        ps = pb.solve(lp.restrict(keep), tol=pb.default_tol,  # type: ignore[attr-defined]
                      time_limit=None if left is None else left - reserve)
        best["time"] += ps.solve_time
        if ps.has_solution and ps.status == "optimal":  # a support solve stopped early is no polish
            x = np.zeros(lp.n_vars)
            x[keep] = ps.x
            consider(x, ps.y)
            steps.append("support")
    cur, t = sol, tol
    for _ in range(0 if opts.get("polish") == "support" else 2):
        if done() or t <= 1e-11 or spent():
            break
        # a re-solve starts only with time for its own certification left over (N = 4000 on the GPU machine: a
        # 25 s re-solve after a solve stopped by the limit, then ~18 s of certification, ended at 169 s for 150 s)
        left = remaining()
        if left is not None and left <= reserve:
            break
        t = max(t * 1e-2, 1e-11)
        s2 = backend.solve(lp, tol=t, time_limit=None if left is None else left - reserve,  # type: ignore[attr-defined]
                           warm_start=cur)
        best["time"] += s2.solve_time
        if not s2.has_solution:
            break
        consider(s2.x, s2.y)
        steps.append(f"tol={t:.0e}")
        cur = s2


def solve_linear_design(
    uset: object,
    eps: float,
    util: object,
    prior: np.ndarray,
    *,
    solver: str | None = None,
    form: str = "auto",
    options: dict | None = None,
) -> DesignResult:
    """Design with a linear utility on the sparse LP path (:func:`linear_design_lp` + a backend).

    Implements: core paper eq. (9) with a linear utility; the bound of the module docstring; certification
    (:func:`~pml_design.design.certify.certify`).

    1. Build the LP, solve it with ``solver`` (:func:`~pml_design.design.linear.backends.select_backend`).
    2. ``upper_bound`` = the valid bound from the solver's row multipliers (never below the optimum).
    3. Entries ≤ :data:`ZERO_RTOL` × row max become exact zeros; the matrix is certified (exact leakage,
       repaired if needed).
    4. Polish if the certified utility is more than :data:`POLISH_GAP` below the bound, aiming at
       :data:`POLISH_TARGET` (:func:`_polish`): an exact solve on the active support, then up to two re-solves
       at a 100× tighter tolerance (warm-started where supported); the best certified matrix and the
       smallest valid bound are kept.

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set 𝒫 the guarantee holds over.
    eps : float
        The privacy level ε ≥ 0.
    util : LinearUtility
        The linear utility (its ``weights(prior)`` is the LP objective).
    prior : numpy.ndarray
        The distribution the utility is evaluated under.
    solver : str, optional
        An LP backend name (:data:`~pml_design.design.linear.backends.BACKENDS`); None: automatic.
    form : str
        A :data:`SPARSE_FORMS` name or "auto".
    options : dict, optional
        ``tol`` (backend tolerance; default per backend), ``time_limit`` (wall-clock seconds for the whole call:
        the solve gets what the build left, polishing what the solve left; default None: solve to optimality),
        ``polish`` (True (default): both steps of :func:`_polish`; "support": the exact solve on the active support
        only, no tighter re-solve of a first-order backend; False: none), ``polish_solver`` (default "HIGHS"),
        ``progress`` (a line on stderr when the solve starts and ends; default: when stderr is a terminal).

    Returns
    -------
    DesignResult
        ``info`` holds ``backend``, ``iterations``, ``primal_objective``, ``dual_objective`` (the solver's),
        ``polish`` (the polishing steps taken, see :func:`_polish`; empty if none), ``lp_shape``, ``lp_nnz``,
        ``build_time``.

    Raises
    ------
    SolverFailedError
        The backend returned no usable solution (infeasible/unbounded/error status).

    Warns
    -----
    PMLDesignWarning
        The certified utility is more than 1 % (relative) below the valid bound, e.g. a solve stopped by
        ``time_limit``; the message names the gap and says to raise the limit.
    """
    from .backends import get_backend, select_backend  # noqa: PLC0415
    from ..certify import certified_result  # noqa: PLC0415
    from ..result import SolverFailedError  # noqa: PLC0415

    from ...progress import progress_enabled  # noqa: PLC0415
    from ..anytime import _default_progress, warn_result_gap  # noqa: PLC0415

    opts = _linear_options(options)
    name = select_backend(solver, uset.size)  # type: ignore[attr-defined]
    backend = get_backend(name)
    t0 = time.perf_counter()
    time_limit = opts.get("time_limit")

    def remaining() -> float | None:
        return None if time_limit is None else max(t0 + float(time_limit) - time.perf_counter(), 0.0)

    lp = linear_design_lp(uset, eps, util.weights(prior), form)  # type: ignore[attr-defined]
    t_build = time.perf_counter() - t0
    tol = float(opts.get("tol", backend.default_tol))
    show = progress_enabled(_default_progress(opts.get("progress")))
    if show:
        print(
            f"pml-design: linear design LP, {lp.n_rows} rows x {lp.n_vars} variables ({lp.A.nnz} nonzeros), {name} ...",
            file=sys.stderr,
            flush=True,
        )
    left = remaining()
    if left is not None:  # keep time for what follows the solve (measured: 32 s for the 96 M nonzeros at N = 4000)
        left = max(left - min(0.3 * left, POST_SOLVE_S_PER_NNZ * lp.A.nnz), 1e-3)
    sol = backend.solve(lp, tol=tol, time_limit=left)
    if not sol.has_solution:
        raise SolverFailedError(f"the linear design LP was not solved by {name}", sol.status)
    solve_time = sol.solve_time
    bound = _bound(lp, sol.y)
    raw, cert, value = _certify_candidate(lp.mechanism(sol.x), uset, eps, util, prior)
    steps: list[str] = []
    if opts.get("polish", True) and bound - value > POLISH_GAP * max(1.0, abs(bound)):
        best = {"raw": raw, "cert": cert, "value": value, "bound": bound, "time": solve_time}
        _polish(lp, sol, backend, opts, best, steps, (uset, eps, util, prior), tol, remaining)
        raw, cert, value, bound, solve_time = best["raw"], best["cert"], best["value"], best["bound"], best["time"]
    rel = (bound - value) / max(1.0, abs(bound)) if np.isfinite(bound) else np.inf
    if show:
        print(
            f"pml-design: {name} done in {time.perf_counter() - t0:.1f} s ({sol.status}): certified {value:.8g}, "
            f"bound {bound:.8g}, gap {rel:.2e}",
            file=sys.stderr,
            flush=True,
        )
    info = {
        "form": lp.form,
        "backend": name,
        "solver_status": sol.status,
        "iterations": sol.iterations,
        "primal_objective": sol.primal_obj,
        "dual_objective": sol.dual_obj,
        "polish": steps,
        "lp_shape": (lp.n_rows, lp.n_vars),
        "lp_nnz": int(lp.A.nnz),
        "build_time": t_build,
    }
    res = certified_result(
        raw,
        uset,  # type: ignore[arg-type]
        eps,
        util,
        prior,
        upper=bound,
        solved_optimally=bool(np.isfinite(bound)),
        status=sol.status,
        method="convex",
        solver=name,
        solve_time=solve_time,
        info=info,
        drop_empty_columns=False,
        cert=cert,
    )
    warn_result_gap(res, float("inf") if time_limit is None else float(time_limit), detail=f"LP status {sol.status!r}, {name}")
    return res
