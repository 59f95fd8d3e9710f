"""Benchmarks for pml_design.flexible (Bansal et al., AISTATS 2022).

* STLap (Algorithm 1) and BucketHist (Algorithm 3) on a histogram with 10^6 items and 10^4 bars:
  time per release (median of repeats).
* Exact δ(ε) (privacy-loss distributions) for the counterexample sizes of the reading notes
  (q = τ|x| with K+1 bars of c items plus one item): time and the δ bracket vs the paper's δ*.
* W^∞_γ on 10^4 bars.
* Figure 3 / 4 at full size (100 data sets x 100 runs): wall time (quick mode: the quick figure).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np

from pml_design.flexible import bucket_hist, delta_star, exact_delta, lossy_winf, relative_q_bound, stlap, stlap_release


def _timeit(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results", *, progress: bool = False) -> dict:
    """Run the benchmarks, print a table, write ``bench_flexible.json`` into ``outdir``."""
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    bars, items = (10_000, 1_000_000)
    x = np.bincount(rng.integers(0, bars, size=items), minlength=bars)
    reps = 3 if quick else 20
    res: dict = {"n_items": int(x.sum()), "n_bars": bars}
    res["stlap_s"] = _timeit(lambda: stlap(x, 1e-4, 1.0, rng=1), reps)
    res["stlap_release_s"] = _timeit(lambda: stlap_release(x, 1e-4, 1.0, rng=1), reps)
    res["stlap_fixed_s"] = _timeit(lambda: stlap(x, 1e-4, 1.0, rng=1, q_mode="fixed", n_public=10**6), reps)
    res["buckethist_beta5_s"] = _timeit(lambda: bucket_hist(x, 0.05, 5.0, 1.0, rng=1), reps)
    res["buckethist_beta0.5_s"] = _timeit(lambda: bucket_hist(x, 0.05, 0.5, 1.0, rng=1), reps)
    y = stlap(x, 1e-4, 1.0, rng=2)
    res["lossy_winf_1e4_bars_s"] = _timeit(lambda: lossy_winf(x, y, 0.01), 1 if quick else 3)

    cases = [(1.0, 0.01, 49, 20), (0.5, 0.02, 39, 50), (1.0, 0.005, 199, 50)]
    if quick:
        cases = cases[:2]
    res["exact_delta"] = []
    for eps, tau, K, c in cases:
        xp = np.full(K + 1, c)
        xx = xp.copy()
        xx[0] += 1
        t0 = time.perf_counter()
        cur = exact_delta(xx, xp, tau, eps, [eps])
        dt = time.perf_counter() - t0
        N = int(xp.sum())
        e1, d1 = relative_q_bound(eps, tau, N, K)
        res["exact_delta"].append(dict(eps=eps, tau=tau, N=N, K=K, c=c, seconds=dt, paper_delta=delta_star(eps, tau * N),
                                       delta_lower=float(cur.delta_lower[0]), delta_upper=float(cur.delta_upper[0]),
                                       replacement_eps=e1, replacement_delta=d1))
    import importlib.util

    spec = importlib.util.spec_from_file_location("fig_flexible_fig3", pathlib.Path(__file__).with_name("fig_flexible_fig3.py"))
    fig_mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fig_mod)  # type: ignore[union-attr]
    fig_run = fig_mod.run

    t0 = time.perf_counter()
    fig_run(quick=quick, outdir=out, progress=progress)
    res["figure3_full_s" if not quick else "figure3_quick_s"] = time.perf_counter() - t0

    print(f"\nflexible benchmarks ({res['n_items']} items, {bars} bars)")
    for k, v in res.items():
        if k.endswith("_s"):
            print(f"  {k:<26} {v * 1e3:10.2f} ms")
    hdr = "(eps', delta')"
    print(f"  {'eps':>4} {'tau':>6} {'N':>6} {'K':>4} {'time s':>7} {'paper delta*':>13} {'exact delta':>22} {hdr:>24}")
    for r in res["exact_delta"]:
        print(f"  {r['eps']:4.1f} {r['tau']:6.3f} {r['N']:6d} {r['K']:4d} {r['seconds']:7.2f} {r['paper_delta']:13.3e}"
              f" [{r['delta_lower']:.3e}, {r['delta_upper']:.3e}] ({r['replacement_eps']:.3f}, {r['replacement_delta']:.2e})")
    with open(out / "bench_flexible.json", "w") as fh:
        json.dump(res, fh, indent=1)
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="pml_design.flexible benchmarks")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--progress", action="store_true")
    a = ap.parse_args()
    run(quick=a.quick, outdir=a.outdir, progress=a.progress)
