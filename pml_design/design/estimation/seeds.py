"""Seeds of the estimation design: the best compact ε-LDP channel (a floor by construction) and rank-one rays.

Implements: docs/design.md §7 "Seeds that make LDP a floor". Every ε-LDP mechanism is ε-PML for every
distribution, so the pair-balanced channel of
:func:`~pml_design.mechanisms.frequency_oracles.optimum.compact_ldp_channel` (subset selection's exact variance,
or GRR's, or Hadamard response's, on few outputs) is feasible for any uncertainty set: it enters the master as one
matrix column (:mod:`.master`), so the design's error is never above that channel's MLE error, which is at most its
closed-form variance (Cramér–Rao). Rank-one seeds: the constant column, each symbol's randomized-response direction
and a sample of the channel's blocks, each at the largest two-level ratio the guarantee allows over 𝒫
(:func:`subset_directions`). :func:`rank_seeds` evaluates the first few compact channels by their exact error.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

import numpy as np

from ...mechanisms.frequency_oracles.optimum import (PairBalancedChannel, build_candidate, compact_ldp_channel,
                                                     ranked_candidates)
from ...uncertainty import L1Ball, UncertaintySet

#: The seed is the compact LDP channel with the smallest *exact* error at the prior among the first SEED_CANDIDATES
#: families by closed form (within SEED_RTOL of the best), up to SEED_RANK_MAX_N symbols (docs/design.md §7: the
#: closed form ranks by the unbiased estimator's variance, the design by the MLE's). Always the same candidates, so
#: every time limit evaluates them in the same order; a limit too short for the next one ends the call there.
SEED_CANDIDATES: int = 3
SEED_RTOL: float = 0.02
SEED_RANK_MAX_N: int = 4000
#: A first seed built faster than this is built again and timed warm (:func:`first_seed`).
REBUILD_SECONDS: float = 1.0
#: The compact channel's output budget is doubled (up to the cap) while the best closed form within it is more than
#: this above the LDP optimum (:func:`seed_budget`).
SEED_BUDGET_RTOL: float = 0.01

__all__ = ["LARGE_N", "block_masks", "first_seed", "nested_directions", "offer_larger_seed", "rank_seeds", "ray_seeds",
           "seed_budget", "subset_directions"]

#: Above this alphabet size the rank-one seeds are only Hadamard response's half-sets (the master's cost grows
#: with the cube of its number of columns; the LDP channel, one matrix column, keeps F invertible).
LARGE_N: int = 400


def subset_directions(uset: UncertaintySet, epsilon: float, masks: np.ndarray) -> np.ndarray:
    """Cone directions ``(e^ε − 1)1_S + (1 − e^ε f(1_S))·1`` (or ``1_S`` when ``e^ε f(1_S) ≥ 1``), as columns.

    ``f(1_S) = min_{Q∈𝒫} Q(S)``. Each is the two-level column with the largest top/bottom ratio that keeps ε-PML
    over 𝒫: its leakage is exactly tight (for the ℓ1 ball these are the rays ``h(1)1_S − h(S)1`` of
    :func:`~pml_design.design.rays.l1_ball_rays`). Implements: docs/design.md §7 "Seeds that make LDP a floor".

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set 𝒫 over the N symbols.
    epsilon : float
        The PML level ε.
    masks : np.ndarray
        Boolean ``L × N`` array, one subset S per row (a 1-D array is one subset).

    Returns
    -------
    np.ndarray
        ``N × L``: the direction of the k-th subset in column k.
    """
    e = math.exp(epsilon)
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    f = uset.min_output_probability(masks.T.astype(float))
    low = 1.0 - e * f
    cols = np.where(masks, (e - 1.0) + np.maximum(low, 0.0)[:, None], np.maximum(low, 0.0)[:, None])
    cols[low <= 0] = masks[low <= 0].astype(float)
    return cols.T


def nested_levels(uset: UncertaintySet, epsilon: float, inner: np.ndarray, outer: np.ndarray):
    """Levels ``(α, β, ok)`` of the three-level columns ``α·1_U + β·1_{V∖U}`` of :func:`nested_directions`.

    ``inner``/``outer`` are boolean masks (rows) with ``U ⊆ V``. ``ok`` is False where no such column is in the cone
    (``h(V) < 0`` with ``h(U) < 0``, or V empty).
    """
    inner = np.atleast_2d(np.asarray(inner, dtype=bool))
    outer = np.atleast_2d(np.asarray(outer, dtype=bool))
    if isinstance(uset, L1Ball):  # closed form on indicators (docs/design.md §3): f(1_S) = max(0, P̂(S) − β/2)
        f = np.maximum(0.0, np.vstack([inner, outer]) @ uset.center - uset.radius / 2.0)
    else:
        f = uset.min_output_probability(np.vstack([inner, outer]).T.astype(float))
    return levels_from_f(epsilon, f[: inner.shape[0]], f[inner.shape[0]:], outer.all(axis=1), outer.any(axis=1))


def levels_from_f(epsilon: float, f_inner, f_outer, outer_all, outer_any):
    """:func:`nested_levels` from ``f(1_U)``, ``f(1_V)`` and whether V is everything / non-empty."""
    e = math.exp(min(epsilon, 700.0))
    h_u = e * np.asarray(f_inner, dtype=float) - 1.0
    h_v = np.where(outer_all, e - 1.0, e * np.asarray(f_outer, dtype=float) - 1.0)  # f(1) = 1 exactly
    alpha = np.where(h_u >= 0, 1.0, h_v - h_u)
    beta = np.where(h_u >= 0, 0.0, -h_u)
    ok = ((h_u >= 0) | (h_v >= 0)) & outer_any
    return alpha, beta, ok


def nested_directions(uset: UncertaintySet, epsilon: float, inner: np.ndarray, outer: np.ndarray, *,
                      valid_only: bool = False) -> np.ndarray:
    """Three-level cone directions ``h(V)·1_U − h(U)·1_V`` for nested masks ``U ⊆ V`` (rows), as columns.

    Implements: the extreme-ray family of the column cone of core paper eq. (1) for the ℓ1 ball of eq. (5) at any
    radius (:func:`~pml_design.design.rays.l1_ball_rays`, docs/design.md §3), with ``h(S) = e^ε f(1_S) − 1`` and
    ``f(1_S) = min_{Q∈𝒫} Q(S)``; ``1_U`` when ``h(U) ≥ 0``. For every other set ``f`` is superadditive on the chain
    ``U ⊆ V``, so each column is still in the cone (its top level meets ``e^ε f`` with equality or slack). ``V`` =
    everything gives :func:`subset_directions`; ``U`` empty the indicator ``1_V``.

    Parameters
    ----------
    uset : UncertaintySet
    epsilon : float
    inner, outer : numpy.ndarray of bool, shape (K, N)
        The masks of U and V (``outer`` is taken as ``U ∪ V``).
    valid_only : bool, default False
        Leave out the masks with no such column (both ``h < 0``, or V empty); otherwise they give the constant
        column (one column per row, in order; :func:`nested_levels` tells which).

    Returns
    -------
    numpy.ndarray, shape (N, K) (fewer columns with ``valid_only``)
    """
    inner = np.atleast_2d(np.asarray(inner, dtype=bool))
    outer = np.atleast_2d(np.asarray(outer, dtype=bool)) | inner
    alpha, beta, ok = nested_levels(uset, epsilon, inner, outer)
    cols = alpha[:, None] * inner + beta[:, None] * (outer & ~inner)
    cols[~ok] = 1.0
    return cols[ok].T if valid_only else cols.T


def block_masks(W: np.ndarray) -> np.ndarray:
    """The blocks (rows: boolean masks over the symbols) of a two-level channel's non-constant columns.

    A column's block is where it exceeds its smallest entry by more than a relative 1e-9; columns whose block is
    empty or every symbol (constant columns) are left out. Implements: the seeds of docs/design.md §7.

    Parameters
    ----------
    W : np.ndarray
        The channel, ``N × M`` (rows: symbols, columns: outputs).

    Returns
    -------
    np.ndarray
        Boolean ``B × N``: one row per non-constant column, in column order.
    """
    lo = W.min(axis=0)
    masks = (W > lo * (1.0 + 1e-9)).T
    return masks[masks.any(axis=1) & ~masks.all(axis=1)]


def ray_seeds(uset: UncertaintySet, epsilon: float, ldp_matrix: np.ndarray, gen: np.random.Generator,
              budget: int) -> np.ndarray:
    """Rank-one seed columns, each boosted to the largest level 𝒫 allows (:func:`subset_directions`): constant,
    singletons, the dyadic families of :func:`_dyadic_groups` (Hadamard response's half-sets: at small ε and a wide
    ball their heavy members allow ratios far above e^ε) and up to ``budget`` blocks of the LDP seed channel.

    Above :data:`LARGE_N` symbols only the constant column and the first dyadic family (the Hadamard half-sets) are
    kept. Implements: docs/design.md §7 "Seeds that make LDP a floor".

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set 𝒫 over the N symbols.
    epsilon : float
        The PML level ε.
    ldp_matrix : np.ndarray
        The LDP seed channel, ``N × M`` (its blocks: :func:`block_masks`).
    gen : np.random.Generator
        Draws the sample of blocks (when there are more than ``budget``) and the dyadic families' random classes.
    budget : int
        Most blocks of ``ldp_matrix`` kept.

    Returns
    -------
    np.ndarray
        ``N × K``: the constant column of ones first, then one direction per subset.
    """
    n = uset.size
    masks = block_masks(ldp_matrix)
    if masks.shape[0] > budget:
        masks = masks[gen.choice(masks.shape[0], size=budget, replace=False)]
    dyadic = _dyadic_groups(n, epsilon, gen)
    if n > LARGE_N:  # the master is dense in the number of columns: only the dyadic half-sets (≤ 2N) at large N
        masks = np.vstack(dyadic[:1])
    else:
        masks = np.vstack([np.eye(n, dtype=bool), *dyadic, masks])
    return np.hstack([np.ones((n, 1)), subset_directions(uset, epsilon, masks)])


def _f2_points(n: int) -> np.ndarray:
    """The coordinates over F_2 (N × m, ``m = ⌈log2(N + 1)⌉``) of the first N non-zero points of ``F_2^m``."""
    m = max(1, int(math.ceil(math.log2(n + 1))))
    return ((np.arange(1, n + 1, dtype=np.int64)[:, None] >> np.arange(m)) & 1).astype(np.int64)


def _hadamard_halves(bits: np.ndarray) -> np.ndarray:
    """Hadamard response's half-sets ``{x : ⟨r, x⟩ = 0}``, one row per ``r ≠ 0`` of ``F_2^m`` (2^m − 1 × N)."""
    m = bits.shape[1]
    rbits = ((np.arange(1, 2**m, dtype=np.int64)[:, None] >> np.arange(m)) & 1).astype(np.int64)
    return (rbits @ bits.T) % 2 == 0


def _class_codimension(epsilon: float) -> int:
    """``j = round(log2(e^ε + 1))``: cosets of a j-dimensional map hold about subset selection's ``N/(e^ε + 1)``."""
    return int(round(math.log2(math.exp(min(epsilon, 700.0)) + 1.0)))


def _coset_cells(bits: np.ndarray, A: np.ndarray) -> np.ndarray:
    """The parallel class of the linear map ``A`` (j × m over F_2): one row per non-empty coset of its kernel."""
    j = A.shape[0]
    code = ((bits @ A.T) % 2) @ (1 << np.arange(j))  # the coset index of every symbol
    cells = code[None, :] == np.arange(2**j)[:, None]
    return cells[cells.any(axis=1)]


def _dyadic_groups(n: int, epsilon: float, rng: np.random.Generator, budget: int = 512) -> list[np.ndarray]:
    """Balanced designs from F_2^m (K = 2^m > N points, symbols = the first N non-zero points): the Hadamard
    response (complements of the hyperplanes through 0, Acharya, Sun & Zhang 2019: a 2-design) and random parallel
    classes of codimension j ≈ log2(e^ε + 1) (the cosets of a random j-dimensional linear map: a partition, so
    every symbol is in exactly one subset per class), which approximate subset selection with k ≈ N/(e^ε + 1)."""
    bits = _f2_points(n)
    m = bits.shape[1]
    groups = [_hadamard_halves(bits)]
    j = _class_codimension(epsilon)
    classes: list[np.ndarray] = []
    if 2 <= j < m:
        for _ in range(max(1, budget // 2**j)):
            A = rng.integers(0, 2, size=(j, m))
            if np.linalg.matrix_rank(A) < j:  # rank over the reals ≥ rank over F_2 is not enough: retry cheaply
                continue
            cls = _coset_cells(bits, A)
            if cls.shape[0] > 1:
                classes.append(cls)
        if classes:
            groups.append(np.vstack(classes))  # a union of partitions is balanced: one design
    return [g for g in groups if g.any(axis=1).all() and not g.all(axis=1).any()]


class Incumbent(Protocol):
    """What :func:`rank_seeds` needs of the design's incumbent (``api._Incumbent``)."""

    value: float  #: the best criterion value so far
    last: float  #: the criterion value of the last matrix offered

    def offer(self, W: np.ndarray, source: str, rtol: float = 1e-9) -> bool:
        """Certify ``W``, keep it if better; True if it was better."""
        ...


def seed_budget(n: int, epsilon: float, prior: np.ndarray, base: int, cap: int, ldp_mse: float) -> int:
    """The output budget of the compact LDP channel that starts the design: ``base``, doubled up to ``cap`` while
    the best closed form within it is more than :data:`SEED_BUDGET_RTOL` above the LDP optimum ``ldp_mse``.

    Implements: docs/design.md §7 ("never behind local DP, by construction"). The design is never worse than its
    seed, so a seed near the optimum is what makes the design near it where the PML gain is small (a uniform P̂,
    large ε). At the base budget ``max(4096, 8N)`` the closed form was 12 % above the optimum at N = 200, ε = 4
    (uniform: AG(2, 47), 2 256 outputs; with 16 384 the cyclotomic p = 211 channel is within 0.5 %), 6.5 % at
    N = 100, 8 % at N = 300 (Zipf and uniform alike); most cells are within 1 % at the base budget and keep it.
    Where no budget reaches the threshold, the one with the smallest closed form (the smallest such budget) is used.

    Parameters
    ----------
    n, epsilon, prior
        The design's symbols, ε and prior.
    base, cap : int
        The first budget and the largest.
    ldp_mse : float
        The LDP optimum's error (``ldp_optimum(n, epsilon, prior).mse``).

    Returns
    -------
    int
        The budget (``base`` when the base budget's best is within the threshold, or above SEED_RANK_MAX_N).
    """
    if n > SEED_RANK_MAX_N or not math.isfinite(ldp_mse) or base >= cap:
        return base
    budget, best, best_budget = base, math.inf, base
    while True:
        mse = ranked_candidates(n, epsilon, prior, max_outputs=budget, count=1)[0][2]
        if mse < best * (1.0 - 1e-12):
            best, best_budget = mse, budget
        if mse <= (1.0 + SEED_BUDGET_RTOL) * ldp_mse or budget >= cap:
            return best_budget
        budget = cap if 2 * budget > cap / 1.25 else 2 * budget  # not a last step of a few %: 16 000 → 32 768


def offer_larger_seed(n: int, epsilon: float, prior: np.ndarray, base: int, cap: int, ldp_mse: float,
                      best: Incumbent, deadline: float, per_seed: float, first_outputs: int, state: dict) -> bool:
    """Offer the incumbent the best compact channel on the budget of :func:`seed_budget` when it is larger than
    ``base``; the master keeps the base budget's seed as its matrix column. Returns whether the limit could not fit
    it (the design then ends, as in :func:`rank_seeds`: every limit evaluates the same candidates in order).

    Implements: docs/design.md §7 ("never behind local DP, by construction"). The design is never worse than its
    incumbent, so where the PML gain is small (a uniform P̂, large ε) the result is within SEED_BUDGET_RTOL of the LDP
    optimum; where it is large (Zipf) the rounds keep the base seed's speed: as the master's column, the 16 384-output
    channel at Zipf 300, ε = 4 halved the rounds and its moment bound solved no relaxed master in 60 s (gap 41 → 83 %).

    Parameters
    ----------
    n, epsilon, prior
        The design's symbols, ε and prior.
    base, cap : int
        The base output budget and the largest.
    ldp_mse : float
        The LDP optimum's error.
    best : Incumbent
        The design's incumbent.
    deadline : float
        ``time.perf_counter()`` time by which the call must end.
    per_seed : float
        Seconds the first seed's build and offer took; the channel is estimated at 1.5 × that, scaled by its outputs
        over ``first_outputs``.
    first_outputs : int
        The first seed's number of outputs.
    state : dict
        The design's state; ``state["seeds"]`` gets the channel's criterion value, ``state["larger_seed"]`` its name.

    Returns
    -------
    bool
        True when the channel did not fit before the deadline (nothing after the seeds runs then).
    """
    budget = seed_budget(n, epsilon, prior, base, cap, ldp_mse)
    if budget <= base:
        return False
    name, outputs, _ = ranked_candidates(n, epsilon, prior, max_outputs=budget, count=1)[0]
    tried = state.setdefault("seeds", {})
    if name in tried:
        return False
    if _too_long(per_seed, outputs, first_outputs, deadline):
        return True
    best.offer(build_candidate(n, epsilon, prior, name, max_outputs=budget).matrix, "ldp_seed (larger budget)")
    tried[name] = best.last
    state["larger_seed"] = name
    return False


def _candidate_seconds(per_seed: float, outputs: int, first_outputs: int) -> float:
    """The price of a candidate seed of ``outputs`` outputs: 1.5 × the first seed's ``per_seed`` seconds, scaled by its
    outputs over the first's (never below 1×)."""
    return 1.5 * per_seed * max(1.0, outputs / max(first_outputs, 1))


def _too_long(per_seed: float, outputs: int, first_outputs: int, deadline: float) -> bool:
    """Whether a candidate of ``outputs`` outputs, priced by :func:`_candidate_seconds`, would end after ``deadline``
    (the one rule of :func:`rank_seeds` and :func:`offer_larger_seed`)."""
    return time.perf_counter() + _candidate_seconds(per_seed, outputs, first_outputs) >= deadline


def first_seed(n: int, epsilon: float, prior: np.ndarray, max_outputs: int) -> tuple[PairBalancedChannel, float]:
    """The compact LDP channel that starts the design, and the seconds its build takes (which prices every later
    candidate seed in :func:`rank_seeds`).

    Implements: docs/design.md §7 (the seed ranked by its exact error). The time must be the channel's own: the
    closed-form ranking's one-time tables for this (N, budget) (prime scans, near-designs, ~0.5 s in a fresh process)
    are built before it is timed, and a build quicker than :data:`REBUILD_SECONDS`, mostly first-call overhead, is
    timed again, warm (the smaller is kept). Timed cold, N = 30, ε = 4, 3 s priced the next candidate at ~25 s, and
    N = 40, ε = 4, 2 s (GRR built in 0.053 s, the next candidate 41 times its outputs) at 3.3 s: both designs ended
    with the seed, 0 rounds, where a warm process ran 19 and 20.

    Parameters
    ----------
    n, epsilon, prior, max_outputs
        The design's symbols, ε, prior and output budget.

    Returns
    -------
    (PairBalancedChannel, float)
        :func:`~pml_design.mechanisms.frequency_oracles.optimum.compact_ldp_channel`'s channel and its build time.
    """
    if n > SEED_RANK_MAX_N:  # no later candidate to price
        t = time.perf_counter()
        seed = compact_ldp_channel(n, epsilon, prior, max_outputs=max_outputs)
        return seed, time.perf_counter() - t
    # compact_ldp_channel's choice (the ranking's first), scored once; the tables are built on the way
    name = ranked_candidates(n, epsilon, prior, max_outputs=max_outputs, count=1)[0][0]
    seconds = math.inf
    for _ in range(2):  # a quick first build is timed again, warm
        t = time.perf_counter()
        seed = build_candidate(n, epsilon, prior, name, max_outputs=max_outputs)
        seconds = min(seconds, time.perf_counter() - t)
        if seconds >= REBUILD_SECONDS:
            break
    return seed, seconds


def rank_seeds(n: int, epsilon: float, prior: np.ndarray, max_outputs: int, seed: PairBalancedChannel,
               best: Incumbent, deadline: float, build_seconds: float, offer_seconds: float,
               state: dict) -> tuple[PairBalancedChannel, bool, float]:
    """Offer the next compact LDP channels by closed form (:func:`ranked_candidates`) to the design's incumbent and
    keep as the seed the one it found best by its exact criterion.

    Implements: docs/design.md §7 (the seed ranked by its exact error).

    Parameters
    ----------
    n, epsilon, prior, max_outputs
        The design's symbols, ε, prior and output budget.
    seed : PairBalancedChannel
        The first candidate, already offered.
    best
        The incumbent: ``offer(W, source)`` returns whether W is better, ``value`` is the best criterion so far and
        ``last`` the criterion of the last matrix offered.
    deadline : float
        ``time.perf_counter()`` time by which the call must end.
    build_seconds, offer_seconds : float
        What building and offering the first seed took; a candidate is estimated at 1.5 × their sum, scaled up by
        its blocks over the first seed's outputs.
    state : dict
        The design's state; ``state["seeds"]`` gets each candidate's criterion value.

    Returns
    -------
    (PairBalancedChannel, bool, float)
        The seed, whether the limit could not fit the next candidate (the design then ends), and the seconds the
        seed's offer took.
    """
    if not isinstance(state, dict):
        raise TypeError(f"state must be the design's state dict, got {type(state).__name__}")
    if math.isnan(float(deadline)):
        raise ValueError("deadline must be a time.perf_counter() time or inf, got nan")
    if n > SEED_RANK_MAX_N:
        return seed, False, offer_seconds
    ranked = ranked_candidates(n, epsilon, prior, max_outputs=max_outputs, count=SEED_CANDIDATES, rtol=SEED_RTOL)
    tried = {seed.name: best.value}
    first, per_seed = seed.matrix.shape[1], build_seconds + offer_seconds
    out_of_time = False
    for name, outputs, _ in ranked:
        if name in tried:
            continue
        if _too_long(per_seed, outputs, first, deadline):
            out_of_time = True
            break
        alt = build_candidate(n, epsilon, prior, name, max_outputs=max_outputs)
        t = time.perf_counter()
        if best.offer(alt.matrix, "ldp_seed"):
            seed, offer_seconds = alt, time.perf_counter() - t
        tried[name] = best.last
    state["seeds"] = tried
    return seed, out_of_time, offer_seconds
