"""Mechanism-file text at the size of wide designs: the matrix rows formatted once, the canonical text hashed.

A frequency-estimation design at N = 1 000 has ~8 M matrix entries. ``json.dumps`` with an indent runs the
pure-Python encoder, one line per entry (22 s and 229 MB at N = 952); here every row is formatted once (``repr``, as
``json`` formats floats; each distinct value once where few are) and spliced both into the canonical text that
:func:`pml_design.deploy.file.content_hash` hashes (byte for byte ``json.dumps(..., sort_keys=True,
separators=(",", ":"))``) and into the file, one row per line.
"""

from __future__ import annotations

import hashlib
import json
import secrets

import numpy as np

__all__: list[str] = []


def _matrix_lines(W: np.ndarray) -> list[str]:
    """Each row of a finite float matrix as ``json`` writes it (``float.__repr__``, comma-separated), formatting
    each distinct value once where at most half the entries are distinct (designs made of rays: 2 M values in
    16.7 M entries at N = 954, 4.5 s against ~16 s). Values are told apart by their bits (a hash factorisation,
    ``pandas.factorize``: ``np.unique``'s sort took 4.4 s alone), so ``-0.0`` stays ``-0.0``."""
    import pandas as pd  # noqa: PLC0415

    bits = np.ascontiguousarray(W, dtype=float).view(np.int64).ravel()
    codes, values = pd.factorize(bits)
    if len(values) <= W.size // 2:
        text = np.array([float.__repr__(float(v)) for v in np.asarray(values).view(np.float64)], dtype=object)
        return [",".join(r) for r in text[codes.reshape(W.shape)].tolist()]
    return [",".join(map(float.__repr__, r)) for r in W.tolist()]


def _hash_with_matrix(body: dict, lines: list[str]) -> str:
    """:func:`content_hash` of ``body`` (no ``sha256``) whose ``"matrix"`` has the rows ``lines``: the canonical
    text built around the formatted rows (the same bytes as ``json.dumps(..., sort_keys=True, separators=...)``)."""
    token = f"matrix-{secrets.token_hex(16)}"
    body = {**body, "matrix": token}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    canonical = canonical.replace(f'"{token}"', "[[" + "],[".join(lines) + "]]", 1)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _splice_rows(text: str, token: str, lines: list[str]) -> str:
    """``text`` (JSON with an indent of 2) with the string ``token`` replaced by a top-level field's matrix, one row
    of ``lines`` per line: the file's layout, shared by :func:`_document_text` and the CLI's ``--json``."""
    return text.replace(json.dumps(token), "[\n    [" + "],\n    [".join(lines) + "]\n  ]", 1)


def _document_text(doc: dict, matrix: np.ndarray, lines: list[str] | None = None) -> str:
    """The file's text with its ``sha256``: indented JSON, ``matrix`` (the ``"matrix"`` field, after
    ``output_labels``) one row per line.

    The matrix is the bulk of a wide design (8 M entries at N = 1 000): its rows are formatted once
    (:func:`_matrix_lines`) and put both into the canonical text that is hashed
    (:func:`~pml_design.deploy.file.content_hash`) and into the file. ``json.dumps`` with an indent uses the pure-Python encoder: one line per entry took 22 s there, and 229 MB;
    the whole save took 35 s, now 4–7 s (the disclosure is most of the rest).
    """
    W = np.asarray(matrix, dtype=float)
    if not np.isfinite(W).all():  # (a certified matrix never is; kept exact by the generic path)
        from .file import _plain, content_hash  # noqa: PLC0415

        doc = {**doc, "matrix": _plain(W)}
        doc["sha256"] = content_hash(doc)
        return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if lines is None or len(lines) != W.shape[0]:  # (the CLI formats the rows once for this file and its CSV)
        lines = _matrix_lines(W)
    token = f"matrix-{secrets.token_hex(16)}"
    out: dict = {}
    for k, v in doc.items():  # the matrix where it always was in the document (after output_labels)
        out[k] = v
        if k == "output_labels":
            out["matrix"] = token
    out.setdefault("matrix", token)
    out["sha256"] = _hash_with_matrix({k: v for k, v in out.items() if k != "sha256"}, lines)
    return _splice_rows(json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False), token, lines) + "\n"
