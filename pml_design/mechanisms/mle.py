"""The maximum-likelihood estimate of the input distribution from output counts (Mechanism.estimate, method "ibu").

``L(π) = Σ_y f_y log(π·w_y)`` over the simplex, from the observed outputs' columns ``w_y`` and their frequencies
``f_y`` (the sufficient statistics: reports never enter). Three maximisers, one limit (docs/design.md §8):

- :func:`_newton_mle`: a barrier Newton method, exact to a duality gap of ``N·1e-12``, boundary zeros included. Each
  step forms the N × N Hessian, ``O(N² M)``: at N = 5 000 on 5 402 outputs 66 steps took 161 s;
- :func:`_squarem_mle`: EM accelerated by SQUAREM (Varadhan & Roland, *Scand. J. Statist.* 35, 2008, scheme S3),
  ``O(N M)`` a step (fewer where the columns have two levels: :class:`_Columns`). Alone, to a relative tolerance of
  10⁻¹⁴ on the log-likelihood: 10 s there, the estimate within 6·10⁻⁶ in ℓ1 of Newton's; but at N = 10 000 (21 771
  outputs) more than 15 minutes, the boundary coordinates creeping to 0;
- :func:`_polish_on_support`: SQUAREM to 10⁻¹⁰ finds the support (the MLE's nonzero coordinates, a few hundred:
  most categories of a wide column are estimated at 0), then Newton runs on it and the KKT condition is checked
  on the rest (an active-set step). N = 5 000: 4.6 s in all, the log-likelihood within 4·10⁻¹² (relative) of
  Newton's on all coordinates, the estimate within 2·10⁻⁶ in ℓ1 and the same zeros; N = 10 000: 37 s;
- :func:`_em_mle`: plain EM (the iterative Bayesian update), the fall-back.

:func:`maximum_likelihood` takes Newton while one Hessian costs at most :data:`NEWTON_MAX_WORK` (N² M), SQUAREM and
the polish above.
"""

from __future__ import annotations

import numpy as np

from ..posterior import two_levels

__all__: list[str] = []

#: Newton while ``N² M`` (one Hessian's multiply-adds) is at most this, SQUAREM above: 2·10¹⁰ is ~0.5 s a step on
#: one core (N = 2 000, 5 000 outputs; 60–70 steps, against ~200 SQUAREM steps of O(N M)).
NEWTON_MAX_WORK: float = 2e10
#: SQUAREM stops when a step raises the log-likelihood by at most this (relative) three times in a row, or moves the
#: estimate by less than ``tol`` in ℓ1.
SQUAREM_RTOL: float = 1e-14

#: The barrier's last weight in :func:`_newton_mle`; coordinates below ``10 N`` times it are the MLE's zeros (also
#: after :func:`_squarem_mle`).
MU_FINAL: float = 1e-12


def maximum_likelihood(Wu: np.ndarray, fu: np.ndarray, start: np.ndarray, max_iter: int, tol: float,
                       warm_start: object = None) -> np.ndarray:
    """The maximiser of ``Σ_y f_y log(π·w_y)`` on the simplex: Newton from ``warm_start()`` (a callable giving a
    start, computed only for Newton; else ``start``) while affordable; above, SQUAREM from ``start`` to find the
    support, then Newton on it (:func:`_polish_on_support`); EM where Newton's system is singular."""
    n = Wu.shape[0]
    if float(n) * n * Wu.shape[1] > NEWTON_MAX_WORK:
        pi = _squarem_mle(Wu, fu, start, max_iter, tol, rtol=SUPPORT_RTOL)
        return _polish_on_support(Wu, fu, pi, max_iter, tol)
    pi = start if warm_start is None else warm_start()
    newton = _newton_one_thread_when_small(Wu, fu, pi)  # the MLE in a few dozen Newton steps on the output counts
    return newton if newton is not None else _em_mle(Wu, fu, pi, max_iter, tol)


def _newton_one_thread_when_small(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray) -> np.ndarray | None:
    """:func:`_newton_mle` on one BLAS thread up to 1 000 categories (small dense algebra is never oversubscribed)."""
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    with threadpool_limits(1 if Wu.shape[0] <= 1000 else None):
        return _newton_mle(Wu, fu, pi)


def _polish_on_support(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
    """Newton on the support of ``pi`` (an active-set step): the MLE restricted to those coordinates, then the
    optimality of the others checked, ``∂L/∂π_x = (W_u (f/q))_x ≤ 1`` (the KKT condition on the simplex: the
    gradient's largest entries are those of the support, where it is 1); coordinates that violate it by more than
    :data:`KKT_TOL` join the support and Newton runs again (at most :data:`POLISH_ROUNDS` times). Where the support
    is too large for Newton, or the rounds end with the condition still violated, SQUAREM goes on to its strict
    tolerance instead."""
    m = Wu.shape[1]
    support = pi > 0
    for _ in range(POLISH_ROUNDS):
        unreached = ~(Wu[support] > 0).any(axis=0)  # observed outputs no row of the support can produce (a review: an
        if unreached.any():                          # output only a category zeroed by SQUAREM reaches made q = 0)
            joined = ~support & (Wu[:, unreached] > 0).any(axis=1)
            support |= joined
            pi = np.where(joined, 1e-6, pi)
            pi /= pi.sum()
        s = int(support.sum())
        sub = None if float(s) * s * m > NEWTON_MAX_WORK else _newton_one_thread_when_small(
            np.ascontiguousarray(Wu[support]), fu, pi[support] / pi[support].sum())
        if sub is None:  # the support too large for Newton, or its system singular: SQUAREM, zeros revivable
            return _squarem_revived(Wu, fu, pi, max_iter, tol)
        full = np.zeros(Wu.shape[0])
        full[support] = sub
        grad = log_likelihood_gradient(Wu, fu, full)
        violated = ~support & (grad > 1.0 + KKT_TOL)
        if not violated.any():
            return full
        support |= violated
        pi = np.where(violated, 1e-6, full)
        pi /= pi.sum()
    # still not optimal after the rounds (never seen): SQUAREM from the last point, zeros revivable, which converges
    # to the MLE whatever the support (the last restricted optimum was returned before, a review: not the MLE)
    return _squarem_revived(Wu, fu, pi, max_iter, tol)


def log_likelihood_gradient(W: np.ndarray, counts: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """``Σ_y c_y w_y/(π·w_y)``, the gradient of ``Σ_y c_y log(π·w_y)`` at π (an output with ``π·w_y = 0`` counts 0;
    at the MLE every observed output has ``π·w_y > 0``): the polish's KKT test and the intervals' scoring step
    (``mechanism.wald_estimate``). The full N × M matrix with zero counts works as well as the observed columns."""
    q = pi @ W
    return W @ (counts / np.where(q > 0, q, 1.0))


def _squarem_revived(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
    """SQUAREM to its strict tolerance from ``pi`` with its zeros lifted to 1e-9 (EM never leaves a zero), the
    polish's fall-back."""
    return _squarem_mle(Wu, fu, (pi + 1e-9) / (1.0 + 1e-9 * pi.size), max_iter, tol)


#: SQUAREM's tolerance when Newton polishes on its support: the support settles long before the values do (N = 5 000:
#: 96 steps, 2.9 s, then Newton on its 619 coordinates 1.7 s; the log-likelihood within 4·10⁻¹² relative of Newton's
#: on all 5 000 and the estimate within 2·10⁻⁶ in ℓ1. N = 10 000, 21 771 outputs: 103 steps, 26 s, then 11 s on 851
#: coordinates, where SQUAREM to 10⁻¹⁴ ran for more than 15 minutes).
SUPPORT_RTOL: float = 1e-10
#: Slack on the KKT condition ``∂L/∂π_x ≤ 1`` off the support, and the most rounds of :func:`_polish_on_support`.
KKT_TOL: float = 1e-9
POLISH_ROUNDS: int = 5


#: The level form is used where its sparse parts hold at most this share of the entries (else the dense columns)
#: and the columns have at least :data:`SPARSE_MIN_ENTRIES` entries.
SPARSE_SHARE: float = 0.25
SPARSE_MIN_ENTRIES: int = 10**6


class _Columns:
    """The observed outputs' columns ``W_u`` (N × M) for the products ``πᵀW_u`` and ``W_u z`` of EM.

    Where every column has at most two positive values (each within ``posterior.LEVEL_RTOL``: the disclosure's rule,
    :func:`pml_design.posterior.two_levels`) and zeros — the columns of a
    frequency-estimation design, of its LDP channel, of randomized response — ``W_u = (a − b)∘A + b∘(1 − Z)``, with
    ``A`` the incidence of each column's rarer positive level (value ``a_y``), ``b_y`` the other's and ``Z`` the
    zeros: two sparse matrices instead of N·M numbers. At N = 10 000 on 21 778 outputs of an ε = 2 channel (12 % of
    the entries in ``A``) a product reads 2.6·10⁷ stored entries instead of 2.2·10⁸. Dense otherwise, or where the
    sparse parts would hold more than :data:`SPARSE_SHARE` of the entries. The top level is represented by its
    largest value, the other by its smallest, so the products are exact up to that tolerance, relative (and the
    rounding of ``b·Σπ − (b − a)·Σ_A π``, ~``u·hi/lo``: negligible for ratios up to ``e^ε``, ε ≤ 10)."""

    def __init__(self, Wu: np.ndarray) -> None:
        self.dense, self.shape = Wu, Wu.shape
        self.sparse = False
        n, m = Wu.shape
        if n * m < SPARSE_MIN_ENTRIES:
            return
        hi, lo, in_hi, in_lo, two = two_levels(Wu, axis=0)
        if not two.all():
            return
        zero = Wu == 0
        n_hi, n_lo = in_hi.sum(axis=0), in_lo.sum(axis=0)
        rare_hi = n_hi <= n_lo
        if float(np.minimum(n_hi, n_lo).sum() + zero.sum()) > SPARSE_SHARE * n * m:
            return
        from scipy import sparse  # noqa: PLC0415

        rare = np.where(rare_hi, in_hi, in_lo)
        self.a = np.where(rare_hi, hi, np.where(np.isfinite(lo), lo, 0.0))
        self.b = np.where(rare_hi, np.where(n_lo > 0, np.where(np.isfinite(lo), lo, 0.0), 0.0), hi)
        self.A = sparse.csc_matrix(rare, dtype=float)
        self.Z = sparse.csc_matrix(zero, dtype=float)
        self.sparse, self.dense = True, None

    def forward(self, pi: np.ndarray) -> np.ndarray:
        """``πᵀ W_u`` (length M)."""
        if not self.sparse:
            return pi @ self.dense
        return (self.a - self.b) * (self.A.T @ pi) + self.b * (pi.sum() - self.Z.T @ pi)

    def backward(self, z: np.ndarray) -> np.ndarray:
        """``W_u z`` (length N)."""
        if not self.sparse:
            return self.dense @ z
        return self.A @ ((self.a - self.b) * z) + float(self.b @ z) - self.Z @ (self.b * z)


def _em_step(cols: _Columns, fu: np.ndarray, pi: np.ndarray, q: np.ndarray) -> np.ndarray:
    """One EM step from ``pi`` with ``q = πᵀW_u`` (renormalised: exact arithmetic keeps the sum at 1,
    ``Σ_x π_x Σ_y w_xy f_y/q_y = Σ_y f_y``)."""
    new = pi * cols.backward(fu / np.where(q > 0, q, 1.0))
    return new / new.sum()


def _loglik(fu: np.ndarray, q: np.ndarray) -> float:
    return float(fu @ np.log(q)) if np.all(q > 0) else -np.inf


def _squarem_mle(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray, max_iter: int, tol: float,
                 rtol: float = SQUAREM_RTOL) -> np.ndarray:
    """EM accelerated by SQUAREM, scheme S3: from two EM steps ``r = F(π) − π``, ``v = F(F(π)) − 2F(π) + π``, the step
    ``π − 2αr + α²v`` with ``α = −‖r‖/‖v‖`` (at most −1; moved towards −1 until the point is positive), then one EM
    step from it, kept only if the log-likelihood does not fall below the plain double step's (so it never falls: EM
    never lowers it). Stops after ``max_iter`` steps, an ℓ1 move below ``tol``, or three steps each raising the
    log-likelihood by at most ``rtol`` of it (default :data:`SQUAREM_RTOL`). Coordinates below ``10 N · 10⁻¹²`` are
    then set to 0, as
    :func:`_newton_mle` sets them (N = 5 000: the 4 495 coordinates so set held 2·10⁻⁷ in all, and are Newton's
    zeros; EM left them at 10⁻⁴¹ – 10⁻⁸). The products go through :class:`_Columns` (sparse level form where it
    applies)."""
    cols = _Columns(Wu)
    pi = np.asarray(pi, dtype=float) / np.sum(pi)
    q = cols.forward(pi)
    ll, flat = _loglik(fu, q), 0
    for _ in range(max_iter):
        p1 = _em_step(cols, fu, pi, q)
        p2 = _em_step(cols, fu, p1, cols.forward(p1))
        r, v = p1 - pi, p2 - 2.0 * p1 + pi
        nv = float(np.linalg.norm(v))
        q2 = cols.forward(p2)
        new, new_q, new_ll = p2, q2, _loglik(fu, q2)
        if nv > 0.0:
            alpha = min(-float(np.linalg.norm(r)) / nv, -1.0)
            cand = pi - 2.0 * alpha * r + alpha * alpha * v
            while not np.all(cand > 0.0) and alpha < -1.0:
                alpha = min((alpha - 1.0) / 2.0, -1.0)
                cand = pi - 2.0 * alpha * r + alpha * alpha * v
            if np.all(cand > 0.0):
                cand /= cand.sum()
                cand = _em_step(cols, fu, cand, cols.forward(cand))
                cand_q = cols.forward(cand)
                cand_ll = _loglik(fu, cand_q)
                if cand_ll >= new_ll:
                    new, new_q, new_ll = cand, cand_q, cand_ll
        moved = float(np.abs(new - pi).sum())
        flat = flat + 1 if new_ll - ll <= rtol * abs(new_ll) else 0
        pi, q, ll = new, new_q, new_ll
        if moved < tol or flat >= 3:
            break
    pi = np.where(pi < 10 * pi.shape[0] * MU_FINAL, 0.0, pi)  # zeros as Newton sets them (EM only shrinks them: 1e-41)
    return pi / pi.sum()


def _em_mle(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
    """EM (the iterative Bayesian update) ``π_x ← π_x Σ_y f_y w_xy/(π·w_y)`` on the observed outputs' columns, from
    ``pi``, until the ℓ1 change is below ``tol``. Only observed outputs enter; the update is renormalised, so its
    fixed points are the KKT points of ``Σ_y f_y log(π·w_y)`` on the simplex whatever the columns' scale."""
    cols = _Columns(Wu)
    for _ in range(max_iter):
        new = _em_step(cols, fu, pi, cols.forward(pi))
        if np.abs(new - pi).sum() < tol:
            return new
        pi = new
    return pi


def _newton_mle(Wu: np.ndarray, fu: np.ndarray, pi: np.ndarray, mu_final: float = MU_FINAL) -> np.ndarray | None:
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
    if not np.all(pi @ Wu > 0):  # an observed output no row reaches: no finite maximum here (the caller falls back)
        return None

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
            if not (np.all(np.isfinite(g)) and np.all(np.isfinite(H))):
                return None
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
