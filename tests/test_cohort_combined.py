"""One estimate from both cohorts: :func:`pml_design.cohort.combined_estimate` and ``estimate --first-cohort``.

The first cohort answers through an ε₁-LDP oracle, the second through a PML mechanism; the combined estimate is the
maximum-likelihood one from all the reports (docs/design.md §11.2, "Both cohorts, one estimate"). Checked here:
with one cohort empty it is that cohort's own MLE; on small N it is the maximiser of the joint likelihood found by
scipy from a channel written out independently; its simulated MSE is the trace of its covariance (and of the
benchmark's formula ``tr(n₁F₁ + n₂F₂)⁻¹ − ‖P‖²/n``), a test that rejects the covariance × 1.2; its intervals cover;
the Fisher informations add (never worse than either cohort alone); subset selection beyond the explicit channel
(its expected information summed over all subsets without listing them);
bad input; and the command-line round trip with its refusals.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pytest
from scipy import optimize

import pml_design as pml
from pml_design.cohort import combined_estimate
from pml_design.mechanisms.fit import ReportsFitWarning
from pml_design.mechanisms.frequency_oracles.fisher import fisher_information
from pml_design.mechanisms.mechanism import simplex_covariance

from benchmarks.bench_deploy import combined_error

P = np.array([0.45, 0.3, 0.17, 0.08])
CATS = ("A", "B", "C", "D")


def _mechanism(eps: float = 1.5) -> pml.Mechanism:
    """A non-square PML-like channel (4 inputs, 5 outputs): not an LDP oracle's, full rank."""
    rng = np.random.default_rng(3)
    W = np.exp(eps * rng.random((4, 5)))
    return pml.Mechanism(W / W.sum(axis=1, keepdims=True), name="pml", labels=CATS)


ORACLES = {"grr": lambda: pml.grr(4, 1.0), "ss": lambda: pml.subset_selection(4, 1.0, k=2),
           "hr": lambda: pml.hadamard_response(4, 1.0)}


def _cohorts(oracle, mech, n1: int, n2: int, seed: int):
    rng = np.random.default_rng(seed)
    return (oracle.privatize(rng.choice(4, n1, p=P), rng=rng),
            mech.privatize(np.array(CATS)[rng.choice(4, n2, p=P)], rng=rng))


# --- one cohort empty: the single-cohort MLE ------------------------------------------------------------------------
@pytest.mark.parametrize("key", sorted(ORACLES))
def test_one_empty_cohort_gives_that_cohorts_mle(key):
    oracle, mech = ORACLES[key](), _mechanism()
    r1, r2 = _cohorts(oracle, mech, 3000, 3000, seed=1)
    alone2 = mech.estimate(r2, ci=0.9)
    both = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1[:0], second_reports=r2, ci=0.9)
    np.testing.assert_allclose(both.estimate, alone2.estimate, atol=1e-9)
    np.testing.assert_allclose(both.covariance, alone2.covariance, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose([both.ci_low, both.ci_high], [alone2.ci_low, alone2.ci_high], atol=1e-8)
    assert both.n == 3000 and both.categories == CATS and both.level == 0.9
    alone1 = oracle.mechanism.estimate(oracle.to_symbols(r1), ci=0.9)
    first = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1,
                              second_counts=np.zeros(mech.n_outputs), ci=0.9)
    np.testing.assert_allclose(first.estimate, alone1.estimate, atol=1e-9)
    np.testing.assert_allclose(first.covariance, alone1.covariance, rtol=1e-6, atol=1e-12)
    # the counts form gives the same as the reports
    distinct, counts = np.unique(r1, axis=0, return_counts=True)
    again = combined_estimate(oracle=oracle, mechanism=mech, first_counts=(distinct, counts),
                              second_counts=mech.report_counts(r2))
    full = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1, second_reports=r2)
    np.testing.assert_allclose(again.estimate, full.estimate, atol=1e-12)
    assert full.method == "combined-mle" and full.n == 6000


# --- the joint likelihood, maximised by scipy on channels written from the definitions --------------------------------
def _channel_from_definition(oracle) -> tuple[np.ndarray, list]:
    """(W, outputs) of GRR / subset selection from P(S | x) ∝ e^ε if x ∈ S else 1 (not the library's matrices)."""
    n, k = oracle.n, getattr(oracle, "k", 1)
    sets = list(itertools.combinations(range(n), k))
    W = np.array([[math.exp(oracle.epsilon) if x in s else 1.0 for s in sets] for x in range(n)])
    return W / W.sum(axis=1, keepdims=True), sets


@pytest.mark.parametrize("k", [1, 2])
def test_matches_brute_force_maximum_of_the_joint_likelihood(k):
    oracle, mech = pml.subset_selection(4, 0.7, k=k), _mechanism(1.0)
    W1, sets = _channel_from_definition(oracle)
    r1, r2 = _cohorts(oracle, mech, 400, 250, seed=2)
    c1 = np.array([sum(tuple(np.atleast_1d(r)) == s for r in r1) for s in sets])
    c2 = mech.report_counts(r2)

    def neg_loglik(theta):  # softmax parametrisation: unconstrained, a different code path from the Newton method
        p = np.exp(theta - theta.max())
        p /= p.sum()
        return -(c1 @ np.log(p @ W1) + c2 @ np.log(p @ mech.matrix))

    best = optimize.minimize(neg_loglik, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    p_star = np.exp(best.x - best.x.max())
    p_star /= p_star.sum()
    est = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1, second_reports=r2)
    np.testing.assert_allclose(est.estimate, p_star, atol=2e-6)
    assert neg_loglik(np.log(est.estimate)) <= best.fun + 1e-7
    # the covariance: the inverse of the summed expected informations on the simplex, at the estimate
    F = 400 * fisher_information(W1, est.estimate) + 250 * fisher_information(mech.matrix, est.estimate)
    np.testing.assert_allclose(est.covariance, np.linalg.inv(F) - np.outer(est.estimate, est.estimate) / 650,
                               atol=1e-10)


# --- the simulated error is the asymptotic one (with power), and the intervals cover --------------------------------
def test_simulated_mse_matches_the_covariance_and_the_benchmark_formula():
    """1 200 replicates of n₁ = n₂ = 3 000 (GRR at ε₁ = 1 + the mechanism) from multinomial counts."""
    oracle, mech = pml.grr(4, 1.0), _mechanism()
    n1, n2, reps = 3000, 3000, 1200
    W1, W2 = oracle.matrix, mech.matrix
    rng = np.random.default_rng(11)
    c1s, c2s = rng.multinomial(n1, P @ W1, size=reps), rng.multinomial(n2, P @ W2, size=reps)
    F = n1 * fisher_information(W1, P) + n2 * fisher_information(W2, P)
    bench = combined_error(fisher_information(W1, P), n1, fisher_information(W2, P), n2, P)  # README's cohort table
    cov = simplex_covariance(F)
    assert np.trace(cov) == pytest.approx(bench, rel=1e-9)
    err2, covered, covered_small = np.empty(reps), np.empty((reps, 4), bool), np.empty((reps, 4), bool)
    for i in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ReportsFitWarning)  # one population: the fit test never fires
            est = combined_estimate(oracle=oracle, mechanism=mech, first_counts=(np.arange(4), c1s[i]),
                                    second_counts=c2s[i], check_fit=i < 150)  # (it triples the time)
        err2[i] = np.sum((est.estimate - P) ** 2)
        covered[i] = (est.ci_low <= P) & (P <= est.ci_high)
        half = (est.ci_high - est.ci_low) / 2 / 1.2  # intervals of a covariance / 1.2² (interior: no clipping here)
        covered_small[i] = np.abs(est.estimate - P) <= half
    se = err2.std(ddof=1) / math.sqrt(reps)
    assert abs(err2.mean() - bench) < 3.5 * se, (err2.mean(), bench, se)
    assert abs(err2.mean() - 1.2 * bench) > 3.5 * se  # power: a covariance 20 % too large is rejected
    assert abs(err2.mean() - bench / 1.2) > 3.5 * se
    rate, sd = covered.mean(), math.sqrt(0.95 * 0.05 / reps)
    assert abs(rate - 0.95) < 4 * sd, rate
    assert np.all(np.abs(covered.mean(axis=0) - 0.95) < 4 * sd)
    assert covered_small.mean() < 0.95 - 4 * sd  # power: intervals 1.2× too narrow fail it


def test_cohorts_that_do_not_fit_one_distribution_are_warned_about():
    """Different populations, or reports made at another ε₁ than declared: the likelihood-ratio test of one
    distribution for both cohorts warns (and is silent for one population, above)."""
    mech, rng = _mechanism(), np.random.default_rng(21)
    oracle = pml.grr(4, 1.0)
    r2 = mech.privatize(np.array(CATS)[rng.choice(4, 3000, p=P)], rng=rng)
    other = oracle.privatize(rng.choice(4, 3000, p=P[::-1]), rng=rng)  # another population
    with pytest.warns(ReportsFitWarning, match="the two cohorts' reports do not fit one distribution"):
        est = combined_estimate(oracle=oracle, mechanism=mech, first_reports=other, second_reports=r2)
    # the test behind the warning is the result's fit (estimate --json's "fit"): G on N - 1 degrees of freedom
    assert isinstance(est, pml.FrequencyEstimate) and est.fit.p_value < 1e-6 and est.fit.df == 3
    assert f"G = {est.fit.statistic:.4g} on 3 degree(s)" in str(caught_fit_warning(oracle, mech, other, r2))
    assert est.fit.cells == 4 + 5  # GRR's 4 reports and the mechanism's 5 outputs, all observed
    alone = mech.estimate(r2)
    from pml_design.mechanisms.fit import report_fit

    assert est.second_fit == report_fit(mech.matrix, mech.report_counts(r2), alone, rank=4)
    sharper = pml.grr(4, 3.0).privatize(rng.choice(4, 20_000, p=P), rng=rng)  # made at 3, declared 1 (p ~ 1e-10)
    with pytest.warns(ReportsFitWarning, match="do not fit one distribution"):
        combined_estimate(oracle=oracle, mechanism=mech, first_reports=sharper, second_reports=r2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReportsFitWarning)
        est = combined_estimate(oracle=oracle, mechanism=mech, first_reports=other, second_reports=r2, check_fit=False)
    assert est.fit is None and est.second_fit is None
    same = combined_estimate(oracle=oracle, mechanism=mech, first_reports=oracle.privatize(rng.choice(4, 3000, p=P),
                                                                                          rng=rng), second_reports=r2)
    assert same.fit.p_value > 1e-3 and same.second_fit.p_value > 1e-3  # one population: both tests pass


def caught_fit_warning(oracle, mech, first, second):
    with pytest.warns(ReportsFitWarning) as record:
        combined_estimate(oracle=oracle, mechanism=mech, first_reports=first, second_reports=second)
    return next(w.message for w in record if "one distribution" in str(w.message))


# --- the informations add: never worse than either cohort alone -----------------------------------------------------
@pytest.mark.parametrize("key", sorted(ORACLES))
def test_combined_is_never_worse_than_either_cohort(key):
    oracle, mech = ORACLES[key](), _mechanism()
    W1 = oracle.matrix
    for n1, n2 in [(500, 5000), (5000, 500), (2000, 2000)]:
        c1 = np.round(n1 * P @ W1).astype(int)  # the expected counts: each estimate is P up to rounding
        c2 = np.round(n2 * P @ mech.matrix).astype(int)
        sym = np.arange(W1.shape[1])
        reports1 = (sym if key != "ss" else np.array(list(itertools.combinations(range(4), 2))), c1)
        both = combined_estimate(oracle=oracle, mechanism=mech, first_counts=reports1, second_counts=c2)
        only1 = combined_estimate(oracle=oracle, mechanism=mech, first_counts=reports1, second_counts=0 * c2)
        only2 = combined_estimate(oracle=oracle, mechanism=mech, first_counts=(sym[:0], c1[:0]), second_counts=c2)
        for alone in (only1, only2):
            gap = np.linalg.eigvalsh(alone.covariance - both.covariance)
            assert gap.min() > -1e-9 * np.abs(gap).max()  # Loewner order: the combined covariance is smaller
            assert np.trace(both.covariance) < np.trace(alone.covariance)
        # and it is the inverse of the sum of the informations (at the same point, up to rounding of the counts)
        F = c1.sum() * fisher_information(W1, both.estimate) + c2.sum() * fisher_information(mech.matrix, both.estimate)
        np.testing.assert_allclose(both.covariance, simplex_covariance(F), rtol=1e-9, atol=1e-14)


# --- subset selection beyond the explicit channel: observed report sets, the expected information unlisted ----------
@pytest.mark.parametrize(("n", "k", "eps"), [(4, 1, 1.0), (4, 2, 1.0), (7, 3, 0.3), (10, 4, 3.0), (9, 2, 8.0),
                                             (12, 6, 0.05), (8, 7, 1.0)])
def test_subset_fisher_information_is_the_sum_over_all_subsets(n, k, eps):
    from pml_design.mechanisms.frequency_oracles.subsets import subset_fisher_information

    p = np.random.default_rng(n * k).dirichlet(np.ones(n))
    for prior in (p, np.r_[0.0, p[1:] / p[1:].sum()]):  # a zero too
        F = subset_fisher_information(n, k, eps, prior)
        np.testing.assert_allclose(F, fisher_information(pml.subset_selection(n, eps, k=k).matrix, prior), rtol=1e-11)
    assert subset_fisher_information(n, k, eps, p, max_work=10) is None  # above the budget: the caller falls back


def test_subset_selection_beyond_the_channel_uses_the_observed_sets(monkeypatch):
    import pml_design.mechanisms.frequency_oracles as fo
    import pml_design.mechanisms.frequency_oracles.subsets as ss

    oracle, mech = pml.subset_selection(4, 1.0, k=2), _mechanism()
    r1, r2 = _cohorts(oracle, mech, 20_000, 2000, seed=5)
    explicit = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1, second_reports=r2)
    monkeypatch.setattr(fo, "MAX_CHANNEL_ENTRIES", 1)
    unlisted = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1[:, ::-1], second_reports=r2)
    np.testing.assert_allclose(unlisted.estimate, explicit.estimate, atol=1e-9)  # the same likelihood
    np.testing.assert_allclose(unlisted.covariance, explicit.covariance, rtol=1e-9, atol=1e-15)  # the same F₁
    monkeypatch.setattr(ss, "FISHER_WORK", 0.0)
    observed = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1, second_reports=r2)
    np.testing.assert_allclose(observed.estimate, explicit.estimate, atol=1e-9)
    np.testing.assert_allclose(observed.covariance, explicit.covariance, rtol=0.05, atol=1e-7)  # the same limit
    assert np.abs(observed.covariance - explicit.covariance).max() > 1e-9  # (and not the same number)
    monkeypatch.undo()
    # a real one: N = 24, k = 8 (C(24, 8) = 735 471 sets, 17.7 M channel entries > MAX_CHANNEL_ENTRIES)
    big = pml.subset_selection(24, 1.0, k=8)
    p = np.random.default_rng(0).dirichlet(np.full(24, 3.0))
    rng = np.random.default_rng(6)
    W2 = np.full((24, 24), 1.0) + np.eye(24) * (math.e - 1)
    mech24 = pml.Mechanism(W2 / W2.sum(axis=1, keepdims=True))
    r1 = big.privatize(rng.choice(24, 30_000, p=p), rng=rng)
    est = combined_estimate(oracle=big, mechanism=mech24, first_reports=r1,
                            second_reports=mech24.privatize(rng.choice(24, 30_000, p=p), rng=rng), ci=0.99)
    z = (est.estimate - p) / np.sqrt(np.diag(est.covariance))
    assert np.all(np.abs(z) < 4.5) and np.mean(z**2) < 2.0


def test_hadamard_response_beyond_the_channel_is_the_same_estimate(monkeypatch):
    # the expected information by two Walsh-Hadamard transforms and the reports' columns without the channel: the
    # same likelihood and the same F₁ as the written-out channel (it was refused above MAX_CHANNEL_ENTRIES)
    import pml_design.mechanisms.frequency_oracles as fo
    from pml_design.mechanisms.frequency_oracles.fisher import fisher_information
    from pml_design.mechanisms.frequency_oracles.hadamard import hadamard_columns, hadamard_fisher_information

    rng = np.random.default_rng(3)
    for n, eps in ((2, 1.0), (2, 40.0), (5, 0.5), (7, 3.0), (8, 30.0), (40, 1.0), (40, 200.0), (300, 2.0)):
        oracle = pml.hadamard_response(n, eps)  # K = 4, 8, 8, 16, 64, 512: N = K − 1 and N = K/2 included
        zeros = rng.dirichlet(np.ones(n)) * (rng.random(n) < 0.5)
        zeros[0] += 0.1
        for prior in (rng.dirichlet(np.full(n, 0.3)), zeros / zeros.sum()):  # with zeros: outputs of π·w_y = lo
            F = hadamard_fisher_information(n, eps, prior)
            np.testing.assert_allclose(F, fisher_information(oracle.matrix, prior), rtol=1e-10, atol=0)  # each entry
            assert np.array_equal(F, F.T)
        ys = rng.choice(oracle.n_outputs, size=min(9, oracle.n_outputs), replace=False)
        cols = oracle.matrix[:, ys]
        np.testing.assert_allclose(hadamard_columns(n, eps, ys), cols / cols.max(), rtol=1e-14)
    oracle, mech = pml.hadamard_response(4, 1.0), _mechanism()
    r1, r2 = _cohorts(oracle, mech, 20_000, 2000, seed=5)
    explicit = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1, second_reports=r2)
    monkeypatch.setattr(fo, "MAX_CHANNEL_ENTRIES", 1)
    unlisted = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1, second_reports=r2)
    np.testing.assert_allclose(unlisted.estimate, explicit.estimate, atol=1e-9)
    np.testing.assert_allclose(unlisted.covariance, explicit.covariance, rtol=1e-9, atol=1e-15)
    first_only = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1, second_reports=r2[:0])
    assert np.abs(first_only.estimate - unlisted.estimate).max() > 1e-4  # (power: the second cohort counts)
    # a review: at ε₁ = 40 with categories never seen, the transforms cancelled to standard errors 10⁻¹¹ (or 20 times
    # too large) where the explicit channel gives 0.0098
    monkeypatch.undo()
    strong = pml.hadamard_response(4, 40.0)
    r1 = strong.privatize(np.random.default_rng(8).choice([0, 2], size=5000), rng=9)
    for second in (r2[:0], r2[:100]):
        explicit = combined_estimate(oracle=strong, mechanism=mech, first_reports=r1, second_reports=second, ci=0.95)
        monkeypatch.setattr(fo, "MAX_CHANNEL_ENTRIES", 1)
        unlisted = combined_estimate(oracle=strong, mechanism=mech, first_reports=r1, second_reports=second, ci=0.95)
        monkeypatch.undo()
        se = np.sqrt(np.diag(explicit.covariance))[[0, 2]]
        assert np.all(se > 1e-3)
        np.testing.assert_allclose(np.sqrt(np.diag(unlisted.covariance))[[0, 2]], se, rtol=1e-6)


# --- bad input --------------------------------------------------------------------------------------------------------
def test_bad_input_names_the_argument():
    oracle, mech = pml.grr(4, 1.0), _mechanism()
    r1, r2 = _cohorts(oracle, mech, 100, 100, seed=9)
    ok = {"oracle": oracle, "mechanism": mech, "first_reports": r1, "second_reports": r2}
    cases = [
        ({"oracle": pml.grr(3, 1.0)}, ValueError, "mechanism has 4 inputs but the oracle's alphabet has n = 3"),
        ({"categories": ["B", "A", "C", "D"]}, ValueError, "categories .* in another order than the mechanism's"),
        ({"categories": ["A", "B", "C", "E"]}, ValueError, "categories .* other than the mechanism's labels"),
        ({"first_counts": (np.arange(4), [1, 2, 3, 4])}, ValueError, "exactly one of first_reports and first_counts"),
        ({"first_reports": None}, ValueError, "exactly one of first_reports and first_counts.*neither"),
        ({"first_reports": None, "first_counts": (np.arange(4), [1, 2, -3, 4])}, ValueError, "first_counts: the counts"),
        ({"first_reports": np.array([0, 7])}, ValueError, "first_reports do not match the oracle GRR"),
        ({"second_counts": np.ones(5)}, ValueError, "exactly one of second_reports and second_counts"),
        ({"second_reports": None, "second_counts": np.ones(3)}, ValueError, "second_counts"),
        ({"first_reports": r1[:0], "second_reports": r2[:0]}, ValueError, "both cohorts are empty"),
        ({"oracle": pml.grr(4, 0.0)}, ValueError, "independent of the inputs"),
        ({"oracle": "grr"}, TypeError, "oracle must be a FrequencyOracle"),
        ({"mechanism": mech.matrix}, TypeError, "mechanism must be a Mechanism"),
        ({"ci": 1.5}, ValueError, "ci must lie in"),
        ({"max_iter": 0}, ValueError, "max_iter"),
        ({"tol": -1.0}, ValueError, "tol"),
        ({"oracle": pml.oue(23, 1.0), "mechanism": pml.Mechanism(np.eye(23))}, ValueError, "too many"),
    ]
    for change, exc, match in cases:
        with pytest.raises(exc, match=match):
            combined_estimate(**{**ok, **change})
    out = combined_estimate(**ok, categories=list(CATS))
    assert out.categories == CATS


# --- the command line: privatize --oracle → design --reports → privatize MECHANISM → estimate --first-cohort ----------
def _cli(capsys, *argv):
    from pml_design.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _write(path, values):
    import csv

    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "country"])
        w.writerows([i, v] for i, v in enumerate(values))
    return path


def _read(path, column="country"):
    import csv

    with path.open(newline="") as fh:
        return [row[column] for row in csv.DictReader(fh)]


@pytest.mark.parametrize("flags", [["--oracle", "hr", "--ldp-epsilon", "1"],
                                   ["--oracle", "ss", "--ldp-epsilon", "0.5", "--k", "2"]], ids=["hr", "ss"])
def test_cli_round_trip_and_refusals(capsys, tmp_path, flags):
    import shutil

    cats, p3 = ["A", "B", "C"], np.array([0.5, 0.3, 0.2])
    rng = np.random.default_rng(8)
    one = _write(tmp_path / "cohort1.csv", np.array(cats)[rng.choice(3, 4000, p=p3)])
    two = _write(tmp_path / "cohort2.csv", np.array(cats)[rng.choice(3, 6000, p=p3)])
    rep, mech_path, priv = tmp_path / "reports1.csv", tmp_path / "mech.json", tmp_path / "private2.csv"
    steps = [["privatize", *flags, "--categories", "A,B,C", "--csv", one, "--column", "country", "-o", rep, "--seed", 1],
             ["design", "--reports", rep, "--column", "country", *flags, "--categories", "A,B,C", "--epsilon", 1,
              "--delta", "1e-6", "--allow-zero", "--time-limit", 30, "--no-progress", "-o", tmp_path / "mech"],
             ["privatize", mech_path, "--csv", two, "--column", "country", "-o", priv, "--seed", 2]]
    for argv in steps:
        code, _, err = _cli(capsys, *argv)
        assert code == 0, err
    code, out, err = _cli(capsys, "estimate", mech_path, "--csv", priv, "--column", "country", "--first-cohort", rep,
                          "--json")
    assert code == 0, err
    res = json.loads(out)
    assert set(res) == {"categories", "estimate", "ci_low", "ci_high", "n", "level", "method", "column", "input",
                        "mechanism", "identifiable", "report_counts", "n_first", "n_second", "first_cohort", "seconds",
                        "fit"}
    assert res["n"] == 10_000 and res["n_first"] == 4000 and res["n_second"] == 6000 and res["categories"] == cats
    assert res["method"] == "combined-mle" and res["first_cohort"]["column"] == "country"
    # the same as the library from the two files (the reports parsed here, not by the command)
    mech = pml.load_mechanism(mech_path)
    oracle = pml.hadamard_response(3, 1.0) if flags[1] == "hr" else pml.subset_selection(3, 0.5, k=2)
    cells = _read(rep)
    r1 = (np.array([int(c) for c in cells]) if flags[1] == "hr"
          else np.array([[cats.index(x) for x in c.split("+")] for c in cells]))
    lib = combined_estimate(oracle=oracle, mechanism=mech, first_reports=r1, second_reports=_read(priv))
    np.testing.assert_allclose(res["estimate"], lib.estimate, atol=1e-12)
    np.testing.assert_allclose(res["ci_high"], lib.ci_high, atol=1e-12)
    # "fit": the test of one distribution for both cohorts (the library's), and the second cohort's own fit test,
    # which is estimate --json's "fit" without --first-cohort
    assert res["fit"]["df"] == 2 and res["fit"]["p_value"] > 1e-6 and "second_cohort" in res["fit"]
    assert res["fit"]["statistic"] == pytest.approx(lib.fit.statistic, rel=1e-6, abs=1e-9)
    code, out, err = _cli(capsys, "estimate", mech_path, "--csv", priv, "--column", "country", "--json")
    alone = json.loads(out)
    assert res["fit"]["second_cohort"]["df"] == alone["fit"]["df"]
    assert res["fit"]["second_cohort"]["cells"] == alone["fit"]["cells"]
    assert res["fit"]["second_cohort"]["statistic"] == pytest.approx(alone["fit"]["statistic"], rel=1e-6, abs=1e-9)
    assert np.sum(np.subtract(res["ci_high"], res["ci_low"])) < np.sum(np.subtract(alone["ci_high"], alone["ci_low"]))
    code, out, err = _cli(capsys, "estimate", mech_path, "--csv", priv, "--column", "country", "--first-cohort", rep)
    assert code == 0 and "combined by maximum likelihood: n1=4000 first-cohort reports" in out, err
    # refusals: one line, the flag named
    shutil.copy(rep, tmp_path / "bare.csv")  # no provenance file
    other = tmp_path / "other_order.csv"
    code, _, err = _cli(capsys, "privatize", *flags, "--categories", "B,A,C", "--csv", one, "--column", "country",
                        "-o", other, "--seed", 3)
    assert code == 0, err
    changed = tmp_path / "changed.csv"
    shutil.copy(rep, changed)
    shutil.copy(str(rep) + ".ldp.json", str(changed) + ".ldp.json")
    with changed.open("a") as fh:
        fh.write(f"4000,{_read(rep)[0]}\n")
    base = ["estimate", mech_path, "--csv", priv, "--column", "country"]
    for extra, needle in [
        (["--first-cohort", other], "argument --first-cohort: its reports were made in another order than MECHANISM's"),
        (["--first-cohort", tmp_path / "bare.csv"], "argument --first-cohort: " + str(tmp_path / "bare.csv")
         + " has no provenance file"),
        (["--first-cohort", changed], "argument --first-cohort: " + str(changed) + " changed since privatize --oracle"),
        (["--first-cohort", rep, "--first-cohort-column", "id"], "argument --first-cohort-column: does not match"),
        (["--first-cohort", rep, "--method", "inversion"], "argument --method: only ibu"),
        (["--first-cohort-column", "country"], "argument --first-cohort-column: only with --first-cohort"),
    ]:
        code, out, err = _cli(capsys, *base, *extra)
        lines = err.strip().splitlines()
        assert code == 2 and out == "" and len(lines) == 1 and needle in lines[0], (extra, err)
