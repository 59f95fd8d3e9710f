"""Pointwise maximal leakage (PML) of a mechanism for a fixed distribution.

Implements: Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on Empirical
Distributions" (the *core paper*), Section II-A: Theorem 1 (PML as a Rényi-∞ divergence),
Definitions 2–3 (ε-PML and (ε, δ)-PML), ε_max, and Definition 4 (privacy regions, from [15]).

Vocabulary (libqif style): a *mechanism* (channel) is a row-stochastic matrix ``W`` with rows = secret
values ``x`` and columns = outputs ``y``; a *prior* is the distribution ``P_X`` of the secret.

Outputs that never occur
------------------------
PML is defined for outcomes with ``P_Y(y) > 0``. An all-zero column (an output the mechanism never
emits) has ``P_Y(y) = 0`` and carries no leakage: :func:`leakage` reports ``0.0`` for it and
:func:`output_support` tells which columns occur. Priors may contain zeros: the maximum in Theorem 1
then runs over ``supp(P_X)`` only (``D_∞(P_{X|Y=y} ‖ P_X)`` only involves ``x`` with ``P_X(x) > 0``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_epsilon, check_mechanism, check_probability_vector, check_real

__all__ = [
    "PrivacyRegions",
    "epsilon_max",
    "epsilon_min",
    "leakage",
    "leakage_tail",
    "output_distribution",
    "output_support",
    "privacy_region",
    "privacy_regions",
]


def _checked(mechanism: object, prior: object) -> tuple[np.ndarray, np.ndarray]:
    p = check_probability_vector(prior, "prior")
    W = check_mechanism(mechanism, "mechanism", n_inputs=p.shape[0])
    return W, p


def output_distribution(mechanism: object, prior: object) -> np.ndarray:
    """Output distribution ``P_Y = P_{Y|X} ∘ P_X``.

    Implements: core paper, Section II (notation ``P_Y(y) = Σ_x P_{Y|X=x}(y) P_X(x)``).

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
        Row-stochastic matrix, rows = inputs x, columns = outputs y.
    prior : array_like, shape (N,)
        Distribution of X.

    Returns
    -------
    numpy.ndarray, shape (M,)
    """
    W, p = _checked(mechanism, prior)
    return p @ W


def output_support(mechanism: object, prior: object) -> np.ndarray:
    """Boolean mask of the outputs with ``P_Y(y) > 0``.

    Implements: core paper, Definition 2 (the guarantee is over ``y ∈ supp(P_Y)``).

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
        Row-stochastic matrix, rows = inputs x, columns = outputs y.
    prior : array_like, shape (N,)
        Distribution of X (may contain zeros).

    Returns
    -------
    numpy.ndarray of bool, shape (M,)
        True for the columns with a nonzero entry in a row ``x`` with ``P_X(x) > 0``.
    """
    W, p = _checked(mechanism, prior)
    return (W[p > 0] > 0).any(axis=0)


def _leakage_unchecked(W: np.ndarray, p: np.ndarray) -> np.ndarray:
    support = p > 0
    Ws = W[support]
    top = Ws.max(axis=0)
    out = np.zeros(W.shape[1])
    occurs = top > 0
    # log(max_x P(y|x) / P_Y(y)) = −log(P̂·(c / max c)): each column scaled by its maximum first, so subnormal
    # entries (column [5e-324, 1e-323]) are not lost to the rounding of P_Y(y); > 0 on ``occurs``, finite, ≥ 0
    py_scaled = p[support] @ (Ws[:, occurs] / top[occurs])
    out[occurs] = -np.log(py_scaled)
    return np.maximum(out, 0.0)


def leakage(mechanism: object, prior: object) -> np.ndarray:
    """Pointwise maximal leakage ``ℓ(X → y)`` of every output ``y``.

    ``ℓ(X → y) = D_∞(P_{X|Y=y} ‖ P_X) = log max_{x ∈ supp P_X} P_{Y|X=x}(y) / P_Y(y)``.

    Implements: core paper, Theorem 1 ([11, Thm. 1]).

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
        Row-stochastic matrix (rows = x, columns = y).
    prior : array_like, shape (N,)
        Distribution ``P_X``.

    Returns
    -------
    numpy.ndarray, shape (M,)
        Leakage per column, in nats; ``0.0`` for outputs with ``P_Y(y) = 0`` (see module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0.325, 0.225, 0.225, 0.225], [0.45, 0.1, 0.225, 0.225],
    ...               [0.45, 0.225, 0.1, 0.225], [0.45, 0.225, 0.225, 0.1]])
    >>> np.allclose(leakage(W, [0.4, 0.2, 0.2, 0.2]), np.log(9 / 8))
    True
    """
    W, p = _checked(mechanism, prior)
    return _leakage_unchecked(W, p)


def epsilon_min(mechanism: object, prior: object) -> float:
    """Smallest ε such that the mechanism satisfies ε-PML with respect to ``prior``.

    ``ε_min(P_{Y|X}, P_X) = max_{y ∈ supp P_Y} ℓ(X → y)``.

    Implements: core paper, Section II-A1, definition of ε_min (Definition 2).

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
        Row-stochastic matrix (rows = x, columns = y).
    prior : array_like, shape (N,)
        Distribution ``P_X``.

    Returns
    -------
    float
        The largest entry of :func:`leakage`, in nats (outputs with ``P_Y(y) = 0`` count as 0).
    """
    return float(leakage(mechanism, prior).max())


def leakage_tail(mechanism: object, prior: object, epsilon: float, *, tol: float = 1e-12) -> float:
    """Probability that the output leaks more than ε: ``P_{Y∼P_Y}[ℓ(X → Y) > ε]``.

    The mechanism satisfies (ε, δ)-PML exactly for ``δ ≥ leakage_tail(...)``.

    Implements: core paper, Definition 3 (tail-bound guarantee).

    Parameters
    ----------
    mechanism, prior
        As in :func:`leakage`.
    epsilon : float
        Threshold ε ≥ 0.
    tol : float, default 1e-12
        Outputs with ``ℓ(X→y) ≤ ε + tol`` count as not exceeding ε (absorbs floating-point rounding,
        e.g. ``log(9/8)`` computed two ways).

    Returns
    -------
    float
        δ in [0, 1].
    """
    W, p = _checked(mechanism, prior)
    eps = check_epsilon(epsilon, allow_inf=True)
    tol = check_epsilon(tol, "tol")
    ell = _leakage_unchecked(W, p)
    py = p @ W
    return float(min(1.0, py[ell > eps + tol].sum()))


def epsilon_max(prior: object) -> float:
    """``ε_max = −log min_x P_X(x)``: every mechanism satisfies ε_max-PML.

    Implements: core paper, Section II-A1 (after Definition 3, from [11]).

    Parameters
    ----------
    prior : array_like, shape (N,)
        Full-support distribution ``P_X``.

    Returns
    -------
    float
        ``−log min_x P_X(x)``, in nats.
    """
    p = check_probability_vector(prior, "prior", full_support=True)
    return float(-np.log(p.min()))


@dataclass(frozen=True)
class PrivacyRegions:
    """Privacy regions of a prior (core paper, Definition 4, from [15]).

    Attributes
    ----------
    thresholds : numpy.ndarray, shape (N,)
        ``ε_0 = 0 ≤ ε_1 ≤ … ≤ ε_{N−1}`` with ``ε_k = −log Σ_{i=1}^{N−k} P_X(x_i)`` for the prior sorted
        in decreasing order.
    epsilon_max : float
        ``−log min_x P_X(x)``.

    Notes
    -----
    Region ``k ∈ {1, …, N−1}`` is ``[ε_{k−1}, ε_k)``; in it a mechanism column can have at most ``k − 1``
    zero entries ([15, Lemma 2]). Definition 4 leaves ``ε ≥ ε_{N−1} = −log max_x P_X(x)`` unnamed; we call
    it region ``N`` (columns may then have ``N − 1`` zeros, e.g. the identity is ε-PML once
    ``ε ≥ ε_max``). Ties in the prior give empty regions.
    """

    thresholds: np.ndarray
    epsilon_max: float

    def region(self, epsilon: float) -> int:
        """Index ``k`` (1-based) of the privacy region containing ``epsilon``."""
        eps = check_epsilon(epsilon, allow_inf=True)
        # number of thresholds ε_0..ε_{N-1} that are <= eps
        return int(np.searchsorted(self.thresholds, eps, side="right"))

    def interval(self, k: int) -> tuple[float, float]:
        """The interval ``[ε_{k−1}, ε_k)`` of region ``k`` (``ε_N := ∞``)."""
        n = self.thresholds.shape[0]
        if not (isinstance(k, (int, np.integer)) and 1 <= k <= n):
            raise ValueError(f"k must be an integer in [1, {n}], got {k!r}")
        hi = float(self.thresholds[k]) if k < n else float("inf")
        return float(self.thresholds[k - 1]), hi


def privacy_regions(prior: object) -> PrivacyRegions:
    """Thresholds ``ε_k`` of the PML privacy regions of ``prior``.

    Implements: core paper, Definition 4 (privacy regions of [15]).

    Parameters
    ----------
    prior : array_like, shape (N,)
        Full-support distribution.

    Returns
    -------
    PrivacyRegions
        With ``.thresholds`` (ε_0..ε_{N−1}), ``.epsilon_max`` and ``.region(ε)``.
    """
    p = check_probability_vector(prior, "prior", full_support=True)
    desc = np.sort(p)[::-1]
    n = desc.shape[0]
    # ε_k = −log Σ_{i ≤ N−k} p_(i) = −log(1 − Σ_{i > N−k} p_(i)); use the tail sum for accuracy
    tail = np.concatenate(([0.0], np.cumsum(desc[::-1])))[:n]  # tail[k] = sum of k smallest
    thresholds = -np.log1p(-np.minimum(tail, 1.0))
    thresholds[0] = 0.0
    return PrivacyRegions(thresholds=np.maximum.accumulate(thresholds), epsilon_max=float(-np.log(desc[-1])))


def privacy_region(prior: object, epsilon: float) -> int:
    """Index ``k`` of the privacy region of ``epsilon`` for ``prior`` (core paper, Definition 4).

    Implements: core paper, Definition 4 (privacy regions of [15]), via :func:`privacy_regions`.

    Parameters
    ----------
    prior : array_like, shape (N,)
        Full-support distribution.
    epsilon : float
        ε ≥ 0 (``inf`` allowed).

    Returns
    -------
    int
        ``k`` (1-based) with ``ε ∈ [ε_{k−1}, ε_k)``; ``N`` for ``ε ≥ ε_{N−1}`` (see :class:`PrivacyRegions`).
    """
    return privacy_regions(prior).region(check_real(epsilon, "epsilon"))
