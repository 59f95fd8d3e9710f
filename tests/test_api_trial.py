"""What a new user's trial of the Python API found (session 21), each checked against the behaviour it had.

First of all: counts in a pandas Series (or a mapping) are read by their index, never by position.
``pd.Series(codes).value_counts()`` sorts by count, so its positions are not the codes; read by position,
``design_from_samples(vc, 3, counts=True)`` designed for a permuted P̂ and the mechanism leaked 3.35 under the true
distribution where ε = 1 was certified (and ``design_from_report_counts``, ``Mechanism.estimate(counts=True)`` and
``combined_estimate`` permuted the same way, silently). Then: read-only certified arrays, no raw record in a message,
named errors instead of numpy / pandas / json ones, the design records refused in any order, the gap warning at the
user's line, the DisclosureWarning, and a statistic checked before its DP release.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pml_design as pml
from pml_design.cohort import design_from_report_counts
from pml_design.mechanisms.labels import counts_by_index

CODES = np.array([0] * 500 + [1] * 50 + [2] * 20)
TRUTH = np.bincount(CODES) / CODES.size


def test_design_from_samples_reads_a_series_of_counts_by_its_index():
    vc = pd.Series(CODES).value_counts(ascending=True)  # index [2, 1, 0]: codes, or row numbers? refused
    with pytest.raises(ValueError, match=r"ambiguous .*series.to_numpy\(\) if its positions do") as err:
        pml.design_from_samples(vc, 3, epsilon=1.0, delta=1e-3, counts=True)
    assert "[2, 1, 0]" not in str(err.value)
    rows = pd.DataFrame({"code": [1, 2, 0], "count": [50, 20, 500]}).sort_values("code")["count"]  # index [2, 0, 1]
    with pytest.raises(ValueError, match="ambiguous"):  # a review: read as codes, this leaked 2.43 for ε = 1
        pml.design_from_samples(rows, 3, epsilon=1.0, delta=1e-3, counts=True)
    e = pml.design_from_samples(vc.sort_index(), 3, epsilon=1.0, delta=1e-3, counts=True)  # index 0, 1, 2: fine
    np.testing.assert_allclose(e.p_hat, TRUTH)
    assert pml.leakage(e.result.matrix, TRUTH).max() <= 1.0 + 1e-9
    short = {0: 500, 2: 20}  # a mapping's keys are explicit; a category it omits counts 0
    np.testing.assert_allclose(counts_by_index(short, 3, None, "x"), [500, 0, 20])
    with pytest.raises(ValueError, match=r"must hold the codes 0 … 2 \(counts keyed by label: pass categories\); its "
                                         r"values are not shown") as err:
        pml.design_from_samples(pd.Series({"pos": 5, "neg": 7}), 3, 1.0, 1e-3, counts=True)
    assert "pos" not in str(err.value)


def test_report_counts_and_estimate_read_the_index():
    rng = np.random.default_rng(0)
    x = rng.choice(3, 20_000, p=[0.7, 0.2, 0.1])
    g = pml.grr(3, 2.0)
    reports = g.privatize(x, rng=2)
    plain = design_from_report_counts(g.support_counts(reports), 20_000, g, 1.0, 1e-6)
    by_code = pd.Series(reports).value_counts().sort_index()
    assert np.array_equal(design_from_report_counts(by_code, 20_000, g, 1.0, 1e-6).p_hat, plain.p_hat)
    m = pml.Mechanism([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]], labels=["a", "b", "c"])
    r = m.privatize(np.array(["a"] * 700 + ["b"] * 200 + ["c"] * 100), rng=1)
    want = m.estimate(r)
    by_label = pd.Series(r).value_counts(ascending=True)  # index = output labels
    np.testing.assert_allclose(m.estimate(by_label, counts=True), want)
    np.testing.assert_allclose(m.estimate(dict(by_label), counts=True), want)  # a mapping too (was a raw TypeError)
    codes = {m.output_labels.index(k): v for k, v in by_label.items()}
    np.testing.assert_allclose(m.estimate(codes, counts=True), want)
    with pytest.raises(ValueError, match=r"reports \(counts=True\) must be one non-negative integer per output"):
        m.estimate(["x", "y", "z"], counts=True)
    swapped = pml.Mechanism([[0.8, 0.2], [0.2, 0.8]], labels=[1, 0])  # reviews: integer labels in another order
    np.testing.assert_allclose(swapped.estimate(np.array([700, 300]), counts=True), [5 / 6, 1 / 6], atol=1e-6)
    with pytest.raises(ValueError, match="ambiguous"):  # the default index: positions, or the labels 0 and 1?
        swapped.estimate(pd.Series([700, 300]), counts=True)
    with pytest.raises(ValueError, match="ambiguous"):
        swapped.estimate({0: 700, 1: 300}, counts=True)  # a key could be a code or a label


def test_combined_estimate_reads_the_second_counts_by_index():
    rng = np.random.default_rng(3)
    g, mech = pml.grr(3, 1.0), pml.Mechanism(pml.grr(3, 1.5).matrix)
    first = g.privatize(rng.choice(3, 3000, p=[0.6, 0.3, 0.1]), rng=rng)
    second = mech.privatize(rng.choice(3, 5000, p=[0.6, 0.3, 0.1]), rng=rng)
    by_count = pd.Series(second).value_counts(ascending=True)
    with pytest.raises(ValueError, match="second_counts: counts whose index is integers .* ambiguous"):
        pml.combined_estimate(oracle=g, mechanism=mech, first_reports=first, second_counts=by_count)
    a = pml.combined_estimate(oracle=g, mechanism=mech, first_reports=first, second_reports=second)
    b = pml.combined_estimate(oracle=g, mechanism=mech, first_reports=first,
                              second_counts=by_count.reindex(range(mech.n_outputs), fill_value=0))
    np.testing.assert_allclose(a.estimate, b.estimate, atol=1e-9)


def test_counts_by_index_edges():
    assert counts_by_index([3, 4], 2, None, "x") == [3, 4]  # not a Series: unchanged
    assert counts_by_index(pd.Series([1, 2]), 2, None, "x").tolist() == [1, 2]  # the default index is the position
    assert counts_by_index(pd.Series([1, 2]), 2, ("b", "a"), "x").tolist() == [1, 2]  # also with labels
    with pytest.raises(ValueError, match="repeats a value"):
        counts_by_index(pd.Series([1, 2], index=[0, 0]), 2, None, "x")
    with pytest.raises(ValueError, match="codes 0 … 1"):
        counts_by_index(pd.Series([1, 2], index=[True, False]), 2, None, "x")  # booleans are not codes
    with pytest.raises(ValueError, match="ambiguous"):
        counts_by_index(pd.Series([1, 2], index=[1, 0]), 2, ("a", "b"), "x")  # integers, labels or not
    assert counts_by_index(pd.Series([True, False]), 2, None, "x").dtype == bool  # the caller refuses the values


def test_certified_arrays_are_read_only():
    """A new user's trial "tidied" ``result.matrix`` in place: the certificate stayed while privatize used the change."""
    codes = np.repeat(np.arange(4), [50, 30, 15, 5])
    e = pml.design_from_samples(codes, 4, 1.0, 1e-3, utility="frequency_estimation")
    res = e.result
    for arr in (res.matrix, res.prior, e.p_hat, res.uncertainty.center, res.mechanism.matrix):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 0
    mine = np.array([0.5, 0.5])
    pml.L1Ball(mine, 0.1)
    mine[0] = 0.4  # the caller's own array stays writable (the ball keeps a copy)


def test_estimate_on_raw_records_quotes_none_of_them():
    """A new user's trial: estimate() on unprivatized records quoted them ("e.g. ['hiv-', 'hiv+']"), privatize does not."""
    rng = np.random.default_rng(0)
    e = pml.design_from_samples(rng.choice(["hiv+", "hiv-", "unknown"], 2000, p=[0.2, 0.5, 0.3]),
                                epsilon=1.0, delta=1e-3, utility="frequency_estimation")
    mech = e.result.mechanism
    with pytest.raises(ValueError, match="raw records, not privatized reports") as err:
        mech.estimate(np.array(["hiv-"] * 9 + ["hiv+"]))
    assert "hiv" not in str(err.value) and "10" not in str(err.value)
    with pytest.raises(ValueError, match=r"e\.g\. \['typo'\]"):  # not a category: quoted as before
        mech.estimate(np.array([mech.output_labels[0], "typo"]))


def test_raw_exceptions_of_the_trial_are_named(tmp_path):
    """A new user's trial: numpy, pandas and json exceptions that named no argument."""
    with pytest.raises(ValueError, match=r"scale of shape \(2,\) does not broadcast against x of shape \(3,\)"):
        pml.laplace_mechanism(np.array([-1, 1, 1]), np.array([1.0, 2.0]), rng=1)
    with pytest.raises(ValueError, match=r"sigma of shape \(2,\) does not broadcast"):
        pml.gaussian_mechanism(np.array([-1, 1, 1]), np.array([1.0, 2.0]), rng=1)
    m = pml.Mechanism([[0.8, 0.2], [0.3, 0.7]], labels=["a", "b"])
    with pytest.raises(ValueError, match="column 'd' names 2 columns"):
        pml.privatize_dataframe(pd.DataFrame([["a", "b"]], columns=["d", "d"]), "d", m)
    e = pml.design_from_samples(np.array([0, 1] * 100), 2, 1.0, 1e-3)
    with pytest.raises(TypeError, match=r"extra\['note'\] must be JSON data"):
        e.save(tmp_path / "x.json", extra={"note": object()})
    assert not list(tmp_path.iterdir())  # nothing written
    with pytest.raises(TypeError, match="path must be a file path"):
        pml.load_mechanism(None)


def test_privatize_dataframe_refuses_the_design_records_reordered(tmp_path):
    """A new user's trial shuffled the design records past the fingerprint (the values in order), and privatized
    them through ``result.mechanism``, which carried no fingerprint."""
    vals = np.random.default_rng(0).choice(["a", "b", "c"], 3000, p=[0.5, 0.3, 0.2])
    e = pml.design_from_samples(vals, epsilon=1.0, delta=1e-3)
    mech = pml.load_mechanism(e.save(tmp_path / "guard.json"))
    df = pd.DataFrame({"device": vals})
    for frame, m in [(df, mech), (df.sample(frac=1, random_state=1), mech), (df, e.result.mechanism),
                     (df.sample(frac=1, random_state=2), e)]:
        with pytest.raises(ValueError, match="holds the records the mechanism was designed on"):
            pml.privatize_dataframe(frame, "device", m)
    other = pd.DataFrame({"device": np.random.default_rng(1).choice(["a", "b", "c"], 3000, p=[0.5, 0.3, 0.2])})
    assert len(pml.privatize_dataframe(other, "device", mech, rng=1)) == 3000  # other records of the same size pass


def test_the_gap_warning_points_at_the_users_line():
    """A new user's trial: the gap warning pointed at pml_design/pipeline.py whatever the entry point."""
    with pytest.warns(pml.PMLDesignWarning) as rec:
        pml.design_from_samples(np.array([0, 1, 2, 3, 4] * 50), 5, 1.0, 1e-3, utility="frequency_estimation",
                                solver_options={"time_limit": 1e-6})
    assert [w.filename for w in rec if issubclass(w.category, pml.PMLDesignWarning)] == [__file__]


def test_a_design_that_singles_out_inputs_warns():
    """A new user's trial: the mutual-information default released 'alpha' exactly (its own output), silently."""
    vals = np.random.default_rng(0).choice(["zeta", "alpha", "mid"], 3000, p=[0.2, 0.5, 0.3])
    with pytest.warns(pml.DisclosureWarning, match=r"reveal it for 'alpha' \(100 % of its records\)") as rec:
        e = pml.design_from_samples(vals, epsilon=1.0, delta=1e-3)
    assert [w.filename for w in rec if w.category is pml.DisclosureWarning] == [__file__]
    single = [d for d in e.result.disclosure() if d["singles_out"] is not None]
    assert {d["singles_out"] for d in single} == {"alpha"}  # the warning names what disclosure() lists
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", pml.DisclosureWarning)  # none where no output singles out an input
        pml.design_from_samples(vals, epsilon=0.3, delta=1e-3, utility="frequency_estimation")


def test_a_bad_statistic_is_refused_before_the_release():
    """A new user's trial: histogram_statistic ran the DP release first (spending ε), then refused the statistic
    with a list that left out 'supp'."""
    from unittest import mock

    from pml_design.flexible import statistics

    with mock.patch.object(statistics, "bucket_hist", side_effect=AssertionError("released")), \
            pytest.raises(ValueError, match="'max', 'min', 'supp', 'max_k', 'mode', got 'bad'"):
        statistics.histogram_statistic(np.array([1, 2, 3]), "bad", 0.1, 1.0, 1.0)


def test_counts_by_index_what_a_second_review_found():
    """Booleans and floats are labels, not positions; integer labels that cannot be codes are read as labels; a
    sorted index without its last categories fills them with 0; a Categorical's unused categories do not hide
    reordered design records (session 21, a second review)."""
    assert counts_by_index(pd.Series([5, 7], index=[False, True]), 2, (True, False), "x").tolist() == [7, 5]
    assert counts_by_index(pd.Series([5, 7], index=[0.0, 1.0]), 2, (1.0, 0.0), "x").tolist() == [7, 5]
    assert counts_by_index(pd.Series([5, 7, 9], index=[20, 18, 19]), 3, (18, 19, 20), "x").tolist() == [7, 9, 5]
    assert counts_by_index({18: 1, 20: 3}, 3, (18, 19, 20), "x").tolist() == [1, 0, 3]
    for short in (pd.Series([5, 7]), pd.Series([5, 7], index=[0, 2])):  # codes, or row numbers after a filter?
        with pytest.raises(ValueError, match=r"integers other than 0 … 2 in order are ambiguous"):
            counts_by_index(short, 3, None, "x")
    assert counts_by_index({0: 5, 2: 7}, 3, None, "x").tolist() == [5, 0, 7]  # a mapping's keys are explicit
    for labels in ((1, 0), (2, 0, 1)):  # a third review: the default index read by position against integer labels
        with pytest.raises(ValueError, match="ambiguous"):
            counts_by_index(pd.Series(range(10, 10 + len(labels))), len(labels), labels, "x")
    assert counts_by_index(pd.Series([1, 2, 3]), 3, (18, 19, 20), "x").tolist() == [1, 2, 3]  # no label reading
    vals = np.random.default_rng(0).choice(["A", "B", "C"], 2000, p=[0.5, 0.3, 0.2])
    e = pml.design_from_samples(vals, epsilon=1.0, delta=1e-3, utility="frequency_estimation")
    shuffled = pd.DataFrame({"x": pd.Categorical(np.random.default_rng(1).permutation(vals),
                                                 categories=["A", "B", "C", "Z"])})
    with pytest.raises(ValueError, match="holds the records the mechanism was designed on"):
        pml.privatize_dataframe(shuffled, "x", e, rng=1)
