"""Column generation outside Proposition 2 and its anytime behaviour (issue 13, parts 1, 2 and 4).

Exact pricing over the nested-pair rays is checked against complete enumeration (``l1_ball_rays``); the scalable
designer against the exact one for N ≤ 8; time limits, the gap warning, seeds and warm-started sweeps.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pml_design as pd
from pml_design.design import PMLDesignWarning, in_cone, l1_ball_rays, tradeoff_curve
from pml_design.design.scalable.ball_pricing import BallCone, PairPricer, mass_phi
from pml_design.design.utilities import MutualInformation, as_utility
from pml_design.mechanisms.closed_form import randomized_response_for_pml

SEPARABLE = ["mutual_information", "chi_square_information", "total_variation_information"]


def _generic_ball(rng, n, lo=0.7):
    p = rng.dirichlet(np.full(n, lo))
    return p, float(rng.uniform(2 * p.min(), 1.6))


def _enumerated(p, beta, eps):
    R = l1_ball_rays(p, beta, eps)
    s = p @ R
    return R[:, s > 0] / s[s > 0]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 7), seed=st.integers(0, 2**31 - 1), kind=st.sampled_from(SEPARABLE + ["linear"]),
       zero=st.booleans())
def test_branch_and_bound_pricing_equals_complete_enumeration(n, seed, kind, zero):
    rng = np.random.default_rng(seed)
    p, beta = _generic_ball(rng, n)
    if zero:  # a symbol never observed
        p[0] = 0.0
        p /= p.sum()
    eps = float(rng.uniform(0.05, 3.0))
    R = _enumerated(p, beta, eps)
    lam = rng.normal(size=n) * 0.3
    if kind == "linear":
        w = rng.normal(size=n)
        ref, spec, Lam = float(np.max((w - lam) @ R)), None, lam - w
    else:
        u = as_utility(kind)
        ref, spec, Lam = float(np.max(u.mu(R, p) - lam @ R)), mass_phi(u), lam
    pr = PairPricer(BallCone(p, beta, eps), spec, Lam)
    best, pair, upper, _ = pr.branch_and_bound(max_nodes=10**6)
    tol = 1e-9 * max(1.0, abs(ref))
    assert best == pytest.approx(ref, abs=tol) and upper >= ref - tol
    assert pr.node_bound(0, 0.0, 0.0, 0.0, 0.0, False)[0] >= ref - tol  # the root bound is valid
    vals, _, _ = pr.prefix_pool()
    assert vals.max() <= ref + tol  # prefix pairs are actual rays
    if kind == "linear" and np.all(p > 0):
        assert vals.max() == pytest.approx(ref, abs=tol)  # linear values: the prefix pairs are exact (docs §5)
    col = BallCone(p, beta, eps).columns(*pair)[0]
    assert in_cone(col[:, None], pd.L1Ball(p, beta), eps, rtol=1e-9)[0] and p @ col == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(6))
def test_scalable_matches_exact_outside_proposition2(seed):
    rng = np.random.default_rng(100 + seed)
    n = 4 + seed % 5
    p, beta = _generic_ball(rng, n)
    ball = pd.L1Ball(p, beta)
    eps = float(rng.uniform(0.2, 2.0))
    for util in SEPARABLE + ["map_accuracy"]:
        ex = pd.design(ball, eps, utility=util, method="exact")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PMLDesignWarning)
            sc = pd.design(ball, eps, utility=util, method="scalable", solver_options={"time_limit": 5})
        scale = max(1.0, abs(ex.utility))
        assert sc.utility >= ex.utility - 1e-6 * scale, util
        assert sc.upper_bound >= ex.utility - 1e-9 * scale  # the bound is never beaten
        assert sc.certified_epsilon <= eps + 1e-12
        if sc.optimal:
            assert sc.utility >= ex.utility - 1e-6 * scale


def test_time_limit_is_honoured_and_the_gap_is_announced():
    rng = np.random.default_rng(5)
    # many rare categories: the best-column bound is loose and the gap stays above 1 % in 2 s (with Dirichlet(1)
    # masses the same ball is now within 0.2 %: the best column nearly reaches the optimum, docs/design.md §5)
    p = rng.dirichlet(np.full(60, 0.1))
    ball = pd.L1Ball(p, 0.3)
    t0 = time.perf_counter()
    with pytest.warns(PMLDesignWarning, match=r"time_limit") as rec:
        res = pd.design(ball, 1.0, solver_options={"time_limit": 2.0})
    assert time.perf_counter() - t0 <= 2.0 * 1.1 + 1.0
    assert res.method == "scalable" and not res.optimal
    assert "%" in str(rec[0].message)
    assert res.certified_epsilon <= 1.0 + 1e-12 and res.upper_bound >= res.utility
    assert issubclass(PMLDesignWarning, UserWarning) and pd.PMLDesignWarning is PMLDesignWarning


def test_never_worse_than_randomized_response_and_never_constant_for_large_alphabets():
    rng = np.random.default_rng(8)
    p = rng.dirichlet(np.ones(400))
    ball = pd.L1Ball(p, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PMLDesignWarning)
        res = pd.design(ball, 1.0, solver_options={"time_limit": 3.0, "progress": False})
    rr = MutualInformation().value(randomized_response_for_pml(ball, 1.0).matrix, p)
    assert res.utility >= rr > 0
    assert res.matrix.shape[1] > 1


def test_bad_time_limit_is_named():
    ball = pd.L1Ball(np.array([0.6, 0.3, 0.1]), 0.4)
    with pytest.raises(ValueError, match="time_limit"):
        pd.design(ball, 1.0, method="scalable", solver_options={"time_limit": -1})
    with pytest.raises(TypeError, match="time_limit"):
        pd.design(ball, 1.0, method="scalable", solver_options={"time_limit": "soon"})


def test_design_from_samples_and_cli_accept_solver_options(tmp_path):
    rng = np.random.default_rng(2)
    data = rng.choice(12, size=3000, p=np.r_[np.full(11, 0.09), 0.01])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PMLDesignWarning)
        est = pd.design_from_samples(data, 12, 1.0, 1e-6, solver_options={"time_limit": 2, "progress": False})
    assert est.result.method == "scalable" and est.result.info["wall_time"] <= 2 * 1.1 + 1
    from pml_design.cli import build_parser

    args = build_parser().parse_args(
        ["design", "--counts", "x.txt", "--epsilon", "1", "--delta", "1e-6", "--time-limit", "5", "--no-progress"]
    )
    assert args.time_limit == 5.0 and args.progress is False


def test_warm_started_sweep_matches_cold_starts():
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.full(11, 0.6))
    ball = pd.L1Ball(p, 2 * p.min() + 0.2)
    eps = [0.4, 0.8, 0.6]
    opts = {"time_limit": 1, "progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PMLDesignWarning)
        warm = tradeoff_curve(ball, eps, solver_options=opts)
        cold = tradeoff_curve(ball, eps, solver_options=opts, reuse=False)
    for w, c, e in zip(warm, cold, eps):
        assert w.certified_epsilon <= e + 1e-12
        assert w.upper_bound >= c.utility - 1e-9 and c.upper_bound >= w.utility - 1e-9
