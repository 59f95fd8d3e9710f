"""Hadamard response (HR) as a pure protocol: one output in ``{0, …, K − 1}``, K = 2^m > N.

Implements: J. Acharya, Z. Sun, H. Zhang, "Hadamard response: estimating distributions privately, efficiently,
and with little communication", AISTATS 2019 (§3: the symbol ``x`` is the row ``x + 1`` of the Sylvester
Hadamard matrix ``H_K``, ``H[i, y] = (−1)^{popcount(i & y)}``; the report ``y`` has probability
``2e^ε/(K(e^ε + 1))`` where ``H[x + 1, y] = +1`` and ``2/(K(e^ε + 1))`` elsewhere).

It is a pure protocol in the sense of [WBLJ17] with ``Support(y) = {v : H[v + 1, y] = +1}``: each row holds
``K/2`` entries +1, so ``p* = e^ε/(e^ε + 1)``; two different rows agree on exactly ``K/2`` columns (half of them
+1 in both, half +1 only in the other), so ``q* = (K/4)(2e^ε + 2)/(K(e^ε + 1)) = 1/2`` for every N. The estimator
``(C_v/n − 1/2)/(p* − 1/2)`` and the exact variance ``n·Var[f̂_v] = (e^ε + 1)²/(e^ε − 1)² + f_v (1/2 − p*)/(p* − 1/2)``
(fixed data set) of :class:`~.base.FrequencyOracle` therefore apply (derivation in ``docs/ldp.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._validation import as_generator
from ..labels import _as_symbols
from .base import FrequencyOracle, _check_inputs

__all__ = ["HadamardResponse", "hadamard_columns", "hadamard_fisher_information", "hadamard_response",
           "walsh_hadamard"]


def walsh_hadamard(values: np.ndarray) -> np.ndarray:
    """``H_K @ values`` for the Sylvester Hadamard matrix (fast Walsh–Hadamard transform, O(K log K)).

    Implements: the Sylvester matrix ``H[i, y] = (−1)^{popcount(i & y)}`` of Hadamard response (Acharya, Sun &
    Zhang, AISTATS 2019, §3; module docstring), applied by the butterfly recursion ``H_2K = [[H_K, H_K],
    [H_K, −H_K]]``.

    Parameters
    ----------
    values : np.ndarray
        Length K = 2^m along axis 0 (extra axes are transformed alike); not modified.

    Returns
    -------
    np.ndarray
        A new float array of the same shape: ``H_K @ values``.
    """
    a = np.array(values, dtype=float)
    k = a.shape[0]
    h = 1
    while h < k:
        a = a.reshape((k // (2 * h), 2, h) + a.shape[1:])
        x, y = a[:, 0].copy(), a[:, 1].copy()
        a[:, 0], a[:, 1] = x + y, x - y
        a = a.reshape((k,) + a.shape[3:])
        h *= 2
    return a


def _parity(v: np.ndarray) -> np.ndarray:
    """popcount(v) mod 2 for non-negative int64 arrays."""
    v = v.astype(np.uint64)
    for s in (32, 16, 8, 4, 2, 1):
        v ^= v >> np.uint64(s)
    return (v & np.uint64(1)).astype(np.int64)


@dataclass(frozen=True)
class HadamardResponse(FrequencyOracle):
    """Hadamard response (Acharya, Sun & Zhang 2019): report ``y ∈ {0, …, K − 1}``, ``K = 2^⌈log2(N + 1)⌉``, with
    probability ∝ ``e^ε`` where ``H[x + 1, y] = +1`` and ∝ 1 elsewhere.

    Reports: 1-D int64 values in ``{0, …, K − 1}``. Support of ``y``: ``{v : popcount((v + 1) & y) even}``.
    ``p* = e^ε/(e^ε + 1)``, ``q* = 1/2`` (module docstring), so ``n·Var[f̂_v] = (e^ε + 1)²/(e^ε − 1)² + …`` — close
    to subset selection at small ε, with only K < 2N outputs. The channel is N × K.
    """

    name: ClassVar[str] = "HR"

    @property
    def size(self) -> int:
        """K = the smallest power of two above N (the output alphabet)."""
        return 1 << int(self.n).bit_length()

    @property
    def p_star(self) -> float:
        return 1.0 / (1.0 + self._t)

    @property
    def q_star(self) -> float:
        return 0.5

    @property
    def gap(self) -> float:
        return self._s / (2.0 * (1.0 + self._t))

    def privatize(self, inputs: object, *, rng: object = None) -> np.ndarray:
        """Privatize records: 1-D int inputs → 1-D int64 reports in ``{0, …, K − 1}`` (O(n) memory).

        A uniform ``y`` has the wanted sign ``H[x + 1, y]`` with probability 1/2; when it has not, flipping the
        lowest set bit of ``x + 1`` in ``y`` changes the parity, so the report is uniform on the wanted half.
        """
        x = _check_inputs(inputs, self.n)
        g = as_generator(rng)
        row = x.astype(np.int64) + 1
        y = g.integers(0, self.size, size=x.shape[0], dtype=np.int64)
        want_plus = g.random(x.shape[0]) < self.p_star
        wrong = (_parity(row & y) == 0) != want_plus
        low = row & -row
        return np.where(wrong, y ^ low, y)

    def support_counts(self, reports: object) -> np.ndarray:
        y = _as_symbols(reports, self.size, "reports")
        if y.ndim != 1:
            raise ValueError(f"reports must be a 1-D array of values in [0, {self.size}), got shape {y.shape}")
        hist = np.bincount(y, minlength=self.size).astype(float)
        signed = walsh_hadamard(hist)[1 : self.n + 1]  # Σ_y H[v + 1, y] · n_y
        return np.rint((y.shape[0] + signed) / 2.0).astype(np.int64)

    @property
    def n_outputs(self) -> int:
        return self.size

    def _channel(self) -> np.ndarray:
        lo = 2.0 * self._t / (self.size * (1.0 + self._t))  # 2/(K(e^ε + 1)), written in e^{−ε}
        hi = 2.0 / (self.size * (1.0 + self._t))
        return _two_valued(self.n, np.arange(self.size, dtype=np.int64), hi, lo)

    def _symbols(self, reports: np.ndarray) -> np.ndarray:
        return reports.astype(np.int64)


def hadamard_response(n: int, epsilon: float) -> HadamardResponse:
    """Hadamard response over ``{0, …, n − 1}`` at ε (Acharya, Sun & Zhang, AISTATS 2019).

    Parameters
    ----------
    n : int
        Domain size N ≥ 2.
    epsilon : float
        Finite ε ≥ 0.

    Returns
    -------
    HadamardResponse
        A :class:`~.base.FrequencyOracle` with ``K = 2^⌈log2(N + 1)⌉`` outputs, ``p* = e^ε/(e^ε + 1)``,
        ``q* = 1/2``.
    """
    return HadamardResponse(n, epsilon)


def hadamard_fisher_information(n: int, epsilon: float, pi: np.ndarray) -> np.ndarray:
    """The Fisher information of one Hadamard-response report about π, ``F = Σ_y w_y w_yᵀ/(π·w_y)``, without the
    N × K channel.

    Implements: the expected information of :func:`pml_design.cohort.combined_estimate` for Hadamard response
    (Acharya, Sun & Zhang, AISTATS 2019, §3) beyond ``MAX_CHANNEL_ENTRIES``. Column y is ``w_y = lo + a s_y``,
    ``s_y(x) = (1 + H[x + 1, y])/2``, ``lo = 2/(K(e^ε + 1))``, ``a = 2(e^ε − 1)/(K(e^ε + 1))``. With ``r_y = 1/(π·w_y)``,
    ``R = Σ r`` and ``R̂ = H_K r`` (one fast transform, :func:`walsh_hadamard`), ``Σ_y s_y(x) r_y = (R + R̂[x + 1])/2``,
    and, because ``H[i, y] H[j, y] = H[i ⊕ j, y]`` for the Sylvester matrix,
    ``Σ_y s_y(x) s_y(x′) r_y = (R + R̂[x + 1] + R̂[x′ + 1] + R̂[(x + 1) ⊕ (x′ + 1)])/4``. So
    ``F = lo² R 11ᵀ + lo·a (1uᵀ + u1ᵀ) + a² V``: two transforms of length K and O(N²) gathers, against N²K for the
    channel (N = 10 000: K = 16 384).

    Parameters
    ----------
    n : int
        N, the number of categories (the oracle has ``K = 2^⌈log2(N + 1)⌉`` outputs).
    epsilon : float
        The oracle's ε₁ > 0.
    pi : numpy.ndarray, shape (N,)
        The point π at which the information is taken (non-negative; outputs with ``π·w_y = 0`` are dropped).

    Returns
    -------
    numpy.ndarray, shape (N, N)
        The information F, exactly symmetric.
    """
    k = 1 << int(n).bit_length()
    t = math.exp(-epsilon)
    lo, a = 2.0 * t / (k * (1.0 + t)), 2.0 * (1.0 - t) / (k * (1.0 + t))  # (in e^{−ε}: no overflow)
    total = float(np.sum(pi))
    spread = np.zeros(k)
    spread[1 : n + 1] = pi
    q = lo * total + a * (total + walsh_hadamard(spread)) / 2.0  # π·w_y: π(S_y) = (Σπ + Σ_x π_x H[x + 1, y])/2
    r = np.divide(1.0, q, out=np.zeros(k), where=q > 0)  # (outputs with π·w_y = 0 dropped, as fisher_information)
    if not np.any(r > 0):
        return np.zeros((n, n))
    # A transform adds every r_y into every entry, with rounding ~u·Σr·log K, while the smallest entries sum only
    # r_y ≥ min r over a quarter of the columns: the transforms take the columns whose r is within WHT_RANGE of the
    # smallest (relative error ≲ 4u·log K·WHT_RANGE), the others are added column by column (a review: at ε₁ = 40 a
    # category of π at 0 left columns with π·w_y = lo ≈ 2e^{−ε}/K, whose r ≈ e^ε cancelled the others' sums away)
    wide = r > WHT_RANGE * r[r > 0].min()
    regular = np.where(wide, 0.0, r)
    big_r, hat = float(regular.sum()), walsh_hadamard(regular)
    rows = np.arange(1, n + 1, dtype=np.int64)
    u = (big_r + hat[rows]) / 2.0
    F = np.empty((n, n))
    step = max(1, 2**22 // n)
    for i in range(0, n, step):  # by blocks of rows (the xor indices of a block, not N² at once); the sums are
        # grouped so that (x, x′) and (x′, x) add the same numbers in the same order: F is exactly symmetric
        block = rows[i : i + step]
        v = ((big_r + hat[block[:, None] ^ rows[None, :]]) + (hat[block][:, None] + hat[rows][None, :])) / 4.0
        F[i : i + step] = lo * lo * big_r + lo * a * (u[i : i + step, None] + u[None, :]) + a * a * v
    ys = np.flatnonzero(wide)
    for j in range(0, ys.size, step):  # the others exactly, from their columns, by blocks
        cols = _two_valued(n, ys[j : j + step], lo + a, lo)  # lo + a·s_y(x)
        qy = pi @ cols
        cols = cols[:, qy > 0] / np.sqrt(qy[qy > 0])
        part = cols @ cols.T
        F += 0.5 * (part + part.T)
    return F


#: :func:`hadamard_fisher_information` transforms the outputs whose ``1/(π·w_y)`` is within this factor of the
#: smallest, and adds the others one by one.
WHT_RANGE: float = 1e4


def hadamard_columns(n: int, epsilon: float, reports: np.ndarray) -> np.ndarray:
    """The Hadamard-response channel's columns of the given reports, up to their common scale: ``1`` where
    ``H[x + 1, y] = +1`` and ``e^{−ε}`` elsewhere (N × len(reports)), without the N × K channel.

    Implements: the channel of Acharya, Sun & Zhang (AISTATS 2019, §3; module docstring) divided by its larger
    value ``2e^ε/(K(e^ε + 1))``, a constant of the likelihood (it cancels in the MLE and its Hessian).

    Parameters
    ----------
    n : int
        The alphabet size N.
    epsilon : float
        ε₁ ≥ 0.
    reports : numpy.ndarray
        1-D int64 reports in ``{0, …, K − 1}`` (validated by the caller).

    Returns
    -------
    numpy.ndarray, shape (N, len(reports))
    """
    return _two_valued(n, np.asarray(reports, dtype=np.int64), 1.0, math.exp(-epsilon))


def _two_valued(n: int, ys: np.ndarray, plus: float, minus: float) -> np.ndarray:
    """The channel's columns ``ys`` (N × len(ys)): ``plus`` where ``H[x + 1, y] = +1``, ``minus`` elsewhere; by blocks
    of columns (the parities of a block, not N × m at once). The one sign rule of :meth:`HadamardResponse._channel`,
    :func:`hadamard_columns` and :func:`hadamard_fisher_information`."""
    rows = np.arange(1, n + 1, dtype=np.int64)
    out = np.empty((n, ys.size))
    step = max(1, 2**22 // n)
    for j in range(0, ys.size, step):
        out[:, j : j + step] = np.where(_parity(rows[:, None] & ys[None, j : j + step]) == 0, plus, minus)
    return out
