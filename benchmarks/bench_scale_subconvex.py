"""Benchmark of issue 13 (sub-convex part): column generation outside Proposition 2, anytime behaviour, sweeps.

* Adult ``education`` (N = 16) and ``native-country`` (N = 41, two unseen categories), first 5 000 records,
  δ = 1e-6, mutual information, through ``design_from_samples`` with a time limit: value, bound, relative gap,
  proven optimality, wall time.
* Random ℓ1 balls outside Proposition 2, N = 30, 300, 1000: the same, plus the ratio to the mutual information
  of the best admissible randomized response and the number of output columns (never a constant mechanism).
* ε sweep warm-started from the previous ε's columns (``tradeoff_curve``) against cold starts.

Run ``python benchmarks/bench_scale_subconvex.py [--quick]``; writes ``scale_subconvex.json`` into ``--outdir``
and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
import warnings

import numpy as np

import pml_design as pd
from pml_design.design import MutualInformation, PMLDesignWarning, tradeoff_curve
from pml_design.mechanisms.closed_form import randomized_response_for_pml


def _row(name: str, n: int, eps: float, res, wall: float, ball) -> dict:
    rr = MutualInformation().value(randomized_response_for_pml(ball, eps).matrix, ball.center)
    return {
        "case": name,
        "n": n,
        "epsilon": eps,
        "value": res.utility,
        "upper_bound": res.upper_bound,
        "rel_gap": res.gap / max(abs(res.upper_bound), 1e-300),
        "optimal": bool(res.optimal),
        "wall_s": wall,
        "outputs": int(res.matrix.shape[1]),
        "rr_value": rr,
        "ratio_to_rr": res.utility / rr if rr > 0 else float("inf"),
        "seed_used": res.info.get("seed_used", "column generation"),
    }


def adult(column: str, epsilons, time_limit: float, records: int = 5000) -> list[dict]:
    codes, cats = pd.load_adult().categorical(column)
    codes = codes[:records]
    n = len(cats)
    rows = []
    for eps in epsilons:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PMLDesignWarning)
            est = pd.design_from_samples(codes, n, eps, 1e-6, allow_zero=True,
                                         solver_options={"time_limit": time_limit, "progress": False})
        rows.append(_row(f"adult {column}", n, eps, est.result, time.perf_counter() - t0, est.result.uncertainty))
    return rows


def random_ball(n: int, time_limit: float, eps: float = 1.0) -> dict:
    rng = np.random.default_rng(n)
    p = rng.dirichlet(np.ones(n))
    ball = pd.L1Ball(p, min(1.0, 0.1 + 4 * p.min()))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PMLDesignWarning)
        res = pd.design(ball, eps, solver_options={"time_limit": time_limit, "progress": False})
    return _row("random l1 ball", n, eps, res, time.perf_counter() - t0, ball)


def sweep(n: int, k: int, time_limit: float) -> dict:
    rng = np.random.default_rng(77)
    p = rng.dirichlet(np.full(n, 0.6))
    ball = pd.L1Ball(p, 2 * p.min() + 0.15)
    eps = np.linspace(0.3, 2.0, k)
    out = {"n": n, "n_eps": k, "time_limit_per_point": time_limit}
    for mode, reuse in (("warm", True), ("cold", False)):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PMLDesignWarning)
            res = tradeoff_curve(ball, eps, solver_options={"time_limit": time_limit, "progress": False}, reuse=reuse)
        out[f"{mode}_s"] = time.perf_counter() - t0
        out[f"{mode}_proven"] = int(sum(r.optimal for r in res))
        out[f"{mode}_mean_rel_gap"] = float(np.mean([r.gap / max(abs(r.upper_bound), 1e-300) for r in res]))
        out[f"{mode}_values"] = [r.utility for r in res]
    out["speedup"] = out["cold_s"] / out["warm_s"]
    return out


def _markdown(rows: list[dict]) -> str:
    head = "| case | N | ε | value | bound | rel. gap | proven | wall (s) | outputs | × RR |"
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['n']} | {r['epsilon']:g} | {r['value']:.5g} | {r['upper_bound']:.5g} | "
            f"{r['rel_gap']:.2e} | {r['optimal']} | {r['wall_s']:.1f} | {r['outputs']} | {r['ratio_to_rr']:.3g} |"
        )
    return "\n".join(lines)


def run_subconvex(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    """Run the benchmark; ``quick`` uses 10 s time limits and fewer cases."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tl = 10.0 if quick else 60.0
    rows = adult("education", [1.0] if quick else [0.5, 1.0, 2.0], tl)
    rows += adult("native-country", [1.0], tl)
    rows += [random_ball(n, tl) for n in ((30, 300) if quick else (30, 300, 1000))]
    sw = sweep(14, 3 if quick else 5, 3.0 if quick else 10.0)
    table = _markdown(rows)
    print(table)
    print(f"\nε sweep (N = {sw['n']}, {sw['n_eps']} values, {sw['time_limit_per_point']:g} s each): warm {sw['warm_s']:.1f} s "
          f"({sw['warm_proven']} proven, mean gap {sw['warm_mean_rel_gap']:.2e}), cold {sw['cold_s']:.1f} s "
          f"({sw['cold_proven']} proven, mean gap {sw['cold_mean_rel_gap']:.2e})")
    summary = {"quick": quick, "time_limit": tl, "designs": rows, "sweep": sw, "markdown": table}
    (outdir / ("scale_subconvex_quick.json" if quick else "scale_subconvex.json")).write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    a = ap.parse_args()
    run_subconvex(quick=a.quick, outdir=a.outdir)
