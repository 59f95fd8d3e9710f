"""Figure 3 / Figure 4 of Bansal et al. (AISTATS 2022), Section 6 and Appendix L: average actual and
flexible errors (% of the range) of STLap ("New") and the five baselines, for max / max_500 / mode.

Choices the paper leaves open (see docs/flexible.md, "Experiments"):

* ε grid: 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2 (log-spaced; the figure's axis is not readable); δ = 2^-20.
* New = STLap on one bar per integer (no bucketing) with q = q(ε, δ) = (2/ε) ln(1 + (e^ε-1)/(2δ))
  (Corollary 1 solved for q).  This q does not depend on the data, so the run is the *fixed-q*
  mechanism and is exactly (ε, F_q(-q+1)) = (ε, δ)-DP — a certified guarantee.
* Baselines as in :mod:`pml_design.flexible.baselines`.  Choosing-based = SanPoints of Beimel-Nissim-Stemmer
  (choosing mechanism restricted to non-empty bars, with its ⊥ gate; (ε, δ)-DP), J = 1 round for mode and
  J = 10 for max / max_k (``CHOOSING_ROUNDS``; errata E21).
* Undefined statistic of a sanitised histogram (no bar >= k, all bars 0): a uniformly random index
  (post-processing); the smooth-sensitivity mechanism maps an undefined f(x) to index 0.
* Flexible error: min over the values f(x') reachable by dropping <= floor(0.005 |x|) items.
* Data: (1) 10,000 Cauchy(45, 4) draws rounded, kept in 1..100, bars 91-100 emptied; (2) steps
  [1000x50, 1x50]; (3) as (1) without emptying; (4) steps [540x50, 490x50]; (5) 30 bars Poisson(250);
  (6) steps [130x120, 200x5, 185x85, 190x10, 130x80] with Poisson(step height) noise per bar.
* 100 data sets per distribution (deterministic ones repeat) x 100 runs per mechanism (footnote 8).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import time
from typing import Any, Callable

import numpy as np
from tqdm import tqdm

from pml_design.flexible import (
    UNDEFINED,
    choosing_histogram,
    evaluate_statistic,
    exponential_mechanism,
    flexible_error,
    propose_test_release,
    q_for_delta,
    smooth_sensitivity_mechanism,
    stability_histogram,
    stlap_with_q,
)
from pml_design.sweep import BACKEND_ENV, sweep

DELTA = 2.0 ** -20
FLEX_ALPHA = 0.005
EPS_GRID = [0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0]
MECHANISMS = ["New", "Exponential", "PTR", "SS", "Stability", "Choosing"]
#: SanPoints rounds J per statistic (public, data-independent): the mode needs only the highest bar, which
#: one choosing round finds with the whole selection budget; max / max_k need more released bars.
CHOOSING_ROUNDS = {"max": 10, "max_k": 10, "mode": 1}


def _steps(spec: list[tuple[int, int]]) -> np.ndarray:
    return np.concatenate([np.full(w, h) for h, w in spec]).astype(np.int64)


def _cauchy(rng: np.random.Generator, zero_tail: bool) -> np.ndarray:
    v = np.floor(45 + 4 * rng.standard_cauchy(10_000) + 0.5)
    v = v[(v >= 1) & (v <= 100)].astype(np.int64) - 1
    x = np.bincount(v, minlength=100)
    if zero_tail:
        x[90:] = 0
    return x


EXPERIMENTS: dict[int, dict[str, Any]] = {
    1: dict(stat="max", k=1, gen=lambda r: _cauchy(r, True), label="(1) max, Cauchy(45,4), last 10 bars empty"),
    2: dict(stat="max", k=1, gen=lambda r: _steps([(1000, 50), (1, 50)]), label="(2) max, steps [1000x50, 1x50]"),
    3: dict(stat="max_k", k=500, gen=lambda r: _cauchy(r, False), label="(3) max_500, Cauchy(45,4)"),
    4: dict(stat="max_k", k=500, gen=lambda r: _steps([(540, 50), (490, 50)]), label="(4) max_500, steps [540x50, 490x50]"),
    5: dict(stat="mode", k=1, gen=lambda r: r.poisson(250, 30).astype(np.int64), label="(5) mode, 30 bars Poisson(250)"),
    6: dict(stat="mode", k=1,
            gen=lambda r: r.poisson(_steps([(130, 120), (200, 5), (185, 85), (190, 10), (130, 80)])).astype(np.int64),
            label="(6) mode, noisy steps (B=300)"),
}


def _outputs(mech: str, x: np.ndarray, stat: str, k: int, eps: float, runs: int, rng: np.random.Generator) -> np.ndarray:
    B = x.size
    if mech == "New":
        Y = stlap_with_q(x, q_for_delta(eps, DELTA), eps, rng=rng, n_draws=runs)
    elif mech == "Stability":
        Y = stability_histogram(x, eps, DELTA, n_runs=runs, rng=rng)
    elif mech == "Choosing":
        Y = choosing_histogram(x, eps, DELTA, n_rounds=CHOOSING_ROUNDS[stat], n_runs=runs, rng=rng)
    elif mech == "Exponential":
        return exponential_mechanism(x, stat, eps, k=k, n_runs=runs, rng=rng)
    elif mech == "PTR":
        return propose_test_release(x, stat, eps, DELTA, k=k, n_runs=runs, rng=rng)
    elif mech == "SS":
        return smooth_sensitivity_mechanism(x, stat, eps, DELTA, k=k, n_runs=runs, rng=rng)
    else:  # pragma: no cover
        raise ValueError(mech)
    o = np.asarray(evaluate_statistic(Y, stat, k))
    undef = o == UNDEFINED
    return np.where(undef, rng.integers(0, B, size=o.shape), o)


def run_experiment(exp: int, eps_grid: list[float], n_datasets: int, runs: int, seed: int, progress: bool) -> list[dict]:
    spec = EXPERIMENTS[exp]
    rng = np.random.default_rng([seed, exp])
    datasets = [spec["gen"](rng) for _ in range(n_datasets)]
    rows = []
    acc: dict[tuple[str, float], list[np.ndarray]] = {}
    for x in tqdm(datasets, desc=f"exp {exp}", disable=not progress, leave=False):
        B = x.size
        for eps in eps_grid:
            for mech in MECHANISMS:
                o = _outputs(mech, x, spec["stat"], spec["k"], eps, runs, rng)
                a = 100 * flexible_error(x, o, spec["stat"], 0.0, spec["k"]) / B
                f = 100 * flexible_error(x, o, spec["stat"], FLEX_ALPHA, spec["k"]) / B
                acc.setdefault((mech, eps), []).append(np.stack([a, f]))
    for (mech, eps), lst in acc.items():
        arr = np.concatenate(lst, axis=1)  # (2, n_datasets*runs)
        rows.append(dict(experiment=exp, statistic=spec["stat"] + (f"_{spec['k']}" if spec["stat"] == "max_k" else ""),
                         mechanism=mech, epsilon=eps, delta=DELTA, actual_error_pct=float(arr[0].mean()),
                         flexible_error_pct=float(arr[1].mean()),
                         actual_se=float(arr[0].std(ddof=1) / np.sqrt(arr.shape[1])) if arr.shape[1] > 1 else 0.0,
                         flexible_se=float(arr[1].std(ddof=1) / np.sqrt(arr.shape[1])) if arr.shape[1] > 1 else 0.0,
                         n_samples=int(arr.shape[1])))
    return rows


def _plot(rows: list[dict], exps: list[int], path: pathlib.Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = dict(zip(MECHANISMS, ["C3", "C0", "C1", "C2", "C4", "C5"]))
    ncol = 2 if len(exps) <= 4 else 3
    nrow = int(np.ceil(len(exps) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 3.8 * nrow), squeeze=False)
    for ax, exp in zip(axes.ravel(), exps):
        for mech in MECHANISMS:
            sel = sorted((r for r in rows if r["experiment"] == exp and r["mechanism"] == mech), key=lambda r: r["epsilon"])
            if not sel:
                continue
            e = [r["epsilon"] for r in sel]
            ax.plot(e, [r["actual_error_pct"] for r in sel], ":", color=colors[mech])
            ax.plot(e, [r["flexible_error_pct"] for r in sel], "-", color=colors[mech], label=mech)
        ax.set_xscale("log")
        ax.set_xlabel("ε (δ = 2^-20)")
        ax.set_ylabel("error, % of range")
        ax.set_title(EXPERIMENTS[exp]["label"], fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(exps):]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=7, title="solid: flexible (∂_drop 0.005)\ndotted: actual", title_fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results", *, progress: bool = False,
        seed: int = 20220328, backend: object = None, n_jobs: int | None = None) -> dict:
    """Reproduce Figures 3 and 4 (App. L); write CSV, JSON and PNG files into ``outdir``.

    The experiments run through :func:`pml_design.sweep.sweep` (``backend``/``n_jobs`` as there; each experiment
    seeds its own generator from ``[seed, exp]``, so the rows do not depend on the backend).
    """
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    eps_grid = [0.2, 0.5, 1.0] if quick else EPS_GRID
    n_datasets, runs = (2, 10) if quick else (100, 100)
    t0 = time.perf_counter()
    if backend is None and quick:  # under a second of work: worker processes would only add start-up time
        backend = os.environ.get(BACKEND_ENV) or "sequential"
    tasks = [dict(exp=exp, eps_grid=eps_grid, n_datasets=n_datasets, runs=runs, seed=seed, progress=False)
             for exp in EXPERIMENTS]
    per_exp = sweep(run_experiment, tasks, rng_arg=None, backend=backend, n_jobs=n_jobs, progress=progress,
                    desc="experiments").values
    rows: list[dict] = [r for exp_rows in per_exp for r in exp_rows]
    elapsed = time.perf_counter() - t0
    with open(out / "flexible_fig3.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    _plot(rows, [1, 4, 5, 6], out / "flexible_fig3.png", "Figure 3 (Bansal et al. 2022), reproduced")
    _plot(rows, [1, 2, 3, 4, 5, 6], out / "flexible_fig4.png", "Figure 4 (Bansal et al. 2022), reproduced")
    print(f"{'exp':>3} {'mechanism':<12} " + " ".join(f"{e:>11.2f}" for e in eps_grid))
    for exp in EXPERIMENTS:
        for mech in MECHANISMS:
            sel = sorted((r for r in rows if r["experiment"] == exp and r["mechanism"] == mech), key=lambda r: r["epsilon"])
            print(f"{exp:>3} {mech:<12} " + " ".join(f"{r['actual_error_pct']:5.1f}/{r['flexible_error_pct']:5.1f}" for r in sel))
    print("(cells: actual / flexible error, % of range)")
    summary = dict(quick=quick, seed=seed, eps_grid=eps_grid, delta=DELTA, n_datasets=n_datasets, runs=runs,
                   seconds=elapsed, files=["flexible_fig3.csv", "flexible_fig3.png", "flexible_fig4.png"],
                   rows=rows)
    with open(out / "flexible_fig3.json", "w") as fh:
        json.dump(summary, fh, indent=1)
    return {k: v for k, v in summary.items() if k != "rows"} | {"n_rows": len(rows)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("--backend", default=None, help="sweep backend: loky (default), threading, dask, ray")
    a = ap.parse_args()
    print(json.dumps(run(quick=a.quick, outdir=a.outdir, progress=a.progress, backend=a.backend), indent=1))
