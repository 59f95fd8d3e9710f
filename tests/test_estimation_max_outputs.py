"""The frequency-estimation design's output cap (``solver_options["max_outputs"]``, CLI ``--max-outputs`` and the cap
``--time-limit`` implies): every stage honours it, the result is certified and never above the capped seed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pml_design as pml
from pml_design.cli import main
from pml_design.design.estimation.api import LDP_OUTPUTS_CAP, output_budgets
from pml_design.design.estimation.mixture import PartitionChannels, fit_outputs, mixture_matrix
from pml_design.mechanisms.frequency_oracles.optimum import ranked_candidates


def _ball_capacity(W: np.ndarray, p: np.ndarray, radius: float) -> float:
    """max_y log(max_x W_xy / min_Q Q·W_y) over the ℓ1 ball ∩ simplex, Q·c minimised greedily per column: mass β/2
    moves from the symbols with the largest c_x to the one with the smallest (the linear minimum's vertex)."""
    order = np.argsort(-W, axis=0)  # donors, largest entry first
    c_sorted = np.take_along_axis(W, order, axis=0)
    p_sorted = p[order]
    before = np.cumsum(p_sorted, axis=0) - p_sorted
    take = np.clip(radius / 2 - before, 0.0, p_sorted)
    q_dot = (p[:, None] * W).sum(axis=0) - (take * c_sorted).sum(axis=0) + take.sum(axis=0) * W.min(axis=0)
    return float(np.max(np.log(W.max(axis=0) / q_dot)))


def _zipf(n: int) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    return p / p.sum()


@pytest.mark.parametrize("cap", [30, 64, 250, 700])
def test_the_design_never_has_more_outputs_than_max_outputs(cap):
    """N = 30 (uncapped: the LDP seed on ~4 000 outputs, then master rounds): every cap is met, the leakage is
    certified by the ball's closed form, and the design is never worse than the compact channel it started from."""
    p = _zipf(30)
    ball = pml.L1Ball(p, 0.1)
    res = pml.design(ball, 2.0, utility="frequency_estimation", solver_options={"time_limit": 2, "max_outputs": cap})
    assert res.matrix.shape[1] <= cap
    assert res.info["max_outputs"] == cap and res.info["seed_budget"] <= cap
    assert _ball_capacity(res.matrix, p, 0.1) <= 2.0 + 1e-9  # an independent path (Definition 5 over the ball)
    assert np.allclose(res.matrix.sum(axis=1), 1.0)
    assert res.utility <= res.info["best_seed_value"] * (1 + 1e-12)
    assert res.lower_bound <= res.utility


def test_a_cap_with_room_for_the_master_stays_near_the_uncapped_design():
    """At N = 30 the uncapped design keeps a few hundred outputs: a cap of 250 leaves the master its columns, and
    the design is within 10 % of the uncapped one (a cap of N, randomized response's outputs, is far worse: the
    cap costs what it must and no more)."""
    p = _zipf(30)
    ball = pml.L1Ball(p, 0.1)
    free = pml.design(ball, 2.0, utility="frequency_estimation", solver_options={"time_limit": 3})
    capped = pml.design(ball, 2.0, utility="frequency_estimation", solver_options={"time_limit": 3, "max_outputs": 250})
    tight = pml.design(ball, 2.0, utility="frequency_estimation", solver_options={"time_limit": 3, "max_outputs": 30})
    assert capped.utility <= 1.1 * free.utility
    assert tight.utility > 1.1 * capped.utility


@pytest.mark.parametrize(("value", "exc", "needle"), [
    (10, ValueError, "must be at least N = 30"),
    (True, TypeError, "max_outputs"),
    (40.5, TypeError, "max_outputs"),
])
def test_a_bad_max_outputs_is_refused_naming_it(value, exc, needle):
    with pytest.raises(exc, match=needle):
        pml.design(pml.L1Ball(_zipf(30), 0.1), 2.0, utility="frequency_estimation",
                   solver_options={"time_limit": 1, "max_outputs": value})


def test_max_outputs_is_refused_where_it_has_no_effect():
    with pytest.raises(ValueError, match="max_outputs"):
        pml.design(pml.L1Ball(_zipf(5), 0.1), 2.0, utility="mutual_information", solver_options={"max_outputs": 10})


def test_output_budgets_leave_room_for_the_later_stages():
    assert output_budgets(100, None) == (4096, LDP_OUTPUTS_CAP)
    seed, larger = output_budgets(100, 1000)  # the master's 400 kept + 100 new columns beside the seed
    assert seed == 500 and larger == 1000
    assert output_budgets(100, 150) == (100, 150)  # never below N (randomized response)
    assert output_budgets(2000, 4700) == (4700, 4700)  # above N = 1 200 the seed is the result: the whole cap


def test_every_candidate_seed_fits_its_budget():
    """Hadamard response (the next power of two above N outputs) was a candidate whatever the budget; a budget of N
    then gave a 64-output seed for N = 60, which a cap of 60 refused."""
    p = _zipf(60)
    for budget in (60, 63, 64, 100):
        for name, outputs, _ in ranked_candidates(60, 2.0, p, max_outputs=budget, count=10, rtol=10.0):
            assert outputs <= budget, (budget, name, outputs)


def test_fit_outputs_keeps_the_heaviest_channels_that_fit_and_stays_private():
    """Channels of 3, 2 and 4 outputs (weights 0.1, 0.5, 0.4) and a seed of 5 outputs, cap 8: the heaviest channels
    that fit are kept, skipping those that do not; the mixture is still row-stochastic and ε-PML (ε-LDP parts)."""
    n, eps = 4, 1.0

    def ldp(k):  # randomized response on k outputs of x mod k: every column's ratio is e^ε (ε-LDP)
        W = np.ones((n, k))
        W[np.arange(n), np.arange(n) % k] = np.exp(eps)
        return W / W.sum(axis=1, keepdims=True)

    pc = PartitionChannels(np.hstack([ldp(3), ldp(2), ldp(4)]), np.repeat(np.arange(3), [3, 2, 4]))
    w = np.array([0.1, 0.5, 0.4])
    kept, a = fit_outputs(pc, w, 0.0, 5, 8)
    assert np.array_equal(kept > 0, [False, True, True]) and a == 0.0  # 2 + 4 fit, the 3 more do not
    kept, a = fit_outputs(pc, w, 0.2, 5, 8)  # 3 left beside the seed: 0.5 (2) fits, 0.4 (4) not, then 0.1 (3) not
    assert np.array_equal(kept > 0, [False, True, False]) and a == 0.2
    kept, a = fit_outputs(pc, np.array([0.5, 0.4, 0.1]), 0.0, 5, 6)  # 3, then 2 (skipping the 4 that does not fit)
    assert np.array_equal(kept > 0, [True, True, False])
    W, _, _ = mixture_matrix(ldp(5), pc, *fit_outputs(pc, w, 0.2, 5, 8))
    assert W.shape[1] <= 8 and np.allclose(W.sum(axis=1), 1.0)
    assert np.all(W.max(axis=0) <= np.exp(eps) * W.min(axis=0) * (1 + 1e-12))  # ε-LDP, hence ε-PML for every prior


def _counts(tmp_path, n):
    path = tmp_path / "counts.txt"
    p = _zipf(n)
    path.write_text("".join(f"c{i},{int(20000 * q) + 1}\n" for i, q in enumerate(p)))
    return path


def test_cli_max_outputs_caps_the_mechanism_file(capsys, tmp_path):
    counts = _counts(tmp_path, 25)
    code = main(["design", "--counts", str(counts), "--epsilon", "2", "--radius", "0.1", "--time-limit", "6",
                 "--max-outputs", "120", "-o", str(tmp_path / "m"), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads((tmp_path / "m.json").read_text())
    assert 25 <= len(doc["matrix"][0]) <= 120
    line = next(ln for ln in out.splitlines() if ln.startswith("estimate from"))  # 12 of the 25, the largest first
    assert "over 25 categories (the 12 largest; --json lists all): c0=" in line and line.count("=") == 13
    code = main(["design", "--counts", str(counts), "--epsilon", "2", "--radius", "0.1", "--max-outputs", "24"])
    _, err = capsys.readouterr()
    assert code == 2 and "argument --max-outputs: must be at least the number of categories (25)" in err


def test_cli_time_limit_caps_the_outputs_instead_of_refusing(capsys, tmp_path, monkeypatch):
    """What follows the design is kept back from --time-limit; where it would take more than half the limit the
    outputs are capped (a note says so) instead of the command being refused (N = 2 000, --time-limit 30 asked for
    262 s). Simulated here with a slow post-design stage at N = 25."""
    from pml_design.cli import design as cli_design

    monkeypatch.setattr(cli_design, "POST_SECONDS_PER_ENTRY",
                        {"disclosure": 1e-3, "files": 1e-3, "binary files": 1e-3, "json": 1e-3})
    counts = _counts(tmp_path, 25)
    code = main(["design", "--counts", str(counts), "--epsilon", "2", "--radius", "0.1", "--time-limit", "5",
                 "-o", str(tmp_path / "m"), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    cap = int(0.5 * 5 / (25 * 2e-3))  # 50
    assert f"note: at most {cap} outputs" in out
    assert len(json.loads((tmp_path / "m.json").read_text())["matrix"][0]) <= cap
    code = main(["design", "--counts", str(counts), "--epsilon", "2", "--radius", "0.1", "--time-limit", "1",
                 "-o", str(tmp_path / "m2"), "--no-progress"])
    _, err = capsys.readouterr()
    assert code == 2 and "for a mechanism with 25 outputs, the fewest that identify 25 frequencies" in err
    assert not any(tmp_path.glob("m2.*"))


def test_cli_a_binding_cap_is_named_in_flags(capsys, tmp_path):
    """At --max-outputs N the design is randomized response or a mixture of partition channels, above the LDP optimum:
    the warning says to raise --max-outputs (not solver_options), names the design's share of --time-limit, and no
    numerical failure is reported (the master kept one column at such a cap and its Fisher matrix was singular)."""
    counts = _counts(tmp_path, 25)
    code = main(["design", "--counts", str(counts), "--epsilon", "2", "--radius", "0.1", "--time-limit", "3",
                 "--max-outputs", "25", "--no-progress"])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "allow more outputs (now at most 25: --max-outputs or --time-limit, whichever caps it;" in err
    assert "the design's share of --time-limit 3 s" in err.splitlines()[0]
    assert "solver_options" not in err and "stopped early" not in err


@pytest.mark.parametrize(("n", "cap"), [(5, 5), (5, 8), (5, 10), (25, 40), (60, 120)])
def test_a_cap_below_the_masters_room_reports_no_numerical_failure(n, cap):
    """A review: at caps below ~3N the master kept N columns and went singular ("stopped early ... Singular matrix
    ... of order epsilon^2", false) and the design gave up early. The master now keeps its columns (its iterates are
    not kept) and the rounds still give a bound; the mixture's value after fitting is the certified one offered."""
    import warnings

    p = _zipf(n)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = pml.design(pml.L1Ball(p, 0.1), 1.0, utility="frequency_estimation",
                         solver_options={"time_limit": 1.5, "max_outputs": cap})
    assert not [w for w in rec if "stopped early" in str(w.message)]
    assert res.matrix.shape[1] <= cap and res.lower_bound <= res.utility
    mix = res.info["mixture"]
    if mix is not None and "fitted_value" in mix:
        assert mix["fitted_value"] >= res.utility * (1 - 1e-12)  # (what was offered; never better than the result)


def test_max_outputs_bounds_and_huge_values():
    ball = pml.L1Ball(_zipf(6), 0.1)
    for bad in (0, -5):
        with pytest.raises(ValueError, match=r"must be at least N = 6 .* got " + str(bad)):
            pml.design(ball, 1.0, utility="frequency_estimation", solver_options={"max_outputs": bad})
    res = pml.design(ball, 1.0, utility="frequency_estimation", solver_options={"time_limit": 1, "max_outputs": 10**30})
    assert res.info["max_outputs"] == 1 << 40  # no cap in effect (a review: 10**30 overflowed numpy in fit_outputs)


def test_cli_json_says_what_capped_the_outputs(capsys, tmp_path, monkeypatch):
    from pml_design.cli import design as cli_design

    counts = _counts(tmp_path, 25)
    monkeypatch.setattr(cli_design, "POST_SECONDS_PER_ENTRY",
                        {"disclosure": 1e-3, "files": 1e-3, "binary files": 1e-3, "json": 1e-3})
    assert main(["design", "--counts", str(counts), "--epsilon", "2", "--radius", "0.1", "--time-limit", "6",
                 "--json", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["max_outputs_from"] == "--time-limit" and out["max_outputs"] == int(0.5 * 6 / (25 * 1e-3 * 2))
    assert len(out["matrix"][0]) <= out["max_outputs"]


def test_cli_max_outputs_is_checked_before_the_data_are_read(capsys, tmp_path):
    missing = str(tmp_path / "nope.txt")
    code = main(["design", "--counts", missing, "--epsilon", "1", "--radius", "0.1", "--utility", "map_accuracy",
                 "--max-outputs", "100"])
    _, err = capsys.readouterr()
    assert code == 2 and "argument --max-outputs: only with --utility frequency_estimation" in err
    code = main(["design", "--counts", missing, "--epsilon", "1", "--radius", "0.1", "--max-outputs", "0"])
    _, err = capsys.readouterr()
    assert code == 2 and "argument --max-outputs: must be at least the number of categories, got 0" in err


def test_cli_compare_warns_when_the_design_loses_to_the_optimal_ldp_mechanism(capsys, tmp_path, monkeypatch):
    """A review: a capped design lost to the optimal LDP channel --compare found (696.38 against 694.14) and only
    'PML error / optimal LDP error: 1' said so. A warning says it now (the comparison is forced here)."""
    import types

    import pml_design as pml

    def fake(res, **kwargs):
        return types.SimpleNamespace(optimal_ldp=0.5 * res.utility, randomized_response=2 * res.utility,
                                     rr_pml=2 * res.utility, gain_over_ldp=2.0, optimal_ldp_gap=0.0)

    monkeypatch.setattr(pml, "compare_with_ldp", fake)
    counts = _counts(tmp_path, 25)
    code = main(["design", "--counts", str(counts), "--epsilon", "2", "--radius", "0.1", "--time-limit", "3",
                 "--max-outputs", "100", "--compare", "--no-progress"])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "is worse than the optimal epsilon-LDP mechanism --compare found" in err
    assert "more outputs (--time-limit, --max-outputs)" in err


def test_the_cap_counts_the_cheaper_binary_files_above_their_size(monkeypatch):
    """By default the matrix is written as binary above 2**22 entries, about three times faster than as text: the cap
    is the most outputs that fit, below or above that size (at N = 25 here, the size moved to 40 outputs)."""
    import argparse
    import time

    from pml_design.cli import design as cli_design
    from pml_design.deploy import matrix_binary

    monkeypatch.setattr(cli_design, "POST_SECONDS_PER_ENTRY",
                        {"disclosure": 0.0, "files": 1e-3, "binary files": 1e-4, "json": 0.0})
    monkeypatch.setattr(matrix_binary, "BINARY_ABOVE", 25 * 40)
    caps = {}
    for fmt in ("auto", "text", "binary"):
        args = argparse.Namespace(utility="frequency_estimation", max_outputs=None, time_limit=10.0, json=False,
                                  compare=False, matrix_format=fmt)
        cli_design._time_budget(args, 25, time.perf_counter(), True)
        caps[fmt] = args.outputs_cap
    assert caps == {"auto": 2000, "text": 200, "binary": 2000}  # 0.5 * 10 s / (25 * 1e-4 s) and / (25 * 1e-3 s)
    monkeypatch.setattr(matrix_binary, "BINARY_ABOVE", 25 * 3000)  # binary only above 3 000: the text cap, 200
    args = argparse.Namespace(utility="frequency_estimation", max_outputs=None, time_limit=10.0, json=False,
                              compare=False, matrix_format="auto")
    cli_design._time_budget(args, 25, time.perf_counter(), True)
    assert args.outputs_cap == 200


def test_the_time_kept_covers_a_design_that_ends_below_the_binary_size(monkeypatch):
    """A review: with a cap above the size where the matrix turns binary, a design ending just below it is written
    as text, slower: N = 1 000, --time-limit 4 kept 2.0 s where 4 194 outputs as text take 2.4 s. The time kept is
    now the worst over the counts the design may end with, and the cap goes beyond the text range only where the
    whole text range fits."""
    import argparse
    import time

    from pml_design.cli import design as cli_design
    from pml_design.design.estimation import affordable
    from pml_design.deploy.matrix_binary import BINARY_ABOVE

    monkeypatch.setattr(affordable, "cached_single_thread_factor", lambda: 1.0)
    rates = cli_design.POST_SECONDS_PER_ENTRY
    n = 1000
    text_worst = (BINARY_ABOVE // n) * n * (rates["disclosure"] + rates["files"])
    for limit in (4.0, 60.0):
        args = argparse.Namespace(utility="frequency_estimation", max_outputs=None, time_limit=limit, json=False,
                                  compare=False, matrix_format="auto")
        _, keep = cli_design._time_budget(args, n, time.perf_counter(), True)
        cap = args.outputs_cap if getattr(args, "outputs_by_time", False) else min(32768, 16 * n)
        assert keep >= min(cap, BINARY_ABOVE // n) * n * (rates["disclosure"] + rates["files"]) - 1e-9
        if getattr(args, "outputs_by_time", False):
            assert keep <= cli_design.POST_SHARE * limit + 1e-9
            assert cap <= BINARY_ABOVE // n or text_worst <= cli_design.POST_SHARE * limit
