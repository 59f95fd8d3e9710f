"""Tests of the binary Laplace mechanism analysis (core paper, Section VI-A)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import laplace

from pml_design.additive.common import binary_l1_radius
from pml_design.additive.laplace import (
    laplace_leakage,
    laplace_ldp_scale,
    laplace_pml_epsilon,
    laplace_pml_epsilon_ball,
    laplace_pml_epsilon_estimated,
    laplace_scale_for,
    laplace_scale_for_radius,
    laplace_worst_p_min,
)


def _numeric_sup_leakage(b: float, p_minus: float) -> float:
    """sup_y ℓ(X→y) from the densities themselves: fine grid plus the breakpoints {-1, 0, 1} and far tails."""
    y = np.concatenate([np.linspace(-3 - 20 * b, 3 + 20 * b, 200_001), [-1.0, 0.0, 1.0, -1e3, 1e3]])
    f_minus = laplace.pdf(y, loc=-1.0, scale=b)
    f_plus = laplace.pdf(y, loc=1.0, scale=b)
    ok = (f_minus > 0) & (f_plus > 0)  # avoid 0/0 far in the tails for tiny b
    y = y[ok]
    f_minus, f_plus = f_minus[ok], f_plus[ok]
    ratio = np.maximum(f_minus, f_plus) / (p_minus * f_minus + (1 - p_minus) * f_plus)
    return float(np.log(ratio.max()))


def test_leakage_matches_density_ratio() -> None:
    y = np.linspace(-6, 6, 1001)
    for b, p in [(0.5, 0.3), (2.0, 0.9), (1.0, 0.5)]:
        f_minus, f_plus = laplace.pdf(y, -1, b), laplace.pdf(y, 1, b)
        direct = np.log(np.maximum(f_minus, f_plus) / (p * f_minus + (1 - p) * f_plus))
        np.testing.assert_allclose(laplace_leakage(y, b, p), direct, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("b", [0.3, 0.7, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("p_min", [0.05, 0.2, 0.37, 0.5])
def test_proposition3_against_numeric_supremum(b: float, p_min: float) -> None:
    formula = laplace_pml_epsilon(b, p_min)
    for p_minus in (p_min, 1 - p_min):  # the less likely symbol may be either one
        assert _numeric_sup_leakage(b, p_minus) == pytest.approx(formula, rel=1e-12, abs=1e-14)


def test_proposition3_printed_form_and_limits() -> None:
    b, p = 0.8, 0.23
    printed = 2 / b - math.log(math.exp(2 / b) * p + 1 - p)
    assert laplace_pml_epsilon(b, p) == pytest.approx(printed, rel=1e-14)
    assert laplace_pml_epsilon(b, 0.0) == pytest.approx(2 / b, rel=1e-15)  # LDP limit
    assert laplace_pml_epsilon(1e-3, 0.2) == pytest.approx(-math.log(0.2), rel=1e-12)  # no noise: eps_max
    assert laplace_pml_epsilon(1e6, 0.2) == pytest.approx((1 - 0.2) * 2e-6, rel=1e-6)  # small-t expansion


@settings(max_examples=60, deadline=None)
@given(
    b1=st.floats(0.05, 50),
    b2=st.floats(0.05, 50),
    p1=st.floats(0.0, 0.5),
    p2=st.floats(0.0, 0.5),
)
def test_epsilon_monotone_in_scale_and_p_min(b1: float, b2: float, p1: float, p2: float) -> None:
    lo_b, hi_b = sorted((b1, b2))
    lo_p, hi_p = sorted((p1, p2))
    assert laplace_pml_epsilon(lo_b, lo_p) >= laplace_pml_epsilon(hi_b, lo_p) - 1e-15
    assert laplace_pml_epsilon(lo_b, lo_p) >= laplace_pml_epsilon(lo_b, hi_p) - 1e-15
    assert 0 <= laplace_pml_epsilon(lo_b, lo_p) <= 2 / lo_b + 1e-12


@pytest.mark.parametrize("p_hat_min,radius", [(0.3, 0.2), (0.45, 0.5), (0.1, 0.5), (0.5, 1.0), (0.2, 2.0)])
def test_ball_worst_case_against_brute_force(p_hat_min: float, radius: float) -> None:
    b = 0.9
    # Brute force over the priors of the ball on the simplex, each with a numeric sup over y.
    lo, hi = max(0.0, p_hat_min - radius / 2), min(1.0, p_hat_min + radius / 2)
    grid = np.linspace(lo, hi, 41)
    brute = max(_numeric_sup_leakage(b, float(p)) for p in grid)
    assert laplace_pml_epsilon_ball(b, p_hat_min, radius) == pytest.approx(brute, rel=1e-10)
    assert laplace_worst_p_min(p_hat_min, radius) == pytest.approx(max(p_hat_min - radius / 2, 0.0))


def test_eq16_erratum_clamp() -> None:
    """Printed eq. (16) exceeds the LDP value 2/b when β*(δ) > 2 p̂_min; no prior leaks that much."""
    b, p_hat_min, m, delta = 1.0, 0.2, 100, 1e-9
    beta = binary_l1_radius(m, delta)
    assert beta > 2 * p_hat_min
    printed = 2 / b - math.log((p_hat_min - beta / 2) * (math.exp(2 / b) - 1) + 1)
    assert printed > 2 / b + 0.1
    ours = laplace_pml_epsilon_estimated(b, p_hat_min, m, delta)
    assert ours == pytest.approx(2 / b, rel=1e-15)
    # Independent check: the worst prior in the ball is on the simplex boundary, leaking 2/b in the limit.
    assert _numeric_sup_leakage(b, 1e-12) <= 2 / b + 1e-9
    # Where the clamp is inactive, eq. (16) is reproduced exactly.
    m_big = 10_000
    beta = binary_l1_radius(m_big, delta)
    printed = 2 / b - math.log((p_hat_min - beta / 2) * (math.exp(2 / b) - 1) + 1)
    assert laplace_pml_epsilon_estimated(b, p_hat_min, m_big, delta) == pytest.approx(printed, rel=1e-13)


def test_eq14_radius() -> None:
    assert binary_l1_radius(100, 1e-6) == pytest.approx(math.sqrt(2 * (math.log(2) + 6 * math.log(10)) / 100))
    assert binary_l1_radius(5, 0.0) == math.inf
    try:
        from pml_design.estimation import l1_radius
    except ImportError:  # the lead's module is not merged yet
        return
    assert binary_l1_radius(123, 1e-5) == pytest.approx(l1_radius(123, 2, 1e-5), rel=1e-14)


@pytest.mark.parametrize("eps", [1e-6, 0.05, math.log(2), 1.0, 2.5])
@pytest.mark.parametrize("p_hat_min,m,delta", [(0.24, 48842, 1e-9), (0.45, 1000, 1e-6), (0.1, 10**7, 0.5)])
def test_scale_for_inverts_eq16_against_bracketing_root(eps: float, p_hat_min: float, m: int, delta: float) -> None:
    p_worst = laplace_worst_p_min(p_hat_min, binary_l1_radius(m, delta))
    if p_worst > 0 and eps >= -math.log(p_worst):
        with pytest.raises(ValueError, match="epsilon"):
            laplace_scale_for(eps, p_hat_min, m, delta)
        return
    b = laplace_scale_for(eps, p_hat_min, m, delta)
    assert laplace_pml_epsilon_estimated(b, p_hat_min, m, delta) == pytest.approx(eps, rel=1e-12)
    # Independent: bracketing root finder on t = 2/b of ε(t) = −log(p + (1 − p) e^{−t}) (Prop. 3 rewritten,
    # in a cancellation-free form so that tiny ε is resolved too).
    g = lambda t: -math.log1p((1 - p_worst) * math.expm1(-t)) - eps  # noqa: E731
    t_hi = 1.0
    while g(t_hi) < 0:
        t_hi *= 2
    t = brentq(g, 0.0, t_hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    assert b == pytest.approx(2 / t, rel=1e-12)
    assert b <= laplace_ldp_scale(eps) * (1 + 1e-15)  # PML never needs more noise than LDP


def test_remark4_ldp_special_cases() -> None:
    for eps in (0.1, math.log(2), 3.0):
        assert laplace_scale_for(eps, 0.3, 1000, 0.0) == pytest.approx(2 / eps, rel=1e-15)  # δ = 0
        assert laplace_scale_for_radius(eps, 0.5, 1.0) == pytest.approx(2 / eps, rel=1e-15)  # p̂ = 1/2, β = 1
        assert laplace_scale_for(eps, 0.2, 10, 1e-9) == pytest.approx(2 / eps, rel=1e-15)  # too few samples
        assert laplace_ldp_scale(eps) == 2 / eps


def test_scale_decreases_with_m_and_delta() -> None:
    eps = 1.0
    bs = [laplace_scale_for(eps, 0.3, m, 1e-9) for m in (100, 1000, 10_000, 100_000, 10**6)]
    assert all(x >= y for x, y in zip(bs, bs[1:]))
    assert bs[-1] < bs[0]
    bd = [laplace_scale_for(eps, 0.3, 5000, d) for d in (1e-15, 1e-9, 1e-3, 0.5)]
    assert all(x >= y for x, y in zip(bd, bd[1:]))
    with pytest.raises(ValueError, match=r"vacuous"):  # delta = 1: a "(1, 1)-PML" statement says nothing (issue 23)
        laplace_scale_for(eps, 0.2, 1000, 1.0)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(1e-8, 5.0), p_hat_min=st.floats(0.0, 0.5), m=st.integers(1, 10**8),
       delta=st.floats(0.0, 1.0, exclude_max=True))
def test_scale_for_roundtrip_property(eps: float, p_hat_min: float, m: int, delta: float) -> None:
    p_worst = laplace_worst_p_min(p_hat_min, binary_l1_radius(m, delta))
    if p_worst > 0 and eps >= -math.log(p_worst) * (1 - 1e-9):
        return  # unreachable (tested elsewhere) or numerically at the cap
    b = laplace_scale_for(eps, p_hat_min, m, delta)
    assert 0 < b <= 2 / eps * (1 + 1e-14)
    assert laplace_pml_epsilon_estimated(b, p_hat_min, m, delta) == pytest.approx(eps, rel=1e-9)


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="p_hat_min"):
        laplace_scale_for(1.0, [0.3, 0.7], 100, 1e-3)  # type: ignore[arg-type]  # a vector, not p̂_min
    with pytest.raises(ValueError, match="scale"):
        laplace_pml_epsilon(0.0, 0.3)
    with pytest.raises(ValueError, match="scale"):
        laplace_pml_epsilon(-1.0, 0.3)
    with pytest.raises(TypeError, match="scale"):
        laplace_pml_epsilon("1", 0.3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="p_min"):
        laplace_pml_epsilon(1.0, 0.7)
    with pytest.raises(ValueError, match="p_hat_min"):
        laplace_scale_for(1.0, 0.6, 100, 1e-3)
    with pytest.raises(ValueError, match="delta"):
        laplace_scale_for(1.0, 0.3, 100, 1.5)
    with pytest.raises(ValueError, match="delta"):
        laplace_scale_for(1.0, 0.3, 100, -1e-3)
    with pytest.raises(ValueError, match="m"):
        laplace_scale_for(1.0, 0.3, 0, 1e-3)
    with pytest.raises(TypeError, match="m"):
        laplace_scale_for(1.0, 0.3, 2.5, 1e-3)
    with pytest.raises(ValueError, match="epsilon"):
        laplace_scale_for(0.0, 0.3, 100, 1e-3)
    with pytest.raises(ValueError, match="epsilon"):
        laplace_scale_for(float("nan"), 0.3, 100, 1e-3)
    with pytest.raises(ValueError, match="no noise is needed"):
        laplace_scale_for(-math.log(0.29), 0.3, 10**9, 0.5)  # unreachable: above -log p_min
    with pytest.raises(ValueError, match="radius"):
        laplace_scale_for_radius(1.0, 0.3, -0.1)
    with pytest.raises(ValueError, match="y"):
        laplace_leakage([0.0, np.inf], 1.0, 0.5)
    with pytest.raises(ValueError, match="p_minus"):
        laplace_leakage([0.0], 1.0, 1.5)
