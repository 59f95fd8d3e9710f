"""``pml-design design``: an optimal PML mechanism from a CSV/Parquet column or a counts file."""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import math
import os
import pathlib
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

from ._common import (
    FORMATTER,
    UTILITIES,
    CliError,
    add_categories_arguments,
    ball_radius,
    csv_column_counts,
    design_epsilon,
    failure_probability,
    categories_from_args,
    PROG,
    categories_option,
    jsonable,
    positive_float,
    print_json,
    read_counts,
    table_option,
    table_source,
)
from .cohort import add_oracle_arguments


def add_parser(sub: Any) -> None:
    """Register ``design`` on the subparsers ``sub`` of the ``pml-design`` parser."""
    p = sub.add_parser("design", formatter_class=FORMATTER, help="design a mechanism from a CSV column or counts",
                       description="Design the utility-optimal mechanism that is epsilon-PML for every distribution "
                       "in the l1 ball around the empirical distribution of the data (radius from --delta, core "
                       "paper eq. (7), or given with --radius), certify it, and write it as JSON (+ CSV matrix).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--csv", metavar="FILE", help="CSV file with a header row")
    src.add_argument("--parquet", metavar="FILE", help="Parquet file (instead of --csv)")
    src.add_argument("--counts", metavar="FILE", help="file with one 'count' or 'label,count' per line")
    src.add_argument("--reports", metavar="FILE", help="a first cohort's LDP reports (CSV, or Parquet by the suffix "
                     ".parquet), as written by 'pml-design privatize --oracle': P-hat is the oracle's estimate and the "
                     "radius is widened for the reports (needs --column, --oracle, --ldp-epsilon, --categories, "
                     "--delta); docs/cli.md, 'A first cohort of LDP reports'")
    p.add_argument("--column", help="column of --csv/--parquet/--reports (header name or 0-based index)")
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")
    p.add_argument("--epsilon", type=design_epsilon, required=True, help="privacy parameter epsilon")
    rad = p.add_mutually_exclusive_group(required=True)
    rad.add_argument("--delta", type=failure_probability, help="failure probability; the radius is beta*(delta)")
    rad.add_argument("--radius", type=ball_radius, help="l1 radius of the uncertainty ball, given directly")
    p.add_argument("--dp-epsilon", type=positive_float, default=None, metavar="E0",
                   help="the design records stay protected: use only an E0-DP release of their counts (discrete "
                   "Laplace noise, add/remove one record) and widen the radius accordingly (needs --delta; with "
                   "--csv/--parquet also --categories); docs/design.md section 11")
    add_categories_arguments(p, "default: the values in the data; required with --dp-epsilon and with --reports (in "
                             "the order given to 'privatize --oracle')")
    add_oracle_arguments(p, "of the reports of --reports, as given to 'privatize --oracle'")
    p.add_argument("--utility", choices=UTILITIES, default="frequency_estimation", help="utility to optimise; the "
                   "default, frequency_estimation, serves the next steps (privatize, estimate): it minimises the "
                   "error of the frequencies estimated from the reports")
    p.add_argument("--method", choices=("auto", "exact", "scalable"), default="auto",
                   help="exact extreme-ray LP (N <= 16) or column generation")
    p.add_argument("--solver", default=None, help="cvxpy solver name (e.g. CLARABEL, ECOS, HIGHS)")
    p.add_argument("--unverified-reports", action="store_true",
                   help="with --reports: read a file without the provenance file REPORTS.ldp.json that privatize "
                        "--oracle writes (reports collected by another system that applied this oracle); nothing then "
                        "checks that the column holds such reports (a column of raw values would publish its exact "
                        "counts under an LDP claim), nor the oracle, --ldp-epsilon, --k and the order of --categories")
    p.add_argument("--allow-zero", action="store_true", help="allow categories with zero count")
    p.add_argument("--time-limit", type=positive_float, default=None, metavar="SECONDS",
                   help="wall-clock limit of the whole command: the design gets what is left after the time kept "
                   "for the disclosure, the -o files and --json (default: the design's own 60 s); a warning names the "
                   "gap left")
    p.add_argument("--max-outputs", type=int, default=None, metavar="M",
                   help="frequency_estimation: the most outputs the mechanism may have (at least the number of "
                   "categories; the JSON and CSV files take ~40 bytes per category and output); default: as many as "
                   "--time-limit leaves room for (up to 32768); the smaller of the two applies")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress on stderr with value, bound and gap: a bar redrawn every second on a terminal, "
                   "else one plain line every ~10 s (default: on when stderr is a terminal)")
    p.add_argument("--compare", action="store_true", help="also compare with the LDP baselines")
    p.add_argument("--output", "-o", metavar="PREFIX", help="write the mechanism file PREFIX.json and the matrix "
                   "PREFIX.csv (checked before the design runs: never an input, never a directory; an existing file, "
                   "a mechanism file included, only with --force)")
    p.add_argument("--matrix-format", choices=("auto", "text", "binary"), default="auto",
                   help="the matrix in PREFIX.json as rows of numbers (text: format version 2, and PREFIX.csv) or as "
                   "its float64 bytes, zlib, base64 (binary: format version 3, ~15 times smaller, no PREFIX.csv); auto: "
                   "binary above 2**22 entries (categories x outputs)")
    p.add_argument("--force", action="store_true", help="replace PREFIX.json / PREFIX.csv if they exist (never an "
                   "input); a replaced mechanism file is the only key to the reports privatized with it: keep a copy")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


@contextlib.contextmanager
def _share_named(design_limit: float | None, limit: float | None, shares: int = 1) -> Iterator[None]:
    """Re-emit the design's warnings with its time limit named as its share of ``--time-limit`` (a review: "time
    limit 1.80215 s; raise --time-limit" after ``--time-limit 5``), and turn a refusal's "time limit ... to at least
    X s" (the design's own need) into the ``--time-limit`` that gives the design X s (``shares``: 2 with
    ``--compare``, which halves the design's time)."""
    if design_limit is None:
        yield
        return
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as rec:
            try:
                yield
            finally:
                caught = list(rec)
    except ValueError as exc:
        import re  # noqa: PLC0415

        kept = float(limit) - shares * design_limit  # what the command keeps for itself (imports, files, ...)
        text = re.sub(r"(solver_options=\{'time_limit': [^}]*\}) to at least (\d+) s",
                      lambda mo: f"--time-limit to at least {math.ceil(kept + shares * float(mo.group(2)))} s (the "
                                 f"design's share {mo.group(2)} s, the rest for what follows it)", str(exc))
        if text == str(exc):
            raise
        raise ValueError(text) from None
    finally:  # (also when the design raises: its warnings are still shown)
        share = f"time limit {design_limit:g} s"
        for w in caught:
            text = str(w.message).replace(share, f"{share}, the design's share of --time-limit {limit:g} s")
            text = text.replace(f"time limit of {design_limit:g} s",  # (the LDP-optimum warning's wording)
                                f"time limit of {design_limit:g} s (the design's share of --time-limit {limit:g} s)")
            warnings.showwarning(w.category(text), w.category, w.filename, w.lineno)


def _solver_options(args: argparse.Namespace, time_limit: float | None = None) -> dict | None:
    """``solver_options`` from the design's share of ``--time-limit`` (:func:`_time_budget`), ``--progress`` and
    the output cap :func:`_time_budget` chose (``--max-outputs``, or what the limit leaves room for)."""
    opts = {k: v for k, v in (("time_limit", time_limit), ("progress", args.progress),
                              ("max_outputs", getattr(args, "outputs_cap", None))) if v is not None}
    return opts or None


#: Seconds per entry of the design's matrix (N × outputs) for what follows the design, on the reference machine
#: (times ``affordable.cached_single_thread_factor``: that work is single-threaded): the disclosure listing, the files
#: of ``-o`` (``files``: the matrix as text, JSON and CSV; ``binary files``: as ``matrix_binary``, JSON only), the
#: ``--json`` output. Measured 2026-11-27 (session 19, after the two-level disclosure and the binary matrix) at
#: N = 2 000, 8 000 outputs (16 M entries): 37–74 ns, 305 ns, 99 ns and 135–180 ns an entry; about half as much again
#: is kept here. (Before: 0.56–0.75 µs for the disclosure and the text files together.)
POST_SECONDS_PER_ENTRY: dict[str, float] = {"disclosure": 1.2e-7, "files": 4.5e-7, "binary files": 1.5e-7,
                                            "json": 3e-7}
#: The most categories the estimate's line names (the largest; ``--json`` lists all): at N = 2 000 it was 34 kB.
SHOWN_CATEGORIES: int = 12
#: The most of ``--time-limit`` a frequency-estimation design's files may take: above it its outputs are capped
#: (:func:`_time_budget`).
POST_SHARE: float = 0.5


def _time_budget(args: argparse.Namespace, n: int, started: float, files: bool) -> tuple[float | None, float]:
    """``(design's time limit, seconds kept back)`` out of ``--time-limit``, which covers the whole command; sets
    ``args.outputs_cap``, the frequency-estimation design's ``max_outputs`` (None: no cap), and
    ``args.outputs_by_time`` when the limit set it.

    What follows the design grows with the matrix (N × outputs; a frequency-estimation design has up to
    ``min(32768, max(4096, 16N))`` outputs (the LDP channel and the larger one offered: 10.7N and 18.4N measured
    at N = 954), another about N): a review found ``--time-limit 8`` taking 40 s at
    N = 790 (the design 9 s, then the summary, the disclosure and a 29 s save). That time is kept back. For
    frequency estimation, where it would be more than :data:`POST_SHARE` of the limit, the design's outputs are
    capped so that it is not (``--max-outputs`` caps them too): at N = 2 000, ``--time-limit 30`` with ``-o`` was
    refused ("give at least 262 s"); it now designs on at most ~7 500 outputs. A limit that cannot fit N outputs
    (the fewest that identify N frequencies), or that leaves the design less than a tenth of itself beyond the
    contract's slack (1.1 × the limit + 3 s), is refused, naming the time needed. ``--compare`` halves what is left
    (the optimal LDP design gets the other half).
    """
    estimation = args.utility == "frequency_estimation"
    outputs = min(32768, max(4096, 16 * n)) if estimation else 2 * n
    cap = getattr(args, "max_outputs", None)
    if cap is not None:  # (the utility was checked by run, before the data were read)
        if cap < n:
            raise CliError(f"argument --max-outputs: must be at least the number of categories ({n}): fewer outputs "
                           f"cannot identify {n} frequencies, got {cap}")
        outputs = min(outputs, cap)
    args.outputs_cap = cap
    if args.time_limit is None:
        return None, 0.0
    from ..design.estimation.affordable import cached_single_thread_factor  # noqa: PLC0415

    from ..deploy.matrix_binary import BINARY_ABOVE, use_binary  # noqa: PLC0415

    rates = POST_SECONDS_PER_ENTRY
    scale = cached_single_thread_factor() if n * outputs > 1_000_000 else 1.0

    def per_output(k: int) -> float:  # seconds per output with k outputs (binary files, by default above 2**22 entries)
        binary = use_binary(args.matrix_format, n * k)
        file_rate = (rates["binary files"] if binary else rates["files"]) if files else 0.0
        return n * scale * (rates["disclosure"] + file_rate + (rates["json"] if args.json else 0.0))

    turn = BINARY_ABOVE // n if args.matrix_format == "auto" else outputs  # the most outputs still written as text

    def worst(k: int) -> float:  # what follows a design of at most k outputs, whichever count it ends with (a review:
        j = min(k, turn)         # the cost drops where the matrix turns binary, so a smaller design can cost more)
        return max(k * per_output(k), j * per_output(j))

    limit = float(args.time_limit)
    what = (f"(the disclosure listing{', the files' if files else ''}{', the JSON' if args.json else ''})")
    if estimation and worst(outputs) > POST_SHARE * limit:  # fewer outputs, so that the files fit
        # the most outputs that fit: in the text range, or beyond it where the whole text range fits too
        fit = min(outputs, turn, int(POST_SHARE * limit / per_output(min(outputs, turn))))
        if outputs > turn and worst(turn + 1) <= POST_SHARE * limit:
            beyond = min(outputs, int(POST_SHARE * limit / per_output(outputs)))
            fit = beyond if beyond > turn else fit
        if fit < n:
            raise CliError(f"argument --time-limit: {limit:g} s is too short for {n} categories: what follows the "
                           f"design {what} takes about {n * per_output(n):.0f} s on this machine for a mechanism with "
                           f"{n} outputs, the fewest that identify {n} frequencies (measured now: it grows with the "
                           f"machine's load); give at least {math.ceil(2 * n * per_output(n) / POST_SHARE + 10)} s")
        outputs = args.outputs_cap = fit
        args.outputs_by_time = True
    keep = worst(outputs)
    spent = time.perf_counter() - started
    left = limit - spent - keep
    if left < 0.1 * limit and spent + keep + 0.1 * limit <= 1.1 * limit + 3.0:
        left = 0.1 * limit  # within the contract's slack (1.1 × the limit + a few seconds): imports, a tiny limit
    if left < 0.1 * limit:
        raise CliError(f"argument --time-limit: {limit:g} s is too short for {n} categories: what follows the design "
                       f"{what} takes about {keep:.0f} s on this machine for up to {outputs} outputs (measured now: "
                       f"it grows with the machine's load); give at least {math.ceil(2.5 * keep + 10)} s")
    return (left / 2 if args.compare else left), keep


def run(args: argparse.Namespace) -> int:
    """Run ``pml-design design``; returns the exit status."""
    started = time.perf_counter()

    import numpy as np  # noqa: PLC0415 - the numerical stack is imported only to run

    import pml_design as pml  # noqa: PLC0415

    if args.counts is not None:  # options that would be silently ignored
        for opt, value in (("--column", args.column), ("--delimiter", args.delimiter)):
            if value is not None:
                raise CliError(f"argument {opt}: not allowed with --counts (it reads --csv/--parquet)")
    if args.parquet is not None and args.delimiter is not None:
        raise CliError("argument --delimiter: not allowed with --parquet (a CSV option)")
    if args.unverified_reports and args.reports is None:
        raise CliError("argument --unverified-reports: only with --reports")
    if args.method == "exact" and args.utility == "frequency_estimation":  # (the library's message named --utility)
        raise CliError("argument --method: exact (exhaustive ray enumeration) does not apply to --utility "
                       "frequency_estimation (the default), which is designed by column generation: use --method auto "
                       "(or scalable), or --method exact with another --utility")
    if args.max_outputs is not None:  # checked before the data are read (the bound N with them, in _time_budget)
        if args.utility != "frequency_estimation":
            raise CliError(f"argument --max-outputs: only with --utility frequency_estimation (got --utility "
                           f"{args.utility})")
        if args.max_outputs < 2:
            raise CliError(f"argument --max-outputs: must be at least the number of categories, got {args.max_outputs}")
    if args.matrix_format != "auto" and args.output is None:
        raise CliError(f"argument --matrix-format: only with --output (it is the format of PREFIX.json), got "
                       f"{args.matrix_format}")
    outputs = _output_paths(args)
    if args.reports is not None:  # a first cohort's LDP reports (cli/cohort.py)
        from .cohort import design_from_report_file  # noqa: PLC0415

        est, labels, source, kept_back = design_from_report_file(args, started, outputs is not None)
        res, p_hat, radius, delta, m, counts = est.result, est.p_hat, est.radius, est.delta, est.m, None
        statement, n = est.statement(), len(labels)
    else:
        if any(v is not None for v in (args.oracle, args.ldp_epsilon, args.k)):
            opt = "--oracle" if args.oracle is not None else "--ldp-epsilon" if args.ldp_epsilon is not None else "--k"
            raise CliError(f"argument {opt}: only with --reports (the oracle of a first cohort's LDP reports)")
        res, p_hat, radius, delta, statement, est, labels, counts, m, n, source, kept_back = \
            _design_from_data(args, started, outputs)
    out: dict[str, Any] = {
        "source": source,
        "categories": labels,
        "counts": counts,
        "m": m,
        "prior_source": "public sample" if args.delta is not None else None,
        "p_hat": p_hat,
        "epsilon": float(args.epsilon),
        "delta": delta,
        "radius": radius,
        "certified_epsilon": res.certified_epsilon,
        "statement": statement,
        "utility_name": res.utility_name,
        "utility": res.utility,
        "upper_bound": res.upper_bound,
        "lower_bound": res.lower_bound,
        "sense": res.sense,
        "bound": res.bound,
        "relative_gap": res.relative_gap,
        "optimal": res.optimal,
        "method": res.method,
        "solver": res.solver,
        "matrix": res.matrix,
        "matrix_rows": "inputs (categories)",
        "matrix_columns": "outputs",
        "disclosure": res.disclosure(),
        "design_data": res.info["design_data"],
        # the output cap, and what set it (a review: with --json nothing said that --time-limit had capped the design)
        "max_outputs": getattr(args, "outputs_cap", None),
        "max_outputs_from": ("--time-limit" if getattr(args, "outputs_by_time", False) else
                             "--max-outputs" if getattr(args, "outputs_cap", None) is not None else None),
    }
    if args.dp_epsilon is not None or args.reports is not None:  # only the DP release / the LDP estimate may leave:
        del out["counts"]                                               # no exact counts, no exact m
        out.update(m=est.m, prior_source=est.prior_source, prior_params=est.prior_params)
        m = est.m
    if args.compare:
        # the optimal eps-LDP design gets what is left of --time-limit (a column generation for frequency estimation)
        left = None if args.time_limit is None else max(
            float(args.time_limit) - (time.perf_counter() - started) - kept_back, 0.05 * float(args.time_limit))
        cmp = pml.compare_with_ldp(res, solver_options=None if left is None else {"time_limit": left})
        out["ldp_comparison"] = {"optimal_ldp": cmp.optimal_ldp, "randomized_response": cmp.randomized_response,
                                 "rr_calibrated_to_pml": cmp.rr_pml, "gain_over_ldp": cmp.gain_over_ldp,
                                 "optimal_ldp_relative_gap": cmp.optimal_ldp_gap}
        worse = cmp.gain_over_ldp > 1 + 1e-9 if res.sense == "min" else cmp.gain_over_ldp < 1 - 1e-9
        if worse:  # (a review: a capped design lost to the optimal LDP channel, and only "ratio 1" said so)
            warnings.warn(pml.PMLDesignWarning(
                f"the PML design ({res.utility_name} {res.utility:.6g}) is worse than the optimal epsilon-LDP "
                f"mechanism --compare found ({cmp.optimal_ldp:.6g}), which is epsilon-PML for every distribution: give "
                "the design more time" + (" or more outputs (--time-limit, --max-outputs)"
                                          if getattr(args, "outputs_cap", None) is not None else " (--time-limit)")))
    written = []
    if outputs is not None:
        written = _write_design_files(outputs, res, labels, delta, m,
                                      {k: out[k] for k in ("ldp_comparison",) if k in out}, out["disclosure"],
                                      force=args.force, matrix_format=args.matrix_format)
        out["files"] = written
        if len(written) == 1 and outputs[1].exists():  # (a binary matrix: an earlier design's PREFIX.csv stays)
            out["stale_files"] = [str(outputs[1])]
    if args.dp_epsilon is not None:  # every run draws a new release (a new user's trial reran it unawares)
        sys.stderr.write(f"{PROG}: note: this run drew a new {args.dp_epsilon:g}-DP release of the design records' "
                         "counts; another design on the same records releases them again, and their guarantee becomes "
                         "the sum of both dp_epsilon: keep this design (-o writes its mechanism file) rather than "
                         "designing again\n")
    if args.json:
        print_json(out)
        return 0
    what = (f"{args.dp_epsilon:g}-DP estimate (noisy counts; at least m={m} records)" if args.dp_epsilon is not None
            else f"{args.ldp_epsilon:g}-LDP estimate from m={m} reports ({est.prior_params['oracle']})"
            if args.reports is not None else f"estimate from m={m} samples")
    shown = range(n) if n <= SHOWN_CATEGORIES else np.argsort(-np.asarray(p_hat), kind="stable")[:SHOWN_CATEGORIES]
    print(f"{what} over {n} categories" + ("" if n <= SHOWN_CATEGORIES else
                                           f" (the {SHOWN_CATEGORIES} largest; --json lists all)") + ": "
          + ", ".join(f"{labels[i]}={p_hat[i]:.4g}" for i in shown))
    how = ("widened for the DP noise, docs/design.md section 11" if args.dp_epsilon is not None else "for the LDP "
           "reports, docs/design.md section 11.2" if args.reports is not None else "core paper eq. (7)")
    print(f"l1 radius {radius:.4g}" + (f" (delta={delta:g}, {how})" if delta is not None else ""))
    if args.reports is None and args.counts is None and args.categories is None and args.categories_file is None:
        print(f"note: the categories are the {n} values of the design data; records with any other value cannot be "
              "privatized with this mechanism (give the full list with --categories or --categories-file)")
    if res.sense == "min":
        bound = f"lower bound {res.lower_bound:.6g}" if np.isfinite(res.lower_bound) else "no lower bound"
        print(f"designed {res.matrix.shape[0]}x{res.matrix.shape[1]} mechanism: {res.utility_name} error per report = "
              f"{res.utility:.6g} (lower is better; {bound}, optimal={res.optimal}, method {res.method})")
    else:
        print(f"designed {res.matrix.shape[0]}x{res.matrix.shape[1]} mechanism: {res.utility_name} = {res.utility:.6g} "
              f"(upper bound {res.upper_bound:.6g}, optimal={res.optimal}, method {res.method}, solver {res.solver})")
    print(f"certified: {statement}")
    if args.compare:
        c = out["ldp_comparison"]
        g = c["optimal_ldp_relative_gap"]
        # an LDP design not proven optimal is named as what it is (a new user read "optimal LDP: 209.083 (within
        # 25.1% of optimal)" as the optimum)
        proven = not g > 0.01
        label = "optimal LDP" if proven else "best LDP design found"
        within = "" if proven else (" (no bound)" if not np.isfinite(g) else f" (proven within {100 * g:.3g}% of the "
                                                                             "LDP optimum)")
        gain = c["gain_over_ldp"]  # pml / optimal_ldp: for an error (sense min) below 1 is better (it read "gain 0.261x")
        gain_text = (f"gain over LDP: {gain:.3g}x" if res.sense != "min"
                     else f"PML error / {label} error: {gain:.3g} (lower is better)")
        print(f"{label}: {c['optimal_ldp']:.6g}{within}   randomized response: {c['randomized_response']:.6g}   "
              f"{gain_text}")
    if res.matrix.shape[1] <= 12:
        with np.printoptions(precision=4, suppress=True, linewidth=120):
            print("mechanism P(y|x) (rows = categories):")
            print(res.matrix)
    else:
        print(f"mechanism P(y|x): {res.matrix.shape[1]} outputs (in the files written with -o, or with --json)")
    if getattr(args, "outputs_by_time", False):
        print(f"note: at most {args.outputs_cap} outputs, so that what follows the design fits --time-limit "
              f"{args.time_limit:g} s (a longer limit allows more)")
    from ..design.disclosure import contained_point_mass, disclosure_lines  # noqa: PLC0415

    for line in disclosure_lines(out["disclosure"], point_mass=contained_point_mass(res.uncertainty, labels)):
        print(line)
    for f in written:
        print(f"wrote {f}")
    if len(written) == 1:
        print(f"note: the matrix ({res.matrix.shape[0]} x {res.matrix.shape[1]}) is in {written[0]} only, as binary "
              f"(format version 3; --matrix-format text also writes {outputs[1]})"
              + (f"; the existing {outputs[1]} is not this design's" if outputs[1].exists() else ""))
    if written and out["design_data"].get("kind") is None:
        print(f"note: no fingerprint of the design data was kept ({out['design_data']['why']}); privatize cannot "
              "recognise them: release only records apart from them")
    return 0


def _design_from_data(args: argparse.Namespace, started: float, outputs: Any) -> tuple:
    """The design from ``--csv``/``--parquet``/``--counts``: ``(res, p_hat, radius, delta, statement, est, labels,
    counts, m, n, source, kept_back)`` (``est``: the :class:`EstimatedDesign` with ``--delta``, else None)."""
    from dataclasses import replace  # noqa: PLC0415

    import pml_design as pml  # noqa: PLC0415

    est = None
    # with --dp-epsilon the arguments are checked before the protected data are read; a counts file needs the public
    # categories too (its labels are usually what the data hold)
    cats = categories_from_args(args)  # (read and checked before the protected data are)
    if args.dp_epsilon is not None and cats is None:
        raise CliError("argument --dp-epsilon: give the public list of categories with --categories or "
                       "--categories-file (the values present in the data, and the labels of a counts file made from "
                       "them, are themselves protected: not public)")
    if args.dp_epsilon is not None and args.delta is None:
        raise CliError("argument --dp-epsilon: needs --delta (the radius is derived from delta and widened for the "
                       "noise), not --radius")
    if args.csv is not None or args.parquet is not None:
        option = table_option(args)
        if args.column is None:
            raise CliError(f"argument --column: required with {option}")
        path = args.csv if args.csv is not None else args.parquet
        # the design column's SHA-256 in the same pass (not with --dp-epsilon: no hash of DP-protected records)
        digest = hashlib.sha256() if args.dp_epsilon is None else None
        labels, counts = csv_column_counts(path, args.column, args.delimiter, option, args.parquet is not None,
                                           digest=digest, quote_values=args.dp_epsilon is None)
        source = {option[2:]: path, "column": args.column}
    else:
        counts, labels = read_counts(args.counts, quote_labels=args.dp_epsilon is None)
        source = {"counts": args.counts}
        digest = None
    if cats is not None:
        labels, counts = _on_categories(labels, counts, cats, categories_option(args))
    n = len(labels)
    if n < 2:
        raise CliError(f"argument --column: need at least 2 distinct values, got {labels}")
    m = int(counts.sum())
    if m == 0 and args.dp_epsilon is None:  # (with --dp-epsilon not refused: that would tell that there is no record;
        raise CliError("argument --counts: all counts are zero")  # the DP release decides, docs/design.md §11.1)
    if args.dp_epsilon is None and not args.allow_zero and (counts == 0).any():  # (public design data: named)
        zeros = [labels[i] for i in (counts == 0).nonzero()[0]]
        option = categories_option(args) if cats is not None else "--counts" if args.counts else table_option(args)
        shown = f"{zeros}" if len(zeros) <= 10 else f"{zeros[:10]} ... ({len(zeros)} in all)"  # (as the library's)
        raise CliError(f"argument {option}: the categories {shown} never occur in the design data, so the "
                       "estimate lacks full support (PML needs P_X > 0); pass --allow-zero to keep them (the ball of "
                       "radius > 0 still covers full-support distributions), or collect more samples")
    design_limit, kept_back = _time_budget(args, n, started, outputs is not None)
    with _share_named(design_limit, args.time_limit, 2 if args.compare else 1):  # warnings name the design's share
        if args.delta is not None:
            est = pml.design_from_samples(dict(zip(labels, counts.tolist())), None, args.epsilon, args.delta,
                                         counts=True, categories=labels, utility=args.utility, method=args.method,
                                         solver=args.solver, allow_zero=args.allow_zero,
                                         solver_options=_solver_options(args, design_limit), dp_epsilon=args.dp_epsilon)
            res, p_hat, radius, delta = est.result, est.p_hat, est.radius, est.delta
            statement = est.statement()
            res = replace(res, info={**res.info, "design_data": _fingerprint(args, counts, digest)})
        else:
            p_hat = pml.counts_distribution(counts, allow_zero=args.allow_zero)
            res = pml.design(pml.L1Ball(p_hat, args.radius), args.epsilon, utility=args.utility, method=args.method,
                            solver=args.solver, solver_options=_solver_options(args, design_limit)).with_labels(labels)
            res = replace(res, info={**res.info, "design_data": _fingerprint(args, counts, digest)})
            radius, delta = float(args.radius), None
            statement = (f"{res.certified_epsilon:.6g}-PML for every distribution within l1 distance {radius:.4g} of "
                         f"the estimate from m={m} samples")
    return res, p_hat, radius, delta, statement, est, labels, counts, m, n, source, kept_back


def _fingerprint(args: argparse.Namespace, counts: Any, digest: Any) -> dict:
    """``design_data`` of the mechanism file: the design column's SHA-256 (:func:`pml_design.pipeline.design_fingerprint`)."""
    from ..pipeline import design_fingerprint  # noqa: PLC0415

    if args.counts is not None:
        return {"kind": None, "why": "designed from counts: no records to fingerprint"}
    if args.dp_epsilon is not None:  # a hash of the records is no DP release: keep none
        return {"kind": None, "why": "P-hat from a DP release of the counts (--dp-epsilon): a hash of the design "
                                     "records would not be covered by their DP guarantee"}
    fp = design_fingerprint(None, counts, sha256=digest.hexdigest())
    if fp.get("kind") == "column sha256":  # designed on split's DESIGN: the file it split holds these records too
        from ..deploy.split import split_draws_of  # noqa: PLC0415

        draws = split_draws_of(args.csv if args.csv is not None else args.parquet)
        if draws is not None:  # the split's seed and fraction: independent of the data (docs/cli.md)
            fp["split_seed"], fp["split_fraction"] = draws
    return fp


def _on_categories(labels: list, counts: Any, cats: list[str], option: str) -> tuple[list, Any]:
    """The counts re-indexed on the public list ``cats`` of ``option`` (absent categories count 0)."""
    import numpy as np  # noqa: PLC0415

    index = {c: i for i, c in enumerate(cats)}
    outside = [lab for lab, cnt in zip(labels, counts) if str(lab) not in index and cnt > 0]
    if outside:
        # no count and no value of the (possibly DP-protected) records in the message
        raise CliError(f"argument {option}: the data hold values outside the list (every value of the column "
                       "must be one of the public categories)")
    out = np.zeros(len(cats), dtype=np.int64)
    for lab, cnt in zip(labels, counts):
        if str(lab) in index:
            out[index[str(lab)]] += int(cnt)
    return cats, out


def _output_paths(args: argparse.Namespace) -> tuple[pathlib.Path, pathlib.Path] | None:
    """``(PREFIX.json, PREFIX.csv)`` of ``--output``, checked before any work (see ``deploy.output``)."""
    if args.output is None:
        return None
    from ..deploy.output import check_output_path  # noqa: PLC0415

    prefix = args.output
    if prefix.endswith(("/", "\\")) or pathlib.Path(prefix).is_dir():
        raise CliError(f"argument --output: {prefix!r} is a directory; give a file prefix such as "
                       f"{str(pathlib.Path(prefix) / 'mechanism')!r} (writes mechanism.json and mechanism.csv there)")
    p = pathlib.Path(prefix)
    if p.suffix.lower() in (".json", ".csv") and p.stem:  # -o mech.json: mech.json and mech.csv, not mech.json.json
        p = p.with_suffix("")
    inputs = [(args.csv, "--csv"), (args.parquet, "--parquet"), (args.counts, "--counts"), (args.reports, "--reports"),
              (getattr(args, "categories_file", None), "--categories-file")]
    if args.reports is not None:  # (its provenance file is read too: replacing it would orphan the reports)
        from ..deploy.reports import provenance_path  # noqa: PLC0415

        inputs.append((provenance_path(args.reports), "--reports' provenance file"))
    data = args.csv if args.csv is not None else args.parquet
    if data is not None:  # (split's record beside the design data is read too: a new user's -o replaced it)
        from ..deploy.split import split_record_path  # noqa: PLC0415

        inputs.append((split_record_path(data), "the split record of the design data"))
    # never an input, never a directory (even with --force); then no existing file without --force: a mechanism file
    # is the only key to decoding the reports privatized with it (a review: it was replaced silently)
    common = {"inputs": inputs, "overwrite": args.force, "option": "argument --output", "force_hint": "--force"}
    jpath = check_output_path(p.with_name(p.name + ".json"), **common)
    # with --matrix-format binary no PREFIX.csv is written: an existing one is left alone, but never an input (a review:
    # the design's own --csv was then listed as an earlier design's matrix in stale_files)
    binary = args.matrix_format == "binary"
    cpath = check_output_path(p.with_name(p.name + ".csv"), **{**common, "overwrite": args.force or binary},
                              **({"kind": "(not written)"} if binary else {}))
    from ..deploy.file import temporary_sibling  # noqa: PLC0415

    try:  # a folder that takes no file (read-only, /proc) fails now, not after the design
        fd, tmp = temporary_sibling(jpath)
        os.close(fd)
        tmp.unlink()
    except OSError as exc:
        raise CliError(f"argument --output: {exc}") from None
    return jpath, cpath


def _write_design_files(paths: tuple[pathlib.Path, pathlib.Path], res: Any, labels: list[str],
                        delta: float | None, m: int, extra: dict, disclosure: list, *, force: bool,
                        matrix_format: str = "auto") -> list[str]:
    """``PREFIX.json`` (the mechanism file, :meth:`DesignResult.save`) and, with the matrix as text, ``PREFIX.csv``
    (the matrix); an existing file is replaced only with ``force`` (``--force``). A binary matrix (``--matrix-format``,
    by default above 2**22 entries) has no CSV: it would be the text the binary form avoids (at N = 2 000, 16 M entries:
    343 MB and seconds to write)."""
    import numpy as np  # noqa: PLC0415

    from ..deploy.file import save_mechanism  # noqa: PLC0415
    from ..deploy.matrix_binary import use_binary  # noqa: PLC0415
    from ..deploy.matrix_text import _matrix_lines  # noqa: PLC0415
    from ..deploy.output import check_output_path, is_mechanism_file  # noqa: PLC0415

    jpath, cpath = paths
    binary = use_binary(matrix_format, res.matrix.size)
    lines, buf = None, io.StringIO()
    if not binary:
        writer = csv.writer(buf, lineterminator="\n")  # ("\n" in a label is quoted only when it is the terminator)
        writer.writerow(["input"] + [f"y{j}" for j in range(res.matrix.shape[1])])
        lines = _matrix_lines(np.asarray(res.matrix, dtype=float))  # each row once, for this CSV and the JSON file
        cell = io.StringIO()
        for lab, line in zip(labels, lines):
            cell.seek(0)
            cell.truncate()
            csv.writer(cell, lineterminator="\n").writerow([lab])  # the label CSV-quoted where needed
            buf.write(cell.getvalue()[:-1] + "," + line + "\n")
    written = [jpath] if binary else [jpath, cpath]
    # checked again now: a file that appeared while the design ran is refused without --force (a review: the check
    # before the design, then a save with overwrite=True, replaced it)
    for path in written:
        check_output_path(path, overwrite=force, option="argument --output", force_hint="--force")
    replaced = jpath.is_file() and is_mechanism_file(jpath)  # (not opened unless a regular file: a FIFO blocks)
    from ..deploy.atomic import write_pair  # noqa: PLC0415

    write_pair(jpath, lambda: save_mechanism(res, jpath, delta=delta, m=m, extra=jsonable(extra), overwrite=True,
                                             _disclosure=disclosure, _matrix_text=lines,
                                             matrix_format="binary" if binary else "text"),
               cpath, None if binary else buf.getvalue())  # (an interrupt leaves neither file alone)
    if replaced:  # a deployed mechanism file is the only key to its reports: never replaced without a word
        sys.stderr.write(f"pml-design: replaced the existing mechanism file {jpath} (reports privatized with the "
                         "previous mechanism can only be read with a copy of it)\n")
    return [str(path) for path in written]
