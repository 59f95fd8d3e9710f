"""Design data apart from released data: fingerprints of the design records and the guard that uses them.

A mechanism file publishes P̂ and m, hence the exact counts of the records it was designed on (``P̂ · m``); the
(ε, δ)-PML guarantee covers the records that are privatized, so those must be other records (core paper,
Section IV-D: "a portion of a large dataset can be used for estimation"). The file keeps a fingerprint of the
design input (``design_data``):

* ``"column sha256"`` — SHA-256 of the design column's values in order
  (:func:`pml_design.pipeline.values_sha256`), written by :func:`pml_design.design_from_samples` and by
  ``pml-design design --csv/--parquet`` (the column hashed in the pass that counts it, :func:`update_column_digest`);
* ``"file sha256"`` — SHA-256 of the bytes of the design file, every column: what ``pml-design design`` wrote
  before it hashed only the column (still recognised; no longer written: a hash of the other columns of the
  design records, published nowhere else, would let whoever knows most of them confirm guesses of the rest).

Either is kept only when guessing it is hopeless (:func:`pml_design.pipeline.design_fingerprint`: the records'
order must carry ≥ 128 bits given their counts, which the file reveals anyway); a hash of counts never is.
``pml-design privatize`` and :func:`pml_design.privatize_dataframe` compute the same fingerprint of their input
and refuse it when it matches, unless told otherwise (``--allow-design-data`` / ``allow_design_data=True``). The
guard catches the same column values in the same order (also in a CSV converted to Parquet, or with other
columns), not a shuffled or re-encoded copy. ``pml-design privatize`` hashes the column during its own pass
over the input and refuses before its output is renamed into place (no second read).
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
from typing import Any

from .._validation import fmt

_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
#: The kinds of ``design_data`` fingerprints.
FINGERPRINT_KINDS: tuple[str, ...] = ("file sha256", "column sha256")

__all__ = ["DESIGN_DATA_MESSAGE", "FINGERPRINT_KINDS", "check_fingerprint", "design_counts_match", "design_data_of",
           "file_sha256", "matches_design_data", "table_column_sha256", "update_column_digest"]

#: Why privatizing the design records is refused (the end of every such message).
#: Why the design records may not be privatized, whichever way they were recognised (the end of those messages).
PUBLISHED_COUNTS: str = ("the mechanism file publishes their counts (p_hat * m), which the guarantee does not cover; "
                         "privatize other records (pml-design split)")
DESIGN_DATA_MESSAGE = f"its fingerprint is the mechanism file's design_data: {PUBLISHED_COUNTS}"


def file_sha256(path: object, *, chunk: int = 1 << 20) -> str:
    """SHA-256 (hex) of a file's bytes, read in chunks (memory stays flat).

    Implements: the ``"file sha256"`` fingerprint of the module docstring (docs/cli.md, "Where P̂ comes from: design
    records apart from released records").

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    chunk : int, default 1 << 20
        Bytes read at a time.

    Returns
    -------
    str
        The hex digest.
    """
    h = hashlib.sha256()
    with pathlib.Path(os.fspath(path)).open("rb") as fh:  # type: ignore[arg-type]
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def update_column_digest(h: Any, values: Any) -> None:
    """Feed a batch of a column (pyarrow strings, no nulls) to ``h`` as :func:`pml_design.pipeline.values_sha256`
    does: each value trimmed, followed by a NUL byte (joined in pyarrow, no Python object per value).

    Implements: the ``"column sha256"`` fingerprint of the module docstring (docs/cli.md, "Where P̂ comes from").

    Parameters
    ----------
    h : hashlib hash object
        The running digest (e.g. ``hashlib.sha256()``), updated in place.
    values : pyarrow.Array
        A batch of the column: pyarrow strings (or large strings), no nulls; an empty batch leaves ``h`` unchanged.
    """
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.compute as pc  # noqa: PLC0415

    if len(values) == 0:
        return
    joined = pc.binary_join_element_wise(pc.utf8_trim_whitespace(values), pa.scalar("\x00"), "")
    width = np.int64 if pa.types.is_large_string(joined.type) else np.int32
    offsets = np.frombuffer(joined.buffers()[1], dtype=width)[joined.offset:joined.offset + len(joined) + 1]
    h.update(memoryview(joined.buffers()[2])[int(offsets[0]):int(offsets[-1])])


def table_column_sha256(source: Any, column: str) -> str:
    """:func:`pml_design.pipeline.values_sha256` of a streamed CSV / Parquet column (values trimmed, in order).

    Implements: the ``"column sha256"`` fingerprint of the module docstring (docs/cli.md, "Where P̂ comes from").

    Parameters
    ----------
    source : table source
        A streamed CSV / Parquet source (with ``resolve(column)`` and ``batches([name])``).
    column : str
        The column (resolved by ``source.resolve``).

    Returns
    -------
    str
        The hex digest.
    """
    h = hashlib.sha256()
    name = source.resolve(column)
    for batch in source.batches([name]):
        update_column_digest(h, batch.column(0))
    return h.hexdigest()


def design_data_of(mechanism: object) -> dict:
    """The ``design_data`` fingerprint of a Mechanism (from a file), a DesignResult or an EstimatedDesign ({} if none).

    Only a P̂ from a public sample (``prior_source="public sample"``) publishes exact counts of its records; with
    a differentially private P̂ (``"dp"``) or one from LDP reports the design records may be privatized, and no
    fingerprint applies.

    Implements: the design-data fingerprint of the module docstring (core paper, Section IV-D; docs/cli.md, "Where
    P̂ comes from").

    Parameters
    ----------
    mechanism : Mechanism, DesignResult or EstimatedDesign
        Its ``metadata`` (a loaded file), its ``result.info`` or its ``info`` is read.

    Returns
    -------
    dict
        The ``design_data`` dict (``"kind"`` and ``"sha256"``) when the prior source is a public sample (or is not
        recorded) and one is stored; otherwise ``{}``.
    """
    meta = getattr(mechanism, "metadata", None)
    result = getattr(mechanism, "result", mechanism)
    info = getattr(result, "info", None)
    source = ((meta or {}).get("prior_source") if isinstance(meta, dict) else None) or getattr(
        mechanism, "prior_source", None) or (info.get("prior_source") if isinstance(info, dict) else None)
    if source not in (None, "public sample"):
        return {}
    if isinstance(meta, dict) and isinstance(meta.get("design_data"), dict):
        return meta["design_data"]
    if isinstance(info, dict) and isinstance(info.get("design_data"), dict):
        return info["design_data"]
    return {}


def matches_design_data(fingerprint: dict, *, path: object = None, source: Any = None, column: str | None = None,
                        values: object = None) -> bool:
    """Whether the data given (a file, a streamed column, or values) are the design data of ``fingerprint``.

    Only the kinds that can be computed from what is given are compared: a file's bytes (``path``) for
    ``"file sha256"``; a column (``source`` + ``column``, or ``values``) for ``"column sha256"``.

    Implements: the guard of the module docstring (docs/cli.md, "Where P̂ comes from").

    Parameters
    ----------
    fingerprint : dict
        A ``design_data`` dict (``"kind"``, ``"sha256"``), e.g. from :func:`design_data_of`.
    path : str or os.PathLike, optional
        A data file, compared for ``"file sha256"``.
    source : table source, optional
        A streamed CSV / Parquet source, compared (with ``column``) for ``"column sha256"``.
    column : str, optional
        The column of ``source``.
    values : sequence, numpy array or pandas Series, optional
        Column values, compared for ``"column sha256"`` (checked before ``source``).

    Returns
    -------
    bool
        True when a computable fingerprint of the data equals ``fingerprint["sha256"]``; False otherwise (also when
        nothing comparable is given).
    """
    from ..pipeline import values_sha256  # noqa: PLC0415

    kind, digest = fingerprint.get("kind"), fingerprint.get("sha256")
    if kind == "file sha256" and path is not None:
        return file_sha256(path) == digest
    if kind == "column sha256":
        if values is not None:
            return values_sha256(values) == digest
        if source is not None and column is not None:
            return table_column_sha256(source, column) == digest
    return False


def check_fingerprint(fp: object) -> None:
    """Check a mechanism file's ``design_data``: its kind, a hex SHA-256, and the split seed and fraction together.

    Implements: the design-data fingerprint of docs/cli.md ("the design / release split"; no paper result); the
    loader (:func:`pml_design.deploy.file.load_mechanism`) refuses a file whose fingerprint fails it.

    Parameters
    ----------
    fp : object
        The ``design_data`` field as read from the file.

    Raises
    ------
    ValueError
        Naming what is wrong.
    """
    if not isinstance(fp, dict) or "kind" not in fp:
        raise ValueError(f"design_data must be an object with a 'kind', got {fmt(fp)}")
    if fp["kind"] is None:
        return
    if fp["kind"] not in FINGERPRINT_KINDS or not _SHA256_HEX.match(str(fp.get("sha256", ""))):
        raise ValueError(f"design_data must have a kind among {list(FINGERPRINT_KINDS)} and a hex sha256, got {fmt(fp)}")
    from .split import SEED_PATTERN  # noqa: PLC0415

    if ("split_seed" in fp) != ("split_fraction" in fp) or ("split_seed" in fp and not (
            isinstance(fp["split_seed"], str) and re.fullmatch(SEED_PATTERN, fp["split_seed"])
            and isinstance(fp["split_fraction"], float) and 0.0 < fp["split_fraction"] < 1.0)):
        raise ValueError("design_data.split_seed and split_fraction must come together, as hex digits and a number in "
                         f"(0, 1), got {fmt(fp.get('split_seed'))} and {fmt(fp.get('split_fraction'))}")


def design_counts_match(p_hat: object, m: object, counts: object) -> bool:
    """Whether ``counts`` per category are exactly the design records' own, ``P̂ · m``.

    The mechanism file publishes these counts, so comparing with them discloses nothing new; equal counts mean the
    design records in another order (a new user's trial shuffled them past the fingerprint, which hashes the values
    in order), or other records with these very counts.

    Implements: the design-data guard of the module docstring (docs/cli.md, "Where P̂ comes from"); no paper result.

    Parameters
    ----------
    p_hat : sequence of float or None
        The design's P̂ (a mechanism file's ``p_hat``).
    m : int or None
        The number of design records.
    counts : array_like of int
        The counts per category (in P̂'s order) of the records about to be privatized.

    Returns
    -------
    bool
        False where ``p_hat`` or ``m`` is missing or does not fit ``counts``.
    """
    import numpy as np  # noqa: PLC0415

    c = np.asarray(counts)
    if p_hat is None or not isinstance(m, (int, np.integer)) or isinstance(m, bool) or np.shape(p_hat) != c.shape \
            or c.sum() != m:
        return False
    return bool(np.array_equal(c, np.rint(np.asarray(p_hat, dtype=float) * m)))
