"""design_from_samples(dp_epsilon=), design_from_reports and `pml-design design --dp-epsilon` (issue 22, items 3–4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pml_design as pml
from pml_design import priors as pr
from pml_design.cli import main
from pml_design.estimation import l1_radius, prior_radius

P4 = np.array([0.4, 0.3, 0.2, 0.1])
# seeded DP noise warns (tested in test_seeded_dp_noise_warns_and_the_file_says_so); the other tests seed it freely
pytestmark = pytest.mark.filterwarnings("ignore:rng=.*seeded generator:UserWarning")


@pytest.fixture(scope="module")
def samples():
    return np.random.default_rng(0).choice(4, 5000, p=P4)


# ----------------------------------------------------------------------------------------------- DP P̂
def test_design_from_samples_dp(samples):
    est = pml.design_from_samples(samples, 4, 1.0, 1e-6, dp_epsilon=1.0, rng=5)
    assert est.prior_source == "dp"
    p = est.prior_params
    assert p["dp_epsilon"] == 1.0 and p["delta_ball"] + p["delta_total"] == pytest.approx(1e-6)
    assert est.radius == prior_radius("dp", 4, 1e-6, p)  # re-derivable from what is stored
    assert est.m == p["noisy_total"] - pr.dp_count_margin(4, 1.0, p["delta_total"])
    assert l1_radius(5000, 4, 1e-6) < est.radius < 1.05 * l1_radius(5000, 4, 1e-6)
    assert np.abs(est.p_hat - np.bincount(samples, minlength=4) / 5000).sum() < 0.01
    assert est.result.certified_epsilon <= 1.0 + 1e-9
    assert est.result.uncertainty.radius == est.radius
    s = est.statement()
    assert "1-DP for the design records" in s and "(1, 1e-06)-PML for every released record" in s
    assert est.result.info["prior_source"] == "dp" and est.result.info["m"] == est.m
    # the default sampler is OpenDP's (no seed): same structure
    est2 = pml.design_from_samples({"a": 2000, "b": 3000}, None, 1.0, 1e-6, counts=True, dp_epsilon=0.5,
                                   categories=["a", "b"])
    assert est2.labels == ("a", "b") and est2.prior_source == "dp" and est2.p_hat[0] == pytest.approx(0.4, abs=0.01)
    public = pml.design_from_samples(samples, 4, 1.0, 1e-6)
    assert public.prior_source == "public sample" and public.prior_params == {"m": 5000}
    assert public.radius == prior_radius("public sample", 4, 1e-6, public.prior_params)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1"])
def test_design_from_samples_bad_dp_epsilon(samples, bad):
    with pytest.raises((ValueError, TypeError), match="dp_epsilon"):
        pml.design_from_samples(samples, 4, 1.0, 1e-6, dp_epsilon=bad)


def test_design_from_samples_dp_needs_public_categories_and_enough_records():
    with pytest.raises(ValueError, match="public list of categories"):
        pml.design_from_samples(["a", "b", "a"] * 100, None, 1.0, 1e-3, dp_epsilon=1.0)
    with pytest.raises(ValueError, match="no record|rules out no distribution|noisy count <= 0"):
        pml.design_from_samples([3, 2, 1, 4], 4, 1.0, 1e-6, counts=True, dp_epsilon=0.1, rng=0)
    # counts keyed by label and a pandas Categorical too: their keys / categories are read from the data (a review:
    # a value held by one record, "RARE_VALUE_OF_ALICE", was published in the labels)
    for data, kw in ((pd_categorical(), {}), ({"x": 300, "RARE": 1}, {"counts": True})):
        with pytest.raises(ValueError, match="public list of categories"):
            pml.design_from_samples(data, None, 1.0, 1e-3, dp_epsilon=2.0, allow_zero=True, **kw)
    est = pml.design_from_samples(pd_categorical(), None, 1.0, 1e-3, dp_epsilon=2.0, rng=1, allow_zero=True,
                                  categories=["x", "y", "z"])
    assert est.labels == ("x", "y", "z")
    # mistakes in the public list are named as such (they were reported as "data hold values outside categories")
    for bad, needle in ((["x", "x", "y"], "categories"), ([" x", "x", "y"], "categories"), (["x", None], "categories")):
        with pytest.raises((ValueError, TypeError), match=needle) as info:
            pml.design_from_samples(pd_categorical(), None, 1.0, 1e-3, dp_epsilon=2.0, categories=bad)
        assert "outside" not in str(info.value)


def test_dp_error_names_no_protected_value():
    with pytest.raises(ValueError, match="outside categories") as info:
        pml.design_from_samples(["a"] * 3000 + ["b"] * 2000 + ["secret"], None, 1.0, 1e-3, dp_epsilon=1.0,
                                categories=["a", "b"], rng=0)
    assert "secret" not in str(info.value) and not any(ch.isdigit() for ch in str(info.value))


def pd_categorical():
    import pandas as pd

    return pd.Categorical(["x"] * 3000 + ["y"] * 2000, categories=["x", "y", "z"])


def _forge(path, mutate):
    """Change a saved file and rewrite its statement and hash as a forger would: only re-derivation catches it."""
    from pml_design.deploy.file import content_hash
    from pml_design.pipeline import source_statement

    doc = json.loads(path.read_text())
    mutate(doc)
    doc["statement"] = source_statement(doc["prior_source"], doc["certified_epsilon"], doc["delta"], doc["radius"],
                                        doc["m"], doc["prior_params"])
    doc["sha256"] = content_hash(doc)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(("mutate", "match"), [
    (lambda d: d.__setitem__("m", 10 * d["m"]), "m \\(the lower bound"),
    (lambda d: d["prior_params"].__setitem__("neighbouring", "replace one record"), "prior_params.neighbouring"),
    (lambda d: d["prior_params"].pop("noise"), "prior_params.noise"),
    (lambda d: d["prior_params"].__setitem__("noisy_total", str(d["prior_params"]["noisy_total"])), "noisy_total"),
    (lambda d: d["prior_params"].__setitem__("noisy_total", d["prior_params"]["noisy_total"] + 0.7), "noisy_total"),
], ids=["m", "neighbouring", "noise", "total as text", "fractional total"])
def test_forged_dp_file_claims_are_refused(samples, tmp_path, mutate, match):
    path = pml.design_from_samples(samples, 4, 1.0, 1e-6, dp_epsilon=1.0, rng=5).save(tmp_path / "dp.json")
    pml.load_mechanism(path)
    _forge(path, mutate)
    with pytest.raises(pml.MechanismFileError, match=match):
        pml.load_mechanism(path)


def test_forged_ldp_report_count_is_refused(samples, tmp_path):
    oracle = pml.grr(4, 2.0)
    est = pml.design_from_reports(oracle.privatize(samples, rng=3), oracle, 1.0, 1e-3)
    path = est.save(tmp_path / "ldp.json")
    pml.load_mechanism(path)
    _forge(path, lambda d: d.__setitem__("m", 2 * d["m"]))
    with pytest.raises(pml.MechanismFileError, match="m \\(the number of the first cohort's reports\\)"):
        pml.load_mechanism(path)


# ------------------------------------------------------------------------------------------- LDP reports
@pytest.mark.parametrize("oracle", [pml.grr(4, 2.0), pml.subset_selection(4, 1.0, k=2)])
def test_design_from_reports(oracle, samples):
    x = np.tile(samples, 4)
    reports = oracle.privatize(x, rng=3)
    est = pml.design_from_reports(reports, oracle, 1.0, 1e-3, categories=["a", "b", "c", "d"])
    assert est.prior_source == "ldp reports" and est.m == x.size
    assert est.radius == prior_radius("ldp reports", 4, 1e-3, est.prior_params)
    assert est.prior_params["oracle"] == ("GRR" if oracle.name == "GRR" else "SS")
    assert np.allclose(est.p_hat, oracle.estimate(reports))  # P̂ is the oracle's projected estimate
    assert np.abs(est.p_hat - P4).sum() < est.radius
    assert est.labels == ("a", "b", "c", "d") and est.result.certified_epsilon <= 1.0 + 1e-9
    assert f"-LDP for the first cohort's m={x.size} reports" in est.statement()
    assert "design_from_reports" in pml.__all__


def test_design_from_reports_generic_pure_protocol(samples):
    """An oracle without a sharp bound here (OLH): shift, project, generic radius (HR and OUE: test_ldp_priors)."""
    oracle = pml.olh(4, 2.0)
    reports = oracle.privatize(np.tile(samples, 20), rng=1)
    est = pml.design_from_reports(reports, oracle, 1.0, 1e-2, allow_zero=True)
    assert set(est.prior_params) == {"oracle", "ldp_epsilon", "n_reports", "p_star", "q_star"}
    assert est.radius == pytest.approx(pr.ldp_generic_radius(4, oracle.gap, 100000, 1e-2))
    assert est.p_hat.sum() == pytest.approx(1.0)


def test_design_from_reports_bad_inputs(samples):
    grr, ss = pml.grr(4, 2.0), pml.subset_selection(4, 1.0, k=2)
    cases = [
        (ss.privatize(samples, rng=1), grr, "reports do not match the oracle GRR"),  # wrong oracle
        (grr.privatize(samples, rng=1), ss, "reports do not match the oracle SS"),
        (grr.privatize(samples, rng=1), pml.grr(3, 2.0), r"reports must lie in \[0, 3\)"),  # wrong alphabet
        (np.array([0.5, 1.0]), grr, "reports do not match"),
        (grr.privatize(samples[:20], rng=1), grr, "too few"),
    ]
    for reports, oracle, msg in cases:
        with pytest.raises(ValueError, match=msg) as info:
            pml.design_from_reports(reports, oracle, 1.0, 1e-6)
        assert "\n" not in str(info.value)
    with pytest.raises(TypeError, match="oracle must be a FrequencyOracle"):
        pml.design_from_reports([0, 1], "grr", 1.0, 1e-3)
    with pytest.raises(ValueError, match="categories has 3 entries"):
        pml.design_from_reports(grr.privatize(samples, rng=1), grr, 1.0, 1e-3, categories=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        pml.design_from_reports(grr.privatize(samples, rng=1), grr, 1.0, 1.0)


# ------------------------------------------------------------------------------------------------- CLI
def test_cli_design_dp_epsilon_end_to_end(capsys, tmp_path):
    counts = tmp_path / "counts.csv"
    counts.write_text("a,2000\nb,1500\nc,1000\nd,500\n")
    prefix = tmp_path / "mech"
    assert main(["design", "--counts", str(counts), "--epsilon", "1", "--delta", "1e-6", "--dp-epsilon", "1"]) == 2
    assert "--categories" in capsys.readouterr().err  # a counts file's labels may be what the data hold
    code = main(["design", "--counts", str(counts), "--epsilon", "1", "--delta", "1e-6", "--dp-epsilon", "1",
                 "--categories", "a,b,c,d", "--json", "-o", str(prefix)])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 0
    assert "note: this run drew a new 1-DP release of the design records' counts" in captured.err  # (reruns add up)
    assert "counts" not in out and out["prior_source"] == "dp"
    assert out["m"] < 5000 and out["radius"] == prior_radius("dp", 4, 1e-6, out["prior_params"])
    assert "1-DP for the design records" in out["statement"]
    doc = json.loads(prefix.with_suffix(".json").read_text())
    assert "counts" not in doc and doc["m"] == out["m"] and "1-DP for the design records" in doc["statement"]
    # a CSV column needs the public category list; values outside it are refused
    data = tmp_path / "d.csv"
    data.write_text("city\n" + "\n".join(["x"] * 3000 + ["y"] * 2000) + "\n")
    assert main(["design", "--csv", str(data), "--column", "city", "--epsilon", "1", "--delta", "1e-6",
                 "--dp-epsilon", "1"]) == 2
    assert "--categories" in capsys.readouterr().err
    assert main(["design", "--csv", str(data), "--column", "city", "--epsilon", "1", "--delta", "1e-6",
                 "--dp-epsilon", "1", "--categories", "x,y,z", "--allow-zero"]) == 0
    assert "1-DP estimate" in capsys.readouterr().out
    assert main(["design", "--csv", str(data), "--column", "city", "--epsilon", "1", "--delta", "1e-6",
                 "--dp-epsilon", "1", "--categories", "x,z"]) == 2
    err = capsys.readouterr().err
    assert "outside the list" in err and not any(ch.isdigit() for ch in err)  # no count of the protected records
    # a value that differs from a category only in whitespace is refused without quoting it (a review: the message
    # named the record's ' y'), while the same file without --dp-epsilon quotes it
    data.write_text("city\n" + "\n".join(["x"] * 3000 + ["y"] * 1999 + [" y"]) + "\n")
    assert main(["design", "--csv", str(data), "--column", "city", "--epsilon", "1", "--delta", "1e-6",
                 "--dp-epsilon", "1", "--categories", "x,y"]) == 2
    err = capsys.readouterr().err
    assert "surrounding whitespace" in err and "not shown" in err and "' y'" not in err and err.count("\n") == 1
    assert main(["design", "--csv", str(data), "--column", "city", "--epsilon", "1", "--delta", "1e-6"]) == 2
    assert "' y'" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc"])
def test_cli_bad_dp_epsilon_one_line(capsys, tmp_path, value):
    counts = tmp_path / "counts.csv"
    counts.write_text("a,20\nb,15\n")
    assert main(["design", "--counts", str(counts), "--epsilon", "1", "--delta", "1e-3", "--dp-epsilon", value,
                 "--categories", "a,b"]) == 2
    err = capsys.readouterr().err.strip()
    assert "argument --dp-epsilon" in err and err.count("\n") == 0
    assert main(["design", "--counts", str(counts), "--epsilon", "1", "--radius", "0.1", "--dp-epsilon", "1",
                 "--categories", "a,b"]) == 2
    assert "needs --delta" in capsys.readouterr().err


def test_readme_private_prior_section_runs(capsys):
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = text.split("## No public sample", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "1-DP for the design records" in out and "1-LDP for the first cohort's m=20000 reports" in out


def test_seeded_dp_noise_warns_and_the_file_says_so(samples, tmp_path):
    """A seed makes the DP noise removable (a review redrew it from default_rng(0) and got the exact counts back):
    it warns, and the mechanism file's noise and statement say so; without a seed neither does."""
    with pytest.warns(UserWarning, match="seeded generator"):
        est = pml.design_from_samples(samples, 4, 1.0, 1e-6, dp_epsilon=1.0, rng=0)
    assert est.prior_params["noise"] == pr.DP_NOISE_SEEDED and "seeded generator" in est.statement()
    mech = pml.load_mechanism(est.save(tmp_path / "seeded.json"))  # the loader accepts it and re-derives it
    assert "seeded generator" in json.loads((tmp_path / "seeded.json").read_text())["statement"]
    assert mech.n_inputs == 4
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = pml.design_from_samples(samples, 4, 1.0, 1e-6, dp_epsilon=1.0)
    assert plain.prior_params["noise"] == pr.DP_NOISE and "seeded" not in plain.statement()


def test_dp_release_edges(samples):
    """ε₀ too small for a float (a bare "math domain error" before), counts beyond OpenDP's 32-bit integers (refused
    quoting the count), and OpenDP's own privacy map never above the ε₀ stated."""
    for tiny in (1e-20, 1e-300):
        with pytest.raises(ValueError, match=r"dp_epsilon=.* is too small"):
            pml.design_from_samples(samples, 4, 1.0, 1e-6, dp_epsilon=tiny)
    with pytest.raises(ValueError, match="too small"):
        pr.dp_ball_radius(5000, 4, 1e-17, 1e-6)
    big = np.array([3_000_000_000, 5, 7])
    out = pr.dp_release_counts(big, 1.0)
    assert out.dtype == np.int64 and abs(int(out[0]) - 3_000_000_000) < 200
    assert pr.dp_release_counts(np.array([2**62 - 1, 0]), 1.0, rng=1)[0] >= 2**62 - 60  # exact limit (a review:
    # the float comparison refused counts above 2**62 − 256)
    with pytest.raises(ValueError) as info:
        pr.dp_release_counts([2**63 - 1, 1], 1.0)
    assert "9223372036854775807" not in str(info.value)
    with pytest.raises(ValueError) as info:
        pr.dp_release_counts([2.5, 1], 1.0)
    assert "2.5" not in str(info.value)
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for eps0 in (0.7, 3.0, 1 / 3, 1.0):  # 1/eps0 as the scale maps to 0.7000000000000001 at 0.7
        pr._opendp_discrete_laplace(np.array([10, 20]), eps0)
        space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
        assert dp.m.make_laplace(*space, scale=1.0 / eps0).map(1) >= eps0  # (the plain scale: at or above)
    # the nudged scale's map is at most eps0
    import math

    for eps0 in (0.7, 3.0, 1 / 3):
        scale = 1.0 / eps0
        space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
        while dp.m.make_laplace(*space, scale=scale).map(1) > eps0:
            scale = math.nextafter(scale, math.inf)
        assert scale > 1.0 / eps0  # the plain scale was above eps0 for these


def test_rng_without_dp_epsilon_warns_that_it_is_ignored(samples):
    with pytest.warns(UserWarning, match="rng is used only with dp_epsilon"):
        pml.design_from_samples(samples, 4, 1.0, 1e-6, rng=3, utility="map_accuracy")


def test_a_vacuous_dp_epsilon_warns(samples):
    with pytest.warns(UserWarning, match="exact counts in all but name"):
        pml.design_from_samples(samples, 4, 1.0, 1e-6, dp_epsilon=1e308, utility="map_accuracy")
