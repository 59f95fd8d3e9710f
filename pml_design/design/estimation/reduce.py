"""Fewer outputs with the same Fisher information (Carathéodory), within a time budget.

Implements: docs/design.md §7 "Outputs". The weights of a design satisfy ``Σ_k θ_k r_k r_kᵀ = F``
(N(N+1)/2 equations); with ``P·r_k = 1`` these imply the row sums ``Σ_k θ_k r_k = F P = 1``. A basic feasible
solution of ``{θ ≥ 0 : Σ_k θ_k r_k r_kᵀ = F}`` has at most N(N+1)/2 non-zero weights and the same F, hence the
same error (A- and D-optimal alike).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fewer_outputs", "prune"]


def fewer_outputs(V: np.ndarray, theta: np.ndarray, time_limit: float) -> np.ndarray | None:
    """A mechanism with the Fisher information of ``V diag(θ) Vᵀ`` on at most N(N+1)/2 outputs, or None.

    A HiGHS dual simplex with zero objective and a wall-clock limit of ``time_limit`` seconds (so it fits in the
    caller's time budget); None when there is nothing to gain (K ≤ N(N+1)/2), no time, or no solution in time.
    """
    from scipy.optimize import linprog  # noqa: PLC0415

    n, k = V.shape
    if k <= n * (n + 1) // 2 or time_limit <= 0.05:
        return None
    iu = np.triu_indices(n)
    A = V[iu[0], :] * V[iu[1], :]
    res = linprog(np.zeros(k), A_eq=A, b_eq=A @ theta, bounds=(0, None), method="highs-ds",
                  options={"time_limit": float(time_limit), "presolve": True})
    if res.status != 0 or res.x is None:
        return None
    th = np.where(res.x > 1e-12 * max(float(res.x.max()), 1e-300), res.x, 0.0)
    used = th > 0
    W = V[:, used] * th[used]
    return W / W.sum(axis=1, keepdims=True)


def prune(V: np.ndarray, theta: np.ndarray, cap: int) -> np.ndarray:
    """Indices of the generated columns kept for the next master: weight above 1e-7 of the largest, at most ``cap``
    (the heaviest); the next master re-balances the row sums (infeasible-start Newton)."""
    keep = np.flatnonzero(theta > 1e-7 * max(float(theta.max()), 1e-300))
    if keep.size > cap:
        keep = keep[np.argsort(-theta[keep])[:cap]]
    return np.sort(keep)
