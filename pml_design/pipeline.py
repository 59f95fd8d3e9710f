"""End to end: from samples to a designed mechanism with an (ε, δ)-PML guarantee, and back.

Implements: the procedure of the core paper's Figure 1 and Section IV-D: estimate ``P̂`` (eq. (3)), turn δ into
the radius ``β*(δ)`` (eq. (7), corrected), design a mechanism that is ε-PML for every distribution of
``B_β(P̂)`` (eq. (9), Proposition 2), so that it is (ε, δ)-PML for the true distribution. The other way round,
for a mechanism designed for ``P̂``, which (ε', δ) hold: eq. (8) and Corollary 3 (closed-form bounds) and the
exact values from the leakage capacity over the ball.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_delta, check_epsilon, check_mechanism, check_positive_int, check_probability_vector
from .bounds import delta_min, epsilon_prime
from .estimation import counts_distribution, empirical_distribution, l1_deviation_delta, l1_radius, samples_needed
from .uncertainty import L1Ball, leakage_capacity

__all__ = ["EstimatedDesign", "PmlStatement", "delta_for_epsilon", "design_from_samples", "guarantee_for_mechanism"]


@dataclass(frozen=True)
class EstimatedDesign:
    """Result of :func:`design_from_samples`.

    Attributes
    ----------
    p_hat : numpy.ndarray
        The estimate (eq. (3)).
    m : int
        Number of samples behind it.
    delta : float
        Failure probability of the estimate.
    radius : float
        ``β*(δ)`` (eq. (7)).
    result : DesignResult
        The certified design over ``L1Ball(p_hat, radius)``.
    """

    p_hat: np.ndarray
    m: int
    delta: float
    radius: float
    result: object

    @property
    def epsilon(self) -> float:
        return float(self.result.certified_epsilon)  # type: ignore[attr-defined]

    def statement(self) -> str:
        """The (ε, δ)-PML statement the mechanism carries."""
        return (
            f"({self.epsilon:.6g}, {self.delta:.3g})-PML: the mechanism is {self.epsilon:.6g}-PML for every distribution "
            f"within l1 distance {self.radius:.4g} of the estimate from m={self.m} samples, which contains the true "
            f"distribution with probability >= 1 - {self.delta:.3g} (Theorem 2)"
        )


def design_from_samples(
    data: object,
    support_size: int,
    epsilon: float,
    delta: float,
    *,
    counts: bool = False,
    utility: object = "mutual_information",
    method: str = "auto",
    solver: str | None = None,
    allow_zero: bool = False,
    solver_options: dict | None = None,
) -> EstimatedDesign:
    """Samples (or counts) + target (ε, δ) → P̂, β*(δ), the designed mechanism, and its (ε, δ)-PML statement.

    Implements: core paper, Figure 1 (eq. (3), eq. (7), eq. (9) over ``B_{β*(δ)}(P̂)``).

    Parameters
    ----------
    data : array_like of int
        Samples in ``{0, …, N−1}``, or counts per symbol if ``counts=True``.
    support_size : int
        Alphabet size N.
    epsilon : float
        Target ε, guaranteed for every distribution in the ball.
    delta : float
        Failure probability in (0, 1].
    counts : bool, default False
        Whether ``data`` holds counts.
    utility, method, solver
        As in :func:`pml_design.design`.
    allow_zero : bool, default False
        Allow symbols with zero count (see :func:`pml_design.empirical_distribution`).
    solver_options : dict, optional
        As in :func:`pml_design.design`, e.g. ``{"time_limit": 30, "progress": False}`` for the column-generation
        method (used for large alphabets and rare categories).

    Raises
    ------
    ValueError
        If the radius ``β*(δ)`` is ≥ 2 (the samples rule out nothing; the message says how many are needed).
    """
    from .design import design

    n = check_positive_int(support_size, "support_size", minimum=2)
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    if counts:
        c = np.asarray(data)
        p_hat = counts_distribution(c, allow_zero=allow_zero)
        m = int(round(float(np.sum(c))))
        if p_hat.shape[0] != n:
            raise ValueError(f"counts has length {p_hat.shape[0]} but support_size is {n}")
    else:
        p_hat = empirical_distribution(data, n, allow_zero=allow_zero)
        m = int(np.asarray(data).size)
    beta = l1_radius(m, n, d)
    if beta >= 2.0:
        need_any = samples_needed(1.999, n, d)
        need_interior = samples_needed(max(min(p_hat[p_hat > 0].min(), 1.0), 1e-6), n, d)
        raise ValueError(
            f"m={m} samples are too few for delta={d!r} on {n} symbols: the radius beta*(delta)={beta:.3g} >= 2 rules "
            f"out no distribution (the design would be LDP); need m >= {need_any} for any information and about "
            f"m >= {need_interior} for radius < 2 min(p_hat)"
        )
    res = design(L1Ball(p_hat, beta), eps, utility=utility, method=method, solver=solver, solver_options=solver_options)
    return EstimatedDesign(p_hat=p_hat, m=m, delta=d, radius=beta, result=res)


@dataclass(frozen=True)
class PmlStatement:
    """(ε', δ) guarantees of a mechanism designed for an estimate (see :func:`guarantee_for_mechanism`).

    Attributes
    ----------
    epsilon_design : float
        ε_min of the mechanism w.r.t. the estimate.
    delta : float
    radius : float
        ``β*(δ)``.
    epsilon_exact : float
        Exact leakage capacity over ``B_{β*(δ)}(P̂)``: the mechanism is (epsilon_exact, δ)-PML.
    epsilon_bound : float
        eq. (8)'s closed-form bound (``inf`` when vacuous); ≥ ``epsilon_exact``.
    """

    epsilon_design: float
    delta: float
    radius: float
    epsilon_exact: float
    epsilon_bound: float


def guarantee_for_mechanism(mechanism: object, p_hat: object, m: int, delta: float) -> PmlStatement:
    """Which (ε', δ)-PML holds for a mechanism designed on an estimate from m samples.

    Implements: core paper, eq. (8) (bound) and Definition 5 over ``B_{β*(δ)}(P̂)`` (exact).
    """
    p = check_probability_vector(p_hat, "p_hat")
    W = check_mechanism(mechanism, "mechanism", n_inputs=p.shape[0])
    m = check_positive_int(m, "m")
    d = check_delta(delta)
    n = p.shape[0]
    eps0 = leakage_capacity(W, p)
    beta = l1_radius(m, n, d)
    exact = leakage_capacity(W, L1Ball(p, min(beta, 2.0)))
    try:
        bound = epsilon_prime(eps0, d, m, n)
    except ValueError:
        bound = math.inf
    return PmlStatement(epsilon_design=eps0, delta=d, radius=beta, epsilon_exact=exact, epsilon_bound=bound)


def delta_for_epsilon(mechanism: object, p_hat: object, m: int, epsilon_target: float) -> tuple[float, float]:
    """Smallest δ (exact radius search, and Corollary 3's bound) such that the mechanism is (ε', δ)-PML.

    The exact value finds the largest β with ``C(P_{Y|X}, B_β(P̂)) ≤ ε'`` (capacity is non-decreasing in β;
    bisection) and returns Theorem 2's δ for it. Implements: core paper, Corollary 3 and Theorem 2.

    Returns
    -------
    (delta_exact, delta_corollary3)
    """
    p = check_probability_vector(p_hat, "p_hat")
    W = check_mechanism(mechanism, "mechanism", n_inputs=p.shape[0])
    m = check_positive_int(m, "m")
    target = check_epsilon(epsilon_target, "epsilon_target", allow_inf=True)
    n = p.shape[0]
    eps0 = leakage_capacity(W, p)
    if target < eps0:
        raise ValueError(f"epsilon_target must be >= the design leakage {eps0!r}, got {target!r}")
    lo, hi = 0.0, 2.0
    if leakage_capacity(W, L1Ball(p, 2.0)) <= target:
        lo = 2.0
    else:
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if leakage_capacity(W, L1Ball(p, mid)) <= target:
                lo = mid
            else:
                hi = mid
    exact = 0.0 if lo >= 2.0 else l1_deviation_delta(m, n, lo) if lo > 0 else 1.0
    return exact, delta_min(eps0, target, m, n)

