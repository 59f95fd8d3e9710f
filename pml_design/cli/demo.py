"""``pml-design demo``: the core paper's pipeline (Figure 1) end to end on the bundled Adult data, against LDP."""

from __future__ import annotations

import argparse
import os
import pathlib
import time
import warnings
from typing import TYPE_CHECKING, Any

from ._common import (
    FORMATTER,
    UTILITIES,
    CliError,
    design_epsilon,
    failure_probability,
    nonneg_int,
    positive_int,
    print_json,
    table,
)

if TYPE_CHECKING:
    import numpy as np


#: Said beside every comparison with the truth: the demo evaluates on public data (a review: its --json output
#: carries the released records' exact distribution, which a deployment must never publish).
_EVALUATION_NOTE = ("an evaluation on public data only: a deployment has no true distribution to compare with, and "
                    "publishing one, or errors against it, would disclose exactly what the guarantee protects")


def add_parser(sub: Any) -> None:
    """Register ``demo`` on the subparsers ``sub`` of the ``pml-design`` parser."""
    p = sub.add_parser("demo", formatter_class=FORMATTER, help="end-to-end demo on the bundled Adult data",
                       description="Estimate the distribution of an Adult attribute from a sample, turn delta into an "
                       "l1 radius, design the optimal PML mechanism for epsilon, certify it, privatize the other "
                       "records, estimate their distribution back, and compare with the local-DP frequency oracles (GRR, "
                       "OUE, OLH, subset selection) at the same epsilon.")
    p.add_argument("--attribute", default="relationship",
                   help="categorical Adult column (race, relationship, marital_status, sex, workclass, ...)")
    p.add_argument("--samples", type=positive_int, default=5000, help="records used to estimate the distribution")
    p.add_argument("--epsilon", type=design_epsilon, default=1.0, help="privacy parameter epsilon")
    p.add_argument("--delta", type=failure_probability, default=1e-6, help="failure probability of the estimate")
    p.add_argument("--utility", choices=UTILITIES, default="frequency_estimation",
                   help="what the design optimises (frequency_estimation: the error of estimating the distribution)")
    p.add_argument("--estimator", choices=("ibu", "inversion"), default="ibu",
                   help="how the distribution is estimated back from privatized reports")
    p.add_argument("--seed", type=nonneg_int, default=0, help="random seed (sample split and privatization)")
    p.add_argument("--plot", nargs="?", const="pml_design_demo.png", default=None, metavar="PNG",
                   help="write a figure (default file name: pml_design_demo.png); an existing file, a PNG included, "
                   "is replaced only with --force, a directory never")
    p.add_argument("--force", action="store_true", help="let --plot replace an existing file")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``pml-design demo``; returns the exit status."""
    from ..datasets import load_adult  # noqa: PLC0415 - the numerical stack is imported only to run
    from ..progress import progress_bar  # noqa: PLC0415

    t_start = time.perf_counter()
    show = not args.no_progress and not args.json
    if args.plot is not None:  # checked before any work: never a directory, never an existing file without --force
        from ..deploy.output import check_output_path  # noqa: PLC0415

        # (a PNG was replaced silently: the rule of every other output now, a review)
        check_output_path(args.plot, kind="PNG image", option="argument --plot",
                          force_hint="--force", overwrite=args.force)
    data = load_adult()
    try:
        codes, cats = data.categorical(args.attribute)
    except ValueError as exc:
        raise CliError(f"argument --attribute: {exc}") from None
    if not 1 <= int(args.samples) < codes.size:
        raise CliError(f"argument --samples: must lie in [1, {codes.size - 1}] for {args.attribute!r}, got {args.samples}")
    with progress_bar(total=5, desc="demo", enabled=show) as steps:
        return _demo_steps(args, steps, codes, cats, t_start)


def _demo_steps(args: argparse.Namespace, steps: Any, codes: np.ndarray, cats: list[str], t_start: float) -> int:
    import numpy as np  # noqa: PLC0415

    import pml_design as pml  # noqa: PLC0415
    from pml_design.design.utilities import as_utility  # noqa: PLC0415

    n = len(cats)
    m = int(args.samples)
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(codes.size)
    sample, records = codes[perm[:m]], codes[perm[m:]]
    truth = np.bincount(records, minlength=n) / records.size
    steps.update()

    # 1) estimate, 2) delta -> radius, 3) design over the ball, certified
    est = pml.design_from_samples(sample, n, args.epsilon, args.delta, utility=args.utility, allow_zero=True)
    res = est.result
    steps.update()
    util = as_utility(args.utility)
    estimation = args.utility == "frequency_estimation"
    prior = res.prior  # where the error/utility is evaluated (P_hat, smoothed if a category is unseen)

    # the competitors at the same epsilon: the LDP frequency oracles (each eps-LDP, hence eps-PML everywhere)
    oracles = [("GRR", pml.grr(n, args.epsilon)), ("OUE", pml.oue(n, args.epsilon)), ("OLH", pml.olh(n, args.epsilon)),
               ("subset selection", pml.subset_selection(n, args.epsilon))]
    steps.update()

    # 4) privatize the remaining records, 5) estimate the distribution back
    seeds = np.random.SeedSequence(args.seed).spawn(1 + len(oracles))
    rows = []
    estimates = {}
    mech = res.mechanism
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the identifiability note is printed below instead
        pi = mech.estimate(mech.privatize(records, rng=np.random.default_rng(seeds[0])), method=args.estimator)
    pi = np.asarray(getattr(pi, "estimate", pi))
    estimates["PML (designed)"] = pi
    rows.append({"mechanism": "PML (designed)", "outputs": mech.n_outputs,
                 "guarantee": f"{res.certified_epsilon:.4g}-PML on the ball",
                 "mse_per_report": pml.estimation_mse(mech.matrix, prior),
                 "utility": float(util.value(np.asarray(mech.matrix), prior)), "pi": pi})
    for (name, o), ss in zip(oracles, seeds[1:]):
        pi = o.estimate(o.privatize(records, rng=np.random.default_rng(ss)))
        estimates[name] = pi
        rows.append({"mechanism": name, "outputs": o.n_outputs, "guarantee": f"{args.epsilon:.4g}-LDP",
                     "mse_per_report": o.mse(prior, 1, inputs="iid"), "utility": None, "pi": pi})
    for r in rows:
        pi = r.pop("pi")
        r["l2_error"] = float(np.sqrt(np.sum((pi - truth) ** 2)))
        r["tv_error"] = float(0.5 * np.abs(pi - truth).sum())
        r["max_abs_error"] = float(np.abs(pi - truth).max())
    steps.update()
    best = min(rows[1:], key=lambda r: r["mse_per_report"])
    plot_path = None
    if args.plot is not None:
        plot_path = _demo_plot(args.plot, cats, truth, estimates, rows, args)
    steps.update()
    steps.close()  # before printing
    elapsed = time.perf_counter() - t_start

    summary = {
        "attribute": args.attribute,
        "categories": cats,
        "estimation_samples": m,
        "released_records": int(records.size),
        "epsilon": args.epsilon,
        "delta": args.delta,
        "radius": est.radius,
        "p_hat": est.p_hat,
        "true_distribution_of_released_records": truth,
        "evaluation_note": _EVALUATION_NOTE,
        "certified_epsilon": res.certified_epsilon,
        "optimal": res.optimal,
        "statement": est.statement(),
        "utility_name": res.utility_name,
        "estimator": args.estimator,
        "identifiable": bool(mech.identifiable),
        "disclosure": res.with_labels(cats).disclosure(),
        "rows": rows,
        "plot": plot_path,
        "seconds": elapsed,
    }
    if args.json:
        print_json(summary)
        return 0
    print(f"pml-design demo: attribute {args.attribute!r} of the UCI Adult data ({n} categories, "
          f"{codes.size} records)")
    print(f"1. split the records at random (seed {args.seed}); estimate P_hat from m={m} of them:")
    print("   " + ", ".join(f"{c}={p:.3f}" for c, p in zip(cats, est.p_hat)))
    print(f"2. delta={args.delta:g} -> l1 radius beta*(delta)={est.radius:.4f} (core paper, eq. (7), Theorem 2)")
    goal = "estimation-error-minimising" if estimation else f"{res.utility_name}-optimal"
    print(f"3. design the {goal} mechanism for epsilon={args.epsilon:g} over the ball "
          f"({res.matrix.shape[0]}x{res.matrix.shape[1]}, method {res.method}, optimal={res.optimal})")
    print(f"   certified: capacity over the ball = {res.certified_epsilon:.6g} <= {args.epsilon:g}")
    print(f"   guarantee: {est.statement()}")
    from ..design.disclosure import disclosure_lines  # noqa: PLC0415

    print("\n".join("   " + line for line in disclosure_lines(summary["disclosure"], limit=3)))
    print(f"4. privatize the other {records.size} records (never the {m} design records: P_hat and m, published "
          "with the mechanism, give their counts)")
    print(f"5. estimate their distribution back (PML: {args.estimator}; LDP oracles: their unbiased estimators, "
          "projected onto the simplex):")
    print()
    header = ["mechanism", "outputs", "guarantee", "MSE/report", "x PML", "L2 error", "TV error", "max |error|"]
    pml_mse = rows[0]["mse_per_report"]
    table_rows = [[r["mechanism"], r["outputs"], r["guarantee"], r["mse_per_report"],
                   f"{r['mse_per_report'] / pml_mse:.2f}x" if np.isfinite(pml_mse) and pml_mse > 0 else "-",
                   r["l2_error"], r["tv_error"], r["max_abs_error"]] for r in rows]
    if not estimation:
        header.insert(3, args.utility)
        for tr, r in zip(table_rows, rows):
            tr.insert(3, "-" if r["utility"] is None else r["utility"])
    print(table(header, table_rows))
    print()
    print(f"MSE/report: asymptotic n*E||estimate - P||^2 at P_hat (lower is better); errors against the true "
          f"distribution of the {records.size} released records ({_EVALUATION_NOTE}).")
    if np.isfinite(pml_mse):
        print(f"the PML design's estimation error is {best['mse_per_report'] / pml_mse:.2f}x lower than the best LDP "
              f"oracle's ({best['mechanism']}) at the same epsilon.")
    if not mech.identifiable:
        print(f"note: this design maximises {res.utility_name}, not estimation accuracy; it merges categories, so the "
              "distribution is not identifiable from its reports: use --utility frequency_estimation (the default).")
    if plot_path:
        print(f"plot written to {plot_path}")
    print(f"done in {elapsed:.1f} s")
    return 0


def _demo_plot(path: str, cats: list[str], truth: np.ndarray, estimates: dict, rows: list[dict],
               args: argparse.Namespace) -> str:
    import matplotlib  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from ..deploy.file import temporary_sibling  # noqa: PLC0415

    out = pathlib.Path(path)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 1.3]})
    x = np.arange(len(cats))
    width = 0.8 / (1 + len(estimates))
    ax1.bar(x - 0.4 + width / 2, truth, width, label="true (released records)", color="black")
    for k, (name, pi) in enumerate(estimates.items(), start=1):
        ax1.bar(x - 0.4 + width / 2 + k * width, pi, width, label=f"{name}")
    ax1.set_xticks(x)
    ax1.set_xticklabels(cats, rotation=30, ha="right", fontsize=8)
    ax1.set_ylabel("probability")
    ax1.set_title(f"Adult '{args.attribute}': estimates from privatized records, eps={args.epsilon:g}")
    ax1.legend(fontsize=8)
    ax2.bar([r["mechanism"] for r in rows], [r["mse_per_report"] for r in rows], color=[f"C{i}" for i in range(len(rows))])
    ax2.set_ylabel("MSE per report")
    ax2.set_yscale("log")
    ax2.set_title("estimation error at P_hat (lower is better)")
    ax2.tick_params(axis="x", rotation=30, labelsize=8)
    fig.tight_layout()
    fd, tmp = temporary_sibling(out)
    try:  # atomically: a temporary sibling renamed on success
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, dpi=120, format="png")
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        plt.close(fig)
    return str(out)
