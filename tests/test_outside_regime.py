"""Exact design outside Proposition 2 (β ≥ 2 min P̂): the closed-form ray list, valid bounds, no false failures.

Regression tests for the audit of issue 11 (false "infeasible", raw pycddlib/scipy errors, optimality claimed
where a feasible mechanism did better).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pml_design as pd
from pml_design.design import design, enumerate_rays, l1_ball_rays, ray_lp_upper_bound, rays_cdd, solve_ray_lp
from pml_design.design.rays import RayEnumerationError
from pml_design.design.utilities import as_utility

from _independent import ball_vertices, local_search

SUBCONVEX = ["mutual_information", "map_accuracy", "chi_square_information", "total_variation_information"]


def _assert_certified(res, ball, eps):
    W = res.matrix
    assert np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    assert pd.leakage_capacity(W, ball) <= eps + 1e-12


def test_issue_reproducer_false_infeasible():
    ball = pd.L1Ball(np.array([5, 4, 7, 3]) / 19, 0.84)
    res = design(ball, 0.07)
    _assert_certified(res, ball, 0.07)
    assert res.utility > 0 and res.optimal


def test_issue_reproducer_beaten_optimality_claim():
    p = np.array([0.025036037686434736, 0.0002204876840956451, 0.023097715206359257, 0.9516457594231102])
    ball = pd.L1Ball(p, 0.4352209873467759)
    eps = 0.35526836912743903
    W = np.array([[1, 0], [1, 0], [1, 0], [0.7009852952, 0.2990147048]])
    assert pd.leakage_capacity(W, ball) <= eps
    for name in SUBCONVEX:
        util = as_utility(name)
        res = design(ball, eps, utility=name)
        _assert_certified(res, ball, eps)
        assert util.value(W, p) <= res.upper_bound + 1e-12
        assert util.value(W, p) <= res.utility + 1e-12, name


def test_rays_lie_in_the_cone_and_generate_the_constant_column():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 8))
        p = rng.dirichlet(np.full(n, 0.5))
        beta = float(rng.uniform(2 * p.min(), 2.0))
        eps = float(rng.uniform(0.0, 3.0))
        ball = pd.L1Ball(p, beta)
        R = l1_ball_rays(p, beta, eps)
        top = R.max(axis=0)
        low = ball.min_output_probability(R)
        assert np.all(top <= np.exp(eps) * low * (1 + 1e-12) + 1e-15)
        # the identical-rows mechanism is always feasible: the LP over the rays is never infeasible
        theta, *_ = solve_ray_lp(R, np.zeros(R.shape[1]))
        np.testing.assert_allclose(R @ theta, 1.0, atol=1e-9)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_closed_form_rays_contain_every_cdd_ray(n):
    # independent derivation: pycddlib's double description on Corollary 1's H-representation (when it works)
    rng = np.random.default_rng(n)
    checked = 0
    for _ in range(8):
        p = rng.dirichlet(np.ones(n))
        ball = pd.L1Ball(p, float(rng.uniform(2 * p.min(), 1.5)))
        eps = float(rng.uniform(0.1, 2.0))
        try:
            ref = rays_cdd(pd.FiniteSet(ball_vertices(p, ball.radius)), eps)
        except RayEnumerationError:
            continue
        mine = l1_ball_rays(p, ball.radius, eps)
        mine = mine / mine.sum(axis=0)
        for r in (ref / ref.sum(axis=0)).T:
            assert np.min(np.abs(mine - r[:, None]).max(axis=0)) < 1e-7
        checked += 1
    assert checked >= 4


def test_closed_form_rays_agree_with_proposition2_rays_inside_the_regime():
    rng = np.random.default_rng(7)
    for _ in range(10):
        n = int(rng.integers(2, 7))
        p = rng.dirichlet(np.full(n, 3.0))
        ball = pd.L1Ball(p, float(rng.uniform(0, 1.9 * p.min())))
        eps = float(rng.uniform(0.05, 2.0))
        R_prop2 = enumerate_rays(ball, eps)
        R_gen = l1_ball_rays(p, ball.radius, eps)
        for util in ("mutual_information", "map_accuracy"):
            u = as_utility(util)
            a = solve_ray_lp(R_prop2, u.mu(R_prop2, p))[1]
            b = solve_ray_lp(R_gen, u.mu(R_gen, p))[1]
            assert a == pytest.approx(b, rel=1e-9, abs=1e-12)


def test_upper_bound_is_valid_for_slightly_infeasible_duals():
    rng = np.random.default_rng(0)
    R = rng.random((4, 30))
    R /= R.sum(axis=0)
    R = np.hstack([R, np.full((4, 1), 0.25)])
    v = rng.random(31)
    theta, opt, _, y = solve_ray_lp(R, v)
    bound, delta = ray_lp_upper_bound(R, v, y)
    assert bound >= opt - 1e-12 and delta < 1e-9
    bad = y - 1e-3  # dual-infeasible: the bound must grow to stay valid
    bound2, delta2 = ray_lp_upper_bound(R, v, bad)
    assert delta2 > 0 and bound2 >= opt


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 4),
    alpha=st.floats(0.2, 3.0),
    frac=st.floats(0.0, 1.0),
    eps=st.floats(0.02, 2.5),
    util=st.sampled_from(SUBCONVEX),
    seed=st.integers(0, 2**31 - 1),
)
def test_exact_design_never_beaten_outside_the_regime(n, alpha, frac, eps, util, seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(n, alpha))
    p = np.maximum(p, 1e-6)
    p /= p.sum()
    beta = 2 * p.min() + frac * (2.0 - 2 * p.min())
    ball = pd.L1Ball(p, beta)
    res = design(ball, eps, utility=util)
    _assert_certified(res, ball, eps)
    assert res.upper_bound >= res.utility
    u = as_utility(util)
    found, W = local_search(lambda M: u.value(M, p), p, beta, eps, starts=3, iters=5, rng=seed)
    if W is not None:
        assert found <= res.upper_bound + 1e-7 * max(1.0, abs(res.upper_bound)), (found, res.upper_bound)
        if res.optimal:
            assert found <= res.utility + 1e-7 * max(1.0, abs(res.utility))


@pytest.mark.parametrize("n", [7, 8])
def test_auto_outside_the_regime_is_fast_and_proven(n):
    import time

    rng = np.random.default_rng(n)
    p = rng.dirichlet(np.full(n, 0.5))
    ball = pd.L1Ball(p, 2 * p.min() + 0.1)
    for util in SUBCONVEX:
        t0 = time.perf_counter()
        res = design(ball, 0.8, utility=util)
        assert time.perf_counter() - t0 < 20
        assert res.method == "exact" and res.optimal
        _assert_certified(res, ball, 0.8)


def test_generic_ball_too_large_for_exact_gives_clear_error():
    p = np.full(14, 1 / 14)
    with pytest.raises(ValueError, match="outside Proposition 2"):
        enumerate_rays(pd.L1Ball(p, 0.5), 1.0)


def test_huge_epsilon_and_large_finite_sets_give_named_errors():
    with pytest.raises(ValueError, match="epsilon must be <= 700"):
        design(pd.L1Ball([0.5, 0.5], 0.1), 800.0)
    D = np.random.default_rng(0).dirichlet(np.ones(12), size=3)
    with pytest.raises(ValueError, match="FiniteSet"):
        design(pd.FiniteSet(D), 1.0, prior=D[0])


@pytest.mark.parametrize("util_name", ["mutual_information", "chi_square_information", "total_variation_information"])
def test_enumeration_pricing_is_the_exact_maximum_over_all_rays(util_name):
    import importlib

    bp = importlib.import_module("pml_design.design.scalable.ball_pricing")
    util = as_utility(util_name)
    rng = np.random.default_rng(5)
    for _ in range(6):
        n = int(rng.integers(3, 9))
        p = rng.dirichlet(np.ones(n))
        beta, eps = float(2 * p.min() + rng.uniform(0, 0.5)), float(rng.uniform(0.2, 2.0))
        lam = rng.normal(size=n) * 0.3
        pr = bp.PairPricer(bp.BallCone(p, beta, eps), bp.mass_phi(util), lam)
        vmax, vals, U, V = pr.enumerate_pairs(top=3)
        R = l1_ball_rays(p, beta, eps)  # independent: the closed-form ray list, normalised to P̂·r = 1
        R = R / (p @ R)
        ref = float((util.mu(R, p) - lam @ R).max())
        assert vmax == pytest.approx(ref, rel=1e-9, abs=1e-12)
        C = pr.cone.columns(U, V)  # the returned pairs are actual rays with the returned values
        np.testing.assert_allclose(util.mu(C.T, p) - lam @ C.T, vals, rtol=1e-9, atol=1e-12)


def test_scalable_outside_the_regime_is_proven_optimal_for_small_alphabets():
    rng = np.random.default_rng(9)
    p = rng.dirichlet(np.full(9, 0.6))
    ball = pd.L1Ball(p, 2 * p.min() + 0.1)
    exact = design(ball, 1.0, method="exact")
    sc = design(ball, 1.0, method="scalable", solver_options={"time_limit": 20})
    assert sc.optimal and sc.utility == pytest.approx(exact.utility, rel=1e-6)
    assert sc.upper_bound >= exact.utility * (1 - 1e-9)
