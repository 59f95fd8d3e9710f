"""Review findings on ``pml_design.flexible`` (release objects, baseline noise, messages, exactness, limits).

1. Release objects print and publish only the DP output and data-independent parameters.
2. The stability baseline samples discrete Laplace with the project's exact sampler and is exactly (ε, δ)-DP.
3. Error messages never quote protected values (nor chain numpy's message, which may).
4. ``lossy_winf`` is exact on integer masses at any magnitude (checked against an exact max-flow in fractions).
5. Huge bucketings and bad sampler arguments are refused up front with a named argument.
6. Counts stay integer end to end; ``stlap_q`` validates |x|; booleans are not counts.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections import deque
from fractions import Fraction

import numpy as np
import pytest

import pml_design.priors
from pml_design.flexible import (
    PrivacyGuarantee,
    bucket_hist,
    bucket_hist_points,
    bucketing,
    bucketing_points,
    check_accuracy,
    choosing_histogram,
    d_hist,
    f_max,
    guarantee_fixed_q,
    guarantee_relative_q,
    histogram_statistic,
    lossy_winf,
    lossy_winf_1d,
    q_for_delta,
    sample_stlap_noise,
    stability_histogram,
    stability_threshold,
    stlap,
    stlap_q,
    stlap_release,
    stlap_with_q,
)
from pml_design.flexible import baselines

X = [5, 0, 12, 3, 0, 40]  # |x| = 60
DUMMY = PrivacyGuarantee(epsilon=123.0, delta=0.456, statement="dummy 777", source="dummy")


# ------------------------------------------------------------------ 1. what a release prints and publishes
def _scrub_stlap(r):
    return dataclasses.replace(r, q=987.0, accuracy_alpha=0.321, privacy=DUMMY, paper_delta=0.654, _n_items=None)


def test_stlap_release_prints_and_publishes_only_public_fields():
    r = stlap_release(X, 0.1, 1.0, rng=0)
    assert r.q == pytest.approx(6.0)  # private field still there for the data owner (q / tau = |x|)
    text = repr(r)
    assert repr(_scrub_stlap(r)) == text == str(r)  # the printed form does not depend on any private field
    for secret in ("q=", "6.0", "59", "60", r.privacy.statement, repr(r.privacy.epsilon), repr(r.accuracy_alpha)):
        assert secret not in text
    pub = r.publishable()
    assert set(pub) == {"y", "tau", "epsilon", "q_mode"}
    assert np.array_equal(pub["y"], r.y) and pub["y"] is not r.y
    assert repr(_scrub_stlap(r).publishable()) == repr(pub)


def test_relative_release_publishable_guarantee_at_a_public_size():
    r = stlap_release(X, 0.1, 1.0, rng=0)
    pub = r.publishable(n_min_public=40)
    assert pub["privacy"] == guarantee_relative_q(1.0, 0.1, 40, len(X))
    assert ">= 40 items" in pub["privacy"].statement
    # a public N below |x| - 1 gives a weaker (larger) guarantee than the private one, never a stronger one
    assert pub["privacy"].epsilon >= r.privacy.epsilon and pub["privacy"].delta >= r.privacy.delta
    assert r.publishable(n_min_public=59)["privacy"] == r.privacy
    with pytest.raises(ValueError, match="n_min_public") as exc:
        r.publishable(n_min_public=60)  # not covered: this input has 60 items
    assert "60" not in str(exc.value).replace("n_min_public", "")


def test_fixed_release_publishes_its_data_independent_guarantee():
    r = stlap_release(X, 0.01, 1.0, rng=0, q_mode="fixed", n_public=1000)
    pub = r.publishable()
    assert pub["q"] == pytest.approx(10.0) and pub["max_drop_per_bar"] == 10 and pub["n_public"] == 1000
    assert pub["privacy"] == guarantee_fixed_q(1.0, 10.0) == r.privacy
    assert "accuracy_alpha" not in pub and "accuracy_alpha" in repr(r) and repr(r.accuracy_alpha) not in repr(r)
    with pytest.raises(ValueError, match="n_min_public"):
        r.publishable(n_min_public=10)


def test_bucket_hist_release_hides_the_noise_free_counts():
    r = bucket_hist(X, 0.1, 1, 1.0, rng=0)
    assert list(r.bucketed) == [5, 15, 40]  # private, for the data owner's certificates
    scrubbed = dataclasses.replace(r, bucketed=np.array([1, 2, 3]), q=55.5, accuracy_alpha=0.77, privacy=DUMMY,
                                   _n_items=None)
    assert repr(scrubbed) == repr(r)
    assert "15, 40" not in repr(r) and "bucketed=" not in repr(r) and "q=" not in repr(r)
    assert set(r.publishable()) == {"y", "centres", "w", "tau", "n_buckets", "alpha", "beta", "epsilon", "q_mode"}
    rp = bucket_hist_points([0.5, 3.7, 9.25], 0.1, 1.0, 1.0, 10, rng=0)
    assert rp.y.shape == rp.bucketed.shape and "bucketed" not in str(rp.publishable())
    assert rp.publishable(n_min_public=2)["privacy"] == guarantee_relative_q(1.0, rp.tau, 2, rp.n_buckets)


def test_statistic_release_prints_only_public_fields():
    res = histogram_statistic(X, "max", 0.1, 1.0, 1.0, rng=2)
    text = repr(res)
    assert "bucketed=" not in text and "15, 40" not in text and "q=" not in text
    assert repr(dataclasses.replace(res, accuracy=(0.999, 1.0, 0.0))) == text
    pub = res.publishable()
    assert pub["nominal_accuracy"] == (0.1, 1.0, 0.0) and pub["value"] == res.value
    assert set(pub["release"]) == set(res.release.publishable())


# ------------------------------------------------------------------ 2. the stability baseline's noise
def _dlap_sf(m, eps):
    """Pr[Z >= m] of the discrete Laplace P(Z = z) ∝ e^{-ε|z|} (exact in fractions of exp; float here)."""
    r = math.exp(-eps)
    return r ** m / (1 + r) if m >= 0 else 1 - r ** (-m + 1) / (1 + r) + 0.0


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 3.7])
@pytest.mark.parametrize("delta", [1e-2, 1e-6, 2.0**-20, 0.3])
def test_stability_histogram_is_exactly_eps_delta_dp(eps, delta):
    k = stability_threshold(eps, delta)
    # new bar (x' = 0 -> x = 1): released with probability Pr[1 + Z >= k], the whole hockey-stick divergence
    assert _dlap_sf(k - 1, eps) <= delta * (1 + 1e-12)
    assert k == 1 or _dlap_sf(k - 2, eps) > delta  # k is the least such integer
    # a shared bar c -> c + 1: released law {0 w.p. Pr[c + Z < k]} ∪ {v >= k: pmf}; hockey stick at e^ε is 0
    r = math.exp(-eps)
    pmf = lambda z: (1 - r) / (1 + r) * r ** abs(z)  # noqa: E731
    for c in (1, 2, k - 1, k, k + 3):
        for a, b in ((c, c + 1), (c + 1, c)):
            zero_a, zero_b = 1 - _dlap_sf(k - a, eps), 1 - _dlap_sf(k - b, eps)
            hs = max(0.0, zero_a - math.exp(eps) * zero_b)
            hs += sum(max(0.0, pmf(v - a) - math.exp(eps) * pmf(v - b)) for v in range(k, k + 400))
            assert hs <= 1e-12


def test_continuous_threshold_on_integer_noise_would_exceed_delta():
    # power: the continuous threshold 1 + ln(1/(2δ))/ε with integer noise releases a new bar too often
    eps = 2.0
    delta = 0.5 * math.exp(-eps * (3 - 0.01))  # ln(1/(2δ))/ε = 2.99: just below an integer
    T = 1 + math.log(1 / (2 * delta)) / eps
    p_release = _dlap_sf(math.floor(T - 1) + 1, eps)  # Pr[1 + Z > T]
    assert p_release > 1.5 * delta
    assert _dlap_sf(stability_threshold(eps, delta) - 1, eps) <= delta


def test_stability_baselines_use_the_projects_exact_sampler():
    assert baselines.dp_release_counts is pml_design.priors.dp_release_counts  # imported, not copied
    y = stability_histogram([0, 3, 1000], 1.0, 1e-6)  # rng=None: OpenDP's exact integer sampler
    assert y.shape == (1, 3) and y.dtype == np.int64 and y[0, 0] == 0 and abs(int(y[0, 2]) - 1000) < 60
    ys = stability_histogram([0, 3, 1000], 1.0, 1e-6, n_runs=50, rng=1)
    assert ys.dtype == np.int64 and np.all(ys[:, 0] == 0) and np.all(ys[:, 1] == 0)
    assert np.array_equal(ys, stability_histogram([0, 3, 1000], 1.0, 1e-6, n_runs=50, rng=1))
    yc = choosing_histogram([0, 1000, 0, 5], 1.0, 1e-6, n_rounds=1, n_runs=20, rng=0)
    assert yc.dtype == np.int64 and np.all(yc >= 0) and np.all(yc[:, [0, 2]] == 0)
    assert choosing_histogram([0, 1000, 0, 5], 1.0, 1e-6, n_rounds=1).dtype == np.int64


# ------------------------------------------------------------------ 3. messages never quote protected data
def _message(call):
    with pytest.raises((ValueError, TypeError)) as exc:
        call()
    e = exc.value
    assert e.__cause__ is None and (e.__context__ is None or e.__suppress_context__), "numpy's message is chained"
    return str(e)


@pytest.mark.parametrize("call, secrets", [
    (lambda: bucket_hist_points([0.5, 3.7, 99.25], 0.1, 1.0, 1.0, 10), ["0.5", "3.7", "99.25", "99"]),
    (lambda: bucketing_points([[0.5, 1.5], [7.25, 11.125]], 1.0, 10), ["7.25", "11.125", "11"]),
    (lambda: stlap([3, -2, 7], 0.1, 1.0), ["-2", "2.0", "1 "]),
    (lambda: stlap([3, 2.5, 7], 0.1, 1.0), ["2.5"]),
    (lambda: stlap([3, np.nan, 7], 0.1, 1.0), ["nan", "3", "7"]),
    (lambda: stlap([3, "1234", 7], 0.1, 1.0), ["1234"]),
    (lambda: stlap([2**62 + 5, 3], 0.1, 1.0), [str(2**62 + 5), "4.6"]),
    (lambda: stlap(np.array([2.0**60, 3.0]), 0.1, 1.0), [str(2**60), "1.15"]),
    (lambda: stlap_q(-5, 0.1), ["-5"]),
    (lambda: lossy_winf([4, -3, 1], [1, 2, 3], 0.0), ["-3"]),
    (lambda: lossy_winf_1d([0, 1], [4.5, np.inf], [0], [1]), ["4.5", "inf"]),
    (lambda: d_hist([1, 2], [7, -9]), ["-9"]),
    (lambda: f_max(["777"]), ["777"]),
    (lambda: check_accuracy([1.5, np.nan], 1.0), ["1.5"]),
    (lambda: sample_stlap_noise(np.array([3.25, -1.5]), 1.0), ["3.25", "-1.5"]),
])
def test_messages_do_not_quote_protected_values(call, secrets):
    text = _message(call)
    for s in secrets:
        assert s not in text, (s, text)


# ------------------------------------------------------------------ 4. lossy_winf is exact on integers
def _max_flow_fraction(P, Q, r):
    """Exact max sub-coupling mass (Fractions) on the unit grid with |i - j| <= r (Edmonds-Karp)."""
    n, m = len(P), len(Q)
    N = n + m + 2
    s, t = n + m, n + m + 1
    cap = [[Fraction(0)] * N for _ in range(N)]
    for i in range(n):
        cap[s][i] = P[i]
        for j in range(m):
            if abs(i - j) <= r:
                cap[i][n + j] = Fraction(10**30)
    for j in range(m):
        cap[n + j][t] = Q[j]
    flow = Fraction(0)
    while True:
        parent = [-1] * N
        parent[s] = s
        dq = deque([s])
        while dq and parent[t] < 0:
            u = dq.popleft()
            for v in range(N):
                if parent[v] < 0 and cap[u][v] > 0:
                    parent[v] = u
                    dq.append(v)
        if parent[t] < 0:
            return flow
        aug, v = None, t
        while v != s:
            u = parent[v]
            aug = cap[u][v] if aug is None else min(aug, cap[u][v])
            v = u
        v = t
        while v != s:
            u = parent[v]
            cap[u][v] -= aug
            cap[v][u] += aug
            v = u
        flow += aug


def _brute_winf(p, q, gamma):
    P = [Fraction(v, sum(p)) for v in p]
    Q = [Fraction(v, sum(q)) for v in q]
    return next(float(r) for r in range(len(p)) if _max_flow_fraction(P, Q, r) >= 1 - Fraction(gamma))


def test_lossy_winf_reviewer_case_is_exact():
    p = [10**13] + [0] * 8 + [1]
    q = [10**13 + 1] + [0] * 9
    assert lossy_winf(p, q, 0.0) == 9.0 == _brute_winf(p, q, 0)
    assert lossy_winf(np.array(p, dtype=np.int64), np.array(q, dtype=float), 0.0) == 9.0
    assert lossy_winf(p, q, Fraction(1, 10**13 + 1)) == 0.0 == _brute_winf(p, q, Fraction(1, 10**13 + 1))
    assert lossy_winf(p, q, Fraction(1, 10**13 + 2)) == 9.0
    assert d_hist(p, q) == 9.0 and lossy_winf_1d(np.arange(10), p, np.arange(10), q, 0.0) == 9.0


@pytest.mark.parametrize("seed", range(12))
def test_lossy_winf_matches_exact_max_flow_at_large_magnitudes(seed):
    rng = np.random.default_rng(seed)
    B = int(rng.integers(3, 6))
    scale = [10**6, 10**13, 10**17, 2**61][seed % 4]
    p = [int(v) for v in rng.integers(0, 4, B)]
    p[int(rng.integers(B))] += 1
    q = list(p)
    p = [v * scale // 4 for v in p]
    q = [v * scale // 4 for v in q]
    # tiny perturbations: a handful of items moved far away, invisible to a relative tolerance
    i, j = int(rng.integers(B)), int(rng.integers(B))
    if q[i] > 0:
        q[i] -= 1
        q[j] += 1
    p[int(rng.integers(B))] += int(rng.integers(0, 3))
    if sum(p) == 0 or sum(q) == 0:
        return
    for gamma in (0, Fraction(1, sum(p) * sum(q)), Fraction(1, 3), Fraction(1, 2)):
        assert lossy_winf(p, q, gamma) == _brute_winf(p, q, gamma), (p, q, gamma)
    assert lossy_winf(p, q, 0.25) == _brute_winf(p, q, Fraction(1, 4))  # a float gamma read as its decimal


# ------------------------------------------------------------------ 5. refusals up front, with the argument named
def test_huge_bucketings_are_refused_before_allocation():
    with pytest.raises(ValueError, match=r"^w gives .* buckets"):
        bucketing(X, 1e-9)
    with pytest.raises(ValueError, match=r"^beta .* buckets"):
        bucket_hist(X, 0.1, 1e-9, 1.0)
    with pytest.raises(ValueError, match=r"^beta .* buckets"):
        bucket_hist_points(np.zeros((2, 10)), 0.1, 0.1, 1.0, 4)
    with pytest.raises(ValueError, match="buckets"):
        bucketing_points(np.zeros((2, 3)), 1e-300, 1e300)


def test_sampler_and_accounting_arguments_are_checked():
    with pytest.raises(TypeError, match="^q "):
        sample_stlap_noise("a", 1.0)
    with pytest.raises(ValueError, match="^size "):
        sample_stlap_noise(1.0, 1.0, size=-1)
    with pytest.raises(TypeError, match="^size "):
        sample_stlap_noise(1.0, 1.0, size=2.5)
    with pytest.raises(ValueError, match="q of shape .* size"):
        sample_stlap_noise(np.ones(3), 1.0, size=(2,))
    assert sample_stlap_noise(np.ones(3), 1.0, size=(4, 3), rng=0).shape == (4, 3)
    with pytest.raises(TypeError, match="^epsilon "):
        guarantee_fixed_q("a", 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q_tiny = q_for_delta(1.0, 1e-320)
    assert math.isfinite(q_tiny) and q_tiny > q_for_delta(1.0, 1e-300)
    naive = 2.0 * math.log1p(math.expm1(1.0) / 2e-300)
    assert q_for_delta(1.0, 1e-300) == pytest.approx(naive, rel=1e-14)
    assert q_for_delta(1.0, 2.0**-20) == pytest.approx(27.42, abs=0.005)


# ------------------------------------------------------------------ 6. counts stay integer, |x| is validated
@pytest.mark.parametrize("bad, exc", [(-5, ValueError), ("10", TypeError), (2.7, TypeError), (True, TypeError),
                                      (2**63, ValueError)])
def test_stlap_q_validates_n_items(bad, exc):
    with pytest.raises(exc, match="^n_items"):
        stlap_q(bad, 0.1)


def test_stlap_q_accepts_integers():
    assert stlap_q(10, 0.1) == pytest.approx(1.0) and stlap_q(np.int64(10), 0.1) == pytest.approx(1.0)
    assert stlap_q(10.0, 0.1) == pytest.approx(1.0)


def test_counts_beyond_float64_stay_exact():
    big = 2**62 - 1
    for seed in range(20):
        y = stlap_with_q([big], 0.4, 1.0, rng=seed)
        assert y.dtype == np.int64 and int(y[0]) <= big and big - int(y[0]) <= 0  # round(q) = 0
    x = np.array([2**53 + 1, 5, 2**60 + 3], dtype=np.int64)
    ys = stlap_with_q(x, 7.3, 0.5, rng=3, n_draws=200)
    assert np.all(ys <= x) and np.all(x - ys <= 7)
    counts, _ = bucketing([2**60 + 1, 2**60 + 3, 7], 2)
    assert [int(v) for v in counts] == [2**61 + 4, 7]  # no float64 weights
    r = stlap_release(x, 1e-9, 1.0, rng=0)
    assert np.all(r.y <= x) and r._n_items == int(x.sum())


@pytest.mark.parametrize("x", [[True, False, True], np.array([True, False]), [True, 2]])
def test_booleans_are_not_counts(x):
    with pytest.raises(TypeError, match="^x .*boolean"):
        stlap(x, 0.1, 1.0)


def test_too_large_counts_are_refused_clearly():
    with pytest.raises(ValueError, match="2\\*\\*62"):
        stlap([2**62 + 5, 3], 0.1, 1.0)
    with pytest.raises(ValueError, match="2\\*\\*62"):
        stlap([2**70, 3], 0.1, 1.0)
    with pytest.raises(ValueError, match="2\\*\\*53"):
        stlap(np.array([2.0**60, 3.0]), 0.1, 1.0)
    with pytest.raises(ValueError, match="in total"):  # each count below the limit, their sum above it
        stlap(np.array([2**62 - 1, 2**62 - 1], dtype=np.int64), 0.1, 1.0)
    with pytest.raises(ValueError, match="below 2\\*\\*62"):  # one limit for the package: a count of 2**62 is refused
        stlap(np.array([2**62, 0], dtype=np.int64), 0.1, 1.0)  # (it was accepted here and refused by the DP sampler)
    assert stlap(np.array([2.0**52, 3.0]), 0.1, 1.0, rng=0).dtype == np.int64
