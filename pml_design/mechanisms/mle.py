"""The maximum-likelihood estimate of the input distribution from output counts (Mechanism.estimate, method "ibu").

``L(π) = Σ_y f_y log(π·w_y)`` over the simplex, from the observed outputs' columns ``w_y`` and their frequencies
``f_y`` (the sufficient statistics: reports never enter). Three maximisers, one limit (docs/design.md §8):

- :func:`_newton_mle`: a barrier Newton method, exact to a duality gap of ``N·1e-12``, boundary zeros included. Each
  step forms the N × N Hessian, ``O(N² M)``: at N = 5 000 on 5 402 outputs 66 steps took 161 s;
- :func:`_squarem_mle`: EM accelerated by SQUAREM (Varadhan & Roland, *Scand. J. Statist.* 35, 2008, scheme S3),
  ``O(N M)`` a step. There: 10 s, the log-likelihood within 5·10⁻¹² (relative) of Newton's and the estimate within
  6·10⁻⁶ in ℓ1 (its statistical error at 10⁵ reports is ~10⁴ times larger; a stopping tolerance of 10⁻¹³: 7.6 s and
  6·10⁻⁵, 10⁻¹⁵: 16 s and 2·10⁻⁶);
- :func:`_em_mle`: plain EM (the iterative Bayesian update), the fall-back.

:func:`maximum_likelihood` takes Newton while one Hessian costs at most :data:`NEWTON_MAX_WORK` (N² M), SQUAREM
above.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []

#: Newton while ``N² M`` (one Hessian's multiply-adds) is at most this, SQUAREM above: 2·10¹⁰ is ~0.5 s a step on
#: one core (N = 2 000, 5 000 outputs; 60–70 steps, against ~200 SQUAREM steps of O(N M)).
NEWTON_MAX_WORK: float = 2e10
#: SQUAREM stops when a step raises the log-likelihood by at most this (relative) three times in a row, or moves the
#: estimate by less than ``tol`` in ℓ1.
SQUAREM_RTOL: float = 1e-14


def maximum_likelihood(Wu: np.ndarray, fu: np.ndarray, start: np.ndarray, max_iter: int, tol: float,
                       warm_start: object = None) -> np.ndarray:
    """The maximiser of ``Σ_y f_y log(π·w_y)`` on the simplex: Newton from ``warm_start()`` (a callable giving a
    start, computed only for Newton; else ``start``) while affordable, SQUAREM from ``start`` above; EM where Newton's
    system is singular."""
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    n = Wu.shape[0]
    if float(n) * n * Wu.shape[1] > NEWTON_MAX_WORK:
        return _squarem_mle(Wu, fu, start, max_iter, tol)
    pi = start if warm_start is None else warm_start()
    with threadpool_limits(1 if n <= 1000 else None):  # small dense algebra: one BLAS thread
        newton = _newton_mle(Wu, fu, pi)  # the MLE in a few dozen Newton steps on the output counts
    return newton if newton is not None else _em_mle(Wu, fu, pi, max_iter, tol)


def _em_step(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """One EM step (renormalised: exact arithmetic keeps the sum at 1, ``Σ_x π_x Σ_y w_xy f_y/q_y = Σ_y f_y``)."""
    q = pi @ Wu
    new = pi * (Wu @ (fu / np.where(q > 0, q, 1.0)))
    return new / new.sum()


def _loglik(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray) -> float:
    q = pi @ Wu
    return float(fu @ np.log(q)) if np.all(q > 0) else -np.inf


def _squarem_mle(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
    """EM accelerated by SQUAREM, scheme S3: from two EM steps ``r = F(π) − π``, ``v = F(F(π)) − 2F(π) + π``, the step
    ``π − 2αr + α²v`` with ``α = −‖r‖/‖v‖`` (at most −1; moved towards −1 until the point is positive), then one EM
    step from it, kept only if the log-likelihood does not fall below the plain double step's (so it never falls: EM
    never lowers it). Stops after ``max_iter`` steps, an ℓ1 move below ``tol``, or three steps each raising the
    log-likelihood by at most :data:`SQUAREM_RTOL` of it. Coordinates below ``10 N · 10⁻¹²`` are then set to 0, as
    :func:`_newton_mle` sets them (N = 5 000: the 4 495 coordinates so set held 2·10⁻⁷ in all, and are Newton's
    zeros; EM left them at 10⁻⁴¹ – 10⁻⁸)."""
    pi = np.asarray(pi, dtype=float) / np.sum(pi)
    ll, flat = _loglik(Wu, fu, pi), 0
    for _ in range(max_iter):
        p1 = _em_step(Wu, fu, pi)
        p2 = _em_step(Wu, fu, p1)
        r, v = p1 - pi, p2 - 2.0 * p1 + pi
        nv = float(np.linalg.norm(v))
        new, new_ll = p2, _loglik(Wu, fu, p2)
        if nv > 0.0:
            alpha = min(-float(np.linalg.norm(r)) / nv, -1.0)
            cand = pi - 2.0 * alpha * r + alpha * alpha * v
            while not np.all(cand > 0.0) and alpha < -1.0:
                alpha = min((alpha - 1.0) / 2.0, -1.0)
                cand = pi - 2.0 * alpha * r + alpha * alpha * v
            if np.all(cand > 0.0):
                cand = _em_step(Wu, fu, cand / cand.sum())
                cand_ll = _loglik(Wu, fu, cand)
                if cand_ll >= new_ll:
                    new, new_ll = cand, cand_ll
        moved = float(np.abs(new - pi).sum())
        flat = flat + 1 if new_ll - ll <= SQUAREM_RTOL * abs(new_ll) else 0
        pi, ll = new, new_ll
        if moved < tol or flat >= 3:
            break
    pi = np.where(pi < 10 * pi.shape[0] * 1e-12, 0.0, pi)  # zeros as Newton sets them (EM only shrinks them: 1e-41)
    return pi / pi.sum()


def _em_mle(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
    """EM (the iterative Bayesian update) ``π_x ← π_x Σ_y f_y w_xy/(π·w_y)`` on the observed outputs' columns, from
    ``pi``, until the ℓ1 change is below ``tol``. Only observed outputs enter; the update is renormalised, so its
    fixed points are the KKT points of ``Σ_y f_y log(π·w_y)`` on the simplex whatever the columns' scale."""
    for _ in range(max_iter):
        py = pi @ Wu
        new = pi * (Wu @ (fu / np.where(py > 0, py, 1.0)))
        new /= new.sum()
        if np.abs(new - pi).sum() < tol:
            return new
        pi = new
    return pi


def _newton_mle(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray, mu_final: float = 1e-12) -> np.ndarray | None:
    """The maximiser of ``L(π) = Σ_y f_y log(π·w_y)`` on the simplex by a barrier Newton method, or None.

    The sufficient statistics are the output frequencies ``f_y`` (reports never enter). With ``q = πᵀW``,
    ``∇L = W (f/q)`` and ``−∇²L = W diag(f/q²) Wᵀ``. Barrier method (Boyd & Vandenberghe §11.3): maximise
    ``L + μ Σ_x log π_x`` subject to ``Σ π = 1`` by equality-constrained damped Newton steps (cut to stay in the
    open orthant, halved until the objective increases), then ``μ ← μ/100`` (from 1e-5) down to ``mu_final``; the duality gap
    is ``N μ``, so the result is the MLE (the limit of EM) to about that accuracy, boundary zeros included
    (coordinates below ``N μ`` are set to 0). None when the system is singular (the caller falls back to EM).
    """
    n = pi.shape[0]
    pi = 0.5 * pi / pi.sum() + 0.5 / n  # strictly interior start
    mu = 1e-5

    def phi(p: np.ndarray) -> float:
        q = p @ Wu
        if np.any(q <= 0) or np.any(p <= 0):
            return -np.inf
        return float(fu @ np.log(q)) + mu * float(np.log(p).sum())

    while True:
        cur = phi(pi)
        for _ in range(60):
            q = pi @ Wu
            g = Wu @ (fu / q) + mu / pi
            X = Wu * (np.sqrt(fu) / q)  # H = XXᵀ: a symmetric rank-k update, half a general product (2.2× at
            H = X @ X.T                  # N = 2 000, 6 000 outputs: 0.65 → 0.29 s a step)
            H[np.diag_indices(n)] += mu / pi**2
            try:
                c = np.linalg.cholesky(H)
            except np.linalg.LinAlgError:
                return None
            Hi_g = _chol_solve(c, g)
            Hi_1 = _chol_solve(c, np.ones(n))
            d = Hi_g - Hi_1 * (Hi_g.sum() / Hi_1.sum())
            if float(g @ d) < 1e-14:  # Newton decrement²: centred
                break
            neg = d < 0
            s = min(1.0, 0.99 * float(np.min(-pi[neg] / d[neg]))) if np.any(neg) else 1.0
            while s > 1e-14:
                new = pi + s * d
                val = phi(new)
                if val >= cur:
                    break
                s *= 0.5
            else:
                break
            pi, cur = new, val
        if mu <= mu_final:
            break
        mu = max(mu * 0.01, mu_final)
    pi = np.where(pi < 10 * n * mu_final, 0.0, pi)
    return pi / pi.sum()


def _chol_solve(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    from scipy.linalg import solve_triangular  # noqa: PLC0415

    return solve_triangular(c.T, solve_triangular(c, b, lower=True), lower=False)
