"""Certify Theorem 4 (eq. (1)) against the exact leakage of the mechanism, computed by enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pml_design.histogram import (
    histogram_dp_epsilon,
    histogram_noiseless_epsilon,
    histogram_pml_epsilon,
    histogram_pml_epsilon_composition,
)
from pml_design.histogram.exact import histogram_leakage_exact, histogram_max_leakage_exact


def product_in_Q_alpha(rng: np.random.Generator, n: int, k: int, alpha: float) -> np.ndarray:
    """Random per-record bin distributions with every entry ≥ α (non-identical records)."""
    return alpha + (1.0 - k * alpha) * rng.dirichlet(np.ones(k), size=n)


# ---------------------------------------------------------------- the exact module itself
def test_exact_single_record_by_hand():
    """n = 1: f(y|c) ∝ exp(−Σ_j |y_j − [j=c]|/b); compare with a hand-written evaluation."""
    p = np.array([0.2, 0.3, 0.5])
    b = 0.7
    rng = np.random.default_rng(0)
    Y = rng.uniform(-2, 3, size=(50, 3))
    E = np.eye(3)
    f = np.exp(-np.abs(Y[:, None, :] - E[None, :, :]).sum(-1) / b)  # (m, c)
    expected = np.log(f.max(axis=1) / (f @ p))
    got = histogram_leakage_exact(Y, p[None, :], b)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_exact_two_records_two_bins_by_hand():
    """n = 2, k = 2, other record in bin 0 w.p. q: mixture of two shifted Laplace products."""
    p1, q, b = 0.3, 0.6, 1.3
    P = np.array([[p1, 1 - p1], [q, 1 - q]])
    y = np.array([[0.4, 1.7], [2.5, -0.5], [-1.0, 3.0]])

    def lap(v, m):
        return np.exp(-np.abs(v - m) / b) / (2 * b)

    def cond(yy, c):  # density of y given record 0 in bin c
        tot = 0.0
        for other, w in ((0, q), (1, 1 - q)):
            counts = np.zeros(2)
            counts[c] += 1
            counts[other] += 1
            tot += w * lap(yy[0], counts[0]) * lap(yy[1], counts[1])
        return tot

    for yy, got in zip(y, histogram_leakage_exact(y, P, b)):
        c0, c1 = cond(yy, 0), cond(yy, 1)
        assert got == pytest.approx(math.log(max(c0, c1) / (p1 * c0 + (1 - p1) * c1)), rel=1e-12)


def test_exact_other_records_do_not_matter_for_the_corner_value():
    rng = np.random.default_rng(1)
    a = 0.12
    vals = []
    for _ in range(3):
        P = product_in_Q_alpha(rng, 4, 3, a)
        P[0] = [a, 0.5, 0.5 - a]
        vals.append(histogram_leakage_exact([[4.0, -1.0, -1.0]], P, 0.9)[0])
    np.testing.assert_allclose(vals, histogram_pml_epsilon(0.9, a), rtol=1e-10)


# ---------------------------------------------------------------- Theorem 4: never exceeded, attained
@pytest.mark.parametrize(("n", "k"), [(3, 2), (4, 3), (3, 4), (5, 2)])
@pytest.mark.parametrize("b", [0.3, 1.0, 4.0])
def test_bound_attained_when_a_bin_has_probability_alpha(n, k, b):
    rng = np.random.default_rng(n * 10 + k)
    a = 0.5 / k
    P = product_in_Q_alpha(rng, n, k, a)
    P[0] = a + (1 - k * a) * np.eye(k)[-1]  # record 0: bin 0 has probability exactly α
    res = histogram_max_leakage_exact(P, b)
    bound = histogram_pml_epsilon(b, a, n_bins=k)
    assert res.max_leakage <= bound + 1e-9
    assert res.max_leakage == pytest.approx(bound, rel=1e-9)
    # attained where the proof says: y_c >= n for the α-bin, y_j <= 0 elsewhere
    c = int(np.argmax(res.argmax))
    assert P[0, c] == pytest.approx(a)
    assert res.argmax[c] >= n and np.all(np.delete(res.argmax, c) <= 0)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 4),
    k=st.integers(2, 3),
    b=st.floats(0.1, 10.0),
    frac=st.floats(0.05, 1.0),
)
def test_bound_never_exceeded_on_random_product_distributions(seed, n, k, b, frac):
    rng = np.random.default_rng(seed)
    a = frac / k
    P = product_in_Q_alpha(rng, n, k, a)
    record = int(rng.integers(n))
    bound = histogram_pml_epsilon(b, a, n_bins=k)
    res = histogram_max_leakage_exact(P, b, record=record)
    assert res.max_leakage <= bound + 1e-9
    # sharper statement: the exact sup is eq. (1) at the record's own smallest bin probability
    assert res.max_leakage == pytest.approx(histogram_pml_epsilon(b, P[record].min()), rel=1e-9)
    # random outputs drawn from the mechanism itself (not only the grid)
    classes = np.array([rng.choice(k, p=row) for row in P])
    y = np.bincount(classes, minlength=k) + rng.laplace(0, b, size=(200, k))
    assert np.all(histogram_leakage_exact(y, P, b, record=record) <= bound + 1e-9)


def test_bound_fails_below_alpha_power():
    """A record whose smallest bin probability is below α leaks more than eq. (1) at α."""
    a, b = 0.2, 1.0
    P = np.full((3, 3), 1 / 3)
    P[0] = [0.15, 0.425, 0.425]
    assert histogram_max_leakage_exact(P, b).max_leakage > histogram_pml_epsilon(b, a) + 1e-3


def test_dp_value_is_the_alpha_to_zero_limit_of_the_exact_leakage():
    b = 1.5
    P = np.array([[1e-9, 0.5, 0.5 - 1e-9], [0.3, 0.3, 0.4], [0.2, 0.4, 0.4]])
    res = histogram_max_leakage_exact(P, b)
    assert res.max_leakage <= histogram_dp_epsilon(b) + 1e-12
    assert res.max_leakage == pytest.approx(histogram_dp_epsilon(b), rel=1e-6)


def test_noiseless_histogram_leaks_log_one_over_alpha():
    """Validity of the 'no noise needed' branch of histogram_scale_for: exact release leaks ≤ log(1/α)."""
    rng = np.random.default_rng(5)
    a = 0.1
    for n, k in [(1, 2), (3, 3), (4, 4)]:
        P = product_in_Q_alpha(rng, n, k, a)
        res = histogram_max_leakage_exact(P, 0.0)
        assert res.max_leakage <= histogram_noiseless_epsilon(a) + 1e-12
        assert res.max_leakage == pytest.approx(-math.log(P[0].min()), rel=1e-12)


def test_composition_bound_holds_for_k_minus_one_counts():
    """Section IV's composition bound vs the exact leakage of releasing k − 1 noisy counts."""
    rng = np.random.default_rng(11)
    for n, k, a in [(3, 3, 0.15), (4, 3, 0.2), (3, 4, 0.1)]:
        P = product_in_Q_alpha(rng, n, k, a)
        P[0] = a + (1 - k * a) * np.eye(k)[-1]
        for b in (0.5, 1.0, 3.0):
            exact = histogram_max_leakage_exact(P, b, released_bins=range(k - 1)).max_leakage
            assert exact <= histogram_pml_epsilon_composition(b, a, k) + 1e-12
            if k >= 4:  # the direct analysis of the full release beats composition from k = 4 on
                assert histogram_pml_epsilon(b, a) < histogram_pml_epsilon_composition(b, a, k)


def test_exact_bad_input():
    P = np.full((2, 2), 0.5)
    with pytest.raises(ValueError, match="class_probs"):
        histogram_leakage_exact([[0.0, 0.0]], [[0.5, 0.6], [0.5, 0.5]], 1.0)
    with pytest.raises(ValueError, match="outputs"):
        histogram_leakage_exact([[0.0, 0.0, 0.0]], P, 1.0)
    with pytest.raises(ValueError, match="scale"):
        histogram_leakage_exact([[0.0, 0.0]], P, -1.0)
    with pytest.raises(ValueError, match="record"):
        histogram_leakage_exact([[0.0, 0.0]], P, 1.0, record=2)
    with pytest.raises(ValueError, match="released_bins"):
        histogram_leakage_exact([[0.0]], P, 1.0, released_bins=[3])
    with pytest.raises(ValueError, match="brute-force limit"):
        histogram_leakage_exact([[0.0] * 5], np.full((12, 5), 0.2), 1.0)
    with pytest.raises(ValueError, match="probability 0"):
        histogram_leakage_exact([[2.0, 1.0]], P, 0.0)


# ---------------------------------------------------------------- a second, independent method
def others_counts_by_recursion(P: np.ndarray, record: int) -> dict[tuple[int, ...], float]:
    """Distribution of the other records' count vector by sequential convolution (not enumeration)."""
    k = P.shape[1]
    dist = {(0,) * k: 1.0}
    for i in range(P.shape[0]):
        if i == record:
            continue
        new: dict[tuple[int, ...], float] = {}
        for counts, w in dist.items():
            for j in range(k):
                c = list(counts)
                c[j] += 1
                new[tuple(c)] = new.get(tuple(c), 0.0) + w * P[i, j]
        dist = new
    return dist


def test_noiseless_exact_matches_foundation_leakage_of_the_channel_matrix():
    """Exact histogram as a finite channel (rows = record's bin, columns = count vectors) -> pml_design.leakage."""
    from pml_design.leakage import leakage

    rng = np.random.default_rng(21)
    P = product_in_Q_alpha(rng, 4, 3, 0.1)
    dist = others_counts_by_recursion(P, 1)
    outputs = sorted({tuple(np.add(c, np.eye(3, dtype=int)[j])) for c in dist for j in range(3)})
    W = np.array([[dist.get(tuple(np.subtract(y, np.eye(3, dtype=int)[j])), 0.0) for y in outputs]
                  for j in range(3)])
    expected = leakage(W, P[1])
    got = histogram_leakage_exact(np.array(outputs, dtype=float), P, 0.0, record=1)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_laplace_exact_matches_recursion_method():
    rng = np.random.default_rng(22)
    P = product_in_Q_alpha(rng, 4, 3, 0.08)
    b = 0.8
    dist = others_counts_by_recursion(P, 2)
    M = np.array(list(dist.keys()), dtype=float)
    w = np.array(list(dist.values()))
    Y = rng.uniform(-1, 5, size=(100, 3))
    cond = np.stack([(w * np.exp(-np.abs(Y[:, None, :] - (M + np.eye(3)[c])[None]).sum(-1) / b)).sum(-1)
                     for c in range(3)], axis=1)
    expected = np.log(cond.max(axis=1) / (cond @ P[2]))
    np.testing.assert_allclose(histogram_leakage_exact(Y, P, b, record=2), expected, rtol=1e-10)
