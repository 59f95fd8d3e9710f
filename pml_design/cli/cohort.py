"""The "first cohort of LDP reports" workflow on the command line: ``privatize --oracle`` and ``design --reports``.

A first cohort privatizes its column with an ε₁-LDP frequency oracle (``pml-design privatize --oracle grr
--ldp-epsilon 1 --categories A,B,C ...``), ``pml-design design --reports`` turns those reports into P̂ and its ℓ1
ball (:func:`pml_design.cohort.design_from_report_counts`) and writes the mechanism file that ``privatize MECHANISM``
and ``estimate`` use for everyone else. The text format of a report is :mod:`pml_design.deploy.reports`'s.
Building the parser imports the standard library only.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

from ._common import (
    CliError,
    categories_from_args,
    categories_option,
    positive_float,
    positive_int,
    privatized_summary,
    table_option,
    table_source,
)

#: ``--oracle`` choices, with what a report looks like (also in docs/cli.md).
ORACLE_HELP = ("grr: generalized randomized response, a report is one category label; ss: k-subset selection, a "
               "report is k labels joined by '+' in the order of --categories; hr: Hadamard response, a report is an "
               "integer in [0, K), K the smallest power of two above the number of categories")


#: Largest ``--ldp-epsilon`` (as ``--epsilon``), and the one above which it is warned about (as ``--dp-epsilon``).
MAX_LDP_EPSILON: float = 700.0
LARGE_LDP_EPSILON: float = 10.0


def add_oracle_arguments(p: argparse.ArgumentParser, whose: str) -> None:
    """``--oracle``, ``--ldp-epsilon`` and ``--k`` on a subcommand's parser (``whose``: what they describe)."""
    p.add_argument("--oracle", choices=("grr", "ss", "hr"), default=None, help=f"the LDP frequency oracle {whose}: "
                   + ORACLE_HELP)
    p.add_argument("--ldp-epsilon", type=positive_float, default=None, metavar="E1",
                   help=f"epsilon_1 of the oracle {whose} (the first cohort's LDP guarantee)")
    p.add_argument("--k", type=positive_int, default=None, help="subset size of --oracle ss, in [1, N-1] (default: "
                   "the oracle's own, about N/(e^E1 + 1)); the same for privatize and design")


def oracle_from_args(args: argparse.Namespace, command: str) -> tuple[Any, list[str]]:
    """``(oracle, categories)`` from ``--oracle``, ``--ldp-epsilon``, ``--k`` and ``--categories`` (all checked)."""
    if args.oracle is None:
        raise CliError(f"argument --oracle: required with {command} (grr, ss or hr)")
    if args.ldp_epsilon is None:
        raise CliError(f"argument --ldp-epsilon: required with --oracle (epsilon_1 of the {args.oracle} reports)")
    if args.categories is None and args.categories_file is None:
        raise CliError("argument --categories: required with --oracle (or --categories-file): the public list of "
                       "categories, in a fixed order (the values present in the data are not public)")
    from ..deploy.reports import make_oracle  # noqa: PLC0415

    if args.ldp_epsilon > MAX_LDP_EPSILON:
        raise CliError(f"argument --ldp-epsilon: {args.ldp_epsilon:g} is above {MAX_LDP_EPSILON:g} (as --epsilon: "
                       "e^E1 overflows, and the reports would be the inputs)")
    categories = categories_from_args(args)
    try:
        oracle = make_oracle(args.oracle, categories, args.ldp_epsilon, args.k)
    except ValueError as exc:  # (make_oracle names --categories: the file form names its own flag)
        raise CliError(str(exc).replace("argument --categories:", f"argument {categories_option(args)}:", 1)) from None
    if args.ldp_epsilon > LARGE_LDP_EPSILON:  # (a review: 1000 was accepted, and P-hat gave back the exact counts)
        import warnings  # noqa: PLC0415

        warnings.warn(f"--ldp-epsilon {args.ldp_epsilon:g} is so large (e^E1 = {math.exp(args.ldp_epsilon):.3g}) that "
                      "the reports give their records' values away almost surely: they, and the P-hat a design "
                      "publishes from them, are the first cohort's data in all but name", UserWarning, stacklevel=2)
    return oracle, categories


def _exact(value: float) -> str:
    """``value`` as short text that reads back as the same float (``1``, ``0.5``, ``0.1234567891``)."""
    text = f"{value:g}"
    return text if float(text) == value else repr(value)


def _statement(oracle: Any, categories: list[str]) -> str:
    k = f" with k={oracle.k}" if oracle.name == "SS" else ""
    return (f"{oracle.epsilon:.6g}-LDP for every record of the column (oracle {oracle.name}{k}, over the "
            f"{len(categories)} public categories)")


def run_privatize_oracle(args: argparse.Namespace) -> int:
    """Run ``pml-design privatize --oracle ...`` (a first cohort's ε₁-LDP reports); returns the exit status."""
    if args.mechanism is not None:
        raise CliError(f"argument --oracle: not allowed with MECHANISM ({args.mechanism}): privatize either with a "
                       "mechanism file or with an LDP oracle (a first cohort)")
    if args.allow_design_data:
        raise CliError("argument --allow-design-data: not allowed with --oracle (an LDP oracle has no design records)")
    oracle, categories = oracle_from_args(args, "privatize without MECHANISM")
    import numpy as np  # noqa: PLC0415 - the numerical stack is imported only to run
    import pyarrow.compute  # noqa: F401, PLC0415 - loaded here, so the timing below measures the streaming only
    import pyarrow.csv  # noqa: F401, PLC0415

    from ..deploy.reports import privatize_reports  # noqa: PLC0415

    option = table_option(args)
    if args.parquet is not None and args.delimiter is not None:
        raise CliError("argument --delimiter: not allowed with --parquet (a CSV option)")
    source = table_source(args.csv if args.csv is not None else args.parquet, option, args.delimiter,
                          args.parquet is not None, protected=True)
    source.resolve(args.column)
    from .deploy import refuse_privatized_input  # noqa: PLC0415

    refuse_privatized_input(args, source)
    t0 = time.perf_counter()
    rows = privatize_reports(source, args.column, oracle, categories, args.output, np.random.default_rng(args.seed),
                             progress=not args.no_progress and sys.stderr.isatty(), overwrite=args.force,
                             inputs=[(args.categories_file, "--categories-file")] if args.categories_file else [])
    elapsed = time.perf_counter() - t0
    from ..deploy.reports import provenance_path  # noqa: PLC0415

    summary = {"input": str(source.path), "output": args.output, "provenance": str(provenance_path(args.output)),
               "column": args.column, "rows": rows, "seed": args.seed, "oracle": oracle.name, "ldp_epsilon": oracle.epsilon,
               "k": getattr(oracle, "k", None), "categories": categories, "statement": _statement(oracle, categories),
               "seconds": elapsed, "rows_per_second": rows / elapsed if elapsed > 0 else math.inf}
    if privatized_summary(args, summary, f"{oracle.name} at ldp-epsilon {oracle.epsilon:g}"):
        return 0
    import shlex  # noqa: PLC0415

    print("next (the design from these reports): pml-design design --reports "
          + " ".join(shlex.quote(str(v)) for v in (args.output, "--column", args.column, "--oracle", args.oracle,
                                                   "--ldp-epsilon", _exact(oracle.epsilon)))
          + (f" --k {oracle.k}" if oracle.name == "SS" else "")
          + (f" --categories-file {shlex.quote(args.categories_file)}" if args.categories_file is not None
             else f" --categories {shlex.quote(','.join(categories))}") + " --epsilon E --delta D -o PREFIX")
    return 0


def _check_provenance(args: argparse.Namespace, oracle: Any, categories: list[str], column: str) -> None:
    """Refuse ``--reports`` whose provenance file (``privatize --oracle``) is missing or disagrees with the flags
    (``column``: the header name ``--column`` resolves to)."""
    from ..deploy.reports import provenance_mismatch, provenance_path  # noqa: PLC0415

    if not provenance_path(args.reports).is_file():
        if args.unverified_reports:
            return
        raise CliError(f"argument --reports: {args.reports} has no provenance file {provenance_path(args.reports)} "
                       "(privatize --oracle writes it): nothing shows that its column holds LDP reports of this "
                       "oracle, and a column of raw values read as reports would publish their exact counts; "
                       "privatize with --oracle, or pass --unverified-reports for reports of another system")
    if args.unverified_reports:
        raise CliError(f"argument --unverified-reports: not allowed: {args.reports} has a provenance file, which is "
                       "checked")
    bad = provenance_mismatch(args.reports, column, oracle, categories)
    if bad is not None:
        option, what = bad
        raise CliError(f"argument {categories_option(args) if option == '--categories' else option}: {what}")


def design_from_report_file(args: argparse.Namespace, started: float, files: bool) -> tuple[Any, list, dict, float]:
    """``(EstimatedDesign, categories, source, seconds kept back)`` of ``design --reports`` (streamed reports)."""
    from ..cohort import design_from_report_counts  # noqa: PLC0415
    from ..deploy.reports import report_support_counts  # noqa: PLC0415
    from .design import _share_named, _solver_options, _time_budget  # noqa: PLC0415

    if args.column is None:
        raise CliError("argument --column: required with --reports (the column of reports)")
    if args.delta is None:
        raise CliError("argument --radius: not allowed with --reports (the radius follows from the number of "
                       "reports, --ldp-epsilon and --delta); give --delta")
    if args.dp_epsilon is not None:
        raise CliError("argument --dp-epsilon: not allowed with --reports (P-hat comes from the LDP reports)")
    oracle, categories = oracle_from_args(args, "--reports")
    parquet = args.reports.lower().endswith((".parquet", ".pq"))
    if parquet and args.delimiter is not None:
        raise CliError("argument --delimiter: not allowed with a Parquet --reports file (a CSV option)")
    source = table_source(args.reports, "--reports", args.delimiter, parquet)
    # the provenance file names the column by its header: --column 0 (a 0-based index) is resolved first
    _check_provenance(args, oracle, categories, source.resolve(args.column))
    counts, n_reports = report_support_counts(source, args.column, oracle, categories,
                                              progress=bool(args.progress) and sys.stderr.isatty())
    design_limit, kept_back = _time_budget(args, len(categories), started, files)
    with _share_named(design_limit, args.time_limit, 2 if args.compare else 1):
        try:
            est = design_from_report_counts(counts, n_reports, oracle, args.epsilon, args.delta, categories=categories,
                                            utility=args.utility, method=args.method, solver=args.solver,
                                            allow_zero=args.allow_zero,
                                            solver_options=_solver_options(args, design_limit))
        except ValueError as exc:
            text = str(exc)
            if "too few" in text or "the estimate from the reports is 0" in text:
                raise CliError(f"argument --reports: {_too_few_in_words(text)}") from None
            raise
    return est, categories, {"reports": args.reports, "column": args.column}, kept_back


#: Above this many reports, "about N reports are needed" is said in words (no collection holds them).
REPORTS_BEYOND_REACH: float = 1e12


def _too_few_in_words(text: str) -> str:
    """The library's "too few reports" message with an infinite radius or an astronomic number of reports said in
    words (a review: "the radius inf >= 2" and "about inf reports are needed" for --delta 1e-300 or --ldp-epsilon
    1e-12)."""
    import re  # noqa: PLC0415

    text = text.replace("the radius inf >= 2 rules out no distribution",
                        "the radius is unbounded (the bound gives no finite radius at this delta), so the ball rules out no "
                        "distribution")
    mo = re.search(r"about (\S+) reports are needed for radius < 1", text)
    if mo is not None and not float(mo.group(1)) <= REPORTS_BEYOND_REACH:
        text = text.replace(mo.group(0), "no feasible number of reports gives radius < 1 (more than 10^"
                            f"{math.log10(REPORTS_BEYOND_REACH):.0f} would be needed): raise --ldp-epsilon or --delta")
    return text
