"""The capped coordinate dual (docs/design.md §7.6): the caps against every enumerated ray, the bounds against the proven
optimum of the enumerated ray design and against an explicit mechanism that meets the box bound exactly, and its
use by the design (foreground, background process, above the column generation's alphabets)."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pml_design as pml
from pml_design.design.estimation import api, rounds
from pml_design.design.estimation import cap_bound as CAP
from pml_design.design.estimation.api import design_frequency_estimation
from pml_design.design.estimation.bound import _box_top, enumerated_rays
from pml_design.design.utilities import FrequencyEstimation
from pml_design.mechanisms.frequency_oracles import estimation_mse
from pml_design.uncertainty import FiniteSet, L1Ball, Simplex
from tests.test_estimation_coordinate_bound import enumerated_optima


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 7), seed=st.integers(0, 10_000), eps=st.sampled_from([0.3, 1.0, 2.0, 4.0]),
       kind=st.sampled_from(["ball", "ball_pi", "simplex", "fixed", "zero"]), scale=st.floats(0.0, 1.0))
def test_caps_hold_on_every_enumerated_ray(n, seed, eps, kind, scale):
    """``r_x ≤ T_x`` on every normalised extreme ray (complete enumeration, both sides of Proposition 2, π ≠ P̂, an
    unseen category, the simplex, a fixed prior): a brute-force check of the derivation, not of its formula."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(n, rng.choice([0.3, 1.0, 3.0])))
    if kind == "zero":
        P[0] = 0.0
        P /= P.sum()
    pi = rng.dirichlet(np.ones(n)) if kind in ("ball_pi", "zero") else P
    beta = 2.2 * scale
    uset = {"simplex": Simplex(n), "fixed": FiniteSet(pi[None, :])}.get(kind, L1Ball(P, beta))
    R = enumerated_rays(uset, eps, pi)
    assert R is not None
    T = _box_top(uset, eps, pi)
    assert np.all(R <= T[:, None]), (R / T[:, None]).max()


def test_caps_are_exact_for_the_simplex():
    """Simplex: the largest ray entry is ``e^ε/(1 + (e^ε − 1)π_x)`` (the symbol alone at the top level)."""
    pi = np.array([0.5, 0.3, 0.15, 0.05])
    R = enumerated_rays(Simplex(4), 1.0, pi)
    e = math.e
    assert R.max(axis=1) == pytest.approx(e / (1 + (e - 1) * pi), rel=1e-12)
    assert _box_top(Simplex(4), 1.0, pi) == pytest.approx(R.max(axis=1), rel=1e-11)


def test_box_bound_is_met_by_an_explicit_mechanism():
    """A fixed uniform prior on 4 symbols at e^ε = 2: the three halvings (each half sent as one output, mixed
    uniformly) have error exactly ``Σ (1 − π_x)²/(T_x − 1) = 2.25`` (computed from the matrix by ``estimation_mse``), so
    the box bound is tight there and the capped dual cannot exceed it."""
    p = np.full(4, 0.25)
    halves = [(0, 1), (0, 2), (0, 3)]
    W = np.zeros((4, 6))
    for k, h in enumerate(halves):
        for x in range(4):
            W[x, 2 * k + (0 if x in h else 1)] = 1 / 3
    uset, eps = FiniteSet(p[None, :]), math.log(2.0)
    assert pml.leakage_capacity(W, uset) == pytest.approx(eps, abs=1e-12)
    box = CAP.box_coordinate_bound(uset, eps, p)
    assert box == pytest.approx(2.25, rel=1e-10)
    assert estimation_mse(W, p) == pytest.approx(2.25, rel=1e-10)
    cb = CAP.cap_bound(uset, eps, p, deadline=time.perf_counter() + 1.0)
    assert box <= cb.value <= 2.25 * (1 + 1e-9)


@pytest.mark.parametrize("enumerate_", [True, False])
def test_never_above_the_enumerated_optimum(request, enumerate_):
    """The box bound and the capped dual (short and long, enumerated pricing and mass cells) against the proven
    optimum of the complete ray list: outside and inside Proposition 2, rare categories with β ≥ 2 min P̂, the
    simplex, π ≠ P̂; and never below the data-processing bound."""
    if not enumerate_:
        request.getfixturevalue("no_enumeration")
    for uset, p, eps, res in enumerated_optima():
        box = CAP.box_coordinate_bound(uset, eps, p)
        assert 1 - p @ p <= box * (1 + 1e-12)
        assert box <= res.utility * (1 + 1e-9)
        for seconds in (1.5, 12.0):  # the guess alone, then the search (SEARCH_MIN_SECONDS)
            cb = CAP.cap_bound(uset, eps, p, deadline=time.perf_counter() + seconds)
            assert box <= cb.value <= res.utility * (1 + 1e-7), (uset, cb, res.utility)


def _zipf(n: int) -> np.ndarray:
    z = 1 / np.arange(1, n + 1) ** 1.1
    return z / z.sum()


def test_it_tightens_the_box_where_the_ball_binds():
    """Zipf 60 from 2 000 samples (β ≈ 0.3): pricing smaller caps proves more than the caps alone, and the ball-aware
    caps more than the fixed prior's ``e^ε``."""
    n = 60
    z = _zipf(n)
    P = np.bincount(np.random.default_rng(3).choice(n, 2000, p=z), minlength=n) / 2000
    pi = (P * 2000 + 0.5) / (2000 + n / 2)
    uset, eps = L1Ball(P, 0.3), 1.0
    box = CAP.box_coordinate_bound(uset, eps, pi)
    fixed = float(np.sum((1 - pi) ** 2 / (np.minimum(math.e * np.max(P / pi), 1 / pi) - 1)))
    assert box > fixed
    cb = CAP.cap_bound(uset, eps, pi, deadline=time.perf_counter() + 3.0)
    assert cb.value > 1.1 * box and cb.method == "cells" and math.isfinite(cb.cap)


def test_design_reports_it_without_a_second_cpu(monkeypatch):
    """Beyond COORDINATE_BOUND_MAX_N (lowered here) and without the background process the design runs it in its
    bound's share: ``info["cap_bound"]``, valid (≤ the design's error) and at least the box bound."""
    monkeypatch.setattr(rounds, "COORDINATE_BOUND_MAX_N", 10)
    monkeypatch.setenv("PML_DESIGN_BACKGROUND_BOUND", "0")
    z = _zipf(40)
    uset, eps = L1Ball(z, 0.3), 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = design_frequency_estimation(uset, eps, FrequencyEstimation(), z, time_limit=12)  # 1.08 s for it
    info = res.info["cap_bound"]
    assert info is not None and info["pricings"] >= 1
    assert CAP.box_coordinate_bound(uset, eps, z) <= info["value"] <= res.utility
    assert res.lower_bound >= info["value"] * (1 - 1e-12)


def test_design_above_the_column_generation_gets_it(monkeypatch):
    """Above MAX_COLUMN_GENERATION_N (lowered here) the mixture leaves the bound's share to the capped dual, and the
    result's lower bound is at least the box bound (never only the data-processing one)."""
    monkeypatch.setattr(api, "MAX_COLUMN_GENERATION_N", 20)
    monkeypatch.setattr(api, "BOUND_SECONDS", 3.0)
    z = _zipf(30)
    uset, eps = L1Ball(z, 0.4), 2.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        res = design_frequency_estimation(uset, eps, FrequencyEstimation(), z, time_limit=20)
        wall = time.perf_counter() - t
    gap = [str(w.message) for w in caught if "proven within" in str(w.message)]
    if res.relative_gap > 0.01:  # the gap warning says where more time goes
        assert gap and "the bound gets 3 s at most" in gap[0], gap
    assert wall <= 1.1 * 20 + 5
    assert res.info["cap_bound"] is not None
    assert res.lower_bound >= CAP.box_coordinate_bound(uset, eps, z) * (1 - 1e-12)
    assert res.lower_bound >= res.info["cap_bound"]["value"] * (1 - 1e-12)
    assert res.lower_bound <= res.utility


def test_cap_affordable_scales_with_the_alphabet():
    assert CAP.cap_affordable(300, 2.0)
    assert not CAP.cap_affordable(10_000, 20.0)  # the first pricing alone takes ~15 s there
    assert not CAP.cap_affordable(10, 0.5)


def test_cap_affordable_scales_with_the_machine(monkeypatch):
    """Three first pricings at N = 2 000 take ~3 s on the reference machine: 4 s fit it, not a machine 3× slower;
    the factor is not measured where it cannot decide (small N)."""
    monkeypatch.setattr(CAP, "cached_machine_factor", lambda: 1.0)
    assert CAP.cap_affordable(2000, 4.0)
    monkeypatch.setattr(CAP, "cached_machine_factor", lambda: 3.0)
    assert not CAP.cap_affordable(2000, 4.0) and CAP.cap_affordable(2000, 10.0)

    def unmeasured():
        raise AssertionError("measured at N = 300")
    monkeypatch.setattr(CAP, "cached_machine_factor", unmeasured)
    assert CAP.cap_affordable(300, 2.0)


def test_too_short_a_time_returns_the_box_bound_at_once():
    """A deadline shorter than three first pricing rounds: no pricing, the box bound, returned well before it."""
    z = _zipf(3000)
    uset = L1Ball(z, 0.9)
    t = time.perf_counter()
    cb = CAP.cap_bound(uset, 1.0, z, deadline=t + 0.5)
    assert time.perf_counter() - t < 0.5
    assert cb.pricings == 0 and cb.method == "box" and cb.value == CAP.box_coordinate_bound(uset, 1.0, z)


def test_bad_input_is_named():
    uset = L1Ball(np.full(4, 0.25), 0.2)
    for bad in (np.full(4, 0.5), np.full(3, 1 / 3), np.array([0.5, 0.5, 0.0, 0.0])):
        for f in (CAP.box_coordinate_bound, CAP.box_log_det_bound):
            with pytest.raises(ValueError, match="prior"):
                f(uset, 1.0, bad)
        with pytest.raises(ValueError, match="prior"):
            CAP.cap_bound(uset, 1.0, bad, deadline=time.perf_counter() + 1)
    for eps in (-1.0, float("nan"), 0.0):
        with pytest.raises(ValueError, match="epsilon"):
            CAP.box_coordinate_bound(uset, eps, np.full(4, 0.25))


def test_huge_epsilon_and_a_dominant_symbol_keep_finite_caps():
    """ε = 200 with π_x ≈ 1 (where e^ε·m overflowed): finite caps, no warning, a finite bound."""
    p = np.array([1e-12, 1.0 - 2e-12, 1e-12])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        T = _box_top(L1Ball(p, 0.5), 200.0, p)
        assert np.all(np.isfinite(T)) and np.all(T > 1)
        assert math.isfinite(CAP.box_coordinate_bound(L1Ball(p, 0.5), 200.0, p))


def test_log_det_box_bound_never_above_the_enumerated_d_optimum():
    """The D criterion's box bound (Hadamard, ``F_xx ≤ T_x``) against the proven D-optimum of the complete ray list,
    above data processing; and the design's D lower bound is at least it."""
    for uset, p, eps, _ in enumerated_optima():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = design_frequency_estimation(uset, eps, FrequencyEstimation("D"), p, time_limit=20)
        assert res.optimal and res.info["rays_enumerated"]
        box = CAP.box_log_det_bound(uset, eps, p)
        assert np.sum(np.log(p)) <= box <= res.utility + 1e-9 * abs(res.utility), (uset, box, res.utility)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 7), seed=st.integers(0, 10_000), eps=st.sampled_from([0.5, 1.0, 3.0]))
def test_box_bounds_hold_for_random_private_mechanisms(n, seed, eps):
    """Random designs on enumerated extreme rays (weights θ ≥ 0 with ``Rθ = 1`` from an LP with a random objective:
    every column a ray, so ε-PML for the ball, checked): their exact A error (``estimation_mse``) and ``log det F⁻¹``
    (a matrix inverse and a determinant: a second derivation) are never below the box bounds."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(n))
    uset = L1Ball(P, float(rng.uniform(0, 1.5)))
    R = enumerated_rays(uset, eps, P)
    lp = linprog(rng.uniform(-1, 1, R.shape[1]), A_eq=R, b_eq=np.ones(n), bounds=(0, 10))
    assert lp.status == 0
    W = R * lp.x
    W = W[:, lp.x > 1e-12]
    W = W / W.sum(axis=1, keepdims=True)  # (row sums are 1 to the LP's tolerance)
    assert pml.leakage_capacity(W, uset) <= eps + 1e-7
    F = (W / (P @ W)) @ W.T
    if np.linalg.cond(F) > 1e10:
        return
    assert estimation_mse(W, P) >= CAP.box_coordinate_bound(uset, eps, P) * (1 - 1e-9)
    assert -np.linalg.slogdet(F)[1] >= CAP.box_log_det_bound(uset, eps, P) - 1e-9
