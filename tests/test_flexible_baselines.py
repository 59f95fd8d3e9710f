"""Section 6 / App. L.2 baselines: correctness of their ingredients and of their privacy statements."""

import itertools
from collections import deque

import numpy as np
import pytest
from scipy import stats

from pml_design.flexible import (
    UNDEFINED,
    choosing_histogram,
    choosing_mechanism,
    choosing_threshold,
    distance_to_instability,
    evaluate_statistic,
    exponential_mechanism,
    propose_test_release,
    smooth_sensitivity_mechanism,
    stability_histogram,
    stability_threshold,
)


def _neighbours(x):
    for i in range(x.size):
        y = x.copy()
        y[i] += 1
        yield y
        if x[i] > 0:
            y = x.copy()
            y[i] -= 1
            yield y


def _unstable(x, stat, k):
    f = evaluate_statistic(x, stat, k)
    return any(evaluate_statistic(y, stat, k) != f for y in _neighbours(x))


def _bfs_distance(x, stat, k, cap=6):
    seen = {tuple(x)}
    dq = deque([(x, 0)])
    while dq:
        y, d = dq.popleft()
        if _unstable(y, stat, k):
            return d
        if d >= cap:
            continue
        for z in _neighbours(y):
            if tuple(z) not in seen:
                seen.add(tuple(z))
                dq.append((z, d + 1))
    return np.inf


@pytest.mark.parametrize("stat,k", [("max", 1), ("max_k", 2), ("max_k", 3), ("mode", 1)])
def test_distance_to_instability_matches_bfs(stat, k):
    rng = np.random.default_rng(0)
    for _ in range(25):
        x = rng.integers(0, 5, size=int(rng.integers(1, 5)))
        ref = _bfs_distance(x, stat, k)
        got = distance_to_instability(x, stat, k)
        if ref == np.inf:
            assert got > 6
        else:
            assert got == ref, (x, stat, k)


def test_exponential_mechanism_is_eps_dp_exactly():
    """Pr ratios across neighbours bounded by e^ε (estimated from samples at the true law's support)."""
    x = np.array([3, 0, 2, 0, 1])
    xp = x.copy()
    xp[4] = 0  # max changes from 4 to 2
    eps = 0.7
    B = x.size

    def law(h):
        f = evaluate_statistic(h, "max", 1)
        s = -np.abs(f - np.arange(B))
        w = np.exp(eps * s / (2 * (B - 1)))
        return w / w.sum()

    assert np.max(np.abs(np.log(law(x) / law(xp)))) <= eps + 1e-12
    out = exponential_mechanism(x, "max", eps, n_runs=20000, rng=1)
    obs = np.bincount(out, minlength=B)
    assert stats.chisquare(obs, law(x) * out.size).pvalue > 1e-3
    assert stats.chisquare(obs, law(xp) * out.size).pvalue < 1e-3  # power


def test_ptr_and_smooth_sensitivity_behaviour():
    x = np.zeros(20, dtype=int)
    x[5] = 1000
    x[19] = 5000
    eps, delta = 1.0, 1e-6
    # max sits on the last bar with 5000 items: far from instability -> PTR releases the truth
    assert distance_to_instability(x, "max") == 4999
    assert np.all(propose_test_release(x, "max", eps, delta, n_runs=50, rng=0) == 19)
    assert np.all(smooth_sensitivity_mechanism(x, "max", eps, delta, n_runs=50, rng=0) == 19)
    y = x.copy()
    y[19] = 0
    y[10] = 3  # max = 10 < B - 1: unstable, PTR refuses (uniform answers)
    out = propose_test_release(y, "max", eps, delta, n_runs=4000, rng=0)
    assert stats.chisquare(np.bincount(out, minlength=20)).pvalue > 1e-3
    assert np.all(exponential_mechanism(np.zeros(5, dtype=int), "max", 1.0, n_runs=10, rng=0) < 5)


def test_stability_histogram_new_bar_released_with_probability_delta():
    eps, delta = 0.5, 1e-2
    x = np.array([1, 0, 500])
    Y = stability_histogram(x, eps, delta, n_runs=200000, rng=3)
    assert np.all(Y[:, 1] == 0)
    p_new = (Y[:, 0] > 0).mean()
    # discrete Laplace: Pr[1 + Z >= k*] = e^{-ε(k*-1)}/(1 + e^{-ε}) <= δ (the integer threshold, k* = 10 here)
    k_star = stability_threshold(eps, delta)
    exact = np.exp(-eps * (k_star - 1)) / (1 + np.exp(-eps))
    assert exact <= delta < np.exp(-eps * (k_star - 2)) / (1 + np.exp(-eps))
    assert p_new == pytest.approx(exact, rel=0.08)
    assert p_new < 1.1 * delta


def test_choosing_histogram_shape_and_selection():
    x = np.array([0, 1000, 0, 5, 0])
    Y = choosing_histogram(x, 1.0, 1e-6, n_rounds=1, n_runs=500, rng=0)
    assert Y.shape == (500, 5) and np.all(Y >= 0)
    assert (np.argmax(Y, axis=1) == 1).mean() > 0.99
    assert evaluate_statistic(np.zeros(3), "mode") == UNDEFINED


def _choosing_law(x, eps, delta, excluded=()):
    """Exact output law of the choosing mechanism, written out independently (Laplace tail + softmax).

    Index B stands for ⊥.
    """
    x = np.asarray(x, dtype=float)
    cand = (x > 0) & ~np.isin(np.arange(x.size), list(excluded))
    law = np.zeros(x.size + 1)
    if not cand.any():
        law[-1] = 1.0
        return law
    t = 1 + 2 * np.log(1 / (2 * delta)) / eps
    z = (t - x[cand].max()) * eps / 2  # Pr[Lap(2/ε) >= t - best], closed form
    p_pass = 0.5 * np.exp(-z) if z >= 0 else 1 - 0.5 * np.exp(z)
    w = np.where(cand, np.exp(eps / 2 * (x - x.max())), 0.0)
    law[:-1] = p_pass * w / w.sum()
    law[-1] = 1 - p_pass
    return law


def _hockey(p, q, eps):
    return float(np.maximum(0.0, p - np.exp(eps) * q).sum())


def test_choosing_threshold_closed_form():
    eps, delta = 0.8, 1e-3
    t = choosing_threshold(eps, delta)
    assert stats.laplace(scale=2 / eps).sf(t - 1) == pytest.approx(delta, rel=1e-12)  # Pr[1 + Lap(2/ε) >= t] = δ
    assert choosing_threshold(1.0, 0.7) == 1.0


@pytest.mark.parametrize("eps,delta", [(0.5, 0.05), (1.0, 1e-3), (3.0, 0.2)])
def test_choosing_mechanism_is_eps_delta_dp_exactly(eps, delta):
    """Certificate by exhaustive enumeration: every add/remove pair of histograms on 3 bars with counts <= 4
    (and every public exclusion set) has hockey-stick divergence <= δ at e^ε, with equality (x = 0 vs one item).
    Power: the same enumeration with the gate lowered by one item exceeds δ."""
    worst, worst_low = 0.0, 0.0
    for xs in itertools.product(range(5), repeat=3):
        x = np.array(xs)
        for excl in [(), (0,), (1, 2)]:
            for y in _neighbours(x):
                if y.max() > 4:
                    continue
                p, q = _choosing_law(x, eps, delta, excl), _choosing_law(y, eps, delta, excl)
                worst = max(worst, _hockey(p, q, eps), _hockey(q, p, eps))
                # the gate one item lower is the threshold for δ' = δ e^{ε/2}: no longer (ε, δ)-DP
                pl, ql = (_choosing_law(h, eps, delta * np.exp(eps / 2), excl) for h in (x, y))
                worst_low = max(worst_low, _hockey(pl, ql, eps), _hockey(ql, pl, eps))
    assert worst <= delta * (1 + 1e-9)
    assert worst == pytest.approx(delta, rel=1e-9)
    assert worst_low > 1.2 * delta


def test_choosing_mechanism_sampler_matches_exact_law():
    x = np.array([0, 6, 3, 7, 0, 1])
    eps, delta = 1.0, 0.05
    out = choosing_mechanism(x, eps, delta, exclude=[3], n_runs=40000, rng=11)
    obs = np.bincount(np.where(out == UNDEFINED, x.size, out), minlength=x.size + 1)
    law = _choosing_law(x, eps, delta, excluded=(3,))
    keep = law > 0
    assert obs[~keep].sum() == 0  # never an empty or excluded bar
    assert stats.chisquare(obs[keep], law[keep] * out.size).pvalue > 1e-3
    wrong = _choosing_law(x, 1.2 * eps, delta, excluded=(3,))  # power: a 20 % larger ε is rejected
    assert stats.chisquare(obs[keep], wrong[keep] / wrong[keep].sum() * out.size).pvalue < 1e-3


def test_choosing_histogram_releases_only_non_empty_bars():
    """Regression (Fig. 3, experiment (1)): the former top-J exponential mechanism ranged over all B bars, so at
    small ε it released empty bars (bars 91-100 of experiment (1) in 21 % of runs at ε = 0.1) and its max error
    *fell* as ε fell.  The choosing mechanism ranges over G(x) = supp(x) only."""
    rng = np.random.default_rng(3)
    x = np.bincount(np.clip(np.floor(45 + 4 * rng.standard_cauchy(3000)), 0, 99).astype(int), minlength=100)
    x[90:] = 0
    for eps in (0.1, 2.0, 50.0):
        Y = choosing_histogram(x, eps, 2.0**-20, n_rounds=10, n_runs=400, rng=4)
        assert np.all(Y[:, x == 0] == 0)
        assert np.all((Y > 0).sum(axis=1) <= 10)
    # gate closed: t(ε/20, δ/10) > max(x) + 4 noise scales, so nearly every release is empty
    Y = choosing_histogram(x, 0.1, 2.0**-20, n_rounds=10, n_runs=400, rng=5)
    assert (Y.sum(axis=1) == 0).mean() > 0.95
    # ε large: the J highest bars, exactly
    Y = choosing_histogram(x, 1e4, 2.0**-20, n_rounds=3, n_runs=20, rng=6)
    top3 = set(np.argsort(-x, kind="stable")[:3])
    assert all(set(np.flatnonzero(r)) == top3 for r in Y)


@pytest.mark.parametrize("call", [
    lambda: exponential_mechanism([1, 2], "max", 0.0),
    lambda: propose_test_release([1, 2], "max", 1.0, 0.0),
    lambda: smooth_sensitivity_mechanism([1, 2], "mode", 1.0, 2.0),
    lambda: stability_histogram([1, -2], 1.0, 1e-3),
    lambda: choosing_histogram([1, 2], 1.0, 1e-3, n_rounds=0),
    lambda: choosing_histogram([1, 2], 1.0, 0.0),
    lambda: choosing_mechanism([1, 2], 1.0, 1e-3, exclude=[2]),
    lambda: choosing_mechanism([1, 2], 1.0, 1e-3, exclude=[True]),
    lambda: choosing_threshold(-1.0, 1e-3),
    lambda: distance_to_instability([1, 2], "median"),
])
def test_bad_input(call):
    with pytest.raises((ValueError, TypeError)):
        call()
