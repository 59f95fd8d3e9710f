"""The LDP optimum among the frequency oracles, and compact pair-balanced channels with subset selection's accuracy.

Implements
----------
* :func:`ldp_optimum`: the smallest exact MSE (records i.i.d. from ``prior``) among GRR, OUE, OLH, Hadamard
  response and k-subset selection at its best k over **all** ``k ∈ [1, N − 1]`` (S. Wang et al. 2016; Ye & Barg
  2018; the L2-optimal ε-LDP estimator is a symmetric configuration of this kind: Pan 2026).
* Pair-balanced block families (2-designs). Report a block ``S`` of a family ``𝓑`` (b blocks; each symbol in r of
  them, each pair in λ) with ``P(S | x) ∝ e^ε`` if ``x ∈ S`` else 1. The normaliser ``r e^ε + b − r`` is the same
  for every x, and ``p* = r e^ε/(r e^ε + b − r)``, ``q* = (λ e^ε + r − λ)/(r e^ε + b − r)`` are constants: a pure
  protocol ([WBLJ17]), so [WBLJ17] Theorem 2's estimator and exact variance apply with these (b, r, λ). For all
  k-subsets ``(b, r, λ) = (C(N,k), C(N−1,k−1), C(N−2,k−2))``: this *is* subset selection, and any 2-(v, k, λ)
  design gives the same ``p*, q*`` as subset selection on v symbols (``r/b = k/v``, ``λ/r = (k − 1)/(v − 1)``).
  Restricting a design on ``v ≥ N`` points to N of them keeps r and λ (blocks may shrink or vanish: a vanished
  block is the constant column), so the channel has subset selection's variance *on v symbols*, which is within a
  few per cent of subset selection on N symbols at the same k/v (docs/ldp.md). Families used:

  - cyclotomic: for a prime ``p ≥ N``, ``e | p − 1`` and the cyclotomic classes ``C_j = {g^{j + e t}}`` (g a
    primitive root), the translates ``S + b`` of ``S = ∪_{j∈J} C_{i+j}`` (every i, every b, optionally with 0 in
    S) are invariant under the sharply 2-transitive affine group ``x ↦ a x + b``, hence a 2-design with
    ``k/v ≈ |J|/e``, at most ``p·e`` blocks;
  - affine hyperplanes of ``AG(m, q)`` (q prime): ``{x : ⟨a, x⟩ = c}``, ``b = q(q^m − 1)/(q − 1)``,
    ``k/v = 1/q`` — optimized local hashing with an exactly pairwise-independent family and no constant hash;
  - affine lifts over ``GF(q)^m`` (q prime, ``q^m ≥ N``): blocks ``{x : ⟨a, x⟩ − t ∈ D}`` for a base set
    ``D ⊂ GF(q)`` (a union of cyclotomic classes, with or without 0), every t, and the directions a modulo the
    largest subgroup H of ``GF(q)^*`` that leaves D's difference counts ``N_D`` invariant (all of it for a
    difference set: ``≈ q^m`` blocks). They add the fractions ``k/q`` that no cyclotomic design on a prime near N
    reaches within the budget (N = 10 000, ε = 1: ``D`` = the biquadratic residues and 0 in GF(101), k/v = 26/101
    on 20 604 blocks, 0.09 % above the LDP optimum, against 2.4 % for the best cyclotomic design);
  - Hadamard response (:mod:`.hadamard`), GRR (singletons) and all k-subsets when ``C(N, k)`` is small.
* Cyclotomic near-designs (:mod:`.cyclotomic`): the translates of ``g^α D`` for α in only a few multiplier
  classes A, ``b = |A|·p``. Their pair counts may vary; the Gram matrix of the incidence is circulant per class, so
  the Gaussian periods give its spectrum exactly, and the family is scored by the 2-design closed form at the mean
  pair count with its noise term times the spectral spread ``mean(1/μ)·mean(μ)`` (1 for a 2-design: several of
  them are, on 2p or 4p blocks instead of e·p). They reach fractions k/v = c/8 within budgets where no 2-design does
  (N = 10 000, ε = 0.5: k/v = 3/8 on 21 458 blocks, spread 1.0001, 0.02 % above the LDP optimum, against 0.68 %).

  :func:`compact_ldp_channel` returns the family with the smallest exact variance (score, for a near-design)
  within an output budget.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations
from typing import NamedTuple

import numpy as np

from ..._validation import check_epsilon, check_positive_int, check_positive_real, check_probability_vector
from .base import _pure_variance
from .cyclotomic import near_designs, near_incidence, primitive_root as _primitive_root
from .encodings import grr, oue
from .hadamard import hadamard_response
from .hashing import olh
from ...priors import subset_selection_constants

__all__ = ["LdpOptimum", "PairBalancedChannel", "build_candidate", "compact_ldp_channel", "ldp_optimum",
           "pair_balanced_mse", "ranked_candidates"]


class LdpOptimum(NamedTuple):
    """The best ε-LDP frequency oracle at a prior: its name, exact MSE per report, and every oracle's MSE."""

    name: str
    mse: float
    k: int
    oracles: dict


class PairBalancedChannel(NamedTuple):
    """An ε-LDP channel from a (nearly) pair-balanced block family (rows = symbols, columns = merged blocks).

    ``spread`` is 1 for a 2-design; for a near-design (:func:`.cyclotomic.near_designs`) it is the spectral spread
    factor ``mean(1/μ)·mean(μ) ≥ 1`` of its pair counts, ``lam`` their mean, and ``mse`` the closed form at that
    mean with its noise term scaled by ``spread``: a ranking score, within 10 % of the spread's effect of the MLE
    error at the uniform prior on the p points (tested up to ε = 5; slightly below it; the estimation design
    evaluates the exact error of the channel it builds).
    """

    name: str
    matrix: np.ndarray
    mse: float
    b: int
    r: int
    lam: float
    spread: float = 1.0


def pair_balanced_mse(n: int, b: int, r: int, lam: int, epsilon: float, prior: np.ndarray) -> float:
    """Exact ``n·E‖f̂ − P‖²`` (records i.i.d. from ``prior``) of the pure-protocol estimator of a pair-balanced family.

    ``p* = r e^ε/(r e^ε + b − r)``, ``q* = (λ e^ε + r − λ)/(r e^ε + b − r)`` (module docstring), written in
    ``e^{−ε}``; then [WBLJ17] Theorem 2 plus the multinomial term ``p_v(1 − p_v)`` (docs/ldp.md §2 and §6).

    Parameters
    ----------
    n : int
        The alphabet size N (the length of ``prior``; the closed form itself reads only ``prior``).
    b, r, lam : int
        The family's number of blocks, blocks per symbol and blocks per pair.
    epsilon : float
        The LDP level ε.
    prior : numpy.ndarray, shape (N,)
        The distribution the records are drawn from.

    Returns
    -------
    float
        The squared error over the N symbols times the number of records (the MSE per report).
    """
    return _spread_mse(n, b, r, lam, 1.0, epsilon, prior)


def _spread_mse(n: int, b: int, r: int, lam: float, spread: float, epsilon: float, prior: np.ndarray) -> float:
    """:func:`pair_balanced_mse` with its noise term ``q*(1 − q*)/(p* − q*)²`` times ``spread`` (1: exact)."""
    t = math.exp(-epsilon)
    z = r + (b - r) * t
    ps, qs = r / z, (lam + (r - lam) * t) / z
    gap = (r - lam) * (1.0 - t) / z  # p* − q* without cancellation
    var = _pure_variance(ps, qs, gap, prior)
    if spread != 1.0 and gap > 0:
        var = var + (spread - 1.0) * qs * (1.0 - qs) / gap / gap
    return float(np.sum(var + prior * (1.0 - prior)))


def _ss_mse_all_k(n: int, epsilon: float, prior: np.ndarray) -> tuple[int, float]:
    """Subset selection's exact i.i.d. MSE at its best ``k ∈ [1, N − 1]`` (vectorised over k)."""
    k = np.arange(1, n, dtype=float)
    p, q, gap = subset_selection_constants(n, k, epsilon)  # type: ignore[arg-type]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # gap = 0 at ε = 0: inf − inf, masked below
        tot = n * q * (1 - q) / gap**2 + (1 - p - q) / gap + 1.0 - float(prior @ prior)
    tot = np.where(gap > 0, tot, np.inf)
    j = int(np.argmin(tot))
    return j + 1, float(tot[j])


def ldp_optimum(n: int, epsilon: float, prior: np.ndarray) -> LdpOptimum:
    """The ε-LDP frequency oracle with the smallest exact MSE per report (records i.i.d. from ``prior``).

    Candidates: GRR, OUE, OLH (g = round(e^ε + 1)), Hadamard response, and subset selection at every
    ``k ∈ [1, N − 1]`` (its exact variance is evaluated for all k at once). Every candidate is ε-LDP, hence ε-PML
    for every distribution.

    Parameters
    ----------
    n : int
        Number of symbols N ≥ 2.
    epsilon : float
        The LDP parameter ε ≥ 0 (finite; at ε = 0 every ``mse`` is ``inf``).
    prior : numpy.ndarray
        The distribution the records are drawn from (length N).

    Returns
    -------
    LdpOptimum
        ``name`` ("GRR", "OUE", "OLH", "HR" or "SUBSET_SELECTION"), ``mse``, ``k`` (subset size when subset
        selection wins, else 0) and ``oracles`` (every candidate's MSE, subset selection at its best k).

    Raises
    ------
    ValueError, TypeError
        N below 2, ε negative or not finite, a prior that is not a probability vector of length N.
    """
    n = check_positive_int(n, "n", minimum=2)
    epsilon = check_epsilon(epsilon, "epsilon")  # ε = 0 allowed: every oracle's error is then infinite
    p = check_probability_vector(prior, "prior", size=n)
    vals: dict[str, float] = {}
    for name, make in (("GRR", grr), ("OUE", oue), ("OLH", olh), ("HR", hadamard_response)):
        try:
            vals[name] = float(make(n, epsilon).mse(p, 1, inputs="iid"))
        except (ValueError, OverflowError):
            vals[name] = math.inf
    k, vals["SUBSET_SELECTION"] = _ss_mse_all_k(n, epsilon, p)
    name = min(vals, key=lambda key: vals[key])
    return LdpOptimum(name, vals[name], k if name == "SUBSET_SELECTION" else 0, vals)


# ----------------------------------------------------------------------------------------------------------
# pair-balanced families
# ----------------------------------------------------------------------------------------------------------
def _primes_from(lo: int, count: int) -> list[int]:
    out, c = [], max(lo, 2)
    while len(out) < count:
        if all(c % d for d in range(2, math.isqrt(c) + 1)):
            out.append(c)
        c += 1
    return out


def _cyclotomic_incidence(n: int, p: int, e: int, c: int, zero: bool, points: np.ndarray | None = None) -> np.ndarray:
    """Incidence (N × b) of the translates of ``S_i = ∪_{j<c} C_{i+j}`` (∪ {0} if ``zero``), i < e, restricted to N
    points (``points``, default the first N; symbol x sits on ``points[x]``): the near-design of
    :mod:`.cyclotomic` with every multiplier class, ``g^i S_0 = S_i``."""
    return near_incidence(n, p, e, tuple(range(c)), zero, tuple(range(e)), points)


def _affine_incidence(n: int, q: int, m: int, points: np.ndarray | None = None) -> np.ndarray:
    """Incidence (N × b) of the affine hyperplanes of AG(m, q) (q prime), points as in :func:`_lift_incidence`: the
    affine lift of ``D = {0}``, a difference set, over the projective directions."""
    return _lift_incidence(n, q, m, np.packbits(np.arange(q) == 0).tobytes(), q - 1, points)


#: Largest order of cyclotomic classes tried in the affine lifts (2^(e−1) class unions each).
LIFT_MAX_ORDER = 8


@lru_cache(maxsize=None)
def _lift_bases(q: int) -> tuple[tuple[int, int, bytes], ...]:
    """Base sets ``D ⊂ GF(q)`` (q prime) of the affine lifts: for each size k, the largest order h of a subgroup
    ``H ≤ GF(q)^*`` under which ``N_D(d) = #{u ∈ D : u + d ∈ D}`` is invariant, and one D attaining it.

    D ranges over the unions of cyclotomic classes of order ``e | q − 1`` (``e ≤`` :data:`LIFT_MAX_ORDER`; class
    0 always in, since multiplying D by g rotates the classes and gives an isomorphic design), with or without 0.
    ``N_D`` is invariant under the classes' own subgroup ``C_0`` (order ``(q − 1)/e``) and, for a difference set
    (``N_D`` constant off 0, e.g. {0}, biquadratic residues), under all of ``GF(q)^*``. Returns
    ``(k, h, D as bytes)`` sorted by k.
    """
    g = _primitive_root(q)
    logs = np.zeros(q, dtype=np.int64)
    logs[np.array([pow(g, t, q) for t in range(q - 1)])] = np.arange(q - 1)
    orders = [h for h in range(1, q) if (q - 1) % h == 0]
    # for each subgroup order h, the permutation d ↦ γ d of GF(q) by its generator γ = g^((q−1)/h)
    perms = {h: (pow(g, (q - 1) // h, q) * np.arange(q)) % q for h in orders}
    best: dict[int, tuple[int, bytes]] = {}
    for e in (e for e in orders if e <= LIFT_MAX_ORDER):
        cls = logs % e
        for mask in range(1 << (e - 1)):
            classes = [0] + [j for j in range(1, e) if mask >> (j - 1) & 1]
            for zero in (False, True):
                D = np.isin(cls, classes)
                D[0] = zero
                k = int(D.sum())
                if not 0 < k < q:
                    continue
                nd = np.rint(np.fft.ifft(np.abs(np.fft.fft(D.astype(float))) ** 2).real).astype(np.int64)
                h = max(h for h in orders if np.array_equal(nd[perms[h]], nd))
                if h > best.get(k, (0, b""))[0]:
                    best[k] = (h, np.packbits(D).tobytes())
    return tuple((k, h, d) for k, (h, d) in sorted(best.items()))


def _lift_params(q: int, m: int, k: int, h: int) -> tuple[int, int, int]:
    """(b, r, λ) of the affine lift of a k-set D ⊂ GF(q) with ``N_D`` invariant under a subgroup of order h.

    Blocks ``{x ∈ GF(q)^m : ⟨a, x⟩ − t ∈ D}`` for a in R (the non-zero vectors whose first non-zero coordinate is a
    coset representative of H: every non-zero vector is uniquely ``η a``, η ∈ H, a ∈ R) and every t ∈ GF(q). A point
    x lies in k blocks per a; a pair with ``z = x − y ≠ 0`` in ``N_D(⟨a, z⟩)`` (``N_D(0) = k``), and summing over all
    non-zero a (``⟨a, z⟩`` is 0 for ``q^(m−1) − 1`` of them and each non-zero value for ``q^(m−1)``; ``Σ_{d≠0} N_D(d)
    = k(k − 1)``) and dividing by ``|H|`` (invariance) gives λ, the same for every pair.
    """
    reps = (q**m - 1) // h
    lam = ((q ** (m - 1) - 1) * k + q ** (m - 1) * k * (k - 1)) // h
    return reps * q, reps * k, lam


def _lift_incidence(n: int, q: int, m: int, base: bytes, h: int, points: np.ndarray | None = None) -> np.ndarray:
    """Incidence (N × b) of the affine lift of ``D`` (packed in ``base``) over ``GF(q)^m``, restricted to N points
    (``points``, vectors numbered by their base-q digits; default the first N; symbol x sits on ``points[x]``); see
    :func:`_lift_params`."""
    D = np.unpackbits(np.frombuffer(base, dtype=np.uint8), count=q).astype(bool)
    g = _primitive_root(q)
    cosets = np.array([pow(g, j, q) for j in range((q - 1) // h)])
    vecs = (np.arange(1, q**m)[:, None] // q ** np.arange(m)[None, :]) % q
    lead = vecs[np.arange(vecs.shape[0]), (vecs != 0).argmax(axis=1)]
    normals = vecs[np.isin(lead, cosets)]  # (q^m − 1)/h of them
    idx = np.arange(n) if points is None else np.asarray(points[:n], dtype=np.int64)
    pts = (idx[:, None] // q ** np.arange(m)[None, :]) % q
    vals = (pts @ normals.T) % q  # (N, reps)
    return D[(vals[:, :, None] - np.arange(q)[None, None, :]) % q].reshape(n, -1)


def _channel_from_blocks(inc: np.ndarray, epsilon: float) -> np.ndarray:
    """Columns ∝ ``e^ε 1_S + 1_{S^c}`` over the blocks (rows normalised), identical columns merged."""
    packed = np.packbits(inc, axis=0)
    uniq, inverse, counts = np.unique(packed.T, axis=0, return_inverse=True, return_counts=True)
    members = np.unpackbits(uniq.T, axis=0, count=inc.shape[0]).astype(bool)
    const = members.all(axis=0) | ~members.any(axis=0)  # vanished / full blocks: constant columns, merged
    t = math.exp(-epsilon)
    cols = np.where(members, 1.0, t) * counts
    if const.sum() > 1:
        cols = np.hstack([cols[:, ~const], cols[:, const].sum(axis=1, keepdims=True)])
    return cols / cols.sum(axis=1, keepdims=True)


def _candidates(n: int, epsilon: float, max_outputs: int) -> list[tuple[str, int, int, int, object]]:
    """(name, b, r, λ, builder) of the pair-balanced families within the budget, exact (b, r, λ)."""
    out: list[tuple[str, int, int, int, object]] = [("GRR", n, 1, 0, lambda: np.eye(n, dtype=bool))]
    k_hr = 1 << n.bit_length()
    if k_hr <= max_outputs:  # (below 2N: within every default budget; a design's max_outputs may be smaller)
        out.append(("HR", k_hr, k_hr // 2, k_hr // 4, None))
    kstar = n / (math.exp(min(epsilon, 700.0)) + 1.0)
    for k in sorted({max(1, math.floor(kstar)), max(1, math.ceil(kstar)), 2}):
        if 1 < k < n and math.comb(n, k) <= max_outputs:
            out.append((f"SS(k={k})", math.comb(n, k), math.comb(n - 1, k - 1), math.comb(n - 2, k - 2),
                        lambda k=k: _all_subsets(n, k)))
    for p in _primes_from(n, 6):
        for e in range(2, p):
            if (p - 1) % e or p * e > max_outputs:
                continue
            h = (p - 1) // e
            for c in range(1, e):
                for zero in (False, True):
                    k = c * h + int(zero)
                    r = e * k  # p·e blocks of size k over p points: r = b k / v
                    lam = r * (k - 1) // (p - 1)
                    out.append((f"cyclotomic(p={p},e={e},c={c}{',0' if zero else ''})", p * e, r, lam,
                                lambda p=p, e=e, c=c, zero=zero: _cyclotomic_incidence(n, p, e, c, zero,
                                                                                       _embedding(n, p))))
    for q in _primes_from(2, 60):
        m = max(2, math.ceil(math.log(n, q) - 1e-12))
        while q**m < n:
            m += 1
        b = q * (q**m - 1) // (q - 1)
        if b <= max_outputs:
            r = (q**m - 1) // (q - 1)
            lam = (q ** (m - 1) - 1) // (q - 1)
            out.append((f"AG({m},{q})", b, r, lam, lambda q=q, m=m: _affine_incidence(n, q, m, _embedding(n, q**m))))
    for q in _primes_from(3, 60):
        m = 2
        while q**m < n:
            m += 1
        if q * (q**m - 1) // (q - 1) > max_outputs:  # the fewest blocks any lift on GF(q)^m has
            continue
        for k, h, base in _lift_bases(q):
            b, r, lam = _lift_params(q, m, k, h)
            if b <= max_outputs:
                out.append((f"lift(q={q},m={m},k={k},h={h})", b, r, lam,
                            lambda q=q, m=m, base=base, h=h: _lift_incidence(n, q, m, base, h,
                                                                             _embedding(n, q**m))))
    return out


#: Seed of the fixed pseudo-random placement of the N symbols on a family's v ≥ N points (:func:`_embedding`), used
#: from ``v ≥ SPREAD_MIN_RATIO · N`` on.
EMBEDDING_SEED: int = 20261126
SPREAD_MIN_RATIO: float = 1.25


def _embedding(n: int, v: int) -> np.ndarray:
    """The points the N symbols sit on (symbol x on the x-th entry): the first N when ``v < SPREAD_MIN_RATIO · N``,
    else N of the v points in a fixed pseudo-random order (seeded, so every channel is reproducible).

    Any N of a 2-design's points, in any order, keep (r, λ) and hence the closed-form variance. (Reproducible for a
    given NumPy version: NumPy guarantees the bit stream, not ``permutation``'s use of it.) Where v is well above
    N the MLE's error at a skewed prior is lower with the symbols spread at random than on the first N points, where
    the heaviest symbols share the blocks of one direction (Zipf, MLE error / LDP optimum: N = 1 000, ε = 4,
    AG(2, 53) 0.892 → 0.867; N = 3 000, ε = 4, AG(2, 67) 0.935 → 0.922; ε = 2, a lift 0.971 → 0.968). Where v is
    close to N (the cyclotomic designs on a prime just above N) the seed's error does not move (4 digits, N ≤ 100),
    but the column generation started from the spread channel ended 1–2 % worse within 30 s (Zipf 100, ε = 0.5 and
    2, two runs each), so the first N are kept there (docs/ldp.md §6)."""
    if v < SPREAD_MIN_RATIO * n:
        return np.arange(n)
    return np.random.default_rng([EMBEDDING_SEED, n, v]).permutation(v)[:n]


def _all_subsets(n: int, k: int) -> np.ndarray:
    idx = np.array(list(combinations(range(n), k)))
    inc = np.zeros((n, idx.shape[0]), dtype=bool)
    np.put_along_axis(inc, idx.T, True, axis=0)
    return inc


def _scored(n: int, epsilon: float, p: np.ndarray, max_outputs: int) -> list[tuple[float, tuple]]:
    """``(mse, (name, b, r, λ, builder, spread))`` of every family within the budget (2-designs and near-designs),
    best first; equal to 9 digits, more blocks first, then the families' order (a stable sort)."""
    return sorted(((_spread_mse(n, c[1], c[2], c[3], c[5], epsilon, p), c)
                   for c in _all_candidates(n, epsilon, max(int(max_outputs), n))),
                  key=lambda t: (float(f"{t[0]:.9e}"), -t[1][1]))  # equal to 9 digits: more blocks first


def _all_candidates(n: int, epsilon: float, max_outputs: int) -> list[tuple]:
    """``(name, b, r, λ, builder, spread)``: the 2-designs of :func:`_candidates` (spread 1), then the near-designs."""
    return [(*c, 1.0) for c in _candidates(n, epsilon, max_outputs)] + _near_candidates(n, max_outputs)


def _near_candidates(n: int, max_outputs: int) -> list[tuple]:
    """``(name, b, r, λ̄, builder, spread)`` of the near-designs within the budget (:func:`.cyclotomic.near_designs`;
    the symbols on :func:`_embedding`'s points)."""
    return [(name, b, r, lam, lambda spec=spec: near_incidence(n, *spec, _embedding(n, spec[0])), spread)
            for name, b, r, lam, spec, spread in near_designs(n, max_outputs)]


def _best_candidate(n: int, epsilon: float, p: np.ndarray, max_outputs: int):
    """(name, b, r, λ, builder, spread) of :func:`compact_ldp_channel`'s choice, before anything is built (b: its
    outputs)."""
    return _scored(n, epsilon, p, max_outputs)[0][1]


def ranked_candidates(n: int, epsilon: float, prior: np.ndarray, *, max_outputs: int = 4096, count: int = 3,
                      rtol: float = 0.02) -> list[tuple[str, int, float]]:
    """The best ``count`` pair-balanced families within the budget, by their exact estimator variance (the score of
    :class:`PairBalancedChannel` for a near-design), best first, each within ``rtol`` (relative) of the best, one
    per family and base set (one per order, class count and 0 for the near-designs); equal to 9 digits, the one
    with more blocks first (its MLE error was the smaller in every tie measured at Zipf priors).

    The closed form ranks the channels by the unbiased estimator's variance (:func:`pair_balanced_mse`); the MLE's
    error at the prior (``tr F⁻¹ − ‖P‖²``, docs/design.md §7) can rank two near channels the other way round (Zipf
    3 000, ε = 2: a lift 0.1 % above the LDP optimum in closed form, 0.979 × it by the MLE, against one 0.7 % above
    and 0.968 ×), so the estimation design evaluates the first few exactly (:func:`build_candidate` builds one by
    name).

    Implements: docs/ldp.md §6 (the families and their ``(b, r, λ)``).

    Parameters
    ----------
    n : int
        Number of symbols N.
    epsilon : float
        The LDP parameter ε > 0.
    prior : numpy.ndarray
        The distribution the variance is taken at (it enters through ``‖P‖²`` only).
    max_outputs : int, default 4096
        The largest block count b a family may have; a budget below N is read as N (GRR, N outputs, is always a
        candidate).
    count : int, default 3
        How many families at most.
    rtol : float, default 0.02
        Keep families whose variance is at most ``(1 + rtol)`` times the best.

    Returns
    -------
    list of (str, int, float)
        ``(name, b, mse)``: the family's name, its number of blocks (before identical restricted blocks merge) and
        its exact variance (score); the first is :func:`compact_ldp_channel`'s choice.

    Raises
    ------
    ValueError, TypeError
        N below 2, ε not positive and finite, a prior that is not a probability vector of length N, ``max_outputs``
        or ``count`` not a positive integer, a negative ``rtol``.
    """
    n, epsilon, p, max_outputs = _checked(n, epsilon, prior, max_outputs)
    count = check_positive_int(count, "count")
    rtol = check_positive_real(rtol, "rtol", allow_zero=True)
    scored = _scored(n, epsilon, p, max_outputs)  # the first: compact_ldp_channel's
    out: list[tuple[str, int, float]] = []
    seen: set[str] = set()
    for mse, (name, b, *_) in scored:
        if len(out) >= count or mse > scored[0][0] * (1.0 + rtol):
            break
        if _family_key(name) not in seen:
            seen.add(_family_key(name))
            out.append((name, b, float(mse)))
    return out


def _family_key(name: str) -> str:
    """What :func:`ranked_candidates` offers once: a family and base set, named; for a near-design its order, class
    count and 0 (near-designs of one fraction c/e on other primes or multiplier sets score alike and are nearly
    equivalent: three of them filled the exact ranking's slots, at N = 800, ε = 2 pushing out a better lift)."""
    if not name.startswith("near("):
        return name
    fields = dict(f.split("=") for f in name[5:-1].split(",") if "=" in f)
    return f"near(e={fields['e']},c={len(fields['D'].split('.'))}{',0' if ',0,' in name else ''})"


def build_candidate(n: int, epsilon: float, prior: np.ndarray, name: str, *,
                    max_outputs: int = 4096) -> PairBalancedChannel:
    """The channel of family ``name`` (as :func:`ranked_candidates` names it) within the same budget.

    Implements: docs/ldp.md §6.

    Parameters
    ----------
    n, epsilon, prior, max_outputs
        As for :func:`ranked_candidates`.
    name : str
        A family's name, e.g. ``"AG(2,53)"``.

    Returns
    -------
    PairBalancedChannel
        As :func:`compact_ldp_channel` returns.

    Raises
    ------
    ValueError, TypeError
        ``name`` is not a family within ``max_outputs`` blocks at this N; the other arguments as for
        :func:`ranked_candidates`.
    """
    n, epsilon, p, max_outputs = _checked(n, epsilon, prior, max_outputs)
    if not isinstance(name, str):
        raise TypeError(f"name must be a family's name (a str), got {name!r}")
    for cand in _all_candidates(n, epsilon, max(max_outputs, n)):
        if cand[0] == name:
            return _build(n, epsilon, p, cand)
    raise ValueError(f"name must be a candidate within max_outputs={max_outputs} at N={n}, got {name!r}")


def _checked(n: object, epsilon: object, prior: object, max_outputs: object) -> tuple[int, float, np.ndarray, int]:
    """The arguments of :func:`ranked_candidates` and :func:`build_candidate`, validated (errors name them)."""
    n = check_positive_int(n, "n", minimum=2)
    epsilon = check_epsilon(epsilon, "epsilon", positive=True)
    p = check_probability_vector(prior, "prior", size=n)
    return n, epsilon, p, check_positive_int(max_outputs, "max_outputs")


def _build(n: int, epsilon: float, p: np.ndarray, cand) -> PairBalancedChannel:
    name, b, r, lam, build, spread = cand
    if name == "HR":
        W = hadamard_response(n, epsilon)._channel()
    else:
        W = _channel_from_blocks(build(), epsilon)  # type: ignore[operator]
    return PairBalancedChannel(name, W, _spread_mse(n, b, r, lam, spread, epsilon, p), b, r, lam, spread)


def compact_ldp_channel(n: int, epsilon: float, prior: np.ndarray, *, max_outputs: int = 4096) -> PairBalancedChannel:
    """The pair-balanced ε-LDP channel with the smallest exact MSE whose family has at most ``max(max_outputs, N)``
    blocks (GRR, N outputs, is always a candidate).

    Candidates (module docstring): GRR, Hadamard response, all k-subsets (when few), cyclotomic 2-designs on the
    primes just above N, affine hyperplanes of AG(m, q), affine lifts of cyclotomic base sets over GF(q)^m, and
    cyclotomic near-designs on few multiplier classes. Where ``spread == 1`` (a 2-design) its ``mse`` is exact for
    the pure-protocol estimator (:func:`pair_balanced_mse`) and the MLE on the same channel has asymptotic error
    ``tr F⁻¹ − ‖P‖²`` ≤ ``mse`` (Cramér–Rao: the estimator is unbiased); for a near-design (``spread > 1``) ``mse``
    is the ranking score of :class:`PairBalancedChannel`, and the error of the channel is ``estimation_mse`` of its
    matrix (the estimation design evaluates it exactly).

    Parameters
    ----------
    n, epsilon, prior, max_outputs
        As for :func:`ranked_candidates`.

    Returns
    -------
    PairBalancedChannel
        ``matrix`` (N × M, row-stochastic, ε-LDP), ``mse``, and the family's ``(b, r, λ)`` and ``spread``.

    Raises
    ------
    ValueError, TypeError
        As for :func:`ranked_candidates`.
    """
    n, epsilon, p, max_outputs = _checked(n, epsilon, prior, max_outputs)
    return _build(n, epsilon, p, _best_candidate(n, epsilon, p, max_outputs))
