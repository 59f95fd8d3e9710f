"""The result of a design: a certified mechanism with its utility and provenance."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

import numpy as np

from ..mechanisms.mechanism import Mechanism
from ..uncertainty import UncertaintySet

__all__ = ["DesignResult", "PMLDesignWarning", "SolverFailedError", "guarantee_text"]


def guarantee_text(certified_epsilon: float, epsilon: float, uncertainty: object) -> str:
    """The guarantee of a design over a set, in words (:meth:`DesignResult.guarantee`; re-derived on load)."""
    return f"{certified_epsilon:.6g}-PML (target {epsilon:.6g}) for every distribution in {uncertainty!r}"


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
        Seconds in the solver; ``info`` holds further diagnostics (e.g. number of rays; ``delta`` and ``m``
        for a design from samples).
    labels : tuple, optional
        Category labels of the rows (inputs), e.g. set by :func:`pml_design.design_from_samples`; None
        means integer codes ``0 … N−1``.
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
    labels: tuple | None = None

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
        return Mechanism(self.matrix, name=f"PML-{self.utility_name}", labels=self.labels)

    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Shortcut for ``self.mechanism.privatize``."""
        return self.mechanism.privatize(inputs, rng=rng)

    def estimate(self, reports: object, **kwargs: object) -> np.ndarray:
        """Shortcut for ``self.mechanism.estimate``."""
        return self.mechanism.estimate(reports, **kwargs)  # type: ignore[arg-type]

    def with_labels(self, labels: object) -> "DesignResult":
        """A copy whose rows (inputs) are named by ``labels`` (validated: distinct, one per row)."""
        from dataclasses import replace  # noqa: PLC0415

        from ..mechanisms.mechanism import check_labels  # noqa: PLC0415

        return replace(self, labels=check_labels(labels, self.matrix.shape[0], "labels"))

    def save(self, path: object, *, delta: float | None = None, m: int | None = None,
             extra: dict | None = None, overwrite: bool = False) -> "pathlib.Path":
        """Write the mechanism file, the unit of deployment (see :func:`pml_design.save_mechanism`).

        JSON with the matrix, the category labels, ε, the certified ε, δ, the radius, P̂, m, the utility,
        the library version and a SHA-256 content hash; read it back with :func:`pml_design.load_mechanism`.
        ``delta`` and ``m`` default to ``info["delta"]`` / ``info["m"]`` (set by ``design_from_samples``).
        An existing file at ``path`` is replaced only if it is a mechanism file, or with ``overwrite=True``.

        Returns
        -------
        pathlib.Path
            The file written.
        """
        from ..deploy import save_mechanism  # noqa: PLC0415

        return save_mechanism(self, path, delta=delta, m=m, extra=extra, overwrite=overwrite)

    def guarantee(self) -> str:
        """Human-readable statement of the certified guarantee."""
        return guarantee_text(self.certified_epsilon, self.epsilon, self.uncertainty)

    def disclosure(self) -> list[dict]:
        """What the design discloses, per output: see :func:`pml_design.design.disclosure.output_disclosure`.

        Outputs that only one input reaches (``singles_out``: whoever sees them knows the input) and, per output,
        the largest posterior ``P(x | y)`` over :attr:`uncertainty` (docs/design.md §10).
        """
        from .disclosure import output_disclosure  # noqa: PLC0415

        mech = self.mechanism
        return output_disclosure(self.matrix, self.uncertainty, mech.labels, mech.output_labels)

    def summary(self) -> str:
        """The design in a few lines: size, utility and bound, the certified guarantee, and what it discloses."""
        from .disclosure import disclosure_lines  # noqa: PLC0415

        n, m = self.matrix.shape
        bound = (f"lower bound {self.lower_bound:.6g}" if self.sense == "min" else f"upper bound {self.upper_bound:.6g}")
        lines = [f"{n}x{m} mechanism, {self.utility_name} = {self.utility:.6g} ({bound}, optimal={self.optimal}, "
                 f"method {self.method})", f"certified: {self.guarantee()}"]
        return "\n".join(lines + disclosure_lines(self.disclosure()))

    def __str__(self) -> str:
        return self.summary()

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return np.array(self.matrix, dtype=dtype)
