"""Tests of pml_design.leakage (core paper §II-A)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pml_design as pd
from tests.conftest import EXAMPLE1, EXAMPLE1_PRIOR, random_mechanism


def test_example1_every_outcome_leaks_log_9_8():
    ell = pd.leakage(EXAMPLE1, EXAMPLE1_PRIOR)
    np.testing.assert_allclose(ell, np.log(9 / 8), rtol=0, atol=1e-14)
    assert pd.epsilon_min(EXAMPLE1, EXAMPLE1_PRIOR) == pytest.approx(np.log(9 / 8), abs=1e-14)
    assert pd.privacy_region(EXAMPLE1_PRIOR, np.log(9 / 8)) == 1


def test_leakage_matches_posterior_ratio_definition(rng):
    # Theorem 1: D_inf(P_{X|Y=y} || P_X) computed from the joint distribution (different code path)
    for _ in range(20):
        n, m = rng.integers(2, 7, size=2)
        W = random_mechanism(rng, n, m, zero_frac=0.3)
        p = rng.dirichlet(np.ones(n))
        joint = p[:, None] * W
        py = joint.sum(axis=0)
        occurs = py > 0
        post = joint[:, occurs] / py[occurs]
        expected = np.zeros(m)
        expected[occurs] = np.log((post / p[:, None]).max(axis=0))
        np.testing.assert_allclose(pd.leakage(W, p), expected, atol=1e-12)


def test_private_at_eps_not_just_below():
    eps = np.log(9 / 8)
    assert pd.leakage_tail(EXAMPLE1, EXAMPLE1_PRIOR, eps) == 0.0
    assert pd.leakage_tail(EXAMPLE1, EXAMPLE1_PRIOR, eps - 1e-6) == pytest.approx(1.0)


def test_leakage_tail_counts_output_probability():
    W = np.array([[1.0, 0.0], [0.5, 0.5]])
    p = np.array([0.5, 0.5])
    ell = pd.leakage(W, p)  # y0: P_Y=0.75, max=1 -> log(4/3); y1: P_Y=0.25, max .5 -> log 2
    np.testing.assert_allclose(ell, [np.log(4 / 3), np.log(2)])
    assert pd.leakage_tail(W, p, 0.5) == pytest.approx(0.25)
    assert pd.leakage_tail(W, p, 0.1) == pytest.approx(1.0)
    assert pd.leakage_tail(W, p, np.log(2)) == 0.0


def test_unused_output_and_prior_zero():
    W = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]])
    ell = pd.leakage(W, [0.5, 0.5])
    assert ell[2] == 0.0 and np.all(np.isfinite(ell))
    # prior zero: the row of the impossible input is ignored
    W2 = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    np.testing.assert_allclose(pd.leakage(W2, [0.5, 0.5, 0.0]), [np.log(2), np.log(2)])


def test_epsilon_max_bounds_every_mechanism(rng):
    for _ in range(20):
        n = int(rng.integers(2, 8))
        p = rng.dirichlet(np.ones(n))
        W = random_mechanism(rng, n, n, zero_frac=0.5)
        assert pd.epsilon_min(W, p) <= pd.epsilon_max(p) + 1e-12
    # identity attains it
    p = np.array([0.7, 0.2, 0.1])
    assert pd.epsilon_min(np.eye(3), p) == pytest.approx(pd.epsilon_max(p))


def test_privacy_regions_thresholds():
    p = np.array([0.1, 0.4, 0.3, 0.2])
    reg = pd.privacy_regions(p)
    # sorted desc: .4 .3 .2 .1 ; eps_k = -log sum of first N-k
    np.testing.assert_allclose(reg.thresholds, [0, -np.log(0.9), -np.log(0.7), -np.log(0.4)])
    assert reg.region(0.0) == 1
    assert reg.region(-np.log(0.9) - 1e-9) == 1
    assert reg.region(reg.thresholds[1]) == 2
    assert reg.region(10.0) == 4
    assert reg.interval(2) == pytest.approx((-np.log(0.9), -np.log(0.7)))
    assert reg.epsilon_max == pytest.approx(-np.log(0.1))


@given(st.integers(2, 6), st.integers(0, 10_000), st.floats(0.0, 3.0))
def test_zero_count_per_column_respects_region(n, seed, eps):
    # [15, Lemma 2]: an eps-PML mechanism in region k has at most k-1 zeros per column.
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n))
    W = random_mechanism(rng, n, n, zero_frac=0.4)
    e = pd.epsilon_min(W, p)
    k = pd.privacy_region(p, e + 1e-9)  # boundary ties: eps_min may equal a threshold up to rounding
    zeros = (W == 0).sum(axis=0)
    occurs = W.max(axis=0) > 0
    assert np.all(zeros[occurs] <= k - 1)


@pytest.mark.parametrize(
    "mech,prior,exc",
    [
        (np.array([[0.5, 0.6], [0.5, 0.5]]), [0.5, 0.5], ValueError),
        (np.array([[1.5, -0.5], [0.5, 0.5]]), [0.5, 0.5], ValueError),
        (np.eye(2), [0.5, 0.6], ValueError),
        (np.eye(2), [0.5, 0.25, 0.25], ValueError),
        (np.eye(2), [np.nan, 1.0], ValueError),
        (np.eye(2), [1.5, -0.5], ValueError),
        (np.ones(2), [0.5, 0.5], ValueError),
        ("abc", [0.5, 0.5], TypeError),
    ],
)
def test_bad_input_names_argument(mech, prior, exc):
    with pytest.raises(exc) as info:
        pd.leakage(mech, prior)
    assert "mechanism" in str(info.value) or "prior" in str(info.value)


def test_bad_epsilon():
    for bad in (-1.0, np.nan):
        with pytest.raises(ValueError, match="epsilon"):
            pd.leakage_tail(EXAMPLE1, EXAMPLE1_PRIOR, bad)
    with pytest.raises(TypeError, match="epsilon"):
        pd.leakage_tail(EXAMPLE1, EXAMPLE1_PRIOR, "1")
