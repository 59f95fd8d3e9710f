"""Closed-form mechanisms: the optimal binary mechanism under ℓ1 uncertainty, randomized response, and
the extremal mechanisms of [15] for a fixed prior.

Implements: core paper Theorem 5 (and its erratum, below), Remark 3 (Warner's randomized response),
Example 1 / [15, Theorem 2] (first-privacy-region extremal mechanism), the optimal binary mechanism of
[15] in every privacy region, [15, Theorem 4] / Example 2 (k-singular mechanisms, uniform prior), and
k-ary randomized response calibrated to a PML budget.

Erratum (Theorem 5 vs Appendix C)
---------------------------------
Theorem 5 prints ``p11 = e^ε (1 − p1 + β/2) / (1 + βe^ε)``; Appendix C derives ``e^ε (1 − p − β/2)/(1 + βe^ε)``.
The theorem's sign is right: with ``−β/2`` the first row does not sum to one, and the designer's exact
optimum equals the theorem's matrix (``tests/test_closed_form.py::test_theorem5_equals_designer``).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_dense_size, check_epsilon, check_positive_int, check_probability_vector, check_radius
from ..leakage import privacy_regions
from ..uncertainty import L1Ball, as_uncertainty_set
from .mechanism import Mechanism

__all__ = [
    "binary_optimal",
    "first_region_mechanism",
    "k_singular",
    "randomized_response",
    "randomized_response_for_pml",
    "theorem5_binary",
    "uniform_optimal",
    "uniform_optimal_mutual_information",
]


def theorem5_binary(p_hat: object, radius: float, epsilon: float) -> Mechanism:
    """Optimal binary mechanism for every sub-convex utility under ℓ1 uncertainty.

    With ``p1 = max P̂ ≥ p2`` (row x1 is the more likely symbol):

    ``P* = 1/(1 + βe^ε) [[e^ε(1 − p1 + β/2), 1 − e^ε(1 − p1 − β/2)], [1 − e^ε(p1 − β/2), e^ε(p1 + β/2)]]``.

    Implements: core paper, Theorem 5 (Appendix C has a sign typo, see module docstring).

    Parameters
    ----------
    p_hat : array_like, shape (2,)
        The estimate P̂ (full support). Rows of the result follow its order.
    radius : float
        β with ``β < 2 min P̂``.
    epsilon : float
        ``0 ≤ ε ≤ −log(p1 − β/2)`` (the first privacy region of every distribution of the ball).

    Returns
    -------
    Mechanism
        2 × 2, rows in the order of ``p_hat``.
    """
    p = check_probability_vector(p_hat, "p_hat", size=2, full_support=True)
    beta = check_radius(radius)
    eps = check_epsilon(epsilon)
    i1 = int(np.argmax(p))
    p1, p2 = p[i1], p[1 - i1]
    if not beta < 2 * p2:
        raise ValueError(f"radius must be < 2 min(p_hat) = {2 * p2!r} (Theorem 5), got {beta!r}")
    eps_hi = -math.log(p1 - beta / 2)
    if eps > eps_hi * (1 + 1e-12):
        raise ValueError(f"epsilon must be <= -log(p1 - radius/2) = {eps_hi!r} (Theorem 5), got {eps!r}")
    e = math.exp(eps)
    W = np.array(
        [
            [e * (1 - p1 + beta / 2), 1 - e * (1 - p1 - beta / 2)],
            [1 - e * (p1 - beta / 2), e * (p1 + beta / 2)],
        ]
    ) / (1 + beta * e)
    W = np.clip(W, 0.0, 1.0)
    if i1 == 1:
        W = W[::-1]
    return Mechanism(W, name="Theorem5")


def randomized_response(n: int, epsilon: float) -> Mechanism:
    """k-ary randomized response: ``P(y|x) = e^ε/(e^ε + n − 1)`` if ``y = x`` else ``1/(e^ε + n − 1)``.

    ε-LDP; for ``n = 2`` it is Warner's mechanism (core paper, Remark 3: Theorem 5 with ``p1 = 1/2``, β = 1).

    Implements: core paper, Remark 3; Kairouz et al. 2016 (k-RR).

    Parameters
    ----------
    n : int
        Number of symbols n ≥ 2 (inputs = outputs).
    epsilon : float
        ε ≥ 0; ``inf`` gives the identity.

    Returns
    -------
    Mechanism
        ``n × n``, named ``"RR{n}"``.
    """
    n = check_positive_int(n, "n", minimum=2)
    check_dense_size(n, n, "n")
    eps = check_epsilon(epsilon, allow_inf=True)
    if math.isinf(eps):
        return Mechanism(np.eye(n), name=f"RR{n}")
    t = math.exp(-eps)  # e^ε/(e^ε + n − 1) = 1/(1 + (n − 1)e^{−ε}): no overflow at large ε (a review: 1e4 raised)
    W = np.full((n, n), t / (1.0 + (n - 1) * t))
    np.fill_diagonal(W, 1.0 / (1.0 + (n - 1) * t))
    return Mechanism(W, name=f"RR{n}")


def randomized_response_for_pml(uncertainty: object, epsilon: float) -> Mechanism:
    """The least noisy k-ary randomized response that is ε-PML for every distribution of a set.

    For RR with parameter ``a = e^{ε_rr}``, output y leaks ``log(a / (1 + (a − 1) Q_y))``, maximised by the
    smallest ``q* = min_y min_{Q ∈ 𝒫} Q_y``; solving ``= ε`` gives ``a = e^ε (1 − q*) / (1 − e^ε q*)``
    (the identity if ``e^ε q* ≥ 1``).

    Implements: randomized response calibrated to a PML budget (core paper, Definition 5 applied to k-RR).

    Parameters
    ----------
    uncertainty : UncertaintySet or array_like
        The set 𝒫 of priors (anything :func:`~pml_design.uncertainty.as_uncertainty_set` accepts, e.g. a prior).
    epsilon : float
        The PML budget ε ≥ 0.

    Returns
    -------
    Mechanism
        ``N × N`` randomized response with ``ε_rr = log a`` (the identity if ``e^ε q* ≥ 1``), named ``"RR{N}-PML"``.
    """
    uset = as_uncertainty_set(uncertainty)
    eps = check_epsilon(epsilon)
    n = uset.size
    if isinstance(uset, L1Ball):  # min over the ball of Q_y moves β/2 away from y: O(N), not O(N² log N) on eye(N)
        qstar = max(float(uset.center.min()) - uset.radius / 2.0, 0.0)
    else:
        qstar = float(uset.min_output_probability(np.eye(n)).min())
    if qstar == 0.0:  # a = e^ε: plain randomized response at ε (no e^ε formed: ε up to 700 and beyond)
        return randomized_response(n, eps).with_name(f"RR{n}-PML")
    if eps + math.log(qstar) >= 0.0:  # e^ε q* ≥ 1
        return Mechanism(np.eye(n), name=f"RR{n}-PML")
    e = math.exp(eps)  # < 1/q*: finite
    a = e * (1 - qstar) / (1 - e * qstar)
    return randomized_response(n, math.log(a)).with_name(f"RR{n}-PML")


def first_region_mechanism(prior: object, epsilon: float) -> Mechanism:
    """Extremal mechanism of the first privacy region: ``Y = X`` alphabet,
    ``P(y|x) = e^ε P(y)`` for ``y ≠ x`` and ``1 − e^ε (1 − P(x))`` on the diagonal.

    Optimal for every sub-convex utility when ε is in the first privacy region ([15, Theorem 2]);
    Example 1 of the core paper is the case ``P = (2/5, 1/5, 1/5, 1/5)``, ``ε = log 9/8``.

    Implements: core paper, Section II-A2 and Example 1 ([15, Theorem 2]).

    Parameters
    ----------
    prior : array_like, shape (N,)
        The prior P (full support).
    epsilon : float
        ε ≥ 0, in the first privacy region of P.

    Returns
    -------
    Mechanism
        ``N × N``, named ``"first-region"``.

    Raises
    ------
    ValueError
        If ε is not in the first privacy region (``ε ≥ −log(1 − min P)``) — a diagonal entry would be < 0.
    """
    p = check_probability_vector(prior, "prior", full_support=True)
    eps = check_epsilon(epsilon)
    eps1 = privacy_regions(p).thresholds[1]
    if eps > eps1 * (1 + 1e-12):
        raise ValueError(f"epsilon must be in the first privacy region [0, {eps1!r}] for this prior, got {eps!r}")
    e = math.exp(eps)
    W = np.tile(e * p, (p.shape[0], 1))
    np.fill_diagonal(W, np.maximum(1 - e * (1 - p), 0.0))
    return Mechanism(W, name="first-region")


def binary_optimal(prior: object, epsilon: float) -> Mechanism:
    """Optimal binary mechanism for a fixed prior in every privacy region ([15]).

    With ``p1 ≥ p2`` (rows in the order of ``prior``): region 1 (``ε < −log p1``): the first-region mechanism;
    region 2 (``−log p1 ≤ ε < −log p2``): ``[[ (e^ε − 1)/(e^ε p1), 1 − (e^ε − 1)/(e^ε p1) ], [0, 1]]``
    (a zero in the first column); ``ε ≥ ε_max = −log p2``: the identity.

    Implements: [15]'s optimal binary mechanisms (core paper Section II-A2), region 2 derived in
    ``docs/design.md``; verified against the exact designer in the tests.

    Parameters
    ----------
    prior : array_like, shape (2,)
        The prior (full support).
    epsilon : float
        ε ≥ 0.

    Returns
    -------
    Mechanism
        2 × 2, rows and columns in the order of ``prior``, named ``"binary-optimal"``.
    """
    p = check_probability_vector(prior, "prior", size=2, full_support=True)
    eps = check_epsilon(epsilon)
    i1 = int(np.argmax(p))
    p1, p2 = p[i1], p[1 - i1]
    e = math.exp(min(eps, 1.0 - math.log(p2)))  # beyond −log p2 the answer is the identity (no overflow at large ε)
    if e * p1 < 1:
        W = first_region_mechanism([p1, p2], eps).matrix.copy()
    elif e * p2 < 1:
        a = (e - 1) / (e * p1)
        W = np.array([[a, 1 - a], [0.0, 1.0]])
    else:
        W = np.eye(2)
    if i1 == 1:
        W = W[::-1, ::-1]
    return Mechanism(W, name="binary-optimal")


def k_singular(n: int, k: int) -> Mechanism:
    """Circulant k-singular mechanism: ``P(y|x) = 1/k`` for ``y ∈ {x, …, x+k−1} (mod n)``, else 0.

    ε-PML for the uniform prior with ``ε = log(n/k)``, optimal there ([15, Theorem 4]; core paper, Example 2).

    Parameters
    ----------
    n : int
        Number of symbols n ≥ 2.
    k : int
        1 ≤ k ≤ n.

    Returns
    -------
    Mechanism
        ``n × n``, named ``"{k}-singular"``.
    """
    n = check_positive_int(n, "n", minimum=2)
    k = check_positive_int(k, "k")
    if k > n:
        raise ValueError(f"k must be <= n = {n}, got {k}")
    check_dense_size(n, n, "n")
    idx = (np.arange(n)[:, None] + np.arange(k)[None, :]) % n
    W = np.zeros((n, n))
    np.put_along_axis(W, idx, 1.0 / k, axis=1)
    return Mechanism(W, name=f"{k}-singular")


def uniform_optimal(n: int, epsilon: float) -> Mechanism:
    """Mutual-information-optimal ε-PML mechanism for the uniform prior, any ε ≥ 0.

    Circulant with rows ``(e^ε, …, e^ε, f, 0, …, 0)/n`` (``k = ⌊n e^{−ε}⌋`` entries ``e^ε``, ``f = n − k e^ε``):
    every column is the most concentrated extreme ray of the column cone. For ``ε = log(n/k)`` it is the
    k-singular mechanism of [15, Theorem 4].

    Implements: [15, Theorem 4] (core paper, Example 2), extended to every ε via [15, Theorem 6].

    Parameters
    ----------
    n : int
        Number of symbols n ≥ 2.
    epsilon : float
        ε ≥ 0.

    Returns
    -------
    Mechanism
        ``n × n`` circulant, named ``"uniform-optimal"``.
    """
    n = check_positive_int(n, "n", minimum=2)
    check_dense_size(n, n, "n")
    eps = check_epsilon(epsilon)
    e = math.exp(min(eps, math.log(n) + 1.0))  # e^ε ≥ n gives the identity (k = 0): no overflow at large ε
    k = min(n, math.floor(n / e + 1e-12))
    f = max(n - k * e, 0.0)
    r = np.zeros(n)
    r[:k] = e
    if k < n:
        r[k] = f
    r /= r.sum()
    idx = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n
    return Mechanism(r[idx], name="uniform-optimal")


def uniform_optimal_mutual_information(n: int, epsilon: float) -> float:
    """``I* = [k e^ε ε + (n − k e^ε) log(n − k e^ε)] / n`` with ``k = ⌊n e^{−ε}⌋`` (nats).

    The optimal mutual information of ε-PML mechanisms for the uniform prior on n symbols.

    Implements: [15, Theorems 4 and 6] for the uniform prior (value of :func:`uniform_optimal`).

    Parameters
    ----------
    n : int
        Number of symbols n ≥ 2.
    epsilon : float
        ε ≥ 0.

    Returns
    -------
    float
        I* in nats.
    """
    n = check_positive_int(n, "n", minimum=2)
    eps = check_epsilon(epsilon)
    e = math.exp(min(eps, math.log(n) + 1.0))  # e^ε ≥ n: k = 0 and I* = log n (no overflow at large ε)
    k = min(n, math.floor(n / e + 1e-12))
    f = max(n - k * e, 0.0)
    return (k * e * eps + (f * math.log(f) if f > 0 else 0.0)) / n
