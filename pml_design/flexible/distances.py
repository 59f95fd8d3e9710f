"""Lossy Wasserstein distances and measures of distortion.

* W^∞_γ (Definition 1): exact, via the characterisation W^∞_γ(P, Q) <= r  <=>  m*(r) >= 1 - γ, where
  m*(r) is the largest mass of a sub-coupling π <= (P, Q) using only pairs at distance <= r.
  m*(r) is a max-flow (an LP for general finite metric spaces; an exact greedy on the line).
* W_θ (Definition 7): a partial optimal-transport LP.
* ∂_drop (eq. (3)), ∂_move (eq. (38)), ∂^η_drmv (eq. (39)), d_hist (Sec. 5.1), d_supp (Sec. 5.2).
* Empirical (α, β, γ)-accuracy checks (Definition 3 with Lemma 6).

Implements: Bansal et al. (AISTATS 2022), Definitions 1, 2, 3, 7, eqs. (3), (38), (39), Lemma 6.
The equivalences used are proved in ``docs/flexible.md`` and checked against direct LPs of the
definitions in ``tests/test_flexible_distances.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linprog

from pml_design._validation import check_positive_real, check_real
from pml_design.flexible._checks import (check_histogram, check_mass_vector, check_real_array, check_unit_interval,
                                         exact_fraction)

__all__ = [
    "lossy_winf",
    "lossy_winf_1d",
    "lossy_winf_general",
    "lossy_wavg",
    "matched_mass_1d",
    "d_drop",
    "d_move",
    "d_drmv",
    "d_hist",
    "d_supp",
    "empirical_lossy_beta",
    "check_accuracy",
]

_REL_TOL = 1e-12  # float masses only; integer masses are compared exactly


def _mass_vector(v: Any, name: str) -> np.ndarray:
    return check_mass_vector(v, name)[0]


def _coupling_masses(p: tuple, q: tuple, sp: np.ndarray, sq: np.ndarray, gamma: Any) -> tuple:
    """(pm, qm, target) on the supports: exact Python ints and an exact integer target when both are integral.

    With integers, m*(r) >= (1-γ)|p||q| is decided as m*(r) >= ceil((1-γ)|p||q|) with γ an exact rational
    (:func:`~pml_design.flexible._checks.exact_fraction`), so no rounding can flip the answer at any magnitude.
    """
    (pf, pi), (qf, qi) = p, q
    if pi is not None and qi is not None:
        P, Q = [pi[i] for i in sp], [qi[i] for i in sq]
        tp, tq = sum(P), sum(Q)
        keep = (1 - exact_fraction(gamma)) * (tp * tq)
        target = -((-keep.numerator) // keep.denominator)  # exact ceiling
        return np.array([v * tq for v in P], dtype=object), np.array([v * tp for v in Q], dtype=object), target
    ps, qs = pf[sp], qf[sq]
    return ps / ps.sum(), qs / qs.sum(), (1.0 - float(gamma)) * (1.0 - _REL_TOL)


def matched_mass_1d(xs: np.ndarray, p: np.ndarray, ys: np.ndarray, q: np.ndarray, r: float) -> float:
    """m*(r): largest mass of a sub-coupling of (p on xs, q on ys) moving mass at most r (1-D, exact greedy).

    ``xs`` and ``ys`` must be sorted increasingly.  With integer masses (Python/NumPy ints) the result
    is exact.  The left-to-right greedy (each source fills the left-most admissible target first) is
    optimal for interval bipartite matching with a common radius.

    Parameters
    ----------
    xs : numpy.ndarray
        Sorted positions of the source masses.
    p : numpy.ndarray
        Source masses (same length as ``xs``).
    ys : numpy.ndarray
        Sorted positions of the target masses.
    q : numpy.ndarray
        Target masses (same length as ``ys``).
    r : float
        The largest distance mass may move.

    Returns
    -------
    float
        m*(r), the matched mass (a Python int when the masses are integers).

    Notes
    -----
    Implements: the max-flow m*(r) behind Bansal et al. (AISTATS 2022), Definition 1 (derived here).
    """
    rem = [v for v in q.tolist()]
    ys_l = ys.tolist()
    ny = len(ys_l)
    j = 0
    tot = 0
    for xi, need in zip(xs.tolist(), p.tolist()):
        while j < ny and (ys_l[j] < xi - r or rem[j] == 0):
            j += 1
        k = j
        while need > 0 and k < ny and ys_l[k] <= xi + r:
            t = min(need, rem[k])
            rem[k] -= t
            need -= t
            tot += t
            if rem[k] == 0:
                k += 1
            else:
                break
    return tot


def lossy_winf_1d(xs: Any, p: Any, ys: Any, q: Any, gamma: float = 0.0) -> float:
    """γ-lossy ∞-Wasserstein distance between two discrete distributions on the real line.

    Parameters
    ----------
    xs, ys : array_like
        Atom positions (any order; sorted internally).
    p, q : array_like
        Non-negative masses (normalised internally; integer masses are handled in exact arithmetic).
    gamma : float or fractions.Fraction
        Loss γ in [0, 1], read exactly as in :func:`lossy_winf` when the masses are integers.

    Returns
    -------
    float
        W^∞_γ(P, Q) = min{r in {0} ∪ {|x - y|} : m*(r) >= 1 - γ}.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Definition 1, eq. (1), on (R, |·|).
    """
    gamma_in, gamma = gamma, check_unit_interval(gamma, "gamma")
    xs = check_real_array(xs, "xs", ndim=1)
    ys = check_real_array(ys, "ys", ndim=1)
    pm_, qm_ = check_mass_vector(p, "p"), check_mass_vector(q, "q")
    if xs.shape != pm_[0].shape or ys.shape != qm_[0].shape:
        raise ValueError(f"positions and masses must match: xs {xs.shape} vs p {pm_[0].shape}, "
                         f"ys {ys.shape} vs q {qm_[0].shape}")
    if gamma >= 1:
        return 0.0
    sp, sq = np.flatnonzero(pm_[0] > 0), np.flatnonzero(qm_[0] > 0)
    ox, oy = np.argsort(xs[sp], kind="stable"), np.argsort(ys[sq], kind="stable")
    xs_s, ys_s = xs[sp][ox], ys[sq][oy]
    pm, qm, target = _coupling_masses(pm_, qm_, sp[ox], sq[oy], gamma_in)
    cand = np.unique(np.abs(xs_s[:, None] - ys_s[None, :])) if xs_s.size * ys_s.size <= 4_000_000 else None
    if cand is None:  # large supports: binary search over reals to machine precision on the candidate value
        lo, hi = 0.0, float(max(ys_s[-1] - xs_s[0], xs_s[-1] - ys_s[0], 0.0))
        if matched_mass_1d(xs_s, pm, ys_s, qm, 0.0) >= target:
            return 0.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if matched_mass_1d(xs_s, pm, ys_s, qm, mid) >= target:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-12 * max(1.0, hi):
                break
        return float(hi)
    cand = np.concatenate([[0.0], cand])
    lo, hi = 0, cand.size - 1  # cand[hi] always feasible (full coupling)
    while lo < hi:
        mid = (lo + hi) // 2
        if matched_mass_1d(xs_s, pm, ys_s, qm, float(cand[mid])) >= target:
            hi = mid
        else:
            lo = mid + 1
    return float(cand[lo])


def lossy_winf(p: Any, q: Any, gamma: float) -> float:
    """γ-lossy ∞-Wasserstein distance W^∞_γ between two histograms/distributions on the grid 0..B-1.

    Parameters
    ----------
    p, q : array_like, shape (B,)
        Non-negative masses over the same unit-spaced grid 0, 1, ..., B-1 (histograms are normalised;
        integer counts, and integral floats up to 2**53, are handled in exact integer arithmetic).
    gamma : float or fractions.Fraction
        Loss γ in [0, 1].  With integer masses the comparison m*(r) >= (1-γ)|p||q| is exact, with γ read as an
        exact rational: a ``Fraction`` or int as given, a float as its shortest decimal (0.3 is 3/10; pass
        ``Fraction(1, 3)`` rather than ``1/3``).  Float masses are compared with a relative tolerance 1e-12.

    Returns
    -------
    float
        W^∞_γ(p, q) with ground metric |i - j| (an integer).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Definition 1, eq. (1).
    """
    pm_, qm_ = check_mass_vector(p, "p"), check_mass_vector(q, "q")
    p, q = pm_[0], qm_[0]
    if p.shape != q.shape:
        raise ValueError(f"p and q must be over the same grid, got shapes {p.shape} and {q.shape}")
    grid = np.arange(p.size, dtype=float)
    gamma_in, gamma = gamma, check_unit_interval(gamma, "gamma")
    if gamma >= 1:
        return 0.0
    # unit grid: candidate radii are the integers 0..B-1, binary search directly
    sp, sq = np.flatnonzero(p > 0), np.flatnonzero(q > 0)
    pm, qm, target = _coupling_masses(pm_, qm_, sp, sq, gamma_in)
    xs, ys = grid[sp], grid[sq]
    lo, hi = 0, p.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if matched_mass_1d(xs, pm, ys, qm, float(mid)) >= target:
            hi = mid
        else:
            lo = mid + 1
    return float(lo)


def _check_cost(cost: Any, n: int, m: int) -> np.ndarray:
    C = check_real_array(cost, "cost", ndim=2)
    if C.shape != (n, m):
        raise ValueError(f"cost must have shape {(n, m)}, got {C.shape}")
    if np.any(C < 0):
        raise ValueError("cost (the metric) must be non-negative")
    return C


def _max_submass_lp(P: np.ndarray, Q: np.ndarray, allowed: np.ndarray) -> float:
    ii, jj = np.nonzero(allowed)
    if ii.size == 0:
        return 0.0
    n, m = P.size, Q.size
    k = ii.size
    from scipy.sparse import coo_matrix, vstack

    rows = coo_matrix((np.ones(k), (ii, np.arange(k))), shape=(n, k))
    cols = coo_matrix((np.ones(k), (jj, np.arange(k))), shape=(m, k))
    res = linprog(-np.ones(k), A_ub=vstack([rows, cols]).tocsr(), b_ub=np.concatenate([P, Q]),
                  bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover
        raise RuntimeError(f"max-flow LP failed: {res.message}")
    return float(-res.fun)


def lossy_winf_general(P: Any, Q: Any, cost: Any, gamma: float) -> float:
    """W^∞_γ on a general finite metric space given by a distance matrix (LP / max-flow).

    Parameters
    ----------
    P : array_like, shape (n,)
        First distribution (normalised internally).
    Q : array_like, shape (m,)
        Second distribution.
    cost : array_like, shape (n, m)
        Distances d(ω_i, ω'_j).
    gamma : float
        Loss γ in [0, 1].

    Returns
    -------
    float
        W^∞_γ(P, Q).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Definition 1, eq. (1), general finite metric space.
    """
    P = _mass_vector(P, "P")
    Q = _mass_vector(Q, "Q")
    P, Q = P / P.sum(), Q / Q.sum()
    C = _check_cost(cost, P.size, Q.size)
    gamma = check_unit_interval(gamma, "gamma")
    if gamma >= 1:
        return 0.0
    sub = C[np.ix_(P > 0, Q > 0)]
    cand = np.unique(np.concatenate([[0.0], sub.ravel()]))
    lo, hi = 0, cand.size - 1
    target = (1.0 - gamma) - 1e-9
    while lo < hi:
        mid = (lo + hi) // 2
        if _max_submass_lp(P, Q, C <= cand[mid]) >= target:
            hi = mid
        else:
            lo = mid + 1
    return float(cand[lo])


def lossy_wavg(P: Any, Q: Any, theta: float, cost: Any = None) -> float:
    """θ-lossy average Wasserstein distance W_θ (partial optimal transport LP).

    W_θ(P, Q) = min{Σ π(x, y) d(x, y) : π >= 0, π1 <= P, π^T 1 <= Q, Σ π >= 1 - θ}.

    Parameters
    ----------
    P, Q : array_like
        Distributions (normalised internally).
    theta : float
        Loss θ in [0, 1].
    cost : array_like, optional
        Distance matrix; default |i - j| on the unit grid (P and Q of equal length).

    Returns
    -------
    float

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Definition 7, eq. (15) (equivalence to partial OT derived
    here and checked against a direct LP over Φ^θ).
    """
    P = _mass_vector(P, "P")
    Q = _mass_vector(Q, "Q")
    P, Q = P / P.sum(), Q / Q.sum()
    if cost is None:
        if P.size != Q.size:
            raise ValueError(f"P and Q must be over the same grid without a cost, got {P.size} and {Q.size}")
        g = np.arange(P.size, dtype=float)
        cost = np.abs(g[:, None] - g[None, :])
    C = _check_cost(cost, P.size, Q.size)
    theta = check_unit_interval(theta, "theta")
    n, m = P.size, Q.size
    from scipy.sparse import kron, eye, csr_matrix, vstack

    A_rows = kron(eye(n), np.ones((1, m)))
    A_cols = kron(np.ones((1, n)), eye(m))
    A_tot = csr_matrix(-np.ones((1, n * m)))
    res = linprog(C.ravel(), A_ub=vstack([A_rows, A_cols, A_tot]).tocsr(),
                  b_ub=np.concatenate([P, Q, [-(1.0 - theta)]]), bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover
        raise RuntimeError(f"partial OT LP failed: {res.message}")
    return float(max(res.fun, 0.0))


# ----------------------------------------------------------------------------- distortions

def d_drop(x: Any, x_prime: Any) -> float:
    """∂_drop(x, x') = (|x| - |x'|)/|x| if x' <= x pointwise, else ∞ (0 for two empty histograms).

    Parameters
    ----------
    x : array_like of int
        The original histogram (any shape).
    x_prime : array_like of int
        The distorted histogram (same shape).

    Returns
    -------
    float
        ∂_drop(x, x') ∈ [0, 1], or ``inf`` when x' <= x fails somewhere.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), eq. (3).
    """
    a = check_histogram(x, "x", ndim=None)
    b = check_histogram(x_prime, "x_prime", ndim=None)
    if a.shape != b.shape:
        raise ValueError(f"x and x_prime must have the same shape, got {a.shape} and {b.shape}")
    if np.any(b > a):
        return float("inf")
    n = int(a.sum())
    return 0.0 if n == 0 else float((n - int(b.sum())) / n)


def d_move(x: Any, y: Any) -> float:
    """∂_move(x, y) = W^∞(x/|x|, y/|y|) if |x| = |y|, else ∞ (0 if both empty); unit grid.

    Parameters
    ----------
    x : array_like of int
        Histogram over the unit grid.
    y : array_like of int
        Histogram over the same grid.

    Returns
    -------
    float
        ∂_move(x, y), ``inf`` when |x| != |y|, 0 when both are empty.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Appendix I, eq. (38).
    """
    a = check_histogram(x, "x")
    b = check_histogram(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"x and y must be over the same grid, got {a.shape} and {b.shape}")
    if a.sum() != b.sum():
        return float("inf")
    if a.sum() == 0:
        return 0.0
    return lossy_winf(a, b, 0.0)


def d_drmv(x: Any, y: Any, eta: float, *, positions: Any = None, positions_prime: Any = None) -> float:
    """∂^η_drmv(x, y) = inf_z ∂_drop(x, z) + η ∂_move(z, y), exactly, on the unit grid.

    Any feasible z has z <= x and |z| = |y|, so the drop term is (|x| - |y|)/|x| and the move term is
    η r*, r* = the least radius at which all |y| items of y can be matched into distinct items of x
    (the matching LP is integral).  Requires η > 0 (at η = 0 the quantity is not a quasi-metric,
    erratum E6).

    ``positions`` / ``positions_prime`` give the bar positions of x / y (default: the unit grid), e.g.
    bucket centres for a BucketHist output.

    Parameters
    ----------
    x : array_like of int
        The original histogram.
    y : array_like of int
        The distorted histogram.
    eta : float
        η > 0, the weight of the move term.
    positions : array_like, optional
        Bar positions of x (default: the unit grid 0..len(x)-1).
    positions_prime : array_like, optional
        Bar positions of y (default: the unit grid 0..len(y)-1).

    Returns
    -------
    float
        (|x| - |y|)/|x| + η r*; ``inf`` when |y| > |x|, 0 when x is empty, 1 when only y is empty.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Appendix I, eq. (39) (exact algorithm derived here,
    checked against brute-force enumeration of z).
    """
    a = check_histogram(x, "x")
    b = check_histogram(y, "y")
    eta = check_positive_real(eta, "eta")
    on_grid = positions is None and positions_prime is None
    if on_grid and a.shape != b.shape:
        raise ValueError(f"x and y must be over the same grid, got {a.shape} and {b.shape}")
    xs = np.arange(a.size, dtype=float) if positions is None else check_real_array(positions, "positions", ndim=1)
    ys = np.arange(b.size, dtype=float) if positions_prime is None else check_real_array(
        positions_prime, "positions_prime", ndim=1
    )
    if xs.shape != a.shape or ys.shape != b.shape:
        raise ValueError("positions must match the histograms' shapes")
    nx, ny = int(a.sum()), int(b.sum())
    if ny > nx:
        return float("inf")
    if nx == 0:
        return 0.0
    if ny == 0:
        return 1.0
    sa, sb = np.flatnonzero(a), np.flatnonzero(b)
    oa, ob = np.argsort(xs[sa], kind="stable"), np.argsort(ys[sb], kind="stable")
    xa, pa = xs[sa][oa], np.array([int(v) for v in a[sa][oa]], dtype=object)
    yb, pb = ys[sb][ob], np.array([int(v) for v in b[sb][ob]], dtype=object)
    # candidate radii: on the unit grid every integer up to the grid's length (O(B), no pairwise table);
    # otherwise the pairwise distances, among which the least feasible radius lies
    cand = (
        np.arange(a.size, dtype=float)
        if on_grid
        else np.unique(np.concatenate([[0.0], np.abs(yb[:, None] - xa[None, :]).ravel()]))
    )
    lo, hi = 0, cand.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if matched_mass_1d(yb, pb, xa, pa, float(cand[mid])) >= ny:
            hi = mid
        else:
            lo = mid + 1
    return float((nx - ny) / nx + eta * cand[lo])


def d_hist(y: Any, y_prime: Any, *, positions: Any = None, positions_prime: Any = None) -> float:
    """d_hist(y, y') = W^∞(y/|y|, y'/|y'|) with ground metric |a - b| (0 if both empty, ∞ if one is).

    Parameters
    ----------
    y, y_prime : array_like of int
        Histograms.
    positions, positions_prime : array_like, optional
        Bar positions (default: the unit grid 0..len-1), e.g. bucket centres.

    Returns
    -------
    float
        d_hist(y, y'): 0 if both are empty, ``inf`` if exactly one is.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.1 (metric d_hist).
    """
    a = check_histogram(y, "y")
    b = check_histogram(y_prime, "y_prime")
    ea, eb = a.sum() == 0, b.sum() == 0
    if ea or eb:
        return 0.0 if (ea and eb) else float("inf")
    if positions is None and positions_prime is None and a.shape == b.shape:
        return lossy_winf(a, b, 0.0)
    xs = np.arange(a.size, dtype=float) if positions is None else np.asarray(positions, dtype=float)
    ys = np.arange(b.size, dtype=float) if positions_prime is None else np.asarray(positions_prime, dtype=float)
    return lossy_winf_1d(xs, a, ys, b, 0.0)


def d_supp(U: Any, V: Any) -> float:
    """Hausdorff distance d_supp(U, V) between two finite subsets of R (0 if both empty, ∞ if one is).

    Parameters
    ----------
    U, V : array_like
        The two finite sets (any shape; duplicates ignored).

    Returns
    -------
    float
        The Hausdorff distance max(sup_u d(u, V), sup_v d(v, U)); 0 if both are empty, ``inf`` if exactly one is.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.2 / App. H.3 (metric d_supp).
    """
    u = np.unique(np.asarray(U, dtype=float).ravel())
    v = np.unique(np.asarray(V, dtype=float).ravel())
    if u.size == 0 or v.size == 0:
        return 0.0 if u.size == v.size else float("inf")
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
        raise ValueError("U and V must contain finite values")

    def one_side(a: np.ndarray, b: np.ndarray) -> float:
        k = np.searchsorted(b, a)
        left = np.abs(a - b[np.clip(k - 1, 0, b.size - 1)])
        right = np.abs(b[np.clip(k, 0, b.size - 1)] - a)
        return float(np.max(np.minimum(left, right)))

    return max(one_side(u, v), one_side(v, u))


# ----------------------------------------------------------------------------- accuracy checks

def empirical_lossy_beta(errors: Any, gamma: float) -> float:
    """Smallest β with (fraction of ``errors`` > β) <= γ, i.e. W^∞_γ(δ_f, empirical law) (Lemma 6).

    ``errors`` are per-sample distances d(M(x)_j, f(x'_j)) for the best admissible distorted input x'_j
    of each sample (the coupling in Definition 3 is free, so x' may depend on the output).

    Parameters
    ----------
    errors : array_like
        Non-empty 1-D array of per-sample errors (``inf`` allowed).
    gamma : float
        γ ∈ [0, 1], the fraction of samples that may be discarded.

    Returns
    -------
    float
        The (k+1)-th largest error (k = floor(γ n)) clipped at 0; 0 when every sample may be discarded.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Lemma 6 and Definition 3 on an empirical output law.
    """
    e = check_real_array(errors, "errors", ndim=1, allow_inf=True)  # NaN refused, without quoting the errors
    gamma = check_unit_interval(gamma, "gamma")
    s = np.sort(e)
    k = int(np.floor(gamma * s.size + 1e-12))  # may discard the k largest
    if k >= s.size:
        return 0.0
    return float(max(s[s.size - 1 - k], 0.0))


def check_accuracy(errors: Any, beta: float, gamma: float = 0.0) -> bool:
    """Empirical (α, β, γ)-accuracy check: at most a γ fraction of the ``errors`` exceeds β.

    Parameters
    ----------
    errors : array_like
        Non-empty 1-D array of per-sample errors (see :func:`empirical_lossy_beta`).
    beta : float
        β ≥ 0.
    gamma : float, default 0.0
        γ ∈ [0, 1].

    Returns
    -------
    bool
        Whether :func:`empirical_lossy_beta` ``(errors, gamma) <= beta`` (within 1e-12).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Definition 3 (with Lemma 6), on output samples.
    """
    beta = check_real(beta, "beta")
    if not beta >= 0:
        raise ValueError(f"beta must be >= 0, got {beta!r}")
    return bool(empirical_lossy_beta(errors, gamma) <= beta + 1e-12)
