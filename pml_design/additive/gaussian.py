"""Binary Gaussian mechanism ``Y = X + G``, ``X ∈ {-1, +1}``, ``G ~ N(0, σ²)``, under PML, and the pLDP baseline.

Implements: pml-design-empirical-distributions (the "core paper"), Section VI-B: the per-outcome PML of the
Gaussian mixture, the violation set ``E_ε(P_X)``, ``δ1(ε)`` of eq. (17) (a supremum over the ℓ1 ball), and the
``(ε*, δ*)`` guarantee with ``δ* = δ1 + δ2 − δ1 δ2``; Section VI-C2: the probabilistic-LDP Gaussian mechanism
of [34, Theorem 8] (Zhao et al. 2019, arXiv:1911.12060) with sensitivity Δ = 2.

Closed forms used here (derived in ``docs/additive.md``; checked against root finding and grids in the tests)
------------------------------------------------------------------------------------------------------------
With ``p = P(X = -1)``, ``q = 1 − p``: for ``y ≥ 0`` the likelier input is ``+1`` and
``ℓ(X → y) = −log(q + p e^{−2y/σ²})``; for ``y < 0``, ``ℓ(X → y) = −log(p + q e^{2y/σ²})``. Both are monotone
in ``|y|``, so the violation set is a union of two tails, ``E_ε(P_X) = (−∞, y₋) ∪ (y₊, ∞)`` with
``y₊ = −(σ²/2) log1p(expm1(−ε)/p)`` (empty if ``p + expm1(−ε) ≤ 0``) and
``y₋ = (σ²/2) log1p(expm1(−ε)/q)`` (empty if ``q + expm1(−ε) ≤ 0``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import erfc, erfcinv, logsumexp, ndtr

from .._validation import check_delta, check_epsilon, check_finite_array, check_positive_real
from .common import binary_l1_radius, check_ball_radius, check_p_minus

__all__ = [
    "Delta1Sup",
    "GaussianPMLGuarantee",
    "ViolationSet",
    "gaussian_delta1",
    "gaussian_delta1_sup",
    "gaussian_leakage",
    "gaussian_pml_curve",
    "gaussian_pml_guarantee",
    "gaussian_violation_probability",
    "gaussian_violation_set",
    "pldp_gaussian_delta",
    "pldp_gaussian_sigma",
]

#: Number of grid points of the coarse stage of :func:`gaussian_delta1_sup`.
DELTA1_COARSE_POINTS: int = 2049


def gaussian_leakage(y: object, sigma: float, p_minus: float) -> np.ndarray:
    """Per-outcome PML ``ℓ(X → y) = log max_x f_{Y|X=x}(y) / f_Y(y)`` of the binary Gaussian mechanism.

    ``f_Y`` is the Gaussian mixture ``P(X=-1) N(-1, σ²) + P(X=1) N(1, σ²)``; computed in the log domain.

    Implements: core paper, Section VI-B (the PML for any outcome ``y ∈ ℝ``).

    Parameters
    ----------
    y : array_like of float
        Outcomes (any shape).
    sigma : float
        Noise standard deviation ``σ > 0``.
    p_minus : float
        Prior ``P(X = -1) ∈ [0, 1]``.

    Returns
    -------
    numpy.ndarray
        ``ℓ(X → y)`` in nats, same shape as ``y``.
    """
    yy = check_finite_array(y, "y")
    s = check_positive_real(sigma, "sigma")
    p = check_p_minus(p_minus)
    a_minus = -((yy + 1.0) ** 2) / (2.0 * s * s)
    a_plus = -((yy - 1.0) ** 2) / (2.0 * s * s)
    weights = np.array([p, 1.0 - p]).reshape((2,) + (1,) * yy.ndim)
    return np.maximum(a_minus, a_plus) - logsumexp(np.stack([a_minus, a_plus]), axis=0, b=weights)


@dataclass(frozen=True)
class ViolationSet:
    """``E_ε(P_X) = {y : ℓ(X → y) > ε} = (−∞, lower) ∪ (upper, ∞)``.

    ``lower = -inf`` / ``upper = +inf`` mean the corresponding tail is empty.
    """

    lower: float
    upper: float

    def contains(self, y: object) -> np.ndarray:
        """Boolean mask of the outcomes ``y`` that violate the ε-PML constraint."""
        yy = np.asarray(y, dtype=float)
        return (yy < self.lower) | (yy > self.upper)


def _boundaries(eps: float, s: float, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised closed-form boundaries ``(y₋, y₊)`` of ``E_ε`` for priors ``p = P(X=-1)`` (array)."""
    e = math.expm1(-eps)  # e^{-ε} − 1 ∈ (−1, 0]
    q = 1.0 - p
    half_var = 0.5 * s * s
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.where(p + e > 0, -half_var * np.log1p(e / np.where(p > 0, p, 1.0)), np.inf)
        lower = np.where(q + e > 0, half_var * np.log1p(e / np.where(q > 0, q, 1.0)), -np.inf)
    return lower, upper


def gaussian_violation_set(epsilon: float, sigma: float, p_minus: float) -> ViolationSet:
    """The outcomes that violate ε-PML: ``E_ε(P_X) = {y ∈ ℝ : ℓ(X → y) > ε}``, exactly.

    The boundaries are the two solutions of ``ℓ(X → y) = ε`` (one per side of 0), in closed form (see the
    module docstring); a side is empty when its limit leakage (``−log P(X=+1)`` for ``y → ∞``,
    ``−log P(X=-1)`` for ``y → −∞``) does not exceed ε.

    Implements: core paper, Section VI-B, definition of ``E_ε(P_X)``.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    sigma : float
        σ > 0.
    p_minus : float
        Prior ``P(X = -1) ∈ [0, 1]``.

    Returns
    -------
    ViolationSet
        ``(lower, upper)`` with ``E_ε = (−∞, lower) ∪ (upper, ∞)`` (``-inf`` / ``+inf`` for an empty side).
    """
    eps = check_epsilon(epsilon)
    s = check_positive_real(sigma, "sigma")
    p = check_p_minus(p_minus)
    lower, upper = _boundaries(eps, s, np.array(p))
    return ViolationSet(lower=float(lower), upper=float(upper))


def _violation_probability(eps: float, s: float, p: np.ndarray) -> np.ndarray:
    lower, upper = _boundaries(eps, s, p)
    q = 1.0 - p
    # P(Y < y₋ | X = x) = Φ((y₋ − x)/σ),  P(Y > y₊ | X = x) = Φ((x − y₊)/σ); ndtr is accurate in the tails.
    mass_minus = ndtr((lower + 1.0) / s) + ndtr((-1.0 - upper) / s)
    mass_plus = ndtr((lower - 1.0) / s) + ndtr((1.0 - upper) / s)
    return p * mass_minus + q * mass_plus


def gaussian_violation_probability(epsilon: float, sigma: float, p_minus: object) -> np.ndarray | float:
    """``P_{Y ~ P_{Y|X} ∘ P_X}[E_ε(P_X)]``: probability that the ε-PML constraint is violated.

    Implements: core paper, eq. (17), the integrand of the supremum (for one prior), in closed form via the
    normal CDF.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    sigma : float
        σ > 0.
    p_minus : float or array_like
        Prior(s) ``P(X = -1) ∈ [0, 1]``; arrays are evaluated elementwise.

    Returns
    -------
    float or numpy.ndarray
        Same shape as ``p_minus``.
    """
    eps = check_epsilon(epsilon)
    s = check_positive_real(sigma, "sigma")
    if np.ndim(p_minus) == 0:
        return float(_violation_probability(eps, s, np.array(check_p_minus(p_minus))))
    p = check_finite_array(p_minus, "p_minus")
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"p_minus must contain probabilities P(X = -1) in [0, 1], got min {p.min()!r}, max {p.max()!r}")
    return _violation_probability(eps, s, p)


@dataclass(frozen=True)
class Delta1Sup:
    """Result of :func:`gaussian_delta1_sup`: the value ``δ1(ε)`` and a maximising prior ``P(X = -1)``."""

    delta1: float
    p_minus: float


def gaussian_delta1_sup(epsilon: float, sigma: float, p_hat: float, radius: float) -> Delta1Sup:
    """``δ1(ε) = sup_{P_X ∈ B_β(P̂)} P[E_ε(P_X)]`` with the maximising prior.

    Method: for binary X the ℓ1 ball is the interval ``P(X=-1) ∈ [p̂ − β/2, p̂ + β/2] ∩ [0, 1]`` and the
    violation probability is a smooth closed-form function of ``P(X=-1)``. It is evaluated on a
    ``DELTA1_COARSE_POINTS``-point grid; every grid local maximum (endpoints included) is then refined by
    bounded Brent search on its two neighbouring cells (``xatol = 1e-14``), and the best value is returned.
    Since refinement only ever replaces a grid value by a larger one, the result is never below the grid
    maximum, and it agrees with a 10⁶-point grid to ~1e-12 relative or better (see the tests and the
    benchmark in ``docs/additive.md``). The ball is taken on the closed simplex: at ``P(X=-1) ∈ {0, 1}`` the
    value is the limit from the interior, so the supremum is reported even when not attained.

    Implements: core paper, eq. (17) (the paper used an exhaustive grid search).

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    sigma : float
        σ > 0.
    p_hat : float
        Estimate of ``P(X = -1)``, in [0, 1].
    radius : float
        ℓ1 radius β ≥ 0 of the uncertainty ball (values above 2 are clipped to 2).

    Returns
    -------
    Delta1Sup
        ``delta1`` = δ1(ε) and ``p_minus``, a maximising ``P(X = -1)`` in the ball.
    """
    eps = check_epsilon(epsilon)
    s = check_positive_real(sigma, "sigma")
    ph = check_p_minus(p_hat, "p_hat")
    beta = check_ball_radius(radius)
    lo, hi = max(0.0, ph - beta / 2.0), min(1.0, ph + beta / 2.0)
    if hi - lo <= 0.0:
        return Delta1Sup(float(_violation_probability(eps, s, np.array(ph))), ph)
    grid = np.linspace(lo, hi, DELTA1_COARSE_POINTS)
    vals = _violation_probability(eps, s, grid)
    best_i = int(np.argmax(vals))
    best_v, best_p = float(vals[best_i]), float(grid[best_i])
    padded = np.concatenate([[-np.inf], vals, [-np.inf]])
    is_peak = (padded[1:-1] >= padded[:-2]) & (padded[1:-1] >= padded[2:]) & (vals > 0)
    peaks = np.flatnonzero(is_peak)
    if peaks.size > 16:  # plateaus: keep the highest few
        peaks = peaks[np.argsort(vals[peaks])[-16:]]

    def neg(p: float) -> float:
        return -float(_violation_probability(eps, s, np.array(p)))

    for i in peaks:
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        res = minimize_scalar(neg, bounds=(a, b), method="bounded", options={"xatol": 1e-14, "maxiter": 200})
        if -res.fun > best_v:
            best_v, best_p = -float(res.fun), float(res.x)
    return Delta1Sup(min(best_v, 1.0), best_p)


def gaussian_delta1(epsilon: float, sigma: float, p_hat: float, radius: float) -> float:
    """``δ1(ε)``: worst-case probability over the ℓ1 ball that an outcome violates ε-PML.

    ``δ1(ε) = sup_{P_X ∈ B_β(P̂)} ∫_{E_ε(P_X)} Σ_x P_X(x) f_{Y|X=x}(y) dy``.

    Implements: core paper, eq. (17). See :func:`gaussian_delta1_sup` for the method and accuracy.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0.
    sigma : float
        Noise standard deviation σ > 0.
    p_hat : float
        Estimate of ``P(X = -1)``, in [0, 1].
    radius : float
        ℓ1 radius β ≥ 0 of the uncertainty ball ``B_β(P̂)``.

    Returns
    -------
    float
        δ1 ∈ [0, 1].
    """
    return gaussian_delta1_sup(epsilon, sigma, p_hat, radius).delta1


@dataclass(frozen=True)
class GaussianPMLGuarantee:
    """The ``(ε*, δ*)``-PML guarantee of the binary Gaussian mechanism (core paper, Section VI-B)."""

    epsilon: float
    epsilon_star: float
    delta1: float
    delta2: float
    delta_star: float
    radius: float
    p_minus_worst: float


def _epsilon_star(eps: float, beta: float) -> float:
    x = beta * math.exp(eps) / 2.0 if eps < 700 else math.inf
    return eps - math.log1p(-x) if x < 1.0 else math.inf


def gaussian_pml_guarantee(epsilon: float, sigma: float, p_hat: float, m: int, delta2: float) -> GaussianPMLGuarantee:
    """``(ε*, δ*)`` of the binary Gaussian mechanism with the prior estimated from ``m`` samples.

    ``β = β*(δ2)`` of eq. (14); ``δ1 = δ1(ε)`` over ``B_β(P̂)`` (eq. (17)); ``ε* = ε − log(1 − β e^ε / 2)``
    (Theorem 4, k > 1 case); ``δ* = δ1 + δ2 − δ1 δ2``.

    Implements: core paper, Section VI-B (eq. (14), eq. (17), the displays defining ε* and δ*).

    Parameters
    ----------
    epsilon : float
        The per-outcome threshold ε ≥ 0 used in ``E_ε``.
    sigma : float
        σ > 0.
    p_hat : float
        Estimate of ``P(X = -1)``, in [0, 1].
    m : int
        Number of samples behind ``p_hat`` (≥ 1).
    delta2 : float
        Failure probability of the estimate, in (0, 1].

    Returns
    -------
    GaussianPMLGuarantee
        ε, ε*, δ1, δ2, δ*, the radius β and the worst prior ``P(X = -1)`` of δ1.

    Raises
    ------
    ValueError
        If ``β*(δ2) e^ε / 2 ≥ 1``: Theorem 4 gives no finite ε* (too few samples for this ε).
    """
    eps = check_epsilon(epsilon)
    d2 = check_delta(delta2, "delta2")
    beta = binary_l1_radius(m, d2)
    eps_star = _epsilon_star(eps, beta)
    if not math.isfinite(eps_star):
        raise ValueError(
            f"epsilon={eps!r} is too large for m={m!r}, delta2={d2!r}: beta*(delta2) e^epsilon / 2 = "
            f"{beta * math.exp(min(eps, 700.0)) / 2:.4g} >= 1, so Theorem 4 gives no finite epsilon*"
        )
    sup = gaussian_delta1_sup(eps, sigma, p_hat, beta)
    d_star = sup.delta1 + d2 - sup.delta1 * d2
    return GaussianPMLGuarantee(eps, eps_star, sup.delta1, d2, d_star, beta, sup.p_minus)


def gaussian_pml_curve(
    epsilons: object, sigma: float, p_hat: float, m: int, delta2: float
) -> dict[str, np.ndarray]:
    """The ``(ε*, δ*)`` curve of the binary Gaussian mechanism over a grid of ε (Fig. 6, Fig. 7).

    Points where Theorem 4 is vacuous (``β e^ε / 2 ≥ 1``) are dropped; the returned ``epsilon`` array says
    which ε were kept.

    Implements: core paper, Section VI-B, evaluated as in Section VI-C2.

    Parameters
    ----------
    epsilons : array_like
        The ε grid (each ε ≥ 0).
    sigma : float
        σ > 0.
    p_hat : float
        Estimate of ``P(X = -1)``, in [0, 1].
    m : int
        Number of samples behind ``p_hat`` (≥ 1).
    delta2 : float
        Failure probability of the estimate, δ2 ∈ (0, 1).

    Returns
    -------
    dict
        Arrays ``epsilon``, ``epsilon_star``, ``delta1``, ``delta_star`` (equal lengths) and the float
        ``radius``.
    """
    eps_arr = check_finite_array(epsilons, "epsilons", ndim=1)
    if np.any(eps_arr < 0):
        raise ValueError(f"epsilons must be >= 0, got min {eps_arr.min()!r}")
    d2 = check_delta(delta2, "delta2")
    beta = binary_l1_radius(m, d2)
    rows = []
    for eps in eps_arr:
        es = _epsilon_star(float(eps), beta)
        if math.isfinite(es):
            d1 = gaussian_delta1(float(eps), sigma, p_hat, beta)
            rows.append((float(eps), es, d1, d1 + d2 - d1 * d2))
    out = np.array(rows, dtype=float).reshape(-1, 4)
    return {
        "epsilon": out[:, 0],
        "epsilon_star": out[:, 1],
        "delta1": out[:, 2],
        "delta_star": out[:, 3],
        "radius": beta,
    }


def pldp_gaussian_sigma(epsilon: float, delta: float) -> float:
    """σ of the (ε, δ)-probabilistic-LDP Gaussian mechanism for binary ``X ∈ {-1, 1}`` (sensitivity Δ = 2).

    ``σ_pLDP = √2 (f + sqrt(f² + ε)) / ε`` with ``f = erfc⁻¹(δ)``, i.e. [34, Theorem 8]'s
    ``σ = Δ (f + sqrt(f² + ε)) / (√2 ε)`` at Δ = 2. The guarantee is
    ``P_Y[max_{x,x'} f_{Y|X=x}(Y)/f_{Y|X=x'}(Y) > e^ε] ≤ δ``; it is conservative by a factor of about 2
    (the exact probability is ``Q((σ²ε/2 − 1)/σ) + Q((σ²ε/2 + 1)/σ)``, while ``δ = 2 Q((σ²ε/2 − 1)/σ)``).

    Implements: core paper, Section VI-C2, with [34] = Zhao et al., "Reviewing and improving the Gaussian
    mechanism for differential privacy", arXiv:1911.12060, Theorem 8.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ ∈ (0, 1].

    Returns
    -------
    float
        ``σ_pLDP``.
    """
    eps = check_epsilon(epsilon, positive=True)
    d = check_delta(delta)
    f = float(erfcinv(d))
    return math.sqrt(2.0) * (f + math.sqrt(f * f + eps)) / eps


def pldp_gaussian_delta(epsilon: float, sigma: float) -> float:
    """The δ at which :func:`pldp_gaussian_sigma` returns ``sigma``: ``δ = erfc((σ² ε/2 − 1)/(√2 σ))``, capped at 1.

    This is the pLDP (ε, δ)-curve of a fixed σ (the baseline curve of Fig. 6 and Fig. 7), obtained by solving
    ``σ = √2 (f + sqrt(f² + ε))/ε`` for ``f``: ``f = (σ² ε/2 − 1)/(√2 σ)``.

    Implements: core paper, Section VI-C2 (inverse of [34, Theorem 8] at Δ = 2).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    sigma : float
        σ > 0.

    Returns
    -------
    float
        ``min(1, erfc((σ² ε/2 − 1)/(√2 σ)))``.
    """
    eps = check_epsilon(epsilon, positive=True)
    s = check_positive_real(sigma, "sigma")
    f = (s * s * eps / 2.0 - 1.0) / (math.sqrt(2.0) * s)
    return float(min(1.0, erfc(f)))
