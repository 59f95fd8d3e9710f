"""The ``pml-design`` command: demo, design, privatize, estimate, calibrate, reproduce, bench.

Every subcommand has ``--help``. User mistakes (bad arguments, unreadable files, values the library rejects)
print one line ``pml-design: error: …`` on ``stderr`` and exit with status 2; no tracebacks. A solver failure
exits with status 1. ``--json`` prints machine-readable output on ``stdout`` (progress goes to ``stderr``).

Subcommands
-----------
``demo``       the core paper's pipeline (Figure 1) end to end on the bundled Adult data, against LDP.
``design``     an optimal PML mechanism from a CSV column or a counts file; a mechanism file (+ CSV matrix) out.
``privatize``  a copy of a CSV/Parquet file with one column privatized by a mechanism file (streamed).
``estimate``   the distribution of the original column, with confidence intervals, from privatized data.
``calibrate``  noise scales for the Laplace / Gaussian / histogram mechanisms for a target guarantee.
``reproduce``  run one of the papers' figure scripts of ``benchmarks/`` (source checkout only).
``bench``      run every benchmark / figure script within a time budget (``python -m benchmarks``).

The reference is ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import inspect
import io
import json
import math
import os
import pathlib
import sys
import time
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

import numpy as np

__all__ = ["CliError", "find_benchmarks_dir", "list_scripts", "load_script", "main", "resolve_script"]

PROG = "pml-design"


class CliError(Exception):
    """A user mistake detected by the command line itself (reported as one line, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line naming the bad argument (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


# ---------------------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------------------
def _jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and non-finite floats into JSON-compatible values."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, pathlib.Path):
        return str(obj)
    return obj


def _print_json(obj: Any) -> None:
    print(json.dumps(_jsonable(obj), indent=2))


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.4g}"
        return str(v)

    cells = [[cell(v) for v in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def _table_source(path: str, option: str, delimiter: str | None = None, parquet: bool | None = None) -> Any:
    """A streamed CSV/Parquet source (:class:`pml_design.streaming.TableSource`); pyarrow imported lazily."""
    from pml_design.streaming import TableSource  # noqa: PLC0415

    return TableSource(path, option, delimiter=delimiter, parquet=parquet)


def _csv_column_counts(path: str, column: str, delimiter: str | None, option: str = "--csv",
                       parquet: bool | None = None) -> tuple[list[str], np.ndarray]:
    """Sorted distinct values of a column and their counts (streamed; blanks and '?'/NA dropped)."""
    from pml_design.streaming import column_counts  # noqa: PLC0415

    return column_counts(_table_source(path, option, delimiter, parquet), column)


def _less_noise(context_free: float, pml: float) -> str:
    """``"2.04x less noise"`` / ``"1.3x more noise"`` for a PML scale against the context-free one."""
    r = context_free / pml
    return f"PML needs {r:.3g}x less noise" if r >= 1 else f"PML needs {1 / r:.3g}x more noise (too few samples)"


def _read_counts(path: str) -> tuple[np.ndarray, list[str]]:
    """Counts per category from a file: one ``count`` or ``label,count`` per line (header line optional).

    A header is the first line only if its last field is a name (letters, no digits), e.g. ``category,count``;
    a first line such as ``a,1x`` is an error, not a header. Labels must be distinct.
    """
    p = pathlib.Path(path)
    if not p.is_file():
        raise CliError(f"argument --counts: file not found: {path}")
    raw_bytes = p.read_bytes()
    if b"\x00" in raw_bytes[:65536]:
        raise CliError(f"argument --counts: not a text file (it contains NUL bytes): {path}")
    try:
        text = raw_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"argument --counts: not UTF-8 text (bad byte at offset {exc.start}): {path}") from None
    labels: list[str] = []
    counts: list[float] = []
    first_line: dict[str, int] = {}
    seen_data = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [t.strip() for t in line.replace("\t", ",").replace(";", ",").split(",") if t.strip() != ""]
        if len(parts) == 1 and " " in parts[0]:
            parts = parts[0].split()
        try:
            value = float(parts[-1])
        except ValueError:
            if not seen_data and all(ch.isalpha() or ch in "_ -" for ch in parts[-1]):  # a header line
                seen_data = True
                continue
            raise CliError(f"argument --counts: {path}, line {lineno}: not a count: {parts[-1]!r}") from None
        seen_data = True
        if not math.isfinite(value) or value < 0 or not value.is_integer():
            raise CliError(f"argument --counts: {path}, line {lineno}: counts must be non-negative integers, got {value!r}")
        label = parts[0] if len(parts) > 1 else str(len(labels))
        if label in first_line:
            raise CliError(f"argument --counts: {path}, line {lineno}: duplicate label {label!r} (first on line "
                           f"{first_line[label]})")
        first_line[label] = lineno
        counts.append(value)
        labels.append(label)
    if not counts:
        raise CliError(f"argument --counts: {path} holds no counts (file is empty)")
    if len(counts) < 2:
        raise CliError(f"argument --counts: {path} must hold at least 2 categories, got {len(counts)}")
    return np.asarray(counts, dtype=np.int64), labels


# ---------------------------------------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------------------------------------
def _run_demo(args: argparse.Namespace) -> int:
    import pml_design as pd  # noqa: PLC0415 - keep `--help` fast
    from pml_design.design.utilities import as_utility  # noqa: PLC0415
    from pml_design.progress import progress_bar  # noqa: PLC0415

    t_start = time.perf_counter()
    show = not args.no_progress and not args.json
    data = pd.load_adult()
    try:
        codes, cats = data.categorical(args.attribute)
    except ValueError as exc:
        raise CliError(f"argument --attribute: {exc}") from None
    if not 1 <= int(args.samples) < codes.size:
        raise CliError(f"argument --samples: must lie in [1, {codes.size - 1}] for {args.attribute!r}, got {args.samples}")
    with progress_bar(total=5, desc="demo", enabled=show) as steps:
        return _demo_steps(args, pd, as_utility, steps, codes, cats, t_start)


def _demo_steps(args: argparse.Namespace, pd: Any, as_utility: Any, steps: Any, codes: np.ndarray, cats: list[str],
                t_start: float) -> int:
    n = len(cats)
    m = int(args.samples)
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(codes.size)
    sample, records = codes[perm[:m]], codes[perm[m:]]
    truth = np.bincount(records, minlength=n) / records.size
    steps.update()

    # 1) estimate, 2) delta -> radius, 3) design over the ball, certified
    est = pd.design_from_samples(sample, n, args.epsilon, args.delta, utility=args.utility, allow_zero=True)
    res = est.result
    steps.update()
    util = as_utility(args.utility)
    estimation = args.utility == "frequency_estimation"
    prior = res.prior  # where the error/utility is evaluated (P_hat, smoothed if a category is unseen)

    # the competitors at the same epsilon: the LDP frequency oracles (each eps-LDP, hence eps-PML everywhere)
    oracles = [("GRR", pd.grr(n, args.epsilon)), ("OUE", pd.oue(n, args.epsilon)), ("OLH", pd.olh(n, args.epsilon)),
               ("subset selection", pd.subset_selection(n, args.epsilon))]
    steps.update()

    # 4) privatize the remaining records, 5) estimate the distribution back
    seeds = np.random.SeedSequence(args.seed).spawn(1 + len(oracles))
    rows = []
    estimates = {}
    mech = res.mechanism
    import warnings  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the identifiability note is printed below instead
        pi = mech.estimate(mech.privatize(records, rng=np.random.default_rng(seeds[0])), method=args.estimator)
    pi = np.asarray(getattr(pi, "estimate", pi))
    estimates["PML (designed)"] = pi
    rows.append({"mechanism": "PML (designed)", "outputs": mech.n_outputs,
                 "guarantee": f"{res.certified_epsilon:.4g}-PML on the ball",
                 "mse_per_report": pd.estimation_mse(mech.matrix, prior),
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
        "certified_epsilon": res.certified_epsilon,
        "optimal": res.optimal,
        "statement": est.statement(),
        "utility_name": res.utility_name,
        "estimator": args.estimator,
        "identifiable": bool(mech.identifiable),
        "rows": rows,
        "plot": plot_path,
        "seconds": elapsed,
    }
    if args.json:
        _print_json(summary)
        return 0
    print(f"pml-design demo: attribute {args.attribute!r} of the UCI Adult data ({n} categories, "
          f"{codes.size} records)")
    print(f"1. estimate P_hat from a random sample of m={m} records:")
    print("   " + ", ".join(f"{c}={p:.3f}" for c, p in zip(cats, est.p_hat)))
    print(f"2. delta={args.delta:g} -> l1 radius beta*(delta)={est.radius:.4f} (core paper, eq. (7), Theorem 2)")
    goal = "estimation-error-minimising" if estimation else f"{res.utility_name}-optimal"
    print(f"3. design the {goal} mechanism for epsilon={args.epsilon:g} over the ball "
          f"({res.matrix.shape[0]}x{res.matrix.shape[1]}, method {res.method}, optimal={res.optimal})")
    print(f"   certified: capacity over the ball = {res.certified_epsilon:.6g} <= {args.epsilon:g}")
    print(f"   guarantee: {est.statement()}")
    print(f"4. privatize the other {records.size} records; 5. estimate their distribution back "
          f"(PML: {args.estimator}; LDP oracles: their unbiased estimators, projected onto the simplex):")
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
    print(_table(header, table_rows))
    print()
    print(f"MSE/report: asymptotic n*E||estimate - P||^2 at P_hat (lower is better); errors against the true "
          f"distribution of the {records.size} released records.")
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

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    out = pathlib.Path(path)
    if out.parent and not out.parent.exists():
        raise CliError(f"argument --plot: directory does not exist: {out.parent}")
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
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return str(out)


# ---------------------------------------------------------------------------------------------------------
# design
# ---------------------------------------------------------------------------------------------------------
def _solver_options(args: argparse.Namespace) -> dict | None:
    """``solver_options`` of the column-generation method from ``--time-limit`` and ``--progress/--no-progress``."""
    opts = {k: v for k, v in (("time_limit", args.time_limit), ("progress", args.progress)) if v is not None}
    return opts or None


def _run_design(args: argparse.Namespace) -> int:
    import pml_design as pd  # noqa: PLC0415

    if args.csv is not None or args.parquet is not None:
        option = "--csv" if args.csv is not None else "--parquet"
        if args.column is None:
            raise CliError(f"argument --column: required with {option}")
        path = args.csv if args.csv is not None else args.parquet
        labels, counts = _csv_column_counts(path, args.column, args.delimiter, option, args.parquet is not None)
        source = {option[2:]: path, "column": args.column}
    else:
        counts, labels = _read_counts(args.counts)
        source = {"counts": args.counts}
    n = len(labels)
    if n < 2:
        raise CliError(f"argument --column: need at least 2 distinct values, got {labels}")
    m = int(counts.sum())
    if m == 0:
        raise CliError("argument --counts: all counts are zero")
    if args.delta is not None:
        est = pd.design_from_samples(dict(zip(labels, counts.tolist())), None, args.epsilon, args.delta, counts=True,
                                     categories=labels, utility=args.utility, method=args.method,
                                     solver=args.solver, allow_zero=args.allow_zero,
                                     solver_options=_solver_options(args))
        res, p_hat, radius, delta = est.result, est.p_hat, est.radius, est.delta
        statement = est.statement()
    else:
        p_hat = pd.counts_distribution(counts, allow_zero=args.allow_zero)
        res = pd.design(pd.L1Ball(p_hat, args.radius), args.epsilon, utility=args.utility, method=args.method,
                        solver=args.solver, solver_options=_solver_options(args)).with_labels(labels)
        radius, delta = float(args.radius), None
        statement = (f"{res.certified_epsilon:.6g}-PML for every distribution within l1 distance {radius:.4g} of "
                     f"the estimate from m={m} samples")
    out: dict[str, Any] = {
        "source": source,
        "categories": labels,
        "counts": counts,
        "m": m,
        "p_hat": p_hat,
        "epsilon": float(args.epsilon),
        "delta": delta,
        "radius": radius,
        "certified_epsilon": res.certified_epsilon,
        "statement": statement,
        "utility_name": res.utility_name,
        "utility": res.utility,
        "upper_bound": res.upper_bound,
        "optimal": res.optimal,
        "method": res.method,
        "solver": res.solver,
        "matrix": res.matrix,
        "matrix_rows": "inputs (categories)",
        "matrix_columns": "outputs",
    }
    if args.compare:
        cmp = pd.compare_with_ldp(res)
        out["ldp_comparison"] = {"optimal_ldp": cmp.optimal_ldp, "randomized_response": cmp.randomized_response,
                                 "rr_calibrated_to_pml": cmp.rr_pml, "gain_over_ldp": cmp.gain_over_ldp}
    written = []
    if args.output is not None:
        written = _write_design_files(args.output, res, labels, delta, m,
                                      {k: out[k] for k in ("source", "counts", "ldp_comparison") if k in out})
        out["files"] = written
    if args.json:
        _print_json(out)
        return 0
    print(f"estimate from m={m} samples over {n} categories: "
          + ", ".join(f"{c}={p:.4g}" for c, p in zip(labels, p_hat)))
    print(f"l1 radius {radius:.4g}" + (f" (delta={delta:g}, core paper eq. (7))" if delta is not None else ""))
    print(f"designed {res.matrix.shape[0]}x{res.matrix.shape[1]} mechanism: {res.utility_name} = {res.utility:.6g} "
          f"(upper bound {res.upper_bound:.6g}, optimal={res.optimal}, method {res.method}, solver {res.solver})")
    print(f"certified: {statement}")
    if args.compare:
        c = out["ldp_comparison"]
        print(f"optimal LDP: {c['optimal_ldp']:.6g}   randomized response: {c['randomized_response']:.6g}   "
              f"gain over LDP: {c['gain_over_ldp']:.3g}x")
    with np.printoptions(precision=4, suppress=True, linewidth=120):
        print("mechanism P(y|x) (rows = categories):")
        print(res.matrix)
    for f in written:
        print(f"wrote {f}")
    return 0


def _write_design_files(prefix_arg: str, res: Any, labels: list[str], delta: float | None, m: int,
                        extra: dict) -> list[str]:
    """``PREFIX.json`` (the mechanism file, :meth:`DesignResult.save`) and ``PREFIX.csv`` (the matrix)."""
    from pml_design.deploy import _write_atomically  # noqa: PLC0415

    prefix = pathlib.Path(prefix_arg)
    if prefix.parent and not prefix.parent.exists():
        raise CliError(f"argument --output: directory does not exist: {prefix.parent}")
    jpath = prefix.with_name(prefix.name + ".json")
    cpath = prefix.with_name(prefix.name + ".csv")
    rows = [["input"] + [f"y{j}" for j in range(res.matrix.shape[1])]]
    rows += [[lab] + [repr(float(v)) for v in row] for lab, row in zip(labels, res.matrix)]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    res.save(jpath, delta=delta, m=m, extra=_jsonable(extra))
    _write_atomically(cpath, buf.getvalue())
    return [str(jpath), str(cpath)]


# ---------------------------------------------------------------------------------------------------------
# privatize / estimate: deploy a mechanism file on data (streamed, any size)
# ---------------------------------------------------------------------------------------------------------
def _data_source(args: argparse.Namespace) -> tuple[Any, Any]:
    """(mechanism, table source) of a privatize/estimate call, both validated before any output exists."""
    import pyarrow.compute  # noqa: F401, PLC0415 - loaded here, so the timings below measure the streaming only
    import pyarrow.csv  # noqa: F401, PLC0415

    from pml_design.deploy import load_mechanism  # noqa: PLC0415

    try:
        mech = load_mechanism(args.mechanism)
    except (ValueError, FileNotFoundError) as exc:
        raise CliError(f"argument MECHANISM: {exc}") from None
    option = "--csv" if args.csv is not None else "--parquet"
    path = args.csv if args.csv is not None else args.parquet
    source = _table_source(path, option, args.delimiter, args.parquet is not None)
    source.resolve(args.column)
    return mech, source


def _show_progress(args: argparse.Namespace) -> bool:
    return not args.no_progress and sys.stderr.isatty()


def _run_privatize(args: argparse.Namespace) -> int:
    from pml_design.streaming import privatize_table  # noqa: PLC0415

    mech, source = _data_source(args)
    t0 = time.perf_counter()
    rows = privatize_table(source, args.column, mech, args.output, np.random.default_rng(args.seed),
                           progress=_show_progress(args))
    elapsed = time.perf_counter() - t0
    summary = {"input": str(source.path), "output": args.output, "column": args.column, "rows": rows,
               "seed": args.seed, "mechanism": args.mechanism, "statement": mech.metadata.get("statement"),
               "seconds": elapsed, "rows_per_second": rows / elapsed if elapsed > 0 else math.inf}
    if args.json:
        _print_json(summary)
        return 0
    print(f"privatized column {args.column!r} of {rows} rows with {args.mechanism} in {elapsed:.2f} s "
          f"({summary['rows_per_second']:.3g} rows/s); wrote {args.output}")
    print(f"guarantee: {summary['statement']}")
    return 0


def _run_estimate(args: argparse.Namespace) -> int:
    import warnings  # noqa: PLC0415

    from pml_design.streaming import report_counts  # noqa: PLC0415

    mech, source = _data_source(args)
    t0 = time.perf_counter()
    counts = report_counts(source, args.column, mech, progress=_show_progress(args))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = mech.estimate(counts, counts=True, ci=args.ci, method=args.method)
    for w in caught:
        sys.stderr.write(f"{PROG}: warning: {str(w.message).splitlines()[0]}\n")
    out = est.to_dict()
    out.update({"column": args.column, "input": str(source.path), "mechanism": args.mechanism,
                "identifiable": mech.identifiable, "report_counts": counts,
                "seconds": time.perf_counter() - t0})
    if args.json:
        _print_json(out)
        return 0
    print(f"estimated distribution of {args.column!r} from n={est.n} privatized reports "
          f"({args.method}, {100 * args.ci:g}% confidence intervals):")
    print(_table(["category", "estimate", "ci_low", "ci_high"],
                 [[c, e, lo, hi] for c, e, lo, hi in zip(out["categories"], est.estimate, est.ci_low, est.ci_high)]))
    return 0


# ---------------------------------------------------------------------------------------------------------
# calibrate
# ---------------------------------------------------------------------------------------------------------
def _run_calibrate_laplace(args: argparse.Namespace) -> int:
    from pml_design.additive_laplace import (  # noqa: PLC0415
        laplace_ldp_scale,
        laplace_pml_epsilon_estimated,
        laplace_scale_for,
    )

    b = laplace_scale_for(args.epsilon, args.p_hat_min, args.m, args.delta)
    check = laplace_pml_epsilon_estimated(b, args.p_hat_min, args.m, args.delta)
    b_ldp = laplace_ldp_scale(args.epsilon)
    out = {"mechanism": "laplace (binary, sensitivity 2)", "epsilon": args.epsilon, "delta": args.delta,
           "p_hat_min": args.p_hat_min, "m": args.m, "scale": b, "epsilon_at_scale": check, "ldp_scale": b_ldp,
           "noise_reduction": b_ldp / b, "reference": "core paper, eq. (16) with eq. (14)"}
    if args.json:
        _print_json(out)
        return 0
    print(f"Laplace scale for ({args.epsilon:g}, {args.delta:g})-PML with p_hat_min={args.p_hat_min:g} from "
          f"m={args.m} samples: b = {b:.6g}  (eq. (16) at b gives epsilon = {check:.6g})")
    print(f"epsilon-LDP scale 2/epsilon = {b_ldp:.6g}  ->  {_less_noise(b_ldp, b)}")
    return 0


def _run_calibrate_gaussian(args: argparse.Namespace) -> int:
    from pml_design._additive_common import binary_l1_radius  # noqa: PLC0415
    from pml_design._validation import check_delta, check_epsilon  # noqa: PLC0415
    from pml_design.additive_gaussian import (  # noqa: PLC0415
        gaussian_delta1,
        gaussian_pml_guarantee,
        pldp_gaussian_sigma,
    )

    eps_star = check_epsilon(args.epsilon, positive=True)
    d_star = check_delta(args.delta)
    d2 = check_delta(args.delta2 if args.delta2 is not None else d_star / 2, "delta2")
    if d2 >= d_star:
        raise CliError(f"argument --delta2: must be < --delta={d_star:g} (it is part of it), got {d2:g}")
    beta = binary_l1_radius(args.m, d2)
    # invert eps* = eps - log(1 - beta e^eps / 2):  e^eps = e^eps* / (1 + beta e^eps* / 2)
    eps = eps_star - math.log1p(beta * math.exp(eps_star) / 2.0)
    if eps <= 0:
        raise CliError(f"argument --m: m={args.m} samples are too few for epsilon={eps_star:g} with delta2={d2:g}")
    d1_target = (d_star - d2) / (1.0 - d2)

    def d1(sigma: float) -> float:
        return gaussian_delta1(eps, sigma, args.p_hat, beta)

    lo, hi = 1e-3, 1e4
    if d1(hi) > d1_target:
        raise CliError(f"argument --delta: delta={d_star:g} is unreachable for epsilon={eps_star:g} (sigma <= 1e4)")
    if d1(lo) <= d1_target:
        hi = lo
    else:
        for _ in range(80):  # bisection in log sigma
            mid = math.sqrt(lo * hi)
            if d1(mid) <= d1_target:
                hi = mid
            else:
                lo = mid
            if hi / lo < 1 + 1e-9:
                break
    sigma = hi
    g = gaussian_pml_guarantee(eps, sigma, args.p_hat, args.m, d2)  # the certified statement at sigma
    sigma_pldp = pldp_gaussian_sigma(eps_star, d_star)
    out = {"mechanism": "gaussian (binary, sensitivity 2)", "target_epsilon": eps_star, "target_delta": d_star,
           "p_hat": args.p_hat, "m": args.m, "sigma": sigma, "threshold_epsilon": eps, "epsilon_star": g.epsilon_star,
           "delta1": g.delta1, "delta2": g.delta2, "delta_star": g.delta_star, "pldp_sigma": sigma_pldp,
           "noise_reduction": sigma_pldp / sigma, "reference": "core paper, Section VI-B, eq. (17)"}
    if args.json:
        _print_json(out)
        return 0
    print(f"Gaussian sigma for ({eps_star:g}, {d_star:g})-PML with p_hat={args.p_hat:g} from m={args.m} samples "
          f"(delta2={d2:g}): sigma = {sigma:.6g}")
    print(f"certified at sigma: epsilon* = {g.epsilon_star:.6g}, delta* = {g.delta_star:.3g} "
          f"(delta1 = {g.delta1:.3g}, threshold epsilon = {eps:.4g})")
    print(f"(epsilon, delta)-pLDP sigma = {sigma_pldp:.6g}  ->  {_less_noise(sigma_pldp, sigma)}")
    return 0


def _run_calibrate_histogram(args: argparse.Namespace) -> int:
    import pml_design as pd  # noqa: PLC0415

    if args.alpha is not None:
        b = pd.histogram_scale_for(args.epsilon, args.alpha)
        out = {"mechanism": "laplace histogram", "epsilon": args.epsilon, "alpha": args.alpha, "scale": b,
               "epsilon_at_scale": _histogram_epsilon_at(pd, b, args.alpha),
               "dp_scale": pd.histogram_dp_scale_for(args.epsilon)}
        line = f"for epsilon-PML when every bin has probability >= alpha={args.alpha:g}"
    else:
        if args.counts is None and args.csv is None:
            raise CliError("argument --alpha: give --alpha, or --counts/--csv with --delta")
        if args.delta is None:
            raise CliError("argument --delta: required with --counts/--csv (or give --alpha)")
        if args.counts is not None:
            counts, _ = _read_counts(args.counts)
        elif args.csv is not None:
            if args.column is None:
                raise CliError("argument --column: required with --csv")
            counts = _csv_column_counts(args.csv, args.column, None)[1]
        else:
            raise CliError("argument --alpha: give --alpha, or --counts/--csv with --delta")
        m = int(counts.sum())
        p_hat = pd.counts_distribution(counts, allow_zero=True)
        radius = pd.l1_radius(m, counts.size, args.delta)
        g = pd.histogram_guarantee_from_estimate(p_hat, radius, args.delta, epsilon=args.epsilon)
        b = g.scale
        out = {"mechanism": "laplace histogram", "epsilon": g.epsilon, "delta": g.delta, "alpha": g.alpha,
               "radius": g.radius, "m": m, "n_bins": g.n_bins, "scale": b,
               "epsilon_at_scale": _histogram_epsilon_at(pd, b, g.alpha) if g.alpha > 0 else 2.0 / b,
               "dp_scale": g.dp_scale}
        line = (f"for ({args.epsilon:g}, {args.delta:g})-PML; alpha = {g.alpha:.4g} from m={m} samples "
                f"(radius {g.radius:.4g})")
        if g.alpha <= 0:
            line += ("; alpha = 0 because the radius exceeds twice the smallest estimated bin probability, so the "
                     "PML scale is the DP scale (more samples or a larger delta help)")
    out["reference"] = "histogram paper, Theorem 4, eq. (1)"
    if args.json:
        _print_json(out)
        return 0
    print(f"Laplace histogram scale {line}: b = {b:.6g}")
    if b == 0:
        print(f"no noise is needed: the exact histogram leaks at most log(1/alpha) = {out['epsilon_at_scale']:.6g} "
              f"<= epsilon = {args.epsilon:g} (histogram paper, Theorem 4)")
        return 0
    print(f"epsilon-DP scale 2/epsilon = {out['dp_scale']:.6g}  ->  {_less_noise(out['dp_scale'], b)}")
    return 0


def _histogram_epsilon_at(pd: Any, b: float, alpha: float) -> float:
    """ε_PML of the Laplace histogram at scale b; at b = 0 (no noise needed) the noiseless bound log(1/α)."""
    return pd.histogram_pml_epsilon(b, alpha) if b > 0 else pd.histogram.histogram_noiseless_epsilon(alpha)


# ---------------------------------------------------------------------------------------------------------
# reproduce / bench: the scripts of benchmarks/ (source checkout only)
# ---------------------------------------------------------------------------------------------------------
def find_benchmarks_dir(start: str | pathlib.Path | None = None) -> pathlib.Path:
    """Locate the ``benchmarks/`` directory of a source checkout.

    Looks in ``start`` (default: the current directory) and its parents, then next to the installed package
    (an editable install from a checkout).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    CliError
        If no ``benchmarks/`` directory with figure scripts is found (e.g. a wheel install).
    """
    here = pathlib.Path(start if start is not None else pathlib.Path.cwd()).resolve()
    candidates = [d / "benchmarks" for d in (here, *here.parents)]
    candidates.append(pathlib.Path(__file__).resolve().parent.parent / "benchmarks")
    for c in candidates:
        if c.is_dir() and any(c.glob("fig_*.py")):
            return c
    raise CliError("the figure scripts are not installed with the package: run this from a source checkout "
                   "of pml-design (a directory containing benchmarks/)")


def list_scripts(bench_dir: pathlib.Path) -> list[str]:
    """Names of the runnable scripts (``fig_*``, ``bench_*``, ``example_*``) of a benchmarks directory."""
    return sorted(p.stem for pat in ("fig_*.py", "bench_*.py", "example_*.py") for p in bench_dir.glob(pat))


def resolve_script(name: str, bench_dir: pathlib.Path) -> str:
    """Map a user's figure name (``fig_pml_fig2``, ``pml-fig2``, ``histogram_fig1`` …) to a script name."""
    names = list_scripts(bench_dir)
    key = name.strip().lower().replace("-", "_")
    key = key[:-3] if key.endswith(".py") else key
    for cand in (key, f"fig_{key}", f"bench_{key}", f"example_{key}"):
        if cand in names:
            return cand
    raise CliError(f"argument FIGURE: unknown figure {name!r}; choose one of {names}")


def load_script(name: str, bench_dir: pathlib.Path) -> ModuleType:
    """Import ``benchmarks/<name>.py`` by path (the scripts import their helpers from their own folder)."""
    path = bench_dir / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_pml_bench_{name}", path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    if str(bench_dir) not in sys.path:
        sys.path.insert(0, str(bench_dir))
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "run", None)):
        raise CliError(f"{path} has no run(quick=..., outdir=...) function")
    return mod


def call_run(mod: ModuleType, *, quick: bool, outdir: str | pathlib.Path, progress: bool) -> Any:
    """Call a script's ``run`` with ``progress`` only if it accepts it."""
    kwargs: dict[str, Any] = {"quick": quick, "outdir": str(outdir)}
    if "progress" in inspect.signature(mod.run).parameters:
        kwargs["progress"] = progress
    return mod.run(**kwargs)


def _run_reproduce(args: argparse.Namespace) -> int:
    bench_dir = find_benchmarks_dir()
    if args.list or args.figure is None:
        if args.figure is None and not args.list:
            raise CliError("argument FIGURE: required (or --list)")
        for n in list_scripts(bench_dir):
            print(n)
        return 0
    name = resolve_script(args.figure, bench_dir)
    outdir = pathlib.Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    mod = load_script(name, bench_dir)
    t0 = time.perf_counter()
    summary = call_run(mod, quick=args.quick, outdir=outdir, progress=not args.no_progress)
    print(f"{name}: done in {time.perf_counter() - t0:.1f} s; outputs in {outdir}/")
    if args.json:
        _print_json(summary)
    return 0


def _run_bench(args: argparse.Namespace) -> int:
    bench_dir = find_benchmarks_dir()
    if str(bench_dir.parent) not in sys.path:
        sys.path.insert(0, str(bench_dir.parent))
    spec = importlib.util.spec_from_file_location("_pml_bench_harness", bench_dir / "__main__.py")
    if spec is None or spec.loader is None or not (bench_dir / "__main__.py").is_file():
        raise CliError(f"{bench_dir} has no harness (__main__.py)")
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    forwarded = ["--outdir", args.outdir, "--budget", str(args.budget)]
    if args.quick:
        forwarded.append("--quick")
    if args.only:
        forwarded += ["--only", *args.only]
    return int(harness.main(forwarded))


# ---------------------------------------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------------------------------------
def _argument_type(convert, ok, requirement: str):
    """An argparse ``type=`` that converts with ``convert`` and checks ``ok``, with one-line messages."""
    noun = "an integer" if convert is int else "a number"

    def parse(text: str):
        try:
            v = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {noun}: {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"{requirement}, got {text!r}")
        return v

    return parse


_positive_float = _argument_type(float, lambda v: math.isfinite(v) and v > 0, "must be a finite number > 0")
_positive_int = _argument_type(int, lambda v: v >= 1, "must be >= 1")
_nonneg_float = _argument_type(float, lambda v: math.isfinite(v) and v >= 0, "must be a finite number >= 0")
_nonneg_int = _argument_type(int, lambda v: v >= 0, "must be >= 0")
_probability = _argument_type(float, lambda v: 0 < v <= 1, "must lie in (0, 1]")
#: δ of an (ε, δ)-PML statement: δ = 1 would make it vacuous (it holds with probability ≥ 0).
_failure_probability = _argument_type(float, lambda v: 0 < v < 1, "must lie in (0, 1) (delta = 1 makes the "
                                      "guarantee vacuous)")
#: ε of a design: e^ε must be a finite float (it overflows beyond ~709; see pml_design.pipeline.EPSILON_MAX).
_design_epsilon = _argument_type(float, lambda v: math.isfinite(v) and 0 < v <= 700,
                                 "must be a number in (0, 700] (e^epsilon overflows beyond ~709)")
#: An l1 radius: 2 is the diameter of the simplex (the whole simplex), larger values are meaningless.
_radius = _argument_type(float, lambda v: math.isfinite(v) and 0 <= v <= 2, "must lie in [0, 2] (2 is the l1 "
                         "diameter of the simplex)")
_confidence = _argument_type(float, lambda v: 0 < v < 1, "must lie in (0, 1), e.g. 0.95")
_unit_interval = _argument_type(float, lambda v: 0 <= v <= 1, "must lie in [0, 1]")


#: The --utility choices of every subcommand (one list: extend it here).
UTILITIES = ("frequency_estimation", "mutual_information", "map_accuracy", "chi_square_information",
             "total_variation_information")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pml-design`` (demo, design, privatize, estimate, calibrate, reproduce, bench)."""
    from pml_design import __version__  # noqa: PLC0415

    fmt = argparse.ArgumentDefaultsHelpFormatter
    parser = _Parser(prog=PROG, description="Privacy mechanisms with context-aware guarantees (PML).",
                     epilog="Run 'pml-design demo' to see the library's main job on real data.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("demo", formatter_class=fmt, help="end-to-end demo on the bundled Adult data",
                       description="Estimate the distribution of an Adult attribute from a sample, turn delta into an "
                       "l1 radius, design the optimal PML mechanism for epsilon, certify it, privatize the other "
                       "records, estimate their distribution back, and compare with the local-DP frequency oracles (GRR, "
                       "OUE, OLH, subset selection) at the same epsilon.")
    p.add_argument("--attribute", default="relationship",
                   help="categorical Adult column (race, relationship, marital_status, sex, workclass, ...)")
    p.add_argument("--samples", type=_positive_int, default=5000, help="records used to estimate the distribution")
    p.add_argument("--epsilon", type=_design_epsilon, default=1.0, help="privacy parameter epsilon")
    p.add_argument("--delta", type=_failure_probability, default=1e-6, help="failure probability of the estimate")
    p.add_argument("--utility", choices=UTILITIES, default="frequency_estimation",
                   help="what the design optimises (frequency_estimation: the error of estimating the distribution)")
    p.add_argument("--estimator", choices=("ibu", "inversion"), default="ibu",
                   help="how the distribution is estimated back from privatized reports")
    p.add_argument("--seed", type=_nonneg_int, default=0, help="random seed (sample split and privatization)")
    p.add_argument("--plot", nargs="?", const="pml_design_demo.png", default=None, metavar="PNG",
                   help="write a figure (default file name: pml_design_demo.png)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run_demo)

    p = sub.add_parser("design", formatter_class=fmt, help="design a mechanism from a CSV column or counts",
                       description="Design the utility-optimal mechanism that is epsilon-PML for every distribution "
                       "in the l1 ball around the empirical distribution of the data (radius from --delta, core "
                       "paper eq. (7), or given with --radius), certify it, and write it as JSON (+ CSV matrix).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--csv", metavar="FILE", help="CSV file with a header row")
    src.add_argument("--parquet", metavar="FILE", help="Parquet file (instead of --csv)")
    src.add_argument("--counts", metavar="FILE", help="file with one 'count' or 'label,count' per line")
    p.add_argument("--column", help="column of --csv (header name or 0-based index)")
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")
    p.add_argument("--epsilon", type=_design_epsilon, required=True, help="privacy parameter epsilon")
    rad = p.add_mutually_exclusive_group(required=True)
    rad.add_argument("--delta", type=_failure_probability, help="failure probability; the radius is beta*(delta)")
    rad.add_argument("--radius", type=_radius, help="l1 radius of the uncertainty ball, given directly")
    p.add_argument("--utility", choices=UTILITIES, default="mutual_information", help="utility to maximise")
    p.add_argument("--method", choices=("auto", "exact", "scalable"), default="auto",
                   help="exact extreme-ray LP (N <= 16) or column generation")
    p.add_argument("--solver", default=None, help="cvxpy solver name (e.g. CLARABEL, ECOS, HIGHS)")
    p.add_argument("--allow-zero", action="store_true", help="allow categories with zero count")
    p.add_argument("--time-limit", type=_positive_float, default=None, metavar="SECONDS",
                   help="wall-clock limit of the column-generation method (default 60); a warning names the gap left")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar with value, bound and gap on stderr (default: when stderr is a terminal)")
    p.add_argument("--compare", action="store_true", help="also compare with the LDP baselines")
    p.add_argument("--output", "-o", metavar="PREFIX", help="write the mechanism file PREFIX.json and the matrix "
                   "PREFIX.csv")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_run_design)

    p = sub.add_parser("privatize", formatter_class=fmt, help="privatize a column of a CSV/Parquet file",
                       description="Write a copy of a CSV (or Parquet) file with one column's values replaced by "
                       "privatized labels drawn from a mechanism file (pml-design design -o). The file is streamed in "
                       "batches (memory does not grow with its size); the output is written to a temporary file "
                       "and renamed only on success.")
    _deploy_arguments(p)
    p.add_argument("--seed", type=_nonneg_int, default=None, help="random seed (default: fresh OS entropy); the "
                   "result does not depend on the batch size")
    p.add_argument("--output", "-o", metavar="OUT", required=True, help="output file (.parquet: Parquet, else CSV)")
    p.add_argument("--json", action="store_true", help="print a summary as JSON")
    p.set_defaults(func=_run_privatize)

    p = sub.add_parser("estimate", formatter_class=fmt, help="estimate the distribution from privatized data",
                       description="Estimate the distribution of the original categories from a column of "
                       "privatized labels (pml-design privatize), with pointwise confidence intervals from the "
                       "Fisher information of the mechanism (streamed; any file size).")
    _deploy_arguments(p)
    p.add_argument("--ci", type=_confidence, default=0.95, help="confidence level of the intervals")
    p.add_argument("--method", choices=("ibu", "inversion"), default="ibu",
                   help="maximum likelihood (iterative Bayesian update) or projected inversion")
    p.add_argument("--json", action="store_true", help="print categories, estimate, ci_low, ci_high, n as JSON")
    p.set_defaults(func=_run_estimate)

    p = sub.add_parser("calibrate", formatter_class=fmt, help="noise scales for a target guarantee",
                       description="Noise scale of the Laplace / Gaussian / histogram mechanisms for a target "
                       "(epsilon, delta)-PML guarantee, next to the context-free (LDP / DP) scale.")
    csub = p.add_subparsers(dest="mechanism", metavar="MECHANISM", parser_class=_Parser, required=True)
    c = csub.add_parser("laplace", formatter_class=fmt, help="binary Laplace mechanism (core paper eq. (16))",
                        description="Laplace scale b for (epsilon, delta)-PML of a binary attribute whose smaller "
                        "probability is estimated as p_hat_min from m samples (core paper, eq. (16)).")
    c.add_argument("--epsilon", type=_positive_float, required=True)
    c.add_argument("--delta", type=_probability, required=True)
    c.add_argument("--p-hat-min", type=_unit_interval, required=True, help="smaller estimated probability")
    c.add_argument("--m", type=_positive_int, required=True, help="number of samples behind the estimate")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_run_calibrate_laplace)
    c = csub.add_parser("gaussian", formatter_class=fmt, help="binary Gaussian mechanism (core paper eq. (17))",
                        description="Smallest sigma whose (epsilon*, delta*)-PML guarantee (core paper, Section VI-B) "
                        "meets the target, for P(X=-1) estimated as p_hat from m samples.")
    c.add_argument("--epsilon", type=_positive_float, required=True, help="target epsilon*")
    c.add_argument("--delta", type=_probability, required=True, help="target delta* (includes delta2)")
    c.add_argument("--delta2", type=_probability, default=None, help="failure probability of the estimate "
                   "(default: delta/2)")
    c.add_argument("--p-hat", type=_unit_interval, required=True, help="estimate of P(X = -1)")
    c.add_argument("--m", type=_positive_int, required=True, help="number of samples behind the estimate")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_run_calibrate_gaussian)
    c = csub.add_parser("histogram", formatter_class=fmt, help="Laplace histogram (histogram paper eq. (1))",
                        description="Laplace scale of a histogram for epsilon-PML given a lower bound alpha on the "
                        "bin probabilities, or (epsilon, delta)-PML with alpha estimated from counts / a CSV column.")
    c.add_argument("--epsilon", type=_positive_float, required=True)
    c.add_argument("--alpha", type=_unit_interval, default=None, help="lower bound on every bin probability")
    c.add_argument("--counts", metavar="FILE", default=None, help="counts file to estimate alpha from")
    c.add_argument("--csv", metavar="FILE", default=None, help="CSV file to estimate alpha from")
    c.add_argument("--column", default=None, help="column of --csv")
    c.add_argument("--delta", type=_probability, default=None, help="failure probability of the estimate")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_run_calibrate_histogram)

    p = sub.add_parser("reproduce", formatter_class=fmt, help="run one of the papers' figure scripts",
                       description="Run a figure script of benchmarks/ (needs a source checkout). FIGURE is a "
                       "script name such as fig_pml_fig2, pml-fig2, histogram-fig1, flexible-fig3; --list shows all.")
    p.add_argument("figure", nargs="?", metavar="FIGURE", help="figure / script name")
    p.add_argument("--list", action="store_true", help="list the available scripts")
    p.add_argument("--quick", action="store_true", help="small, fast version")
    p.add_argument("--outdir", default="benchmarks/results", help="output directory")
    p.add_argument("--json", action="store_true", help="print the script's summary as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run_reproduce)

    p = sub.add_parser("bench", formatter_class=fmt, help="run all benchmark / figure scripts (python -m benchmarks)",
                       description="Run every script of benchmarks/ within a time budget and write "
                       "summary.json and summary.md (needs a source checkout).")
    p.add_argument("--outdir", default="benchmarks/results", help="output directory")
    p.add_argument("--budget", type=_positive_float, default=600.0, help="total time budget in seconds")
    p.add_argument("--quick", action="store_true", help="run every script in its quick mode")
    p.add_argument("--only", nargs="+", metavar="SCRIPT", help="run only these scripts")
    p.set_defaults(func=_run_bench)
    return parser


def _deploy_arguments(p: argparse.ArgumentParser) -> None:
    """MECHANISM, --csv/--parquet, --column, --delimiter, --no-progress (privatize and estimate)."""
    p.add_argument("mechanism", metavar="MECHANISM", help="mechanism file (JSON) written by 'pml-design design -o'")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--csv", metavar="FILE", help="CSV file with a header row")
    src.add_argument("--parquet", metavar="FILE", help="Parquet file (needs pyarrow)")
    p.add_argument("--column", required=True, help="the column to use (header name or 0-based index)")
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (shown only on a terminal)")


#: Library parameter names -> the command-line option that sets them (to name the argument in errors).
_OPTION_OF = {
    "epsilon": "--epsilon", "delta": "--delta", "delta2": "--delta2", "radius": "--radius", "alpha": "--alpha",
    "p_hat_min": "--p-hat-min", "p_hat": "--p-hat", "m": "--m", "solver": "--solver", "utility": "--utility",
    "method": "--method", "counts": "--counts", "samples": "--samples", "name": "--attribute",
}


def _name_argument(message: str) -> str:
    """Prefix a library error message with the command-line option it is about (``argument --x: ...``)."""
    if message.startswith("argument "):
        return message
    first = message.split(" ", 1)[0].strip("'\"")
    opt = _OPTION_OF.get(first)
    return f"argument {opt}: {message}" if opt else message


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pml-design`` console script; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 for a user mistake (one line on stderr), 1 if a solver failed.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help / --version (0) or a parse error (2, already reported)
        return int(exc.code) if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except (CliError, ValueError, TypeError, FileNotFoundError, ImportError) as exc:
        if os.environ.get("PML_DESIGN_DEBUG"):
            raise
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"{PROG}: error: {_name_argument(msg)}\n")
        return 2
    except BrokenPipeError:  # e.g. `pml-design design ... --json | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except RuntimeError as exc:  # SolverFailedError and friends
        sys.stderr.write(f"{PROG}: error: {type(exc).__name__}: {str(exc).splitlines()[0]}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
