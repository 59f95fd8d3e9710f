"""Mechanism files of format version 3: the matrix as ``matrix_binary`` (float64 bytes, zlib, base64).

The round trip is bit for bit; the encoding is read back here by an independent decoder written from the documented
layout (``struct``, not numpy); a tampered or malformed field is refused with one line naming it."""

from __future__ import annotations

import base64
import json
import struct
import zlib

import numpy as np
import pytest

import pml_design as pml
from pml_design.deploy import MechanismFileError, content_hash, load_mechanism, save_mechanism
from pml_design.deploy import matrix_binary

COLOURS = np.array(["red", "green", "blue", "grey"])


@pytest.fixture(scope="module")
def design():
    x = COLOURS[np.random.default_rng(1).choice(4, size=4000, p=[0.4, 0.3, 0.2, 0.1])]
    return pml.design_from_samples(x, epsilon=2.0, delta=1e-3, utility="frequency_estimation", allow_zero=True,
                                   solver_options={"time_limit": 5})


def _independent_decode(field: dict) -> list[list[float]]:
    n, m = field["shape"]
    raw = zlib.decompress(base64.b64decode(field["data"]))
    values = struct.unpack(f"<{n * m}d", raw)  # little-endian doubles, one column after another
    return [[values[j * n + i] for j in range(m)] for i in range(n)]


def test_binary_round_trip_is_bit_for_bit_and_matches_the_documented_layout(design, tmp_path):
    text = load_mechanism(save_mechanism(design, tmp_path / "t.json", matrix_format="text"))
    path = save_mechanism(design, tmp_path / "b.json", matrix_format="binary")
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 3 and "matrix" not in doc
    assert list(doc)[list(doc).index("output_labels") + 1] == "matrix_binary"
    W = np.asarray(design.result.matrix, dtype=float)
    assert np.array_equal(np.array(_independent_decode(doc["matrix_binary"])), W)
    binary = load_mechanism(path)
    assert np.array_equal(binary.matrix, text.matrix) and binary.labels == text.labels
    assert binary.metadata["format_version"] == 3 and "matrix_binary" not in binary.metadata
    assert binary.metadata["recertified_epsilon"] == text.metadata["recertified_epsilon"]
    assert path.stat().st_size < (tmp_path / "t.json").stat().st_size


def test_auto_writes_binary_only_above_the_threshold(design, tmp_path, monkeypatch):
    small = json.loads(save_mechanism(design, tmp_path / "a.json").read_text())
    assert small["format_version"] == 2 and "matrix" in small
    monkeypatch.setattr(matrix_binary, "BINARY_ABOVE", design.result.matrix.size - 1)
    wide = json.loads(save_mechanism(design, tmp_path / "w.json").read_text())
    assert wide["format_version"] == 3 and "matrix_binary" in wide


def test_a_bad_matrix_format_is_refused_by_name(design, tmp_path):
    with pytest.raises(ValueError, match=r"matrix_format must be one of \['auto', 'text', 'binary'\], got 'zip'"):
        save_mechanism(design, tmp_path / "x.json", matrix_format="zip")
    assert not (tmp_path / "x.json").exists()


def test_a_changed_byte_of_the_data_fails_the_hash(design, tmp_path):
    path = save_mechanism(design, tmp_path / "b.json", matrix_format="binary")
    doc = json.loads(path.read_text())
    data = doc["matrix_binary"]["data"]
    doc["matrix_binary"]["data"] = data[:40] + ("A" if data[40] != "A" else "B") + data[41:]
    path.write_text(json.dumps(doc))
    with pytest.raises(MechanismFileError, match="content hash mismatch"):
        load_mechanism(path)


def _field(W: np.ndarray, **change) -> dict:
    field = matrix_binary.encode_matrix(W)
    field.update(change)
    return field


@pytest.mark.parametrize(("change", "message"), [
    ({"encoding": "npy"}, "matrix_binary must be an object with \"encoding\""),
    ({"shape": [4, True]}, r"matrix_binary.shape must be two positive integers"),
    ({"shape": [4]}, r"matrix_binary.shape must be two positive integers"),
    ({"shape": [2**20, 2**20]}, r"more than this library reads"),
    ({"data": "not base64!"}, r"not base64 of zlib data"),
    ({"data": base64.b64encode(b"plain bytes").decode()}, r"not base64 of zlib data"),
    ({"data": 7}, r"matrix_binary.data must be a base64 string, got int"),
    ({"dtype": "<f4"}, r"matrix_binary has fields this library does not read: \['dtype'\]"),
])
def test_a_malformed_field_is_refused_in_one_line(design, tmp_path, change, message):
    path = save_mechanism(design, tmp_path / "b.json", matrix_format="binary")
    doc = json.loads(path.read_text())
    doc["matrix_binary"] = _field(np.asarray(design.result.matrix, dtype=float), **change)
    doc["sha256"] = content_hash(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(MechanismFileError, match=message) as err:
        load_mechanism(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_a_shape_that_does_not_match_the_data_is_refused(design, tmp_path):
    W = np.asarray(design.result.matrix, dtype=float)
    n, m = W.shape
    bomb = base64.b64encode(zlib.compress(bytes(8 * n * m * 50), 9)).decode()  # inflates to 50 times the shape
    for data in (matrix_binary.encode_matrix(W[:, :-1])["data"], bomb):
        with pytest.raises(ValueError, match=rf"does not hold the {n * m} doubles its shape \[{n}, {m}\] declares"):
            matrix_binary.decode_matrix(_field(W, data=data))


def test_the_version_and_the_field_must_agree(design, tmp_path):
    path = save_mechanism(design, tmp_path / "b.json", matrix_format="binary")
    for mutate, message in (
            (lambda d: d.__setitem__("format_version", 2), r"format_version 2 file holds its matrix as matrix \(and"),
            (lambda d: d.__setitem__("matrix", [[1.0]]), r"format_version 3 file holds its matrix as matrix_binary")):
        doc = json.loads(path.read_text())
        mutate(doc)
        doc["sha256"] = content_hash(doc)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(doc))
        with pytest.raises(MechanismFileError, match=message):
            load_mechanism(bad)


@pytest.mark.parametrize(("version", "shown"), [(4, "4"), (True, "True"), (3.0, "3.0"), ("3", "'3'")])
def test_an_older_reader_would_refuse_version_3_by_its_version(tmp_path, design, version, shown):
    path = save_mechanism(design, tmp_path / "b.json", matrix_format="binary")
    doc = json.loads(path.read_text())
    doc["format_version"] = version  # true was read as version 1 (a bool is an int in Python)
    doc["sha256"] = content_hash(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(MechanismFileError, match=rf"format_version {shown} is not supported by this library \(reads 1 to 3\)"):
        load_mechanism(path)


# --- the command line --------------------------------------------------------------------------------------------
def _cli(capsys, *argv):
    from pml_design.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_design_writes_a_binary_file_without_csv_that_privatize_and_estimate_read(capsys, tmp_path):
    data = tmp_path / "data.csv"
    rng = np.random.default_rng(0)
    data.write_text("c\n" + "\n".join(COLOURS[rng.choice(4, size=3000, p=[0.4, 0.3, 0.2, 0.1])]) + "\n")
    prefix = tmp_path / "mech"
    (tmp_path / "mech.csv").write_text("an older matrix\n")
    code, out, _ = _cli(capsys, "design", "--csv", str(data), "--column", "c", "--epsilon", "2", "--delta", "1e-3",
                        "--time-limit", "8", "-o", str(prefix), "--matrix-format", "binary", "--force")
    assert code == 0
    assert f"wrote {prefix}.json" in out and f"wrote {prefix}.csv" not in out
    assert f"note: the matrix (4 x " in out and f"the existing {prefix}.csv is not this design's" in out
    assert (tmp_path / "mech.csv").read_text() == "an older matrix\n"  # never replaced by a design that writes none
    assert json.loads((tmp_path / "mech.json").read_text())["format_version"] == 3
    code, out, _ = _cli(capsys, "privatize", str(prefix) + ".json", "--csv", str(data), "--column", "c",
                        "-o", str(tmp_path / "r.csv"), "--allow-design-data")
    assert code == 0
    code, out, _ = _cli(capsys, "estimate", str(prefix) + ".json", "--csv", str(tmp_path / "r.csv"), "--column", "c",
                        "--json")
    assert code == 0 and set(json.loads(out)["categories"]) == set(COLOURS)


def test_an_existing_csv_is_refused_only_where_one_may_be_written(capsys, tmp_path):
    data = tmp_path / "data.csv"
    rng = np.random.default_rng(0)
    data.write_text("c\n" + "\n".join(COLOURS[rng.choice(4, size=3000, p=[0.4, 0.3, 0.2, 0.1])]) + "\n")
    (tmp_path / "mech.csv").write_text("an older matrix\n")
    base = ["design", "--csv", str(data), "--column", "c", "--epsilon", "2", "--delta", "1e-3", "--time-limit", "8",
            "-o", str(tmp_path / "mech")]
    code, _, err = _cli(capsys, *base)  # auto: the design may end as text, which writes mech.csv
    assert code == 2 and "mech.csv" in err and "--force" in err and not (tmp_path / "mech.json").exists()
    code, out, err = _cli(capsys, *base, "--matrix-format", "binary", "--json")  # binary writes no CSV: not refused
    assert code == 0, err
    res = json.loads(out)
    assert res["files"] == [str(tmp_path / "mech.json")] and res["stale_files"] == [str(tmp_path / "mech.csv")]
    assert (tmp_path / "mech.csv").read_text() == "an older matrix\n"
    # but never the input itself (a review: the design's --csv was listed in stale_files as an earlier matrix)
    (tmp_path / "rec.csv").write_text(data.read_text())
    code, _, err = _cli(capsys, "design", "--csv", str(tmp_path / "rec.csv"), "--column", "c", "--epsilon", "2",
                        "--delta", "1e-3", "--time-limit", "8", "-o", str(tmp_path / "rec"), "--matrix-format", "binary")
    assert code == 2 and "argument --output" in err and "--csv" in err and not (tmp_path / "rec.json").exists()


def test_matrix_format_needs_an_output(capsys, tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("c\nred\nblue\nred\n")
    code, _, err = _cli(capsys, "design", "--csv", str(data), "--column", "c", "--epsilon", "2", "--radius", "0.1",
                        "--matrix-format", "text")
    assert code == 2 and "argument --matrix-format: only with --output" in err and err.count("\n") == 1


def test_extra_may_not_carry_a_matrix_binary_field(design, tmp_path):
    for fmt in ("text", "binary"):
        with pytest.raises(ValueError, match="extra may not replace the standard field 'matrix_binary'"):
            save_mechanism(design, tmp_path / f"{fmt}.json", matrix_format=fmt, extra={"matrix_binary": {}})


def test_a_shape_above_the_limit_is_refused_before_decoding(design):
    W = np.asarray(design.result.matrix, dtype=float)
    n = W.shape[0]
    with pytest.raises(ValueError, match=r"more than this library reads \(536870912\)"):
        matrix_binary.decode_matrix(_field(W, shape=[n, matrix_binary.MAX_ENTRIES // n + 1]))


def test_estimate_shows_a_bar_for_a_wide_mechanism_and_none_for_a_small_one(capsys, tmp_path, monkeypatch):
    from pml_design.cli import deploy as cli_deploy

    data = tmp_path / "data.csv"
    rng = np.random.default_rng(1)
    data.write_text("c\n" + "\n".join(COLOURS[rng.choice(4, size=2000, p=[0.4, 0.3, 0.2, 0.1])]) + "\n")
    assert _cli(capsys, "design", "--csv", str(data), "--column", "c", "--epsilon", "2", "--delta", "1e-3",
                "--time-limit", "8", "-o", str(tmp_path / "m"))[0] == 0
    assert _cli(capsys, "privatize", str(tmp_path / "m.json"), "--csv", str(data), "--column", "c",
                "-o", str(tmp_path / "r.csv"), "--allow-design-data")[0] == 0
    steps = []
    real = cli_deploy._long_step
    monkeypatch.setattr(cli_deploy, "_long_step", lambda args, desc, long: steps.append((desc, long)) or
                        real(args, desc, long))
    argv = ("estimate", str(tmp_path / "m.json"), "--csv", str(tmp_path / "r.csv"), "--column", "c")
    assert _cli(capsys, *argv)[0] == 0
    assert [long for _, long in steps] == [False, False]
    steps.clear()
    monkeypatch.setattr(cli_deploy, "WIDE_FILE_BYTES", 0)
    monkeypatch.setattr(cli_deploy, "WIDE_WORK", 0.0)
    code, out, _ = _cli(capsys, *argv)
    assert code == 0 and steps == [(f"checking {tmp_path / 'm.json'}", True), ("estimating", True)]
    assert "estimated distribution" in out
