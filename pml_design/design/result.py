"""The result of a design: a certified mechanism with its utility and provenance."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..mechanisms.mechanism import Mechanism
from ..uncertainty import UncertaintySet

__all__ = ["DesignResult", "SolverFailedError"]


class SolverFailedError(RuntimeError):
    """The solver did not return an optimal (or optimal-inaccurate) solution; carries its status."""

    def __init__(self, message: str, status: str) -> None:
        super().__init__(f"{message} (solver status: {status})")
        self.status = status


@dataclass(frozen=True)
class DesignResult:
    """A designed mechanism whose guarantee was checked, not assumed.

    Attributes
    ----------
    matrix : numpy.ndarray, shape (N, M)
        Row-stochastic (rows = x, columns = y), entries ≥ 0 exactly; empty columns dropped except for a
        :class:`~pml_design.design.utilities.LinearUtility` (which keeps its M columns in order).
    utility : float
        The utility of ``matrix`` evaluated with numpy (not read from the solver).
    certified_epsilon : float
        ``leakage_capacity(matrix, uncertainty)``, computed exactly; ≤ ``epsilon`` + 1e-12.
    epsilon : float
        The target.
    uncertainty : UncertaintySet
        The set the guarantee holds for ("ε-PML for every distribution in it").
    prior : numpy.ndarray
        The distribution the utility was evaluated under (e.g. the estimate P̂).
    upper_bound : float
        An upper bound on the optimal utility (LP optimum / dual bound); ``nan``-free. For ``sense="min"``
        utilities (frequency estimation: an error) the design's own value, which the optimum cannot exceed.
    lower_bound : float
        For ``sense="min"``: a proven lower bound on the optimal error (``-inf`` when none is available).
    sense : {"max", "min"}
        Whether larger (utilities such as mutual information) or smaller (estimation error) is better.
    optimal : bool
        Whether optimality is proven (``utility`` within 1e-7 relative of ``upper_bound``; 1e-6 for the
        column-generation method).
    status : str
        The solver's status string.
    method, solver, utility_name : str
    repair_weight : float
        Weight of the non-informative mechanism mixed in to restore the bound (0 if none).
    solve_time : float
        Seconds in the solver; ``info`` holds further diagnostics (e.g. number of rays).
    """

    matrix: np.ndarray
    utility: float
    certified_epsilon: float
    epsilon: float
    uncertainty: UncertaintySet
    prior: np.ndarray
    upper_bound: float
    optimal: bool
    status: str
    method: str
    solver: str
    utility_name: str
    repair_weight: float = 0.0
    solve_time: float = 0.0
    info: dict = field(default_factory=dict)
    lower_bound: float = float("-inf")
    sense: str = "max"

    @property
    def gap(self) -> float:
        """Distance to the proven bound: ``upper_bound − utility`` (``utility − lower_bound`` when ``sense="min"``)."""
        if self.sense == "min":
            return float(self.utility - self.lower_bound)
        return float(self.upper_bound - self.utility)

    @property
    def relative_gap(self) -> float:
        """``gap / max(1, |utility|)`` (``inf`` without a finite bound)."""
        return float(self.gap / max(1.0, abs(self.utility))) if np.isfinite(self.utility) else float("inf")

    @property
    def mechanism(self) -> Mechanism:
        """The designed matrix as a usable :class:`~pml_design.mechanisms.Mechanism`."""
        return Mechanism(self.matrix, name=f"PML-{self.utility_name}")

    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Shortcut for ``self.mechanism.privatize``."""
        return self.mechanism.privatize(inputs, rng=rng)

    def estimate(self, reports: object, **kwargs: object) -> np.ndarray:
        """Shortcut for ``self.mechanism.estimate``."""
        return self.mechanism.estimate(reports, **kwargs)  # type: ignore[arg-type]

    def guarantee(self) -> str:
        """Human-readable statement of the certified guarantee."""
        return (
            f"{self.certified_epsilon:.6g}-PML (target {self.epsilon:.6g}) for every distribution in "
            f"{self.uncertainty!r}"
        )

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return np.array(self.matrix, dtype=dtype)
