"""Figure 1 of pml-histogram-laplace at small size: the paper's qualitative claims, and the script contract."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fig1():
    spec = importlib.util.spec_from_file_location("fig_histogram_fig1", ROOT / "benchmarks" / "fig_histogram_fig1.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def small_rows(fig1):
    return fig1.figure1_rows(
        repetitions=3000,
        eps_a=[0.05, 0.3, 1.5],
        ks_a=[2, 8],
        alphas_a=[0.01, 0.05, 0.12],
        ks_b=[2, 6, 12],
        alpha_b=0.05,
        eps_b=[0.1, 1.0],
    )


def test_paper_claims_hold_at_small_size(fig1, small_rows):
    claims = fig1.qualitative_claims(small_rows)
    assert claims["pml_le_dp"]  # PML's TVD <= DP's at equal ε
    assert claims["larger_alpha_lower_tvd"]  # larger α gives lower TVD
    assert claims["gap_largest_at_small_eps"]  # absolute gap largest at small ε
    assert claims["relative_gap_largest_at_large_eps"]  # our observation (docs/histogram.md)


def test_claims_checker_has_power(fig1, small_rows):
    """Swapping the method labels makes the 'PML <= DP' claim fail: the checker is not vacuous."""
    swapped = []
    for r in small_rows:
        r = dict(r)
        if r["method"] == "DP":
            pml = [s for s in small_rows if s["method"] == "PML" and (s["panel"], s["k"], s["epsilon"])
                   == (r["panel"], r["k"], r["epsilon"])]
            r["tvd_mean"] = min(s["tvd_mean"] for s in pml) * 0.9
        swapped.append(r)
    assert not fig1.qualitative_claims(swapped)["pml_le_dp"]


def test_tvd_grows_with_k_and_shrinks_with_eps(small_rows):
    b = {(r["k"], r["epsilon"], r["method"]): r["tvd_mean"] for r in small_rows if r["panel"] == "b"}
    for eps in (0.1, 1.0):
        for m in ("DP", "PML"):
            assert b[(2, eps, m)] < b[(6, eps, m)] < b[(12, eps, m)]
            assert b[(6, 1.0, m)] < b[(6, 0.1, m)]


def test_run_contract_quick(fig1, tmp_path):
    summary = fig1.run(quick=True, outdir=tmp_path)
    json.dumps(summary)
    for ext in ("png", "csv", "json"):
        assert (tmp_path / f"fig_histogram_fig1.{ext}").stat().st_size > 0
    assert all(summary["claims"].values())
