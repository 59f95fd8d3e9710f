"""Tests of the binary Gaussian mechanism analysis and the pLDP baseline (core paper, Section VI-B, VI-C2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.stats import norm

from pml_design.additive.common import binary_l1_radius
from pml_design.additive.gaussian import (
    gaussian_delta1,
    gaussian_delta1_sup,
    gaussian_leakage,
    gaussian_pml_curve,
    gaussian_pml_guarantee,
    gaussian_violation_probability,
    gaussian_violation_set,
    pldp_gaussian_delta,
    pldp_gaussian_sigma,
)


def _direct_leakage(y: np.ndarray, s: float, p: float) -> np.ndarray:
    f_minus, f_plus = norm.pdf(y, -1, s), norm.pdf(y, 1, s)
    return np.log(np.maximum(f_minus, f_plus) / (p * f_minus + (1 - p) * f_plus))


def test_leakage_matches_density_ratio() -> None:
    y = np.linspace(-5, 5, 1001)
    for s, p in [(1.5, 0.5), (2.0, 0.3), (0.7, 0.95)]:
        np.testing.assert_allclose(gaussian_leakage(y, s, p), _direct_leakage(y, s, p), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.5, 1.0, 1.6])
@pytest.mark.parametrize("s,p", [(1.5, 0.5), (2.0, 0.3), (1.0, 0.1), (0.5, 0.8)])
def test_violation_set_boundaries_by_root_finding(eps: float, s: float, p: float) -> None:
    vs = gaussian_violation_set(eps, s, p)
    ell = lambda y: float(_direct_leakage(np.array([y]), s, p)[0]) - eps  # noqa: E731
    # Right tail: exists iff the limit leakage −log P(X=+1) exceeds ε; boundary = the root of ℓ = ε on y > 0.
    if -math.log(1 - p) > eps:
        hi = 1.0
        while ell(hi) <= 0:
            hi *= 2
        root = brentq(ell, 0.0, hi, xtol=1e-14) if eps > 0 else 0.0
        assert vs.upper == pytest.approx(root, abs=1e-9)
    else:
        assert vs.upper == math.inf
    if -math.log(p) > eps:
        lo = -1.0
        while ell(lo) <= 0:
            lo *= 2
        root = brentq(ell, lo, 0.0, xtol=1e-14) if eps > 0 else 0.0
        assert vs.lower == pytest.approx(root, abs=1e-9)
    else:
        assert vs.lower == -math.inf
    # Membership agrees with the definition on a grid (away from the boundary points).
    y = np.linspace(-3 - 12 * s, 3 + 12 * s, 20001)  # where the densities do not underflow
    far = (np.abs(y - vs.upper) > 1e-6) & (np.abs(y - vs.lower) > 1e-6)
    np.testing.assert_array_equal(vs.contains(y)[far], (_direct_leakage(y, s, p) > eps)[far])


@pytest.mark.parametrize("eps,s,p", [(0.3, 1.5, 0.5), (0.8, 2.0, 0.3), (1.2, 1.5, 0.05), (2.0, 1.0, 0.9)])
def test_violation_probability_against_quadrature(eps: float, s: float, p: float) -> None:
    vs = gaussian_violation_set(eps, s, p)
    f_y = lambda y: p * norm.pdf(y, -1, s) + (1 - p) * norm.pdf(y, 1, s)  # noqa: E731
    total = 0.0
    if math.isfinite(vs.lower):
        total += quad(f_y, -np.inf, vs.lower, epsabs=1e-15, epsrel=1e-12)[0]
    if math.isfinite(vs.upper):
        total += quad(f_y, vs.upper, np.inf, epsabs=1e-15, epsrel=1e-12)[0]
    assert gaussian_violation_probability(eps, s, p) == pytest.approx(total, rel=1e-9, abs=1e-15)


def test_violation_probability_monte_carlo() -> None:
    rng = np.random.default_rng(7)
    eps, s, p, n = 0.4, 1.5, 0.35, 400_000
    x = np.where(rng.random(n) < p, -1.0, 1.0)
    y = x + s * rng.standard_normal(n)
    freq = float(np.mean(_direct_leakage(y, s, p) > eps))
    exact = gaussian_violation_probability(eps, s, p)
    assert abs(freq - exact) < 5 * math.sqrt(exact * (1 - exact) / n)


@pytest.mark.parametrize(
    "eps,s,p_hat,radius",
    [
        (0.5, 1.5, 0.5, 0.6),  # interior local maxima (see the function's shape)
        (1.0, 1.5, 0.3, 0.5),
        (0.5, 2.0, 0.5, 0.8),
        (1.0, 2.0, 0.3, 0.3),
        (0.2, 1.5, 0.3, 0.1),
        (1.3, 2.0, 0.5, 0.2),  # tiny δ1
        (0.05, 1.5, 0.5, 2.0),  # whole simplex
    ],
)
def test_delta1_beats_a_fine_grid(eps: float, s: float, p_hat: float, radius: float) -> None:
    lo, hi = max(0.0, p_hat - radius / 2), min(1.0, p_hat + radius / 2)
    grid = np.linspace(lo, hi, 200_001)
    grid_max = float(np.max(gaussian_violation_probability(eps, s, grid)))
    d1 = gaussian_delta1(eps, s, p_hat, radius)
    assert d1 >= grid_max * (1 - 1e-14)
    assert d1 <= grid_max * (1 + 1e-8) + 1e-300  # the grid is already close; we only refine it
    sup = gaussian_delta1_sup(eps, s, p_hat, radius)
    assert lo <= sup.p_minus <= hi
    assert gaussian_violation_probability(eps, s, sup.p_minus) == pytest.approx(sup.delta1, rel=1e-15)


@settings(max_examples=25, deadline=None)
@given(
    eps=st.floats(0.0, 2.0),
    s=st.floats(0.5, 3.0),
    p_hat=st.floats(0.05, 0.95),
    radius=st.floats(0.0, 1.0),
)
def test_delta1_properties(eps: float, s: float, p_hat: float, radius: float) -> None:
    d1 = gaussian_delta1(eps, s, p_hat, radius)
    assert 0.0 <= d1 <= 1.0
    assert d1 >= gaussian_violation_probability(eps, s, p_hat) * (1 - 1e-12)  # the ball contains P̂
    assert gaussian_delta1(eps, s, p_hat, min(2.0, radius + 0.2)) >= d1 * (1 - 1e-12)  # nested balls
    lo, hi = max(0.0, p_hat - radius / 2), min(1.0, p_hat + radius / 2)
    coarse = np.max(gaussian_violation_probability(eps, s, np.linspace(lo, hi, 5001)))
    assert d1 >= coarse * (1 - 1e-12)


def test_guarantee_and_curve() -> None:
    g = gaussian_pml_guarantee(0.5, 1.5, 0.5, 1000, 1e-6)
    beta = binary_l1_radius(1000, 1e-6)
    assert g.radius == pytest.approx(beta)
    assert g.epsilon_star == pytest.approx(0.5 - math.log(1 - beta * math.exp(0.5) / 2))
    assert g.delta1 == pytest.approx(gaussian_delta1(0.5, 1.5, 0.5, beta))
    assert g.delta_star == pytest.approx(g.delta1 + g.delta2 - g.delta1 * g.delta2)
    assert g.delta_star >= g.delta2 and g.delta_star >= g.delta1
    eps = np.linspace(0.0, 3.0, 31)
    curve = gaussian_pml_curve(eps, 1.5, 0.5, 100, 1e-6)
    beta100 = binary_l1_radius(100, 1e-6)
    assert np.all(curve["epsilon"] < math.log(2 / beta100))  # Theorem 4 vacuous beyond this
    assert np.all(curve["delta_star"] >= 1e-6)
    assert np.all(np.diff(curve["epsilon_star"]) > 0)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_pml_guarantee(2.0, 1.5, 0.5, 100, 1e-6)


def test_pldp_sigma_formula_and_inverse() -> None:
    for eps, delta in [(0.5, 1e-6), (1.0, 1e-3), (2.0, 0.1), (0.1, 0.5)]:
        s = pldp_gaussian_sigma(eps, delta)
        f = float(__import__("scipy.special", fromlist=["erfcinv"]).erfcinv(delta))
        assert s == pytest.approx(math.sqrt(2) * (f + math.sqrt(f * f + eps)) / eps)
        assert pldp_gaussian_delta(eps, s) == pytest.approx(delta, rel=1e-9)
    assert pldp_gaussian_delta(0.1, 1.0) == 1.0  # tiny ε: no guarantee


@pytest.mark.parametrize("eps,s", [(0.5, 1.5), (1.0, 2.0), (2.0, 1.5), (0.8, 3.0)])
def test_pldp_delta_is_a_valid_bound(eps: float, s: float) -> None:
    """Independent derivation: with X = x the privacy loss 2|Y|/σ² exceeds ε iff |Y| > σ²ε/2."""
    t = s * s * eps / 2
    exact = norm.sf((t - 1) / s) + norm.cdf((-t - 1) / s)  # P(|Y| > t | X = 1), same for X = -1
    zhao = pldp_gaussian_delta(eps, s)
    assert zhao >= exact * (1 - 1e-12)
    assert zhao <= 2 * exact  # conservative by at most a factor 2
    rng = np.random.default_rng(3)
    y = 1.0 + s * rng.standard_normal(200_000)
    ratio = np.exp(2 * np.abs(y) / s**2)  # max_{x,x'} f(y|x)/f(y|x')
    freq = float(np.mean(ratio > math.exp(eps)))
    assert abs(freq - exact) < 5 * math.sqrt(exact * (1 - exact) / y.size) + 1e-4


def test_gaussian_pml_beats_pldp_at_same_sigma() -> None:
    """Fig. 6(a) claim: at σ = 1.5, P̂ = (0.5, 0.5), m = 10^4, the PML curve lies below the pLDP curve."""
    curve = gaussian_pml_curve(np.linspace(0.2, 1.5, 14), 1.5, 0.5, 10_000, 1e-6)
    for es, ds in zip(curve["epsilon_star"], curve["delta_star"]):
        assert ds < pldp_gaussian_delta(es, 1.5)


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="p_hat"):
        gaussian_delta1(0.5, 1.0, [0.3, 0.7], 0.1)  # type: ignore[arg-type]  # p_hat is P̂(X = -1)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_delta1(0.5, 0.0, 0.5, 0.1)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_leakage([0.0], -1.0, 0.5)
    with pytest.raises(ValueError, match="p_hat"):
        gaussian_delta1(0.5, 1.0, 1.2, 0.1)
    with pytest.raises(ValueError, match="radius"):
        gaussian_delta1(0.5, 1.0, 0.5, -0.1)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_delta1(-0.5, 1.0, 0.5, 0.1)
    with pytest.raises(ValueError, match="delta2"):
        gaussian_pml_guarantee(0.5, 1.0, 0.5, 100, 0.0)
    with pytest.raises(ValueError, match="m"):
        gaussian_pml_guarantee(0.5, 1.0, 0.5, 0, 1e-3)
    with pytest.raises(ValueError, match="delta"):
        pldp_gaussian_sigma(1.0, 1.5)
    with pytest.raises(ValueError, match="epsilon"):
        pldp_gaussian_sigma(0.0, 0.1)
    with pytest.raises(ValueError, match="p_minus"):
        gaussian_violation_probability(0.5, 1.0, [0.2, 1.3])
    with pytest.raises(ValueError, match="p_minus"):
        gaussian_violation_set(0.5, 1.0, -0.1)
