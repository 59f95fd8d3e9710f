"""``pml-design privatize`` and ``pml-design estimate``: deploy a mechanism file on data (streamed, any size)."""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from typing import Any

from ._common import (
    FORMATTER,
    PROG,
    CliError,
    add_categories_arguments,
    confidence,
    nonneg_int,
    print_json,
    privatized_summary,
    table,
    table_option,
    table_source,
)
from .cohort import add_oracle_arguments, run_privatize_oracle
from .first_cohort import add_first_cohort_arguments, refuse_first_cohort_options, run_estimate_combined


def add_parser(sub: Any) -> None:
    """Register ``privatize`` and ``estimate`` on the subparsers ``sub`` of the ``pml-design`` parser."""
    p = sub.add_parser("privatize", formatter_class=FORMATTER, help="privatize a column of a CSV/Parquet file",
                       description="Write a copy of a CSV (or Parquet) file with one column's values replaced by "
                       "privatized labels drawn from a mechanism file (pml-design design -o), or, for a first cohort "
                       "without a mechanism file, by the reports of an epsilon_1-LDP frequency oracle (--oracle, "
                       "--ldp-epsilon, --categories instead of MECHANISM; then 'pml-design design --reports'). The "
                       "file is streamed in batches (memory does not grow with its size); the output is written to a "
                       "temporary file and renamed only on success.")
    _deploy_arguments(p, oracle=True)
    p.add_argument("--seed", type=nonneg_int, default=None, help="random seed, for tests only: whoever knows the "
                   "seed of a release can undo its noise (default: fresh OS entropy, what a release must use); with "
                   "MECHANISM the result does not depend on the batch size")
    p.add_argument("--output", "-o", metavar="OUT", required=True, help="output file (.parquet: Parquet, else CSV); "
                   "never an input, never a directory")
    p.add_argument("--force", action="store_true",
                   help="replace OUT and its mark OUT.pml.json (with --oracle: its provenance file OUT.ldp.json) if "
                   "they exist")
    p.add_argument("--allow-design-data", action="store_true", help="privatize even the records the mechanism was "
                   "designed on (refused by default: the mechanism file publishes their counts); the output says so")
    p.add_argument("--json", action="store_true", help="print a summary as JSON")
    p.set_defaults(func=run_privatize)

    p = sub.add_parser("estimate", formatter_class=FORMATTER, help="estimate the distribution from privatized data",
                       description="Estimate the distribution of the original categories from a column of "
                       "privatized labels (pml-design privatize), with pointwise confidence intervals from the "
                       "Fisher information of the mechanism (streamed; any file size); with --first-cohort, from "
                       "these and a first cohort's LDP reports together (maximum likelihood over both).")
    _deploy_arguments(p)
    p.add_argument("--ci", type=confidence, default=0.95, help="confidence level of the intervals")
    p.add_argument("--method", choices=("ibu", "inversion"), default="ibu",
                   help="maximum likelihood (iterative Bayesian update) or projected inversion")
    p.add_argument("--json", action="store_true", help="print categories, estimate, ci_low, ci_high, n as JSON")
    p.add_argument("--unverified-reports", action="store_true",
                   help="for a mechanism whose outputs carry the category names: read a file without the mark "
                   "FILE.pml.json that privatize writes (reports privatized by other means); nothing then tells raw "
                   "records, whose exact counts would be printed, from reports")
    add_first_cohort_arguments(p)
    p.set_defaults(func=run_estimate)


def _deploy_arguments(p: argparse.ArgumentParser, oracle: bool = False) -> None:
    """MECHANISM, --csv/--parquet, --column, --delimiter, --no-progress (privatize and estimate); with ``oracle``
    MECHANISM is optional and ``--oracle``, ``--ldp-epsilon``, ``--k``, ``--categories`` replace it (privatize)."""
    if oracle:
        p.add_argument("mechanism", metavar="MECHANISM", nargs="?", default=None, help="mechanism file (JSON) "
                       "written by 'pml-design design -o'; or none, and --oracle with --ldp-epsilon and --categories")
        add_oracle_arguments(p, "that privatizes a first cohort (instead of MECHANISM)")
        add_categories_arguments(p, "with --oracle, in a fixed order (required: the values present in the data are "
                                 "not public); every value of the column must be one of them")
    else:
        p.add_argument("mechanism", metavar="MECHANISM", help="mechanism file (JSON) written by 'pml-design design -o'")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--csv", metavar="FILE", help="CSV file with a header row")
    src.add_argument("--parquet", metavar="FILE", help="Parquet file (needs pyarrow)")
    p.add_argument("--column", required=True, help="the column to use (header name or 0-based index)")
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (shown only on a terminal)")


def _data_source(args: argparse.Namespace, protected: bool = False) -> tuple[Any, Any]:
    """(mechanism, table source) of a privatize/estimate call, both validated before any output exists
    (``protected``: privatize's input, quoted in no error)."""
    import pyarrow.compute  # noqa: F401, PLC0415 - loaded here, so the timings below measure the streaming only
    import pyarrow.csv  # noqa: F401, PLC0415

    from ..deploy.file import load_mechanism  # noqa: PLC0415

    try:
        with warnings.catch_warnings(record=True) as caught, _long_step(args, f"checking {args.mechanism}",
                                                                          _file_size(args.mechanism) > WIDE_FILE_BYTES):
            warnings.simplefilter("always")
            mech = load_mechanism(args.mechanism, check_utility=False)  # neither command reports it (70 s at N = 10 000)
    except (ValueError, FileNotFoundError) as exc:
        raise CliError(f"argument MECHANISM: {exc}") from None
    for w in caught:  # e.g. a mechanism file of an older format: one line each
        sys.stderr.write(f"{PROG}: warning: {str(w.message).splitlines()[0]}\n")
    option = table_option(args)
    if args.parquet is not None and args.delimiter is not None:
        raise CliError("argument --delimiter: not allowed with --parquet (a CSV option)")
    path = args.csv if args.csv is not None else args.parquet
    source = table_source(path, option, args.delimiter, args.parquet is not None, protected=protected)
    source.resolve(args.column)
    return mech, source


def _show_progress(args: argparse.Namespace) -> bool:
    return not args.no_progress and sys.stderr.isatty()


#: A mechanism file above this size, or a matrix above :data:`WIDE_WORK` (N² × outputs), takes long enough to load
#: or to estimate from (N = 10 000, 21 778 outputs: 95 s and 3.5 minutes) that a bar shows the elapsed time.
WIDE_FILE_BYTES: int = 50_000_000
WIDE_WORK: float = 1e11


def _file_size(path: object) -> int:
    import os  # noqa: PLC0415

    try:
        return os.stat(str(path)).st_size
    except OSError:
        return 0


def _long_step(args: argparse.Namespace, desc: str, long: bool) -> Any:
    """A bar with the elapsed time (no total: the step has no iterations to count) on a terminal, for a long step."""
    from ..progress import progress_bar  # noqa: PLC0415

    bar = progress_bar(total=None, desc=f"{PROG}: {desc}", enabled=long and _show_progress(args))
    bar.bar_format = "{desc}: {elapsed} elapsed"  # (tqdm's "0it [00:14, ?it/s]" counts nothing here)
    return bar


def run_privatize(args: argparse.Namespace) -> int:
    """Run ``pml-design privatize``; returns the exit status."""
    if args.oracle is not None or args.mechanism is None:  # a first cohort's LDP reports (cli/cohort.py)
        if args.mechanism is None and args.oracle is None:
            raise CliError("argument MECHANISM: give a mechanism file (pml-design design -o), or --oracle with "
                           "--ldp-epsilon and --categories for a first cohort's LDP reports")
        return run_privatize_oracle(args)
    for opt, value in (("--ldp-epsilon", args.ldp_epsilon), ("--k", args.k), ("--categories", args.categories),
                       ("--categories-file", args.categories_file)):
        if value is not None:
            raise CliError(f"argument {opt}: only with --oracle (MECHANISM {args.mechanism} fixes the mechanism)")
    import numpy as np  # noqa: PLC0415 - the numerical stack is imported only to run

    from ..deploy.streaming import privatize_table  # noqa: PLC0415

    mech, source = _data_source(args, protected=True)
    guard = _DesignDataGuard(args, mech, source)
    _check_marks(args, source)
    t0 = time.perf_counter()
    rows = privatize_table(source, args.column, mech, args.output, np.random.default_rng(args.seed),
                           progress=_show_progress(args), overwrite=args.force, check_column=guard.check_column,
                           split_draws=guard.split_draws)
    from ..deploy.report_marks import write_mark  # noqa: PLC0415

    mark = write_mark(args.output, mech, args.column, rows)  # (estimate requires it for a noisy-copy mechanism)
    design_data = guard.matched
    elapsed = time.perf_counter() - t0
    summary = {"input": str(source.path), "output": args.output, "mark": str(mark), "column": args.column,
               "rows": rows, "seed": args.seed, "mechanism": args.mechanism, "statement": mech.metadata.get("statement"),
               "seconds": elapsed, "rows_per_second": rows / elapsed if elapsed > 0 else math.inf,
               "design_data_privatized": design_data, "guarantee_caveat": _design_data_caveat(
                   args, design_data and not guard.whole_split, mech.metadata.get("prior_source"))}
    privatized_summary(args, summary, args.mechanism)
    return 0


def refuse_privatized_input(args: argparse.Namespace, source: Any) -> None:
    """Refuse to privatize a file of reports: one ``privatize`` wrote with a mechanism (its mark ``IN.pml.json``) or
    with an oracle (its provenance ``IN.ldp.json``). A new user's trial privatized a first cohort's GRR reports again
    with a PML mechanism and estimated DE at 0.150 [0.144, 0.156] where the truth was 0.25, exit 0, no warning."""
    from ..deploy.report_marks import mark_path  # noqa: PLC0415
    from ..deploy.reports import provenance_path  # noqa: PLC0415

    opt = table_option(args)
    for side, what in ((mark_path(source.path), "reports privatized already"),
                       (provenance_path(source.path), "a first cohort's LDP reports")):
        if side.is_file():
            raise CliError(f"argument {opt}: {source.path} holds {what} ({side.name} says so); privatize the original "
                           "records")


def _check_marks(args: argparse.Namespace, source: Any) -> None:
    """Refuse an input that ``privatize`` wrote (its mark ``IN.pml.json``) and an existing mark of OUT without
    ``--force`` (docs/cli.md, "Reports carry a mark")."""
    from ..deploy.output import check_output_path  # noqa: PLC0415
    from ..deploy.report_marks import mark_path  # noqa: PLC0415

    refuse_privatized_input(args, source)
    opt = table_option(args)
    check_output_path(mark_path(args.output), inputs=[(source.path, opt), (args.mechanism, "MECHANISM")],
                      overwrite=args.force, option="argument --output", force_hint="--force")


def _design_data_caveat(args: argparse.Namespace, matched: bool, prior_source: object = None) -> str | None:
    """What the mechanism's statement does not cover in a ``privatize --allow-design-data`` output (None without the
    flag): the design records, which the mechanism file's P̂ already discloses, in a way that depends on where P̂
    came from (``prior_source`` of the file; a review: the ``guarantee:`` line said the file publishes the design
    records' counts for a P̂ from LDP reports or a DP release too)."""
    if not (matched or args.allow_design_data):
        return None
    if prior_source == "dp":  # no fingerprint: never matched
        return ("it does not cover any design record among these records (--allow-design-data) on its own: the "
                "mechanism file publishes a differentially private release of the design records' counts "
                "(prior_source \"dp\"), and a design record released here has that guarantee and this one, which no "
                "statement combines")
    if prior_source == "ldp reports":
        return ("it does not cover any first-cohort record among these records (--allow-design-data) on its own: "
                "the mechanism file publishes an estimate from the first cohort's LDP reports (prior_source "
                "\"ldp reports\"), and a first-cohort record released here has its report's LDP guarantee and this "
                "one, which no statement combines")
    if matched:
        return ("it does not cover these records: they are the ones the mechanism was designed on "
                "(--allow-design-data), whose counts the mechanism file publishes")
    # not recognised as the design records, but a shuffled or mixed-in copy is not caught
    return ("it does not cover any design record among these records (--allow-design-data): the mechanism file "
            "publishes the design records' counts")


class _DesignDataGuard:
    """Refuse (one line) to privatize the design records unless --allow-design-data; ``matched`` if they are.

    A ``"file sha256"`` fingerprint (older files) is compared before the pass; a ``"column sha256"`` one during
    it (:func:`pml_design.deploy.streaming.privatize_table` calls :meth:`check_column` before renaming its output).
    """

    def __init__(self, args: argparse.Namespace, mech: Any, source: Any) -> None:
        from ..deploy.guard import design_data_of, matches_design_data  # noqa: PLC0415

        self.args, self.source, self.matched, self.whole_split = args, source, False, False
        self.metadata = mech.metadata
        self.fingerprint = design_data_of(mech)
        self.check_column = self._check if self.fingerprint.get("kind") == "column sha256" else None
        if self.fingerprint.get("kind") == "file sha256" and matches_design_data(self.fingerprint, path=source.path):
            self._matched()
        seed, frac = self.fingerprint.get("split_seed"), self.fingerprint.get("split_fraction")
        self.split_draws = (seed, frac) if self.check_column is not None and seed is not None else None

    def _matched(self, why: str | None = None) -> None:
        from ..deploy.guard import DESIGN_DATA_MESSAGE, PUBLISHED_COUNTS  # noqa: PLC0415

        args = self.args
        if not args.allow_design_data:
            option = table_option(args)
            tail = DESIGN_DATA_MESSAGE if why is None or "split divided" in why else PUBLISHED_COUNTS
            why = why or f"{self.source.path} holds the records {args.mechanism} was designed on"
            raise CliError(f"argument {option}: {why}: {tail} or pass --allow-design-data")
        self.matched = True
        sys.stderr.write(f"{PROG}: warning: privatizing the records the mechanism was designed on "
                         "(--allow-design-data): the mechanism file publishes their counts (p_hat * m); the guarantee "
                         "does not cover them\n")

    def _check(self, digest: str, split_digest: str | None = None, counts: Any = None) -> None:
        from ..deploy.guard import design_counts_match  # noqa: PLC0415

        if digest == self.fingerprint.get("sha256"):
            self._matched()
        elif counts is not None and design_counts_match(self.metadata.get("p_hat"), self.metadata.get("m"), counts):
            self._matched(f"{self.source.path} holds exactly the counts per category of the records "  # reordered
                          f"{self.args.mechanism} was designed on (those records in another order?)")
        elif split_digest is not None and split_digest == self.fingerprint.get("sha256"):
            # the rows the design's split drew hold the design column: this is the file split divided
            self.whole_split = True
            self._matched(f"{self.source.path} is the file split divided into the records {self.args.mechanism} was "
                          "designed on and the rest, so it holds those records")


def _check_reports_mark(args: argparse.Namespace, mech: Any, source: Any) -> None:
    """Unless ``--unverified-reports``: a file whose mark names another mechanism file is refused (any mechanism: a
    new user's wrong mechanism gave a wrong table, exit 0, session 20); and for a mechanism whose outputs carry the
    category names, the file must be one ``privatize`` wrote with it (its mark, unchanged): raw records read as such
    reports, and their exact counts were printed (a new user's mistake, 2026-11-27)."""
    from ..deploy.report_marks import is_noisy_copy, mark_path, mark_problem, marked_mechanism  # noqa: PLC0415

    if args.unverified_reports:
        return
    named = marked_mechanism(source.path)  # any mechanism: reports of another one gave a wrong table, exit 0, and only
    if named is not None and named != mech.metadata.get("sha256"):  # a fit warning (a new user's trial)
        raise CliError(f"argument MECHANISM: {source.path} was privatized with another mechanism file (its mark "
                       f"{mark_path(source.path).name} names content hash {named[:16]}..., {args.mechanism} has "
                       f"{str(mech.metadata.get('sha256'))[:16]}...); give the mechanism file that privatized it, or "
                       "pass --unverified-reports to estimate with this one anyway")
    if not is_noisy_copy(mech):
        return
    problem = mark_problem(source.path, mech)
    if problem is not None:
        opt = table_option(args)
        raise CliError(f"argument {opt}: {source.path} {problem}; the outputs of {args.mechanism} carry the category "
                       "names, so a file of raw records would read as reports and its exact counts be printed: give "
                       "the file privatize wrote, or pass --unverified-reports if it holds reports privatized with this "
                       "mechanism by other means")


def run_estimate(args: argparse.Namespace) -> int:
    """Run ``pml-design estimate``; returns the exit status."""
    if args.first_cohort is not None:  # both cohorts' reports, one estimate (cli/first_cohort.py)
        return run_estimate_combined(args)
    refuse_first_cohort_options(args)
    from ..deploy.streaming import report_counts  # noqa: PLC0415

    mech, source = _data_source(args)
    _check_reports_mark(args, mech, source)
    t0 = time.perf_counter()
    counts = report_counts(source, args.column, mech, progress=_show_progress(args))
    wide = float(mech.n_inputs) ** 2 * mech.n_outputs > WIDE_WORK
    with warnings.catch_warnings(record=True) as caught, _long_step(args, "estimating", wide):
        warnings.simplefilter("always")
        est = mech.estimate(counts, counts=True, ci=args.ci, method=args.method)
    for w in caught:
        sys.stderr.write(f"{PROG}: warning: {str(w.message).splitlines()[0]}\n")
    out = est.to_dict()
    if args.method == "ibu":  # the goodness-of-fit test behind the warning (mechanisms.fit)
        from ..mechanisms.fit import report_fit  # noqa: PLC0415

        fit = report_fit(mech.matrix, counts, est.estimate, rank=mech.n_inputs if mech.identifiable else None)
        out["fit"] = {"statistic": fit.statistic, "df": fit.df, "p_value": fit.p_value, "cells": fit.cells}
    out.update({"column": args.column, "input": str(source.path), "mechanism": args.mechanism,
                "identifiable": mech.identifiable, "report_counts": counts,
                "seconds": time.perf_counter() - t0})
    if args.json:
        print_json(out)
        return 0
    print(f"estimated distribution of {args.column!r} from n={est.n} privatized reports "
          f"({args.method}, {100 * args.ci:g}% confidence intervals):")
    print(table(["category", "estimate", "ci_low", "ci_high"],
                [[c, e, lo, hi] for c, e, lo, hi in zip(out["categories"], est.estimate, est.ci_low, est.ci_high)]))
    return 0
