"""A wide design's matrix in a mechanism file, compactly: its float64 bytes, zlib-compressed, in base64.

A frequency-estimation design at N = 2 000 has 8 000 – 32 000 outputs: 16 – 64 M entries, 343 MB of JSON text for
16 M (22 bytes an entry) that took 3.7 s to write and 8.5 s to read back (parsing, then formatting every value again
for the content hash). As the columns' bytes (IEEE 754 little-endian, one column after another) compressed by zlib
(level 1) the same matrix takes 1.45 bytes an entry, 31 MB in base64, 0.6 s to write and 0.4 s to read, and the
values come back bit for bit. :func:`pml_design.deploy.file.save_mechanism` writes it so above
:data:`BINARY_ABOVE` entries (``matrix_format="auto"``; ``"text"`` or ``"binary"`` choose), as the field
``matrix_binary`` of a **format version 3** file (version 2, the matrix as rows of numbers, for the others: a reader
that predates version 3 refuses the file by its version, naming it, instead of misreading it). Everything else
(labels, claims, hash, re-certification on load) is the same as for a version 2 file; the content hash covers the
encoded text.

Only the standard library's ``zlib`` and ``base64`` are needed to read it, in any language: decode the base64, inflate
(RFC 1950), read ``N·M`` little-endian doubles, fill the matrix column by column.
"""

from __future__ import annotations

import base64
import binascii
import zlib

import numpy as np

__all__: list[str] = []

#: The field of a version 3 file that holds the matrix.
FIELD: str = "matrix_binary"
#: Its ``encoding``: IEEE 754 doubles, little-endian, column after column, zlib (RFC 1950), base64 (RFC 4648).
ENCODING: str = "float64-le-columns-zlib-base64"
#: ``matrix_format="auto"`` writes the binary matrix above this many entries (N × outputs; 4.2 M entries is ~90 MB of
#: text, more than anyone reads), the rows as text up to it.
BINARY_ABOVE: int = 2**22
#: The most entries a file may declare, refused before anything is allocated: 2**29 (4.3 GB of doubles, twice that
#: while decoding) holds the widest design (N = 10 000 × 32 768 outputs: 3.3·10⁸). A review: any shape up to 2**31
#: was accepted, and an all-zero matrix inflates ~650 times (a 26 MB file asked for ~34 GB).
MAX_ENTRIES: int = 2**29
#: The values of ``matrix_format``.
MATRIX_FORMATS: tuple[str, ...] = ("auto", "text", "binary")


def use_binary(matrix_format: object, entries: int) -> bool:
    """Whether ``matrix_format`` (``"auto"``, ``"text"``, ``"binary"``) writes a matrix of ``entries`` as binary."""
    if not isinstance(matrix_format, str) or matrix_format not in MATRIX_FORMATS:
        raise ValueError(f"matrix_format must be one of {list(MATRIX_FORMATS)}, got {matrix_format!r}")
    return matrix_format == "binary" or (matrix_format == "auto" and entries > BINARY_ABOVE)


def encode_matrix(W: np.ndarray) -> dict:
    """The ``matrix_binary`` field of a finite float matrix (N × M): ``encoding``, ``shape`` and ``data``."""
    raw = np.ascontiguousarray(np.asarray(W, dtype=float).T, dtype="<f8").tobytes()
    return {"encoding": ENCODING, "shape": [int(W.shape[0]), int(W.shape[1])],
            "data": base64.b64encode(zlib.compress(raw, 1)).decode("ascii")}


def decode_matrix(field: object) -> np.ndarray:
    """The matrix of a ``matrix_binary`` field; ValueError (one line, naming what is wrong) for a malformed one."""
    if not isinstance(field, dict) or field.get("encoding") != ENCODING:
        got = repr(field.get("encoding")) if isinstance(field, dict) else type(field).__name__
        raise ValueError(f"{FIELD} must be an object with \"encoding\": \"{ENCODING}\", got {got}")
    extra = sorted(map(str, set(field) - {"encoding", "shape", "data"}))
    if extra:  # a field this version does not know may change the meaning of the others: refused, not ignored
        raise ValueError(f"{FIELD} has fields this library does not read: {extra[:5]} (it reads encoding, shape, data)")
    shape, data = field.get("shape"), field.get("data")
    if (not isinstance(shape, list) or len(shape) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in shape)):
        raise ValueError(f"{FIELD}.shape must be two positive integers [rows, columns], got {shape!r}")
    n, m = shape
    if n * m > MAX_ENTRIES:
        raise ValueError(f"{FIELD}.shape {shape} has {n * m} entries, more than this library reads ({MAX_ENTRIES})")
    if not isinstance(data, str):
        raise ValueError(f"{FIELD}.data must be a base64 string, got {type(data).__name__}")
    try:
        packed = base64.b64decode(data, validate=True)
        inflate = zlib.decompressobj()
        raw = inflate.decompress(packed, 8 * n * m + 1)  # never more than the shape declares (a zip bomb stops here)
    except (binascii.Error, zlib.error) as exc:
        raise ValueError(f"{FIELD}.data is not base64 of zlib data ({exc})") from None
    if len(raw) != 8 * n * m or not inflate.eof or inflate.unused_data:
        raise ValueError(f"{FIELD}.data does not hold the {n * m} doubles its shape {shape} declares")
    return np.ascontiguousarray(np.frombuffer(raw, dtype="<f8").reshape(m, n).T, dtype=float)


def document_matrix(doc: dict) -> object:
    """The matrix of a mechanism document: decoded from ``matrix_binary`` (version 3), else its ``matrix``."""
    binary = doc.get("format_version") == 3
    if binary != (FIELD in doc) or (binary and "matrix" in doc):
        raise ValueError(f"a format_version {doc.get('format_version')} file holds its matrix as "
                         + (f"{FIELD} (and no matrix)" if binary else f"matrix (and no {FIELD})"))
    return decode_matrix(doc[FIELD]) if binary else doc.get("matrix")
