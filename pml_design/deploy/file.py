"""Mechanism files: the unit of deployment.

A designed mechanism leaves the designer as one JSON file that holds everything needed to use it and to
check it: the matrix (rows = categories, columns = outputs), the category labels in row order and the output
labels, the target ε and the certified ε, δ, the ℓ1 radius, the centre P̂ of the ball and the number m of
samples behind it, where P̂ came from (``prior_source``, ``prior_params``), what the design discloses
(``disclosure``), a fingerprint of the design records (``design_data``), the utility and the distribution it
is evaluated at (``utility_prior``), the library version, and a SHA-256 hash of the content.

**No raw data.** The file keeps no counts and no input path (format version 2). P̂ is kept only as the centre
of the ball the guarantee is for; with m it gives the design records' counts (``P̂ · m``), which is why the
design records must be apart from the released ones (a public sample or records set aside: ``pml-design
split``; docs/cli.md, "Where P̂ comes from").

**Consistent claims.** :func:`load_mechanism` refuses a file whose content does not match its hash, validates
shape, stochasticity and labels, **re-derives every stated number from the others** (the radius from m, N, δ
and the prior source, :func:`pml_design.estimation.prior_radius`; the ball from P̂ and the radius; the output
labels from the matrix; the statement; the disclosure listing) and **re-certifies** the guarantee by
recomputing the exact leakage capacity over the ball (core paper, Definition 5), so a loaded mechanism is
never trusted on the file's word. The hash is unkeyed: it detects corruption, not a forger, who can rewrite
a file and its hash consistently; a consistent relabelling of the categories cannot be detected from the file
at all. Sign the file (e.g. with your release tooling) when the channel is not trusted.

The hash is over the canonical JSON of the document without its ``sha256`` field (keys sorted, no
whitespace, UTF-8), so a file re-indented by hand still loads, and any change to a value does not. Files of
format version 1 (with ``counts`` / ``source``) still load, with a :class:`MechanismFileWarning`. A wide design
(above 2**22 entries) is written as format version 3: the same document with the matrix as ``matrix_binary`` (its
float64 bytes, zlib, base64; :mod:`pml_design.deploy.matrix_binary`), ~15 times smaller and faster to read.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import warnings
from typing import Any

import numpy as np

from .._validation import check_delta, check_mechanism, check_positive_int, check_probability_vector, fmt, not_a_file_reason
from .atomic import _write_atomically, temporary_sibling  # noqa: F401 - importable from here as before
from .guard import FINGERPRINT_KINDS, check_fingerprint  # noqa: F401 - importable from here as before
from .matrix_binary import FIELD as BINARY_FIELD, document_matrix, encode_matrix, use_binary
from .matrix_text import _document_text, _hash_with_matrix, _matrix_lines

__all__ = ["FORMAT", "FORMAT_VERSION", "MechanismFileError", "MechanismFileWarning", "content_hash", "load_mechanism",
           "save_mechanism"]

#: The ``format`` field of a mechanism file.
FORMAT: str = "pml-design-mechanism"
#: The newest ``format_version`` this library reads and writes (3: the matrix as ``matrix_binary``, wide designs;
#: :mod:`pml_design.deploy.matrix_binary`).
FORMAT_VERSION: int = 3
#: Fields a mechanism file never carries (raw data of the design records); version 1 files had them.
RAW_FIELDS: tuple[str, ...] = ("counts", "source")

#: Slack allowed between the stored and the recomputed certified ε (both are exact; rounding only).
_RECERTIFY_RTOL: float = 1e-9


class MechanismFileError(ValueError):
    """A mechanism file that cannot be used: unreadable, malformed, tampered with, inconsistent, or not certified."""


class MechanismFileWarning(UserWarning):
    """A mechanism file that loads but deserves a note (written by an older version: it may hold raw data)."""


def _plain(obj: Any) -> Any:
    """numpy → Python scalars/lists; non-finite floats → ``"inf"``/``"-inf"``/``"nan"`` (JSON has none)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "fiub" and (obj.dtype.kind != "f" or np.isfinite(obj).all()):
        return obj.tolist()  # plain Python numbers already (an 8 M-entry matrix took 8.7 s element by element)
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (obj.tolist() if isinstance(obj, np.ndarray) else obj)]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def content_hash(document: dict) -> str:
    """SHA-256 (hex) of a mechanism document's canonical JSON, without its ``sha256`` field.

    Implements: the content hash of the module docstring (canonical JSON: keys sorted, no whitespace, UTF-8).

    Parameters
    ----------
    document : dict
        The mechanism document (its ``sha256`` field, if any, is left out of the hash).

    Returns
    -------
    str
        The 64-character hexadecimal SHA-256 digest.
    """
    body = {k: v for k, v in document.items() if k != "sha256"}
    rows = body.get("matrix")
    if (isinstance(rows, list) and rows and all(isinstance(r, list) and len(r) == len(rows[0]) for r in rows)
            and all(type(v) is float for r in rows for v in r)):  # a matrix of floats: each distinct value once
        W = np.array(rows, dtype=float)
        if np.isfinite(W).all():
            return _hash_with_matrix(body, _matrix_lines(W))
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
                   extra: dict | None = None, overwrite: bool = False, matrix_format: str = "auto",
                   _disclosure: list | None = None, _matrix_text: list[str] | None = None) -> pathlib.Path:
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
        More JSON-able fields to keep in the file (e.g. a comparison with LDP); covered by the hash; may
        not replace a standard field nor hold raw data (``counts``, ``source``).
    overwrite : bool, default False
        Replace an existing file at ``path``, a mechanism file included (the only key to decoding the reports
        privatized with it: ``pml-design design -o`` needs ``--force``). A directory is always refused
        (:func:`pml_design.deploy.output.check_output_path`).
    matrix_format : {"auto", "text", "binary"}, default "auto"
        The matrix as rows of numbers (format version 2) or as ``matrix_binary`` (its float64 bytes, zlib, base64:
        format version 3, about 15 times smaller and faster to write and read, bit for bit the same values;
        :mod:`pml_design.deploy.matrix_binary`); ``"auto"`` writes binary above 2**22 entries (N × outputs).

    Raises
    ------
    OutputFileError (a ValueError)
        ``path`` exists and ``overwrite`` is False (naming the path and what it is), is a directory, or has no folder.
    ValueError
        ``delta`` and ``m`` that do not imply the design's radius for its prior source; a bad ``extra``.

    Returns
    -------
    pathlib.Path
    """
    from .. import __version__  # noqa: PLC0415
    from ..design.disclosure import output_disclosure  # noqa: PLC0415
    from ..pipeline import EstimatedDesign  # noqa: PLC0415
    from ..uncertainty import L1Ball  # noqa: PLC0415
    from .output import check_output_path  # noqa: PLC0415

    target = check_output_path(path, kind="pml-design mechanism file", overwrite=overwrite)
    source, params = None, None
    if isinstance(result, EstimatedDesign):
        delta = result.delta if delta is None else delta
        m = result.m if m is None else m
        source, params = result.prior_source, dict(result.prior_params)
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
    binary = use_binary(matrix_format, W.size)
    labels = mech.labels if mech.labels is not None else tuple(range(W.shape[0]))
    out_labels = mech.output_labels if mech.labels is not None else tuple(range(W.shape[1]))
    uset = result.uncertainty  # type: ignore[attr-defined]
    ball = isinstance(uset, L1Ball)
    radius = float(uset.radius) if ball else None
    cert = float(result.certified_epsilon)  # type: ignore[attr-defined]
    source = source or info.get("prior_source") or ("public sample" if ball else None)
    params = dict(params or info.get("prior_params") or {})
    if source == "public sample" and m is not None:
        params["m"] = m
    claims = {"delta": d, "m": m, "radius": radius, "prior_source": source, "prior_params": params}
    if ball and d is not None and source == "public sample" and m is None:
        raise ValueError("delta needs m (the number of samples behind P̂) to state an (epsilon, delta) guarantee; "
                         "pass m, or save without delta")
    if ball and source == "public sample" and m is not None and not _counts_fit(uset.center, m):
        raise ValueError(f"m={m} does not fit the ball's centre P̂: from a public sample of m records, P̂ * m are "
                         "their counts (integers summing to m); pass the m behind P̂ (or none)")
    if ball and d is not None:
        expected = _derived_radius(claims, W.shape[0])
        if not math.isclose(expected, radius, rel_tol=_CLAIM_RTOL):  # type: ignore[arg-type]
            raise ValueError(f"delta={d!r} and m={m!r} imply the radius {expected!r} for prior_source={source!r}, "
                             f"but the design's ball has radius {radius!r}; save without delta (a ball given by its "
                             "radius) or design with design_from_samples")
    doc: dict[str, Any] = {
        "format": FORMAT,
        "format_version": 3 if binary else 2,
        "library_version": __version__,
        "categories": _json_labels(labels, "labels"),
        "categories_sorted": _is_sorted(labels),
        "output_labels": _json_labels(out_labels, "output_labels"),
        "matrix": W,
        "matrix_rows": "inputs (categories)",
        "matrix_columns": "outputs",
        "epsilon": float(result.epsilon),  # type: ignore[attr-defined]
        "certified_epsilon": cert,
        "delta": d,
        "radius": radius,
        "p_hat": uset.center if ball else None,
        "m": m,
        "prior_source": source,
        "prior_params": params,
        "uncertainty": _uncertainty_doc(uset),
        "utility_name": result.utility_name,  # type: ignore[attr-defined]
        "utility": getattr(result, "utility", None),
        "utility_prior": getattr(result, "prior", None),
        "statement": _statement(cert, float(result.epsilon), uset, claims),  # type: ignore[attr-defined]
        # (the CLI passes the listing it has just computed for the same result: 4 s at N = 1 000, 8 k outputs)
        "disclosure": output_disclosure(W, uset, labels, out_labels) if _disclosure is None else _disclosure,
        "design_data": _design_data(info, source),
    }
    for key in ("upper_bound", "optimal", "method", "solver"):
        if hasattr(result, key):
            doc[key] = getattr(result, key)
    for key, value in (extra or {}).items():
        if key in doc or key in ("sha256", BINARY_FIELD):
            raise ValueError(f"extra may not replace the standard field {key!r} of a mechanism file")
        if key in RAW_FIELDS:
            raise ValueError(f"extra may not hold {key!r}: a mechanism file carries no raw data of the design records")
        try:
            json.dumps(_plain(value), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"extra[{key!r}] must be JSON data (numbers, text, lists, dicts), got "
                            f"{type(value).__name__}: {exc}") from None
        doc[key] = value
    matrix = doc.pop("matrix")
    doc = _plain(doc)
    if binary:  # the matrix after output_labels, where its rows would be
        keys = list(doc)
        at = keys.index("output_labels") + 1
        doc = {**{k: doc[k] for k in keys[:at]}, BINARY_FIELD: encode_matrix(matrix), **{k: doc[k] for k in keys[at:]}}
        doc["sha256"] = content_hash(doc)
        return _write_atomically(target, json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    return _write_atomically(target, _document_text(doc, matrix, _matrix_text))


#: Relative slack when a stated number is compared with its re-derivation (both computed the same way).
_CLAIM_RTOL: float = 1e-9


def _design_data(info: dict, source: str | None) -> dict:
    """The fingerprint kept in the file: only for a P̂ from a public sample (a private P̂ keeps none: a hash of the
    design records is not covered by their DP / LDP guarantee). Without it privatize cannot recognise the design
    records; the statement covers the released records only, so a design record that is also released has both
    guarantees, uncombined (a review: the file said "the design records may be released")."""
    if source not in (None, "public sample"):
        return {"kind": None, "why": f"P̂ from {source}: a hash of the design records is not covered by their "
                                     "guarantee; release records apart from them (a design record also released has "
                                     "two guarantees, which the statement does not combine)"}
    return dict(info.get("design_data") or {"kind": None, "why": "not recorded"})


def _counts_fit(p_hat: object, m: int) -> bool:
    """Whether ``p_hat * m`` are integers summing to m (an empirical distribution of m records), up to rounding."""
    scaled = np.asarray(p_hat, dtype=float) * m
    return bool(np.abs(scaled - np.round(scaled)).max() <= 1e-6 + 1e-13 * m and int(np.round(scaled).sum()) == m)


def _is_sorted(labels: tuple) -> bool:
    try:
        return list(labels) == sorted(labels)
    except TypeError:
        return False


def _derived_radius(claims: dict, n: int) -> float:
    from ..estimation import prior_radius  # noqa: PLC0415

    return float(prior_radius(claims["prior_source"], n, claims["delta"], claims["prior_params"]))


def _statement(cert: float, eps: float, uset: object, claims: dict) -> str:
    """The statement a file's numbers imply (the (ε, δ) one when δ, m and a ball are given, else the set's)."""
    from ..design.result import guarantee_text  # noqa: PLC0415
    from ..pipeline import source_statement  # noqa: PLC0415

    if claims["delta"] is not None and claims["m"] is not None and claims["radius"] is not None:
        return source_statement(claims["prior_source"], cert, claims["delta"], claims["radius"], claims["m"],
                                claims["prior_params"])
    return guarantee_text(cert, eps, uset)


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
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT_VERSION:
        raise MechanismFileError(f"mechanism file {path}: format_version {version!r} is not supported by this "
                                 f"library (reads 1 to {FORMAT_VERSION}); upgrade pml-design")
    return doc


def load_mechanism(path: object, *, check_utility: bool = True) -> "Mechanism":  # noqa: F821
    """Read a mechanism file, check it, re-derive its claims, re-certify its guarantee, return a :class:`Mechanism`.

    Checks, in order: the file is a mechanism file of a supported version; its content matches its SHA-256
    hash (detects corruption; the hash is unkeyed, so it does not stop a forger); the matrix is finite,
    non-negative and row-stochastic; labels are distinct and one per row / column; P̂, δ and m are valid; every
    stated number agrees with its re-derivation from the others (:func:`_check_claims`: the ball's centre and
    radius, the radius from δ, m, N and the prior source, the output labels, the statement, the disclosure
    listing, the utility at ``utility_prior``); and the exact leakage capacity of the matrix over the ball
    (core paper, Definition 5) is at most the target ε and equals the stored certified ε. A version-1 file (which may hold the design records'
    counts and input path) loads with a :class:`MechanismFileWarning`.

    Parameters
    ----------
    path : str or os.PathLike
    check_utility : bool, default True
        Whether to re-evaluate the stored utility (the only claim the guarantee does not rest on; for frequency
        estimation ``tr F⁻¹``, O(N² · outputs): 70 s at N = 10 000 on 21 778 outputs). ``False`` (as
        ``pml-design privatize`` and ``estimate``, which report no utility, load) skips it, and ``metadata``
        says ``utility_checked: False``; everything else is checked as always.

    Returns
    -------
    Mechanism
        With :attr:`~Mechanism.labels`, :attr:`~Mechanism.output_labels` and ``metadata`` (the file's
        fields: ``epsilon``, ``certified_epsilon``, ``delta``, ``radius``, ``p_hat``, ``m``, ``prior_source``,
        ``statement``, ``disclosure``, ``design_data``, ``utility_name``, ``library_version``, ``sha256``, … and
        ``path``).

    Raises
    ------
    FileNotFoundError
        No such file.
    MechanismFileError (a ValueError)
        Anything else wrong with the file; the message (one line) names the file and the problem.
    """
    from ..mechanisms.mechanism import Mechanism, check_labels  # noqa: PLC0415
    from ..uncertainty import leakage_capacity  # noqa: PLC0415

    if not isinstance(check_utility, bool):
        raise TypeError(f"check_utility must be True or False, got {check_utility!r}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got {type(path).__name__}")
    p = pathlib.Path(os.fspath(path))
    doc = _read_document(p)
    where = f"mechanism file {p}"
    stored, computed = doc.get("sha256"), content_hash(doc)
    if stored != computed:
        raise MechanismFileError(f"{where}: content hash mismatch, the file was modified after it was written "
                                 f"(sha256 field {str(stored)[:16]}..., content {computed[:16]}...); refusing to "
                                 "use it; design the mechanism again")
    try:
        W = check_mechanism(document_matrix(doc), "matrix")
        n, k = W.shape
        labels = check_labels(doc.get("categories"), n, "categories")
        out_labels = check_labels(doc.get("output_labels"), k, "output_labels")
        if doc.get("p_hat") is not None or doc["format_version"] == 1:
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
        raise MechanismFileError(f"{where}: {str(exc).splitlines()[0] if str(exc) else repr(exc)}") from None
    capacity = leakage_capacity(W, uset)
    slack = _RECERTIFY_RTOL * max(1.0, abs(cert))
    if not capacity <= eps + slack:
        raise MechanismFileError(f"{where}: re-certification failed: the leakage capacity over its uncertainty "
                                 f"set is {capacity!r} > epsilon={eps!r}")
    if abs(capacity - cert) > slack:
        raise MechanismFileError(f"{where}: re-certification failed: the leakage capacity over its uncertainty "
                                 f"set is {capacity!r}, the file says certified_epsilon={cert!r}")
    try:
        _check_claims(doc, W, labels, out_labels, uset, eps, cert, check_utility)
    except (TypeError, ValueError, KeyError) as exc:
        raise MechanismFileError(f"{where}: {str(exc).splitlines()[0] if str(exc) else repr(exc)}") from None
    if doc["format_version"] == 1:
        raw = [key for key in RAW_FIELDS if key in doc]
        warnings.warn(f"{where} was written by an older pml-design (format_version 1)"
                      + (f" and holds raw data of the design records ({', '.join(raw)})" if raw else "")
                      + "; its claims were checked only in part; design it again (pml-design design -o) to get a file "
                      "without them", MechanismFileWarning, stacklevel=2)
    meta = {key: value for key, value in doc.items() if key not in ("matrix", BINARY_FIELD)}
    meta["path"] = str(p)
    meta["recertified_epsilon"] = capacity
    meta["utility_checked"] = bool(check_utility)
    return Mechanism(W, name=p.stem, labels=labels, output_labels=out_labels, metadata=meta)


def _mismatch(what: str, stated: object, derived: object) -> ValueError:
    return ValueError(f"inconsistent claims: {what} is {fmt(stated)} but the file's other numbers give "
                      f"{fmt(derived)}; refusing to use it; design the mechanism again")


def _check_claims(doc: dict, W: np.ndarray, labels: tuple, out_labels: tuple, uset: object, eps: float,
                  cert: float, check_utility: bool = True) -> None:
    """Re-derive every stated number of a mechanism file from the others; raise ValueError on a mismatch."""
    from ..design.disclosure import output_disclosure  # noqa: PLC0415
    from ..estimation import PRIOR_SOURCES  # noqa: PLC0415
    from ..mechanisms.labels import _default_output_labels  # noqa: PLC0415
    from ..uncertainty import L1Ball  # noqa: PLC0415

    n, k = W.shape
    v1 = doc["format_version"] == 1
    _check_version_fields(doc, v1)
    ball = isinstance(uset, L1Ball)
    radius = doc.get("radius")
    if ball:
        if radius is None or float(radius) != uset.radius:
            raise _mismatch("the radius", radius, uset.radius)
        if not v1 and not np.array_equal(np.asarray(doc.get("p_hat"), dtype=float), uset.center):
            raise _mismatch("p_hat", doc.get("p_hat"), uset.center)
    elif radius is not None or (not v1 and doc.get("p_hat") is not None):
        raise _mismatch("the radius and p_hat of a design over " + str(type(uset).__name__), (radius, doc.get("p_hat")),
                        (None, None))
    derived_out = _default_output_labels(W, labels)
    codes = labels == tuple(range(n)) and out_labels == tuple(range(k))
    if out_labels != derived_out and not codes:
        raise _mismatch("output_labels (the labels of the outputs, derived from the matrix and the categories)",
                        list(out_labels), list(derived_out))
    if doc.get("categories_sorted") is True and not _is_sorted(labels):
        raise _mismatch("the order of the categories (the file says they are sorted)", list(labels), "sorted labels")
    source = doc.get("prior_source", "public sample" if v1 and ball else None)
    params = doc.get("prior_params", {"m": doc.get("m")} if v1 else {})
    if source is not None and source not in PRIOR_SOURCES:
        raise ValueError(f"prior_source must be one of {list(PRIOR_SOURCES)} or null, got {source!r}")
    if not isinstance(params, dict):
        raise ValueError(f"prior_params must be an object, got {fmt(params)}")
    if ball and source is None:
        raise ValueError("prior_source is missing: a design over a ball must say where its centre P̂ came from")
    if source == "public sample" and doc.get("delta") is not None and doc.get("m") is None:
        raise ValueError("inconsistent claims: delta is given without m, so the radius cannot be re-derived")
    if source == "public sample" and doc.get("m") is not None:
        if params.get("m") != doc["m"]:
            raise _mismatch("prior_params.m", params.get("m"), doc["m"])
        if not v1:
            if not _counts_fit(doc["p_hat"], doc["m"]):
                raise ValueError(f"inconsistent claims: m={doc['m']} does not fit p_hat (from a public sample, p_hat * m "
                                 "are the design records' counts, integers summing to m); refusing to use it; design "
                                 "the mechanism again")
    claims = {"delta": doc.get("delta"), "m": doc.get("m"), "radius": radius, "prior_source": source,
              "prior_params": params}
    if ball and claims["delta"] is not None:
        expected = _derived_radius(claims, n)
        if not math.isclose(expected, float(radius), rel_tol=_CLAIM_RTOL):
            raise _mismatch(f"the radius (for delta={claims['delta']!r}, N={n}, prior_source={source!r}, "
                            f"prior_params={fmt(params)})", radius, expected)
        _check_private_source(claims, n)
    if v1:
        return
    statement = _statement(cert, eps, uset, claims)
    if doc.get("statement") != statement:
        raise _mismatch("the statement", doc.get("statement"), statement)
    derived = _plain(output_disclosure(W, uset, labels, out_labels))
    stated = doc.get("disclosure")
    if not (isinstance(stated, list) and len(stated) == len(derived) and all(
            isinstance(a, dict) and {kk: a.get(kk) for kk in b if kk != "max_posterior"}
            == {kk: b[kk] for kk in b if kk != "max_posterior"}
            and isinstance(a.get("max_posterior"), (int, float))
            and math.isclose(a["max_posterior"], b["max_posterior"], rel_tol=_CLAIM_RTOL, abs_tol=1e-12)
            for a, b in zip(stated, derived))):
        raise _mismatch("the disclosure listing", stated, derived)
    if check_utility:
        _check_utility(doc, W)
    check_fingerprint(doc.get("design_data"))


def _check_utility(doc: dict, W: np.ndarray) -> None:
    """The utility of a named utility re-evaluated on the matrix at the stored ``utility_prior`` (files that have
    one), and ``optimal`` against the stored upper bound (maximised utilities)."""
    from ..design.utilities import _NAMED, as_utility  # noqa: PLC0415

    name, value = doc.get("utility_name"), doc.get("utility")
    if doc.get("utility_prior") is None or name not in _NAMED or not isinstance(value, (int, float)):
        return
    prior = check_probability_vector(doc["utility_prior"], "utility_prior", size=W.shape[0])
    derived = float(as_utility(name).value(W, prior))
    if not math.isclose(value, derived, rel_tol=_CLAIM_RTOL, abs_tol=1e-12):
        raise _mismatch(f"the utility ({name} of the matrix at utility_prior)", value, derived)
    bound = doc.get("upper_bound")
    if doc.get("optimal") is True and name != "frequency_estimation" and isinstance(bound, (int, float)):
        if not bound - value <= 1e-6 * max(1.0, abs(value)):
            raise _mismatch(f"optimal (true needs the utility {value!r} within 1e-6 of its upper bound)", bound, value)


#: Fields that only format version 2 writes: a version-1 file holding one was relabelled (its claims would be
#: checked only in part).
V2_FIELDS: tuple[str, ...] = ("categories_sorted", "prior_source", "prior_params", "disclosure", "design_data")


def _check_version_fields(doc: dict, v1: bool) -> None:
    """A version-2 file holds no raw data; a version-1 file holds no version-2 field (no downgrade)."""
    if v1:
        newer = [key for key in V2_FIELDS if key in doc]
        if newer:
            raise ValueError(f"format_version is 1 but the file has the version-2 fields {newer}: the version was "
                             "changed (a version-1 file's claims are checked only in part); refusing to use it")
        return
    raw = [key for key in RAW_FIELDS if key in doc]
    if raw:
        raise ValueError(f"a format_version {doc['format_version']} file carries no raw data of the design records, but this one has {raw}; "
                         "refusing to use it; design the mechanism again")


def _check_private_source(claims: dict, n: int) -> None:
    """m and the fixed descriptions of a private P̂ (``"dp"``, ``"ldp reports"``), re-derived from its parameters."""
    from ..priors import DP_NEIGHBOURING, DP_NOISE, DP_NOISE_SEEDED, dp_prior_radius  # noqa: PLC0415

    source, params, m = claims["prior_source"], claims["prior_params"], claims["m"]
    if source == "dp":
        if params.get("neighbouring") != DP_NEIGHBOURING:
            raise _mismatch("prior_params.neighbouring (what the DP release of the counts is)",
                            params.get("neighbouring"), DP_NEIGHBOURING)
        if params.get("noise") not in (DP_NOISE, DP_NOISE_SEEDED):
            raise _mismatch("prior_params.noise (what the DP release of the counts is)", params.get("noise"), DP_NOISE)
        if not isinstance(params.get("noisy_total"), int) or isinstance(params.get("noisy_total"), bool):
            raise ValueError(f"prior_params.noisy_total must be an integer (the DP release's total), got "
                             f"{fmt(params.get('noisy_total'))}")
        derived = dp_prior_radius(params["noisy_total"], n, params["dp_epsilon"], params["delta_ball"],
                                  params["delta_total"])[1]
        if m != derived:
            raise _mismatch("m (the lower bound on the design records: noisy_total minus the margin of delta_total)",
                            m, derived)
    elif source == "ldp reports" and m != params.get("n_reports"):
        raise _mismatch("m (the number of the first cohort's reports)", m, params.get("n_reports"))
