"""The result of a design: a certified mechanism with its utility and provenance."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

import numpy as np

from ..mechanisms.mechanism import Mechanism
from ..uncertainty import UncertaintySet

__all__ = [
    "GAP_ABS_FLOOR", "OPTIMAL_RTOL", "DesignResult", "PMLDesignWarning", "SolverFailedError", "proven_optimal",
    "utility_scale",
    "guarantee_text", "relative_gap",
]

#: Relative gap at or below which optimality is proven (every method; the audit checks claims at this level).
OPTIMAL_RTOL: float = 1e-6
#: Absolute gap treated as floating-point noise in :func:`proven_optimal` (utilities are nats or probabilities of
#: order 1: the rounding of their evaluation and of a bound is ~1e-15 – 1e-13, far below it only at utilities of 0).
GAP_ABS_FLOOR: float = 1e-13
_TINY = 1e-300


def _abs_gap(value: float, bound: float) -> float:
    if not (np.isfinite(value) and np.isfinite(bound)):
        return float("inf")
    return float(abs(bound - value))


def relative_gap(value: float, bound: float) -> float:
    """``|bound − value| / max(|value|, 1e-300)``: the relative gap of a design (``inf`` when ``bound`` is not finite).

    One formula for both senses (the bound is above the value for a maximisation, below it for a minimisation).

    Implements: the gap of ``docs/design.md`` §12 (the result contract).

    Parameters
    ----------
    value : float
        The design's (certified) utility or error.
    bound : float
        The proven bound on the optimum (``±inf`` or ``nan`` when none is proven).

    Returns
    -------
    float
        The relative gap ≥ 0; ``inf`` when ``value`` or ``bound`` is not finite.
    """
    g = _abs_gap(value, bound)
    return float(g / max(abs(float(value)), _TINY)) if np.isfinite(g) else float("inf")


def utility_scale(util: object, prior: np.ndarray) -> float:
    """The scale of :func:`proven_optimal`'s absolute floor for a utility: 1 for nats and probabilities; for a
    linear utility (one with a ``gain`` and ``weights(prior)``) ``Σ_x max_y |P(x) G[x, y]|``, the largest absolute
    utility of any mechanism.

    Implements: the optimality rule of ``docs/design.md`` §12 (the floor in the utility's own units).

    Parameters
    ----------
    util : Utility
        The utility.
    prior : numpy.ndarray
        The prior it is evaluated at.

    Returns
    -------
    float
        The scale (≥ 0).
    """
    if getattr(util, "gain", None) is not None and callable(getattr(util, "weights", None)):
        return float(np.abs(np.asarray(util.weights(prior), dtype=float)).max(axis=1).sum())  # type: ignore[attr-defined]
    return 1.0


def proven_optimal(value: float, bound: float, rtol: float = OPTIMAL_RTOL, scale: float = 1.0) -> bool:
    """The one rule for ``optimal``: ``|bound − value| ≤ rtol·|value| + GAP_ABS_FLOOR·scale`` with a finite bound.

    Implements: the optimality rule of ``docs/design.md`` §12 (the result contract).

    Parameters
    ----------
    value : float
        The design's (certified) utility or error.
    bound : float
        The proven bound on the optimum.
    rtol : float, default :data:`OPTIMAL_RTOL`
        Relative tolerance.
    scale : float, default 1
        The utility's natural scale, for the absolute floor (1 for nats and probabilities; for a linear utility
        ``Σ_x max_y |P(x) G[x, y]|``, the largest utility of any mechanism: a gain scaled by 1e-13 was "optimal" at
        a 95 % relative gap under the unscaled floor, a review found).

    Returns
    -------
    bool
        True when both are finite and the rule holds.
    """
    g = _abs_gap(value, bound)
    return bool(np.isfinite(g) and g <= rtol * abs(float(value)) + GAP_ABS_FLOOR * float(scale))


def guarantee_text(certified_epsilon: float, epsilon: float, uncertainty: object) -> str:
    """The guarantee of a design over a set, in words (:meth:`DesignResult.guarantee`; re-derived on load).

    Implements: the guarantee of core paper, Definition 5 (capacity over 𝒫 at most ε: ε-PML for every Q ∈ 𝒫).

    Parameters
    ----------
    certified_epsilon : float
        The exactly certified leakage level of the mechanism.
    epsilon : float
        The target ε of the design.
    uncertainty : object
        The uncertainty set (its ``repr`` is quoted).

    Returns
    -------
    str
        ``"<certified>-PML (target <ε>) for every distribution in <set>"`` (numbers to 6 significant digits).
    """
    return f"{certified_epsilon:.6g}-PML (target {epsilon:.6g}) for every distribution in {uncertainty!r}"


def read_only(value: object) -> object:
    """A read-only view of a writable numpy array (the caller's array keeps its flags); anything else unchanged."""
    if isinstance(value, np.ndarray) and value.flags.writeable:
        value = value.view()
        value.setflags(write=False)
    return value


class PMLDesignWarning(UserWarning):
    """A design returned with a relative gap above 1 % between its value and its proven bound, or no bound at all.

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
    upper_bound, lower_bound : float
        Together they bracket the optimal value of the criterion: ``lower_bound ≤ optimum ≤ upper_bound``. One side is
        the design's own value (a feasible design's value is a bound on the optimum), the other the proven bound
        (:attr:`bound`): for ``sense="max"`` ``lower_bound = utility`` and ``upper_bound`` = the proven upper bound
        (LP optimum, dual or Lagrangian bound; ``inf`` when none is proven); for ``sense="min"`` (frequency
        estimation: an error) ``upper_bound = utility`` and ``lower_bound`` = the proven lower bound on the optimal
        error (``-inf`` when none is proven). Never ``nan``.
    sense : {"max", "min"}
        Whether larger (utilities such as mutual information) or smaller (estimation error) is better.
    optimal : bool
        Whether optimality is proven: :attr:`relative_gap` ≤ the method's tolerance (:data:`OPTIMAL_RTOL`,
        relative), with an absolute floor only at floating-point noise (:data:`GAP_ABS_FLOOR`); the same rule in
        every method (:func:`proven_optimal`).
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

    def __post_init__(self) -> None:
        # read-only views of the certified arrays: a matrix "tidied" in place kept its certificate while privatize
        # used the changed one (a new user's trial; Mechanism.matrix was already read-only)
        for name in ("matrix", "prior"):
            object.__setattr__(self, name, read_only(getattr(self, name)))
        # the bracket convention: the design's own value is the non-proven side (a max design created with the
        # former default lower_bound=-inf gets its value)
        if self.sense == "max" and not self.lower_bound >= self.utility:
            object.__setattr__(self, "lower_bound", float(self.utility))
        if self.sense == "min" and not self.upper_bound <= self.utility:
            object.__setattr__(self, "upper_bound", float(self.utility))

    @property
    def bound(self) -> float:
        """The proven bound on the optimum: ``upper_bound`` for ``sense="max"``, ``lower_bound`` for ``sense="min"``.

        ``±inf`` when no bound is proven (then :attr:`relative_gap` is ``inf``).
        """
        return float(self.lower_bound if self.sense == "min" else self.upper_bound)

    @property
    def gap(self) -> float:
        """Absolute distance to the proven bound, ``|bound − utility|`` (``inf`` when no bound is proven)."""
        return _abs_gap(self.utility, self.bound)

    @property
    def relative_gap(self) -> float:
        """``|bound − utility| / max(|utility|, tiny)``, the same formula for both senses (``inf`` without a bound).

        The optimum lies within this fraction of ``utility``: the design is within ``relative_gap`` of optimal.
        """
        return relative_gap(self.utility, self.bound)

    @property
    def mechanism(self) -> Mechanism:
        """The designed matrix as a usable :class:`~pml_design.mechanisms.Mechanism` (its ``metadata`` keeps where P̂
        came from and the design-data fingerprint, so that ``privatize_dataframe`` guards the design records with it
        as with the result)."""
        meta = {key: self.info[key] for key in ("prior_source", "design_data", "m") if key in self.info}
        if meta and hasattr(self.uncertainty, "center"):
            meta["p_hat"] = self.uncertainty.center.tolist()
        return Mechanism(self.matrix, name=f"PML-{self.utility_name}", labels=self.labels, metadata=meta)

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
        An existing file at ``path`` (a mechanism file too: it is the only key to decoding the reports privatized
        with it) is replaced only with ``overwrite=True``; otherwise an
        :class:`~pml_design.deploy.output.OutputFileError` (a ValueError) names the path.

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
