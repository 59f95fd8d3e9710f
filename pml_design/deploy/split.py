"""A random disjoint split of a CSV / Parquet table: design records apart from the records to release.

``pml-design split --csv IN --fraction F --seed S -o DESIGN REST`` and :func:`split_file`: every data row goes to
DESIGN with probability F, independently of the others and of its content (a Bernoulli split: DESIGN gets
Binomial(n, F) rows, not exactly round(F·n); one pass, no row count needed first, so any file size streams),
else to REST, in the input's order. Design on DESIGN, privatize REST: the mechanism file publishes the design
records' counts (P̂ · m), never a statistic of a released record (core paper, Section IV-D; docs/cli.md).
"""

from __future__ import annotations

import math
import os
import pathlib
from typing import Any

import numpy as np

from .._validation import as_generator
from .streaming import TableError, TableSource, _csv_header_line, _is_parquet, _progress, _write_csv_batch

__all__ = ["split_draws_of", "split_file", "split_record_path", "split_selector"]

#: Beside DESIGN, ``split`` writes ``DESIGN.split.json``: the split's seed and fraction and DESIGN's own SHA-256.
#: ``design`` on DESIGN (unchanged since) keeps the seed and fraction in the mechanism file's fingerprint, and
#: ``privatize`` redraws them on its input: where the rows they select hold the design column, the input is the file
#: that was split (a new user privatized the unsplit file, and the guarantee line covered records it does not). The
#: seed is independent of the data, so the mechanism file publishes nothing more of the released records (a review:
#: the whole input's SHA-256, kept first, let whoever knows the design records and all but one released record guess
#: the last one's value).
SPLIT_RECORD_SUFFIX: str = ".split.json"
SPLIT_RECORD_FORMAT: str = "pml-design split record"
#: A split seed as kept in the record and in a mechanism file's fingerprint: hex digits.
SEED_PATTERN: str = r"[0-9a-f]{1,64}"


def split_record_path(design_output: object) -> pathlib.Path:
    """``DESIGN.split.json``, the record ``split`` writes beside its design output.

    Parameters
    ----------
    design_output : str or os.PathLike
        The design records' file.

    Returns
    -------
    pathlib.Path
    """
    from .output import sidecar_path  # noqa: PLC0415

    return sidecar_path(design_output, SPLIT_RECORD_SUFFIX)


def split_draws_of(design_file: object) -> tuple[str, float] | None:
    """``(seed, fraction)`` of the split that wrote ``design_file``, from the record beside it, or None (no record, not
    a readable one, or one whose SHA-256 of DESIGN no longer matches the file: moved, edited or forged).

    Parameters
    ----------
    design_file : str or os.PathLike
        A design records' file.

    Returns
    -------
    (str, float) or None
        The seed as hex digits and the fraction (the split's draws: ``numpy.random.default_rng(int(seed, 16))``, one
        ``random()`` per data row, in order, below the fraction: a design row).
    """
    import re  # noqa: PLC0415

    from .guard import file_sha256  # noqa: PLC0415
    from .output import read_sidecar  # noqa: PLC0415

    doc, _ = read_sidecar(split_record_path(design_file), SPLIT_RECORD_FORMAT)
    if doc is None:
        return None
    seed, frac, own = doc.get("seed"), doc.get("fraction"), doc.get("design_sha256")
    if not (isinstance(seed, str) and re.fullmatch(SEED_PATTERN, seed) and isinstance(frac, float)
            and 0.0 < frac < 1.0 and isinstance(own, str)):
        return None
    try:
        return (seed, frac) if file_sha256(design_file) == own else None
    except OSError:
        return None


def split_selector(seed: str, fraction: float) -> Any:
    """``select(n)``: the next ``n`` rows' design flags of the split ``(seed, fraction)``, batch after batch (the same
    flags whatever the batch sizes: one ``random()`` per row, in order, as :func:`split_file` draws them).

    Parameters
    ----------
    seed : str
        Hex digits (:func:`split_draws_of`).
    fraction : float
        The split's fraction.

    Returns
    -------
    callable
        ``select(n) -> numpy.ndarray`` of n booleans.
    """
    return _design_flags(np.random.default_rng(int(seed, 16)), fraction)


def _design_flags(gen: np.random.Generator, fraction: float) -> Any:
    """The split's one rule, for :func:`split_file` and the replay of :func:`split_selector`: ``select(n)`` flags
    the next n rows, one ``random()`` each, below ``fraction`` for DESIGN."""
    return lambda n: gen.random(n) < fraction


#: How errors name what the caller passed: the CLI's flags, or :func:`split_file`'s arguments.
_CLI_NAMES = {"fraction": "argument --fraction", "output": ("argument --output", "argument --output"),
              "sides": ("DESIGN", "REST"), "force": "--force"}
_PY_NAMES = {"fraction": "fraction", "output": ("design_output", "rest_output"),
             "sides": ("design_output", "rest_output"), "force": "overwrite=True"}


def _check_fraction(fraction: object, name: str = "fraction") -> float:
    try:
        f = float(fraction)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TableError(f"{name}: must be a number in (0, 1), got {fraction!r}") from None
    if not (math.isfinite(f) and 0.0 < f < 1.0):
        raise TableError(f"{name}: must lie in (0, 1) (the share of rows for the design), got {fraction!r}")
    return f


def _check_outputs(source: TableSource, outputs: list[pathlib.Path], overwrite: bool,
                   names: dict = _PY_NAMES) -> None:
    from .output import check_output_path  # noqa: PLC0415

    inp = source.path.resolve()
    for opt, what, out in zip(names["output"], names["sides"], outputs):
        if not out.parent.is_dir():
            raise TableError(f"{opt}: directory does not exist: {out.parent} (for {what})")
        if out.resolve() == inp:
            raise TableError(f"{opt}: {what} must differ from the input file {source.path}")
    if outputs[0].resolve() == outputs[1].resolve():
        raise TableError(f"{names['output'][1]}: {' and '.join(names['sides'])} must be two different files, got "
                         f"{outputs[0]} twice")
    for opt, out in zip(names["output"], outputs):  # the library's one rule: never an input, never an existing file
        check_output_path(out, inputs=[(source.path, source.option)], kind="split output", overwrite=overwrite,
                          option=opt, force_hint=names["force"])
    check_output_path(split_record_path(outputs[0]), inputs=[(source.path, source.option), (outputs[1], "REST")],
                      kind="split record", overwrite=overwrite, option=names["output"][0], force_hint=names["force"])


class _Sink:
    """One output table written to a temporary sibling file (CSV or Parquet, by the suffix)."""

    def __init__(self, target: pathlib.Path, header: list[str], delimiter: str) -> None:
        from .file import temporary_sibling  # noqa: PLC0415

        self.target, self.delimiter, self.rows = target, delimiter, 0
        self.fd, self.tmp = temporary_sibling(target)
        self.fh = os.fdopen(self.fd, "wb")
        self.writer: Any = None
        if not _is_parquet(target):
            self.fh.write(_csv_header_line(header, delimiter))

    def write(self, batch: Any) -> None:
        import pyarrow.parquet as pq  # noqa: PLC0415

        if _is_parquet(self.target):
            self.writer = self.writer or pq.ParquetWriter(self.fh, batch.schema)
            self.writer.write_batch(batch)
        elif batch.num_rows:
            _write_csv_batch(batch, self.fh, self.delimiter)
        self.rows += batch.num_rows

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.fh.close()


def split_file(input: object, fraction: float, design_output: object, rest_output: object, rng: object = None, *,
               delimiter: str | None = None, parquet: bool | None = None, progress: bool = False,
               overwrite: bool = False, _cli: bool = False) -> tuple[int, int]:
    """Split the rows of a CSV / Parquet file at random into two disjoint files: design records and the rest.

    Implements: the estimation / release split of the core paper's Section IV-D (P̂ from "a portion of a large
    dataset"), so that the design records are never privatized and released.

    Parameters
    ----------
    input : str or os.PathLike
        A CSV file with a header row, or a Parquet file (by the suffix ``.parquet`` / ``.pq``, or ``parquet``).
    fraction : float
        In (0, 1): each data row goes to ``design_output`` with this probability, independently (so the number
        of design rows is Binomial(n, fraction), not exactly round(fraction·n)), else to ``rest_output``.
    design_output, rest_output : str or os.PathLike
        The two files (Parquet if the name ends in ``.parquet`` / ``.pq``, else CSV with the input's delimiter);
        rows keep the input's order and every value is kept as text. Both are written to temporary files and
        renamed only when the whole split succeeded; neither may be the input (compared as resolved paths). Beside
        ``design_output`` a record ``DESIGN.split.json`` keeps the seed, the fraction and DESIGN's SHA-256
        (:func:`split_draws_of`; not for a Generator or SeedSequence ``rng``, whose draws it cannot name): a design
        on DESIGN keeps the first two, and ``privatize`` then refuses the whole input, which holds the design records.
    rng : numpy.random.Generator, int, numpy.random.SeedSequence or None
        Randomness (one uniform draw per row, in order: the split does not depend on the batch size); None:
        fresh OS entropy.
    delimiter : str, optional
        CSV delimiter (default: detected).
    parquet : bool, optional
        Force the input format.
    progress : bool, default False
        A progress bar on stderr.
    overwrite : bool, default False
        Replace an existing output file (``--force``); without it an existing file is refused, as everywhere
        (:func:`pml_design.deploy.output.check_output_path`).

    Returns
    -------
    (int, int)
        The number of rows in ``design_output`` and in ``rest_output``.

    Raises
    ------
    TableError (a ValueError)
        A fraction outside (0, 1), an unreadable input, an output that is the input, an input without data rows,
        or a split that left one side empty; no file is written then. The message names the argument
        (``fraction``, ``design_output``, ...; the CLI's own call names its flags).
    """
    names = _CLI_NAMES if _cli else _PY_NAMES
    f = _check_fraction(fraction, names["fraction"])
    seed = None  # recorded beside DESIGN where the draws can be replayed: fresh entropy or an integer seed
    if rng is None:
        import secrets  # noqa: PLC0415

        rng = secrets.randbits(128)  # (fresh OS entropy, as before, now known to the record)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and int(rng) >= 0:
        seed = format(int(rng), "x")
    gen = as_generator(rng)
    if isinstance(input, TableSource):
        source = input
    else:
        path = pathlib.Path(os.fspath(input))  # type: ignore[arg-type]
        as_parquet = _is_parquet(path) if parquet is None else parquet
        source = TableSource(path, "input", delimiter=delimiter, parquet=parquet)
    outputs = [pathlib.Path(os.fspath(p)) for p in (design_output, rest_output)]  # type: ignore[arg-type]
    _check_outputs(source, outputs, overwrite, names)
    import pyarrow as pa  # noqa: PLC0415

    sinks: list[_Sink] = []
    try:
        for out in outputs:
            sinks.append(_Sink(out, source.header, source.delimiter or ","))
        with _progress(source, progress, "split") as bar:
            select = _design_flags(gen, f)
            for batch in source.batches():
                to_design = select(batch.num_rows)
                sinks[0].write(batch.filter(pa.array(to_design)))
                sinks[1].write(batch.filter(pa.array(~to_design)))
                bar.update(source.bytes_read - bar.n)
        for s in sinks:
            s.close()
        total = sinks[0].rows + sinks[1].rows
        if total == 0:
            raise TableError(f"argument {source.option}: {source.path} has no data rows")
        for what, s in zip(names["sides"], sinks):
            if s.rows == 0:
                raise TableError(f"{names['fraction']}: the split of {total} rows with fraction {f:g} left {what} "
                                 f"empty; use {'a larger' if what == 'DESIGN' else 'a smaller'} fraction or more rows")
        for s in sinks:
            os.replace(s.tmp, s.target)
        import json  # noqa: PLC0415

        from .atomic import _write_atomically  # noqa: PLC0415
        from .guard import file_sha256  # noqa: PLC0415

        if seed is not None:
            _write_atomically(split_record_path(outputs[0]), json.dumps(
                {"format": SPLIT_RECORD_FORMAT, "seed": seed, "fraction": f,
                 "design_sha256": file_sha256(outputs[0])}) + "\n")
    except BaseException:
        for s in sinks:
            if not s.fh.closed:
                s.fh.close()
            s.tmp.unlink(missing_ok=True)
        raise
    return sinks[0].rows, sinks[1].rows

