"""Atomic writes: a temporary file beside the target, renamed over it (``os.replace``), so a failure leaves no
partial file and a reader never sees one half written (docs/cli.md, "Files are sacred")."""

from __future__ import annotations

import os
import pathlib
import tempfile
from collections.abc import Callable

__all__: list[str] = ["publish", "write_pair"]


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


def write_pair(first: pathlib.Path, write_first: Callable[[], object], second: pathlib.Path,
               second_text: str | None) -> None:
    """Write two files that belong together (a mechanism file and its matrix CSV) so that an interrupt leaves neither
    alone: ``second_text`` is staged in a temporary sibling of ``second`` first, then ``write_first()`` writes
    ``first`` (atomically), then the staged file is renamed; if anything fails or is interrupted before that rename,
    the staged file is removed and so is ``first``, where this call wrote it (never a file that was there before).
    ``second_text=None``: ``first`` alone.

    Implements: "no partial output" (docs/cli.md, exit statuses): Ctrl-C while ``design -o`` wrote a 60 MB PREFIX.csv
    left a valid PREFIX.json alone (a new user's trial, session 20), which a rerun then refused as existing.

    Parameters
    ----------
    first : pathlib.Path
        The file ``write_first`` writes.
    write_first : callable
        Writes ``first`` atomically.
    second : pathlib.Path
        The companion file.
    second_text : str or None
        Its content (None: no companion).
    """
    staged, wrote = None, False
    try:
        if second_text is not None:
            fd, staged = temporary_sibling(second)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(second_text)
        write_first()
        wrote = True
        if staged is not None:
            os.replace(staged, second)
            staged = None
    except BaseException:
        if staged is not None:
            staged.unlink(missing_ok=True)
            if wrote:
                first.unlink(missing_ok=True)
        raise


def publish(tmp: pathlib.Path, target: pathlib.Path, overwrite: bool) -> None:
    """Rename a finished temporary file to ``target``; without ``overwrite`` only if ``target`` still does not exist.

    Implements: "no existing file without --force" at the moment of writing, not only at the start (a new user's trial,
    session 20: two runs started 0.15 s apart both passed the start's check and both said "wrote", the second replacing
    the first). Without ``overwrite`` the file is hard-linked to ``target``, which fails if ``target`` exists, then the
    temporary name is removed; where the file system has no hard links the existence is checked just before the rename.

    Parameters
    ----------
    tmp : pathlib.Path
        The finished temporary file (a sibling of ``target``).
    target : pathlib.Path
        Its final name.
    overwrite : bool
        Replace an existing ``target`` (``--force``).

    Raises
    ------
    FileExistsError
        ``target`` appeared while the output was written (``overwrite`` False); ``tmp`` is removed.
    """
    if overwrite:
        os.replace(tmp, target)
        return
    try:
        os.link(tmp, target)
    except OSError as exc:
        if not isinstance(exc, FileExistsError) and not (target.exists() or target.is_symlink()):
            os.replace(tmp, target)  # no hard links here (e.g. some network or FAT file systems), and no target yet
            return
        tmp.unlink(missing_ok=True)
        raise FileExistsError(f"{target} appeared while this output was written (another run?); refusing to replace it "
                              "(choose another name, or pass --force to replace it)") from None
    tmp.unlink(missing_ok=True)
