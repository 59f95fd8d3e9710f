"""Shifted-truncated Laplace noise π_q (the noise of Algorithm 1).

π_q is the Laplace law with centre -q/2 and scale 1/ε, truncated symmetrically to [-q, 0]:

    π_q(z) = Lap(z | -q/2, 1/ε) / (1 - e^{-ε q/2})   for z in [-q, 0],  0 otherwise.

Implements: Bansal, Chunduru, Data, Prabhakaran, "Flexible Accuracy for Differential Privacy"
(AISTATS 2022), Section 5.1 (density σ(t)) and Algorithm 1, line 2 (π_q).  The closed-form CDF and
the exact inverse-CDF sampler are derived here (the paper gives only the density) and are checked
against numerical integration and a KS test in ``tests/test_flexible_noise.py``.

Degenerate width: for q = 0 (an empty input under q = τ|x|) the noise is the point mass at 0.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from pml_design._validation import as_generator, check_epsilon, check_positive_real, check_real
from pml_design.flexible._checks import check_real_array

__all__ = ["stlap_noise_pdf", "stlap_noise_cdf", "sample_stlap_noise", "log_expm1"]


def log_expm1(a: np.ndarray | float) -> np.ndarray:
    """Numerically stable ``log(exp(a) - 1)`` for ``a > 0`` (no overflow for large ``a``).

    Implements: the log-space evaluation of δ* and of the STLap noise law (Bansal et al. (AISTATS 2022), Section
    5.1 / Algorithm 1).

    Parameters
    ----------
    a : numpy.ndarray or float
        Values a > 0 (array_like).

    Returns
    -------
    numpy.ndarray
        ``log(exp(a) - 1)`` elementwise (a + log1p(-exp(-a)) for a > 30), a 0-d array for a scalar.
    """
    a = np.asarray(a, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        big = a > 30.0
        out = np.where(big, a + np.log1p(-np.exp(-np.where(big, a, 30.0))), np.log(np.expm1(np.where(big, 1.0, a))))
    return out


def _check(q: Any, epsilon: Any) -> tuple[float, float]:
    q = check_positive_real(q, "q", allow_zero=True)
    eps = check_epsilon(epsilon, positive=True)
    return q, eps


def stlap_noise_pdf(z: Any, q: float, epsilon: float) -> np.ndarray:
    """Density of the shifted-truncated Laplace noise π_q at ``z``.

    Parameters
    ----------
    z : array_like
        Points at which to evaluate the density.
    q : float
        Truncation width (q > 0; the support is [-q, 0]).
    epsilon : float
        Inverse scale ε > 0 of the Laplace law.

    Returns
    -------
    numpy.ndarray
        π_q(z), zero outside [-q, 0].

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.1, density σ(t) / Algorithm 1, π_q.
    """
    q, eps = _check(q, epsilon)
    if q == 0:
        raise ValueError("q must be > 0 for a density (q = 0 is the point mass at 0)")
    z = np.asarray(z, dtype=float)
    # (ε/2) e^{-ε|z+q/2|} / (1 - e^{-εq/2})
    log_norm = np.log(eps / 2.0) - np.log(-np.expm1(-eps * q / 2.0))
    dens = np.exp(log_norm - eps * np.abs(z + q / 2.0))
    return np.where((z >= -q) & (z <= 0), dens, 0.0)


def stlap_noise_cdf(z: Any, q: float, epsilon: float) -> np.ndarray:
    """Cumulative distribution function F_q(z) = Pr[Z <= z] of π_q.

    For -q <= z <= -q/2: F_q(z) = (e^{ε(z+q)} - 1) / (2 (e^{εq/2} - 1)); for -q/2 <= z <= 0 the
    symmetry F_q(z) = 1 - F_q(-q - z) applies.  Evaluated in log space, so it does not overflow
    for large ε q.

    Parameters
    ----------
    z : array_like
        Points.
    q : float
        Truncation width q >= 0 (q = 0: point mass at 0).
    epsilon : float
        ε > 0.

    Returns
    -------
    numpy.ndarray
        F_q(z).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.1 (the CDF of σ(t); integral derived here).
    ``F_q(-q + 1)`` equals the paper's δ*(ε, q) = (e^ε - 1)/(2(e^{εq/2} - 1)) for q >= 2.
    """
    q, eps = _check(q, epsilon)
    z = np.asarray(z, dtype=float)
    if q == 0:
        return np.where(z >= 0, 1.0, 0.0)
    log_den = np.log(2.0) + log_expm1(eps * q / 2.0)

    def lower(u: np.ndarray) -> np.ndarray:  # F for u in [-q, -q/2]
        a = eps * (np.clip(u, -q, -q / 2.0) + q)
        with np.errstate(divide="ignore"):
            return np.where(a > 0, np.exp(log_expm1(np.maximum(a, 1e-300)) - log_den), 0.0)

    left = z <= -q / 2.0
    res = np.where(left, lower(z), 1.0 - lower(-q - z))
    res = np.where(z < -q, 0.0, res)
    res = np.where(z >= 0, 1.0, res)
    return np.clip(res, 0.0, 1.0)


def _check_size(size: Any) -> tuple[int, ...]:
    """``size`` as a shape: a non-negative int or a tuple of them (TypeError / ValueError naming ``size``)."""
    dims = (size,) if not isinstance(size, (tuple, list)) else tuple(size)
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (numbers.Integral, np.integer)):
            raise TypeError(f"size must be a non-negative int or a tuple of them, got {size!r}")
        if d < 0:
            raise ValueError(f"size must be a non-negative int or a tuple of them, got {size!r}")
    return tuple(int(d) for d in dims)


def sample_stlap_noise(q: Any, epsilon: float, size: int | tuple[int, ...] | None = None, *, rng: Any = None) -> np.ndarray:
    """Draw exact samples of the shifted-truncated Laplace noise π_q.

    Sampler: W = -log(1 - U1 (1 - e^{-εq/2})) / ε is Exp(ε) truncated to [0, q/2]; a fair sign S
    gives Z = -q/2 + S W.  ``q`` may be an array broadcastable to ``size`` (one width per bar).

    Parameters
    ----------
    q : float or array_like
        Truncation width(s) q >= 0.
    epsilon : float
        ε > 0.
    size : int or tuple, optional
        Output shape, non-negative (default: the shape of ``q``); ``q`` must broadcast to it.
    rng : numpy.random.Generator, int or None
        Randomness source.

    Returns
    -------
    numpy.ndarray
        Samples in [-q, 0].

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Algorithm 1, line 2 (z_g ~ π_q); exact inverse-CDF
    sampler derived here.
    """
    eps = check_epsilon(epsilon, positive=True)
    if np.ndim(q) == 0 and not isinstance(q, (str, bytes)):
        q_arr = np.asarray(check_real(q, "q"))
    else:  # widths per bar may derive from the data (q = τ|x|): the messages never quote them
        q_arr = check_real_array(q, "q")
    if not np.all(np.isfinite(q_arr)) or np.any(q_arr < 0):
        raise ValueError("q must be finite and >= 0")
    gen = as_generator(rng)
    shape = q_arr.shape if size is None else _check_size(size)
    try:
        fits = np.broadcast_shapes(q_arr.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"q of shape {q_arr.shape} does not broadcast to size {tuple(shape)}")
    u1 = gen.random(shape)
    sign = np.where(gen.random(shape) < 0.5, 1.0, -1.0)
    w = -np.log1p(-u1 * (-np.expm1(-eps * q_arr / 2.0))) / eps
    return np.clip(-q_arr / 2.0 + sign * w, -q_arr, 0.0)
