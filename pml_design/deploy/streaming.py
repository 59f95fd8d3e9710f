"""Streamed reading and writing of CSV / Parquet tables for the deployment commands.

The ``pml-design design | privatize | estimate`` commands read a column of a file that may not fit in
memory: the file is read in batches (pyarrow's streaming CSV reader, or Parquet row groups), every value
kept as text, so memory is flat in the file size. :func:`privatize_table` writes a copy of the file with one
column replaced by privatized labels, batch by batch, into a temporary file that is renamed only when
everything succeeded (no partial output). One ``numpy.random.Generator`` is drawn from sequentially, so the
result does not depend on the batch size and equals :meth:`pml_design.Mechanism.privatize` on the whole
column with the same seed.

Every problem with a file raises :class:`TableError` (a ``ValueError``) whose message names the
command-line option, the file and the bad value. pyarrow is imported only inside the functions.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import hashlib
import io
import os
import pathlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._validation import not_a_file_reason

__all__ = ["MISSING_VALUES", "TableError", "TableSource", "column_counts", "privatize_table", "report_counts",
           "rewrite_column"]

#: Cell values treated as missing when counting categories for a design (they are not categories).
MISSING_VALUES: tuple[str, ...] = ("", "?", "NA", "nan", "NaN")

_BLOCK = 1 << 22  # bytes per CSV block (4 MiB): measured fastest here, and memory stays flat (bench_deploy)


class TableError(ValueError):
    """A problem with an input or output table; the message names the option, the file and the value."""


def _is_parquet(path: pathlib.Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


class TableSource:
    """A CSV file (with a header row) or a Parquet file, read in batches with every value as a string.

    Parameters
    ----------
    path : str or os.PathLike
    option : str
        The command-line option that named the file (for messages), e.g. ``"--csv"``.
    delimiter : str, optional
        CSV delimiter (default: detected among ``, ; TAB |``).
    parquet : bool, optional
        Force the format (default: by the suffix ``.parquet`` / ``.pq``).
    protected : bool, default False
        The file holds protected records (privatize's input): read errors then quote no part of it and give no
        position (pyarrow's parse errors quote the offending row).
    """

    def __init__(self, path: object, option: str, *, delimiter: str | None = None,
                 parquet: bool | None = None, protected: bool = False) -> None:
        self.path = pathlib.Path(os.fspath(path))  # type: ignore[arg-type]
        self.option = option
        self.protected = protected
        why = not_a_file_reason(self.path)
        if why is not None:
            raise TableError(f"argument {option}: {why}: {self.path}")
        self.size = self.path.stat().st_size
        if self.size == 0:
            raise TableError(f"argument {option}: file is empty: {self.path}")
        self.parquet = _is_parquet(self.path) if parquet is None else parquet
        self.delimiter = delimiter
        self.header = self._parquet_header() if self.parquet else self._csv_header(delimiter)
        dup = sorted({h for h in self.header if self.header.count(h) > 1})
        if dup:
            raise TableError(f"argument {option}: {self.path} has duplicate column names {dup}")
        self.bytes_read = 0

    # --- header ------------------------------------------------------------------------------
    def _fail(self, what: str) -> TableError:
        return TableError(f"argument {self.option}: {what}: {self.path}")

    def _csv_header(self, delimiter: str | None) -> list[str]:
        with self.path.open("rb") as fh:
            head = fh.read(1 << 16)
        if b"\x00" in head:
            raise self._fail("not a text (CSV) file (it contains NUL bytes)")
        try:
            text = codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=False)
        except UnicodeDecodeError as exc:
            where = "its position withheld: the file holds protected records" if self.protected else f"at offset {exc.start}"
            raise self._fail(f"not UTF-8 text (a bad byte, {where})") from None
        if not text.strip():
            raise self._fail("file is empty")
        if delimiter is None:
            try:
                delimiter = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|").delimiter
            except csv.Error:
                delimiter = ","
        elif len(delimiter) != 1:
            raise TableError(f"argument --delimiter: must be one character, got {delimiter!r}")
        self.delimiter = delimiter
        header = next(csv.reader(io.StringIO(text), delimiter=delimiter))
        return [h.strip() for h in header]

    def _parquet_header(self) -> list[str]:
        import pyarrow.parquet as pq  # noqa: PLC0415

        try:
            self._pq = pq.ParquetFile(self.path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
            raise self._fail(f"not a Parquet file ({str(exc).splitlines()[0]})") from None
        return list(self._pq.schema_arrow.names)

    def resolve(self, column: str) -> str:
        """The header name of ``column`` (a name, or a 0-based index if no column has that name)."""
        if column in self.header:
            return column
        index = column.isascii() and column.isdigit()  # (not '²': isdigit alone accepts it, and int() fails)
        if index and int(column) < len(self.header):
            return self.header[int(column)]
        if index:
            raise TableError(f"argument --column: no column named {column!r} in {self.path}, and index {column} is out "
                             f"of range (it has {len(self.header)} columns, 0 to {len(self.header) - 1}): {self.header}")
        raise TableError(f"argument --column: no column {column!r} in {self.path}; columns are {self.header}")

    # --- batches -----------------------------------------------------------------------------
    def batches(self, columns: Sequence[str] | None = None, typed_except: str | None = None) -> Iterator[Any]:
        """Record batches (pyarrow) of the given columns (default all), every value a non-null string; with
        ``typed_except`` a Parquet file's other columns keep their types and nulls (privatize to Parquet turned an
        int64 column into strings, a review found)."""
        import pyarrow as pa  # noqa: PLC0415

        try:
            yield from (self._parquet_batches(columns, typed_except) if self.parquet else self._csv_batches(columns))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if self.protected:  # the parser's message quotes the offending row (a review: a record on stderr)
                msg = (f"{type(exc).__name__}; the parser's message is withheld, as it quotes the data, which are "
                       "protected records: check the quoting, the encoding and the number of fields of each row")
            raise self._fail(f"cannot read it as {'Parquet' if self.parquet else 'CSV'} ({msg})") from None

    def _csv_batches(self, columns: Sequence[str] | None) -> Iterator[Any]:
        import pyarrow as pa  # noqa: PLC0415
        import pyarrow.csv as pacsv  # noqa: PLC0415

        names = list(self.header)
        read = pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=_BLOCK, use_threads=True)
        # a blank line is a record whose cells are all empty (missing: dropped by design, refused by privatize and
        # estimate), not nothing; Arrow's default skipped it, so privatize wrote fewer rows than it read (a review),
        # and estimate counted fewer reports. Arrow reads it so in a file of any number of columns
        parse = pacsv.ParseOptions(delimiter=self.delimiter, ignore_empty_lines=False)
        convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, strings_can_be_null=False,
                                       null_values=[], quoted_strings_can_be_null=False,
                                       include_columns=list(columns) if columns is not None else None)
        # A native Arrow file, never a Python file object: Arrow's read-ahead threads hold the stream and may drop
        # the last reference to it after Python stopped (interpreter exit, e.g. right after an error message);
        # the destructor of a wrapped Python file then takes the GIL on a non-Python thread during finalization,
        # which kills that thread inside a noexcept destructor: "terminate called without an active exception",
        # exit status 134 (seen in 9% of error exits under load). The reader is also closed before we leave.
        with pa.OSFile(str(self.path), "rb") as fh:
            reader = pacsv.open_csv(fh, read_options=read, parse_options=parse, convert_options=convert)
            try:
                for batch in reader:
                    self.bytes_read = fh.tell()
                    yield batch
            finally:
                reader.close()

    def _parquet_batches(self, columns: Sequence[str] | None, typed_except: str | None = None) -> Iterator[Any]:
        import pyarrow as pa  # noqa: PLC0415
        import pyarrow.compute as pc  # noqa: PLC0415

        total_rows = max(self._pq.metadata.num_rows, 1)
        done = 0
        for batch in self._pq.iter_batches(batch_size=1 << 20, columns=list(columns) if columns else None):
            names = batch.schema.names
            as_text = [typed_except is None or nm == typed_except for nm in names]
            arrays = [(a if pa.types.is_string(a.type) else pc.cast(a, pa.string())) if t else a
                      for a, t in zip(batch.columns, as_text)]
            arrays = [pc.fill_null(a, "") if t else a for a, t in zip(arrays, as_text)]
            done += batch.num_rows
            self.bytes_read = int(self.size * done / total_rows)
            yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _progress(source: TableSource, enabled: bool, desc: str) -> Any:
    from ..progress import progress_bar  # noqa: PLC0415

    bar = progress_bar(total=source.size, desc=desc, enabled=enabled)
    bar.unit, bar.unit_scale, bar.unit_divisor = "B", True, 1024
    return bar


def _codes(values: Any, value_set: Any, source: TableSource, column: str, labels: Sequence[str],
           first_row: int, what: str) -> np.ndarray:
    """Positions of ``values`` in ``value_set`` (pyarrow); unknown values raise, naming no value, count or row:
    privatize's input (``what == "labels"``) is protected records, and a file that estimate reads (``"output
    labels"``) holding other values may be the records themselves."""
    import pyarrow.compute as pc  # noqa: PLC0415

    idx = pc.index_in(values, value_set=value_set)  # exact text, as in pandas (check_whitespace_distinct)
    if idx.null_count:
        if what == "labels":  # privatize's input: protected records, so no value, count or row is named
            raise TableError(f"argument --column: column {column!r} of {source.path} holds values outside the "
                             f"categories (missing, or not among {list(labels)[:20]}); they are not shown, as they are "
                             "protected records: find them with a filter on those labels")
        # estimate's input: a file holding other values is no file of the mechanism's reports, and it may be the
        # records themselves (a review: a raw file's rare value, a count and a row went to stderr)
        raise TableError(f"argument --column: column {column!r} of {source.path} holds values the mechanism does "
                         f"not know as {what} (not among {list(labels)[:20]}), so it is not a file of its reports "
                         "(check --column and the mechanism file); they are not shown, in case the file holds "
                         "protected records: find them with a filter on those labels")
    return idx.to_numpy().astype(np.int64)


def _label_strings(labels: Sequence[Any], what: str) -> list[str]:
    text = [str(v) for v in labels]
    if len(set(text)) != len(text):
        raise TableError(f"the mechanism's {what} are not distinct as text: {text}")
    return text


def column_counts(source: TableSource, column: str, *, progress: bool = False,
                  digest: Any = None, quote_values: bool = True) -> tuple[list[str], np.ndarray]:
    """Distinct values (sorted) of a column and their counts; :data:`MISSING_VALUES` cells are skipped.

    ``digest``: a ``hashlib`` object fed the column in the same pass, as
    :func:`~pml_design.deploy.guard.table_column_sha256` hashes it (the design-data fingerprint without a second
    read of the file). ``quote_values=False`` (records a differentially private release protects): no error
    message names a value of the column, and a column without values is not refused (no labels, no counts).

    Implements: the streamed count of the design data (module docstring); one pass over the file in batches.

    Parameters
    ----------
    source : TableSource
        The table to read.
    column : str
        A column name, or a 0-based index if no column has that name (:meth:`TableSource.resolve`).
    progress : bool, default False
        Show a progress bar (bytes read).
    digest : hashlib object, optional
        Fed the column during the same pass (:func:`~pml_design.deploy.guard.update_column_digest`).
    quote_values : bool, default True
        Whether an error message may name a value of the column.

    Returns
    -------
    labels : list of str
        The distinct values, sorted, without :data:`MISSING_VALUES` (compared after stripping whitespace).
    counts : numpy.ndarray of int64, shape (len(labels),)
        How many cells hold each value.

    Raises
    ------
    TableError
        The column is missing or has no values, two values differ only in surrounding whitespace, or the file
        cannot be read.
    """
    import pyarrow.compute as pc  # noqa: PLC0415

    from ..mechanisms.labels import check_whitespace_distinct  # noqa: PLC0415
    from .guard import update_column_digest  # noqa: PLC0415

    name = source.resolve(column)
    totals: dict[str, int] = {}
    with _progress(source, progress, "count") as bar, contextlib.closing(source.batches([name])) as batches:
        for batch in batches:
            if digest is not None:
                update_column_digest(digest, batch.column(0))
            vc = pc.value_counts(batch.column(0))
            for v, c in zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist()):
                totals[v] = totals.get(v, 0) + c
            bar.update(source.bytes_read - bar.n)
    for v in [v for v in totals if v.strip() in MISSING_VALUES]:  # blank, whitespace-only, '?', NA: missing
        del totals[v]
    if not totals and quote_values:  # (records a DP release protects: not refused, that would tell there is none)
        raise TableError(f"argument --column: column {column!r} of {source.path} has no values (every cell is "
                         f"empty or one of {list(MISSING_VALUES[1:])})")
    labels = sorted(totals)
    try:
        check_whitespace_distinct(labels, "values")
    except ValueError as exc:
        why = (str(exc) if quote_values else "two values differ only in surrounding whitespace (not shown: the "
               "records are protected); labels are compared as exact text (strip the values first if they are "
               "the same category)")
        raise TableError(f"argument --column: column {column!r} of {source.path}: {why}") from None
    return labels, np.array([totals[v] for v in labels], dtype=np.int64)


def report_counts(source: TableSource, column: str, mechanism: Any, *, progress: bool = False) -> np.ndarray:
    """Number of reports per output of ``mechanism`` in a column of privatized labels (streamed).

    Implements: the report counts the estimators of ``pml-design estimate`` start from (module docstring); one
    pass over the file in batches, each cell matched as exact text.

    Parameters
    ----------
    source : TableSource
        The table of privatized records.
    column : str
        A column name, or a 0-based index if no column has that name (:meth:`TableSource.resolve`).
    mechanism : Mechanism
        The mechanism that produced the reports (its ``output_labels`` are used).
    progress : bool, default False
        Show a progress bar (bytes read).

    Returns
    -------
    numpy.ndarray of int64, shape (M,)
        The count of each output label, in the order of ``mechanism.output_labels``.

    Raises
    ------
    TableError
        A cell is not an output label, the output labels are not distinct as text, the file has no data rows or
        cannot be read.
    """
    import pyarrow as pa  # noqa: PLC0415

    name = source.resolve(column)
    outs = _label_strings(mechanism.output_labels, "output labels")
    value_set = pa.array(outs, type=pa.string())
    counts = np.zeros(len(outs), dtype=np.int64)
    row = 0
    with _progress(source, progress, "estimate") as bar, contextlib.closing(source.batches([name])) as batches:
        for batch in batches:
            counts += np.bincount(_codes(batch.column(0), value_set, source, column, outs, row, "output labels"),
                                  minlength=len(outs))
            row += batch.num_rows
            bar.update(source.bytes_read - bar.n)
    if row == 0:
        raise TableError(f"argument {source.option}: {source.path} has no data rows")
    return counts


def _csv_header_line(names: Sequence[str], delimiter: str) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, delimiter=delimiter, lineterminator="\n").writerow(names)
    return buf.getvalue().encode("utf-8")


def _write_csv_batch(batch: Any, sink: Any, delimiter: str) -> None:
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.csv as pacsv  # noqa: PLC0415

    try:  # unquoted, like most inputs; quote only a batch that needs it
        pacsv.write_csv(batch, sink, pacsv.WriteOptions(include_header=False, delimiter=delimiter,
                                                        quoting_style="none"))
    except pa.ArrowInvalid:
        pacsv.write_csv(batch, sink, pacsv.WriteOptions(include_header=False, delimiter=delimiter,
                                                        quoting_style="needed"))


def privatize_table(source: TableSource, column: str, mechanism: Any, output: object, rng: np.random.Generator,
                    *, progress: bool = False, overwrite: bool = False, check_column: Any = None,
                    split_draws: tuple[str, float] | None = None) -> int:
    """Write ``source`` to ``output`` with ``column`` replaced by privatized labels; returns the row count.

    Implements: the local model of the core paper (Section II), ``Y ∼ P_{Y|X=x}`` per record, by
    :meth:`pml_design.Mechanism.privatize_codes` batch by batch. ``output`` is Parquet if it ends in
    ``.parquet``/``.pq``, else CSV with the input's delimiter. Nothing is left at ``output`` on failure.
    ``output`` is never the input file nor the mechanism's file (resolved paths); an existing
    ``output`` is replaced only with ``overwrite=True`` (``--force``).
    ``check_column``, if given, is called with the SHA-256 of the input column
    (:func:`pml_design.deploy.guard.table_column_sha256`, computed during the same pass) before the output is
    renamed into place; whatever it raises leaves no output (the design-data guard).

    Parameters
    ----------
    source : TableSource
        The input table.
    column : str
        The column to privatize: a name, or a 0-based index if no column has that name.
    mechanism : Mechanism
        The mechanism (its ``labels``, ``output_labels``, ``privatize_codes`` and ``metadata["path"]`` are used).
    output : str or os.PathLike
        The output file (checked by :func:`~pml_design.deploy.output.check_output_path`).
    rng : numpy.random.Generator
        Drawn from sequentially over the batches.
    progress : bool, default False
        Show a progress bar (bytes read).
    overwrite : bool, default False
        Replace an existing ``output`` that is not an input.
    check_column : callable, optional
        ``check_column(sha256_hex, split_sha256_hex, counts=counts)``, called before the output is renamed into
        place: the column's SHA-256, the same hash of the rows the ``split_draws`` select (None without them), and
        the column's counts per label (int64).
    split_draws : (str, float), optional
        A split's seed and fraction (:func:`pml_design.deploy.split.split_draws_of`, kept in a mechanism file's
        fingerprint): the rows they select are hashed too (the input may be the file that split divided).

    Returns
    -------
    int
        The number of data rows written.

    Raises
    ------
    TableError
        A cell is not a label of the mechanism, the labels are not distinct as text, the file has no data rows or
        cannot be read.
    OutputFileError
        ``output`` would destroy a file (:func:`~pml_design.deploy.output.check_output_path`).
    """
    import pyarrow as pa  # noqa: PLC0415

    mech_file = (getattr(mechanism, "metadata", None) or {}).get("path")
    out_values = pa.array(_label_strings(mechanism.output_labels, "output labels"), type=pa.string())

    def reports(codes: np.ndarray) -> Any:
        return out_values.take(pa.array(mechanism.privatize_codes(codes, rng)))

    return rewrite_column(source, column, _label_strings(mechanism.labels, "labels"), reports, output,
                          inputs=[(mech_file, "MECHANISM")], progress=progress, overwrite=overwrite,
                          check_column=check_column, split_draws=split_draws)


def rewrite_column(source: TableSource, column: str, labels: Sequence[str], reports: Any, output: object, *,
                   inputs: Sequence[tuple[object, str]] = (), progress: bool = False, overwrite: bool = False,
                   check_column: Any = None, split_draws: tuple[str, float] | None = None,
                   kind: str = "privatized copy") -> int:
    """Write ``source`` to ``output`` with ``column``'s labels replaced by ``reports(codes)``; returns the row count.

    Implements: the streamed, atomic rewrite behind :func:`privatize_table` (and the LDP oracles' privatize of
    :mod:`pml_design.deploy.reports`): batch by batch, each cell's position in ``labels`` (exact text; a cell
    outside them is an error that names no value, the input being protected records) is handed to ``reports``,
    whose text column replaces it. The output goes to a temporary sibling renamed only on success.

    Parameters
    ----------
    source : TableSource
        The input table (protected records).
    column : str
        The column to replace: a name, or a 0-based index if no column has that name.
    labels : sequence of str
        The known input labels, distinct as text; a cell's code is its position here.
    reports : callable
        ``reports(codes)`` → a pyarrow string array of the same length (the privatized column of one batch).
    output : str or os.PathLike
        The output file (``.parquet``/``.pq``: Parquet, else CSV with the input's delimiter).
    inputs : sequence of (path, option), optional
        Further inputs the output may not be (besides ``source``), e.g. the mechanism file.
    progress, overwrite, check_column, split_draws
        As in :func:`privatize_table`.
    kind : str, default "privatized copy"
        What ``output`` is, for :func:`~pml_design.deploy.output.check_output_path` (``"LDP reports"`` for a first
        cohort's reports: a file with another route's side file beside it is not replaced).

    Returns
    -------
    int
        The row count, as :func:`privatize_table` returns it (and raises as it does, ``labels`` for the mechanism's).
    """
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    from .atomic import publish  # noqa: PLC0415
    from .file import temporary_sibling  # noqa: PLC0415
    from .guard import update_column_digest  # noqa: PLC0415
    from .output import check_output_path, key_file  # noqa: PLC0415

    name = source.resolve(column)
    target = check_output_path(output, inputs=[(source.path, source.option), *inputs], kind=kind,
                               overwrite=overwrite, option="argument --output", force_hint="--force")
    what = key_file(target)
    if what is not None:  # (a new user's --force replaced one with privatized records)
        raise TableError(f"argument --output: {target} is {what}, the only key to the reports privatized with it; "
                         "refusing to replace it with privatized records, even with --force (choose another name)")
    value_set = pa.array(list(labels), type=pa.string())
    j = source.header.index(name)
    fd, tmp = temporary_sibling(target)
    rows = 0
    digest = hashlib.sha256() if check_column is not None else None
    counts = np.zeros(len(labels), dtype=np.int64) if digest is not None else None  # the design records reordered
    selected, select = None, None
    if digest is not None and split_draws is not None:
        from .split import split_selector  # noqa: PLC0415

        selected, select = hashlib.sha256(), split_selector(*split_draws)
    try:
        os.close(fd)  # written through a native Arrow file (see _csv_batches: no Python file inside Arrow)
        typed = name if _is_parquet(target) else None  # Parquet to Parquet: the other columns keep their types
        with pa.OSFile(str(tmp), "wb") as sink, _progress(source, progress, "privatize") as bar, \
                contextlib.closing(source.batches(typed_except=typed)) as batches:
            writer = None
            if not _is_parquet(target):
                sink.write(_csv_header_line(source.header, source.delimiter or ","))
            for batch in batches:
                x = _codes(batch.column(j), value_set, source, name, labels, rows, "labels")  # (the header name)
                if digest is not None:
                    update_column_digest(digest, batch.column(j))
                    counts += np.bincount(np.asarray(x), minlength=len(labels))
                if selected is not None:
                    update_column_digest(selected, batch.column(j).filter(pa.array(select(batch.num_rows))))
                cols = list(batch.columns)
                cols[j] = reports(x)
                out = pa.RecordBatch.from_arrays(cols, names=source.header)
                if _is_parquet(target):
                    writer = writer or pq.ParquetWriter(sink, out.schema)
                    writer.write_batch(out)
                else:
                    _write_csv_batch(out, sink, source.delimiter or ",")
                rows += batch.num_rows
                bar.update(source.bytes_read - bar.n)
            if rows == 0:
                raise TableError(f"argument {source.option}: {source.path} has no data rows")
            if writer is not None:
                writer.close()
        if digest is not None:
            check_column(digest.hexdigest(), selected.hexdigest() if selected is not None else None, counts=counts)
        try:
            publish(tmp, target, overwrite)
        except FileExistsError as exc:
            from .output import OutputFileError  # noqa: PLC0415

            raise OutputFileError(f"argument --output: {exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return rows
