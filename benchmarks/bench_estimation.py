"""Frequency estimation on Adult: the PML estimation design against the local-DP frequency oracles.

For every categorical attribute of Adult and ε ∈ {0.25, 0.5, 1, 2, 4}, δ = 1e-6: a random split takes 5 000
records to estimate P̂ (ℓ1 radius β*(δ)), the PML design minimises the asymptotic estimation error over
``M(ε, B_β(P̂))`` (``utility="frequency_estimation"``, evaluated at the add-½ smoothed P̂), and the remaining
~43 800 records are privatized by it and by GRR, OUE, OLH and subset selection at the same ε (each ε-LDP, hence
ε-PML for every distribution). Errors (L1, L2) are against the privatized records' own empirical distribution;
the PML estimate is the MLE (IBU), the LDP estimates are the standard unbiased ones projected onto the simplex.

Usage: ``python -m benchmarks.bench_estimation [--splits 2] [--seeds 10] [--time-limit 30] [--quick]``. Writes
``benchmarks/results/estimation.json`` and ``estimation.png`` and prints the Markdown table.

Alphabet sizes (issue 21): ``python -m benchmarks.bench_estimation --sizes [--quick]``. Zipf (P ∝ 1/i^1.1)
N = 50, 100, 300, 1 000, 3 000 and Adult native-country (N = 41), ε ∈ {0.5, 1, 2, 4}: P̂ from 5 000 rows,
δ = 1e-6, ``design_from_samples(..., utility="frequency_estimation", allow_zero=True)`` with time limits 30 s
(N ≤ 105), 60 s (N = 300), 120 s (N ≥ 1 000); the *exact* per-report error ``tr F⁻¹ − ‖P‖²`` at the true P against
every oracle's exact error and the LDP optimum (subset selection at its best k over all k, GRR, OUE, OLH, Hadamard
response), wall time, outputs and the proven relative gap. Writes ``estimation_sizes.json`` / ``.png``
(``estimation_sizes_quick.*`` with ``--quick``: N = 50 and 300, ε ∈ {1, 4}, 5 s limits).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ATTRIBUTES = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]
EPSILONS = [0.25, 0.5, 1.0, 2.0, 4.0]
ORACLES = ["GRR", "OUE", "OLH", "SS"]


def _errors(est: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    d = est - truth
    return float(np.abs(d).sum()), float(np.sqrt(d @ d))


def run(
    quick: bool = False,
    outdir: str | pathlib.Path | None = None,
    *,
    attributes: list[str] = ATTRIBUTES,
    epsilons: list[float] = EPSILONS,
    splits: int = 2,
    seeds: int = 10,
    time_limit: float = 30.0,
    m: int = 5000,
    delta: float = 1e-6,
) -> dict:
    """The harness contract (``run(quick=..., outdir=...)``); quick = two attributes, three ε, 1 × 3 runs."""
    import pml_design as pml

    if quick:
        attributes, epsilons, splits, seeds, time_limit = ["relationship", "race"], [0.5, 1.0, 2.0], 1, 3, 10.0

    adult = pml.load_adult()
    oracles = {"GRR": pml.grr, "OUE": pml.oue, "OLH": pml.olh, "SS": pml.subset_selection}
    cells = []
    for attr in attributes:
        codes, cats = adult.categorical(attr)
        n = len(cats)
        for eps in epsilons:
            errs: dict[str, list] = {k: [] for k in ["PML", *ORACLES]}
            times, outs, mse_theory = [], [], {k: [] for k in ["PML", *ORACLES]}
            for split in range(splits):
                perm = np.random.default_rng(1000 + split).permutation(codes.size)
                sample, rest = codes[perm[:m]], codes[perm[m:]]
                cnt = np.bincount(sample, minlength=n)
                p_hat = cnt / m
                prior = (cnt + 0.5) / (m + n / 2)
                beta = pml.l1_radius(m, n, delta)
                t0 = time.perf_counter()
                res = pml.design(pml.L1Ball(p_hat, beta), eps, utility="frequency_estimation", prior=prior,
                                 solver_options={"time_limit": time_limit})
                times.append(time.perf_counter() - t0)
                outs.append(res.matrix.shape[1])
                assert pml.leakage_capacity(res.matrix, pml.L1Ball(p_hat, beta)) <= eps + 1e-12
                truth = np.bincount(rest, minlength=n) / rest.size
                mech = res.mechanism
                mse_theory["PML"].append(res.utility)
                for name in ORACLES:
                    mse_theory[name].append(oracles[name](n, eps).mse(prior, 1, inputs="iid"))
                for s in range(seeds):
                    rng = np.random.default_rng([split, s, int(eps * 100)])
                    est = mech.estimate(mech.privatize(rest, rng=rng))
                    errs["PML"].append(_errors(est, truth))
                    for name in ORACLES:
                        o = oracles[name](n, eps)
                        errs[name].append(_errors(o.estimate(o.privatize(rest, rng=rng)), truth))
            cell = {
                "attribute": attr,
                "n": n,
                "epsilon": eps,
                "design_time_s": float(np.max(times)),
                "n_outputs": int(np.max(outs)),
                "runs": splits * seeds,
            }
            for k, v in errs.items():
                a = np.array(v)
                cell[k] = {
                    "l1": float(a[:, 0].mean()),
                    "l2": float(a[:, 1].mean()),
                    "l2_se": float(a[:, 1].std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else 0.0,
                    "mse_per_report": float(np.mean(mse_theory[k])),
                }
            best = min(ORACLES, key=lambda k: cell[k]["l2"])
            cell["best_ldp"] = best
            cell["ratio_l2"] = cell["PML"]["l2"] / cell[best]["l2"]
            cells.append(cell)
            print(f"{attr:15s} N={n:2d} eps={eps:<4} PML L2 {cell['PML']['l2']:.4f}  best LDP ({best}) "
                  f"{cell[best]['l2']:.4f}  ratio {cell['ratio_l2']:.3f}  design {cell['design_time_s']:.1f}s", flush=True)
    out = {"quick": quick, "config": {"m": m, "delta": delta, "splits": splits, "seeds": seeds, "time_limit": time_limit},
           "cells": cells}
    out.update(summarize(cells))
    outdir = pathlib.Path(outdir) if outdir else HERE / "results"
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / ("estimation_quick.json" if quick else "estimation.json")).write_text(json.dumps(out, indent=1))
    _plot(out, outdir / ("estimation_quick.png" if quick else "estimation.png"))
    print(markdown_table(out))
    return out


def summarize(cells: list[dict]) -> dict:
    """Geometric-mean and worst ratio PML / best LDP (L2), over the cells where the best LDP error is > 0 and
    PML's is > 0 (cells where PML recovers the distribution exactly are counted separately)."""
    ratios = np.array([c["ratio_l2"] for c in cells])
    pos = ratios > 0
    return {
        "geomean_ratio_l2": float(np.exp(np.log(ratios[pos]).mean())) if pos.any() else 0.0,
        "worst_ratio_l2": float(ratios.max()),
        "cells_exact": int(np.sum(~pos)),
        "cells_pml_not_worse": int(np.sum([c["PML"]["l2"] <= c[c["best_ldp"]]["l2"] + 2 * c["PML"]["l2_se"] for c in cells])),
    }


def markdown_table(out: dict) -> str:
    """The README's headline table, rendered from the JSON (mean L2 error; ratio = PML / best LDP oracle)."""
    lines = [
        "| attribute (N) | ε | PML design | GRR | OUE | OLH | SS | PML / best LDP |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in out["cells"]:
        lines.append(
            f"| {c['attribute']} ({c['n']}) | {c['epsilon']:g} | **{c['PML']['l2']:.4f}** | "
            + " | ".join(f"{c[k]['l2']:.4f}" for k in ORACLES)
            + f" | {c['ratio_l2']:.2f} |"
        )
    cfg = out["config"]
    out = {**out, **summarize(out["cells"])}
    lines.append("")
    lines.append(
        f"Mean L2 error over {cfg['splits']} random splits × {cfg['seeds']} privatizations (m = {cfg['m']}, "
        f"δ = {cfg['delta']:g}); geometric-mean ratio PML / best LDP = {out['geomean_ratio_l2']:.3f}, worst "
        f"{out['worst_ratio_l2']:.3f}; PML not worse (within 2 s.e.) in {out['cells_pml_not_worse']} of {len(out['cells'])} cells"
        + (f"; in {out['cells_exact']} cells (sex, large ε) PML may release X itself (ε ≥ −log min P), error 0, "
           "left out of the geometric mean." if out["cells_exact"] else ".")
    )
    return "\n".join(lines)


def _plot(out: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    attrs = list(dict.fromkeys(c["attribute"] for c in out["cells"]))
    fig, axes = plt.subplots(2, (len(attrs) + 1) // 2, figsize=(4 * ((len(attrs) + 1) // 2), 7), squeeze=False)
    for ax, attr in zip(axes.ravel(), attrs):
        cs = [c for c in out["cells"] if c["attribute"] == attr]
        x = [c["epsilon"] for c in cs]
        for k in ["PML", *ORACLES]:
            ax.plot(x, [c[k]["l2"] for c in cs], marker="o", lw=2.5 if k == "PML" else 1, label=k)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{attr} (N={cs[0]['n']})")
        ax.set_xlabel("ε")
    axes.ravel()[0].set_ylabel("mean L2 error")
    axes.ravel()[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------------------------------------
# alphabet sizes (issue 21): exact errors, PML against every oracle and the LDP optimum
# ----------------------------------------------------------------------------------------------------------
SIZES = [50, 100, 300, 1000, 3000]
SIZE_EPSILONS = [0.5, 1.0, 2.0, 4.0]
SIZE_ORACLES = ["GRR", "OUE", "OLH", "SS", "HR"]


def size_time_limit(n: int) -> float:
    """The issue's time limits: 30 s for N ≤ 105, 60 s for N = 300, 120 s for N ≥ 1 000."""
    return 30.0 if n <= 105 else 60.0 if n <= 300 else 120.0


def _size_columns(quick: bool, sizes: list[int]) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, true P, the 5 000-row sample's codes) per column."""
    import pml_design as pml

    cols = []
    if not quick:
        codes, cats = pml.load_adult().categorical("native-country")
        p = np.bincount(codes, minlength=len(cats)) / codes.size
        sample = codes[np.random.default_rng(41).permutation(codes.size)[:5000]]
        cols.append(("Adult native-country", p, sample))
    for n in sizes:
        p = 1.0 / np.arange(1, n + 1) ** 1.1
        p /= p.sum()
        cols.append((f"Zipf {n}", p, np.random.default_rng(n).choice(n, size=5000, p=p)))
    return cols


def run_sizes(quick: bool = False, outdir: str | pathlib.Path | None = None, *, sizes: list[int] | None = None,
              epsilons: list[float] | None = None, time_limit: float | None = None, merge: bool = False,
              adult: bool = True) -> dict:
    """The alphabet-size grid (module docstring); writes the JSON after every cell (atomically).

    ``merge``: keep the cells of the existing JSON that this run does not redo (same column and ε are replaced).
    """
    import warnings

    import pml_design as pml
    from pml_design.mechanisms.frequency_oracles import ldp_optimum

    sizes = sizes or ([50, 300] if quick else SIZES)
    epsilons = epsilons or ([1.0, 4.0] if quick else SIZE_EPSILONS)
    oracles = {"GRR": pml.grr, "OUE": pml.oue, "OLH": pml.olh, "SS": pml.subset_selection, "HR": pml.hadamard_response}
    outdir = pathlib.Path(outdir) if outdir else HERE / "results"
    outdir.mkdir(parents=True, exist_ok=True)
    stem = "estimation_sizes_quick" if quick else "estimation_sizes"
    cells: list[dict] = []
    out = {"quick": quick, "config": {"m": 5000, "delta": 1e-6, "zipf_exponent": 1.1}, "cells": cells}
    old = json.loads((outdir / f"{stem}.json").read_text())["cells"] if merge and (outdir / f"{stem}.json").exists() else []
    columns = [c for c in _size_columns(quick, sizes) if adult or c[0].startswith("Zipf")]
    redo = {(name, e) for name, _, _ in columns for e in epsilons}
    cells.extend(c for c in old if (c["column"], c["epsilon"]) not in redo)
    for name, p, sample in columns:
        n = p.shape[0]
        tl = time_limit or (5.0 if quick else size_time_limit(n))
        for eps in epsilons:
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                ed = pml.design_from_samples(sample, n, epsilon=eps, delta=1e-6, utility="frequency_estimation",
                                             allow_zero=True, solver_options={"time_limit": tl})
            wall = time.perf_counter() - t0
            res = ed.result
            err = float(pml.estimation_mse(res.matrix, p))
            best = ldp_optimum(n, eps, p)
            lower = float(res.lower_bound)
            cell = {
                "column": name, "n": n, "epsilon": eps, "time_limit": tl, "wall_s": wall,
                "n_outputs": int(res.matrix.shape[1]), "iterations": int(res.info.get("iterations", 0)),
                "pml_error": err, "pml_error_at_prior": float(res.utility),
                "oracles": {k: float(f(n, eps).mse(p, 1, inputs="iid")) for k, f in oracles.items()},
                "ldp_optimum": best.mse, "ldp_optimum_name": best.name, "ldp_optimum_k": best.k,
                "ratio": err / best.mse,
                "gap": (res.utility - lower) / res.utility if np.isfinite(lower) else float("inf"),
                "ldp_seed": res.info.get("ldp_seed"), "source": res.info.get("source"),
                "warnings": [str(w.message)[:160] for w in rec],
                # the moment bound run beside the design (docs/design.md §7.4): its value and the relaxed master's
                # over its last pool, which is at least the relaxation's optimum, so 1 − relaxed/error is the
                # smallest gap this relaxation could prove for this design
                "background_bound": res.info.get("background_bound"),
            }
            bg = cell["background_bound"] or {}
            relaxed = bg.get("relaxed")
            cell["relaxation_floor"] = (max(0.0, 1.0 - relaxed / res.utility)
                                        if relaxed is not None and np.isfinite(relaxed) else None)
            cells.append(cell)
            cells.sort(key=lambda c: (c["n"] if c["column"].startswith("Zipf") else 0, c["epsilon"]))
            print(f"{name:22s} eps={eps:<4} ratio {cell['ratio']:.3f}  error {err:.5g}  LDP opt {best.name} "
                  f"{best.mse:.5g}  {wall:.1f}s/{tl:g}s  outputs {cell['n_outputs']}  gap {cell['gap']:.3g}", flush=True)
            tmp = outdir / f".{stem}.json.tmp"
            tmp.write_text(json.dumps(out, indent=1))
            tmp.replace(outdir / f"{stem}.json")
    _plot_sizes(out, outdir / f"{stem}.png")
    print(sizes_table(out))
    return out


def sizes_table(out: dict) -> str:
    """The README table of the alphabet-size grid (ratio = exact error of the PML design / the LDP optimum's)."""
    eps = sorted({c["epsilon"] for c in out["cells"]})
    cols = list(dict.fromkeys(c["column"] for c in out["cells"]))
    head = "| column (N) | " + " | ".join(f"ε = {e:g}" for e in eps) + " | wall time (limit) | outputs |"
    lines = [head, "|---" * (len(eps) + 3) + "|"]

    def cell(c: dict) -> str:
        gap = c["gap"]
        floor = c.get("relaxation_floor")
        return (f"{c['ratio']:.4g} · {gap:.0%}" if np.isfinite(gap) else f"{c['ratio']:.4g} · –") + (
            f" ({floor:.1%})" if floor is not None else "")

    for col in cols:
        cs = {c["epsilon"]: c for c in out["cells"] if c["column"] == col}
        n = next(iter(cs.values()))["n"]
        ratios = " | ".join(cell(cs[e]) if e in cs else "–" for e in eps)
        walls = [c["wall_s"] for c in cs.values()]
        outs = [c["n_outputs"] for c in cs.values()]
        lines.append(f"| {col} ({n}) | {ratios} | {min(walls):.0f}–{max(walls):.0f} s "
                     f"({next(iter(cs.values()))['time_limit']:g} s) | {min(outs)}–{max(outs)} |")
    ratios = np.array([c["ratio"] for c in out["cells"]])
    lines.append("")
    lines.append(
        f"Each cell: ratio · proven relative gap (in brackets, where the moment bound ran beside the design: the "
        f"smallest gap the diagonal-moment bound as run (g ≥ 0) could prove for this design, 1 − its relaxed "
        f"master's value over its last pool / the error). Ratio = exact per-report error `tr F⁻¹ − ‖P‖²` of the PML design "
        f"at the true P divided by the LDP optimum's exact error (best of GRR, OUE, OLH, Hadamard response and subset selection at its best k); {len(ratios)} cells, "
        f"geometric mean {np.exp(np.log(ratios).mean()):.3f}, worst {ratios.max():.4g}; P̂ from 5 000 rows, δ = 1e-6"
        + (" (quick run)." if out.get("quick") else ".")
    )
    return "\n".join(lines)


def _plot_sizes(out: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for e in sorted({c["epsilon"] for c in out["cells"]}):
        cs = sorted((c for c in out["cells"] if c["epsilon"] == e and c["column"].startswith("Zipf")), key=lambda c: c["n"])
        line = ax.plot([c["n"] for c in cs], [c["ratio"] for c in cs], marker="o", label=f"Zipf, ε = {e:g}")
        adult = [c for c in out["cells"] if c["epsilon"] == e and not c["column"].startswith("Zipf")]
        if adult:
            ax.plot([c["n"] for c in adult], [c["ratio"] for c in adult], marker="*", ms=12, ls="",
                    color=line[0].get_color())
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("alphabet size N (★: Adult native-country)")
    ax.set_ylabel("exact error: PML / LDP optimum")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--quick", action="store_true", help="two attributes, three ε, 1 split × 3 seeds")
    ap.add_argument("--sizes", action="store_true", help="the alphabet-size grid of issue 21 instead")
    ap.add_argument("--n", type=int, nargs="*", help="with --sizes: the Zipf alphabet sizes (default: all)")
    ap.add_argument("--epsilons", type=float, nargs="*", help="with --sizes: the ε values (default: all)")
    ap.add_argument("--merge", action="store_true", help="with --sizes: keep the other cells of the existing JSON")
    ap.add_argument("--no-adult", action="store_true", help="with --sizes: Zipf columns only")
    args = ap.parse_args(argv)
    if args.sizes:
        run_sizes(args.quick, sizes=args.n, epsilons=args.epsilons, time_limit=args.time_limit, merge=args.merge,
                  adult=not args.no_adult)
    else:
        run(args.quick, splits=args.splits, seeds=args.seeds,
            time_limit=30.0 if args.time_limit is None else args.time_limit)


if __name__ == "__main__":
    main()
