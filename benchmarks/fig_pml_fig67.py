"""Core paper, Fig. 6 and Fig. 7: (ε*, δ*)-curves of the binary Gaussian mechanism versus the pLDP mechanism.

Fig. 6: P̂ = (0.5, 0.5) with (a) σ = 1.5 and (b) σ = 2; Fig. 7: P̂ = (0.3, 0.7), σ = 1.5. For each m the radius
β = β*(δ2) of eq. (14) with δ2 = 1e-6; δ1(ε) of eq. (17) is the supremum over B_β(P̂) (computed to high
accuracy, not by grid search); ε* = ε − log(1 − β e^ε/2) and δ* = δ1 + δ2 − δ1 δ2. The baseline is the
pLDP mechanism of [34, Theorem 8] with Δ = 2 at the same σ: δ_pLDP(ε) = erfc((σ²ε/2 − 1)/(√2σ)).

The summary also reports the accuracy of δ1 against an exhaustive grid over the ball (10⁶ points in the full
run, 10⁵ in quick mode), as the paper computed it.

Usage: ``python benchmarks/fig_pml_fig67.py [--quick] [--outdir DIR]``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _additive_figs as H  # noqa: E402

from pml_design.additive.gaussian import (  # noqa: E402
    gaussian_delta1,
    gaussian_pml_curve,
    gaussian_violation_probability,
    pldp_gaussian_delta,
)

DELTA2 = 1e-6
MS = (100, 1000, 10_000, 100_000)
CONFIGS = (
    ("fig6a", 1.5, 0.5),
    ("fig6b", 2.0, 0.5),
    ("fig7", 1.5, 0.3),
)


def delta1_accuracy(n_grid: int, n_cases: int, rng: np.random.Generator) -> dict:
    """Compare gaussian_delta1 with an exhaustive n_grid-point grid over the ball, on random cases."""
    rel, below, t_ours, t_grid = [], 0, 0.0, 0.0
    for _ in range(n_cases):
        eps = float(rng.uniform(0.0, 1.5))
        sigma = float(rng.choice([1.5, 2.0]))
        p_hat = float(rng.choice([0.5, 0.3]))
        beta = float(rng.uniform(0.005, 0.6))
        t0 = time.perf_counter()
        ours = gaussian_delta1(eps, sigma, p_hat, beta)
        t1 = time.perf_counter()
        lo, hi = max(0.0, p_hat - beta / 2), min(1.0, p_hat + beta / 2)
        grid = float(np.max(gaussian_violation_probability(eps, sigma, np.linspace(lo, hi, n_grid))))
        t2 = time.perf_counter()
        t_ours += t1 - t0
        t_grid += t2 - t1
        if grid > 0:
            rel.append((ours - grid) / grid)
        below += ours < grid * (1 - 1e-15)
    rel_arr = np.array(rel)
    return {
        "grid_points": n_grid,
        "cases": n_cases,
        "max_rel_excess_over_grid": float(rel_arr.max()),
        "min_rel_excess_over_grid": float(rel_arr.min()),
        "cases_below_grid": int(below),
        "mean_ms_ours": 1e3 * t_ours / n_cases,
        "mean_ms_grid": 1e3 * t_grid / n_cases,
    }


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results", seed: int = H.SEED) -> dict:
    out = H.outdir_path(outdir)
    eps_grid = np.linspace(0.0, 3.0, 31 if quick else 241)
    ms = (100, 10_000) if quick else MS
    curves: dict = {}
    for name, sigma, p_hat in CONFIGS:
        curves[name] = {str(m): gaussian_pml_curve(eps_grid, sigma, p_hat, m, DELTA2) for m in ms}
    pldp_eps = eps_grid[eps_grid > 0]

    fig, axes = H.plt.subplots(1, 3, figsize=(15, 4))
    for ax, (name, sigma, p_hat) in zip(axes, CONFIGS):
        for m in ms:
            c = curves[name][str(m)]
            ax.semilogy(c["epsilon_star"], c["delta_star"], label=f"PML, m = {m:g}")
        ax.semilogy(pldp_eps, [pldp_gaussian_delta(e, sigma) for e in pldp_eps], "k--", label="pLDP [34]")
        ax.axhline(DELTA2, color="grey", lw=0.5)
        ax.set_xlim(0, 3)
        ax.set_ylim(1e-8, 1.5)
        ax.set_xlabel("$\\varepsilon^*$")
        ax.set_ylabel("$\\delta^*$")
        ax.set_title(f"{name}: $\\sigma$ = {sigma}, $\\hat P_X$ = ({p_hat}, {1 - p_hat:.1f})")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "fig_pml_fig67.png", dpi=120)
    H.plt.close(fig)

    rows = []
    for name, sigma, p_hat in CONFIGS:
        for m in ms:
            c = curves[name][str(m)]
            for e, es, d1, ds in zip(c["epsilon"], c["epsilon_star"], c["delta1"], c["delta_star"]):
                rows.append((name, sigma, p_hat, m, e, es, d1, ds, pldp_gaussian_delta(es, sigma) if es > 0 else 1.0))
    header = ["config", "sigma", "p_hat_minus", "m", "epsilon", "epsilon_star", "delta1", "delta_star", "delta_pldp_at_eps_star"]
    H.write_csv(out / "fig_pml_fig67.csv", header, rows)

    acc = delta1_accuracy(10**5 if quick else 10**6, 5 if quick else 40, np.random.default_rng(seed))
    table = []
    for name, sigma, p_hat in CONFIGS:
        for m in ms:
            c = curves[name][str(m)]
            for target in (0.5, 1.0):
                i = int(np.argmin(np.abs(c["epsilon_star"] - target))) if c["epsilon_star"].size else -1
                if i >= 0:
                    es = float(c["epsilon_star"][i])
                    table.append((name, m, es, float(c["delta_star"][i]), pldp_gaussian_delta(es, sigma)))
    H.print_table(["config", "m", "eps*", "delta*", "delta_pLDP(eps*)"], table)
    print("delta1 vs exhaustive grid:", acc)
    summary = {
        "figure": "core paper Fig. 6 and Fig. 7",
        "delta2": DELTA2,
        "ms": ms,
        "configs": {
            name: {
                "sigma": sigma,
                "p_hat_minus": p_hat,
                "curves": {m: {k: v for k, v in c.items()} for m, c in curves[name].items()},
                "pldp": {"epsilon": pldp_eps, "delta": [pldp_gaussian_delta(e, sigma) for e in pldp_eps]},
            }
            for name, sigma, p_hat in CONFIGS
        },
        "delta1_accuracy": acc,
    }
    return H.write_json(out / "fig_pml_fig67.json", summary)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    args = ap.parse_args()
    run(quick=args.quick, outdir=args.outdir)
