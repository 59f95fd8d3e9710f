"""Benchmark of the designer part 2: scalable (column-generation) design, ε sweeps, privatize throughput.

* Quality: scalable vs exact utility ratio for N = 3..12 (mutual information, ℓ1 ball, random priors).
* Scale: time, value, upper bound and gap for N = 20, 30, 50, 100, 200 (per-size time limit).
* ε sweep: 50 values of ε at N = 100 (linear utility) — one compiled problem re-solved (cvxpy Parameter,
  ``canon_backend="COO"``) against 50 independent builds.
* ``privatize`` throughput for N = 10 and N = 1000 against a per-record Python loop.

Run ``python benchmarks/bench_scalable.py [--quick]``; writes ``bench_scalable.json`` into ``--outdir``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np

import pml_design as pml
from pml_design.design import LinearUtility, distortion_gain, tradeoff_curve


def _ball(n: int, seed: int) -> pml.L1Ball:
    p = np.random.default_rng(seed).dirichlet(np.ones(n) * 3)
    return pml.L1Ball(p, 0.5 * p.min())


def quality(sizes, seeds) -> list[dict]:
    rows = []
    for n in sizes:
        for s in seeds:
            ball = _ball(n, 1000 * n + s)
            ex = pml.design(ball, 1.0, method="exact")
            t0 = time.perf_counter()
            sc = pml.design(ball, 1.0, method="scalable", solver_options={"time_limit": 60})
            rows.append(
                {
                    "n": n,
                    "seed": s,
                    "exact": ex.utility,
                    "scalable": sc.utility,
                    "ratio": sc.utility / ex.utility if ex.utility > 0 else 1.0,
                    "proven": sc.optimal,
                    "time_s": time.perf_counter() - t0,
                }
            )
    return rows


def scale(sizes, time_limit: float) -> list[dict]:
    rows = []
    for n in sizes:
        ball = _ball(n, n)
        t0 = time.perf_counter()
        res = pml.design(ball, 1.0, method="scalable", solver_options={"time_limit": time_limit})
        rows.append(
            {
                "n": n,
                "time_s": time.perf_counter() - t0,
                "value": res.utility,
                "upper_bound": res.upper_bound,
                "rel_gap": res.gap / max(res.upper_bound, 1e-300),
                "proven_optimal": res.optimal,
                "iterations": res.info.get("iterations"),
                "certified_epsilon": res.certified_epsilon,
            }
        )
    return rows


def eps_sweep(n: int, k: int) -> dict:
    ball = _ball(n, 7)
    eps = np.linspace(0.1, 3.0, k)
    G = LinearUtility(distortion_gain(n))
    t0 = time.perf_counter()
    a = tradeoff_curve(ball, eps, utility=G, reuse=True)
    t_reuse = time.perf_counter() - t0
    t0 = time.perf_counter()
    b = tradeoff_curve(ball, eps, utility=G, reuse=False)
    t_rebuild = time.perf_counter() - t0
    return {
        "n": n,
        "n_eps": k,
        "reuse_s": t_reuse,
        "rebuild_s": t_rebuild,
        "speedup": t_rebuild / t_reuse,
        "max_utility_diff": float(max(abs(x.utility - y.utility) for x, y in zip(a, b))),
    }


def throughput(n: int, records: int, loop_records: int) -> dict:
    rng = np.random.default_rng(0)
    mech = pml.randomized_response(n, 1.0)
    x = rng.integers(0, n, size=records)
    t0 = time.perf_counter()
    mech.privatize(x, rng=1)
    t_vec = time.perf_counter() - t0
    W = mech.matrix
    xl = x[:loop_records]
    g = np.random.default_rng(2)
    t0 = time.perf_counter()
    for xi in xl:
        g.choice(W.shape[1], p=W[xi])
    t_loop = time.perf_counter() - t0
    return {
        "n": n,
        "vectorised_records_per_s": records / t_vec,
        "python_loop_records_per_s": loop_records / t_loop,
        "speedup": (records / t_vec) / (loop_records / t_loop),
    }


def _table(rows: list[dict], title: str) -> None:
    print(f"\n{title}")
    if not rows:
        return
    cols = list(rows[0])
    print(" | ".join(f"{c:>16}" for c in cols))
    for r in rows:
        print(" | ".join(f"{r[c]:>16.6g}" if isinstance(r[c], float) else f"{str(r[c]):>16}" for c in cols))


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    q = quality([3, 4, 5] if quick else list(range(3, 13)), [0, 1] if quick else [0, 1, 2])
    s = scale([20] if quick else [20, 30, 50, 100, 200], 10.0 if quick else 60.0)
    sw = eps_sweep(20 if quick else 100, 5 if quick else 50)
    tp = [throughput(10, 10**5 if quick else 10**6, 2000), throughput(1000, 10**5 if quick else 10**6, 2000)]
    _table(q, "Scalable vs exact (mutual information, l1 ball)")
    _table(s, "Scalable design at scale (mutual information, l1 ball, eps = 1)")
    _table([sw], "Epsilon sweep: one compiled problem vs rebuilds")
    _table(tp, "privatize throughput")
    summary = {
        "quality": q,
        "min_ratio": min(r["ratio"] for r in q),
        "scale": s,
        "eps_sweep": sw,
        "throughput": tp,
    }
    (outdir / "bench_scalable.json").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    a = ap.parse_args()
    run(quick=a.quick, outdir=a.outdir)
