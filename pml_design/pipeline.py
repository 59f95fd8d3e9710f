"""End to end: from samples to a designed mechanism with an (ε, δ)-PML guarantee, and back.

Implements: the procedure of the core paper's Figure 1 and Section IV-D: estimate ``P̂`` (eq. (3)), turn δ into
the radius ``β*(δ)`` (eq. (7), corrected), design a mechanism that is ε-PML for every distribution of
``B_β(P̂)`` (eq. (9), Proposition 2), so that it is (ε, δ)-PML for the true distribution. The other way round,
for a mechanism designed for ``P̂``, which (ε', δ) hold: eq. (8) and Corollary 3 (closed-form bounds) and the
exact values from the leakage capacity over the ball.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._validation import (
    EPSILON_MAX,  # noqa: F401 - re-exported: pml_design.pipeline.EPSILON_MAX
    check_delta,
    check_design_epsilon,
    check_epsilon,
    check_integer_counts,
    check_mechanism,
    check_positive_int,
    check_positive_real,
    check_probability_vector,
    fmt,
)
from .bounds import delta_min, epsilon_prime
from .estimation import counts_distribution, empirical_distribution, l1_deviation_delta, l1_radius, samples_needed
from .statements import (  # noqa: F401 - re-exported: pml_design.pipeline.<name>
    FINGERPRINT_MIN_BITS,
    design_fingerprint,
    order_entropy_bits,
    pml_statement,
    source_statement,
    values_sha256,
)
from .uncertainty import L1Ball, leakage_capacity

__all__ = [
    "DisclosureWarning",
    "EstimatedDesign",
    "PmlStatement",
    "delta_for_epsilon",
    "design_fingerprint",
    "design_from_samples",
    "guarantee_for_mechanism",
    "pml_statement",
    "source_statement",
]



@dataclass(frozen=True)
class EstimatedDesign:
    """Result of :func:`design_from_samples`.

    Attributes
    ----------
    p_hat : numpy.ndarray
        The estimate (eq. (3)).
    m : int
        Number of samples behind it (``"dp"``: the lower bound ``Σc̃ − T`` on the number of design records that
        the radius uses; ``"ldp reports"``: the number of reports).
    delta : float
        Failure probability of the estimate.
    radius : float
        ``β*(δ)`` (eq. (7)).
    result : DesignResult
        The certified design over ``L1Ball(p_hat, radius)`` (with ``labels``, and ``info["delta"]``,
        ``info["m"]``, so that ``result.save(path)`` writes a complete mechanism file).
    prior_source : str, default "public sample"
        Where P̂ came from: ``"public sample"`` (records apart from the released ones), ``"dp"`` (a differentially
        private release of the design records) or ``"ldp reports"`` (a first cohort's LDP reports); one of
        :data:`pml_design.estimation.PRIOR_SOURCES`.
    prior_params : dict
        What :func:`pml_design.estimation.prior_radius` needs to re-derive ``radius`` for that source (JSON-able).
    """

    p_hat: np.ndarray
    m: int
    delta: float
    radius: float
    result: object
    prior_source: str = "public sample"
    prior_params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        from .design.result import read_only  # noqa: PLC0415

        object.__setattr__(self, "p_hat", read_only(self.p_hat))  # as the result's arrays
        if self.prior_source == "public sample" and "m" not in self.prior_params:  # eq. (7) needs m
            object.__setattr__(self, "prior_params", {**self.prior_params, "m": int(self.m)})

    @property
    def epsilon(self) -> float:
        return float(self.result.certified_epsilon)  # type: ignore[attr-defined]

    @property
    def labels(self) -> tuple | None:
        """The category labels in row order (None when the data were integer codes with ``support_size``)."""
        return self.result.labels  # type: ignore[attr-defined]

    @property
    def mechanism(self) -> object:
        """The designed mechanism (a :class:`~pml_design.mechanisms.Mechanism` with the labels)."""
        return self.result.mechanism  # type: ignore[attr-defined]

    def statement(self) -> str:
        """The (ε, δ)-PML statement the mechanism carries (:func:`source_statement` for its prior source: for a
        private P̂ it also names the guarantee of the records behind it)."""
        return source_statement(self.prior_source, self.epsilon, self.delta, self.radius, self.m, self.prior_params)

    @property
    def design_data(self) -> dict:
        """The fingerprint of the design records (:func:`design_fingerprint`), kept in the mechanism file."""
        return dict(self.result.info.get("design_data") or {})  # type: ignore[attr-defined]

    def summary(self) -> str:
        """The statement and the design's summary, with what it discloses (:meth:`DesignResult.summary`)."""
        return f"{self.statement()}\n{self.result.summary()}"  # type: ignore[attr-defined]

    def save(self, path: object, *, extra: dict | None = None, overwrite: bool = False) -> object:
        """Write the mechanism file (see :meth:`pml_design.DesignResult.save`); returns its path.

        An existing file at ``path`` is replaced only with ``overwrite=True`` (a mechanism file too).
        """
        return self.result.save(path, delta=self.delta, m=self.m, extra=extra,  # type: ignore[attr-defined]
                                overwrite=overwrite)


def _sorted_if_possible(values: list) -> list:
    try:
        return sorted(values)
    except TypeError:  # mixed types: keep the order of first appearance
        return values


def _labelled_counts(data: object, categories: object, counts: bool, dp: bool = False) -> tuple[np.ndarray, tuple]:
    """(counts per category, labels) for labelled data: values, a pandas Series/Categorical, or a mapping.

    ``dp``: the records are protected by a DP release of the counts; empty data are then not refused (that would tell
    that there is no record), their counts are all 0 and the release decides (docs/design.md §11.1)."""
    import pandas as pd  # noqa: PLC0415 - labelled data only

    from .mechanisms.mechanism import check_labels, label_codes  # noqa: PLC0415

    fixed = None if categories is None else check_labels(categories, None, "categories")
    if counts:
        if not isinstance(data, (dict, pd.Series)):
            c = np.asarray(data)
            if fixed is None or c.ndim != 1 or c.shape[0] != len(fixed):
                raise ValueError(f"categories has {len(fixed or ())} entries but data (counts) has shape {c.shape}")
            return c, fixed
        if fixed is not None and len(data) > 0:  # the one rule of counts_by_index (a review: a default index read as
            from .mechanisms.labels import counts_by_index  # noqa: PLC0415  # integer labels [1, 0], swapped)

            return check_integer_counts(counts_by_index(data, len(fixed), fixed, "data (counts)"),
                                        "data (counts)"), fixed
        series = pd.Series(data)
        keys = check_labels(list(series.index), None, "data (counts) labels")
        labels = fixed if fixed is not None else keys
        c = np.zeros(len(labels), dtype=np.int64)  # the counts must be integers: '3' and 2.5 are refused, not parsed
        if len(series) == 0:  # no key: all counts 0 (refused later without dp; with dp the release decides)
            return c, labels
        values = check_integer_counts(series.to_numpy(dtype=object), "data (counts)")
        c[label_codes(np.asarray(keys, dtype=object), labels, "data (counts) labels", "outside categories")] = values
        return c, labels
    raw = data.array if isinstance(data, pd.Series) else data
    if isinstance(raw, pd.Categorical) and fixed is None:
        fixed = check_labels(list(raw.categories), None, "categories of data")
    flat = raw if isinstance(raw, pd.Categorical) else np.asarray(raw, dtype=object if isinstance(raw, list) else None).ravel()
    if len(flat) == 0 and not dp:
        raise ValueError("data must not be empty")
    if fixed is None:
        uniq = pd.unique(pd.Series(flat, copy=False))
        if pd.isna(uniq).any():
            raise ValueError("data contains missing values (None/NaN); drop or fill them first")
        fixed = check_labels(_sorted_if_possible([v.item() if isinstance(v, np.generic) else v for v in uniq]),
                             None, "data values")
    codes = label_codes(flat, fixed, "data", "outside categories") if len(flat) else np.zeros(0, dtype=np.int64)
    return np.bincount(codes, minlength=len(fixed)), fixed


def design_from_samples(
    data: object,
    support_size: int | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    *,
    counts: bool = False,
    categories: object = None,
    utility: object = "mutual_information",
    method: str = "auto",
    solver: str | None = None,
    allow_zero: bool = False,
    solver_options: dict | None = None,
    dp_epsilon: float | None = None,
    rng: object = None,
) -> EstimatedDesign:
    """Samples (or counts) + target (ε, δ) → P̂, β*(δ), the designed mechanism, and its (ε, δ)-PML statement.

    Implements: core paper, Figure 1 (eq. (3), eq. (7), eq. (9) over ``B_{β*(δ)}(P̂)``); with ``dp_epsilon``
    the ε₀-DP estimate and widened radius of docs/design.md ("A differentially private P̂",
    :func:`pml_design.priors.dp_prior_radius`).

    The design records must be apart from the records the mechanism will privatize (a public sample, or a
    random split set aside): P̂ is computed from them in the clear and published with the mechanism. When no
    such sample exists and the design records must stay protected, pass ``dp_epsilon``: only an ε₀-DP release
    of their counts is then used and published.

    Parameters
    ----------
    data : array_like, pandas Series/Categorical, or mapping
        Samples: integer codes in ``{0, …, N−1}`` (with ``support_size``), or labels (any hashable values,
        e.g. strings; a pandas Categorical keeps its categories and their order). With ``counts=True``:
        counts per category, as an array (codes) or a mapping / Series ``label → count``.
    support_size : int, optional
        Alphabet size N for integer codes; with labels it may be omitted (N = number of categories) and must
        match if given.
    epsilon : float
        Target ε, guaranteed for every distribution in the ball (≤ 700, so that ``e^ε`` is finite).
    delta : float
        Failure probability in (0, 1) (δ = 1 would make the statement vacuous).
    counts : bool, default False
        Whether ``data`` holds counts. A pandas Series or a mapping of counts is read by its index (labels or
        codes), never by position, except for a Series with the default index ``0 … N−1``; an integer index that
        could be row numbers (``sort_values``, a filter) or could mean other categories is refused
        (:func:`pml_design.mechanisms.labels.counts_by_index`).
    categories : sequence, optional
        The categories in the order wanted (rows of the mechanism), including ones absent from the data
        (then ``allow_zero=True`` is needed); values outside it are an error. Default: the sorted distinct
        values (the categories of a Categorical).
    utility, method, solver
        As in :func:`pml_design.design`. For ``utility="frequency_estimation"`` with unseen categories, the error
        is evaluated at the add-½ smoothed estimate ``(counts + ½)/(m + N/2)`` (the ball stays centred at P̂).
    allow_zero : bool, default False
        Allow symbols with zero count (see :func:`pml_design.empirical_distribution`).
    solver_options : dict, optional
        As in :func:`pml_design.design`, e.g. ``{"time_limit": 30, "progress": False}`` for the column-generation
        method (used for large alphabets and rare categories).
    dp_epsilon : float, optional
        ε₀ > 0: release the design counts with discrete Laplace noise of scale 1/ε₀ per category (ε₀-DP for
        add/remove-one-record neighbours, OpenDP's exact sampler), estimate ``P̂`` from the noisy counts (clipped
        at 0, renormalised) and widen the radius so that the ball still contains P with probability ≥ 1 − δ
        (δ split as δ₁ = (1 − :data:`pml_design.priors.DP_DELTA_SHARE`)·δ for the ball, δ₂ for the private record count). Nothing
        computed from the exact counts is returned or stored; ``m`` becomes the lower bound on the record
        count that the radius uses. Zero noisy counts are common: pass ``allow_zero=True`` to keep them. Each
        call spends ε₀ on these records (repeated designs compose: the ε₀ add up). Labelled data — values, counts
        keyed by label, a pandas Categorical — need the public ``categories`` (the values present in the data, the
        keys of ``value_counts`` or inferred categories are themselves protected, not public). ε₀ ≥ :data:`pml_design.priors.DP_EPSILON_MIN`.
    rng : numpy.random.Generator, int or None
        Only with ``dp_epsilon``: ``None`` (default) draws the noise with OpenDP's exact sampler from OS
        randomness, as a release must; a seed gives reproducible noise for tests and simulations only (whoever
        knows the seed can remove it): it warns, and the mechanism file's ``prior_params.noise`` and statement say
        so.

    Returns
    -------
    EstimatedDesign
        ``result.labels`` holds the categories for labelled data (None for integer codes); ``prior_source`` is
        ``"dp"`` with ``dp_epsilon``, else ``"public sample"``;
        ``result.info["design_data"]`` the fingerprint of the records (:func:`design_fingerprint`).

    Notes
    -----
    **Design on records apart from the released ones.** The mechanism file publishes P̂ and m, hence the
    exact counts of the design records (``P̂ · m``): the guarantee covers the records that are *privatized*,
    not the design records. Design on a public sample or on records set aside (e.g.
    ``survey.sample(frac=0.2, random_state=0)`` and release the rest, or ``pml-design split``), never on the
    records you then privatize. :func:`pml_design.privatize_dataframe` refuses a column whose fingerprint
    (:func:`design_fingerprint`, the SHA-256 of the values in order) is the design data's, or whose counts per
    category are exactly theirs (the same records reordered), unless ``allow_design_data=True``.

    Raises
    ------
    ValueError
        If the radius ``β*(δ)`` is ≥ 2 (the samples rule out nothing; the message says how many are needed),
        and for bad arguments (naming them).
    """
    eps, d = _check_target(epsilon, delta, "design_from_samples")
    counts_given = bool(counts)
    _check_one_column(data, counts)
    plain_counts = counts and categories is None and not isinstance(data, dict) and not _is_pandas(data)
    if plain_counts and support_size is None:  # counts per category 0 … N−1, N = their number
        support_size = int(np.asarray(data).shape[0])
    codes_given = categories is None and not isinstance(data, (dict,)) and (
        plain_counts or _is_integer_codes(data, support_size))
    if codes_given:
        n = check_positive_int(support_size, "support_size", minimum=2)
        labels = None
        if counts:  # a Series of counts by its index, not by position (value_counts sorts by count: a trial)
            from .mechanisms.labels import counts_by_index  # noqa: PLC0415

            data = counts_by_index(data, n, None, "data (counts)")
        c = check_integer_counts(data, "data (counts)") if counts else None  # (np.asarray made True a count of 1)
    else:
        if dp_epsilon is not None and categories is None:
            # also for counts keyed by label and for a pandas Categorical: their keys / categories are usually
            # what the data hold (value_counts, astype("category")), and would be published with the design
            raise ValueError("dp_epsilon needs the public list of categories (categories=[...]): the set of values "
                             "present in the data is itself protected, not public (a value held by one record discloses it)")
        if dp_epsilon is not None:  # the list itself is public: its mistakes are named before the protected data
            from .mechanisms.mechanism import check_labels  # noqa: PLC0415

            check_labels(categories, None, "categories")
        try:
            c, labels = _labelled_counts(data, categories, counts, dp_epsilon is not None)
        except ValueError as exc:
            if dp_epsilon is None or str(exc).startswith("data (counts) must"):  # (the count check quotes no count)
                raise
            # the usual message quotes an unknown value and its position: records that the DP release protects
            raise ValueError("data hold values outside categories (with dp_epsilon every value must be one of the "
                             "public categories; no value, count or position is shown: the records are protected by "
                             "dp_epsilon, and this refusal itself says only that the data do not fit categories)"
                             ) from None
        n = len(labels)
        if support_size is not None and check_positive_int(support_size, "support_size") != n:
            raise ValueError(f"support_size={support_size} but the data have {n} categories {list(labels)[:10]}")
        if n < 2:
            raise ValueError(f"data must have at least 2 categories, got {list(labels)}")
        counts = True
    if dp_epsilon is None and rng is not None:  # (a review: silently ignored)
        import warnings  # noqa: PLC0415

        warnings.warn("rng is used only with dp_epsilon (it draws the noise of the DP release of the counts); this "
                      "design draws nothing at random, so rng is ignored", UserWarning, stacklevel=2)
    if dp_epsilon is not None:
        from .priors import dp_estimate  # noqa: PLC0415

        p_hat, m, beta, params = dp_estimate(c, data, n, d, dp_epsilon, allow_zero, rng)
        source = "dp"
    else:
        if counts:
            p_hat = counts_distribution(c, allow_zero=allow_zero)
            m = int(round(float(np.sum(c))))
            if p_hat.shape[0] != n:
                raise ValueError(f"counts has length {p_hat.shape[0]} but support_size is {n}")
        else:
            p_hat = empirical_distribution(data, n, allow_zero=allow_zero)
            m = int(np.asarray(data).size)
        beta = l1_radius(m, n, d)
        params, source = {"m": m}, "public sample"
    if beta >= 2.0 and source == "dp":
        raise ValueError(f"dp_epsilon={params['dp_epsilon']!r}: the widened radius {beta:.3g} >= 2 rules out no "
                         f"distribution for delta={d!r} with about {m} design records on {n} symbols; use more "
                         "records, a larger dp_epsilon or a larger delta (the DP release of the counts is already "
                         "made: another design on the same records releases them again, and the records' guarantee "
                         "becomes the sum of both dp_epsilon)")
    if beta >= 2.0:
        need_any = samples_needed(1.999, n, d)
        need_interior = samples_needed(max(min(p_hat[p_hat > 0].min(), 1.0), 1e-6), n, d)
        raise ValueError(
            f"m={m} samples are too few for delta={d!r} on {n} symbols: the radius beta*(delta)={beta:.3g} >= 2 rules "
            f"out no distribution (the design would be LDP); need m >= {need_any} for any information and about "
            f"m >= {need_interior} for radius < 2 min(p_hat)"
        )
    if source != "public sample":
        design_data = {"kind": None, "why": "P-hat from a DP release of the counts: its records are protected by "
                                            "dp_epsilon, no fingerprint is needed"}
    elif counts_given:
        design_data = {"kind": None, "why": "counts given: no records to fingerprint"}
    else:
        design_data = design_fingerprint(data, np.round(p_hat * m))
    return _design_over_ball(p_hat, m, d, beta, eps, labels, source, params, design_data=design_data,
                             utility=utility, method=method, solver=solver, solver_options=solver_options)


def _design_over_ball(p_hat: np.ndarray, m: int, d: float, beta: float, eps: float, labels: tuple | None,
                      source: str, params: dict, *, design_data: dict | None = None,
                      **design_kw: object) -> EstimatedDesign:
    """The certified design over ``B_β(P̂)`` wrapped as an :class:`EstimatedDesign` (shared by the prior sources)."""
    from dataclasses import replace  # noqa: PLC0415

    from .design import design  # noqa: PLC0415

    prior = None
    n = p_hat.shape[0]
    if _is_frequency_estimation(design_kw.get("utility")) and np.any(p_hat <= 0):
        # the estimation error is evaluated at a positive distribution: add-1/2 (Krichevsky-Trofimov) smoothing
        prior = (p_hat * m + 0.5) / (m + n / 2.0)
    res = design(L1Ball(p_hat, beta), eps, prior=prior, **design_kw)  # type: ignore[arg-type]
    extra = {"utility_prior": "add-1/2 smoothed p_hat"} if prior is not None else {}
    extra["design_data"] = design_data if design_data is not None else {
        "kind": None, "why": f"P-hat from {source}: no design records to fingerprint"}
    res = replace(res, labels=labels, info={**res.info, "delta": d, "m": m, "prior_source": source,
                                            "prior_params": params, **extra})
    _warn_single_outputs(res.matrix, labels)
    return EstimatedDesign(p_hat=p_hat, m=m, delta=d, radius=beta, result=res, prior_source=source,
                           prior_params=params)


class DisclosureWarning(UserWarning):
    """A design has outputs that only one input produces: whoever sees such an output knows the record's value.

    PML allows it for an input whose probability is at least ``e^−ε`` throughout the ball (core paper, Section III:
    a posterior of 1 leaks ``log 1/P(x) ≤ ε``); :meth:`DesignResult.summary` and ``disclosure()`` list them, and
    ``pml-design design`` prints them instead of this warning.
    """


def _warn_single_outputs(matrix: np.ndarray, labels: tuple | None) -> None:
    """A :class:`DisclosureWarning` naming the inputs that an output singles out (a column with one positive entry),
    with the share of that input's records that land there (a new user's trial: the mutual-information default
    released half the records exactly, and only ``summary()`` said so)."""
    from .design.disclosure import singled_out_shares  # noqa: PLC0415

    share = singled_out_shares(matrix)
    if not np.any(share > 0):
        return
    named = [(labels[i] if labels is not None else int(i), share[i]) for i in np.flatnonzero(share > 0)]
    shown = ", ".join(f"{x!r} ({100 * v:.4g} % of its records)" for x, v in named[:5]) + (" …" if len(named) > 5 else "")
    import warnings  # noqa: PLC0415

    from ._warn import outside_stacklevel  # noqa: PLC0415

    warnings.warn(DisclosureWarning(
        f"the design discloses inputs exactly: outputs that only one input produces reveal it for {shown}; PML allows "
        "this for inputs of probability at least e^-epsilon throughout the ball; see result.summary() or "
        "result.disclosure(), and design with a smaller epsilon (or another utility) if these records must not be "
        "singled out"), stacklevel=outside_stacklevel())


def _check_target(epsilon: object, delta: object, caller: str) -> tuple[float, float]:
    """The validated target (ε, δ) of a design from an estimate (δ < 1: δ = 1 makes the statement vacuous)."""
    for arg, value in (("epsilon", epsilon), ("delta", delta)):
        if value is None:
            raise TypeError(f"{caller}() missing required argument: {arg!r}")
    eps = check_design_epsilon(epsilon)
    d = check_delta(delta)  # δ ∈ (0, 1): δ = 1 would make the statement vacuous
    return eps, d


def _is_frequency_estimation(utility: object) -> bool:
    from .design.utilities import FrequencyEstimation  # noqa: PLC0415

    return isinstance(utility, FrequencyEstimation) or (isinstance(utility, str) and utility.lower() == "frequency_estimation")


def _is_pandas(data: object) -> bool:
    return type(data).__module__.split(".")[0] == "pandas"


def _check_one_column(data: object, counts: bool) -> None:
    """Refuse 2-D samples (a matrix, a DataFrame): they would be flattened into one set of categories."""
    what = "counts" if counts else "samples"
    if _is_pandas(data) and hasattr(data, "columns"):
        cols = list(data.columns)
        raise TypeError(f"data must be one column of {what}, got a DataFrame with {len(cols)} column(s) "
                        f"{fmt(cols)}; pass one column, e.g. data=df[{cols[0]!r}]" if cols else
                        f"data must be one column of {what}, got an empty DataFrame")
    if isinstance(data, (set, frozenset)):
        raise TypeError(f"data must be a sequence of {what} (list, tuple, numpy array or pandas Series), got a "
                        f"{type(data).__name__}: it has no order and no repeats")
    if isinstance(data, dict) and not counts:
        raise TypeError("data is a dict (counts per category): pass counts=True, or give the samples as a sequence")
    if isinstance(data, (dict, str, bytes)) or _is_pandas(data):
        return
    if not (hasattr(data, "__len__") and hasattr(data, "__getitem__")):  # a generator, an iterator, a dict view
        raise TypeError(f"data must be a sequence of {what} (list, tuple, numpy array or pandas Series), got "
                        f"{type(data).__name__}; pass list(data)")
    shape = getattr(data, "shape", None)
    if shape is None and isinstance(data, (list, tuple)):
        shape = np.asarray(data, dtype=object).shape if data and isinstance(data[0], (list, tuple)) else None
    if shape is not None and len(shape) != 1:
        raise ValueError(f"data must be 1-D (one {'count per category' if counts else 'sample per entry'}), got "
                         f"shape {tuple(shape)}; pass one column (e.g. data[:, 0]) per design")


def _is_integer_codes(data: object, support_size: int | None) -> bool:
    """Integer codes: an integer-valued numeric array (not a pandas Categorical) with ``support_size`` given."""
    if support_size is None:
        return False
    dtype = getattr(data, "dtype", None)
    if dtype is not None and not isinstance(dtype, np.dtype):  # pandas extension dtypes (category, string)
        return False
    arr = np.asarray(data)
    if arr.dtype.kind in "iu":
        return True
    return arr.dtype.kind == "f"  # booleans are labels (False, True), as without support_size


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

    Parameters
    ----------
    mechanism : Mechanism or array_like
        The mechanism (N × M, row-stochastic).
    p_hat : array_like
        The estimate it was designed on.
    m : int
        The number of samples behind ``p_hat``.
    delta : float
        The failure probability, in (0, 1).

    Returns
    -------
    PmlStatement
        ε at P̂, the radius β*(δ), the exact ε' over the ball and eq. (8)'s bound (``inf`` where it does not apply).
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

    Parameters
    ----------
    mechanism, p_hat, m
        As for :func:`guarantee_for_mechanism`.
    epsilon_target : float
        The ε' wanted, at least the mechanism's leakage at P̂ (``inf`` allowed).

    Returns
    -------
    (float, float)
        ``(delta_exact, delta_corollary3)``.
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

