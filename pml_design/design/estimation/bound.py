"""A valid upper bound on the pricing problem of the estimation design, at every alphabet size.

Implements: the pricing bound behind the Frank–Wolfe / Kiefer–Wolfowitz lower bound of the A- and D-optimal
estimation design over ``M(ε, 𝒫)`` (docs/design.md §7, "A valid bound at every N"), for the ℓ1 ball of core paper
eq. (5) on both sides of Proposition 2, a fixed prior, the simplex (Remark 1) and finite sets (Corollary 1).

Problem
-------
With the master's ``M = F⁻²`` (A) or ``F⁻¹`` (D), symmetric PSD, and multipliers ν, bound from above

    ``q* = max_r rᵀMr − ν·r``  over the normalised extreme rays ``r`` of ``K(ε, 𝒫)`` (``π·r = 1``, π = the prior).

``q`` is convex, so ``q*`` is also its maximum over the polytope ``K ∩ {π·r = 1}``; any upper bound keeps the design's
lower bound ``f(θ̄) − g·θ̄ − ν·1 − q*`` valid (:func:`frank_wolfe_lower_bound`).

Derivation (three steps, each an inequality that holds for every normalised ray)
-------------------------------------------------------------------------------
1. *Lift by the normalisation.* For any vector ``b``, ``rᵀ(πbᵀ + bπᵀ)r = 2 b·r`` on ``π·r = 1``, so
   ``q(r) = rᵀM_b r − (ν + 2b)·r`` with ``M_b = M + πbᵀ + bπᵀ``. ``b`` is the least-squares fit that makes ``M_b`` as
   diagonal as possible (closed form: a diagonal-plus-rank-one system); in the interior regime the optimal
   design's ``M`` is exactly diagonal plus such a lift (measured), so nothing is lost there.
2. *Diagonal certificate.* With ``t ≥ λ_max(M_b − Diag M_b)`` (eigenvalues with a backward-error margin, or Lanczos
   checked by a Cholesky factorisation), ``rᵀM_b r ≤ Σ_x d_x r_x²`` with ``d = diag M_b + t``: the bound is now
   *separable*, ``Φ(r) = Σ_x d_x r_x² − w_x r_x`` with ``w = ν + 2b`` (the Shor relaxation with a diagonal dual).
3. *Exact combinatorics of the separable function over the rays.* For the ℓ1 ball (any radius; the simplex is the
   ball of radius 2, a fixed prior the ball of radius 0) every extreme ray is ``c = (h_V − h_U)1_U − h_U 1_{V∖U}``
   for nested ``U ⊊ V`` (or ``V`` = everything) with ``h_U < 0 ≤ h_V``, ``h(S) = e^ε max(0, P̂(S) − β/2) − 1``
   (docs/design.md §3), normalised ``r = c/(π·c)``: levels ``A`` on ``U``, ``B`` on ``V∖U``, 0 elsewhere, which
   depend only on the masses ``u = P̂(U)``, ``v = P̂(V)``, ``s = π(U)``, ``ω = π(V∖U)``. On a cell
   ``[u] × [v]`` the levels lie in intervals (monotone in ``u, v, s, ω``; ``s, ω`` bounded by fractional knapsacks
   of π against P̂, exact when ``π = P̂``), and

       ``Φ(r) = Σ_{x∈U} (φ_x(A) − φ_x(B)) + Σ_{x∈V} φ_x(B) ≤ K(α − β⁻, [u]) + K(β⁺, [v])``,

   with ``α, β⁺`` the maxima and ``β⁻`` the minima of ``φ_x`` over the level intervals and ``K(c, [m])`` the
   fractional knapsack (items by ``c_x/P̂_x``) with mass in ``[m]`` (nestedness ``U ⊂ V`` dropped), and by the
   Lagrangian dual of the three-choice assignment LP that keeps ``U ⊂ V`` (:mod:`.bound_cells`; the smaller of
   the two is the cell's bound). Cells are split
   (branch and bound, best bound first) until the bound meets the best actual ray found (greedy sets of the best
   cells, evaluated exactly) or the deadline. A second, cruder bound for any set is the Lagrangian dual of
   ``π·r = 1`` over the box ``0 ≤ r_x ≤ T_x`` (``c_x ≤ e^ε Q·c`` for every ``Q ∈ 𝒫``); the smaller is returned.

Tightness (measured, docs/design.md §7.1): exact to solver precision in the interior regime; outside it the
diagonal certificate of step 2 is the loss (the binary-quadratic part of the problem), plus the cells' level
intervals. The design also uses the coordinate relaxation of :mod:`.coordinate_bound` (§7.2), which needs no
certificate.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...uncertainty import FiniteSet, L1Ball, Simplex, UncertaintySet
from .bound_cells import BallCells, branch_and_bound, quad_max

__all__ = ["RayValueBounds", "frank_wolfe_lower_bound", "max_ray_value", "ray_value_bounds", "scaled_frank_wolfe_bound"]

#: Refinement without a deadline stops after this many seconds (the bound is valid at every step).
DEFAULT_SECONDS: float = 2.0
#: Most rays returned in ``RayValueBounds.rays``.
MAX_FOUND: int = 64
#: Rounds of (tune the certificate on the rays found so far, branch and bound).
CERTIFICATE_ROUNDS: int = 3
#: Most rays the certificate is tuned on.
MAX_POOL: int = 2000
#: With a work budget (``ray_value_bounds(work=...)``): L-BFGS iterations per certificate tuning.
WORK_TUNING_ITERATIONS: int = 30
#: Largest alphabets whose rays are enumerated instead (≤ 3^N pairs outside Proposition 2, N·2^N inside).
ENUMERATE_GENERIC: int = 10
ENUMERATE_MAX: int = 12
#: Flops per second assumed when deciding whether a Cholesky proof fits before the deadline (one core).
FLOPS: float = 5e9
#: Alphabets above this use Lanczos plus a Cholesky check instead of a full eigendecomposition.
EIG_DENSE_MAX: int = 1500


@dataclass(frozen=True)
class RayValueBounds:
    """``lower ≤ max_r rᵀMr − ν·r ≤ upper``: ``lower`` is attained by ``ray`` (an actual normalised cone point)."""

    upper: float
    lower: float
    ray: np.ndarray | None
    cells: int
    method: str
    #: The actual rays met with the largest values (columns, best first; at most :data:`MAX_FOUND`), for pricing.
    rays: np.ndarray | None = None


def frank_wolfe_lower_bound(f: float, g_theta: float, nu_sum: float, max_value: float) -> float:
    """The design's lower bound ``f* ≥ f(θ̄) − g·θ̄ − ν·1 − max_r (rᵀMr − ν·r)`` (docs/design.md §7).

    Implements: convexity of the A/D criterion in θ (Frank–Wolfe gap) with the master's multipliers ν and
    ``Σθ = 1`` on normalised rays; ``max_value`` must be an upper bound of the pricing maximum
    (:func:`max_ray_value`), which makes the result a valid lower bound on the optimal criterion.

    Parameters
    ----------
    f : float
        Criterion at the master's θ̄ (``tr F⁻¹`` or ``−log det F``).
    g_theta : float
        ``Σ_k θ̄_k g_k`` with ``g_k = −r_kᵀMr_k``.
    nu_sum : float
        ``ν·1``.
    max_value : float
        Upper bound on ``max_r rᵀMr − ν·r``.

    Returns
    -------
    float
        The lower bound (valid for every θ̄ with ``F(θ̄) ≻ 0`` and every ν).
    """
    return float(f - g_theta - nu_sum - max_value)


def scaled_frank_wolfe_bound(f: float, g_theta: float, nu_sum: float, max_value: float, *,
                             d_optimal: bool = False, n: int | None = None) -> float:
    """The best of :func:`frank_wolfe_lower_bound`'s bounds along its dual point's ray ``(αM, αν)``, α > 0.

    Implements: docs/design.md §7.1 ("the best scale of the Frank–Wolfe point"). The Frank–Wolfe bound is the
    Lagrangian dual value of the point ``(M, ν)``: for every ``M ⪰ 0`` and every design over normalised rays
    (``Σθ_k r_k = 1``, ``Σθ_k = 1``),

    * A-optimal: ``tr F⁻¹ ≥ 2 tr M^½ − tr MF`` (the minimum over F of ``tr F⁻¹ + tr MF`` is ``2 tr M^½``);
    * D-optimal: ``−log det F ≥ log det M + N − tr MF``;

    and ``tr MF = Σθ_k r_kᵀMr_k ≤ ν·1 + q*`` with ``q* ≥ max_r rᵀMr − ν·r``. At ``M = F(θ̄)⁻²`` (A) or
    ``F(θ̄)⁻¹`` (D) the first terms are ``f − g·θ̄``, which gives :func:`frank_wolfe_lower_bound` at α = 1. The
    pricing maximum is homogeneous (``q*(αM, αν) = α q*``), so with ``c = ν·1 + q*`` every α gives a valid bound

    * A: ``2√α S − α c`` with ``S = tr M^½ = (f − g·θ̄)/2``, best at ``√α = S/c``: ``S²/c``;
    * D: ``(f − g·θ̄) + N log α − α c``, best at ``α = N/c``: ``f − g·θ̄ + N log(N/c) − N``;

    never below the α = 1 value (AM–GM; ``log y ≥ 1 − 1/y``). The gain is large exactly where the pricing still
    finds improving rays: with ``ν·1 = f`` (the master's optimality conditions) and ``q* = κ f``, the bound is
    ``f/(1 + κ)`` instead of ``f(1 − κ)``.

    Parameters
    ----------
    f, g_theta, nu_sum, max_value
        As in :func:`frank_wolfe_lower_bound`; ``max_value`` must be an upper bound of the pricing maximum.
    d_optimal : bool
        The D-optimal criterion (``f = −log det F``) instead of the A-optimal one (``f = tr F⁻¹``).
    n : int, optional
        The number of symbols (the dimension of F); required with ``d_optimal``.

    Returns
    -------
    float
        A lower bound on the optimal criterion (``tr F⁻¹`` or ``−log det F``), at least
        :func:`frank_wolfe_lower_bound`'s.
    """
    plain = frank_wolfe_lower_bound(f, g_theta, nu_sum, max_value)
    c = float(nu_sum + max_value)
    head = float(f - g_theta)  # 2 tr M^½ (A) or log det M + N (D)
    if not (math.isfinite(plain) and math.isfinite(c) and c > 0.0):
        return plain
    if d_optimal:
        if n is None or n < 1:
            raise ValueError(f"scaled_frank_wolfe_bound: n must be the number of symbols with d_optimal, got {n!r}")
        return max(plain, head + n * math.log(n / c) - n)
    root = 0.5 * head
    if root <= 0.0:
        return plain
    return max(plain, root * root / c)


# --------------------------------------------------------------------------------------------------
# steps 1–2: the lift and the diagonal certificate
# --------------------------------------------------------------------------------------------------
def _lift(M: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``b`` minimising ``Σ_{x≠y} (M_xy + p_x b_y + b_x p_y)²`` (normal equations ``(Diag δ + ppᵀ) b = rhs``)."""
    s2 = float(p @ p)
    rhs = -(M @ p) + np.diag(M) * p
    delta = s2 - 2.0 * p**2
    if np.all(np.abs(delta) > 1e-9 * s2):  # Sherman–Morrison (δ may be negative for a dominant symbol)
        y, z = rhs / delta, p / delta
        den = 1.0 + float(p @ z)
        if abs(den) > 1e-9 * (1.0 + abs(float(p @ z))):
            return y - z * float(p @ y) / den
    if p.size > EIG_DENSE_MAX:  # any b is valid: skip the fit rather than pay for a dense least squares
        return np.zeros_like(p)
    return np.linalg.lstsq(np.diag(delta) + np.outer(p, p), rhs, rcond=None)[0]


def _lambda_max_upper(R: np.ndarray, deadline: float = np.inf) -> float:
    """A guaranteed upper bound on the largest eigenvalue of the symmetric matrix ``R`` (floating point included).

    Dense eigenvalues up to :data:`EIG_DENSE_MAX`, then Lanczos proven by a Cholesky factorisation when it fits
    before ``deadline`` (about N³/3 flops at :data:`FLOPS` per second), else Gershgorin's row sums.
    """
    n = R.shape[0]
    scale = float(np.sqrt(np.sum(R * R)))
    if scale == 0.0:
        return 0.0
    margin = 8.0 * n * np.finfo(float).eps * scale
    if n <= EIG_DENSE_MAX:
        return float(np.linalg.eigvalsh(R)[-1]) + margin
    from scipy.sparse.linalg import eigsh  # noqa: PLC0415

    if time.perf_counter() + n**3 / 3.0 / FLOPS > deadline:
        return float(np.abs(R).sum(axis=1).max()) + margin  # Gershgorin: always valid, O(N²)
    try:
        lam = float(eigsh(R, k=1, which="LA", tol=1e-8, return_eigenvectors=False)[0])
    except Exception:  # noqa: BLE001 — any Lanczos failure falls back to Gershgorin below
        lam = None
    if lam is not None:
        step = max(1e-6 * scale, margin)
        for _ in range(6):  # Cholesky of (λ + step) I − R proves the bound
            try:
                np.linalg.cholesky((lam + step) * np.eye(n) - R)
                return lam + step + margin
            except np.linalg.LinAlgError:
                step *= 10.0
    return float(np.abs(R).sum(axis=1).max()) + margin  # Gershgorin: always valid


def _certificate(M: np.ndarray, p: np.ndarray, b: np.ndarray, scale: np.ndarray, deadline: float = np.inf):
    """``d`` with ``rᵀMr ≤ Σ_x d_x r_x² − 2 b·r`` for every ``r`` with ``p·r = 1`` (steps 1–2), any ``b``, ``scale > 0``.

    ``d = diag M_b + t·scale`` with ``t`` a guaranteed upper bound on ``λ_max(S^{-½}(M_b − Diag M_b)S^{-½})``.
    """
    Mb = M + np.outer(p, b) + np.outer(b, p)
    diag = np.diag(Mb).copy()
    si = 1.0 / np.sqrt(scale)
    R = (Mb - np.diag(diag)) * si[:, None] * si[None, :]
    return diag + _lambda_max_upper(0.5 * (R + R.T), deadline) * scale


def _top_eig(A: np.ndarray, v0: np.ndarray | None):
    """Largest eigenpair of a symmetric matrix (dense for small N, Lanczos otherwise; an estimate, not a bound)."""
    if A.shape[0] <= 400:
        ev, V = np.linalg.eigh(A)
        return float(ev[-1]), V[:, -1]
    from scipy.sparse.linalg import eigsh  # noqa: PLC0415

    ev, V = eigsh(A, k=1, which="LA", v0=v0, tol=1e-6)
    return float(ev[0]), V[:, 0]


def _optimise_certificate(M, p, nu, pool, b0, s0, deadline, max_iter: int = 400):
    """``(b, scale)`` minimising a soft maximum over the rays ``pool`` of the separable bound (any result is valid).

    The certificate's value on a ray is ``Σ_x (diag M_b + t s)_x r_x² − (ν + 2b)·r`` with ``t = λ_max(S^{-½}R_bS^{-½})``;
    its gradient in ``(b, log s)`` follows from the top eigenvector (Hellmann–Feynman). L-BFGS-B, stopped at the
    deadline; returns the best point seen.
    """
    from scipy.optimize import minimize  # noqa: PLC0415

    n = p.size
    R2 = pool * pool
    dM = np.diag(M)
    state = {"best": (np.inf, b0, s0), "v": None}

    class _Stop(Exception):
        pass

    def fg(x):
        if time.perf_counter() > deadline:
            raise _Stop
        b, s = x[:n], np.exp(np.clip(x[n:], -30, 30))
        Mb = M + np.outer(p, b) + np.outer(b, p)
        si = 1.0 / np.sqrt(s)
        A = (Mb - np.diag(np.diag(Mb))) * si[:, None] * si[None, :]
        t, y = _top_eig(0.5 * (A + A.T), state["v"])
        state["v"] = y
        u = y * si
        d = dM + 2.0 * p * b + t * s
        phi = d @ R2 - (nu + 2.0 * b) @ pool
        m = float(phi.max())
        temp = max(1e-4 * (abs(m) + float(np.abs(phi).mean())), 1e-12)
        e = np.exp((phi - m) / temp)
        wts = e / e.sum()
        val = m + temp * math.log(float(e.sum()))
        if m < state["best"][0]:
            state["best"] = (m, b.copy(), s.copy())
        sr2 = s @ R2
        g_b = (2.0 * p[:, None] * R2 - 2.0 * pool) @ wts + (2.0 * u * (p @ u) - 2.0 * p * u * u) * float(sr2 @ wts)
        g_s = t * (R2 @ wts) - (t / s) * y * y * float(sr2 @ wts)
        return val, np.concatenate([g_b, g_s * s])

    try:
        minimize(fg, np.concatenate([b0, np.log(s0)]), jac=True, method="L-BFGS-B",
                 options={"maxiter": max_iter, "maxfun": 3 * max_iter})
    except _Stop:
        pass
    return state["best"][1], state["best"][2]


def _box_bound(d: np.ndarray, w: np.ndarray, p: np.ndarray, top: np.ndarray) -> float:
    """``max Σ d_x r_x² − w_x r_x`` over ``0 ≤ r ≤ top``, ``p·r = 1``, bounded by its Lagrangian dual (any λ valid)."""
    from scipy.optimize import minimize_scalar  # noqa: PLC0415

    zero = np.zeros_like(top)

    def dual(lam: float) -> float:
        return float(lam + quad_max(d, w + lam * p, zero, top).sum())

    scale = float(np.abs(d).max() * top.max() ** 2 + np.abs(w).max() * top.max()) / max(float(p.min()), 1e-300)
    res = minimize_scalar(dual, bounds=(-4 * scale - 1, 4 * scale + 1), method="bounded", options={"xatol": 1e-10})
    return min(dual(float(res.x)), dual(0.0))


# --------------------------------------------------------------------------------------------------
# step 3: branch and bound on mass cells for the ℓ1 ball's ray family
# --------------------------------------------------------------------------------------------------
def _ball_form(uset: UncertaintySet, prior: np.ndarray):
    """``(center, radius)`` of an ℓ1 ball whose column cone is the set's, or None."""
    if isinstance(uset, L1Ball):
        return uset.center, min(float(uset.radius), 2.0)
    if isinstance(uset, Simplex):
        return prior / prior.sum(), 2.0  # the ball of radius 2 is the simplex, whatever its centre
    if isinstance(uset, FiniteSet) and uset.distributions.shape[0] == 1:
        return uset.distributions[0], 0.0
    return None


def _box_top(uset: UncertaintySet, epsilon: float, prior: np.ndarray) -> np.ndarray:
    """``T_x ≥ r_x`` on the slice ``π·r = 1`` (docs/design.md §7.6, "the caps").

    For any ``Q ∈ 𝒫``, ``r_x ≤ e^ε Q·r ≤ e^ε max_y(Q_y/π_y)``, and ``r_x ≤ 1/π_x``. For an ℓ1 ball (the simplex is
    the ball of radius 2 about π, a fixed prior the ball of radius 0) take ``Q = P̂ + m(π − e_x)``, in the ball for
    ``m ≤ m_x = min(P̂_x, β/2)/(1 − π_x)``: ``Q·r = P̂·r + m(1 − r_x) ≤ q + m − m r_x`` with ``q = max(P̂/π)``, so
    ``r_x ≤ e^ε (q + m_x)/(1 + e^ε m_x)`` (exact for the simplex: ``e^ε/(1 + (e^ε − 1)π_x)``).
    """
    n = prior.size
    form = _ball_form(uset, prior)
    if form is not None:
        center, radius = form
        q = float(np.max(center / prior))
        m = np.minimum(center, radius / 2.0) / np.maximum(1.0 - prior, 1e-300) if n > 1 else np.zeros(1)
        # e^ε (q + m)/(1 + e^ε m), written without e^ε (no overflow at large ε, nor inf·0 where π_x rounds to 1);
        # (1 + 1e-12): the enumerated rays meet the caps to the last bit
        return np.minimum((q + m) / (math.exp(-epsilon) + m), 1.0 / prior) * (1.0 + 1e-12)
    if isinstance(uset, FiniteSet):
        q = (uset.distributions / prior[None, :]).max(axis=1)
    else:
        q = np.array([np.inf])
    return np.minimum(math.exp(epsilon) * float(q.min()), 1.0 / prior)


def ray_value_bounds(
    uset: UncertaintySet,
    epsilon: float,
    prior: np.ndarray,
    M: np.ndarray,
    nu: np.ndarray,
    *,
    deadline: float | None = None,
    rtol: float = 1e-3,
    atol: float | None = None,
    rays: np.ndarray | None = None,
    work: int | None = None,
) -> RayValueBounds:
    """Upper and lower bounds on ``max_r rᵀMr − ν·r`` over the normalised extreme rays (see module docstring).

    Implements: steps 1–3 of the module docstring (docs/design.md §7, "A valid bound at every N").

    Parameters
    ----------
    uset : UncertaintySet
        ``L1Ball`` (any radius), ``Simplex``, ``FiniteSet`` (one point: a fixed prior, exact; several: the box bound
        only). Other sets give ``upper = inf``.
    epsilon : float
        ε > 0.
    prior : numpy.ndarray, shape (N,)
        The normalisation ``π·r = 1`` (positive).
    M : numpy.ndarray, shape (N, N)
        Symmetric PSD (``F⁻²`` or ``F⁻¹``); only its symmetric part is used.
    nu : numpy.ndarray, shape (N,)
    deadline : float, optional
        ``time.perf_counter()`` value at which refinement stops (the bound is valid at every step); default
        :data:`DEFAULT_SECONDS` from now.
    rtol : float, default 1e-3
        Refinement stops when upper − lower of the separable bound is below ``atol``, by default ``rtol`` times the
        scale ``max(|ν·1|, |best value found|)`` (``ν·1 = Σθ_k r_kᵀMr_k`` is the criterion's scale at the master's
        optimum: ``tr F⁻¹`` for A, N for D).
    atol : float, optional
        Absolute refinement tolerance (overrides ``rtol``).
    rays : numpy.ndarray, shape (N, K), optional
        Cone points (e.g. the master's columns) on which the certificate is tuned first; they only steer the
        tuning, the bound is valid whatever they are.
    work : int, optional
        A work budget instead of a time budget: ``work`` branch-and-bound rounds in all (split over the
        :data:`CERTIFICATE_ROUNDS`) and ``work // 5`` L-BFGS iterations per certificate (between 5 and
        :data:`WORK_TUNING_ITERATIONS`; 3 function evaluations each at most), so the
        result does not depend on the machine's speed or load (the column generation's stalled rounds use it: then
        a longer time limit follows the same path). ``deadline`` still cuts it short.

    Returns
    -------
    RayValueBounds
    """
    pi = np.asarray(prior, dtype=float)
    M = np.asarray(M, dtype=float)
    nu = np.asarray(nu, dtype=float)
    n = pi.size
    if pi.ndim != 1 or not np.all(np.isfinite(pi)) or np.any(pi <= 0):
        raise ValueError(f"prior must be a positive finite vector, got {pi!r}")
    if M.shape != (n, n) or nu.shape != (n,) or uset.size != n:
        raise ValueError(f"M must be ({n}, {n}) and nu ({n},) for a set on {uset.size} symbols, got {M.shape}, {nu.shape}")
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(nu))):
        return RayValueBounds(np.inf, -np.inf, None, 0, "none")
    if deadline is None:
        deadline = time.perf_counter() + DEFAULT_SECONDS
    if work is not None and (isinstance(work, bool) or not isinstance(work, (int, np.integer)) or work < 1):
        raise ValueError(f"work must be a positive number of branch-and-bound rounds, got {work!r}")
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    # dense algebra of this size is fastest on one BLAS thread (and never oversubscribes a shared machine)
    with threadpool_limits(1):
        return _bounds(uset, epsilon, pi, M, nu, deadline, rtol, atol, rays, work)


def _bounds(uset, epsilon, pi, M, nu, deadline, rtol, atol, rays, work=None) -> RayValueBounds:
    n = pi.size
    M = 0.5 * (M + M.T)
    pool = np.zeros((n, 0)) if rays is None else np.asarray(rays, dtype=float).reshape(n, -1)
    pool = pool[:, (pool.min(axis=0) >= 0) & (pi @ pool > 0)] if pool.size else pool
    pool = pool / (pi @ pool) if pool.size else pool
    top = _box_top(uset, epsilon, pi)
    form = _ball_form(uset, pi)
    tol = atol if atol is not None else rtol * max(abs(float(nu.sum())), 1e-300)

    def q_of(R):
        return np.einsum("ik,ik->k", R, M @ R) - nu @ R

    exact = _enumerated(uset, epsilon, pi, q_of)
    if exact is not None:
        val, ray = exact
        return RayValueBounds(with_rounding_margin(val, nu), val, ray, 0, "enumeration", ray[:, None])
    b, scale = _lift(M, pi), np.ones(n)
    upper, lower, best, cells, method = np.inf, -np.inf, None, 0, "none"
    found_total = 0
    for k in range(CERTIFICATE_ROUNDS):
        left = deadline - time.perf_counter()
        share = left / (CERTIFICATE_ROUNDS - k)
        tune_until = deadline if work is not None else time.perf_counter() + 0.4 * share
        if pool.shape[1]:
            b, scale = _optimise_certificate(M, pi, nu, pool[:, -MAX_POOL:], b, scale, tune_until,
                                             400 if work is None else max(5, min(WORK_TUNING_ITERATIONS, work // 5)))
        elif k > 0:
            break
        d = _certificate(M, pi, b, scale, deadline)
        w = nu + 2.0 * b
        if np.all(np.isfinite(top)):
            ub = _box_bound(d, w, pi, top)
            if ub < upper:
                upper, method = ub, "box"
        if form is None:
            if rays is None or k > 0:
                break
            continue
        cone = BallCells(form[0], form[1], epsilon, pi, d, w, M, nu)
        ub, found, ray_q, ray, cells = branch_and_bound(
            cone, deadline if work is not None else time.perf_counter() + 0.6 * share, tol, q_of,
            max_rounds=None if work is None else max(1, work // CERTIFICATE_ROUNDS))
        if ub < upper:
            upper, method = ub, "cells"
        if ray_q > lower:
            lower, best = ray_q, ray
        pool = np.hstack([pool, found])
        found_total += found.shape[1]
        if time.perf_counter() > deadline:
            break
    upper = with_rounding_margin(upper, nu)  # rounding in the cell sums
    met = pool[:, pool.shape[1] - found_total:] if found_total else np.zeros((n, 0))
    met = np.hstack([best[:, None], met]) if best is not None else met
    if met.shape[1]:
        qv = q_of(met)
        met = met[:, np.argsort(-qv)[:MAX_FOUND]]
    return RayValueBounds(float(upper), float(lower), best, cells, method, met)


def enumerated_rays(uset: UncertaintySet, epsilon: float, pi: np.ndarray) -> np.ndarray | None:
    """Every extreme ray normalised to ``pi·r = 1`` when they are few (closed forms of :mod:`..rays`: ℓ1 balls,
    the simplex, a fixed prior; at most :data:`ENUMERATE_GENERIC` symbols outside Proposition 2,
    :data:`ENUMERATE_MAX` otherwise), else None."""
    from ..rays import enumerate_rays  # noqa: PLC0415

    generic = isinstance(uset, L1Ball) and uset.radius > 0 and not uset.in_interior_regime
    if not isinstance(uset, (L1Ball, Simplex)) and not (isinstance(uset, FiniteSet) and uset.distributions.shape[0] == 1):
        return None
    if pi.size > (ENUMERATE_GENERIC if generic else ENUMERATE_MAX):
        return None
    R = enumerate_rays(uset, epsilon)
    return R / (pi @ R)


def ray_values(q_of, R: np.ndarray) -> np.ndarray:
    """``q_of`` on the columns of ``R``, 4096 at a time (bounded memory for the dense ``M @ R``)."""
    return np.concatenate([q_of(R[:, i : i + 4096]) for i in range(0, R.shape[1], 4096)])


def with_rounding_margin(value: float, nu: np.ndarray) -> float:
    """``value`` raised by ``1e-9 (|value| + |ν·1|)``: the rounding of the sums behind a computed maximum."""
    return float(value + 1e-9 * (abs(value) + abs(float(nu.sum()))))


def _enumerated(uset: UncertaintySet, epsilon: float, pi: np.ndarray, q_of):
    """Exact maximum over every extreme ray when they are few (:func:`enumerated_rays`), else None."""
    R = enumerated_rays(uset, epsilon, pi)
    if R is None:
        return None
    vals = ray_values(q_of, R)
    k = int(np.argmax(vals))
    return float(vals[k]), R[:, k]


def max_ray_value(
    uset: UncertaintySet,
    epsilon: float,
    prior: np.ndarray,
    M: np.ndarray,
    nu: np.ndarray,
    *,
    deadline: float | None = None,
    rays: np.ndarray | None = None,
) -> float:
    """A valid upper bound on max over normalised extreme rays r of the cone (prior·r = 1) of rᵀ M r − ν·r.

    Implements: docs/design.md §7, "A valid bound at every N" (module docstring: lift, diagonal certificate, branch
    and bound on mass cells of the ℓ1 ball's ray family; a box Lagrangian bound for finite sets).

    Parameters
    ----------
    uset : UncertaintySet
        ``L1Ball`` (both sides of Proposition 2), ``Simplex``, ``FiniteSet``.
    epsilon : float
    prior : numpy.ndarray, shape (N,)
        Positive; the rays are normalised to ``prior·r = 1``.
    M : numpy.ndarray, shape (N, N)
        Symmetric PSD (``F⁻²`` for A-optimality, ``F⁻¹`` for D).
    nu : numpy.ndarray, shape (N,)
        The master's multipliers.
    deadline : float, optional
        ``time.perf_counter()`` value after which refinement stops; the returned bound is valid regardless.
    rays : numpy.ndarray, shape (N, K), optional
        Cone points (the master's columns) to tune the certificate on (:func:`ray_value_bounds`).

    Returns
    -------
    float
        ``≥ max_r rᵀMr − ν·r``; ``inf`` only for sets without a usable description (none of the library's).
    """
    return ray_value_bounds(uset, epsilon, prior, M, nu, deadline=deadline, rays=rays).upper
