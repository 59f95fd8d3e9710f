"""The first-order master of ``design/estimation/mixture.py``: ε-PML partition channels, the multiplicative algorithm.

Second derivations: leakage over the ball's vertices (enumerated), the criterion from ``pml.estimation_mse`` on the
assembled matrix, a second solver (SciPy's SLSQP over the simplex) for the optimal weights.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy.optimize import minimize

import pml_design as pml
from pml_design.design.estimation import api
from pml_design.design.estimation.mixture import (MIXTURE_GHOST_RTOL, dyadic_partitions, mixture_matrix,
                                                  mixture_weights, partition_channels)
from pml_design.mechanisms.frequency_oracles import optimum as opt
from pml_design.mechanisms.frequency_oracles.fisher import fisher_information


def _vertex_leakage(W: np.ndarray, ball: pml.L1Ball) -> np.ndarray:
    """Each column's leakage ``log max_x W(y|x) / min_Q Q·W(:, y)``, the minimum over the ball's vertices."""
    V = ball.extreme_points()
    return np.log(W.max(axis=0) / (V @ W).min(axis=0))


def _ball(n: int, radius: float, seed: int) -> pml.L1Ball:
    p = np.sort(np.random.default_rng(seed).dirichlet(np.full(n, 0.7)))[::-1]
    return pml.L1Ball(p, radius)


@pytest.mark.parametrize("n, eps, radius", [(6, 0.5, 0.3), (7, 1.0, 0.2), (6, 2.0, 0.6), (7, 0.5, 1.2)])
def test_partition_channels_are_row_stochastic_and_eps_pml_over_the_ball(n, eps, radius):
    ball = _ball(n, radius, n)
    parts = dyadic_partitions(n, eps, np.random.default_rng(0), class_columns=64)
    pc = partition_channels(ball, eps, parts)
    assert pc.columns.shape[1] > 0
    for c in range(int(pc.owner.max()) + 1):
        W = pc.columns[:, pc.owner == c]
        np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
        assert np.all(W >= 0)
        leak = _vertex_leakage(W, ball)
        assert leak.max() <= eps + 1e-9
        # tight: each cell's column is the largest two-level ratio the ball allows (power: 1 % more breaks ε)
        hi, lo = W.max(axis=0), W.min(axis=0)
        boosted = np.where(W == hi, hi * 1.01, W)
        assert _vertex_leakage(boosted, ball).max() > eps


def test_heavy_cells_go_beyond_local_dp():
    """A cell holding most of P̂'s mass has min_Q Q(S) > 0 over the ball: its column's ratio exceeds e^ε."""
    ball = _ball(7, 0.2, 3)
    pc = partition_channels(ball, 1.0, dyadic_partitions(7, 1.0, np.random.default_rng(0), class_columns=0))
    with np.errstate(divide="ignore"):
        ratios = pc.columns.max(axis=0) / pc.columns.min(axis=0)
    assert ratios.max() > math.e * 1.05
    W = pc.columns[:, pc.owner == int(pc.owner[np.argmax(ratios)])]
    assert pml.leakage_capacity(W, pml.Simplex(7)) > 1.0 + 1e-3  # not ε-LDP
    assert pml.leakage_capacity(W, ball) <= 1.0 + 1e-9  # but ε-PML over the ball


def _assemble(seed_W, pc, res):
    return np.hstack([seed_W * res.seed, pc.columns * res.weights[pc.owner]])


@pytest.mark.parametrize("n, eps", [(8, 0.5), (8, 2.0)])
def test_mixture_weights_match_a_second_solver(n, eps):
    ball = _ball(n, 0.4, 11)
    prior = ball.center
    seed = opt.compact_ldp_channel(n, eps, prior, max_outputs=64).matrix
    pc = partition_channels(ball, eps, dyadic_partitions(n, eps, np.random.default_rng(1), class_columns=32))
    G0 = fisher_information(seed, prior)
    res = mixture_weights(G0, pc, prior, time.perf_counter() + 30, max_steps=5000, rtol=1e-12)
    W = _assemble(seed, pc, res)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-10)
    assert res.value == pytest.approx(pml.estimation_mse(W, prior), rel=1e-9)  # the criterion, another path
    C = int(pc.owner.max()) + 1
    blocks = [G0] + [fisher_information(pc.columns[:, pc.owner == c], prior) for c in range(C)]

    def f(a):
        return float(np.trace(np.linalg.inv(sum(ai * B for ai, B in zip(a, blocks))))) - prior @ prior

    a0 = np.full(C + 1, 1.0 / (C + 1))
    sol = minimize(f, a0, method="SLSQP", bounds=[(0, 1)] * (C + 1),
                   constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1}], options={"ftol": 1e-14, "maxiter": 2000})
    assert res.value <= sol.fun * (1 + 1e-4)
    assert res.value >= sol.fun * (1 - 1e-3)  # the second solver's optimum is a valid floor within its accuracy


def test_more_steps_never_give_a_worse_mixture():
    n, eps = 40, 1.0
    ball = _ball(n, 0.5, 5)
    prior = ball.center
    seed = opt.compact_ldp_channel(n, eps, prior, max_outputs=4 * n).matrix
    G0 = fisher_information(seed, prior)
    pc = partition_channels(ball, eps, dyadic_partitions(n, eps, np.random.default_rng(2)))
    values = [mixture_weights(G0, pc, prior, time.perf_counter() + 30, max_steps=k, rtol=0).value
              for k in (1, 2, 5, 10, 20)]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(values, values[1:]))
    assert values[-1] < values[0]


def test_above_the_column_generation_size_the_mixture_beats_the_ldp_seed(monkeypatch):
    """Above MAX_COLUMN_GENERATION_N the design is the best certified of the LDP seed and the mixture: at small ε and
    a skewed P̂ the partition channels' PML gain is large (certified, exact error, on time)."""
    monkeypatch.setattr(api, "MAX_COLUMN_GENERATION_N", 30)
    n = 60
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    p /= p.sum()
    sample = np.random.default_rng(0).choice(n, size=5000, p=p)
    t = time.perf_counter()
    res = pml.design_from_samples(sample, n, epsilon=0.5, delta=1e-6, utility="frequency_estimation",
                                  allow_zero=True, solver_options={"time_limit": 5.0})
    assert time.perf_counter() - t < 1.1 * 5.0 + 5.0
    r = res.result
    assert r.info["source"].startswith("mixture")
    assert r.utility < 0.8 * r.info["best_seed_value"]
    assert r.info["mixture"]["steps"] >= 1
    assert r.certified_epsilon <= 0.5 + 1e-9
    assert pml.estimation_mse(r.matrix, r.prior) == pytest.approx(r.utility, rel=1e-9)


def test_a_non_partition_is_refused_by_name():
    ball = _ball(6, 0.3, 1)
    cells = np.array([[1, 1, 0, 0, 0, 0], [0, 1, 1, 1, 1, 1]], dtype=bool)  # symbol 1 in two cells
    with pytest.raises(ValueError, match=r"partitions\[0\]"):
        partition_channels(ball, 1.0, [cells])
    halves = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], dtype=bool)  # a partition
    with pytest.raises(ValueError, match=r"partitions\[1\].*6 symbols"):
        partition_channels(ball, 1.0, [halves, np.ones((1, 5), dtype=bool)])  # 5 symbols, not 6
    assert partition_channels(ball, 1.0, [halves]).columns.shape == (6, 2)


def test_mixture_weights_refuses_bad_input_by_name():
    ball = _ball(6, 0.3, 1)
    prior = ball.center
    halves = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], dtype=bool)
    pc = partition_channels(ball, 1.0, [halves])
    G0 = fisher_information(np.eye(6), prior)
    far = time.perf_counter() + 10
    with pytest.raises(ValueError, match="seed_fisher must be 6 x 6"):
        mixture_weights(G0[:5, :5], pc, prior, far)
    with pytest.raises(ValueError, match="channels must hold 6-row columns"):
        mixture_weights(G0, pc._replace(columns=pc.columns[:5]), prior, far)
    with pytest.raises(ValueError, match="channels must hold"):
        mixture_weights(G0, pc._replace(owner=pc.owner[:1]), prior, far)
    with pytest.raises(ValueError, match="prior"):
        mixture_weights(G0, pc, np.r_[prior[:5], 0.0] / prior[:5].sum(), far)
    with pytest.raises(ValueError, match="seed_weight"):
        mixture_weights(G0, pc, prior, far, seed_weight=0.0)
    with pytest.raises(ValueError, match="max_steps"):
        mixture_weights(G0, pc, prior, far, max_steps=-1)
    with pytest.raises(ValueError, match="rtol"):
        mixture_weights(G0, pc, prior, far, rtol=-1e-3)
    res = mixture_weights(G0, pc, prior, far)  # the same call with good input runs
    assert math.isfinite(res.value) and res.seed + res.weights.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_d_criterion_weights_match_a_second_solver(eps, monkeypatch):
    """The D-criterion update α_c ← α_c tr(F⁻¹F_c)/N: its value is log det F⁻¹ of the assembled matrix (another
    path), it never rises from step to step (Titterington; every step's factorisation recorded), and SciPy's SLSQP
    on the same blocks agrees."""
    n = 8
    ball = _ball(n, 0.4, 11)
    prior = ball.center
    seed = opt.compact_ldp_channel(n, eps, prior, max_outputs=64).matrix
    pc = partition_channels(ball, eps, dyadic_partitions(n, eps, np.random.default_rng(1), class_columns=32))
    G0 = fisher_information(seed, prior)
    res = mixture_weights(G0, pc, prior, time.perf_counter() + 30, max_steps=5000, rtol=1e-13, criterion="D")
    W = _assemble(seed, pc, res)
    assert res.value == pytest.approx(pml.FrequencyEstimation("D").value(W, prior), rel=1e-9, abs=1e-9)
    from pml_design.design.estimation import mixture as mx

    steps, factor = [], mx.sla.cho_factor

    def recorded(F, *args, **kw):  # each step's log det F⁻¹, from its own factorisation
        out = factor(F, *args, **kw)
        steps.append(-2.0 * float(np.sum(np.log(np.diag(out[0])))))
        return out

    monkeypatch.setattr(mx.sla, "cho_factor", recorded)
    mixture_weights(G0, pc, prior, time.perf_counter() + 30, max_steps=40, rtol=0, criterion="D")
    monkeypatch.undo()
    assert len(steps) >= 20
    assert all(b <= a + 1e-12 * abs(a) + 1e-12 for a, b in zip(steps, steps[1:]))  # never rose: no λ = ½ redo
    C = int(pc.owner.max()) + 1
    blocks = [G0] + [fisher_information(pc.columns[:, pc.owner == c], prior) for c in range(C)]

    def f(a):
        return -float(np.linalg.slogdet(sum(ai * B for ai, B in zip(a, blocks)))[1])

    sol = minimize(f, np.full(C + 1, 1.0 / (C + 1)), method="SLSQP", bounds=[(0, 1)] * (C + 1),
                   constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1}], options={"ftol": 1e-14, "maxiter": 2000})
    assert res.value <= sol.fun + 1e-4 * abs(sol.fun) + 1e-6
    assert res.value >= sol.fun - 1e-3 * abs(sol.fun) - 1e-6
    with pytest.raises(ValueError, match="criterion"):
        mixture_weights(G0, pc, prior, time.perf_counter() + 30, criterion="E")


def test_d_criterion_design_above_the_column_generation_size_uses_the_mixture(monkeypatch):
    """Under the D criterion, above MAX_COLUMN_GENERATION_N the design is the best certified of the seed and the
    mixture (it used to be the seed alone): certified, its log det from another path, below the seed's."""
    monkeypatch.setattr(api, "MAX_COLUMN_GENERATION_N", 30)
    n = 60
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    p /= p.sum()
    sample = np.random.default_rng(0).choice(n, size=5000, p=p)
    res = pml.design_from_samples(sample, n, epsilon=0.5, delta=1e-6,
                                  utility=pml.FrequencyEstimation("D"), allow_zero=True,
                                  solver_options={"time_limit": 5.0}).result
    assert res.info["mixture"]["steps"] >= 1 and res.info["source"].startswith("mixture")
    assert res.utility < res.info["best_seed_value"]
    assert res.certified_epsilon <= 0.5 + 1e-9
    assert pml.FrequencyEstimation("D").value(res.matrix, res.prior) == pytest.approx(res.utility, rel=1e-9)


def test_the_mixture_matrix_drops_ghost_channels_whole_and_stays_two_level():
    """Channels whose columns the clean-up would cut as ghosts are dropped whole (weights renormalised): the rows sum
    to 1 and every column is exactly two-level, so the certification prices it in closed form. Power: cutting the
    ghost *columns* and renormalising the rows (what the clean-up did) spreads the levels beyond the closed form's
    tolerance."""
    from pml_design.design.linear.lp import clean_tiny
    from pml_design.uncertainty import TWO_LEVEL_RTOL

    n, eps = 64, 2.0
    ball = pml.L1Ball(_zipf(n), 0.3)
    pc = partition_channels(ball, eps, dyadic_partitions(n, eps, np.random.default_rng(1), class_columns=256))
    seed = opt.compact_ldp_channel(n, eps, ball.center, max_outputs=8 * n).matrix
    channels = int(pc.owner.max()) + 1
    weights = np.random.default_rng(2).dirichlet(np.ones(channels)) * 0.6
    colmax = pc.columns.max(axis=0)
    # ghosts: random parallel classes (cells of unequal masses, so their columns' maxima differ) weighted so that
    # their columns straddle the clean-up's threshold, 1e-6 of the largest entry
    ghosts = [c for c in range(channels) if np.ptp(colmax[pc.owner == c]) > 0.01][::3]
    assert len(ghosts) >= 3
    weights[ghosts] = 0.0
    top = max(float((colmax * weights[pc.owner]).max()), (1.0 - weights.sum()) * float(seed.max()))
    for c in ghosts:
        weights[c] = 1e-6 * top / np.median(colmax[pc.owner == c])
    W, kept, kept_seed = mixture_matrix(seed, pc, weights, 1.0 - weights.sum())
    assert np.all(kept[ghosts] == 0) and kept.sum() + kept_seed == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-13)
    assert W.max(axis=0).min() > MIXTURE_GHOST_RTOL * W.max()

    def spread(M):
        M = M[:, M.max(axis=0) > 0]
        M = M / M.sum(axis=1, keepdims=True)
        c = M / M.max(axis=0)
        lo = c.min(axis=0)
        low = np.where(c < 1.0 - TWO_LEVEL_RTOL, c, np.nan)
        return np.nanmax(np.abs(low / np.where(lo > 0, lo, np.nan) - 1.0))

    assert spread(W) <= TWO_LEVEL_RTOL
    naive = np.hstack([seed * (1.0 - weights.sum())] + [pc.columns[:, pc.owner == c] * weights[c]
                                                        for c in range(channels)])
    assert spread(clean_tiny(naive, rtol=1e-6)) > TWO_LEVEL_RTOL
    # the seed is a channel like the others: a seed weight that makes one of its columns a ghost drops it whole
    # (the seed's merged restricted blocks have columns of unequal maxima; here one is split 0.99 / 0.01)
    split = np.hstack([seed[:, :1] * 0.99, seed[:, :1] * 0.01, seed[:, 1:]])
    W2, _, seed2 = mixture_matrix(split, pc, weights * 0 + 1.0 / channels, 1e-4)
    assert seed2 == 0.0 and W2.shape[1] == pc.columns.shape[1]
    np.testing.assert_allclose(W2.sum(axis=1), 1.0, atol=1e-13)


def _zipf(n):
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    return p / p.sum()


def test_mixture_matrix_refuses_bad_arguments_by_name():
    """mixture_matrix is public: every bad argument is a named error (a review found row sums of 0.77, 1.25 and
    4.5e15 returned silently, and bare IndexError / ZeroDivisionError), and an all-zero seed column is no ghost."""
    n, eps = 8, 1.0
    ball = pml.L1Ball(_zipf(n), 0.2)
    pc = partition_channels(ball, eps, dyadic_partitions(n, eps, np.random.default_rng(1)))
    seed = opt.compact_ldp_channel(n, eps, ball.center, max_outputs=8 * n).matrix
    channels = int(pc.owner.max()) + 1
    w = np.full(channels, 0.5 / channels)
    W, _, a = mixture_matrix(seed, pc, w, 0.5)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-13)
    bad = [
        (dict(weights=np.full(channels + 1, 0.5 / channels)), ValueError, "weights must have one entry"),
        (dict(weights=np.full(channels - 1, 0.5 / channels)), ValueError, "weights must have one entry"),
        (dict(weights=np.where(np.arange(channels) == 0, -0.2, w)), ValueError, "weights must be finite and >= 0"),
        (dict(weights=np.where(np.arange(channels) == 0, np.nan, w)), ValueError, "weights must be finite"),
        (dict(seed_weight=-0.5), ValueError, "seed_weight must be finite and >= 0"),
        (dict(weights=w * 0, seed_weight=0.0), ValueError, "must not all be 0"),
        (dict(W_seed=seed[:-1]), ValueError, "W_seed has 7 rows but the prior/uncertainty set has 8 symbols"),
        (dict(W_seed=seed * 2), ValueError, r"W_seed must be row-stochastic .* row 0 sums to 2\.0"),
        (dict(W_seed=[["a"]]), TypeError, "W_seed must be an array of real numbers"),
        (dict(seed_weight="x"), TypeError, "weights must be a numeric array and seed_weight a number"),
        (dict(pc=(pc.columns, pc.owner)), TypeError, "pc must be a PartitionChannels"),
    ]
    for change, exc, match in bad:
        args = dict(W_seed=seed, pc=pc, weights=w, seed_weight=0.5) | change
        with pytest.raises(exc, match=match):
            mixture_matrix(**args)
    # lists are accepted; an all-zero seed column does not make the seed a ghost
    W3, _, a3 = mixture_matrix(np.hstack([seed, np.zeros((n, 1))]).tolist(), pc, list(w), 0.5)
    assert a3 == pytest.approx(a) and W3.shape[1] == W.shape[1] + 1
