"""Deployment: mechanism files (save / load / tamper / re-certify), labelled designs, pandas and Dask."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import pml_design as pd
from pml_design.deploy import content_hash

pandas = pytest.importorskip("pandas")

COLOURS = np.array(["red", "green", "blue"])
P = np.array([0.6, 0.3, 0.1])


@pytest.fixture(scope="module")
def labelled():
    x = COLOURS[np.random.default_rng(0).choice(3, size=3000, p=P)]
    return x, pd.design_from_samples(x, epsilon=1.0, delta=1e-3, utility="map_accuracy")


# --- design_from_samples with labels --------------------------------------------------------------------------
def test_design_from_labels_matches_design_from_codes(labelled):
    x, est = labelled
    assert est.labels == ("blue", "green", "red")  # sorted
    codes = np.searchsorted(["blue", "green", "red"], x)
    ref = pd.design_from_samples(codes, 3, 1.0, 1e-3, utility="map_accuracy")
    np.testing.assert_allclose(est.p_hat, ref.p_hat)
    np.testing.assert_allclose(est.result.matrix, ref.result.matrix)
    assert ref.labels is None and est.mechanism.labels == est.labels


def test_design_from_series_categorical_and_categories():
    x = pandas.Series(COLOURS[np.random.default_rng(1).choice(3, 2000, p=P)])
    cat = x.astype(pandas.CategoricalDtype(["red", "green", "blue", "pink"]))
    est = pd.design_from_samples(cat, epsilon=1.0, delta=1e-3, allow_zero=True)
    assert est.labels == ("red", "green", "blue", "pink") and est.p_hat[3] == 0
    est2 = pd.design_from_samples(x, epsilon=1.0, delta=1e-3, categories=["red", "green", "blue"])
    np.testing.assert_allclose(est2.p_hat, [(x == c).mean() for c in ["red", "green", "blue"]])
    est3 = pd.design_from_samples({"a": 600, "b": 300, "c": 100}, epsilon=1.0, delta=1e-3, counts=True)
    assert est3.labels == ("a", "b", "c") and est3.m == 1000


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"data": ["a", "b", None], "epsilon": 1, "delta": 0.1}, ValueError, "missing"),
        ({"data": ["a", "b", "c"], "epsilon": 1, "delta": 0.1, "categories": ["a", "b"]}, ValueError, r"'c'"),
        ({"data": ["a", "b"] * 50, "support_size": 3, "epsilon": 1, "delta": 0.1}, ValueError, "support_size=3"),
        ({"data": ["a", "b"] * 50, "epsilon": 1, "delta": 1.0}, ValueError, "vacuous"),
        ({"data": ["a", "b"] * 50, "epsilon": 710, "delta": 0.1}, ValueError, "epsilon must be <= 700"),
        ({"data": ["a", "b"] * 50, "delta": 0.1}, TypeError, "epsilon"),
        ({"data": ["a"] * 50, "epsilon": 1, "delta": 0.1}, ValueError, "at least 2 categories"),
    ],
)
def test_design_from_samples_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        pd.design_from_samples(**kwargs)


# --- mechanism files ------------------------------------------------------------------------------------------
def test_save_load_roundtrip_recertifies(labelled, tmp_path):
    _, est = labelled
    path = est.save(tmp_path / "m.json")
    doc = json.loads(path.read_text())
    for key in ("matrix", "categories", "epsilon", "delta", "radius", "p_hat", "m", "utility_name",
                "certified_epsilon", "library_version", "sha256"):
        assert key in doc, key
    assert doc["delta"] == 1e-3 and doc["m"] == 3000 and doc["library_version"] == pd.__version__
    mech = pd.load_mechanism(path)
    assert mech.labels == est.labels
    np.testing.assert_array_equal(mech.matrix, est.result.matrix)
    # independent re-certification over the stored ball
    assert pd.leakage_capacity(mech.matrix, pd.L1Ball(doc["p_hat"], doc["radius"])) <= 1.0 + 1e-12
    assert mech.metadata["certified_epsilon"] == est.result.certified_epsilon
    # DesignResult.save with a design over another set (LDP: the simplex) and integer codes
    ldp = pd.optimal_ldp([0.5, 0.3, 0.2], 1.0)
    m2 = pd.load_mechanism(ldp.save(tmp_path / "ldp.json"))
    assert m2.labels == (0, 1, 2) and m2.metadata["delta"] is None
    np.testing.assert_array_equal(m2.privatize([0, 1, 2], rng=1), ldp.mechanism.privatize([0, 1, 2], rng=1))


def _rewrite(path, mutate, rehash):
    doc = json.loads(path.read_text())
    mutate(doc)
    if rehash:
        doc["sha256"] = content_hash(doc)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    ("mutate", "rehash", "match"),
    [
        (lambda d: d["matrix"][0].__setitem__(0, d["matrix"][0][0] + 1e-9), False, "content hash mismatch"),
        (lambda d: d.__setitem__("epsilon", 5.0), False, "content hash mismatch"),
        # a forged hash does not help: the guarantee is recomputed
        (lambda d: d.__setitem__("epsilon", 0.5), True, "re-certification failed"),
        (lambda d: d.__setitem__("certified_epsilon", 0.1), True, "re-certification failed"),
        (lambda d: d["matrix"][0].__setitem__(0, d["matrix"][0][0] + 0.1), True, "row-stochastic"),
        (lambda d: d.__setitem__("categories", ["a", "a", "b"]), True, "distinct"),
        (lambda d: d.__setitem__("categories", ["a", "b"]), True, "3 entries"),
        (lambda d: d.__setitem__("format_version", 99), True, "format_version"),
        (lambda d: d.__setitem__("format", "other"), True, "not a pml-design mechanism file"),
    ],
)
def test_load_refuses_tampered_or_broken_files(labelled, tmp_path, mutate, rehash, match):
    path = labelled[1].save(tmp_path / "m.json")
    _rewrite(path, mutate, rehash)
    with pytest.raises(ValueError, match=match) as info:
        pd.load_mechanism(path)
    assert str(path) in str(info.value)


def test_load_refuses_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        pd.load_mechanism(tmp_path / "nope.json")
    for name, content, match in [("empty.json", b"", "empty"), ("bin.json", b"\xff\xfe\x00\x01", "not a text"),
                                 ("bad.json", b"{not json", "not valid JSON"), ("list.json", b"[1, 2]", "format")]:
        (tmp_path / name).write_bytes(content)
        with pytest.raises(pd.MechanismFileError, match=match):
            pd.load_mechanism(tmp_path / name)


def test_save_refuses_non_json_labels_and_leaves_no_file(tmp_path):
    res = pd.design([0.5, 0.5], 1.0).with_labels([(1, 2), (3, 4)])
    with pytest.raises(TypeError, match="labels"):
        res.save(tmp_path / "m.json")
    assert list(tmp_path.iterdir()) == []


# --- pandas and Dask ------------------------------------------------------------------------------------------
def test_privatize_dataframe_pandas_equals_mechanism_privatize(labelled):
    _, est = labelled
    x = COLOURS[np.random.default_rng(5).choice(3, size=2000, p=P)]  # records apart from the design records
    df = pandas.DataFrame({"id": np.arange(x.size), "colour": x})
    out = pd.privatize_dataframe(df, "colour", est, rng=4)
    assert list(out.columns) == ["id", "colour"] and (df["colour"] == x).all()  # input untouched
    np.testing.assert_array_equal(out["colour"].to_numpy(dtype=object), est.mechanism.privatize(x, rng=4))
    cat = df.astype({"colour": "category"})
    out_cat = pd.privatize_dataframe(cat, "colour", est, rng=4, output_column="private")
    assert isinstance(out_cat["private"].dtype, pandas.CategoricalDtype)
    np.testing.assert_array_equal(out_cat["private"].astype(object), out["colour"].astype(object))
    with pytest.raises(ValueError, match="column 'nope'"):
        pd.privatize_dataframe(df, "nope", est)
    with pytest.raises(ValueError, match="does not know"):
        pd.privatize_dataframe(pandas.DataFrame({"colour": ["red", "purple"]}), "colour", est)
    with pytest.raises(TypeError, match="DataFrame"):
        pd.privatize_dataframe(x, "colour", est)


def test_privatize_dask_dataframe_on_a_local_cluster(labelled, tmp_path):
    distributed = pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(7)
    x = COLOURS[rng.choice(3, size=60_000, p=P)]
    mech = pd.load_mechanism(labelled[1].save(tmp_path / "m.json"))
    ddf = dd.from_pandas(pandas.DataFrame({"id": np.arange(x.size), "colour": x}), npartitions=4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as lc, \
            distributed.Client(lc):
        a = pd.privatize_dataframe(ddf, "colour", mech, rng=11).compute()
        b = pd.privatize_dataframe(ddf, "colour", str(tmp_path / "m.json"), rng=11).compute()
        c = pd.privatize_dataframe(ddf, "colour", mech, rng=12).compute()
    np.testing.assert_array_equal(a["colour"], b["colour"])  # reproducible for a seed and partitioning
    assert (a["colour"] != c["colour"]).any()
    # partition i uses SeedSequence(seed, spawn_key=(i,)): recompute partition 2 by hand
    part = ddf.get_partition(2).compute()
    by_hand = mech.privatize(part["colour"].to_numpy(), rng=np.random.default_rng(np.random.SeedSequence(11, spawn_key=(2,))))
    np.testing.assert_array_equal(a.loc[part.index, "colour"].to_numpy(dtype=object), by_hand)
    # distribution per input category (chi-square), with power against a slightly wrong row
    codes_in = mech.encode(x)
    codes_out = pandas.Index(mech.output_labels).get_indexer(a["colour"].to_numpy(dtype=object))
    assert (codes_out >= 0).all()
    for i in range(3):
        obs = np.bincount(codes_out[codes_in == i], minlength=mech.n_outputs)
        exp = mech.matrix[i] * obs.sum()
        keep = exp > 0
        assert obs[~keep].sum() == 0  # impossible outputs never appear
        if keep.sum() > 1:
            assert stats.chisquare(obs[keep], exp[keep]).pvalue > 1e-3
    i = 2  # the most frequent category ("red")
    obs = np.bincount(codes_out[codes_in == i], minlength=mech.n_outputs)
    row = mech.matrix[i]
    top, other = np.argsort(row)[-1], np.argsort(row)[-2]
    wrong = row.copy()
    wrong[top] -= 0.03
    wrong[other] += 0.03
    keep = wrong > 0
    assert stats.chisquare(obs[keep], wrong[keep] * obs.sum()).pvalue < 1e-3


def _reference_hash(doc: dict) -> str:
    import hashlib

    body = {k: v for k, v in doc.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 9), st.integers(0, 2**32 - 1), st.sampled_from(["few", "many", "odd"]))
def test_the_fast_matrix_text_hashes_as_json_does(n, m, seed, kind):
    """The matrix rows are formatted once (each distinct value once where few are) and spliced into both the
    hashed canonical text and the file: that text must be byte for byte ``json.dumps``'s, for any floats
    (negative zero, subnormals, integers as floats, 17-digit values), or files written before would not load."""
    from pml_design.deploy.matrix_text import _document_text

    rng = np.random.default_rng(seed)
    if kind == "few":
        W = rng.choice([0.0, 0.25, 1 / 3, 1.0], size=(n, m))
    elif kind == "many":
        W = rng.random((n, m))
    else:
        W = rng.choice([-0.0, 5e-324, 1e-300, 2.0, 0.1 + 0.2, 1e16, 123456789.0], size=(n, m))
    doc = {"format": "x", "categories": ["a", "é"][: min(n, 2)], "output_labels": list(range(m)), "z": {"k": [1.5]}}
    ref = _reference_hash({**doc, "matrix": W.tolist()})
    assert content_hash({**doc, "matrix": W.tolist()}) == ref
    text = _document_text(dict(doc), W)
    parsed = json.loads(text)
    assert parsed["sha256"] == ref and parsed["matrix"] == W.tolist()
    assert list(parsed) == ["format", "categories", "output_labels", "matrix", "z", "sha256"]
    assert content_hash(parsed) == ref
    assert content_hash({**doc, "matrix": [[int(v) for v in r] for r in W.tolist()]}) == _reference_hash(
        {**doc, "matrix": [[int(v) for v in r] for r in W.tolist()]})  # ints: the generic path, as json writes them


def test_a_wide_mechanism_file_is_one_row_per_line(tmp_path):
    """A review: a 786 × 13 038 design took 29 s to save (229 MB, one matrix entry per line, by json's pure-Python
    indenting encoder). Rows are now one line each, the file loads and verifies."""
    res = pd.design(pd.L1Ball(np.full(12, 1 / 12), 0.01), 1.0, utility="frequency_estimation",
                    solver_options={"time_limit": 2})
    path = res.save(tmp_path / "m.json")
    lines = path.read_text().splitlines()
    rows = [ln for ln in lines if ln.startswith("    [")]
    assert len(rows) == 12 and all(ln.rstrip(",").count(",") == res.matrix.shape[1] - 1 for ln in rows)
    assert json.loads(path.read_text())["matrix"] == res.matrix.tolist()  # exact
    mech = pd.load_mechanism(path)  # verifies the hash and the certificate
    np.testing.assert_allclose(mech.matrix, res.matrix, rtol=1e-14)  # (rows renormalised on load)
