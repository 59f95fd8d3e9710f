"""The DP route for P̂ (``design_from_samples(dp_epsilon=)``, ``pml-design design --dp-epsilon``), after a review's
low items: no refusal before the release tells a fact about the protected records (a value, a count, a label, that
there is no record), counts must be integers (not '3', 2.5 or True), ``--categories`` names are exact text, OpenDP's
``contrib`` flag is set only while the sampler is built, and what ``privatize`` prints (docs/design.md §11.1)."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest

import pml_design as pml
from pml_design import priors as pr
from pml_design.cli import main

pytestmark = pytest.mark.filterwarnings("ignore:rng=.*seeded generator:UserWarning")

SECRET = "RARE_VALUE_OF_ALICE"


def _after_release(text: str) -> bool:
    """The message of an error raised after the noisy counts were drawn (it says a second design spends E0 again)."""
    return "already made" in text or "is already made" in text


# ------------------------------------------------------------------------------------- counts must be integers
@pytest.mark.parametrize("dp", [None, 1.0])
@pytest.mark.parametrize(("data", "exc", "needle"), [
    ({"a": "3", "b": 40}, TypeError, "got text"),
    ({"a": 2.5, "b": 40}, ValueError, "whole numbers"),
    ({"a": True, "b": 40}, TypeError, "booleans"),
    ({"a": -1, "b": 40}, ValueError, "non-negative"),
])
def test_counts_keyed_by_label_must_be_integers(dp, data, exc, needle):
    """'3' was parsed as 3.0 and True as 1.0 (``Series.to_numpy(dtype=float)``); now refused, naming the argument."""
    with pytest.raises(exc, match=needle) as info:
        pml.design_from_samples(data, None, 1.0, 1e-3, counts=True, categories=["a", "b"], dp_epsilon=dp,
                                rng=None if dp is None else 0, allow_zero=True)
    assert str(info.value).startswith("data (counts)")
    assert "outside" not in str(info.value)  # (the DP route's "outside categories" no longer swallows it)


@pytest.mark.parametrize(("counts", "exc"), [(np.array(["3", "4"]), TypeError), (np.array([2.5, 4.0]), ValueError),
                                             (np.array([3.0, 2.0**60]), ValueError), ([True, 4], TypeError)])
def test_plain_dp_counts_must_be_integers_and_are_not_quoted(counts, exc):
    with pytest.raises(exc, match="data \\(counts\\)") as info:
        pml.design_from_samples(counts, 2, 1.0, 1e-3, counts=True, dp_epsilon=1.0, rng=0)
    text = str(info.value)
    assert "2.5" not in text and "1152921504606846976" not in text and "'3'" not in text.split("such as")[0]


def test_dp_release_counts_uses_the_shared_check():
    with pytest.raises(TypeError, match="^counts .*text"):
        pr.dp_release_counts(["3", "4"], 1.0)
    with pytest.raises(ValueError, match="^counts .*whole numbers") as info:
        pr.dp_release_counts([2.5, 4], 1.0)
    assert "2.5" not in str(info.value)
    with pytest.raises(ValueError, match="2\\*\\*53"):  # a float above 2**53 has been rounded already (was accepted)
        pr.dp_release_counts(np.array([2.0**60, 1.0]), 1.0)
    with pytest.raises(ValueError, match="below 2\\*\\*62") as info:
        pr.dp_release_counts([2**62, 1], 1.0, rng=0)
    assert str(2**62) not in str(info.value)
    assert pr.dp_release_counts([2**62 - 1, 0], 1.0, rng=0).dtype == np.int64


# ------------------------------------------------------------------- refusals before the release name nothing
def test_values_outside_categories_are_refused_naming_nothing():
    for data, kw in (([SECRET] + ["a"] * 300, {}), ({"a": 300, SECRET: 1}, {"counts": True})):
        with pytest.raises(ValueError, match="outside categories") as info:
            pml.design_from_samples(data, None, 1.0, 1e-3, categories=["a", "b"], dp_epsilon=1.0, rng=0, **kw)
        text = str(info.value)
        assert SECRET not in text and not re.search(r"\d", text) and "protected by dp_epsilon" in text


def test_codes_outside_the_alphabet_are_refused_naming_nothing():
    with pytest.raises(ValueError, match="integer codes in \\[0, 3\\)") as info:
        pml.design_from_samples(np.array([0, 1, 2, 77777, 1]), 3, 1.0, 1e-3, dp_epsilon=1.0, rng=0)
    assert "77777" not in str(info.value) and "protected by dp_epsilon" in str(info.value)


@pytest.mark.parametrize(("data", "n", "kw"), [
    (np.array([], dtype=np.int64), 3, {}),  # integer codes
    ([], None, {"categories": ["a", "b"]}),  # labels
    ({}, None, {"categories": ["a", "b"], "counts": True}),  # counts keyed by label
])
def test_empty_data_are_not_refused_before_the_release(data, n, kw):
    """"data must not be empty" told that there is no record: with dp_epsilon the release decides (its noisy total)."""
    with pytest.raises(ValueError) as info:
        pml.design_from_samples(data, n, 1.0, 1e-3, dp_epsilon=1.0, rng=0, **kw)
    assert _after_release(str(info.value)) and "empty" not in str(info.value)
    if not kw.get("counts"):  # the public-sample route still says it (its records are not protected)
        with pytest.raises(ValueError, match="empty"):
            pml.design_from_samples(data, n, 1.0, 1e-3, **kw)


# ----------------------------------------------------------------------------------------- OpenDP's flag
def test_opendp_contrib_is_set_only_while_the_sampler_is_built():
    import opendp.prelude as dp
    from opendp.mod import GLOBAL_FEATURES

    had = "contrib" in GLOBAL_FEATURES
    try:
        dp.disable_features("contrib")
        out = pr.dp_release_counts([10, 20, 30], 1.0)  # OpenDP's sampler (rng=None)
        assert out.shape == (3,) and "contrib" not in GLOBAL_FEATURES  # the caller's state is left as found
        dp.enable_features("contrib")
        pr.dp_release_counts([10, 20, 30], 1.0)
        assert "contrib" in GLOBAL_FEATURES  # a caller who enabled it keeps it
    finally:
        (dp.enable_features if had else dp.disable_features)("contrib")


# ------------------------------------------------------------------------------------------------- CLI
def _run(capsys, args):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def counts_file(tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("a,2000\nb,1500\nc,1000\n")
    return path


def test_categories_are_exact_text(capsys, counts_file):
    """' b' in 'a, b, c' was stripped silently; labels are exact text everywhere, so it is refused, naming it."""
    base = ["design", "--counts", str(counts_file), "--epsilon", "1", "--delta", "1e-3", "--utility", "map_accuracy"]
    for dp_args in ([], ["--dp-epsilon", "1"]):
        code, _, err = _run(capsys, [*base, *dp_args, "--categories", "a, b,c"])
        assert code == 2 and "' b' has surrounding whitespace" in err and "'a,b,c'" in err
    code, out, _ = _run(capsys, [*base, "--dp-epsilon", "1", "--categories", "a,b,c"])
    assert code == 0 and "1-DP estimate" in out
    code, _, err = _run(capsys, [*base, "--categories", "a,b,b"])  # the duplicate is named (it said "distinct")
    assert code == 2 and "argument --categories: the category 'b' is given twice (positions 2 and 3)" in err


def test_categories_file_takes_a_category_with_a_comma(capsys, tmp_path):
    """--categories A,B,... splits at the commas, so 'Korea, Republic of' could not be named; --categories-file takes
    one category per line, exactly as written but the line ending, and gives the same design as --categories."""
    data = tmp_path / "d.csv"
    data.write_text("country\n" + '"Korea, Republic of"\n' * 40 + "France\n" * 30 + "Chad\n" * 30)
    listed = tmp_path / "cats.txt"
    listed.write_bytes("Korea, Republic of\r\nFrance\nChad\n".encode())  # CRLF and LF line endings
    base = ["design", "--csv", str(data), "--column", "country", "--epsilon", "1", "--delta", "1e-3", "--json"]
    code, out, err = _run(capsys, [*base, "--dp-epsilon", "1", "--categories-file", str(listed)])
    assert code == 0, err
    assert json.loads(out)["categories"] == ["Korea, Republic of", "France", "Chad"]
    code, out, err = _run(capsys, [*base, "--categories-file", str(listed)])  # without --dp-epsilon: the order given
    assert code == 0 and json.loads(out)["counts"] == [40, 30, 30], err
    for text, needle in [("a\n\nb\n", "cats.txt, line 2 is empty"),
                         ("a\nb\na\n", "the category 'a' is given twice (" + str(listed) + ", lines 1 and 3)"),
                         ("a\n b\n", "line 2: ' b' has surrounding whitespace"),
                         ("Korea, Republic of\n", "need at least 2 categories, got 1")]:
        listed.write_text(text)
        code, out, err = _run(capsys, [*base, "--dp-epsilon", "1", "--categories-file", str(listed)])
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert err.startswith("pml-design: error: argument --categories-file: ") and needle in err, err
    code, _, err = _run(capsys, [*base, "--categories", "a,b", "--categories-file", str(listed)])
    assert code == 2 and "not allowed with argument" in err
    # with --dp-epsilon the column is protected: a row the CSV parser cannot read is not quoted (it was)
    data.write_text("country\nKorea, Republic of\nFrance\n")
    listed.write_text("Korea, Republic of\nFrance\n")
    code, _, err = _run(capsys, [*base, "--dp-epsilon", "1", "--categories-file", str(listed)])
    assert code == 2 and "withheld" in err and "Korea" not in err, err


def test_a_huge_dp_epsilon_warning_gives_a_probability_not_0(capsys, counts_file):
    """--dp-epsilon 1e9 warned 'the noise is 0 on all but a fraction 0 of the counts' (e^-1e9 underflows): the
    chance of any noise is said as a power of ten."""
    base = ["design", "--counts", str(counts_file), "--epsilon", "1", "--delta", "1e-3", "--categories", "a,b,c"]
    for dp, chance in (("1e9", "except with probability about 10^(-4.34e+08)"), ("20", "except with probability 4.1e-09")):
        code, _, err = _run(capsys, [*base, "--dp-epsilon", dp])
        assert code == 0 and f"dp_epsilon={float(dp):g} is so large that the noise of a count is 0 {chance}:" in err, err
        assert "fraction 0" not in err


def test_cli_refusals_before_the_release_name_no_label_or_count(capsys, tmp_path):
    dup = tmp_path / "dup.csv"
    dup.write_text(f"a,2000\n{SECRET},1\n{SECRET},1\n")
    args = ["design", "--counts", str(dup), "--epsilon", "1", "--delta", "1e-3", "--dp-epsilon", "1",
            "--categories", "a,b"]
    code, _, err = _run(capsys, args)
    assert code == 2 and "duplicate label" in err and SECRET not in err and "not shown" in err
    code, _, err = _run(capsys, ["design", "--counts", str(dup), "--epsilon", "1", "--delta", "1e-3"])
    assert code == 2 and SECRET in err
    # the arguments are checked before the protected data are read: a bad file is not even opened
    code, _, err = _run(capsys, ["design", "--counts", str(tmp_path / "missing.csv"), "--epsilon", "1", "--radius",
                                 "0.1", "--dp-epsilon", "1", "--categories", "a,b"])
    assert code == 2 and "needs --delta" in err


@pytest.mark.parametrize("kind", ["empty column", "all-zero counts", "one label"])
def test_cli_no_record_is_not_told_before_the_release(capsys, tmp_path, kind):
    """'column has no values', 'all counts are zero', 'must hold at least 2 categories, got 1' told the number of
    records (0) or of distinct values present: with --dp-epsilon the DP release decides (an error after it)."""
    if kind == "empty column":
        path = tmp_path / "d.csv"
        path.write_text("city,other\n,1\n?,2\n")
        src = ["--csv", str(path), "--column", "city"]
    else:
        path = tmp_path / "c.csv"
        path.write_text("a,0\nb,0\n" if kind == "all-zero counts" else "a,5\n")
        src = ["--counts", str(path)]
    args = ["design", *src, "--epsilon", "1", "--delta", "1e-3", "--categories", "a,b", "--allow-zero"]
    code, _, err = _run(capsys, [*args, "--dp-epsilon", "1"])
    assert code == 2 and _after_release(err), err
    assert not re.search(r"no values|all counts are zero|at least 2 categories", err)
    code, _, err = _run(capsys, args)  # without --dp-epsilon the design data are not protected: said as before
    assert code == 2 or kind == "one label"


def test_privatize_row_count_is_that_of_the_published_copy(capsys, tmp_path):
    """privatize prints the number of rows: the privatized copy it writes has exactly that many (one report per
    record), so the line tells nothing the published file does not (docs/design.md §11.1)."""
    data = tmp_path / "d.csv"
    data.write_text("x\n" + "\n".join(["a"] * 30 + ["b"] * 20 + ["c"] * 10) + "\n")
    mech = pml.design_from_samples({"a": 300, "b": 200, "c": 100}, None, 1.0, 1e-3, counts=True,
                                   utility="map_accuracy").save(tmp_path / "m.json")
    out = tmp_path / "priv.csv"
    code, stdout, _ = _run(capsys, ["privatize", str(mech), "--csv", str(data), "--column", "x",
                                    "--output", str(out)])
    assert code == 0
    printed = int(re.search(r"of (\d+) rows", stdout).group(1))
    with out.open() as fh:
        assert printed == sum(1 for _ in csv.reader(fh)) - 1 == 60
