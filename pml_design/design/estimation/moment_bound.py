"""A third valid lower bound for the A criterion: the diagonal-moment relaxation (docs/design.md §7.3).

Implements: a semidefinite relaxation of core paper eq. (9) with the A-optimal estimation criterion. A design is a
probability measure μ over normalised rays (``π·r = 1``, ``E_μ r = 1``) with Fisher information ``F = E_μ rrᵀ`` at π,
and its error is ``tr F⁻¹ − ‖π‖²``. Keep of ``F`` only what is cheap to price: ``Fπ = E r = 1``, ``F ⪰ 0`` and its
*diagonal* ``E_μ r∘r``; the off-diagonal entries are free, but one X serves every symbol (the coordinate relaxation
of :mod:`.coordinate_bound` lets each symbol choose its own). Writing ``X = 11ᵀ + BŶBᵀ`` (B an orthonormal basis of
``π^⊥``, :func:`frame`) removes ``Xπ = 1``, and the Lagrangian dual is valid for every g, ν with
``Q = A₀ᵀ Diag(g) A₀ ⪰ 0``:

    OPT ≥ 2 tr Q^½ + g·1 − ν·1 − max_r (Σ_x g_x r_x² − ν·r).

Its pricing is the *same separable maximum* as the coordinate relaxation's: enumeration, the mass-cell branch and
bound or the box. On enumerated balls the coordinate relaxation's 10–29 % loss falls to 0.1–5.6 %.

The multipliers come from the relaxed master over a pool of rays, which is the dual above with the pool's maximum.
It is solved by a primal–dual interior-point method of its own: 2N unknowns, the Hessian of ``2 tr Q^½`` from one
eigendecomposition by Daleckii–Krein divided differences, and ``g ≥ 0`` (see :data:`.moment_master.G_FLOOR`). Rounds add the rays
the branch and bound finds. The multipliers only steer: every value returned comes from an eigendecomposition with
a backward-error margin and an upper bound of the pricing maximum, so it is valid whatever the multipliers.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...uncertainty import UncertaintySet
from .bound import _ball_form, _box_top
from .coordinate_bound import MIN_POOL, ROUND_SECONDS, _separable_max, _spectral_dual, _validated_rays
from .moment_master import _class_master, _master, _q_matrix, _t_derivatives  # noqa: F401 (_t_derivatives: tests)
from .rank_one import rank_one_max
from .symmetry import symbol_classes

__all__ = ["MomentBound", "frame", "moment_bound", "moment_dual", "moment_dual_value"]

#: Share of the time kept for the final branch and bound (the rounds before it are short).
FINAL_SHARE: float = 0.35
#: Weight of the best multipliers so far in the point priced each round (Wentges smoothing; the coordinate bound
#: uses 0.5). On captured 30 s designs, 2 s: Adult ε = 0.5 84.4 → 86.7 (gap 12.3 → 10.0 %, three runs each), Zipf 50
#: ε = 1 8.9–11.6 → 8.0–8.2 %; ε = 4 within the run-to-run noise.
SMOOTHING: float = 0.8
#: The final pricing's long branch and bounds go to at most this many of the rounds' best multipliers, in turn.
FINAL_POINTS: int = 4
#: Rays kept in the relaxed master's pool: max(MOMENT_POOL_PER_SYMBOL·N, MIN_POOL) (its optimum needs at most 2N).
MOMENT_POOL_PER_SYMBOL: int = 8
#: The rounds' short pricing also bounds the π-mass of U (π ≠ P̂; the final pricing always does). 30 s runs, two each:
#: Adult ε = 4 proven gap 14.7 / 15.1 % against 19.7 / 17.2 % without; Zipf 100 ε = 1, Zipf 50 ε = 4, Adult ε = 0.5
#: and 2 within the noise.
TIGHT_ROUNDS: bool = True
#: Rays that entered the pool in the last this many rounds are kept whatever their weight. The relaxed master's
#: optimum is often a face: the rays found at one of its points cut that point, the master moves along the face
#: (same value) to where they are slack (weight ~1e-12), pruning by weight dropped them, and the master went back.
#: On an Adult ε = 4 design it alternated between two points for 80 rounds at 1.3743, rays violated by 37 found
#: again every other round.
KEEP_ROUNDS: int = 8
#: Keep the whole row of the heaviest symbol's second moments, not only the diagonal (the arrow relaxation,
#: docs/design.md §7.3): its pricing stays a branch and bound on mass cells once that symbol is fixed.
ARROW: bool = False
#: Keep, beside the diagonal, one rank-one moment ``dᵀXd = E_μ (d·r)²`` along the eigenvector ``d`` of the smallest
#: eigenvalue of the design's Fisher information (docs/design.md §7.3, "a rank-one moment"): dual matrix
#: ``Diag(g) + s ddᵀ``, s of either sign, priced by :func:`.rank_one.rank_one_max`. Not with ARROW.
RANK_ONE: bool = False
#: A round whose pricing finds no ray that cuts the master, at the master's own point, prices that point again with
#: ESCALATION times the time, up to ROUND_SECONDS_MAX, before the rounds end. Captured Zipf 300, ε = 4 pool (30 s): the
#: 0.1 s pricings found no cut after 49 rounds, the final pricing left the last master point at 10.0 with a branch
#: and bound bound of 8.1, while 2 s of pricing there finds rays worth 7.17: the master lacked cuts, not the pricing.
#: With it (28 s on pools captured from the background bound): Zipf 300 ε = 4 9.93 → 11.04, ε = 1 239.5 → 263.0,
#: Zipf 100 ε = 2 26.21 → 27.59; going back to short rounds after each cut found was worse on all three (10.45, 260.0,
#: 27.05): the short pricings had stopped finding cuts for good.
ROUND_SECONDS_MAX: float = 2.0
ESCALATION: float = 4.0
#: Solve the relaxed master (diagonal relaxation) on the classes of interchangeable symbols, with g and ν constant on
#: each (docs/design.md §7.7): lossless for the relaxation, 2G unknowns instead of 2N, and each pool ray cuts with all
#: its permutations within the classes.
SYMMETRIC: bool = True


@dataclass(frozen=True)
class MomentBound:
    """``value ≤`` the optimal A error ``tr F⁻¹ − ‖π‖²`` over the cone; ``relaxed`` estimates the relaxed master's
    optimum over its last pool (a ceiling of this bound, not a bound); ``pool`` holds that pool's rays of positive
    weight (the cuts a later run may start from, ``moment_bound(..., keep=...)``)."""

    value: float
    relaxed: float
    rounds: int
    method: str
    pool: np.ndarray | None = field(default=None, repr=False, compare=False)


def frame(pi: np.ndarray) -> np.ndarray:
    """``A₀ = B G^½`` (N × (N−1)): ``B`` an orthonormal basis of ``π^⊥``, ``G = I + ‖π‖² bbᵀ``, ``b = Bᵀ1``.

    Implements: the elimination of ``Xπ = 1`` (docs/design.md §7.3): every ``X ⪰ 0`` with ``Xπ = 1`` is
    ``11ᵀ + BŶBᵀ`` with ``Ŷ ⪰ 0``, and then ``tr X⁻¹ − ‖π‖² = tr Ŷ⁻¹G`` and ``diag X = 1 + diag(BŶBᵀ)``.

    Parameters
    ----------
    pi : numpy.ndarray, shape (N,)
        The prior.

    Returns
    -------
    numpy.ndarray, shape (N, N − 1)
        ``A₀``; its rows ``a_x`` give ``Q = Σ_x g_x a_x a_xᵀ``.
    """
    n = pi.size
    Q, _ = np.linalg.qr(np.column_stack([pi, np.eye(n)[:, : n - 1]]))
    B = Q[:, 1:n]  # orthonormal, orthogonal to π
    b = B.T @ np.ones(n)
    bb = float(b @ b)
    c = (math.sqrt(1.0 + float(pi @ pi) * bb) - 1.0) / bb if bb > 0 else 0.0
    return B + c * np.outer(B @ b, b)  # B (I + c bbᵀ), (I + c bbᵀ)² = G


def moment_dual_value(g: np.ndarray, nu: np.ndarray, prior: np.ndarray, phi_max: float,
                      r2_max: float = math.inf, A0: np.ndarray | None = None, y: np.ndarray | None = None,
                      h: int | None = None, d: np.ndarray | None = None, s: float = 0.0) -> float:
    """The dual value ``2 tr (A₀ᵀ Diag(g) A₀)^½ + g·1 − ν·1 − φ`` of the module docstring, rounded down.

    Implements: the Lagrangian dual of the diagonal-moment relaxation (docs/design.md §7.3). ``phi_max`` must be an
    upper bound of ``max_r Σ g_x r_x² − ν·r`` over the normalised rays; then the value is a valid lower bound of
    the optimal A error ``tr F⁻¹ − ‖π‖²``. When ``Q = A₀ᵀ Diag(g) A₀`` is not positive definite beyond its
    eigenvalues' error, ``g`` is raised by δ (``Q`` grows by ``δG ⪰ δI``) and the pricing maximum by
    ``δ·r2_max`` (``r2_max ≥ ‖r‖²`` on every normalised ray); ``-inf`` when that is not finite.

    With ``y`` (``y_h = 0``) the dual matrix is the arrow ``Z = Diag(g) + e_h yᵀ + y e_hᵀ`` (docs/design.md §7.3,
    "the arrow row"): the value is ``2 tr (A₀ᵀ Z A₀)^½ + 1ᵀZ1 − ν·1 − φ`` and ``phi_max`` must bound
    ``max_r rᵀZr − ν·r``. With ``d`` and s it is ``Z = Diag(g) + s ddᵀ`` (the rank-one moment), likewise.

    Parameters
    ----------
    g, nu : numpy.ndarray, shape (N,)
        The diagonal and the linear multipliers.
    prior : numpy.ndarray, shape (N,)
        π.
    phi_max : float
        An upper bound of the pricing maximum at these multipliers.
    r2_max : float, default inf
        An upper bound of ``‖r‖²`` on the normalised rays (needed only when Q must be raised).
    A0 : numpy.ndarray, optional
        :func:`frame` of the prior (computed when not given).
    y, h : numpy.ndarray and int, optional
        The arrow row and its symbol.
    d, s : numpy.ndarray and float, optional
        The rank-one moment's direction and weight.

    Returns
    -------
    float
        A valid lower bound of the optimal A error, at the best scale of the point (``-inf`` when none).
    """
    pi = np.asarray(prior, dtype=float)
    A0 = frame(pi) if A0 is None else A0
    w = np.linalg.eigvalsh(_q_matrix(g, A0, y, h, d, s))
    zsum = float(g.sum()) + (2.0 * float(y.sum()) if y is not None else 0.0)  # 1ᵀZ1
    if d is not None:
        zsum += s * float(d.sum()) ** 2
    return _spectral_dual(w, None, pi.size, zsum, float(nu.sum()), phi_max, r2_max)


def moment_dual(prior: np.ndarray, uset: UncertaintySet,
                epsilon: float) -> Callable[[np.ndarray, np.ndarray, float], float]:
    """``(g, ν, φ) ↦`` :func:`moment_dual_value` for this prior and cone (the frame and ``r2_max`` computed once).

    Implements: the diagonal-moment dual of docs/design.md §7.3 as a second valuation of the coordinate
    relaxation's multipliers (:func:`.coordinate_bound.coordinate_bound`'s ``dual_value``).

    Parameters
    ----------
    prior : numpy.ndarray, shape (N,)
        π.
    uset : UncertaintySet
        The set (its box gives ``r2_max``).
    epsilon : float
        ε > 0.

    Returns
    -------
    callable
        ``value(g, ν, φ) -> float``.
    """
    pi = np.asarray(prior, dtype=float)
    A0, r2_max = _dual_setup(uset, epsilon, pi)

    def value(g: np.ndarray, nu: np.ndarray, phi: float) -> float:
        return moment_dual_value(g, nu, pi, phi, r2_max, A0)

    return value


def _direction(pi: np.ndarray, rays: np.ndarray, weights: np.ndarray | None,
               direction: np.ndarray | None) -> np.ndarray:
    """The rank-one moment's direction: ``direction`` (unit length), else the eigenvector of the smallest eigenvalue
    of ``F = Σ_k w_k r_k r_kᵀ`` over the usable rays, normalised (equal weights without ``weights``): the top
    eigenvector of ``F⁻²``, the criterion's gradient. On captured 30 s designs it halved the relaxation's floor over
    the design's rays (Zipf 50, ε = 4: 4.3 → 2.3 %; Adult ε = 4: 6.3 → 3.0 %; docs/design.md §7.3)."""
    if direction is not None:
        d = np.asarray(direction, dtype=float)
        if d.shape != pi.shape or not np.all(np.isfinite(d)) or not np.any(d):
            raise ValueError(f"direction must be a non-zero finite vector of length {pi.size}, got shape {d.shape}")
    else:
        R = np.asarray(rays, dtype=float).reshape(pi.size, -1)
        ok = (R.min(axis=0) >= 0) & (pi @ R > 0)
        w = np.ones(R.shape[1]) if weights is None else np.asarray(weights, dtype=float)
        R, w = R[:, ok] / (pi @ R[:, ok]), w[ok]
        d = np.linalg.eigh((R * w) @ R.T)[1][:, 0]  # the least-informed direction (F's smallest eigenvalue)
    return d / np.linalg.norm(d)


def _pricing(uset, epsilon, pi, g, nu, deadline, atol, tight, y, h, d, s, hint=None):
    """The pricing maximum of the dual point: separable (diagonal, arrow) or with the rank-one moment (``hint``: the
    master's pool, where a concave moment takes its first tangent)."""
    if d is None:
        return _separable_max(uset, epsilon, pi, g, nu, deadline, atol, tight, y, h)
    return rank_one_max(uset, epsilon, pi, g, nu, s, d, deadline, atol, tight, hint)


def _arrow_symbol(uset: UncertaintySet, pi: np.ndarray) -> int:
    """The symbol whose row the arrow relaxation keeps: the heaviest of the ball's centre (the cells' first
    branching item, :attr:`.bound_cells.BallCells.branch`), else the heaviest of π."""
    form = _ball_form(uset, pi)
    if form is not None and np.any(form[0] > 0):
        return int(np.argsort(-form[0], kind="stable")[0])
    return int(np.argmax(pi))


def _dual_setup(uset: UncertaintySet, epsilon: float, pi: np.ndarray):
    """The frame ``A₀`` and ``r2_max ≥ ‖r‖²`` on every normalised ray (``Σ top_x²``, inf without a box)."""
    top = _box_top(uset, epsilon, pi)
    return frame(pi), (float(top @ top) if np.all(np.isfinite(top)) else math.inf)


def moment_bound(
    uset: UncertaintySet,
    epsilon: float,
    prior: np.ndarray,
    rays: np.ndarray,
    *,
    deadline: float,
    rtol: float = 1e-3,
    weights: np.ndarray | None = None,
    on_best: Callable[[MomentBound], None] | None = None,
    keep: np.ndarray | None = None,
    direction: np.ndarray | None = None,
) -> MomentBound:
    """A valid lower bound on the optimal A error ``tr F⁻¹ − ‖π‖²`` over the cone ``K(ε, 𝒫)`` (module docstring).

    Implements: the diagonal-moment relaxation and its Lagrangian dual (docs/design.md §7.3), with the separable
    maximum bounded as in :func:`.coordinate_bound.coordinate_bound` (enumeration, mass cells, box).

    Parameters
    ----------
    uset : UncertaintySet
    epsilon : float
        ε > 0.
    prior : numpy.ndarray, shape (N,)
        The distribution the error is evaluated at (positive, summing to 1); rays are normalised to ``prior·r = 1``.
    rays : numpy.ndarray, shape (N, K)
        Cone points to start the relaxed master from (e.g. the design's columns); they only steer, and must
        identify every symbol.
    deadline : float
        ``time.perf_counter()`` value at which the refinement stops; the value returned is valid at every step.
    rtol : float, default 1e-3
        Stop when the bound is within ``rtol`` (relative) of the relaxed master's value.
    weights : numpy.ndarray, shape (K,), optional
        The design's weights on ``rays`` (then normalised): the pool starts from the heaviest of them.
    on_best : callable, optional
        Called with the bound so far each time it rises (a caller that cannot wait gets a valid value early).
    keep : numpy.ndarray, shape (N, J), optional
        Cone points added to the first pool beyond the ``rays`` it takes (e.g. :attr:`MomentBound.pool` of an earlier
        run on the same set: its cuts); like ``rays``, they only steer.
    direction : numpy.ndarray, shape (N,), optional
        Keep the rank-one moment along this direction too (docs/design.md §7.3, "a rank-one moment"); by default,
        with :data:`RANK_ONE`, the eigenvector of the smallest eigenvalue of the Fisher information of ``rays`` with
        ``weights``. Not with :data:`ARROW` (a ``ValueError``).

    Returns
    -------
    MomentBound
        ``value = -inf`` when no multipliers could be computed.
    """
    pi, R = _validated_rays(uset, prior, rays, weights)
    if direction is not None and ARROW:
        raise ValueError("direction (a rank-one moment) cannot be combined with the arrow relaxation (ARROW)")
    d = _direction(pi, rays, weights, direction) if (RANK_ONE or direction is not None) and not ARROW else None
    classes = symbol_classes(uset, pi) if SYMMETRIC and d is None and not ARROW else None
    if classes is not None and not classes.reduces:
        classes = None  # no two symbols interchangeable: the full master is the same problem
    pool = max(MOMENT_POOL_PER_SYMBOL * pi.size, MIN_POOL)
    R = R[:, :pool]
    if keep is not None and np.size(keep):
        R = np.hstack([R, _validated_rays(uset, pi, keep, None, "keep")[1]])
    A0, r2_max = _dual_setup(uset, epsilon, pi)
    h = _arrow_symbol(uset, pi) if ARROW else None
    best, relaxed, method, rounds, best_point = -math.inf, math.inf, "none", 0, None
    t0 = time.perf_counter()
    rounds_end = t0 + (1.0 - FINAL_SHARE) * max(deadline - t0, 0.0)
    exact = False  # price at the master's own multipliers (no smoothing) after a mispricing
    last_pool = None  # the rays of positive weight in the last pool solved
    solved, new = None, None  # the last pool solved, and the rays added to it since
    age = np.full(R.shape[1], KEEP_ROUNDS)  # rounds since each pool ray entered (the start's: old)
    points = []  # (value after a short pricing, g, ν) of every round, for the final pricing
    round_seconds = ROUND_SECONDS  # each round's pricing; longer once a short one finds no cut (ROUND_SECONDS_MAX)

    # the class master's first start: the coordinate dual at the box caps T (docs/design.md §7.6), g = c/(T − 1)²,
    # ν = gT (any g > 0 will do; from this one it took 37–69 Newton steps at N = 300 and 1 000, where the crude
    # start of _class_master took 219 and more than 400); then each master starts at the last one's optimum
    warm = None
    if classes is not None:
        top = _box_top(uset, epsilon, pi)
        if np.all(np.isfinite(top)) and np.all(top > 1.0):
            g0 = (1.0 - pi) ** 2 / (top - 1.0) ** 2
            warm = (g0[classes.first], (g0 * top)[classes.first])

    def solve(pool_rays):
        nonlocal warm
        if classes is None:
            return _master(pool_rays, pi, A0, deadline, h, d)
        out = _class_master(pool_rays, classes, deadline, warm)
        if out is None and warm is not None:  # a cold start is slower but more robust
            out = _class_master(pool_rays, classes, deadline)
        if out is None:  # the N-dimensional master (a review: pools closed under the classes' permutations, e.g.
            return _master(pool_rays, pi, A0, deadline)  # GRR's, can stall the class master's residual)
        warm = (classes.reduce(out[2]), classes.reduce(out[3]))
        return out

    def dual(g, nu, phi, y, sr):
        if not math.isfinite(phi):
            return -math.inf
        value = classes.dual_value(g, nu, phi, r2_max) if classes is not None else None
        return moment_dual_value(g, nu, pi, phi, r2_max, A0, y, h, d, sr) if value is None else value

    while time.perf_counter() < rounds_end - 0.1:
        sol = solve(R)
        if sol is None and solved is not None:
            # dropping the lightest rays can leave a pool with no measure E r = 1 (an unbounded master):
            # the last pool solved plus the new rays
            R, age = np.hstack([solved, new]), np.concatenate([solved_age, np.zeros(new.shape[1], int)])
            sol = solve(R)
        if sol is None:
            break
        solved, solved_age = R, age
        relaxed, theta, gm, num, ym, *rest = sol
        sm = rest[0] if rest else 0.0
        live = theta > 1e-12 * theta.max()
        last_pool = R[:, live]
        g, nu, y, sr = gm, num, ym, sm
        rounds += 1
        if best_point is not None and not exact:  # Wentges smoothing (Q stays positive definite: linear in g)
            g, nu = (SMOOTHING * b + (1 - SMOOTHING) * v for b, v in zip(best_point[:2], (g, nu)))
            if y is not None:
                y = SMOOTHING * best_point[2] + (1 - SMOOTHING) * y
            sr = SMOOTHING * best_point[3] + (1 - SMOOTHING) * sr
        until = min(time.perf_counter() + round_seconds, rounds_end)
        phi, found, how = _pricing(uset, epsilon, pi, g, nu, until, rtol * max(abs(relaxed), 1e-9), TIGHT_ROUNDS,
                                   y, h, d, sr, last_pool)
        value = dual(g, nu, phi, y, sr)
        points.append((value, g, nu, y, sr))
        if value > best:
            best, method, best_point = value, how, (g, nu, y, sr)
            if on_best is not None:
                on_best(MomentBound(float(best), float(relaxed), rounds, method))
        if value >= relaxed - rtol * abs(relaxed):
            return MomentBound(float(best), float(relaxed), rounds, method, last_pool)
        # only rays that improve the master enter its pool (priced at a smoothed point, some may not)
        if found.size:
            at_master = (gm[:, None] * found * found).sum(axis=0) - num @ found
            if ym is not None:
                at_master = at_master + 2.0 * found[h] * (ym @ found)
            if d is not None:
                at_master = at_master + sm * (d @ found) ** 2
            found = found[:, at_master > 1e-9 * max(abs(relaxed), 1.0)]
        if not found.size:  # a mispricing: the master's own point next; if that finds nothing, a longer pricing
            if exact:   # there, up to ROUND_SECONDS_MAX; then the final pricing
                if round_seconds >= ROUND_SECONDS_MAX:
                    break
                round_seconds = min(ESCALATION * round_seconds, ROUND_SECONDS_MAX)
            exact = True
            continue
        exact = False
        stay = np.argsort(-theta)[:pool]  # (not ``keep``: that is the caller's extra rays)
        stay = np.union1d(stay[live[stay]], np.flatnonzero(age < KEEP_ROUNDS))
        R, new = np.hstack([R[:, stay], found]), found
        age = np.concatenate([age[stay] + 1, np.zeros(found.shape[1], int)])
    # the final pricing: a branch and bound until the deadline at the best multipliers; one that closes early (its
    # bound meets its best ray: that point's exact dual value) leaves the time to the next best (a short pricing
    # ranks them poorly: on an Adult design the best short value's point closed at 78.0, the second best's at 84.2)
    points.sort(key=lambda t: -t[0])
    for _, g, nu, y, sr in points[:FINAL_POINTS]:
        if deadline - time.perf_counter() < 0.05:
            break
        phi, _, how = _pricing(uset, epsilon, pi, g, nu, deadline, rtol * max(abs(relaxed), 1e-9), True, y, h, d, sr,
                               last_pool)
        value = dual(g, nu, phi, y, sr)
        if value > best:
            best, method, best_point = value, how, (g, nu, y, sr)
            if on_best is not None:
                on_best(MomentBound(float(best), float(relaxed), rounds, method))
    return MomentBound(float(best), float(relaxed), rounds, method, last_pool)
