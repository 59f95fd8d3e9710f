"""The pricing bound of the estimation design (``design/estimation/bound.py``) against independent solvers.

Every check is validity first: the bound is never below the largest ``rᵀMr − ν·r`` over the cone's normalised
extreme rays, computed by complete enumeration (``enumerate_rays``), by an LP ascent over the polytope written with
the ball's extreme points (Corollary 1, a different description of the same cone), and by a hill climb over cone
points accepted by the exact leakage test (``in_cone``). The branch and bound is forced at small N (its exact
enumeration shortcut is switched off) so that it is what these tests exercise.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import pml_design as pml
from pml_design.design.estimation import bound as B
from pml_design.design.rays import enumerate_rays, in_cone
from pml_design.mechanisms.frequency_oracles.fisher import fisher_information
from pml_design.uncertainty import FiniteSet, L1Ball, Simplex


@pytest.fixture()
def no_shortcut(monkeypatch):
    """Force the certificate + branch and bound (no exact enumeration) at small N."""
    monkeypatch.setattr(B, "ENUMERATE_GENERIC", 0)
    monkeypatch.setattr(B, "ENUMERATE_MAX", 0)


def _q(R, M, nu):
    return np.einsum("ik,ik->k", R, M @ R) - nu @ R


def _true_max(uset, eps, prior, M, nu):
    R = enumerate_rays(uset, eps)
    R = R / (prior @ R)
    return float(_q(R, M, nu).max())


def _random_problem(rng, n, *, low_rank=False):
    G = rng.normal(size=(n, 2 if low_rank else n))
    M = G @ G.T + np.diag(rng.uniform(0.1, 2.0, n))
    return M, rng.normal(scale=3.0, size=n)


def _sets(rng, n):
    """Both sides of Proposition 2, rare categories, a zero-mass symbol, a fixed prior and the simplex."""
    flat = rng.dirichlet(np.full(n, 3.0))
    rare = rng.dirichlet(np.full(n, 0.1))
    rare = (rare + 1e-4) / (rare + 1e-4).sum()
    zero = flat.copy()
    zero[0] = 0.0
    zero /= zero.sum()
    return [
        (L1Ball(flat, 0.5 * flat.min()), flat),  # inside Proposition 2
        (L1Ball(flat, 0.3), flat),  # outside
        (L1Ball(rare, 0.05), rare),  # rare categories, outside
        (L1Ball(zero, 0.2), (zero + 0.01) / (zero + 0.01).sum()),  # zero mass: prior ≠ centre
        (L1Ball(flat, 0.3), rng.dirichlet(np.full(n, 2.0))),  # prior ≠ centre
        (FiniteSet(flat), flat),  # a fixed prior
        (Simplex(n), flat),
    ]


@pytest.mark.parametrize("seed", range(3))
def test_bound_is_valid_against_enumeration(no_shortcut, seed):
    rng = np.random.default_rng(seed)
    n = 7 + seed
    eps = float(rng.uniform(0.5, 3.0))
    for uset, prior in _sets(rng, n):
        M, nu = _random_problem(rng, n, low_rank=seed == 1)
        true = _true_max(uset, eps, prior, M, nu)
        rb = B.ray_value_bounds(uset, eps, prior, M, nu, deadline=time.perf_counter() + 0.4)
        assert rb.upper >= true - 1e-9 * abs(true), (uset, rb, true)
        assert rb.lower <= true + 1e-9 * abs(true)
        if rb.ray is not None:  # the lower value is attained by an actual cone point
            assert in_cone(rb.ray[:, None], uset, eps, rtol=1e-7)[0]
            assert abs(prior @ rb.ray - 1) < 1e-9


def test_enumeration_shortcut_is_exact():
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(8))
    M, nu = _random_problem(rng, 8)
    for uset in (L1Ball(p, 0.4), L1Ball(p, 0.5 * p.min())):
        rb = B.ray_value_bounds(uset, 1.0, p, M, nu)
        true = _true_max(uset, 1.0, p, M, nu)
        assert rb.method == "enumeration" and true <= rb.upper <= true + 1e-6 * abs(true)


def test_finite_set_with_several_points_gets_the_box_bound():
    rng = np.random.default_rng(1)
    n = 5
    Q = rng.dirichlet(np.ones(n), size=3)
    prior = Q.mean(axis=0)
    M, nu = _random_problem(rng, n)
    uset = FiniteSet(Q)
    true = _true_max(uset, 1.0, prior, M, nu)
    rb = B.ray_value_bounds(uset, 1.0, prior, M, nu, deadline=time.perf_counter() + 0.3)
    assert np.isfinite(rb.upper) and rb.upper >= true - 1e-9 * abs(true) and rb.method == "box"


def _design_problem(uset, eps, prior):
    """M = F⁻², ν from the KKT conditions of the library's proven-optimal design (small N)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pml.design(uset, eps, utility="frequency_estimation")
    W = res.matrix
    F = fisher_information(W, prior)
    Fi = np.linalg.inv(F)
    M = Fi @ Fi
    theta = prior @ W
    R = W / theta
    nu = np.linalg.solve(F, (R * theta) @ np.einsum("ik,ik->k", R, M @ R))
    return res, M, nu, float(np.trace(Fi))


@pytest.mark.parametrize("radius", [0.004, 0.4])  # inside / outside Proposition 2
def test_near_optimal_design_bound_and_lower_bound(no_shortcut, radius):
    n, eps = 8, 1.0
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    p /= p.sum()
    uset = L1Ball(p, radius)
    res, M, nu, f = _design_problem(uset, eps, p)
    assert res.optimal
    true = _true_max(uset, eps, p, M, nu)
    assert abs(true) < 1e-3 * f  # the design is optimal: no ray prices out
    rb = B.ray_value_bounds(uset, eps, p, M, nu, deadline=time.perf_counter() + 2.0, rays=res.matrix / (p @ res.matrix))
    assert rb.upper >= true - 1e-9
    # the Frank–Wolfe bound with these multipliers (Σθ r rᵀMr = tr F⁻¹ = ν·1) never exceeds the proven optimum
    lb = B.frank_wolfe_lower_bound(f, -f, float(nu.sum()), rb.upper) - float(p @ p)
    assert lb <= res.utility * (1 + 1e-6)
    # measured tightness (docs/design.md §7): exact inside Proposition 2, the diagonal certificate's loss outside
    limit = 0.02 if uset.in_interior_regime else 0.75
    assert res.utility - lb <= limit * res.utility, (res.utility, lb)


def test_lower_bound_from_a_suboptimal_design_is_below_the_optimum():
    n, eps = 7, 1.5
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.full(n, 2.0))
    uset = L1Ball(p, 0.3)
    res, *_ = _design_problem(uset, eps, p)
    W = pml.grr(n, eps).matrix  # ε-LDP, hence feasible: a suboptimal design
    F = fisher_information(W, p)
    Fi = np.linalg.inv(F)
    M = Fi @ Fi
    for nu in (np.zeros(n), rng.normal(size=n), M @ np.ones(n)):  # any ν is valid
        theta = p @ W
        g_theta = -float(np.einsum("ik,ik->k", W / theta, M @ (W / theta)) @ theta)
        ub = B.max_ray_value(uset, eps, p, M, nu, deadline=time.perf_counter() + 0.3)
        lb = B.frank_wolfe_lower_bound(float(np.trace(Fi)), g_theta, float(nu.sum()), ub) - float(p @ p)
        assert lb <= res.utility * (1 + 1e-6)


def _lp_ascent(uset, eps, prior, M, nu, rng, starts=6):
    """Second solver: maximise the convex q over ``{c ≥ 0, c_x ≤ e^ε Q·c ∀ extreme Q, π·c = 1}`` by successive
    linearisation (each LP lands on a vertex, the value never decreases)."""
    Q = uset.extreme_points()
    n = prior.size
    e = np.exp(eps)
    A = np.vstack([np.eye(n)[None, :, :] - e * Qi[None, None, :] for Qi in Q]).reshape(-1, n)
    best = -np.inf
    for _ in range(starts):
        c = -rng.normal(size=n)
        x = None
        for _ in range(12):
            res = linprog(c, A_ub=A, b_ub=np.zeros(A.shape[0]), A_eq=prior[None, :], b_eq=[1.0],
                          bounds=(0, None), method="highs")
            if res.status != 0:
                break
            if x is not None and np.allclose(res.x, x):
                break
            x = res.x
            c = -(2 * M @ x - nu)
        if x is not None:
            best = max(best, float(x @ M @ x - nu @ x))
    return best


def _hill_climb(uset, eps, prior, M, nu, rng, starts=6, steps=100):
    """Third solver: random moves among cone points accepted by the exact leakage test (``in_cone``)."""
    n = prior.size
    best = -np.inf
    for _ in range(starts):
        c = np.where(rng.random(n) < 0.3, np.exp(eps), 1.0)
        c = c / (prior @ c)
        if not in_cone(c[:, None], uset, eps)[0]:
            c = np.ones(n)
        val = float(c @ M @ c - nu @ c)
        for _ in range(steps):
            trial = c * np.exp(rng.normal(scale=0.3, size=n) * (rng.random(n) < 0.3))
            trial[rng.random(n) < 0.05] = 0.0
            if trial.max() <= 0:
                continue
            trial = trial / (prior @ trial)
            if in_cone(trial[:, None], uset, eps, rtol=0.0)[0]:
                v = float(trial @ M @ trial - nu @ trial)
                if v > val:
                    c, val = trial, v
        best = max(best, val)
    return best


@pytest.mark.parametrize("n", [16, 24])
def test_bound_dominates_two_other_solvers_beyond_enumeration(n):
    rng = np.random.default_rng(n)
    p = rng.dirichlet(np.full(n, 0.5))
    p = (p + 1e-3) / (p + 1e-3).sum()
    M, nu = _random_problem(rng, n, low_rank=True)
    inside = L1Ball(p, 0.5 * p.min())
    ub_in = B.max_ray_value(inside, 1.0, p, M, nu, deadline=time.perf_counter() + 0.5)
    assert ub_in >= _lp_ascent(inside, 1.0, p, M, nu, rng) - 1e-7 * abs(ub_in)
    for uset in (inside, L1Ball(p, 0.3)):
        ub = B.max_ray_value(uset, 1.0, p, M, nu, deadline=time.perf_counter() + 0.5)
        assert ub >= _hill_climb(uset, 1.0, p, M, nu, rng) - 1e-9 * abs(ub)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(3, 7),
    eps=st.floats(0.2, 4.0),
    radius=st.floats(0.0, 2.0),
)
def test_property_never_below_the_enumerated_maximum(no_shortcut, seed, n, eps, radius):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(n, 0.7))
    prior = p if rng.random() < 0.5 else rng.dirichlet(np.ones(n))
    prior = np.maximum(prior, 1e-3)
    prior /= prior.sum()
    uset = L1Ball(p, radius)
    M, nu = _random_problem(rng, n, low_rank=bool(rng.random() < 0.5))
    true = _true_max(uset, eps, prior, M, nu)
    ub = B.max_ray_value(uset, eps, prior, M, nu, deadline=time.perf_counter() + 0.15)
    assert ub >= true - 1e-9 * max(1.0, abs(true))


def test_deadline_in_the_past_still_gives_a_valid_bound(no_shortcut):
    rng = np.random.default_rng(9)
    p = rng.dirichlet(np.ones(9))
    M, nu = _random_problem(rng, 9)
    uset = L1Ball(p, 0.3)
    t = time.perf_counter()
    ub = B.max_ray_value(uset, 1.0, p, M, nu, deadline=t - 1.0)
    assert time.perf_counter() - t < 5.0
    assert np.isfinite(ub) and ub >= _true_max(uset, 1.0, p, M, nu) - 1e-9


def test_bad_input_is_named():
    p = np.full(4, 0.25)
    M = np.eye(4)
    with pytest.raises(ValueError, match="prior"):
        B.max_ray_value(L1Ball(p, 0.1), 1.0, np.array([0.5, 0.5, 0.0, 0.0]), M, np.zeros(4))
    with pytest.raises(ValueError, match="M must be"):
        B.max_ray_value(L1Ball(p, 0.1), 1.0, p, np.eye(3), np.zeros(4))
    for work in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="work must be a positive number"):
            B.ray_value_bounds(L1Ball(p, 0.1), 1.0, p, M, np.zeros(4), work=work)


def test_work_budget_bound_is_valid_and_clock_free():
    """ray_value_bounds(work=...) stops by rounds, not seconds: the same value under any deadline, never below the
    enumerated maximum (N = 9 outside Proposition 2, enumeration switched off)."""
    rng = np.random.default_rng(8)
    p = rng.dirichlet(np.ones(9))
    ball = L1Ball(p, 0.5)
    A = rng.normal(size=(9, 9))
    M, nu = A @ A.T, rng.normal(size=9)
    R = B.enumerated_rays(ball, 1.0, p)
    exact = float(np.max(np.einsum("ik,ik->k", R, M @ R) - nu @ R))
    saved = B.ENUMERATE_GENERIC, B.ENUMERATE_MAX
    B.ENUMERATE_GENERIC = B.ENUMERATE_MAX = 0
    try:
        runs = [B.ray_value_bounds(ball, 1.0, p, M, nu, work=30, rays=R[:, :20],
                                   deadline=time.perf_counter() + s) for s in (30.0, 300.0)]
    finally:
        B.ENUMERATE_GENERIC, B.ENUMERATE_MAX = saved
    assert runs[0].upper == runs[1].upper and runs[0].lower == runs[1].lower
    assert runs[0].lower <= exact * (1 + 1e-9) + 1e-9 <= runs[0].upper + 2e-9 * (1 + abs(exact))


def test_data_processing_floor_of_the_estimation_bound():
    """F(W) ⪯ diag(1/P) for every channel (a report carries at most what X does), so tr F⁻¹ − ‖P‖² ≥ 1 − ‖P‖²:
    checked on random channels by eigenvalues (not by the formula), and the design's lower bound is at least it."""
    from pml_design.mechanisms.frequency_oracles.fisher import fisher_information

    rng = np.random.default_rng(11)
    for _ in range(20):
        n, m = rng.integers(2, 8), rng.integers(2, 12)
        W = rng.dirichlet(np.ones(m) * 0.5, size=n)
        p = rng.dirichlet(np.ones(n))
        F = fisher_information(W, p)
        assert np.linalg.eigvalsh(np.diag(1 / p) - F).min() >= -1e-9 * np.abs(F).max()
    p = rng.dirichlet(np.ones(30))
    res = pml.design(pml.L1Ball(p, 0.3), 1.0, utility="frequency_estimation",
                     solver_options={"time_limit": 2, "progress": False})
    assert 1 - p @ p - 1e-12 <= res.lower_bound <= res.utility


@pytest.mark.parametrize("seed", range(6))
def test_masses_on_the_level_boundary_do_not_break_the_branch_and_bound(seed):
    """ε = ln 5 and P̂ in tenths: e^ε·P̂(S) − 1 rounds to ±1e-16 for some sets, where the incumbents' local search
    (running sums) and the closed form (a fresh sum) can disagree about validity; the bound must still come back,
    valid against enumeration (a fixed prior, radius 0; found by a review: IndexError before)."""
    import math

    from pml_design.uncertainty import FiniteSet

    p = np.array([2, 2, 1, 4, 1]) / 10
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(5, 5))
    M, nu = A @ A.T, rng.normal(size=5)
    uset = FiniteSet(p[None, :])
    R = B.enumerated_rays(uset, math.log(5), p)
    exact = float(np.max(np.einsum("ik,ik->k", R, M @ R) - nu @ R))
    saved = B.ENUMERATE_GENERIC, B.ENUMERATE_MAX
    B.ENUMERATE_GENERIC = B.ENUMERATE_MAX = 0
    try:
        rb = B.ray_value_bounds(uset, math.log(5), p, M, nu, work=30)
    finally:
        B.ENUMERATE_GENERIC, B.ENUMERATE_MAX = saved
    assert rb.upper >= exact - 1e-9 * (1 + abs(exact))


@pytest.mark.parametrize("criterion", ["A", "D"])
@pytest.mark.parametrize("radius", [0.01, 0.3])  # inside / outside Proposition 2
def test_scaled_frank_wolfe_bound_is_valid_and_tighter(criterion, radius):
    """The best-scale Frank–Wolfe bound (docs/design.md §7.1) at a suboptimal design's dual point: never above the
    proven optimum, never below the plain bound, and equal to the plain bound recomputed at the scaled point
    ``(αM, αν)`` (its root term from an eigendecomposition, its pricing maximum by complete enumeration)."""
    n, eps = 6, 1.0
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    p /= p.sum()
    uset = L1Ball(p, radius)
    util = pml.FrequencyEstimation(criterion)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pml.design(uset, eps, utility=util)
    assert res.optimal
    opt = res.utility + (0.0 if criterion == "D" else float(p @ p))  # tr F⁻¹ or −log det F
    R = enumerate_rays(uset, eps)
    R = R / (p @ R)
    for W in (pml.grr(n, eps).matrix, pml.subset_selection(n, eps, k=2).matrix):  # ε-LDP: feasible, suboptimal
        F = fisher_information(W, p)
        Fi = np.linalg.inv(F)
        M = Fi @ Fi if criterion == "A" else Fi
        f = float(np.trace(Fi)) if criterion == "A" else float(np.linalg.slogdet(F)[1] * -1)
        theta = p @ W
        g_theta = -float(np.einsum("ik,ik->k", W / theta, M @ (W / theta)) @ theta)
        for nu in (np.zeros(n), M @ np.ones(n) * 0.5, np.full(n, 0.1)):
            q = float(_q(R, M, nu).max())
            plain = B.frank_wolfe_lower_bound(f, g_theta, float(nu.sum()), q)
            scaled = B.scaled_frank_wolfe_bound(f, g_theta, float(nu.sum()), q, d_optimal=criterion == "D", n=n)
            assert plain <= scaled + 1e-12 * abs(scaled) and scaled <= opt * (1 + 1e-9), (plain, scaled, opt)
            c = float(nu.sum()) + q
            lam = np.linalg.eigvalsh(M)
            if criterion == "A":  # 2 tr (αM)^½ − α ν·1 − q*(αM, αν) at √α = tr M^½ / c
                alpha = (np.sqrt(lam).sum() / c) ** 2
                direct = 2 * np.sqrt(alpha * lam).sum() - alpha * nu.sum() - _q(R, alpha * M, alpha * nu).max()
            else:  # log det (αM) + N − α ν·1 − q*(αM, αν) at α = N / c
                alpha = n / c
                direct = np.log(alpha * lam).sum() + n - alpha * nu.sum() - _q(R, alpha * M, alpha * nu).max()
            assert abs(direct - scaled) <= 1e-9 * max(1.0, abs(scaled)), (direct, scaled)
    # where the pricing still finds improving rays the gain is real (the last point above)
    assert scaled > plain + 1e-6 * abs(opt)
    with pytest.raises(ValueError, match="n must be"):
        B.scaled_frank_wolfe_bound(1.0, -1.0, 0.5, 0.5, d_optimal=True)
