"""Tests of pml_design.histogram: eq. (1), (2), composition, DP value, calibration, data-driven α."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from pml_design.histogram import (
    HistogramGuarantee,
    alpha_from_estimate,
    histogram_dp_epsilon,
    histogram_dp_scale_for,
    histogram_guarantee_from_estimate,
    histogram_guarantee_from_samples,
    histogram_noiseless_epsilon,
    histogram_pml_epsilon,
    histogram_pml_epsilon_composition,
    histogram_pml_epsilon_relaxed,
    histogram_scale_for,
)

alphas = st.floats(min_value=1e-6, max_value=0.5)
scales = st.floats(min_value=1e-3, max_value=1e4)


def naive_eq1(b: float, a: float) -> float:
    """Eq. (1) exactly as printed (overflows for b < 2/709)."""
    return 2.0 / b - math.log(1.0 - a + a * math.exp(2.0 / b))


# ---------------------------------------------------------------- eq. (1), (2), composition, DP
@pytest.mark.parametrize("b", [0.05, 0.3, 1.0, 2.0, 10.0, 300.0])
@pytest.mark.parametrize("a", [1e-4, 0.01, 0.1, 0.25, 0.5])
def test_eq1_matches_printed_form(b, a):
    assert histogram_pml_epsilon(b, a) == pytest.approx(naive_eq1(b, a), rel=1e-12, abs=1e-15)


def test_eq1_stable_at_extremes():
    # tiny b: e^{2/b} overflows in the printed form; the value tends to log(1/α)
    assert histogram_pml_epsilon(1e-5, 0.1) == pytest.approx(math.log(10.0), rel=1e-12)
    # huge b: first-order expansion 2(1 − α)/b
    assert histogram_pml_epsilon(1e8, 0.1) == pytest.approx(2 * 0.9 / 1e8, rel=1e-7)
    assert histogram_pml_epsilon(math.inf, 0.1) == 0.0


@settings(max_examples=60, deadline=None)
@given(b=scales, a=alphas)
def test_eq1_orderings(b, a):
    """0 ≤ eq.(1) ≤ eq.(2), eq.(1) ≤ 2/b, eq.(1) < log(1/α); monotone decreasing in α and b."""
    e1 = histogram_pml_epsilon(b, a)
    assert 0.0 <= e1 <= histogram_pml_epsilon_relaxed(b, a) * (1 + 1e-12) + 1e-300
    assert e1 <= histogram_dp_epsilon(b) * (1 + 1e-12)
    assert e1 <= -math.log(a) * (1 + 1e-12)
    assert histogram_pml_epsilon(b, a / 2) >= e1 * (1 - 1e-12)
    assert histogram_pml_epsilon(b * 1.5, a) <= e1 * (1 + 1e-12)


def test_dp_limit_as_alpha_to_zero():
    for b in (0.5, 1.0, 4.0):
        assert histogram_pml_epsilon(b, 1e-12) == pytest.approx(2.0 / b, rel=1e-9)
        assert histogram_pml_epsilon_relaxed(b, 1e-12) == pytest.approx(2.0 / b, rel=1e-9)


def test_relaxed_eq2_value():
    assert histogram_pml_epsilon_relaxed(2.0, 0.1) == pytest.approx(2 * 0.9 / 2 + 2 * 0.01 / 4)


def test_eq1_and_eq2_share_the_first_order_term():
    # eq.(1) = x(1−α) − α(1−α)x²/2 + O(x³) with x = 2/b (Taylor); eq.(2) = x(1−α) + α² x²/2
    a, b = 0.2, 1e3
    x = 2 / b
    assert histogram_pml_epsilon(b, a) == pytest.approx(x * (1 - a) - a * (1 - a) * x * x / 2, rel=1e-6)
    gap = histogram_pml_epsilon_relaxed(b, a) - histogram_pml_epsilon(b, a)
    assert gap == pytest.approx(a * x * x / 2, rel=1e-2)


def test_composition_bound_value_and_growth():
    b, a = 1.0, 0.05
    vals = [histogram_pml_epsilon_composition(b, a, k) for k in range(2, 12)]
    assert vals[0] == pytest.approx((1 - a) / b + a * a / (2 * b * b))
    assert np.all(np.diff(vals) > 0)
    # "significantly looser than (2)" holds from k = 4 on (not for k <= 3, see docs)
    for k in range(4, 12):
        assert histogram_pml_epsilon_composition(b, a, k) > histogram_pml_epsilon_relaxed(b, a)
    assert histogram_pml_epsilon_composition(b, a, 3) < histogram_pml_epsilon_relaxed(b, a)


def test_dp_epsilon_and_scale():
    assert histogram_dp_epsilon(4.0) == 0.5
    assert histogram_dp_scale_for(0.5) == 4.0


# ---------------------------------------------------------------- calibration
@settings(max_examples=80, deadline=None)
@given(eps=st.floats(min_value=1e-4, max_value=20.0), a=alphas)
def test_scale_for_inverts_eq1_and_matches_root_finding(eps, a):
    b = histogram_scale_for(eps, a)
    if eps >= -math.log(a):
        assert b == 0.0
        return
    assert b > 0
    assert histogram_pml_epsilon(b, a) == pytest.approx(eps, rel=1e-9)
    # independent: bracketing root finder on the printed eq. (1), in u = 2/b
    u = brentq(lambda u: histogram_pml_epsilon(2.0 / u, a) - eps, 1e-12, 700.0, xtol=1e-14, rtol=1e-13)
    assert 2.0 / b == pytest.approx(u, rel=1e-7, abs=1e-12)
    assert b <= histogram_dp_scale_for(eps) * (1 + 1e-12)


def test_scale_for_closed_form_value():
    eps, a = 1.0, 0.1
    assert histogram_scale_for(eps, a) == pytest.approx(2 / (math.log(1 - a) - math.log(math.exp(-eps) - a)))


def test_scale_for_no_noise_region_boundary():
    a = 0.05
    thr = histogram_noiseless_epsilon(a)
    assert thr == pytest.approx(math.log(20))
    # the float thr may lie an ulp below log(1/α): then a tiny b (still meeting thr) is the exact answer
    b_thr = histogram_scale_for(thr, a)
    assert b_thr == 0.0 or (b_thr < 0.1 and histogram_pml_epsilon(b_thr, a) <= thr * (1 + 1e-15))
    assert histogram_scale_for(thr + 1e-9, a) == 0.0
    b = histogram_scale_for(thr * (1 - 1e-6), a)
    assert 0 < b < 0.2
    # α > 1/2 is impossible for a histogram of k >= 2 bins (min p_i <= 1/k): refused, not "b = 0" (issue 23)
    for alpha in (0.7, 1.0):
        with pytest.raises(ValueError, match=r"\(0, 1/2\]"):
            histogram_scale_for(0.01, alpha)
    with pytest.raises(ValueError, match=r"1/k"):
        histogram_scale_for(1.0, 0.4, n_bins=3)
    # two equiprobable bins: log(1/α) = log 2; the float log(2) is below it, so a tiny b meets it exactly
    b2 = histogram_scale_for(math.log(2), 0.5)
    assert b2 == 0.0 or (b2 < 0.1 and histogram_pml_epsilon(b2, 0.5) <= math.log(2) * (1 + 1e-15))
    assert histogram_scale_for(math.log(2) * (1 + 1e-12), 0.5) == 0.0


def test_scale_for_small_epsilon_first_order():
    a, eps = 0.1, 1e-6
    assert histogram_scale_for(eps, a) == pytest.approx(2 * (1 - a) / eps, rel=1e-5)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan])
def test_bad_scale(scale):
    with pytest.raises(ValueError, match="scale"):
        histogram_pml_epsilon(scale, 0.1)
    with pytest.raises(ValueError, match="scale"):
        histogram_dp_epsilon(scale)


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.5, math.nan, math.inf])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        histogram_pml_epsilon(1.0, alpha)
    with pytest.raises(ValueError, match="alpha"):
        histogram_scale_for(1.0, alpha)


def test_alpha_above_one_over_k():
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1/k\]"):
        histogram_pml_epsilon(1.0, 0.3, n_bins=4)
    with pytest.raises(ValueError, match="alpha"):
        histogram_pml_epsilon_composition(1.0, 0.3, 4)
    assert histogram_pml_epsilon(1.0, 0.25, n_bins=4) > 0


@pytest.mark.parametrize("eps", [0.0, -1.0, math.nan, math.inf])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        histogram_scale_for(eps, 0.1)
    with pytest.raises(ValueError, match="epsilon"):
        histogram_dp_scale_for(eps)


def test_type_errors():
    with pytest.raises(TypeError, match="scale"):
        histogram_pml_epsilon("1", 0.1)
    with pytest.raises(TypeError, match="alpha"):
        histogram_pml_epsilon(1.0, None)


# ---------------------------------------------------------------- data-driven α
def test_alpha_from_estimate_value_and_clipping():
    assert alpha_from_estimate([0.2, 0.3, 0.5], 0.1) == pytest.approx(0.15)
    assert alpha_from_estimate([0.2, 0.3, 0.5], 0.6) == 0.0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 6), beta=st.floats(0.0, 0.5))
def test_alpha_from_estimate_holds_on_the_ball_and_is_attained(seed, k, beta):
    rng = np.random.default_rng(seed)
    phat = rng.dirichlet(np.ones(k))
    a = alpha_from_estimate(phat, beta)
    # random points of the ball that are distributions: every bin ≥ α
    d = rng.normal(size=(500, k))
    d -= d.mean(axis=1, keepdims=True)
    d *= (beta * rng.uniform(size=(500, 1))) / np.maximum(np.abs(d).sum(axis=1, keepdims=True), 1e-300)
    P = phat + d
    ok = np.all(P >= 0, axis=1)
    assert np.all(P[ok].min(axis=1) >= a - 1e-12)
    # the extreme point: move β/2 from the smallest bin to another one
    j = int(np.argmin(phat))
    if phat[j] - beta / 2 > 0:
        q = phat.copy()
        q[j] -= beta / 2
        q[(j + 1) % k] += beta / 2
        assert np.abs(q - phat).sum() == pytest.approx(beta)
        assert q.min() == pytest.approx(a)


def test_guarantee_from_estimate_scale_and_epsilon_modes():
    phat = np.array([0.2, 0.3, 0.5])
    g = histogram_guarantee_from_estimate(phat, 0.1, 1e-3, scale=2.0)
    assert isinstance(g, HistogramGuarantee)
    assert g.alpha == pytest.approx(0.15)
    assert g.epsilon == pytest.approx(histogram_pml_epsilon(2.0, 0.15))
    assert g.dp_epsilon == 1.0 and g.epsilon < g.dp_epsilon and g.delta == 1e-3 and g.n_bins == 3
    g2 = histogram_guarantee_from_estimate(phat, 0.1, 1e-3, epsilon=0.5)
    assert histogram_pml_epsilon(g2.scale, g2.alpha) == pytest.approx(0.5)
    assert g2.dp_scale == 4.0 and g2.scale < g2.dp_scale
    # empty-bin ball: falls back to the DP calibration (α → 0 limit)
    g3 = histogram_guarantee_from_estimate(phat, 0.5, 1e-3, epsilon=0.5)
    assert g3.alpha == 0.0 and g3.scale == 4.0 and g3.epsilon == 0.5
    g4 = histogram_guarantee_from_estimate(phat, 0.5, 1e-3, scale=4.0)
    assert g4.epsilon == pytest.approx(0.5)


def test_guarantee_from_estimate_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        histogram_guarantee_from_estimate([0.5, 0.5], 0.1, 0.1)
    with pytest.raises(ValueError, match="exactly one"):
        histogram_guarantee_from_estimate([0.5, 0.5], 0.1, 0.1, scale=1.0, epsilon=1.0)
    with pytest.raises(ValueError, match="delta"):
        histogram_guarantee_from_estimate([0.5, 0.5], 0.1, 0.0, scale=1.0)
    with pytest.raises(ValueError, match="estimate"):
        histogram_guarantee_from_estimate([0.5, 0.6], 0.1, 0.1, scale=1.0)
    with pytest.raises(ValueError, match="radius"):
        histogram_guarantee_from_estimate([0.5, 0.5], -0.1, 0.1, scale=1.0)


def beta_star(m: int, k: int, delta: float) -> float:
    """Core paper eq. (7), square root over the whole bracket (distribution-free radius)."""
    return math.sqrt(2.0 / m * (math.log(2.0**k - 2.0) - math.log(delta)))


def test_data_driven_alpha_coverage_monte_carlo():
    """With β = β*(δ), the true min probability is ≥ α in at least a 1 − δ fraction of estimates."""
    rng = np.random.default_rng(7)
    P = np.array([0.1, 0.2, 0.3, 0.4])
    m, delta, trials = 400, 0.2, 4000
    phats = rng.multinomial(m, P, size=trials) / m
    beta = beta_star(m, 4, delta)
    alphas_ = np.maximum(phats.min(axis=1) - beta / 2, 0.0)
    assert np.mean(alphas_ <= P.min()) >= 1 - delta
    # and the guarantee is useful: α > 0 typically
    assert np.mean(alphas_ > 0) > 0.5


def test_guarantee_from_samples():
    pytest.importorskip("pml_design.estimation")
    rng = np.random.default_rng(3)
    samples = rng.choice(4, size=5000, p=[0.1, 0.2, 0.3, 0.4])
    g = histogram_guarantee_from_samples(samples, 4, 1e-3, epsilon=0.5)
    phat = np.bincount(samples, minlength=4) / samples.size
    assert g.radius == pytest.approx(beta_star(5000, 4, 1e-3))
    assert g.alpha == pytest.approx(phat.min() - g.radius / 2)
    assert histogram_pml_epsilon(g.scale, g.alpha) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="outside the declared bins"):
        histogram_guarantee_from_samples([0, 1, 4], 4, 0.1, scale=1.0)
    with pytest.raises(ValueError, match="empty"):
        histogram_guarantee_from_samples([], 4, 0.1, scale=1.0)
