"""The qualitative claims the core paper makes from Fig. 2-7, checked on the figure scripts' quick runs.

Each ``benchmarks/fig_pml_fig*.py`` is loaded from its path and run with ``quick=True`` into a temporary
directory; the assertions are on the returned summaries (and the written files).
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest

from pml_design.additive.adult import adult_laplace_experiment, laplace_utility_experiment
from pml_design.additive.gaussian import pldp_gaussian_delta

BENCH = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):  # type: ignore[no-untyped-def]
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files_written(outdir: pathlib.Path, stem: str) -> None:
    assert (outdir / f"{stem}.png").stat().st_size > 1000
    assert (outdir / f"{stem}.json").stat().st_size > 10


def test_fig2_bound_holds_and_is_tight(tmp_path: pathlib.Path) -> None:
    s = _load("fig_pml_fig2").run(quick=True, outdir=tmp_path)
    _files_written(tmp_path, "fig_pml_fig2")
    p_min = {"example1": 0.2, "2-singular-N10": 0.1}
    for name, panel in s["panels"].items():
        assert panel["max_d_inf_minus_bound"] <= 1e-12  # every sampled D∞ lies below bound (6)
        for chk in panel["worst_case_checks"]:
            if chk["beta"] < 2 * p_min[name]:  # Theorem 4's hypothesis: equality for these mechanisms
                assert chk["d_inf_worst_q"] == pytest.approx(chk["bound"], rel=1e-9)


def test_fig3_tradeoffs(tmp_path: pathlib.Path) -> None:
    s = _load("fig_pml_fig3").run(quick=True, outdir=tmp_path)
    _files_written(tmp_path, "fig_pml_fig3")
    a = s["a"]
    curves = [np.array(a["delta_min"][m]) for m in sorted(a["delta_min"], key=int)]
    for c in curves:
        assert c[0] == 1.0  # ε' = ε: vacuous
        assert np.all(np.diff(c) <= 1e-300)  # decreasing in ε'
    for c_small, c_big in zip(curves, curves[1:]):
        assert np.all(c_big <= c_small)  # more samples, smaller failure probability
    assert curves[-1][-1] < 1e-5
    b = s["b"]
    ms = np.array(b["m"])
    for key, vals in b["epsilon_prime"].items():
        eps = float(key)
        v = np.array([np.inf if x is None else x for x in vals])
        finite = np.isfinite(v)
        assert finite.any()
        if eps > 2:
            assert not finite[0]  # eq. (8) is vacuous for too few samples (β*(δ) e^ε ≥ 2)
        assert np.all(v[finite] >= eps)
        assert np.all(np.diff(v[finite]) <= 1e-15)  # decreasing in m
        assert v[-1] - eps < 0.05 and ms[-1] >= 10**7


@pytest.fixture(scope="module")
def fig4(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("fig4")
    s = _load("fig_pml_fig4").run(quick=True, outdir=out)
    _files_written(out, "fig_pml_fig4")
    return s


def test_fig4_pml_beats_ldp_and_gain_grows_with_m(fig4: dict) -> None:
    ms = np.array(fig4["ms"])
    for feat, r in fig4["features"].items():
        pml, ldp = np.array(r["mi_pml"]), np.array(r["mi_ldp"])  # (eps, m)
        scale = np.array(r["mean_scale_pml"])
        # PML's MI ≥ LDP's at every m and ε; equal only where eq. (16) falls back to the LDP scale.
        assert np.all(pml >= ldp - 1e-12), feat
        assert np.all(pml[:, ms >= 1000] > ldp[:, ms >= 1000]), feat
        assert np.all(scale <= np.array(fig4["epsilons"])[:, None] ** -1 * 2 + 1e-12)
        gain = pml - ldp
        assert np.all(gain[:, -1] > gain[:, 0]), feat  # the gain grows with m
        assert np.all(pml[:, -1] > 1.5 * ldp[:, -1]), feat  # and is substantial at full size
        assert np.all(np.diff(pml[:, -1]) > 0), feat  # larger ε, more utility


def test_fig5_utility_decreases_with_delta_and_delta0_is_ldp(tmp_path: pathlib.Path) -> None:
    s = _load("fig_pml_fig5").run(quick=True, outdir=tmp_path)
    _files_written(tmp_path, "fig_pml_fig5")
    deltas = s["deltas"]
    assert deltas[-1] == 0.0
    for feat, r in s["features"].items():
        mi = np.array(r["mi"])  # (delta, m), δ decreasing down to 0
        assert np.all(np.diff(mi[:, -1]) < 0), feat  # smaller δ, less utility (at full m)
        assert np.all(mi[:-1, -1] > 1.5 * mi[-1, -1]), feat  # even δ = 1e-15 is well above LDP
    # δ = 0 is exactly the LDP scale 2/ε (Remark 4).
    r = adult_laplace_experiment("sex", (200, 2000), (math.log(2),), (1e-9, 0.0), 3, rng=0)
    np.testing.assert_array_equal(r.scale[1], 2 / math.log(2))


def test_fig67_claims(tmp_path: pathlib.Path) -> None:
    s = _load("fig_pml_fig67").run(quick=True, outdir=tmp_path)
    _files_written(tmp_path, "fig_pml_fig67")
    d2 = s["delta2"]
    first_eps_below: dict[tuple[str, str], float] = {}
    for name, cfg in s["configs"].items():
        for m, c in cfg["curves"].items():
            es, ds = np.array(c["epsilon_star"]), np.array(c["delta_star"])
            assert np.all(ds >= d2)  # δ* ≥ δ2
            assert np.all(np.diff(es) > 0) and np.all(np.diff(ds) <= 1e-15)
            if int(m) >= 10_000:  # PML curve below the pLDP curve at the same σ (and reaches δ2)
                pl = np.array([pldp_gaussian_delta(e, cfg["sigma"]) if e > 0 else 1.0 for e in es])
                assert np.all(ds <= pl + 1e-15), (name, m)
                assert ds.min() == pytest.approx(d2)
            small = es[ds <= 1e-3]
            first_eps_below[(name, m)] = float(small[0]) if small.size else math.inf
    # Skewed P̂ (Fig. 7) needs a larger ε* than the uniform P̂ (Fig. 6a) for the same δ*, same σ and m.
    for m in s["configs"]["fig7"]["curves"]:
        if int(m) >= 1000:
            assert first_eps_below[("fig7", m)] > first_eps_below[("fig6a", m)]
        # Larger σ, better trade-off.
        assert first_eps_below[("fig6b", m)] <= first_eps_below[("fig6a", m)]
    acc = s["delta1_accuracy"]
    assert acc["cases_below_grid"] == 0 and acc["max_rel_excess_over_grid"] < 1e-8


def test_experiment_bad_input() -> None:
    with pytest.raises(ValueError, match="feature"):
        adult_laplace_experiment("age")
    with pytest.raises(ValueError, match="ms"):
        laplace_utility_experiment(np.array([1, -1, 1]), (5,), (1.0,))
    with pytest.raises(ValueError, match="epsilons"):
        laplace_utility_experiment(np.array([1, -1, 1]), (2,), (0.0,))
    with pytest.raises(ValueError, match="deltas"):
        laplace_utility_experiment(np.array([1, -1, 1]), (2,), (1.0,), (2.0,))
    with pytest.raises(ValueError, match="x"):
        laplace_utility_experiment(np.array([1, 0, 1]), (2,), (1.0,))


def test_experiment_unreachable_target_releases_without_noise() -> None:
    x = np.where(np.arange(2000) % 3 == 0, -1, 1)  # p_min = 1/3, -log p_min ≈ 1.1 < 3
    r = laplace_utility_experiment(x, (2000,), (3.0, 0.5), (0.5, 0.0), n_shuffles=4, rng=1)
    assert r.n_unreachable == 4  # δ = 0.5, ε = 3: every shuffle
    assert np.all(r.scale[0, 0] == 0.0)
    p = np.mean(x == -1)
    entropy_x = -(p * math.log(p) + (1 - p) * math.log(1 - p))
    np.testing.assert_allclose(r.mi[0, 0], entropy_x, rtol=1e-12)  # identity release: MI = H(X)
    np.testing.assert_array_equal(r.scale[1], np.broadcast_to(2 / np.array([3.0, 0.5])[:, None, None], (2, 1, 4)))  # LDP
