"""A second valid lower bound for the A criterion: the coordinate relaxation (docs/design.md §7.2).

Implements: a relaxation of core paper eq. (9) with the A-optimal estimation criterion. For every mechanism whose
Fisher information at π is ``F`` (so ``Fπ = 1`` and ``πᵀFπ = 1``) and every symbol x, restricting the variational
form ``(F⁻¹)_xx = max_z 2z_x − zᵀFz`` to ``z ∈ span(e_x, π)`` gives

    (F⁻¹)_xx ≥ π_x² + (1 − π_x)² / (F_xx − 1),   hence   tr F⁻¹ − ‖π‖² ≥ Σ_x c_x / (F_xx − 1),  c = (1 − π)².

With the design written as a probability measure μ over normalised rays (``π·r = 1``, ``E_μ r = 1``),
``F_xx = E_μ r_x²``, so the right-hand side depends on μ only through the *diagonal* second moments and its
pricing is separable. Its Lagrangian dual, valid for every ``g ≥ 0`` and every ν,

    OPT ≥ Σ_x (2√(c_x g_x) + g_x) − ν·1 − max_r (Σ_x g_x r_x² − ν·r),

needs only an upper bound of a separable maximum over the rays, which the mass-cell branch and bound of
:mod:`.bound_cells` computes without the diagonal certificate of :mod:`.bound` (whose slack it avoids). The
relaxation is exact when every ``F⁻¹e_x`` lies in ``span(e_x, π)`` (e.g. the symmetric local-DP optimum at a
uniform prior); elsewhere its own loss is what is left (measured in docs/design.md §7.2). The multipliers come
from the relaxed master (the same problem over a finite pool of rays, solved by its own interior-point method,
cvxpy as the fallback), refined by the rays the branch and bound finds; they only steer: every returned value is a
valid bound.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ...uncertainty import UncertaintySet
from .bound import MAX_FOUND, _ball_form, _box_bound, _box_top, enumerated_rays, ray_values, with_rounding_margin
from .bound_cells import BallCells, branch_and_bound

__all__ = ["CoordinateBound", "coordinate_bound", "coordinate_relaxation"]

#: Weight of the best multipliers so far in the point priced each round (dual smoothing steadies the rounds).
SMOOTHING: float = 0.5
#: Share of the time kept for the final branch and bound, and the most seconds of each round's (ray finding).
FINAL_SHARE: float = 0.4
ROUND_SECONDS: float = 0.1
#: Rays kept in the relaxed master between rounds (the heaviest), plus the new ones: max(POOL_PER_SYMBOL·N, MIN_POOL)
#: (its optimum needs at most 2N rays, but the design's own rays steer it best; a larger pool slows every solve).
POOL_PER_SYMBOL: int = 8
MIN_POOL: int = 200
#: Assumed (rays × symbols) per second of a relaxed-master solve by cvxpy + Clarabel (one loaded core), the fallback
#: when the interior-point method below fails; it is started only when 1.5 × its expected time is left.
SOLVE_RATE: float = 4e4
#: The relaxed master's own interior-point method (:func:`_relaxed_master_ipm`): most iterations, relative duality gap.
IPM_ITERATIONS: int = 120
IPM_TOL: float = 1e-8


@dataclass(frozen=True)
class CoordinateBound:
    """``value ≤`` the optimal A error ``tr F⁻¹ − ‖π‖²`` over the cone; ``relaxed`` is the relaxed master's value
    over its last pool (an upper estimate of the relaxation's optimum, not a bound)."""

    value: float
    relaxed: float
    rounds: int
    method: str


def coordinate_relaxation(W: np.ndarray, prior: np.ndarray) -> float:
    """``Σ_x (1 − π_x)² / (F_xx − 1)`` for the mechanism ``W`` at ``prior``: a lower bound of its own A error.

    Implements: the per-symbol inequality of the module docstring (docs/design.md §7.2), ``+inf`` when a symbol is
    not identified (``F_xx = 1``).

    Parameters
    ----------
    W : numpy.ndarray, shape (N, M)
        A row-stochastic mechanism.
    prior : numpy.ndarray, shape (N,)
        π, the distribution the error is taken at.

    Returns
    -------
    float
        The lower bound.
    """
    W = np.asarray(W, dtype=float)
    pi = np.asarray(prior, dtype=float)
    q = pi @ W
    used = q > 0
    s = ((W[:, used] ** 2) / q[used]).sum(axis=1)
    with np.errstate(divide="ignore"):
        return float(np.sum((1.0 - pi) ** 2 / np.maximum(s - 1.0, 0.0)))


def _best_scale(root: float, lin: np.ndarray) -> float:
    """``max_{α>0} 2√α·root + α·Σlin``, rounded down: a dual of the form ``2·root + Σlin`` at ``(αg, αν)`` with the
    bound ``αφ``.

    Implements: the homogeneity of the coordinate and diagonal-moment duals (docs/design.md §7.3): the square-root
    term scales by √α, the linear terms and the separable maximum (hence any upper bound of it) by α. At exact
    multipliers the best α is 1; with an over-estimated φ it is below 1 and the value is ``root² / (−Σlin)``
    instead of ``2·root + Σlin``.
    """
    total = float(lin.sum())
    slack = 1e-12 * (2.0 * root + float(np.abs(lin).sum()))
    value = 2.0 * root + total
    if total < 0 and root > 0:
        value = max(value, root * root / -total)
        slack *= max(1.0, root / -total)  # the rounding of the terms, scaled by the best α
    return float(value - slack)


def _spectral_dual(w: np.ndarray, mult: np.ndarray | None, n: int, zsum: float, nusum: float, phi_max: float,
                   r2_max: float) -> float:
    """The diagonal-moment dual ``2 Σ m_i √λ_i + 1ᵀZ1 − ν·1 − φ`` from the computed eigenvalues ``w`` of Q (each
    ``mult`` times; once without), rounded down (docs/design.md §7.3, §7.7): the eigenvalues lowered by the backward
    error ``64·N·u·max|λ|``; where Q is not positive definite beyond it, g raised by δ (Q grows by at least δI, 1ᵀZ1
    by δN, the pricing maximum by ``δ·r2_max``); ``-inf`` where φ, or that raise, is not finite."""
    m = np.ones(w.size) if mult is None else np.asarray(mult, dtype=float)
    err = 64.0 * n * np.finfo(float).eps * float(np.abs(w).max())
    delta = max(0.0, 2.0 * err - float(w.min()))
    if not math.isfinite(phi_max) or (delta > 0 and not math.isfinite(r2_max)):
        return -math.inf
    root = float(m @ np.sqrt(np.maximum(w + delta - err, 0.0)))
    lin = np.array([zsum + delta * n, -nusum, -float(phi_max) - (delta * r2_max if delta > 0 else 0.0)])
    return _best_scale(root, lin)


def _dual_value(c: np.ndarray, g: np.ndarray, nu: np.ndarray, phi_max: float) -> float:
    """``Σ 2√(c_x g_x) + g_x − ν·1 − φ`` at the best scale of (g, ν) (:func:`_best_scale`)."""
    return _best_scale(float(np.sum(np.sqrt(c * g))), np.array([float(g.sum()), -float(nu.sum()), -float(phi_max)]))


def _checked_prior(uset: UncertaintySet, prior: np.ndarray) -> np.ndarray:
    """The prior as a float vector: positive, finite, one entry per symbol of ``uset``, summing to 1 (a design is then
    a probability measure over normalised rays); a ``ValueError`` naming ``prior`` otherwise."""
    pi = np.asarray(prior, dtype=float)
    if pi.ndim != 1 or np.any(~np.isfinite(pi)) or np.any(pi <= 0) or uset.size != pi.size:
        raise ValueError(f"prior must be a positive finite vector over the set's {uset.size} symbols, got {pi!r}")
    if abs(float(pi.sum()) - 1.0) > 1e-9:  # the design is a probability measure over rays only then
        raise ValueError(f"prior must sum to 1 (a distribution), got a sum of {float(pi.sum())!r}")
    return pi


def _validated_rays(uset: UncertaintySet, prior: np.ndarray, rays: np.ndarray, weights: np.ndarray | None,
                    name: str = "rays"):
    """``(π, R)``: the prior checked, and the usable columns of ``rays`` normalised to ``π·r = 1``, heaviest first
    when ``weights`` (those of the normalised rays) are given — a relaxed master's starting pool.

    Implements: the input checks shared by :func:`coordinate_bound` and :func:`.moment_bound.moment_bound`
    (docs/design.md §7.2–7.3): a positive prior summing to 1 (a design is then a probability measure over rays),
    one weight per ray, weights only with rays already normalised.
    """
    pi = _checked_prior(uset, prior)
    R = np.asarray(rays, dtype=float)
    if R.ndim == 1 and R.size == pi.size:
        R = R[:, None]
    if R.ndim != 2 or R.shape[0] != pi.size:  # a reshape would pass a transposed pool silently, as garbage rays
        raise ValueError(f"{name} must have shape (N, K) with N = {pi.size} symbols (one ray per column), "
                         f"got shape {R.shape}")
    keep_cols = (R.min(axis=0) >= 0) & (pi @ R > 0)
    R = R[:, keep_cols]
    if weights is not None:  # the weights are those of the normalised rays
        if np.shape(weights) != (keep_cols.size,):
            raise ValueError(f"weights must have one entry per ray ({keep_cols.size}), got shape {np.shape(weights)}")
        if not np.allclose(pi @ R, 1.0, rtol=1e-9, atol=0):
            raise ValueError("weights need rays normalised to prior @ r = 1")
    R = R / (pi @ R)
    if weights is not None:
        R = R[:, np.argsort(-np.asarray(weights, dtype=float)[keep_cols])]
    return pi, R


def _to_boundary(v: np.ndarray, dv: np.ndarray) -> float:
    """The largest step in (0, 1] keeping ``v + step·dv ≥ 0``."""
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if np.any(neg) else 1.0


def _relaxed_master_ipm(R: np.ndarray, c: np.ndarray, pi: np.ndarray, deadline: float):
    """The relaxed master through its dual, by a primal–dual interior-point method; (value, θ, g, ν) or None.

    Implements: the Lagrangian dual of the module docstring over the finite pool ``R`` (docs/design.md §7.2),

        max_{g ≥ 0, ν}  Σ_x (2√(c_x g_x) + g_x) − ν·1   s.t.   Σ_x g_x r_x² ≤ ν·r  for every pool ray r,

    2N variables and one linear constraint per ray: each Newton step costs one (2N)² normal matrix over the pool,
    a few milliseconds where cvxpy + Clarabel needed a second for the same problem at N = 100 (its dense columns).
    The primal θ are the constraints' multipliers (``Rθ = 1`` is the dual's stationarity in ν). Rows are scaled to
    a unit maximum (variables ``g·max_k r_xk²`` and ``ν·max_k r_xk``); the start is strictly feasible (scaled
    ``g = 1``, ``ν = λπ``: the pool rays are normalised, ``π·r = 1``); separate primal and dual steps to the
    boundary. None when a symbol is never reached by the pool, when it does not converge within ``deadline`` and
    :data:`IPM_ITERATIONS`, on a failed factorisation or non-finite iterate, or when the solution does not identify
    every symbol (``Sθ > 1``); the caller then falls back to cvxpy. The multipliers only steer: every bound computed
    from them is valid.
    """
    n, k = R.shape
    S = R * R
    rs, ss = R.max(axis=1), S.max(axis=1)  # rows scaled to a unit maximum: variables g·ss and ν·rs
    if not np.all(rs > 0):  # a symbol no pool ray reaches: the relaxed master is infeasible
        return None
    Sn = S / ss[:, None]
    A = np.hstack([-Sn.T, (R / rs[:, None]).T])  # slacks a = A·z ≥ 0, z = (g·ss, ν·rs)
    lin = np.concatenate([-1.0 / ss, 1.0 / rs])
    sqc = np.sqrt(c / ss)
    diag = np.arange(n)

    def objective(z):  # the dual's value, negated (minimised)
        return float(-2.0 * sqc @ np.sqrt(z[:n]) + lin @ z)

    lam = 2.0 * float(Sn.sum(axis=0).max()) + 1.0  # a_k = λ − Σ_x Sn_xk ≥ λ/2 at the start
    z = np.concatenate([np.ones(n), lam * rs * pi])
    a = A @ z
    m = k + n
    mu = max(abs(objective(z)), 1.0) / m
    th, eta = mu / a, mu / z[:n]
    try:
        for _ in range(IPM_ITERATIONS):
            if time.perf_counter() > deadline:
                return None
            grad = lin.copy()
            grad[:n] -= sqc / np.sqrt(z[:n])
            rd = grad - A.T @ th
            rd[:n] -= eta
            gap = float(th @ a + eta @ z[:n])
            if gap <= IPM_TOL * max(abs(objective(z)), 1.0) and np.abs(rd).max() <= 1e-9 * (1.0 + np.abs(grad).max()):
                break
            target = 0.1 * gap / m
            rc1, rc2 = th * a - target, eta * z[:n] - target
            H = (A * (th / a)[:, None]).T @ A
            H[diag, diag] += 0.5 * sqc * z[:n] ** -1.5 + eta / z[:n]
            rhs = -rd - A.T @ (rc1 / a)
            rhs[:n] -= rc2 / z[:n]
            d = np.sqrt(np.diag(H))  # Jacobi scaling before the Cholesky factorisation
            dz = scipy.linalg.cho_solve(scipy.linalg.cho_factor(H / d[:, None] / d[None, :]), rhs / d) / d
            da = A @ dz
            dth = -(rc1 + th * da) / a
            deta = -(rc2 + eta * dz[:n]) / z[:n]
            ap = 0.99 * min(_to_boundary(a, da), _to_boundary(z[:n], dz[:n]))
            ad = 0.99 * min(_to_boundary(th, dth), _to_boundary(eta, deta))
            z, th, eta = z + ap * dz, th + ad * dth, eta + ad * deta
            a = A @ z
            if not (np.all(np.isfinite(z)) and np.all(a > 0) and np.all(z[:n] > 0)):
                return None
        else:
            return None
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        return None
    s = S @ th
    if np.any(s <= 1.0):
        return None
    resid = float(np.abs(R @ th - 1.0).max())
    relaxed = float(np.sum(c / (s - 1.0))) if resid <= 1e-4 else math.inf
    return relaxed, th, z[:n] / ss, z[n:] / rs


def _relaxed_master(R: np.ndarray, c: np.ndarray, deadline: float):
    """``min Σ c_x/(s_x − 1)``, ``s = (R∘R)θ``, ``Rθ = 1``, ``θ ≥ 0`` (cvxpy; the fallback and the tests' second
    solver of :func:`_relaxed_master_ipm`); returns (value, θ, g, ν) or None."""
    import cvxpy as cp  # noqa: PLC0415

    S = R * R
    # rows and columns scaled to a unit maximum (normalised rays reach 1/π_x: badly scaled otherwise; with rows
    # alone, Clarabel 0.11 and ECOS end "inaccurate" on rare symbols): θ = φ / cs
    cs = R.max(axis=0)
    rs, ss = (R / cs).max(axis=1), (S / cs).max(axis=1)
    phi = cp.Variable(R.shape[1], nonneg=True)
    eq = (R / (rs[:, None] * cs)) @ phi == 1.0 / rs
    prob = cp.Problem(cp.Minimize((c / ss) @ cp.inv_pos((S / (ss[:, None] * cs)) @ phi - 1.0 / ss)), [eq])
    left = deadline - time.perf_counter()
    if left <= 0.05:
        return None
    try:
        with warnings.catch_warnings():  # "solution may be inaccurate": the multipliers only steer, see below
            warnings.simplefilter("ignore")
            prob.solve(solver="CLARABEL", time_limit=left, verbose=False)
    except Exception:  # noqa: BLE001  (a failed solve only means no new multipliers; the bound stays valid)
        return None
    if phi.value is None or eq.dual_value is None:
        return None
    t = np.maximum(np.asarray(phi.value, dtype=float), 0.0) / cs
    s = S @ t
    if np.any(s <= 1.0):
        return None
    resid = float(np.abs(R @ t - 1.0).max())
    g = c / (s - 1.0) ** 2
    nu = np.asarray(eq.dual_value, dtype=float) / rs
    sep = g @ S
    if (sep + nu @ R).max() < (sep - nu @ R).max():  # the sign convention making Σ g r² − ν·r ≤ 0 on the pool
        nu = -nu
    relaxed = float(np.sum(c / (s - 1.0))) if resid <= 1e-4 else math.inf  # an inaccurate solve's value says nothing
    return relaxed, t, g, nu


def _separable_max(uset, epsilon, pi, g, nu, deadline, atol, tight=True, y=None, h=None):
    """(upper bound of ``max_r Σ g_x r_x² − ν·r`` over the normalised rays, rays found, method); with ``y`` (the
    arrow row of docs/design.md §7.3, ``y_h = 0``) of ``max_r Σ g_x r_x² + 2 r_h y·r − ν·r``."""

    def q_of(X):
        out = (g[:, None] * X * X).sum(axis=0) - nu @ X
        return out if y is None else out + 2.0 * X[h] * (y @ X)

    R_all = enumerated_rays(uset, epsilon, pi)
    if R_all is not None:
        vals = ray_values(q_of, R_all)
        top = np.argsort(-vals)[:MAX_FOUND]
        return with_rounding_margin(float(vals.max()), nu), R_all[:, top[vals[top] > 0]], "enumeration"
    upper, found, method = math.inf, np.zeros((pi.size, 0)), "none"
    top = _box_top(uset, epsilon, pi)
    if np.all(np.isfinite(top)):
        d = g
        if y is not None:  # 2 r_h y_x r_x ≤ |y_x| (r_h² + r_x²): a separable upper bound
            d = g + np.abs(y)
            d[h] += float(np.abs(y).sum())
        upper, method = _box_bound(d, nu, pi, top), "box"
    form = _ball_form(uset, pi)
    if form is not None:
        cone = BallCells(form[0], form[1], epsilon, pi, g, nu, np.diag(g), nu, pi_mass=tight, y=y)
        ub, found, _, _, _ = branch_and_bound(cone, deadline, atol, q_of)
        if ub < upper:
            upper, method = ub, "cells"
    return with_rounding_margin(upper, nu), found, method


def coordinate_bound(
    uset: UncertaintySet,
    epsilon: float,
    prior: np.ndarray,
    rays: np.ndarray,
    *,
    deadline: float,
    rtol: float = 1e-3,
    weights: np.ndarray | None = None,
    dual_value: Callable[[np.ndarray, np.ndarray, float], float] | None = None,
) -> CoordinateBound:
    """A valid lower bound on the optimal A error ``tr F⁻¹ − ‖π‖²`` over the cone ``K(ε, 𝒫)`` (module docstring).

    Implements: the coordinate relaxation and its Lagrangian dual (docs/design.md §7.2), with the separable maximum
    bounded by complete enumeration (small N), the branch and bound on mass cells (ℓ1 balls, the simplex, a fixed
    prior) and the box Lagrangian bound (any set with a box).

    Parameters
    ----------
    uset : UncertaintySet
    epsilon : float
        ε > 0.
    prior : numpy.ndarray, shape (N,)
        The distribution the error is evaluated at (positive); the rays are normalised to ``prior·r = 1``.
    rays : numpy.ndarray, shape (N, K)
        Cone points to start the relaxed master from (e.g. the design's columns); they only steer, and must
        identify every symbol (a design with finite error does).
    deadline : float
        ``time.perf_counter()`` value at which the refinement stops; the value returned is valid at every step.
    rtol : float, default 1e-3
        Stop when the bound is within ``rtol`` (relative) of the relaxed master's value.
    weights : numpy.ndarray, shape (K,), optional
        The design's weights on ``rays`` (then normalised, ``prior @ rays = 1``): the relaxed master starts from the
        heaviest ``max(POOL_PER_SYMBOL·N, MIN_POOL)`` of them. (Bounding the design's own point first, with ν
        fitted on its rays, was tried: as the centre of the dual smoothing it cost most of the bound at N = 100.)
    dual_value : callable, optional
        ``dual_value(g, ν, φ)``: a second valid lower bound from the same multipliers and the same upper bound φ
        of the separable maximum (e.g. :func:`.moment_bound.moment_dual_value`, never below this relaxation's own
        value for ``g ≥ 0``); the larger of the two is kept each round.

    Returns
    -------
    CoordinateBound
        ``value = -inf`` when no multipliers could be computed (e.g. a set without a usable ray description).
    """
    pi, R = _validated_rays(uset, prior, rays, weights)
    c = (1.0 - pi) ** 2
    best, relaxed, method, rounds, best_point = -math.inf, math.inf, "none", 0, None
    pool = max(POOL_PER_SYMBOL * pi.size, MIN_POOL)
    t0 = time.perf_counter()
    rounds_end = t0 + (1.0 - FINAL_SHARE) * max(deadline - t0, 0.0)  # short rounds, then long branch and bounds
    if weights is not None:  # the master's pool: the design's heaviest rays
        R = R[:, :pool]
    solve_s = R.shape[0] * min(R.shape[1], pool + 64) / SOLVE_RATE  # a first solve's cost, then the last one's
    ipm_ok = True  # after one failure of the interior-point method, cvxpy solves the remaining rounds
    solved, new = None, None  # the last pool solved, and the rays added to it since
    while time.perf_counter() < deadline - 0.05:
        sol = _relaxed_master_ipm(R, c, pi, deadline) if ipm_ok else None
        if sol is None and ipm_ok and solved is not None:
            # dropping the lightest rays can leave a pool with no measure E r = 1 (an infeasible master):
            # the last pool solved (feasible) plus the new rays
            R = np.hstack([solved, new])
            sol = _relaxed_master_ipm(R, c, pi, deadline)
        ipm_ok = sol is not None
        if sol is None:  # cvxpy's compile and set-up ignore the time limit: started only when it fits
            if deadline - time.perf_counter() < 1.5 * solve_s:
                break
            t_solve = time.perf_counter()
            sol = _relaxed_master(R, c, deadline)
            solve_s = time.perf_counter() - t_solve
        if sol is None:
            break
        value_k, theta, g, nu = sol
        solved = R
        relaxed = value_k if math.isfinite(value_k) else relaxed
        rounds += 1
        if best_point is not None:  # Wentges smoothing: price between the best multipliers so far and the master's
            g, nu = SMOOTHING * best_point[0] + (1 - SMOOTHING) * g, SMOOTHING * best_point[1] + (1 - SMOOTHING) * nu
        scale = relaxed if math.isfinite(relaxed) else float(np.sum(2.0 * np.sqrt(c * g) + g))
        now = time.perf_counter()
        until = min(now + ROUND_SECONDS, rounds_end) if now < rounds_end - 0.1 else deadline
        phi, found, how = _separable_max(uset, epsilon, pi, g, nu, until, rtol * scale, until == deadline)
        if not math.isfinite(phi):
            break
        value = _dual_value(c, g, nu, phi)  # phi < 0 is valid too: E Σ g r² ≤ ν·1 + phi
        if dual_value is not None:
            value = max(value, float(dual_value(g, nu, phi)))
        if value > best:
            best, method, best_point = value, how, (g, nu)
        if value >= (1.0 - rtol) * relaxed or not found.size:
            break
        keep = np.argsort(-theta)[:pool]
        keep = keep[theta[keep] > 0]
        R, new = np.hstack([R[:, keep], found]), found
    return CoordinateBound(float(best), float(relaxed), rounds, method)
