"""The "first cohort of LDP reports" workflow on the command line (docs/cli.md, "A first cohort of LDP reports").

``privatize --oracle`` (cohort 1, ε₁-LDP) → ``design --reports`` (P̂ and its ball from the reports) → ``privatize
MECHANISM`` (cohort 2) → ``estimate``; the mechanism file's claims; one-line errors; and the distribution of the
reports ``privatize --oracle grr`` writes, by a chi-square test that has the power to see a wrong ε₁.
"""

from __future__ import annotations

import csv
import json
import pathlib

import numpy as np
import pytest
from scipy import stats

import pml_design as pml
from pml_design.cli import main

CATS = ["A", "B", "C"]
P_TRUE = np.array([0.5, 0.3, 0.2])


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write_column(path: pathlib.Path, values, column: str = "country") -> pathlib.Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", column])
        w.writerows([i, v] for i, v in enumerate(values))
    return path


def read_column(path: pathlib.Path, column: str = "country") -> list[str]:
    with path.open(newline="") as fh:
        return [row[column] for row in csv.DictReader(fh)]


@pytest.fixture()
def cohorts(tmp_path):
    rng = np.random.default_rng(7)
    one = write_column(tmp_path / "cohort1.csv", np.array(CATS)[rng.choice(3, 4000, p=P_TRUE)])
    two = write_column(tmp_path / "cohort2.csv", np.array(CATS)[rng.choice(3, 6000, p=P_TRUE)])
    return one, two


ORACLE_FLAGS = {"grr": ["--oracle", "grr", "--ldp-epsilon", "1"],
                "ss": ["--oracle", "ss", "--ldp-epsilon", "1", "--k", "1"],
                "ss_k2": ["--oracle", "ss", "--ldp-epsilon", "0.5", "--k", "2"],
                "hr": ["--oracle", "hr", "--ldp-epsilon", "2"]}
ROUND_TRIP = {"grr": {"oracle": "GRR", "ldp_epsilon": 1.0, "n_reports": 4000},
              "ss_k2": {"oracle": "SS", "ldp_epsilon": 0.5, "n_reports": 4000, "k": 2},
              "hr": {"oracle": "HR", "ldp_epsilon": 2.0, "n_reports": 4000, "p_star": 1 / (1 + np.exp(-2.0)),
                     "q_star": 0.5, "ball": "sign vectors, Bernstein (Hadamard response)"}}


# --- the round trip -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", sorted(ROUND_TRIP))
def test_round_trip_cohort1_design_cohort2_estimate(capsys, tmp_path, cohorts, key):
    one, two = cohorts
    suffix = ".parquet" if key == "ss_k2" else ".csv"  # Parquet reports too
    reports = tmp_path / f"reports1{suffix}"
    code, out, err = run(capsys, "privatize", *ORACLE_FLAGS[key], "--categories", "A,B,C", "--csv", one,
                         "--column", "country", "-o", reports, "--seed", 1, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["rows"] == 4000 and summary["oracle"] == ROUND_TRIP[key]["oracle"]
    assert summary["provenance"] == f"{reports}.ldp.json" and pathlib.Path(summary["provenance"]).is_file()
    assert "--seed 1 makes this output reproducible" in err  # as privatize MECHANISM --seed warns
    code, out, err = run(capsys, "design", "--reports", reports, "--column", "country", *ORACLE_FLAGS[key],
                         "--categories", "A,B,C", "--epsilon", 1, "--delta", "1e-6", "--allow-zero",
                         "--time-limit", 60, "--no-progress", "-o", tmp_path / "mech", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["prior_source"] == "ldp reports" and res["prior_params"] == ROUND_TRIP[key]
    assert res["m"] == 4000 and "counts" not in res and res["source"] == {"reports": str(reports), "column": "country"}
    assert res["certified_epsilon"] <= 1 + 1e-9 and "-LDP for the first cohort's m=4000 reports" in res["statement"]
    assert res["categories"] == CATS and np.abs(np.array(res["p_hat"]) - P_TRUE).sum() <= res["radius"]

    # the file: loadable (hash, claims re-derived, re-certified), the LDP source and its parameters
    doc = json.loads((tmp_path / "mech.json").read_text())
    assert doc["prior_source"] == "ldp reports" and doc["prior_params"] == ROUND_TRIP[key]
    assert doc["m"] == 4000 and doc["design_data"]["kind"] is None and doc["statement"] == res["statement"]
    mech = pml.load_mechanism(tmp_path / "mech.json")
    assert mech.metadata["prior_source"] == "ldp reports" and list(mech.labels) == CATS

    # cohort 2 through the existing commands
    code, _, err = run(capsys, "privatize", tmp_path / "mech.json", "--csv", two, "--column", "country",
                       "-o", tmp_path / "private2.csv", "--seed", 2)
    assert code == 0, err
    code, out, err = run(capsys, "estimate", tmp_path / "mech.json", "--csv", tmp_path / "private2.csv",
                         "--column", "country", "--json")
    assert code == 0, err
    est = json.loads(out)
    assert est["n"] == 6000 and est["categories"] == CATS
    assert np.abs(np.array(est["estimate"]) - P_TRUE).max() < 0.06


def test_text_output_and_the_report_formats(capsys, tmp_path, cohorts):
    one, _ = cohorts
    code, out, err = run(capsys, "privatize", *ORACLE_FLAGS["ss_k2"], "--categories", "A,B,C", "--csv", one,
                         "--column", "country", "-o", tmp_path / "r.csv", "--seed", 3)
    assert code == 0, err
    assert "0.5-LDP for every record of the column (oracle SS with k=2" in out
    assert "pml-design design --reports" in out and "--k 2 --categories A,B,C" in out
    cells = read_column(tmp_path / "r.csv")
    assert set(cells) <= {"A+B", "A+C", "B+C"}  # k labels in the order of --categories
    assert read_column(tmp_path / "r.csv", "id") == read_column(one, "id")  # other columns copied
    code, _, err = run(capsys, "privatize", *ORACLE_FLAGS["hr"], "--categories", "A,B,C", "--csv", one,
                       "--column", "country", "-o", tmp_path / "h.csv", "--seed", 3)
    assert code == 0, err
    assert set(read_column(tmp_path / "h.csv")) <= {"0", "1", "2", "3"}  # K = 4 outputs for N = 3
    code, out, err = run(capsys, "design", "--reports", tmp_path / "r.csv", "--column", "country",
                         *ORACLE_FLAGS["ss_k2"], "--categories", "A,B,C", "--epsilon", 1, "--delta", "1e-3",
                         "--allow-zero")
    assert code == 0, err
    assert "0.5-LDP estimate from m=4000 reports (SS) over 3 categories" in out
    assert "l1 radius" in out and "for the LDP reports" in out


def test_subset_selection_reports_do_not_reveal_the_input_by_their_order():
    """The Python oracle wrote the input first whenever the subset held it (argpartition of key −1): the row order
    leaked x with probability p*. Rows are sorted now, a function of the subset alone."""
    o = pml.subset_selection(10, 1.0, k=3)
    r = o.privatize(np.full(20000, 9), rng=0)
    assert np.all(np.diff(r.astype(int), axis=1) > 0)
    assert np.all(r[:, 0] != 9)


# --- errors: one line, the flag named, no partial output ------------------------------------------------------------
@pytest.fixture()
def reports_file(capsys, tmp_path, cohorts):
    one, _ = cohorts
    rep = tmp_path / "reports1.csv"
    code, _, err = run(capsys, "privatize", *ORACLE_FLAGS["grr"], "--categories", "A,B,C", "--csv", one,
                       "--column", "country", "-o", rep, "--seed", 0)
    assert code == 0, err
    return rep


def _bad_cases(tmp: pathlib.Path, one: pathlib.Path, rep: pathlib.Path) -> list:
    priv = ["privatize", "--csv", one, "--column", "country"]
    des = ["design", "--reports", rep, "--column", "country", "--epsilon", 1, "--delta", "1e-6"]
    grr = ["--oracle", "grr", "--ldp-epsilon", 1, "--categories", "A,B,C"]
    return [
        ([*priv, "--oracle", "grr", "--categories", "A,B,C", "-o", tmp / "o.csv"], "argument --ldp-epsilon: required"),
        ([*priv, "mech.json", *grr, "-o", tmp / "o.csv"], "argument --oracle: not allowed with MECHANISM"),
        ([*priv, "-o", tmp / "o.csv"], "argument MECHANISM: give a mechanism file"),
        ([*priv, "--oracle", "grr", "--ldp-epsilon", 1, "-o", tmp / "o.csv"], "argument --categories: required"),
        ([*priv, "--oracle", "ss", "--ldp-epsilon", 1, "--categories", "A+B,C", "-o", tmp / "o.csv"],
         "argument --categories: 'A+B' holds '+'"),
        ([*priv, *grr, "--k", 2, "-o", tmp / "o.csv"], "argument --k: only with --oracle ss"),
        ([*priv, "--oracle", "ss", "--ldp-epsilon", 1, "--categories", "A,B,C", "--k", 3, "-o", tmp / "o.csv"],
         "argument --k: k must be <= n - 1 = 2"),
        ([*priv, "--oracle", "grr", "--ldp-epsilon", 1, "--categories", "A,B", "-o", tmp / "o.csv"],
         "argument --column: column 'country' of"),  # a value outside the list: not quoted (protected)
        ([*priv, *grr, "-o", one, "--force"], "argument --output:"),  # the input itself, even with --force
        ([*priv, *grr, "--ldp-epsilon", 0, "-o", tmp / "o.csv"], "argument --ldp-epsilon: must be a finite number > 0"),
        ([*priv, *grr, "--allow-design-data", "-o", tmp / "o.csv"], "argument --allow-design-data: not allowed"),
        ([*des, "--oracle", "grr", "--categories", "A,B,C"], "argument --ldp-epsilon: required"),
        ([*des, "--ldp-epsilon", 1, "--categories", "A,B,C"], "argument --oracle: required with --reports"),
        ([*des, "--oracle", "grr", "--ldp-epsilon", 1], "argument --categories: required"),
        ([*des, "--oracle", "grr", "--ldp-epsilon", 1, "--categories", "A,B"],
         "argument --categories: does not match"),  # the provenance file names the categories the reports used
        ([*des, "--oracle", "ss", "--ldp-epsilon", 1, "--k", 2, "--categories", "A,B,C"],
         "argument --oracle: does not match"),  # GRR reports read as 2-subsets
        ([*des, *grr, "--ldp-epsilon", 3], "argument --ldp-epsilon: does not match"),  # a wrong epsilon_1
        ([*des, *grr, "--column", 0], "argument --column: does not match"),
        ([*des, *grr, "--unverified-reports"], "argument --unverified-reports: not allowed"),
        (["design", "--csv", one, "--column", "country", "--epsilon", 1, "--delta", "1e-6", "--unverified-reports"],
         "argument --unverified-reports: only with --reports"),
        ([*des, *grr, "-o", tmp / "reports1"], "argument --output:"),  # -o reports1 would write the input
        ([*des[:-2], "--radius", "0.1", *grr], "argument --radius: not allowed with --reports"),
        ([*des, *grr, "--dp-epsilon", 1], "argument --dp-epsilon: not allowed with --reports"),
        (["design", "--csv", one, "--column", "country", "--epsilon", 1, "--delta", "1e-6", "--oracle", "grr"],
         "argument --oracle: only with --reports"),
        (["privatize", "mech.json", "--csv", one, "--column", "country", "--ldp-epsilon", 1, "-o", tmp / "o.csv"],
         "argument --ldp-epsilon: only with --oracle"),
    ]


def test_bad_flags_are_one_line_exit_2_no_output(capsys, tmp_path, cohorts, reports_file):
    one, _ = cohorts
    write_column(tmp_path / "mech.json", ["x"])  # (never read: the flags are refused first)
    before = sorted(p.name for p in tmp_path.iterdir())
    for argv, needle in _bad_cases(tmp_path, one, reports_file):
        code, out, err = run(capsys, *argv)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and needle in lines[0], (argv, err)
        assert lines[0].startswith("pml-design: error: argument ") and out == ""
        assert "Traceback" not in err
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # no partial or temporary file left
    assert read_column(one)[:3] == read_column(one)[:3] and one.stat().st_size > 0


def test_error_messages_quote_no_value_of_the_data(capsys, tmp_path):
    secret = write_column(tmp_path / "c1.csv", ["A", "B", "Zanzibar", "C"] * 50)
    code, _, err = run(capsys, "privatize", "--oracle", "grr", "--ldp-epsilon", 1, "--categories", "A,B,C",
                       "--csv", secret, "--column", "country", "-o", tmp_path / "r.csv")
    assert code == 2 and "Zanzibar" not in err and "row" not in err.split("holds values")[1]
    assert not (tmp_path / "r.csv").exists()
    # not quoted either where they are meant to be reports: with --unverified-reports nothing shows that they are (a
    # new user's trial got the first raw records' ages, in order, from this message, session 21)
    rep = write_column(tmp_path / "r.csv", ["A", "B", "Zanzibar", "C"] * 50)
    code, _, err = run(capsys, "design", "--reports", rep, "--column", "country", "--oracle", "grr",
                       "--ldp-epsilon", 1, "--categories", "A,B,C", "--epsilon", 1, "--delta", "0.1",
                       "--unverified-reports")
    assert code == 2 and "holds values that GRR over --categories cannot output (not shown" in err
    assert "Zanzibar" not in err and "row" not in err and "200" not in err


def test_too_few_reports_and_zero_estimates_name_the_flag(capsys, tmp_path):
    few = write_column(tmp_path / "few.csv", ["A", "B", "C"] * 5)
    code, _, err = run(capsys, "design", "--reports", few, "--column", "country", "--oracle", "grr",
                       "--ldp-epsilon", 1, "--categories", "A,B,C", "--epsilon", 1, "--delta", "1e-6",
                       "--unverified-reports")
    assert code == 2 and err.startswith("pml-design: error: argument --reports: 15 reports of GRR") and "too few" in err
    # an unbounded radius and an astronomic number of reports are said in words, not as 'inf' (a review)
    for eps1, delta in ((1, "1e-300"), ("1e-12", "1e-6")):
        code, _, err = run(capsys, "design", "--reports", few, "--column", "country", "--oracle", "grr",
                           "--ldp-epsilon", eps1, "--categories", "A,B,C", "--epsilon", 1, "--delta", delta,
                           "--unverified-reports")
        assert code == 2 and "too few" in err and "the radius is unbounded" in err and "inf" not in err, err
    assert "no feasible number of reports gives radius < 1" in err and "raise --ldp-epsilon or --delta" in err
    zero = write_column(tmp_path / "zero.csv", ["A"] * 3000 + ["B"] * 3000)  # C estimated at 0
    code, _, err = run(capsys, "design", "--reports", zero, "--column", "country", "--oracle", "grr",
                       "--ldp-epsilon", 3, "--categories", "A,B,C", "--epsilon", 1, "--delta", "0.1",
                       "--unverified-reports")
    assert code == 2 and "argument --reports: the estimate from the reports is 0 for categories ['C']" in err
    assert "pass --allow-zero" in err


def test_reports_need_their_provenance_file(capsys, tmp_path, cohorts, reports_file):
    """A review: the raw first-cohort file passed as --reports was read as GRR reports, and the mechanism file's P-hat
    gave back its exact counts under an 'LDP' claim; a wrong --ldp-epsilon gave a false PML guarantee (leakage 1.32 at
    the true P for a claimed 1). privatize --oracle writes REPORTS.ldp.json; design --reports checks it."""
    one, _ = cohorts
    prov = json.loads(pathlib.Path(str(reports_file) + ".ldp.json").read_text())
    assert prov["format"] == "pml-design-ldp-reports" and prov["oracle"] == "GRR" and prov["ldp_epsilon"] == 1.0
    assert prov["categories"] == CATS and prov["column"] == "country" and len(prov["sha256"]) == 64
    base = ["design", "--column", "country", "--oracle", "grr", "--ldp-epsilon", 1, "--categories", ",".join(CATS),
            "--epsilon", 1, "--delta", "1e-6"]
    code, _, err = run(capsys, *base, "--reports", one)  # the raw records, not reports
    assert code == 2 and "argument --reports:" in err and "has no provenance file" in err
    assert "--unverified-reports" in err and len(err.strip().splitlines()) == 1
    changed = tmp_path / "changed.csv"
    changed.write_text(pathlib.Path(reports_file).read_text().replace("\n", "\n", 1) + "\n")
    pathlib.Path(str(changed) + ".ldp.json").write_text(pathlib.Path(str(reports_file) + ".ldp.json").read_text())
    code, _, err = run(capsys, *base, "--reports", changed)
    assert code == 2 and "changed since privatize --oracle wrote it" in err
    code, out, err = run(capsys, *base, "--reports", reports_file, "--json")
    assert code == 0, err


def test_a_category_with_a_comma_round_trips_through_categories_file(capsys, tmp_path):
    """--categories A,B,... cannot hold 'Korea, Republic of'; --categories-file (one per line) can, through privatize
    --oracle -> design --reports -> privatize MECHANISM; the provenance file stores the list, which compares equal
    whichever form gave it."""
    cats = ["Korea, Republic of", "France", "Chad"]
    rng = np.random.default_rng(3)
    one = write_column(tmp_path / "c1.csv", np.array(cats)[rng.choice(3, 4000, p=P_TRUE)])
    listed = tmp_path / "cats.txt"
    listed.write_text("\n".join(cats) + "\n", encoding="utf-8")
    reports = tmp_path / "r.csv"
    code, out, err = run(capsys, "privatize", *ORACLE_FLAGS["grr"], "--categories-file", listed, "--csv", one,
                         "--column", "country", "-o", reports, "--seed", 4)
    assert code == 0, err
    assert f"--categories-file {listed}" in out  # the next command names the file, not a comma-joined list
    assert json.loads(pathlib.Path(str(reports) + ".ldp.json").read_text())["categories"] == cats
    assert set(read_column(reports)) == set(cats)
    design = ["design", "--reports", reports, "--column", "country", *ORACLE_FLAGS["grr"], "--epsilon", 1,
              "--delta", "1e-6", "--time-limit", 60]
    code, out, err = run(capsys, *design, "--categories-file", listed, "-o", tmp_path / "mech", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["categories"] == cats and np.abs(np.array(res["p_hat"]) - P_TRUE).sum() <= res["radius"]
    code, out, err = run(capsys, "privatize", tmp_path / "mech.json", "--csv", one, "--column", "country", "-o",
                         tmp_path / "p.csv", "--seed", 5)
    assert code == 0, err
    listed.write_text("France\nChad\nKorea, Republic of\n")  # another order: refused, naming the file's flag
    code, _, err = run(capsys, *design, "--categories-file", listed)
    assert code == 2 and err.startswith("pml-design: error: argument --categories-file: does not match") \
        and "['Korea, Republic of', 'France', 'Chad']" in err
    # without a comma, the two forms make the same provenance: privatize with the file, design with the list
    listed.write_text("A\r\nB\r\nC\r\n")  # (CRLF line endings)
    code, _, err = run(capsys, "privatize", *ORACLE_FLAGS["grr"], "--categories-file", listed, "--csv",
                       write_column(tmp_path / "abc.csv", ["A", "B", "C"] * 700), "--column", "country", "-o",
                       tmp_path / "r2.csv", "--seed", 6)
    assert code == 0, err
    code, _, err = run(capsys, "design", "--reports", tmp_path / "r2.csv", "--column", "country", *ORACLE_FLAGS["grr"],
                       "--categories", "A,B,C", "--epsilon", 1, "--delta", "0.01", "--allow-zero")
    assert code == 0, err


def test_column_given_by_index_matches_the_provenance(capsys, reports_file):
    """The provenance file names the column by its header: --column 1 (0-based: 'country') was refused as 'does not
    match'; it is resolved to the header name first. Column 0 ('id') is another column and still refused."""
    base = ["design", "--reports", reports_file, *ORACLE_FLAGS["grr"], "--categories", "A,B,C", "--epsilon", 1,
            "--delta", "1e-6", "--json"]
    code, out, err = run(capsys, *base, "--column", 1)
    assert code == 0, err
    assert json.loads(out)["m"] == 4000
    code, _, err = run(capsys, *base, "--column", 0)
    assert code == 2 and "argument --column: does not match" in err and "'country'" in err


def test_help_texts_describe_the_workflow(capsys):
    code, out, _ = run(capsys, "privatize", "--help")
    out = " ".join(out.split())  # (argparse wraps the lines)
    assert code == 0 and "--oracle {grr,ss,hr}" in out and "--ldp-epsilon" in out and "joined by '+'" in out
    code, out, _ = run(capsys, "design", "--help")
    out = " ".join(out.split())
    assert code == 0 and "--reports FILE" in out and "privatize --oracle" in out


# --- the reports have the right distribution, and the test sees a wrong epsilon_1 -----------------------------------
def _grr_fit_pvalues(inputs: list[str], reports: list[str], eps: float) -> tuple[float, float]:
    """Chi-square tests of the (input, report) table against GRR at ``eps`` (``p* = e^ε/(e^ε + N − 1)`` on the input,
    ``q*`` on every other category): ``(p of the whole table, N(N − 1) df; p of the reports kept, 1 df)``. The
    first checks the shape (the other categories equally likely), the second has the power to see ε₁."""
    n = len(CATS)
    idx = {c: i for i, c in enumerate(CATS)}
    table = np.zeros((n, n))
    np.add.at(table, ([idx[x] for x in inputs], [idx[y] for y in reports]), 1)
    e = np.exp(eps)
    W = np.full((n, n), 1.0 / (e + n - 1))
    np.fill_diagonal(W, e / (e + n - 1))
    expected = table.sum(axis=1, keepdims=True) * W
    whole = float(((table - expected) ** 2 / expected).sum())
    kept, total, p_keep = np.trace(table), table.sum(), e / (e + n - 1)
    one_df = (kept - total * p_keep) ** 2 / (total * p_keep * (1 - p_keep))
    return float(stats.chi2.sf(whole, n * (n - 1))), float(stats.chi2.sf(one_df, 1))


def test_grr_reports_have_the_distribution_of_their_epsilon_and_the_test_has_power(capsys, tmp_path):
    values = np.array(CATS)[np.random.default_rng(5).choice(3, 8000, p=P_TRUE)]
    one = write_column(tmp_path / "c1.csv", values)
    pvalues = {}
    for eps in ("1", "1.15", "0.85"):
        out_path = tmp_path / f"r{eps}.csv"
        code, _, err = run(capsys, "privatize", "--oracle", "grr", "--ldp-epsilon", eps, "--categories", "A,B,C",
                           "--csv", one, "--column", "country", "-o", out_path, "--seed", 11)
        assert code == 0, err
        reports = read_column(out_path)
        assert read_column(out_path, "id") == [str(i) for i in range(8000)]  # rows kept in order
        pvalues[eps] = _grr_fit_pvalues(list(values), reports, 1.0)
    assert min(pvalues["1"]) > 0.01, pvalues  # reports written at epsilon_1 = 1 fit GRR at 1
    assert pvalues["1.15"][1] < 1e-5 and pvalues["0.85"][1] < 1e-5, pvalues  # 15 % off is seen on 8 000 reports


def test_the_commands_of_docs_cli_md_run_as_printed(capsys, tmp_path, monkeypatch, cohorts):
    """The bash block of docs/cli.md's section "A first cohort of LDP reports", line by line, in a folder holding
    cohort1.csv and cohort2.csv."""
    import shlex

    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    section = text.split("## A first cohort of LDP reports", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    commands = [shlex.split(line) for line in block.splitlines() if line.startswith("pml-design ")]
    assert [c[1] for c in commands] == ["privatize", "design", "privatize", "estimate", "estimate"]
    monkeypatch.chdir(tmp_path)
    outs = []
    for command in commands:
        code, out, err = run(capsys, *command[1:])
        assert code == 0, (command, err)
        outs.append(out)
    assert "estimated distribution of 'country' from n=6000 privatized reports" in outs[3]
    assert "from n=10000 reports, combined by maximum likelihood: n1=4000 first-cohort reports" in outs[4]
    assert json.loads((tmp_path / "mech.json").read_text())["prior_source"] == "ldp reports"


def test_a_huge_ldp_epsilon_is_warned_about_and_capped(capsys, tmp_path, cohorts):
    """A review: --ldp-epsilon 1000 was accepted without a word, and P-hat x m gave back the exact counts."""
    one, _ = cohorts
    base = ["privatize", "--oracle", "grr", "--categories", "A,B,C", "--csv", one, "--column", "country"]
    code, _, err = run(capsys, *base, "--ldp-epsilon", 20, "-o", tmp_path / "r20.csv")
    assert code == 0 and "pml-design: warning: --ldp-epsilon 20 is so large" in err and "in all but name" in err
    code, _, err = run(capsys, *base, "--ldp-epsilon", 10, "-o", tmp_path / "r10.csv")
    assert code == 0 and "warning" not in err
    code, _, err = run(capsys, *base, "--ldp-epsilon", 701, "-o", tmp_path / "r701.csv")
    assert code == 2 and "argument --ldp-epsilon: 701 is above 700" in err and not (tmp_path / "r701.csv").exists()


def test_the_provenance_file_never_replaces_an_input(capsys, tmp_path):
    """OUT.ldp.json follows the rules of every output: the input itself is refused even with --force, and another
    kind of file only with --force."""
    src = write_column(tmp_path / "r.csv.ldp.json", ["A", "B", "C"] * 20)  # an input named as r.csv's provenance
    before = src.read_bytes()
    base = ["privatize", "--oracle", "grr", "--ldp-epsilon", 1, "--categories", "A,B,C", "--column", "country"]
    code, _, err = run(capsys, *base, "--csv", src, "-o", tmp_path / "r.csv", "--force")
    assert code == 2 and err.startswith("pml-design: error: argument --output:") and src.read_bytes() == before
    assert not (tmp_path / "r.csv").exists()
    other = tmp_path / "o.csv.ldp.json"
    other.write_text("not a provenance file\n")
    one = write_column(tmp_path / "one.csv", ["A", "B", "C"] * 20)
    code, _, err = run(capsys, *base, "--csv", one, "-o", tmp_path / "o.csv")
    assert code == 2 and "argument --output:" in err and other.read_text() == "not a provenance file\n"
    code, _, err = run(capsys, *base, "--csv", one, "-o", tmp_path / "o.csv", "--force")
    assert code == 0, err
    assert json.loads(other.read_text())["format"] == "pml-design-ldp-reports"


def test_an_existing_provenance_file_is_replaced_only_with_force(capsys, tmp_path):
    """A review: when OUT did not exist, an existing OUT.ldp.json (a provenance file, e.g. of a report file moved away
    since) was replaced silently. It is refused like OUT itself, and nothing is written."""
    base = ["privatize", "--oracle", "grr", "--ldp-epsilon", 1, "--categories", "A,B,C", "--column", "country",
            "--seed", 3]
    one = write_column(tmp_path / "one.csv", ["A", "B", "C"] * 20)
    out = tmp_path / "r.csv"
    assert run(capsys, *base, "--csv", one, "-o", out)[0] == 0
    prov = pathlib.Path(str(out) + ".ldp.json")
    kept = tmp_path / "kept.csv"
    out.rename(kept)  # the reports moved away; their provenance file stays at r.csv.ldp.json
    before = prov.read_bytes()
    code, _, err = run(capsys, *base[:-2], "--ldp-epsilon", 2, "--csv", one, "-o", out)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0] == (f"pml-design: error: argument --output: {prov}, the provenance file written beside {out}, "
                        "exists; refusing to replace it (choose another output name, or pass --force to replace it)")
    assert prov.read_bytes() == before and not out.exists()
    # a second run onto an existing OUT names OUT itself
    kept.rename(out)
    code, _, err = run(capsys, *base, "--csv", one, "-o", out)
    assert code == 2 and f"argument --output: {out} exists; refusing to replace it" in err, err
    assert prov.read_bytes() == before
    out.unlink()
    code, _, err = run(capsys, *base[:-2], "--ldp-epsilon", 2, "--csv", one, "-o", out, "--force")
    assert code == 0, err
    assert json.loads(prov.read_text())["ldp_epsilon"] == 2.0 and out.is_file()


def test_design_o_never_replaces_the_provenance_file_of_its_reports(capsys, tmp_path):
    """A review: `design --reports r.csv -o r.csv.ldp --force` replaced r.csv.ldp.json, the provenance file the command
    had just read (the reports were then unusable), and said it replaced 'the existing mechanism file'. An input's
    provenance file is an input: refused even with --force."""
    raw = tmp_path / "raw.csv"
    rng = np.random.default_rng(0)
    raw.write_text("v\n" + "".join(f"{c}\n" for c in rng.choice(["a", "b", "c"], 3000, p=[0.5, 0.3, 0.2])))
    rep = tmp_path / "r.csv"
    code = main(["privatize", "--oracle", "grr", "--ldp-epsilon", "2", "--categories", "a,b,c", "--csv", str(raw),
                 "--column", "v", "-o", str(rep)])
    capsys.readouterr()
    assert code == 0 and (tmp_path / "r.csv.ldp.json").exists()
    before = (tmp_path / "r.csv.ldp.json").read_bytes()
    code = main(["design", "--reports", str(rep), "--column", "v", "--oracle", "grr", "--ldp-epsilon", "2",
                 "--categories", "a,b,c", "--epsilon", "1", "--delta", "1e-3", "-o", str(tmp_path / "r.csv.ldp"),
                 "--force"])
    _, err = capsys.readouterr()
    assert code == 2 and "is the input --reports' provenance file" in err, err
    assert (tmp_path / "r.csv.ldp.json").read_bytes() == before


def test_a_first_cohorts_reports_are_never_privatized_again(capsys, tmp_path, cohorts, reports_file):
    """A new user's trial privatized the first cohort's GRR reports again with the PML mechanism: the estimate said
    0.150 [0.144, 0.156] for a share of 0.25, exit 0, no warning (session 21). Both privatize routes refuse them."""
    code, _, err = run(capsys, "design", "--reports", reports_file, "--column", "country", *ORACLE_FLAGS["grr"],
                       "--categories", "A,B,C", "--epsilon", 1, "--delta", "1e-2", "-o", tmp_path / "m")
    assert code == 0, err
    for argv in ([tmp_path / "m.json"], ORACLE_FLAGS["grr"] + ["--categories", "A,B,C"]):
        code, out, err = run(capsys, "privatize", *argv, "--csv", reports_file, "--column", "country",
                             "-o", tmp_path / "again.csv")
        assert code == 2 and out == "" and "holds a first cohort's LDP reports (reports1.csv.ldp.json says so)" in err
        assert not (tmp_path / "again.csv").exists()


def test_abbreviated_flags_are_refused_and_dp_epsilon_errors_name_the_flag(capsys, tmp_path):
    """A new user's trial: `--ldp 1` was read as `--ldp-epsilon 1` silently; `--dp-epsilon 1e-12` was refused
    without naming the flag (session 21)."""
    code, _, err = run(capsys, "privatize", "--oracle", "grr", "--ldp", 1, "--categories", "A,B", "--csv",
                       tmp_path / "x.csv", "--column", "c", "-o", tmp_path / "r.csv")
    assert code == 2 and "unrecognized arguments: --ldp" in err
    data = write_column(tmp_path / "d.csv", ["A", "B"] * 50)
    code, _, err = run(capsys, "design", "--csv", data, "--column", "country", "--epsilon", 1, "--delta", "1e-3",
                       "--dp-epsilon", "1e-12", "--categories", "A,B")
    assert code == 2 and err.startswith("pml-design: error: argument --dp-epsilon: ")


def test_force_never_replaces_reports_or_a_matrix_csv_with_another_kind(capsys, tmp_path, cohorts, reports_file):
    """A new user's trial (session 21): `design -o reports1 --force` replaced the first cohort's report file with a
    matrix CSV (its provenance left describing another file), and `privatize -o m.csv --force` replaced a
    mechanism's matrix CSV with privatized records."""
    design = ["design", "--reports", reports_file, "--column", "country", *ORACLE_FLAGS["grr"], "--categories",
              "A,B,C", "--epsilon", 1, "--delta", "1e-2"]
    other = tmp_path / "other.csv"  # another cohort's reports, with their provenance
    other.write_bytes(reports_file.read_bytes())
    (tmp_path / "other.csv.ldp.json").write_bytes((tmp_path / "reports1.csv.ldp.json").read_bytes())
    code, _, err = run(capsys, *design, "-o", tmp_path / "other", "--force")
    assert code == 2 and "holds a first cohort's LDP reports (other.csv.ldp.json says so)" in err
    assert other.read_bytes() == reports_file.read_bytes()
    code, _, err = run(capsys, *design, "-o", tmp_path / "m", "--matrix-format", "text")
    assert code == 0, err
    one, _ = cohorts
    code, _, err = run(capsys, "privatize", tmp_path / "m.json", "--csv", one, "--column", "country",
                       "-o", tmp_path / "m.csv", "--force")
    assert code == 2 and "is the matrix CSV of a mechanism file" in err


def test_force_across_the_two_privatize_routes_and_binary_design(capsys, tmp_path, cohorts, reports_file):
    """A second review (session 21): privatize --oracle --force over a mechanism's output left both side files, and
    design --matrix-format binary refused a report file named PREFIX.csv that it never writes."""
    one, _ = cohorts
    code, _, err = run(capsys, "design", "--reports", reports_file, "--column", "country", *ORACLE_FLAGS["grr"],
                       "--categories", "A,B,C", "--epsilon", 1, "--delta", "1e-2", "-o", tmp_path / "m")
    assert code == 0, err
    code, _, err = run(capsys, "privatize", tmp_path / "m.json", "--csv", one, "--column", "country",
                       "-o", tmp_path / "p.csv")
    assert code == 0, err
    code, _, err = run(capsys, "privatize", *ORACLE_FLAGS["grr"], "--categories", "A,B,C", "--csv", one, "--column",
                       "country", "-o", tmp_path / "p.csv", "--force")
    assert code == 2 and "holds privatized reports (p.csv.pml.json says so)" in err
    code, _, err = run(capsys, "privatize", tmp_path / "m.json", "--csv", one, "--column", "country",
                       "-o", reports_file, "--force")
    assert code == 2 and "holds a first cohort's LDP reports" in err
    code, _, err = run(capsys, "design", "--reports", reports_file, "--column", "country", *ORACLE_FLAGS["grr"],
                       "--categories", "A,B,C", "--epsilon", 1, "--delta", "1e-2", "-o", tmp_path / "p",
                       "--matrix-format", "binary")
    assert code == 0, err  # p.csv (privatized reports) is left alone: binary writes only p.json
