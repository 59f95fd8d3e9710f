"""The result of a design: a certified mechanism with its utility and provenance."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..mechanisms.mechanism import Mechanism
from ..uncertainty import UncertaintySet

__all__ = ["DesignResult", "PMLDesignWarning", "SolverFailedError"]


class PMLDesignWarning(UserWarning):
    """A design returned with a relative gap above 1 % between its utility and its upper bound.

    The mechanism is certified (its privacy guarantee holds); only its optimality is not established. The
    message names the gap and how to reduce it (a longer ``solver_options["time_limit"]``).
    """


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
        An upper bound on the optimal utility (LP optimum / dual bound); ``nan``-free.
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

    @property
    def gap(self) -> float:
        """``upper_bound − utility`` (≥ 0 up to solver tolerance)."""
        return float(self.upper_bound - self.utility)

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
