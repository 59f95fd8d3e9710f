"""A discrete privacy mechanism you can use: privatize records and estimate the input distribution.

Implements: the local model of the core paper (Section II: ``Y ∼ P_{Y|X=x}`` drawn independently per record)
and the standard frequency-estimation back ends for it: matrix inversion (with Euclidean projection onto
the simplex) and the maximum-likelihood estimate by the iterative Bayesian update (IBU, an EM algorithm;
Agrawal & Aggarwal 2001), with asymptotic confidence intervals from the Fisher information restricted to
the simplex (Aitchison & Silvey 1958; the derivation is in ``docs/design.md``, "Estimating frequencies").

Records and reports may be integer codes (``0 … N−1`` / ``0 … M−1``) or, when the mechanism carries
``labels``, the category labels themselves (strings, numbers, any hashable values, a pandas Series or
Categorical; validation and lookup in :mod:`.labels`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

from .._validation import (
    as_generator,
    check_mechanism,
    check_positive_int,
    check_positive_real,
    check_probability_vector,
    check_real,
    fmt,
)
from .._warn import outside_stacklevel
from ..leakage import _leakage_unchecked
from ..uncertainty import leakage_capacity
from .covariance import _restricted_inverse, _sum_zero_basis, simplex_covariance  # noqa: F401 - (importable from here)
from .fit import FIT_LEVEL, ReportsFitWarning, check_possible_reports, report_fit
from .labels import _default_output_labels, _encode, _label_array, check_labels, counts_by_index, label_codes
from .mle import _em_mle, _newton_mle, log_likelihood_gradient, maximum_likelihood  # noqa: F401 - (_newton_mle: importable from here as before)

__all__ = ["FrequencyEstimate", "IDENTIFIABILITY_RTOL", "Mechanism", "check_labels", "label_codes", "project_to_simplex"]

#: Relative singular-value tolerance of :attr:`Mechanism.identifiable`: ``σ_min(W) > rtol · σ_max(W)``.
IDENTIFIABILITY_RTOL: float = 1e-8


def project_to_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of a vector onto the probability simplex (sort-based, exact).

    Implements: the projection ``Π`` of ``estimate(..., project=True)`` (docs/ldp.md §2).

    Parameters
    ----------
    v : numpy.ndarray, shape (N,)
        The vector to project.

    Returns
    -------
    numpy.ndarray of float, shape (N,)
        The point of the simplex nearest to ``v`` in ℓ2: ``max(v − θ, 0)`` for the threshold θ that makes it sum to 1.
    """
    v = np.asarray(v, dtype=float)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, v.shape[0] + 1)
    rho = np.nonzero(u - css / k > 0)[0][-1]
    theta = css[rho] / (rho + 1.0)
    return np.maximum(v - theta, 0.0)



#: Below this many reports per category the Wald intervals come with a warning (a new user's trial: one report gave
#: an interval [0.981, 1] for a category the record did not hold; 10 reports for 8 categories covered all 8 in 55 %).
SMALL_SAMPLE_FACTOR: float = 10.0


def wald_estimate(pi: np.ndarray, cov: np.ndarray, level: float, *, n: int, method: str, categories: tuple | None,
                  blind: np.ndarray | None = None, score: np.ndarray | None = None) -> "FrequencyEstimate":
    """The :class:`FrequencyEstimate` of a point estimate and its covariance: Wald intervals ``± z·se`` clipped to
    ``[0, 1]``, and ``[0, 1]`` where ``blind`` (categories the reports cannot identify).

    With ``score`` (the log-likelihood's gradient at the MLE π̂, ``Σ_y c_y w_y/(π̂·w_y)``) the intervals are centred on
    one Fisher-scoring step from π̂ without the positivity constraint, ``π̃ = π̂ + Σ̂·score`` (on ``Σπ = 1``; Σ̂ = ``cov``),
    and widened to contain π̂, with π̃ clipped to ``[0, 1]`` (a category at 0 gets ``[0, max(π̃, 0) + z·se]``; no
    threshold decides which are zeros, so the intervals move continuously with π̂). At an interior MLE the score is
    ``n·1`` and ``Σ̂1 = 0``, so nothing changes; where many categories sit at 0, π̂ is biased (the clamped mass comes
    from the others) while π̃ is not: a new user's top-10 intervals covered 88 % (N = 600, 394 zeros), a coverage
    study 0.66–0.89 for the largest categories, and ~0.95 centred on π̃ (docs/design.md §8, "Intervals at the
    boundary")."""
    if n < SMALL_SAMPLE_FACTOR * pi.shape[0]:
        warnings.warn(f"the confidence intervals are asymptotic (Wald) and {n} report(s) for {pi.shape[0]} categories "
                      f"are too few for them: they can miss the truth far more often than {100 * level:g} % suggests (a "
                      f"simulation: 10 reports, 8 categories, all 8 covered in 55 % of cases); trust them from about "
                      f"{SMALL_SAMPLE_FACTOR:g} reports per category on", UserWarning, stacklevel=outside_stacklevel())
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    centre = pi if score is None else pi + cov @ score
    inside = np.clip(centre, 0.0, 1.0)  # (a centre beyond 1 gave [1, 1] beside [0, 0.13] at N = 2: a review)
    lo = np.clip(np.minimum(inside - z * se, pi), 0.0, 1.0)
    hi = np.clip(np.maximum(inside + z * se, pi), 0.0, 1.0)
    if blind is not None:
        lo[blind], hi[blind] = 0.0, 1.0
    return FrequencyEstimate(estimate=pi, ci_low=lo, ci_high=hi, covariance=cov, level=level, n=n, method=method,
                             categories=categories)


#: Above this many multiply-adds of ``W Wᵀ`` (N² M) a full rank is first certified by a Cholesky factorisation
#: (:func:`_full_rank_certified`) instead of the singular values: at N = 10 000 on 21 778 outputs the SVD took minutes.
RANK_CERTIFICATE_WORK: float = 2e10


def _full_rank_certified(W: np.ndarray) -> bool:
    """Whether ``σ_min(W) > IDENTIFIABILITY_RTOL · σ_max(W)`` is proven cheaply, for large W only (else False: the
    caller takes the SVD). The Cholesky factorisation of ``G − τI``, ``G = W Wᵀ``, ``τ = 10⁻¹⁰ tr G``, succeeds only if
    ``λ_min(G) ≥ τ`` up to its backward error and that of forming G (each at most ``max(N, M)·u·tr G``, ≤ 3·10⁻¹² tr G
    here): then ``σ_min² ≥ 0.9·10⁻¹⁰ tr G ≥ 0.9·10⁻¹⁰ σ_max²``, a ratio above 9·10⁻⁶ ≫ 10⁻⁸. A failure proves nothing
    (the SVD decides)."""
    n, m = W.shape
    if float(n) * n * m <= RANK_CERTIFICATE_WORK or max(n, m) * np.finfo(float).eps > 1e-11:
        return False
    G = W @ W.T
    G[np.diag_indices(n)] -= 1e-10 * float(np.trace(G))
    try:
        np.linalg.cholesky(G)
    except np.linalg.LinAlgError:
        return False
    return True


def _as_counts(data: object, m: int, name: str, *, allow_empty: bool = False) -> np.ndarray:
    """Validated counts per output (floats); all zero only with ``allow_empty`` (an empty cohort)."""
    try:
        c = np.asarray(data, dtype=float) if not isinstance(data, np.ndarray) else data.astype(float)
    except (TypeError, ValueError):  # text, None, objects (a raw TypeError from float() named no argument)
        raise ValueError(f"{name} (counts=True) must be one non-negative integer per output, got {fmt(data)}") from None
    if c.shape != (m,):
        raise ValueError(f"{name} (counts=True) must have one count per output, shape ({m},), got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c < 0) or np.any(c != np.round(c)):
        raise ValueError(f"{name} (counts=True) must be non-negative integers, got {fmt(c)}")
    if c.sum() <= 0 and not allow_empty:
        raise ValueError(f"{name} (counts=True) must contain at least one report (all counts are zero)")
    return c


@dataclass(frozen=True)
class FrequencyEstimate:
    """An estimated input distribution with pointwise confidence intervals (see :meth:`Mechanism.estimate`).

    Attributes
    ----------
    estimate : numpy.ndarray, shape (N,)
        The point estimate (a probability vector).
    ci_low, ci_high : numpy.ndarray, shape (N,)
        Pointwise Wald intervals ``± z·se`` clipped to ``[0, 1]``, for the maximum-likelihood estimate centred on one
        unconstrained Fisher-scoring step from it and widened to contain it (the same as ``estimate ± z·se`` where no
        category is estimated at 0; see :func:`wald_estimate`); ``[0, 1]`` for a category the mechanism cannot
        identify.
    covariance : numpy.ndarray, shape (N, N)
        Estimated asymptotic covariance of the estimator.
    level : float
        Nominal coverage of each interval.
    n : int
        Number of reports.
    method : str
    categories : tuple or None
        The mechanism's labels (None for a mechanism without labels).
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    covariance: np.ndarray
    level: float
    n: int
    method: str
    categories: tuple | None = None

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return np.array(self.estimate, dtype=dtype)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form: ``categories``, ``estimate``, ``ci_low``, ``ci_high``, ``n``, ``level``, ``method``."""
        cats = list(self.categories) if self.categories is not None else list(range(self.estimate.shape[0]))
        return {"categories": cats, "estimate": self.estimate.tolist(), "ci_low": self.ci_low.tolist(),
                "ci_high": self.ci_high.tolist(), "n": self.n, "level": self.level, "method": self.method}


class Mechanism:
    """A row-stochastic matrix (rows = inputs x, columns = outputs y) with the operations users need.

    Parameters
    ----------
    matrix : array_like, shape (N, M)
        Row-stochastic; validated.
    name : str, optional
        A label for tables and plots.
    labels : sequence, optional
        The N category labels, in row order (distinct, hashable). With labels, :meth:`privatize` and
        :meth:`estimate` accept label values as well as integer codes.
    output_labels : sequence, optional
        Names of the M outputs (default: the input label an output favours when that is one-to-one, as for
        randomized response, else ``"y0" … "y{M−1}"``); only used with ``labels``.
    metadata : mapping, optional
        Provenance (e.g. the guarantee of a loaded mechanism file); kept as a read-only copy.

    Examples
    --------
    >>> import numpy as np
    >>> from pml_design.mechanisms import Mechanism
    >>> rr = Mechanism(np.array([[0.75, 0.25], [0.25, 0.75]]), name="RR")
    >>> y = rr.privatize(np.array([0, 1, 1, 0]), rng=0)
    >>> y.shape
    (4,)
    """

    def __init__(self, matrix: object, *, name: str = "mechanism", labels: object = None,
                 output_labels: object = None, metadata: Mapping[str, Any] | None = None) -> None:
        W = check_mechanism(matrix, "matrix")
        self._W = W / W.sum(axis=1, keepdims=True)
        self._W.setflags(write=False)
        self.name = str(name)
        self._cdf: np.ndarray | None = None  # privatize's table, built on first use (N = 10 000: 5 s, 1.7 GB)
        self._labels = None if labels is None else check_labels(labels, W.shape[0], "labels")
        if output_labels is not None:
            if self._labels is None:
                raise ValueError("output_labels needs labels (the input categories) as well")
            self._out_labels: tuple | None = check_labels(output_labels, W.shape[1], "output_labels")
        else:
            self._out_labels = None if self._labels is None else _default_output_labels(self._W, self._labels)
        self.metadata: Mapping[str, Any] = dict(metadata or {})
        self._rank: int | None = None

    # --- basic properties -------------------------------------------------------------------
    @property
    def matrix(self) -> np.ndarray:
        """The (read-only) row-stochastic matrix."""
        return self._W

    @property
    def n_inputs(self) -> int:
        return int(self._W.shape[0])

    @property
    def n_outputs(self) -> int:
        return int(self._W.shape[1])

    @property
    def labels(self) -> tuple | None:
        """The input category labels in row order (None if the mechanism works on integer codes only)."""
        return self._labels

    @property
    def output_labels(self) -> tuple | None:
        """Names of the outputs, in column order (None without :attr:`labels`)."""
        return self._out_labels

    @property
    def identifiable(self) -> bool:
        """Whether the reports identify the whole input distribution: ``rank W = N`` (numerical rank).

        The output law is ``q = Wᵀπ``, so ``π`` is determined by ``q`` iff ``Wᵀ`` is injective, i.e. W has
        full row rank; the rank counts singular values above ``IDENTIFIABILITY_RTOL · σ_max``. A design that
        merges categories (fewer outputs than inputs, or proportional rows) is not identifiable.
        """
        if self._rank is None and _full_rank_certified(self._W):
            self._rank = self.n_inputs
        if self._rank is None:
            from threadpoolctl import threadpool_limits  # noqa: PLC0415

            with threadpool_limits(1 if self.n_inputs <= 1000 else None):  # never oversubscribed on small W
                s = np.linalg.svd(self._W, compute_uv=False)
            self._rank = int(np.sum(s > IDENTIFIABILITY_RTOL * s[0]))
        return self._rank == self.n_inputs

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return np.array(self._W, dtype=dtype)

    def __repr__(self) -> str:
        extra = f", labels={fmt(list(self._labels))}" if self._labels is not None else ""
        return f"Mechanism(name={self.name!r}, shape={self._W.shape}{extra})"

    # --- privacy ------------------------------------------------------------------------------
    def leakage(self, prior: object) -> np.ndarray:
        """ℓ(X → y) per output (core paper, Theorem 1)."""
        p = check_probability_vector(prior, "prior", size=self.n_inputs)
        return _leakage_unchecked(self._W, p)

    def epsilon_min(self, prior: object) -> float:
        """Smallest ε with ε-PML w.r.t. ``prior`` (core paper, Definition 2)."""
        return float(self.leakage(prior).max())

    def capacity(self, uncertainty: object) -> float:
        """Exact worst-case leakage over an uncertainty set (core paper, Definition 5)."""
        return leakage_capacity(self._W, uncertainty)

    # --- use ------------------------------------------------------------------------------------
    def _flat_cdf(self) -> np.ndarray:
        """The rows' cumulative sums, row x shifted by x and laid end to end (one search draws any row's output)."""
        if self._cdf is None:
            cum = np.cumsum(self._W, axis=1)
            cum[:, -1] = 1.0
            cum += np.arange(self.n_inputs)[:, None]
            self._cdf = cum.ravel()
        return self._cdf

    def encode(self, inputs: object) -> np.ndarray:
        """Integer codes ``0 … N−1`` of records given as codes or as labels (validated)."""
        return _encode(inputs, self._labels, self.n_inputs, "inputs")[0]

    def privatize_codes(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """:meth:`privatize` for already validated int64 codes and a Generator (no checks; for streaming)."""
        u = rng.random(codes.shape)
        y = np.searchsorted(self._flat_cdf(), codes + u, side="right") - codes * self.n_outputs
        # guard against rounding at a row's right end and zero-probability cells
        return np.clip(y, 0, self.n_outputs - 1)

    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Draw ``Y ∼ P_{Y|X=x}`` independently for every input record.

        Vectorised inverse-CDF sampling: one uniform per record and one ``searchsorted`` into the row CDFs
        laid end to end (row x occupies ``[x, x+1]``), so the cost is O(n log(N·M)) with no Python loop.

        Parameters
        ----------
        inputs : array_like
            Secret values: integer codes in ``{0, …, N−1}``, or (for a mechanism with :attr:`labels`) label
            values, e.g. strings or a pandas Series/Categorical. Any shape.
        rng : numpy.random.Generator, int or None
            Randomness source (None: fresh OS entropy).

        Returns
        -------
        numpy.ndarray, same shape as ``inputs``
            The privatized reports: int64 codes in ``{0, …, M−1}`` for integer-code inputs, otherwise the
            :attr:`output_labels` of the reports.
        """
        x, as_labels = _encode(inputs, self._labels, self.n_inputs, "inputs", protected=True)
        y = self.privatize_codes(x, as_generator(rng))
        if as_labels:
            return _label_array(self._out_labels)[y]
        return y

    def report_counts(self, reports: object) -> np.ndarray:
        """Number of reports per output (reports as codes ``0 … M−1`` or as :attr:`output_labels`, one per entry of
        a one-dimensional sequence; a table or a 2-D array is a ``ValueError``: pass its column)."""
        if getattr(reports, "ndim", 1) > 1 or (hasattr(reports, "columns") and hasattr(reports, "iloc")):
            shape = getattr(reports, "shape", None)
            raise ValueError(f"reports must be one-dimensional (one report per entry), got shape {shape}; pass a "
                             "single column, e.g. frame['column']")
        try:
            y = _encode(reports, self._out_labels, self.n_outputs, "reports")[0]
        except ValueError:
            if self._looks_like_records(reports):  # the message would quote protected records (a new user's trial)
                raise ValueError("reports hold values that are not outputs of the mechanism but are its input "
                                 "categories: raw records, not privatized reports? They are not shown (protected "
                                 "records); privatize them first (mechanism.privatize) and estimate from its output"
                                 ) from None
            raise
        if y.ndim > 1:
            raise ValueError(f"reports must be one-dimensional (one report per entry), got shape {y.shape}")
        return np.bincount(y.ravel(), minlength=self.n_outputs)

    def _looks_like_records(self, reports: object) -> bool:
        """Whether ``reports`` holds an input category that is not an output label (then no value is quoted)."""
        if self._labels is None or self._out_labels is None:
            return False
        import pandas as pd  # noqa: PLC0415 - labelled data only

        try:
            values = pd.unique(pd.Series(np.asarray(reports, dtype=object).ravel()))
        except (TypeError, ValueError):
            return False
        found = pd.Index(list(self._labels)).get_indexer(values) >= 0
        return bool(np.any(found & (pd.Index(list(self._out_labels)).get_indexer(values) < 0)))

    def output_frequencies(self, reports: object) -> np.ndarray:
        """Empirical distribution of privatized reports over the M outputs."""
        c = self.report_counts(reports)
        return c / c.sum()

    def _check_identifiable(self, stacklevel: int = 3) -> None:
        if not self.identifiable:
            warnings.warn(
                f"mechanism {self.name!r} cannot identify every category (rank {self._rank} < {self.n_inputs} "
                "inputs: it merges some categories), so the input distribution is not determined by the "
                "reports; the estimate is one of many that fit them equally well (its confidence intervals "
                "are [0, 1] for the categories it cannot identify)",
                UserWarning,
                stacklevel=stacklevel,
            )

    def _inversion(self, counts: np.ndarray) -> np.ndarray:
        sol, *_ = np.linalg.lstsq(self._W.T, counts / counts.sum(), rcond=None)
        return project_to_simplex(sol)

    def _ibu(self, counts: np.ndarray, max_iter: int, tol: float) -> np.ndarray:
        W = self._W
        fy = counts / counts.sum()
        used = fy > 0
        Wu, fu = W[:, used], fy[used]
        if self.identifiable:
            # warm start at the projected inversion (the MLE itself when that is interior and W is square);
            # zeros lifted to 1e-6 because EM never leaves a zero. The MLE is unique here, so the limit is
            # the same as from the uniform start, only reached in far fewer iterations.
            def warm() -> np.ndarray:  # (N² M like a Newton step: only where Newton runs)
                pi = np.maximum(self._inversion(counts) if W.shape[1] <= 2 * W.shape[0] else self._normal_inversion(fy),
                                1e-6)
                return pi / pi.sum()

            return maximum_likelihood(Wu, fu, np.full(self.n_inputs, 1.0 / self.n_inputs), max_iter, tol, warm)
        else:  # the limit depends on the start: keep the classic uniform one
            pi = np.full(self.n_inputs, 1.0 / self.n_inputs)
        return _em_mle(Wu, fu, pi, max_iter, tol)

    def _normal_inversion(self, fy: np.ndarray) -> np.ndarray:
        """The projected least-squares inversion by the normal equations (N × N; a warm start for wide W)."""
        G = self._W @ self._W.T
        return project_to_simplex(np.linalg.solve(G, self._W @ fy))

    def _point_estimate(self, counts: np.ndarray, method: str, max_iter: int, tol: float) -> np.ndarray:
        max_iter = check_positive_int(max_iter, "max_iter")
        tol = check_positive_real(tol, "tol")
        if method == "inversion":
            return self._inversion(counts)
        pi = self._ibu(counts, max_iter, tol)
        fit = report_fit(self._W, counts, pi, rank=self.n_inputs if self.identifiable else self._rank)  # cached SVD
        if fit.p_value < FIT_LEVEL:
            warnings.warn(
                f"the reports do not fit mechanism {self.name!r}: likelihood-ratio test G = {fit.statistic:.4g} on "
                f"{fit.df} degree(s) of freedom, p = {fit.p_value:.2g} < {FIT_LEVEL:g}; they were probably "
                "privatized by another mechanism (check the mechanism file), so this estimate is not trustworthy",
                ReportsFitWarning, stacklevel=4)
        return pi

    def _covariance_at(self, pi: np.ndarray, n: int, method: str) -> np.ndarray:
        """Asymptotic covariance of the estimator at ``pi`` from ``n`` reports (see :meth:`estimate_covariance`)."""
        if method == "inversion":
            return self.inversion_covariance(pi, n)
        q = pi @ self._W
        used = q > 0
        Wu = self._W[:, used]
        X = Wu / np.sqrt(q[used])  # F = XXᵀ (a symmetric rank-k update, as fisher_information)
        return simplex_covariance(X @ X.T) / n

    def _prepare(self, reports: object, method: str, counts: bool) -> np.ndarray:
        if method not in ("ibu", "mle", "inversion"):
            raise ValueError(f"method must be 'ibu' (= 'mle') or 'inversion', got {method!r}")
        c = _as_counts(counts_by_index(reports, self.n_outputs, self._out_labels, "reports"), self.n_outputs,
                       "reports") if counts else self.report_counts(reports).astype(float)
        check_possible_reports(self._W, c, self._out_labels)
        self._check_identifiable(stacklevel=4)
        return c

    def estimate(
        self,
        reports: object,
        *,
        method: Literal["ibu", "mle", "inversion"] = "ibu",
        ci: float | None = None,
        counts: bool = False,
        max_iter: int = 10_000,
        tol: float = 1e-10,
    ) -> np.ndarray | FrequencyEstimate:
        """Estimate the input distribution from privatized reports, optionally with confidence intervals.

        Both estimators are consistent when the mechanism is :attr:`identifiable`; otherwise a
        ``UserWarning`` says so (the distribution is then not determined by the reports). Reports on an output
        the mechanism never produces are refused (``ValueError``); with ``"ibu"`` a likelihood-ratio test of the
        counts against ``π̂ᵀW`` (:func:`pml_design.mechanisms.fit.report_fit`) raises a
        :class:`~pml_design.mechanisms.fit.ReportsFitWarning` below p = 1e-6 (the reports were probably
        privatized by another mechanism).

        Parameters
        ----------
        reports : array_like
            Outputs as codes in ``{0, …, M−1}`` or as :attr:`output_labels`; or, with ``counts=True``, the
            number of reports per output (length M).
        method : {"ibu", "mle", "inversion"}
            ``"ibu"`` (= ``"mle"``): the iterative Bayesian update (EM; stays on the simplex, converges to the
            maximum-likelihood estimate). ``"inversion"``: solve ``Wᵀ π = P̂_Y`` (least squares if M ≠ N) and
            project onto the simplex.
        ci : float in (0, 1), optional
            Also return pointwise confidence intervals at this level (e.g. 0.95), from the asymptotic
            covariance of :meth:`estimate_covariance` (Wald, clipped to ``[0, 1]``).
        counts : bool, default False
            Whether ``reports`` holds counts per output.
        max_iter, tol : int, float
            IBU stopping rule (ℓ1 change between iterates).

        Returns
        -------
        numpy.ndarray, shape (N,), or FrequencyEstimate
            A probability vector; a :class:`FrequencyEstimate` (estimate, ci_low, ci_high, covariance, n) when
            ``ci`` is given.
        """
        if ci is not None:
            level = check_real(ci, "ci")  # text ("0.9") and booleans refused (a review: "0.9" was accepted)
            if not 0.0 < level < 1.0:
                raise ValueError(f"ci must lie in (0, 1), e.g. 0.95, got {ci!r}")
        c = self._prepare(reports, method, counts)
        pi = self._point_estimate(c, method, max_iter, tol)
        if ci is None:
            return pi
        n = int(c.sum())
        return wald_estimate(pi, self._covariance_at(pi, n, method), level, n=n,
                             method="ibu" if method == "mle" else method, categories=self._labels,
                             blind=~self._identifiable_components(),
                             score=None if method == "inversion" else log_likelihood_gradient(self._W, c, pi))

    def _identifiable_components(self) -> np.ndarray:
        """Per category x: whether ``π_x`` is identified (``e_x`` lies in the column space of W)."""
        if self.identifiable:  # rank N: every e_x (a full SVD of W took 30 s at N = 5 000, 5 402 outputs)
            return np.ones(self.n_inputs, dtype=bool)
        u, s, _ = np.linalg.svd(self._W, full_matrices=False)
        r = u[:, s > IDENTIFIABILITY_RTOL * s[0]]
        return np.abs(1.0 - np.einsum("ij,ij->i", r, r)) < 1e-8

    def estimate_covariance(
        self, reports: object, *, method: Literal["ibu", "mle", "inversion"] = "ibu", counts: bool = False,
        max_iter: int = 10_000, tol: float = 1e-10,
    ) -> np.ndarray:
        """Estimated asymptotic covariance of :meth:`estimate` (plug-in at the estimate).

        For the MLE (``"ibu"``): the inverse Fisher information restricted to the simplex,
        ``U (Uᵀ F U)⁺ Uᵀ / n`` with ``F = Σ_y w_y w_yᵀ / (π·w_y)`` (``w_y`` the columns of W) and U an
        orthonormal basis of ``{v : Σv = 0}`` (constrained Cramér–Rao bound; Aitchison & Silvey 1958). For an
        interior, identifiable ``π`` it equals ``(F⁻¹ − π πᵀ)/n``, because ``F π = W 1 = 1`` (derivation in
        ``docs/design.md``). For ``"inversion"``: the delta-method covariance of :meth:`inversion_covariance`.

        Parameters
        ----------
        reports, method, counts, max_iter, tol
            As in :meth:`estimate`.

        Returns
        -------
        numpy.ndarray, shape (N, N)
        """
        c = self._prepare(reports, method, counts)
        pi = self._point_estimate(c, method, max_iter, tol)
        return self._covariance_at(pi, int(c.sum()), method)

    def inversion_covariance(self, prior: object, n: int) -> np.ndarray:
        """Covariance of the (unprojected) inversion estimator from n reports, for a true ``prior``.

        ``Cov = W⁺ᵀ (diag(P_Y) − P_Y P_Yᵀ) W⁺ / n`` with ``W⁺`` the pseudo-inverse of ``Wᵀ`` (the estimator
        is unbiased when W has full row rank).
        """
        p = check_probability_vector(prior, "prior", size=self.n_inputs)
        n = check_positive_int(n, "n")
        py = p @ self._W
        cov_y = (np.diag(py) - np.outer(py, py)) / n
        A = np.linalg.pinv(self._W.T)
        return A @ cov_y @ A.T

    def with_name(self, name: str) -> "Mechanism":
        """A copy with another name."""
        return Mechanism(self._W, name=name, labels=self._labels,
                         output_labels=self._out_labels if self._labels is not None else None,
                         metadata=self.metadata)

    def with_labels(self, labels: object, output_labels: object = None) -> "Mechanism":
        """A copy whose rows are named by ``labels`` (see the class docstring)."""
        return Mechanism(self._W, name=self.name, labels=labels, output_labels=output_labels,
                         metadata=self.metadata)
