"""LP backends for the sparse linear designs: one interface, several solvers.

Every backend solves a :class:`~pml_design.design.linear.lp_model.LinearProgram` (``max cᵀx, row_lower ≤ Ax ≤ row_upper,
lb ≤ x ≤ ub``) and returns an :class:`LPSolution` with the primal ``x`` and row multipliers ``y`` in the
maximisation convention (``y_i ≥ 0`` on a binding upper row bound: ``c ≈ Aᵀy`` plus reduced costs).

=============  ======  =========================================================================================
name           kind    solver
=============  ======  =========================================================================================
``CLARABEL``   exact   Clarabel's interior point method through its native Python API (Goulart & Chen, 2024)
``HIGHS``      exact   HiGHS (highspy) interior point method with crossover (Huangfu & Hall, 2018)
``CUPDLPX``    first   cuPDLPx, restarted Halpern PDHG on a CUDA GPU (Lu, Peng & Yang, 2025); extra ``[gpu]``
``PDLP_CPU``   first   HiGHS's CPU port of cuPDLP (``solver="pdlp"``): the GPU path's stand-in on a CPU
=============  ======  =========================================================================================

"First-order" answers are approximate (relative tolerance); :func:`~pml_design.design.linear.lp.solve_linear_design`
certifies them, computes a valid bound from their ``y`` and polishes when the gap is above 1e-6.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import scipy.sparse as sp

from ..._validation import fmt

if TYPE_CHECKING:  # pragma: no cover
    from .lp_model import LinearProgram

__all__ = [
    "BACKENDS",
    "GPU_AUTO_SIZE",
    "LPBackend",
    "LPSolution",
    "backend_available",
    "cuda_device_count",
    "get_backend",
    "register_backend",
    "select_backend",
]

#: Alphabet size from which ``solver=None`` picks CUPDLPX (when it imports and a CUDA device is present).
#: Measured on an H100 (``benchmarks/results/scale_gpu.json``): at N = 300 cuPDLPx takes 0.4-0.8 s end to end
#: against ~5 s for Clarabel on 2 CPU cores (probability of truth and distortion), at N = 1000 3.6 s against 364 s
#: (truth) but 407 s against 216 s for the distortion LP, on which PDHG converges slowly.
GPU_AUTO_SIZE: int = 300

_GPU_EXTRA = "pip install 'pml-design[gpu]'"


@dataclass(frozen=True)
class LPSolution:
    """What a backend returns.

    Attributes
    ----------
    x : numpy.ndarray
        Primal solution (approximate for first-order backends).
    y : numpy.ndarray
        Row multipliers, maximisation convention (see module docstring).
    status : str
        "optimal", "inaccurate", "time_limit", "iteration_limit", "infeasible", "unbounded" or "error".
    primal_obj, dual_obj : float
        The solver's primal and dual objective values (the dual one is not a valid bound by itself).
    iterations : int
    solve_time : float
        Seconds inside the solver call.
    backend : str
    """

    x: np.ndarray
    y: np.ndarray
    status: str
    primal_obj: float
    dual_obj: float
    iterations: int
    solve_time: float
    backend: str

    @property
    def has_solution(self) -> bool:
        return self.status in ("optimal", "inaccurate", "time_limit", "iteration_limit") and self.x is not None


class LPBackend(Protocol):
    """The backend interface: ``solve(lp, *, tol, time_limit, warm_start) -> LPSolution``."""

    name: str
    first_order: bool
    default_tol: float

    def available(self) -> str | None:
        """``None`` if usable here, else the reason (naming what to install)."""

    def solve(
        self, lp: LinearProgram, *, tol: float, time_limit: float | None = None, warm_start: LPSolution | None = None
    ) -> LPSolution: ...


def _tight_bounds(lp: LinearProgram) -> tuple[np.ndarray, np.ndarray]:
    """Variable bounds ``[lb, ub] ∩ box`` (same optimum; finite, which helps first-order methods)."""
    return np.maximum(lp.lb, lp.box_lower), np.minimum(lp.ub, lp.box_upper)


class ClarabelBackend:
    """Clarabel (native API): ``min −cᵀx`` with a zero cone for equality rows and one nonnegative cone."""

    name = "CLARABEL"
    first_order = False
    default_tol = 1e-10  # one or two iterations more than 1e-8; a bound ~100× tighter, noise ~1e-12

    def available(self) -> str | None:
        return None

    def solve(
        self, lp: LinearProgram, *, tol: float, time_limit: float | None = None, warm_start: LPSolution | None = None
    ) -> LPSolution:
        import clarabel  # noqa: PLC0415

        A = lp.A
        eq = lp.row_lower == lp.row_upper
        up = ~eq & np.isfinite(lp.row_upper)
        low = ~eq & np.isfinite(lp.row_lower)
        vlow = np.flatnonzero(np.isfinite(lp.lb))
        vup = np.flatnonzero(np.isfinite(lp.ub))
        n = lp.n_vars
        I = sp.identity(n, format="csr")
        blocks = [A[eq], A[up], -A[low], -I[vlow], I[vup]]
        b = np.concatenate([lp.row_upper[eq], lp.row_upper[up], -lp.row_lower[low], -lp.lb[vlow], lp.ub[vup]])
        Acl = sp.vstack(blocks, format="csc")
        n_eq = int(eq.sum())
        cones = ([clarabel.ZeroConeT(n_eq)] if n_eq else []) + [clarabel.NonnegativeConeT(Acl.shape[0] - n_eq)]
        st = clarabel.DefaultSettings()
        st.verbose = False
        st.direct_solve_method = "qdldl"
        st.tol_gap_abs = st.tol_gap_rel = st.tol_feas = tol
        if time_limit is not None:
            st.time_limit = float(time_limit)
        t0 = time.perf_counter()
        solver = clarabel.DefaultSolver(sp.csc_matrix((n, n)), -lp.c, Acl, b, cones, st)
        sol = solver.solve()
        elapsed = time.perf_counter() - t0
        z = np.asarray(sol.z, dtype=float)
        y = np.zeros(lp.n_rows)
        k = 0
        for mask, sign in ((eq, 1.0), (up, 1.0), (low, -1.0)):
            cnt = int(mask.sum())
            y[mask] += sign * z[k : k + cnt]
            k += cnt
        status = {
            "Solved": "optimal",
            "AlmostSolved": "inaccurate",
            "MaxIterations": "iteration_limit",
            "MaxTime": "time_limit",
            "PrimalInfeasible": "infeasible",
            "AlmostPrimalInfeasible": "infeasible",
            "DualInfeasible": "unbounded",
            "AlmostDualInfeasible": "unbounded",
        }.get(str(sol.status), "error")
        return LPSolution(
            x=np.asarray(sol.x, dtype=float),
            y=y,
            status=status,
            primal_obj=-float(sol.obj_val),
            dual_obj=-float(sol.obj_val_dual),
            iterations=int(sol.iterations),
            solve_time=elapsed,
            backend=self.name,
        )


class HighsBackend:
    """HiGHS through highspy (``solver`` option "ipm" by default; "pdlp" for the CPU first-order stand-in)."""

    def __init__(self, name: str = "HIGHS", method: str = "ipm") -> None:
        self.name = name
        self.method = method
        self.first_order = method == "pdlp"
        self.default_tol = 1e-8

    def available(self) -> str | None:
        return None

    def solve(
        self, lp: LinearProgram, *, tol: float, time_limit: float | None = None, warm_start: LPSolution | None = None
    ) -> LPSolution:
        import highspy  # noqa: PLC0415

        inf = highspy.kHighsInf
        from ..quiet import new_highs  # noqa: PLC0415

        h = new_highs()
        h.setOptionValue("solver", self.method)
        if self.first_order:  # PDLP stops on the loosest of these
            for opt in ("pdlp_optimality_tolerance", "primal_feasibility_tolerance", "dual_feasibility_tolerance", "optimality_tolerance"):
                h.setOptionValue(opt, float(max(tol, 1e-10)))
        else:
            h.setOptionValue("ipm_optimality_tolerance", float(tol))
            h.setOptionValue("primal_feasibility_tolerance", float(max(tol, 1e-10)))
            h.setOptionValue("dual_feasibility_tolerance", float(max(tol, 1e-10)))
        if time_limit is not None:
            h.setOptionValue("time_limit", float(time_limit))
        lo, hi = _tight_bounds(lp)
        A = lp.A.tocsc()
        model = highspy.HighsLp()
        model.num_col_ = lp.n_vars
        model.num_row_ = lp.n_rows
        model.col_cost_ = lp.c
        model.col_lower_ = lo
        model.col_upper_ = hi
        model.row_lower_ = np.where(np.isfinite(lp.row_lower), lp.row_lower, -inf)
        model.row_upper_ = np.where(np.isfinite(lp.row_upper), lp.row_upper, inf)
        model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        model.a_matrix_.start_ = A.indptr
        model.a_matrix_.index_ = A.indices
        model.a_matrix_.value_ = A.data
        model.sense_ = highspy.ObjSense.kMaximize
        h.passModel(model)
        t0 = time.perf_counter()
        h.run()
        elapsed = time.perf_counter() - t0
        ms = h.getModelStatus()
        S = highspy.HighsModelStatus
        status = {
            S.kOptimal: "optimal",
            S.kTimeLimit: "time_limit",
            S.kIterationLimit: "iteration_limit",
            S.kInfeasible: "infeasible",
            S.kUnbounded: "unbounded",
            S.kUnboundedOrInfeasible: "infeasible",
        }.get(ms, "inaccurate" if self.first_order else "error")
        sol = h.getSolution()
        info = h.getInfo()
        x = np.asarray(sol.col_value, dtype=float)
        y = np.asarray(sol.row_dual, dtype=float) if sol.dual_valid else np.zeros(lp.n_rows)
        if x.shape != (lp.n_vars,):
            x = None  # type: ignore[assignment]
            status = "error" if status == "optimal" else status
        iters = int(info.pdlp_iteration_count if self.first_order else info.ipm_iteration_count + info.simplex_iteration_count)
        return LPSolution(
            x=x,
            y=y,
            status=status,
            primal_obj=float(info.objective_function_value),
            dual_obj=float("nan"),
            iterations=iters,
            solve_time=elapsed,
            backend=self.name,
        )


def cuda_device_count() -> int:
    """Number of CUDA devices the driver reports (0 without a driver or device), via ``libcuda``'s C API.

    Implements: the device check of ``docs/design.md`` §9 (CUPDLPX is usable only where a device is reported).

    Returns
    -------
    int
        ``cuDeviceGetCount`` after ``cuInit(0)``; 0 when no driver library loads or either call fails.
    """
    for lib in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            cuda = ctypes.CDLL(lib)
        except OSError:
            continue
        try:
            if cuda.cuInit(0) != 0:
                return 0
            count = ctypes.c_int(0)
            if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
                return 0
            return int(count.value)
        except AttributeError:  # pragma: no cover - not a CUDA driver library
            return 0
    return 0


class CuPDLPxBackend:
    """cuPDLPx (``from cupdlpx import Model, PDLP``) on a CUDA device; needs the ``pml-design[gpu]`` extra."""

    name = "CUPDLPX"
    first_order = True
    default_tol = 1e-8

    def _module(self) -> object:
        try:
            import cupdlpx  # noqa: PLC0415
        except Exception as exc:  # ImportError, or a broken CUDA runtime raising at import
            raise ImportError(f"solver 'CUPDLPX' needs the optional GPU extra ({_GPU_EXTRA}); import failed: {exc}") from exc
        return cupdlpx

    def available(self) -> str | None:
        try:
            self._module()
        except ImportError as exc:
            return str(exc)
        if cuda_device_count() < 1:
            return f"solver 'CUPDLPX' needs a CUDA device; none was found (cupdlpx is installed: {_GPU_EXTRA} is not enough)"
        return None

    def solve(
        self, lp: LinearProgram, *, tol: float, time_limit: float | None = None, warm_start: LPSolution | None = None
    ) -> LPSolution:
        cupdlpx = self._module()
        lo, hi = _tight_bounds(lp)
        model = cupdlpx.Model(  # type: ignore[attr-defined]
            objective_vector=lp.c,
            constraint_matrix=lp.A.tocsr(),
            constraint_lower_bound=lp.row_lower,
            constraint_upper_bound=lp.row_upper,
            variable_lower_bound=lo,
            variable_upper_bound=hi,
        )
        PDLP = cupdlpx.PDLP  # type: ignore[attr-defined]
        model.ModelSense = PDLP.MAXIMIZE
        model.setParams(OutputFlag=False, FeasibilityTol=float(tol), OptimalityTol=float(tol))
        if time_limit is not None:
            model.setParam("TimeLimit", float(time_limit))
        # Presolve off: PSLP leaves these LPs unchanged ("status: UNCHANGED" in cuPDLPx's log at N = 4000) and took
        # 16.9 s there, outside cuPDLPx's TimeLimit (so a time-limited design overran its limit by that much).
        model.setParam("Presolve", False)
        # ``warm_start`` is not used: measured on an H100 (distortion LP, N = 1000), the re-solve warm-started from
        # the tol-1e-4 answer reached 1e-6 in 110 s / 556 000 iterations, a cold solve in 10 s / 48 000 iterations.
        t0 = time.perf_counter()
        model.optimize()
        elapsed = time.perf_counter() - t0
        status = {
            PDLP.OPTIMAL: "optimal",
            PDLP.FEAS_POLISH_SUCCESS: "optimal",
            PDLP.TIME_LIMIT: "time_limit",
            PDLP.ITERATION_LIMIT: "iteration_limit",
            PDLP.PRIMAL_INFEASIBLE: "infeasible",
            PDLP.INFEASIBLE_OR_UNBOUNDED: "infeasible",
            PDLP.DUAL_INFEASIBLE: "unbounded",
        }.get(model.Status, "error")
        x = None if model.X is None else np.array(model.X, dtype=float)
        y = np.zeros(lp.n_rows) if model.Pi is None else np.array(model.Pi, dtype=float)
        return LPSolution(
            x=x,  # type: ignore[arg-type]
            y=y,
            status=status,
            primal_obj=float(model.ObjVal) if model.ObjVal is not None else float("nan"),
            dual_obj=float(model.DualObj) if model.DualObj is not None else float("nan"),
            iterations=int(model.IterCount or 0),
            solve_time=float(model.Runtime) if model.Runtime is not None else elapsed,
            backend=self.name,
        )


#: The registry: name → backend object (see :func:`register_backend`).
BACKENDS: dict[str, LPBackend] = {}


def register_backend(backend: LPBackend) -> None:
    """Add (or replace) a backend under ``backend.name`` (upper case).

    Implements: the backend registry of ``docs/design.md`` §9 (one interface, several solvers).

    Parameters
    ----------
    backend : LPBackend
        An object with ``name``, ``first_order``, ``default_tol``, ``available()`` and ``solve(...)``.
    """
    BACKENDS[backend.name.upper()] = backend


for _b in (ClarabelBackend(), HighsBackend("HIGHS", "ipm"), HighsBackend("PDLP_CPU", "pdlp"), CuPDLPxBackend()):
    register_backend(_b)


def backend_available(name: str) -> bool:
    """Whether the named backend is registered and usable here.

    Implements: the backend registry of ``docs/design.md`` §9.

    Parameters
    ----------
    name : str
        Backend name (case-insensitive).

    Returns
    -------
    bool
        True when the name is in :data:`BACKENDS` and its ``available()`` returns None.
    """
    b = BACKENDS.get(name.upper())
    return b is not None and b.available() is None


def get_backend(name: str) -> LPBackend:
    """The named backend, or a clear error.

    Implements: the backend registry of ``docs/design.md`` §9.

    Parameters
    ----------
    name : str
        Backend name (case-insensitive; a key of :data:`BACKENDS`).

    Returns
    -------
    LPBackend
        The registered backend, usable here.

    Raises
    ------
    ValueError
        Unknown name (lists the registered ones).
    TypeError
        ``name`` is not a string.
    ImportError
        Known but unusable here (e.g. CUPDLPX without the ``[gpu]`` extra or without a CUDA device).
    """
    if not isinstance(name, str):
        raise TypeError(f"solver must be a string, got {fmt(name)}")
    b = BACKENDS.get(name.upper())
    if b is None:
        raise ValueError(f"unknown LP backend {name!r}; registered: {sorted(BACKENDS)}")
    why = b.available()
    if why is not None:
        raise ImportError(why)
    return b


def select_backend(solver: str | None, n: int) -> str:
    """``solver`` upper-cased, or the automatic choice: CUPDLPX for ``n ≥ GPU_AUTO_SIZE`` when usable, else CLARABEL.

    Implements: the automatic backend choice of ``docs/design.md`` §9 (threshold :data:`GPU_AUTO_SIZE`).

    Parameters
    ----------
    solver : str or None
        A backend name, or None for the automatic choice.
    n : int
        Alphabet size N of the design.

    Returns
    -------
    str
        The backend name (upper case; not checked against :data:`BACKENDS`, see :func:`get_backend`).
    """
    if solver is not None:
        return solver.upper()
    if n >= GPU_AUTO_SIZE and backend_available("CUPDLPX"):
        return "CUPDLPX"
    return "CLARABEL"
