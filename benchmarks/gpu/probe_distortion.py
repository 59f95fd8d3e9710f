"""Probe: where the time of the distortion LP goes on the GPU (issue 13, part 3), one backend call at a time.

Run on the device machine after ``device_run.sh``'s install step: ``python benchmarks/gpu/probe_distortion.py OUT
N:OBJ:TOL:LIMIT[:SCALE] ...``. Every backend call (cuPDLPx and the HiGHS support polish) is timed and logged;
``OUT/probe.json`` is rewritten after every design.
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from benchmarks.bench_scale import OBJECTIVES, _instance  # noqa: E402
from pml_design.design import LinearUtility, design  # noqa: E402
from pml_design.design.linear import backends as B  # noqa: E402

CALLS: list[dict] = []


def _timed(backend: object) -> None:
    inner = backend.solve

    def solve(lp, *, tol, time_limit=None, warm_start=None):  # noqa: ANN001, ANN202
        t0 = time.perf_counter()
        s = inner(lp, tol=tol, time_limit=time_limit, warm_start=warm_start)
        CALLS.append({"backend": backend.name, "tol": tol, "warm": warm_start is not None, "rows": lp.n_rows,
                      "wall_s": round(time.perf_counter() - t0, 3), "status": s.status, "iters": s.iterations,
                      "primal": s.primal_obj, "dual": s.dual_obj})
        print("   ", CALLS[-1], flush=True)
        return s

    backend.solve = solve


def _timed_function(module: object, name: str) -> None:
    """Log the wall time of ``module.name`` (the bound, the certification) on every call."""
    inner = getattr(module, name)

    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        t0 = time.perf_counter()
        out = inner(*args, **kwargs)
        CALLS.append({"function": name, "wall_s": round(time.perf_counter() - t0, 3)})
        print("   ", CALLS[-1], flush=True)
        return out

    setattr(module, name, wrapper)


def _verbose_cupdlpx() -> None:
    """cuPDLPx's own log on stdout (presolve, iterations, its clock), for ``PML_PROBE_VERBOSE=1``."""
    import cupdlpx  # noqa: PLC0415

    set_params = cupdlpx.Model.setParams

    def loud(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        kwargs["OutputFlag"] = True
        return set_params(self, *args, **kwargs)

    cupdlpx.Model.setParams = loud


def main() -> None:
    import os  # noqa: PLC0415

    from pml_design.design.linear import lp as lp_mod  # noqa: PLC0415

    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name in ("CUPDLPX", "HIGHS"):
        _timed(B.get_backend(name))
    for name in ("_bound", "_certify_candidate", "linear_design_lp"):
        _timed_function(lp_mod, name)
    if os.environ.get("PML_PROBE_VERBOSE"):
        _verbose_cupdlpx()
    rows = []
    for spec in sys.argv[2:]:
        n, obj, tol, limit, *scale = spec.split(":")
        n, tol, limit = int(n), float(tol), float(limit)
        G = OBJECTIVES[obj](n) * (float(scale[0]) if scale else 1.0)
        ball = _instance(n)
        CALLS.clear()
        t0 = time.perf_counter()
        res = design(ball, 1.0, utility=LinearUtility(G), solver="CUPDLPX",
                     solver_options={"tol": tol, "time_limit": limit, "progress": False})
        row = {"spec": spec, "total_s": round(time.perf_counter() - t0, 3), "value": res.utility,
               "bound": res.upper_bound, "gap": res.gap, "polish": res.info["polish"], "calls": list(CALLS)}
        rows.append(row)
        print(spec, {k: row[k] for k in ("total_s", "value", "bound", "gap", "polish")}, flush=True)
        (out / "probe.json").write_text(json.dumps(rows, indent=2, default=str))


if __name__ == "__main__":
    main()
