"""Output paths that never destroy a file: the one check every writer of the library and the CLI runs first.

Rules (issue 23, "files are sacred"):

* an output is never one of the call's own inputs, compared by *resolved* path (symlinks, ``./``, ``..`` and
  hard links count), not even with ``overwrite=True`` / ``--force``;
* an existing output is replaced only with an explicit ``overwrite=True`` / ``--force``, whatever its kind: a
  mechanism file (the only key to decoding the reports privatized with it) and its matrix CSV, a provenance file,
  a PNG too (reviews found each replaced silently when it was "a file of the kind being written"); the
  ``own_kind`` parameter of :func:`check_output_path` still allows that exception, and no writer of the library
  uses it;
* a directory (or a name ending in a path separator) is never an output;
* the parent directory must exist (nothing is created implicitly).

Writes themselves stay atomic (:func:`pml_design.deploy.file.temporary_sibling` + ``os.replace``).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
from collections.abc import Callable, Iterable

__all__ = ["OutputFileError", "check_output_path", "is_matrix_csv", "is_mechanism_file", "read_sidecar",
           "sidecar_path"]


class OutputFileError(ValueError):
    """An output path that would destroy a file (an input, a file of another kind) or is a directory."""


def is_mechanism_file(path: pathlib.Path) -> bool:
    """Whether ``path`` is a pml-design mechanism file (JSON with ``"format": "pml-design-mechanism"``).

    Implements: the test behind the refusal to replace a mechanism file (module docstring, issue 23), which says
    what the existing file is (``save_mechanism``, ``design -o``); only the first MiB is read: a file that fits is parsed as JSON, a larger one (a wide design's:
    200 MB) is recognised by its first key, ``"format"``, as :func:`pml_design.deploy.save_mechanism` writes it.

    Parameters
    ----------
    path : pathlib.Path
        An existing file.

    Returns
    -------
    bool
        True if it is a UTF-8 JSON object whose ``"format"`` is :data:`pml_design.deploy.file.FORMAT` (above 1 MiB:
        whose first key is that ``"format"``); False otherwise, also when it cannot be read or parsed.
    """
    from .file import FORMAT  # noqa: PLC0415

    try:
        with path.open("rb") as fh:
            head = fh.read(1 << 20)
            whole = not fh.read(1)
        text = head.decode("utf-8-sig", errors="strict" if whole else "ignore")
        if not whole:  # a larger file (a wide design: 200 MB) cannot be parsed from its head: its first key, as
            # save_mechanism writes it (before, every mechanism file above 1 MiB counted as "not a mechanism file")
            return re.match(r'\s*\{\s*"format"\s*:\s*' + re.escape(json.dumps(FORMAT)) + r"\s*,", text) is not None
        doc = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def is_matrix_csv(path: pathlib.Path) -> bool:
    """Whether ``path`` looks like the matrix CSV of ``pml-design design -o`` (header ``input,y0,y1,...``).

    Implements: the test that names an existing matrix CSV in ``design -o``'s refusal to replace it (module
    docstring, issue 23); only the first line is read.

    Parameters
    ----------
    path : pathlib.Path
        An existing file.

    Returns
    -------
    bool
        True if its first line (UTF-8, stripped) is ``input,y0,...,y{M-1}`` with M ≥ 1; False otherwise, also
        when it cannot be read or decoded.
    """
    try:
        with path.open("rb") as fh:
            # 64 KiB of header is ~9 000 outputs: a wide design's (N = 954: 15 170) counted as "not a matrix CSV"
            first = fh.readline(1 << 24).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return False
    if not first.endswith("\n"):  # a line longer than 16 MiB, or a file without a line break: not ours
        return False
    fields = first.strip().split(",")
    return len(fields) >= 2 and fields[0] == "input" and all(f == f"y{j}" for j, f in enumerate(fields[1:]))


def _same_file(a: pathlib.Path, b: pathlib.Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)  # hard links
    except OSError:
        return False


#: The ``kind`` of a first cohort's report file (``privatize --oracle``): with its provenance ``.ldp.json`` beside it,
#: only this kind replaces it, as only a ``"privatized copy"`` replaces a file with a mark ``.pml.json``; ``"(not
#: written)"`` checks a path that will not be written (only that it is no input).
LDP_REPORTS: str = "LDP reports"


def check_output_path(
    path: object,
    *,
    inputs: Iterable[tuple[object, str]] = (),
    own_kind: Callable[[pathlib.Path], bool] | None = None,
    kind: str = "file",
    overwrite: bool = False,
    option: str = "path",
    force_hint: str = "overwrite=True",
) -> pathlib.Path:
    """Check that writing ``path`` destroys nothing; returns it as a :class:`pathlib.Path`.

    Implements: the rules of the module docstring (issue 23, "files are sacred").

    Parameters
    ----------
    path : str or os.PathLike
        The output.
    inputs : iterable of (path, name)
        The call's own inputs and how the caller named them (``("survey.csv", "--csv")``); ``path`` may be
        none of them, whatever ``overwrite`` says.
    own_kind : callable, optional
        ``own_kind(existing) -> bool``: whether an existing file at ``path`` is of the kind being written
        (replaced without ``overwrite``). None: every existing file needs ``overwrite``.
    kind : str
        What is written, for messages (``"mechanism file"``).
    overwrite : bool
        Replace an existing file of another kind.
    option, force_hint : str
        How the caller names the output and the override (``"--output"`` / ``"--force"`` on the command
        line, ``"path"`` / ``"overwrite=True"`` in Python).

    Returns
    -------
    pathlib.Path
        ``path`` as given (not resolved); nothing is created or written.

    Raises
    ------
    OutputFileError (a ValueError)
        With one line naming ``option``, the path and what to do.
    """
    try:
        text = os.fspath(path)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{option} must be a file path (str or os.PathLike), got {type(path).__name__} {path!r}") from None
    if not isinstance(text, str):
        text = os.fsdecode(text)
    target = pathlib.Path(text)
    if text == "-":  # (a new user expected standard output and got a file named '-', and its mark '-.pml.json')
        raise OutputFileError(f"{option}: '-' (standard output) is not supported: give a file name (./- for a file "
                              "of that name)")
    if text.endswith((os.sep, "/")) or target.is_dir():
        raise OutputFileError(f"{option}: {text!r} is a directory; give a file name (e.g. {str(target / 'out')!r})")
    parent = target.parent if str(target.parent) else pathlib.Path(".")
    if not parent.is_dir():
        raise OutputFileError(f"{option}: directory does not exist: {parent}")
    for inp, name in inputs:
        if inp is None:
            continue
        if _same_file(target, pathlib.Path(os.fspath(inp))):  # type: ignore[arg-type]
            raise OutputFileError(f"{option}: {text} is the input {name} ({inp}); refusing to overwrite an input "
                                  "(choose another output name)")
    if target.is_file() and kind != "(not written)":  # reports: only the privatize route that wrote them replaces them
        for suffix, what, same in ((".ldp.json", "a first cohort's LDP reports", LDP_REPORTS),
                                   (".pml.json", "privatized reports", "privatized copy")):
            if kind != same and sidecar_path(target, suffix).is_file():
                raise OutputFileError(f"{option}: {text} holds {what} ({sidecar_path(target, suffix).name} says so); "
                                      "refusing to replace it, even with --force / overwrite (its side file would "
                                      "describe another file): choose another name")
    if (target.exists() or target.is_symlink()) and not overwrite:
        if target.exists() and not target.is_file():
            raise OutputFileError(f"{option}: {text} exists and is not a regular file")
        if own_kind is None or not own_kind(target):
            what = _what_exists(target) if own_kind is None else f"exists and is not a {kind}"
            raise OutputFileError(f"{option}: {text} {what}; refusing to replace it (choose another name, or "
                                  f"pass {force_hint} to replace it)")
    return target


def key_file(path: pathlib.Path) -> str | None:
    """What an existing file is when it is a key to decoding reports: ``"a pml-design mechanism file"``, ``"the matrix
    CSV of a mechanism file"``, or None (also for no regular file). ``design -o`` and ``privatize`` name it in their
    refusals (reviews: both replaced one silently)."""
    if not path.is_file():  # (a dangling symlink: nothing to read)
        return None
    if is_mechanism_file(path):
        return "a pml-design mechanism file"
    return "the matrix CSV of a mechanism file" if is_matrix_csv(path) else None


def _what_exists(path: pathlib.Path) -> str:
    """``exists``, naming what the existing file is when it is one of ours (:func:`key_file`)."""
    what = key_file(path)
    if what == "a pml-design mechanism file":
        return f"exists and is {what}, the only key to decoding the reports privatized with it"
    return "exists" if what is None else f"exists and is {what}"


def sidecar_path(path: object, suffix: str) -> pathlib.Path:
    """The file written beside ``path``: its path as given with ``suffix`` appended (a report file's mark
    ``.pml.json`` and provenance ``.ldp.json``, a design file's split record ``.split.json``).

    Implements: the one naming rule of the side files (docs/cli.md).

    Parameters
    ----------
    path : str or os.PathLike
        The main file.
    suffix : str
        Appended to its name.

    Returns
    -------
    pathlib.Path
    """
    return pathlib.Path(os.fspath(path) + suffix)  # type: ignore[operator]


def read_sidecar(path: pathlib.Path, fmt: str) -> tuple[dict | None, str | None]:
    """A side file's JSON document and ``None``, or ``None`` and why not: ``"missing"`` (no regular file there),
    ``"unreadable"`` (not UTF-8 JSON) or ``"other"`` (not an object whose ``"format"`` is ``fmt``).

    Implements: the reading shared by the mark, the split record and their checks (docs/cli.md).

    Parameters
    ----------
    path : pathlib.Path
        The side file.
    fmt : str
        The ``"format"`` it must declare.

    Returns
    -------
    (dict or None, str or None)
    """
    if not path.is_file():
        return None, "missing"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # (json's decode errors and UnicodeDecodeError are ValueErrors)
        return None, "unreadable"
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        return None, "other"
    return doc, None
