"""Progress bars for long work, one switch to silence them.

Every long loop of the library, the figure scripts and the command line goes through :func:`progress_bar`
(a thin wrapper around :class:`tqdm.tqdm` that writes to ``stderr``, so ``--json`` output on ``stdout``
stays machine-readable). Progress is shown when ``enabled`` is true and silenced otherwise; setting the
environment variable ``PML_DESIGN_NO_PROGRESS=1`` silences every bar globally (useful in CI and cluster
logs).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm

__all__ = ["NO_PROGRESS_ENV", "progress_bar", "progress_enabled"]

#: Environment variable that, when set to a non-empty value other than ``0``, silences all progress bars.
NO_PROGRESS_ENV: str = "PML_DESIGN_NO_PROGRESS"


def progress_enabled(enabled: bool = True) -> bool:
    """Whether a progress bar requested with ``enabled`` should be shown (honours :data:`NO_PROGRESS_ENV`).

    Parameters
    ----------
    enabled : bool, default True
        The caller's request (e.g. a ``progress=`` argument or the absence of ``--no-progress``).

    Returns
    -------
    bool
    """
    flag = os.environ.get(NO_PROGRESS_ENV, "")
    return bool(enabled) and flag in ("", "0")


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    total: int | None = None,
    desc: str | None = None,
    enabled: bool = True,
    leave: bool = False,
) -> tqdm:
    """A tqdm progress bar on ``stderr`` that is disabled unless ``enabled`` (and not globally silenced).

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate over (as for :class:`tqdm.tqdm`).
    total : int, optional
        Number of items, if ``iterable`` has no ``len``.
    desc : str, optional
        Label shown before the bar.
    enabled : bool, default True
        Show the bar (see :func:`progress_enabled`).
    leave : bool, default False
        Keep the finished bar on screen.

    Returns
    -------
    tqdm.tqdm
        Iterate over it, or call ``.update(n)``; use as a context manager to close it.
    """
    return tqdm(
        iterable,
        total=total,
        desc=desc,
        disable=not progress_enabled(enabled),
        leave=leave,
        file=sys.stderr,
        dynamic_ncols=True,
    )
