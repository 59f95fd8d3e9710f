"""Histogram-based statistics, reachable sets, metric sensitivity (Bansal et al., Sec. 5.2, 6, App. H)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pml_design.flexible import (
    UNDEFINED,
    d_hist,
    d_supp,
    evaluate_statistic,
    f_max,
    f_min,
    f_supp,
    flexible_error,
    max_k,
    metric_sensitivity,
    mode,
    reachable_values,
)


def test_statistics_basic_and_undefined():
    y = np.array([0, 3, 0, 5, 5, 1])
    assert f_max(y) == 5 and f_min(y) == 1 and f_supp(y).tolist() == [1, 3, 4, 5]
    assert max_k(y, 4) == 4 and max_k(y, 6) == UNDEFINED and mode(y) == 3
    z = np.zeros(4)
    assert f_max(z) == UNDEFINED and f_min(z) == UNDEFINED and mode(z) == UNDEFINED and f_supp(z).size == 0
    Y = np.stack([y, np.zeros(6), y[::-1]])
    assert f_max(Y).tolist() == [5, UNDEFINED, 4]
    assert mode(Y).tolist() == [3, UNDEFINED, 1]
    with pytest.raises(ValueError):
        evaluate_statistic(y, "median")


def _all_sub_histograms(x, D):
    for z in itertools.product(*[range(c + 1) for c in x]):
        z = np.array(z)
        if x.sum() - z.sum() <= D:
            yield z


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=5), st.sampled_from([0.0, 0.1, 0.25, 0.4]),
       st.sampled_from(["max", "min", "max_k", "mode"]))
def test_reachable_sets_equal_brute_force(counts, alpha, stat):
    x = np.array(counts)
    if x.sum() == 0:
        return
    D = int(np.floor(alpha * x.sum() + 1e-9))
    k = 2
    ref = set()
    for z in _all_sub_histograms(x, D):
        v = evaluate_statistic(z, stat, k)
        if v != UNDEFINED:
            ref.add(int(v))
    assert set(reachable_values(x, stat, alpha, k).tolist()) == ref


def test_flexible_error_le_actual_error():
    x = np.array([50, 40, 0, 0, 1])
    out = np.array([0, 1, 2, 3, 4])
    actual = flexible_error(x, out, "max", 0.0)
    flex = flexible_error(x, out, "max", 0.05)
    assert np.array_equal(actual, np.abs(out - 4))
    assert np.all(flex <= actual) and flex[1] == 0  # dropping the outlier makes 1 a correct max


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=3, max_size=8), st.lists(st.integers(0, 4), min_size=3, max_size=8))
def test_max_min_supp_metric_sensitivity(a, b):
    """Corollaries 2-3: |f(y) - f(y')| <= d_hist(y, y') for max and min; d_supp <= d_hist."""
    B = max(len(a), len(b))
    y, yp = np.pad(a, (0, B - len(a))), np.pad(b, (0, B - len(b)))
    if y.sum() == 0 or yp.sum() == 0:
        return
    dh = d_hist(y, yp)
    assert abs(f_max(y) - f_max(yp)) <= dh + 1e-12
    assert abs(f_min(y) - f_min(yp)) <= dh + 1e-12
    assert d_supp(f_supp(y), f_supp(yp)) <= dh + 1e-12


def test_max_k_and_mode_have_unbounded_metric_sensitivity():
    B, k = 50, 4
    x = np.zeros(B + 1, dtype=int)
    x[0], x[B] = 2 * k, int(np.ceil(k / 2))
    assert d_hist(x, 2 * x) == 0 and max_k(x, k) == 0 and max_k(2 * x, k) == B
    y = np.zeros(B + 1, dtype=int)
    y[1], y[B] = 100, 99
    yp = y.copy()
    yp[1], yp[2] = 50, 50
    assert d_hist(y, yp) == 1 and mode(y) == 1 and mode(yp) == B
    assert metric_sensitivity("max_k", 2.0, k=4) == np.inf and metric_sensitivity("mode", 2.0) == np.inf
    assert metric_sensitivity("max", 2.0) == 2.0 and metric_sensitivity("supp", 1.5) == 1.5
