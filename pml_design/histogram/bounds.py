"""PML of Laplace histograms whose bin probabilities are bounded away from zero.

A k-bin histogram of ``n`` records is released as ``Y_j = count_j + N_j`` with ``N_j ~ Lap(b)`` i.i.d.
(:mod:`pml_design.histogram.release` draws it). If every record falls into every bin with probability at
least ``α`` (the set ``Q_α`` of product distributions), the pointwise maximal leakage of each record is
bounded by

    ε_PML(b, α) = 2/b − log(1 − α + α·e^{2/b}) = −log(α + (1 − α)·e^{−2/b})           (eq. (1))

whereas the context-free DP analysis gives ``ε_DP(b) = 2/b`` (sensitivity 2).

Module map (paper "A Tight Context-aware Privacy Bound for Histogram Publication", Saeidian et al.,
short name *pml-histogram-laplace*):

=========================================  =====================================================
:func:`histogram_pml_epsilon`              Theorem 4, eq. (1)
:func:`histogram_pml_epsilon_relaxed`      eq. (2)
:func:`histogram_pml_epsilon_composition`  Section IV, composition of k − 1 counting queries
:func:`histogram_dp_epsilon`               Definition 3 with Δ₁ = 2 (Section III-B, ε_DP = 2/b)
:func:`histogram_scale_for`                eq. (1) solved for b (closed form, derived here)
:func:`histogram_dp_scale_for`             ε_DP solved for b
:func:`histogram_noiseless_epsilon`        sup_b ε_PML(b, α) = log(1/α): leakage of the exact histogram
:func:`alpha_from_estimate`                α from an ℓ1 ball around an estimate (extension)
:func:`histogram_guarantee_from_estimate`  (ε, δ)-PML statement from (P̂, β, δ) (extension)
:func:`histogram_guarantee_from_samples`   the same with P̂ and β*(δ) computed from samples
=========================================  =====================================================

Closed-form calibration (derivation)
------------------------------------
Write eq. (1) as ``e^{−ε} = α + (1 − α)·e^{−2/b}``. For a target ``ε > 0``:

    2/b = log(1 − α) − log(e^{−ε} − α)
        = ε + log(1 − α) − log(1 − α·e^{ε})                     (multiply e^{−ε} − α by e^{ε})
        = ε − log1p(−u),   u = α·expm1(ε)/(1 − α) = 1 − (1 − α·e^{ε})/(1 − α) ∈ (0, 1),
    b   = 2 / (2/b),

valid for ``0 < ε < log(1/α)`` (then ``α·e^{ε} < 1``, so ``u < 1`` and 2/b > ε > 0). The last form adds two
positive terms, so nothing cancels: it is accurate for tiny ε (``u ≈ αε/(1 − α)``, no ``log(1 − α)`` is
subtracted from a nearby value) and, with ``1 − u`` computed in 60-digit decimal arithmetic when u > 1/2, for ε
close to ``log(1/α)`` (the earlier ``−log1p(expm1(−ε)/(1 − α))`` lost ``e^{−ε}`` next to 1 when ``e^{−ε}`` is
below the float resolution of 1, i.e. ε ≳ 32: it missed the target for small α). ε_PML is
strictly decreasing in b, tends to 0 as b → ∞ and to ``log(1/α)`` as b → 0, so this b is the unique (and
the largest-noise-free, i.e. the smallest) scale meeting the target. For ``ε ≥ log(1/α)`` **no noise is
needed**: the exact histogram leaks at most ``log(1/p_c) ≤ log(1/α)`` about a record (the posterior of the
record's bin cannot exceed 1), and :func:`histogram_scale_for` returns ``0.0``. For ``α = 1`` (one bin)
every ε > 0 is met without noise. The DP calibration is ``b = 2/ε`` for every ε > 0, the α → 0 limit.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pml_design._validation import (
    check_delta,
    check_epsilon,
    check_positive_int,
    check_probability_vector,
    check_radius,
    check_real,
)

from ._checks import _check_codes

__all__ = [
    "HistogramGuarantee",
    "alpha_from_estimate",
    "histogram_dp_epsilon",
    "histogram_dp_scale_for",
    "histogram_guarantee_from_estimate",
    "histogram_guarantee_from_samples",
    "histogram_noiseless_epsilon",
    "histogram_pml_epsilon",
    "histogram_pml_epsilon_composition",
    "histogram_pml_epsilon_relaxed",
    "histogram_scale_for",
]


# ----------------------------------------------------------------------------------------------------------
# validation helpers
# ----------------------------------------------------------------------------------------------------------
def _check_alpha(alpha: Any, n_bins: int | None, name: str = "alpha") -> float:
    """α ∈ (0, 1/k] (or (0, 1/2] when k is not given: a histogram has k ≥ 2 bins and min_i p_i ≤ 1/k)."""
    a = check_real(alpha, name)
    if n_bins is not None:
        k = check_positive_int(n_bins, "n_bins", minimum=2)
        upper, text = 1.0 / k, f"(0, 1/k] = (0, {1.0 / k:.6g}] for k = n_bins = {k}"
    else:
        upper, text = 0.5, ("(0, 1/2] (the smallest of k >= 2 bin probabilities is at most 1/k <= 1/2; pass n_bins "
                            "to check alpha <= 1/k for your k)")
    if not (math.isfinite(a) and 0.0 < a <= upper * (1.0 + 1e-12)):
        raise ValueError(
            f"{name} must lie in {text} (a lower bound on every bin's probability), got {a!r}"
        )
    return min(a, upper)


def _check_scale(scale: Any, name: str = "scale") -> float:
    b = check_real(scale, name)
    if not (b > 0) or math.isnan(b):
        raise ValueError(
            f"{name} (the Laplace scale b) must be > 0, got {b!r}; a noiseless release (b = 0) leaks at "
            "most log(1/alpha), see histogram_noiseless_epsilon"
        )
    return b


def _eps_pml(b: float, alpha: float) -> float:
    """−log(α + (1 − α) e^{−2/b}), evaluated stably (also for α = 0: 2/b)."""
    if math.isinf(b):
        return 0.0
    x = 2.0 / b
    # α + (1 − α) e^{−x} = 1 + (1 − α)·expm1(−x): log1p form is accurate for small x (large b),
    # the direct form for large x (small b, where e^{−x} underflows harmlessly to 0).
    if x < 1.0:
        return float(-math.log1p((1.0 - alpha) * math.expm1(-x)))
    if alpha == 0.0:
        return x
    return float(-math.log(alpha + (1.0 - alpha) * math.exp(-x)))


# ----------------------------------------------------------------------------------------------------------
# privacy parameters of a given scale
# ----------------------------------------------------------------------------------------------------------
def histogram_pml_epsilon(scale: float, alpha: float, *, n_bins: int | None = None) -> float:
    """PML bound of the Laplace histogram for bin probabilities ≥ α (Theorem 4).

    ``ε_PML(b, α) = 2/b − log(1 − α + α e^{2/b})``, evaluated in the algebraically equal, overflow-free form
    ``−log(α + (1 − α) e^{−2/b})``. It bounds ``ℓ(D_i → y^k)`` for every record ``i``, every outcome
    ``y^k`` and every product distribution in which each record falls into each bin with probability at
    least α, and is attained when some record's bin probability equals α (checked numerically by
    :func:`pml_design.histogram.exact.histogram_max_leakage_exact`).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0`` (``math.inf`` allowed: ε = 0).
    alpha : float
        Lower bound α on every bin probability, in ``(0, 1/k]``.
    n_bins : int, optional
        Number of bins k ≥ 2; if given, α ≤ 1/k is enforced. Otherwise only α ≤ 1/2 (the bound for k = 2) can
        be checked: α ≤ 1/k is nevertheless required (every bin has probability ≥ α, and k of them sum to 1),
        and an α above 1/k describes no distribution at all, so the bound it gives is meaningless.

    Returns
    -------
    float
        ε_PML(b, α) ∈ [0, log(1/α)), strictly decreasing in both b and α, below ε_DP = 2/b.

    Raises
    ------
    ValueError
        If ``scale ≤ 0`` or α is outside ``(0, 1/k]``.

    Notes
    -----
    Implements: pml-histogram-laplace, Theorem 4, eq. (1) (also ε_PML of Section III-B).

    Examples
    --------
    >>> round(histogram_pml_epsilon(2.0, 0.1), 6)
    0.841435
    """
    b = _check_scale(scale)
    a = _check_alpha(alpha, n_bins)
    return _eps_pml(b, a)


def histogram_pml_epsilon_relaxed(scale: float, alpha: float, *, n_bins: int | None = None) -> float:
    """Relaxed PML bound ``2(1 − α)/b + 2α²/b²`` of the Laplace histogram.

    Obtained from eq. (1) with ``e^x ≥ 1 + x`` and ``log(1 + x) ≥ x − x²/2``; always ≥ eq. (1).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    alpha : float
        Lower bound α on every bin probability, in ``(0, 1/k]``.
    n_bins : int, optional
        Number of bins k ≥ 2 (enables the check α ≤ 1/k; without it only α ≤ 1/2 is checked, although
        α ≤ 1/k is required: k bins of probability ≥ α sum to 1).

    Returns
    -------
    float
        The relaxed bound (2).

    Notes
    -----
    Implements: pml-histogram-laplace, eq. (2).
    """
    b = _check_scale(scale)
    a = _check_alpha(alpha, n_bins)
    return 2.0 * (1.0 - a) / b + 2.0 * a * a / (b * b)


def histogram_pml_epsilon_composition(scale: float, alpha: float, n_bins: int) -> float:
    """Composition bound ``(k − 1)·((1 − α)/b + α²/(2b²))`` of Section IV.

    The bound obtained by treating the histogram as ``k − 1`` noisy counting queries (sensitivity 1) and
    applying the PML composition theorem to the relaxed counting-query bound. It is the paper's
    illustration of how loose composition is; it is *not* below eq. (2) for k ≤ 3 (see
    ``docs/histogram.md``).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    alpha : float
        Lower bound α on every bin probability, in ``(0, 1/k]``.
    n_bins : int
        Number of bins ``k ≥ 2``.

    Returns
    -------
    float
        The composition bound.

    Notes
    -----
    Implements: pml-histogram-laplace, Section IV (composition of [10, Prop. 4.6] via [6, Lemma 1]).
    """
    k = check_positive_int(n_bins, "n_bins", minimum=2)
    b = _check_scale(scale)
    a = _check_alpha(alpha, k)
    return (k - 1) * ((1.0 - a) / b + a * a / (2.0 * b * b))


def histogram_dp_epsilon(scale: float) -> float:
    """DP parameter ``2/b`` of the Laplace histogram (ℓ1-sensitivity 2 under substitution).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.

    Returns
    -------
    float
        ``2/b``; the α → 0 limit of :func:`histogram_pml_epsilon`.

    Notes
    -----
    Implements: pml-histogram-laplace, Definition 3 with Δ₁ = 2 (ε_DP(b) = 2/b, Section III-B).
    """
    b = _check_scale(scale)
    return 0.0 if math.isinf(b) else 2.0 / b


def histogram_noiseless_epsilon(alpha: float, *, n_bins: int | None = None) -> float:
    """``log(1/α)``: the supremum of ε_PML(b, α) over b > 0, and the leakage bound of the exact histogram.

    For ``ε ≥ log(1/α)`` no noise is needed (:func:`histogram_scale_for` returns 0): releasing the exact
    counts leaks ``log P(y | c)/P(y) ≤ log 1/p_c ≤ log(1/α)`` about a record in bin c.

    Parameters
    ----------
    alpha : float
        Lower bound α on every bin probability, in ``(0, 1/k]``.
    n_bins : int, optional
        Number of bins k ≥ 2 (enables the check α ≤ 1/k; without it only α ≤ 1/2 is checked, although
        α ≤ 1/k is required: k bins of probability ≥ α sum to 1).

    Returns
    -------
    float
        ``−log α``.

    Notes
    -----
    Implements: pml-histogram-laplace, limit b → 0 of eq. (1) (derived here; see module docstring).
    """
    a = _check_alpha(alpha, n_bins)
    return -math.log(a)


# ----------------------------------------------------------------------------------------------------------
# calibration
# ----------------------------------------------------------------------------------------------------------
def histogram_scale_for(epsilon: float, alpha: float, *, n_bins: int | None = None) -> float:
    """Smallest Laplace scale b whose PML bound (eq. (1)) equals the target ε, in closed form.

    ``2/b = ε + log(1 − α) − log(1 − α·e^{ε})`` for ``0 < ε < log(1/α)``; ``0.0`` (no noise needed) for
    ``ε ≥ log(1/α)``. Evaluated without cancellation (module docstring): the returned b meets the target to
    a few ulps at every ε and α, also for ε close to ``log(1/α)`` with α as small as 1e-300.

    Parameters
    ----------
    epsilon : float
        Target PML level ε > 0.
    alpha : float
        Lower bound α on every bin probability, in ``(0, 1/k]``.
    n_bins : int, optional
        Number of bins k ≥ 2 (enables the check α ≤ 1/k; without it only α ≤ 1/2 is checked, although
        α ≤ 1/k is required: k bins of probability ≥ α sum to 1, and an α above 1/k gives too small a b).

    Returns
    -------
    float
        The scale b (``histogram_pml_epsilon(b, α) == ε`` up to rounding), or ``0.0`` when the exact
        histogram already satisfies ε-PML. Always ≤ the DP scale ``2/ε``.

    Raises
    ------
    ValueError
        If ε ≤ 0 or is not finite, α is outside ``(0, 1/k]``, or ε is so small that b overflows a float
        (``b ≈ 2(1 − α)/ε > 1.8e308``).

    Notes
    -----
    Implements: pml-histogram-laplace, eq. (1) inverted in b (derivation in the module docstring and in
    ``docs/histogram.md``); the calibration of Section III-B (``ε_PML(b') = ε``).

    Examples
    --------
    >>> round(histogram_scale_for(1.0, 0.1), 6)
    1.650359
    >>> histogram_scale_for(3.0, 0.1)  # 3 > log(10): the exact histogram is 3-PML
    0.0
    """
    eps = check_epsilon(epsilon, "epsilon", positive=True)
    a = _check_alpha(alpha, n_bins)
    if eps > -math.log(a) + 1e-9:  # clearly no noise needed (and e^ε may overflow below)
        return 0.0
    # Decide ε < log(1/α) ⇔ α·e^ε < 1 exactly enough (60 digits; Decimal's exp is correctly rounded).
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        x = decimal.Decimal(a) * decimal.Decimal(eps).exp()
        if x >= 1:
            return 0.0
        one_minus_u = float((1 - x) / (1 - decimal.Decimal(a)))  # (1 − α e^ε)/(1 − α) ∈ (0, 1)
    u = a * math.expm1(eps) / (1.0 - a)
    # both terms positive: 2/b = ε − log(1 − u)
    two_over_b = eps - (math.log1p(-u) if u <= 0.5 else math.log(one_minus_u))
    b = 2.0 / two_over_b
    if not math.isfinite(b):
        raise ValueError(
            f"epsilon={eps!r} is too small: the Laplace scale 2(1 - alpha)/epsilon overflows a float; use a larger "
            "epsilon"
        )
    return b


def histogram_dp_scale_for(epsilon: float) -> float:
    """Laplace scale ``b = 2/ε`` of the ε-DP histogram (sensitivity 2).

    Parameters
    ----------
    epsilon : float
        Target DP level ε > 0.

    Returns
    -------
    float
        ``2/ε``.

    Raises
    ------
    ValueError
        If ε ≤ 0, is not finite, or is so small that ``2/ε`` overflows a float.

    Notes
    -----
    Implements: pml-histogram-laplace, Definition 3 with Δ₁ = 2 (Section III-B, ε_DP(b) = ε).
    """
    eps = check_epsilon(epsilon, "epsilon", positive=True)
    b = 2.0 / eps
    if not math.isfinite(b):
        raise ValueError(f"epsilon={eps!r} is too small: the Laplace scale 2/epsilon overflows a float; use a larger "
                         "epsilon")
    return b


# ----------------------------------------------------------------------------------------------------------
# data-driven α (extension: the core paper's ℓ1 ball applied to the histogram bound)
# ----------------------------------------------------------------------------------------------------------
def alpha_from_estimate(estimate: Any, radius: float) -> float:
    """Lower bound on every bin probability valid for all distributions in the ℓ1 ball ``B_β(P̂)``.

    If ``‖P − P̂‖₁ ≤ β`` then, since ``Σ_j (P_j − P̂_j) = 0``, the negative deviations sum to at most β/2,
    so ``P_j ≥ P̂_j − β/2`` for every j and ``min_j P_j ≥ min_j P̂_j − β/2``. The bound is attained in the
    ball (move β/2 of mass from the smallest bin to another bin), so it is the best ball-wide α.

    Parameters
    ----------
    estimate : array_like
        Estimated bin distribution P̂ (length k, sums to 1).
    radius : float
        ℓ1 radius β ≥ 0.

    Returns
    -------
    float
        ``max(min P̂ − β/2, 0)``. The value 0 means the ball contains distributions with an empty bin: only
        the context-free bound ε = 2/b holds (the α → 0 limit of eq. (1)). It is ≤ 1/k automatically.

    Notes
    -----
    Implements: extension of pml-histogram-laplace, Theorem 4 to the ℓ1 balls of
    pml-design-empirical-distributions, eq. (5) (same step as that paper's eq. (16) for k = 2).
    """
    p = check_probability_vector(estimate, "estimate")
    beta = check_radius(radius, "radius")
    return max(float(p.min()) - beta / 2.0, 0.0)


@dataclass(frozen=True)
class HistogramGuarantee:
    """An (ε, δ)-PML statement for the Laplace histogram with a data-driven α.

    With probability at least ``1 − delta`` over the samples that produced the estimate, the true bin
    distribution lies in the ℓ1 ball of radius ``radius`` around it, every bin has probability at least
    ``alpha``, and the Laplace histogram with scale ``scale`` is ``epsilon``-PML for every record.

    Attributes
    ----------
    epsilon : float
        PML level under the event (eq. (1) at ``alpha``; ``2/b`` if ``alpha == 0``; ``log(1/α)`` or less if
        ``scale == 0``).
    delta : float
        Failure probability of the ball.
    alpha : float
        ``min P̂ − β/2`` (clipped at 0).
    scale : float
        Laplace scale b (0 means the exact histogram).
    radius : float
        ℓ1 radius β.
    estimate_min : float
        ``min P̂``.
    n_bins : int
        k.
    dp_epsilon : float
        ``2/b`` (``inf`` for b = 0), the context-free value for the same scale.
    dp_scale : float or None
        ``2/ε``: the DP scale for the same ε (None if the request fixed the scale).
    """

    epsilon: float
    delta: float
    alpha: float
    scale: float
    radius: float
    estimate_min: float
    n_bins: int
    dp_epsilon: float
    dp_scale: float | None = None


def histogram_guarantee_from_estimate(
    estimate: Any,
    radius: float,
    delta: float,
    *,
    scale: float | None = None,
    epsilon: float | None = None,
) -> HistogramGuarantee:
    """(ε, δ)-PML of the Laplace histogram when the bin distribution is only known to lie in ``B_β(P̂)``.

    Give exactly one of ``scale`` (→ the ε it achieves) or ``epsilon`` (→ the scale calibrated for it).
    The caller states that ``P(‖P − P̂‖₁ > β) ≤ δ`` (e.g. β = β*(δ) of the core paper's eq. (7)); then
    every bin has probability ≥ α = min P̂ − β/2 with probability ≥ 1 − δ, and Theorem 4 applies.

    Parameters
    ----------
    estimate : array_like
        Estimated bin distribution P̂ (length k ≥ 2: a one-bin histogram releases only the record count).
    radius : float
        ℓ1 radius β ≥ 0 of the confidence ball.
    delta : float
        Its failure probability, in (0, 1) (δ = 1 would make the statement vacuous).
    scale : float, optional
        Laplace scale b > 0 to analyse.
    epsilon : float, optional
        Target ε > 0 to calibrate for.

    Returns
    -------
    HistogramGuarantee

    Raises
    ------
    ValueError
        If ``estimate`` is not a probability vector of length ≥ 2, β < 0, δ ∉ (0, 1), not exactly one of
        ``scale`` / ``epsilon`` is given, or either is out of range.

    Notes
    -----
    Implements: pml-histogram-laplace, Theorem 4, eq. (1), with α from :func:`alpha_from_estimate`
    (pml-design-empirical-distributions, Section III: (ε, δ)-PML from an ℓ1 ball). If P̂ is computed from
    the very records that are released, the data-dependent choice of α (and b) is itself a release that
    the statement does not account for: estimate α on a disjoint or public sample.
    """
    p = check_probability_vector(estimate, "estimate")
    if p.shape[0] < 2:
        raise ValueError(
            f"estimate must hold the probabilities of k >= 2 bins, got length {p.shape[0]} (a one-bin histogram "
            "releases only the record count; Theorem 4 needs k >= 2)"
        )
    beta = check_radius(radius, "radius")
    d = check_delta(delta, "delta")
    if (scale is None) == (epsilon is None):
        raise ValueError("give exactly one of scale (to analyse) or epsilon (to calibrate)")
    alpha = alpha_from_estimate(p, beta)
    k = int(p.shape[0])
    dp_scale = None
    if scale is not None:
        b = _check_scale(scale)
        eps = _eps_pml(b, alpha)
    else:
        eps = check_epsilon(epsilon, "epsilon", positive=True)
        dp_scale = histogram_dp_scale_for(eps)
        b = histogram_dp_scale_for(eps) if alpha <= 0.0 else histogram_scale_for(eps, alpha, n_bins=k)
    dp_eps = math.inf if b == 0.0 else (0.0 if math.isinf(b) else 2.0 / b)
    return HistogramGuarantee(
        epsilon=float(eps),
        delta=d,
        alpha=float(alpha),
        scale=float(b),
        radius=beta,
        estimate_min=float(p.min()),
        n_bins=k,
        dp_epsilon=dp_eps,
        dp_scale=dp_scale,
    )


def histogram_guarantee_from_samples(
    samples: Any,
    n_bins: int,
    delta: float,
    *,
    scale: float | None = None,
    epsilon: float | None = None,
) -> HistogramGuarantee:
    """(ε, δ)-PML of the Laplace histogram with α estimated from i.i.d. samples of the bin labels.

    P̂ is the empirical distribution of ``samples`` (codes in ``0..k−1``) and β = β*(δ) is the
    distribution-free radius of the core paper's eq. (7), ``sqrt(2/m · (log(2^k − 2) − log δ))``, so the
    true distribution is in ``B_β(P̂)`` with probability ≥ 1 − δ (Theorem 2 there).

    Parameters
    ----------
    samples : array_like of int
        Bin codes of m i.i.d. records, each in ``0..n_bins−1``. Use records disjoint from the released ones
        (or public data), see the Notes of :func:`histogram_guarantee_from_estimate`.
    n_bins : int
        Number of bins k ≥ 2.
    delta : float
        Failure probability in (0, 1).
    scale, epsilon : float, optional
        Exactly one: the scale to analyse or the ε to calibrate for.

    Returns
    -------
    HistogramGuarantee

    Notes
    -----
    Implements: pml-histogram-laplace, Theorem 4 with pml-design-empirical-distributions, Theorem 2 and
    eq. (7) (via :func:`pml_design.estimation.l1_radius`).
    """
    from pml_design.estimation import empirical_distribution, l1_radius

    k = check_positive_int(n_bins, "n_bins", minimum=2)
    d = check_delta(delta, "delta")
    codes = _check_codes(samples, k, "samples")
    estimate = empirical_distribution(codes, k, allow_zero=True)
    beta = l1_radius(int(codes.shape[0]), k, d)
    return histogram_guarantee_from_estimate(estimate, beta, d, scale=scale, epsilon=epsilon)
