"""Cyclotomic classes of GF(p) and the cyclotomic near-designs built from them (docs/ldp.md §6).

Implements
----------
* :func:`primitive_root`, :func:`class_table` (the classes ``C_j = {g^{j + et}}`` of order e and their Gaussian
  periods).
* Near-designs: the translates of ``g^α D`` (D a union of classes, optionally ∪ {0}) for α in a few multiplier
  classes A, ``b = |A|·p`` blocks. With all e classes this is the cyclotomic 2-design (the affine group
  ``x ↦ ax + b`` is 2-transitive on GF(p)); with fewer the pair counts may vary, and the Gaussian periods give the
  spectrum of the incidence's Gram matrix exactly, hence the spectral spread that prices the variation
  (:func:`near_spectra`, :func:`near_designs`), an integer check of the 2-design case (:func:`near_is_design`) and
  the incidence (:func:`near_incidence`). :mod:`.optimum` ranks them beside the 2-designs.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations

import numpy as np

from ..._validation import check_positive_int

__all__ = ["NEAR_MAX_MULTIPLIERS", "NEAR_MAX_SPREAD", "NEAR_ORDERS", "NEAR_PRIMES", "class_table", "near_designs",
           "near_incidence", "near_is_design", "near_spectra", "primitive_root"]


@lru_cache(maxsize=1024)
def primitive_root(p: int) -> int:
    """The least primitive root of the prime p (1 for p = 2, where GF(2)* = {1}).

    Raises
    ------
    ValueError, TypeError
        p not a prime.
    """
    p = check_positive_int(p, "p", minimum=2)
    if any(p % d == 0 for d in range(2, math.isqrt(p) + 1)):
        raise ValueError(f"p must be a prime, got {p}")
    if p == 2:  # GF(2)* = {1}
        return 1
    m, fac, d = p - 1, set(), 2
    while d * d <= m:
        while m % d == 0:
            fac.add(d)
            m //= d
        d += 1
    if m > 1:
        fac.add(m)
    return next(g for g in range(2, p) if all(pow(g, (p - 1) // f, p) != 1 for f in fac))


#: Orders e of the cyclotomic classes the near-designs are built from (:func:`near_designs`), how many primes
#: ``p ≡ 1 (mod e)`` from N on each scans, the most multiplier classes a near-design uses (``b = |A|·p``), and the
#: largest spectral spread it may have.
NEAR_ORDERS: tuple[int, ...] = (4, 8)
NEAR_PRIMES: int = 48
NEAR_MAX_MULTIPLIERS: int = 4
NEAR_MAX_SPREAD: float = 1.02
#: Primes up to this many times N only (the symbols sit on N of the p points). Where the budget allowed more, small
#: alphabets scanned primes up to 130 N (N = 10: p ≤ 1 289, 0.7 s in a fresh process, which a 1 s design then lacked
#: for its column generation); even a cap of 2N changed no ranking for N = 10 … 3 000, ε = 0.5 … 4 (docs/ldp.md §6).
NEAR_MAX_RATIO: float = 4.0


@lru_cache(maxsize=256)
def class_table(p: int, e: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cls, η)`` for a prime p and ``e | p − 1``: the cyclotomic class of order e of each element of GF(p) (−1 for
    0), and the Gaussian periods ``η_j = Σ_{x∈C_0} ω^{g^j x}`` (``ω = e^{−2πi/p}``, g the primitive root), j < e
    (Storer, *Cyclotomy and Difference Sets*, 1967, ch. 1; docs/ldp.md §6).

    Raises
    ------
    ValueError, TypeError
        p not a prime, e not a positive divisor of p − 1.
    """
    g = primitive_root(p)
    e = check_positive_int(e, "e")
    if (p - 1) % e:
        raise ValueError(f"e must divide p - 1 = {p - 1}, got {e}")
    pw = np.empty(p - 1, dtype=np.int64)
    x = 1
    for t in range(p - 1):
        pw[t] = x
        x = x * g % p
    cls = np.full(p, -1, dtype=np.int8 if e < 128 else np.int64)  # one byte a point: 256 cached tables stay small
    cls[pw] = np.arange(p - 1) % e
    eta = np.fft.fft((cls == 0).astype(float))[pw[:e]]
    cls.setflags(write=False)
    eta.setflags(write=False)
    return cls, eta


def near_spectra(p: int, e: int, zero: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(masks, S)``: every union D of classes containing ``C_0`` (rows of ``masks``, e columns; ∪ {0} if ``zero``)
    and ``S[D, j] = |D̂(u)|²`` for u in class j (``D̂(u) = Σ_{i∈D} η_{i+j} + [zero]``).

    Implements: the Gaussian-period spectrum of the near-designs (docs/ldp.md §6; Storer 1967, ch. 1), from
    :func:`class_table`.

    Parameters
    ----------
    p : int
        A prime.
    e : int
        The order of the classes, a positive divisor of ``p − 1``.
    zero : bool
        Whether every union contains the point 0.

    Returns
    -------
    masks : numpy.ndarray of bool, shape (2^(e−1), e)
        The unions D containing ``C_0``, one per row (column i: ``C_i ⊆ D``).
    S : numpy.ndarray of float, shape (2^(e−1), e)
        ``|D̂(u)|²`` for u in class j (column j) of each union.
    """
    _, eta = class_table(p, e)
    masks = ((np.arange(1 << (e - 1))[:, None] >> np.arange(e - 1)[None, :]) & 1).astype(bool)
    masks = np.hstack([np.ones((masks.shape[0], 1), dtype=bool), masks])
    circ = eta[(np.arange(e)[:, None] + np.arange(e)[None, :]) % e]  # circ[i, j] = η_{i+j}
    return masks, np.abs(masks @ circ + float(zero)) ** 2


@lru_cache(maxsize=16)
def near_designs(n: int, max_outputs: int) -> tuple[tuple, ...]:
    """``(name, b, r, λ̄, (p, e, D, zero, A), spread)`` of the cyclotomic near-designs within the budget
    (:func:`near_incidence` builds one).

    For a prime ``p ≥ N``, ``e | p − 1`` and a union D of cyclotomic classes (optionally ∪ {0}), the translates of
    ``g^α D`` for α in a set A of multiplier classes: ``b = |A|·p`` blocks of size k, every point in ``r = |A|·k``.
    With all e classes this is the cyclotomic 2-design; with fewer, the pair counts vary, and the Gram matrix of the
    incidence on the p points is circulant per class with eigenvalue ``μ_j = Σ_{α∈A} S[D, j + α]`` on the
    characters of class j (:func:`near_spectra`; their mean is ``r − λ̄``, Parseval). The Fisher information at the
    uniform prior on 1^⊥ is proportional to it, so its noise costs ``spread = mean(1/μ)·mean(μ) ≥ 1`` times the
    2-design's with the same mean pair count ``λ̄ = r(k − 1)/(p − 1)``; ``spread = 1`` exactly when the family is a
    2-design. Some choices are (nearly) flat: e = 4, ``p ≡ 5 (mod 8)``, A = {0, 1} is a 2-design on 2p blocks (−1
    lies in ``C_2``, so ``S[D, j] = S[D, j + 2]``), and e = 8, ``p ≡ 9 (mod 16)``, A = {0, 2} leaves one equation
    ``S_0 + S_2 = S_1 + S_3`` that some primes nearly meet (N = 10 000: p = 10 729, D = C_0 ∪ C_1 ∪ C_2, spread
    1.0001, k/v = 3/8 on 21 458 blocks, where every 2-design within 32 768 blocks has k/v ≤ 0.34). Per prime, order,
    |A| and k the flattest (D, A) is kept, if its spread is at most :data:`NEAR_MAX_SPREAD`.

    Implements: docs/ldp.md §6 (cyclotomic near-designs). Raises ValueError/TypeError for N below 2 or a
    ``max_outputs`` that is not a positive integer.
    """
    n = check_positive_int(n, "n", minimum=2)
    max_outputs = check_positive_int(max_outputs, "max_outputs")
    out: list[tuple] = []
    for e in NEAR_ORDERS:
        asets = [(0,) + c for m in range(NEAR_MAX_MULTIPLIERS) if m + 1 < e
                 for c in combinations(range(1, e), m)]
        primes: list[int] = []
        c = max(n, e + 1)
        while len(primes) < NEAR_PRIMES and c <= min(max_outputs, NEAR_MAX_RATIO * n):
            if (c - 1) % e == 0 and all(c % d for d in range(2, math.isqrt(c) + 1)):
                primes.append(c)
            c += 1
        for p in primes:
            best: dict[tuple[int, int], tuple[float, tuple[int, ...], bool, tuple[int, ...]]] = {}
            for zero in (False, True):
                masks, S = near_spectra(p, e, zero)
                ks = masks.sum(axis=1) * ((p - 1) // e) + int(zero)
                live = (ks > 1) & (ks < p - 1)
                for A in asets:
                    if len(A) * p > max_outputs:
                        continue
                    mu = sum(S[:, (np.arange(e) + a) % e] for a in A)
                    with np.errstate(divide="ignore", invalid="ignore"):  # μ = 0 rows (not live) give inf·0
                        spread = np.where(live & (mu.min(axis=1) > 1e-9 * mu.mean(axis=1)),
                                          np.mean(1.0 / mu, axis=1) * np.mean(mu, axis=1), np.inf)
                    for j in np.flatnonzero(spread <= NEAR_MAX_SPREAD):
                        key = (len(A), int(ks[j]))  # the flattest (D, A) per multiplier count and block size
                        if spread[j] < best.get(key, (np.inf,))[0]:
                            best[key] = (float(spread[j]), tuple(int(i) for i in np.flatnonzero(masks[j])), zero, A)
            for (m, k), (sp, D, zero, A) in sorted(best.items()):
                lam: float = m * k * (k - 1) / (p - 1)
                if sp <= 1.0 + 1e-6 and near_is_design(p, e, D, zero, A):  # every pair in λ blocks, counted
                    sp, lam = 1.0, m * k * (k - 1) // (p - 1)
                out.append((f"near(p={p},e={e},D={'.'.join(map(str, D))}{',0' if zero else ''},"
                            f"A={'.'.join(map(str, A))})", m * p, m * k, lam, (p, e, D, zero, A), sp))
    return tuple(out)


def near_is_design(p: int, e: int, D: tuple[int, ...], zero: bool, A: tuple[int, ...]) -> bool:
    """Whether the near-design is a 2-design, counted in integers: a pair at difference ``z ≠ 0`` lies in
    ``Σ_{α∈A} N_D(g^{−α} z)`` blocks (``N_D(d) = #{u ∈ D : u + d ∈ D}``, from an FFT rounded to integers).

    Implements: the integer check of the 2-design case of docs/ldp.md §6 (:func:`near_designs`).

    Parameters
    ----------
    p : int
        A prime.
    e : int
        The order of the classes, a positive divisor of ``p − 1``.
    D : tuple of int
        The classes whose union is the base block.
    zero : bool
        Whether the base block contains the point 0.
    A : tuple of int
        The multiplier classes α (blocks are the translates of ``g^α D``).

    Returns
    -------
    bool
        True if every pair of distinct points lies in the same number of blocks.
    """
    cls, _ = class_table(p, e)
    member = np.isin(cls, D)
    member[0] = zero
    nd = np.rint(np.fft.irfft(np.abs(np.fft.rfft(member.astype(float))) ** 2, n=p)).astype(np.int64)
    g = primitive_root(p)
    z = np.arange(1, p)
    counts = sum(nd[(pow(g, (p - 1 - a) % (p - 1), p) * z) % p] for a in A)
    return bool(np.all(counts == counts[0]))


def near_incidence(n: int, p: int, e: int, D: tuple[int, ...], zero: bool, A: tuple[int, ...],
                    points: np.ndarray | None = None) -> np.ndarray:
    """Incidence (N × |A|·p) of the translates of ``g^α ∪_{i∈D} C_i`` (∪ {0} if ``zero``), α ∈ A, restricted to N
    points (``points``, default the first N); see :func:`near_designs`.

    Implements: the near-design incidence of docs/ldp.md §6.

    Parameters
    ----------
    n : int
        Number of symbols N (rows).
    p : int
        A prime.
    e : int
        The order of the classes, a positive divisor of ``p − 1``.
    D : tuple of int
        The classes whose union is the base block.
    zero : bool
        Whether the base block contains the point 0.
    A : tuple of int
        The multiplier classes α.
    points : numpy.ndarray of int, optional
        The points of GF(p) the symbols sit on (the first N are used); None: ``0, …, N − 1``.

    Returns
    -------
    numpy.ndarray of bool, shape (N, |A|·p)
        Entry ``(x, a·p + s)`` (a the position of α in A): whether point x lies in the block ``s + g^α D``.
    """
    cls, _ = class_table(p, e)
    x = np.arange(n) if points is None else np.asarray(points[:n], dtype=np.int64)
    blocks = []
    for a in A:
        member = np.isin((cls - a) % e, D)
        member[0] = zero
        # block (a, s) holds x iff x − s ∈ g^a D: row x is member[(x − s) mod p] over s, a slice of w = member[−j]
        w = member[(-np.arange(p)) % p]
        blocks.append(np.lib.stride_tricks.sliding_window_view(np.concatenate([w, w]), p)[(p - x) % p])
    return np.hstack(blocks)
