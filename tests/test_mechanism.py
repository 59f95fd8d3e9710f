"""The Mechanism object: privatize (distribution + power), estimate (convergence, simplex), covariance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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


# --- identifiability, MLE covariance and confidence intervals (issue 12, part 3) ------------------------------
MERGED = np.array([[0.7, 0.3], [0.7, 0.3], [0.2, 0.8]])  # rows 0 and 1 merged: not identifiable


def test_identifiable_rank_check():
    assert pd.randomized_response(4, 1.0).identifiable
    assert pd.Mechanism(W).identifiable  # 3 x 4, rank 3
    assert not pd.Mechanism(MERGED).identifiable
    near = np.array([[0.5, 0.5], [0.5 + 1e-13, 0.5 - 1e-13]])  # numerically merged
    assert not pd.Mechanism(near).identifiable
    assert pd.Mechanism(np.array([[0.5, 0.5], [0.5 + 1e-3, 0.5 - 1e-3]])).identifiable


@pytest.mark.parametrize("method", ["ibu", "inversion"])
def test_estimating_through_a_merging_mechanism_warns(method):
    mech = pd.Mechanism(MERGED)
    y = mech.privatize(np.array([0, 1, 2] * 50), rng=0)
    with pytest.warns(UserWarning, match="cannot identify every category"):
        est = mech.estimate(y, method=method, ci=0.95)
    # the merged categories get the uninformative interval, the identified one a real interval
    assert est.ci_low[0] == 0 and est.ci_high[0] == 1 and est.ci_low[1] == 0 and est.ci_high[1] == 1
    assert est.ci_high[2] - est.ci_low[2] < 0.5


@pytest.mark.parametrize("method", ["ibu", "mle", "inversion"])
def test_estimators_are_consistent_on_a_non_square_identifiable_design(method):
    mech = pd.Mechanism(W)  # 3 inputs, 4 outputs
    p = np.array([0.2, 0.5, 0.3])
    q = p @ W
    errs = [np.abs(mech.estimate(np.round(q * n), counts=True, method=method) - p).sum() for n in (10**3, 10**7)]
    assert errs[1] < 1e-5  # exact output frequencies (up to rounding) give back p


def _fisher_closed_form(Wm, pi, n):
    """(F⁻¹ − π πᵀ)/n with F = Σ_y w_y w_yᵀ / q_y: the interior, invertible case of the constrained bound."""
    q = pi @ Wm
    F = sum(np.outer(Wm[:, y], Wm[:, y]) / q[y] for y in range(Wm.shape[1]))
    return (np.linalg.inv(F) - np.outer(pi, pi)) / n


def test_mle_covariance_matches_closed_form_and_delta_method():
    rr = pd.randomized_response(4, 1.2)
    p = np.array([0.4, 0.3, 0.2, 0.1])
    n = 10**6
    counts = np.round(p @ rr.matrix * n)
    est = rr.estimate(counts, counts=True, ci=0.95)
    pi = est.estimate
    # 1) the constrained-Fisher (pseudo-inverse) formula equals (F^-1 - pi pi^T)/n in the interior
    np.testing.assert_allclose(est.covariance, _fisher_closed_form(rr.matrix, pi, n), rtol=1e-8, atol=1e-15)
    # 2) for a square invertible W the MLE is the inversion estimator: the delta method gives the same matrix
    np.testing.assert_allclose(est.covariance, rr.inversion_covariance(pi, n), rtol=1e-8, atol=1e-15)
    np.testing.assert_allclose(rr.estimate_covariance(counts, counts=True), est.covariance)
    # the rows of the covariance sum to zero (the estimate stays on the simplex)
    np.testing.assert_allclose(est.covariance.sum(axis=1), 0.0, atol=1e-15)


def test_mle_covariance_matches_monte_carlo_for_non_square_design():
    mech = pd.Mechanism(W)
    p = np.array([0.3, 0.45, 0.25])
    n, reps = 4000, 300
    rng = np.random.default_rng(11)
    q = p @ W
    ests = np.array([mech.estimate(rng.multinomial(n, q), counts=True) for _ in range(reps)])
    theo = mech._covariance_at(p, n, "ibu")
    np.testing.assert_allclose(np.diag(np.cov(ests.T)), np.diag(theo), rtol=0.2)


def _coverage(mech, p, n, reps, level, seed):
    rng = np.random.default_rng(seed)
    hits = np.zeros(p.shape[0])
    for _ in range(reps):
        x = rng.choice(p.shape[0], size=n, p=p)
        e = mech.estimate(mech.privatize(x, rng=rng), ci=level)
        assert np.all(e.ci_low <= e.estimate) and np.all(e.estimate <= e.ci_high)
        assert np.all(e.ci_low >= 0) and np.all(e.ci_high <= 1)
        hits += (e.ci_low <= p) & (p <= e.ci_high)
    return hits / reps


@pytest.mark.parametrize(
    ("matrix", "p", "reps"),
    [
        (pd.randomized_response(4, 1.0).matrix, np.array([0.5, 0.3, 0.15, 0.05]), 400),  # a small category
        (W, np.array([0.3, 0.45, 0.25]), 200),  # non-square design (IBU iterates: fewer repetitions)
    ],
    ids=["rr4", "3x4"],
)
def test_confidence_intervals_cover_at_nominal_level_with_power(matrix, p, reps):
    mech = pd.Mechanism(matrix)
    cov95 = _coverage(mech, p, 2000, reps, 0.95, seed=5)
    assert cov95.mean() >= 0.93 and cov95.min() >= 0.9, cov95
    # power: the same check rejects intervals that are too narrow (nominal 80 %)
    cov80 = _coverage(mech, p, 2000, reps, 0.80, seed=5)
    assert cov80.mean() < 0.88, cov80


def test_boundary_estimate_interval_is_clipped_and_covers_zero():
    rr = pd.randomized_response(3, 1.0)
    p = np.array([0.6, 0.4, 0.0])
    rng = np.random.default_rng(8)
    covered = 0
    for _ in range(200):
        e = rr.estimate(rr.privatize(rng.choice(3, 1000, p=p), rng=rng), ci=0.95)
        assert e.ci_low[2] >= 0.0
        covered += e.ci_low[2] == 0.0
    assert covered >= 0.93 * 200


# --- labels -------------------------------------------------------------------------------------------------
def test_labels_privatize_and_estimate_accept_labels_and_codes():
    rr = pd.randomized_response(3, 2.0)
    mech = pd.Mechanism(rr.matrix, labels=["red", "green", "blue"])
    assert mech.labels == ("red", "green", "blue") and mech.output_labels == ("red", "green", "blue")
    x = np.array(["red", "blue", "green", "blue"] * 500)
    y_lab = mech.privatize(x, rng=3)
    y_code = mech.privatize(mech.encode(x), rng=3)
    assert set(np.unique(y_lab)) <= {"red", "green", "blue"}
    np.testing.assert_array_equal(y_lab, np.asarray(mech.output_labels)[y_code])  # same draws either way
    np.testing.assert_allclose(mech.estimate(y_lab), mech.estimate(y_code))
    import pandas

    cat = pandas.Series(x).astype(pandas.CategoricalDtype(["blue", "green", "red", "pink"]))
    np.testing.assert_array_equal(mech.privatize(cat, rng=3), y_lab)


def test_labels_bad_input():
    with pytest.raises(ValueError, match="distinct"):
        pd.Mechanism(np.eye(2), labels=["a", "a"])
    with pytest.raises(ValueError, match="2 entries"):
        pd.Mechanism(np.eye(2), labels=["a"])
    with pytest.raises(ValueError, match="missing"):
        pd.Mechanism(np.eye(2), labels=["a", None])
    mech = pd.Mechanism(np.eye(2), labels=["a", "b"])
    with pytest.raises(ValueError, match=r"does not know \(missing, or not among the labels \['a', 'b'\]\)") as info:
        mech.privatize(["a", "c"])
    assert "'c'" not in str(info.value) and "position" not in str(info.value)  # protected records are not named
    with pytest.raises(ValueError, match="reports"):
        mech.estimate(["a", "zz"])
    with pytest.raises(ValueError, match="ci"):
        mech.estimate(["a", "b"], ci=95)


@given(st.lists(st.text(min_size=1, max_size=5), min_size=2, max_size=8, unique=True), st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_label_codes_roundtrip(labels, seed):
    n = len(labels)
    mech = pd.Mechanism(pd.randomized_response(n, 1.0).matrix, labels=labels)
    idx = np.random.default_rng(seed).integers(0, n, size=50)
    values = np.array(labels, dtype=object)[idx]
    np.testing.assert_array_equal(mech.encode(values), idx)
    assert set(mech.privatize(values, rng=seed).tolist()) <= set(mech.output_labels)


def test_dense_closed_forms_refuse_huge_sizes():
    with pytest.raises(ValueError, match=r"n=1000000 is too large.*GiB"):
        pd.randomized_response(10**6, 1.0)
    with pytest.raises(ValueError, match="too large"):
        pd.uniform_optimal(10**6, 1.0)
