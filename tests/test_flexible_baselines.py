"""Section 6 / App. L.2 baselines: correctness of their ingredients and of their privacy statements."""

from collections import deque

import numpy as np
import pytest
from scipy import stats

from pml_design.flexible import (
    UNDEFINED,
    choosing_histogram,
    distance_to_instability,
    evaluate_statistic,
    exponential_mechanism,
    propose_test_release,
    smooth_sensitivity_mechanism,
    stability_histogram,
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
    assert p_new == pytest.approx(delta, rel=0.08)  # Pr[1 + Lap(1/ε) > T] = δ exactly
    assert p_new < 1.3 * delta


def test_choosing_histogram_shape_and_selection():
    x = np.array([0, 1000, 0, 5, 0])
    Y = choosing_histogram(x, 1.0, n_rounds=1, n_runs=500, rng=0)
    assert Y.shape == (500, 5) and np.all(Y >= 0)
    assert (np.argmax(Y, axis=1) == 1).mean() > 0.99
    assert evaluate_statistic(np.zeros(3), "mode") == UNDEFINED


@pytest.mark.parametrize("call", [
    lambda: exponential_mechanism([1, 2], "max", 0.0),
    lambda: propose_test_release([1, 2], "max", 1.0, 0.0),
    lambda: smooth_sensitivity_mechanism([1, 2], "mode", 1.0, 2.0),
    lambda: stability_histogram([1, -2], 1.0, 1e-3),
    lambda: choosing_histogram([1, 2], 1.0, n_rounds=0),
    lambda: distance_to_instability([1, 2], "median"),
])
def test_bad_input(call):
    with pytest.raises((ValueError, TypeError)):
        call()
