"""Binary Laplace mechanism ``Y = X + L``, ``X ∈ {-1, +1}``, ``L ~ Laplace(0, b)``, under PML.

Implements: pml-design-empirical-distributions (the "core paper"), Section VI-A: the per-outcome leakage,
Proposition 3 (``ε(b)`` for a known prior), eq. (16) (``ε(b, δ)`` when the prior is estimated from m samples,
with β*(δ) of eq. (14)), its inverse (the scale meeting a target), and Remark 4 (LDP scale ``2/ε``).

Conventions
-----------
A binary prior is ``P(X = -1) = p_minus``; ``p_min = min(p_minus, 1 - p_minus) ∈ [0, 1/2]``. Logarithms are
natural. ``p_min = 0`` is accepted as the limit of full-support priors (PML is defined on the interior of the
simplex); it gives the LDP value ``2/b``.

Erratum (eq. (16))
------------------
The printed eq. (16) uses ``p̂_min − β*(δ)/2`` as the smallest mass in the ℓ1 ball. When ``β*(δ) > 2 p̂_min``
that number is negative and eq. (16) then exceeds ``2/b``, which no prior can produce; the ball meets the
boundary of the simplex, and the worst case is ``p_min → 0``, i.e. ``ε = 2/b`` (LDP, Remark 4). The library
uses ``max(p̂_min − β*(δ)/2, 0)`` (see ``docs/errata-additive.md``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from .._validation import check_epsilon, check_finite_array, check_positive_real
from .common import binary_l1_radius, check_ball_radius, check_p_min, check_p_minus

__all__ = [
    "laplace_leakage",
    "laplace_ldp_scale",
    "laplace_pml_epsilon",
    "laplace_pml_epsilon_ball",
    "laplace_pml_epsilon_estimated",
    "laplace_scale_for",
    "laplace_scale_for_radius",
    "laplace_worst_p_min",
]


def laplace_leakage(y: object, scale: float, p_minus: float) -> np.ndarray:
    """Per-outcome PML ``ℓ(X → y)`` of the binary Laplace mechanism, evaluated pointwise.

    ``ℓ(X → y) = log max_x f_{Y|X=x}(y) / f_Y(y)`` with ``f_{Y|X=x}(y) = exp(−|y − x|/b) / (2b)`` and
    ``f_Y = P(X=-1) f_{Y|X=-1} + P(X=1) f_{Y|X=1}``, computed in the log domain.

    Implements: core paper, Section VI (leakage for bounded densities) and Appendix E, first display.

    Parameters
    ----------
    y : array_like of float
        Outcomes (any shape).
    scale : float
        Laplace scale ``b > 0``.
    p_minus : float
        Prior probability ``P(X = -1) ∈ [0, 1]``.

    Returns
    -------
    numpy.ndarray
        ``ℓ(X → y)`` in nats, same shape as ``y``.
    """
    yy = check_finite_array(y, "y")
    b = check_positive_real(scale, "scale")
    p = check_p_minus(p_minus)
    a_minus = -np.abs(yy + 1.0) / b
    a_plus = -np.abs(yy - 1.0) / b
    stacked = np.stack([a_minus, a_plus])
    weights = np.array([p, 1.0 - p]).reshape((2,) + (1,) * yy.ndim)
    return np.maximum(a_minus, a_plus) - logsumexp(stacked, axis=0, b=weights)


def laplace_pml_epsilon(scale: float, p_min: float) -> float:
    """``ε(b) = 2/b − log(e^{2/b} p_min + 1 − p_min)``: the ε-PML of the binary Laplace mechanism.

    This is ``sup_y ℓ(X → y)`` for a known prior; the supremum is attained on ``|y| ≥ 1`` on the side of
    the less likely symbol. Increasing in ``1/b``, decreasing in ``p_min``; ``2/b`` at ``p_min = 0`` (LDP)
    and ``→ −log p_min`` as ``b → 0``.

    Implements: core paper, Proposition 3 (proof in Appendix E).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    p_min : float
        ``min_x P_X(x) ∈ [0, 1/2]``.

    Returns
    -------
    float
        ``ε(b)`` in nats.
    """
    b = check_positive_real(scale, "scale")
    p = check_p_min(p_min)
    return _eps_of(2.0 / b, p)


def _eps_of(t: float, p: float) -> float:
    """``−log(p + (1 − p) e^{−t})`` for ``t = 2/b``, accurate for small and large ``t`` and ``p = 0``."""
    if p == 0.0:
        return t
    arg = (1.0 - p) * math.expm1(-t)  # = (p + (1-p) e^{-t}) - 1 ∈ (-(1-p), 0]
    if arg > -0.5:
        return -math.log1p(arg)
    return -math.log(p + (1.0 - p) * math.exp(-t))


def laplace_worst_p_min(p_hat_min: float, radius: float) -> float:
    """Smallest ``p_min`` over the ℓ1 ball ``B_β(P̂)`` (intersected with the simplex): ``max(p̂_min − β/2, 0)``.

    Implements: core paper, Section VI-A (the step from Proposition 3 to eq. (16)), with the clamp at 0 that
    the printed eq. (16) omits (see the module docstring).

    Parameters
    ----------
    p_hat_min : float
        Smaller mass of the estimate ``P̂``, in [0, 1/2].
    radius : float
        β ≥ 0 (``inf`` allowed; clipped to 2).

    Returns
    -------
    float
        ``max(p̂_min − β/2, 0)``.
    """
    p = check_p_min(p_hat_min, "p_hat_min")
    beta = check_ball_radius(radius)
    return max(p - beta / 2.0, 0.0)


def laplace_pml_epsilon_ball(scale: float, p_hat_min: float, radius: float) -> float:
    """Worst-case ``ε(b)`` over all priors in the ℓ1 ball of radius ``radius`` around ``P̂``.

    Implements: core paper, Proposition 3 applied to ``laplace_worst_p_min(p_hat_min, radius)``, the form
    behind eq. (16).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    p_hat_min : float
        Smaller mass of the estimate ``P̂``, in [0, 1/2].
    radius : float
        β ≥ 0 (``inf`` allowed; clipped to 2).

    Returns
    -------
    float
        The largest ε-PML of the mechanism over the ball, in nats.
    """
    b = check_positive_real(scale, "scale")
    return _eps_of(2.0 / b, laplace_worst_p_min(p_hat_min, radius))


def laplace_pml_epsilon_estimated(scale: float, p_hat_min: float, m: int, delta: float) -> float:
    """``ε(b, δ)``: the PML of the binary Laplace mechanism that holds with probability ≥ 1 − δ.

    ``ε(b, δ) = 2/b − log[(max(p̂_min − β*(δ)/2, 0)) (e^{2/b} − 1) + 1]`` with
    ``β*(δ) = sqrt(2 (log 2 − log δ)/m)``.

    Implements: core paper, eq. (16) (clamped, see the module docstring) with eq. (14).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    p_hat_min : float
        Smaller mass of the estimate ``P̂_X``, in [0, 1/2].
    m : int
        Number of samples behind ``P̂_X`` (≥ 1).
    delta : float
        Failure probability in [0, 1]; ``delta = 0`` gives the LDP value ``2/b`` (Remark 4).

    Returns
    -------
    float
        ``ε(b, δ)`` in nats.
    """
    b = check_positive_real(scale, "scale")
    p = check_p_min(p_hat_min, "p_hat_min")
    beta = binary_l1_radius(m, delta)
    return _eps_of(2.0 / b, max(p - beta / 2.0, 0.0))


def laplace_ldp_scale(epsilon: float) -> float:
    """Scale ``b = 2/ε`` of the ε-LDP binary Laplace mechanism (sensitivity 2).

    Implements: core paper, Remark 4 (and [23]); equals ``laplace_scale_for(ε, p, m, 0)`` for any ``p, m``.

    Parameters
    ----------
    epsilon : float
        ε > 0.

    Returns
    -------
    float
        ``b = 2/ε``.
    """
    eps = check_epsilon(epsilon, positive=True)
    return 2.0 / eps


def _scale_for_p_min(eps: float, p_worst: float, context: str) -> float:
    # Solve −log(p + (1 − p) e^{−t}) = ε for t = 2/b: e^{−t} = (e^{−ε} − p)/(1 − p), i.e.
    # t = −log1p(expm1(−ε)/(1 − p)). ε(t) is strictly increasing from 0 to −log p, so the solution is unique.
    eps_cap = math.inf if p_worst == 0.0 else -math.log(p_worst)
    if not eps < eps_cap:
        raise ValueError(
            f"epsilon={eps!r} cannot be met with equality: it is >= -log(p_min)={eps_cap!r} for the worst-case "
            f"p_min={p_worst!r} ({context}). Every scale b > 0 leaks less than that (the leakage of the binary "
            "Laplace mechanism never exceeds -log p_min), so no noise is needed for this target"
        )
    arg = math.expm1(-eps) / (1.0 - p_worst)
    t = -math.log1p(arg)
    if not (t > 0 and math.isfinite(t)):  # pragma: no cover - guarded by the checks above
        raise ValueError(f"epsilon={eps!r} is out of the numerically representable range ({context})")
    return 2.0 / t


def laplace_scale_for_radius(epsilon: float, p_hat_min: float, radius: float) -> float:
    """Scale ``b`` for which the worst-case ``ε(b)`` over ``B_radius(P̂)`` equals ``epsilon``.

    Implements: core paper, inverse of Proposition 3 at ``laplace_worst_p_min(p_hat_min, radius)``.
    See :func:`laplace_scale_for` for the method and the errors.

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    p_hat_min : float
        Smaller mass of the estimate ``P̂``, in [0, 1/2].
    radius : float
        β ≥ 0 (``inf`` allowed; clipped to 2).

    Returns
    -------
    float
        The scale ``b > 0``.
    """
    eps = check_epsilon(epsilon, positive=True)
    p_worst = laplace_worst_p_min(p_hat_min, radius)
    return _scale_for_p_min(eps, p_worst, f"p_hat_min={p_hat_min!r}, radius={radius!r}")


def laplace_scale_for(epsilon: float, p_hat_min: float, m: int, delta: float) -> float:
    """The Laplace scale ``b`` that makes eq. (16) equal ``epsilon``: ``ε(b, δ) = ε``.

    The binary Laplace mechanism with this scale satisfies (ε, δ)-PML w.r.t. the true distribution when
    ``P̂`` is the empirical estimate from ``m`` i.i.d. samples (Theorem 2, eq. (14)).

    Method: ``ε(b, δ) = −log(p + (1 − p) e^{−2/b})`` with ``p = max(p̂_min − β*(δ)/2, 0)`` is strictly
    decreasing in ``b``, and solving for ``b`` gives the closed form
    ``b = 2 / (−log1p(expm1(−ε)/(1 − p)))``, evaluated without cancellation. It is exact to rounding
    (``ε(b, δ)`` reproduces ``epsilon`` to ~1e-15 relative; the tests check it against a bracketing root
    finder). With ``p = 0`` (``δ = 0`` or too few samples) it is the LDP scale ``2/ε`` (Remark 4).

    Implements: core paper, inverse of eq. (16) with eq. (14); Remark 4 as the special case.

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    p_hat_min : float
        Smaller mass of the estimate ``P̂_X``, in [0, 1/2].
    m : int
        Number of samples behind ``P̂_X`` (≥ 1).
    delta : float
        Failure probability in [0, 1] (0 gives the LDP scale).

    Returns
    -------
    float
        The scale ``b > 0``.

    Raises
    ------
    ValueError
        If ``epsilon ≤ 0`` (would need infinite noise) or ``epsilon ≥ −log p`` for the worst-case ``p`` (the
        target is unreachable with equality: every ``b`` satisfies it), or for invalid arguments.
    """
    eps = check_epsilon(epsilon, positive=True)
    p = check_p_min(p_hat_min, "p_hat_min")
    beta = binary_l1_radius(m, delta)
    p_worst = max(p - beta / 2.0, 0.0)
    return _scale_for_p_min(eps, p_worst, f"p_hat_min={p!r}, m={m!r}, delta={delta!r}, beta*={beta!r}")
