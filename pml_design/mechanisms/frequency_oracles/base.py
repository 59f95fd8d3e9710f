"""The pure-protocol framework of LDP frequency oracles: the shared estimator, its exact variance, the channel.

Implements: [WBLJ17] T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
Estimation", USENIX Security 2017: the *pure protocol* framework (§3: every report ``y`` supports a set of
values; ``P(v ∈ Support(y)) = p*`` if the input is ``v`` and ``= q*`` otherwise), the unbiased estimator
``f̂_v = (C_v/n − q*)/(p* − q*)`` with ``C_v`` the number of reports supporting ``v``, and its variance
(Theorem 2)

    ``Var[f̂_v] = q*(1 − q*)/(n (p* − q*)²) + f_v (1 − p* − q*)/(n (p* − q*))``,

as the abstract base class :class:`FrequencyOracle` (the oracles themselves are in :mod:`.encodings`,
:mod:`.hashing` and :mod:`.subsets`).

Variance models
---------------
``inputs="fixed"`` is [WBLJ17]'s model: a fixed data set whose value frequencies are ``p`` (only the
privatization is random). ``inputs="iid"``: records drawn i.i.d. from ``p``; by the law of total variance it
adds the multinomial term ``p_v (1 − p_v)/n`` exactly (the fixed variance is affine in the frequencies).

Memory
------
Reports are generated in chunks of at most :data:`CHUNK_ELEMENTS` numbers, and a privatization whose reports
would exceed :data:`MAX_REPORT_BYTES` raises a ``ValueError`` (privatize in batches and add their
:meth:`FrequencyOracle.support_counts`, then call :meth:`FrequencyOracle.estimate_from_counts`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Literal

import numpy as np

from ..._validation import check_epsilon, check_finite_array, check_positive_int, check_probability_vector, fmt
from ..labels import _as_symbols
from ..mechanism import Mechanism, project_to_simplex

__all__ = ["CHUNK_ELEMENTS", "MAX_CHANNEL_ENTRIES", "MAX_REPORT_BYTES", "FrequencyOracle"]

#: Largest number of random numbers / support indicators held at once while privatizing or counting.
CHUNK_ELEMENTS: int = 1 << 22
#: Largest report array a single :meth:`FrequencyOracle.privatize` call returns (bytes).
MAX_REPORT_BYTES: int = 1 << 32
#: Largest ``N × M`` of an explicit channel matrix (:attr:`FrequencyOracle.mechanism`).
MAX_CHANNEL_ENTRIES: int = 1 << 22


def _uint_dtype(max_value: int) -> np.dtype:
    """Smallest unsigned integer dtype holding ``max_value``."""
    return np.min_scalar_type(max(int(max_value), 0))


def _check_inputs(inputs: object, n: int) -> np.ndarray:
    x = _as_symbols(inputs, n, "inputs")
    if x.ndim != 1:
        raise ValueError(f"inputs must be a 1-D array of symbols, got shape {x.shape}")
    return x


def _check_report_bytes(n_records: int, per_record: int, what: str) -> None:
    total = n_records * per_record
    if total > MAX_REPORT_BYTES:
        raise ValueError(
            f"inputs: {n_records} records would need {total / 2**30:.3g} GiB of {what} reports "
            f"(limit MAX_REPORT_BYTES = {MAX_REPORT_BYTES / 2**30:.3g} GiB); privatize in batches and add their "
            "support_counts, then call estimate_from_counts"
        )


def _pure_variance(ps: float, qs: float, gap: float, f: np.ndarray | float) -> np.ndarray:
    """``n · Var[f̂_v]`` of a pure protocol for a fixed data set ([WBLJ17], Theorem 2); ``inf`` if gap = 0."""
    if gap <= 0:
        return np.full(np.shape(f), np.inf)
    gap64 = np.float64(gap)
    with np.errstate(over="ignore", divide="ignore"):  # ε so small that gap² underflows: inf, as at ε = 0
        return qs * (1.0 - qs) / gap64 / gap64 + np.asarray(f) * (1.0 - ps - qs) / gap64


def _integer_reports(reports: object, name: str = "reports") -> np.ndarray:
    arr = np.asarray(reports)
    if not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    return arr


@dataclass(frozen=True)
class FrequencyOracle(ABC):
    """An ε-LDP frequency oracle in the pure-protocol form of [WBLJ17] (see the module docstring).

    Subclasses fix the report format (:meth:`privatize`), the support of a report (:meth:`support_counts`)
    and the constants ``p*`` (:attr:`p_star`) and ``q*`` (:attr:`q_star`). Everything else — the unbiased
    estimator with optional simplex projection, its exact variance, the explicit channel for small domains —
    is shared.

    Attributes
    ----------
    n : int
        Domain size N ≥ 2 (inputs are ``0, …, N − 1``).
    epsilon : float
        The LDP parameter ε ≥ 0 (finite). At ε = 0 the reports carry no information: privatization works,
        estimation raises and the variance is ``inf``.
    """

    n: int
    epsilon: float

    name: ClassVar[str] = "oracle"

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", check_positive_int(self.n, "n", minimum=2))
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    # --- pure-protocol constants ----------------------------------------------------------------------
    @property
    def _t(self) -> float:
        """``e^{−ε}`` (all constants are written in it: no overflow for large ε)."""
        return math.exp(-self.epsilon)

    @property
    def _s(self) -> float:
        """``1 − e^{−ε}``, accurate for small ε."""
        return -math.expm1(-self.epsilon)

    @property
    @abstractmethod
    def p_star(self) -> float:
        """``P(v ∈ Support(report) | input v)``."""

    @property
    @abstractmethod
    def q_star(self) -> float:
        """``P(v ∈ Support(report) | input x ≠ v)``."""

    @property
    @abstractmethod
    def gap(self) -> float:
        """``p* − q*`` (computed without cancellation; 0 exactly at ε = 0)."""

    # --- privatize -----------------------------------------------------------------------------------
    @abstractmethod
    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Privatize each record independently (vectorised); see the subclass for the report format."""

    @abstractmethod
    def support_counts(self, reports: object) -> np.ndarray:
        """``C_v``: how many reports support each value v (validated reports), shape (N,), int64."""

    @staticmethod
    def _n_reports(reports: object) -> int:
        return int(np.shape(reports)[0]) if np.ndim(reports) > 0 else 0

    # --- estimate ------------------------------------------------------------------------------------
    def estimate_from_counts(self, counts: object, n_reports: int, *, project: bool = True) -> np.ndarray:
        """The standard unbiased estimate ``(C_v/n − q*)/(p* − q*)`` ([WBLJ17], Theorem 2) from support counts.

        Parameters
        ----------
        counts : array_like, shape (N,)
            Support counts (e.g. the sum of :meth:`support_counts` over batches).
        n_reports : int
            Number of reports they come from.
        project : bool, default True
            Return the Euclidean projection of the unbiased estimate onto the probability simplex
            (:func:`~pml_design.mechanisms.mechanism.project_to_simplex`; biased but never farther from the
            truth in ℓ2). ``False``: the unbiased estimate (may be negative; GRR's sums to one).

        Returns
        -------
        numpy.ndarray, shape (N,)
        """
        c = check_finite_array(counts, "counts", ndim=1)
        if c.shape[0] != self.n:
            raise ValueError(f"counts must have length n = {self.n}, got length {c.shape[0]}")
        if np.any(c < 0):
            raise ValueError(f"counts must be >= 0, got {fmt(c)}")
        m = check_positive_int(n_reports, "n_reports")
        if self.gap <= 0:
            raise ValueError(
                f"epsilon = {self.epsilon!r}: the reports are independent of the inputs (p* = q*), so the "
                "frequencies cannot be estimated"
            )
        est = (c / m - self.q_star) / self.gap
        return project_to_simplex(est) if project else est

    def estimate(self, reports: object, *, project: bool = True) -> np.ndarray:
        """Estimate the input frequencies from reports of :meth:`privatize` ([WBLJ17], Theorem 2).

        Parameters
        ----------
        reports : array_like
            Reports in this oracle's format (validated).
        project : bool, default True
            Project the unbiased estimate onto the probability simplex (see :meth:`estimate_from_counts`).

        Returns
        -------
        numpy.ndarray, shape (N,)
        """
        counts = self.support_counts(reports)
        return self.estimate_from_counts(counts, self._n_reports(reports), project=project)

    # --- accuracy ------------------------------------------------------------------------------------
    def variance(
        self, p: object, n_reports: int = 1, *, inputs: Literal["fixed", "iid"] = "fixed"
    ) -> np.ndarray:
        """Exact per-value variance of the unbiased (unprojected) estimator from ``n_reports`` reports.

        ``Var[f̂_v] = [q*(1 − q*)/(p* − q*)² + p_v (1 − p* − q*)/(p* − q*)] / n`` ([WBLJ17], Theorem 2) for a
        fixed data set with frequencies ``p`` (``inputs="fixed"``); ``inputs="iid"`` (records drawn i.i.d.
        from ``p``) adds ``p_v (1 − p_v)/n``. Exact for every n: the supports of different records are
        independent Bernoulli(p*) / Bernoulli(q*) indicators (for OLH this uses that the hash family is
        exactly pairwise independent, see :class:`OptimizedLocalHashing`).

        Parameters
        ----------
        p : array_like, shape (N,)
            True frequencies (a probability vector).
        n_reports : int, default 1
            Number of reports; ``n_reports=1`` gives ``n · Var``.
        inputs : {"fixed", "iid"}

        Returns
        -------
        numpy.ndarray, shape (N,)
            ``inf`` everywhere at ε = 0.
        """
        f = check_probability_vector(p, "p", size=self.n)
        m = check_positive_int(n_reports, "n_reports")
        if inputs not in ("fixed", "iid"):
            raise ValueError(f"inputs must be 'fixed' or 'iid', got {inputs!r}")
        var = _pure_variance(self.p_star, self.q_star, self.gap, f)
        if inputs == "iid":
            var = var + f * (1.0 - f)
        return var / m

    def mse(self, p: object, n_reports: int = 1, *, inputs: Literal["fixed", "iid"] = "fixed") -> float:
        """``E‖f̂ − p‖²`` of the unbiased estimator: the sum of :meth:`variance` (same arguments)."""
        return float(np.sum(self.variance(p, n_reports, inputs=inputs)))

    # --- explicit channel (small domains) ------------------------------------------------------------
    @property
    @abstractmethod
    def n_outputs(self) -> int:
        """Number of distinct reports M (the columns of :attr:`mechanism`)."""

    @abstractmethod
    def _channel(self) -> np.ndarray:
        """The (N, M) row-stochastic matrix in the column order of :meth:`to_symbols`."""

    @abstractmethod
    def _symbols(self, reports: np.ndarray) -> np.ndarray:
        """Column indices of validated reports (called only when the channel is small)."""

    def _check_channel_size(self) -> None:
        m = self.n_outputs
        if self.n * m > MAX_CHANNEL_ENTRIES:
            raise ValueError(
                f"{self.name} with n = {self.n} has {m} possible reports; the explicit channel would have "
                f"{self.n * m} entries (limit MAX_CHANNEL_ENTRIES = {MAX_CHANNEL_ENTRIES}); it is meant for small "
                "domains"
            )

    @cached_property
    def mechanism(self) -> Mechanism:
        """The oracle as an explicit (N × M) channel, for exact checks (small domains only).

        Raises
        ------
        ValueError
            If ``N · M`` exceeds :data:`MAX_CHANNEL_ENTRIES`.
        """
        self._check_channel_size()
        return Mechanism(self._channel(), name=f"{self.name}{self.n}")

    @property
    def matrix(self) -> np.ndarray:
        """The (read-only) row-stochastic matrix of :attr:`mechanism`."""
        return self.mechanism.matrix

    def to_symbols(self, reports: object) -> np.ndarray:
        """Map reports to the column indices of :attr:`mechanism` (1-D int64; small domains only)."""
        self._check_channel_size()
        self.support_counts(reports)  # validates
        return self._symbols(np.asarray(reports))
