"""The maximum-likelihood estimate above Newton's size (pml_design/mechanisms/mle.py): SQUAREM-accelerated EM against
the barrier Newton method (a second derivation of the same maximiser), boundary zeros included, with a power check
(plain EM with as many map evaluations stops measurably short), and the dispatch in Mechanism.estimate."""

from __future__ import annotations

import numpy as np
import pytest

import pml_design as pml
from pml_design.mechanisms import mle


def _problem(seed: int, n: int, m: int, reports: int):
    """Observed outputs' columns of a random row-stochastic two-level channel and the frequencies of ``reports``
    reports from a Zipf prior (rare categories: the MLE has zeros)."""
    rng = np.random.default_rng(seed)
    W = np.where(rng.random((n, m)) < 0.3, np.e**2, 1.0)
    W /= W.sum(axis=1, keepdims=True)
    p = 1.0 / np.arange(1, n + 1) ** 1.3
    p /= p.sum()
    counts = rng.multinomial(reports, p @ W)
    used = counts > 0
    return W[:, used], counts[used] / counts.sum()


def _loglik(Wu, fu, pi):
    return float(fu @ np.log(pi @ Wu))


@pytest.mark.parametrize(("seed", "n", "m", "reports"), [(0, 30, 90, 2_000), (1, 60, 150, 5_000),
                                                         (2, 80, 400, 200_000), (3, 40, 60, 300)])
def test_squarem_reaches_newtons_maximum(seed, n, m, reports):
    Wu, fu = _problem(seed, n, m, reports)
    start = np.full(n, 1.0 / n)
    newton = mle._newton_mle(Wu, fu, start)
    fast = mle._squarem_mle(Wu, fu, start, 10_000, 1e-10)
    assert abs(fast.sum() - 1.0) < 1e-12 and fast.min() >= 0.0
    assert _loglik(Wu, fu, fast) == pytest.approx(_loglik(Wu, fu, newton), rel=1e-10, abs=0)
    assert np.abs(fast - newton).sum() < 1e-4
    # the same zeros where the MLE is on the boundary
    assert np.array_equal(fast == 0, newton == 0) or np.abs(fast - newton)[(fast == 0) != (newton == 0)].max() < 1e-6


def test_plain_em_with_as_many_map_evaluations_stops_short():
    # power: the comparison above fails for an estimator that is only close (unaccelerated EM, same work as SQUAREM)
    Wu, fu = _problem(1, 60, 150, 5_000)
    start = np.full(60, 1.0 / 60)
    newton = mle._newton_mle(Wu, fu, start)
    slow = mle._em_mle(Wu, fu, start, 60, 0.0)
    assert np.abs(slow - newton).sum() > 1e-4


def test_squarem_never_lowers_the_log_likelihood():
    # the same start, k steps for k = 1 … 25: each run is the previous one and one more step
    Wu, fu = _problem(4, 50, 120, 3_000)
    values = [_loglik(Wu, fu, mle._squarem_mle(Wu, fu, np.full(50, 1.0 / 50), k, 0.0, rtol=-1.0)) for k in range(1, 26)]
    assert all(b >= a - 1e-15 * abs(a) for a, b in zip(values, values[1:]))
    assert values[-1] > values[0]


def test_an_output_only_a_zeroed_category_reaches_joins_the_support(monkeypatch):
    """A review: SQUAREM's zeroing can drop the only category that reaches an observed output; Newton on that support
    then had q = 0 and crashed (NaN in a triangular solve). The category joins the support first."""
    Wu, fu = _problem(6, 80, 400, 3_000)
    newton = mle._newton_mle(Wu, fu, np.full(80, 1.0 / 80))
    lonely = np.zeros((80, 1))
    lonely[79, 0] = 1e-3  # an output only category 79 reaches, observed once in 10^6 reports
    W2 = np.column_stack([Wu, lonely])
    f2 = np.append(fu * (1 - 1e-6), 1e-6)
    start = newton.copy()
    start[79] = 0.0
    got = mle._polish_on_support(W2, f2 / f2.sum(), start / start.sum(), 10_000, 1e-10)
    assert np.all(np.isfinite(got)) and got[79] > 0 and np.all(got @ W2 > 0)
    assert mle._newton_mle(W2[:79], f2, np.full(79, 1.0 / 79)) is None  # no row reaches it: None, not a crash


def test_estimate_takes_squarem_above_newtons_size_and_agrees(monkeypatch):
    rng = np.random.default_rng(5)
    n = 40
    W = np.where(rng.random((n, 120)) < 0.3, np.e**2, 1.0)
    mech = pml.Mechanism(W / W.sum(axis=1, keepdims=True))
    p = 1.0 / np.arange(1, n + 1) ** 1.2
    reports = mech.privatize(rng.choice(n, size=20_000, p=p / p.sum()), rng=rng)
    exact = mech.estimate(reports, ci=0.95)
    calls = []
    monkeypatch.setattr(mle, "NEWTON_MAX_WORK", 0.0)  # (no Newton at all: SQUAREM to its strict tolerance)
    real = mle._squarem_mle
    monkeypatch.setattr(mle, "_squarem_mle", lambda *a, **k: calls.append(k) or real(*a, **k))
    fast = mech.estimate(reports, ci=0.95)
    assert calls == [{"rtol": mle.SUPPORT_RTOL}, {}]
    assert np.abs(fast.estimate - exact.estimate).sum() < 1e-4
    np.testing.assert_allclose(fast.ci_high, exact.ci_high, atol=1e-4)


def test_newton_on_the_support_gives_newtons_maximum_on_all_coordinates(monkeypatch):
    Wu, fu = _problem(6, 80, 400, 3_000)
    n = Wu.shape[0]
    start = np.full(n, 1.0 / n)
    newton = mle._newton_mle(Wu, fu, start)
    assert 0 < (newton > 0).sum() < 50
    shapes = []
    real = mle._newton_mle
    monkeypatch.setattr(mle, "_newton_mle", lambda W, *a: shapes.append(W.shape[0]) or real(W, *a))
    monkeypatch.setattr(mle, "NEWTON_MAX_WORK", 50.0**2 * Wu.shape[1])  # not on all 80, on a support up to 50
    got = mle.maximum_likelihood(Wu, fu, start, 10_000, 1e-10)
    assert shapes and max(shapes) <= 50
    assert _loglik(Wu, fu, got) == pytest.approx(_loglik(Wu, fu, newton), rel=1e-10, abs=0)
    differ = (got > 0) != (newton > 0)  # only where the value is at the zeroing threshold's scale
    assert np.abs(got - newton).sum() < 1e-5 and np.all(np.maximum(got, newton)[differ] < 1e-6)


def test_a_support_missing_a_coordinate_is_completed_by_the_kkt_check():
    Wu, fu = _problem(6, 80, 400, 3_000)
    newton = mle._newton_mle(Wu, fu, np.full(80, 1.0 / 80))
    top = int(np.argmax(newton))
    wrong = newton.copy()
    wrong[top] = 0.0  # the heaviest category left out: its gradient is far above 1 at the restricted optimum
    wrong /= wrong.sum()
    got = mle._polish_on_support(Wu, fu, wrong, 10_000, 1e-10)
    assert got[top] > 0 and np.abs(got - newton).sum() < 1e-5


def test_rounds_that_end_off_the_kkt_condition_hand_over_to_squarem(monkeypatch):
    Wu, fu = _problem(6, 80, 400, 3_000)
    newton = mle._newton_mle(Wu, fu, np.full(80, 1.0 / 80))
    top = int(np.argmax(newton))
    wrong = newton.copy()
    wrong[top] = 0.0
    wrong /= wrong.sum()
    calls = []
    real = mle._squarem_mle
    monkeypatch.setattr(mle, "_squarem_mle", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(mle, "POLISH_ROUNDS", 1)  # the one round leaves the heaviest category out: not the MLE
    got = mle._polish_on_support(Wu, fu, wrong, 10_000, 1e-12)
    assert calls and got[top] > 0
    assert _loglik(Wu, fu, got) == pytest.approx(_loglik(Wu, fu, newton), rel=1e-9, abs=0)


def test_the_level_form_of_the_columns_gives_the_dense_products(monkeypatch):
    monkeypatch.setattr(mle, "SPARSE_MIN_ENTRIES", 0)
    rng = np.random.default_rng(8)
    n, m = 30, 50
    hi, lo = rng.random(m) + 1.0, rng.random(m) * 0.5 + 0.1
    code = rng.choice(3, size=(n, m), p=[0.15, 0.8, 0.05])
    W = np.where(code == 0, hi, np.where(code == 1, lo, 0.0))
    W[:, 0], W[:, 1] = 0.0, 0.0
    W[:3, 0] = hi[0]  # one level only
    W[::2, 1] = lo[1] * 0.5  # a column whose rarer level is the smaller one
    W[1::2, 1] = lo[1]
    W *= 1.0 + rng.integers(-3, 4, size=W.shape) * 2.0**-52  # "equal" values differing in their last bits
    cols = mle._Columns(W)
    assert cols.sparse
    pi, z = rng.dirichlet(np.ones(n)), rng.random(m)
    np.testing.assert_allclose(cols.forward(pi), pi @ W, rtol=1e-11)
    np.testing.assert_allclose(cols.backward(z), W @ z, rtol=1e-11)
    generic = rng.random((n, m))  # three levels or more: dense
    assert not mle._Columns(generic).sparse
    monkeypatch.setattr(mle, "SPARSE_SHARE", 0.01)  # sparse parts too large: dense
    assert not mle._Columns(W).sparse


def test_a_full_rank_is_certified_by_cholesky_and_a_deficient_one_is_not(monkeypatch):
    from pml_design.mechanisms import mechanism

    monkeypatch.setattr(mechanism, "RANK_CERTIFICATE_WORK", 0.0)
    rng = np.random.default_rng(9)
    W = np.where(rng.random((40, 120)) < 0.3, np.e**2, 1.0)
    W /= W.sum(axis=1, keepdims=True)
    assert mechanism._full_rank_certified(W)
    assert pml.Mechanism(W).identifiable
    merged = W.copy()
    merged[1] = merged[0]  # two categories the reports cannot tell apart
    assert not mechanism._full_rank_certified(merged)
    assert not pml.Mechanism(merged).identifiable  # the SVD decides
    near = W.copy()
    near[1] = W[0] + 1e-6 * (W[1] - W[0])  # σ_min/σ_max ≈ 1e-7: identifiable by the SVD's 1e-8 rule, not certified
    assert not mechanism._full_rank_certified(near) and pml.Mechanism(near).identifiable


@pytest.mark.parametrize("block", [2**22, 1, 410])  # one block; a row at a time; 13 rows (30 = 13 + 13 + 4: uneven)
def test_the_covariance_by_cholesky_is_the_restricted_inverse(monkeypatch, block):
    from pml_design.mechanisms import covariance
    from pml_design.mechanisms.mechanism import _restricted_inverse, simplex_covariance

    monkeypatch.setattr(covariance, "ROW_BLOCK_ENTRIES", block)
    rng = np.random.default_rng(10)
    for n, m in ((5, 9), (30, 80), (60, 300)):
        W = np.where(rng.random((n, m)) < 0.3, np.e**2, 1.0)
        W /= W.sum(axis=1, keepdims=True)
        pi = rng.dirichlet(np.ones(n))
        F = (W / (pi @ W)) @ W.T
        U = np.linalg.qr(np.column_stack([np.ones(n), np.eye(n)[:, : n - 1]]))[0][:, 1:]  # orthonormal basis of 1⊥
        direct = U @ np.linalg.inv(U.T @ F @ U) @ U.T
        d = np.sqrt(np.diag(F))
        assert _restricted_inverse(F / np.outer(d, d), d) is not None  # the fast path applies
        kept = F.copy()
        cov = simplex_covariance(F)
        np.testing.assert_allclose(cov, direct, rtol=1e-8, atol=1e-12 * np.abs(direct).max())
        assert np.array_equal(cov, cov.T) and np.array_equal(F, kept)  # exactly symmetric; the argument untouched
    singular = F.copy()
    singular[:, 0] = singular[0, :] = 0.0  # a category the reports never inform: the eigendecomposition's route
    d = np.sqrt(np.where(np.diag(singular) > 0, np.diag(singular), 1.0))
    assert _restricted_inverse(singular / np.outer(d, d), d) is None
    assert np.all(np.isfinite(simplex_covariance(singular)))
    with pytest.raises(ValueError, match="fisher must be finite"):
        simplex_covariance(np.where(np.eye(n, dtype=bool), np.nan, singular))


def test_intervals_cover_the_largest_categories_where_many_are_at_zero():
    """Coverage with power (a coverage study, session 21): GRR, N = 100, Zipf P, 2·10⁴ reports, so ~70 categories are
    estimated at 0 and the constrained MLE pushes the largest ones down. The intervals, centred on one unconstrained
    Fisher-scoring step, cover the two largest categories at the nominal 95 %; the same covariance centred on the
    MLE itself (the intervals before) fails the same binomial test."""
    from scipy.stats import binom

    from pml_design.mechanisms.mechanism import wald_estimate

    rng = np.random.default_rng(2026)
    n_cat, n, reps = 100, 20_000, 250
    p = 1.0 / np.arange(1, n_cat + 1) ** 1.1
    p /= p.sum()
    mech = pml.Mechanism(pml.grr(n_cat, 1.0).matrix)
    new, old = np.zeros(n_cat), np.zeros(n_cat)
    for _ in range(reps):
        est = mech.estimate(rng.multinomial(n, p @ mech.matrix).astype(float), counts=True, ci=0.95)
        new += (est.ci_low <= p) & (p <= est.ci_high)
        before = wald_estimate(est.estimate, est.covariance, 0.95, n=n, method="ibu", categories=None)
        old += (before.ci_low <= p) & (p <= before.ci_high)
        assert np.all(est.ci_low <= est.estimate) and np.all(est.estimate <= est.ci_high)
    limit = binom.ppf(1e-3, 2 * reps, 0.95)  # fewer covered than this: coverage below 95 % at level 1e-3
    assert new[:2].sum() >= limit > old[:2].sum()
    assert new.sum() / (n_cat * reps) >= 0.95  # and overall at least nominal (the zeros' intervals are conservative)


def test_too_few_reports_for_the_intervals_warn():
    """A new user's trial: one report gave [0.981, 1] for a category the record did not hold, without a word."""
    import warnings

    mech = pml.Mechanism(pml.grr(8, 1.0).matrix)
    with pytest.warns(UserWarning, match=r"1 report\(s\) for 8 categories are too few") as rec:
        mech.estimate(np.array([3]), ci=0.95)
    assert rec[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mech.estimate(np.random.default_rng(0).integers(0, 8, 80), ci=0.95)  # 10 per category: no warning
