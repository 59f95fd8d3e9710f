"""Tests of the pml-design command line (in-process through main([...]); once through a subprocess)."""

from __future__ import annotations

import csv
import hashlib
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import pml_design as pd
from pml_design.cli import build_parser, find_benchmarks_dir, main, resolve_script

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def counts_file(tmp_path):
    p = tmp_path / "counts.csv"
    p.write_text("category,count\na,500\nb,300\nc,150\nd,50\n")
    return p


@pytest.fixture()
def csv_file(tmp_path):
    p = tmp_path / "data.csv"
    rng = np.random.default_rng(0)
    labels = np.array(["red", "green", "blue"])[rng.choice(3, size=2000, p=[0.6, 0.3, 0.1])]
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "colour"])
        w.writerows([i, c] for i, c in enumerate(labels))
    return p, labels


# --- help -------------------------------------------------------------------------------------------------
SUBCOMMANDS = [["demo"], ["split"], ["design"], ["privatize"], ["estimate"], ["calibrate"], ["calibrate", "laplace"], ["calibrate", "gaussian"],
               ["calibrate", "histogram"], ["reproduce"], ["bench"]]


@pytest.mark.parametrize("cmd", SUBCOMMANDS, ids=" ".join)
def test_help_on_every_subcommand(capsys, cmd):
    code, out, _ = run(capsys, *cmd, "--help")
    assert code == 0
    assert out.startswith("usage: pml-design " + " ".join(cmd))


def test_every_subcommand_is_covered_by_the_help_test():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert sorted(sub.choices) == sorted({c[0] for c in SUBCOMMANDS})


def test_console_script_entry_via_subprocess():
    proc = subprocess.run([sys.executable, "-m", "pml_design.cli", "--help"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.returncode == 0
    for cmd in ("demo", "design", "calibrate", "reproduce", "bench"):
        assert cmd in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "pml_design.cli", "design", "--counts", "nope.txt", "--epsilon", "1",
                          "--delta", "0.1"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["pml-design: error: argument --counts: file not found: nope.txt"]
    for path, why in (("/dev/null", "not a regular file"), (".", "is a directory")):  # says what is wrong with it
        out = subprocess.run([sys.executable, "-m", "pml_design.cli", "design", "--counts", path, "--epsilon", "1",
                              "--delta", "0.1"], capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert out.returncode == 2 and f"argument --counts: {why}" in out.stderr, out.stderr


# --- demo -------------------------------------------------------------------------------------------------
def test_demo_end_to_end_matches_the_library(capsys, tmp_path):
    png = tmp_path / "demo.png"
    code, out, _ = run(capsys, "demo", "--json", "--samples", "3000", "--attribute", "race", "--plot", str(png))
    assert code == 0
    res = json.loads(out)
    assert png.is_file() and png.stat().st_size > 10_000
    # independent re-computation of the pipeline with the library
    codes, cats = pd.load_adult().categorical("race")
    assert res["categories"] == cats
    perm = np.random.default_rng(0).permutation(codes.size)
    sample = codes[perm[:3000]]
    np.testing.assert_allclose(res["p_hat"], np.bincount(sample, minlength=5) / 3000)
    assert res["radius"] == pytest.approx(pd.l1_radius(3000, 5, 1e-6))
    assert res["certified_epsilon"] <= 1.0 + 1e-12
    assert "(1, 1e-06)-PML" in res["statement"]
    rows = {r["mechanism"]: r for r in res["rows"]}
    assert set(rows) == {"PML (designed)", "GRR", "OUE", "OLH", "subset selection"}
    # the estimation design is never worse than the LDP oracles (which are feasible for it), checked with the
    # oracles' own closed-form variances
    p = np.asarray(res["p_hat"])
    for name, oracle in (("GRR", pd.grr), ("subset selection", pd.subset_selection)):
        assert rows[name]["mse_per_report"] == pytest.approx(oracle(5, 1.0).mse(p, 1, inputs="iid"), rel=1e-9)
        assert rows["PML (designed)"]["mse_per_report"] <= rows[name]["mse_per_report"] * (1 + 1e-7)
    assert res["identifiable"] is True
    assert all(0 <= r["tv_error"] <= 1 for r in rows.values())
    assert res["released_records"] == codes.size - 3000


def test_demo_default_prints_table_and_statement(capsys):
    code, out, _ = run(capsys, "demo", "--no-progress")
    assert code == 0
    assert "relationship" in out and "GRR" in out and "subset selection" in out and "lower than the best LDP" in out
    assert "(1, 1e-06)-PML" in out and "certified" in out
    steps = [line.split(".", 1)[0] for line in out.splitlines() if line[:1].isdigit() and line[1:3] == ". "]
    assert steps == ["1", "2", "3", "4", "5"]  # one line each (4 and 5 shared one)


# --- design -----------------------------------------------------------------------------------------------
def test_design_from_counts_writes_json_and_csv(capsys, counts_file, tmp_path):
    prefix = tmp_path / "mech"
    code, out, _ = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "0.5", "--delta", "1e-3",
                       "-o", str(prefix), "--json", "--compare", "--utility", "mutual_information")
    assert code == 0
    res = json.loads(out)
    saved = json.loads((tmp_path / "mech.json").read_text())
    assert saved["certified_epsilon"] == res["certified_epsilon"]
    W = np.array(res["matrix"])
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-9)
    p_hat = np.array([0.5, 0.3, 0.15, 0.05])
    beta = pd.l1_radius(1000, 4, 1e-3)
    assert res["radius"] == pytest.approx(beta)
    # certify independently: the leakage capacity over the ball is <= epsilon
    assert pd.leakage_capacity(W, pd.L1Ball(p_hat, beta)) <= 0.5 + 1e-9
    with (tmp_path / "mech.csv").open() as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "input" and [r[0] for r in rows[1:]] == ["a", "b", "c", "d"]
    np.testing.assert_allclose(np.array([[float(v) for v in r[1:]] for r in rows[1:]]), W)
    assert res["ldp_comparison"]["gain_over_ldp"] >= 1.0 - 1e-9


def test_design_from_csv_column_with_radius(capsys, csv_file):
    path, labels = csv_file
    code, out, _ = run(capsys, "design", "--csv", str(path), "--column", "colour", "--epsilon", "1", "--radius",
                       "0.05", "--json", "--utility", "mutual_information")
    assert code == 0
    res = json.loads(out)
    assert res["categories"] == ["blue", "green", "red"]
    assert res["counts"] == [int((labels == c).sum()) for c in ["blue", "green", "red"]]
    direct = pd.design(pd.L1Ball(np.array(res["p_hat"]), 0.05), 1.0)
    assert res["utility"] == pytest.approx(direct.utility, rel=1e-7)


def test_design_human_output(capsys, counts_file):
    code, out, _ = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--delta", "0.01")
    assert code == 0 and "certified" in out and "mechanism P(y|x)" in out


# --- calibrate --------------------------------------------------------------------------------------------
def test_calibrate_laplace_matches_eq16(capsys):
    code, out, _ = run(capsys, "calibrate", "laplace", "--epsilon", "1", "--delta", "1e-6", "--p-hat-min", "0.3",
                       "--m", "10000", "--json")
    assert code == 0
    res = json.loads(out)
    assert res["scale"] == pytest.approx(pd.laplace_scale_for(1.0, 0.3, 10000, 1e-6))
    assert pd.laplace_pml_epsilon_estimated(res["scale"], 0.3, 10000, 1e-6) == pytest.approx(1.0, rel=1e-9)
    assert res["ldp_scale"] == pytest.approx(2.0)


def test_calibrate_gaussian_meets_target_and_is_tight(capsys):
    code, out, _ = run(capsys, "calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-3", "--p-hat", "0.3",
                       "--m", "10000", "--json")
    assert code == 0
    res = json.loads(out)
    g = pd.gaussian_pml_guarantee(res["threshold_epsilon"], res["sigma"], 0.3, 10000, 5e-4)
    assert g.epsilon_star == pytest.approx(1.0, rel=1e-9)
    assert g.delta_star <= 1e-3 * (1 + 1e-9)
    # tight: a slightly smaller sigma misses the target
    g_less = pd.gaussian_pml_guarantee(res["threshold_epsilon"], res["sigma"] * 0.99, 0.3, 10000, 5e-4)
    assert g_less.delta_star > 1e-3


def test_calibrate_gaussian_too_few_samples_says_how_many(capsys):
    # the message names the m that suffices (beta < 2 (1 - e^-eps*)), and that m does suffice, one fewer does not
    code, _, err = run(capsys, "calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-3", "--p-hat", "0.3",
                       "--m", "10")
    assert code == 2 and "argument --m" in err and len(err.strip().splitlines()) == 1
    need = int(err.split("needs m >= ")[1].split(",")[0])
    ok = ["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-3", "--p-hat", "0.3", "--json", "--m"]
    assert run(capsys, *ok, str(need))[0] == 0
    assert run(capsys, *ok, str(need - 1))[0] == 2


def test_calibrate_histogram(capsys, counts_file):
    code, out, _ = run(capsys, "calibrate", "histogram", "--epsilon", "1", "--alpha", "0.05", "--json")
    assert code == 0
    res = json.loads(out)
    assert pd.histogram_pml_epsilon(res["scale"], 0.05) == pytest.approx(1.0, rel=1e-9)
    assert res["scale"] < res["dp_scale"]
    code, out, _ = run(capsys, "calibrate", "histogram", "--epsilon", "1", "--counts", str(counts_file),
                       "--delta", "0.5", "--json")
    assert code == 0
    res = json.loads(out)
    assert res["alpha"] == pytest.approx(pd.alpha_from_estimate([0.5, 0.3, 0.15, 0.05], pd.l1_radius(1000, 4, 0.5)))


# --- errors: one line, names the argument, exit 2 -----------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["demo", "--epsilon", "-1"], "argument --epsilon"),
        (["demo", "--epsilon", "abc"], "argument --epsilon"),
        (["demo", "--delta", "2"], "argument --delta"),
        (["demo", "--attribute", "age"], "argument --attribute"),
        (["demo", "--samples", "10000000"], "argument --samples"),
        (["design", "--counts", "missing.txt", "--epsilon", "1", "--delta", "0.1"], "argument --counts"),
        (["design", "--counts", "COUNTS", "--epsilon", "1"], "--delta"),
        (["design", "--counts", "COUNTS", "--epsilon", "1", "--radius", "-1"], "argument --radius"),
        (["design", "--counts", "COUNTS", "--epsilon", "1", "--delta", "0.1", "--solver", "NOPE"], "argument --solver"),
        (["design", "--counts", "TINY", "--epsilon", "1", "--delta", "1e-3"], "delta"),
        (["design", "--csv", "COUNTS", "--epsilon", "1", "--delta", "0.1"], "argument --column"),
        (["design", "--csv", "COUNTS", "--column", "nope", "--epsilon", "1", "--delta", "0.1"], "argument --column"),
        (["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-3", "--delta2", "0.01", "--p-hat", "0.3",
          "--m", "100"], "argument --delta2"),
        (["calibrate", "histogram", "--epsilon", "1"], "argument --alpha"),
        (["calibrate", "laplace", "--epsilon", "1", "--delta", "0.1", "--p-hat-min", "0.7", "--m", "10"],
         "argument --p-hat-min"),
        (["reproduce", "no_such_figure"], "argument FIGURE"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_user_errors_are_one_line_exit_2(capsys, counts_file, argv, needle):
    tiny = counts_file.with_name("tiny.txt")
    tiny.write_text("1\n1\n1\n1\n")
    argv = [str(counts_file) if a == "COUNTS" else str(tiny) if a == "TINY" else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("pml-design") and "error" in lines[0] and needle in lines[0]
    assert "Traceback" not in err


# --- reproduce / bench --------------------------------------------------------------------------------------
def test_benchmarks_dir_found_from_checkout_and_clear_error_elsewhere(tmp_path, monkeypatch, capsys):
    assert find_benchmarks_dir(ROOT) == ROOT / "benchmarks"
    assert resolve_script("pml-fig3", ROOT / "benchmarks") == "fig_pml_fig3"
    assert resolve_script("histogram_fig1", ROOT / "benchmarks") == "fig_histogram_fig1"
    monkeypatch.chdir(tmp_path)
    installed = tmp_path / "site-packages" / "pml_design" / "cli" / "reproduce.py"  # a wheel install: no benchmarks/
    monkeypatch.setattr("pml_design.cli.reproduce.__file__", str(installed))
    code, _, err = run(capsys, "reproduce", "pml-fig3", "--quick")
    assert code == 2 and "source checkout" in err and len(err.strip().splitlines()) == 1


def test_reproduce_quick_runs_a_figure_script(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run(capsys, "reproduce", "pml-fig3", "--quick", "--outdir", str(tmp_path), "--no-progress")
    assert code == 0
    assert any(p.suffix == ".png" for p in tmp_path.iterdir())
    code, out, _ = run(capsys, "reproduce", "--list")
    assert code == 0 and "fig_pml_fig2" in out.split()


def test_bench_harness_writes_summary(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run(capsys, "bench", "--quick", "--only", "fig_pml_fig3", "--outdir", str(tmp_path))
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [r["script"] for r in summary["scripts"]] == ["fig_pml_fig3"]
    assert summary["scripts"][0]["status"] == "ok" and summary["scripts"][0]["mode"] == "quick"
    md = (tmp_path / "summary.md").read_text()
    assert "| fig_pml_fig3 | quick | ok |" in md


# --- deployment: design -o, privatize, estimate ----------------------------------------------------------------
@pytest.fixture()
def deployed(capsys, csv_file, tmp_path):
    """A mechanism designed on other records (design.csv) than the ones privatized (data.csv), as the rule says."""
    path, labels = csv_file
    design = tmp_path / "design.csv"
    design_labels = np.array(["red", "green", "blue"])[np.random.default_rng(1).choice(3, size=1500, p=[0.6, 0.3, 0.1])]
    design.write_text("id,colour\n" + "".join(f"d{i},{c}\n" for i, c in enumerate(design_labels)))
    code, _, err = run(capsys, "design", "--csv", str(design), "--column", "colour", "--epsilon", "2", "--delta",
                       "1e-3", "-o", str(tmp_path / "mech"), "--utility", "mutual_information")
    assert code == 0, err
    return path, labels, tmp_path / "mech.json"


def test_design_output_is_a_loadable_mechanism_file(deployed):
    path, labels, mech_path = deployed
    mech = pd.load_mechanism(mech_path)
    assert mech.labels == ("blue", "green", "red")
    doc = json.loads(mech_path.read_text())
    assert doc["m"] == 1500 and doc["prior_source"] == "public sample" and doc["prior_params"] == {"m": 1500}
    assert "counts" not in doc and "source" not in doc and str(path.parent) not in mech_path.read_text()
    design_rows = (path.parent / "design.csv").read_text().splitlines()[1:]  # only the design column is hashed
    column = [row.split(",")[1] for row in design_rows]
    assert doc["design_data"] == {"kind": "column sha256", "sha256": hashlib.sha256(
        "".join(f"{v.strip()}\x00" for v in column).encode()).hexdigest()}
    assert pd.leakage_capacity(mech.matrix, pd.L1Ball(doc["p_hat"], doc["radius"])) <= 2.0 + 1e-12


def test_privatize_then_estimate_end_to_end_matches_the_library(capsys, deployed, tmp_path, monkeypatch):
    path, labels, mech_path = deployed
    out = tmp_path / "private.csv"
    code, _, err = run(capsys, "privatize", str(mech_path), "--csv", str(path), "--column", "colour", "--seed", "3",
                       "-o", str(out))
    assert code == 0, err
    with path.open() as fh:
        original = list(csv.reader(fh))
    with out.open() as fh:
        private = list(csv.reader(fh))
    assert private[0] == original[0] and len(private) == len(original)
    assert [r[0] for r in private] == [r[0] for r in original]  # other columns untouched
    mech = pd.load_mechanism(mech_path)
    expected = mech.privatize(labels, rng=3)  # the same draws as the library on the whole column
    assert [r[1] for r in private[1:]] == [str(v) for v in expected]
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    # the result does not depend on the batch size
    monkeypatch.setattr("pml_design.deploy.streaming._BLOCK", 1 << 10)
    out_small = tmp_path / "private_small.csv"
    assert run(capsys, "privatize", str(mech_path), "--csv", str(path), "--column", "1", "--seed", "3",
               "-o", str(out_small))[0] == 0
    assert out_small.read_text() == out.read_text()
    # estimate: the library's estimate and intervals, from the privatized column
    code, stdout, err = run(capsys, "estimate", str(mech_path), "--csv", str(out), "--column", "colour", "--json")
    assert code == 0, err
    res = json.loads(stdout)
    lib = mech.estimate(expected, ci=0.95)
    assert res["categories"] == ["blue", "green", "red"] and res["n"] == labels.size
    np.testing.assert_allclose(res["estimate"], lib.estimate)
    np.testing.assert_allclose(res["ci_low"], lib.ci_low)
    np.testing.assert_allclose(res["ci_high"], lib.ci_high)
    truth = [(labels == c).mean() for c in res["categories"]]
    assert np.all(np.array(res["ci_low"]) - 0.05 <= truth) and np.all(truth <= np.array(res["ci_high"]) + 0.05)
    code, stdout, _ = run(capsys, "estimate", str(mech_path), "--csv", str(out), "--column", "colour", "--ci", "0.9")
    assert code == 0 and "ci_low" in stdout and "green" in stdout


def test_privatize_loads_without_the_utility_and_refuses_a_false_guarantee(capsys, deployed, tmp_path):
    # privatize and estimate report no utility, so they skip its O(N^2 outputs) re-evaluation (70 s at N = 10 000);
    # what the guarantee rests on is checked as always
    from pml_design.deploy.file import content_hash

    path, _, mech_path = deployed
    for key, factor, refused in (("utility", 1.5, False), ("radius", 1.01, True)):
        doc = json.loads(mech_path.read_text())
        doc[key] *= factor
        doc["sha256"] = content_hash(doc)
        bad = tmp_path / f"{key}.json"
        bad.write_text(json.dumps(doc))
        code, _, err = run(capsys, "privatize", str(bad), "--csv", str(path), "--column", "colour", "--seed", "3",
                           "-o", str(tmp_path / f"{key}.csv"))
        assert (code, "the radius" in err) == ((2, True) if refused else (0, False)), err


def test_no_output_or_side_file_of_privatize_is_an_input_even_with_force(capsys, deployed, tmp_path):
    # a new user's trial: with --force, the categories file became the reports, the provenance file replaced the
    # categories file, and the mark OUT.pml.json replaced the mechanism file; '-' wrote a file named '-'
    import shutil

    path, _, mech_path = deployed
    cats = tmp_path / "cats.txt"
    cats.write_text("blue\ngreen\nred\n")
    prov = tmp_path / "q.csv.ldp.json"
    shutil.copy(cats, prov)
    mark = tmp_path / "zz.csv.pml.json"
    shutil.copy(mech_path, mark)
    before = {p: p.read_bytes() for p in (cats, prov, mark)}
    oracle = ["privatize", "--oracle", "grr", "--ldp-epsilon", "1", "--csv", str(path), "--column", "colour"]
    for argv, named in (
            ([*oracle, "--categories-file", str(cats), "-o", str(cats), "--force"], "--categories-file"),
            ([*oracle, "--categories-file", str(prov), "-o", str(tmp_path / "q.csv"), "--force"], "--categories-file"),
            (["privatize", str(mark), "--csv", str(path), "--column", "colour", "-o", str(tmp_path / "zz.csv"),
              "--force"], "MECHANISM")):
        code, _, err = run(capsys, *argv)
        assert code == 2 and f"is the input {named}" in err and len(err.strip().splitlines()) == 1, err
    assert {p: p.read_bytes() for p in (cats, prov, mark)} == before
    assert not (tmp_path / "q.csv").exists() and not (tmp_path / "zz.csv").exists()
    code, _, err = run(capsys, "privatize", str(mech_path), "--csv", str(path), "--column", "colour", "-o", "-")
    assert code == 2 and "'-' (standard output) is not supported" in err


def test_estimate_refuses_reports_whose_mark_names_another_mechanism(capsys, deployed, tmp_path):
    # a new user's trial: estimate with the wrong mechanism file printed a wrong table (0.0068 for a share of 0.25),
    # exit 0, with only a fit warning, though the reports' mark named the right mechanism
    path, _, mech_path = deployed
    code, _, err = run(capsys, "design", "--csv", str(tmp_path / "design.csv"), "--column", "colour", "--epsilon", "1",
                       "--delta", "1e-3", "-o", str(tmp_path / "other"), "--utility", "mutual_information")
    assert code == 0, err
    out = tmp_path / "private.csv"
    assert run(capsys, "privatize", str(mech_path), "--csv", str(path), "--column", "colour", "-o", str(out))[0] == 0
    code, stdout, err = run(capsys, "estimate", str(tmp_path / "other.json"), "--csv", str(out), "--column", "colour")
    assert code == 2 and stdout == "" and len(err.strip().splitlines()) == 1
    assert "argument MECHANISM: " in err and "was privatized with another mechanism file" in err
    code, _, err = run(capsys, "estimate", str(tmp_path / "other.json"), "--csv", str(out), "--column", "colour",
                       "--unverified-reports")  # the mark is not read (here the outputs differ: refused for that)
    assert "another mechanism file" not in err
    assert run(capsys, "estimate", str(mech_path), "--csv", str(out), "--column", "colour")[0] == 0


def test_privatize_refuses_the_file_split_divided(capsys, csv_file, tmp_path):
    # a new user privatized the unsplit file (the design records among its rows) and got a plain guarantee line: split
    # keeps its seed and fraction beside DESIGN, design keeps them in the fingerprint, privatize redraws them on its
    # input; nothing of the released records enters the mechanism file (a review: the whole input's SHA-256, kept
    # first, let whoever knows the design records and all but one released record guess the last one)
    import shutil

    from pml_design.deploy.split import split_draws_of, split_record_path

    path, _ = csv_file
    design, rest = tmp_path / "d.csv", tmp_path / "r.csv"
    assert run(capsys, "split", "--csv", str(path), "--fraction", "0.3", "-o", str(design), str(rest))[0] == 0
    draws = split_draws_of(design)
    assert draws is not None and draws[1] == 0.3 and split_draws_of(rest) is None
    code, _, err = run(capsys, "design", "--csv", str(design), "--column", "colour", "--epsilon", "1", "--delta",
                       "1e-3", "--time-limit", "5", "-o", str(tmp_path / "m"))
    assert code == 0, err
    fp = json.loads((tmp_path / "m.json").read_text())["design_data"]
    assert set(fp) == {"kind", "sha256", "split_seed", "split_fraction"} and (fp["split_seed"], fp["split_fraction"]) == draws
    code, _, err = run(capsys, "privatize", str(tmp_path / "m.json"), "--csv", str(path), "--column", "colour", "-o",
                       str(tmp_path / "full.csv"))
    assert code == 2 and "is the file split divided" in err and "--allow-design-data" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "full.csv").exists()
    code, out, _ = run(capsys, "privatize", str(tmp_path / "m.json"), "--csv", str(path), "--column", "colour", "-o",
                       str(tmp_path / "full.csv"), "--allow-design-data")
    assert code == 0 and "it does not cover any design record among these records" in out
    code, out, _ = run(capsys, "privatize", str(tmp_path / "m.json"), "--csv", str(rest), "--column", "colour", "-o",
                       str(tmp_path / "rest_p.csv"))
    assert code == 0 and "does not cover" not in out
    # a record beside another file (moved, edited, forged) names nothing: its DESIGN hash does not match
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(split_record_path(design), other / "d.csv.split.json")
    (other / "d.csv").write_text(path.read_text())
    assert split_draws_of(other / "d.csv") is None
    # the record is an output like the others: an existing one is refused without --force; none for a Generator
    (tmp_path / "d3.csv.split.json").write_text("mine\n")
    code, _, err = run(capsys, "split", "--csv", str(path), "--fraction", "0.3", "-o", str(tmp_path / "d3.csv"),
                       str(tmp_path / "r3.csv"))
    assert code == 2 and "d3.csv.split.json" in err and (tmp_path / "d3.csv.split.json").read_text() == "mine\n"
    pd.split_file(path, 0.3, tmp_path / "d4.csv", tmp_path / "r4.csv", rng=np.random.default_rng(0))
    assert not split_record_path(tmp_path / "d4.csv").exists()


def test_an_interrupt_between_the_json_and_its_csv_leaves_neither(capsys, counts_file, tmp_path, monkeypatch):
    # a new user's trial: Ctrl-C while design wrote PREFIX.csv (60 MB) left PREFIX.json alone, a valid mechanism file
    # that the rerun then refused as existing; the CSV is now staged first and a JSON without its CSV taken back
    import os

    real = os.replace

    def interrupted(src, dst, *a, **k):
        if str(dst).endswith("mech.csv"):
            raise KeyboardInterrupt
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", interrupted)
    code, _, err = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1",
                       "--time-limit", "5", "-o", str(tmp_path / "mech"))
    assert code == 130 and "interrupted" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counts.csv"]  # no JSON, no CSV, no temporary file
    monkeypatch.undo()
    assert run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1", "--time-limit",
               "5", "-o", str(tmp_path / "mech"))[0] == 0  # the rerun is not refused


def test_second_trial_mistakes_are_refused_or_named(capsys, csv_file, deployed, tmp_path):
    # a second new user's trial: design -o replaced the split record it read; privatize --force replaced a mechanism
    # file with privatized records; split --force replaced DESIGN without a word (the old design records went into
    # the new REST); a category mismatch over many categories printed every name
    import shutil

    from pml_design.deploy.reports import _category_list, first_difference

    path, _ = csv_file
    _, _, mech_path = deployed
    design, rest = tmp_path / "d.csv", tmp_path / "r.csv"
    assert run(capsys, "split", "--csv", str(path), "--fraction", "0.3", "-o", str(design), str(rest))[0] == 0
    record = (tmp_path / "d.csv.split.json").read_text()
    code, _, err = run(capsys, "design", "--csv", str(design), "--column", "colour", "--epsilon", "1", "--delta",
                       "1e-3", "-o", str(tmp_path / "d.csv.split"), "--force")
    assert code == 2 and "the split record of the design data" in err
    assert (tmp_path / "d.csv.split.json").read_text() == record
    other = tmp_path / "other.json"
    shutil.copy(mech_path, other)
    code, _, err = run(capsys, "privatize", str(mech_path), "--csv", str(rest), "--column", "colour", "-o", str(other),
                       "--force")
    assert code == 2 and "is a pml-design mechanism file" in err and other.read_bytes() == mech_path.read_bytes()
    code, _, err = run(capsys, "split", "--csv", str(path), "--fraction", "0.3", "-o", str(design), str(rest),
                       "--force")
    assert code == 0 and f"warning: replaced {design}" in err and "must not privatize the new" in err
    names = [f"c{i}" for i in range(600)]
    text = _category_list(names)
    assert text.endswith(",... (600 in all)") and len(text) < 200
    assert first_difference(names, names[:3] + ["zz"] + names[4:]) == "first difference at position 3: 'c3' against 'zz'"


def test_an_output_that_appears_while_privatize_writes_is_not_replaced(capsys, deployed, tmp_path, monkeypatch):
    # a second new user's trial: two runs to one output, started 0.15 s apart, both passed the start's check and both
    # said "wrote"; the final rename now refuses a file that appeared meanwhile (without --force)
    import pml_design.deploy.atomic as atomic

    path, _, mech_path = deployed
    out = tmp_path / "same.csv"
    real = atomic.publish

    def meanwhile(tmp, target, overwrite):
        target.write_text("the other run's output\n")
        return real(tmp, target, overwrite)

    monkeypatch.setattr(atomic, "publish", meanwhile)
    code, _, err = run(capsys, "privatize", str(mech_path), "--csv", str(path), "--column", "colour", "-o", str(out))
    assert code == 2 and "appeared while this output was written" in err and len(err.strip().splitlines()) == 1
    assert out.read_text() == "the other run's output\n" and [p.name for p in tmp_path.glob(".*same*")] == []
    code, _, err = run(capsys, "privatize", str(mech_path), "--csv", str(path), "--column", "colour", "-o", str(out),
                       "--force")  # (with --force a file that appeared meanwhile is replaced, as one there before)
    assert code == 0, err
    assert out.read_text().startswith("id,colour")


def _umask():
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_privatize_and_estimate_parquet(capsys, deployed, tmp_path):
    pytest.importorskip("pyarrow")
    path, labels, mech_path = deployed
    pq_out = tmp_path / "private.parquet"
    assert run(capsys, "privatize", str(mech_path), "--csv", str(path), "--column", "colour", "--seed", "3",
               "-o", str(pq_out))[0] == 0
    import pyarrow.parquet as pq

    table = pq.read_table(pq_out)
    mech = pd.load_mechanism(mech_path)
    assert table.column("colour").to_pylist() == [str(v) for v in mech.privatize(labels, rng=3)]
    code, stdout, err = run(capsys, "estimate", str(mech_path), "--parquet", str(pq_out), "--column", "colour",
                            "--json")
    assert code == 0, err
    np.testing.assert_allclose(json.loads(stdout)["estimate"], mech.estimate(mech.privatize(labels, rng=3)))
    # this design's outputs carry the input labels: its reports would read as records, and privatize refuses them
    # (their mark private.parquet.pml.json); Parquet in, CSV out on the records themselves
    assert set(mech.output_labels) == set(mech.labels)
    code, _, err = run(capsys, "privatize", str(mech_path), "--parquet", str(pq_out), "--column", "colour", "-o",
                       str(tmp_path / "twice.csv"))
    assert code == 2 and "holds reports privatized already" in err and not (tmp_path / "twice.csv").exists()
    import pyarrow.csv as pacsv

    raw_pq = tmp_path / "records.parquet"
    pq.write_table(pacsv.read_csv(path), raw_pq)
    back = tmp_path / "again.csv"
    assert run(capsys, "privatize", str(mech_path), "--parquet", str(raw_pq), "--column", "colour", "--seed", "4",
               "-o", str(back))[0] == 0
    with back.open() as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["id", "colour"] and [r[1] for r in rows[1:]] == [
        str(v) for v in mech.privatize(labels, rng=4)]


def test_estimate_warns_for_a_merging_design(capsys, tmp_path):
    data = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    data.write_text("x\n" + "\n".join(np.array(["a", "b", "c"])[rng.choice(3, 3000, p=[0.6, 0.3, 0.1])]) + "\n")
    assert run(capsys, "design", "--csv", str(data), "--column", "x", "--epsilon", "1", "--delta", "1e-3",
               "--utility", "map_accuracy", "-o", str(tmp_path / "m"))[0] == 0
    mech = pd.load_mechanism(tmp_path / "m.json")
    assert not mech.identifiable
    assert run(capsys, "privatize", str(tmp_path / "m.json"), "--csv", str(data), "--column", "x",
               "-o", str(tmp_path / "p.csv"), "--allow-design-data")[0] == 0
    code, out, err = run(capsys, "estimate", str(tmp_path / "m.json"), "--csv", str(tmp_path / "p.csv"),
                         "--column", "x")
    assert code == 0 and "warning: mechanism" in err and "cannot identify" in err


# --- bad input: one line naming the argument/file and value, exit 2, no partial output ------------------------
def _write(path, content):
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return path


BAD_DEPLOY = [
    # (argv template, files to create, needle)
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "OUT"],
     {"F": "id,colour\n1,red\n2,purple\n3,blue\n"}, "outside the categories"),
    (["privatize", "MECH", "--csv", "F", "--column", "nope", "-o", "OUT"], {"F": "id,colour\n1,red\n"},
     "argument --column: no column 'nope'"),
    (["privatize", "MECH", "--csv", "F", "--column", "9", "-o", "OUT"], {"F": "id,colour\n1,red\n"},
     "index 9 is out of range (it has 2 columns, 0 to 1)"),
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "OUT"], {"F": ""}, "file is empty"),
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "OUT"], {"F": "id,colour\n"}, "no data rows"),
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "OUT"],
     {"F": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00"}, "not a text (CSV) file"),
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "OUT"],
     {"F": b"id,colour\n1,r\xe9d\n"}, "not UTF-8"),
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "OUT"],
     {"F": "id,colour\n1,red\n2,blue,extra\n"}, "cannot read it as CSV"),
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "F"], {"F": "id,colour\n1,red\n"},
     "refusing to overwrite an input"),
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "NODIR"], {"F": "id,colour\n1,red\n"},
     "argument --output: directory does not exist"),
    (["privatize", "MECH", "--csv", "F", "--column", "colour", "-o", "OUT", "--seed", "-1"],
     {"F": "id,colour\n1,red\n"}, "argument --seed"),
    (["privatize", "MISSING", "--csv", "F", "--column", "colour", "-o", "OUT"], {"F": "id,colour\n1,red\n"},
     "argument MECHANISM: mechanism file not found"),
    (["privatize", "TAMPERED", "--csv", "F", "--column", "colour", "-o", "OUT"], {"F": "id,colour\n1,red\n"},
     "argument MECHANISM: mechanism file"),
    (["privatize", "F", "--csv", "F", "--column", "colour", "-o", "OUT"], {"F": "id,colour\n1,red\n"},
     "not valid JSON"),
    # (this mechanism's outputs carry the category names: a file without privatize's mark is refused first)
    (["estimate", "MECH", "--csv", "F", "--column", "colour"], {"F": "id,colour\n1,y9\n"}, "has no mark"),
    (["estimate", "MECH", "--csv", "F", "--column", "colour", "--unverified-reports"], {"F": "id,colour\n1,y9\n"},
     "does not know"),
    (["estimate", "MECH", "--csv", "F", "--column", "colour", "--ci", "95"], {"F": "id,colour\n1,red\n"},
     "argument --ci"),
    (["estimate", "MECH", "--parquet", "F", "--column", "colour"], {"F": "id,colour\n1,red\n"},
     "not a Parquet file"),
    (["design", "--csv", "F", "--column", "colour", "--epsilon", "1", "--delta", "0.1"], {"F": b"\x00\x01\x02"},
     "not a text (CSV) file"),
    (["design", "--csv", "F", "--column", "colour", "--epsilon", "1", "--delta", "0.1"], {"F": "colour\n?\nNA\n"},
     "has no values"),
    (["design", "--counts", "F", "--epsilon", "1", "--delta", "0.1"], {"F": "a,1x\nb,2\nc,3\n"},
     "line 1: the count is not a non-negative integer in plain digits"),
    (["design", "--counts", "F", "--epsilon", "1", "--delta", "0.1"], {"F": "a,5\nb,2\na,3\n"},
     "line 3: duplicate label 'a'"),
    (["design", "--counts", "F", "--epsilon", "1", "--delta", "0.1"], {"F": b"a,5\n\xff\xfeb,2\n"}, "not UTF-8"),
    (["design", "--counts", "F", "--epsilon", "1", "--delta", "0.1"], {"F": ""}, "holds no counts"),
    (["design", "--counts", "F", "--epsilon", "1", "--radius", "2.5"], {"F": "a,5\nb,2\n"},
     "argument --radius: must lie in [0, 2]"),
    (["design", "--counts", "F", "--epsilon", "1", "--delta", "1"], {"F": "a,5\nb,2\n"},
     "argument --delta: must lie in (0, 1)"),
    (["design", "--counts", "F", "--epsilon", "710", "--delta", "0.1"], {"F": "a,5\nb,2\n"}, "argument --epsilon"),
    (["demo", "--delta", "1"], {}, "argument --delta"),
]


@pytest.mark.parametrize(("argv", "files", "needle"), BAD_DEPLOY, ids=[str(i) for i in range(len(BAD_DEPLOY))])
def test_deploy_bad_input_one_line_no_partial_output(capsys, deployed, tmp_path, argv, files, needle):
    _, _, mech_path = deployed
    work = tmp_path / "bad"
    work.mkdir()
    created = {name: _write(work / f"{name}.csv", content) for name, content in files.items()}
    tampered = work / "tampered.json"
    doc = json.loads(mech_path.read_text())
    doc["epsilon"] = 10.0
    tampered.write_text(json.dumps(doc))
    subst = {"MECH": str(mech_path), "OUT": str(work / "out.csv"), "MISSING": str(work / "none.json"),
             "TAMPERED": str(tampered), "NODIR": str(work / "no" / "out.csv"),
             **{k: str(v) for k, v in created.items()}}
    before = sorted(p.name for p in work.iterdir())
    code, out, err = run(capsys, *[subst.get(a, a) for a in argv])
    assert code == 2, (out, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("pml-design: error: ") and needle in lines[0], lines[0]
    assert "Traceback" not in err
    assert sorted(p.name for p in work.iterdir()) == before  # no output, no temporary file left


def test_csv_with_bom_and_counts_with_bom(capsys, tmp_path):
    data = tmp_path / "bom.csv"
    data.write_bytes("\ufeffcolour,id\nred,1\nblue,2\nred,3\n".encode())
    code, out, err = run(capsys, "design", "--csv", str(data), "--column", "colour", "--epsilon", "1", "--radius",
                         "0.1", "--json")
    assert code == 0, err
    assert json.loads(out)["categories"] == ["blue", "red"]
    counts = tmp_path / "bom.txt"
    counts.write_bytes("\ufeffa,5\nb,3\n".encode())
    code, out, err = run(capsys, "design", "--counts", str(counts), "--epsilon", "1", "--radius", "0.1", "--json")
    assert code == 0, err
    assert json.loads(out)["categories"] == ["a", "b"]


def test_calibrate_histogram_when_no_noise_is_needed(capsys):
    code, out, err = run(capsys, "calibrate", "histogram", "--epsilon", "30", "--alpha", "0.5")
    assert code == 0, err
    assert "b = 0" in out and "no noise is needed" in out
    code, out, _ = run(capsys, "calibrate", "histogram", "--epsilon", "30", "--alpha", "0.5", "--json")
    res = json.loads(out)
    assert res["scale"] == 0 and res["epsilon_at_scale"] == pytest.approx(np.log(2))


@pytest.mark.parametrize("text, needle", [
    ("phone,1,200\nlaptop,900\n", "line 1: expected a count or 'label,count' (2 fields), got 3 fields separated by commas"),
    ("a,50,3\nb,4\n", "got 3 fields separated by commas"),
    ("x;1;2\ny;3\n", "got 3 fields separated by semicolons"),
    ("Not in family 20\nHusband 30\n", "got 4 fields separated by spaces; write 'label,count' for a label with spaces"),
    ("category;count\na;12,345\nb;7,001\n", "line 2: the count is not a non-negative integer in plain digits"),
    ("a;1.000\nb;2\n", "line 1: the count is not a non-negative integer in plain digits"),
])
def test_counts_lines_with_extra_fields_are_refused(capsys, tmp_path, text, needle):
    """A review found 'phone,1,200' read as phone = 200 (the middle fields dropped) and 'Not in family 20' as a
    label 'Not': a wrong P̂ and a false guarantee, silently. More than two fields is now one line naming the line;
    the fields themselves are not echoed (the counts may be protected, --dp-epsilon)."""
    f = tmp_path / "c.txt"
    f.write_text(text)
    code, out, err = run(capsys, "design", "--counts", str(f), "--epsilon", "1", "--radius", "0.1", "--json")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and out == "" and len(lines) == 1 and needle in lines[0], err
    said = _without(lines[0], tmp_path)  # (the path's digits are pytest's: a run in pytest-200 failed here)
    assert "200" not in said and "family" not in said and "345" not in said and "1.000" not in said


@pytest.mark.parametrize("text, cats, counts", [
    ('"a, b",3\nc,4\n', ["a, b", "c"], [3, 4]),
    ("category,count\na;b,20\nc,3\n", ["a;b", "c"], [20, 3]),  # the header's comma separates
    ("Married, spouse present;200\nHusband;30\n", ["Married, spouse present", "Husband"], [200, 30]),
    ("Not in family,20\nHusband,30\n", ["Husband", "Not in family"], [30, 20]),
    ("x\t3\ny\t4\n", ["x", "y"], [3, 4]),
    ("x 3\ny 4\n", ["x", "y"], [3, 4]),
    ("a,5,\nb,3\n", ["a", "b"], [5, 3]),  # a trailing separator
])
def test_counts_files_with_quotes_and_separators(tmp_path, text, cats, counts):
    from pml_design.cli._common import read_counts

    f = tmp_path / "c.txt"
    f.write_text(text)
    got, labels = read_counts(str(f))
    assert dict(zip(labels, got.tolist())) == dict(zip(cats, counts))


def test_sigterm_runs_the_clean_ups_and_exits_143(capsys, monkeypatch):
    """SIGTERM's default action ends the process without running any ``finally``/``except BaseException`` clean-up
    (a review found a hidden ``.partial`` output left by a terminated privatize); the CLI turns it into an exception
    in the main thread, as Ctrl-C is, and puts the previous handler back afterwards."""
    import os
    import signal
    import time

    from pml_design.cli import demo

    cleaned: list = []

    def terminated(args):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # interrupted by the handler
        finally:
            cleaned.append(True)
        return 0

    monkeypatch.setattr(demo, "run", terminated)
    before = signal.getsignal(signal.SIGTERM)
    code, out, err = run(capsys, "demo")
    assert code == 143 and cleaned == [True] and err.strip() == "pml-design: terminated"
    assert signal.getsignal(signal.SIGTERM) is before


def test_an_output_folder_that_is_a_file_is_one_line(capsys, tmp_path):
    f = tmp_path / "afile"
    f.write_text("keep")
    for argv in (["reproduce", "--outdir", str(f), "pml-fig2", "--quick"],
                 ["bench", "--outdir", str(f), "--only", "fig_pml_fig2", "--quick", "--budget", "5"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and err.startswith("pml-design: error: argument --outdir: not a folder") and "Traceback" not in err
    assert f.read_text() == "keep"


def test_compare_reads_an_error_ratio_the_right_way(capsys, counts_file):
    """--compare printed "gain over LDP: 0.261x" for frequency_estimation (an error: pml / optimal_ldp below 1 means
    the PML design is better); an error utility prints the ratio as such."""
    base = ["design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1", "--compare",
            "--time-limit", "20"]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("optimal LDP: "))
    ratio = float(line.split("PML error / optimal LDP error: ")[1].split()[0])
    assert 0 < ratio < 1 and "gain over LDP" not in line and "(lower is better)" in line
    code, out, err = run(capsys, *base, "--utility", "mutual_information")
    assert code == 0 and float(out.split("gain over LDP: ")[1].split("x")[0]) > 1, err


def test_a_mechanism_file_is_replaced_only_with_force(capsys, counts_file, tmp_path):
    """A mechanism file is the only key to decoding the reports privatized with it: design -o refuses an existing
    PREFIX.json or PREFIX.csv, even of its own kind, unless --force (a review: it was replaced silently), and says so
    when --force replaces one."""
    prefix = str(tmp_path / "mech")
    argv = ["design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1", "-o", prefix]
    code, _, err = run(capsys, *argv)
    assert code == 0 and "replaced" not in err
    first = {name: (tmp_path / name).read_bytes() for name in ("mech.json", "mech.csv")}
    code, out, err = run(capsys, *[a if a != "0.1" else "0.2" for a in argv])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"pml-design: error: argument --output: {prefix}.json exists and is a pml-design mechanism "
                          "file") and "--force" in err
    assert {name: (tmp_path / name).read_bytes() for name in first} == first  # nothing replaced
    (tmp_path / "mech.json").unlink()  # the matrix CSV alone is refused too
    code, _, err = run(capsys, *argv)
    assert code == 2 and f"{prefix}.csv exists and is the matrix CSV" in err and "--force" in err
    assert not (tmp_path / "mech.json").exists()
    code, _, err = run(capsys, *argv, "--force")
    assert code == 0 and "replaced" not in err  # (only the CSV existed)
    code, _, err = run(capsys, *[a if a != "0.1" else "0.2" for a in argv], "--force")
    assert code == 0 and f"replaced the existing mechanism file {prefix}.json" in err
    assert json.loads((tmp_path / "mech.json").read_text())["radius"] == 0.2


def _without(err: str, folder: pathlib.Path) -> str:
    """``err`` with every spelling of the path ``folder`` replaced by ``TMP`` (it is no protected value)."""
    for spelling in sorted({str(folder), str(folder.resolve())}, key=len, reverse=True):
        err = err.replace(spelling, "TMP")
    return err


def test_privatize_errors_name_no_protected_value(capsys, tmp_path, counts_file):
    """privatize's input is the protected data: an unknown or missing cell is reported without its value, its row
    or how many there are (a review: 'e.g. ['smartwatch-of-alice'] (first at data row 1235)' went to stderr)."""
    prefix = tmp_path / "mech"
    code, _, err = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1", "-o",
                       str(prefix))
    assert code == 0, err
    data = tmp_path / "rel.csv"
    labels = json.loads((tmp_path / "mech.json").read_text())["categories"]
    data.write_text("device\n" + "\n".join([labels[0]] * 50 + ["smartwatch-of-alice"] + [labels[1]] * 3) + "\n")
    code, out, err = run(capsys, "privatize", str(prefix) + ".json", "--csv", str(data), "--column", "device", "-o",
                         str(tmp_path / "out.csv"))
    assert code == 2 and "outside the categories" in err and "not shown" in err
    # the message names its files; pytest's temporary folder (/tmp/pytest-of-USER/pytest-51/...) is taken out first,
    # so that a "51" (the bad cell's data row) or "alice" in it cannot fail the test by chance
    err = _without(err, tmp_path)
    assert str(data.name) in err and "alice" not in err and "51" not in err and "row" not in err
    bad = tmp_path / "bad.csv"  # a parse error: pyarrow's message quotes the row (a second review)
    bad.write_text("device,y\n" + f"{labels[0]},1\n" + "smartwatch-of-alice,3,extra\n")
    code, out, err = run(capsys, "privatize", str(prefix) + ".json", "--csv", str(bad), "--column", "device", "-o",
                         str(tmp_path / "out.csv"))
    err = _without(err, tmp_path)
    assert code == 2 and "withheld" in err and "alice" not in err and "extra" not in err
    import pml_design as pml

    mech = pml.load_mechanism(str(prefix) + ".json")
    with pytest.raises(ValueError, match="not shown") as info:
        mech.privatize(np.array([labels[0], "smartwatch-of-alice"], dtype=object))
    assert "alice" not in str(info.value)
    with pytest.raises(ValueError, match=r"must lie in \[0, \d+\)$"):
        mech.privatize([1e300])  # no value echoed (it was also shown as -2**63, cast before the check)


def test_time_limit_covers_the_whole_design_command(capsys, tmp_path, monkeypatch):
    """--time-limit is the command's: the design gets it minus the time kept back for the disclosure, the files and
    the JSON (a review: --time-limit 8 at N = 790 ran 40 s, the design 9 s and a 29 s save); a limit too short for
    that is refused at once, naming the time needed."""
    import pml_design as pml
    from pml_design.cli import design as cli_design

    counts = tmp_path / "many.txt"
    counts.write_text("\n".join(f"c{i},{3 + i % 7}" for i in range(4000)) + "\n")
    code, out, err = run(capsys, "design", "--counts", str(counts), "--epsilon", "1", "--radius", "0.1",
                         "--time-limit", "4", "-o", str(tmp_path / "m"))
    assert code == 2 and "argument --time-limit: 4 s is too short for 4000 categories" in err and "give at least" in err
    assert not any(tmp_path.glob("m.*"))
    seen: list = []
    real = pml.design

    def spy(*a, **k):
        seen.append((k.get("solver_options") or {}).get("time_limit"))
        return real(*a, **k)

    monkeypatch.setattr(pml, "design", spy)
    small = tmp_path / "small.txt"
    small.write_text("a,5\nb,3\nc,9\n")
    code, _, err = run(capsys, "design", "--counts", str(small), "--epsilon", "1", "--radius", "0.1",
                       "--time-limit", "4", "--json")
    assert code == 0, err
    per_entry = sum(cli_design.POST_SECONDS_PER_ENTRY[k] for k in ("disclosure", "json"))
    keep = 3 * 4096 * per_entry
    assert 4 - keep - 1.0 <= seen[0] <= 4 - keep + 1e-9
    seen.clear()
    code, _, err = run(capsys, "design", "--counts", str(small), "--epsilon", "1", "--radius", "0.1",
                       "--time-limit", "4", "--compare")
    assert code == 0, err
    assert seen[0] <= (4 - 3 * 4096 * cli_design.POST_SECONDS_PER_ENTRY["disclosure"]) / 2 + 1e-9  # --compare: half


def test_a_large_mechanism_file_is_recognised_as_one(tmp_path):
    """is_mechanism_file parsed the first MiB as JSON, so every mechanism file above 1 MiB (a wide design's is
    200 MB) counted as 'not a mechanism file' and design -o refused to replace it; its first key decides now."""
    import pml_design as pml
    from pml_design.deploy.output import is_mechanism_file

    res = pml.design(pml.L1Ball([0.5, 0.3, 0.2], 0.1), 1.0)
    big = res.save(tmp_path / "big.json", extra={"pad": list(range(300_000))})
    assert big.stat().st_size > 1 << 20 and is_mechanism_file(big)
    other = tmp_path / "other.json"
    other.write_text('{"data": [' + ",".join(["1"] * 600_000) + '], "format": "pml-design-mechanism"}')
    assert other.stat().st_size > 1 << 20 and not is_mechanism_file(other)  # not written by save_mechanism
    assert is_mechanism_file(res.save(tmp_path / "small.json"))


def test_small_review_items(capsys, tmp_path, counts_file):
    """-o mech.json writes mech.json and mech.csv (not mech.json.json); a seeded privatize warns on stderr that its
    output can be undone; labels that are the same text (1 and '1') are refused at design time, not by privatize."""
    import pml_design as pml

    code, out, err = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1", "-o",
                         str(tmp_path / "mech.json"))
    assert code == 0 and sorted(p.name for p in tmp_path.glob("mech*")) == ["mech.csv", "mech.json"], err
    labels = json.loads((tmp_path / "mech.json").read_text())["categories"]
    data = tmp_path / "rel.csv"
    data.write_text("device\n" + "\n".join(labels * 5) + "\n")
    code, out, err = run(capsys, "privatize", str(tmp_path / "mech.json"), "--csv", str(data), "--column", "device",
                         "-o", str(tmp_path / "out.csv"), "--seed", "3")
    assert code == 0 and "warning: --seed 3 makes this output reproducible" in err
    code, out, err = run(capsys, "privatize", str(tmp_path / "mech.json"), "--csv", str(data), "--column", "device",
                         "-o", str(tmp_path / "out2.csv"))
    assert code == 0 and "--seed" not in err
    with pytest.raises(ValueError, match=r"1 and '1' are the same text"):
        pml.design_from_samples([1, "1", "a", 1, "a"], epsilon=1.0, delta=0.1)


def test_second_review_items(capsys, tmp_path, counts_file):
    """A label with a line break stays one CSV cell in the matrix CSV (the first fast writer split it); an output
    folder that takes no file fails before the design, naming --output and the path, not a hidden temporary name;
    a tiny --time-limit within the contract's slack still runs."""
    import pandas

    data = tmp_path / "labels.csv"
    data.write_text('x\n"two\nlines"\na\na\nb\n"two\nlines"\nb\na\n')
    code, out, err = run(capsys, "design", "--csv", str(data), "--column", "x", "--epsilon", "1", "--radius", "0.1",
                         "--utility", "map_accuracy", "-o", str(tmp_path / "nl"))
    assert code == 0, err
    frame = pandas.read_csv(tmp_path / "nl.csv")
    assert sorted(frame["input"]) == ["a", "b", "two\nlines"] and not frame.isna().any().any()
    code, out, err = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1", "-o",
                         "/proc/m")
    assert code == 2 and err.strip() == "pml-design: error: argument --output: cannot write /proc/m.json: No such file or directory"
    code, out, err = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1",
                         "--time-limit", "0.3")
    assert code == 0, err


def test_a_design_warning_names_its_share_of_the_time_limit(capsys, tmp_path):
    """The design gets a share of --time-limit; its gap warning said "time limit 0.87 s; raise --time-limit" after
    --time-limit 2 (a review). It now names the share as such."""
    counts = tmp_path / "many.txt"
    counts.write_text("\n".join(f"c{i},{i * 7 % 13 + 1}" for i in range(1, 61)) + "\n")
    code, out, err = run(capsys, "design", "--counts", str(counts), "--epsilon", "4", "--radius", "0.05",
                         "--time-limit", "2")
    assert code == 0, err
    warn = [ln for ln in err.splitlines() if "warning" in ln and "time limit" in ln]
    assert warn and all("the design's share of --time-limit 2 s" in ln for ln in warn)


def test_a_refused_time_limit_names_the_time_limit_the_command_needs(capsys, tmp_path, monkeypatch):
    """The estimation design refuses a limit too short for its starting LDP channel, naming the seconds *it* needs;
    from the CLI, whose --time-limit also covers what follows the design (and --compare halves the design's share),
    the advice is the --time-limit that gives the design that time, and giving it runs."""
    import re

    from pml_design.cli import design as cli_design
    from pml_design.design.estimation import affordable, api

    monkeypatch.setattr(api, "MAX_COLUMN_GENERATION_N", 20)
    monkeypatch.setattr(affordable, "EVALUATION_SECONDS", (0.01, 0.0, 0.0))  # 0.01 s an entry: 40 x K entries
    counts = tmp_path / "c.txt"
    counts.write_text("\n".join(f"c{i},{5 + i % 3}" for i in range(40)) + "\n")
    monkeypatch.setattr(cli_design, "POST_SECONDS_PER_ENTRY",
                        {"disclosure": 1e-6, "files": 0.0, "binary files": 0.0, "json": 0.0})
    argv = ["design", "--counts", str(counts), "--epsilon", "1", "--delta", "1e-3", "--time-limit", "3"]
    for extra, shares in (([], 1), (["--compare"], 2)):
        code, _, err = run(capsys, *argv, *extra)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        mo = re.search(r"--time-limit to at least (\d+) s \(the design's share (\d+) s", err)
        assert mo, err
        need, share = int(mo.group(1)), int(mo.group(2))
        kept = 40 * 4096 * 1e-6  # (no machine factor below 1e6 entries)
        assert need >= shares * share + kept - 1e-9  # the command's own time is added to the design's need
    monkeypatch.setattr(affordable, "EVALUATION_SECONDS", (1e-9, 0.0, 0.0))
    assert run(capsys, *argv)[0] == 0


def test_privatize_parquet_keeps_the_other_columns_types(capsys, tmp_path, counts_file):
    """Parquet to Parquet: only the privatized column is rewritten; the others keep their types and nulls (a review:
    an int64 'age' came back as strings)."""
    import pandas

    prefix = tmp_path / "m"
    code, _, err = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1", "-o",
                       str(prefix))
    assert code == 0, err
    labels = json.loads((tmp_path / "m.json").read_text())["categories"]
    frame = pandas.DataFrame({"age": np.arange(40, dtype=np.int64), "dev": [labels[i % len(labels)] for i in range(40)],
                              "w": np.linspace(0.0, 1.0, 40)})
    frame.loc[3, "w"] = np.nan
    frame.to_parquet(tmp_path / "in.parquet")
    code, _, err = run(capsys, "privatize", str(prefix) + ".json", "--parquet", str(tmp_path / "in.parquet"),
                       "--column", "dev", "-o", str(tmp_path / "out.parquet"))
    assert code == 0, err
    out = pandas.read_parquet(tmp_path / "out.parquet")
    assert out["age"].dtype == np.int64 and out["w"].dtype == np.float64 and out["w"].isna().sum() == 1
    assert (out["age"] == frame["age"]).all() and set(out["dev"]) <= set(json.loads((tmp_path / "m.json").read_text())["output_labels"])


def test_the_time_limit_the_refusal_names_is_accepted_at_twice_the_load(monkeypatch):
    """The time kept back scales with a machine factor measured at the call, which grows with the load (a review:
    'give at least 199 s' at N = 2059, then with --time-limit 200 a second refusal, 'give at least 349 s', while other
    work ran). The limit the refusal names must be accepted when the factor has doubled since."""
    import argparse
    import re
    import time

    from pml_design.cli import design as cli_design
    from pml_design.cli._common import CliError
    from pml_design.design.estimation import affordable

    args = argparse.Namespace(time_limit=6.0, utility="frequency_estimation", json=False, compare=False,
                              matrix_format="auto")
    monkeypatch.setattr(affordable, "cached_single_thread_factor", lambda: 1.0)
    with pytest.raises(CliError, match="give at least") as info:
        cli_design._time_budget(args, 4059, time.perf_counter(), True)
    suggested = float(re.search(r"give at least (\d+) s", str(info.value)).group(1))
    monkeypatch.setattr(affordable, "cached_single_thread_factor", lambda: 2.0)
    args.time_limit = suggested
    design_limit, keep = cli_design._time_budget(args, 4059, time.perf_counter(), True)
    assert design_limit >= 0.1 * suggested and keep > 0


def test_estimate_on_a_file_of_records_names_no_value(capsys, tmp_path):
    """A fresh review: estimate given the raw file instead of the reports printed 'has 51+ output labels the mechanism
    does not know, e.g. [..., 'smartwatch'] (first at data row 1)': a rare protected value, a count and a row."""
    prefix = tmp_path / "mech"
    counts = tmp_path / "c.txt"
    counts.write_text("desktop,40\nlaptop,30\nphone,20\n")
    code, _, err = run(capsys, "design", "--counts", str(counts), "--epsilon", "1", "--radius", "0.1", "-o",
                       str(prefix))
    assert code == 0, err
    raw = tmp_path / "raw.csv"
    raw.write_text("device\n" + "\n".join(["laptop"] * 50 + ["smartwatch-of-alice"] + ["phone"] * 3) + "\n")
    code, out, err = run(capsys, "estimate", str(prefix) + ".json", "--csv", str(raw), "--column", "device")
    assert code == 2 and "does not know as output labels" in err and "not a file of its reports" in err
    err = _without(err, tmp_path)  # (pytest's folder may hold '51', as pytest-151 did)
    assert "alice" not in err and "laptop" not in err.split("not among")[0] and "row" not in err and "51" not in err


def test_a_file_that_appears_while_the_design_runs_is_not_replaced(capsys, counts_file, tmp_path, monkeypatch):
    """design -o checks its outputs before the design (minutes at large N), then wrote them with overwrite=True: a
    file created in between was replaced (a review). They are checked again when written."""
    import pml_design as pml

    prefix = tmp_path / "mech"
    real = pml.design

    def slow(*a, **k):
        (tmp_path / "mech.json").write_text("someone else's file\n")
        return real(*a, **k)

    monkeypatch.setattr(pml, "design", slow)
    code, _, err = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "1", "--radius", "0.1", "-o",
                       str(prefix))
    assert code == 2 and f"{prefix}.json exists; refusing to replace it" in err and "--force" in err
    assert (tmp_path / "mech.json").read_text() == "someone else's file\n" and not (tmp_path / "mech.csv").exists()


def test_estimate_refuses_raw_records_for_a_mechanism_named_like_its_inputs(capsys, tmp_path):
    """A new user gave estimate the raw file instead of the reports: the design (ε = 3, 4 categories) is square and
    one-to-one, its outputs carry the category names, so the raw records read as reports and their exact counts were
    printed (report_counts) as 'privatized reports'. privatize now leaves a mark beside its output, estimate requires
    it for such a mechanism, and privatize refuses a file that carries one."""
    rng = np.random.default_rng(0)
    cats = np.array(["desktop", "laptop", "phone", "tablet"])
    design = tmp_path / "design.csv"
    design.write_text("device\n" + "\n".join(cats[rng.choice(4, 4000, p=[0.1, 0.35, 0.4, 0.15])]) + "\n")
    release = tmp_path / "release.csv"
    release.write_text("device\n" + "\n".join(cats[rng.choice(4, 3000, p=[0.1, 0.35, 0.4, 0.15])]) + "\n")
    assert run(capsys, "design", "--csv", str(design), "--column", "device", "--epsilon", "3", "--delta", "1e-3",
               "-o", str(tmp_path / "dev"))[0] == 0
    mech = pd.load_mechanism(tmp_path / "dev.json")
    assert set(mech.output_labels) == set(mech.labels)  # (the case: outputs named after the inputs)
    code, out, err = run(capsys, "estimate", str(tmp_path / "dev.json"), "--csv", str(release), "--column", "device",
                         "--json")
    assert code == 2 and out == "" and "has no mark release.csv.pml.json" in err and len(err.splitlines()) == 1
    rep = tmp_path / "rep.csv"
    code, out, _ = run(capsys, "privatize", str(tmp_path / "dev.json"), "--csv", str(release), "--column", "device",
                       "-o", str(rep))
    assert code == 0 and "wrote " + str(rep) + " and its mark rep.csv.pml.json" in out
    assert (tmp_path / "rep.csv.pml.json").is_file()
    code, out, err = run(capsys, "estimate", str(tmp_path / "dev.json"), "--csv", str(rep), "--column", "device")
    assert code == 0, err
    code, _, err = run(capsys, "privatize", str(tmp_path / "dev.json"), "--csv", str(rep), "--column", "device",
                       "-o", str(tmp_path / "twice.csv"))
    assert code == 2 and "holds reports privatized already" in err
    rep.write_text(rep.read_text() + "phone\n")  # changed since: refused
    code, _, err = run(capsys, "estimate", str(tmp_path / "dev.json"), "--csv", str(rep), "--column", "device")
    assert code == 2 and "changed since privatize wrote it" in err
    code, _, err = run(capsys, "estimate", str(tmp_path / "dev.json"), "--csv", str(rep), "--column", "device",
                       "--unverified-reports")
    assert code == 0, err


def test_categories_that_never_occur_are_named_by_label_and_flag(capsys, tmp_path):
    """A new user: 389 of 2 000 categories absent from the public sample gave 'pml-design: error: symbols [284, 359,
    ...]', a 3 kB line of positions with no flag. The categories are named (ten at most) with the flag that gave them."""
    data = tmp_path / "d.csv"
    data.write_text("v\n" + "a\nb\n" * 20)
    cats = tmp_path / "cats.txt"
    cats.write_text("a\nb\n" + "".join(f"z{i}\n" for i in range(30)))
    code, out, err = run(capsys, "design", "--csv", str(data), "--column", "v", "--epsilon", "1", "--delta", "1e-3",
                         "--categories-file", str(cats))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert ("argument --categories-file: the categories ['z0', 'z1', 'z2', 'z3', 'z4', 'z5', 'z6', 'z7', 'z8', 'z9'] "
            "... (30 in all) never occur") in err and "--allow-zero" in err


def test_design_says_where_its_categories_come_from(capsys, csv_file):
    """A new user at N = 2 000: categories absent from the public sample were left out silently and surfaced only
    when privatize refused the private file. The output says that the categories are the design data's values."""
    code, out, _ = run(capsys, "design", "--csv", str(csv_file[0]), "--column", "colour", "--epsilon", "1", "--radius",
                       "0.1")
    assert code == 0 and "note: the categories are the" in out and "--categories-file" in out
