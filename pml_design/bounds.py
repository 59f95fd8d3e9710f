"""Bounds on how PML changes with the data distribution, and (ε, δ)-PML from estimates.

Implements: core paper, Theorem 3 (Lipschitz), Theorem 4 / eq. (6) (leakage sensitivity over an ℓ1 ball,
both privacy-region cases), Remark 2 (capacity ≤ ε + sensitivity), Corollary 2, eq. (8) (ε'(δ)) and
Corollary 3 (δ_min(ε')).

Validity beyond ``β < 2 p_min``
-------------------------------
Theorem 4 assumes ``β < 2 p_min``. Its proof (Appendix B) only uses ``Σ_x ω(x) = 0`` and
``‖ω‖₁ ≤ β``, so both cases of (6) remain valid *upper bounds* for any β with a positive log argument;
only the equality statements need the assumption. :func:`sensitivity_bound` enforces the theorem's
hypothesis by default (``strict=True``) and offers the extension with ``strict=False``; eq. (8),
Corollary 2 and Corollary 3 use the ``k > 1`` case, which needs no ``p_min`` at all. Both facts are
checked against the exact sensitivity in ``tests/test_bounds.py``.
"""

from __future__ import annotations

import math

from ._validation import check_delta, check_epsilon, check_positive_int, check_probability_vector, check_radius
from .estimation import l1_radius, log_num_subsets
from .leakage import privacy_regions
from .uncertainty import leakage_capacity

__all__ = [
    "capacity_bound",
    "corollary2_bound",
    "delta_min",
    "epsilon_prime",
    "lipschitz_constant",
    "sensitivity_bound",
]


def lipschitz_constant(mechanism: object, uncertainty: object) -> float:
    """``exp(C(P_{Y|X}, 𝒫))``: ε_min is Lipschitz with this constant on 𝒫 w.r.t. the ℓ1 norm.

    ``|ε_min(P) − ε_min(Q)| ≤ exp(C(P_{Y|X}, 𝒫)) ‖P − Q‖₁`` for all ``P, Q ∈ 𝒫``.

    Implements: core paper, Theorem 3.

    Parameters
    ----------
    mechanism : Mechanism or array_like
        The row-stochastic channel P_{Y|X} (as :func:`~pml_design.uncertainty.leakage_capacity` accepts).
    uncertainty : UncertaintySet or array_like
        The set 𝒫 (as :func:`~pml_design.uncertainty.leakage_capacity` accepts).

    Returns
    -------
    float
        ``exp(C(P_{Y|X}, 𝒫))``.
    """
    return float(math.exp(leakage_capacity(mechanism, uncertainty)))


def _neg_log1m(x: float) -> float:
    """``−log(1 − x)`` for ``x < 1``; ``inf`` otherwise."""
    return math.inf if x >= 1.0 else -math.log1p(-x)


def sensitivity_bound(epsilon: float, prior: object, radius: float, *, strict: bool = True) -> float:
    """Upper bound (6) on the local leakage sensitivity over ``B_β(P_X)``.

    For a mechanism satisfying ε-PML w.r.t. ``P_X`` with ε in privacy region k:

    * ``k = 1``: ``−log(1 − (β/2)(e^ε − 1)/p_min)``;
    * ``k > 1``: ``−log(1 − β e^ε / 2)``.

    Implements: core paper, Theorem 4, eq. (6).

    Parameters
    ----------
    epsilon : float
        The ε-PML guarantee w.r.t. ``prior``, ``0 ≤ ε ≤ ε_max``.
    prior : array_like, shape (N,)
        The reference distribution (full support).
    radius : float
        β; the theorem requires ``β < 2 min P_X`` (enforced when ``strict``).
    strict : bool, default True
        If False, allow any ``β ≥ 0`` (the bound stays valid, see module docstring; returns ``inf`` when
        vacuous).

    Returns
    -------
    float
        The bound on ``S_{P_X}(P_{Y|X}, B_β(P_X))`` in nats.
    """
    p = check_probability_vector(prior, "prior", full_support=True)
    eps = check_epsilon(epsilon)
    beta = check_radius(radius)
    regions = privacy_regions(p)
    pmin = float(p.min())
    if eps > regions.epsilon_max * (1 + 1e-12):
        raise ValueError(
            f"epsilon must be <= epsilon_max = -log(min prior) = {regions.epsilon_max!r} (Theorem 4), got {eps!r}"
        )
    if strict and not beta < 2 * pmin:
        raise ValueError(
            f"radius must be < 2 * min(prior) = {2 * pmin!r} for Theorem 4, got {beta!r} "
            "(pass strict=False for the valid but possibly loose extension)"
        )
    if regions.region(eps) == 1:
        return _neg_log1m(beta / 2 * math.expm1(eps) / pmin)
    return _neg_log1m(beta * math.exp(eps) / 2)


def capacity_bound(epsilon: float, prior: object, radius: float, *, strict: bool = True) -> float:
    """``C(P_{Y|X}, B_β(P_X)) ≤ ε + S`` with S bounded by Theorem 4.

    Implements: core paper, Remark 2 combined with Theorem 4, eq. (6).

    Parameters
    ----------
    epsilon, prior, radius, strict
        As in :func:`sensitivity_bound`.

    Returns
    -------
    float
        ``ε +`` :func:`sensitivity_bound`, in nats (``inf`` when the bound is vacuous).
    """
    return check_epsilon(epsilon) + sensitivity_bound(epsilon, prior, radius, strict=strict)


def corollary2_bound(epsilon: float, distance: float) -> float:
    """``ε_min(P_{Y|X}, Q) ≤ ε + log(1 − e^ε ‖P − Q‖₁ / 2)^{−1}`` for an ε-PML mechanism w.r.t. P.

    Implements: core paper, Corollary 2 (requires ``‖P − Q‖₁ < 2 e^{−ε}``).

    Parameters
    ----------
    epsilon : float
        The ε-PML guarantee w.r.t. P, ε ≥ 0.
    distance : float
        ``‖P − Q‖₁ < 2 e^{−ε}`` (values above 2 are clipped to 2).

    Returns
    -------
    float
        The bound on ``ε_min(P_{Y|X}, Q)`` in nats.
    """
    eps = check_epsilon(epsilon)
    d = check_radius(distance, "distance")
    if not d < 2 * math.exp(-eps):
        raise ValueError(f"distance must be < 2 exp(-epsilon) = {2 * math.exp(-eps)!r} (Corollary 2), got {d!r}")
    return eps + _neg_log1m(math.exp(eps) * d / 2)


def epsilon_prime(epsilon: float, delta: float, m: int, support_size: int) -> float:
    """``ε'(δ) = ε + log(1 − β*(δ) e^ε / 2)^{−1}``: the PML that holds w.p. ≥ 1 − δ.

    A mechanism designed to be ε-PML w.r.t. an estimate ``P̂`` from m samples satisfies
    (ε'(δ), δ)-PML w.r.t. the true distribution.

    Implements: core paper, eq. (8) (with β*(δ) of eq. (7), corrected).

    Parameters
    ----------
    epsilon : float
        The design ε ≥ 0 w.r.t. ``P̂``.
    delta : float
        δ ∈ (0, 1).
    m : int
        Number of samples m ≥ 1 behind ``P̂``.
    support_size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    float
        ε'(δ) in nats.

    Raises
    ------
    ValueError
        If ``β*(δ) e^ε ≥ 2`` (the bound is vacuous; the message says how many samples would do).
    """
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    m = check_positive_int(m, "m")
    n = check_positive_int(support_size, "support_size", minimum=2)
    beta = l1_radius(m, n, d)
    x = beta * math.exp(eps) / 2
    if x >= 1:
        need = math.ceil(2 * (log_num_subsets(n) - math.log(d)) * math.exp(2 * eps) / 4) + 1
        raise ValueError(
            f"m={m} samples are too few for epsilon={eps!r}, delta={d!r}: beta*(delta) e^epsilon / 2 = {x:.4g} >= 1 "
            f"(eq. (8) is vacuous); need m > {need - 1}"
        )
    return eps + _neg_log1m(x)


def delta_min(epsilon: float, epsilon_prime: float, m: int, support_size: int) -> float:
    """``δ_min(ε') ≤ (2^N − 2) exp(−2m (e^{−ε} − e^{−ε'})²)``, clipped to 1.

    Implements: core paper, Corollary 3 (requires ``ε' ≥ ε``; at ``ε' = ε`` the bound is 1).

    Parameters
    ----------
    epsilon : float
        The design ε ≥ 0.
    epsilon_prime : float
        ε' ≥ ε (``inf`` allowed).
    m : int
        Number of samples m ≥ 1.
    support_size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    float
        The bound on δ_min(ε'), in [0, 1].
    """
    eps = check_epsilon(epsilon)
    epsp = check_epsilon(epsilon_prime, "epsilon_prime", allow_inf=True)
    m = check_positive_int(m, "m")
    n = check_positive_int(support_size, "support_size", minimum=2)
    if epsp < eps:
        raise ValueError(f"epsilon_prime must be >= epsilon = {eps!r} (Corollary 3), got {epsp!r}")
    gap = math.exp(-eps) - math.exp(-epsp)
    return float(min(1.0, math.exp(log_num_subsets(n) - 2.0 * m * gap * gap)))

