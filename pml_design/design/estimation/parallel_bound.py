"""The diagonal-moment bound in a second process, while the column generation runs (docs/design.md §7.4).

Implements: :func:`.moment_bound.moment_bound` (docs/design.md §7.3) on a second CPU. The column generation's dense
algebra runs on one BLAS thread, so on a machine with two or more CPUs one of them idles for the whole run; the
bound needs nothing from the design but the rays that steer its relaxed master, so it can run from the first master
round to the deadline instead of in the last 15 % of the time limit. The design offers its newest heaviest rays
after every round (:meth:`BackgroundBound.offer`, never blocking); the bound takes the latest offer before each of
its rounds (``moment_bound(..., feed=...)``). Its value is valid whatever the rays, so the design keeps the larger of
it and its own bounds.

The process is started with ``fork`` (Linux only): ``spawn`` and ``forkserver`` run the caller's ``__main__`` again,
which breaks scripts without an ``if __name__ == "__main__"`` guard. Where fork is not available, where fewer than two
CPUs are usable, or below :data:`MIN_SECONDS`, nothing is started and the design bounds itself as before.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import queue
import sys
import time
import warnings

import numpy as np

from ...uncertainty import UncertaintySet
from .moment_bound import MomentBound, moment_bound

__all__ = ["BackgroundBound", "available"]

#: Time limits below this many seconds run no background bound (starting a process costs ~10–50 ms, and short runs
#: are mostly tests and demos run side by side).
MIN_SECONDS: float = 10.0
#: The background bound stops this many seconds before the design's deadline, so that its result is in by then.
MARGIN_SECONDS: float = 0.25
#: Switch (for experiments and for machines shared with other work).
ENABLED: bool = True


def available(time_limit: float) -> bool:
    """True when a background bound may run: Linux ``fork``, at least two usable CPUs, ``time_limit ≥ MIN_SECONDS``."""
    if not ENABLED or time_limit < MIN_SECONDS or not sys.platform.startswith("linux"):
        return False
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - Linux always has it
        cpus = os.cpu_count() or 1
    return cpus >= 2


def _work(uset, epsilon, prior, rays, weights, deadline, feed_q, out_q) -> None:  # pragma: no cover - child process
    """The child: the moment bound, fed by ``feed_q``; its result (or the error's text) goes to ``out_q``."""
    warnings.simplefilter("ignore")  # the child writes nothing: the parent owns stderr

    def feed():
        item = None
        try:
            while True:  # the latest offer wins
                item = feed_q.get_nowait()
        except (queue.Empty, OSError, EOFError):
            pass
        return item

    try:
        from threadpoolctl import threadpool_limits  # noqa: PLC0415

        with threadpool_limits(1):
            mb = moment_bound(uset, epsilon, prior, rays, deadline=deadline, weights=weights, feed=feed,
                              on_best=lambda so_far: out_q.put(("best", so_far)))
        out_q.put(("ok", mb))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which keeps its own bounds
        out_q.put(("error", f"{type(exc).__name__}: {exc}"))


class BackgroundBound:
    """The moment bound of an estimation design, run in a forked process until ``deadline − MARGIN_SECONDS``.

    Implements: docs/design.md §7.4. Use :func:`available` first.

    Parameters
    ----------
    uset, epsilon, prior
        As :func:`.moment_bound.moment_bound`.
    rays, weights : numpy.ndarray
        The design's normalised rays and their weights so far (they start the relaxed master's pool).
    deadline : float
        ``time.perf_counter()`` value of the design's deadline (``CLOCK_MONOTONIC``, shared by the processes).
    """

    def __init__(self, uset: UncertaintySet, epsilon: float, prior: np.ndarray, rays: np.ndarray,
                 weights: np.ndarray, *, deadline: float):
        ctx = multiprocessing.get_context("fork")
        self._feed = ctx.Queue(maxsize=1)
        self._out = ctx.Queue()
        self.deadline = float(deadline) - MARGIN_SECONDS
        self.error: str | None = None
        self._proc = ctx.Process(target=_work, name="pml-design-bound", daemon=True,
                                 args=(uset, epsilon, prior, rays, weights, self.deadline, self._feed, self._out))
        with warnings.catch_warnings():  # Python ≥ 3.12 warns about fork in a process with (BLAS) threads
            warnings.simplefilter("ignore", DeprecationWarning)
            self._proc.start()

    def wants(self) -> bool:
        """True when the last offer has been taken (an offer now would not wait in line)."""
        return self._proc.is_alive() and self._feed.empty()

    def offer(self, rays: np.ndarray, weights: np.ndarray) -> None:
        """Offer newer rays (normalised) and weights; never blocks (dropped when the last offer is still pending)."""
        try:
            self._feed.put_nowait((rays, weights))
        except (queue.Full, ValueError, OSError):
            pass

    def result(self, until: float = math.inf) -> MomentBound | None:
        """Wait for the bound (at most until its deadline + 0.5 s, and until ``until``); stop the process.

        The best value the process reported by then (it reports each rise), or None if it had none
        (:attr:`error` says why).
        """
        best = None  # the last value reported on the way (each one valid), then the final one
        stop = min(self.deadline + 0.5, until)
        try:
            while True:
                kind, item = self._out.get(timeout=max(stop - time.perf_counter(), 0.01))
                if kind == "error":
                    self.error = item
                    break
                if isinstance(item, MomentBound) and not math.isnan(item.value):
                    best = item if best is None or item.value >= best.value else best
                if kind == "ok":
                    break
        except (queue.Empty, OSError, EOFError):
            if best is None:
                self.error = "no result by the deadline"
        finally:
            self.close()
        return best

    def close(self) -> None:
        """Stop the process (idempotent); pending offers are dropped."""
        self._feed.cancel_join_thread()  # an offer never taken must not hold up the parent's exit
        if self._proc.is_alive():
            self._proc.terminate()
        self._proc.join(timeout=1.0)
        for q in (self._feed, self._out):
            q.close()
