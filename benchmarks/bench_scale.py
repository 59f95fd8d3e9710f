"""Scaling of the mechanism designer (issue 13). Linear part: the sparse LP path against the cvxpy model.

For linear objectives (probability of the truth, ``G = I``; negative expected distortion ``G = −|x − y|``) on an
ℓ1 ball inside Proposition 2 (``β = P̂_min / 2``, ε = 1), times:

* ``sparse``: ``design(ball, ε, utility=LinearUtility(G))`` — the sparse LP (:mod:`pml_design.design.linear.lp`)
  with the default backend (Clarabel, native API), including the valid bound, cleaning and certification;
* ``cvxpy``: the plain compact cvxpy model (``build_polytope`` + ``Problem.solve(solver="CLARABEL")``), model
  building, compilation and solve only (no certification);
* ``sparse HIGHS``: the sparse LP with the HiGHS backend (interior point + crossover).

Run ``python benchmarks/bench_scale.py [--quick]``; writes ``scale_linear.json`` into ``--outdir``. Another part
(sub-convex designs) may add rows to this file; :func:`run_linear` is the linear part.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import cvxpy as cp
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/bench_scale.py` uses this checkout's pml_design
    sys.path.insert(0, str(ROOT))

import pml_design as pml  # noqa: E402
from pml_design.design import LinearUtility, build_polytope, design, distortion_gain  # noqa: E402

OBJECTIVES = {"truth": np.eye, "distortion": distortion_gain}
#: Issue 13's GPU targets: seconds at N = 1000 and N = 4000, certified gap.
GPU_TARGETS = {"1000": 10.0, "4000": 120.0, "gap": 1e-5}


def _instance(n: int, seed: int = 0) -> pml.L1Ball:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 5)
    return pml.L1Ball(p, 0.5 * p.min())


def time_sparse(n: int, objective: str, solver: str | None = None, eps: float = 1.0, options: dict | None = None) -> dict:
    """One design on the sparse LP path (end to end); ``options`` are its ``solver_options`` (e.g. tol, time_limit)."""
    ball = _instance(n)
    G = OBJECTIVES[objective](n)
    opts = {"progress": False, **(options or {})}
    t0 = time.perf_counter()
    res = design(ball, eps, utility=LinearUtility(G), solver=solver, solver_options=opts)
    total = time.perf_counter() - t0
    return {
        "n": n,
        "objective": objective,
        "path": f"sparse {res.solver}",
        "total_s": total,
        "solver_s": res.solve_time,
        "build_s": res.info["build_time"],
        "iterations": res.info["iterations"],
        "value": res.utility,
        "upper_bound": res.upper_bound,
        "gap": res.gap,
        "rel_gap": res.gap / max(1.0, abs(res.upper_bound)),
        "tol": opts.get("tol"),
        "time_limit": opts.get("time_limit"),
        "polish_option": opts.get("polish", True),
        "optimal": res.optimal,
        "polish": "+".join(res.info["polish"]) or "-",
        "lp_rows": res.info["lp_shape"][0],
        "lp_nnz": res.info["lp_nnz"],
    }


def time_cvxpy(n: int, objective: str, eps: float = 1.0) -> dict:
    """The plain compact cvxpy model solved by Clarabel (model + compile + solve; nothing else)."""
    ball = _instance(n)
    G = OBJECTIVES[objective](n)
    t0 = time.perf_counter()
    poly = build_polytope(ball, eps, form="compact")
    prob = poly.problem(cp.sum(cp.multiply(ball.center[:, None] * G, poly.P)))
    prob.solve(solver="CLARABEL", direct_solve_method="qdldl")
    total = time.perf_counter() - t0
    return {
        "n": n,
        "objective": objective,
        "path": "cvxpy CLARABEL",
        "total_s": total,
        "solver_s": prob.solver_stats.solve_time,
        "build_s": total - (prob.solver_stats.solve_time or 0.0),
        "iterations": prob.solver_stats.num_iters,
        "value": float(prob.value),
        "status": str(prob.status),
    }


def _markdown(rows: list[dict]) -> str:
    cols = ["n", "objective", "path", "total_s", "solver_s", "build_s", "iterations", "gap", "optimal", "polish"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c, "")
            cells.append(f"{v:.3g}" if isinstance(v, float) else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_linear(
    sizes: tuple[int, ...] = (100, 300),
    large: tuple[int, ...] = (1000,),
    highs_sizes: tuple[int, ...] = (200,),
    outdir: str | pathlib.Path = "benchmarks/results",
    large_objectives: tuple[str, ...] = ("truth",),
) -> dict:
    """Sparse-Clarabel vs cvxpy-Clarabel at ``sizes``, sparse alone at ``large`` (``large_objectives`` only: a
    few minutes each on 2 cores), HiGHS at ``highs_sizes``.

    Writes ``scale_linear.json`` into ``outdir`` and prints a Markdown table; returns the summary.
    """
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    speedup: dict[str, float] = {}
    for n in sizes:
        for obj in OBJECTIVES:
            a = time_sparse(n, obj)
            b = time_cvxpy(n, obj)
            rows += [a, b]
            speedup[f"{obj}@N={n}"] = b["total_s"] / a["total_s"]
            assert a["upper_bound"] >= b["value"] - 1e-7 * max(1.0, abs(b["value"])), (a, b)
    for n in highs_sizes:
        for obj in OBJECTIVES:
            rows.append(time_sparse(n, obj, solver="HIGHS"))
    for n in large:
        for obj in large_objectives:
            rows.append(time_sparse(n, obj))
    table = _markdown(rows)
    print(table)
    print("\nspeed-up of the sparse path over cvxpy (total time):", {k: round(v, 2) for k, v in speedup.items()})
    summary = {"rows": rows, "speedup_sparse_vs_cvxpy": speedup, "markdown": table}
    (outdir / "scale_linear.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary


def _device_name() -> str:
    """The CUDA device's name as ``nvidia-smi`` reports it ("" without one)."""
    import subprocess  # noqa: PLC0415

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else ""


def run_gpu(
    sizes: tuple[int, ...] = (300, 1000, 2000, 4000),
    objectives: tuple[str, ...] = ("truth", "distortion"),
    cpu_sizes: tuple[int, ...] = (300,),
    outdir: str | pathlib.Path = "benchmarks/results",
    options: dict | None = None,
    name: str = "scale_gpu.json",
) -> dict:
    """The GPU backend (``solver="CUPDLPX"``, tolerance 1e-8, then certification and polish) at ``sizes``, Clarabel
    on the same machine's CPU at ``cpu_sizes`` (for the crossover). Needs cupdlpx and a CUDA device.

    Every row's ``gap`` is ``(upper_bound − certified utility) / max(1, |upper_bound|)`` with ``upper_bound`` the
    weak-duality bound of the LP (valid whatever the solver's accuracy), so ``gap ≤ 1e-5`` *proves* the certified
    mechanism within 1e-5 of the optimum. ``options`` go to every GPU design's ``solver_options`` (e.g.
    ``{"tol": 1e-6, "time_limit": 60}``). Writes ``name`` (default ``scale_gpu.json``) after every row.
    """
    import os  # noqa: PLC0415

    from pml_design.design.linear.backends import get_backend  # noqa: PLC0415

    get_backend("CUPDLPX")  # ImportError naming what is missing (the extra, or a CUDA device)
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    time_sparse(50, "truth", solver="CUPDLPX")  # CUDA context and kernels: not part of any timing below
    rows: list[dict] = []
    summary = {"rows": rows, "device": _device_name(), "cpu_count": os.cpu_count(), "targets": GPU_TARGETS}

    def save() -> None:  # after every row: a run cut short by the machine's time limit keeps what it measured
        summary["markdown"] = _markdown(rows)
        (outdir / name).write_text(json.dumps(summary, indent=2, default=str))

    summary["options"] = options or {}
    for solver, ns in (("CUPDLPX", sizes), ("CLARABEL", cpu_sizes)):
        for n in ns:
            for obj in objectives:
                r = time_sparse(n, obj, solver=solver, options=options if solver == "CUPDLPX" else None)
                rows.append(r)
                save()
                print(f"N={n} {obj} {solver}: {r['total_s']:.2f} s, gap {r['gap']:.2e} (relative {r['rel_gap']:.2e}), "
                      f"polish {r['polish']}", flush=True)
    print(summary["markdown"])
    return summary


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    """Entry point of ``python -m benchmarks``: the linear part (quick: N = 30, 60; HiGHS at 30)."""
    if quick:
        out = run_linear(sizes=(30, 60), large=(), highs_sizes=(30,), outdir=outdir)
    else:
        out = run_linear(outdir=outdir)
    path = pathlib.Path(outdir) / "scale_linear.json"
    data = {**json.loads(path.read_text()), "quick": quick}
    if quick:  # never overwrite the measured full run that the README is rendered from
        path.unlink()
        path = path.with_name("scale_linear_quick.json")
    path.write_text(json.dumps(data, indent=2, default=str))
    return {"linear": out}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--gpu", action="store_true", help="the GPU part (solver='CUPDLPX'; needs cupdlpx and a CUDA device)")
    ap.add_argument("--gpu-sizes", default="300,1000,2000,4000")
    ap.add_argument("--gpu-objectives", default="truth,distortion")
    ap.add_argument("--gpu-cpu-sizes", default="300", help="Clarabel rows on the same machine ('' for none)")
    ap.add_argument("--gpu-tol", type=float, default=None, help="solver_options['tol'] of the GPU designs")
    ap.add_argument("--gpu-time-limit", type=float, default=None, help="solver_options['time_limit'] of the GPU designs")
    ap.add_argument("--gpu-polish", choices=("true", "false", "support"), default=None,
                    help="solver_options['polish'] of the GPU designs")
    ap.add_argument("--gpu-json", default="scale_gpu.json", help="file name of the GPU results in --outdir")
    a = ap.parse_args()
    if a.gpu:
        polish = {"true": True, "false": False, "support": "support", None: None}[a.gpu_polish]
        opts = {k: v for k, v in (("tol", a.gpu_tol), ("time_limit", a.gpu_time_limit), ("polish", polish)) if v is not None}
        run_gpu(
            sizes=tuple(int(v) for v in a.gpu_sizes.split(",")),
            objectives=tuple(a.gpu_objectives.split(",")),
            cpu_sizes=tuple(int(v) for v in a.gpu_cpu_sizes.split(",") if v),
            outdir=a.outdir,
            options=opts,
            name=a.gpu_json,
        )
    else:
        run(quick=a.quick, outdir=a.outdir)
