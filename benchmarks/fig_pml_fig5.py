"""Core paper, Fig. 5: Adult — empirical MI of the binary Laplace mechanism at ε = log 2 for several
failure probabilities δ, against m; δ = 0 is the ε-LDP mechanism (Remark 4). 100 shuffles.

Usage: ``python benchmarks/fig_pml_fig5.py [--quick] [--outdir DIR]``.
"""

from __future__ import annotations

import argparse
import os
import math
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _additive_figs as H  # noqa: E402
from fig_pml_fig4 import FEATURES, _feature_experiment, ms_grid  # noqa: E402

from pml_design.sweep import BACKEND_ENV, sweep  # noqa: E402

EPSILON = math.log(2)
DELTAS = (1e-3, 1e-6, 1e-9, 1e-12, 1e-15, 0.0)


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results", seed: int = H.SEED, *,
        progress: bool = False, backend: object = None, n_jobs: int | None = None) -> dict:
    """Run the figure (features through :func:`pml_design.sweep.sweep`; ``backend``/``n_jobs`` as there)."""
    out = H.outdir_path(outdir)
    ms = ms_grid(quick)
    reps = 10 if quick else 100
    if backend is None and quick:  # about a second of work: worker processes would only add start-up time
        backend = os.environ.get(BACKEND_ENV) or "sequential"
    # one sweep task per feature, seeded explicitly (seed + 10 + i): identical results on every backend
    tasks = [dict(feature=feat, ms=ms, epsilons=(EPSILON,), deltas=DELTAS, reps=reps, seed=seed + 10 + i)
             for i, feat in enumerate(FEATURES)]
    done = sweep(_feature_experiment, tasks, rng_arg=None, backend=backend, n_jobs=n_jobs, progress=progress,
                 desc="features").values
    results = {feat: r for feat, (r, _) in zip(FEATURES, done)}
    timings = {feat: t for feat, (_, t) in zip(FEATURES, done)}

    fig, axes = H.plt.subplots(1, 2, figsize=(11, 4))
    for ax, feat in zip(axes, FEATURES):
        r = results[feat]
        for i, d in enumerate(DELTAS):
            ax.semilogx(ms, r.mi_mean[i, 0], "-o" if d > 0 else "k--", ms=3,
                        label=f"$\\delta$ = {d:g}" if d > 0 else "$\\delta$ = 0 (LDP)")
        ax.set_xlabel("m")
        ax.set_ylabel("empirical MI [nats]")
        ax.set_title(f"{feat} ($\\varepsilon$ = log 2, {reps} shuffles)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "fig_pml_fig5.png", dpi=120)
    H.plt.close(fig)

    rows = []
    for feat in FEATURES:
        r = results[feat]
        for i, d in enumerate(DELTAS):
            for k, m in enumerate(ms):
                rows.append((feat, d, int(m), r.mi_mean[i, 0, k], r.mi_std[i, 0, k], float(np.mean(r.scale[i, 0, k]))))
    header = ["feature", "delta", "m", "mi", "mi_std", "mean_b"]
    H.write_csv(out / "fig_pml_fig5.csv", header, rows)
    H.print_table(header, [r for r in rows if r[2] == ms[-1]])
    print(f"timings (s): {timings}")
    summary = {
        "figure": "core paper Fig. 5",
        "seed": seed,
        "n_shuffles": reps,
        "epsilon": EPSILON,
        "deltas": DELTAS,
        "ms": ms,
        "seconds": timings,
        "features": {feat: {"mi": results[feat].mi_mean[:, 0], "mi_std": results[feat].mi_std[:, 0]} for feat in FEATURES},
    }
    return H.write_json(out / "fig_pml_fig5.json", summary)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--progress", action="store_true", help="show a progress bar")
    ap.add_argument("--backend", default=None, help="sweep backend: loky (default), threading, dask, ray")
    args = ap.parse_args()
    run(quick=args.quick, outdir=args.outdir, progress=args.progress, backend=args.backend)
