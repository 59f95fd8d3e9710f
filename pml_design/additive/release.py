"""Release a binary attribute with additive noise, decide it back, and measure the utility left.

Implements: pml-design-empirical-distributions (the "core paper"), Section VI: the Laplace and Gaussian samplers
``Y = X + noise`` of Sections VI-A and VI-B, the binary decision rule and the empirical mutual information of
Section VI-C. The PML analysis of the two mechanisms is in :mod:`pml_design.additive.laplace` and
:mod:`pml_design.additive.gaussian`.

The secret is ``X ∈ {-1, +1}`` throughout; priors are written ``p_minus = P(X = -1)``.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_generator, check_finite_array, check_positive_real
from .common import check_binary_data

__all__ = [
    "binary_decision",
    "empirical_mutual_information",
    "gaussian_mechanism",
    "gaussian_noise",
    "laplace_mechanism",
    "laplace_noise",
]

_FLOAT_NOTE = """
    Floating-point caveat (read before deploying)
    ---------------------------------------------
    Textbook continuous-noise sampling on doubles is not a faithful implementation of the continuous
    distribution. Mironov (2012, "On significance of the least significant bits for differential privacy",
    ACM CCS) showed that inverse-CDF Laplace sampling (``b · log(U)`` with a 53-bit uniform ``U``) produces a
    porous, input-dependent set of representable outputs, so ``x + noise`` can reveal ``x`` exactly from its
    low-order bits; Jin et al. (2022, "Are we there yet? Timing and floating-point attacks on differential
    privacy systems", IEEE S&P) exhibit the same for common Gaussian samplers. Known remedies are Mironov's
    snapping mechanism (clamp, then round to a power-of-two grid, with a slightly larger ε) and exact samplers
    of the discrete Laplace / discrete Gaussian on an integer grid (Canonne, Kamath & Steinke 2020).

    What this library does: it samples with numpy's :class:`~numpy.random.Generator` (``laplace`` is an
    inverse-transform sampler, ``normal`` a ziggurat sampler), which is what the paper's utility experiments
    need (unbiased, fast, reproducible under a seed) and is **not hardened**: treat the outputs as
    simulation, not as a deployable release. For a binary secret, releasing only the decision
    :func:`binary_decision` of the noisy value is randomized response, whose exact sampling needs a single
    Bernoulli draw and no floating-point noise; its PML is at most that of ``Y`` (post-processing).
"""


def _with_float_note(func):  # type: ignore[no-untyped-def]
    """Append the floating-point caveat to a sampler's docstring."""
    func.__doc__ = (func.__doc__ or "").rstrip() + "\n" + _FLOAT_NOTE
    return func


def _check_scale_array(value: object, name: str) -> np.ndarray | float:
    if np.ndim(value) == 0:
        return check_positive_real(value, name)
    arr = check_finite_array(value, name)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0 everywhere, got minimum {arr.min()!r}")
    return arr


@_with_float_note
def laplace_noise(scale: object, size: int | tuple[int, ...] | None = None, rng: object = None) -> np.ndarray:
    """Samples of zero-mean Laplace noise ``f_L(t) = exp(−|t|/b) / (2b)``.

    Implements: core paper, eq. (15) (the noise ``L``).

    Parameters
    ----------
    scale : float or array_like
        Scale ``b > 0``; an array broadcasts against ``size`` (e.g. one scale per repetition).
    size : int or tuple of int, optional
        Output shape (default: the shape of ``scale``).
    rng : numpy.random.Generator, int or None
        Source of randomness (seed or Generator; ``None`` draws fresh OS entropy).

    Returns
    -------
    numpy.ndarray
    """
    b = _check_scale_array(scale, "scale")
    return as_generator(rng).laplace(0.0, b, size)


@_with_float_note
def gaussian_noise(sigma: object, size: int | tuple[int, ...] | None = None, rng: object = None) -> np.ndarray:
    """Samples of zero-mean Gaussian noise ``N(0, σ²)``.

    Implements: core paper, Section VI-B (the noise ``G``).

    Parameters
    ----------
    sigma : float or array_like
        Standard deviation ``σ > 0``; an array broadcasts against ``size``.
    size : int or tuple of int, optional
        Output shape (default: the shape of ``sigma``).
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray
    """
    s = _check_scale_array(sigma, "sigma")
    return as_generator(rng).normal(0.0, s, size)


def _broadcast(x: np.ndarray, noise: object, name: str) -> tuple:
    """The shape of ``x`` and the noise parameter together (a ValueError naming ``name`` where they do not fit)."""
    try:
        return np.broadcast_shapes(x.shape, np.shape(noise))
    except ValueError:
        raise ValueError(f"{name} of shape {np.shape(noise)} does not broadcast against x of shape {x.shape} (give one "
                         f"value, or one per row as shape ({x.shape[0] if x.ndim else 1}, 1))") from None


@_with_float_note
def laplace_mechanism(x: object, scale: object, rng: object = None) -> np.ndarray:
    """Privatize binary data: ``Y = X + L`` with ``L ~ Laplace(0, b)`` i.i.d. per entry.

    Implements: core paper, eq. (15) (local model: independent noise per sample).

    Parameters
    ----------
    x : array_like of {-1, +1}
        Private data, any shape (e.g. ``(repetitions, m)``).
    scale : float or array_like
        ``b > 0``, broadcastable against ``x`` (e.g. shape ``(repetitions, 1)``).
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray of float
        ``x + L``, of the broadcast shape of ``x`` and ``scale``.
    """
    xx = check_binary_data(x)
    b = _check_scale_array(scale, "scale")
    shape = _broadcast(xx, b, "scale")
    return xx + as_generator(rng).laplace(0.0, 1.0, shape) * b


@_with_float_note
def gaussian_mechanism(x: object, sigma: object, rng: object = None) -> np.ndarray:
    """Privatize binary data: ``Y = X + G`` with ``G ~ N(0, σ²)`` i.i.d. per entry.

    Implements: core paper, Section VI-B (local model).

    Parameters
    ----------
    x : array_like of {-1, +1}
        Private data, any shape.
    sigma : float or array_like
        ``σ > 0``, broadcastable against ``x``.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    numpy.ndarray of float
        ``x + G``, of the broadcast shape of ``x`` and ``sigma``.
    """
    xx = check_binary_data(x)
    s = _check_scale_array(sigma, "sigma")
    shape = _broadcast(xx, s, "sigma")
    return xx + as_generator(rng).normal(0.0, 1.0, shape) * s


def binary_decision(y: object) -> np.ndarray:
    """Map noisy outcomes back to the binary alphabet: ``d'' = −1 if d' < 0, else +1``.

    Implements: core paper, Section VI-C1 (the decision rule before eq. for ``Î(X; Y)``).

    Parameters
    ----------
    y : array_like of float
        Privatized values ``d'`` (any shape; must be finite).

    Returns
    -------
    numpy.ndarray of int64
        Values in {-1, +1}, same shape.
    """
    yy = check_finite_array(y, "y")
    return np.where(yy < 0, -1, 1).astype(np.int64)


def empirical_mutual_information(x: object, y: object) -> np.ndarray | float:
    """Plug-in mutual information ``Î(X; Y)`` (nats) of paired binary sequences, along the last axis.

    ``Î(X; Y) = Σ_{i,k} f(x_i, y_k)/m · log(m f(x_i, y_k) / (f(x_i) f(y_k)))`` where ``f`` are counts over the
    ``m`` pairs and ``0 log 0 = 0``. This is the mutual information of the empirical joint distribution.

    Implements: core paper, Section VI-C1, the empirical mutual information, **corrected**: the printed
    formula has ``N f(x_i, y_k)`` inside the logarithm where the sample count ``m`` belongs (with ``N`` it
    equals the plug-in MI plus ``log(N/m)``, negative for independent data); see ``docs/errata-additive.md``.

    Parameters
    ----------
    x, y : array_like of {-1, +1}
        Same shape ``(..., m)``; leading axes are repetitions.

    Returns
    -------
    float or numpy.ndarray
        Shape ``x.shape[:-1]`` (a float for 1-D input).
    """
    xx = check_binary_data(x, "x")
    yy = check_binary_data(y, "y")
    if xx.shape != yy.shape:
        raise ValueError(f"x and y must have the same shape, got {xx.shape} and {yy.shape}")
    if xx.ndim == 0:
        raise ValueError("x must have at least one axis (the samples)")
    m = xx.shape[-1]
    xp, yp = xx > 0, yy > 0
    n11 = np.sum(xp & yp, axis=-1)
    n10 = np.sum(xp & ~yp, axis=-1)
    n01 = np.sum(~xp & yp, axis=-1)
    n00 = m - n11 - n10 - n01
    nx1, ny1 = n11 + n10, n11 + n01
    nx0, ny0 = m - nx1, m - ny1
    total = np.zeros(np.shape(n11), dtype=float)
    for nxy, nx, ny in ((n11, nx1, ny1), (n10, nx1, ny0), (n01, nx0, ny1), (n00, nx0, ny0)):
        nxy_f = np.asarray(nxy, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = nxy_f / m * np.log(m * nxy_f / (np.asarray(nx, float) * np.asarray(ny, float)))
        total = total + np.where(nxy_f > 0, term, 0.0)
    total = np.maximum(total, 0.0)  # rounding can give -1e-17 for independent data
    return float(total) if total.ndim == 0 else total
