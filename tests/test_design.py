"""Tests of the designer: polytope forms, exact sub-convex design, certification, invariants."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pml_design as pd
from pml_design.design import (
    LinearUtility,
    SolverFailedError,
    SubConvexUtility,
    build_polytope,
    certify,
    design,
    distortion_gain,
    enumerate_rays,
    rays_cdd,
)
from pml_design.design.utilities import as_utility

SUBCONVEX = ["mutual_information", "map_accuracy", "chi_square_information", "total_variation_information"]


def _assert_valid(res, uset, eps):
    W = res.matrix
    assert np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    cap = pd.leakage_capacity(W, uset)  # independent recomputation
    assert cap <= eps + 1e-12
    assert res.certified_epsilon == pytest.approx(cap, abs=1e-15)


def _norm_set(R, p):
    R = R / (p @ R)
    return set(map(tuple, np.round(R.T, 8)))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_structural_rays_contain_all_cdd_extreme_rays(n, rng):
    for _ in range(4):
        p = rng.dirichlet(np.ones(n) * 2)
        eps = float(rng.uniform(0.05, 2.0))
        for uset, ref in ((pd.L1Ball(p, 0), p), (pd.L1Ball(p, 0.8 * 2 * p.min()), p), (pd.Simplex(n), np.full(n, 1 / n))):
            mine = _norm_set(enumerate_rays(uset, eps), ref)
            cdd = _norm_set(rays_cdd(uset, eps), ref)
            assert cdd <= mine


@pytest.mark.parametrize("utility", SUBCONVEX)
def test_exact_design_matches_cdd_rays_for_large_radius(utility, rng):
    # beyond Proposition 2 (beta >= 2 min p): generic rays from the ball's extreme points (Corollary 1)
    p = np.array([0.5, 0.3, 0.15, 0.05])
    ball = pd.L1Ball(p, 0.4)
    assert not ball.in_interior_regime
    res = design(ball, 0.7, utility=utility)
    _assert_valid(res, ball, 0.7)
    # independent: the same optimum over the FiniteSet of the ball's vertices
    res2 = design(pd.FiniteSet(ball.extreme_points()), 0.7, utility=utility, prior=p)
    assert res.utility == pytest.approx(res2.utility, abs=1e-9)


@pytest.mark.parametrize("gain", ["truth", "distortion"])
def test_polytope_forms_agree_on_linear_utility(gain, rng):
    n = 5
    p = rng.dirichlet(np.ones(n) * 3)
    G = np.eye(n) if gain == "truth" else distortion_gain(n)
    ball = pd.L1Ball(p, 0.5 * p.min())
    vals = {}
    for form in ("compact", "dual", "literal"):
        vals[form] = design(ball, 0.8, utility=LinearUtility(G), form=form, solver="HIGHS").utility
    vals["finite"] = design(pd.FiniteSet(ball.extreme_points()), 0.8, utility=LinearUtility(G), prior=p, solver="HIGHS").utility
    for v in vals.values():
        assert v == pytest.approx(vals["compact"], abs=1e-7)


def test_dual_form_is_exact_beyond_proposition2(rng):
    for _ in range(5):
        n = 4
        p = rng.dirichlet(np.ones(n))
        ball = pd.L1Ball(p, min(2.0, 3 * p.min() + 0.2))
        G = LinearUtility(np.eye(n))
        a = design(ball, 1.0, utility=G, solver="HIGHS")
        b = design(pd.FiniteSet(ball.extreme_points()), 1.0, utility=G, prior=p, solver="HIGHS")
        assert a.utility == pytest.approx(b.utility, abs=1e-7)
        _assert_valid(a, ball, 1.0)
    with pytest.raises(ValueError, match="dual"):
        build_polytope(pd.L1Ball([0.9, 0.1], 0.5), 1.0, form="compact")


def test_two_solvers_agree():
    p = np.array([0.35, 0.25, 0.2, 0.12, 0.08])
    ball = pd.L1Ball(p, 0.1)
    G = LinearUtility(distortion_gain(5))
    vals = [design(ball, 1.0, utility=G, solver=s).utility for s in ("HIGHS", "ECOS", "CLARABEL")]
    assert max(vals) - min(vals) < 1e-6
    mi = [design(ball, 1.0, solver=s).utility for s in (None, "ECOS", "HIGHS")]
    assert max(mi) - min(mi) < 1e-6


@given(
    st.integers(2, 6),
    st.integers(0, 10**6),
    st.floats(0.0, 1.5),
    st.floats(0.05, 2.5),
    st.sampled_from(SUBCONVEX + ["linear"]),
)
def test_every_design_is_certified(n, seed, frac, eps, utility):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 2)
    ball = pd.L1Ball(p, min(2.0, frac * 2 * p.min()))
    util = LinearUtility(rng.normal(size=(n, n))) if utility == "linear" else utility
    res = design(ball, eps, utility=util)
    _assert_valid(res, ball, eps)
    assert res.utility <= res.upper_bound + 1e-9


@given(st.integers(2, 5), st.integers(0, 10**6), st.sampled_from(SUBCONVEX))
def test_monotone_in_epsilon_and_radius(n, seed, utility):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 2)
    b = 0.6 * p.min()
    u_eps = [design(pd.L1Ball(p, b), e, utility=utility).utility for e in (0.2, 0.6, 1.2)]
    assert u_eps[0] <= u_eps[1] + 1e-9 <= u_eps[2] + 2e-9
    u_beta = [design(pd.L1Ball(p, r), 0.8, utility=utility).utility for r in (0.0, b / 2, b, 2.5 * b)]
    assert all(u_beta[i] >= u_beta[i + 1] - 1e-9 for i in range(3))
    ldp = design(pd.Simplex(n), 0.8, utility=utility, prior=p).utility
    assert u_beta[-1] >= ldp - 1e-9


@given(st.integers(2, 5), st.integers(0, 10**6), st.sampled_from(SUBCONVEX))
def test_permutation_invariance(n, seed, utility):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n) * 2)
    perm = rng.permutation(n)
    a = design(pd.L1Ball(p, 0.5 * p.min()), 0.9, utility=utility).utility
    b = design(pd.L1Ball(p[perm], 0.5 * p.min()), 0.9, utility=utility).utility
    assert a == pytest.approx(b, abs=1e-9)


def test_custom_sublinear_and_concave_utilities():
    p = np.array([0.5, 0.3, 0.2])
    # a user-supplied sublinear mu equal to MAP accuracy must give the same optimum
    mu = SubConvexUtility.from_function(lambda c, pr: (pr[:, None] * c).max(axis=0), name="mymap")
    assert design(p, 0.7, utility=mu).utility == pytest.approx(design(p, 0.7, utility="map_accuracy").utility)
    # a concave objective: maximise the entropy-like sum of logs of the diagonal (cvxpy-concave)
    from pml_design.design import ConcaveUtility

    util = ConcaveUtility(lambda P, pr: cp.sum(cp.log(cp.diag(P))), evaluate=lambda W, pr: float(np.sum(np.log(np.diag(W)))))
    res = design(pd.L1Ball(p, 0.1), 0.7, utility=util)
    _assert_valid(res, pd.L1Ball(p, 0.1), 0.7)


def test_certify_repairs_infeasible_matrix():
    p = np.array([0.5, 0.5])
    ball = pd.L1Ball(p, 0.2)
    W = np.array([[0.9, 0.1], [0.1 - 1e-9, 0.9 + 1e-9]])  # too informative for eps = 0.5
    cert = certify(W, ball, 0.5)
    assert cert.repair_weight > 0
    assert pd.leakage_capacity(cert.matrix, ball) <= 0.5 + 1e-12
    assert cert.capacity_before_repair > 0.5
    # minimal: a slightly smaller weight breaks the bound
    lam = cert.repair_weight * (1 - 1e-6)
    W2 = (1 - lam) * W + lam / 2
    assert pd.leakage_capacity(W2, ball) > 0.5


def test_linear_utility_keeps_columns_and_rejects_bad_input():
    p = np.array([0.5, 0.3, 0.2])
    G = np.zeros((3, 4))
    G[:, 0] = 1
    res = design(p, 0.5, utility=LinearUtility(G))
    assert res.matrix.shape == (3, 4)
    with pytest.raises(ValueError, match="gain"):
        design(p, 0.5, utility=LinearUtility(np.eye(2)))
    with pytest.raises(ValueError, match="method"):
        design(p, 0.5, utility="mutual_information", method="convex")
    with pytest.raises(ValueError, match="method"):
        design(p, 0.5, utility=LinearUtility(np.eye(3)), method="exact")
    with pytest.raises(ValueError, match="solver"):
        design(p, 0.5, solver="NOPE")
    with pytest.raises(ValueError, match="utility"):
        design(p, 0.5, utility="nope")
    with pytest.raises(ValueError, match="epsilon"):
        design(p, -1.0)
    with pytest.raises(ValueError, match="prior"):
        design(pd.Simplex(3), 1.0)
    with pytest.raises(ValueError, match="form"):
        build_polytope(p, 1.0, form="nope")


def test_solver_failure_is_reported(monkeypatch):
    p = np.array([0.5, 0.5])

    def boom(self, *a, **k):
        raise cp.error.SolverError("boom")

    monkeypatch.setattr(cp.Problem, "solve", boom)
    with pytest.raises(SolverFailedError, match="status"):
        design(p, 0.5, utility=LinearUtility(np.eye(2)), solver_options={"backend": "cvxpy"})


def test_polytope_builder_usable_on_its_own():
    p = np.array([0.5, 0.3, 0.2])
    poly = build_polytope(pd.L1Ball(p, 0.1), 0.8)
    # user adds a constraint: never map 0 to 2, and their own objective
    prob = poly.problem(cp.sum(cp.diag(poly.P)), [poly.P[0, 2] == 0])
    prob.solve(solver="HIGHS")
    W = poly.P.value
    assert abs(W[0, 2]) < 1e-9
    assert pd.leakage_capacity(np.clip(W, 0, 1), pd.L1Ball(p, 0.1)) <= 0.8 + 1e-7
    # sweeps: change epsilon without rebuilding
    poly.set_epsilon(0.4)
    prob.solve(solver="HIGHS")
    assert pd.leakage_capacity(np.clip(poly.P.value, 0, 1), pd.L1Ball(p, 0.1)) <= 0.4 + 1e-7


def test_utility_values_closed_forms():
    p = np.array([0.5, 0.5])
    W = np.eye(2)
    assert as_utility("mutual_information").value(W, p) == pytest.approx(math.log(2))
    assert as_utility("map_accuracy").value(W, p) == pytest.approx(1.0)
    assert as_utility("chi_square_information").value(W, p) == pytest.approx(1.0)
    assert as_utility("total_variation_information").value(W, p) == pytest.approx(0.5)
    for u in ("mutual_information", "chi_square_information", "total_variation_information"):
        assert as_utility(u).value(np.full((2, 2), 0.5), p) == pytest.approx(0.0, abs=1e-15)


def test_repair_weight_ignores_slack_columns():
    # one column far inside the bound (large negative excess) must not inflate the mixing weight
    p = np.array([0.6, 0.4])
    W = np.array([[0.5, 0.5 - 1e-3, 1e-3], [0.5, 1e-3, 0.5 - 1e-3]])
    eps = pd.leakage_capacity(W, p) - 1e-9
    cert = certify(W, pd.L1Ball(p, 0.0), eps)
    assert 0 < cert.repair_weight < 1e-6
    assert pd.leakage_capacity(cert.matrix, p) <= eps + 1e-12
