"""Independent checkers for the designer, sharing no code with ``pml_design.design``.

* :func:`ball_vertices_lp` writes ``M(ε, B_β(P̂))`` with Corollary 1's constraints over the ball's vertices
  (enumerated here by brute force over donor orders, not by the library) as a scipy LP;
* :func:`local_search` maximises a convex (sub-convex) utility over it by repeated linearisation from random
  vertices: for convex U, ``W' = argmax_W ∇U(W_k)·W`` never decreases U, so every iterate is a feasible
  mechanism whose utility must not exceed a valid upper bound.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
from scipy.optimize import linprog


def ball_vertices(center: np.ndarray, radius: float) -> np.ndarray:
    """Vertices of ``{Q ∈ simplex : ‖Q − P̂‖₁ ≤ β}``: move mass β/2 greedily from donors (in every order) to
    one receiver. Brute force over orders; exact up to rounding."""
    p = np.asarray(center, float)
    n = p.size
    pts = {tuple(p)}
    budget = min(radius / 2.0, 1.0)
    for r in range(n):
        others = [i for i in range(n) if i != r]
        for order in permutations(others):
            q = p.copy()
            left = budget
            for d in order:
                take = min(left, q[d])
                q[d] -= take
                q[r] += take
                left -= take
                if left <= 0:
                    break
            pts.add(tuple(np.round(q, 15)))
    return np.array(sorted(pts))


def polytope_lp(center: np.ndarray, radius: float, epsilon: float, m: int):
    """``A_ub x ≤ 0``, ``A_eq x = 1`` for x = vec(P) (row-major, N×M) in M(ε, ball) by Corollary 1."""
    V = ball_vertices(center, radius)
    n = center.size
    e = np.exp(epsilon)
    rows = []
    # for every column y, vertex π and row x': P[x', y] − e^ε Σ_x π_x P[x, y] ≤ 0
    for y in range(m):
        for pi in V:
            for xp in range(n):
                a = np.zeros((n, m))
                a[:, y] -= e * pi
                a[xp, y] += 1.0
                rows.append(a.ravel())
    A_ub = np.array(rows)
    A_eq = np.kron(np.eye(n), np.ones((1, m)))
    return A_ub, A_eq


def _num_grad(util_value, W: np.ndarray, h: float = 1e-7) -> np.ndarray:
    base = util_value(W)
    G = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        W2 = W.copy()
        W2[idx] += h
        G[idx] = (util_value(W2) - base) / h
    return G


def local_search(util_value, center, radius, epsilon, *, m=None, starts=6, iters=8, rng=None) -> tuple[float, np.ndarray]:
    """Best utility found by linearisation ascent from random vertices of M(ε, ball) (feasible mechanisms)."""
    rng = np.random.default_rng(rng)
    n = len(center)
    m = m or n
    A_ub, A_eq = polytope_lp(np.asarray(center, float), radius, epsilon, m)
    b_ub = np.zeros(A_ub.shape[0])
    b_eq = np.ones(n)
    best, best_W = -np.inf, None
    for _ in range(starts):
        c = rng.normal(size=n * m)
        W = None
        for _ in range(iters):
            res = linprog(-c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
            if res.status != 0:
                break
            Wn = np.clip(res.x.reshape(n, m), 0, None)
            Wn /= Wn.sum(axis=1, keepdims=True)
            if W is not None and util_value(Wn) <= util_value(W) + 1e-13:
                break
            W = Wn
            c = np.clip(_num_grad(util_value, W + 1e-9), -1e6, 1e6).ravel()
        if W is not None and util_value(W) > best:
            best, best_W = util_value(W), W
    return best, best_W
