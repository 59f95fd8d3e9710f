"""Review of the histogram package: exact discrete noise, no protected value in messages, calibration at extreme
ε / α, type-aware labels, argument checks, and the ``calibrate histogram`` command line."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import chisquare

from pml_design.cli import main
from pml_design.histogram import (
    histogram_counts,
    histogram_dp_scale_for,
    histogram_guarantee_from_estimate,
    histogram_guarantee_from_samples,
    histogram_pml_epsilon,
    histogram_pml_epsilon_composition,
    histogram_scale_for,
    laplace_histogram,
    release_histogram,
    total_variation_distance,
)
from pml_design.histogram.exact import histogram_leakage_exact


# ------------------------------------------------------------------ 1. discrete Laplace noise, exact sampler
def _dlap_pmf(z: np.ndarray, b: float) -> np.ndarray:
    t = math.exp(-1.0 / b)
    return (1 - t) / (1 + t) * t ** np.abs(z)


def _chi2_pvalue(noise: np.ndarray, b: float, lo: int = -8, hi: int = 8) -> float:
    """Chi-square of the noise against the discrete Laplace pmf of scale b (tails pooled at lo and hi)."""
    t = math.exp(-1.0 / b)
    inner = np.arange(lo + 1, hi)
    tail = _dlap_pmf(np.array([hi]), b)[0] / (1 - t)  # P(Z >= hi) = P(Z <= lo) for lo = -hi
    exp = np.concatenate([[tail], _dlap_pmf(inner, b), [tail]]) * noise.size
    obs = np.array([np.sum(noise <= lo)] + [np.sum(noise == v) for v in inner] + [np.sum(noise >= hi)])
    return float(chisquare(obs, exp * noise.size / exp.sum()).pvalue)


@pytest.mark.parametrize("rng", [None, 5])
def test_noise_is_discrete_laplace_and_the_test_has_power(rng):
    """Exact sampler (rng=None: OpenDP) and the seeded one: the pmf is the discrete Laplace of scale b; a scale
    10 % off is rejected by the same test."""
    b, counts = 1.7, np.array([10, 0, 5, 3])
    y = laplace_histogram(counts, b, repetitions=6000, rng=rng)
    assert y.dtype == np.int64 and y.shape == (6000, 4)
    noise = (y - counts).ravel()
    assert _chi2_pvalue(noise, b) > 1e-4
    assert _chi2_pvalue(noise, 1.1 * b) < 1e-4
    assert _chi2_pvalue(noise, b / 1.1) < 1e-4


def test_seeded_runs_reproduce_and_zero_scale_is_exact():
    c = np.array([3, 0, 7])
    np.testing.assert_array_equal(laplace_histogram(c, 2.0, repetitions=50, rng=9),
                                  laplace_histogram(c, 2.0, repetitions=50, rng=np.random.default_rng(9)))
    y0 = laplace_histogram(c, 0.0, repetitions=3)
    assert y0.dtype == np.int64
    np.testing.assert_array_equal(y0, np.tile(c, (3, 1)))
    y = laplace_histogram(c, 3.0, repetitions=2000, clip=True, rng=1)
    assert y.min() >= 0
    np.testing.assert_array_equal(y, np.maximum(laplace_histogram(c, 3.0, repetitions=2000, rng=1), 0))


def test_counts_stay_integers_beyond_float_precision():
    big = np.array([2**53 + 1, 0], dtype=np.int64)  # not representable in float64
    assert laplace_histogram(big, 0.0)[0] == 2**53 + 1
    noisy = laplace_histogram(big, 1.0, repetitions=200, rng=3)
    assert noisy.dtype == np.int64 and abs(int(np.median(noisy[:, 0])) - (2**53 + 1)) <= 2


@pytest.mark.parametrize(("counts", "exc", "match"), [
    ([1, 2.5], ValueError, "fractional"),
    ([True, 2], TypeError, "booleans"),
    (np.array([True, False]), TypeError, "booleans"),
    ([1, -2], ValueError, "non-negative"),
    ([1.0, float(2**53) * 2], ValueError, "2\\*\\*53"),
    ([1, 2**70], ValueError, "2\\*\\*62"),
    ([1, "3"], TypeError, "got text"),  # (was "not numbers": the shared check names the text)
    ([1, float("nan")], ValueError, "finite"),
])
def test_bad_counts_are_refused_without_quoting_them(counts, exc, match):
    with pytest.raises(exc, match=match) as info:
        laplace_histogram(counts, 1.0, rng=0)
    assert "not shown" in str(info.value) or exc is TypeError


def test_discrete_leakage_equals_continuous_at_integers_and_obeys_eq1():
    """Independent brute force of the discrete pmf: the leakage at integer outputs equals exact.py's (continuous)
    leakage there, never exceeds eq. (1), and reaches eq. (1) on the region y_c >= n, y_j <= 0."""
    rng = np.random.default_rng(0)
    for _ in range(12):
        n, k = int(rng.integers(1, 4)), int(rng.integers(2, 4))
        b = float(rng.choice([0.3, 1.0, 2.5, 6.0]))
        P = rng.dirichlet(np.ones(k), size=n)
        grid = np.arange(-3, n + 4)
        Y = np.array(list(itertools.product(grid, repeat=k)))
        cond = np.zeros((Y.shape[0], k))
        for assign in itertools.product(range(k), repeat=n - 1):
            w = float(np.prod([P[1 + r, a] for r, a in enumerate(assign)]))
            base = np.bincount(np.array(assign, dtype=int), minlength=k)
            for c in range(k):
                cond[:, c] += w * np.prod(_dlap_pmf(Y - base - np.eye(k, dtype=int)[c], b), axis=1)
        leak = np.log(cond.max(axis=1) / (cond @ P[0]))
        np.testing.assert_allclose(leak, histogram_leakage_exact(Y.astype(float), P, b), atol=1e-12)
        bound = histogram_pml_epsilon(b, P[0].min())
        assert leak.max() <= bound + 1e-12
        y = np.full(k, -3)
        y[int(np.argmin(P[0]))] = n + 3
        assert leak[np.flatnonzero((Y == y).all(axis=1))[0]] == pytest.approx(bound, abs=1e-10)


def test_discrete_dp_ratio_is_two_over_b():
    b = 1.3
    y1, y2 = np.meshgrid(np.arange(-20, 21), np.arange(-20, 21))
    # neighbours under substitution: counts (5, 3) vs (4, 4) (ℓ1 distance 2)
    ratio = (_dlap_pmf(y1 - 5, b) * _dlap_pmf(y2 - 3, b)) / (_dlap_pmf(y1 - 4, b) * _dlap_pmf(y2 - 4, b))
    assert np.log(ratio).max() == pytest.approx(2 / b)


# ------------------------------------------------------------------ 2. no protected value in a message
@pytest.mark.parametrize(("call", "secret"), [
    (lambda: histogram_counts([0, 1, 57], 3), "57"),
    (lambda: histogram_counts(["a", "b", "alice_secret"], ["a", "b"]), "alice_secret"),
    (lambda: histogram_counts([0.5, 1.5, 123.456], edges=[0, 1, 2]), "123.456"),
    (lambda: histogram_counts([0.5, float("nan")], edges=[0, 1, 2]), "nan"),
    (lambda: histogram_guarantee_from_samples([0, 1, 7], 2, 0.1, scale=1.0), "7"),
    (lambda: laplace_histogram([1, -2], 1.0), "-2"),
    (lambda: laplace_histogram([1, 2.5], 1.0), "2.5"),
    (lambda: histogram_counts([0, 1, 1e300], 3), "9223372036854775808"),
    (lambda: histogram_counts([0, 1, 1e300], 3), "1e+300"),
    (lambda: histogram_counts([0, 1, 2.5], 3), "2.5"),
    (lambda: total_variation_distance([1, 2], [-41, 2]), "41"),
])
def test_messages_do_not_quote_protected_values(call, secret):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    text = str(info.value)
    assert secret not in text
    assert "not shown" in text
    assert "value(s)" not in text and "first" not in text  # neither counts nor positions of bad entries


# ------------------------------------------------------------------ 3. calibration at extreme ε and α
def _mp_scale(eps: float, alpha: float) -> float:
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(80):
        e, a = mpmath.mpf(eps), mpmath.mpf(alpha)
        if a * mpmath.exp(e) >= 1:
            return 0.0
        # eq. (1) solved in 80 digits; expm1/log1p keep the ε → 0 end exact (log(1 − α) − log(1 − αe^ε) ≈ αε)
        return float(2 / (e - mpmath.log1p(-a * mpmath.expm1(e) / (1 - a))))


@pytest.mark.parametrize(("eps", "alpha"), [
    (31.91382939, 1e-14), (32.23296768, 1e-14), (32.2361913, 1e-14), (1e-300, 0.1), (1e-12, 0.5),
    (0.6931471805599, 0.5), (690.0, 1e-300), (1.0, 1e-300), (5.0, 1e-3), (40.0, 1e-17),
    (math.log(1e14) * (1 - 1e-12), 1e-14),
])
def test_scale_for_meets_target_at_extreme_epsilon_and_alpha(eps, alpha):
    b = histogram_scale_for(eps, alpha)
    ref = _mp_scale(eps, alpha)
    if ref == 0.0:
        assert b == 0.0
        return
    assert b > 0 and b == pytest.approx(ref, rel=1e-12)
    assert histogram_pml_epsilon(b, alpha) == pytest.approx(eps, rel=1e-12)


def test_scale_for_no_noise_decided_exactly():
    a = 1e-14
    thr = -math.log(a)
    assert histogram_scale_for(math.nextafter(thr, 0) * (1 - 1e-12), a) > 0
    assert histogram_scale_for(thr + 1e-9, a) == 0.0
    assert histogram_scale_for(32.23296768, a) > 0  # review: returned 0.0 although log(1/α) = 32.2362 > ε


def test_tiny_epsilon_is_refused_not_inf():
    with pytest.raises(ValueError, match="too small"):
        histogram_scale_for(1e-320, 0.1)
    with pytest.raises(ValueError, match="too small"):
        histogram_dp_scale_for(1e-320)


# ------------------------------------------------------------------ 4. type-aware labels
def test_labels_match_by_type_and_value():
    np.testing.assert_array_equal(histogram_counts(["a", 1, "b"], ["a", "b", 1]), [1, 1, 1])
    np.testing.assert_array_equal(histogram_counts([None, "a"], ["a", None]), [1, 1])
    np.testing.assert_array_equal(histogram_counts([1, 1.0, 2], [1, 2]), [2, 1])  # 1 and 1.0: same label
    np.testing.assert_array_equal(histogram_counts([True, False, True], [True, False]), [2, 1])
    np.testing.assert_array_equal(histogram_counts(np.array(["b", "a", "b"]), np.array(["a", "b"])), [1, 2])
    np.testing.assert_array_equal(histogram_counts([float("nan"), 0.5], [0.5, float("nan")]), [1, 1])
    with pytest.raises(ValueError, match="outside the declared bins"):
        histogram_counts([True, False, 1], [True, False])  # 1 is not True
    with pytest.raises(ValueError, match="outside the declared bins"):
        histogram_counts(["1", 1], [1])  # '1' is not 1
    with pytest.raises(ValueError, match="distinct"):
        histogram_counts([1], [1, 1.0])
    with pytest.raises(TypeError, match=r"bins\[1\]"):
        histogram_counts([1], [1, [2]])


def test_bool_codes_are_refused():
    with pytest.raises(TypeError, match="booleans"):
        histogram_counts([0, 1, True], 2)
    with pytest.raises(TypeError, match="booleans"):
        release_histogram([0, True], 2, 1.0, rng=0)


def test_labels_path_is_vectorised_on_a_large_mixed_input():
    data = ["a"] * 200_000 + [1] * 100_000 + [None] * 50_000
    np.testing.assert_array_equal(histogram_counts(data, [None, 1, "a"]), [50_000, 100_000, 200_000])


# ------------------------------------------------------------------ 5./6. argument checks and docs
def test_estimate_of_one_bin_is_refused_naming_estimate():
    with pytest.raises(ValueError, match="estimate"):
        histogram_guarantee_from_estimate([1.0], 0.01, 0.1, epsilon=1.0)
    with pytest.raises(ValueError, match="estimate"):
        histogram_guarantee_from_estimate([1.0], 0.01, 0.1, scale=1.0)


def test_composition_needs_two_bins_with_one_message():
    for k in (0, 1):
        with pytest.raises(ValueError, match="n_bins must be >= 2"):
            histogram_pml_epsilon_composition(1.0, 0.1, k)


def test_alpha_message_explains_one_over_k():
    with pytest.raises(ValueError, match="n_bins"):
        histogram_scale_for(1.0, 0.7)
    with pytest.raises(ValueError, match="1/k"):
        histogram_scale_for(1.0, 0.4, n_bins=10)


def test_docstrings_state_the_fixed_contracts():
    assert "(0, 1)" in histogram_guarantee_from_estimate.__doc__
    assert "k ≥ 2" in histogram_pml_epsilon_composition.__doc__
    assert "α ≤ 1/2" in histogram_pml_epsilon.__doc__ and "otherwise α ≤ 1)" not in histogram_pml_epsilon.__doc__
    doc = " ".join(laplace_histogram.__doc__.split())
    assert "simulations only" in doc and "composes their privacy cost" in doc


def _cli(capsys, *argv):
    try:
        code = main(["calibrate", "histogram", *argv])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_tiny_epsilon_refused_clearly(capsys):
    code, out, err = _cli(capsys, "--epsilon", "1e-320", "--alpha", "0.1")
    assert code == 2 and "too small" in err and "nan" not in out + err and "inf" not in out


def test_cli_bins_checks_alpha(capsys):
    code, _, err = _cli(capsys, "--epsilon", "1", "--alpha", "0.4", "--bins", "10")
    assert code == 2 and "1/k" in err and "--alpha" in err
    code, out, _ = _cli(capsys, "--epsilon", "1", "--alpha", "0.05", "--bins", "10")
    assert code == 0 and "note" not in out
    code, out, _ = _cli(capsys, "--epsilon", "1", "--alpha", "0.05")
    assert code == 0 and "--bins" in out
    code, _, err = _cli(capsys, "--epsilon", "1", "--alpha", "0.05", "--bins", "1")
    assert code == 2 and "--bins" in err


def test_cli_delta_zero_message_is_accurate(capsys):
    code, _, err = _cli(capsys, "--epsilon", "1", "--counts", "x.txt", "--delta", "0")
    assert code == 2 and "argument --delta" in err and "0 cannot be promised" in err
