"""Benchmark of the mechanism designer (issue: designer part 1).

* Compact (Proposition 2 with per-column max/min auxiliaries, O(N·M)) versus literal (eq. (10) transcribed,
  O(N³)) formulations: modelling time (building + cvxpy compilation) and solver time, for two linear
  objectives (probability of the truth; negative expected |x − y| distortion).
* Solvers compared on the compact form.
* Exact sub-convex design (extreme-ray LP): largest N finishing within the time budget.

Run ``python benchmarks/bench_designer.py [--quick]``; writes ``bench_designer.json`` into ``--outdir``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import cvxpy as cp
import numpy as np

import pml_design as pml
from pml_design.design import build_polytope, design, distortion_gain

OBJECTIVES = {"truth": np.eye, "distortion": distortion_gain}


def _instance(n: int, seed: int = 0) -> pml.L1Ball:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 5)
    return pml.L1Ball(p, 0.5 * p.min())


def time_linear(n: int, form: str, objective: str, solver: str = "CLARABEL", eps: float = 1.0) -> dict:
    """Build and solve one linear design; split modelling and solver time."""
    ball = _instance(n)
    G = OBJECTIVES[objective](n)
    t0 = time.perf_counter()
    poly = build_polytope(ball, eps, form=form)
    prob = poly.problem(cp.sum(cp.multiply(ball.center[:, None] * G, poly.P)))
    t_build = time.perf_counter() - t0
    opts = {"direct_solve_method": "qdldl"} if solver == "CLARABEL" else {}
    t1 = time.perf_counter()
    prob.solve(solver=solver, **opts)
    t_total_solve = time.perf_counter() - t1
    solver_time = prob.solver_stats.solve_time or t_total_solve
    compile_time = prob.compilation_time or 0.0
    modelling = t_build + compile_time
    total = t_build + t_total_solve
    cap = pml.leakage_capacity(np.clip(poly.P.value, 0, None) / np.clip(poly.P.value, 0, None).sum(1, keepdims=True), ball)
    return {
        "n": n,
        "form": form,
        "objective": objective,
        "solver": solver,
        "modelling_s": modelling,
        "solver_s": solver_time,
        "total_s": total,
        "modelling_share": modelling / total if total > 0 else float("nan"),
        "value": float(prob.value),
        "status": str(prob.status),
        "raw_capacity_minus_eps": cap - eps,
    }


def time_exact(n: int, utility: str = "mutual_information", eps: float = 1.0) -> dict:
    ball = _instance(n)
    t0 = time.perf_counter()
    res = design(ball, eps, utility=utility, method="exact")
    return {
        "n": n,
        "utility": utility,
        "total_s": time.perf_counter() - t0,
        "n_rays": res.info.get("n_rays"),
        "enumeration_s": res.info.get("enumeration_time"),
        "lp_s": res.info.get("lp_time"),
        "value": res.utility,
        "certified_epsilon": res.certified_epsilon,
    }


def _print_table(rows: list[dict], cols: list[str], title: str) -> None:
    print(f"\n{title}")
    print(" | ".join(f"{c:>14}" for c in cols))
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            cells.append(f"{v:>14.4g}" if isinstance(v, float) else f"{str(v):>14}")
        print(" | ".join(cells))


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results", budget_s: float = 600.0) -> dict:
    """Run the designer benchmark; returns a JSON-serialisable summary."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    literal_sizes = [10, 20] if quick else [10, 20, 30, 40]
    compact_sizes = [10, 20, 30, 40] if quick else [10, 20, 30, 40, 100, 200, 300, 500, 1000]
    rows_literal, rows_compact = [], []
    for n in literal_sizes:
        for obj in OBJECTIVES:
            rows_literal.append(time_linear(n, "literal", obj))
    skip = False
    for n in compact_sizes:
        for obj in OBJECTIVES:
            if skip or time.perf_counter() - start > budget_s:
                rows_compact.append({"n": n, "objective": obj, "status": "skipped (budget)"})
                continue
            r = time_linear(n, "compact", obj)
            rows_compact.append(r)
            if r["total_s"] > 300:
                skip = True
    solver_rows = []
    for solver in ("CLARABEL", "ECOS", "HIGHS"):
        for obj in OBJECTIVES:
            solver_rows.append(time_linear(40 if quick else 150, "compact", obj, solver=solver))
    exact_rows = []
    for n in ([4, 6, 8] if quick else [4, 6, 8, 10, 12, 13, 14, 15, 16, 17, 18]):
        r = time_exact(n)
        exact_rows.append(r)
        if r["total_s"] > 60:
            break
    speedups = {}
    for r in rows_literal:
        match = [c for c in rows_compact if c.get("n") == r["n"] and c.get("objective") == r["objective"] and "total_s" in c]
        if match:
            speedups[f"{r['objective']}@N={r['n']}"] = r["total_s"] / match[0]["total_s"]
    cols = ["n", "form", "objective", "modelling_s", "solver_s", "total_s", "modelling_share", "status"]
    _print_table(rows_literal, cols, "Literal eq. (10) formulation (O(N^3))")
    _print_table(rows_compact, cols, "Compact formulation (O(N·M))")
    _print_table(solver_rows, ["n", "objective", "solver", "solver_s", "total_s", "value"], "Solvers on the compact form")
    _print_table(exact_rows, ["n", "n_rays", "enumeration_s", "lp_s", "total_s", "value"], "Exact sub-convex design (mutual information)")
    print("\nSpeed-up compact vs literal (total time):", {k: round(v, 1) for k, v in speedups.items()})
    summary = {
        "literal": rows_literal,
        "compact": rows_compact,
        "solvers": solver_rows,
        "exact_subconvex": exact_rows,
        "speedup_compact_vs_literal": speedups,
        "largest_exact_n_within_60s": max([r["n"] for r in exact_rows if r["total_s"] <= 60], default=None),
    }
    (outdir / "bench_designer.json").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--budget", type=float, default=900.0, help="seconds before larger sizes are skipped")
    a = ap.parse_args()
    run(quick=a.quick, outdir=a.outdir, budget_s=a.budget)
