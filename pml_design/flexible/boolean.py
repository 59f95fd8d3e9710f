"""The Boolean "is the set empty?" mechanism (Section 5.1, eq. (9)) and its Pareto frontier.

A set of size k in {0, ..., q} is reported "non-empty" with probability p_k, p_0 = 0, p_q = 1, and
(ε, δ)-DP requires, for 0 <= k < q, the four constraints

    p_k <= e^ε p_{k+1} + δ,  1 - p_k <= e^ε (1 - p_{k+1}) + δ,
    p_{k+1} <= e^ε p_k + δ,  1 - p_{k+1} <= e^ε (1 - p_k) + δ.

Implements: Bansal et al. (AISTATS 2022), Section 5.1, eq. (9) and the Pareto relation
δ (e^{(q/2)ε} - 1)/(e^ε - 1) = 1/2.  The relation is exactly optimal for even q only; for odd q
:func:`boolean_min_delta_lp` and :func:`boolean_min_delta_odd` give the true optimum (erratum E8).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from pml_design._validation import check_delta, check_epsilon, check_positive_int

__all__ = [
    "boolean_probabilities",
    "boolean_is_dp",
    "boolean_pareto_delta",
    "boolean_min_delta_lp",
    "boolean_min_delta_odd",
]


def boolean_pareto_delta(epsilon: float, q: int) -> float:
    """The paper's Pareto frontier δ = (e^ε - 1) / (2 (e^{εq/2} - 1)).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    q : int
        Size q ≥ 1 from which "non-empty" is reported with probability 1.

    Returns
    -------
    float
        δ = (e^ε - 1) / (2 (e^{εq/2} - 1)).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.1 (Pareto relation).  Exact optimum for even q.
    """
    eps = check_epsilon(epsilon, positive=True)
    q = check_positive_int(q, "q")
    return float(np.expm1(eps) / (2.0 * np.expm1(eps * q / 2.0)))


def boolean_probabilities(epsilon: float, q: int, delta: float | None = None) -> np.ndarray:
    """p_0, ..., p_q of eq. (9): p_k = δ (e^{kε} - 1)/(e^ε - 1) for k <= q/2, p_k = 1 - p_{q-k} otherwise.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    q : int
        Size from which "non-empty" must be reported with probability 1.
    delta : float, optional
        δ; defaults to the Pareto value :func:`boolean_pareto_delta`.

    Returns
    -------
    numpy.ndarray
        Shape (q+1,).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), eq. (9).
    """
    eps = check_epsilon(epsilon, positive=True)
    q = check_positive_int(q, "q")
    d = boolean_pareto_delta(eps, q) if delta is None else check_delta(delta)
    k = np.arange(q + 1)
    low = d * np.expm1(k * eps) / np.expm1(eps)
    p = np.where(k <= q / 2.0, low, 1.0 - low[::-1])
    return p


def boolean_is_dp(p: np.ndarray, epsilon: float, delta: float, *, atol: float = 1e-12) -> bool:
    """Check the four (ε, δ)-DP constraints of Section 5.1 for a vector p_0..p_q.

    Parameters
    ----------
    p : numpy.ndarray
        p_0, ..., p_q (array_like of floats).
    epsilon : float
        ε ≥ 0.
    delta : float
        δ ∈ [0, 1).
    atol : float, default 1e-12
        Slack allowed in every constraint.

    Returns
    -------
    bool
        Whether every constraint holds, 0 <= p_k <= 1, p_0 = 0 and p_q = 1 (all within ``atol``).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.1 (the constraint system).
    """
    eps = check_epsilon(epsilon)
    d = check_delta(delta, allow_zero=True)
    p = np.asarray(p, dtype=float)
    a, b = p[:-1], p[1:]
    e = np.exp(eps)
    ok = (
        np.all(a <= e * b + d + atol)
        and np.all(1 - a <= e * (1 - b) + d + atol)
        and np.all(b <= e * a + d + atol)
        and np.all(1 - b <= e * (1 - a) + d + atol)
        and np.all((p >= -atol) & (p <= 1 + atol))
    )
    return bool(ok and abs(p[0]) <= atol and abs(p[-1] - 1) <= atol)


def boolean_min_delta_lp(epsilon: float, q: int) -> float:
    """Smallest δ for which some p_0..p_q (p_0 = 0, p_q = 1) satisfies the DP constraints (an LP).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    q : int
        Size q ≥ 1.

    Returns
    -------
    float
        The optimal δ of the LP (solved by HiGHS to 1e-10).

    Notes
    -----
    Implements: an independent certificate (linear program, HiGHS) of the Pareto frontier of
    Bansal et al. (AISTATS 2022), Section 5.1.
    """
    eps = check_epsilon(epsilon, positive=True)
    q = check_positive_int(q, "q")
    e = np.exp(eps)
    nv = q + 2  # p_0..p_q, δ
    rows, rhs = [], []
    for k in range(q):
        for sa, sb, c in ((1, -e, 0.0), (-1, e, e - 1), (-e, 1, 0.0), (e, -1, e - 1)):
            # sa p_k + sb p_{k+1} - δ <= c  (the four constraints rearranged)
            r = np.zeros(nv)
            r[k], r[k + 1], r[-1] = sa, sb, -1.0
            rows.append(r)
            rhs.append(c)
    A_eq = np.zeros((2, nv))
    A_eq[0, 0] = 1.0
    A_eq[1, q] = 1.0
    cost = np.zeros(nv)
    cost[-1] = 1.0
    res = linprog(cost, A_ub=np.array(rows), b_ub=np.array(rhs), A_eq=A_eq, b_eq=[0.0, 1.0],
                  bounds=[(0, 1)] * (q + 1) + [(0, 1)], method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:  # pragma: no cover - the LP is always feasible (δ = 1)
        raise RuntimeError(f"LP failed: {res.message}")
    return float(res.x[-1])


def boolean_min_delta_odd(epsilon: float, q: int) -> float:
    """Closed form of the optimal δ for odd q: 1 / (1 + (1 + e^ε)(e^{mε} - 1)/(e^ε - 1)), m = (q-1)/2.

    Derivation: the optimum is symmetric (p_{q-k} = 1 - p_k) with p_{k+1} = e^ε p_k + δ for k < m,
    and the middle step p_{m+1} = 1 - p_m = e^ε p_m + δ; solving gives the formula.

    Parameters
    ----------
    epsilon : float
        ε > 0.
    q : int
        Odd size q ≥ 1.

    Returns
    -------
    float
        The optimal δ.

    Notes
    -----
    Implements: the corrected Pareto frontier for odd q (erratum E8 to Bansal et al., Section 5.1);
    cross-checked against :func:`boolean_min_delta_lp`.
    """
    eps = check_epsilon(epsilon, positive=True)
    q = check_positive_int(q, "q")
    if q % 2 == 0:
        raise ValueError(f"q must be odd, got {q}")
    m = (q - 1) // 2
    return float(1.0 / (1.0 + (1.0 + np.exp(eps)) * np.expm1(m * eps) / np.expm1(eps)))
