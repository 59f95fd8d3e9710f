"""Certification and repair of designed mechanisms.

A solver returns approximate numbers (interior-point answers violate constraints by ~1e-9). Every
designed matrix goes through :func:`certify`:

1. clean: negative entries are set to 0 and rows renormalised (so entries are ≥ 0 exactly and rows sum
   to 1 up to rounding);
2. measure: the worst-case leakage over the set is computed with the exact
   :func:`~pml_design.uncertainty.leakage_capacity` (an independent code path from the solver);
3. repair: if it exceeds ε, the matrix is mixed with the non-informative mechanism ``1 uᵀ`` (u uniform over
   the outputs) by the smallest weight λ that restores the bound. Per column, with ``A = max_x c_x`` and
   ``B = min_Q Q·c``, mixing gives ``((1−λ)A + λu)/((1−λ)B + λu)``, decreasing in λ, so the smallest λ has
   the closed form ``λ = (A − e^ε B) / (A − e^ε B + u (e^ε − 1))`` (maximised over columns).

The promise checked is ``leakage_capacity(matrix, set) ≤ ε + CERT_TOL`` with ``CERT_TOL = 1e-12`` nats
(floating-point evaluation of a logarithm; the repair aims at ``ε − CERT_TOL``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..uncertainty import UncertaintySet, leakage_capacity

if TYPE_CHECKING:  # pragma: no cover
    from .result import DesignResult

__all__ = ["CERT_TOL", "Certificate", "CertificationError", "certified_result", "certify", "clean_matrix"]

#: Absolute tolerance (nats) of the certified bound ``capacity ≤ ε + CERT_TOL``.
CERT_TOL: float = 1e-12
#: Entries below this become exact zeros in :func:`clean_matrix` (absolute solver noise).
CLEAN_ZERO_TOL: float = 1e-13


class CertificationError(RuntimeError):
    """Raised when a matrix cannot be certified (should not happen: the repair always succeeds)."""


@dataclass(frozen=True)
class Certificate:
    """Outcome of :func:`certify`.

    Attributes
    ----------
    matrix : numpy.ndarray
        Cleaned (and possibly repaired) row-stochastic matrix.
    capacity : float
        Exact worst-case leakage over the set (``leakage_capacity``), ≤ ε + CERT_TOL.
    capacity_before_repair : float
        The capacity of the cleaned solver output.
    repair_weight : float
        λ ∈ [0, 1] mixed with the non-informative mechanism (0 if none was needed).
    """

    matrix: np.ndarray
    capacity: float
    capacity_before_repair: float
    repair_weight: float


def clean_matrix(matrix: np.ndarray, *, drop_empty_columns: bool = True, zero_tol: float = CLEAN_ZERO_TOL) -> np.ndarray:
    """Clip solver noise: entries below ``zero_tol`` become 0, rows are renormalised, empty columns dropped.

    Implements: step 1 (clean) of the certification in the module docstring (``docs/design.md`` §6).

    Parameters
    ----------
    matrix : numpy.ndarray, shape (N, M)
        The solver's matrix (not modified).
    drop_empty_columns : bool, default True
        Whether to remove the columns that are zero after cleaning.
    zero_tol : float, default :data:`CLEAN_ZERO_TOL`
        Entries below it (and non-finite ones) become 0.

    Returns
    -------
    numpy.ndarray, shape (N, M')
        The cleaned row-stochastic copy (M' ≤ M when empty columns are dropped).

    Raises
    ------
    CertificationError
        A row is zero after cleaning.
    """
    W = np.array(matrix, dtype=float, copy=True)
    W[~np.isfinite(W)] = 0.0
    W[W < zero_tol] = 0.0
    rows = W.sum(axis=1, keepdims=True)
    if np.any(rows <= 0):
        raise CertificationError("solver returned a matrix with an all-zero row")
    W /= rows
    if drop_empty_columns:
        W = W[:, W.max(axis=0) > 0]
    return W


def _mixing_weight(W: np.ndarray, uset: UncertaintySet, epsilon: float) -> float:
    m = W.shape[1]
    u = 1.0 / m
    A = W.max(axis=0)
    B = uset.min_output_probability(W)
    e = np.exp(epsilon)
    excess = A - e * B
    if not np.any(excess > 0):
        return 0.0
    if e == 1.0:
        return 1.0
    pos = excess[excess > 0]
    lam = pos / (pos + u * (e - 1.0))
    return float(np.clip(lam.max(), 0.0, 1.0))


def certify(matrix: np.ndarray, uset: UncertaintySet, epsilon: float, *, drop_empty_columns: bool = True) -> Certificate:
    """Clean a solver's matrix, measure its exact leakage capacity, and repair it if needed.

    Implements: the certification step required of every design (core paper, Definition 5 evaluated
    exactly; the repair mixes with a non-informative mechanism, which is ε-PML for every ε ≥ 0).

    Parameters
    ----------
    matrix : numpy.ndarray, shape (N, M)
    uset : UncertaintySet
    epsilon : float
    drop_empty_columns : bool, default True

    Returns
    -------
    Certificate
    """
    W = clean_matrix(matrix, drop_empty_columns=drop_empty_columns)
    cap0 = leakage_capacity(W, uset)
    if cap0 <= epsilon + CERT_TOL:
        return Certificate(W, cap0, cap0, 0.0)
    target = max(epsilon - CERT_TOL, 0.0)
    lam = _mixing_weight(W, uset, target)
    m = W.shape[1]
    for _ in range(60):
        Wr = (1.0 - lam) * W + lam / m
        cap = leakage_capacity(Wr, uset)
        if cap <= epsilon + CERT_TOL:
            return Certificate(Wr, cap, cap0, lam)
        lam = min(1.0, lam * (1 + 1e-9) + 1e-15)
    Wr = np.full_like(W, 1.0 / m)
    cap = leakage_capacity(Wr, uset)
    if cap > epsilon + CERT_TOL:  # pragma: no cover - constant rows leak 0
        raise CertificationError(f"could not certify: capacity {cap!r} > epsilon {epsilon!r}")
    return Certificate(Wr, cap, cap0, 1.0)


def certified_result(
    raw: np.ndarray,
    uset: UncertaintySet,
    epsilon: float,
    util: object,
    prior: np.ndarray,
    *,
    upper: float,
    solved_optimally: bool,
    status: str,
    method: str,
    solver: str,
    solve_time: float,
    info: dict | None = None,
    drop_empty_columns: bool = True,
    gap_rtol: float | None = None,
    cert: Certificate | None = None,
) -> DesignResult:
    """Certify a solver's matrix and wrap it in a :class:`~pml_design.design.result.DesignResult`.

    The utility is re-evaluated with numpy on the certified matrix; optimality is claimed only if the solver
    proved it (``solved_optimally``) and the certified utility is within ``gap_rtol`` (relative; default
    :data:`~pml_design.design.result.OPTIMAL_RTOL`) of ``upper`` (:func:`~pml_design.design.result.proven_optimal`,
    the rule of every method).
    ``cert``: a :func:`certify` result for ``raw`` computed by the caller (not recomputed).

    Implements: the certification of every design (``docs/design.md`` §6) and the optimality rule of §12.

    Parameters
    ----------
    raw : numpy.ndarray, shape (N, M)
        The solver's matrix.
    uset : UncertaintySet
        The uncertainty set 𝒫.
    epsilon : float
        The target ε.
    util : Utility
        The utility (its ``value`` and ``name`` are used).
    prior : numpy.ndarray, shape (N,)
        The distribution the utility is evaluated under.
    upper : float
        The proven bound on the optimum (``nan``: none, treated as ``inf``).
    solved_optimally : bool
        Whether the solver proved optimality.
    status, method, solver : str
        Recorded in the result.
    solve_time : float
        Seconds, recorded in the result.
    info : dict, optional
        Extra information; ``capacity_before_repair`` is added to a copy.
    drop_empty_columns : bool, default True
        Passed to :func:`certify`.
    gap_rtol : float, optional
        Relative tolerance of the optimality claim; None: :data:`~pml_design.design.result.OPTIMAL_RTOL`.
    cert : Certificate, optional
        A :func:`certify` result for ``raw`` (None: computed here).

    Returns
    -------
    DesignResult
        The certified matrix, its utility, ``certified_epsilon`` (exact capacity), ``upper_bound = max(upper,
        utility)``, ``optimal`` and ``repair_weight``.
    """
    from .result import OPTIMAL_RTOL, DesignResult, proven_optimal, utility_scale

    if cert is None:
        cert = certify(raw, uset, epsilon, drop_empty_columns=drop_empty_columns)
    value = util.value(cert.matrix, prior)  # type: ignore[attr-defined]
    upper = float(upper) if upper == upper else float("inf")  # nan: no bound
    scale = utility_scale(util, prior)  # the absolute floor of proven_optimal, in the utility's own units
    return DesignResult(
        matrix=cert.matrix,
        utility=value,
        certified_epsilon=cert.capacity,
        epsilon=epsilon,
        uncertainty=uset,
        prior=prior,
        upper_bound=max(upper, value),
        optimal=bool(solved_optimally and proven_optimal(value, upper, gap_rtol or OPTIMAL_RTOL, scale)),
        status=status,
        method=method,
        solver=solver,
        utility_name=util.name,  # type: ignore[attr-defined]
        repair_weight=cert.repair_weight,
        solve_time=solve_time,
        info=dict(info or {}) | {"capacity_before_repair": cert.capacity_before_repair},
    )
