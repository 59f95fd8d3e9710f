"""The mark ``privatize`` leaves beside a file of reports (``OUT.pml.json``), and the checks that read it.

A mechanism whose outputs are named after its inputs (a "noisy copy": randomized response, a square one-to-one
design, :func:`pml_design.mechanisms.labels._default_output_labels`) privatizes a column into the same alphabet, so
a file of raw records reads as a file of reports. A new user gave ``estimate`` the raw file instead of the reports
(2026-11-27): it printed the records' exact counts as "privatized reports", and ``privatize`` on an already privatized
file succeeded silently. ``privatize`` now writes this mark (the mechanism's content hash, the column, the row count
and the SHA-256 of the output), ``estimate`` requires it for a noisy-copy mechanism, and ``privatize`` refuses a file
that carries one.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

from .guard import file_sha256

__all__ = ["MARK_FORMAT", "MARK_SUFFIX", "is_noisy_copy", "mark_path", "mark_problem", "marked_mechanism", "write_mark"]

#: Appended to a report file's path for its mark.
MARK_SUFFIX: str = ".pml.json"
MARK_FORMAT: str = "pml-design-reports"


def mark_path(reports: object) -> pathlib.Path:
    """Where the mark of a report file is: where :func:`write_mark` puts it and :func:`mark_problem` reads it.

    Parameters
    ----------
    reports : str or os.PathLike
        A file written (or to be read as written) by ``pml-design privatize MECHANISM``.

    Returns
    -------
    pathlib.Path
        ``REPORTS.pml.json`` (:data:`MARK_SUFFIX` appended to the path as given).
    """
    from .output import sidecar_path  # noqa: PLC0415

    return sidecar_path(reports, MARK_SUFFIX)


def is_noisy_copy(mechanism: Any) -> bool:
    """Whether the mechanism's outputs carry the names of its inputs (then raw records read as reports).

    Parameters
    ----------
    mechanism : Mechanism
        A loaded mechanism (its ``labels`` and ``output_labels``).

    Returns
    -------
    bool
        True when it has labels and some output label is also an input label.
    """
    if mechanism.labels is None:
        return False
    return bool({str(v) for v in mechanism.labels} & {str(v) for v in mechanism.output_labels})


def write_mark(output: object, mechanism: Any, column: str, rows: int) -> pathlib.Path:
    """Write the mark of a report file just written by ``privatize`` (atomically).

    Parameters
    ----------
    output : str or os.PathLike
        The report file.
    mechanism : Mechanism
        The loaded mechanism that made it (``metadata["sha256"]``, its file's content hash).
    column : str
        The privatized column.
    rows : int
        The number of rows written (as public as the file).

    Returns
    -------
    pathlib.Path
        The mark (:func:`mark_path`).
    """
    from .file import _write_atomically  # noqa: PLC0415

    doc = {"format": MARK_FORMAT, "version": 1, "mechanism_sha256": mechanism.metadata.get("sha256"),
           "column": str(column), "rows": int(rows), "sha256": file_sha256(output)}
    return _write_atomically(mark_path(output), json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def mark_problem(reports: object, mechanism: Any) -> str | None:
    """Why ``reports`` is not a file that ``privatize`` wrote with ``mechanism`` (unchanged since), or None.

    Parameters
    ----------
    reports : str or os.PathLike
        The file given to ``estimate``.
    mechanism : Mechanism
        The loaded mechanism.

    Returns
    -------
    str or None
        A phrase for the error (``"has no mark REPORTS.pml.json"``, ``"changed since privatize wrote it"``, ...).
    """
    from .output import read_sidecar  # noqa: PLC0415

    path = mark_path(reports)
    doc, why = read_sidecar(path, MARK_FORMAT)
    if doc is None:
        return {"missing": f"has no mark {path.name} (privatize writes one beside its output)",
                "unreadable": f"has a mark {path.name} that is not readable JSON"}.get(
                    str(why), f"has a mark {path.name} that is not a pml-design reports mark")
    if doc.get("sha256") != file_sha256(reports):
        return f"changed since privatize wrote it (its mark {path.name} has another SHA-256)"
    if doc.get("mechanism_sha256") != mechanism.metadata.get("sha256"):
        return "was privatized with another mechanism file (its mark names another content hash)"
    return None


def marked_mechanism(reports: object) -> str | None:
    """The mechanism content hash a readable mark of ``reports`` names (``mechanism_sha256``), or None (no mark, or
    not a readable pml-design mark).

    Parameters
    ----------
    reports : str or os.PathLike
        The file given to ``estimate``.

    Returns
    -------
    str or None
        The SHA-256 of the mechanism file that ``privatize`` used for it.
    """
    from .output import read_sidecar  # noqa: PLC0415

    doc, _ = read_sidecar(mark_path(reports), MARK_FORMAT)
    named = None if doc is None else doc.get("mechanism_sha256")
    return named if isinstance(named, str) else None
