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


def test_squarem_never_lowers_the_log_likelihood(monkeypatch):
    Wu, fu = _problem(4, 50, 120, 3_000)
    seen = []
    real = mle._loglik

    def spy(*args):
        value = real(*args)
        seen.append(value)
        return value

    monkeypatch.setattr(mle, "_loglik", spy)
    mle._squarem_mle(Wu, fu, np.full(50, 1.0 / 50), 200, 1e-12)
    kept, best = [], -np.inf
    for value in seen:  # every step's kept value is at least the plain double EM step's, which never falls
        best = max(best, value)
        kept.append(best)
    assert kept[-1] == max(seen) and len(seen) > 10


def test_estimate_takes_squarem_above_newtons_size_and_agrees(monkeypatch):
    rng = np.random.default_rng(5)
    n = 40
    W = np.where(rng.random((n, 120)) < 0.3, np.e**2, 1.0)
    mech = pml.Mechanism(W / W.sum(axis=1, keepdims=True))
    p = 1.0 / np.arange(1, n + 1) ** 1.2
    reports = mech.privatize(rng.choice(n, size=20_000, p=p / p.sum()), rng=rng)
    exact = mech.estimate(reports, ci=0.95)
    calls = []
    monkeypatch.setattr(mle, "NEWTON_MAX_WORK", 0.0)
    real = mle._squarem_mle
    monkeypatch.setattr(mle, "_squarem_mle", lambda *a: calls.append(1) or real(*a))
    fast = mech.estimate(reports, ci=0.95)
    assert calls == [1]
    assert np.abs(fast.estimate - exact.estimate).sum() < 1e-4
    np.testing.assert_allclose(fast.ci_high, exact.ci_high, atol=1e-4)
