"""The Mechanism object: privatize (distribution + power), estimate (convergence, simplex), covariance."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import pml_design as pd
from pml_design.mechanisms import project_to_simplex

W = np.array([[0.6, 0.3, 0.1, 0.0], [0.1, 0.5, 0.2, 0.2], [0.25, 0.25, 0.25, 0.25]])


def _chi2_pvalues(mech_matrix, x, y):
    pvals = []
    for i in range(mech_matrix.shape[0]):
        obs = np.bincount(y[x == i], minlength=mech_matrix.shape[1]).astype(float)
        exp = mech_matrix[i] * obs.sum()
        keep = exp > 0
        assert np.all(obs[~keep] == 0)  # impossible outputs never appear
        pvals.append(stats.chisquare(obs[keep], exp[keep]).pvalue)
    return np.array(pvals)


def test_privatize_follows_rows_with_power():
    mech = pd.Mechanism(W)
    rng = np.random.default_rng(1)
    x = rng.integers(0, 3, size=60_000)
    y = mech.privatize(x, rng=2)
    assert y.shape == x.shape and y.dtype == np.int64
    assert np.all(_chi2_pvalues(W, x, y) > 1e-3)
    # power: the same reports against a slightly wrong matrix are rejected
    wrong = W.copy()
    wrong[0] = [0.57, 0.33, 0.1, 0.0]
    assert _chi2_pvalues(wrong, x, y)[0] < 1e-3


def test_privatize_seeded_and_shape_preserving():
    mech = pd.Mechanism(W)
    x = np.array([[0, 1], [2, 2]])
    a = mech.privatize(x, rng=7)
    b = mech.privatize(x, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (2, 2)


@pytest.mark.parametrize("method", ["ibu", "inversion"])
def test_estimate_converges_and_stays_on_simplex(method):
    rng = np.random.default_rng(3)
    p = np.array([0.5, 0.3, 0.2])
    M = pd.randomized_response(3, 1.0)
    errs = []
    for n in (1_000, 30_000, 600_000):
        x = rng.choice(3, size=n, p=p)
        est = M.estimate(M.privatize(x, rng=rng), method=method)
        assert np.all(est >= 0) and est.sum() == pytest.approx(1.0)
        errs.append(np.abs(est - p).sum())
    assert errs[-1] < 0.01
    assert errs[-1] < errs[0]


def test_inversion_covariance_matches_monte_carlo():
    rng = np.random.default_rng(4)
    p = np.array([0.5, 0.3, 0.2])
    M = pd.randomized_response(3, 1.5)
    n, reps = 2000, 600
    ests = []
    A = np.linalg.inv(M.matrix.T)
    for _ in range(reps):
        y = M.privatize(rng.choice(3, size=n, p=p), rng=rng)
        ests.append(A @ M.output_frequencies(y))  # unprojected inversion estimator
    emp = np.cov(np.array(ests).T)
    theo = M.inversion_covariance(p, n)
    np.testing.assert_allclose(np.diag(emp), np.diag(theo), rtol=0.15)


def test_project_to_simplex():
    v = np.array([0.8, 0.5, -0.2])
    q = project_to_simplex(v)
    assert q.sum() == pytest.approx(1.0) and np.all(q >= 0)
    np.testing.assert_allclose(project_to_simplex(np.array([0.2, 0.3, 0.5])), [0.2, 0.3, 0.5])


def test_mechanism_bad_input():
    mech = pd.Mechanism(W)
    with pytest.raises(ValueError, match="inputs"):
        mech.privatize([0, 3])
    with pytest.raises(TypeError, match="inputs"):
        mech.privatize([0.5])
    with pytest.raises(ValueError, match="reports"):
        mech.estimate([0, 4])
    with pytest.raises(ValueError, match="method"):
        mech.estimate([0, 1], method="nope")
    with pytest.raises(ValueError, match="matrix"):
        pd.Mechanism([[0.5, 0.6]])
    with pytest.raises(ValueError, match="inputs"):
        mech.privatize([])


def test_design_result_is_usable_mechanism():
    res = pd.design([0.5, 0.3, 0.2], 0.8)
    y = res.privatize(np.array([0, 1, 2, 0]), rng=0)
    assert y.max() < res.matrix.shape[1]
    assert res.mechanism.capacity(res.uncertainty) == pytest.approx(res.certified_epsilon)
    assert "PML" in res.guarantee()
