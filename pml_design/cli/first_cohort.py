"""``pml-design estimate MECHANISM ... --first-cohort REPORTS``: one estimate from both cohorts' reports.

The first cohort answered through an ε₁-LDP oracle (``privatize --oracle``, which writes ``REPORTS`` and its provenance
file ``REPORTS.ldp.json``), everyone else through the mechanism file. The estimate is the maximum-likelihood one from
all the reports together (:func:`pml_design.cohort.combined_estimate`; docs/design.md §11.2): the oracle, ε₁, k, the
categories and the column are read from the provenance file (checked against the report file's hash, as ``design
--reports`` checks them), and the categories must be MECHANISM's, in the same order. Building the parser imports the
standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

from ._common import PROG, CliError, add_categories_arguments, categories_option, print_json, table, table_source
from .cohort import add_oracle_arguments, oracle_from_args

#: The options that describe unverified first-cohort reports (``--unverified-first-cohort``), as ``design --reports``'s.
ORACLE_OPTIONS = (("--oracle", "oracle"), ("--ldp-epsilon", "ldp_epsilon"), ("--k", "k"),
                  ("--categories", "categories"), ("--categories-file", "categories_file"))


def add_first_cohort_arguments(p: argparse.ArgumentParser) -> None:
    """``--first-cohort``, ``--first-cohort-column``, and for reports of another system ``--unverified-first-cohort``
    with ``--oracle``, ``--ldp-epsilon``, ``--k`` and ``--categories`` (``--categories-file``), on ``estimate``'s
    parser."""
    p.add_argument("--first-cohort", metavar="REPORTS", default=None,
                   help="a first cohort's LDP report file written by 'privatize --oracle' (with its provenance file "
                        "REPORTS.ldp.json, which names the oracle, epsilon_1, k, the categories and the column): the "
                        "estimate combines its reports with those of --csv/--parquet by maximum likelihood. The two "
                        "cohorts must be disjoint: a person in both has two reports whose leakages compose, and the "
                        "intervals (which assume independent groups) are too narrow")
    p.add_argument("--first-cohort-column", metavar="NAME", default=None,
                   help="with --first-cohort: its column of reports, by name or 0-based index (default: the one its "
                        "provenance file names; it can only be that column, as the file's provenance is checked; "
                        "with --unverified-first-cohort: --column's name)")
    p.add_argument("--unverified-first-cohort", action="store_true",
                   help="with --first-cohort: read a report file without the provenance file REPORTS.ldp.json "
                        "(reports collected by another system that applied the oracle); --oracle, --ldp-epsilon, --k "
                        "and --categories then say how they were made, as for 'design --reports --unverified-reports', "
                        "and nothing checks it (a column of raw values would enter the estimate as reports)")
    add_oracle_arguments(p, "of the --first-cohort reports, with --unverified-first-cohort")
    add_categories_arguments(p, "with --unverified-first-cohort, the categories the --first-cohort reports were made "
                             "over, in that order (MECHANISM's, in its order)")


def refuse_first_cohort_options(args: argparse.Namespace) -> None:
    """Without ``--first-cohort``: its options are refused (one line naming the first one given)."""
    if args.first_cohort_column is not None:
        raise CliError("argument --first-cohort-column: only with --first-cohort")
    if args.unverified_first_cohort:
        raise CliError("argument --unverified-first-cohort: only with --first-cohort")
    for opt, dest in ORACLE_OPTIONS:
        if getattr(args, dest) is not None:
            raise CliError(f"argument {opt}: only with --first-cohort and --unverified-first-cohort (it describes a "
                           "first cohort's reports made by another system)")


class _RecordingOracle:
    """The oracle as :func:`~pml_design.deploy.reports.report_support_counts` uses it, keeping each batch's distinct
    reports and their counts as well: the maximum-likelihood estimate needs how often each report occurred (the
    first cohort's sufficient statistic), not only how many reports support each category."""

    def __init__(self, oracle: Any) -> None:
        self._oracle = oracle
        self._distinct: list[Any] = []
        self._counts: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._oracle, name)

    def support_counts(self, reports: Any) -> Any:
        import numpy as np  # noqa: PLC0415

        distinct, counts = np.unique(np.asarray(reports), axis=0, return_counts=True)
        self._distinct.append(distinct)
        self._counts.append(counts)
        return self._oracle.support_counts(reports)

    def report_counts(self) -> tuple[Any, Any]:
        """``(distinct reports, counts)`` over every batch read (``combined_estimate``'s ``first_counts``)."""
        import numpy as np  # noqa: PLC0415

        distinct, inverse = np.unique(np.concatenate(self._distinct), axis=0, return_inverse=True)
        return distinct, np.bincount(inverse.ravel(), weights=np.concatenate(self._counts)).astype(np.int64)


def _provenance(args: argparse.Namespace) -> dict | None:
    """The provenance file of ``--first-cohort`` (required: nothing else shows that the file holds LDP reports),
    its fields checked (one line naming the file and the field); None with ``--unverified-first-cohort``, which is
    refused where there is one (it is checked, as ``design --reports --unverified-reports``)."""
    import pathlib  # noqa: PLC0415

    from ..deploy.reports import PROVENANCE_FORMAT, provenance_field_error, provenance_path  # noqa: PLC0415

    path = args.first_cohort
    if not pathlib.Path(path).is_file():
        what = "is a directory" if pathlib.Path(path).is_dir() else "does not exist"
        raise CliError(f"argument --first-cohort: {path} {what}; give the report file that privatize --oracle wrote")
    prov = provenance_path(path)
    if args.unverified_first_cohort:
        if prov.is_file():
            raise CliError(f"argument --unverified-first-cohort: not allowed: {path} has a provenance file, which is "
                           "checked")
        return None
    for opt, dest in ORACLE_OPTIONS:  # (the provenance file says how the reports were made)
        if getattr(args, dest) is not None:
            raise CliError(f"argument {opt}: only with --unverified-first-cohort (the provenance file {prov.name} "
                           "names the oracle, ldp-epsilon, k and the categories)")
    if not prov.is_file():
        raise CliError(f"argument --first-cohort: {path} has no provenance file {prov} (privatize --oracle writes it): "
                       "nothing shows that it holds LDP reports, and raw values read as reports would enter the "
                       "estimate as if privatized; privatize the first cohort with --oracle, or pass "
                       "--unverified-first-cohort with --oracle, --ldp-epsilon and --categories for reports of another "
                       "system")
    try:
        doc = json.loads(prov.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CliError(f"argument --first-cohort: cannot read its provenance file {prov}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != PROVENANCE_FORMAT:
        raise CliError(f"argument --first-cohort: {prov} is not a report file's provenance (privatize --oracle)")
    bad = provenance_field_error(doc)
    if bad is not None:
        raise CliError(f"argument --first-cohort: {prov} is not a valid provenance file: {bad}")
    return doc


def _first_cohort(args: argparse.Namespace, mech: Any, column: str) -> tuple[Any, Any, str, list[str], str]:
    """``(oracle, table source, column, categories, option)`` of ``--first-cohort``, everything checked (one line
    each); ``option`` is the flag that chose the column (``--first-cohort-column``, else ``--first-cohort``). The
    oracle is the provenance file's, or with ``--unverified-first-cohort`` that of ``--oracle`` and its flags, and
    the column by default ``column`` (the header name of the second cohort's ``--column``)."""
    from ..deploy.reports import ORACLES, _category_list, first_difference, make_oracle, provenance_mismatch  # noqa: PLC0415

    path = args.first_cohort
    doc = _provenance(args)
    if doc is None:  # --unverified-first-cohort: the flags say how the reports were made (design --reports's)
        oracle, flagged = oracle_from_args(args, "--unverified-first-cohort")
        name, doc = args.oracle, {"categories": flagged, "column": column}
    else:
        name = {v: k for k, v in ORACLES.items()}[doc["oracle"]]
        try:
            oracle = make_oracle(name, doc["categories"], doc["ldp_epsilon"], doc["k"] if name == "ss" else None)
        except (ValueError, TypeError) as exc:
            raise CliError(f"argument --first-cohort: its provenance file is not valid: {exc}") from None
    categories = list(doc["categories"])
    labels = [str(c) for c in mech.labels] if mech.labels is not None else [str(i) for i in range(mech.n_inputs)]
    if categories != labels:
        how = "in another order than" if sorted(categories) == sorted(labels) else "over other categories than"
        flag = categories_option(args) if args.unverified_first_cohort else "--first-cohort"
        raise CliError(f"argument {flag}: its reports were made {how} MECHANISM's ({_category_list(categories)} "
                       f"against {_category_list(labels)}; {first_difference(categories, labels)}): both cohorts must "
                       "answer over the same categories in the same order")
    parquet = path.lower().endswith((".parquet", ".pq"))
    source = table_source(path, "--first-cohort", None, parquet)
    option = "--first-cohort-column" if args.first_cohort_column is not None else "--first-cohort"
    wanted = args.first_cohort_column if args.first_cohort_column is not None else doc["column"]
    header = source.header
    if wanted not in header and not (wanted.isascii() and wanted.isdigit() and int(wanted) < len(header)):
        whose = "" if option == "--first-cohort-column" else (" (--column's: give --first-cohort-column)"
                                                              if args.unverified_first_cohort else
                                                              " (the column its provenance file names)")
        raise CliError(f"argument {option}: no column {wanted!r}{whose} in {path}; columns are {header}")
    column = source.resolve(wanted)
    bad = None if args.unverified_first_cohort else provenance_mismatch(path, column, oracle, categories)
    if bad is not None:
        flag, what = bad
        raise CliError(f"argument {'--first-cohort-column' if flag == '--column' else '--first-cohort'}: {what}")
    return oracle, source, column, categories, option


def _warn_other_cohort(mech: Any, oracle: Any, rows: int) -> None:
    """A warning line when MECHANISM was designed on the reports of another first cohort than ``--first-cohort``,
    naming what differs (oracle, ε₁, k, number of reports)."""
    meta = mech.metadata
    if meta.get("prior_source") != "ldp reports":
        return
    params = meta.get("prior_params") or {}
    eps = params.get("ldp_epsilon")
    differs = []
    if params.get("oracle") != oracle.name:
        differs.append(f"oracle {params.get('oracle')} against {oracle.name}")
    if not (isinstance(eps, (int, float)) and math.isclose(eps, oracle.epsilon, rel_tol=1e-12)):
        differs.append(f"ldp-epsilon {eps!r} against {oracle.epsilon:g}")
    if oracle.name == "SS" and params.get("k") != oracle.k:
        differs.append(f"k {params.get('k')!r} against {oracle.k}")
    if params.get("n_reports") != rows:
        differs.append(f"{params.get('n_reports')!r} reports against {rows}")
    if differs:
        sys.stderr.write(f"{PROG}: warning: MECHANISM was designed on other first-cohort reports than --first-cohort's "
                         f"({'; '.join(differs)}): the estimate combines them all the same; both cohorts must come "
                         "from one population\n")


def _fit_dict(fit: Any) -> dict:
    """A :class:`~pml_design.mechanisms.fit.ReportFit` as ``estimate --json`` gives its ``fit``."""
    return {"statistic": fit.statistic, "df": fit.df, "p_value": fit.p_value, "cells": fit.cells}


def run_estimate_combined(args: argparse.Namespace) -> int:
    """Run ``pml-design estimate ... --first-cohort REPORTS``; returns the exit status."""
    import warnings  # noqa: PLC0415

    from ..cohort import combined_estimate  # noqa: PLC0415
    from ..deploy.reports import report_support_counts  # noqa: PLC0415
    from ..deploy.streaming import TableError  # noqa: PLC0415
    from ..deploy.streaming import report_counts  # noqa: PLC0415
    from .deploy import _check_reports_mark, _data_source, _show_progress  # noqa: PLC0415

    if args.method != "ibu":
        raise CliError("argument --method: only ibu (maximum likelihood) with --first-cohort: inversion does not "
                       "combine the two cohorts' reports")
    mech, source = _data_source(args)
    _check_reports_mark(args, mech, source)  # (the second cohort's file: privatize's mark, as for estimate alone)
    oracle, first_source, first_column, categories, option = _first_cohort(args, mech, source.resolve(args.column))
    t0 = time.perf_counter()
    recorder = _RecordingOracle(oracle)
    try:
        support, n1 = report_support_counts(first_source, first_column, recorder, categories,
                                            progress=_show_progress(args))
    except TableError as exc:  # its messages name --column (design --reports's flag)
        msg = str(exc)
        raise CliError(f"argument {option}:{msg.split(':', 1)[1]}" if msg.startswith("argument --column:")
                       else msg) from None
    _warn_other_cohort(mech, oracle, n1)
    counts = report_counts(source, args.column, mech, progress=_show_progress(args))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = combined_estimate(oracle=oracle, mechanism=mech, first_counts=recorder.report_counts(),
                                second_counts=counts, ci=args.ci)
    for w in caught:
        sys.stderr.write(f"{PROG}: warning: {str(w.message).splitlines()[0]}\n")
    k = f", k={oracle.k}" if oracle.name == "SS" else ""
    out = est.to_dict()
    out.update({"column": args.column, "input": str(source.path), "mechanism": args.mechanism,
                "identifiable": True,  # an LDP oracle with epsilon_1 > 0 identifies every frequency, n1 >= 1
                "report_counts": counts, "n_first": n1, "n_second": int(counts.sum()),
                "first_cohort": {"reports": args.first_cohort, "column": first_column, "oracle": oracle.name,
                                 "ldp_epsilon": oracle.epsilon, "k": getattr(oracle, "k", None), "n_reports": n1,
                                 "support_counts": support, "verified": not args.unverified_first_cohort},
                "seconds": time.perf_counter() - t0})
    if est.fit is not None:  # the tests behind the warnings: one distribution for both cohorts; the second's fit
        out["fit"] = {**_fit_dict(est.fit), "second_cohort": _fit_dict(est.second_fit)}
    if args.json:
        print_json(out)
        return 0
    print(f"estimated distribution of {args.column!r} from n={est.n} reports, combined by maximum likelihood: "
          f"n1={n1} first-cohort reports ({oracle.name}{k} at ldp-epsilon {oracle.epsilon:g}) and n2={int(counts.sum())} "
          f"privatized reports ({100 * args.ci:g}% confidence intervals):")
    print(table(["category", "estimate", "ci_low", "ci_high"],
                [[c, e, lo, hi] for c, e, lo, hi in zip(out["categories"], est.estimate, est.ci_low, est.ci_high)]))
    return 0
