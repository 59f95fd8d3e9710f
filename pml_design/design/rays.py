"""Extreme rays of the column cone of M(ε, 𝒫).

A matrix is in M(ε, 𝒫) iff every column ``c = P(y|·)`` lies in the cone

    ``K(ε, 𝒫) = {c ≥ 0 : max_x c_x ≤ e^ε min_{Q ∈ 𝒫} Q·c}``

and the columns sum to the all-ones vector. A sublinear column utility μ is maximised by splitting
columns into extreme rays, so the optimal sub-convex design is the LP
``max Σ θ_l μ(r_l) s.t. Σ θ_l r_l = 1, θ ≥ 0`` over the extreme rays ``r_l`` ([15, Theorem 6],
Kairouz et al. 2016). This module enumerates the rays.

Implements: [15, Lemma 1/Theorem 6] (fixed prior), core paper Proposition 2 (ℓ1 ball, β < 2 min P̂),
Remark 1 / Kairouz et al.'s staircase patterns (simplex), Corollary 1 (generic sets, via pycddlib).

Structure (derived in ``docs/design.md``; cross-checked against pycddlib in the tests)
--------------------------------------------------------------------------------------
Normalise ``P̂·c = 1``. With ``T = max c`` and ``S = min c``:

* fixed prior: the box ``[0, e^ε]^N`` cut by the hyperplane: every vertex has all coordinates at 0 or
  ``e^ε`` but at most one.
* ℓ1 ball with β < 2 min P̂: the constraint is ``(1 + βe^ε/2) T ≤ e^ε (1 + (β/2) S)``. Vertices are
  (a) ``S = 0``: coordinates at 0 or ``T0 = e^{ε'}`` (eq. (13)) except at most one free coordinate; or
  (b) ``S > 0``: every coordinate at S or T, with ``T = e^{ε'}(1 + (β/2) S)`` and ``P̂·c = 1``.
* simplex: every coordinate at S or ``e^ε S`` (the staircase patterns).

The number of rays is Θ(N 2^N): exhaustive enumeration is for N up to 18.
"""

from __future__ import annotations

import numpy as np

from .._validation import fmt
from ..uncertainty import FiniteSet, L1Ball, Simplex, UncertaintySet

__all__ = ["AUTO_EXACT_SIZE", "MAX_EXACT_SIZE", "enumerate_rays", "in_cone", "rays_cdd"]

#: Largest alphabet for which exhaustive ray enumeration is attempted (N = 18: ~3e5 rays, ~30 s).
MAX_EXACT_SIZE: int = 18
#: Largest alphabet for which ``method="auto"`` picks the exact method (N = 16: ~7.5e4 rays, ~2 s).
AUTO_EXACT_SIZE: int = 16


def _subsets(n: int) -> np.ndarray:
    """All 2^n subsets as a boolean matrix (2^n, n)."""
    idx = np.arange(2**n, dtype=np.int64)
    return ((idx[:, None] >> np.arange(n)) & 1).astype(bool)


def in_cone(columns: np.ndarray, uset: UncertaintySet, epsilon: float, *, rtol: float = 1e-9) -> np.ndarray:
    """Whether each column lies in ``K(ε, 𝒫)`` (within a relative tolerance), exactly via the set's min."""
    c = np.asarray(columns, dtype=float)
    low = uset.min_output_probability(c)
    return (c.min(axis=0) >= -rtol * c.max(axis=0)) & (c.max(axis=0) <= np.exp(epsilon) * low * (1 + rtol) + 1e-300)


def _dedupe(R: np.ndarray) -> np.ndarray:
    scale = R.max(axis=0)
    Rn = R / np.where(scale > 0, scale, 1.0)
    _, keep = np.unique(np.round(Rn, 12), axis=1, return_index=True)
    return R[:, np.sort(keep)]


def _free_coordinate_rays(p: np.ndarray, top: float, require_zero: bool) -> np.ndarray:
    """Columns with coordinates in {0, top} except one free coordinate, normalised to p·c = 1."""
    n = p.shape[0]
    U = _subsets(n)  # tops
    pu = U.astype(float) @ p
    out = []
    for f in range(n):
        sel = ~U[:, f]
        if p[f] <= 0:
            continue
        cf = (1.0 - top * pu[sel]) / p[f]
        ok = (cf >= -1e-12) & (cf <= top * (1 + 1e-12))
        if require_zero:
            # at least one coordinate besides f at 0, or the free coordinate itself at 0
            n_zero = n - 1 - U[sel].sum(axis=1)
            ok &= (n_zero > 0) | (np.abs(cf) <= 1e-12)
        if not np.any(ok):
            continue
        block = np.where(U[sel][ok], top, 0.0)
        block[:, f] = np.clip(cf[ok], 0.0, top)
        out.append(block)
    if not out:
        return np.zeros((n, 0))
    return np.vstack(out).T


def _two_level_rays(p: np.ndarray, a: float, b: float) -> np.ndarray:
    """Columns with coordinates in {S, T}, T = a + b S, normalised to p·c = 1, S ≥ 0 (both levels used)."""
    n = p.shape[0]
    U = _subsets(n)[1:-1]  # non-empty proper subsets: the tops
    pu = U.astype(float) @ p
    pl = 1.0 - pu
    # p(U)(a + b S) + p(L) S = 1  ->  S = (1 - a p(U)) / (b p(U) + p(L))
    S = (1.0 - a * pu) / (b * pu + pl)
    ok = S >= -1e-15
    S = np.maximum(S[ok], 0.0)
    T = a + b * S
    cols = np.where(U[ok], T[:, None], S[:, None])
    return cols.T


def enumerate_rays(uset: UncertaintySet, epsilon: float) -> np.ndarray:
    """All extreme rays of ``K(ε, 𝒫)`` (columns, normalised), plus possibly a few redundant cone points.

    Implements: see module docstring ([15, Theorem 6]; core paper Proposition 2 / Corollary 1).

    Parameters
    ----------
    uset : UncertaintySet
    epsilon : float

    Returns
    -------
    numpy.ndarray, shape (N, K)
        Every returned column lies in the cone (checked exactly) and every extreme ray is among them.

    Raises
    ------
    ValueError
        If N exceeds :data:`MAX_EXACT_SIZE` (use the scalable method).
    """
    n = uset.size
    if n > MAX_EXACT_SIZE:
        raise ValueError(
            f"exhaustive ray enumeration is limited to N <= {MAX_EXACT_SIZE} symbols, got N={n}; "
            "use method='scalable'"
        )
    e = float(np.exp(epsilon))
    if isinstance(uset, L1Ball) and uset.radius == 0:
        R = _free_coordinate_rays(uset.center, e, require_zero=False)
    elif isinstance(uset, FiniteSet) and uset.distributions.shape[0] == 1:
        R = _free_coordinate_rays(uset.distributions[0], e, require_zero=False)
    elif isinstance(uset, L1Ball) and uset.in_interior_regime:
        beta = uset.radius
        t0 = e / (1.0 + beta * e / 2.0)  # e^{eps'} of eq. (13)
        Ra = _free_coordinate_rays(uset.center, t0, require_zero=True)
        Rb = _two_level_rays(uset.center, t0, t0 * beta / 2.0)
        R = np.hstack([Ra, Rb])
    elif isinstance(uset, Simplex):
        # staircase: coordinates in {1, e^eps}, all patterns except the constant ones
        U = _subsets(n)[1:-1]
        R = np.where(U, e, 1.0).T
    else:
        R = rays_cdd(uset, epsilon)
    R = R[:, R.max(axis=0) > 0]
    R = _dedupe(R)
    ok = in_cone(R, uset, epsilon, rtol=1e-9)
    return R[:, ok]


def rays_cdd(uset: UncertaintySet, epsilon: float) -> np.ndarray:
    """Extreme rays by the double-description method (pycddlib), from Corollary 1's H-representation.

    The cone is ``{c ≥ 0 : e^ε π·c − c_x ≥ 0 for every extreme point π of 𝒫 and every x}``. Exact for any
    set with a finite list of extreme points (``FiniteSet``, ``Simplex``, ``L1Ball`` for small N).
    """
    import cdd

    if not hasattr(uset, "extreme_points"):
        raise ValueError(f"no extreme points available for {fmt(uset)}")
    pts = uset.extreme_points()
    n = uset.size
    e = float(np.exp(epsilon))
    rows = [np.eye(n)]  # c >= 0
    for pi in pts:
        rows.append(e * np.ones((n, 1)) * pi[None, :] - np.eye(n))
    A = np.vstack(rows)
    H = np.hstack([np.zeros((A.shape[0], 1)), A])
    mat = cdd.matrix_from_array(H.tolist(), rep_type=cdd.RepType.INEQUALITY)
    poly = cdd.polyhedron_from_matrix(mat)
    gen = np.array(cdd.copy_generators(poly).array, dtype=float)
    if gen.size == 0:
        return np.zeros((n, 0))
    rays = gen[gen[:, 0] == 0, 1:].T
    rays = np.where(np.abs(rays) < 1e-13, 0.0, rays)
    return rays
