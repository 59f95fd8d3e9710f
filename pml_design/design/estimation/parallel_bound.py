"""The diagonal-moment bound and the capped dual in a second process, while the column generation runs (docs/design.md
§7.4, §7.6).

Implements: :func:`.moment_bound.moment_bound` (docs/design.md §7.3) on a second CPU, after
:func:`.cap_bound.cap_bound` (§7.6) from :data:`CAP_MIN_N` symbols on; above :data:`MOMENT_MAX_N` the capped dual
alone, for the whole run. The column generation's dense
algebra runs on one BLAS thread, so on a machine with two or more CPUs one of them idles for the whole run; the
bound needs nothing from the design but the rays that steer its relaxed master, so it can run from the first master
round to the deadline instead of in the last 15 % of the time limit. The design offers its newest heaviest rays
after every round (:meth:`BackgroundBound.offer`, never blocking); the bound runs in :data:`SEGMENTS` segments, each
started afresh from the latest offer. Its value is valid whatever the rays, so the design keeps the larger of it and
its own bounds; nothing flows back into the design.

The two processes share memory only (no pipes, no queue threads): a buffer for the offered rays, guarded by a lock
the parent only ever *tries* to take, and a few numbers for the bound so far (each stored value is valid on its own).
The process is started with ``fork`` (Linux only): ``spawn`` and ``forkserver`` run the caller's ``__main__`` again,
which breaks scripts without an ``if __name__ == "__main__"`` guard. Where fork is not available, where fewer than two
CPUs are usable, or below :data:`MIN_SECONDS`, nothing is started and the design bounds itself as before.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings

import numpy as np

from ...uncertainty import UncertaintySet
from .cap_bound import CapBound, cap_bound
from .moment_bound import MOMENT_POOL_PER_SYMBOL, MomentBound, moment_bound

__all__ = ["BackgroundBound", "available"]

#: Time limits below this many seconds run no background bound (starting a process costs ~10–50 ms, and short runs
#: are mostly tests and demos run side by side).
MIN_SECONDS: float = 10.0
#: The background bound stops this many seconds before the design's deadline, so that its result is in by then.
MARGIN_SECONDS: float = 0.25
#: The child's time is cut into this many equal segments; each runs ``moment_bound`` afresh on the design's latest
#: heaviest rays (a fixed pool converges; a pool fed new design rays every round did not: on captured Zipf 50 runs
#: its masters' points priced at 14–17 late in the run, and on some runs the bound never rose after round 1).
SEGMENTS: int = 3
#: Above this alphabet the child runs one segment: a relaxed master cost ~10 s at N = 300 (~3.5 s since the
#: quadrature Hessian of docs/design.md §7.3), so a restart throws most of the work away (Zipf 300, ε = 1, 60 s:
#: proven gap 63 % with one segment, 69 % with two, 83 % with three).
SEGMENTS_MAX_N: int = 150
#: Each segment also starts from the previous segment's last pool (its cuts), not only from the design's latest rays.
CARRY: bool = True
#: Switch (for experiments and for machines shared with other work); the environment variable
#: ``PML_DESIGN_BACKGROUND_BOUND=0`` turns it off too.
ENABLED: bool = True
ENV_SWITCH: str = "PML_DESIGN_BACKGROUND_BOUND"
_ERROR_BYTES = 240
#: From this alphabet on (above the 150 symbols where the design's own end-of-run relaxations run) the child runs the
#: capped coordinate dual of :mod:`.cap_bound` first (docs/design.md §7.6), with CAP_SHARE of its time; above
#: MOMENT_MAX_N it runs that bound alone (Zipf 300, ε = 1, 60 s: 155 by the moment bound, 258 by the capped dual in
#: 20 s; at ε = 4 the moment bound is the better one, 11.1 against 8.2).
CAP_MIN_N: int = 151
CAP_SHARE: float = 0.5
MOMENT_MAX_N: int = 320


def _read(path: str) -> str:
    with open(path, encoding="ascii") as fh:
        return fh.read().strip()


def _cpu_quota() -> float:
    """CPUs the cgroup (container) allows this process, ``inf`` when unlimited or unknown (v2 ``cpu.max``, v1 CFS)."""
    try:
        quota, period = _read("/sys/fs/cgroup/cpu.max").split()[:2]
    except (OSError, ValueError):
        try:
            quota, period = _read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), _read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
        except OSError:
            return math.inf
    try:
        return math.inf if quota in ("max", "-1") else float(quota) / float(period)
    except ValueError:
        return math.inf


def available(time_limit: float) -> bool:
    """True when a background bound may run.

    That is: Linux ``fork``, at least two usable CPUs (affinity and the container's CPU quota),
    ``time_limit ≥ MIN_SECONDS``, a caller on the main thread of a process that may have children (not a daemon,
    e.g. a ``multiprocessing.Pool`` worker; a design run from a thread pool is one of several side by side), and the
    environment variable ``PML_DESIGN_BACKGROUND_BOUND`` not ``0`` (:func:`pml_design.sweep` sets it in its
    process-parallel tasks, which already use the CPUs). Implements: docs/design.md §7.4.

    Parameters
    ----------
    time_limit : float
        The design's time limit, in seconds.

    Returns
    -------
    bool
        Whether :class:`BackgroundBound` may be started.
    """
    if not ENABLED or time_limit < MIN_SECONDS or not sys.platform.startswith("linux"):
        return False
    if os.environ.get(ENV_SWITCH, "1").strip() == "0":
        return False
    if threading.current_thread() is not threading.main_thread() or multiprocessing.current_process().daemon:
        return False
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - Linux always has it
        cpus = os.cpu_count() or 1
    return min(cpus, _cpu_quota()) >= 2


class _Channel:
    """The memory the two processes share (no reference to the process or to :class:`BackgroundBound`, so that
    nothing keeps it alive in a cycle): the offer buffer and its lock, the result numbers, an error text."""

    def __init__(self, ctx, n: int, k: int, deadline: float):
        self.n, self.k, self.deadline = n, k, deadline
        self.buf = ctx.RawArray("d", n * k + k)  # offered rays (n × cols, row-major), then weights
        self.cols = ctx.RawValue("l", 0)
        self.seq = ctx.RawValue("l", 0)  # offers written
        self.taken = ctx.RawValue("l", 0)  # offers read by the child
        self.lock = ctx.Lock()
        # rounds, relaxed, value (the moment bound's; value last: every stored value is valid), the capped dual's value
        self.out = ctx.RawArray("d", 4)
        self.out[:] = [0.0, math.nan, -math.inf, -math.inf]
        self.err = ctx.RawArray("c", _ERROR_BYTES)  # set whenever the child ends without a value

    def feed(self):
        """The latest offer not yet taken, or None (the child side of :meth:`BackgroundBound.offer`)."""
        if self.seq.value == self.taken.value:
            return None
        with self.lock:
            seq, cols = self.seq.value, self.cols.value
            buf = np.frombuffer(self.buf, dtype=float)
            R = buf[: self.n * cols].reshape(self.n, cols).copy()
            w = buf[self.n * self.k: self.n * self.k + cols].copy()
        self.taken.value = seq
        return (R, w) if cols else None

    def report(self, mb: MomentBound) -> None:
        """Keep the value if it is higher (written last), and the latest rounds and relaxed value."""
        self.out[0], self.out[1] = float(mb.rounds), float(mb.relaxed)
        if math.isfinite(mb.value) and mb.value > self.out[2]:
            self.out[2] = float(mb.value)

    def report_cap(self, cb: CapBound) -> None:
        """Keep the capped dual's value if it is higher."""
        if math.isfinite(cb.value) and cb.value > self.out[3]:
            self.out[3] = float(cb.value)

    def has_value(self) -> bool:
        """Whether either bound has a valid value."""
        return math.isfinite(float(self.out[2])) or math.isfinite(float(self.out[3]))


def _work(ch: _Channel, uset, epsilon, prior, rays, weights) -> None:  # pragma: no cover - the child process
    """The child: from :data:`CAP_MIN_N` symbols the capped dual first (:data:`CAP_SHARE` of the time; all of it above
    :data:`MOMENT_MAX_N`), then :data:`SEGMENTS` runs of the moment bound until the deadline (one above
    :data:`SEGMENTS_MAX_N`), each started from the latest rays the design offered (the first from ``rays``), reporting
    each rise; an error is kept as text."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops this process
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # whatever handler the host application installed
    warnings.simplefilter("ignore")  # the child writes nothing: the parent owns stderr
    from . import moment_master as _mb  # noqa: PLC0415

    _mb.CVXPY_FALLBACK = False  # this process only: a solver thread pool the parent started hangs after fork
    try:
        from threadpoolctl import threadpool_limits  # noqa: PLC0415

        segments = 0 if ch.n > MOMENT_MAX_N else SEGMENTS if ch.n <= SEGMENTS_MAX_N else 1
        carry = None
        with threadpool_limits(1):
            if ch.n >= CAP_MIN_N:  # the capped dual first (all the time above MOMENT_MAX_N)
                share = CAP_SHARE if segments else 1.0
                t_cap = time.perf_counter()
                ch.report_cap(cap_bound(uset, epsilon, prior, deadline=t_cap + share * max(ch.deadline - t_cap, 0.0),
                                        on_best=ch.report_cap))  # (the box bound too, once it is done)
            for seg in range(segments):
                left = ch.deadline - time.perf_counter()
                if left <= 0.1:
                    break
                if seg:
                    fed = ch.feed()
                    if fed is not None:
                        rays, weights = fed
                mb = moment_bound(uset, epsilon, prior, rays, deadline=time.perf_counter() + left / (segments - seg),
                                  weights=weights, on_best=ch.report, keep=carry if CARRY else None)
                ch.report(mb)
                carry = mb.pool
        if not ch.has_value():
            ch.err.value = b"no bound: no relaxed master was solved in time"
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which keeps its own bounds
        ch.err.value = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")[: _ERROR_BYTES - 1]


class BackgroundBound:
    """The moment bound and the capped dual of an estimation design, run in a forked process until
    ``deadline − MARGIN_SECONDS`` (the capped dual from :data:`CAP_MIN_N` symbols, alone above :data:`MOMENT_MAX_N`,
    where no rays are shared).

    Implements: docs/design.md §7.4, §7.6. Use :func:`available` first.

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
        n = int(np.asarray(prior).size)
        self.deadline = float(deadline) - MARGIN_SECONDS
        self.error: str | None = None
        self.cap_value = -math.inf  # the capped dual's value, set by :meth:`result`
        self._closed = False
        # above MOMENT_MAX_N only the capped dual runs: it takes no rays, so none are shared
        self._ch = _Channel(ctx, n, MOMENT_POOL_PER_SYMBOL * n if n <= MOMENT_MAX_N else 0, self.deadline)
        self._proc = ctx.Process(target=_work, name="pml-design-bound", daemon=True,
                                 args=(self._ch, uset, epsilon, np.asarray(prior, dtype=float), rays, weights))
        with warnings.catch_warnings():  # Python ≥ 3.12 warns about fork in a process with (BLAS) threads
            warnings.simplefilter("ignore", DeprecationWarning)
            self._proc.start()

    def offer(self, rays: np.ndarray, weights: np.ndarray) -> None:
        """Offer newer rays (normalised, heaviest first; the first ``MOMENT_POOL_PER_SYMBOL·N`` are kept) and their
        weights; the latest offer replaces any earlier one. Never blocks: while the child copies an offer, a new one
        is dropped.
        """
        ch = self._ch
        if ch.k == 0 or not ch.lock.acquire(block=False):
            return
        try:
            R = np.asarray(rays, dtype=float)[:, : ch.k]
            w = np.asarray(weights, dtype=float)[: R.shape[1]]
            buf = np.frombuffer(ch.buf, dtype=float)
            buf[: R.size] = R.ravel()
            buf[ch.n * ch.k: ch.n * ch.k + w.size] = w
            ch.cols.value = R.shape[1]
            ch.seq.value += 1
        finally:
            ch.lock.release()

    def has_value(self) -> bool:
        """Whether the process has reported a valid value yet (without waiting or stopping it)."""
        return self._ch.has_value()

    def result(self, until: float = math.inf) -> MomentBound | None:
        """The best bound the process reported, waiting at most until its deadline + 0.5 s and until ``until``.

        The process is stopped first. None if it reported no valid value (:attr:`error` says why). The moment bound's
        value may be ``-inf`` when only the capped dual reported (:attr:`cap_value`: its value, ``-inf`` if none).
        """
        ch = self._ch
        if not self._closed:  # the child exits right after its last report
            self._proc.join(timeout=max(min(self.deadline + 0.5, until) - time.perf_counter(), 0.0))
        self.close()
        rounds, relaxed, value, self.cap_value = (float(v) for v in ch.out)
        if not ch.has_value():  # a child that ended says why; one that was stopped did not end
            self.error = ch.err.value.decode("utf-8", "replace") or "no result by the deadline"
            return None
        if ch.err.value:  # an error after a valid value: the value stands
            self.error = ch.err.value.decode("utf-8", "replace")
        return MomentBound(value, relaxed, int(rounds), "background")

    def close(self) -> None:
        """Stop the process and release its resources (idempotent)."""
        if self._closed:
            return
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(timeout=1.0)
            if self._proc.is_alive():  # pragma: no cover - SIGTERM is default in the child
                self._proc.kill()
        self._proc.join(timeout=1.0)
        if not self._proc.is_alive():
            self._proc.close()  # its sentinel pipe
            self._closed = True
