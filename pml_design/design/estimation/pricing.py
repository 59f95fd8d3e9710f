"""Pricing of the estimation design's column generation: exact (complete ray list) or a local search.

Implements: docs/design.md §7 "Algorithm". The reduced cost of a normalised ray r is ``d = −rᵀ M r + ν·r``
(``M = F⁻²`` for A-, ``F⁻¹`` for D-optimality; ν the master's multipliers); rays with ``d < 0`` improve the
master. With the complete list of extreme rays pricing is exact; otherwise a greedy local search over two-level
subset directions (:func:`~.seeds.subset_directions`) proposes columns, and the bound comes from
:func:`~.bound.max_ray_value`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .master import gradients
from ...uncertainty import L1Ball, UncertaintySet
from .seeds import levels_from_f, nested_directions, nested_levels, subset_directions

__all__ = ["local_pricing", "nested_pricing", "reduced_costs"]

#: Sweeps (single moves) of each start of the three-level search; starts drawn at random besides the given ones.
NESTED_SWEEPS: int = 400
NESTED_RESTARTS: int = 8
#: Starts climbed together in numpy on the ℓ1 ball (0: one at a time), while the work budget cannot end a climb (a
#: chunk of 16 makes at most 6 400 moves; the budget is 20 000 at N = 100), else one at a time: the same local optima
#: and candidates, without a Python step per move and start (docs/design.md §7, three-level pricing).
BATCH_CLIMBS: int = 16


def reduced_costs(R: np.ndarray, M: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``d_k = −r_kᵀ M r_k + ν·r_k`` for every column of R.

    Implements: the reduced cost of docs/design.md §7 "Algorithm" (module docstring); ``d_k < 0``: the ray
    improves the master.

    Parameters
    ----------
    R : numpy.ndarray, shape (N, K)
        Normalised rays, one per column.
    M : numpy.ndarray, shape (N, N)
        ``F⁻²`` (A-optimal) or ``F⁻¹`` (D-optimal), as in :func:`~.master.gradients`.
    nu : numpy.ndarray, shape (N,)
        The master's multipliers ν.

    Returns
    -------
    numpy.ndarray, shape (K,)
        The reduced cost of each column.
    """
    return gradients(R, M) + nu @ R


def local_pricing(uset: UncertaintySet, epsilon: float, prior: np.ndarray, M: np.ndarray, nu: np.ndarray,
                  gen: np.random.Generator, *, density: float | None = None, restarts: int = 6,
                  sweeps: int = 4, per_sweep: int = 4) -> np.ndarray:
    """Heuristic pricing over two-level subset directions: greedy single flips from several starts.

    Starts: the symbols with the largest ``M_xx − ν_x`` and random masks of the given ``density`` (default
    ``1/(e^ε + 1)``, subset selection's k/N) alternating with 1/2 (Hadamard response's half-sets). Returns the
    normalised candidate columns (``prior·r = 1``): each local optimum and the ``per_sweep`` best improving
    neighbours met on the way.

    Implements: docs/design.md §7 "Algorithm" (pricing without the complete ray list) over the two-level
    directions of :func:`~.seeds.subset_directions` (§7 "Seeds that make LDP a floor").

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set 𝒫.
    epsilon : float
        The PML budget ε.
    prior : numpy.ndarray, shape (N,)
        The distribution the columns are normalised by (``prior·r = 1``).
    M : numpy.ndarray, shape (N, N)
        ``F⁻²`` (A-optimal) or ``F⁻¹`` (D-optimal).
    nu : numpy.ndarray, shape (N,)
        The master's multipliers ν.
    gen : numpy.random.Generator
        Draws the random start masks (and fixes empty or full ones).
    density : float, optional
        Fraction of symbols in the first start and in every other random start (the rest: 1/2); None:
        ``1/(e^ε + 1)``.
    restarts : int, default 6
        Number of starts, the first one the ``round(N·density)`` symbols of largest ``M_xx − ν_x``.
    sweeps : int, default 4
        Most improving flips per start.
    per_sweep : int, default 4
        Most neighbours with negative reduced cost kept per sweep.

    Returns
    -------
    numpy.ndarray, shape (N, K)
        The distinct candidate columns, normalised (``prior·r = 1``).
    """
    n = prior.shape[0]
    rho = 1.0 / (math.exp(min(epsilon, 700.0)) + 1.0) if density is None else float(density)

    def score(masks):
        C = subset_directions(uset, epsilon, masks)
        C = C / (prior @ C)
        return reduced_costs(C, M, nu), C

    first = np.zeros(n, dtype=bool)
    first[np.argsort(-np.diag(M) + nu)[: max(1, int(round(n * rho)))]] = True
    starts = [first] + [gen.random(n) < (rho if i % 2 else 0.5) for i in range(restarts - 1)]
    out = []
    for m in starts:
        if not m.any():
            m[gen.integers(n)] = True
        if m.all():
            m[gen.integers(n)] = False
        cur = float(score(m[None, :])[0][0])
        for _ in range(sweeps):
            flips = np.tile(m, (n, 1))
            flips[np.arange(n), np.arange(n)] ^= True
            ok = flips.any(axis=1) & ~flips.all(axis=1)
            vals, _ = score(flips[ok])
            order = np.argsort(vals)[:per_sweep]
            out.extend(flips[ok][order[vals[order] < 0]])  # every good neighbour is a candidate column
            j = int(order[0])
            if vals[j] < cur - 1e-15:
                cur = float(vals[j])
                m = flips[ok][j]
            else:
                break
        out.append(m)
    return score(np.unique(np.array(out), axis=0))[1]


def _nested_values(uset, epsilon, prior, M, nu, U, W, stats):
    """Values ``rᵀMr − ν·r`` of the normalised three-level columns with masks ``U``, ``W = V∖U`` (rows), from the
    quadratic statistics ``stats = (1_UᵀM1_U, 1_UᵀM1_W, 1_WᵀM1_W)`` of each row; −inf where no column exists."""
    alpha, beta, ok = nested_levels(uset, epsilon, U, U | W)
    return _values(alpha, beta, ok, U @ prior, W @ prior, U @ nu, W @ nu, stats)


def _values(alpha, beta, ok, pi_u, pi_w, nu_u, nu_w, stats):
    uu, uw, ww = stats
    z = alpha * pi_u + beta * pi_w
    ok = ok & (z > 0)
    z = np.where(ok, z, 1.0)
    a, b = alpha / z, beta / z
    with np.errstate(over="ignore", invalid="ignore"):  # levels near e^ε overflow at ε ≈ 700: such columns are skipped
        val = a * a * uu + 2.0 * a * b * uw + b * b * ww - a * nu_u - b * nu_w  # (numpy's warning reached the CLI)
    return np.where(ok & np.isfinite(val), val, -np.inf)


def _batch_climbs(epsilon, prior, M, dM, nu, center, radius, S, sweeps, per_sweep, deadline, budget=None):
    """The climbs of :func:`nested_pricing` on the ℓ1 ball from the start states ``S`` (rows), in lockstep: each row
    takes its best move while one improves. Before every sweep but the first, the climbs stop at the deadline or once
    ``budget`` moves are made. Returns the moves made and the states met (every improving neighbour among the
    ``per_sweep`` best of each sweep, and each final state)."""
    n = prior.shape[0]
    S = S.copy()
    B = S.shape[0]
    x = np.concatenate([np.arange(n), np.arange(n)])
    U, W = (S == 2).astype(float), (S == 1).astype(float)
    mU, mW = U @ M, W @ M
    uu, uw, ww = np.einsum("bi,bi->b", U, mU), np.einsum("bi,bi->b", U, mW), np.einsum("bi,bi->b", W, mW)
    half = radius / 2.0
    nv = (U + W).sum(axis=1)
    a0, b0, ok0 = levels_from_f(epsilon, np.maximum(0.0, U @ center - half), np.maximum(0.0, (U + W) @ center - half),
                                nv == n, nv > 0)
    cur = _values(a0, b0, ok0, U @ prior, W @ prior, U @ nu, W @ nu, (uu, uw, ww))
    active = np.ones(B, dtype=bool)
    found: list[np.ndarray] = []
    moves = 0
    rows_all = np.arange(B)
    for sweep in range(sweeps):
        if sweep and (time.perf_counter() > deadline or budget is not None and moves >= budget):
            break
        rows = rows_all[active]
        if not rows.size:
            break
        moves += rows.size
        s = S[rows]
        tgt = np.concatenate([(s + 1) % 3, (s + 2) % 3], axis=1)
        src = np.concatenate([s, s], axis=1)
        dU = (tgt == 2).astype(float) - (src == 2)
        dW = (tgt == 1).astype(float) - (src == 1)
        mUx, mWx = mU[rows][:, x], mW[rows][:, x]
        st = (uu[rows, None] + 2.0 * dU * mUx + dU * dU * dM[x], uw[rows, None] + dU * mWx + dW * mUx + dU * dW * dM[x],
              ww[rows, None] + 2.0 * dW * mWx + dW * dW * dM[x])
        Ur, Wr = U[rows], W[rows]
        dV = dU + dW
        n_v = nv[rows, None] + dV
        f_u = np.maximum(0.0, (Ur @ center)[:, None] + dU * center[x] - half)
        f_v = np.maximum(0.0, ((Ur + Wr) @ center)[:, None] + dV * center[x] - half)
        alpha, beta, ok = levels_from_f(epsilon, f_u, f_v, n_v == n, n_v > 0)
        vals = _values(alpha, beta, ok, (Ur @ prior)[:, None] + dU * prior[x], (Wr @ prior)[:, None] + dW * prior[x],
                       (Ur @ nu)[:, None] + dU * nu[x], (Wr @ nu)[:, None] + dW * nu[x], st)
        order = np.argsort(-vals, axis=1)[:, :per_sweep]
        c = cur[rows]
        fin = np.isfinite(c)
        bar = np.where(fin, c + 1e-12 * np.maximum(1.0, np.abs(np.where(fin, c, 0.0))), -np.inf)  # a start may be no ray
        top = np.take_along_axis(vals, order, axis=1)
        good_r, good_k = np.nonzero(top > bar[:, None])
        if good_r.size:  # every good neighbour is a candidate state
            j = order[good_r, good_k]
            t = s[good_r].copy()
            t[np.arange(j.size), x[j]] = tgt[good_r, j]
            found.extend(t)
        best = order[:, 0]
        gain = top[:, 0] > bar
        stop = rows[~gain]
        found.extend(S[stop])
        active[stop] = False
        go, jb = rows[gain], best[gain]
        if not go.size:
            continue
        k = np.arange(rows.size)[gain]
        cur[go] = top[gain, 0]
        col = x[jb]
        S[go, col] = tgt[k, jb]
        mU[go] += dU[k, jb][:, None] * M[col]
        mW[go] += dW[k, jb][:, None] * M[col]
        U[go, col] = (S[go, col] == 2)
        W[go, col] = (S[go, col] == 1)
        nv[go] += dV[k, jb]
        uu[go], uw[go], ww[go] = st[0][k, jb], st[1][k, jb], st[2][k, jb]
    found.extend(S[active])
    return moves, found


def nested_pricing(uset: UncertaintySet, epsilon: float, prior: np.ndarray, M: np.ndarray, nu: np.ndarray,
                   gen: np.random.Generator, *, starts: np.ndarray | None = None, restarts: int = NESTED_RESTARTS,
                   sweeps: int = NESTED_SWEEPS, per_sweep: int = 4, deadline: float = math.inf,
                   work: int | None = None) -> np.ndarray:
    """Heuristic pricing over the three-level directions of :func:`~.seeds.nested_directions` (nested U ⊆ V).

    Implements: docs/design.md §7 "Algorithm" (pricing). Every symbol is out of V, in V∖U or in U; a move puts one
    symbol in another of the three; each start climbs by best moves (``rᵀMr − ν·r`` of the normalised column,
    updated in O(N) per move from ``M1_U``, ``M1_W`` and the masses; for sets other than the ℓ1 ball ``f`` is
    evaluated on the N-symbol masks, O(N²)) until no move improves. The two-level directions of
    :func:`local_pricing` are the states with ``V`` = everything; the rays with zeros outside V are the ones
    they cannot reach (measured: on Zipf N = 50, ε = 1 the best three-level ray priced at 25.7 where the best
    two-level one was below 0; docs/design.md §7).

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set 𝒫 (the ℓ1 ball is updated in O(N) per move).
    epsilon : float
        The PML budget ε.
    prior : numpy.ndarray, shape (N,)
        The distribution the columns are normalised by (``prior·r = 1``).
    M : numpy.ndarray, shape (N, N)
        ``F⁻²`` (A-optimal) or ``F⁻¹`` (D-optimal); symmetrised here.
    nu : numpy.ndarray, shape (N,)
        The master's multipliers ν.
    gen : numpy.random.Generator
        Draws the ``restarts`` random start states.
    starts : numpy.ndarray of int, shape (S, N), optional
        Start states (0 = out, 1 = V∖U, 2 = U); besides them ``restarts`` random states.
    restarts : int, default :data:`NESTED_RESTARTS`
        Number of random start states (after ``starts``).
    sweeps : int, default :data:`NESTED_SWEEPS`
        Most moves per start.
    per_sweep : int, default 4
        Most improving moves kept as candidates per sweep.
    deadline : float, optional
        ``time.perf_counter()`` value after which every climb stops where it is and no new start is taken (the
        first start makes at least one move).
    work : int, optional
        Most moves over all starts (a work budget: unlike ``deadline`` the search, hence the result, does not depend on
        the clock); None: ``sweeps`` per start.

    Returns
    -------
    numpy.ndarray, shape (N, K)
        Normalised candidate columns (``prior·r = 1``): each local optimum and the ``per_sweep`` best improving
        moves met on the way.
    """
    n = prior.shape[0]
    M = 0.5 * (M + M.T)
    dM = np.diag(M)
    ball = isinstance(uset, L1Ball)
    center = uset.center if ball else None
    rand = gen.integers(0, 3, size=(restarts, n))
    S0 = rand if starts is None else np.vstack([np.asarray(starts, dtype=np.int64).reshape(-1, n), rand])
    x = np.concatenate([np.arange(n), np.arange(n)])
    rows = np.arange(2 * n)
    found: list[np.ndarray] = []
    moves = 0

    def spent() -> bool:  # the deadline or the work budget
        return time.perf_counter() > deadline or work is not None and moves >= work

    i = 0
    while ball and i < len(S0) and not (i and spent()):
        # lockstep climbs while the work budget cannot end one (the same local optima), else one start at a time
        size = BATCH_CLIMBS if BATCH_CLIMBS and (work is None or moves + BATCH_CLIMBS * sweeps <= work) else 1
        done, met = _batch_climbs(epsilon, prior, M, dM, nu, center, uset.radius, S0[i:i + size], sweeps, per_sweep,
                                  deadline, None if work is None else work - moves)
        moves += done
        found.extend(met)
        i += size
    for i, s in enumerate(S0 if not ball else ()):  # every other set: f on the N-symbol masks, O(N²) a move
        if i and spent():
            break
        s = s.copy()
        U, W = s == 2, s == 1
        mU, mW = M @ U, M @ W
        uu, uw, ww = float(U @ mU), float(U @ mW), float(W @ mW)
        cur = float(_nested_values(uset, epsilon, prior, M, nu, U[None], W[None],
                                   (np.array([uu]), np.array([uw]), np.array([ww])))[0])
        for sweep in range(sweeps):
            if sweep and spent():
                break
            moves += 1
            tgt = np.concatenate([(s + 1) % 3, (s + 2) % 3])
            src = np.concatenate([s, s])
            dU = (tgt == 2).astype(float) - (src == 2)
            dW = (tgt == 1).astype(float) - (src == 1)
            stats = (uu + 2.0 * dU * mU[x] + dU * dU * dM[x], uw + dU * mW[x] + dW * mU[x] + dU * dW * dM[x],
                     ww + 2.0 * dW * mW[x] + dW * dW * dM[x])
            Us, Ws = np.tile(U, (2 * n, 1)), np.tile(W, (2 * n, 1))
            Us[rows, x], Ws[rows, x] = tgt == 2, tgt == 1
            alpha, beta, ok = nested_levels(uset, epsilon, Us, Us | Ws)
            vals = _values(alpha, beta, ok, float(prior @ U) + dU * prior[x], float(prior @ W) + dW * prior[x],
                           float(nu @ U) + dU * nu[x], float(nu @ W) + dW * nu[x], stats)
            order = np.argsort(-vals)[:per_sweep]
            bar = cur + 1e-12 * max(1.0, abs(cur)) if math.isfinite(cur) else -math.inf  # a start may be no ray
            for j in order[vals[order] > bar]:  # every good neighbour is a candidate column
                t = s.copy()
                t[x[j]] = tgt[j]
                found.append(t)
            j = int(order[0])
            if not vals[j] > bar:
                break
            cur = float(vals[j])
            s[x[j]] = tgt[j]
            mU += dU[j] * M[:, x[j]]
            mW += dW[j] * M[:, x[j]]
            U, W = s == 2, s == 1
            uu, uw, ww = float(stats[0][j]), float(stats[1][j]), float(stats[2][j])
        found.append(s)
    key = np.unique(np.array(found), axis=0)
    U, V = key == 2, key >= 1
    C = nested_directions(uset, epsilon, U, V, valid_only=True)
    return C / (prior @ C)
