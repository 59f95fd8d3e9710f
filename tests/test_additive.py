"""Tests of the samplers, the decision rule and the empirical mutual information (core paper, Section VI-C)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import entropy, kstest, laplace, norm

from pml_design.additive import (
    binary_decision,
    empirical_mutual_information,
    gaussian_mechanism,
    gaussian_noise,
    laplace_mechanism,
    laplace_noise,
)

N_KS = 200_000


@pytest.mark.parametrize("b", [0.5, 2.0])
def test_laplace_noise_distribution_and_power(b: float) -> None:
    z = laplace_noise(b, N_KS, rng=11)
    assert kstest(z, laplace(scale=b).cdf).pvalue > 1e-3
    # Power: the same test rejects a 5% wrong scale and a small shift.
    assert kstest(z, laplace(scale=1.05 * b).cdf).pvalue < 1e-4
    assert kstest(z, laplace(loc=0.03 * b, scale=b).cdf).pvalue < 1e-4


@pytest.mark.parametrize("s", [0.7, 1.5])
def test_gaussian_noise_distribution_and_power(s: float) -> None:
    z = gaussian_noise(s, N_KS, rng=12)
    assert kstest(z, norm(scale=s).cdf).pvalue > 1e-3
    assert kstest(z, norm(scale=1.05 * s).cdf).pvalue < 1e-4
    assert kstest(z, norm(loc=0.03 * s, scale=s).cdf).pvalue < 1e-4


def test_mechanisms_shift_by_x_and_broadcast_scales() -> None:
    x = np.tile(np.repeat([-1.0, 1.0], N_KS // 2), (2, 1))
    b = np.array([[0.5], [2.0]])
    y = laplace_mechanism(x, b, rng=5)
    assert y.shape == x.shape
    for row, bb in zip(range(2), b[:, 0]):
        noise = y[row] - x[row]
        assert kstest(noise, laplace(scale=bb).cdf).pvalue > 1e-3
    g = gaussian_mechanism(x[0], 1.5, rng=6) - x[0]
    assert kstest(g, norm(scale=1.5).cdf).pvalue > 1e-3
    assert kstest(g, norm(scale=1.55).cdf).pvalue < 1e-4


def test_reproducible_under_seed_and_generator() -> None:
    x = np.array([1, -1, 1, 1])
    np.testing.assert_array_equal(laplace_mechanism(x, 1.0, rng=3), laplace_mechanism(x, 1.0, rng=3))
    assert not np.array_equal(laplace_mechanism(x, 1.0, rng=3), laplace_mechanism(x, 1.0, rng=4))
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    np.testing.assert_array_equal(gaussian_noise(1.0, 5, rng=g1), gaussian_noise(1.0, 5, rng=g2))


def test_decision_rule() -> None:
    y = np.array([-3.0, -1e-300, 0.0, 1e-300, 2.0])
    np.testing.assert_array_equal(binary_decision(y), [-1, -1, 1, 1, 1])
    # Flip probability of X = 1 through Laplace noise is P(L < -1) = exp(-1/b)/2.
    b = 1.3
    d = binary_decision(laplace_mechanism(np.ones(200_000), b, rng=2))
    expected = math.exp(-1 / b) / 2
    assert abs(np.mean(d == -1) - expected) < 5 * math.sqrt(expected * (1 - expected) / d.size)


def _mi_from_entropies(x: np.ndarray, y: np.ndarray) -> float:
    joint = np.array([[np.sum((x == a) & (y == c)) for c in (-1, 1)] for a in (-1, 1)], dtype=float)
    return float(entropy(joint.sum(1)) + entropy(joint.sum(0)) - entropy(joint.ravel()))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60).flatmap(lambda m: st.tuples(st.lists(st.sampled_from([-1, 1]), min_size=m, max_size=m),
                                                      st.lists(st.sampled_from([-1, 1]), min_size=m, max_size=m))))
def test_mi_equals_entropy_identity(xy: tuple[list[int], list[int]]) -> None:
    x, y = np.array(xy[0]), np.array(xy[1])
    assert empirical_mutual_information(x, y) == pytest.approx(_mi_from_entropies(x, y), abs=1e-12)


def test_mi_vectorised_over_repetitions_and_bounds() -> None:
    rng = np.random.default_rng(0)
    x = np.where(rng.random((4, 3, 50)) < 0.3, -1, 1)
    y = np.where(rng.random((4, 3, 50)) < 0.2, -x, x)
    mi = empirical_mutual_information(x, y)
    assert mi.shape == (4, 3)
    for i in range(4):
        for j in range(3):
            assert mi[i, j] == pytest.approx(_mi_from_entropies(x[i, j], y[i, j]), abs=1e-12)
    assert empirical_mutual_information([1, -1, 1, -1], [1, -1, 1, -1]) == pytest.approx(math.log(2))
    assert empirical_mutual_information([1, 1, 1], [1, -1, 1]) == 0.0


def test_mi_erratum_printed_formula_has_m_not_N() -> None:
    """The printed estimator uses N (= 2) where m belongs; it then differs by log(N/m) and goes negative."""
    rng = np.random.default_rng(1)
    m, n_alphabet = 1000, 2
    x = np.where(rng.random(m) < 0.5, -1, 1)
    y = np.where(rng.random(m) < 0.5, -1, 1)  # independent of x
    counts = {(a, c): np.sum((x == a) & (y == c)) for a in (-1, 1) for c in (-1, 1)}
    fx = {a: np.sum(x == a) for a in (-1, 1)}
    fy = {c: np.sum(y == c) for c in (-1, 1)}
    printed = sum(n / m * math.log(n_alphabet * n / (fx[a] * fy[c])) for (a, c), n in counts.items() if n > 0)
    ours = empirical_mutual_information(x, y)
    assert printed == pytest.approx(ours + math.log(n_alphabet / m), abs=1e-12)
    assert printed < 0 <= ours  # a mutual information cannot be negative
    assert ours == pytest.approx(_mi_from_entropies(x, y), abs=1e-12)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="scale"):
        laplace_noise(0.0, 3, rng=0)
    with pytest.raises(ValueError, match="scale"):
        laplace_mechanism([1, -1], np.array([1.0, -1.0]), rng=0)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_noise(-1.0, 3, rng=0)
    with pytest.raises(ValueError, match="x"):
        laplace_mechanism([0, 1], 1.0, rng=0)
    with pytest.raises(ValueError, match="x"):
        gaussian_mechanism([], 1.0, rng=0)
    with pytest.raises(TypeError, match="rng"):
        laplace_noise(1.0, 3, rng="seed")
    with pytest.raises(ValueError, match="same shape"):
        empirical_mutual_information([1, -1], [1, -1, 1])
    with pytest.raises(ValueError, match="y"):
        empirical_mutual_information([1, -1], [1, 0])
    with pytest.raises(ValueError, match="y"):
        binary_decision([np.nan])
