"""Utility functions for mechanism design.

Implements: core paper, eq. (2) (sub-convex utilities ``U = Σ_y μ(P_{Y|X}(y|·), P_X)`` with μ sublinear)
and eq. (9) (the design objective), plus linear utilities (expected gain) and user-supplied concave
cvxpy objectives.

Every sub-convex utility provides ``mu(columns, prior)``: μ evaluated on many columns at once
(``columns`` of shape (N, K) → (K,)); the exact and scalable designers only need that. Every utility
provides ``value(matrix, prior)`` computed with numpy (independent of any solver).

Kinds
-----
* :class:`LinearUtility` — ``Σ_{x,y} P(x) G[x,y] P(y|x)`` (a linear program over the polytope).
* :class:`ConcaveUtility` — any cvxpy-concave objective ``f(P_var, prior)`` (a convex program).
* :class:`SubConvexUtility` and its named instances — convex utilities, maximised exactly at extreme
  points (vertex/extreme-ray LP).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import check_finite_array, fmt

__all__ = [
    "ChiSquareInformation",
    "ConcaveUtility",
    "LinearUtility",
    "MapAccuracy",
    "MutualInformation",
    "SubConvexUtility",
    "TotalVariationInformation",
    "Utility",
    "as_utility",
    "hamming_gain",
    "distortion_gain",
]


class Utility:
    """Base class of all utilities (``kind`` is "linear", "concave" or "subconvex")."""

    kind: str = ""
    name: str = ""

    def value(self, matrix: np.ndarray, prior: np.ndarray) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class LinearUtility(Utility):
    """Expected gain ``Σ_{x,y} P̂(x) G[x, y] P(y|x)``.

    Parameters
    ----------
    gain : array_like, shape (N, M)
        ``G[x, y]``: the gain of reporting y when the secret is x. The output alphabet is then the M
        columns of ``gain``, in order (designed matrices keep all M columns).

    Examples
    --------
    ``LinearUtility(np.eye(N))`` is the probability of reporting the truth;
    ``LinearUtility(-abs(x - y))`` the negative expected distortion (see :func:`distortion_gain`).
    """

    gain: np.ndarray
    kind = "linear"
    name = "linear"

    def __init__(self, gain: object) -> None:
        object.__setattr__(self, "gain", check_finite_array(gain, "gain", ndim=2))

    def weights(self, prior: np.ndarray) -> np.ndarray:
        """Coefficient matrix ``P̂(x) G[x, y]`` of the linear objective."""
        if self.gain.shape[0] != prior.shape[0]:
            raise ValueError(f"gain has {self.gain.shape[0]} rows but the prior has {prior.shape[0]} symbols")
        return prior[:, None] * self.gain

    def value(self, matrix: np.ndarray, prior: np.ndarray) -> float:
        W = np.asarray(matrix, dtype=float)
        if W.shape != self.gain.shape:  # numpy would broadcast an (N, 1) matrix against the gain: a wrong value
            raise ValueError(f"matrix has shape {W.shape} but the gain has shape {self.gain.shape}")
        return float(np.sum(self.weights(prior) * W))


def hamming_gain(n: int) -> np.ndarray:
    """Gain matrix ``G = I``: the linear utility is the probability of reporting the truth.

    Implements: a linear utility of core paper eq. (9) (expected gain, :class:`LinearUtility`).

    Parameters
    ----------
    n : int
        Alphabet size N.

    Returns
    -------
    numpy.ndarray, shape (N, N)
        The identity.
    """
    return np.eye(n)


def distortion_gain(n: int, m: int | None = None) -> np.ndarray:
    """Gain matrix ``G[x, y] = −|x − y|``: the linear utility is the negative expected distortion.

    Implements: a linear utility of core paper eq. (9) (expected gain, :class:`LinearUtility`).

    Parameters
    ----------
    n : int
        Input alphabet size N (rows x = 0, …, N − 1).
    m : int, optional
        Output alphabet size M (columns y = 0, …, M − 1); None: M = N.

    Returns
    -------
    numpy.ndarray, shape (N, M)
        ``−|x − y|`` as floats.
    """
    m = n if m is None else m
    return -np.abs(np.arange(n)[:, None] - np.arange(m)[None, :]).astype(float)


@dataclass(frozen=True, eq=False)
class ConcaveUtility(Utility):
    """A user-supplied cvxpy-concave objective.

    Parameters
    ----------
    objective : callable
        ``objective(P, prior) -> cvxpy.Expression`` (concave, scalar), with ``P`` the (N, M) cvxpy variable
        of the mechanism.
    evaluate : callable, optional
        ``evaluate(matrix, prior) -> float`` in numpy, for the certified result; defaults to evaluating the
        cvxpy expression at the given matrix.
    n_outputs : int, optional
        Output alphabet size M (default N).
    """

    objective: Callable[..., object]
    evaluate: Callable[..., float] | None = None
    n_outputs: int | None = None
    kind = "concave"
    name = "concave"

    def value(self, matrix: np.ndarray, prior: np.ndarray) -> float:
        if self.evaluate is not None:
            return float(self.evaluate(matrix, prior))
        import cvxpy as cp

        P = cp.Parameter(matrix.shape, value=matrix)
        expr = self.objective(P, prior)
        return float(expr.value)


class SubConvexUtility(Utility):
    """``U(P_{Y|X}, P_X) = Σ_y μ(P_{Y|X}(y|·), P_X)`` with μ sublinear (core paper, eq. (2)).

    Subclasses implement :meth:`mu`; a user-supplied μ is wrapped by ``SubConvexUtility.from_function``.
    """

    kind = "subconvex"

    def mu(self, columns: np.ndarray, prior: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def value(self, matrix: np.ndarray, prior: np.ndarray) -> float:
        W = np.asarray(matrix, dtype=float)
        return float(np.sum(self.mu(W, prior)))

    @staticmethod
    def from_function(mu: Callable[[np.ndarray, np.ndarray], np.ndarray], name: str = "custom") -> "SubConvexUtility":
        """Wrap a vectorised sublinear ``mu(columns (N, K), prior (N,)) -> (K,)``.

        The function must be positively homogeneous and convex in each column (sublinear); the exact
        designer's optimality proof relies on it ([15, Theorem 6]).
        """
        if not callable(mu):
            raise TypeError(f"mu must be callable, got {fmt(mu)}")
        return _CustomSubConvex(mu, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _CustomSubConvex(SubConvexUtility):
    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], name: str) -> None:
        self._fn = fn
        self.name = name

    def mu(self, columns: np.ndarray, prior: np.ndarray) -> np.ndarray:
        out = np.asarray(self._fn(columns, prior), dtype=float).reshape(-1)
        if out.shape[0] != columns.shape[1] or not np.all(np.isfinite(out)):
            raise ValueError(f"custom mu must return {columns.shape[1]} finite values, got {fmt(out)}")
        return out


def _xlogy_ratio(prior: np.ndarray, columns: np.ndarray) -> np.ndarray:
    py = prior @ columns
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(columns > 0, columns / np.where(py > 0, py, 1.0), 1.0)
        terms = np.where(columns > 0, prior[:, None] * columns * np.log(ratio), 0.0)
    return terms.sum(axis=0)


class MutualInformation(SubConvexUtility):
    """Mutual information ``I(X; Y)`` in nats: ``μ(c) = Σ_x P(x) c_x log(c_x / P·c)``."""

    name = "mutual_information"

    def mu(self, columns: np.ndarray, prior: np.ndarray) -> np.ndarray:
        return _xlogy_ratio(prior, np.asarray(columns, dtype=float))


class MapAccuracy(SubConvexUtility):
    """MAP-guessing accuracy ``Σ_y max_x P(x) P(y|x)``: ``μ(c) = max_x P(x) c_x``."""

    name = "map_accuracy"

    def mu(self, columns: np.ndarray, prior: np.ndarray) -> np.ndarray:
        return (prior[:, None] * np.asarray(columns, dtype=float)).max(axis=0)


class ChiSquareInformation(SubConvexUtility):
    """χ²-information ``Σ_{x,y} P(x) P(y|x)² / P_Y(y) − 1``: ``μ(c) = Σ_x P(x) c_x² / P·c − P·c``."""

    name = "chi_square_information"

    def mu(self, columns: np.ndarray, prior: np.ndarray) -> np.ndarray:
        c = np.asarray(columns, dtype=float)
        py = prior @ c
        num = prior @ (c * c)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(py > 0, num / np.where(py > 0, py, 1.0) - py, 0.0)


class TotalVariationInformation(SubConvexUtility):
    """Total-variation information ``TV(P_XY, P_X P_Y)``: ``μ(c) = ½ Σ_x P(x) |c_x − P·c|``."""

    name = "total_variation_information"

    def mu(self, columns: np.ndarray, prior: np.ndarray) -> np.ndarray:
        c = np.asarray(columns, dtype=float)
        return 0.5 * (prior[:, None] * np.abs(c - (prior @ c)[None, :])).sum(axis=0)


class FrequencyEstimation(Utility):
    """Error of estimating the input distribution from the reports (lower is better).

    ``value(W, P)`` is the per-report asymptotic mean squared error of the maximum-likelihood estimate of
    ``P`` (criterion "A", the default): ``tr F(W)⁻¹ − ‖P‖²`` with the Fisher information
    ``F(W) = Σ_y w_y w_yᵀ/(P·w_y)``, so ``E‖P̂ − P‖² ≈ value/n`` from ``n`` reports; or, for criterion "D",
    ``log det F(W)⁻¹`` (the log generalized variance). ``+inf`` when the mechanism cannot identify every
    category (singular F).

    Implements: the A-/D-optimal experimental-design criterion for the local model (docs/design.md §7);
    designed by :func:`~pml_design.design.estimation.design_frequency_estimation`.

    Parameters
    ----------
    criterion : {"A", "D"}, default "A"

    Notes
    -----
    ``DesignResult.utility`` reports this error with ``DesignResult.sense == "min"``: smaller is better, and
    ``lower_bound ≤ optimum ≤ utility``.
    """

    kind = "estimation"
    name = "frequency_estimation"

    def __init__(self, criterion: str = "A") -> None:
        if criterion not in ("A", "D"):
            raise ValueError(f"criterion must be 'A' (mean squared error) or 'D' (log det), got {criterion!r}")
        self.criterion = criterion

    def check_prior(self, prior: np.ndarray) -> np.ndarray:
        """The error is evaluated at a distribution with every probability > 0 (else F⁻¹ is not defined)."""
        p = np.asarray(prior, dtype=float)
        if np.any(p <= 0):
            i = int(np.flatnonzero(p <= 0)[0])
            raise ValueError(
                f"utility 'frequency_estimation' needs a prior with every probability > 0, got prior[{i}] = {p[i]!r}; "
                "pass prior= a smoothed estimate, e.g. (counts + 0.5) / (m + N/2)"
            )
        return p

    def value(self, matrix: np.ndarray, prior: np.ndarray) -> float:
        from ..mechanisms.frequency_oracles import estimation_mse  # noqa: PLC0415

        if self.criterion == "A":
            return estimation_mse(matrix, prior)
        W = np.asarray(matrix, dtype=float)
        q = prior @ W
        used = q > 0
        F = (W[:, used] / q[used]) @ W[:, used].T
        sign, logdet = np.linalg.slogdet(0.5 * (F + F.T))
        return float(-logdet) if sign > 0 and np.isfinite(logdet) else float("inf")

    def __repr__(self) -> str:
        return f"FrequencyEstimation(criterion={self.criterion!r})"


_NAMED: dict[str, type[Utility]] = {
    "mutual_information": MutualInformation,
    "map_accuracy": MapAccuracy,
    "chi_square_information": ChiSquareInformation,
    "total_variation_information": TotalVariationInformation,
    "frequency_estimation": FrequencyEstimation,
}


def as_utility(utility: object) -> Utility:
    """Resolve a utility given by name, by object, or as a gain matrix (→ :class:`LinearUtility`).

    Implements: the objective of core paper eq. (9) (the utilities of eq. (2) and the linear ones).

    Parameters
    ----------
    utility : Utility, str, numpy.ndarray or nested list
        A :class:`Utility` (returned as is); a name (case-insensitive: "mutual_information", "map_accuracy",
        "chi_square_information", "total_variation_information", "frequency_estimation"); or a gain matrix (an
        array or a list of rows).

    Returns
    -------
    Utility
        The utility object (a fresh instance for a name, a :class:`LinearUtility` for a matrix).

    Raises
    ------
    ValueError
        Unknown name.
    TypeError
        Anything else.
    """
    if isinstance(utility, Utility):
        return utility
    if isinstance(utility, str):
        key = utility.lower()
        if key not in _NAMED:
            raise ValueError(f"utility must be one of {sorted(_NAMED)} or a Utility object, got {utility!r}")
        return _NAMED[key]()
    if isinstance(utility, np.ndarray):
        return LinearUtility(utility)
    if isinstance(utility, (list, tuple)) and utility and all(isinstance(r, (list, tuple, np.ndarray)) for r in utility):
        return LinearUtility(utility)  # a nested list is a matrix (a review: refused); checked there
    raise TypeError(f"utility must be a name, a Utility object or a gain matrix, got {fmt(utility)}")
