"""The pricing of the diagonal-moment relaxation with one rank-one moment (docs/design.md §7.3, "a rank-one moment").

Implements: an upper bound of ``max_r Σ_x g_x r_x² + s (d·r)² − ν·r`` over the normalised extreme rays of the cone
(a fixed direction ``d``), for the dual matrix ``Z = Diag(g) + s ddᵀ``. For ``s > 0`` the square is the maximum of
its tangents, ``s t² = max_λ (λt − λ²/(4s))``, so

    ``max_r … = max_λ φ(λ) − λ²/(4s)``,  ``φ(λ) = max_r Σ_x g_x r_x² − (ν − λd)·r``,

and φ is the *separable* maximum of §7.2–§7.3 (enumeration, mass cells, box), convex in λ (a maximum of affine
functions). λ ranges over ``2s·[t_lo, t_hi]`` with ``t = d·r`` bounded by the box ``0 ≤ r ≤ top``. A branch and bound
on λ bounds each interval ``[a, b]`` by the chord of φ (convexity: ``φ ≤`` the chord through upper bounds of φ(a),
φ(b)) minus ``λ²/(4s)``, a concave quadratic maximised in closed form; it splits the interval of the largest bound
until that bound meets the best actual ray (each separable maximum returns actual rays, valued exactly) or the
deadline. Every step's bound is valid. For ``s < 0`` every tangent bounds the concave term from above (a Lagrangian
bound, :func:`_concave`).
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from ...uncertainty import UncertaintySet
from .bound import _box_top, enumerated_rays, ray_values, with_rounding_margin
from .coordinate_bound import _separable_max

__all__ = ["rank_one_max"]

#: Most λ intervals split per call (each split costs one separable maximum).
MAX_SPLITS: int = 64
#: Rays returned (the best by exact value).
MAX_RAYS: int = 64
#: Each separable maximum of the λ branch and bound gets this share of the time left (one that does not close
#: would otherwise take all of it at the first λ).
NODE_SHARE: float = 8.0
#: Each tangent of the concave case (s < 0) gets this share of the time left (the first took all of it, session 20).
TANGENT_SHARE: float = 0.5


def rank_one_max(uset: UncertaintySet, epsilon: float, pi: np.ndarray, g: np.ndarray, nu: np.ndarray, s: float,
                 d: np.ndarray, deadline: float, atol: float, tight: bool = True, hint: np.ndarray | None = None
                 ) -> tuple[float, np.ndarray, str]:
    """An upper bound of ``max_r Σ g_x r_x² + s (d·r)² − ν·r`` over the normalised rays, the best rays found, and how.

    Implements: the λ branch and bound of the module docstring (docs/design.md §7.3, "a rank-one moment").

    Parameters
    ----------
    uset, epsilon, pi
        The cone ``K(ε, 𝒫)`` and the normalisation ``π·r = 1``.
    g, nu : numpy.ndarray, shape (N,)
        The diagonal and linear multipliers.
    s : float
        The rank-one weight, either sign (``s = 0`` is the separable maximum itself).
    d : numpy.ndarray, shape (N,)
        The direction.
    deadline : float
        ``time.perf_counter()`` time at which the refinement stops (the bound is valid at every step).
    atol : float
        Stop when the bound is within ``atol`` of the best ray.
    tight : bool, default True
        Passed to the separable maximum (its cells also bound the π-mass).
    hint : numpy.ndarray, shape (N, J), optional
        Rays near the maximiser (e.g. the relaxed master's pool): for ``s < 0`` the first tangent is taken at the
        ``d·r`` of the best of them, not at 0 (where the concave term is dropped altogether).

    Returns
    -------
    (float, numpy.ndarray, str)
        The upper bound (``inf`` without a box for t), the best actual rays (columns, value > 0, best first), and
        the separable maximum's method.
    """
    if s == 0:
        return _separable_max(uset, epsilon, pi, g, nu, deadline, atol, tight)
    R_all = enumerated_rays(uset, epsilon, pi)
    if R_all is not None:  # small N: exact
        vals = ray_values(lambda X: _rank_one_values(X, g, nu, s, d), R_all)
        top = np.argsort(-vals)[:MAX_RAYS]
        return with_rounding_margin(float(vals.max()), nu), R_all[:, top[vals[top] > 0]], "enumeration"
    if s < 0:
        t0 = 0.0
        if hint is not None and np.size(hint):
            t0 = float(d @ hint[:, int(np.argmax(_rank_one_values(hint, g, nu, s, d)))])
        return _concave(uset, epsilon, pi, g, nu, -s, d, deadline, atol, tight, t0)
    top = _box_top(uset, epsilon, pi)
    if not np.all(np.isfinite(top)):
        return math.inf, np.zeros((pi.size, 0)), "none"
    lo, hi = 2.0 * s * float(np.minimum(d, 0.0) @ top), 2.0 * s * float(np.maximum(d, 0.0) @ top)
    best, rays, method = -math.inf, [], "none"
    phi: dict[float, float] = {}

    def at(lam: float) -> float:  # an upper bound of φ(λ), and the rays it meets
        nonlocal best, method
        if lam not in phi:
            until = min(deadline, time.perf_counter() + max(deadline - time.perf_counter(), 0.0) / NODE_SHARE)
            ub, found, method = _separable_max(uset, epsilon, pi, g, nu - lam * d, until, atol, tight)
            phi[lam] = ub
            if found.shape[1]:
                v = _rank_one_values(found, g, nu, s, d)
                best = max(best, float(v.max()))
                rays.append((v, found))
        return phi[lam]

    def bound(a: float, b: float) -> float:  # max over [a, b] of chord(λ) − λ²/(4s)
        fa, fb = at(a), at(b)
        if not (math.isfinite(fa) and math.isfinite(fb)):
            return math.inf
        m = (fb - fa) / (b - a) if b > a else 0.0
        lam = min(max(2.0 * s * m, a), b)
        return fa + m * (lam - a) - lam * lam / (4.0 * s)

    heap = [(-bound(lo, hi), lo, hi)]
    for _ in range(MAX_SPLITS):
        top_bound, a, b = -heap[0][0], heap[0][1], heap[0][2]
        if top_bound - best <= atol or time.perf_counter() > deadline or b - a <= 1e-12 * max(abs(a), abs(b), 1.0):
            break
        heapq.heappop(heap)
        mid = 0.5 * (a + b)
        for c, e in ((a, mid), (mid, b)):
            heapq.heappush(heap, (-bound(c, e), c, e))
    return max(-heap[0][0], best), _best_rays(rays, pi.size), method


def _rank_one_values(R: np.ndarray, g: np.ndarray, nu: np.ndarray, s: float, d: np.ndarray) -> np.ndarray:
    """The pricing values ``Σ_x g_x r_x² + s (d·r)² − ν·r`` of the rays ``R`` (columns), exactly."""
    return (g[:, None] * R * R).sum(axis=0) + s * (d @ R) ** 2 - nu @ R


def _best_rays(rays: list, n: int) -> np.ndarray:
    """The best :data:`MAX_RAYS` of the ``(values, rays)`` pairs met, those of positive value, best first."""
    if not rays:
        return np.zeros((n, 0))
    V = np.concatenate([v for v, _ in rays])
    R = np.hstack([r for _, r in rays])
    order = np.argsort(-V)[:MAX_RAYS]
    return R[:, order[V[order] > 0]]


def _concave(uset, epsilon, pi, g, nu, c, d, deadline, atol, tight, t0=0.0):
    """``s = −c < 0``: every tangent bounds the concave term, ``−c t² ≤ −λt + λ²/(4c)``, so for every λ
    ``max_r … ≤ φ(−λ) + λ²/(4c)`` with ``φ(−λ)`` the separable maximum at ``ν + λd``: a convex function of λ, minimised
    by bisection on its subgradient ``λ/(2c) − d·r_λ`` (``r_λ`` the best ray found at λ), from ``λ = 2c·t0`` (the
    tangent at a ray's ``t = d·r``: 0 drops the concave term, the weakest start; session 20). Each separable maximum
    gets :data:`TANGENT_SHARE` of the time left (the first took all of it: no second tangent in a short round). The
    smallest value met is returned (each is valid: a Lagrangian bound; not exact where no maximiser has
    ``d·r = λ/(2c)``)."""
    top = _box_top(uset, epsilon, pi)
    if not np.all(np.isfinite(top)):
        return math.inf, np.zeros((pi.size, 0)), "none"
    lo, hi = 2.0 * c * float(np.minimum(d, 0.0) @ top), 2.0 * c * float(np.maximum(d, 0.0) @ top)
    upper, best, rays, method = math.inf, -math.inf, [], "none"
    lam = min(max(2.0 * c * float(t0), lo), hi)
    for _ in range(MAX_SPLITS // 2):
        until = min(deadline, time.perf_counter() + TANGENT_SHARE * max(deadline - time.perf_counter(), 0.0))
        ub, found, method = _separable_max(uset, epsilon, pi, g, nu + lam * d, until, atol, tight)
        upper = min(upper, ub + lam * lam / (4.0 * c))
        if not found.shape[1]:
            break
        v = _rank_one_values(found, g, nu, -c, d)
        best = max(best, float(v.max()))
        rays.append((v, found))
        t = float(d @ found[:, int(np.argmax((g[:, None] * found * found).sum(axis=0) - (nu + lam * d) @ found))])
        slope = lam / (2.0 * c) - t
        if upper - best <= atol or time.perf_counter() > deadline or hi - lo <= 1e-12 * max(abs(lo), abs(hi), 1.0):
            break
        if slope > 0:
            hi = lam
        else:
            lo = lam
        lam = 0.5 * (lo + hi)
    return max(upper, best), _best_rays(rays, pi.size), method
