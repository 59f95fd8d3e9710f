"""Figure 1 of pml-histogram-laplace: TVD of PML- vs DP-calibrated Laplace histograms.

(a) mean TVD against ε for several k and α; (b) mean TVD against k for α = 0.05 and several ε.
Each point: ``repetitions`` independent databases of n = 1000 records drawn uniformly from k classes, each
released once with Laplace noise calibrated so that ε_PML(b', α) = ε (closed form,
:func:`pml_design.histogram.histogram_scale_for`) or ε_DP(b) = 2/b = ε, clipped to non-negative values
and rounded (Section III-B); TVD to the true empirical distribution. Error bars: ±2 standard errors of
the mean (≈ 95 % confidence interval); the CSV also has the standard deviation across repetitions.

Usage: ``python benchmarks/fig_histogram_fig1.py [--quick] [--outdir DIR]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import time
from collections.abc import Sequence

import numpy as np

from pml_design.histogram import histogram_dp_scale_for, histogram_scale_for
from pml_design.histogram.release import laplace_histogram, total_variation_distance
from pml_design.sweep import BACKEND_ENV, sweep

SEED = 20250101
N_RECORDS = 1000

FULL = {
    "repetitions": 10_000,
    "eps_a": list(np.round(np.geomspace(0.05, 2.0, 12), 4)),
    "ks_a": [2, 5, 10],
    "alphas_a": [0.01, 0.05, 0.1],
    "ks_b": list(range(2, 21)),
    "alpha_b": 0.05,
    "eps_b": [0.1, 0.5, 1.0],
}
QUICK = {
    "repetitions": 400,
    "eps_a": [0.05, 0.2, 1.0, 2.0],
    "ks_a": [2, 10],
    "alphas_a": [0.01, 0.1],
    "ks_b": [2, 5, 10, 20],
    "alpha_b": 0.05,
    "eps_b": [0.1, 1.0],
}


def tvd_stats(k: int, scale: float, repetitions: int, seed: int, n: int = N_RECORDS) -> tuple[float, float, float]:
    """Mean, std and s.e.m. of the TVD of the clipped, rounded Laplace histogram (fresh uniform data per run).

    The same ``seed`` gives the same databases and the same standard-Laplace draws for every scale
    (common random numbers), so curves are compared on identical randomness.
    """
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(k, 1.0 / k), size=repetitions)
    y = laplace_histogram(counts, scale, clip=True, round=True, rng=rng)
    tvd = total_variation_distance(y, counts)
    return float(tvd.mean()), float(tvd.std(ddof=1)), float(tvd.std(ddof=1) / np.sqrt(repetitions))


def figure1_rows(
    repetitions: int,
    eps_a: Sequence[float],
    ks_a: Sequence[int],
    alphas_a: Sequence[float],
    ks_b: Sequence[int],
    alpha_b: float,
    eps_b: Sequence[float],
    *,
    n: int = N_RECORDS,
    seed: int = SEED,
    progress: bool = False,
    backend: object = None,
    n_jobs: int | None = None,
) -> list[dict]:
    """All points of Figure 1 as rows (panel, k, alpha (None for DP), method, epsilon, scale, TVD stats).

    The points run through :func:`pml_design.sweep.sweep` (``backend``/``n_jobs`` as there: local processes by
    default, Dask or Ray on a cluster); the rows do not depend on the backend.
    """
    jobs = []
    for k in ks_a:
        for eps in eps_a:
            jobs.append(("a", k, None, "DP", eps, histogram_dp_scale_for(eps)))
            for a in alphas_a:
                if a <= 1.0 / k:
                    jobs.append(("a", k, a, "PML", eps, histogram_scale_for(eps, a, n_bins=k)))
    for k in ks_b:
        for eps in eps_b:
            jobs.append(("b", k, None, "DP", eps, histogram_dp_scale_for(eps)))
            if alpha_b <= 1.0 / k:
                jobs.append(("b", k, alpha_b, "PML", eps, histogram_scale_for(eps, alpha_b, n_bins=k)))
    tasks = [dict(panel=panel, k=k, alpha=a, method=method, epsilon=float(eps), scale=b, repetitions=repetitions,
                  seed=seed, n=n) for panel, k, a, method, eps, b in jobs]
    # seeds are explicit (common random numbers per k), so the sweep passes no generator: identical results on
    # every backend
    return sweep(_point, tasks, rng_arg=None, backend=backend, n_jobs=n_jobs, progress=progress,
                 desc="Figure 1").values


def _point(panel: str, k: int, alpha: float | None, method: str, epsilon: float, scale: float, repetitions: int,
           seed: int, n: int) -> dict:
    """One point of Figure 1 (a sweep task)."""
    mean, std, sem = tvd_stats(k, scale, repetitions, seed + 1000 * k, n)
    return {"panel": panel, "k": k, "alpha": alpha, "method": method, "epsilon": epsilon, "scale": scale,
            "tvd_mean": mean, "tvd_std": std, "tvd_sem": sem, "repetitions": repetitions, "n": n}


def _plot(rows: list[dict], cfg: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks_a = cfg["ks_a"]
    fig, axes = plt.subplots(1, len(ks_a) + 1, figsize=(4.2 * (len(ks_a) + 1), 3.6))
    for ax, k in zip(axes[:-1], ks_a):
        sel = [r for r in rows if r["panel"] == "a" and r["k"] == k]
        for a in [None, *cfg["alphas_a"]]:
            pts = sorted((r for r in sel if r["alpha"] == a), key=lambda r: r["epsilon"])
            if not pts:
                continue
            label = "DP" if a is None else f"PML, α={a:g}"
            ax.errorbar([r["epsilon"] for r in pts], [r["tvd_mean"] for r in pts],
                        yerr=[2 * r["tvd_sem"] for r in pts], label=label, marker="o", ms=3, capsize=2,
                        ls="--" if a is None else "-")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("mean TVD")
        ax.set_title(f"(a) k = {k}")
        ax.legend(fontsize=7)
    ax = axes[-1]
    sel = [r for r in rows if r["panel"] == "b"]
    for i, eps in enumerate(cfg["eps_b"]):
        for method in ("DP", "PML"):
            pts = sorted((r for r in sel if r["epsilon"] == eps and r["method"] == method), key=lambda r: r["k"])
            ax.errorbar([r["k"] for r in pts], [r["tvd_mean"] for r in pts], yerr=[2 * r["tvd_sem"] for r in pts],
                        label=f"{method}, ε={eps:g}", marker="o" if method == "PML" else "s", ms=3, capsize=2,
                        ls="--" if method == "DP" else "-", color=f"C{i}")
    ax.set_yscale("log")
    ax.set_xlabel("k")
    ax.set_ylabel("mean TVD")
    ax.set_title(f"(b) α = {cfg['alpha_b']:g}")
    ax.legend(fontsize=7)
    fig.suptitle(f"Laplace histograms, n = {N_RECORDS}, uniform classes, {cfg['repetitions']} repetitions "
                 "(bars: ±2 s.e.m.)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def qualitative_claims(rows: list[dict]) -> dict[str, bool]:
    """The paper's claims on Figure 1, evaluated on the rows.

    * ``pml_le_dp``: at every (k, ε), every PML curve's mean TVD ≤ the DP one.
    * ``larger_alpha_lower_tvd``: at every (k, ε) of panel (a), mean TVD is non-increasing in α.
    * ``gap_largest_at_small_eps``: for each (k, α) of panel (a), the DP − PML gap is largest at the
      smallest ε.
    * ``relative_gap_largest_at_large_eps`` (our observation, not the paper's): the *relative* gap
      (DP − PML)/DP is largest at the largest ε, because b_DP/b_PML grows from 1/(1 − α) at ε → 0 to ∞
      at ε → log(1/α).
    """
    def key(r):
        return (r["panel"], r["k"], r["epsilon"])

    dp = {key(r): r["tvd_mean"] for r in rows if r["method"] == "DP"}
    pml = [r for r in rows if r["method"] == "PML"]
    pml_le_dp = all(r["tvd_mean"] <= dp[key(r)] for r in pml)
    larger_alpha = True
    gap_small = True
    rel_large = True
    groups: dict = {}
    for r in pml:
        if r["panel"] == "a":
            groups.setdefault((r["k"], r["epsilon"]), []).append(r)
    for grp in groups.values():
        vals = [r["tvd_mean"] for r in sorted(grp, key=lambda r: r["alpha"])]
        larger_alpha &= all(np.diff(vals) <= 0)
    curves: dict = {}
    for r in pml:
        if r["panel"] == "a":
            curves.setdefault((r["k"], r["alpha"]), []).append(r)
    for pts in curves.values():
        pts = sorted(pts, key=lambda r: r["epsilon"])
        gaps = [dp[key(r)] - r["tvd_mean"] for r in pts]
        gap_small &= gaps[0] == max(gaps)
        rel = [g / dp[key(r)] for g, r in zip(gaps, pts)]
        rel_large &= rel[-1] == max(rel)
    return {"pml_le_dp": bool(pml_le_dp), "larger_alpha_lower_tvd": bool(larger_alpha),
            "gap_largest_at_small_eps": bool(gap_small),
            "relative_gap_largest_at_large_eps": bool(rel_large)}


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results", progress: bool = False,
        backend: object = None, n_jobs: int | None = None) -> dict:
    """Compute Figure 1, write ``fig_histogram_fig1.{png,csv,json}`` into ``outdir``, return a summary."""
    cfg = QUICK if quick else FULL
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if backend is None and quick:  # a few milliseconds of work: worker processes would only add start-up time
        backend = os.environ.get(BACKEND_ENV) or "sequential"
    rows = figure1_rows(**cfg, progress=progress, backend=backend, n_jobs=n_jobs)
    compute_s = time.perf_counter() - t0
    with open(out / "fig_histogram_fig1.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    _plot(rows, cfg, out / "fig_histogram_fig1.png")
    claims = qualitative_claims(rows)
    summary = {
        "name": "fig_histogram_fig1",
        "quick": quick,
        "points": len(rows),
        "repetitions": cfg["repetitions"],
        "compute_seconds": round(compute_s, 3),
        "total_seconds": round(time.perf_counter() - t0, 3),
        "claims": claims,
        "files": [str(out / f"fig_histogram_fig1.{e}") for e in ("png", "csv", "json")],
    }
    (out / "fig_histogram_fig1.json").write_text(json.dumps(summary, indent=2))
    print(f"{'panel':>5} {'k':>3} {'method':>6} {'alpha':>6} {'eps':>7} {'scale':>9} {'TVD':>8} {'sd':>8}")
    for r in rows:
        if quick or r["k"] in (2, 10, 20):
            a = "-" if r["alpha"] is None else f"{r['alpha']:g}"
            print(f"{r['panel']:>5} {r['k']:>3} {r['method']:>6} {a:>6} {r['epsilon']:7.3f} {r['scale']:9.4f} "
                  f"{r['tvd_mean']:8.5f} {r['tvd_std']:8.5f}")
    print(json.dumps({k: summary[k] for k in ("points", "repetitions", "compute_seconds", "claims")}))
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small run (a few seconds)")
    parser.add_argument("--outdir", default="benchmarks/results")
    parser.add_argument("--progress", action="store_true", help="show a progress bar")
    parser.add_argument("--backend", default=None, help="sweep backend: loky (default), threading, dask, ray")
    args = parser.parse_args()
    run(quick=args.quick, outdir=args.outdir, progress=args.progress, backend=args.backend)
