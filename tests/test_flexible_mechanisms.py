"""STLap (Alg. 1), bucketing (Algs. 2, 4), BucketHist (Algs. 3, 5) and Theorems 3-6 accuracy (Bansal et al.)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from pml_design.flexible import (
    bar_output_pmf,
    bucket_hist,
    bucket_hist_points,
    buckethist_certificate,
    bucketing,
    bucketing_points,
    d_drmv,
    d_drop,
    d_hist,
    d_supp,
    f_max,
    f_min,
    f_supp,
    histogram_statistic,
    stlap,
    stlap_release,
    stlap_with_q,
)


def test_stlap_drops_only_and_at_most_round_q():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 40, size=200)
    x[::7] = 0
    q = 5.7
    Y = stlap_with_q(x, q, 0.5, rng=1, n_draws=200)
    assert np.all(Y <= x) and np.all(Y >= 0)
    assert np.all(Y[:, x == 0] == 0)
    assert np.all(x - Y <= np.minimum(x, math.floor(q + 0.5)))
    # round(q) (not q) is attained: erratum E2
    assert (x - Y).max() == math.floor(q + 0.5) > q


def test_stlap_bar_distribution_chi_square_with_power():
    c, q, eps = 9, 6.3, 0.7
    x = np.full(30000, c)
    y = stlap_with_q(x, q, eps, rng=5)
    counts = np.bincount(y, minlength=c + 1)
    p = bar_output_pmf(c, q, eps)
    keep = p * y.size > 5
    obs = counts[keep]
    assert stats.chisquare(obs, p[keep] / p[keep].sum() * obs.sum()).pvalue > 1e-3
    pw = bar_output_pmf(c, q, eps * 1.1)
    assert stats.chisquare(obs, pw[keep] / pw[keep].sum() * obs.sum()).pvalue < 1e-3


def test_stlap_public_signature_and_modes():
    x = np.array([5, 0, 7, 100])
    y = stlap(x, 0.1, 1.0, rng=0)
    assert y.dtype == np.int64 and y.shape == x.shape
    assert np.array_equal(stlap(x, 0.1, 1.0, rng=3), stlap(x, 0.1, 1.0, rng=3))
    yf = stlap(x, 0.1, 1.0, rng=0, q_mode="fixed", n_public=50)
    assert np.all(x - yf <= 5)
    with pytest.raises(ValueError):
        stlap(x, 0.1, 1.0, q_mode="fixed")
    with pytest.raises(ValueError):
        stlap(x, 0.1, 1.0, q_mode="other")
    assert np.all(stlap(np.zeros(4, dtype=int), 0.1, 1.0, rng=0) == 0)  # empty input: documented all-zero output


def test_stlap_release_reports_certified_alpha_and_privacy():
    x = np.array([50] * 20)
    r = stlap_release(x, 0.01, 1.0, rng=0)
    d = d_drop(x, r.y)
    assert d <= r.accuracy_alpha + 1e-12
    assert r.accuracy_alpha == pytest.approx(20 * min(50, round(10.0)) / 1000)
    assert r.privacy.epsilon > 1.0  # relative q: the certified ε' exceeds the noise ε
    assert r.paper_delta is not None and r.privacy.delta >= r.paper_delta
    rf = stlap_release(x, 0.01, 1.0, rng=0, q_mode="fixed", n_public=1000)
    assert rf.privacy.epsilon == 1.0 and rf.privacy.delta == pytest.approx(rf.paper_delta)


@pytest.mark.parametrize("bad", [dict(tau=0.0), dict(tau=-0.1), dict(tau=1.5), dict(tau=np.nan), dict(epsilon=0.0),
                                 dict(epsilon=-1.0), dict(epsilon=np.inf)])
def test_stlap_bad_parameters(bad):
    kw = dict(tau=0.1, epsilon=1.0)
    kw.update(bad)
    with pytest.raises(ValueError):
        stlap([1, 2, 3], **kw)


@pytest.mark.parametrize("x", [[1, -1, 2], [1.5, 2], [[1, 2], [3, 4]], [], [1, np.inf]])
def test_stlap_bad_histograms(x):
    with pytest.raises(ValueError):
        stlap(x, 0.1, 1.0)


def test_bucketing_ceil_and_centres():
    counts, centres = bucketing(np.ones(10, dtype=int), 4.0)
    assert counts.tolist() == [4, 4, 2]  # t = ceil(10/4) = 3 (Alg. 3 prints floor = 2: erratum E3)
    assert centres.tolist() == [2.0, 6.0, 10.0]  # last centre >= B when B/w is not an integer
    c2, _ = bucketing_points(np.array([0.0, 3.99, 4.0, 9.999]), 4.0, 10.0)
    assert c2.tolist() == [2, 1, 1]
    with pytest.raises(ValueError):
        bucketing_points([10.0], 4.0, 10.0)


def test_buckethist_uses_ceil_in_tau():
    r = bucket_hist(np.ones(10, dtype=int) * 100, 0.3, 2.0, 1.0, rng=0)  # w = 4, t = 3
    assert r.n_buckets == 3 and r.tau == pytest.approx(0.1)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=5, max_size=40), st.sampled_from([0.05, 0.2, 0.5]),
       st.sampled_from([0.5, 1.0, 2.5, 4.0]), st.integers(0, 10**6))
def test_buckethist_accuracy_certificate(counts, alpha, beta, seed):
    """Theorem 4 (α, β, 0) via an explicit integral certificate x'' for every output."""
    x = np.array(counts)
    if x.sum() == 0:
        return
    r = bucket_hist(x, alpha, beta, 1.0, rng=seed)
    xc = buckethist_certificate(x, r)
    assert np.all(xc <= x) and xc.sum() == r.y.sum()
    assert d_drop(x, xc) <= r.accuracy_alpha + 1e-12
    assert r.accuracy_alpha <= alpha + r.n_buckets / (2 * x.sum()) + 1e-12  # rounding slack (erratum E2)
    if r.y.sum():
        assert d_hist(r.y, xc, positions=r.centres) <= beta + 1e-9
        # Corollary 2: |M_max(x) - max(x'')| <= β ; Corollary 3 via d_supp
        assert abs(r.centres[f_max(r.y)] - f_max(xc)) <= beta + 1e-9
        assert abs(r.centres[f_min(r.y)] - f_min(xc)) <= beta + 1e-9
        assert d_supp(r.centres[f_supp(r.y)], f_supp(xc)) <= beta + 1e-9
    # Theorem 6: ∂^η_drmv(x, y) <= α + η β (α with rounding slack)
    for eta in (0.5, 2.0):
        assert d_drmv(x, r.y, eta, positions_prime=r.centres) <= r.accuracy_alpha + eta * beta + 1e-9


def test_histogram_statistic_max_guarantee():
    x = np.zeros(100, dtype=int)
    x[:60] = 200
    x[97] = 1  # an outlier that flexible accuracy may drop
    res = histogram_statistic(x, "max", 0.1, 2.0, 1.0, rng=0)
    a, b, g = res.accuracy
    assert b == 2.0 and g == 0.0
    assert res.value is not None and res.value <= 99
    assert histogram_statistic(x, "mode", 0.1, 2.0, 1.0, rng=0).accuracy is None
    empty = histogram_statistic(np.zeros(10, dtype=int), "max", 0.1, 2.0, 1.0, rng=0)
    assert empty.value is None  # documented output for an undefined statistic


def test_d_dimensional_bucketing_corrected_width():
    """Erratum E4: with w = 2β (printed) a point can move β√d; with w = 2β/√d it moves <= β."""
    rng = np.random.default_rng(2)
    B, beta, d = 10.0, 1.0, 3
    pts = rng.random((4000, d)) * B
    r = bucket_hist_points(pts, 0.2, beta, 1.0, B, rng=0)
    assert r.w == pytest.approx(2 * beta / math.sqrt(d))
    idx = np.minimum(np.floor(pts / r.w).astype(int), r.centres.size - 1)
    moved = np.sqrt(((pts - r.centres[idx]) ** 2).sum(1))
    assert moved.max() <= beta + 1e-12
    w_printed = 2 * beta
    idx2 = np.floor(pts / w_printed).astype(int)
    moved2 = np.sqrt(((pts - w_printed * (idx2 + 0.5)) ** 2).sum(1))
    assert moved2.max() > 1.5 * beta
    assert r.n_buckets == math.ceil(B / r.w) ** d and r.tau == pytest.approx(0.2 / r.n_buckets)
    assert r.y.shape == (math.ceil(B / r.w),) * d and np.all(r.y <= r.bucketed)


@pytest.mark.parametrize("kw", [dict(alpha=0.0), dict(alpha=1.2), dict(beta=0.0), dict(beta=-1.0), dict(epsilon=0.0)])
def test_buckethist_bad_parameters(kw):
    args = dict(alpha=0.1, beta=1.0, epsilon=1.0)
    args.update(kw)
    with pytest.raises(ValueError):
        bucket_hist([1, 2, 3], **args)
    with pytest.raises(ValueError):
        bucket_hist([1, 2, 3], 0.1, 1.0, 1.0, B=2)


def test_public_contract_signatures():
    import inspect

    import pml_design.flexible as fx

    s = inspect.signature(fx.stlap)
    assert list(s.parameters)[:3] == ["x", "tau", "epsilon"]
    assert s.parameters["rng"].default is None and s.parameters["rng"].kind is inspect.Parameter.KEYWORD_ONLY
    assert s.parameters["q_mode"].default == "relative"
    assert list(inspect.signature(fx.lossy_winf).parameters) == ["p", "q", "gamma"]


def test_theorem4_tau_vs_used_tau():
    """Erratum E3: Theorem 4's τ = α·2β/B equals α/ceil(B/(2β)) only when B/(2β) is an integer."""
    from pml_design.flexible import buckethist_tau, paper_buckethist_tau

    assert paper_buckethist_tau(0.1, 2.0, 20) == pytest.approx(buckethist_tau(0.1, 2.0, 20))
    assert paper_buckethist_tau(0.1, 2.0, 10) > buckethist_tau(0.1, 2.0, 10)  # 0.04 vs 0.1/3
    assert bucket_hist(np.ones(10, dtype=int), 0.1, 2.0, 1.0, rng=0).tau == pytest.approx(buckethist_tau(0.1, 2.0, 10))
    assert paper_buckethist_tau(0.2, 1.0, 10, d=3) == pytest.approx(0.2 * (2 / (10 * 3 ** 0.5)) ** 3)
    r = bucket_hist_points(np.random.default_rng(0).random((50, 3)) * 10, 0.2, 1.0, 1.0, 10.0, rng=0)
    assert r.tau == pytest.approx(buckethist_tau(0.2, 1.0, 10, d=3))
