"""The combined two-cohort estimator's review: its covariance at large ε₁, GRR beyond the explicit channel, and
the command line's messages (:func:`pml_design.cohort.combined_estimate`, ``estimate --first-cohort``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pml_design as pml
from pml_design.cohort import combined_estimate
from pml_design.mechanisms.frequency_oracles.fisher import fisher_information
from pml_design.mechanisms.mechanism import _sum_zero_basis, simplex_covariance
from tests.test_cohort_combined import _cli, _write

CATS = ("A", "B", "C", "D")
COUNTS = np.array([225, 150, 125, 0])  # 500 reports, category D never reported


def _mechanism() -> pml.Mechanism:
    rng = np.random.default_rng(3)
    W = np.exp(1.5 * rng.random((4, 5)))
    return pml.Mechanism(W / W.sum(axis=1, keepdims=True), name="pml", labels=CATS)


@pytest.mark.parametrize("eps1", [35.0, 40.0, 60.0, 200.0])
def test_standard_errors_survive_a_huge_epsilon_and_an_absent_category(eps1):
    """GRR at ε₁ ≥ 35 is the identity channel to rounding, so the MLE is the empirical frequency and its standard
    errors are the multinomial ``sqrt(π(1 − π)/n)`` (an independent formula); the absent category's is 0. Before
    the diagonal scaling in ``simplex_covariance`` every standard error was 0 from ε₁ = 40 on."""
    n = int(COUNTS.sum())
    p = COUNTS / n
    multinomial = np.sqrt(p * (1 - p) / n)
    oracle = pml.grr(4, eps1)
    alone = oracle.mechanism.estimate(COUNTS, counts=True, ci=0.95)
    se = np.sqrt(np.diag(alone.covariance))
    np.testing.assert_allclose(alone.estimate, p, atol=1e-9)
    np.testing.assert_allclose(se[:3], multinomial[:3], rtol=1e-6)
    assert se[3] < 1e-6
    assert np.all(alone.ci_high[:3] - alone.ci_low[:3] > 0.07)
    # combined with a second cohort: the observed categories keep standard errors close to the first cohort's
    reports = np.repeat(np.arange(4), COUNTS)
    second = np.array([40, 30, 20, 10, 0])
    est = combined_estimate(oracle=oracle, mechanism=_mechanism(), first_reports=reports, second_counts=second,
                            check_fit=False)
    se2 = np.sqrt(np.diag(est.covariance))
    assert np.all(se2[:3] > 0.8 * multinomial[:3]) and np.all(se2[:3] < 1.1 * multinomial[:3])
    ref = combined_estimate(oracle=pml.grr(4, 35.0), mechanism=_mechanism(), first_reports=reports,
                            second_counts=second, check_fit=False)
    np.testing.assert_allclose(se2[:3], np.sqrt(np.diag(ref.covariance))[:3], rtol=1e-6)


def _textbook(F: np.ndarray) -> np.ndarray:
    """``U (Uᵀ F U)⁺ Uᵀ`` as the docstring defines it (no scaling), and for an invertible F the bordered form
    ``F⁻¹ − F⁻¹ 1 1ᵀ F⁻¹ / (1ᵀ F⁻¹ 1)``."""
    U = _sum_zero_basis(F.shape[0])
    return U @ np.linalg.pinv(U.T @ F @ U, rcond=1e-10, hermitian=True) @ U.T


def test_ordinary_covariances_are_unchanged():
    """Well-conditioned informations, full rank or not (repeated rows: a non-identifiable channel): the scaled
    computation equals the textbook one to 1e-10, and the bordered inverse where F is invertible."""
    rng = np.random.default_rng(0)
    checked = {"full": 0, "singular": 0}
    for t in range(200):
        n, m = int(rng.integers(2, 9)), int(rng.integers(2, 12))
        W = np.exp(2 * rng.random((n, m)))
        if t % 3 == 0:
            W[1] = W[0]
        W /= W.sum(axis=1, keepdims=True)
        p = rng.dirichlet(np.ones(n))
        F = fisher_information(W, p) * float(rng.integers(1, 5000))
        sv = np.linalg.svd(W, compute_uv=False)
        if sv[-1] < 1e-6 * sv[0] and not (t % 3 == 0 and np.sum(sv > 1e-6 * sv[0]) == n - 1):
            continue  # degenerate beyond one repeated row: the textbook pinv is at the mercy of rounding
        got, want = simplex_covariance(F), _textbook(F)
        np.testing.assert_allclose(got, want, atol=1e-10 * np.abs(want).max(), rtol=0)
        if np.linalg.matrix_rank(F) == n:
            Fi = np.linalg.inv(F)
            one = Fi @ np.ones(n)
            np.testing.assert_allclose(got, Fi - np.outer(one, one) / one.sum(), atol=1e-10 * np.abs(Fi).max())
            checked["full"] += 1
        else:
            checked["singular"] += 1
    assert checked["full"] > 50 and checked["singular"] > 20


def _grr_columns(n: int, eps: float) -> np.ndarray:
    """GRR's channel written out by hand (not through the oracle, which refuses it beyond MAX_CHANNEL_ENTRIES)."""
    W = np.full((n, n), 1.0 / (math.exp(eps) + n - 1))
    W[np.diag_indices(n)] = math.exp(eps) / (math.exp(eps) + n - 1)
    return W


@pytest.mark.parametrize("eps", [1e-3, 1.0, 8.0, 60.0])
def test_grr_information_without_the_channel(eps):
    """``grr_fisher_information`` is ``Σ_y w_y w_yᵀ/(π·w_y)``: against the oracle's channel at N = 40 and against
    a direct product with the channel written out at N = 2 100 (beyond MAX_CHANNEL_ENTRIES), on random vectors."""
    from pml_design.cohort import grr_fisher_information
    from pml_design.mechanisms.frequency_oracles import MAX_CHANNEL_ENTRIES

    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(40))
    p[3] = 0.0
    p /= p.sum()
    want = fisher_information(pml.grr(40, eps).matrix, p)
    np.testing.assert_allclose(grr_fisher_information(40, eps, p), want, rtol=1e-12, atol=1e-14 * np.abs(want).max())
    n = 2100
    assert n * n > MAX_CHANNEL_ENTRIES
    p = rng.dirichlet(np.ones(n))
    W = _grr_columns(n, eps)
    F = grr_fisher_information(n, eps, p)
    v = rng.normal(size=(n, 3))
    direct = (W / (p @ W)) @ (W.T @ v)
    np.testing.assert_allclose(F @ v, direct, rtol=1e-10, atol=1e-12 * np.abs(direct).max())
    np.testing.assert_allclose(F @ p, np.ones(n), rtol=1e-10)  # every expected information has F π = 1


def test_grr_beyond_the_channel_matches_the_explicit_path(monkeypatch):
    """With MAX_CHANNEL_ENTRIES lowered under GRR's N², ``combined_estimate`` takes the observed-reports path with
    the closed-form information; it gives the explicit channel's estimate and covariance."""
    import pml_design.mechanisms.frequency_oracles as fo

    rng = np.random.default_rng(4)
    n = 30
    oracle = pml.grr(n, 1.5)
    p = rng.dirichlet(np.ones(n))
    reports = oracle.privatize(rng.choice(n, 3000, p=p), rng=rng)
    W2 = np.exp(2 * rng.random((n, 40)))
    mech = pml.Mechanism(W2 / W2.sum(axis=1, keepdims=True))
    second = mech.report_counts(mech.privatize(rng.choice(n, 2000, p=p), rng=rng))
    explicit = combined_estimate(oracle=oracle, mechanism=mech, first_reports=reports, second_counts=second)
    monkeypatch.setattr(fo, "MAX_CHANNEL_ENTRIES", n * n - 1)
    beyond = combined_estimate(oracle=oracle, mechanism=mech, first_reports=reports, second_counts=second)
    np.testing.assert_allclose(beyond.estimate, explicit.estimate, atol=1e-7)
    np.testing.assert_allclose(beyond.covariance, explicit.covariance, rtol=1e-5, atol=1e-9)
    olh = pml.olh(n, 1.0)  # (Hadamard response is estimated beyond its channel since session 20; OLH is not)
    with pytest.raises(ValueError, match=r"oracle: OLH over n = 30 .* too many to write its channel out"):
        combined_estimate(oracle=olh, mechanism=mech, first_reports=olh.privatize(np.array([0, 1]), rng=0),
                          second_counts=second)


def test_method_is_combined_mle_whichever_cohort_is_empty():
    """The docstring promises ``method="combined-mle"``; an empty first cohort with a non-identifiable mechanism
    (two equal rows) returned :meth:`Mechanism.estimate`'s ``"ibu"``. The point, covariance and intervals stay
    that estimate's."""
    W = np.array([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2], [0.1, 0.2, 0.7], [0.2, 0.6, 0.2]])
    mech = pml.Mechanism(W, labels=CATS)
    assert not mech.identifiable
    with pytest.warns(UserWarning):
        own = mech.estimate(np.array([30, 40, 30]), counts=True, ci=0.9)
    with pytest.warns(UserWarning):
        est = combined_estimate(oracle=pml.grr(4, 1.0), mechanism=mech, first_reports=np.zeros(0, dtype=np.int64),
                                second_counts=np.array([30, 40, 30]), ci=0.9)
    assert est.method == "combined-mle" and est.categories == CATS
    np.testing.assert_array_equal(est.estimate, own.estimate)
    np.testing.assert_array_equal(est.ci_low, own.ci_low)
    np.testing.assert_array_equal(est.ci_high, own.ci_high)
    for first in ([0, 1, 2, 3, 0], np.zeros(0, dtype=np.int64)):
        e = combined_estimate(oracle=pml.grr(4, 1.0), mechanism=_mechanism(), first_reports=np.array(first),
                              second_counts=np.array([10, 10, 10, 10, 10]), check_fit=False)
        assert e.method == "combined-mle"


# --- the command line: estimate MECHANISM --first-cohort REPORTS ------------------------------------------------------
CLI_CATS = ["x,1", "y", "z"]  # a category holding a comma: lists must be unambiguous


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    """A first cohort's GRR reports at ε₁ = 1, a mechanism designed on them, a second cohort privatized by it."""
    from pml_design.cli import main

    d = tmp_path_factory.mktemp("cohorts")
    rng = np.random.default_rng(9)
    p3 = np.array([0.5, 0.3, 0.2])
    one = _write(d / "cohort1.csv", np.array(CLI_CATS)[rng.choice(3, 3000, p=p3)])
    two = _write(d / "cohort2.csv", np.array(CLI_CATS)[rng.choice(3, 3000, p=p3)])
    (d / "cats.txt").write_text("\n".join(CLI_CATS) + "\n")
    (d / "rcats.txt").write_text("\n".join(CLI_CATS[::-1]) + "\n")
    grr1 = ["--oracle", "grr", "--ldp-epsilon", "1", "--categories-file", d / "cats.txt"]
    steps = [["privatize", *grr1, "--csv", one, "--column", "country", "-o", d / "rep.csv", "--seed", 1],
             ["design", "--reports", d / "rep.csv", "--column", "country", *grr1, "--epsilon", 1, "--delta", "1e-6",
              "--allow-zero", "--time-limit", 30, "--no-progress", "-o", d / "mech"],
             ["privatize", d / "mech.json", "--csv", two, "--column", "country", "-o", d / "priv.csv", "--seed", 2],
             ["privatize", "--oracle", "grr", "--ldp-epsilon", "2", "--categories-file", d / "cats.txt", "--csv", one,
              "--column", "country", "-o", d / "rep_eps2.csv", "--seed", 3],
             ["privatize", "--oracle", "grr", "--ldp-epsilon", "1", "--categories-file", d / "rcats.txt", "--csv", one,
              "--column", "country", "-o", d / "rep_order.csv", "--seed", 4],
             ["privatize", "--oracle", "hr", "--ldp-epsilon", "1", "--categories-file", d / "cats.txt", "--csv", one,
              "--column", "country", "-o", d / "rep_hr.csv", "--seed", 5]]
    for argv in steps:
        assert main([str(a) for a in argv]) == 0, argv
    return d


def _estimate(d, *extra):
    return ["estimate", d / "mech.json", "--csv", d / "priv.csv", "--column", "country", *extra]


def _one_line_error(capsys, argv, needle):
    code, out, err = _cli(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and needle in lines[0], (argv, err)
    assert "Traceback" not in err
    return lines[0]


def test_cli_json_has_estimates_fields_and_the_warning_names_what_differs(capsys, cli_files):
    d = cli_files
    code, out, err = _cli(capsys, *_estimate(d, "--first-cohort", d / "rep.csv", "--json"))
    assert code == 0 and err == "", err
    res = __import__("json").loads(out)
    assert res["identifiable"] is True and res["method"] == "combined-mle"
    code, out, err = _cli(capsys, *_estimate(d, "--first-cohort", d / "rep_eps2.csv"))
    assert code == 0, err
    warning = [line for line in err.splitlines() if "designed on other first-cohort reports" in line]
    assert len(warning) == 1 and "(ldp-epsilon 1.0 against 2)" in warning[0], err  # only what differs is named
    assert "reports against" not in warning[0] and "oracle GRR" not in warning[0]


def test_cli_category_mismatch_lists_are_unambiguous(capsys, cli_files):
    d = cli_files
    line = _one_line_error(capsys, _estimate(d, "--first-cohort", d / "rep_order.csv"),
                           "argument --first-cohort: its reports were made in another order than MECHANISM's")
    assert "(['z', 'y', 'x,1'] against ['x,1', 'y', 'z']; first difference at position 0: 'z' against 'x,1')" in line


def test_cli_errors_name_the_right_flag(capsys, cli_files, monkeypatch, tmp_path):
    import json
    import shutil

    import pml_design.mechanisms.frequency_oracles as fo

    d = cli_files
    _one_line_error(capsys, _estimate(d, "--first-cohort", d / "rep.csv", "--first-cohort-column", "nosuch"),
                    "argument --first-cohort-column: no column 'nosuch' in")
    _one_line_error(capsys, _estimate(d, "--first-cohort", tmp_path / "nosuch.csv"),
                    f"argument --first-cohort: {tmp_path / 'nosuch.csv'} does not exist")
    good = json.loads((d / "rep.csv.ldp.json").read_text())
    for change, needle in [({"oracle": ["GRR"]}, "field 'oracle' must be one of ['GRR', 'HR', 'SS'], got ['GRR']"),
                           ({"ldp_epsilon": True}, "field 'ldp_epsilon' must be a finite number > 0, got True"),
                           ({"column": None}, "field 'column' must be a string, got None"),
                           ({"categories": "x,1,y,z"}, "field 'categories' must be a list of at least 2 strings"),
                           ({"k": 2}, "field 'k' must be an integer >= 1 for SS and null otherwise, got 2")]:
        edited = tmp_path / "edited.csv"
        shutil.copy(d / "rep.csv", edited)
        (tmp_path / "edited.csv.ldp.json").write_text(json.dumps({**good, **change}))
        line = _one_line_error(capsys, _estimate(d, "--first-cohort", edited), needle)
        assert line.startswith(f"pml-design: error: argument --first-cohort: {tmp_path / 'edited.csv.ldp.json'} is "
                               "not a valid provenance file: ")
    missing = {k: v for k, v in good.items() if k != "column"}
    (tmp_path / "edited.csv.ldp.json").write_text(json.dumps(missing))
    _one_line_error(capsys, _estimate(d, "--first-cohort", tmp_path / "edited.csv"),
                    "field 'column' must be a string, got nothing")
    # design --reports reads the same provenance check
    (tmp_path / "edited.csv.ldp.json").write_text(json.dumps({**good, "ldp_epsilon": True}))
    _one_line_error(capsys, ["design", "--reports", tmp_path / "edited.csv", "--column", "country", "--oracle", "grr",
                             "--ldp-epsilon", "1", "--categories-file", d / "cats.txt", "--epsilon", 1, "--delta",
                             "1e-6", "--no-progress"], "field 'ldp_epsilon' must be a finite number > 0, got True")
    # Hadamard response whose channel is too large to write out: estimated without it (it was refused), the same
    code, out, err = _cli(capsys, *_estimate(d, "--first-cohort", d / "rep_hr.csv", "--json"))
    assert code == 0, err
    explicit = json.loads(out)
    monkeypatch.setattr(fo, "MAX_CHANNEL_ENTRIES", 10)
    code, out, err = _cli(capsys, *_estimate(d, "--first-cohort", d / "rep_hr.csv", "--json"))
    assert code == 0, err
    unlisted = json.loads(out)
    for key in ("estimate", "ci_low", "ci_high"):
        np.testing.assert_allclose(unlisted[key], explicit[key], rtol=1e-7, atol=1e-9)


def test_first_cohort_reports_of_another_system(capsys, cli_files, tmp_path):
    """``--unverified-first-cohort``: reports without a provenance file (another system applied the oracle), described
    by --oracle, --ldp-epsilon, --k and --categories as for ``design --reports --unverified-reports``; there was no way
    to combine them. The same reports give the same estimate as through their provenance file."""
    import json
    import shutil

    d = cli_files
    other = tmp_path / "other.csv"
    shutil.copy(d / "rep.csv", other)  # the same reports, without rep.csv.ldp.json
    grr1 = ["--oracle", "grr", "--ldp-epsilon", "1", "--categories-file", d / "cats.txt"]
    line = _one_line_error(capsys, _estimate(d, "--first-cohort", other), "argument --first-cohort: ")
    assert "has no provenance file" in line and "or pass --unverified-first-cohort with --oracle" in line
    code, out, err = _cli(capsys, *_estimate(d, "--first-cohort", other, "--unverified-first-cohort", *grr1, "--json"))
    assert code == 0 and err == "", err
    unverified = json.loads(out)
    code, out, err = _cli(capsys, *_estimate(d, "--first-cohort", d / "rep.csv", "--json"))
    verified = json.loads(out)
    assert unverified["first_cohort"].pop("verified") is False and verified["first_cohort"].pop("verified") is True
    for key in ("estimate", "ci_low", "ci_high", "n_first", "fit"):
        assert unverified[key] == verified[key], key
    assert unverified["first_cohort"]["column"] == "country"  # (by default --column's)
    _one_line_error(capsys, _estimate(d, "--first-cohort", d / "rep.csv", "--unverified-first-cohort", *grr1),
                    f"argument --unverified-first-cohort: not allowed: {d / 'rep.csv'} has a provenance file")
    _one_line_error(capsys, _estimate(d, "--first-cohort", d / "rep.csv", *grr1),
                    "argument --oracle: only with --unverified-first-cohort (the provenance file rep.csv.ldp.json "
                    "names the oracle")
    _one_line_error(capsys, _estimate(d, "--first-cohort", other, "--unverified-first-cohort", "--oracle", "grr"),
                    "argument --ldp-epsilon: required with --oracle")
    _one_line_error(capsys, _estimate(d, "--first-cohort", other, "--unverified-first-cohort", *grr1[:4],
                                      "--categories-file", d / "rcats.txt"),
                    "argument --categories-file: its reports were made in another order than MECHANISM's")
    _one_line_error(capsys, _estimate(d, *grr1), "argument --oracle: only with --first-cohort and "
                                                 "--unverified-first-cohort")
    _one_line_error(capsys, _estimate(d, "--unverified-first-cohort"),
                    "argument --unverified-first-cohort: only with --first-cohort")


def test_allow_design_data_caveat_follows_the_prior_source(capsys, cli_files, tmp_path):
    """``privatize --allow-design-data``: the file publishes the design records' counts only for a public-sample
    P̂; for a P̂ from LDP reports or a DP release the caveat says which release, and that the two guarantees are
    not combined."""
    d = cli_files
    code, out, err = _cli(capsys, "privatize", d / "mech.json", "--csv", d / "cohort1.csv", "--column", "country",
                          "-o", tmp_path / "o.csv", "--allow-design-data")
    line = next(ln for ln in out.splitlines() if ln.startswith("guarantee: "))
    assert code == 0 and "publishes the design records' counts" not in line, line
    assert line.endswith("it does not cover any first-cohort record among these records (--allow-design-data) on "
                         "its own: the mechanism file publishes an estimate from the first cohort's LDP reports "
                         "(prior_source \"ldp reports\"), and a first-cohort record released here has its report's "
                         "LDP guarantee and this one, which no statement combines")
    code, _, err = _cli(capsys, "design", "--csv", d / "cohort1.csv", "--column", "country", "--epsilon", 1, "--delta",
                        "1e-3", "--dp-epsilon", 1, "--categories-file", d / "cats.txt", "--time-limit", 30,
                        "--no-progress", "-o", tmp_path / "dp")
    assert code == 0, err
    for extra, caveat in [(["--allow-design-data"], "on its own: the mechanism file publishes a differentially "
                           "private release of the design records' counts (prior_source \"dp\")"), ([], None)]:
        code, out, err = _cli(capsys, "privatize", tmp_path / "dp.json", "--csv", d / "cohort1.csv", "--column",
                              "country", "-o", tmp_path / "o.csv", "--force", *extra, "--json")
        assert code == 0, err
        assert __import__("json").loads(out)["guarantee_caveat"] == (caveat and (
            "it does not cover any design record among these records (--allow-design-data) " + caveat
            + ", and a design record released here has that guarantee and this one, which no statement combines"))


def test_a_blank_line_in_a_one_column_file_is_a_missing_cell(capsys, tmp_path):
    """docs/cli.md: empty cells are missing, unknown to privatize. In a one-column CSV a blank line is such a cell:
    ``privatize --oracle`` wrote 4 rows for 5 (the line skipped); now it is refused like an empty cell of a
    multi-column file, in one line naming no value, row or count. ``design`` drops it as missing (m = 3)."""
    one = tmp_path / "one.csv"
    one.write_text("country\nA\nB\n\nA\nC\n")
    two = tmp_path / "two.csv"
    two.write_text("id,country\n1,A\n2,\n3,B\n")
    lines = []
    for src in (one, two):
        code, out, err = _cli(capsys, "privatize", "--oracle", "grr", "--ldp-epsilon", 1, "--categories", "A,B,C",
                              "--csv", src, "--column", "country", "-o", tmp_path / "o.csv", "--force")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        lines.append(err.replace(str(src), "FILE"))
    assert lines[0] == lines[1] and "missing" in lines[0]
    assert not (tmp_path / "o.csv").exists()
    (tmp_path / "full.csv").write_text("country\nA\nB\nA\nC")  # no final newline: still 4 rows
    code, out, err = _cli(capsys, "privatize", "--oracle", "grr", "--ldp-epsilon", 1, "--categories", "A,B,C",
                          "--csv", tmp_path / "full.csv", "--column", "country", "-o", tmp_path / "o.csv")
    assert code == 0 and "of 4 rows" in out and len((tmp_path / "o.csv").read_text().splitlines()) == 5, err
    d = tmp_path / "d.csv"
    d.write_text("country\nA\nB\n\nA\n")
    code, out, err = _cli(capsys, "design", "--csv", d, "--column", "country", "--epsilon", 1, "--delta", "0.1",
                          "--no-progress", "--json")
    assert code == 0 and __import__("json").loads(out)["m"] == 3, err


def test_a_blank_line_in_a_multi_column_file_is_a_record_of_missing_cells(capsys, tmp_path, cli_files):
    """As in a one-column file (above): a blank line of a file with several columns is a record whose cells are all
    missing, not nothing. It was skipped, so privatize wrote fewer rows than the file's records and estimate counted
    fewer reports, silently. Every command now reads it as the row ``,`` (its two cells empty), with the same
    answer: refused by privatize (either kind), estimate and design --reports, dropped by design (the same m and
    fingerprint), kept by split."""
    import json

    d = cli_files

    def with_row(src, row, name):  # src with `row` as its third data row
        lines = src.read_text().splitlines(keepends=True)
        (tmp_path / name).write_text("".join(lines[:3] + [row + "\n"] + lines[3:]))
        return tmp_path / name

    out_csv = ["-o", tmp_path / "o.csv", "--force"]
    commands = [
        (d / "cohort1.csv", ["privatize", d / "mech.json", "--column", "country", *out_csv]),
        (d / "cohort1.csv", ["privatize", "--oracle", "grr", "--ldp-epsilon", 1, "--categories-file", d / "cats.txt",
                             "--column", "country", *out_csv]),
        (d / "priv.csv", ["estimate", d / "mech.json", "--column", "country", "--unverified-reports"]),
        (d / "rep.csv", ["design", "--reports", None, "--column", "country", "--oracle", "grr", "--ldp-epsilon", 1,
                         "--categories-file", d / "cats.txt", "--epsilon", 1, "--delta", "1e-6", "--unverified-reports",
                         "--no-progress"]),
    ]
    for src, argv in commands:
        errors = []
        for row, name in (("", "blank.csv"), (",", "empty.csv")):
            f = with_row(src, row, name)
            args = [f if a is None else a for a in argv] + ([] if None in argv else ["--csv", f])
            code, out, err = _cli(capsys, *args)
            assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (argv, err)
            errors.append(err.replace(str(f), "FILE"))
        assert errors[0] == errors[1], errors
        assert not (tmp_path / "o.csv").exists()
    designs = []
    for row, name in (("", "blank.csv"), (",", "empty.csv"), (None, None)):
        f = with_row(d / "cohort1.csv", row, name) if row is not None else d / "cohort1.csv"
        code, out, err = _cli(capsys, "design", "--csv", f, "--column", "country", "--epsilon", 1, "--radius", "0.1",
                              "--no-progress", "--json")
        assert code == 0, err
        designs.append(json.loads(out))
    assert designs[0]["m"] == designs[1]["m"] == designs[2]["m"] == 3000
    assert designs[0]["design_data"] == designs[1]["design_data"] != designs[2]["design_data"]
    code, out, err = _cli(capsys, "split", "--csv", tmp_path / "blank.csv", "--fraction", "0.5", "--seed", 0, "-o",
                          tmp_path / "s1.csv", tmp_path / "s2.csv", "--json")
    assert code == 0, err
    import csv

    rows = [r for f in ("s1.csv", "s2.csv") for r in list(csv.reader((tmp_path / f).read_text().splitlines()))[1:]]
    assert len(rows) == 3001 and rows.count(["", ""]) == 1
