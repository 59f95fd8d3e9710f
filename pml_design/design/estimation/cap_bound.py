"""A valid lower bound at every alphabet size from one parameter: the capped coordinate dual (docs/design.md §7.6).

Implements: a family of multipliers of the coordinate relaxation's Lagrangian dual (docs/design.md §7.2, a
relaxation of core paper eq. (9) with the A-optimal estimation criterion), priced by the mass-cell branch and bound
of :mod:`.bound_cells`. For every normalised ray ``r`` of ``K(ε, 𝒫)`` (``π·r = 1``) and every symbol,
``0 ≤ r_x ≤ T_x`` (the caps of :func:`.bound._box_top`). For caps ``1 < t_x`` take

    g_x = c_x/(t_x − 1)²,   ν_x = g_x t_x,   c = (1 − π)²;

then the dual ``Σ_x (2√(c_x g_x) + g_x) − ν·1 − max_r (Σ_x g_x r_x² − ν·r)`` reads

    OPT ≥ S(t) − φ(t),   S(t) = Σ_x c_x/(t_x − 1),   φ(t) = max_r Σ_x c_x r_x (r_x − t_x)/(t_x − 1)².

At ``t = T`` every term of φ is ≤ 0, so ``Σ_x c_x/(T_x − 1)`` is a valid bound with no pricing at all
(:func:`box_coordinate_bound`; with ``T_x ≤ 1/π_x`` it is never below the data-processing bound ``1 − ‖π‖²``).
Smaller caps raise ``S`` and are paid for by the rays that exceed them. The caps ``t_x = min(T_x, a)`` with one
common ``a`` are searched (from ``a − 1 = 0.72 (max T − 1)``, then golden section in ``log(a − 1)`` with short
pricings), and the best ``a`` is priced until the deadline. Every value returned is valid: the dual holds for every ``(g, ν)``, φ is an upper bound (branch and bound
stopped anywhere, plus a rounding margin), and the scale of ``(g, ν)`` is the best one in closed form (the dual is
homogeneous). The diagonal-moment dual (:func:`.moment_bound.moment_dual_value`, never below this one for ``g ≥ 0``)
values the final point too, up to :data:`MOMENT_MAX_N` symbols.

Why one parameter: the relaxed masters of :mod:`.coordinate_bound` and :mod:`.moment_bound` optimise all 2N
multipliers by cutting planes, and above N ≈ 150 they get few rounds (Zipf 300, ε = 1, 60 s on a second CPU: 155
against the design's 404); the one-parameter family gets 258 in 20 s there, and 827 against 2 045 at N = 1 000
where nothing else gave more than the data-processing bound (docs/design.md §7.6). Caps per group of symbols (six groups by log π, steered
by the rays found) gave no more (265.0 against 264.7). Below N ≈ 150 the relaxed masters are stronger.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..._validation import check_positive_real
from ...uncertainty import UncertaintySet
from .affordable import cached_machine_factor
from .bound import _box_top
from .coordinate_bound import _checked_prior, _dual_value, _separable_max
from .moment_bound import frame, moment_dual_value
from .symmetry import symbol_classes

__all__ = ["CapBound", "box_coordinate_bound", "box_log_det_bound", "cap_affordable", "cap_bound"]

#: Share of the time given to the search over the common cap (the rest prices the best cap found), and the number of
#: golden-section steps (each one pricing).
SEARCH_SHARE: float = 0.5
SEARCH_STEPS: int = 8
#: The first cap priced, ``a − 1 = GUESS · (max T − 1)``, and the search's interval for ``a − 1``, from
#: ``LOW_FRACTION`` to ``HIGH_FRACTION`` times ``max T − 1`` (the best caps met: 0.68–0.82 of it, Zipf 300 / 1 000,
#: ε = 0.5 … 4). Below SEARCH_MIN_SECONDS only the first cap is priced, until the deadline.
GUESS: float = 0.72
LOW_FRACTION: float = 0.45
HIGH_FRACTION: float = 0.95
SEARCH_MIN_SECONDS: float = 10.0
#: The diagonal-moment dual also values the final point up to this many symbols (an N × N eigendecomposition).
MOMENT_MAX_N: int = 1200
#: Every point (caps constant on classes of interchangeable symbols) is also valued by the moment dual on those
#: classes (docs/design.md §7.7: a (G − 1)-square eigenproblem, at every N). 20 s, Zipf 1 000: ε = 1 709 → 776 and
#: 863 → 898 (two pairs), ε = 4 equal; Zipf 3 000 (30 s), ε = 1 1 974.9 → 1 984.7.
CLASS_MOMENT: bool = True
#: Relative tolerance of each pricing's branch and bound (against ``S``).
PRICING_RTOL: float = 1e-4
#: A pricing's first round (its cells' first bounds and ray climbs) ignores its deadline: about this many seconds
#: times N² (measured, one core: 2.5 s at N = 3 000, ~15 s at N = 10 000); :func:`cap_affordable` asks for three.
PRICING_SECONDS_PER_N2: float = 2.5e-7


@dataclass(frozen=True)
class CapBound:
    """The result of :func:`cap_bound`.

    Attributes
    ----------
    value : float
        A valid lower bound on the optimal A error ``tr F⁻¹ − ‖π‖²`` over ``K(ε, 𝒫)`` (``-inf`` when the set has no
        caps).
    cap : float
        The common cap ``a`` of the best point (``inf``: the caps ``T`` alone, :func:`box_coordinate_bound`).
    pricings : int
        Branch and bounds run.
    method : str
        ``"box"`` (no pricing), ``"cells"`` or ``"enumeration"`` (how the best point's maximum was bounded), or
        ``"none"``.
    """

    value: float
    cap: float
    pricings: int
    method: str


def _caps(uset: UncertaintySet, epsilon: float, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(π, T)``: the prior after the checks every bound here needs (ε finite and > 0; the prior as
    :func:`.coordinate_bound.coordinate_bound` checks it), and the caps of :func:`.bound._box_top`."""
    check_positive_real(epsilon, "epsilon")
    pi = _checked_prior(uset, prior)
    return pi, _box_top(uset, epsilon, pi)


def _box_value(pi: np.ndarray, T: np.ndarray) -> float:
    """:func:`box_coordinate_bound` from the checked prior and its caps."""
    if not np.all(np.isfinite(T)) or np.any(T <= 1.0):
        return -math.inf
    value = float(np.sum((1.0 - pi) ** 2 / (T - 1.0)))
    return value * (1.0 - 1e-12) - 1e-300


def cap_affordable(n: int, seconds: float) -> bool:
    """Whether :func:`cap_bound` on ``n`` symbols fits ``seconds`` (three first pricing rounds, at least 1 s), the
    pricing's time scaled to this machine (:func:`.affordable.cached_machine_factor`, measured only where it could
    decide).

    Parameters
    ----------
    n : int
        Alphabet size.
    seconds : float
        The time there is.

    Returns
    -------
    bool
    """
    need = 3.0 * PRICING_SECONDS_PER_N2 * n * n
    if seconds < max(1.0, 0.5 * need):  # machine_factor() is at least 0.5
        return False
    return need < 0.1 or seconds >= max(1.0, need * cached_machine_factor())  # (< 0.1: only a 10× slower machine)


def box_coordinate_bound(uset: UncertaintySet, epsilon: float, prior: np.ndarray) -> float:
    """``Σ_x (1 − π_x)²/(T_x − 1)``: a valid lower bound on the optimal A error with no pricing (module docstring).

    Implements: the coordinate relaxation's dual (docs/design.md §7.2, §7.6) at the caps ``T`` of
    :func:`.bound._box_top`, where the pricing maximum is ≤ 0: ``F_xx = E r_x² ≤ T_x E r_x = T_x``, and
    ``(F⁻¹)_xx − π_x² ≥ (1 − π_x)²/(F_xx − 1)``.

    Parameters
    ----------
    uset : UncertaintySet
        The set the mechanisms are ε-PML for.
    epsilon : float
        ε > 0.
    prior : numpy.ndarray, shape (N,)
        The distribution the error is evaluated at (positive, summing to 1).

    Returns
    -------
    float
        The bound, rounded down; ``-inf`` when a cap is not finite.

    Raises
    ------
    ValueError
        For ε not finite and > 0, or a prior that is not a positive distribution over the set's symbols.
    """
    return _box_value(*_caps(uset, epsilon, prior))


def box_log_det_bound(uset: UncertaintySet, epsilon: float, prior: np.ndarray) -> float:
    """``−Σ_x log T_x``: a valid lower bound on the optimal D criterion ``log det F⁻¹`` with no pricing.

    Implements: docs/design.md §7.6 (the D criterion): Hadamard's inequality ``det F ≤ Π_x F_xx`` for ``F ⪰ 0`` and
    ``F_xx = E r_x² ≤ T_x E r_x = T_x`` (the caps of :func:`.bound._box_top`); with ``T_x ≤ 1/π_x`` never below the
    data-processing bound ``Σ log π_x``.

    Parameters
    ----------
    uset : UncertaintySet
        The set the mechanisms are ε-PML for.
    epsilon : float
        ε > 0.
    prior : numpy.ndarray, shape (N,)
        The distribution the criterion is evaluated at (positive, summing to 1).

    Returns
    -------
    float
        The bound, rounded down; ``-inf`` when a cap is not finite.

    Raises
    ------
    ValueError
        As :func:`box_coordinate_bound`.
    """
    _, T = _caps(uset, epsilon, prior)
    if not np.all(np.isfinite(T)) or np.any(T <= 0.0):
        return -math.inf
    value = -float(np.sum(np.log(T)))
    return value - 1e-12 * max(1.0, abs(value))


def cap_bound(
    uset: UncertaintySet,
    epsilon: float,
    prior: np.ndarray,
    *,
    deadline: float,
    on_best: Callable[[CapBound], None] | None = None,
) -> CapBound:
    """A valid lower bound on the optimal A error ``tr F⁻¹ − ‖π‖²`` over ``K(ε, 𝒫)`` (module docstring).

    Implements: the capped coordinate dual (docs/design.md §7.6): the caps ``t_x = min(T_x, a)``, ``a`` by golden
    section with short branch and bounds, then the best ``a`` priced until the deadline.

    Parameters
    ----------
    uset : UncertaintySet
        The set the mechanisms are ε-PML for (an ℓ1 ball, the simplex or a fixed prior are priced by the mass cells;
        any set with finite caps gets at least :func:`box_coordinate_bound`).
    epsilon : float
        ε > 0.
    prior : numpy.ndarray, shape (N,)
        The distribution the error is evaluated at (positive, summing to 1).
    deadline : float
        ``time.perf_counter()`` value by which it returns (the value is valid at every step), give or take one pricing
        round's overrun (about ``PRICING_SECONDS_PER_N2 · N²``: its first round ignores the deadline). When
        :func:`cap_affordable` says the time is too short, no pricing runs and the box bound is returned at once.
    on_best : callable, optional
        Called with the bound so far each time a priced point raises it (not for the box bound, which needs no
        pricing: a caller waiting for a priced value is not told early).

    Returns
    -------
    CapBound

    Raises
    ------
    ValueError
        As :func:`box_coordinate_bound`.
    """
    pi, T = _caps(uset, epsilon, prior)
    best = CapBound(_box_value(pi, T), math.inf, 0, "box")
    if not math.isfinite(best.value) or not cap_affordable(pi.size, deadline - time.perf_counter()):
        return best
    c = (1.0 - pi) ** 2
    classes = symbol_classes(uset, pi) if CLASS_MOMENT else None
    if classes is not None and not classes.reduces:
        classes = None  # nothing to reduce: the N × N eigendecomposition at the final point, as before
    r2_max = float(T @ T) if np.all(np.isfinite(T)) else math.inf
    t0 = time.perf_counter()
    step_s = SEARCH_SHARE * max(deadline - t0, 0.0) / (SEARCH_STEPS + 2)
    # z: the best searched point; over: a pricing's time beyond its budget (its first round and rays ignore the
    # deadline: ~2.5 s at N = 3 000), measured on each pricing and kept free before the deadline
    state = {"best": best, "pricings": 0, "z": None, "zv": -math.inf, "over": 0.0}

    def value(z: float, until: float, final: bool = False) -> float:
        """The valid dual value at ``a = 1 + e^z``, priced until ``until``."""
        start = time.perf_counter()
        t = np.minimum(T, 1.0 + math.exp(z))
        g = c / (t - 1.0) ** 2
        nu = g * t
        phi, _, how = _separable_max(uset, epsilon, pi, g, nu, until, PRICING_RTOL * float(np.sum(c / (t - 1.0))))
        state["pricings"] += 1
        state["over"] = max(state["over"], time.perf_counter() - max(until, start))
        v = _dual_value(c, g, nu, phi) if math.isfinite(phi) else -math.inf
        if v > state["zv"]:  # (the search follows the coordinate value: searching the moment value was worse)
            state["z"], state["zv"] = z, v
        m = classes.dual_value(g, nu, phi, r2_max) if classes is not None and math.isfinite(phi) else None
        if m is not None:  # the moment dual at every point and N, from the classes (docs/design.md §7.7)
            v = max(v, m)
        elif final and math.isfinite(phi) and pi.size <= MOMENT_MAX_N:
            v = max(v, moment_dual_value(g, nu, pi, phi, A0=frame(pi)))
        if v > state["best"].value:
            state["best"] = CapBound(float(v), float(1.0 + math.exp(z)), state["pricings"], how)
            if on_best is not None:
                on_best(state["best"])
        return v

    span = float(T.max()) - 1.0
    z0 = math.log(GUESS * span)
    if deadline - t0 < SEARCH_MIN_SECONDS:  # too short to search: the usual best cap, priced until the deadline
        value(z0, deadline - state["over"], final=True)
    else:
        value(z0, time.perf_counter() + step_s)
        lo, hi = math.log(LOW_FRACTION * span), math.log(HIGH_FRACTION * span)
        ratio = (math.sqrt(5.0) - 1.0) / 2.0
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        fa = value(a, time.perf_counter() + step_s)
        fb = value(b, time.perf_counter() + step_s)
        for _ in range(SEARCH_STEPS - 3):
            if time.perf_counter() + step_s + 2.0 * state["over"] > deadline:
                break
            if fa > fb:
                hi, b, fb = b, a, fa
                a = hi - ratio * (hi - lo)
                fa = value(a, time.perf_counter() + step_s)
            else:
                lo, a, fa = a, b, fb
                b = lo + ratio * (hi - lo)
                fb = value(b, time.perf_counter() + step_s)
        if time.perf_counter() + 2.0 * state["over"] < deadline and state["z"] is not None:
            value(state["z"], deadline - state["over"], final=True)
    out = state["best"]
    return CapBound(out.value, out.cap, state["pricings"], out.method)
