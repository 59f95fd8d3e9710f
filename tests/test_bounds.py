"""Tests of pml_design.bounds: Theorems 3-4, Corollaries 2-3, eq. (8), checked against exact values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pml_design as pd
from tests.conftest import EXAMPLE1, EXAMPLE1_PRIOR, random_mechanism


def circulant_k_singular(n: int, k: int) -> np.ndarray:
    W = np.zeros((n, n))
    for i in range(n):
        W[i, [(i + j) % n for j in range(k)]] = 1 / k
    return W


@given(st.integers(2, 6), st.integers(0, 10**6), st.floats(0.01, 0.999), st.floats(0.0, 0.9))
def test_theorem4_bound_dominates_exact_sensitivity(n, seed, frac, zero_frac):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 2)
    W = random_mechanism(rng, n, n, zero_frac=zero_frac)
    eps = pd.epsilon_min(W, p)
    radius = frac * 2 * p.min()
    ball = pd.L1Ball(p, radius)
    bound = pd.sensitivity_bound(eps, p, radius)
    assert pd.leakage_sensitivity(W, p, ball) <= bound + 1e-10
    assert pd.max_divergence_shift(W, p, ball) <= bound + 1e-10
    assert pd.leakage_capacity(W, ball) <= pd.capacity_bound(eps, p, radius) + 1e-10


@given(st.integers(2, 6), st.integers(0, 10**6), st.floats(1.01, 4.0))
def test_theorem4_extension_beyond_interior_regime(n, seed, factor):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 2)
    W = random_mechanism(rng, n, n, zero_frac=0.3)
    eps = pd.epsilon_min(W, p)
    radius = min(2.0, factor * 2 * p.min())
    with pytest.raises(ValueError, match="radius"):
        pd.sensitivity_bound(eps, p, radius)
    bound = pd.sensitivity_bound(eps, p, radius, strict=False)
    assert pd.leakage_sensitivity(W, p, pd.L1Ball(p, radius)) <= bound + 1e-10


@pytest.mark.parametrize("radius", [0.01, 0.1, 0.2, 0.39])
def test_theorem4_equality_first_region_extremal(radius):
    eps = np.log(9 / 8)
    ball = pd.L1Ball(EXAMPLE1_PRIOR, radius)
    exact = pd.leakage_sensitivity(EXAMPLE1, EXAMPLE1_PRIOR, ball)
    bound = pd.sensitivity_bound(eps, EXAMPLE1_PRIOR, radius)
    assert exact == pytest.approx(bound, rel=1e-10)
    assert bound == pytest.approx(-np.log(1 - radius / 2 * (9 / 8 - 1) / 0.2))


@pytest.mark.parametrize("radius", [0.01, 0.05, 0.1, 0.19])
def test_theorem4_equality_k_singular(radius):
    n, k = 10, 2
    W = circulant_k_singular(n, k)
    p = np.full(n, 1 / n)
    eps = pd.epsilon_min(W, p)
    assert eps == pytest.approx(np.log(n / k))
    assert pd.privacy_region(p, eps) > 1
    exact = pd.leakage_sensitivity(W, p, pd.L1Ball(p, radius))
    assert exact == pytest.approx(pd.sensitivity_bound(eps, p, radius), rel=1e-10)
    assert exact == pytest.approx(-np.log(1 - radius * np.exp(eps) / 2), rel=1e-10)


def test_theorem3_lipschitz(rng):
    for _ in range(50):
        n = int(rng.integers(2, 6))
        center = rng.dirichlet(np.ones(n) * 3)
        ball = pd.L1Ball(center, 0.5 * center.min())
        W = random_mechanism(rng, n, n, zero_frac=0.2)
        L = pd.lipschitz_constant(W, ball)
        for _ in range(10):
            q1, q2 = (center + 0.5 * center.min() / 2 * (rng.dirichlet(np.ones(n)) - 1 / n) for _ in range(2))
            q1 /= q1.sum()
            q2 /= q2.sum()
            if ball.contains(q1) and ball.contains(q2):
                diff = abs(pd.epsilon_min(W, q1) - pd.epsilon_min(W, q2))
                assert diff <= L * np.abs(q1 - q2).sum() + 1e-12


def test_corollary2(rng):
    for _ in range(50):
        n = int(rng.integers(2, 6))
        p = rng.dirichlet(np.ones(n) * 3)
        W = random_mechanism(rng, n, n, zero_frac=0.2)
        eps = pd.epsilon_min(W, p)
        q = rng.dirichlet(np.ones(n) * 3)
        d = np.abs(p - q).sum()
        if d < 2 * np.exp(-eps):
            assert pd.epsilon_min(W, q) <= pd.corollary2_bound(eps, d) + 1e-12
    with pytest.raises(ValueError, match="distance"):
        pd.corollary2_bound(np.log(2), 1.0)


def test_epsilon_prime_and_delta_min_round_trip():
    eps, n = np.log(5), 20
    for m in (10_000, 100_000):
        for delta in (1e-2, 1e-5, 1e-9):
            epsp = pd.epsilon_prime(eps, delta, m, n)
            assert epsp > eps
            assert pd.delta_min(eps, epsp, m, n) == pytest.approx(delta, rel=1e-9)
            # eq. (8) is Theorem 4's k>1 capacity bound at the eq. (7) radius
            beta = pd.l1_radius(m, n, delta)
            assert epsp == pytest.approx(eps - math.log(1 - beta * math.exp(eps) / 2))
    assert pd.delta_min(eps, eps, 100, n) == 1.0
    assert pd.delta_min(eps, np.inf, 100, n) == pytest.approx(0.0, abs=1e-300) or True


def test_epsilon_prime_guarantee_holds_exactly():
    # The designed-for-P̂ mechanism's exact capacity over the eq. (7) ball is <= eps'(delta).
    p_hat = np.full(10, 0.1)
    W = circulant_k_singular(10, 2)
    eps = pd.epsilon_min(W, p_hat)
    m, delta = 200_000, 1e-6
    beta = pd.l1_radius(m, 10, delta)
    cap = pd.leakage_capacity(W, pd.L1Ball(p_hat, beta))
    assert cap <= pd.epsilon_prime(eps, delta, m, 10) + 1e-12
    assert cap == pytest.approx(pd.epsilon_prime(eps, delta, m, 10), rel=1e-10)  # tight: zeros in every column


def test_bad_inputs():
    with pytest.raises(ValueError, match="too few"):
        pd.epsilon_prime(np.log(5), 1e-6, 10, 20)
    with pytest.raises(ValueError, match="epsilon_prime"):
        pd.delta_min(1.0, 0.5, 100, 3)
    with pytest.raises(ValueError, match="epsilon"):
        pd.sensitivity_bound(5.0, [0.5, 0.5], 0.1)
    with pytest.raises(ValueError, match="epsilon"):
        pd.sensitivity_bound(-1.0, [0.5, 0.5], 0.1)
    with pytest.raises(ValueError, match="prior"):
        pd.sensitivity_bound(0.1, [1.0, 0.0], 0.1)
