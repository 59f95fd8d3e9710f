"""Scaling of the mechanism designer (issue 13). Linear part: the sparse LP path against the cvxpy model.

For linear objectives (probability of the truth, ``G = I``; negative expected distortion ``G = −|x − y|``) on an
ℓ1 ball inside Proposition 2 (``β = P̂_min / 2``, ε = 1), times:

* ``sparse``: ``design(ball, ε, utility=LinearUtility(G))`` — the sparse LP (:mod:`pml_design.design.lp`)
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


def _instance(n: int, seed: int = 0) -> pml.L1Ball:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 5)
    return pml.L1Ball(p, 0.5 * p.min())


def time_sparse(n: int, objective: str, solver: str | None = None, eps: float = 1.0) -> dict:
    """One design on the sparse LP path (end to end)."""
    ball = _instance(n)
    G = OBJECTIVES[objective](n)
    t0 = time.perf_counter()
    res = design(ball, eps, utility=LinearUtility(G), solver=solver)
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
    a = ap.parse_args()
    run(quick=a.quick, outdir=a.outdir)
