"""The ball around P̂ from a first cohort's Hadamard-response or OUE reports (pml_design/ldp_priors.py, docs/design.md §11.2).

Independent checks: the per-report moment bounds against every sign vector and every output of the written-out
channel (the support of each output read off the channel, not from the Hadamard matrix); coverage by simulation with
power (a radius 35 % smaller fails the same test); the route through ``design_from_reports`` and a mechanism file.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy.stats import binom

import pml_design as pml
from pml_design import ldp_priors, priors
from pml_design.estimation import prior_radius
from pml_design.mechanisms.frequency_oracles import hadamard_response, oue
from pml_design.mechanisms.mechanism import project_to_simplex


def _support(oracle) -> np.ndarray:
    """(N, K) booleans: v ∈ S(y). Hadamard response: read off the written-out channel (the larger of its two values);
    OUE: the bits of the output's index (column ``Σ_j b_j 2^j``)."""
    W = oracle._channel()
    if oracle.name == "OUE":
        return ((np.arange(W.shape[1])[None, :] >> np.arange(oracle.n)[:, None]) & 1).astype(bool)
    return np.isclose(W, W.max())


MOMENTS = {"HR": (hadamard_response, ldp_priors._hadamard_moments), "OUE": (oue, ldp_priors._unary_moments)}


@pytest.mark.parametrize("name", sorted(MOMENTS))
@pytest.mark.parametrize(("n", "eps"), [(2, 0.3), (3, 1.0), (5, 2.5), (7, 0.7), (8, 4.0)])
def test_moment_bounds_hold_for_every_sign_vector_and_prior(name, n, eps):
    """E ξ² and max ξ of one report's term, exactly over the channel, never above the bounds the radius uses."""
    rng = np.random.default_rng(n)
    make, moments = MOMENTS[name]
    o = make(n, eps)
    W, S = o._channel(), _support(o)
    g = (S - o.q_star) / o.gap  # (N, K): g(y)_v, the unbiased estimator's term of output y
    gap, var, top = moments(n, eps)
    assert gap == pytest.approx(o.gap, rel=1e-12)
    priors_ = [np.eye(n)[0], np.ones(n) / n, rng.dirichlet(np.ones(n) * 0.3), rng.dirichlet(np.ones(n))]
    signs = np.array([s for s in itertools.product((-1.0, 1.0), repeat=n) if 0 < s.count(1.0) < n])
    tilde = signs - signs.mean(axis=1, keepdims=True)
    j = (signs > 0).sum(axis=1) - 1
    worst_ratio = 0.0
    for p in priors_:
        py = p @ W
        assert np.allclose(g @ py, p)  # unbiased: E g(Y) = P
        xi = tilde @ g - (tilde @ p)[:, None]  # (signs, K)
        second = (xi**2) @ py
        assert np.all(second <= var[j] * (1 + 1e-12))
        assert np.all(xi.max(axis=1) <= top[j] * (1 + 1e-12))
        worst_ratio = max(worst_ratio, float(np.max(second / var[j])))
    assert worst_ratio > 0.5  # the variance bound is not loose by more than 2× somewhere (it would cost reports)


def _simulated_errors(oracle, n1, reps, p, rng):
    """ℓ1 errors of P̂ = Π(f̂ shifted to sum 1) over ``reps`` cohorts of n₁ reports (exact law of the output counts)."""
    n = oracle.n
    counts = rng.multinomial(n1, p @ oracle._channel(), size=reps)
    f = (counts @ _support(oracle).T / n1 - oracle.q_star) / oracle.gap
    f += (1.0 - f.sum(axis=1, keepdims=True)) / n
    u = -np.sort(-f, axis=1)  # row-wise projection onto the simplex
    css = np.cumsum(u, axis=1) - 1.0
    rho = n - 1 - np.argmax((u - css / np.arange(1, n + 1) > 0)[:, ::-1], axis=1)
    theta = css[np.arange(reps), rho] / (rho + 1.0)
    return np.abs(np.maximum(f - theta[:, None], 0.0) - p).sum(axis=1)


@pytest.mark.parametrize(("name", "radius", "power"), [("HR", priors.hadamard_ball_radius, 0.65),
                                                        ("OUE", priors.unary_ball_radius, 0.75)])
def test_coverage_with_power(name, radius, power):
    """N = 2, P uniform: failures at the radius ≤ δ; at a fraction of the radius the same test fails."""
    rng = np.random.default_rng(21)
    eps1, n1, d, reps = 1.0, 2000, 1e-4, 1_000_000
    err = _simulated_errors(MOMENTS[name][0](2, eps1), n1, reps, np.array([0.5, 0.5]), rng)
    r = radius(2, eps1, n1, d)
    limit = int(binom.ppf(1 - 1e-3, reps, d))
    assert np.sum(err >= r) <= limit
    assert np.sum(err >= power * r) > limit


def test_coverage_through_the_oracle():
    """N = 6: reports from the oracle's privatize, P̂ as design_from_report_counts computes it."""
    rng = np.random.default_rng(4)
    n, eps1, n1, reps, d = 6, 1.0, 600, 400, 0.05
    o = hadamard_response(n, eps1)
    p = np.array([0.4, 0.25, 0.15, 0.1, 0.07, 0.03])
    reports = o.privatize(rng.choice(n, n1 * reps, p=p), rng=rng).reshape(reps, n1)
    r = priors.hadamard_ball_radius(n, eps1, n1, d)
    err = []
    for rep in reports:
        f = o.estimate_from_counts(o.support_counts(rep), n1, project=False)
        err.append(np.abs(project_to_simplex(f + (1.0 - f.sum()) / n) - p).sum())
    assert np.sum(np.array(err) >= r) <= int(binom.ppf(1 - 1e-3, reps, d))


def test_radius_is_sharper_than_the_generic_one_and_dispatched_by_the_ball_key():
    gap = hadamard_response(60, 1.0).gap
    sharp, generic = priors.hadamard_ball_radius(60, 1.0, 10**6, 1e-6), priors.ldp_generic_radius(60, gap, 10**6, 1e-6)
    assert sharp < 0.15 * generic  # 0.215 against 1.58 (a new user's trial: 16× more reports than GRR needed)
    assert sharp < priors.ldp_ball_radius(60, 1, 1.0, 10**6, 1e-6)  # below GRR's own ball at ε₁ = 1
    for n, eps, n1 in [(2, 5.0, 100), (3, 0.1, 10**5), (50, 2.0, 3000), (1000, 1.0, 10**7)]:  # never above the generic
        g = hadamard_response(n, eps).gap
        assert priors.hadamard_ball_radius(n, eps, n1, 1e-3) <= priors.ldp_generic_radius(n, g, n1, 1e-3)
    assert priors.hadamard_ball_radius(60, 1.0, 1000, 1e-6) == math.inf
    old = {"oracle": "HR", "ldp_epsilon": 1.0, "n_reports": 10**6, "p_star": 1 / (1 + math.exp(-1)), "q_star": 0.5}
    assert prior_radius("ldp reports", 60, 1e-6, old) == pytest.approx(generic, rel=1e-12)  # files before the key
    assert prior_radius("ldp reports", 60, 1e-6, {**old, "ball": priors.HADAMARD_BALL}) == sharp
    assert priors.unary_ball_radius(60, 1.0, 10**6, 1e-6) < sharp  # OUE's variance is smaller
    oue_params = {**old, "oracle": "OUE", "p_star": 0.5, "q_star": 1 / (1 + math.e)}
    assert prior_radius("ldp reports", 60, 1e-6, {**oue_params, "ball": priors.UNARY_BALL}) \
        == priors.unary_ball_radius(60, 1.0, 10**6, 1e-6)
    for bad in (priors.HADAMARD_BALL, ["a list"], None):  # a ball of another oracle, or no text (a tampered file)
        with pytest.raises(ValueError, match="is not one of oracle 'OUE'"):
            prior_radius("ldp reports", 60, 1e-6, {**oue_params, "ball": bad})
    grr_params = {"oracle": "GRR", "ldp_epsilon": 1.0, "n_reports": 4000}
    with pytest.raises(ValueError, match="is not one of oracle 'GRR'"):  # a review: ignored on GRR / SS before
        prior_radius("ldp reports", 8, 1e-3, {**grr_params, "ball": priors.HADAMARD_BALL})
    for p_star in (0.99, True, "0.73"):  # the stored constants must be the oracle's at ldp_epsilon (a review)
        with pytest.raises(ValueError, match="are not those of oracle HR"):
            prior_radius("ldp reports", 60, 1e-6, {**old, "p_star": p_star, "ball": priors.HADAMARD_BALL})
    with pytest.raises(ValueError, match="lack 'q_star'"):
        prior_radius("ldp reports", 60, 1e-6, {k: v for k, v in {**old, "ball": priors.HADAMARD_BALL}.items()
                                               if k != "q_star"})
    with pytest.raises(ValueError, match="ldp_epsilon"):
        priors.hadamard_ball_radius(60, -1.0, 1000, 1e-6)
    with pytest.raises(ValueError, match="support_size"):
        priors.hadamard_ball_radius(1, 1.0, 1000, 1e-6)


def test_design_from_reports_uses_it_and_the_file_ties_it_to_the_key(tmp_path):
    rng = np.random.default_rng(7)
    oracle = hadamard_response(5, 1.0)
    x = rng.choice(5, 60_000, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    est = pml.design_from_reports(oracle.privatize(x, rng=rng), oracle, 1.0, 1e-3)
    assert est.prior_params["ball"] == priors.HADAMARD_BALL
    assert est.radius == priors.hadamard_ball_radius(5, 1.0, 60_000, 1e-3)
    path = est.save(tmp_path / "hr.json")
    assert pml.load_mechanism(path).metadata["prior_params"]["ball"] == priors.HADAMARD_BALL
    from pml_design.deploy.file import content_hash

    doc = json.loads(path.read_text())
    doc["prior_params"].pop("ball")  # the generic radius is larger: the stored one no longer follows
    doc["sha256"] = content_hash(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(pml.MechanismFileError, match="radius"):
        pml.load_mechanism(path)


def test_a_subclass_keeps_the_generic_radius():
    """A subclass may change the channel: only the oracle itself gets the Hadamard bound."""
    from dataclasses import dataclass

    from pml_design.mechanisms.frequency_oracles import HadamardResponse

    @dataclass(frozen=True)
    class Mine(HadamardResponse):
        pass

    oracle = Mine(n=5, epsilon=1.0)
    x = np.random.default_rng(1).choice(5, 60_000)
    est = pml.design_from_reports(oracle.privatize(x, rng=2), oracle, 1.0, 1e-3, allow_zero=True)
    assert "ball" not in est.prior_params
    assert est.radius == pytest.approx(priors.ldp_generic_radius(5, oracle.gap, 60_000, 1e-3), rel=1e-12)


def test_design_from_reports_oue_gets_its_ball():
    rng = np.random.default_rng(8)
    oracle = oue(4, 1.0)
    x = rng.choice(4, 40_000, p=[0.4, 0.3, 0.2, 0.1])
    est = pml.design_from_reports(oracle.privatize(x, rng=rng), oracle, 1.0, 1e-3)
    assert est.prior_params["ball"] == priors.UNARY_BALL
    assert est.radius == priors.unary_ball_radius(4, 1.0, 40_000, 1e-3)


def test_the_reports_needed_are_within_one_percent():
    """A new user's trial: the error's "about N reports are needed" doubled from the count given (96 000 where 49 874
    suffice); a first cohort spends ε₁ on every person recruited."""
    from pml_design.cohort import _reports_needed

    params = {"oracle": "HR", "ldp_epsilon": 1.0, "n_reports": 3000, "p_star": 1 / (1 + math.exp(-1.0)),
              "q_star": 0.5, "ball": priors.HADAMARD_BALL}
    need = _reports_needed(params, 60, 1e-6)
    assert priors.hadamard_ball_radius(60, 1.0, need, 1e-6) < 1.0
    assert priors.hadamard_ball_radius(60, 1.0, int(need / 1.011), 1e-6) >= 1.0
