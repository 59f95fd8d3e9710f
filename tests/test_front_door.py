"""The front door under abuse (issue 23): files are sacred, no aborts, privacy parameters checked where they enter,
estimates that defend themselves, nothing silently ignored or reshaped, messages in the caller's language,
progress that moves. The CLI runs in-process through ``main`` except where the bug is process-level (aborts,
exit status), which run in subprocesses."""

from __future__ import annotations

import hashlib
import io
import os
import pathlib
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import pml_design as pml
from pml_design.cli import main
from pml_design.deploy.output import OutputFileError

ROOT = pathlib.Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PML_DESIGN_NO_PROGRESS": "1"}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err, needle):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("pml-design: error: ") and needle in lines[0], lines[0]


def digest(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


@pytest.fixture()
def survey(tmp_path, monkeypatch):
    """The README's survey.csv in a fresh directory (the cwd), a small mechanism file for it and a sub-directory."""
    import shutil

    shutil.copy(ROOT / "examples" / "survey.csv", tmp_path / "survey.csv")
    monkeypatch.chdir(tmp_path)
    res = pml.design(pml.L1Ball([0.1, 0.35, 0.4, 0.15], 0.05), 1.0).with_labels(["desktop", "laptop", "phone", "tablet"])
    res.save(tmp_path / "device.json")
    (tmp_path / "adir").mkdir()
    return tmp_path


# --- 1. files are sacred ---------------------------------------------------------------------------------
DESIGN = ["design", "--csv", "survey.csv", "--column", "device", "--epsilon", "1", "--radius", "0.05"]


@pytest.mark.parametrize("output, needle", [
    ("survey", "is the input --csv"),             # PREFIX.csv would replace the data file
    ("./survey", "is the input --csv"),
    ("adir/", "is a directory"),
    ("adir", "is a directory"),
])
def test_design_output_never_destroys_an_input(capsys, survey, output, needle):
    before = digest("survey.csv")
    one_line_error(*run(capsys, *DESIGN, "-o", output)[::2], needle)
    assert digest("survey.csv") == before and not (survey / "adir.json").exists()


def test_design_output_through_a_symlink_and_of_another_kind(capsys, survey):
    os.symlink("survey.csv", "link.csv")
    code, _, err = run(capsys, "design", "--csv", "link.csv", "--column", "device", "--epsilon", "1", "--radius",
                       "0.05", "-o", "survey")
    one_line_error(code, err, "is the input --csv")
    (survey / "other.csv").write_text("a,b\n1,2\n")  # a data file that is not an input
    before = digest("other.csv")
    one_line_error(*run(capsys, *DESIGN, "-o", "other")[::2], "--force")
    assert digest("other.csv") == before and not (survey / "other.json").exists()
    assert run(capsys, *DESIGN, "-o", "other", "--force")[0] == 0
    # now a mechanism file + its matrix CSV: still only with --force (the only key to the reports privatized with it)
    one_line_error(*run(capsys, *DESIGN, "-o", "other")[::2], "other.json exists and is a pml-design mechanism file")
    assert run(capsys, *DESIGN, "-o", "other", "--force")[0] == 0


@pytest.mark.parametrize("output, needle", [
    ("device.json", "is the input MECHANISM"),
    ("survey.csv", "is the input --csv"),
    ("adir", "is a directory"),
    ("adir/", "is a directory"),
])
def test_privatize_output_never_destroys_an_input(capsys, survey, output, needle):
    before = (digest("survey.csv"), digest("device.json"))
    code, _, err = run(capsys, "privatize", "device.json", "--csv", "survey.csv", "--column", "device", "-o", output)
    one_line_error(code, err, needle)
    assert (digest("survey.csv"), digest("device.json")) == before


def test_privatize_existing_output_needs_force(capsys, survey):
    args = ["privatize", "device.json", "--csv", "survey.csv", "--column", "device", "--seed", "0"]
    assert run(capsys, *args, "-o", "out.csv")[0] == 0
    one_line_error(*run(capsys, *args, "-o", "out.csv")[::2], "pass --force")
    assert run(capsys, *args, "-o", "out.csv", "--force")[0] == 0


def test_python_save_never_destroys_another_kind(survey):
    res = pml.design(pml.L1Ball([0.5, 0.5], 0.1), 1.0)
    before = digest("survey.csv")
    with pytest.raises(ValueError, match="survey.csv exists; refusing to replace it.*overwrite=True"):
        res.save("survey.csv")
    assert digest("survey.csv") == before
    with pytest.raises(ValueError, match="is a directory"):
        res.save("adir")
    res.save("copy.csv", overwrite=True)
    assert pml.load_mechanism("copy.csv").n_inputs == 2


def test_python_save_never_replaces_a_mechanism_file_silently(survey):
    # a mechanism file is the only key to decoding the reports privatized with it: replaced only with
    # overwrite=True, in Python as on the command line (design -o needs --force); a review found it replaced
    first = pml.design(pml.L1Ball([0.5, 0.5], 0.1), 1.0)
    other = pml.design(pml.L1Ball([0.3, 0.7], 0.1), 2.0)
    est = pml.design_from_samples(["a", "b", "a", "a"] * 50, epsilon=1.0, delta=1e-6)
    for path, save in (("m.json", first.save), ("e.json", est.save),
                       ("f.json", lambda p: pml.save_mechanism(first, p))):
        save(path)
        before = digest(path)
        for again in (other.save, est.save, lambda p: pml.save_mechanism(other, p)):
            with pytest.raises(OutputFileError, match=f"path: {path} exists and is a pml-design mechanism file, "
                               "the only key to decoding .*pass overwrite=True") as info:
                again(path)
            assert isinstance(info.value, ValueError)
            assert digest(path) == before
    other.save("m.json", overwrite=True)
    np.testing.assert_allclose(pml.load_mechanism("m.json").matrix, other.matrix)
    est.save("m.json", overwrite=True)
    assert pml.load_mechanism("m.json").labels == ("a", "b")


def test_demo_plot_never_replaces_a_file_without_force(capsys, survey, tmp_path):
    before = digest("survey.csv")
    one_line_error(*run(capsys, "demo", "--plot", "survey.csv")[::2],
                   "argument --plot: survey.csv exists; refusing to replace it (choose another name, or pass --force")
    one_line_error(*run(capsys, "demo", "--plot", "adir")[::2], "argument --plot: 'adir' is a directory")
    assert digest("survey.csv") == before
    png = tmp_path / "old.png"  # a PNG too (an earlier figure): it was replaced silently
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    one_line_error(*run(capsys, "demo", "--plot", str(png))[::2], f"argument --plot: {png} exists; refusing to replace")
    # with --force the check passes (the next check, --samples, stops the demo before any work)
    one_line_error(*run(capsys, "demo", "--plot", str(png), "--force", "--samples", "10000000")[::2],
                   "argument --samples")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size == 72


# --- 2. no aborts -------------------------------------------------------------------------------------------
def test_csv_reader_gets_a_native_arrow_file(tmp_path, monkeypatch):
    """Root cause of the exit-134 aborts: Arrow's threads destroyed a wrapped *Python* file at interpreter exit."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from pml_design.deploy.streaming import TableSource, column_counts

    seen = []
    real = pacsv.open_csv

    def spy(source, *args, **kwargs):
        seen.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pacsv, "open_csv", spy)
    p = tmp_path / "t.csv"
    p.write_text("a\nx\ny\n")
    column_counts(TableSource(p, "--csv"), "a")
    assert seen and all(isinstance(s, pa.NativeFile) for s in seen)


def test_error_exits_never_abort(tmp_path):
    """The three reproducers of the issue, 4 + 3 + 3 runs in parallel subprocesses: exit status 2 every time."""
    (tmp_path / "miss.csv").write_text("id,dev\n1,\n2,?\n3,NA\n")
    (tmp_path / "data.csv").write_text("id,dev\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(200)))
    mech = pml.design(pml.L1Ball([0.5, 0.5], 0.1), 1.0).with_labels(["a", "b"])
    mech.save(tmp_path / "m.json")
    (tmp_path / "private.csv").write_text("id,dev\n" + "".join(f"{i},{mech.mechanism.output_labels[i % 2]}zz\n"
                                                             for i in range(200)))
    cli = [sys.executable, "-m", "pml_design.cli"]
    commands = [[*cli, "design", "--csv", "miss.csv", "--column", "dev", "--epsilon", "1", "--delta", "1e-3"]] * 4
    commands += [[*cli, "privatize", "m.json", "--csv", "private.csv", "--column", "dev", "-o", "x.csv"]] * 3
    commands += [[*cli, "privatize", "m.json", "--csv", "data.csv", "--column", "id", "-o", "x.csv"]] * 3
    # and a progress bar left open at exit, its timer ticking (the timer thread must not abort the exit either)
    ticking = ("import time, pml_design.progress as p; p.PLAIN_S = p.REFRESH_S = 0.001; "
               "bar = p.progress_bar(desc='x', enabled=True); bar.update(); time.sleep(0.2)")
    commands += [[sys.executable, "-c", ticking]] * 2
    env = {k: v for k, v in ENV.items() if k != "PML_DESIGN_NO_PROGRESS"}
    procs = [subprocess.Popen(c, cwd=tmp_path, env=env if c[1] == "-c" else ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for c in commands]
    results = [(c, p.wait(timeout=120), p.communicate()) for c, p in zip(commands, procs)]
    for command, code, (out, err) in results:
        assert out == "" and "terminate called" not in err, (code, err)
        if command[1] == "-c":
            assert code == 0 and "pml-design: x: " in err, (code, err)
        else:
            assert code == 2 and len(err.strip().splitlines()) == 1, (code, err)


# --- 3. privacy parameters checked where they enter ----------------------------------------------------------
def test_delta_one_is_refused_everywhere(capsys):
    one_line_error(*run(capsys, "calibrate", "laplace", "--epsilon", "1", "--delta", "1", "--p-hat-min", ".2",
                        "--m", "1000")[::2], "argument --delta")
    for call in (lambda: pml.laplace_scale_for(1, 0.2, 1000, 1.0),
                 lambda: pml.design_from_samples(["a", "b"] * 50, epsilon=1, delta=1.0),
                 lambda: pml.l1_radius(100, 3, 1.0)):
        with pytest.raises(ValueError, match="vacuous"):
            call()


def test_alpha_above_one_half_is_refused(capsys, tmp_path):
    one_line_error(*run(capsys, "calibrate", "histogram", "--epsilon", "1", "--alpha", "0.7")[::2],
                   "argument --alpha: must lie in (0, 1/2]")
    with pytest.raises(ValueError, match=r"\(0, 1/2\]"):
        pml.histogram_scale_for(1, 0.7)
    data = tmp_path / "d.csv"
    data.write_text("x\na\nb\n")
    one_line_error(*run(capsys, "calibrate", "histogram", "--epsilon", "1", "--alpha", "0.1", "--csv", data,
                        "--column", "x")[::2], "argument --csv: not allowed with --alpha")
    one_line_error(*run(capsys, "calibrate", "histogram", "--epsilon", "1", "--alpha", "0.1", "--delta", "0.1")[::2],
                   "argument --delta")
    data.write_text("x\na\n")
    one_line_error(*run(capsys, "calibrate", "histogram", "--epsilon", "1", "--csv", data, "--column", "x",
                        "--delta", "1e-3")[::2], "argument --csv: a histogram needs at least 2 bins")


# --- 4. estimates defend themselves ----------------------------------------------------------------------------
def _mechanism():
    p = np.array([0.1, 0.35, 0.4, 0.15])
    return p, pml.design(pml.L1Ball(p, 0.05), 1.0, utility="frequency_estimation").mechanism


def test_fit_test_power_and_no_false_alarm_at_1e7():
    from pml_design.mechanisms.fit import FIT_LEVEL, ReportsFitWarning, report_fit

    p, a = _mechanism()
    rng = np.random.default_rng(2023)
    assert a.n_outputs > a.n_inputs  # df > 0 in the interior
    # power: the same categories and outputs, another mechanism (its output columns permuted), 5000 reports
    b = pml.Mechanism(a.matrix[:, np.roll(np.arange(a.n_outputs), 1)])
    for reader, writer in ((b, a), (a, b)):
        with pytest.warns(ReportsFitWarning, match="do not fit"):
            reader.estimate(rng.multinomial(5000, p @ writer.matrix), counts=True)
    # no false alarm: 14 correct files of 10^7 reports each (7 with a category of probability 0: boundary)
    pvals = []
    for prior in (p, np.array([0.0, 0.4, 0.45, 0.15])):
        for _ in range(7):
            c = rng.multinomial(10**7, prior @ a.matrix)
            with warnings.catch_warnings():
                warnings.simplefilter("error", ReportsFitWarning)
                pi = a.estimate(c, counts=True)
            pvals.append(report_fit(a.matrix, c, pi).p_value)
    assert min(pvals) > FIT_LEVEL
    assert 0.01 < np.median(pvals) < 0.99  # p-values spread out (the degrees of freedom are about right)


def test_fit_test_on_hand_made_mechanisms():
    from pml_design.mechanisms.fit import ReportsFitWarning, report_fit

    rng = np.random.default_rng(7)
    p = np.array([0.5, 0.5])
    wa = np.array([[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]])
    wb = np.array([[0.7, 0.1, 0.2], [0.2, 0.1, 0.7]])
    with pytest.warns(ReportsFitWarning):
        pml.Mechanism(wb).estimate(rng.multinomial(5000, p @ wa), counts=True)
    # the limit of any such test: a square invertible mechanism fits every report distribution in its image
    # (df = 0); reports of a *sharper* mechanism read with a flatter one land outside it (a category at 0: caught),
    # reports of a flatter one read with a sharper one do not (not detectable from the reports alone)
    sharp, flat = pml.randomized_response(3, 3.0), pml.randomized_response(3, 0.5)
    c = rng.multinomial(20000, np.array([0.1, 0.3, 0.6]) @ sharp.matrix)
    with pytest.warns(ReportsFitWarning):
        flat.estimate(c, counts=True)
    c = rng.multinomial(20000, np.array([0.1, 0.3, 0.6]) @ flat.matrix)
    pi = sharp.estimate(c, counts=True)
    assert report_fit(sharp.matrix, c, pi).df == 0


def test_reports_the_mechanism_cannot_output_are_refused():
    m = pml.Mechanism(np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]]), labels=["a", "b"], output_labels=["u", "v", "w"])
    with pytest.raises(ValueError, match=r"never produces"):
        m.estimate([3, 4, 1], counts=True)
    with pytest.raises(ValueError, match=r"zz"):
        m.estimate(["u", "v", "zz"])
    with pytest.raises(ValueError, match="tol"):
        m.estimate([3, 4, 0], counts=True, tol=-1)


def test_cli_estimate_with_the_wrong_mechanism_warns(capsys, survey):
    p = np.array([0.1, 0.35, 0.4, 0.15])
    labels = ["desktop", "laptop", "phone", "tablet"]
    # outputs are named y0 … y{M-1}: sorted by M, the middle design's outputs are a strict subset of the largest's
    # and not of the smallest's (which design has how many outputs is the solver's business)
    designs = {eps: pml.design(pml.L1Ball(p, 0.05), eps, utility="frequency_estimation").with_labels(labels)
               for eps in (0.5, 1.0, 2.0, 3.0)}
    by_size = {r.matrix.shape[1]: r for r in designs.values()}
    assert len(by_size) >= 3
    sizes = sorted(by_size)
    for name, size in (("c", sizes[0]), ("a", sizes[1]), ("b", sizes[-1])):
        by_size[size].save(f"{name}.json")
    outputs = {k: pml.load_mechanism(f"{k}.json").output_labels for k in "abc"}
    assert set(outputs["a"]) < set(outputs["b"]) and not set(outputs["a"]) <= set(outputs["c"])
    assert run(capsys, "privatize", "a.json", "--csv", "survey.csv", "--column", "device", "--seed", "1",
               "-o", "priv.csv")[0] == 0
    code, out, err = run(capsys, "estimate", "a.json", "--csv", "priv.csv", "--column", "device")
    assert code == 0 and "warning" not in err
    # another mechanism for the same categories whose outputs include these labels: privatize's mark names the
    # mechanism, and the file is refused whatever the outputs are called (session 20: it was refused only where they
    # carry the category names); read anyway, a table and a warning line
    code, out, err = run(capsys, "estimate", "b.json", "--csv", "priv.csv", "--column", "device")
    assert code == 2 and "was privatized with another mechanism file" in err
    code, out, err = run(capsys, "estimate", "b.json", "--csv", "priv.csv", "--column", "device",
                         "--unverified-reports")
    assert code == 0 and err.startswith("pml-design: warning: the reports do not fit") and len(err.splitlines()) == 1
    # one whose outputs do not: refused, one line (by the mark; read anyway, by the labels it does not know)
    one_line_error(*run(capsys, "estimate", "c.json", "--csv", "priv.csv", "--column", "device")[::2],
                   "was privatized with another mechanism file")
    one_line_error(*run(capsys, "estimate", "c.json", "--csv", "priv.csv", "--column", "device",
                        "--unverified-reports")[::2], "does not know")


# --- 5. nothing silently ignored or reshaped -------------------------------------------------------------------
def test_two_dimensional_samples_are_refused():
    import pandas

    with pytest.raises(ValueError, match=r"1-D.*shape \(10, 2\)"):
        pml.design_from_samples(np.zeros((10, 2), int), 2, 1.0, 1e-3)
    frame = pandas.DataFrame({"a": ["x", "y"] * 50, "b": ["u", "v"] * 50})
    with pytest.raises(TypeError, match=r"DataFrame with 2 column.*df\['a'\]"):
        pml.design_from_samples(frame, epsilon=1.0, delta=1e-3)


def test_options_that_would_be_ignored_are_refused(capsys, tmp_path):
    counts = tmp_path / "c.txt"
    counts.write_text("a,10\nb,20\n")
    one_line_error(*run(capsys, "design", "--counts", counts, "--column", "x", "--epsilon", "1", "--radius", "0.1")[::2],
                   "argument --column: not allowed with --counts")
    one_line_error(*run(capsys, "design", "--counts", counts, "--delimiter", ";", "--epsilon", "1", "--radius",
                        "0.1")[::2], "argument --delimiter: not allowed with --counts")


def test_plain_counts_without_categories():
    est = pml.design_from_samples([10, 20, 5], counts=True, epsilon=1.0, delta=0.5)
    np.testing.assert_allclose(est.p_hat, [10 / 35, 20 / 35, 5 / 35])
    with pytest.raises(ValueError, match="support_size is 4"):
        pml.design_from_samples([10, 20, 5], 4, 1.0, 0.5, counts=True)


def test_output_column_never_overwrites_another_column():
    import pandas

    mech = pml.randomized_response(2, 1.0).with_labels(["a", "b"])
    df = pandas.DataFrame({"x": ["a", "b"] * 5, "region": ["n"] * 10})
    with pytest.raises(ValueError, match="output_column 'region' is already a column"):
        pml.privatize_dataframe(df, "x", mech, rng=0, output_column="region")
    out = pml.privatize_dataframe(df, "x", mech, rng=0, output_column="x_private")
    assert list(out["region"]) == ["n"] * 10 and list(out["x"]) == list(df["x"])


def test_labels_are_exact_text_everywhere(capsys, tmp_path):
    with pytest.raises(ValueError, match="differ only in surrounding whitespace"):
        pml.design_from_samples([" sp ", "sp", "a"] * 30, epsilon=1.0, delta=0.1)
    data = tmp_path / "ws.csv"
    data.write_text("id,v\n1, sp \n2,sp\n3,a\n")
    one_line_error(*run(capsys, "design", "--csv", data, "--column", "v", "--epsilon", "1", "--radius", "0.1")[::2],
                   "differ only in surrounding whitespace")
    # a label with spaces designed on the CLI is the same label in pandas
    data.write_text("id,v\n" + "".join(f"{i},{[' sp ', 'a'][i % 2]}\n" for i in range(100)))
    assert run(capsys, "design", "--csv", data, "--column", "v", "--epsilon", "1", "--radius", "0.1",
               "-o", tmp_path / "m")[0] == 0
    import pandas

    frame = pandas.read_csv(data)
    mech = pml.load_mechanism(tmp_path / "m.json")
    assert mech.labels == (" sp ", "a") or set(mech.labels) == {" sp ", "a"}
    assert len(pml.privatize_dataframe(frame, "v", mech, rng=0)) == 100


# --- 6. messages in the caller's language -------------------------------------------------------------------------
def test_exact_method_limit_speaks_cli(capsys, tmp_path):
    counts = tmp_path / "c.txt"
    counts.write_text("".join(f"c{i},{10 + i}\n" for i in range(30)))
    code, _, err = run(capsys, "design", "--counts", counts, "--epsilon", "1", "--radius", "0.5", "--method", "exact",
                       "--utility", "mutual_information")
    one_line_error(code, err, "argument --method: ")
    from pml_design.design.rays import MAX_EXACT_SIZE, MAX_EXACT_SIZE_GENERIC

    assert f"N <= {MAX_EXACT_SIZE}" in err or f"N <= {MAX_EXACT_SIZE_GENERIC}" in err
    assert "method=" not in err and "--method scalable" in err


@pytest.mark.parametrize("utility", [[], ["--utility", "frequency_estimation"]], ids=["default", "named"])
def test_exact_method_on_frequency_estimation_names_method(capsys, tmp_path, utility):
    """--method exact does not apply to frequency estimation (the default utility): the flag to change is --method
    (a review found the message naming --utility), checked before any data are read (here a file that does not exist;
    with --dp-epsilon that is before the noisy release)."""
    code, _, err = run(capsys, "design", "--counts", tmp_path / "absent.txt", "--epsilon", "1", "--radius", "0.5",
                       "--method", "exact", *utility)
    one_line_error(code, err, "argument --method: exact (exhaustive ray enumeration) does not apply to --utility "
                              "frequency_estimation")
    assert "use --method auto" in err and "method=" not in err


def test_design_defaults_to_frequency_estimation(capsys):
    code, out, _ = run(capsys, "design", "--help")
    assert code == 0 and "default: frequency_estimation" in " ".join(out.split())


# --- 7. progress that moves --------------------------------------------------------------------------------------
class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_moves_on_a_terminal_without_iterations(monkeypatch):
    from pml_design import progress

    monkeypatch.setattr(progress, "REFRESH_S", 0.05)
    monkeypatch.delenv(progress.NO_PROGRESS_ENV, raising=False)
    fake = _Tty()
    monkeypatch.setattr(sys, "stderr", fake)
    with progress.progress_bar(desc="column generation", enabled=True) as bar:
        bar.update(1)
        n0 = fake.getvalue().count("\r")
        time.sleep(0.5)  # no iteration: the timer redraws
        assert fake.getvalue().count("\r") >= n0 + 3
        timer = bar._timer
        assert timer.daemon and timer.is_alive()
    assert not timer.is_alive()


def test_progress_off_a_terminal_prints_plain_lines(monkeypatch):
    from pml_design import progress

    monkeypatch.setattr(progress, "PLAIN_S", 0.05)
    monkeypatch.delenv(progress.NO_PROGRESS_ENV, raising=False)
    fake = io.StringIO()
    monkeypatch.setattr(sys, "stderr", fake)
    with progress.progress_bar(desc="column generation", enabled=True) as bar:
        bar.update(2)
        bar.set_postfix(value="1.5", bound="2", gap="2.50e-01", refresh=False)
        time.sleep(0.4)
        timer = bar._timer
    lines = fake.getvalue().splitlines()
    assert len(lines) >= 3 and "\r" not in fake.getvalue() and "\x1b" not in fake.getvalue()
    assert all(ln.startswith("pml-design: column generation: ") and "elapsed" in ln for ln in lines)
    assert "value=1.5" in lines[-1] and "bound=2" in lines[-1] and "gap=2.50e-01" in lines[-1]
    assert not timer.is_alive()
    assert not any(t.name == "pml-design-progress" for t in threading.enumerate())
    with progress.progress_bar(desc="x", enabled=False) as bar:  # disabled: no timer at all
        assert bar._timer is None
