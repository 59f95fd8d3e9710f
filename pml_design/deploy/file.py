"""Mechanism files: the unit of deployment.

A designed mechanism leaves the designer as one JSON file that holds everything needed to use it and to
check it: the matrix (rows = categories, columns = outputs), the category labels in row order and the output
labels, the target ε and the certified ε, δ, the ℓ1 radius, the estimate P̂ and the number m of samples
behind it (the uncertainty set the guarantee is for), the utility, the library version, and a SHA-256 hash
of the content. :func:`load_mechanism` refuses a file whose content does not match its hash (tampered or
corrupted), validates shape, stochasticity and labels, and **re-certifies** the guarantee by recomputing
the exact leakage capacity over the stored uncertainty set (core paper, Definition 5), so a loaded
mechanism is never trusted on the file's word.

The hash is over the canonical JSON of the document without its ``sha256`` field (keys sorted, no
whitespace, UTF-8), so a file re-indented by hand still loads, and any change to a value does not.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import tempfile
from typing import Any

import numpy as np

from .._validation import check_delta, check_mechanism, check_positive_int, check_probability_vector, fmt, not_a_file_reason

__all__ = ["FORMAT", "FORMAT_VERSION", "MechanismFileError", "content_hash", "load_mechanism", "save_mechanism"]

#: The ``format`` field of a mechanism file.
FORMAT: str = "pml-design-mechanism"
#: The newest ``format_version`` this library reads and writes.
FORMAT_VERSION: int = 1

#: Slack allowed between the stored and the recomputed certified ε (both are exact; rounding only).
_RECERTIFY_RTOL: float = 1e-9


class MechanismFileError(ValueError):
    """A mechanism file that cannot be used: unreadable, malformed, tampered with, or not certified."""


def _plain(obj: Any) -> Any:
    """numpy → Python scalars/lists; non-finite floats → ``"inf"``/``"-inf"``/``"nan"`` (JSON has none)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (obj.tolist() if isinstance(obj, np.ndarray) else obj)]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def content_hash(document: dict) -> str:
    """SHA-256 (hex) of a mechanism document's canonical JSON, without its ``sha256`` field."""
    body = {k: v for k, v in document.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _uncertainty_doc(uset: object) -> dict:
    from ..uncertainty import FiniteSet, L1Ball, Simplex  # noqa: PLC0415

    if isinstance(uset, L1Ball):
        return {"type": "l1_ball", "center": uset.center, "radius": uset.radius}
    if isinstance(uset, Simplex):
        return {"type": "simplex", "size": uset.size}
    if isinstance(uset, FiniteSet):
        return {"type": "finite_set", "distributions": uset.distributions}
    raise TypeError(f"cannot save a mechanism designed for the uncertainty set {fmt(uset)}")


def _uncertainty_from_doc(doc: object, n: int, where: str) -> object:
    from ..uncertainty import FiniteSet, L1Ball, Simplex  # noqa: PLC0415

    if not isinstance(doc, dict) or "type" not in doc:
        raise MechanismFileError(f"{where}: 'uncertainty' must be an object with a 'type', got {fmt(doc)}")
    kind = doc["type"]
    if kind == "l1_ball":
        uset = L1Ball(doc.get("center"), doc.get("radius"))
    elif kind == "simplex":
        uset = Simplex(doc.get("size"))
    elif kind == "finite_set":
        uset = FiniteSet(doc.get("distributions"))
    else:
        raise MechanismFileError(f"{where}: unknown uncertainty type {kind!r} (l1_ball, simplex, finite_set)")
    if uset.size != n:
        raise MechanismFileError(f"{where}: the uncertainty set has {uset.size} categories but the matrix has {n} rows")
    return uset


def _json_labels(labels: tuple, name: str) -> list:
    for v in labels:
        if not isinstance(v, (str, int, float, bool)) or (isinstance(v, float) and not math.isfinite(v)):
            raise TypeError(f"{name} must be strings or finite numbers to be saved in a mechanism file, got {v!r} "
                            f"of type {type(v).__name__}")
    return list(labels)


def save_mechanism(result: object, path: object, *, delta: float | None = None, m: int | None = None,
                   extra: dict | None = None, overwrite: bool = False) -> pathlib.Path:
    """Write a designed mechanism as a mechanism file (JSON, with a content hash), atomically.

    Parameters
    ----------
    result : DesignResult or EstimatedDesign
        The certified design (an :class:`~pml_design.pipeline.EstimatedDesign` brings its δ and m).
    path : str or os.PathLike
        The file to write (conventionally ``*.json``); written to a temporary file first and renamed, so a
        failure leaves no partial file.
    delta, m : float, int, optional
        Failure probability and number of samples behind the estimate (default: ``result.info``).
    extra : dict, optional
        More JSON-able fields to keep in the file (e.g. where the data came from); covered by the hash; may
        not replace a standard field.
    overwrite : bool, default False
        Replace an existing file that is not a mechanism file (an existing mechanism file is replaced anyway;
        a directory is always refused, see :func:`pml_design.deploy.output.check_output_path`).

    Returns
    -------
    pathlib.Path
    """
    from .. import __version__  # noqa: PLC0415
    from ..pipeline import EstimatedDesign, pml_statement  # noqa: PLC0415
    from ..uncertainty import L1Ball  # noqa: PLC0415
    from .output import check_output_path, is_mechanism_file  # noqa: PLC0415

    target = check_output_path(path, own_kind=is_mechanism_file, kind="pml-design mechanism file",
                               overwrite=overwrite)
    if isinstance(result, EstimatedDesign):
        delta = result.delta if delta is None else delta
        m = result.m if m is None else m
        result = result.result
    for attr in ("matrix", "certified_epsilon", "epsilon", "uncertainty", "prior", "utility_name"):
        if not hasattr(result, attr):
            raise TypeError(f"result must be a DesignResult or EstimatedDesign, got {fmt(result)}")
    info = getattr(result, "info", {}) or {}
    delta = info.get("delta") if delta is None else delta
    m = info.get("m") if m is None else m
    d = None if delta is None else check_delta(delta)
    m = None if m is None else check_positive_int(m, "m")
    mech = result.mechanism  # type: ignore[attr-defined]
    W = np.asarray(result.matrix, dtype=float)  # type: ignore[attr-defined]
    labels = mech.labels if mech.labels is not None else tuple(range(W.shape[0]))
    out_labels = mech.output_labels if mech.labels is not None else tuple(range(W.shape[1]))
    uset = result.uncertainty  # type: ignore[attr-defined]
    radius = float(uset.radius) if isinstance(uset, L1Ball) else None
    cert = float(result.certified_epsilon)  # type: ignore[attr-defined]
    if d is not None and m is not None and radius is not None:
        statement = pml_statement(cert, d, radius, m)
    else:
        statement = result.guarantee()  # type: ignore[attr-defined]
    doc: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "categories": _json_labels(labels, "labels"),
        "output_labels": _json_labels(out_labels, "output_labels"),
        "matrix": W,
        "matrix_rows": "inputs (categories)",
        "matrix_columns": "outputs",
        "epsilon": float(result.epsilon),  # type: ignore[attr-defined]
        "certified_epsilon": cert,
        "delta": d,
        "radius": radius,
        "p_hat": np.asarray(result.prior, dtype=float),  # type: ignore[attr-defined]
        "m": m,
        "uncertainty": _uncertainty_doc(uset),
        "utility_name": result.utility_name,  # type: ignore[attr-defined]
        "utility": getattr(result, "utility", None),
        "statement": statement,
    }
    for key in ("upper_bound", "optimal", "method", "solver"):
        if hasattr(result, key):
            doc[key] = getattr(result, key)
    for key, value in (extra or {}).items():
        if key in doc or key == "sha256":
            raise ValueError(f"extra may not replace the standard field {key!r} of a mechanism file")
        doc[key] = value
    doc = _plain(doc)
    doc["sha256"] = content_hash(doc)
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return _write_atomically(target, text)


def temporary_sibling(target: pathlib.Path, suffix: str = ".partial") -> tuple[int, pathlib.Path]:
    """A new temporary file next to ``target`` (same file system, so ``os.replace`` is atomic).

    Returns ``(fd, path)``. Its permissions follow the umask like a normally created file (``mkstemp``
    alone would make it private, 0600, and so would the renamed result).
    """
    parent = target.parent if str(target.parent) else pathlib.Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(f"directory does not exist: {parent}")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    return fd, pathlib.Path(tmp)


def _write_atomically(target: pathlib.Path, text: str) -> pathlib.Path:
    fd, tmp = temporary_sibling(target)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def _read_document(path: pathlib.Path) -> dict:
    why = not_a_file_reason(path)
    if why is not None:
        raise FileNotFoundError(f"mechanism file not found: {path}" if not path.exists() else f"mechanism file {path}: {why}")
    raw = path.read_bytes()
    if not raw.strip():
        raise MechanismFileError(f"mechanism file {path}: file is empty")
    try:
        text = raw.decode("utf-8-sig")
        doc = json.loads(text)
    except UnicodeDecodeError:
        raise MechanismFileError(f"mechanism file {path}: not a text (JSON) file") from None
    except json.JSONDecodeError as exc:
        raise MechanismFileError(f"mechanism file {path}: not valid JSON ({exc.msg} at line {exc.lineno}, "
                                 f"column {exc.colno})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise MechanismFileError(f"mechanism file {path}: not a pml-design mechanism file (no \"format\": "
                                 f"\"{FORMAT}\"); write one with DesignResult.save or 'pml-design design -o'")
    version = doc.get("format_version")
    if not isinstance(version, int) or not 1 <= version <= FORMAT_VERSION:
        raise MechanismFileError(f"mechanism file {path}: format_version {version!r} is not supported by this "
                                 f"library (reads 1 to {FORMAT_VERSION}); upgrade pml-design")
    return doc


def load_mechanism(path: object) -> "Mechanism":  # noqa: F821
    """Read a mechanism file, check it, re-certify its guarantee, and return a ready :class:`Mechanism`.

    Checks, in order: the file is a mechanism file of a supported version; its content matches its SHA-256
    hash (a tampered or corrupted file is refused); the matrix is finite, non-negative and row-stochastic;
    labels are distinct and one per row / column; P̂, δ and m are valid; and the exact leakage capacity of
    the matrix over the stored uncertainty set (core paper, Definition 5; e.g. ``B_β(P̂)``) is at most the
    target ε and equals the stored certified ε.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Mechanism
        With :attr:`~Mechanism.labels`, :attr:`~Mechanism.output_labels` and ``metadata`` (the file's
        fields: ``epsilon``, ``certified_epsilon``, ``delta``, ``radius``, ``p_hat``, ``m``, ``statement``,
        ``utility_name``, ``library_version``, ``sha256``, … and ``path``).

    Raises
    ------
    FileNotFoundError
        No such file.
    MechanismFileError (a ValueError)
        Anything else wrong with the file; the message names the file and the problem.
    """
    from ..mechanisms.mechanism import Mechanism, check_labels  # noqa: PLC0415
    from ..uncertainty import leakage_capacity  # noqa: PLC0415

    p = pathlib.Path(os.fspath(path))  # type: ignore[arg-type]
    doc = _read_document(p)
    where = f"mechanism file {p}"
    stored, computed = doc.get("sha256"), content_hash(doc)
    if stored != computed:
        raise MechanismFileError(f"{where}: content hash mismatch, the file was modified after it was written "
                                 f"(sha256 field {str(stored)[:16]}..., content {computed[:16]}...); refusing to "
                                 "use it; design the mechanism again")
    try:
        W = check_mechanism(doc.get("matrix"), "matrix")
        n, k = W.shape
        labels = check_labels(doc.get("categories"), n, "categories")
        out_labels = check_labels(doc.get("output_labels"), k, "output_labels")
        check_probability_vector(doc.get("p_hat"), "p_hat", size=n)
        eps = float(doc["epsilon"])
        cert = float(doc["certified_epsilon"])
        if doc.get("delta") is not None:
            check_delta(doc["delta"])
        if doc.get("m") is not None:
            check_positive_int(doc["m"], "m")
        uset = _uncertainty_from_doc(doc.get("uncertainty"), n, where)
    except MechanismFileError:
        raise
    except (TypeError, ValueError, KeyError) as exc:
        raise MechanismFileError(f"{where}: {exc}") from None
    capacity = leakage_capacity(W, uset)
    slack = _RECERTIFY_RTOL * max(1.0, abs(cert))
    if not capacity <= eps + slack:
        raise MechanismFileError(f"{where}: re-certification failed: the leakage capacity over its uncertainty "
                                 f"set is {capacity!r} > epsilon={eps!r}")
    if abs(capacity - cert) > slack:
        raise MechanismFileError(f"{where}: re-certification failed: the leakage capacity over its uncertainty "
                                 f"set is {capacity!r}, the file says certified_epsilon={cert!r}")
    meta = {key: value for key, value in doc.items() if key not in ("matrix",)}
    meta["path"] = str(p)
    meta["recertified_epsilon"] = capacity
    return Mechanism(W, name=p.stem, labels=labels, output_labels=out_labels, metadata=meta)
