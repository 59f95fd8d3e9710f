"""Fewer outputs with the same Fisher information (Carathéodory), within a time budget.

Implements: docs/design.md §7 "Outputs". The weights of a design satisfy ``Σ_k θ_k r_k r_kᵀ = F``
(N(N+1)/2 equations); with ``P·r_k = 1`` these imply the row sums ``Σ_k θ_k r_k = F P = 1``. A basic feasible
solution of ``{θ ≥ 0 : Σ_k θ_k r_k r_kᵀ = F}`` has at most N(N+1)/2 non-zero weights and the same F, hence the
same error (A- and D-optimal alike).
"""

from __future__ import annotations

import numpy as np

__all__ = ["REDUCE_MAX_ENTRIES", "REDUCE_SECONDS_PER_ENTRY", "fewer_outputs", "mechanism_on_fewer_outputs", "prune"]

#: The LP's constraint matrix has N(N+1)/2 × K entries, built dense and handed to HiGHS before its clock starts:
#: at N = 100, K = 5 400 (27 M entries) the set-up took ~8 s (the sparse conversion 3.6 s, HiGHS' model 3 s) and the
#: solve 6.5 s, so a 10 s design ended at 28 s. The reduction runs only when this many seconds per entry fit in half
#: its budget, and never above REDUCE_MAX_ENTRIES entries (8 bytes each: 400 MB).
REDUCE_SECONDS_PER_ENTRY: float = 3e-7
REDUCE_MAX_ENTRIES: int = 50_000_000


def fewer_outputs(V: np.ndarray, theta: np.ndarray, time_limit: float) -> np.ndarray | None:
    """A mechanism with the Fisher information of ``V diag(θ) Vᵀ`` on at most N(N+1)/2 outputs, or None.

    A HiGHS dual simplex with zero objective and a wall-clock limit of ``time_limit`` seconds (so it fits in the
    caller's time budget); None when there is nothing to gain (K ≤ N(N+1)/2), no time (the set-up alone, estimated
    at :data:`REDUCE_SECONDS_PER_ENTRY` per constraint entry, must fit in half of it), or no solution in time.
    Implements: docs/design.md §7 ("Outputs", Carathéodory).

    Parameters
    ----------
    V : numpy.ndarray, shape (N, K)
        The design's normalised rays (columns).
    theta : numpy.ndarray, shape (K,)
        Their weights.
    time_limit : float
        Seconds the reduction may take, set-up included.

    Returns
    -------
    numpy.ndarray or None
        The row-stochastic mechanism on at most N(N+1)/2 outputs, or None.
    """
    from scipy.optimize import linprog  # noqa: PLC0415

    n, k = V.shape
    rows = n * (n + 1) // 2
    if k <= rows or time_limit <= 0.05:
        return None
    if rows * k > REDUCE_MAX_ENTRIES or rows * k * REDUCE_SECONDS_PER_ENTRY > 0.5 * time_limit:
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


def mechanism_on_fewer_outputs(W: np.ndarray, prior: np.ndarray, time_limit: float) -> np.ndarray | None:
    """The mechanism ``W`` on at most N(N+1)/2 outputs with the same Fisher information at ``prior``, or None.

    Its columns are the rays ``w_y / (P·w_y)`` with weights ``P·w_y`` (``F = Σ_y w_y w_yᵀ/(P·w_y)``), reduced by
    :func:`fewer_outputs`; every output of the result is a rescaled output of ``W``, so it is in the same cone. The
    design reduces its certified incumbent itself: reducing the master's last iterate instead (whose F differs
    from the incumbent's by the rows' renormalisation and a dropped seed share) gave a design 1.2e-7 worse on a
    longer time limit, where a shorter one skipped the reduction (N = 16, 4 s against 12 s). Implements:
    docs/design.md §7 ("Outputs", Carathéodory).

    Parameters
    ----------
    W : numpy.ndarray, shape (N, M)
        A row-stochastic mechanism (rows = inputs).
    prior : numpy.ndarray, shape (N,)
        The distribution at which the Fisher information is taken (positive).
    time_limit : float
        Seconds the reduction may take, set-up included.

    Returns
    -------
    numpy.ndarray or None
        The mechanism on at most N(N+1)/2 outputs, or None (nothing to gain, no time, no solution in time).
    """
    n, m = W.shape
    rows = n * (n + 1) // 2
    if m <= rows or time_limit <= 0.05 or rows * m > REDUCE_MAX_ENTRIES or \
            rows * m * REDUCE_SECONDS_PER_ENTRY > 0.5 * time_limit:  # (fewer_outputs' tests, before the N × M copy)
        return None
    w = np.asarray(prior, dtype=float) @ W
    if not np.all(w > 0):
        return None
    return fewer_outputs(W / w, w, time_limit)


def prune(V: np.ndarray, theta: np.ndarray, cap: int) -> np.ndarray:
    """Indices of the generated columns kept for the next master: weight above 1e-7 of the largest, at most ``cap``
    (the heaviest); the next master re-balances the row sums (infeasible-start Newton; docs/design.md §7, "Master").

    Parameters
    ----------
    V : numpy.ndarray, shape (N, K)
        The generated columns.
    theta : numpy.ndarray, shape (K,)
        Their weights in the last master.
    cap : int
        The most columns kept.

    Returns
    -------
    numpy.ndarray
        The kept indices, sorted.
    """
    keep = np.flatnonzero(theta > 1e-7 * max(float(theta.max()), 1e-300))
    if keep.size > cap:
        keep = keep[np.argsort(-theta[keep])[:cap]]
    return np.sort(keep)
