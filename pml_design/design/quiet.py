"""Solvers silent at their own level: stdout belongs to the caller's result.

Every solver the designs call is silenced by its own option (HiGHS ``output_flag=False``, Clarabel
``verbose=False``, cvxpy ``verbose=False``, SciPy's ``linprog`` without ``disp``). One message escapes the
options: highspy prints its banner ("Running HiGHS … Copyright …") from C++ to file descriptor 1 when the first
``highspy.Highs()`` of the process is constructed, before any option can be set. :func:`new_highs` (used for
every ``Highs`` object of the library) and :func:`silent_solve` (around cvxpy solves, whose HiGHS interface
constructs its own ``Highs``) construct that first object with the C-level descriptor 1 pointed at ``os.devnull``
(:func:`c_stdout_silenced`, ``os.dup``/``os.dup2`` under a lock); later constructions print nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["c_stdout_silenced", "new_highs", "silence_highs_banner", "silent_solve"]

_LOCK = threading.Lock()
_BANNER_DONE = False


@contextlib.contextmanager
def c_stdout_silenced() -> Iterator[None]:
    """Point the C-level file descriptor 1 at ``os.devnull`` for the duration (thread-safe: one at a time).

    Python's ``sys.stdout`` is flushed first, so nothing the caller printed before is lost or reordered. Output
    that another thread writes to descriptor 1 meanwhile is discarded too (the window is one solver call).

    Implements: the silence rule of ``docs/design.md`` §12 (stdout belongs to the caller; module docstring).

    Yields
    ------
    None
        Descriptor 1 is restored on exit (also on an exception).
    """
    with _LOCK:
        try:
            sys.stdout.flush()
        except (AttributeError, ValueError, OSError):  # pragma: no cover - a closed or odd sys.stdout
            pass
        try:
            saved = os.dup(1)
        except OSError:  # pragma: no cover - no descriptor 1 (e.g. a daemon): nothing to protect
            yield
            return
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, 1)
            finally:
                os.close(devnull)
            yield
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def silence_highs_banner() -> None:
    """Construct the process's first ``highspy.Highs()`` with descriptor 1 silenced (highspy prints its banner once)."""
    global _BANNER_DONE
    if _BANNER_DONE:
        return
    import highspy  # noqa: PLC0415

    with c_stdout_silenced():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    _BANNER_DONE = True


def new_highs() -> object:
    """A ``highspy.Highs`` object with ``output_flag=False``, constructed without the banner on stdout.

    Implements: the silence rule of ``docs/design.md`` §12 (module docstring).

    Returns
    -------
    highspy.Highs
        A fresh solver object (the banner, if not yet printed, went to ``os.devnull``).
    """
    import highspy  # noqa: PLC0415

    silence_highs_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def silent_solve(prob: object, **kwargs: object) -> object:
    """``prob.solve(verbose=False, **kwargs)`` for a cvxpy problem, with the HiGHS banner kept off stdout.

    Implements: the silence rule of ``docs/design.md`` §12 (module docstring).

    Parameters
    ----------
    prob : cvxpy.Problem
        The problem to solve.
    **kwargs
        Passed to ``prob.solve`` (``verbose`` defaults to False; ``solver="HIGHS"`` silences the banner first).

    Returns
    -------
    object
        What ``prob.solve`` returns (the optimal value).
    """
    if str(kwargs.get("solver", "")).upper() == "HIGHS":
        silence_highs_banner()
    kwargs.setdefault("verbose", False)
    try:
        return prob.solve(**kwargs)  # type: ignore[attr-defined]
    except TypeError as exc:  # a solver_options key the solver does not know (a review: SCS's own TypeError)
        bad = [k for k in kwargs if k not in ("solver", "verbose") and f"'{k}'" in str(exc)]
        if not bad:
            raise
        raise ValueError(f"solver_options key(s) {bad} are not options of solver {kwargs.get('solver')!r}: "
                         f"{exc}") from None
