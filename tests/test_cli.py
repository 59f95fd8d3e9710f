"""Tests of the pml-design command line (in-process through main([...]); once through a subprocess)."""

from __future__ import annotations

import csv
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
SUBCOMMANDS = [["demo"], ["design"], ["privatize"], ["estimate"], ["calibrate"], ["calibrate", "laplace"], ["calibrate", "gaussian"],
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
    assert set(rows) == {"PML (designed)", "optimal LDP", "randomized resp."}
    # the PML design over a ball is at least as useful as the optimal LDP mechanism, which beats RR
    assert rows["PML (designed)"]["utility"] >= rows["optimal LDP"]["utility"] - 1e-9
    assert rows["optimal LDP"]["utility"] >= rows["randomized resp."]["utility"] - 1e-9
    assert all(0 <= r["tv_error"] <= 1 for r in rows.values())
    assert res["released_records"] == codes.size - 3000


def test_demo_default_prints_table_and_statement(capsys):
    code, out, _ = run(capsys, "demo", "--no-progress")
    assert code == 0
    assert "relationship" in out and "optimal LDP" in out and "randomized resp." in out
    assert "(1, 1e-06)-PML" in out and "certified" in out


# --- design -----------------------------------------------------------------------------------------------
def test_design_from_counts_writes_json_and_csv(capsys, counts_file, tmp_path):
    prefix = tmp_path / "mech"
    code, out, _ = run(capsys, "design", "--counts", str(counts_file), "--epsilon", "0.5", "--delta", "1e-3",
                       "-o", str(prefix), "--json", "--compare")
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
                       "0.05", "--json")
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
    monkeypatch.setattr("pml_design.cli.__file__", str(tmp_path / "site-packages" / "pml_design" / "cli.py"))
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
