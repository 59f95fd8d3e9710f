"""k-subset selection as a pure protocol (reports a k-subset; the optimal k ≈ N/(e^ε + 1)).

Implements: k-subset selection (SS) of S. Wang, L. Huang, P. Wang, Y. Nie, H. Xu, W. Yang, X.-Y. Li, C. Qiao,
"Mutual information optimally local private discrete distribution estimation", arXiv:1607.08025 (2016), and
M. Ye, A. Barg, "Optimal schemes for discrete distribution estimation under locally differential privacy",
IEEE Trans. Inf. Theory 64(8), 2018: report a k-subset ``S`` with ``P(S | x) ∝ e^ε`` if ``x ∈ S`` else ``1``. It
is a pure protocol (derivation of p*, q* in ``docs/ldp.md``; computed by
:func:`pml_design.priors.subset_selection_constants`, which the radius of a ball built on its reports shares),
so the estimator and variance of [WBLJ17] Theorem 2 (:class:`~.base.FrequencyOracle`) apply.
:func:`subset_fisher_information`: the expected Fisher information of one report over all ``C(N, k)`` subsets
without listing them (an integral over elementary symmetric polynomials; docs/design.md §11.2).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._validation import as_generator, check_positive_int
from ...priors import subset_selection_constants
from .base import (
    CHUNK_ELEMENTS,
    FrequencyOracle,
    _check_inputs,
    _check_report_bytes,
    _integer_reports,
    _pure_variance,
    _uint_dtype,
)

__all__ = ["FISHER_WORK", "SubsetSelection", "subset_fisher_information", "subset_selection"]


def _ss_default_k(n: int, epsilon: float) -> int:
    """``k ∈ {⌊N/(e^ε+1)⌋, ⌈N/(e^ε+1)⌉} ∩ [1, N − 1]`` with the smaller MSE at the uniform distribution."""
    t = math.exp(-epsilon)
    k0 = n * t / (1.0 + t)
    cands = sorted({min(max(c, 1), n - 1) for c in (math.floor(k0), math.ceil(k0))})

    def total(k: int) -> float:  # n · MSE at the uniform distribution (fixed data set)
        return float(np.sum(_pure_variance(*subset_selection_constants(n, k, epsilon), np.full(n, 1.0 / n))))

    return min(cands, key=total)


@dataclass(frozen=True)
class SubsetSelection(FrequencyOracle):
    """k-subset selection: report a k-subset S of the domain with ``P(S | x) ∝ e^ε`` if ``x ∈ S`` else 1
    (S. Wang et al. 2016; Ye & Barg 2018).

    Sampling: with probability ``p* = k e^ε/(k e^ε + N − k)`` the subset contains x plus k − 1 uniform other
    values, else k uniform values other than x. Support of S: S itself.
    ``q* = k[(k − 1)e^ε + N − k] / ((N − 1)(k e^ε + N − k))`` (derivation in ``docs/ldp.md``); k = 1 is GRR.

    Reports: an (n_records, k) array (smallest unsigned type holding N − 1) of distinct values per row, each
    row in increasing order (a function of the subset alone: the order drawn would reveal the input). The channel has ``C(N, k)`` columns, the subsets in colexicographic order
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
        return subset_selection_constants(self.n, int(self.k), self.epsilon)  # type: ignore[arg-type]

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
            # sorted: argpartition leaves x (key −1) in front, so the order of a row would reveal the input
            out[lo : lo + m] = np.sort(np.argpartition(keys, k - 1, axis=1)[:, :k], axis=1)
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


#: Work budget (``N² · k`` times the quadrature nodes) of :func:`subset_fisher_information`; above it, None.
FISHER_WORK: float = 4e8


def subset_fisher_information(n: int, k: int, epsilon: float, prior: np.ndarray, *, step: float = 0.25,
                              max_work: float | None = None) -> np.ndarray | None:
    """``F = Σ_S w_S w_Sᵀ/(P·w_S)`` of one k-subset-selection report, summed over all ``C(N, k)`` subsets, unlisted.

    Implements: the expected Fisher information of subset selection (S. Wang et al. 2016; Ye & Barg 2018) at P, the
    ``F(W)`` of :func:`~.fisher.fisher_information` for its channel ``w_S = (t·1 + (1 − t)·1_S)/z``, ``t = e^{−ε}``,
    ``z = C(N−1, k−1) + C(N−1, k)·t``. With ``a_S = P·(z w_S) = t + (1 − t)P(S)`` it is
    ``F = [t² A 11ᵀ + t(1 − t)(b1ᵀ + 1bᵀ) + (1 − t)² B]/z`` where ``B_xy = Σ_{S ∋ x, y} 1/a_S`` (``b = diag B``,
    ``A = Σ_x b_x/k``). Each ``1/a = ∫₀^∞ e^{−σa} dσ`` turns the sums over subsets into elementary symmetric
    polynomials of ``u_i = e^{−σ(1 − t)P_i}``: ``B_xy = ∫ e^{−σt} u_x u_y e_{k−2}(u without x, y) dσ`` (and
    ``e_{k−1}(u without x)`` on the diagonal), computed by prefix/suffix products (sums of positive terms: no
    cancellation), in ``O(N² k)`` per node. The integral is the trapezoid rule in ``log σ`` with ``step``, whose
    error for these integrands (analytic in the strip ``|Im log σ| < π/2``) is about ``e^{−π²/step}`` (≈ 1e-17 at
    0.25), on ``[1e-17, 40/a_min]``. Checked by ``F P = 1`` (true of every expected information): None if it fails.

    Parameters
    ----------
    n, k : int
        N ≥ 2 values, subsets of size 1 ≤ k ≤ N − 1 (not validated).
    epsilon : float
        ε ≥ 0.
    prior : numpy.ndarray, shape (N,)
        The probability vector P (zeros allowed).
    step : float, default 0.25
        Node spacing in ``log σ``.
    max_work : float, optional
        Largest ``N² · k · nodes`` (default: :data:`FISHER_WORK`, read at the call); above it None.

    Returns
    -------
    numpy.ndarray of shape (N, N), or None
        F, symmetric; None above ``max_work`` or when the check ``F P = 1`` fails.
    """
    p = np.asarray(prior, dtype=float)
    t, s1 = math.exp(-epsilon), -math.expm1(-epsilon)
    a_min = t + s1 * float(np.sort(p)[:k].sum())
    if not a_min > 0:
        return None
    nodes = np.arange(math.log(1e-17), math.log(40.0 / a_min) + step, step)
    if float(n) * n * k * nodes.size > (FISHER_WORK if max_work is None else max_work):
        return None
    sigma = np.exp(nodes)
    weight = step * sigma * np.exp(-sigma * t)  # dσ = σ d(log σ)
    u = np.exp(-np.outer(s1 * p, sigma))  # (N, Q)
    q = nodes.size
    pre = np.zeros((n + 1, q, k + 1))  # pre[i]: the polynomial Π_{j<i} (1 + x u_j), degrees 0 … k
    pre[0, :, 0] = 1.0
    suf = np.zeros((n + 1, q, k + 1))  # suf[i]: Π_{j≥i} (1 + x u_j)
    suf[n, :, 0] = 1.0
    for i in range(n):
        pre[i + 1] = pre[i]
        pre[i + 1, :, 1:] += u[i][:, None] * pre[i, :, :-1]
        j = n - 1 - i
        suf[j] = suf[j + 1]
        suf[j, :, 1:] += u[j][:, None] * suf[j + 1, :, :-1]
    # diagonal: u_x e_{k−1}(u without x) = u_x Σ_m pre[x]_m suf[x+1]_{k−1−m}
    B = np.diag((u * np.einsum("xqm,xqm->xq", pre[:n, :, :k], suf[1:, :, k - 1::-1])) @ weight)
    if k >= 2:
        R = pre[:n, :, : k - 1].copy()  # R[x] = Π_{j<x} · Π_{x<j<x+d} (1 + x u_j), degrees 0 … k−2
        for d in range(1, n):
            m = n - d  # the pairs (x, x + d), x < m
            inner = np.einsum("xqm,xqm->xq", R[:m], suf[d + 1 :, :, k - 2 :: -1])
            vals = (u[:m] * u[d:] * inner) @ weight
            idx = np.arange(m)
            B[idx, idx + d] = B[idx + d, idx] = vals
            R[:m, :, 1:] = R[:m, :, 1:] + u[d:][:, :, None] * R[:m, :, :-1]
    b = np.diag(B).copy()
    try:
        z = math.comb(n - 1, k - 1) + math.comb(n - 1, k) * t
    except OverflowError:  # (only with a max_work far above the default)
        return None
    ones = np.ones(n)
    F = (t * t * b.sum() / k * np.outer(ones, ones) + t * s1 * (np.outer(b, ones) + np.outer(ones, b))
         + s1 * s1 * B) / z
    if not np.allclose(F @ p, 1.0, rtol=1e-8, atol=1e-8):
        return None
    return 0.5 * (F + F.T)
