"""Estimation-aware design: the PML mechanism that estimates the input distribution best.

Implements: core paper eq. (9) with the utility replaced by the (negated) asymptotic estimation error of the
input distribution, over ``M(ε, 𝒫)`` of Proposition 2 / Corollary 1 (any ℓ1 radius); the objective is the
A-optimal (or D-optimal) experimental-design criterion of the channel's Fisher information.

Derivation (docs/design.md §7)
------------------------------
One report ``Y`` of a mechanism ``W`` has Fisher information ``F(W) = Σ_y w_y w_yᵀ / (P·w_y)`` about ``P``
(columns ``w_y``). Because ``F P = Σ_y w_y = 1``, the Cramér–Rao bound on the simplex is ``(F⁻¹ − P Pᵀ)/n``, and
the MLE attains it asymptotically, so the per-report MSE is ``tr F⁻¹ − ‖P‖²`` (A-optimality); ``log det F⁻¹``
is the D-optimal variant.

A column ``w = θ r`` contributes ``θ r rᵀ/(P·r)``: F is *linear* in the weights θ of normalised cone
directions ``r`` (``P·r = 1``), and splitting a column into extreme rays only adds PSD terms (the matrix
perspective ``r rᵀ/(P·r)`` is convex), so an optimal design uses extreme rays and the problem is the convex
program

    ``min_θ tr((Σ_k θ_k r_k r_kᵀ)⁻¹)  s.t.  Σ_k θ_k r_k = 1, θ ≥ 0``   (then ``Σθ = P·1 = 1``).

It is solved by column generation: a barrier (interior-point) Newton method for the master over generated
rays, and pricing by the gradient ``g_k = −r_kᵀ F⁻² r_k`` (A) or ``−r_kᵀ F⁻¹ r_k`` (D) with the master's
multipliers ν: a ray improves when ``g_k + ν·r_k < 0``. For any ν and any feasible θ, convexity gives the
lower bound ``f* ≥ f(θ̄) − g·θ̄ − ν·1 + min_k (g_k + ν·r_k)``; it is *valid* when the minimum runs over every
extreme ray (complete enumeration: small alphabets), and is then reported as ``DesignResult.lower_bound``.

Seeds guarantee the baselines: the constant column, each symbol's randomized-response direction and the
k-subset directions at the largest level the guarantee allows (per subset ``S``: ``(e^ε − 1)1_S +
(1 − e^ε f(1_S))·1`` with ``f(1_S) = min_{Q∈𝒫} Q(S)``), so randomized response and subset selection at ε
(ε-LDP, hence ε-PML for every distribution) are feasible for the master: the design is never worse than them
(for subset selection exactly when all ``C(N, k)`` subsets fit in the seed budget; otherwise a family of
balanced cyclic designs stands in).
"""

from __future__ import annotations

import math
import time
from itertools import combinations

import numpy as np

from ..mechanisms.frequency_oracles.fisher import fisher_information
from ..uncertainty import FiniteSet, L1Ball, UncertaintySet
from .anytime import PROOF_RTOL, _default_progress, _progress_update, _warn_gap
from .certify import certify
from .result import DesignResult, SolverFailedError
from .utilities import FrequencyEstimation

__all__ = ["design_frequency_estimation", "fisher_information", "subset_directions"]

#: Largest number of extreme rays for which pricing enumerates all of them (and a lower bound is proven).
MAX_ENUMERATED_RAYS: int = 1_100_000
#: Budget of k-subset seed columns (all C(N, k) subsets when they fit).
SUBSET_SEED_BUDGET: int = 400


def _subset_floor(uset: UncertaintySet, masks: np.ndarray) -> np.ndarray:
    """``f(1_S) = min_{Q∈𝒫} Q(S)`` for boolean masks (rows)."""
    return uset.min_output_probability(masks.T.astype(float))


def subset_directions(uset: UncertaintySet, epsilon: float, masks: np.ndarray) -> np.ndarray:
    """Cone directions ``(e^ε − 1)1_S + (1 − e^ε f(1_S))·1`` (or ``1_S`` when ``e^ε f(1_S) ≥ 1``), as columns.

    Each is the two-level column with the largest top/bottom ratio that keeps ε-PML over 𝒫: its leakage
    ``log(e^ε (1 − f_S)/(1 − e^ε f_S))``-boosted level is exactly tight (for the ℓ1 ball these are the rays
    ``h(1)1_S − h(S)1`` of :func:`~pml_design.design.rays.l1_ball_rays`).
    """
    e = math.exp(epsilon)
    masks = np.atleast_2d(np.asarray(masks, dtype=bool))
    f = _subset_floor(uset, masks)
    low = 1.0 - e * f
    cols = np.where(masks, (e - 1.0) + np.maximum(low, 0.0)[:, None], np.maximum(low, 0.0)[:, None])
    cols[low <= 0] = masks[low <= 0].astype(float)
    return cols.T


def _seed_groups(n: int, epsilon: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Groups of subset masks that are balanced designs (every symbol in the same number of subsets), so that the
    plain ε-LDP columns ``(e^ε − 1)1_S + 1`` of a group form a mechanism: GRR (singletons), subset selection
    (all k-subsets when they fit in the budget) or cyclic windows under random relabelings."""
    groups = [np.eye(n, dtype=bool)]  # randomized response
    groups += _dyadic_groups(n, epsilon, rng)
    kstar = n / (math.exp(epsilon) + 1.0)
    ks = sorted({min(n - 1, max(1, int(math.floor(kstar)))), min(n - 1, max(1, int(math.ceil(kstar))))})
    ks = [k for k in ks if 1 < k < n]
    per_k = SUBSET_SEED_BUDGET // max(1, len(ks))
    for k in ks:
        if math.comb(n, k) <= per_k:
            idx = np.array(list(combinations(range(n), k)))
            m = np.zeros((idx.shape[0], n), dtype=bool)
            np.put_along_axis(m, idx, True, axis=1)
            groups.append(m)
        else:  # balanced cyclic designs under random relabelings: every symbol in exactly k of n windows
            window = (np.arange(n)[:, None] + np.arange(k)[None, :]) % n
            for _ in range(max(1, per_k // n)):
                perm = rng.permutation(n)
                m = np.zeros((n, n), dtype=bool)
                np.put_along_axis(m, perm[window], True, axis=1)
                groups.append(m)
    return groups


def _dyadic_groups(n: int, epsilon: float, rng: np.random.Generator, budget: int = 512) -> list[np.ndarray]:
    """Balanced designs from F_2^m (K = 2^m > N points, symbols = the first N non-zero points): the Hadamard
    response (complements of the hyperplanes through 0, Acharya, Sun & Zhang 2019: a 2-design) and random parallel
    classes of codimension j ≈ log2(e^ε + 1) (the cosets of a random j-dimensional linear map: a partition, so
    every symbol is in exactly one subset per class), which approximate subset selection with k ≈ N/(e^ε + 1)."""
    m = max(1, int(math.ceil(math.log2(n + 1))))
    pts = np.arange(1, n + 1, dtype=np.int64)
    bits = ((pts[:, None] >> np.arange(m)) & 1).astype(np.int64)  # (n, m) coordinates over F_2
    rows = np.arange(1, 2**m, dtype=np.int64)
    rbits = ((rows[:, None] >> np.arange(m)) & 1).astype(np.int64)
    groups = [((rbits @ bits.T) % 2 == 0)]  # Hadamard response: {x : <r, x> = 0}, r ≠ 0
    j = int(round(math.log2(math.exp(epsilon) + 1.0)))
    classes: list[np.ndarray] = []
    if 2 <= j < m:
        for _ in range(max(1, budget // 2**j)):
            A = rng.integers(0, 2, size=(j, m))
            if np.linalg.matrix_rank(A) < j:  # rank over the reals ≥ rank over F_2 is not enough: retry cheaply
                continue
            code = ((bits @ A.T) % 2) @ (1 << np.arange(j))  # the coset index of every symbol
            cls = code[None, :] == np.arange(2**j)[:, None]
            cls = cls[cls.any(axis=1)]
            if cls.shape[0] > 1:
                classes.append(cls)
        if classes:
            groups.append(np.vstack(classes))  # a union of partitions is balanced: one design
    return [g for g in groups if g.any(axis=1).all() and not g.all(axis=1).any()]


def _ldp_group_mechanism(masks: np.ndarray, epsilon: float) -> np.ndarray:
    """The ε-LDP mechanism with columns ``(e^ε − 1)1_S + 1`` over a balanced group of subsets (rows sum equally)."""
    C = (math.expm1(epsilon) * masks + 1.0).T
    return C / C.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------------------------------
# master: min f(θ) s.t. V θ = 1, θ ≥ 0, by a barrier Newton method with infeasible start
# ----------------------------------------------------------------------------------------------------
def _criterion(V: np.ndarray, theta: np.ndarray, d_opt: bool):
    F = (V * theta) @ V.T
    F = 0.5 * (F + F.T)
    try:
        L = np.linalg.cholesky(F)
    except np.linalg.LinAlgError:
        return np.inf, None, None
    Finv = np.linalg.inv(F)
    Finv = 0.5 * (Finv + Finv.T)
    if d_opt:
        val = -2.0 * float(np.log(np.diag(L)).sum())
        return val, Finv, Finv
    return float(np.trace(Finv)), Finv, Finv @ Finv


def _master(V: np.ndarray, d_opt: bool, theta0: np.ndarray, deadline: float, rtol: float = 1e-8, warm: bool = False):
    """Minimise tr((V diag θ Vᵀ)⁻¹) (or −log det) s.t. Vθ = 1, θ ≥ 0. Returns (θ, ν, (f, F⁻¹, M)).

    Barrier method (Boyd & Vandenberghe §11.3) with infeasible-start Newton centering (§10.3); the Hessian
    ``2 (VᵀF⁻¹V) ∘ (VᵀF⁻²V)`` (A) or ``(VᵀF⁻¹V)∘²`` (D) is dense K×K, so K is kept small by the caller. The
    returned ``M`` (F⁻² for A, F⁻¹ for D) gives the gradient ``−r_kᵀ M r_k`` of any ray (:func:`_gradients`).
    """
    from scipy.linalg import cho_factor, cho_solve

    N, K = V.shape
    theta = np.maximum(theta0, 1e-12)
    theta = 0.98 * theta / max(theta.sum(), 1e-300) + 0.02 / K  # strictly interior in the orthant
    nu = np.zeros(N)
    state = _criterion(V, theta, d_opt)  # (f, F⁻¹, M) at the current θ, carried over from the line search
    if not np.isfinite(state[0]):
        raise SolverFailedError("estimation master: singular Fisher information at the start", "singular")
    t = K / (max(abs(state[0]), 1.0) * (1e-3 if warm else 1e-1))
    while True:
        for _ in range(50):
            _, B1m, B2m = state
            A1 = V.T @ B1m @ V
            g = _gradients(V, B2m)
            H = (A1 * A1) if d_opt else 2.0 * (A1 * (V.T @ B2m @ V))
            H *= t
            H[np.diag_indices(K)] += 1.0 / theta**2
            r_d = t * g - 1.0 / theta + V.T @ nu
            r_p = V @ theta - 1.0
            norm0 = math.sqrt(float(r_d @ r_d + r_p @ r_p))
            if norm0 < 1e-8 * (1.0 + t * float(np.abs(g).max())):
                break
            try:
                C = cho_factor(H, check_finite=False)
            except np.linalg.LinAlgError:
                H[np.diag_indices(K)] += 1e-10 * np.abs(np.diag(H)).max()
                C = cho_factor(H, check_finite=False)
            Hi_rd = cho_solve(C, r_d, check_finite=False)
            Hi_Vt = cho_solve(C, V.T, check_finite=False)
            dnu = np.linalg.solve(V @ Hi_Vt, r_p - V @ Hi_rd)
            dth = -(Hi_rd + Hi_Vt @ dnu)
            neg = dth < 0
            s = min(1.0, 0.99 * float(np.min(-theta[neg] / dth[neg]))) if np.any(neg) else 1.0
            while s > 1e-10:
                th2 = theta + s * dth
                state2 = _criterion(V, th2, d_opt)
                if np.isfinite(state2[0]):
                    rd2 = t * _gradients(V, state2[2]) - 1.0 / th2 + V.T @ (nu + s * dnu)
                    rp2 = V @ th2 - 1.0
                    if math.sqrt(float(rd2 @ rd2 + rp2 @ rp2)) <= (1 - 0.01 * s) * norm0:
                        break
                s *= 0.5
            if s <= 1e-10:
                break
            theta, nu, state = th2, nu + s * dnu, state2
            if time.perf_counter() > deadline:
                break
        if K / t <= rtol * max(abs(state[0]), 1.0) or time.perf_counter() > deadline:
            break
        t *= 20.0
    return theta, nu / t, state


def _fewer_outputs(V: np.ndarray, theta: np.ndarray) -> np.ndarray | None:
    """A mechanism with the same Fisher information and row sums on fewer outputs (Carathéodory).

    The weights satisfy ``Σθ_k r_k r_kᵀ = F`` (N(N+1)/2 equations); with ``P·r_k = 1`` these imply the row sums
    ``Σθ_k r_k = F P = 1`` (so those equations are left out: they would make the system rank-deficient). A basic
    feasible solution (HiGHS simplex, zero objective) has at most N(N+1)/2 non-zero weights, and every solution
    gives the same F, hence the same error. Returns None if the LP is not solved.
    """
    from scipy.optimize import linprog  # noqa: PLC0415

    n, k = V.shape
    if k <= n * (n + 1) // 2:
        return None
    iu = np.triu_indices(n)
    A = V[iu[0], :] * V[iu[1], :]
    b = A @ theta
    res = linprog(np.zeros(k), A_eq=A, b_eq=b, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        return None
    th = np.where(res.x > 1e-12 * max(res.x.max(), 1e-300), res.x, 0.0)
    used = th > 0
    W = V[:, used] * th[used]
    return W / W.sum(axis=1, keepdims=True)


def _best_ldp_oracle(n: int, epsilon: float, prior: np.ndarray) -> tuple[str | None, float]:
    """The LDP frequency oracle (GRR, OUE, OLH, subset selection) with the smallest closed-form MSE per report."""
    from ..mechanisms.frequency_oracles import grr, olh, oue, subset_selection  # noqa: PLC0415

    best: tuple[str | None, float] = (None, math.inf)
    for name, make in (("GRR", grr), ("OUE", oue), ("OLH", olh), ("SUBSET_SELECTION", subset_selection)):
        try:
            v = float(make(n, epsilon).mse(prior, 1, inputs="iid"))
        except (ValueError, OverflowError):  # e.g. huge epsilon
            continue
        if v < best[1]:
            best = (name, v)
    return best


def _gradients(R: np.ndarray, M2: np.ndarray) -> np.ndarray:
    return -np.einsum("ik,ik->k", R, M2 @ R)


def design_frequency_estimation(
    uset: UncertaintySet,
    epsilon: float,
    util: FrequencyEstimation,
    prior: np.ndarray,
    *,
    time_limit: float = 60.0,
    progress: bool | None = None,
    max_iter: int = 200,
    rng: object = None,
) -> DesignResult:
    """``design(..., utility="frequency_estimation")``: minimise the asymptotic MSE of estimating P.

    Implements: core paper eq. (9) with the A-optimal (or D-optimal) estimation criterion (module docstring,
    docs/design.md §7) over ``M(ε, 𝒫)``, by column generation on extreme rays; certified like every design.

    Parameters
    ----------
    uset : UncertaintySet
        The set the guarantee must hold for (ℓ1 ball of any radius, simplex, finite set, prior).
    epsilon : float
        ε > 0 (at ε = 0 no mechanism identifies anything).
    util : FrequencyEstimation
    prior : numpy.ndarray
        The distribution the error is evaluated at (every entry > 0).
    time_limit : float, default 60
        Seconds; checked inside the master and between pricing rounds.
    progress : bool, optional
        Show a progress bar (value, bound, gap); default: when stderr is a terminal.
    max_iter : int, default 200
        Column-generation rounds.
    rng : numpy.random.Generator, int or None
        For the random relabelings of the subset seeds (default: a fixed seed, so designs are reproducible).

    Returns
    -------
    DesignResult
        ``utility`` = the MSE per report (lower is better, ``sense="min"``), ``lower_bound`` valid when the
        rays were enumerated (else ``-inf``), ``upper_bound`` = ``utility`` (the optimum is at most it).
    """
    from .._validation import as_generator
    from ..progress import progress_bar
    from .rays import AUTO_EXACT_SIZE_FINITE, AUTO_EXACT_SIZE_GENERIC, MAX_EXACT_SIZE, enumerate_rays

    if epsilon <= 0:
        raise ValueError(
            "utility 'frequency_estimation' needs epsilon > 0: at epsilon = 0 every PML mechanism has identical rows "
            "and no distribution can be estimated"
        )
    progress = _default_progress(progress)
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    gen = as_generator(0 if rng is None else rng)
    n = uset.size
    d_opt = util.criterion == "D"
    # complete ray list when affordable: pricing is then exact and the lower bound valid
    R_all = None
    generic = isinstance(uset, L1Ball) and uset.radius > 0 and not uset.in_interior_regime
    multi = isinstance(uset, FiniteSet) and uset.distributions.shape[0] > 1  # rays by pycddlib: slow beyond N = 10
    limit = AUTO_EXACT_SIZE_GENERIC if generic else AUTO_EXACT_SIZE_FINITE if multi else MAX_EXACT_SIZE
    est_rays = 3.0**n if generic else n * 2.0**n
    if n <= limit and est_rays <= 4 * MAX_ENUMERATED_RAYS:
        try:
            R_all = enumerate_rays(uset, epsilon)
        except ValueError:
            R_all = None
        if R_all is not None and R_all.shape[1] > MAX_ENUMERATED_RAYS:
            R_all = None
    if R_all is not None:
        R_all = R_all / (prior @ R_all)
    # seeds: constant column, RR and subset directions at the largest admissible level
    groups = _seed_groups(n, epsilon, gen)
    seeds = subset_directions(uset, epsilon, np.vstack(groups))
    # the best seed mechanism (an ε-LDP balanced design, feasible for every set): a floor for the result and a
    # feasible start for the master (its columns are added as they are)
    seed_mechs = [_ldp_group_mechanism(g, epsilon) for g in groups]
    seed_vals = [util.value(Wg, prior) for Wg in seed_mechs]
    best_seed = int(np.argmin(seed_vals))
    Wbest = seed_mechs[best_seed]
    V = np.hstack([np.ones((n, 1)), seeds, Wbest])
    scale = prior @ V
    V = V / scale
    theta = np.zeros(V.shape[1])
    theta[-Wbest.shape[1]:] = scale[-Wbest.shape[1]:]  # V θ = W_best 1 = 1 exactly
    theta = theta + 1e-6 / V.shape[1]
    bar = progress_bar(total=max_iter, desc="estimation design", enabled=progress)
    lower = -np.inf
    it = 0
    f = np.inf
    proven = False
    sq = float(prior @ prior)
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    for it in range(1, max_iter + 1):
        with threadpool_limits(1):  # small dense K×K algebra: one BLAS thread is fastest and never oversubscribes
            theta, nu, (f, _, M2) = _master(V, d_opt, theta, deadline, warm=it > 1)
        g_master = _gradients(V, M2)
        base = f - float(g_master @ theta) - float(nu.sum())
        if R_all is not None:
            d_all = _gradients(R_all, M2) + nu @ R_all
            lower = max(lower, base + float(d_all.min()))
            cand, d_c = R_all, d_all
        else:
            cand = _local_pricing(uset, epsilon, prior, M2, nu, gen)
            d_c = _gradients(cand, M2) + nu @ cand
        val = f if d_opt else f - sq
        lb = lower if d_opt else lower - sq
        _progress_update(bar, val, lb)
        if R_all is not None and f - lower <= PROOF_RTOL * max(1.0, abs(f)):
            proven = True
            break
        improving = np.flatnonzero(d_c < -1e-9 * max(1.0, abs(f)))
        if improving.size == 0 or time.perf_counter() > deadline:
            break
        pick = improving[np.argsort(d_c[improving])][: max(4, n)]
        keep = theta > 1e-7 * theta.max()
        V = np.hstack([V[:, keep], cand[:, pick]])
        theta = np.concatenate([theta[keep], np.full(pick.size, 1e-3)])
    bar.close()
    def certified(W: np.ndarray):  # the exact leakage check and repair, then the error of what is returned
        c = certify(W, uset, epsilon, drop_empty_columns=True)
        return c, util.value(c.matrix, prior)

    used = theta > 1e-12
    W = (V[:, used] * theta[used]).copy()
    W /= W.sum(axis=1, keepdims=True)  # master tolerance; certification re-checks exactly
    cert, value = certified(W)
    small = _fewer_outputs(V[:, used], theta[used])  # same Fisher information, at most N(N+1)/2 outputs
    if small is not None and small.shape[1] < cert.matrix.shape[1]:
        cert_s, value_s = certified(small)
        if value_s <= value * (1 + 1e-6):  # the LP meets F to its tolerance: a 1e-6 relative change at most
            cert, value = cert_s, value_s
    fell_back = False
    if not value <= seed_vals[best_seed]:  # stopped early (time limit): never return worse than the best seed
        cert, value = certified(Wbest)
        fell_back = True
    lower_val = (lower if d_opt else lower - sq) if np.isfinite(lower) else -np.inf
    optimal = bool(proven and np.isfinite(value) and value - lower_val <= 10 * PROOF_RTOL * max(1.0, abs(value)))
    best_ldp = _best_ldp_oracle(n, epsilon, prior) if not d_opt else (None, np.nan)
    if best_ldp[0] is not None and value > best_ldp[1] * (1 + 1e-9):
        import warnings  # noqa: PLC0415

        from .result import PMLDesignWarning  # noqa: PLC0415

        warnings.warn(
            PMLDesignWarning(
                f"the frequency-estimation design (error {value:.6g} per report) did not reach the local-DP oracle "
                f"{best_ldp[0]} ({best_ldp[1]:.6g}) within the time limit of {time_limit:g} s on N={n} symbols; raise "
                f"solver_options={{'time_limit': ...}}, or deploy pml_design.{best_ldp[0].lower()}(N, epsilon), which "
                "is epsilon-PML for every distribution"
            ),
            stacklevel=3,
        )
    if np.isfinite(lower_val):  # the MSE is > 0: its relative gap is (value − lower) / value
        _warn_gap(
            (value - lower_val) / max(abs(value), 1e-300), "frequency-estimation",
            f"error {value:.6g}, lower bound {lower_val:.6g}", time_limit,
        )
    return DesignResult(
        matrix=cert.matrix,
        utility=value,
        certified_epsilon=cert.capacity,
        epsilon=epsilon,
        uncertainty=uset,
        prior=prior,
        upper_bound=value,
        lower_bound=min(lower_val, value),
        sense="min",
        optimal=optimal,
        status="optimal" if optimal else ("bounded" if np.isfinite(lower_val) else "feasible"),
        method="estimation",
        solver="barrier Newton (column generation)",
        utility_name=util.name,
        repair_weight=cert.repair_weight,
        solve_time=time.perf_counter() - t0,
        info={
            "iterations": it,
            "n_outputs": int(cert.matrix.shape[1]),
            "n_columns": int(V.shape[1]),
            "rays_enumerated": R_all is not None,
            "capacity_before_repair": cert.capacity_before_repair,
            "criterion": util.criterion,
            "best_seed_value": float(seed_vals[best_seed]),
            "best_ldp_oracle": best_ldp[0],
            "best_ldp_mse": float(best_ldp[1]),
            "returned_seed": fell_back,
        },
    )


def _local_pricing(uset, epsilon, prior, M2, nu, gen, restarts: int = 6, sweeps: int = 4) -> np.ndarray:
    """Heuristic pricing over two-level subset directions: greedy single flips from several starts."""
    n = prior.shape[0]
    e = math.exp(epsilon)

    def score(masks):
        C = subset_directions(uset, epsilon, masks)
        C = C / (prior @ C)
        return _gradients(C, M2) + nu @ C, C

    starts = [np.argsort(-np.diag(M2) + nu)[: max(1, int(n / (e + 1)))]]
    masks0 = []
    for s in starts:
        m = np.zeros(n, dtype=bool)
        m[s] = True
        masks0.append(m)
    for _ in range(restarts - 1):
        masks0.append(gen.random(n) < 1.0 / (e + 1.0))
    out = []
    for m in masks0:
        if not m.any():
            m[gen.integers(n)] = True
        cur, _ = score(m[None, :])
        cur = float(cur[0])
        for _ in range(sweeps):
            flips = np.tile(m, (n, 1))
            flips[np.arange(n), np.arange(n)] ^= True
            ok = flips.any(axis=1) & ~flips.all(axis=1)
            vals, _ = score(flips[ok])
            j = int(np.argmin(vals))
            if vals[j] < cur - 1e-15:
                cur = float(vals[j])
                m = flips[ok][j]
            else:
                break
        out.append(m)
    _, C = score(np.array(out))
    return C
