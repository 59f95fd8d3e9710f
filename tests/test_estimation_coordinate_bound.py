"""The coordinate relaxation of the estimation design (``design/estimation/coordinate_bound.py``).

Validity first, by independent paths: the per-symbol inequality is checked against ``estimation_mse`` (a matrix
inverse, not the inequality's formula) on random channels; the bound against the proven optimum of the enumerated
ray design (complete enumeration, a different solver), on both sides of Proposition 2, with rare categories and on
the simplex, with the separable maximum computed by enumeration and by the branch and bound (enumeration off);
its exactness where the theory says so (the symmetric local-DP case at a uniform prior).
"""

from __future__ import annotations

import functools
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pml_design as pml
from pml_design.design.estimation import coordinate_bound as CB
from pml_design.design.estimation.api import design_frequency_estimation
from pml_design.design.utilities import FrequencyEstimation
from pml_design.mechanisms.frequency_oracles import estimation_mse
from pml_design.uncertainty import L1Ball, Simplex


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7), st.integers(2, 9), st.integers(0, 10_000))
def test_per_symbol_inequality_never_above_the_error(n, m, seed):
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.full(m, 0.6), size=n)
    p = rng.dirichlet(np.full(n, 1.0))
    p = (p + 1e-3) / (p + 1e-3).sum()
    err = estimation_mse(W, p)
    rel = CB.coordinate_relaxation(W, p)
    assert rel <= err * (1 + 1e-9) + 1e-12


def test_per_symbol_inequality_is_exact_for_symmetric_channels():
    """F = aI + b11ᵀ at a uniform prior: F⁻¹e_x ∈ span(e_x, π), the inequality is an equality (GRR, subset selection)."""
    n = 9
    p = np.full(n, 1 / n)
    for W in (pml.grr(n, 1.0).matrix, pml.subset_selection(n, 1.0).matrix):
        assert CB.coordinate_relaxation(W, p) == pytest.approx(estimation_mse(W, p), rel=1e-10)


def _cases():
    rng = np.random.default_rng(5)
    zipf = 1 / np.arange(1, 8) ** 1.1
    zipf /= zipf.sum()
    rare = rng.dirichlet(np.full(7, 0.15))
    rare = (rare + 2e-3) / (rare + 2e-3).sum()
    flat = rng.dirichlet(np.full(6, 3.0))
    return [
        (L1Ball(zipf, 0.5), zipf, 1.0),  # outside Proposition 2
        (L1Ball(flat, 0.5 * flat.min()), flat, 2.0),  # inside
        (L1Ball(rare, 0.1), rare, 0.5),  # rare categories, β ≥ 2 min P̂
        (Simplex(6), flat, 1.0),  # local DP
        # counts with an unseen category, the error at the add-½ smoothed prior (π ≠ P̂: the π-mass cells)
        (L1Ball(np.array([0, 1, 2, 4, 9, 24]) / 40, 0.3), (np.array([0, 1, 2, 4, 9, 24]) + 0.5) / 43, 1.0),
    ]


@functools.lru_cache(maxsize=1)
def enumerated_optima():
    """``(uset, p, ε, result)`` for each of :func:`_cases`, the result the proven optimum of the complete ray list
    (computed once per test process: the coordinate and the moment bound tests check against the same designs)."""
    out = []
    for uset, p, eps in _cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = design_frequency_estimation(uset, eps, FrequencyEstimation(), p, time_limit=20)
        assert res.optimal and res.info["rays_enumerated"]  # the proven optimum (complete ray list)
        out.append((uset, p, eps, res))
    return out


@pytest.mark.parametrize("enumerate_", [True, False])
def test_bound_never_above_the_enumerated_optimum(request, enumerate_):
    if not enumerate_:
        request.getfixturevalue("no_enumeration")
    for uset, p, eps, res in enumerated_optima():
        # start from a poor pool (the ε-LDP GRR channel): the bound must stay valid whatever steers it
        for start in (res.matrix, pml.grr(p.size, eps).matrix):
            cb = CB.coordinate_bound(uset, eps, p, start, deadline=time.perf_counter() + 1.5)
            assert np.isfinite(cb.value)
            assert cb.value <= res.utility * (1 + 1e-7), (uset, cb, res.utility)
            # the design's own point first (its weights on its normalised columns), with and without the master
            q = p @ start
            for seconds in (0.05, 1.0):
                cb = CB.coordinate_bound(uset, eps, p, start / q, deadline=time.perf_counter() + seconds, weights=q)
                assert cb.value <= res.utility * (1 + 1e-7), (uset, cb, res.utility)


def test_bound_is_exact_in_the_symmetric_local_dp_case():
    """Simplex at a uniform prior: the relaxed optimum is symmetric, where the inequality is exact."""
    for n, eps in ((6, 1.0), (7, 2.0)):
        p = np.full(n, 1 / n)
        res = design_frequency_estimation(Simplex(n), eps, FrequencyEstimation(), p, time_limit=20)
        assert res.optimal
        cb = CB.coordinate_bound(Simplex(n), eps, p, res.matrix, deadline=time.perf_counter() + 3)
        assert cb.value == pytest.approx(res.utility, rel=2e-3)


def test_design_lower_bound_uses_it_and_stays_valid(monkeypatch):
    """Beyond enumeration the design's lower bound is the best of both bounds: valid (≤ the enumerated optimum,
    computed with the shortcut on) and far above the data-processing floor."""
    zipf = 1 / np.arange(1, 10) ** 1.1
    zipf /= zipf.sum()
    uset, eps = L1Ball(zipf, 0.4), 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = design_frequency_estimation(uset, eps, FrequencyEstimation(), zipf, time_limit=30)
        assert exact.optimal
        from pml_design.design.estimation import api, rounds

        monkeypatch.setattr(rounds, "MAX_ENUMERATED_RAYS", 0)
        res = design_frequency_estimation(uset, eps, FrequencyEstimation(), zipf, time_limit=6)
    assert not res.info["rays_enumerated"]
    assert res.lower_bound <= exact.utility * (1 + 1e-7)
    assert res.lower_bound >= 0.6 * exact.utility  # the floor 1 − ‖P‖² is < 1 here; the error is ≈ 8
    assert res.lower_bound >= 10 * (1 - zipf @ zipf)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="prior"):
        CB.coordinate_bound(Simplex(3), 1.0, np.array([0.5, 0.5, 0.0]), np.eye(3), deadline=time.perf_counter() + 1)
    with pytest.raises(ValueError, match="sum to 1"):
        CB.coordinate_bound(Simplex(3), 1.0, np.full(3, 0.3), np.eye(3), deadline=time.perf_counter() + 1)
    p = np.full(3, 1 / 3)
    with pytest.raises(ValueError, match="weights must have one entry per ray"):
        CB.coordinate_bound(Simplex(3), 1.0, p, 3 * np.eye(3), deadline=time.perf_counter() + 1, weights=np.ones(2))
    with pytest.raises(ValueError, match="normalised"):
        CB.coordinate_bound(Simplex(3), 1.0, p, np.eye(3), deadline=time.perf_counter() + 1, weights=np.ones(3))


def _pool(n, k, seed, rare=False):
    """A random pool of normalised cone points (π·r = 1) identifying every symbol, and its prior."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(n, 0.2 if rare else 2.0))
    p = (p + 1e-3) / (p + 1e-3).sum()
    W = np.hstack([np.eye(n), rng.dirichlet(np.full(k - n, 0.5), size=n)])  # rows: the identity keeps it feasible
    W /= W.sum(axis=1, keepdims=True)
    R = W / (p @ W)
    return R, p


@pytest.mark.parametrize("n,k,seed,rare", [(4, 9, 0, False), (7, 30, 1, True), (12, 60, 2, False), (30, 200, 3, True)])
def test_relaxed_master_ipm_matches_cvxpy(n, k, seed, rare):
    """The interior-point method against cvxpy + Clarabel (a second solver, the primal form): same optimum; its
    multipliers feasible on the pool, and their dual value equals the primal one (weak duality both ways)."""
    R, p = _pool(n, k, seed, rare)
    c = (1.0 - p) ** 2
    value, theta, g, nu = CB._relaxed_master_ipm(R, c, p, time.perf_counter() + 30)
    ref = CB._relaxed_master(R, c, time.perf_counter() + 30)
    assert ref is not None
    assert value == pytest.approx(ref[0], rel=1e-5)
    assert np.all(theta >= 0) and np.abs(R @ theta - 1).max() <= 1e-7  # a primal point of the relaxed master
    assert value == pytest.approx(float(np.sum(c / ((R * R) @ theta - 1.0))), rel=1e-12)
    slack = nu @ R - g @ (R * R)  # Σ g r² ≤ ν·r on every pool ray: the dual point is feasible
    assert np.all(g > 0) and slack.min() >= -1e-9 * np.abs(nu @ R).max()
    dual = CB._dual_value(c, g, nu, 0.0)  # ≤ the primal optimum (pool constraints hold), and tight
    assert dual <= value * (1 + 1e-9)
    assert dual == pytest.approx(value, rel=1e-6)


def test_relaxed_master_ipm_respects_the_deadline_and_falls_back(monkeypatch):
    R, p = _pool(6, 20, 4)
    c = (1.0 - p) ** 2
    assert CB._relaxed_master_ipm(R, c, p, time.perf_counter() - 1) is None
    # without it, the cvxpy path steers the bound: still valid, still finite
    zipf = 1 / np.arange(1, 8) ** 1.1
    zipf /= zipf.sum()
    uset = L1Ball(zipf, 0.5)
    direct = CB.coordinate_bound(uset, 1.0, zipf, pml.grr(7, 1.0).matrix, deadline=time.perf_counter() + 3)
    calls = []
    monkeypatch.setattr(CB, "_relaxed_master_ipm", lambda *a: calls.append(1))
    fallback = CB.coordinate_bound(uset, 1.0, zipf, pml.grr(7, 1.0).matrix, deadline=time.perf_counter() + 3)
    assert np.isfinite(fallback.value) and fallback.rounds >= 1
    assert len(calls) == 1  # tried once; cvxpy solves the remaining rounds
    # both stop within rtol = 1e-3 of their relaxed value (enumeration at N = 7), and the two solvers agree on it
    assert fallback.relaxed == pytest.approx(direct.relaxed, rel=1e-4)
    assert fallback.value == pytest.approx(direct.value, rel=3e-3)
    # a symbol no pool ray reaches: no multipliers, no warning
    R0 = R.copy()
    R0[2] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CB._relaxed_master_ipm(R0, c, p, time.perf_counter() + 5) is None
