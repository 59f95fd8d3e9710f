"""Benchmark of the LDP frequency oracles (GRR, OUE, OLH, subset selection; ``pml_design.mechanisms.ldp``).

* Throughput: records per second of ``privatize`` + ``estimate`` at N = 16 with 10^6 records (10^5 quick),
  median of repeats, for each oracle.
* Accuracy: the empirical MSE ``E‖f̂ − f‖²`` of the unbiased estimator over repeated privatizations of a fixed
  data set next to the exact formula of Wang et al. 2017, Theorem 2 (``FrequencyOracle.mse``), with the
  standard error of the empirical mean.

Run ``python benchmarks/bench_ldp_oracles.py [--quick]``; prints a table and writes ``ldp_oracles.json`` into
``--outdir`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import timeit

import numpy as np

import pml_design as pml

ORACLES = {"GRR": pml.grr, "OUE": pml.oue, "OLH": pml.olh, "SS": pml.subset_selection}


def _median_time(fn, repeats: int) -> float:
    return float(np.median(timeit.repeat(fn, number=1, repeat=repeats)))


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    """Run the benchmark, print a table, write ``ldp_oracles.json`` into ``outdir``."""
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    N, eps = 16, 1.0
    n_records = 100_000 if quick else 1_000_000
    repeats = 2 if quick else 3
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(N, 2.0))
    x = rng.choice(N, size=n_records, p=p)
    counts = np.bincount(x, minlength=N)
    f = counts / n_records
    # accuracy: R privatizations of one fixed data set of n records
    n_acc, R = (10_000, 50) if quick else (20_000, 200)
    x_acc = np.repeat(np.arange(N), np.round(p * n_acc).astype(int))
    f_acc = np.bincount(x_acc, minlength=N) / x_acc.size
    rows = []
    for name, make in ORACLES.items():
        o = make(N, eps)
        t_priv = _median_time(lambda: o.privatize(x, rng=1), repeats)
        reports = o.privatize(x, rng=1)
        t_est = _median_time(lambda: o.estimate(reports), repeats)
        err_big = float(np.sum((o.estimate(reports, project=False) - f) ** 2))
        d = np.empty(R)
        for r in range(R):
            d[r] = np.sum((o.estimate(o.privatize(x_acc, rng=100 + r), project=False) - f_acc) ** 2)
        theo = o.mse(f_acc, x_acc.size)
        rows.append(
            {
                "oracle": name,
                "params": {k: getattr(o, k) for k in ("g", "k") if hasattr(o, k)},
                "n": N,
                "epsilon": eps,
                "records": n_records,
                "privatize_s": t_priv,
                "estimate_s": t_est,
                "records_per_s": n_records / (t_priv + t_est),
                "report_bytes_per_record": reports.nbytes / n_records,
                "sq_error_at_records": err_big,
                "mse_theory_at_records": o.mse(f, n_records),
                "acc_records": int(x_acc.size),
                "acc_repeats": R,
                "mse_empirical": float(d.mean()),
                "mse_empirical_se": float(d.std(ddof=1) / math.sqrt(R)),
                "mse_theory": theo,
            }
        )
    print(f"LDP frequency oracles, N = {N}, ε = {eps}, {n_records} records (privatize + estimate)")
    print(f"{'oracle':<8}{'params':<10}{'privatize s':>12}{'estimate s':>12}{'records/s':>13}{'B/record':>10}"
          f"{'MSE emp (± se)':>24}{'MSE theory':>13}{'z':>7}")
    for r in rows:
        par = ",".join(f"{k}={v}" for k, v in r["params"].items())
        z = (r["mse_empirical"] - r["mse_theory"]) / r["mse_empirical_se"]
        emp = f"{r['mse_empirical']:.4g} ± {r['mse_empirical_se']:.2g}"
        print(f"{r['oracle']:<8}{par:<10}{r['privatize_s']:>12.3f}{r['estimate_s']:>12.3f}{r['records_per_s']:>13.3g}"
              f"{r['report_bytes_per_record']:>10.0f}{emp:>24}{r['mse_theory']:>13.4g}{z:>7.2f}")
    res = {"quick": quick, "rows": rows}
    (out / "ldp_oracles.json").write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default=str(pathlib.Path(__file__).resolve().parent / "results"))
    a = ap.parse_args()
    run(quick=a.quick, outdir=a.outdir)
