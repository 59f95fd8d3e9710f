"""Core paper, Fig. 4: Adult (income, sex) — empirical MI of the PML-calibrated binary Laplace mechanism
(δ = 1e-9, eq. (16)) versus the ε-LDP one (b = 2/ε), averaged over 100 shuffles, against m, several ε.

Also the speed benchmark of the issue: the full-size run (100 shuffles, all m and ε, both features) is timed.

Usage: ``python benchmarks/fig_pml_fig4.py [--quick] [--outdir DIR]``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _additive_figs as H  # noqa: E402

from pml_design.additive.adult import adult_laplace_experiment  # noqa: E402
from pml_design.sweep import BACKEND_ENV, sweep  # noqa: E402

EPSILONS = (0.25, 0.5, 0.75, 1.0)
DELTA = 1e-9
FEATURES = ("income", "sex")


def ms_grid(quick: bool) -> np.ndarray:
    if quick:
        return np.array([100, 1000, 10_000, 48_842])
    return np.unique(np.round(np.logspace(2, np.log10(48_842), 15)).astype(np.int64))


def _feature_experiment(feature: str, ms: object, epsilons: object, deltas: object, reps: int, seed: int) -> tuple:
    """One feature's experiment and its run time (a sweep task)."""
    t0 = time.perf_counter()
    res = adult_laplace_experiment(feature, ms, epsilons, deltas, reps, rng=seed)
    return res, time.perf_counter() - t0


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results", seed: int = H.SEED, *,
        progress: bool = False, backend: object = None, n_jobs: int | None = None) -> dict:
    """Run the figure (features through :func:`pml_design.sweep.sweep`; ``backend``/``n_jobs`` as there)."""
    out = H.outdir_path(outdir)
    ms = ms_grid(quick)
    reps = 10 if quick else 100
    if backend is None and quick:  # about a second of work: worker processes would only add start-up time
        backend = os.environ.get(BACKEND_ENV) or "sequential"
    # one sweep task per feature, seeded explicitly (seed + i): identical results on every backend
    tasks = [dict(feature=feat, ms=ms, epsilons=EPSILONS, deltas=(DELTA, 0.0), reps=reps, seed=seed + i)
             for i, feat in enumerate(FEATURES)]
    done = sweep(_feature_experiment, tasks, rng_arg=None, backend=backend, n_jobs=n_jobs, progress=progress,
                 desc="features").values
    results = {feat: r for feat, (r, _) in zip(FEATURES, done)}
    timings = {feat: t for feat, (_, t) in zip(FEATURES, done)}

    fig, axes = H.plt.subplots(1, 2, figsize=(11, 4), sharey=False)
    for ax, feat in zip(axes, FEATURES):
        r = results[feat]
        for j, eps in enumerate(EPSILONS):
            line = ax.semilogx(ms, r.mi_mean[0, j], "-o", ms=3, label=f"PML, $\\varepsilon$={eps:g}")
            ax.semilogx(ms, r.mi_mean[1, j], "--", color=line[0].get_color(), label=f"LDP, $\\varepsilon$={eps:g}")
        ax.set_xlabel("m")
        ax.set_ylabel("empirical MI [nats]")
        ax.set_title(f"{feat} ($\\delta$ = {DELTA:g}, {reps} shuffles)")
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "fig_pml_fig4.png", dpi=120)
    H.plt.close(fig)

    rows = []
    for feat in FEATURES:
        r = results[feat]
        for j, eps in enumerate(EPSILONS):
            for k, m in enumerate(ms):
                rows.append((feat, eps, int(m), r.mi_mean[0, j, k], r.mi_std[0, j, k], r.mi_mean[1, j, k],
                             r.mi_std[1, j, k], float(np.mean(r.scale[0, j, k])), 2.0 / eps))
    header = ["feature", "epsilon", "m", "mi_pml", "mi_pml_std", "mi_ldp", "mi_ldp_std", "mean_b_pml", "b_ldp"]
    H.write_csv(out / "fig_pml_fig4.csv", header, rows)
    H.print_table(header, [r for r in rows if r[2] in (ms[0], ms[len(ms) // 2], ms[-1])])
    print(f"timings (s): {timings}, total {sum(timings.values()):.2f}")
    summary = {
        "figure": "core paper Fig. 4",
        "seed": seed,
        "n_shuffles": reps,
        "delta": DELTA,
        "epsilons": EPSILONS,
        "ms": ms,
        "seconds": timings,
        "seconds_total": sum(timings.values()),
        "features": {
            feat: {
                "mi_pml": results[feat].mi_mean[0],
                "mi_ldp": results[feat].mi_mean[1],
                "mi_pml_std": results[feat].mi_std[0],
                "mi_ldp_std": results[feat].mi_std[1],
                "mean_scale_pml": results[feat].scale[0].mean(-1),
                "n_unreachable": results[feat].n_unreachable,
            }
            for feat in FEATURES
        },
    }
    return H.write_json(out / "fig_pml_fig4.json", summary)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--progress", action="store_true", help="show a progress bar")
    ap.add_argument("--backend", default=None, help="sweep backend: loky (default), threading, dask, ray")
    args = ap.parse_args()
    run(quick=args.quick, outdir=args.outdir, progress=args.progress, backend=args.backend)
