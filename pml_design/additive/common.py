"""Shared pieces of the binary additive-noise mechanisms (private).

Implements: pml-design-empirical-distributions (the "core paper"), Section VI, eq. (14).
Throughout Section VI the secret is binary, ``X ∈ {-1, +1}``; a prior is given by ``p_minus = P(X = -1)``.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_delta, check_positive_int, check_real

__all__ = ["binary_l1_radius", "check_ball_radius", "check_p_minus", "check_p_min", "check_binary_data"]


def binary_l1_radius(m: int, delta: float) -> float:
    """ℓ1 radius ``β*(δ) = sqrt(2 (log 2 − log δ) / m)`` for a binary estimate from ``m`` samples.

    Implements: core paper, eq. (14) (eq. (7) with N = 2, for which ``log(2^N − 2) = log 2``).
    ``delta = 0`` is allowed and gives ``inf`` (no finite ball holds with certainty).

    Parameters
    ----------
    m : int
        Number of samples m ≥ 1 behind the estimate.
    delta : float
        δ ∈ [0, 1).

    Returns
    -------
    float
        β*(δ) (not clipped to 2); ``inf`` for δ = 0.
    """
    m = check_positive_int(m, "m")
    d = check_delta(delta, allow_zero=True)
    if d == 0.0:
        return math.inf
    return math.sqrt(2.0 * (math.log(2.0) - math.log(d)) / m)


def check_ball_radius(value: object, name: str = "radius") -> float:
    """Validate an ℓ1 radius β ≥ 0; ``inf`` is allowed (e.g. β*(0)); values ≥ 2 are clipped to 2 (the whole simplex).

    Implements: the radius β of the ℓ1 ball around the binary estimate (core paper, Section VI, eq. (14)).

    Parameters
    ----------
    value : object
        The radius (a real number).
    name : str, default "radius"
        The argument's name, for the error message.

    Returns
    -------
    float
        ``min(β, 2.0)`` (``inf`` becomes 2).
    """
    r = check_real(value, name)
    if np.isnan(r) or r < 0:
        raise ValueError(f"{name} must be a number >= 0 (inf allowed), got {r!r}")
    return min(r, 2.0)


def check_p_minus(value: object, name: str = "p_minus") -> float:
    """Validate a binary prior given as ``P(X = -1) ∈ [0, 1]``.

    Implements: the binary prior of core paper, Section VI (``p_minus = P(X = -1)``).

    Parameters
    ----------
    value : object
        The probability (a real number).
    name : str, default "p_minus"
        The argument's name, for the error message.

    Returns
    -------
    float
        ``P(X = -1)`` as a float in [0, 1].
    """
    p = check_real(value, name)
    if not (np.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"{name} must be a probability P(X = -1) in [0, 1], got {p!r}")
    return p


def check_p_min(value: object, name: str = "p_min") -> float:
    """Validate the smaller mass ``min(P(X=-1), P(X=+1)) ∈ [0, 1/2]`` of a binary distribution.

    Implements: the smaller mass of the binary prior of core paper, Section VI.

    Parameters
    ----------
    value : object
        The probability (a real number).
    name : str, default "p_min"
        The argument's name, for the error message.

    Returns
    -------
    float
        The smaller mass as a float in [0, 1/2].
    """
    p = check_real(value, name)
    if not (np.isfinite(p) and 0.0 <= p <= 0.5):
        raise ValueError(
            f"{name} must be the smaller probability of a binary distribution, in [0, 0.5], got {p!r}"
        )
    return p


def check_binary_data(value: object, name: str = "x") -> np.ndarray:
    """Validate an array of binary symbols in {-1, +1}; returns it as a float array.

    Implements: the binary secret ``X ∈ {-1, +1}`` of core paper, Section VI.

    Parameters
    ----------
    value : array_like
        The symbols (any shape, non-empty).
    name : str, default "x"
        The argument's name, for the error messages.

    Returns
    -------
    numpy.ndarray
        ``np.asarray(value, dtype=float)``, every entry -1.0 or +1.0.
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of values in {{-1, +1}}, got {value!r}") from exc
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if not np.all((arr == 1.0) | (arr == -1.0)):
        bad = arr[(arr != 1.0) & (arr != -1.0)].ravel()[:5]
        raise ValueError(f"{name} must contain only -1 and +1 (Section VI, X ∈ {{-1, 1}}), found {bad.tolist()}")
    return arr
