"""Optimized local hashing (OLH) with an exactly pairwise-independent hash family.

Implements: [WBLJ17] §4.4 (Optimized Local Hashing: hash range ``g = e^ε + 1``, ``p* = e^ε/(e^ε + g − 1)``,
``q* = 1/g``) with the estimator and variance of [WBLJ17] Theorem 2 (:class:`~.base.FrequencyOracle`), which are
exact here because the linear hash family ``H_{a,b}(x) = (a·bits(x) + b) mod g`` is exactly pairwise
independent (see :class:`OptimizedLocalHashing`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._validation import as_generator, check_positive_int
from .base import CHUNK_ELEMENTS, FrequencyOracle, _check_inputs, _check_report_bytes, _integer_reports, _uint_dtype

__all__ = ["MAX_HASH_RANGE", "OptimizedLocalHashing", "olh"]

#: Largest hash range g of OLH (the default ``round(e^ε + 1)`` is clamped to it).
MAX_HASH_RANGE: int = (1 << 31) - 1


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
