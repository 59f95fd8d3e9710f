"""Tests of pml_design.histogram.release: counts, Laplace sampler, post-processing, TVD."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pml_design.histogram.release import (
    histogram_counts,
    laplace_histogram,
    normalize_histogram,
    release_histogram,
    total_variation_distance,
)


# ---------------------------------------------------------------- counts
def test_counts_codes_labels_edges():
    np.testing.assert_array_equal(histogram_counts([0, 2, 2, 1, 2], 4), [1, 1, 3, 0])
    np.testing.assert_array_equal(histogram_counts(["b", "a", "b"], ["a", "b", "c"]), [1, 2, 0])
    np.testing.assert_array_equal(histogram_counts(np.array(["b", "a", "b"]), ("c", "b", "a")), [0, 2, 1])
    np.testing.assert_array_equal(histogram_counts([0.0, 0.5, 1.0, 2.0], edges=[0, 1, 2]), [2, 2])
    np.testing.assert_array_equal(histogram_counts([0.0, 0.5, 1.0, 2.0], edges=[0, 1, 2]),
                                  np.histogram([0.0, 0.5, 1.0, 2.0], bins=[0, 1, 2])[0])


@settings(max_examples=30, deadline=None)
@given(data=st.lists(st.integers(0, 6), min_size=1, max_size=200))
def test_counts_sum_to_n_and_match_numpy(data):
    c = histogram_counts(data, 7)
    assert c.sum() == len(data)
    np.testing.assert_array_equal(c, np.histogram(data, bins=np.arange(8))[0])


@pytest.mark.parametrize(
    ("data", "bins", "edges", "match", "exc"),
    [
        ([], 3, None, "empty", ValueError),
        ([0, 3], 3, None, "outside the declared bins", ValueError),
        ([0, -1], 3, None, "outside the declared bins", ValueError),
        ([0.5], 3, None, "integer bin codes", ValueError),
        (["x"], ["a", "b"], None, "outside the declared bins", ValueError),
        (["a"], ["a", "a"], None, "distinct", ValueError),
        ([], ["a"], None, "empty", ValueError),
        ([3.0], None, [0, 1, 2], "outside the declared bins", ValueError),
        ([0.5], None, [0, 0, 2], "strictly increasing", ValueError),
        ([0], None, None, "exactly one", ValueError),
        ([0], 2, [0, 1], "exactly one", ValueError),
        ([0], "ab", None, "sequence of category labels", TypeError),
        ([[0, 1]], 2, None, "1-dimensional", ValueError),
    ],
)
def test_counts_bad_input(data, bins, edges, match, exc):
    with pytest.raises(exc, match=match):
        histogram_counts(data, bins, edges=edges)


# ---------------------------------------------------------------- the Laplace sampler
def test_noise_bins_are_independent_and_integer():
    """The distribution itself (chi-square against the discrete Laplace pmf, with power) is tested in
    tests/test_histogram_review.py; here: integer output, independence across bins."""
    counts = np.array([10, 0, 5])
    y = laplace_histogram(counts, 1.7, repetitions=20000, rng=123)
    assert y.dtype == np.int64
    r = np.corrcoef((y - counts).T)
    assert np.all(np.abs(r[np.triu_indices(3, 1)]) < 0.03)


def test_shapes_reproducibility_and_leading_axes():
    c = np.array([3, 4])
    assert laplace_histogram(c, 1.0, rng=0).shape == (2,)
    assert laplace_histogram(c, 1.0, repetitions=5, rng=0).shape == (5, 2)
    per_rep = np.array([[3, 4], [5, 2], [1, 6]])
    assert laplace_histogram(per_rep, 1.0, rng=0).shape == (3, 2)
    assert laplace_histogram(per_rep, 1.0, repetitions=4, rng=0).shape == (4, 3, 2)
    np.testing.assert_array_equal(laplace_histogram(c, 1.0, repetitions=5, rng=7),
                                  laplace_histogram(c, 1.0, repetitions=5, rng=np.random.default_rng(7)))
    assert not np.array_equal(laplace_histogram(c, 1.0, repetitions=5, rng=7),
                              laplace_histogram(c, 1.0, repetitions=5, rng=8))


def test_clip_round_and_zero_scale():
    c = np.array([0, 1, 50])
    y = laplace_histogram(c, 3.0, repetitions=2000, clip=True, round=True, rng=1)
    assert y.min() >= 0 and np.all(y == np.rint(y))
    raw = laplace_histogram(c, 3.0, repetitions=2000, rng=1)
    np.testing.assert_array_equal(y, np.rint(np.maximum(raw, 0)))
    np.testing.assert_array_equal(laplace_histogram(c, 0.0, repetitions=3), np.tile(c, (3, 1)))


def test_release_histogram_end_to_end():
    data = ["a", "b", "a", "c", "a"]
    y = release_histogram(data, ["a", "b", "c"], 0.5, repetitions=40000, rng=2)
    np.testing.assert_allclose(y.mean(axis=0), [3, 1, 1], atol=0.03)
    t = np.exp(-1 / 0.5)
    np.testing.assert_allclose(y.var(axis=0), 2 * t / (1 - t) ** 2, rtol=0.05)  # discrete Laplace variance


@pytest.mark.parametrize("scale", [-1.0, np.nan, np.inf])
def test_release_bad_scale(scale):
    with pytest.raises(ValueError, match="scale"):
        laplace_histogram([1, 2], scale)


def test_release_bad_input():
    with pytest.raises(ValueError, match="counts"):
        laplace_histogram([], 1.0)
    with pytest.raises(ValueError, match="non-negative"):
        laplace_histogram([1, -2], 1.0)
    with pytest.raises(ValueError, match="repetitions"):
        laplace_histogram([1, 2], 1.0, repetitions=0)
    with pytest.raises(TypeError, match="rng"):
        laplace_histogram([1, 2], 1.0, rng="seed")


# ---------------------------------------------------------------- normalisation and TVD
def test_tvd_values():
    assert total_variation_distance([2, 2], [2, 2]) == 0.0
    assert total_variation_distance([4, 0], [2, 2]) == pytest.approx(0.5)
    assert total_variation_distance([-3, 1], [1, 1]) == pytest.approx(0.5)  # negatives clipped
    # all-zero release -> uniform
    assert total_variation_distance([-1, -1, 0], [3, 0, 0]) == pytest.approx(2 / 3)
    np.testing.assert_allclose(normalize_histogram([[-1.0, -2.0], [1.0, 3.0]]), [[0.5, 0.5], [0.25, 0.75]])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 8), b=st.floats(0.0, 50.0))
def test_tvd_in_unit_interval_vectorised(seed, k, b):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 20, size=k)
    counts[0] += 1
    y = laplace_histogram(counts, b, repetitions=50, clip=True, round=True, rng=rng)
    tvd = total_variation_distance(y, counts)
    assert tvd.shape == (50,) and np.all((tvd >= 0) & (tvd <= 1 + 1e-12))
    one = [total_variation_distance(y[i], counts) for i in range(3)]
    np.testing.assert_allclose(tvd[:3], one)


def test_tvd_bad_input():
    with pytest.raises(ValueError, match="bins"):
        total_variation_distance([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="all zero"):
        total_variation_distance([1, 2], [0, 0])
    with pytest.raises(ValueError, match="non-negative"):
        total_variation_distance([1, 2], [-1, 2])


def test_docstring_examples():
    import doctest

    import pml_design.histogram.bounds as h
    import pml_design.histogram.release as r

    for mod in (h, r):
        result = doctest.testmod(mod)
        assert result.failed == 0 and result.attempted > 0
