"""A first-order master for large alphabets: the best mixture of ε-PML channels (docs/design.md §7.5).

Implements core paper eq. (9) with the A- or D-optimal estimation criterion (docs/design.md §7), restricted to
mixtures.

Above :data:`~pml_design.design.estimation.api.MAX_COLUMN_GENERATION_N` the restricted master of
:mod:`.master` (a dense Newton system in its columns) is out of reach, but a mixture of channels is not: if every
channel ``W_c`` is row-stochastic and ε-PML over 𝒫, so is ``[α_1 W_1, …, α_C W_C]`` for every α in the simplex
(each column keeps its leakage, a positive multiple of a column has the same), and its Fisher information is
``F(α) = Σ_c α_c F(W_c)``. The A-criterion ``tr F(α)⁻¹`` is convex in α, and the multiplicative algorithm

    α_c ← α_c (tr F⁻¹F_cF⁻¹ / tr F⁻¹)^λ

keeps the simplex (``Σ_c α_c tr F⁻¹F_cF⁻¹ = tr F⁻¹``) and, with λ = ½, never increases the criterion (Yu 2010,
*Monotonic convergence of a general algorithm for computing optimal designs*, Ann. Statist. 38, Theorem 3: the
φ_p criteria with p = 1 and any λ ∈ (0, 1/(p + 1)]). Each step tries λ = 1 first and keeps it only when the
criterion fell (checked at the next step's factorisation), so the step is never worse than the proven one. For the
D-criterion ``log det F(α)⁻¹`` the update is ``α_c ← α_c tr(F⁻¹F_c)/N`` (``Σ_c α_c tr F⁻¹F_c = N``), monotone
at λ = 1 (Titterington 1976, the p = 0 case of Yu 2010).

The channels (:func:`partition_channels`): the compact LDP channel (one matrix, ``F`` given), and *partition
channels* — a partition of the symbols into cells ``S_1 … S_L`` reported with the largest two-level column each
cell allows over 𝒫 (:func:`~.seeds.subset_directions`), re-weighted so the rows sum to 1. A cell holding much of
P̂'s mass has ``min_{Q∈𝒫} Q(S) > 0``, and its column can exceed ``e^ε``: the PML gain that an LDP channel cannot
have. Half-sets of Hadamard response (the dyadic family of :mod:`.seeds`) and random parallel classes of F_2^m
are the partitions used.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla

from ..._validation import check_mechanism, check_positive_int, check_positive_real, check_probability_vector
from ...uncertainty import UncertaintySet
from .seeds import _class_codimension, _coset_cells, _f2_points, _hadamard_halves, subset_directions

__all__ = ["MIXTURE_GHOST_RTOL", "MixtureResult", "PartitionChannels", "dyadic_partitions", "fit_outputs",
           "mixture_matrix",
           "mixture_stage", "mixture_weights", "partition_channels"]

#: A mixture's channel is dropped (weights renormalised) when one of its columns is at most this share of the largest
#: entry: 10 × the clean-up's ghost threshold (:func:`~pml_design.design.linear.lp.clean_tiny`, 1e-6).
MIXTURE_GHOST_RTOL: float = 1e-5

#: Columns of the random parallel classes of :func:`dyadic_partitions`, per symbol, and at most (a step costs
#: ~2N² per column: at N = 3 000, 8 192 columns ≈ 1.5·10¹¹ flops).
CLASS_COLUMNS_PER_SYMBOL: int = 16
CLASS_COLUMNS_CAP: int = 8192
#: A channel whose weight falls below this share of the even weight ``1/C`` is dropped for the rest of the run
#: (the multiplicative algorithm shrinks a useless channel geometrically and never revives it in practice; its
#: columns cost every later step).
PRUNE_SHARE: float = 1e-6


class PartitionChannels(NamedTuple):
    """Partition channels side by side: ``columns`` (N × T, each channel's columns sum to the all-ones vector) and
    ``owner`` (T,), the channel of every column."""

    columns: np.ndarray
    owner: np.ndarray


class MixtureResult(NamedTuple):
    """Mixture weights: ``seed`` (the matrix channel's), ``weights`` (one per partition channel), the criterion
    ``tr F⁻¹ − ‖π‖²`` at the prior, and the number of steps taken."""

    seed: float
    weights: np.ndarray
    value: float
    steps: int


def partition_channels(uset: UncertaintySet, epsilon: float, partitions: list[np.ndarray]) -> PartitionChannels:
    """Row-stochastic ε-PML channels, one per partition (a boolean ``L × N`` array of cells covering every symbol
    once), each cell reported by its largest two-level column over 𝒫 (:func:`~.seeds.subset_directions`).

    The cell columns ``c_j`` of one partition take one value on each cell ``S_i``; the weights ``w`` with
    ``Σ_j w_j c_j = 1`` solve the L × L system ``M w = 1``, ``M[i, j] = c_j(S_i)``. A partition whose solution is
    not positive is dropped (its cells cannot all be at their largest ratio at once), as is a single cell (a
    constant channel); an array that is not a partition of the N symbols is a ``ValueError``. Scaling a column keeps its
    leakage, so every channel is ε-PML over 𝒫 wherever its columns are. Implements: docs/design.md §7.5.

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set 𝒫 over the N symbols (``uset.size == N``).
    epsilon : float
        The PML level ε of the cell columns.
    partitions : list[np.ndarray]
        Partitions of the N symbols, each a boolean ``L × N`` array (a 1-D array is one row); empty cells are
        ignored.

    Returns
    -------
    PartitionChannels
        The kept channels' columns side by side (N × T) and each column's channel (numbered 0, 1, … in the order of
        the kept partitions); no columns when no partition is kept.

    Raises
    ------
    ValueError
        When an entry of ``partitions`` does not have N columns or does not hold every symbol in exactly one cell.
    """
    cols, owner = [], []
    for i, part in enumerate(partitions):
        part = np.atleast_2d(np.asarray(part, dtype=bool))
        if part.shape[1] != uset.size or not np.all(part.sum(axis=0) == 1):
            raise ValueError(f"partitions[{i}] must be a boolean array of cells × {uset.size} symbols with every "
                             f"symbol in exactly one cell; got shape {part.shape}")
        part = part[part.any(axis=1)]
        if part.shape[0] < 2:  # one cell: a constant channel, no information
            continue
        c = subset_directions(uset, epsilon, part)  # (N, L)
        first = part.argmax(axis=1)  # one symbol of every cell
        M = c[first, :]  # M[i, j] = c_j on cell i
        try:
            w = np.linalg.solve(M, np.ones(M.shape[0]))
        except np.linalg.LinAlgError:
            continue
        if not np.all(w > 0) or not np.all(np.isfinite(w)):
            continue
        cols.append(c * w)
        owner.append(np.full(c.shape[1], len(cols) - 1))
    if not cols:
        return PartitionChannels(np.zeros((uset.size, 0)), np.zeros(0, dtype=np.int64))
    return PartitionChannels(np.hstack(cols), np.concatenate(owner))


def dyadic_partitions(n: int, epsilon: float, rng: np.random.Generator, *,
                      class_columns: int | None = None) -> list[np.ndarray]:
    """Partitions of the N symbols (boolean ``L × N`` cells) from ``F_2^m``, symbols = the first N non-zero points.

    * Hadamard response's half-sets and their complements, ``{x : ⟨r, x⟩ = 0}`` and ``= 1`` for every r ≠ 0 (Acharya,
      Sun & Zhang 2019; the dyadic family of :mod:`.seeds`): 2^m − 1 binary partitions.
    * Random parallel classes of codimension ``j = round(log2(e^ε + 1))`` (the cosets of a random j × m map over F_2,
      cells of about ``N/(e^ε + 1)`` symbols, as subset selection's optimal support), ``class_columns`` cells in all
      (default :data:`CLASS_COLUMNS_PER_SYMBOL` · N, at most :data:`CLASS_COLUMNS_CAP`); none when j < 2.

    Implements: the partitions of the mixture master, docs/design.md §7.5.

    Parameters
    ----------
    n : int
        Number of symbols N.
    epsilon : float
        The PML level ε (sets the codimension j of the random parallel classes).
    rng : np.random.Generator
        Draws the random linear maps of the parallel classes.
    class_columns : int or None, default None
        Cells of the random parallel classes in all (``2^j`` per class, rounded down to whole classes); None:
        ``min(CLASS_COLUMNS_PER_SYMBOL · N, CLASS_COLUMNS_CAP)``.

    Returns
    -------
    list[np.ndarray]
        The partitions, each a boolean ``L × N`` array (cells × symbols): the Hadamard half-set pairs first, then
        the parallel classes with more than one cell.
    """
    bits = _f2_points(n)
    parts = [np.vstack([h, ~h]) for h in _hadamard_halves(bits) if h.any() and not h.all()]
    j = _class_codimension(epsilon)
    budget = min(CLASS_COLUMNS_PER_SYMBOL * n, CLASS_COLUMNS_CAP) if class_columns is None else class_columns
    if 2 <= j < bits.shape[1]:
        for _ in range(max(0, budget) // 2**j):
            cells = _coset_cells(bits, rng.integers(0, 2, size=(j, bits.shape[1])))
            if cells.shape[0] > 1:
                parts.append(cells)
    return parts


def mixture_weights(seed_fisher: np.ndarray, channels: PartitionChannels, prior: np.ndarray, deadline: float,
                    *, max_steps: int = 200, rtol: float = 1e-5, seed_weight: float = 0.5,
                    criterion: str = "A") -> MixtureResult:
    """The multiplicative algorithm (module docstring) for ``min tr F(α)⁻¹ − ‖π‖²`` (criterion "A") or
    ``min log det F(α)⁻¹`` ("D") over the mixtures of the seed channel (Fisher information ``seed_fisher``) and the
    partition channels, at ``prior``.

    Starts at weight ``seed_weight`` on the seed and the rest spread evenly; stops after ``max_steps``, when the
    criterion falls by less than ``rtol`` relative (for D, relative to ``max(|log det F⁻¹|, N)``: the log det can be
    near 0), or before a step that would end after ``deadline`` (the time of the last step is the estimate). The
    returned weights are those of the best criterion seen.

    Raises
    ------
    ValueError
        A prior that is not a positive probability vector, a ``seed_fisher`` that is not N × N or a ``channels``
        whose columns do not have N rows and one owner each, ``seed_weight`` outside (0, 1], a negative ``rtol`` or
        ``max_steps``, a criterion other than "A" and "D".

    Parameters
    ----------
    seed_fisher : np.ndarray
        Fisher information of the seed (matrix) channel, N × N.
    channels : PartitionChannels
        The partition channels (:func:`partition_channels`), columns with N rows.
    prior : np.ndarray
        The prior π, a positive probability vector of length N.
    deadline : float
        ``time.perf_counter()`` value; no step starts that would end after it (by the last step's duration).
    max_steps : int, default 200
        Most multiplicative steps.
    rtol : float, default 1e-5
        Relative decrease of the criterion below which the algorithm stops.
    seed_weight : float, default 0.5
        The seed channel's starting weight, in (0, 1] (1 when there are no partition channels).
    criterion : {"A", "D"}, default "A"
        A-optimal (``tr F⁻¹ − ‖π‖²``) or D-optimal (``log det F⁻¹``).

    Returns
    -------
    MixtureResult
        The seed's weight, the partition channels' weights (one per channel), the criterion at those weights (the
        best seen; ``inf`` when no step was taken) and the number of steps taken.
    """
    if criterion not in ("A", "D"):
        raise ValueError(f"criterion must be 'A' (mean squared error) or 'D' (log det), got {criterion!r}")
    d_opt = criterion == "D"
    prior = check_probability_vector(prior, "prior", full_support=True)
    n = prior.size
    if np.shape(seed_fisher) != (n, n):
        raise ValueError(f"seed_fisher must be {n} x {n} (the prior's size), got shape {np.shape(seed_fisher)}")
    cols, own = np.asarray(channels.columns), np.asarray(channels.owner)
    if cols.ndim != 2 or cols.shape[0] != n or own.shape != (cols.shape[1],):
        raise ValueError(f"channels must hold {n}-row columns with one owner each, got columns of shape {cols.shape} "
                         f"and owners of shape {own.shape}")
    if not 0.0 < float(seed_weight) <= 1.0:
        raise ValueError(f"seed_weight must be in (0, 1], got {seed_weight!r}")
    max_steps = check_positive_int(max_steps, "max_steps", minimum=0)
    rtol = check_positive_real(rtol, "rtol", allow_zero=True)
    U, owner = cols, own
    C = int(owner.max()) + 1 if owner.size else 0
    X = U / np.sqrt(prior @ U)  # F(W) = X Xᵀ for a channel's columns
    alpha = np.concatenate([[seed_weight if C else 1.0], np.full(C, (1.0 - seed_weight) / max(C, 1))])
    sq = float(prior @ prior)
    best = (math.inf, alpha.copy())
    prev_alpha, prev_val, prev_Fi, lam, lam_used = None, math.inf, None, 1.0, 1.0
    step_time, steps = 0.0, 0
    while steps < max_steps:
        if time.perf_counter() + step_time > deadline:
            break
        t0 = time.perf_counter()
        Xa = X * np.sqrt(alpha[1:][owner])
        F = alpha[0] * seed_fisher + Xa @ Xa.T
        try:
            L = sla.cho_factor(F, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            break
        Fi = sla.cho_solve(L, np.eye(n), check_finite=False)
        val = -2.0 * float(np.sum(np.log(np.diag(L[0])))) if d_opt else float(np.trace(Fi)) - sq
        if not math.isfinite(val):
            break
        if val < best[0]:
            best = (val, alpha.copy())
        if prev_alpha is not None and val > prev_val and lam_used == 0.5:  # rounding: no further progress
            break
        if prev_alpha is not None and val > prev_val:  # the λ = 1 step rose: redo it with the proven λ = ½
            alpha, val, Fi, lam = prev_alpha, prev_val, prev_Fi, 0.5
        elif prev_alpha is not None and prev_val - val < rtol * (max(abs(prev_val), n) if d_opt else abs(prev_val)):
            steps += 1
            break
        live = alpha[1:][owner] > 0.0
        if not live.all():  # pruned channels: their columns leave every later step
            X, owner = X[:, live], owner[live]
        d = np.zeros(C + 1)
        B = Fi @ X
        if d_opt:  # tr F⁻¹F_c, summing to N over the mixture
            tr = float(n)
            d[0] = float(np.sum(Fi * seed_fisher))
            d[1:] = np.bincount(owner, weights=np.sum(X * B, axis=0), minlength=C)
        else:  # tr F⁻¹F_cF⁻¹, summing to tr F⁻¹
            tr = float(np.trace(Fi))
            d[0] = float(np.sum((Fi @ seed_fisher) * Fi))
            d[1:] = np.bincount(owner, weights=np.sum(B * B, axis=0), minlength=C)
        prev_alpha, prev_val, prev_Fi = alpha, val, Fi
        alpha = alpha * (np.maximum(d, 0.0) / tr) ** lam
        alpha /= alpha.sum()
        alpha[1:][alpha[1:] < PRUNE_SHARE / max(C, 1)] = 0.0
        alpha /= alpha.sum()
        lam_used, lam = lam, 1.0
        steps += 1
        step_time = time.perf_counter() - t0
    val, alpha = best
    return MixtureResult(float(alpha[0]), alpha[1:], val, steps)


def _check_mixture(W_seed: object, pc: object, weights: object, seed_weight: object):
    """:func:`mixture_matrix`'s arguments as float arrays, or a ``TypeError``/``ValueError`` naming the bad one."""
    if not isinstance(pc, PartitionChannels):
        raise TypeError(f"pc must be a PartitionChannels (from partition_channels), got {type(pc).__name__}")
    W = check_mechanism(W_seed, "W_seed", n_inputs=pc.columns.shape[0])
    try:
        w = np.asarray(weights, dtype=float)
        a = float(seed_weight)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise TypeError("weights must be a numeric array and seed_weight a number, got "
                        f"{type(weights).__name__} and {type(seed_weight).__name__}") from None
    channels = int(pc.owner.max()) + 1 if pc.owner.size else 0
    if w.shape != (channels,):
        raise ValueError(f"weights must have one entry per partition channel ({channels}), got shape {w.shape}")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        bad = w[~(np.isfinite(w) & (w >= 0))][0]
        raise ValueError(f"weights must be finite and >= 0, got {float(bad)!r}")
    if not (math.isfinite(a) and a >= 0):
        raise ValueError(f"seed_weight must be finite and >= 0, got {a!r}")
    if float(w.sum()) + a <= 0:
        raise ValueError("weights and seed_weight must not all be 0")
    return W, w.copy(), a


def mixture_matrix(W_seed: np.ndarray, pc: PartitionChannels, weights: np.ndarray,
                   seed_weight: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The mixture's matrix ``[α_0 W_seed, α_c W_c …]``, without its ghost channels.

    Implements: docs/design.md §7.5. The channels (the seed is one) the clean-up would cut a column of as a ghost
    (at most :data:`MIXTURE_GHOST_RTOL` of the largest entry) are dropped whole and the weights renormalised; returns
    the matrix and the weights used. Every channel's rows sum to 1, so the rows still do and the columns stay exactly
    two-level, which the certification prices in closed form. (Dropping ghost *columns* left rows short by ~1e-8;
    their renormalisation spread each column's levels by ~1e-9, and every certification of a 1 000 × 13 000 mixture
    fell back to the per-column sort: 7 s instead of 0.1 s, a 120 s call ending at 129 s.) A mixture of nothing but
    ghosts keeps its heaviest channel.

    Parameters
    ----------
    W_seed : numpy.ndarray, shape (N, M)
        The LDP seed's matrix.
    pc : PartitionChannels
        The partition channels (:func:`partition_channels`).
    weights : numpy.ndarray, shape (C,)
        Each channel's weight (:attr:`MixtureResult.weights`).
    seed_weight : float
        The seed's weight.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, float)
        The row-stochastic matrix, the channels' weights used and the seed's.

    Raises
    ------
    TypeError, ValueError
        An argument that is not what is described above (named, with the bad value).
    """
    W_seed, weights, seed_weight = _check_mixture(W_seed, pc, weights, seed_weight)
    colmax = pc.columns.max(axis=0) * weights[pc.owner]
    seed_colmax = seed_weight * W_seed.max(axis=0)
    top = max(float(colmax.max(initial=0.0)), float(seed_colmax.max(initial=0.0)))
    cut = MIXTURE_GHOST_RTOL * top
    kept = weights.copy()
    kept[np.unique(pc.owner[(colmax > 0) & (colmax <= cut)])] = 0.0
    live = seed_colmax[seed_colmax > 0]  # as for the channels: an all-zero column is no ghost
    kept_seed = 0.0 if seed_weight > 0 and live.size and live.min() <= cut else float(seed_weight)
    if kept.sum() + kept_seed <= 0:  # (cannot happen: the largest entry's channel is never a ghost)
        kept, kept_seed = weights, float(seed_weight)
    scale = 1.0 / (float(kept.sum()) + kept_seed)
    kept, kept_seed = kept * scale, kept_seed * scale
    w = kept[pc.owner]
    parts = [pc.columns[:, w > 0] * w[w > 0]]
    if kept_seed > 0:
        parts.insert(0, W_seed * kept_seed)
    return np.hstack(parts), kept, kept_seed


def fit_outputs(pc: PartitionChannels, weights: np.ndarray, seed_weight: float, seed_outputs: int,
                max_outputs: int) -> tuple[np.ndarray, float]:
    """The mixture's weights with its lightest channels dropped until its matrix has at most ``max_outputs`` columns.

    Implements: the output cap of docs/design.md §7 ("An output cap") on the mixture of §7.5. Every channel is
    row-stochastic and ε-PML over 𝒫, so any convex combination of some of them is too (:func:`mixture_matrix`
    renormalises the weights): dropping channels keeps the guarantee and costs only their information. The seed
    (``seed_outputs`` columns) is kept when it has weight; the channels are kept heaviest first, each one that fits
    in what is left.

    Parameters
    ----------
    pc : PartitionChannels
        The partition channels.
    weights : numpy.ndarray, shape (C,)
        Each channel's weight (≥ 0).
    seed_weight : float
        The seed's weight (≥ 0).
    seed_outputs : int
        The seed's number of outputs.
    max_outputs : int
        The most columns the matrix may have.

    Returns
    -------
    (numpy.ndarray, float)
        The weights (the dropped channels at 0) and the seed's weight, not renormalised.
    """
    w = np.asarray(weights, dtype=float).copy()
    sizes = np.bincount(pc.owner, minlength=w.size)
    room = max_outputs - (seed_outputs if seed_weight > 0 else 0)
    order = np.argsort(-w, kind="stable")
    order = order[w[order] > 0]
    drop = []
    for c in order:  # heaviest first, skipping the channels that do not fit (one step per channel)
        if sizes[c] <= room:
            room -= sizes[c]
        else:
            drop.append(c)
    w[drop] = 0.0  # (the heaviest channel always fits beside no seed: it has at most N ≤ max_outputs columns)
    return w, float(seed_weight)


def mixture_stage(uset: UncertaintySet, epsilon: float, prior: np.ndarray, W_seed: np.ndarray,
                  G_seed: Callable[[], np.ndarray], best: object, gen: np.random.Generator, deadline: float,
                  offer_seconds: float, state: dict, steps: int, max_outputs: int | None = None) -> None:
    """The best mixture of the LDP seed and the ε-PML partition channels, offered to ``best`` (the design's stage).

    Implements: docs/design.md §7.5 (:func:`mixture_weights` over :func:`dyadic_partitions`). The mixture stops early
    enough for its offer and the clean-up's (each about the seed's offer, scaled by the outputs), so the call keeps
    its time contract.

    Parameters
    ----------
    uset : UncertaintySet
        The set the partition channels are ε-PML for.
    epsilon : float
        ε > 0.
    prior : numpy.ndarray, shape (N,)
        The distribution the error is evaluated at.
    W_seed : numpy.ndarray, shape (N, M)
        The LDP seed channel.
    G_seed : callable
        ``G_seed()``: its Fisher information (computed on first use).
    best : object
        The design's incumbent (``best.offer(W, source)``, ``best.util.criterion``).
    gen : numpy.random.Generator
        For the random parallel classes.
    deadline : float
        ``time.perf_counter()`` value by which the mixture stops.
    offer_seconds : float
        What one offer of the seed cost (the reserve for this stage's offer is scaled from it).
    state : dict
        The design's state; ``state["mixture"]`` is set.
    steps : int
        Most steps of the first-order method.
    max_outputs : int, optional
        The design's output cap: the lightest channels are dropped until the mixture fits (:func:`fit_outputs`).

    Returns
    -------
    None
    """
    n = uset.size
    pc = partition_channels(uset, epsilon, dyadic_partitions(n, epsilon, gen))
    if pc.columns.shape[1] == 0:
        return
    reserve = 2.0 * offer_seconds * (1.0 + pc.columns.shape[1] / W_seed.shape[1])
    if time.perf_counter() + reserve >= deadline:
        return
    G0 = G_seed()  # (N²·outputs: seconds at N = 4 000, so the time is checked again after it)
    if time.perf_counter() + reserve >= deadline:
        return
    res = mixture_weights(G0, pc, prior, deadline - reserve, max_steps=steps, criterion=best.util.criterion)
    weights, seed_weight = res.weights, res.seed
    if max_outputs is not None:
        weights, seed_weight = fit_outputs(pc, weights, seed_weight, W_seed.shape[1], max_outputs)
    fitted = bool(np.any((weights == 0) & (res.weights > 0)))
    W, weights, seed_weight = mixture_matrix(W_seed, pc, weights, seed_weight)
    state["mixture"] = {"steps": res.steps, "seed_weight": seed_weight, "channels": int(np.count_nonzero(weights)),
                        "value": res.value}
    best.offer(W, "mixture")
    if fitted:  # channels dropped to fit max_outputs: the value is the certified one of what was offered
        state["mixture"]["fitted_value"] = float(best.last)
