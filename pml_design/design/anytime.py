"""Anytime conventions of the column-generation designers: time limit, progress bar, gap warning.

Implements: the anytime contract of ``docs/design.md`` §5 shared by ``method="scalable"`` (:mod:`.scalable`,
column generation on [15, Theorem 6]'s extreme-ray LP) and the estimation design (:mod:`.estimation`):
the whole call honours ``solver_options={"time_limit": ...}`` (:data:`DEFAULT_TIME_LIMIT` seconds by
default), a progress bar shows the current value, the bound and their relative gap, and a
:class:`~pml_design.design.result.PMLDesignWarning` is emitted when the relative gap left at the time limit
exceeds :data:`WARN_GAP`. The result is certified either way; only the optimality proof may be missing.
"""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from .._warn import outside_stacklevel
from .result import OPTIMAL_RTOL, PMLDesignWarning

__all__ = ["DEFAULT_TIME_LIMIT", "PROOF_RTOL", "WARN_GAP", "cg_threshold", "warn_result_gap"]

#: Default wall-clock limit (seconds) of ``method="scalable"`` (``solver_options={"time_limit": ...}``).
DEFAULT_TIME_LIMIT: float = 60.0
#: Relative gap above which a :class:`PMLDesignWarning` is emitted.
WARN_GAP: float = 0.01
#: Relative gap at which column generation counts as proven optimal (the rule of every method:
#: :func:`~pml_design.design.result.proven_optimal`).
PROOF_RTOL: float = OPTIMAL_RTOL


def cg_threshold(value: float, rtol: float = PROOF_RTOL) -> float:
    """Smallest reduced value a column generation acts on: ``rtol·max(|value|, 1e-6)`` (relative, floor 1e-12).

    Relative so that a small optimum (a χ² information of 1e-9) is still sought to ``rtol`` of itself; the floor
    keeps the search above the master LP's rounding.

    Implements: the stopping rule of the anytime contract (``docs/design.md`` §5; module docstring).

    Parameters
    ----------
    value : float
        The current value of the master LP.
    rtol : float, default PROOF_RTOL
        Relative tolerance.

    Returns
    -------
    float
        ``rtol · max(|value|, 1e-6)``: reduced values at or below it are not acted on.
    """
    return float(rtol * max(abs(value), 1e-6))


def _check_time_limit(time_limit: object) -> float:
    """``solver_options["time_limit"]`` as positive float seconds (``TypeError``/``ValueError`` naming it)."""
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float, np.integer, np.floating)):
        raise TypeError(f"solver_options['time_limit'] must be a number of seconds, got {time_limit!r}")
    t = float(time_limit)
    if not t > 0 or math.isnan(t):
        raise ValueError(f"solver_options['time_limit'] must be > 0 seconds, got {time_limit!r}")
    return t


def _default_progress(progress: bool | None) -> bool:
    """``progress=None`` means: show the bar when stderr is a terminal."""
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    if not isinstance(progress, (bool, np.bool_)):  # (a review: progress=3 was accepted)
        raise TypeError(f"solver_options['progress'] must be True, False or None, got {progress!r}")
    return bool(progress)


def _progress_update(bar, value: float, bound: float) -> None:
    """One iteration on a column-generation progress bar: value, bound and relative gap ``|bound − value|/|bound|``."""
    bar.update(1)
    gap = abs(bound - value) / max(abs(bound), 1e-300) if np.isfinite(bound) else np.inf
    bar.set_postfix(value=f"{value:.6g}", bound=f"{bound:.6g}", gap=f"{gap:.2e}", refresh=False)



#: A ``detail`` holding this says that the gap is at its bound's floor (the frequency-estimation design's
#: diagonal-moment relaxation): the gap warning then gives no advice to raise the time limit, which would say the
#: opposite (a review: "more time ... will not lower the gap much; ... raise --time-limit to reduce the gap").
NO_MORE_TIME: str = "will not lower the gap much"


def _warn_gap(rel: float, what: str, detail: str, time_limit: float, hint: str = "", stacklevel: int = 4) -> None:
    """Emit a :class:`PMLDesignWarning` when the relative gap ``rel`` exceeds :data:`WARN_GAP` or is unknown.

    The message reads "the ``what`` design is proven within ``rel`` of optimal only (``detail``; time limit …);
    raise solver_options={'time_limit': ...} ``hint`` to reduce the gap" (without that advice when ``detail`` says
    :data:`NO_MORE_TIME`), or, for an infinite or ``nan`` gap, that no bound on the optimum was proven.
    ``stacklevel`` counts from the caller of this helper's caller (default: the user's call of
    :func:`~pml_design.design.design`).
    """
    if not rel <= WARN_GAP:  # above 1 %, inf (no bound) or nan (unknown)
        unknown = not math.isfinite(rel)
        if unknown:
            head = f"no bound on the optimum was proven for the {what} design, so its distance to optimal is unknown"
        elif rel < 10:
            head = f"the {what} design is proven within {rel:.2%} of optimal only"
        elif rel < 1e12:  # a near-zero value (e.g. the trivial design when nothing better fitted the time limit)
            head = f"the {what} design is far from optimal: its proven bound is {rel:.3g} times its value away"
        else:  # a value of 0 (a trial: "1e+300 times its value away")
            head = f"the {what} design is far from optimal: its value is 0 or nearly, its proven bound is not"
        if math.isfinite(time_limit) and not unknown and NO_MORE_TIME in detail:  # one advice, not two opposite
            msg = f"{head} ({detail}; time limit {time_limit:g} s)"
        elif math.isfinite(time_limit):
            msg = (f"{head} ({detail}; time limit {time_limit:g} s); "
                   f"raise solver_options={{'time_limit': ...}}{hint} to {'prove a bound' if unknown else 'reduce the gap'}")
        else:  # no limit was set: the solver itself stopped short
            msg = (f"{head} ({detail}; no time limit was set, the solver stopped short of optimality); try another "
                   "solver (solver=...) or a tighter solver_options={'tol': ...} to reduce the gap")
        warnings.warn(PMLDesignWarning(msg), stacklevel=max(stacklevel, outside_stacklevel()))


def warn_result_gap(res: object, time_limit: float, hint: str = "", stacklevel: int = 4, detail: str = "") -> None:
    """:func:`_warn_gap` for a :class:`~pml_design.design.result.DesignResult`: its :attr:`relative_gap`, value and bound.

    The one gap warning of every method (linear, convex, exact, column generation, frequency estimation);
    ``stacklevel`` as for :func:`_warn_gap` (counted from the caller of this helper's caller); ``detail`` is added
    to the parenthesis that states the value and the bound.

    Implements: the gap warning of the anytime contract (``docs/design.md`` §5; module docstring).

    Parameters
    ----------
    res : DesignResult
        The result; its ``relative_gap``, ``utility_name``, ``method``, ``utility``, ``bound`` and ``sense``
        (``"min"`` reads as an error with a lower bound, otherwise a utility with an upper bound) are used.
    time_limit : float
        The time limit in seconds (``inf`` when none was set), quoted in the warning.
    hint : str, default ""
        Added after ``solver_options={'time_limit': ...}`` in the advice of the message.
    stacklevel : int, default 4
        Passed on (plus one) to :func:`_warn_gap`.
    detail : str, default ""
        Extra text for the parenthesis of the message.
    """
    if getattr(res, "optimal", False):
        # proven optimal (result.proven_optimal: relative gap, or the absolute floor in the utility's own scale, so
        # a gain scaled by 1e-13 far from its bound is not optimal and warns): no "far from optimal" beside it (ε =
        # 1e-12 gave optimal=True beside "1.78e+284 times its value away"; a review: value 0 and bound 3.6e-15 for
        # a distortion gain at ε = log N, optimal=True beside a warning)
        return
    kind = "error" if getattr(res, "sense", "max") == "min" else "utility"
    side = "lower" if getattr(res, "sense", "max") == "min" else "upper"
    detail = (f"method {res.method!r}, {kind} {res.utility:.6g}, proven {side} bound "  # type: ignore[attr-defined]
              f"{res.bound:.6g}" + (f", {detail}" if detail else ""))  # type: ignore[attr-defined]
    _warn_gap(res.relative_gap, res.utility_name, detail, time_limit, hint, stacklevel=stacklevel + 1)  # type: ignore[attr-defined]
