"""A first cohort's LDP frequency-oracle reports as a column of text: privatize a table, and read it back.

Implements: the "no public sample" workflow of ``docs/cli.md`` ("A first cohort of LDP reports") on files. A first
cohort's records are privatized by an ε₁-LDP frequency oracle (:mod:`pml_design.mechanisms.frequency_oracles`)
into a copy of their table (streamed, atomic: :func:`pml_design.deploy.streaming.rewrite_column`), and the support
counts of those reports are read back in batches for :func:`pml_design.cohort.design_from_report_counts`.

One cell holds one report, as text:

=====================  ================================================================================
oracle (``--oracle``)  the text of a report
=====================  ================================================================================
``grr``                the reported category's label (generalized randomized response: one category)
``ss``                 the k reported labels in the order of the categories list, joined by ``+``
                       (:data:`SUBSET_SEPARATOR`; k-subset selection). Categories holding ``+`` are refused.
``hr``                 the index y of the Hadamard response in decimal, ``0 ≤ y < K`` (K the smallest power
                       of two above the number of categories)
=====================  ================================================================================

The list of categories is public and must be given: the values present in the first cohort's data would disclose
them. A subset is written in the list's order, never in the order it was drawn (that order could depend on the
input). pyarrow is imported only inside the functions.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from .guard import file_sha256
from .streaming import MISSING_VALUES, TableError, TableSource, _progress, rewrite_column

__all__ = ["ORACLES", "PROVENANCE_SUFFIX", "SUBSET_SEPARATOR", "first_difference", "make_oracle", "privatize_reports",
           "provenance_field_error", "provenance_mismatch", "provenance_path", "report_support_counts",
           "write_provenance"]

#: ``--oracle`` names → the oracle's own name (``FrequencyOracle.name``).
ORACLES: dict[str, str] = {"grr": "GRR", "ss": "SS", "hr": "HR"}
#: Joins the k labels of a subset-selection report.
SUBSET_SEPARATOR = "+"


def make_oracle(name: str, categories: Sequence[str], ldp_epsilon: float, k: int | None = None) -> Any:
    """The ε₁-LDP frequency oracle ``name`` over the public ``categories``, checked for the report text format.

    Implements: the oracles of the module docstring's table (GRR, k-subset selection, Hadamard response).

    Parameters
    ----------
    name : {"grr", "ss", "hr"}
        The oracle (:data:`ORACLES`).
    categories : sequence of str
        The public list of categories, in code order: at least 2, distinct, none empty or a missing-value marker
        (:data:`~pml_design.deploy.streaming.MISSING_VALUES`), none holding :data:`SUBSET_SEPARATOR` for ``"ss"``.
    ldp_epsilon : float
        ε₁ > 0.
    k : int, optional
        The subset size of ``"ss"`` (default: the oracle's own, about N/(e^ε₁ + 1)); only with ``"ss"``.

    Returns
    -------
    FrequencyOracle
        ``GeneralizedRandomizedResponse``, ``SubsetSelection`` or ``HadamardResponse`` over ``len(categories)``.

    Raises
    ------
    ValueError
        A bad argument, named as the command line's option (``argument --k: …``).
    """
    from ..mechanisms.frequency_oracles import grr, hadamard_response, subset_selection  # noqa: PLC0415

    if name not in ORACLES:
        raise ValueError(f"argument --oracle: must be one of {sorted(ORACLES)}, got {name!r}")
    cats = [str(c) for c in categories]
    if len(cats) < 2 or len(set(cats)) != len(cats):
        raise ValueError(f"argument --categories: need at least 2 distinct names, got {cats}")
    for c in cats:
        if c != c.strip() or c.strip() in MISSING_VALUES:
            raise ValueError(f"argument --categories: {c!r} is not a category name (empty, surrounding whitespace, or "
                             f"a missing-value marker among {list(MISSING_VALUES[1:])})")
        if name == "ss" and SUBSET_SEPARATOR in c:
            raise ValueError(f"argument --categories: {c!r} holds {SUBSET_SEPARATOR!r}, which joins the labels of a "
                             "subset-selection report; rename it (or use --oracle grr / hr)")
    if ldp_epsilon is None or not 0 < float(ldp_epsilon) < float("inf"):
        raise ValueError(f"argument --ldp-epsilon: must be a finite number > 0, got {ldp_epsilon!r}")
    if k is not None and name != "ss":
        raise ValueError(f"argument --k: only with --oracle ss (the subset size of subset selection), not {name}")
    try:
        if name == "grr":
            return grr(len(cats), float(ldp_epsilon))
        if name == "hr":
            return hadamard_response(len(cats), float(ldp_epsilon))
        return subset_selection(len(cats), float(ldp_epsilon), k=k)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"argument --k: {exc}") from None


def _report_text(oracle: Any, categories: Sequence[str], reports: np.ndarray) -> Any:
    """The text column (pyarrow) of reports in the oracle's array format (module docstring's table)."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    if oracle.name == "HR":
        return pa.array(np.asarray(reports, dtype=np.int64)).cast(pa.string())
    labels = pa.array(list(categories), type=pa.string())
    if oracle.name == "GRR":
        return labels.take(pa.array(np.asarray(reports, dtype=np.int64)))
    codes = np.sort(np.asarray(reports, dtype=np.int64), axis=1)  # the list's order, never the order drawn
    rows, k = codes.shape
    offsets = pa.array(np.arange(0, rows * k + 1, k, dtype=np.int32))
    return pc.binary_join(pa.ListArray.from_arrays(offsets, labels.take(pa.array(codes.ravel()))), SUBSET_SEPARATOR)


def _bad_reports(source: TableSource, column: str, oracle: Any, categories: Sequence[str], why: str = "",
                 option: str = "--column") -> TableError:
    """The error for reports no report of ``oracle`` can be: no value, count or row of them (a new user's trial: with
    ``--unverified-reports`` a file of raw records got here, and the message quoted the first records' ages in order;
    the reports that are LDP outputs would have been safe to quote, but this error fires exactly when they are not)."""
    if oracle.name == "HR":
        form = f"an integer in [0, {oracle.size}) in decimal"
    elif oracle.name == "GRR":
        form = f"one of the categories {list(categories)[:20]}"
    else:
        form = f"k = {oracle.k} distinct categories of {list(categories)[:20]} joined by {SUBSET_SEPARATOR!r}"
    return TableError(f"argument {option}: column {column!r} of {source.path} holds values that {oracle.name} over "
                      f"--categories cannot output{why} (not shown: if they are raw records, they are protected); a "
                      f"report is {form}")


def _parse_reports(values: Any, oracle: Any, categories: Sequence[str], source: TableSource, column: str) -> np.ndarray:
    """Reports in the oracle's array format from one batch of text cells; unknown text raises, quoting none of it."""
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    if oracle.name == "HR":
        value_set = pa.array([str(y) for y in range(oracle.size)], type=pa.string())
    else:
        value_set = pa.array(list(categories), type=pa.string())
    if oracle.name != "SS":
        idx = pc.index_in(values, value_set=value_set)
        if idx.null_count:
            raise _bad_reports(source, column, oracle, categories)
        return idx.to_numpy().astype(np.int64)
    k = int(oracle.k)
    parts = pc.split_pattern(values, SUBSET_SEPARATOR)
    lengths = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    if np.any(lengths != k):
        raise _bad_reports(source, column, oracle, categories,
                           f" (not the {k} labels of --k {k}: give the k they were privatized with)", "--k")
    idx = pc.index_in(pc.list_flatten(parts), value_set=value_set)
    if idx.null_count:
        raise _bad_reports(source, column, oracle, categories)
    codes = idx.to_numpy().astype(np.int64).reshape(-1, k)
    if k > 1 and np.any(np.diff(np.sort(codes, axis=1), axis=1) == 0):
        raise _bad_reports(source, column, oracle, categories, " (a category repeated)")
    return codes


def privatize_reports(source: TableSource, column: str, oracle: Any, categories: Sequence[str], output: object,
                      rng: np.random.Generator, *, progress: bool = False, overwrite: bool = False,
                      inputs: Sequence[tuple[object, str]] = ()) -> int:
    """Write ``source`` to ``output`` with ``column`` replaced by ε₁-LDP reports of ``oracle``; returns the row count.

    Implements: the first cohort's side of the module docstring (each record privatized independently by
    :meth:`FrequencyOracle.privatize`, written in the table's text format), streamed and atomic like
    :func:`~pml_design.deploy.streaming.privatize_table`.

    Parameters
    ----------
    source : TableSource
        The first cohort's table (protected records: no error quotes a value of it).
    column : str
        The column to privatize (a name, or a 0-based index if no column has that name).
    oracle : FrequencyOracle
        From :func:`make_oracle` over ``categories``.
    categories : sequence of str
        The public categories in code order; every cell of the column must be one of them.
    output : str or os.PathLike
        The output file (``.parquet``: Parquet, else CSV with the input's delimiter); never the input.
    rng : numpy.random.Generator
        Drawn from batch by batch (a seeded run is reproducible for the same file).
    progress : bool, default False
        Show a progress bar (bytes read) on stderr.
    overwrite : bool, default False
        Replace an existing ``output`` and an existing provenance file beside it (never the input).
    inputs : sequence of (path, option), optional
        Further inputs neither ``output`` nor its provenance file may be, whatever ``overwrite`` says (e.g. the
        categories file: a review replaced it with the reports under ``--force``).

    Returns
    -------
    int
        The number of reports (data rows) written.

    Raises
    ------
    TableError
        A cell that is not a category (named by no value, row or count), or an unreadable file.
    OutputFileError
        ``output``, or its provenance file (:func:`provenance_path`), would destroy a file: it is an input or a
        directory, or it exists and ``overwrite`` is False (a provenance file too, even when ``output`` does not
        exist).
    """
    cats = [str(c) for c in categories]
    if len(cats) != oracle.n:
        raise ValueError(f"categories has {len(cats)} entries but the oracle's alphabet has n = {oracle.n}")

    def reports(codes: np.ndarray) -> Any:
        return _report_text(oracle, cats, oracle.privatize(codes, rng=rng))

    from .output import LDP_REPORTS, OutputFileError, check_output_path  # noqa: PLC0415

    # the report file first (a second run is told about it), then its provenance file, by the rules of every output:
    # never an input, never a directory, an existing file only with --force (a review: an existing OUT.ldp.json,
    # another report file's provenance, was replaced silently when OUT itself did not exist)
    common: dict[str, Any] = {"inputs": [(source.path, source.option), *inputs], "option": "argument --output",
                              "force_hint": "--force"}
    check_output_path(output, kind=LDP_REPORTS, overwrite=overwrite, **common)
    prov = check_output_path(provenance_path(output), kind="provenance file", overwrite=True, **common)
    if not overwrite and (prov.exists() or prov.is_symlink()):
        raise OutputFileError(f"argument --output: {prov}, the provenance file written beside {output}, exists; "
                              "refusing to replace it (choose another output name, or pass --force to replace it)")
    rows = rewrite_column(source, column, cats, reports, output, progress=progress, overwrite=overwrite,
                          kind=LDP_REPORTS)
    write_provenance(output, source.resolve(column), oracle, cats, rows)
    return rows


#: The provenance file written beside a report file (``REPORTS.ldp.json``): which oracle, ε₁, k, categories and
#: column made it, its row count and the SHA-256 of the file. ``design --reports`` checks it: without it, a column
#: of raw values read as reports would publish their exact counts under an LDP claim, and a wrong ε₁ or category
#: order would make the PML guarantee false (a review, 2026-11-27).
PROVENANCE_SUFFIX: str = ".ldp.json"
PROVENANCE_FORMAT: str = "pml-design-ldp-reports"


def provenance_path(reports: object) -> pathlib.Path:
    """The provenance file of a report file: its path with :data:`PROVENANCE_SUFFIX` appended.

    Implements: where :func:`write_provenance` puts it and :func:`provenance_mismatch` looks for it (docs/cli.md,
    "A first cohort of LDP reports").

    Parameters
    ----------
    reports : str or os.PathLike
        The report file.

    Returns
    -------
    pathlib.Path
        ``REPORTS.ldp.json``.
    """
    from .output import sidecar_path  # noqa: PLC0415

    return sidecar_path(reports, PROVENANCE_SUFFIX)


def write_provenance(output: object, column: str, oracle: Any, categories: Sequence[str], rows: int) -> pathlib.Path:
    """Write the provenance file of a report file just written by :func:`privatize_reports` (atomically).

    Parameters
    ----------
    output : str or os.PathLike
        The report file.
    column : str
        The name of its column of reports.
    oracle : FrequencyOracle
        The oracle that made them.
    categories : sequence of str
        The public categories in code order.
    rows : int
        The number of reports (as public as the file itself: one row per report).

    Returns
    -------
    pathlib.Path
        The provenance file (:func:`provenance_path`).
    """
    from .file import _write_atomically  # noqa: PLC0415

    doc = {"format": PROVENANCE_FORMAT, "version": 1, "oracle": oracle.name, "ldp_epsilon": float(oracle.epsilon),
           "k": int(oracle.k) if oracle.name == "SS" else None, "categories": [str(c) for c in categories],
           "column": str(column), "rows": int(rows), "sha256": file_sha256(output)}
    return _write_atomically(provenance_path(output), json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def provenance_mismatch(reports: object, column: str, oracle: Any, categories: Sequence[str]) -> tuple[str, str] | None:
    """What in ``(column, oracle, categories)`` disagrees with the report file's provenance, or None.

    Implements: the check of :data:`PROVENANCE_SUFFIX` (the file unchanged since it was written, and written by
    this oracle at this ε₁, k, over these categories in this order, in this column).

    Parameters
    ----------
    reports : str or os.PathLike
        The report file (its provenance file must exist).
    column : str
        The column read as reports.
    oracle : FrequencyOracle
        The oracle declared for them.
    categories : sequence of str
        The categories declared, in code order.

    Returns
    -------
    tuple of (str, str) or None
        ``(option, message)``: the CLI option at fault (``--reports``, ``--column``, ``--oracle``, ``--ldp-epsilon``,
        ``--k``, ``--categories``) and what is wrong; None when everything agrees.
    """
    prov = provenance_path(reports)
    try:
        doc = json.loads(prov.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return "--reports", f"cannot read its provenance file {prov}: {exc}"
    if not isinstance(doc, dict) or doc.get("format") != PROVENANCE_FORMAT:
        return "--reports", f"{prov} is not a report file's provenance"
    bad = provenance_field_error(doc)
    if bad is not None:
        return "--reports", f"{prov} is not a valid provenance file: {bad}"
    if doc.get("sha256") != file_sha256(reports):
        return "--reports", (f"{reports} changed since privatize --oracle wrote it (its SHA-256 differs from {prov}); "
                             "read the file it wrote, unchanged")
    eps = doc.get("ldp_epsilon")
    checks = [
        ("--column", doc.get("column") == str(column), f"the reports are in column {doc.get('column')!r}"),
        ("--oracle", doc.get("oracle") == oracle.name, f"the reports were made by {doc.get('oracle')}"),
        ("--ldp-epsilon", isinstance(eps, (int, float)) and math.isclose(eps, oracle.epsilon, rel_tol=1e-12),
         f"the reports were made at ldp-epsilon {eps!r}"),
        ("--k", oracle.name != "SS" or doc.get("k") == int(oracle.k), f"the reports were made with k = {doc.get('k')}"),
        ("--categories", doc.get("categories") == [str(c) for c in categories],
         "the reports were made over other categories, or in another order: " + _category_list(doc.get("categories"))),
    ]
    for option, ok, what in checks:
        if not ok:
            return option, f"does not match {prov}: {what}"
    return None


def provenance_field_error(doc: dict) -> str | None:
    """Which field of a provenance document (:func:`write_provenance`) has the wrong type or value, or None.

    Implements: the check that a hand-edited ``REPORTS.ldp.json`` is refused in one line naming the field (a
    review: ``"oracle": ["GRR"]`` raised a bare ``unhashable type``, ``"ldp_epsilon": true`` was read as 1).

    Parameters
    ----------
    doc : dict
        The parsed provenance file.

    Returns
    -------
    str or None
        ``"field 'NAME' must be …, got …"``; None when every field is well formed.
    """
    def real(v: object) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def count(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    cats = doc.get("categories")
    eps = doc.get("ldp_epsilon")
    checks = [
        ("oracle", doc.get("oracle") in sorted(ORACLES.values()), f"one of {sorted(ORACLES.values())}"),
        ("ldp_epsilon", real(eps) and 0 < eps < math.inf, "a finite number > 0"),
        ("k", (count(doc.get("k")) and doc["k"] >= 1) if doc.get("oracle") == "SS" else doc.get("k") is None,
         "an integer >= 1 for SS and null otherwise"),
        ("categories", isinstance(cats, list) and len(cats) >= 2 and all(isinstance(c, str) for c in cats),
         "a list of at least 2 strings"),
        ("column", isinstance(doc.get("column"), str), "a string"),
        ("rows", count(doc.get("rows")) and doc["rows"] >= 0, "an integer >= 0"),
        ("sha256", isinstance(doc.get("sha256"), str), "a string"),
    ]
    for field, ok, what in checks:
        if not ok:
            got = repr(doc.get(field)) if field in doc else "nothing"
            return f"field {field!r} must be {what}, got {got[:80]}"
    return None


#: At most this many categories are named in a message (a new user's order mismatch over 600 categories printed a
#: 12 kB line).
SHOWN_CATEGORIES: int = 20


def _category_list(cats: object, limit: int = SHOWN_CATEGORIES) -> str:
    """The stored categories as the ``--categories`` text, or as a list when one holds a comma (``--categories-file``);
    beyond ``limit`` names the first ``limit`` and how many there are."""
    names = [str(c) for c in cats] if isinstance(cats, list) else []
    shown = names[:limit]
    text = repr(shown) if any("," in c for c in shown) else ",".join(shown)
    return text + (f",... ({len(names)} in all)" if len(names) > limit else "")


def first_difference(a: Sequence[str], b: Sequence[str]) -> str:
    """Where two category lists first differ, for a message (``"at position 3: 'x' against 'y'"``).

    Parameters
    ----------
    a, b : sequence of str
        The two lists.

    Returns
    -------
    str
    """
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"first difference at position {i}: {x!r} against {y!r}"
    return f"{len(a)} against {len(b)} categories"


def report_support_counts(source: TableSource, column: str, oracle: Any, categories: Sequence[str], *,
                          progress: bool = False) -> tuple[np.ndarray, int]:
    """The support counts ``C_v`` of a column of ``oracle``'s reports, and how many reports there are (streamed).

    Implements: the counts the estimator of [WBLJ17] Theorem 2 needs (:meth:`FrequencyOracle.support_counts`,
    added over batches), for :func:`pml_design.cohort.design_from_report_counts`.

    Parameters
    ----------
    source : TableSource
        The table of reports (written by :func:`privatize_reports` or in its text format).
    column : str
        The column of reports.
    oracle : FrequencyOracle
        The oracle that produced them (ε₁, and k for subset selection, as when privatizing).
    categories : sequence of str
        The public categories, in the order used when privatizing.
    progress : bool, default False
        Show a progress bar (bytes read) on stderr.

    Returns
    -------
    counts : numpy.ndarray of int64, shape (N,)
        How many reports support each category.
    n_reports : int
        The number of reports (data rows).

    Raises
    ------
    TableError
        A cell that no report of ``oracle`` can be (quoted: reports are ε₁-LDP outputs), a subset of another size
        than k (``argument --k``), a file without data rows or unreadable.
    """
    import contextlib  # noqa: PLC0415

    cats = [str(c) for c in categories]
    if len(cats) != oracle.n:
        raise ValueError(f"categories has {len(cats)} entries but the oracle's alphabet has n = {oracle.n}")
    name = source.resolve(column)
    counts = np.zeros(oracle.n, dtype=np.int64)
    rows = 0
    with _progress(source, progress, "reports") as bar, contextlib.closing(source.batches([name])) as batches:
        for batch in batches:
            if batch.num_rows:
                counts += oracle.support_counts(_parse_reports(batch.column(0), oracle, cats, source, column))
            rows += batch.num_rows
            bar.update(source.bytes_read - bar.n)
    if rows == 0:
        raise TableError(f"argument {source.option}: {source.path} has no data rows")
    return counts, rows
