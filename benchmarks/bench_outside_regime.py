"""Exact design outside Proposition 2 (β ≥ 2 min P̂): failures, beaten optimality claims, and time.

Random ℓ1 balls with N = 2..8 and β ∈ [2 min P̂, 2], ε ∈ [0.02, 3], all four sub-convex utilities, default
``design(...)`` (``method="auto"``). Each result is checked independently: the leakage is recomputed, and a
linearisation local search over Corollary 1's constraints (``tests/_independent.py``, no library code) looks
for a feasible mechanism beating ``upper_bound`` (and ``utility`` when ``optimal=True``).

Usage: ``python -m benchmarks.bench_outside_regime [--instances 2000] [--quick]``; writes
``benchmarks/results/outside_regime.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

UTILS = ["mutual_information", "map_accuracy", "chi_square_information", "total_variation_information"]


def run(quick: bool = False, outdir: str | pathlib.Path | None = None, *, instances: int = 2000, seed: int = 0,
        search_every: int = 1) -> dict:
    """The harness contract (``run(quick=..., outdir=...)``); quick = 100 instances."""
    if quick:
        instances = min(instances, 100)
    import pml_design as pml
    from pml_design.design import SolverFailedError
    from pml_design.design.utilities import as_utility

    from _independent import local_search  # type: ignore[import-not-found]

    rng = np.random.default_rng(seed)
    rows = []
    for k in range(instances):
        n = int(rng.integers(2, 9))
        p = rng.dirichlet(np.full(n, float(rng.uniform(0.2, 3.0))))
        p = np.maximum(p, 1e-9)
        p /= p.sum()
        beta = float(2 * p.min() + rng.uniform(0, 1) * (2 - 2 * p.min()))
        eps = float(rng.uniform(0.02, 3.0))
        util = UTILS[k % 4]
        rec = {"n": n, "beta": beta, "epsilon": eps, "utility": util, "outcome": "ok"}
        t0 = time.perf_counter()
        try:
            res = pml.design(pml.L1Ball(p, beta), eps, utility=util)
        except SolverFailedError as exc:
            rec["outcome"] = "infeasible" if "infeasible" in str(exc).lower() else "solver_failed"
            rows.append(rec)
            continue
        except (ValueError, TypeError) as exc:  # a clear, named error from the library
            rec["outcome"] = "named_error"
            rec["message"] = str(exc)
            rows.append(rec)
            continue
        except Exception as exc:  # noqa: BLE001 - anything else is a raw third-party error
            rec["outcome"] = "raw_error"
            rec["message"] = f"{type(exc).__name__}: {exc}"
            rows.append(rec)
            continue
        rec["time"] = time.perf_counter() - t0
        rec["method"] = res.method
        rec["optimal"] = bool(res.optimal)
        rec["leak_ok"] = bool(pml.leakage_capacity(res.matrix, pml.L1Ball(p, beta)) <= eps + 1e-12)
        rec["beaten"] = False
        if k % search_every == 0 and n <= 5:  # Corollary 1's vertex list grows as N!: search small N only
            u = as_utility(util)
            found, W = local_search(lambda M: u.value(M, p), p, beta, eps, starts=2, iters=4, rng=k)
            tol = 1e-7 * max(1.0, abs(res.upper_bound))
            rec["searched"] = True
            rec["beaten"] = bool(W is not None and (found > res.upper_bound + tol or (res.optimal and found > res.utility + tol)))
        rows.append(rec)
    summary = {}
    for n in range(2, 9):
        sub = [r for r in rows if r["n"] == n]
        done = [r for r in sub if r["outcome"] == "ok"]
        summary[n] = {
            "instances": len(sub),
            "false_infeasible": sum(r["outcome"] == "infeasible" for r in sub),
            "raw_errors": sum(r["outcome"] == "raw_error" for r in sub),
            "other_failures": sum(r["outcome"] in ("solver_failed", "named_error") for r in sub),
            "searched": sum(bool(r.get("searched")) for r in done),
            "beaten_claims": sum(r["beaten"] for r in done),
            "leak_violations": sum(not r["leak_ok"] for r in done),
            "proven_optimal": sum(r["optimal"] for r in done),
            "max_time_s": max((r["time"] for r in done), default=0.0),
            "median_time_s": float(np.median([r["time"] for r in done])) if done else 0.0,
        }
    out = {"quick": quick, "instances": instances, "seed": seed, "by_n": summary}
    outdir = pathlib.Path(outdir) if outdir else HERE / "results"
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / ("outside_regime_quick.json" if quick else "outside_regime.json")).write_text(json.dumps(out, indent=1))
    print(table(out))
    return out


def table(out: dict) -> str:
    head = "| N | instances | false infeasible | raw errors | other failures | searched | beaten claims | leak violations | proven optimal | median / max time (s) |"
    lines = [head, "|" + "---|" * 10]
    for n, s in out["by_n"].items():
        lines.append(
            f"| {n} | {s['instances']} | {s['false_infeasible']} | {s['raw_errors']} | {s['other_failures']} | "
            f"{s['searched']} | {s['beaten_claims']} | {s['leak_violations']} | {s['proven_optimal']} | "
            f"{s['median_time_s']:.3f} / {s['max_time_s']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="100 instances")
    args = ap.parse_args(argv)
    run(args.quick, instances=args.instances)


if __name__ == "__main__":
    main()
