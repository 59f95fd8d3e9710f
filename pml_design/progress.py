"""Progress bars for long work, one switch to silence them.

Every long loop of the library, the figure scripts and the command line goes through :func:`progress_bar`
(a thin wrapper around :class:`tqdm.tqdm` that writes to ``stderr``, so ``--json`` output on ``stdout``
stays machine-readable). Progress is shown when ``enabled`` is true and silenced otherwise; setting the
environment variable ``PML_DESIGN_NO_PROGRESS=1`` silences every bar globally (useful in CI and cluster
logs).

Progress that moves (issue 23): the iterations of a design can be minutes apart, so the bar does not wait for
them. On a terminal a timer redraws it every :data:`REFRESH_S` seconds (the elapsed time moves); off a
terminal (a pipe, a CI log) an enabled bar prints no control characters but one plain line every
:data:`PLAIN_S` seconds, ``desc: 0:01:10 elapsed, 12 it, value=…, bound=…, gap=…``, to ``stderr`` and to the
``logging`` logger ``pml_design.progress`` (INFO; attach a handler to keep them in a log file). The timer is a
daemon thread, stopped and joined by ``close()`` (a ``with`` block), and it ends by itself when the bar is
garbage-collected: it never outlives the work.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm

__all__ = ["NO_PROGRESS_ENV", "PLAIN_S", "REFRESH_S", "progress_bar", "progress_enabled"]

#: Environment variable that, when set to a non-empty value other than ``0``, silences all progress bars.
NO_PROGRESS_ENV: str = "PML_DESIGN_NO_PROGRESS"
#: Seconds between redraws of a bar on a terminal, whether or not an iteration happened.
REFRESH_S: float = 1.0
#: Seconds between the plain progress lines of an enabled bar off a terminal.
PLAIN_S: float = 10.0

_log = logging.getLogger("pml_design.progress")


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


class _Silent:
    """A file that swallows tqdm's own drawing (plain mode writes its lines itself)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _tick(ref: "weakref.ref[_Bar]", stop: threading.Event, interval: float) -> None:
    """Body of the timer thread: redraw (terminal) or print a plain line (elsewhere) until stopped."""
    while not stop.wait(interval):
        bar = ref()
        if bar is None or bar.disable:
            return
        try:
            bar._heartbeat()
        except Exception:  # noqa: BLE001 - a broken stderr must not kill the work; stop showing progress
            return
        del bar


class _Bar(tqdm):
    """tqdm whose display moves without iterations (terminal) or prints plain lines (elsewhere)."""

    def __init__(self, *args: Any, plain: bool = False, **kwargs: Any) -> None:
        self._plain = plain
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        if plain:
            kwargs["file"] = _Silent()
        super().__init__(*args, **kwargs)
        if not self.disable:
            self._timer = threading.Thread(target=_tick, args=(weakref.ref(self), self._stop,
                                                               PLAIN_S if plain else REFRESH_S),
                                           name="pml-design-progress", daemon=True)
            self._timer.start()

    def plain_line(self) -> str:
        """``desc: H:MM:SS elapsed, n it[ of total], postfix`` (the line printed off a terminal)."""
        elapsed = self.format_interval(time.time() - self.start_t)
        count = f"{self.n:g}" + (f" of {self.total:g}" if self.total else "") + f" {self.unit}"
        post = f", {self.postfix}" if self.postfix else ""
        return f"{self.desc or 'progress'}: {elapsed} elapsed, {count}{post}"

    def _heartbeat(self) -> None:
        if self._plain:
            line = self.plain_line()
            sys.stderr.write(f"pml-design: {line}\n")
            sys.stderr.flush()
            _log.info(line)
        else:
            self.refresh()

    def close(self) -> None:
        stop = getattr(self, "_stop", None)
        if stop is not None:
            stop.set()
        timer = getattr(self, "_timer", None)
        if timer is not None and timer is not threading.current_thread():
            timer.join(timeout=5.0)
        super().close()


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    total: int | None = None,
    desc: str | None = None,
    enabled: bool = True,
    leave: bool = False,
) -> tqdm:
    """A progress bar on ``stderr`` that is disabled unless ``enabled`` (and not globally silenced).

    On a terminal: a tqdm bar redrawn every :data:`REFRESH_S` seconds even when no iteration happens. Off a
    terminal: one plain line every :data:`PLAIN_S` seconds (also logged to ``pml_design.progress``).

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
        Iterate over it, or call ``.update(n)`` / ``.set_postfix(...)``; use it as a context manager (or call
        ``close()``) to stop its timer.
    """
    show = progress_enabled(enabled)
    plain = show and not bool(getattr(sys.stderr, "isatty", lambda: False)())
    return _Bar(
        iterable,
        total=total,
        desc=desc,
        disable=not show,
        leave=leave,
        file=sys.stderr,
        dynamic_ncols=True,
        plain=plain,
    )
