"""Tests of pml_design.estimation (core paper §II-B, §III, eq. (7))."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pml_design as pd


def test_empirical_distribution_and_zero_counts():
    p = pd.empirical_distribution([0, 1, 1, 2, 2, 2], 3)
    np.testing.assert_allclose(p, [1 / 6, 2 / 6, 3 / 6])
    with pytest.raises(ValueError, match="never occur"):
        pd.empirical_distribution([0, 0, 1], 3)
    np.testing.assert_allclose(pd.empirical_distribution([0, 0, 1], 3, allow_zero=True), [2 / 3, 1 / 3, 0])
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        pd.empirical_distribution([0, 3], 3)
    with pytest.raises(TypeError, match="integers"):
        pd.empirical_distribution([0.5, 1], 3)
    with pytest.raises(ValueError, match="empty"):
        pd.empirical_distribution([], 3)
    with pytest.raises(ValueError, match="counts"):
        pd.counts_distribution([1, -1, 2])


def test_phi_values():
    assert pd.phi(0.5) == 2.0
    assert pd.phi(0.0) == math.inf
    for p in (0.01, 0.1, 0.3, 0.49, 0.4999999):
        expected = math.log((1 - p) / p) / (1 - 2 * p)
        assert pd.phi(p) == pytest.approx(expected, rel=1e-6)
    assert pd.phi(0.5 - 1e-12) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="p"):
        pd.phi(0.6)


def brute_kappa(p):
    best = 0.0
    for r in range(len(p) + 1):
        for A in itertools.combinations(range(len(p)), r):
            s = sum(p[i] for i in A)
            best = max(best, min(s, 1 - s))
    return best


@given(st.integers(2, 10), st.integers(0, 10**6))
def test_kappa_exact_vs_brute_force(n, seed):
    p = np.random.default_rng(seed).dirichlet(np.ones(n) * 0.7)
    assert pd.kappa(p) == pytest.approx(brute_kappa(p), abs=1e-12)


def test_kappa_large_alphabet_is_safe_upper_bound():
    p = np.full(60, 1 / 60)
    assert pd.kappa(p) == 0.5  # documented bound (exact here)
    q = np.concatenate([[0.7], np.full(50, 0.3 / 50)])
    assert pd.kappa(q) == pytest.approx(0.3)
    r = np.random.default_rng(1).dirichlet(np.ones(30))
    assert pd.kappa(r) <= 0.5


def test_eq7_matches_section3_and_binary_eq14():
    m, delta = 1000, 1e-6
    assert pd.l1_radius(m, 2, delta) == pytest.approx(math.sqrt(2 * (math.log(2) - math.log(delta)) / m))
    n = 20
    lhs = pd.l1_radius(m, n, delta)
    assert lhs == pytest.approx(math.sqrt(2 / m * (math.log(2**n - 2) - math.log(delta))))
    # distribution-dependent version with phi(kappa) = 2 (a subset with mass 1/2) is identical
    assert pd.l1_radius(m, 4, delta, prior=[0.25] * 4) == pytest.approx(pd.l1_radius(m, 4, delta))
    assert pd.l1_radius(m, 3, delta, prior=[0.9, 0.05, 0.05]) < pd.l1_radius(m, 3, delta)


def test_eq7_matches_corollary3_algebra():
    # Erratum check: with the corrected eq. (7), eq. (8) solved for delta gives Corollary 3 exactly.
    eps, m, n = math.log(5), 5000, 20
    for delta in (1e-3, 1e-6, 1e-9):
        epsp = pd.epsilon_prime(eps, delta, m, n)
        assert pd.delta_min(eps, epsp, m, n) == pytest.approx(delta, rel=1e-9)
    # the misprinted eq. (7) (sqrt over 2/m only) would not round-trip
    beta_printed = math.sqrt(2 / m) * (math.log(2**n - 2) - math.log(1e-6))
    assert abs(beta_printed - pd.l1_radius(m, n, 1e-6)) > 0.1


@given(st.integers(1, 10**6), st.integers(2, 60), st.floats(1e-12, 1.0, exclude_max=True))
def test_round_trip_radius_delta_radius(m, n, delta):
    beta = pd.l1_radius(m, n, delta)
    if beta < 2:
        assert pd.l1_deviation_delta(m, n, beta) == pytest.approx(delta, rel=1e-9)
        if pd.l1_deviation_delta(m, n, beta) < 1:  # delta = 1 is refused as vacuous (issue 23)
            assert pd.l1_radius(m, n, pd.l1_deviation_delta(m, n, beta)) == pytest.approx(beta, rel=1e-9)


@given(st.floats(0.01, 1.9), st.integers(2, 30), st.floats(1e-10, 0.5))
def test_samples_needed_is_minimal(radius, n, delta):
    m = pd.samples_needed(radius, n, delta)
    assert pd.l1_radius(m, n, delta) <= radius
    if m > 1:
        assert pd.l1_radius(m - 1, n, delta) > radius


@pytest.mark.parametrize("prior", [[0.5, 0.3, 0.2], [0.25] * 4, [0.7, 0.1, 0.1, 0.05, 0.05]])
def test_theorem2_monte_carlo_failure_frequency(prior):
    prior = np.array(prior)
    rng = np.random.default_rng(7)
    n, m, delta, reps = prior.shape[0], 400, 0.05, 20000
    counts = rng.multinomial(m, prior, size=reps)
    dev = np.abs(counts / m - prior).sum(axis=1)
    for dist_dep in (None, prior):
        beta = pd.l1_radius(m, n, delta, prior=dist_dep)
        freq = np.mean(dev >= beta)
        assert freq <= delta
    # power: a radius three times too small fails far more often than delta
    assert np.mean(dev >= pd.l1_radius(m, n, delta) / 3) > delta


def test_bad_inputs():
    with pytest.raises(ValueError, match="delta"):
        pd.l1_radius(100, 3, 0.0)
    with pytest.raises(ValueError, match="delta"):
        pd.l1_radius(100, 3, 1.5)
    with pytest.raises(ValueError, match="m"):
        pd.l1_radius(0, 3, 0.1)
    with pytest.raises(ValueError, match="support_size"):
        pd.l1_radius(10, 1, 0.1)
    with pytest.raises(TypeError, match="m"):
        pd.l1_radius(10.5, 3, 0.1)
    with pytest.raises(ValueError, match="radius"):
        pd.samples_needed(0.0, 3, 0.1)
