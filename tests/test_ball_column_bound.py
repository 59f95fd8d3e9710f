"""The best-single-column bound of the ℓ1 ball's cone (``ball_column_bound``, docs/design.md §5).

``max_column_value`` must be at least the value of every ray of the closed-form ray list (``l1_ball_rays``, an
independent derivation, values by the utility's own ``mu``) and at least the exact optimum (ray LP), for rare
categories, zero-mass symbols, several ε and β and the three mass utilities; for mutual information it must reach
``log(1/θ)`` (the uniform column on a set of mass θ) and, on the benchmark balls, not exceed it.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pml_design as pd
from pml_design.design import design, in_cone, l1_ball_rays
from pml_design.design.utilities import as_utility

bp = importlib.import_module("pml_design.design.scalable.ball_pricing")
bcb = importlib.import_module("pml_design.design.scalable.ball_column_bound")

UTILS = ["mutual_information", "chi_square_information", "total_variation_information"]


def _bound(p, beta, eps, util):
    return bcb.max_column_value(bp.BallCone(np.asarray(p, dtype=float), beta, eps), bp.mass_phi(as_utility(util)))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 7),
    util=st.sampled_from(UTILS),
    alpha=st.sampled_from([0.3, 1.0, 3.0]),
    zero=st.booleans(),
    eps=st.sampled_from([0.05, 0.3, 1.0, 2.5, 6.0]),
    frac=st.floats(0.0, 1.0),
)
def test_column_bound_is_at_least_every_ray_value(seed, n, util, alpha, zero, eps, frac):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(n, alpha))  # small alpha: rare categories
    if zero:  # a symbol never observed
        p[rng.integers(n)] = 0.0
        p /= p.sum()
    pos = p[p > 0]
    beta = float(2 * pos.min() + frac * (2.0 - 2 * pos.min()))
    B = _bound(p, beta, eps, util)
    R = l1_ball_rays(p, beta, eps)
    R = R / (p @ R)  # every ray normalised to P̂·r = 1
    ref = float(as_utility(util).mu(R, p).max())
    assert B >= ref - 1e-9 * max(1.0, abs(ref)), (B, ref)


@pytest.mark.parametrize("seed", range(6))
def test_column_bound_is_at_least_the_exact_optimum(seed):
    rng = np.random.default_rng(300 + seed)
    n = 3 + seed % 3
    p = rng.dirichlet(np.full(n, 0.5))
    beta = float(2 * p.min() + rng.uniform(0.0, 1.0))
    eps = float(rng.choice([0.4, 1.0, 2.0]))
    util = UTILS[seed % 3]
    res = design(pd.L1Ball(p, beta), eps, utility=util, method="exact")
    assert res.optimal
    assert _bound(p, beta, eps, util) >= res.utility - 1e-9 * max(1.0, abs(res.utility))


@pytest.mark.parametrize("n", [8, 30, 300])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_mutual_information_column_bound_is_log_one_over_theta_on_large_balls(n, eps):
    rng = np.random.default_rng(n)
    p = rng.dirichlet(np.ones(n))
    beta = min(1.0, 0.1 + 4 * p.min())  # the balls of benchmarks/bench_scale_subconvex.py
    theta = beta / 2 + math.exp(-eps)
    # the uniform column on a set of mass θ (the limit v ↓ θ of the rays) has value log(1/θ): a lower bound ...
    B = _bound(p, beta, eps, "mutual_information")
    assert B >= -math.log(theta) - 1e-12
    # ... which is the largest there (no ray is worth more: for u ≥ β/2, a = 1/θ and b ≤ 1/θ), up to the default
    # closing tolerance rtol = 1e-7 of the cell refinement
    c = -math.log(theta)
    assert B <= c + 1e-7 * max(1.0, c) + 1e-12


def test_column_bound_for_a_threshold_above_one_is_the_best_whole_alphabet_ray():
    p = np.array([0.5, 0.3, 0.2])
    cone = bp.BallCone(p, 1.9, 0.1)  # θ = 0.95 + e^{-0.1} > 1: every ray has V = the whole alphabet
    B = bcb.max_column_value(cone, bp.mass_phi(as_utility("mutual_information")))
    R = l1_ball_rays(p, 1.9, 0.1)
    R = R / (p @ R)
    assert B >= float(as_utility("mutual_information").mu(R, p).max()) - 1e-12
    # over every mass u of U (a relaxation of the subset masses): a dense grid of the whole-alphabet rays' values
    u = np.linspace(0.0, 1.0, 200_001)[:-1]
    a, b = cone.levels(u, 1.0, cone.h_full)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.nan_to_num(u * a * np.log(a)) + np.nan_to_num((1 - u) * b * np.log(b))
    assert g.max() - 1e-12 <= B <= g.max() + 1e-6


def test_column_bound_needs_a_column_term():
    with pytest.raises(ValueError, match="mass_phi"):
        bcb.max_column_value(bp.BallCone(np.array([0.5, 0.5]), 1.0, 1.0), None)


def test_scalable_bound_uses_the_best_column_on_a_large_ball():
    rng = np.random.default_rng(20)
    p = rng.dirichlet(np.ones(20))
    ball = pd.L1Ball(p, min(1.0, 0.1 + 4 * p.min()))
    res = design(ball, 1.0, method="scalable", solver_options={"time_limit": 3, "progress": False})
    B = _bound(p, ball.radius, 1.0, "mutual_information")
    assert res.utility <= res.upper_bound <= B + 1e-12
    assert res.upper_bound - res.utility <= 1e-3 * res.upper_bound  # 3.9e-5 measured (1.3e-3 before the bound)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 12))
def test_window_argmin_is_the_least_weight_subset_in_each_window(seed, n):
    rng = np.random.default_rng(seed)
    m = rng.dirichlet(np.full(n, rng.choice([0.3, 1.0])))
    w = rng.normal(size=n)
    items = rng.permutation(n)
    t1 = rng.uniform(0.0, 1.0, size=5)
    t2 = t1 + rng.choice([0.0, 1e-3, 0.05, 0.3], size=5)
    bits = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1 == 1  # brute force: every subset
    ms, ws = bits.astype(float) @ m, bits.astype(float) @ w
    for lo, hi, S in zip(t1, t2, bcb._window_argmin(items, m, w, t1, t2)):
        inside = (ms >= lo - 1e-12) & (ms <= hi + 1e-12)
        if S is None:
            assert not ((ms >= lo + 1e-12) & (ms <= hi - 1e-12)).any()
            continue
        assert lo - 1e-12 <= m[S].sum() <= hi + 1e-12
        assert w[S].sum() <= ws[inside].min() + 1e-12


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 10),
    util=st.sampled_from(UTILS),
    zero=st.booleans(),
    eps=st.sampled_from([0.3, 1.0, 2.5]),
    frac=st.floats(0.0, 0.6),
)
def test_threshold_pairs_are_rays_with_their_exact_reduced_values(seed, n, util, zero, eps, frac):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(n, rng.choice([0.3, 1.0])))
    if zero:
        p[rng.integers(n)] = 0.0
        p /= p.sum()
    pos = p[p > 0]
    beta = float(2 * pos.min() + frac * (2.0 - 2 * pos.min()))
    theta = beta / 2 + math.exp(-eps)
    lam = -math.log(min(theta, 0.99)) * p + rng.normal(size=n) * rng.choice([1e-3, 0.05])  # near the optimum's duals
    u_ = as_utility(util)
    pr = bp.PairPricer(bp.BallCone(p, beta, eps), bp.mass_phi(u_), lam)
    found = bcb.threshold_pairs(pr, -np.inf)
    ref, *_ = pr.enumerate_pairs(top=1)
    vals = [v for v, _, _ in found]
    assert vals == sorted(vals, reverse=True)
    for val, U, V in found:
        assert not (U & ~V).any() and (V & ~U).any()  # nested, U ⊊ V
        col = pr.cone.columns(U, V)[0]
        assert p @ col == pytest.approx(1.0)
        assert in_cone(col[:, None], pd.L1Ball(p, beta), eps, rtol=1e-9)[0]
        assert val == pytest.approx(float(u_.mu(col[:, None], p)[0] - lam @ col), rel=1e-9, abs=1e-12)
        assert val <= ref + 1e-9 * max(1.0, abs(ref))
