"""The restricted master of the estimation design: ``min f(F)`` over generated rays and whole seed mechanisms.

Implements: the convex program of docs/design.md §7 restricted to K generated normalised rays ``r_k`` (columns of
V, weights θ) and J *matrix columns* — whole ε-LDP seed mechanisms ``W_j`` entered as one variable each (weight
φ_j, Fisher information ``G_j = F(W_j)``, row sums ``φ_j·1``), so a seed with thousands of outputs costs one
variable and the master can never end above it:

    ``min f(V diag(θ) Vᵀ + Σ_j φ_j G_j)  s.t.  V θ + (Σ_j φ_j) 1 = 1,  θ, φ ≥ 0``,

``f = tr F⁻¹`` (A-optimal) or ``−log det F`` (D-optimal), by a barrier method (Boyd & Vandenberghe §11.3) with
infeasible-start Newton centering (§10.3). With ``B = F⁻¹`` and ``M = F⁻²`` (A) or ``F⁻¹`` (D), the gradient is
``−tr(M A)`` for a term ``A`` (``A = r rᵀ`` or ``G_j``) and the Hessian ``c·½[tr(M A_i B A_j) + tr(M A_j B A_i)]``
(c = 2 for A, 1 for D): for rays ``c (r_iᵀ B r_j)(r_jᵀ M r_i)``, ray–matrix ``c rᵀ B G M r``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..result import SolverFailedError

__all__ = ["criterion", "gradients", "solve_master"]

#: First barrier gap (× |f|) of a warm-started solve. Below the column generation's relative gap (1e-4), one
#: centering ends a warm solve; 1e-3 took two (about 26 Newton steps a round). 30 s runs: Zipf 100 ε = 1 91.97 → 90.55
#: (80 → 109 rounds), ε = 2 34.79 → 33.39, Adult ε = 4 1.4929 → 1.4854; Zipf 50 ε = 1 and Zipf 300 ε = 2 within
#: 0.1 % (docs/design.md §7).
WARM_GAP: float = 5e-5
#: A ``loose`` solve ends its final centering once the primal residual is below 1e-8 and the squared Newton decrement
#: ``λ² = Δxᵀ H Δx`` (H the barrier-scaled Hessian) is at most this times the number of variables (a heuristic: for a
#: self-concordant barrier near the central path the gap grows by about ``λ²/t``, Boyd & Vandenberghe §11.2.2, §9.6.3;
#: ``tr F⁻¹`` is not self-concordant and λ² = n is far from that region; the bounds never rely on it).
#: A round of the estimation design took 17 Newton steps on average, the last ones only polishing. 30 s runs (Zipf 100
#: ε = 1 / 2 / 4): 103 → 148 rounds, error 90.74 → 89.89, 32.90 → 31.92, 6.285 → 6.271; Adult ε = 4 1.4853 → 1.4790,
#: ε = 2 9.682 → 9.657 (docs/design.md §7).
LOOSE_DECREMENT: float = 1.0


def gradients(R: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``−r_kᵀ M r_k`` for every column of R (the criterion's gradient along each normalised ray).

    Implements: the gradient ``−tr(M A)`` for ``A = r rᵀ`` of the module docstring (docs/design.md §7).

    Parameters
    ----------
    R : np.ndarray
        Normalised rays, shape (N, K), one per column.
    M : np.ndarray
        ``F⁻²`` (A-optimal) or ``F⁻¹`` (D-optimal), shape (N, N), as returned by :func:`criterion`.

    Returns
    -------
    np.ndarray
        Shape (K,): ``−r_kᵀ M r_k`` for each column ``r_k``.
    """
    return -np.einsum("ik,ik->k", R, M @ R)


def criterion(V: np.ndarray, theta: np.ndarray, G: np.ndarray, phi: np.ndarray,
              d_opt: bool) -> tuple[float, np.ndarray | None, np.ndarray | None]:
    """``(f, F⁻¹, M)`` at ``(θ, φ)``; ``(inf, None, None)`` when F is singular.

    Implements: the criterion of the restricted master (module docstring, docs/design.md §7) at
    ``F = V diag(θ) Vᵀ + Σ_j φ_j G_j`` (symmetrised; singular when its Cholesky factorisation fails).

    Parameters
    ----------
    V : np.ndarray
        Normalised rays, shape (N, K), one per column.
    theta : np.ndarray
        The rays' weights, shape (K,).
    G : np.ndarray
        Fisher informations of the seed mechanisms, shape (J, N, N) (J = 0 allowed).
    phi : np.ndarray
        The seed mechanisms' weights, shape (J,).
    d_opt : bool
        True: D-optimal, ``f = −log det F``, ``M = F⁻¹``; False: A-optimal, ``f = tr F⁻¹``, ``M = F⁻²``.

    Returns
    -------
    tuple[float, np.ndarray | None, np.ndarray | None]
        ``(f, F⁻¹, M)`` (both matrices symmetrised, shape (N, N)), or ``(inf, None, None)`` when F is singular.
    """
    F = (V * theta) @ V.T
    if G.shape[0]:
        F = F + np.tensordot(phi, G, axes=1)
    F = 0.5 * (F + F.T)
    try:
        L = np.linalg.cholesky(F)
    except np.linalg.LinAlgError:
        return np.inf, None, None
    Finv = np.linalg.inv(F)
    Finv = 0.5 * (Finv + Finv.T)
    if d_opt:
        return -2.0 * float(np.log(np.diag(L)).sum()), Finv, Finv
    return float(np.trace(Finv)), Finv, Finv @ Finv


def _full_gradient(V, G, M) -> np.ndarray:
    gm = -np.einsum("jab,ab->j", G, M) if G.shape[0] else np.zeros(0)
    return np.concatenate([gradients(V, M), gm])


def _ray_grams(V: np.ndarray, B: np.ndarray, d_opt: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``(VᵀBV, VᵀB²V)`` (the second None for D), from a Cholesky factor ``B = LLᵀ``: ``X = LᵀV``, ``VᵀBV = XᵀX``,
    ``Y = LX = BV``, ``VᵀB²V = YᵀY`` (two triangular products and two symmetric rank-K products, about half the flops
    of the four general products ``(VᵀB)V``, ``(VᵀM)V``; 2.3× faster at N = 300, K = 620 on one core). Falls back to
    the general products where B has no Cholesky factor in floating point."""
    from scipy.linalg import blas  # noqa: PLC0415

    try:
        L = np.linalg.cholesky(B)
    except np.linalg.LinAlgError:
        A1 = V.T @ B @ V
        return A1, None if d_opt else V.T @ (B @ (B @ V))
    X = blas.dtrmm(1.0, L, V, side=0, lower=1, trans_a=1)  # Lᵀ V
    A1 = X.T @ X
    if d_opt:
        return A1, None
    Y = blas.dtrmm(1.0, L, X, side=0, lower=1, trans_a=0)  # L Lᵀ V = B V
    return A1, Y.T @ Y


def _hessian(V: np.ndarray, G: np.ndarray, B: np.ndarray, M: np.ndarray, d_opt: bool) -> np.ndarray:
    c = 1.0 if d_opt else 2.0
    A1, A2 = _ray_grams(V, B, d_opt)
    Hr = A1 * A1 if d_opt else c * (A1 * A2)
    J = G.shape[0]
    if not J:
        return Hr
    K = V.shape[1]
    H = np.empty((K + J, K + J))
    H[:K, :K] = Hr
    BG = [B @ Gj for Gj in G]
    MG = [M @ Gj for Gj in G]
    for j in range(J):
        cross = c * np.einsum("ik,ik->k", V, BG[j] @ (M @ V))
        H[:K, K + j] = cross
        H[K + j, :K] = cross
        for i in range(j + 1):
            v = 0.5 * c * (float(np.sum(MG[i] * BG[j].T)) + float(np.sum(MG[j] * BG[i].T)))
            H[K + i, K + j] = H[K + j, K + i] = v
    return H


def solve_master(V: np.ndarray, G: np.ndarray, d_opt: bool, x0: np.ndarray, deadline: float, *,
                 rtol: float = 1e-8, warm: bool = False, loose: bool = False
                 ) -> tuple[np.ndarray, np.ndarray, tuple[float, np.ndarray | None, np.ndarray | None]]:
    """Minimise the criterion over ``x = (θ, φ)`` (module docstring). Returns ``(x, ν, (f, F⁻¹, M))``.

    Implements: the barrier method of the module docstring (docs/design.md §7; Boyd & Vandenberghe §11.3 with
    infeasible-start Newton centering, §10.3). ``ν`` are the multipliers of the row-sum constraints in the sign
    convention of the reduced cost ``d = −rᵀ M r + ν·r``. Stops at the deadline with the current iterate (which
    may miss the row sums by the Newton residual; the caller certifies whatever it uses).

    Parameters
    ----------
    V : np.ndarray
        Normalised rays, shape (N, K), one per column.
    G : np.ndarray
        Fisher informations of the seed mechanisms, shape (J, N, N) (J = 0 allowed).
    d_opt : bool
        True: D-optimal (``−log det F``); False: A-optimal (``tr F⁻¹``).
    x0 : np.ndarray
        Starting weights ``(θ, φ)``, shape (K + J,); clipped at 1e-12 and moved strictly inside the orthant.
    deadline : float
        ``time.perf_counter()`` value after which the current iterate is returned.
    rtol : float, default 1e-8
        Stop when the barrier gap ``(K + J)/t`` is at most ``rtol · max(|f|, 1)``.
    warm : bool, default False
        A warm start: the first barrier gap is :data:`WARM_GAP` × |f| instead of 0.1 × |f|.
    loose : bool, default False
        End the final centering early, near the central path (:data:`LOOSE_DECREMENT`): for heuristic pricing, whose
        multipliers need not be exact. Not with exact pricing, whose rounds end only when no ray prices out at the
        exact multipliers.

    Returns
    -------
    tuple[np.ndarray, np.ndarray, tuple[float, np.ndarray | None, np.ndarray | None]]
        ``x`` (shape (K + J,)), ``ν`` (shape (N,)) and :func:`criterion`'s ``(f, F⁻¹, M)`` at ``x``.

    Raises
    ------
    SolverFailedError
        When F is singular at the start or the Newton system is numerically singular.
    """
    from scipy.linalg import cholesky, solve_triangular  # noqa: PLC0415

    N, K = V.shape
    J = G.shape[0]
    A = np.hstack([V, np.ones((N, J))])  # constraint matrix: A x = 1
    n_var = K + J
    x = np.maximum(np.asarray(x0, dtype=float), 1e-12)
    x = 0.98 * x / max(float(x.sum()), 1e-300) + 0.02 / n_var  # strictly interior in the orthant
    nu = np.zeros(N)
    state = criterion(V, x[:K], G, x[K:], d_opt)
    if not np.isfinite(state[0]):
        raise SolverFailedError("estimation master: singular Fisher information at the start", "singular")
    t = n_var / (max(abs(state[0]), 1.0) * (WARM_GAP if warm else 1e-1))
    while True:
        last = n_var / t <= rtol * max(abs(state[0]), 1.0)  # the final centering (``loose``: may stop early)
        for _ in range(50):
            _, B, M = state
            g = _full_gradient(V, G, M)
            H = _hessian(V, G, B, M, d_opt) * t
            H[np.diag_indices(n_var)] += 1.0 / x**2
            r_d = t * g - 1.0 / x + A.T @ nu
            r_p = A @ x - 1.0
            norm0 = math.sqrt(float(r_d @ r_d + r_p @ r_p))
            if norm0 < 1e-8 * (1.0 + t * float(np.abs(g).max())):
                break
            try:
                C = cholesky(H, lower=True, check_finite=False)
            except np.linalg.LinAlgError:
                H[np.diag_indices(n_var)] += 1e-10 * np.abs(np.diag(H)).max()
                try:
                    C = cholesky(H, lower=True, check_finite=False)
                except np.linalg.LinAlgError:  # e.g. ε ≲ 1e-5: F⁻² spans 20 orders of magnitude
                    raise SolverFailedError("estimation master: the Newton system is numerically singular",
                                            "singular") from None
            # Schur complement of the KKT system through the factor H = CCᵀ: Z = C⁻¹Aᵀ, A H⁻¹ Aᵀ = ZᵀZ (a triangular
            # solve and a symmetric product: half the flops of H⁻¹Aᵀ by two solves and A(H⁻¹Aᵀ) by a general product)
            Z = solve_triangular(C, A.T, lower=True, check_finite=False)
            w = solve_triangular(C, r_d, lower=True, check_finite=False)
            dnu = np.linalg.solve(Z.T @ Z, r_p - Z.T @ w)
            dx = -solve_triangular(C, w + Z @ dnu, lower=True, trans="T", check_finite=False)
            if loose and last and float(r_p @ r_p) <= 1e-16 * n_var and float(dx @ (H @ dx)) <= LOOSE_DECREMENT * n_var:
                break  # near enough the central path (LOOSE_DECREMENT)
            neg = dx < 0
            s = min(1.0, 0.99 * float(np.min(-x[neg] / dx[neg]))) if np.any(neg) else 1.0
            while s > 1e-10:
                x2 = x + s * dx
                state2 = criterion(V, x2[:K], G, x2[K:], d_opt)
                if np.isfinite(state2[0]):
                    rd2 = t * _full_gradient(V, G, state2[2]) - 1.0 / x2 + A.T @ (nu + s * dnu)
                    rp2 = A @ x2 - 1.0
                    if math.sqrt(float(rd2 @ rd2 + rp2 @ rp2)) <= (1 - 0.01 * s) * norm0:
                        break
                s *= 0.5
            if s <= 1e-10:
                break
            x, nu, state = x2, nu + s * dnu, state2
            if time.perf_counter() > deadline:
                break
        if n_var / t <= rtol * max(abs(state[0]), 1.0) or time.perf_counter() > deadline:
            break
        t *= 20.0
    return x, nu / t, state
