"""LDP frequency oracles (GRR, OUE, OLH, k-subset selection) with their standard estimators, and the
asymptotic estimation MSE of any finite mechanism.

Implements
----------
* [WBLJ17] T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
  Estimation", USENIX Security 2017: the *pure protocol* framework (§3: every report ``y`` supports a set of
  values; ``P(v ∈ Support(y)) = p*`` if the input is ``v`` and ``= q*`` otherwise), the unbiased estimator
  ``f̂_v = (C_v/n − q*)/(p* − q*)`` with ``C_v`` the number of reports supporting ``v``, and its variance
  (Theorem 2)

      ``Var[f̂_v] = q*(1 − q*)/(n (p* − q*)²) + f_v (1 − p* − q*)/(n (p* − q*))``;

  Direct Encoding = generalized randomized response (GRR, §4.1), Optimized Unary Encoding (OUE, §4.3) and
  Optimized Local Hashing (OLH, §4.4).
* k-subset selection (SS): S. Wang, L. Huang, P. Wang, Y. Nie, H. Xu, W. Yang, X.-Y. Li, C. Qiao, "Mutual
  information optimally local private discrete distribution estimation", arXiv:1607.08025 (2016), and
  M. Ye, A. Barg, "Optimal schemes for discrete distribution estimation under locally differential
  privacy", IEEE Trans. Inf. Theory 64(8), 2018: report a k-subset ``S`` with ``P(S | x) ∝ e^ε`` if
  ``x ∈ S`` else ``1``, ``k ≈ N/(e^ε + 1)``. It is a pure protocol (derivation of p*, q* in
  ``docs/ldp.md``), so the same estimator and variance apply.
* :func:`estimation_mse`: the A-optimal (trace) Cramér–Rao bound of a channel for the distribution on the
  simplex, ``tr F(W)⁻¹ − ‖P‖²`` with ``F(W) = Σ_y w_y w_yᵀ/(P·w_y)`` (Fisher information of one report;
  the ``− ‖P‖²`` is the sum-to-one constraint: Gorman & Hero 1990, Stoica & Ng 1998, "On the Cramér–Rao
  bound under parametric constraints"). It is the per-report asymptotic MSE of the MLE (the IBU limit).

Variance models
---------------
``inputs="fixed"`` is [WBLJ17]'s model: a fixed data set whose value frequencies are ``p`` (only the
privatization is random). ``inputs="iid"``: records drawn i.i.d. from ``p``; by the law of total variance it
adds the multinomial term ``p_v (1 − p_v)/n`` exactly (the fixed variance is affine in the frequencies).
:func:`estimation_mse` is in the i.i.d. model.

Memory
------
Reports of OUE are an (n, N) boolean matrix (1 byte per bit) and of subset selection an (n, k) matrix of the
smallest unsigned integer type holding N − 1; temporaries are generated in chunks of at most
:data:`CHUNK_ELEMENTS` numbers, and a privatization whose reports would exceed :data:`MAX_REPORT_BYTES`
raises a ``ValueError`` (privatize in batches and add their :meth:`FrequencyOracle.support_counts`, then
call :meth:`FrequencyOracle.estimate_from_counts`).
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Literal

import numpy as np

from .._validation import (
    as_generator,
    check_epsilon,
    check_finite_array,
    check_mechanism,
    check_positive_int,
    check_probability_vector,
    fmt,
)
from .mechanism import Mechanism, _as_symbols, project_to_simplex

__all__ = [
    "CHUNK_ELEMENTS",
    "MAX_CHANNEL_ENTRIES",
    "MAX_REPORT_BYTES",
    "FrequencyOracle",
    "GeneralizedRandomizedResponse",
    "OptimizedLocalHashing",
    "OptimizedUnaryEncoding",
    "SubsetSelection",
    "estimation_mse",
    "grr",
    "olh",
    "oue",
    "subset_selection",
]

#: Largest number of random numbers / support indicators held at once while privatizing or counting.
CHUNK_ELEMENTS: int = 1 << 22
#: Largest report array a single :meth:`FrequencyOracle.privatize` call returns (bytes).
MAX_REPORT_BYTES: int = 1 << 32
#: Largest ``N × M`` of an explicit channel matrix (:attr:`FrequencyOracle.mechanism`).
MAX_CHANNEL_ENTRIES: int = 1 << 22
#: Largest hash range g of OLH (the default ``round(e^ε + 1)`` is clamped to it).
MAX_HASH_RANGE: int = (1 << 31) - 1


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


# ======================================================================================================
@dataclass(frozen=True)
class GeneralizedRandomizedResponse(FrequencyOracle):
    """Generalized (k-ary) randomized response: report the input with probability ``e^ε/(e^ε + N − 1)``,
    else one of the other N − 1 values uniformly ([WBLJ17] §4.1, "Direct Encoding").

    Reports: int64 values in ``{0, …, N − 1}``. Support of ``y``: ``{y}``. ``p* = e^ε/(e^ε + N − 1)``,
    ``q* = 1/(e^ε + N − 1)``. The channel is :func:`~pml_design.mechanisms.closed_form.randomized_response`'s.
    """

    name: ClassVar[str] = "GRR"

    @property
    def p_star(self) -> float:
        return 1.0 / (1.0 + (self.n - 1) * self._t)

    @property
    def q_star(self) -> float:
        return self._t / (1.0 + (self.n - 1) * self._t)

    @property
    def gap(self) -> float:
        return self._s / (1.0 + (self.n - 1) * self._t)

    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Privatize records: 1-D int inputs in ``{0, …, N − 1}`` → 1-D int64 reports (O(n) memory)."""
        x = _check_inputs(inputs, self.n)
        g = as_generator(rng)
        keep = g.random(x.shape[0]) < self.p_star
        other = (x + 1 + g.integers(0, self.n - 1, size=x.shape[0])) % self.n
        return np.where(keep, x, other)

    def support_counts(self, reports: object) -> np.ndarray:
        y = _as_symbols(reports, self.n, "reports")
        if y.ndim != 1:
            raise ValueError(f"reports must be a 1-D array of values, got shape {y.shape}")
        return np.bincount(y, minlength=self.n).astype(np.int64)

    @property
    def n_outputs(self) -> int:
        return self.n

    def _channel(self) -> np.ndarray:
        # randomized_response's matrix, written in e^{−ε} (no overflow for ε > 709)
        W = np.full((self.n, self.n), self.q_star)
        np.fill_diagonal(W, self.p_star)
        return W

    def _symbols(self, reports: np.ndarray) -> np.ndarray:
        return reports.astype(np.int64)


# ======================================================================================================
@dataclass(frozen=True)
class OptimizedUnaryEncoding(FrequencyOracle):
    """Optimized unary encoding: one-hot encode the input, keep its 1 with probability 1/2 and turn every 0
    into a 1 with probability ``q = 1/(e^ε + 1)`` ([WBLJ17] §4.3).

    Reports: an (n_records, N) boolean bit matrix. Support: the set bits. ``p* = 1/2``, ``q* = 1/(e^ε + 1)``;
    ``n·Var = 4e^ε/(e^ε − 1)² + f_v`` (fixed data set). The channel is on ``{0, 1}^N`` (column ``Σ_j b_j 2^j``).
    """

    name: ClassVar[str] = "OUE"

    @property
    def p_star(self) -> float:
        return 0.5

    @property
    def q_star(self) -> float:
        return self._t / (1.0 + self._t)

    @property
    def gap(self) -> float:
        return self._s / (2.0 * (1.0 + self._t))

    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Privatize records: 1-D int inputs → (n_records, N) bool bits; chunked (≤ CHUNK_ELEMENTS uniforms)."""
        x = _check_inputs(inputs, self.n)
        _check_report_bytes(x.shape[0], self.n, "OUE (n_records × N bytes)")
        g = as_generator(rng)
        out = np.empty((x.shape[0], self.n), dtype=bool)
        step = max(1, CHUNK_ELEMENTS // self.n)
        q = self.q_star
        for lo in range(0, x.shape[0], step):
            xs = x[lo : lo + step]
            bits = g.random((xs.shape[0], self.n)) < q
            bits[np.arange(xs.shape[0]), xs] = g.random(xs.shape[0]) < 0.5
            out[lo : lo + step] = bits
        return out

    def support_counts(self, reports: object) -> np.ndarray:
        b = _integer_reports(reports)
        if b.ndim != 2 or b.shape[1] != self.n:
            raise ValueError(f"reports must be an (n_records, {self.n}) bit matrix, got shape {b.shape}")
        if b.shape[0] == 0:
            raise ValueError("reports must not be empty")
        if b.dtype != np.bool_ and np.any((b != 0) & (b != 1)):
            raise ValueError("reports must contain only 0/1 bits")
        return np.count_nonzero(b, axis=0).astype(np.int64)

    @property
    def n_outputs(self) -> int:
        return 1 << self.n

    def _channel(self) -> np.ndarray:
        bits = (np.arange(self.n_outputs)[:, None] >> np.arange(self.n)[None, :]) & 1  # (M, N)
        W = np.empty((self.n, self.n_outputs))
        for x in range(self.n):  # N ≤ 22 rows (channel size limit)
            p1 = np.full(self.n, self.q_star)
            p1[x] = self.p_star
            W[x] = np.prod(np.where(bits == 1, p1, 1.0 - p1), axis=1)
        return W

    def _symbols(self, reports: np.ndarray) -> np.ndarray:
        return (reports.astype(np.int64) << np.arange(self.n)).sum(axis=1)


# ======================================================================================================
@dataclass(frozen=True)
class OptimizedLocalHashing(FrequencyOracle):
    """Optimized local hashing: hash the input into ``{0, …, g − 1}`` with a per-record random hash and
    report the hash and the hashed value perturbed by g-ary randomized response ([WBLJ17] §4.4).

    Hash family: with ``L = bit_length(N − 1)`` and ``bits(x) ∈ {0, 1}^L`` the binary digits of x,
    ``H_{a,b}(x) = (Σ_j a_j bits_j(x) + b) mod g`` with ``a ∈ Z_g^L``, ``b ∈ Z_g`` uniform. For ``x ≠ v`` the
    difference ``H(x) − H(v) = Σ_j a_j (bits_j(x) − bits_j(v))`` has a coefficient ±1, so it is uniform on
    ``Z_g`` for every g (prime or not): the family is exactly pairwise independent, the collision probability
    is exactly 1/g, and [WBLJ17]'s variance (derived there for an idealised random hash) is **exact** here.

    Reports: an (n_records, L + 2) array of the smallest unsigned type holding g − 1, columns
    ``[a_0, …, a_{L−1}, b, y]``. Support of ``(a, b, y)``: ``{v : H_{a,b}(v) = y}``.
    ``p* = e^ε/(e^ε + g − 1)``, ``q* = 1/g``. The channel has ``g^{L+2}`` columns, index
    ``Σ_j a_j g^j + b g^L + y g^{L+1}``.

    Attributes
    ----------
    g : int
        Hash range; default ``round(e^ε + 1)`` ([WBLJ17]'s optimum ``g = e^ε + 1``), at least 2 and at most
        :data:`MAX_HASH_RANGE`.
    """

    g: int | None = None

    name: ClassVar[str] = "OLH"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.g is None:
            big = self.epsilon >= math.log(MAX_HASH_RANGE)
            g = MAX_HASH_RANGE if big else max(2, round(math.exp(self.epsilon) + 1.0))
        else:
            g = check_positive_int(self.g, "g", minimum=2)
            if g > MAX_HASH_RANGE:
                raise ValueError(f"g must be <= {MAX_HASH_RANGE}, got {g}")
        object.__setattr__(self, "g", int(g))

    @property
    def n_bits(self) -> int:
        """L = number of binary digits of the inputs."""
        return max(1, (self.n - 1).bit_length())

    @property
    def p_star(self) -> float:
        return 1.0 / (1.0 + (self.g - 1) * self._t)  # type: ignore[operator]

    @property
    def q_star(self) -> float:
        return 1.0 / self.g  # type: ignore[operator]

    @property
    def gap(self) -> float:
        g = self.g
        return (g - 1) * self._s / (g * (1.0 + (g - 1) * self._t))  # type: ignore[operator]

    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Privatize records: 1-D int inputs → (n_records, L + 2) reports ``[a, b, y]`` (see the class)."""
        x = _check_inputs(inputs, self.n)
        g, L = int(self.g), self.n_bits  # type: ignore[arg-type]
        dt = _uint_dtype(g - 1)
        _check_report_bytes(x.shape[0], (L + 2) * dt.itemsize, "OLH")
        gen = as_generator(rng)
        out = np.empty((x.shape[0], L + 2), dtype=dt)
        step = max(1, CHUNK_ELEMENTS // (L + 2))
        shifts = np.arange(L)
        for lo in range(0, x.shape[0], step):
            xs = x[lo : lo + step]
            m = xs.shape[0]
            ab = gen.integers(0, g, size=(m, L + 1), dtype=np.int64)
            bits = (xs[:, None] >> shifts) & 1
            h = ((ab[:, :L] * bits).sum(axis=1) + ab[:, L]) % g
            keep = gen.random(m) < self.p_star
            y = np.where(keep, h, (h + 1 + gen.integers(0, g - 1, size=m)) % g)
            out[lo : lo + m, : L + 1] = ab
            out[lo : lo + m, L + 1] = y
        return out

    def _validated(self, reports: object) -> np.ndarray:
        r = _integer_reports(reports)
        L = self.n_bits
        if r.ndim != 2 or r.shape[1] != L + 2:
            raise ValueError(f"reports must be an (n_records, {L + 2}) array [a_0..a_{L - 1}, b, y], got shape {r.shape}")
        if r.shape[0] == 0:
            raise ValueError("reports must not be empty")
        if np.any(r < 0) or np.any(r >= self.g):  # type: ignore[operator]
            raise ValueError(f"reports must lie in [0, g = {self.g}); found values outside")
        return r

    def support_counts(self, reports: object) -> np.ndarray:
        r = self._validated(reports)
        g, L = int(self.g), self.n_bits  # type: ignore[arg-type]
        dt = _uint_dtype(2 * g - 2)
        counts = np.zeros(self.n, dtype=np.int64)
        width = 1 << L  # < 2N
        step = max(1, CHUNK_ELEMENTS // width)
        for lo in range(0, r.shape[0], step):
            chunk = r[lo : lo + step].astype(np.int64)
            target = ((chunk[:, L + 1] - chunk[:, L]) % g).astype(dt)  # H(v) = y  ⇔  a·bits(v) ≡ y − b (mod g)
            a = np.ascontiguousarray(chunk[:, :L].T.astype(dt))  # (L, m)
            # table of a·bits(v) mod g for v < 2^L (rows) by doubling: bit j adds a_j to the first 2^j rows
            tab = np.zeros((width, chunk.shape[0]), dtype=dt)
            for j in range(L):
                w = 1 << j
                blk = tab[:w] + a[j]
                tab[w : 2 * w] = np.minimum(blk, blk - dt.type(g))  # unsigned: blk − g wraps around if blk < g
            counts += np.count_nonzero(tab[: self.n] == target, axis=1)
        return counts

    @property
    def n_outputs(self) -> int:
        return int(self.g) ** (self.n_bits + 2)  # type: ignore[arg-type]

    def _channel(self) -> np.ndarray:
        g, L = int(self.g), self.n_bits  # type: ignore[arg-type]
        o = np.arange(self.n_outputs)
        digits = (o[:, None] // g ** np.arange(L + 2)[None, :]) % g  # (M, L + 2): a, b, y
        bits = (np.arange(self.n)[:, None] >> np.arange(L)[None, :]) & 1  # (N, L)
        h = (bits @ digits[:, :L].T + digits[:, L][None, :]) % g  # (N, M)
        p_keep = self.p_star
        W = np.where(h == digits[:, L + 1][None, :], p_keep, (1.0 - p_keep) / (g - 1))
        return W / float(g) ** (L + 1)

    def _symbols(self, reports: np.ndarray) -> np.ndarray:
        g = int(self.g)  # type: ignore[arg-type]
        return (reports.astype(np.int64) * g ** np.arange(self.n_bits + 2)).sum(axis=1)


# ======================================================================================================
def _ss_constants(n: int, k: int, t: float, s: float) -> tuple[float, float, float]:
    """(p*, q*, p* − q*) of k-subset selection with ``t = e^{−ε}``, ``s = 1 − t`` (docs/ldp.md)."""
    d = k + (n - k) * t
    p = k / d
    q = k * ((k - 1) + (n - k) * t) / ((n - 1) * d)
    return p, q, k * (n - k) * s / ((n - 1) * d)


def _ss_default_k(n: int, epsilon: float) -> int:
    """``k ∈ {⌊N/(e^ε+1)⌋, ⌈N/(e^ε+1)⌉} ∩ [1, N − 1]`` with the smaller MSE at the uniform distribution."""
    t, s = math.exp(-epsilon), -math.expm1(-epsilon)
    k0 = n * t / (1.0 + t)
    cands = sorted({min(max(c, 1), n - 1) for c in (math.floor(k0), math.ceil(k0))})

    def total(k: int) -> float:  # n · MSE at the uniform distribution (fixed data set)
        return float(np.sum(_pure_variance(*_ss_constants(n, k, t, s), np.full(n, 1.0 / n))))

    return min(cands, key=total)


@dataclass(frozen=True)
class SubsetSelection(FrequencyOracle):
    """k-subset selection: report a k-subset S of the domain with ``P(S | x) ∝ e^ε`` if ``x ∈ S`` else 1
    (S. Wang et al. 2016; Ye & Barg 2018).

    Sampling: with probability ``p* = k e^ε/(k e^ε + N − k)`` the subset contains x plus k − 1 uniform other
    values, else k uniform values other than x. Support of S: S itself.
    ``q* = k[(k − 1)e^ε + N − k] / ((N − 1)(k e^ε + N − k))`` (derivation in ``docs/ldp.md``); k = 1 is GRR.

    Reports: an (n_records, k) array (smallest unsigned type holding N − 1) of distinct values per row, in
    no particular order. The channel has ``C(N, k)`` columns, the subsets in colexicographic order
    (index ``Σ_i C(c_i, i + 1)`` for the sorted subset ``c_0 < … < c_{k−1}``).

    Attributes
    ----------
    k : int
        Subset size in ``[1, N − 1]``; default: the better of ``⌊N/(e^ε + 1)⌋`` and ``⌈N/(e^ε + 1)⌉``
        (Ye & Barg's optimal ``k ≈ N/(e^ε + 1)``) by the MSE at the uniform distribution.
    """

    k: int | None = None

    name: ClassVar[str] = "SS"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.k is None:
            k = _ss_default_k(self.n, self.epsilon)
        else:
            k = check_positive_int(self.k, "k")
            if k > self.n - 1:
                raise ValueError(f"k must be <= n - 1 = {self.n - 1} (k = n reports carry no information), got {k}")
        object.__setattr__(self, "k", int(k))

    @property
    def _constants(self) -> tuple[float, float, float]:
        return _ss_constants(self.n, int(self.k), self._t, self._s)  # type: ignore[arg-type]

    @property
    def p_star(self) -> float:
        return self._constants[0]

    @property
    def q_star(self) -> float:
        return self._constants[1]

    @property
    def gap(self) -> float:
        return self._constants[2]

    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Privatize records: 1-D int inputs → (n_records, k) subsets; O(N) random keys per record, chunked."""
        x = _check_inputs(inputs, self.n)
        k = int(self.k)  # type: ignore[arg-type]
        dt = _uint_dtype(self.n - 1)
        _check_report_bytes(x.shape[0], k * dt.itemsize, "subset-selection")
        gen = as_generator(rng)
        out = np.empty((x.shape[0], k), dtype=dt)
        step = max(1, CHUNK_ELEMENTS // self.n)
        for lo in range(0, x.shape[0], step):
            xs = x[lo : lo + step]
            m = xs.shape[0]
            keys = gen.random((m, self.n))
            include = gen.random(m) < self.p_star
            # x first (key −1) if included, last (key 2) otherwise; the others in uniform random order
            keys[np.arange(m), xs] = np.where(include, -1.0, 2.0)
            out[lo : lo + m] = np.argpartition(keys, k - 1, axis=1)[:, :k]
        return out

    def _validated(self, reports: object) -> np.ndarray:
        r = _integer_reports(reports)
        k = int(self.k)  # type: ignore[arg-type]
        if r.ndim != 2 or r.shape[1] != k:
            raise ValueError(f"reports must be an (n_records, k = {k}) array of subsets, got shape {r.shape}")
        if r.shape[0] == 0:
            raise ValueError("reports must not be empty")
        if np.any(r < 0) or np.any(r >= self.n):
            raise ValueError(f"reports must lie in [0, n = {self.n}); found values outside")
        if k > 1 and np.any(np.diff(np.sort(r, axis=1), axis=1) == 0):
            raise ValueError("reports must hold k distinct values per row")
        return r

    def support_counts(self, reports: object) -> np.ndarray:
        r = self._validated(reports)
        return np.bincount(r.ravel().astype(np.int64), minlength=self.n).astype(np.int64)

    @property
    def n_outputs(self) -> int:
        return math.comb(self.n, int(self.k))  # type: ignore[arg-type]

    def _binomials(self) -> np.ndarray:
        k = int(self.k)  # type: ignore[arg-type]
        return np.array([[math.comb(a, b) for b in range(k + 1)] for a in range(self.n)], dtype=np.int64)

    def _channel(self) -> np.ndarray:
        k = int(self.k)  # type: ignore[arg-type]
        subsets = np.array(list(itertools.combinations(range(self.n), k)), dtype=np.int64)  # (M, k)
        member = np.zeros((subsets.shape[0], self.n), dtype=bool)
        np.put_along_axis(member, subsets, True, axis=1)
        t = self._t
        z = math.comb(self.n - 1, k - 1) + math.comb(self.n - 1, k) * t  # normaliser (scaled by e^{−ε})
        W = np.empty((self.n, subsets.shape[0]))
        W[:, self._symbols(subsets)] = np.where(member.T, 1.0 / z, t / z)
        return W

    def _symbols(self, reports: np.ndarray) -> np.ndarray:
        c = np.sort(reports.astype(np.int64), axis=1)
        return self._binomials()[c, np.arange(1, c.shape[1] + 1)].sum(axis=1)


# ======================================================================================================
def grr(n: int, epsilon: float) -> GeneralizedRandomizedResponse:
    """Generalized randomized response over ``{0, …, n − 1}`` at ε ([WBLJ17] §4.1, "Direct Encoding").

    Parameters
    ----------
    n : int
        Domain size N ≥ 2.
    epsilon : float
        Finite ε ≥ 0 (ε = 0: reports independent of the inputs).

    Returns
    -------
    GeneralizedRandomizedResponse
    """
    return GeneralizedRandomizedResponse(n, epsilon)


def oue(n: int, epsilon: float) -> OptimizedUnaryEncoding:
    """Optimized unary encoding over ``{0, …, n − 1}`` at ε ([WBLJ17] §4.3).

    Parameters
    ----------
    n : int
        Domain size N ≥ 2.
    epsilon : float
        Finite ε ≥ 0.

    Returns
    -------
    OptimizedUnaryEncoding
    """
    return OptimizedUnaryEncoding(n, epsilon)


def olh(n: int, epsilon: float, *, g: int | None = None) -> OptimizedLocalHashing:
    """Optimized local hashing over ``{0, …, n − 1}`` at ε ([WBLJ17] §4.4), exactly pairwise-independent hashes.

    Parameters
    ----------
    n : int
        Domain size N ≥ 2.
    epsilon : float
        Finite ε ≥ 0.
    g : int, optional
        Hash range ≥ 2; default ``round(e^ε + 1)``.

    Returns
    -------
    OptimizedLocalHashing
    """
    return OptimizedLocalHashing(n, epsilon, g)


def subset_selection(n: int, epsilon: float, *, k: int | None = None) -> SubsetSelection:
    """k-subset selection over ``{0, …, n − 1}`` at ε (S. Wang et al. 2016; Ye & Barg 2018).

    Parameters
    ----------
    n : int
        Domain size N ≥ 2.
    epsilon : float
        Finite ε ≥ 0.
    k : int, optional
        Subset size in ``[1, n − 1]``; default ≈ ``n/(e^ε + 1)`` (see :class:`SubsetSelection`).

    Returns
    -------
    SubsetSelection
    """
    return SubsetSelection(n, epsilon, k)


# ======================================================================================================
def estimation_mse(matrix: object, prior: object, *, rcond: float = 1e-12) -> float:
    """Per-report asymptotic MSE ``n · E‖P̂ − P‖²`` of the MLE of the input distribution from a channel.

    ``tr F⁻¹ − ‖P‖²`` with the Fisher information of one report ``F = Σ_y w_y w_yᵀ/(P·w_y)`` (``w_y`` the
    columns of the row-stochastic W): the trace of the Cramér–Rao bound on the simplex (the constraint
    ``Σ P = 1`` removes ``P Pᵀ`` because ``F P = 1``; Gorman & Hero 1990, Stoica & Ng 1998). It is the
    A-optimality criterion of the channel, attained asymptotically by the MLE (the IBU fixed point,
    :meth:`Mechanism.estimate`); for a square invertible W it equals the exact ``n · MSE`` of the unbiased
    inversion estimator (e.g. :meth:`GeneralizedRandomizedResponse.mse` with ``inputs="iid"``).

    Outputs with ``P·w_y = 0`` (possible when P has zeros) carry infinite information along ``w_y``: the value
    is the continuous limit, ``tr((QᵀFQ)⁻¹) − ‖P‖²`` with Q an orthonormal basis of ``{w_y : P·w_y = 0}^⊥``.

    Parameters
    ----------
    matrix : array_like or Mechanism, shape (N, M)
        Row-stochastic channel (rows = inputs).
    prior : array_like, shape (N,)
        The true distribution P.
    rcond : float, default 1e-12
        F is treated as singular when its smallest eigenvalue is ≤ ``rcond`` times its largest.

    Returns
    -------
    float
        ``+inf`` if F is singular (the channel cannot identify every category, e.g. ε = 0 or M < N).
    """
    W = check_mechanism(matrix, "matrix")
    W = W / W.sum(axis=1, keepdims=True)
    p = check_probability_vector(prior, "prior", size=W.shape[0])
    q = p @ W
    used = q > 0
    Wu = W[:, used]
    F = (Wu / q[used]) @ Wu.T
    F = 0.5 * (F + F.T)
    zero_cols = W[:, ~used]
    if zero_cols.shape[1] and zero_cols.max() > 0:
        U, sv, _ = np.linalg.svd(zero_cols, full_matrices=True)
        rank = int(np.sum(sv > sv[0] * W.shape[0] * np.finfo(float).eps))
        Q = U[:, rank:]
        F = Q.T @ F @ Q
    lam = np.linalg.eigvalsh(F)
    if lam[0] <= rcond * lam[-1]:
        return math.inf
    return float(max(np.sum(1.0 / lam) - p @ p, 0.0))
