"""Direct encoding (generalized randomized response) and optimized unary encoding, as pure protocols.

Implements: [WBLJ17] §4.1 (Direct Encoding = generalized randomized response, GRR: ``p* = e^ε/(e^ε + N − 1)``,
``q* = 1/(e^ε + N − 1)``) and §4.3 (Optimized Unary Encoding, OUE: ``p* = 1/2``, ``q* = 1/(e^ε + 1)``), with the
estimator and variance of [WBLJ17] Theorem 2 (:class:`~.base.FrequencyOracle`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._validation import as_generator
from ..labels import _as_symbols
from .base import CHUNK_ELEMENTS, FrequencyOracle, _check_inputs, _check_report_bytes, _integer_reports

__all__ = ["GeneralizedRandomizedResponse", "OptimizedUnaryEncoding", "grr", "oue"]


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
