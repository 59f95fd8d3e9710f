"""Atomic writes: a temporary file beside the target, renamed over it (``os.replace``), so a failure leaves no
partial file and a reader never sees one half written (docs/cli.md, "Files are sacred")."""

from __future__ import annotations

import os
import pathlib
import tempfile

__all__: list[str] = []


def temporary_sibling(target: pathlib.Path, suffix: str = ".partial") -> tuple[int, pathlib.Path]:
    """A new temporary file next to ``target`` (same file system, so ``os.replace`` is atomic).

    Returns ``(fd, path)``. Its permissions follow the umask like a normally created file (``mkstemp``
    alone would make it private, 0600, and so would the renamed result).
    """
    parent = target.parent if str(target.parent) else pathlib.Path(".")
    if not parent.is_dir():
        raise FileNotFoundError(f"directory does not exist: {parent}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=parent)
    except OSError as exc:  # the error names the hidden temporary name, not the output (a review: -o /proc/m)
        raise OSError(f"cannot write {target}: {exc.strerror or exc}") from None
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
