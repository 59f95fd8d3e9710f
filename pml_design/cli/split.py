"""``pml-design split``: a random disjoint split of a CSV/Parquet file into design records and records to release."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import FORMATTER, nonneg_int, print_json


def _fraction(text: str) -> float:
    """--fraction: a number strictly between 0 and 1 (checked again by the library, with the same words)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1) (the share of rows for the design), got {text!r}")
    return v


def add_parser(sub: Any) -> None:
    """Register ``split`` on the subparsers ``sub`` of the ``pml-design`` parser."""
    p = sub.add_parser("split", formatter_class=FORMATTER, help="split a CSV/Parquet file into design and release rows",
                       description="Split the rows of a CSV (or Parquet) file at random into two disjoint files: "
                       "DESIGN (each row with probability --fraction, independently) to design the mechanism on, and "
                       "REST to privatize and release. The mechanism file publishes the design records' counts "
                       "(p_hat * m), so they must not be released. Streamed; both files are written to temporary "
                       "files and renamed only on success.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--csv", metavar="FILE", help="CSV file with a header row")
    src.add_argument("--parquet", metavar="FILE", help="Parquet file")
    p.add_argument("--fraction", type=_fraction, required=True, help="share of rows for DESIGN, in (0, 1)")
    p.add_argument("--seed", type=nonneg_int, default=None, help="random seed (default: fresh OS entropy)")
    p.add_argument("--output", "-o", nargs=2, metavar=("DESIGN", "REST"), required=True,
                   help="the two output files (.parquet: Parquet, else CSV); never the input, never a directory")
    p.add_argument("--force", action="store_true", help="replace DESIGN / REST if they exist")
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (shown only on a terminal)")
    p.add_argument("--json", action="store_true", help="print a summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``pml-design split``; returns the exit status."""
    from ..deploy.split import split_file  # noqa: PLC0415
    from ._common import table_option, table_source  # noqa: PLC0415

    option = table_option(args)
    source = table_source(args.csv if args.csv is not None else args.parquet, option, args.delimiter,
                          args.parquet is not None)
    design_out, rest_out = args.output
    import pathlib  # noqa: PLC0415

    replacing = args.force and pathlib.Path(design_out).is_file()
    n_design, n_rest = split_file(source, args.fraction, design_out, rest_out, args.seed,
                                  progress=not args.no_progress and sys.stderr.isatty(), overwrite=args.force, _cli=True)
    if replacing:  # (a new user's rerun with --force: the old design records went into the new REST, unguarded)
        sys.stderr.write(f"pml-design: warning: replaced {design_out}: a mechanism designed on the previous {design_out} "
                         f"must not privatize the new {rest_out}, which now holds some of its design records (their "
                         "counts are in that mechanism file); design again on the new DESIGN\n")
    summary = {"input": str(source.path), "design": design_out, "rest": rest_out, "design_rows": n_design,
               "rest_rows": n_rest, "fraction": args.fraction, "seed": args.seed}
    if args.json:
        print_json(summary)
        return 0
    print(f"split {n_design + n_rest} rows of {source.path}: {n_design} to {design_out} (design), {n_rest} to "
          f"{rest_out} (release)")
    def opt(name: str) -> str:
        return "--parquet" if name.lower().endswith((".parquet", ".pq")) else "--csv"

    print(f"next: pml-design design {opt(design_out)} {design_out} ... -o MECH; pml-design privatize MECH.json "
          f"{opt(rest_out)} {rest_out} ...")
    return 0
