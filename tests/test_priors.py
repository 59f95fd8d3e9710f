"""Radii of the ball around a DP-released P̂ and around P̂ from LDP reports (pml_design/priors.py, docs/design.md §11).

Independent checks: eq. (7) as the noise vanishes, exact tails by convolution, the per-report MGF by brute force
over the explicit channel, ball coverage by simulation (with power: a too-small radius fails the same test).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, chisquare

import pml_design as pml
from pml_design import priors as pr
from pml_design.estimation import PRIOR_SOURCES, l1_radius, prior_radius
from pml_design.mechanisms.mechanism import project_to_simplex


def _dlap_pmf(eps0: float, support: np.ndarray) -> np.ndarray:
    t = math.exp(-eps0)
    return (1 - t) / (1 + t) * t ** np.abs(support)


def _binomial_test_max_failures(reps: int, delta: float, alpha: float = 1e-3) -> int:
    """Largest failure count compatible with a failure rate ≤ δ (one-sided binomial test at level α)."""
    return int(binom.ppf(1 - alpha, reps, delta))


def _project_rows(f: np.ndarray) -> np.ndarray:
    """Row-wise Euclidean projection onto the simplex (vectorised; checked against project_to_simplex)."""
    n = f.shape[1]
    u = -np.sort(-f, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    cond = u - css / np.arange(1, n + 1) > 0
    rho = n - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(f.shape[0]), rho] / (rho + 1.0)
    return np.maximum(f - theta[:, None], 0.0)


# ------------------------------------------------------------------------------------------------ DP radius
def test_dp_radius_reduces_to_eq7_without_noise():
    for n in (2, 5, 16):
        assert pr.dp_count_margin(n, 60.0, 1e-9) == 0
        for m in (50, 5000):
            r = pr.dp_ball_radius(m, n, 60.0, 1e-6)
            assert r >= l1_radius(m, n, 1e-6)  # never below eq. (7): the noise only widens
            assert r == pytest.approx(l1_radius(m, n, 1e-6), rel=1e-3)
    r, m_low = pr.dp_prior_radius(5000, 8, 60.0, 0.9e-6, 0.1e-6)
    assert m_low == 5000 and r == pytest.approx(l1_radius(5000, 8, 0.9e-6), rel=1e-3)


def test_dp_radius_monotone():
    ms = [pr.dp_ball_radius(m, 6, 1.0, 1e-6) for m in (500, 1000, 5000, 20000)]
    assert all(a > b for a, b in zip(ms, ms[1:]))
    es = [pr.dp_ball_radius(2000, 6, e, 1e-6) for e in (0.2, 0.5, 1.0, 4.0)]
    assert all(a > b for a, b in zip(es, es[1:]))
    ds = [pr.dp_ball_radius(2000, 6, 1.0, d) for d in (1e-2, 1e-4, 1e-8)]
    assert all(a < b for a, b in zip(ds, ds[1:]))
    margins = [pr.dp_count_margin(8, e, 1e-6) for e in (0.2, 1.0, 5.0)]
    assert margins[0] > margins[1] > margins[2]


@pytest.mark.parametrize("n", [2, 4, 8, 12, 16])
def test_dp_radius_target_eps1_m5000(n):
    """Issue 22 target: at ε₀ = 1, N ≤ 16, m = 5 000 the radius grows by ≤ 10 % (all costs included)."""
    for d in (1e-2, 1e-6, 1e-10):
        r, _ = pr.dp_prior_radius(5000, n, 1.0, 0.9 * d, 0.1 * d)
        assert l1_radius(5000, n, d) < r <= 1.10 * l1_radius(5000, n, d)


def test_dp_count_margin_against_exact_tail():
    """Chernoff's T against the exact law of ΣZ (convolution of the discrete Laplace pmf)."""
    for n, eps0, d in ((4, 1.0, 1e-3), (8, 0.5, 1e-6), (3, 2.0, 1e-2)):
        z = np.arange(-400, 401)
        pmf = _dlap_pmf(eps0, z)
        total = np.array([1.0])
        for _ in range(n):
            total = np.convolve(total, pmf)
        support = np.arange(-400 * n, 400 * n + 1)
        t = pr.dp_count_margin(n, eps0, d)
        assert total[support > t].sum() <= d  # valid
        assert total[support > t // 2].sum() > d  # and not absurdly loose


def _dp_failures(n, m, eps0, radii, reps, rng):
    p = np.full(n, 1.0 / n)
    c = rng.multinomial(m, p, size=reps)
    g = -math.expm1(-eps0)
    noisy = c + rng.geometric(g, size=c.shape) - rng.geometric(g, size=c.shape)
    clipped = np.maximum(noisy, 0).astype(float)
    s = clipped.sum(axis=1)
    assert np.all(s > 0)
    err = np.abs(clipped / s[:, None] - p).sum(axis=1)
    return [int(np.sum(err >= r)) for r in radii]


def test_dp_ball_coverage_by_simulation_with_power():
    """The ball contains P w.p. ≥ 1 − δ; the un-widened eq. (7) radius fails the same test (noise-dominated)."""
    rng = np.random.default_rng(2024)
    n, m, eps0, d, reps = 4, 4000, 0.02, 0.01, 20000
    r, m_low = pr.dp_prior_radius(m, n, eps0, 0.9 * d, 0.1 * d)  # noisy total ≈ m
    assert r < 2 and m_low < m
    limit = _binomial_test_max_failures(reps, d)
    ok, eq7 = _dp_failures(n, m, eps0, [r, l1_radius(m, n, d)], reps, rng)
    assert ok <= limit
    assert eq7 > limit
    # the target regime: coverage at the radius, and the widening is small
    rng = np.random.default_rng(7)
    r, _ = pr.dp_prior_radius(5000, 16, 1.0, 0.9 * 0.05, 0.1 * 0.05)
    assert _dp_failures(16, 5000, 1.0, [r], 5000, rng)[0] <= _binomial_test_max_failures(5000, 0.05)


# ----------------------------------------------------------------------------------------------- the sampler
@pytest.mark.parametrize("rng", [None, 11])
def test_dp_release_counts_distribution_with_power(rng):
    """OpenDP's exact sampler (rng=None) and the seeded one follow the discrete Laplace law of scale 1/ε₀."""
    eps0, size = 1.0, 20000
    noise = pr.dp_release_counts(np.full(size, 3), eps0, rng=rng) - 3
    assert noise.dtype == np.int64
    bins = np.arange(-6, 7)

    def pvalue(e):
        pmf = _dlap_pmf(e, bins)
        obs = np.array([np.sum(noise <= -6)] + [np.sum(noise == b) for b in bins[1:-1]] + [np.sum(noise >= 6)])
        exp = np.concatenate([[pmf[0] / (1 - math.exp(-e))], pmf[1:-1], [pmf[-1] / (1 - math.exp(-e))]]) * size
        return chisquare(obs, exp * size / exp.sum()).pvalue

    assert pvalue(eps0) > 1e-4
    assert pvalue(0.8 * eps0) < 1e-4  # power: a 20 % wrong scale is rejected


def test_dp_release_counts_bad_input():
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="dp_epsilon"):
            pr.dp_release_counts([1, 2], bad)
    with pytest.raises(ValueError, match="counts"):
        pr.dp_release_counts([1, -2], 1.0)


# ----------------------------------------------------------------------------------------------- LDP radius
def test_ldp_radius_grr_reduces_to_eq7_and_monotone():
    for n in (2, 5, 9):
        assert pr.ldp_ball_radius(n, 1, 40.0, 3000, 1e-6) == pytest.approx(l1_radius(3000, n, 1e-6), rel=1e-3)
    ns = [pr.ldp_ball_radius(6, 2, 1.0, n1, 1e-6) for n1 in (1000, 4000, 16000)]
    assert all(a > b for a, b in zip(ns, ns[1:]))
    assert ns[0] / ns[1] == pytest.approx(2.0, rel=0.02)  # ∝ 1/sqrt(n₁)
    es = [pr.ldp_ball_radius(6, 1, e, 4000, 1e-6) for e in (0.5, 1.0, 3.0)]
    assert all(a > b for a, b in zip(es, es[1:]))
    ds = [pr.ldp_ball_radius(6, 2, 1.0, 4000, d) for d in (1e-2, 1e-6)]
    assert ds[0] < ds[1]
    assert pr.ldp_ball_radius(16, 4, 0.1, 10, 1e-6) == math.inf


def test_ss_constants_from_the_explicit_channel():
    """p*, q* of subset selection (k = 1: GRR) read off the channel matrix: P(v ∈ S(Y) | X = x)."""
    for n, k, e in ((5, 1, 1.0), (8, 3, 0.7), (6, 2, 3.0)):
        W = pml.subset_selection(n, e, k=k).matrix
        support = np.isclose(W, W.max(axis=0, keepdims=True))  # (N, M): v ∈ S(y)
        member = W @ support.T.astype(float)  # member[x, v] = P(v ∈ S(Y) | X = x)
        p, q, gap = pr.subset_selection_constants(n, k, e)
        assert np.allclose(np.diag(member), p) and np.allclose(member[~np.eye(n, dtype=bool)], q)
        assert gap == pytest.approx(p - q)
    g = pml.grr(7, 1.3)
    assert pr.subset_selection_constants(7, 1, 1.3) == pytest.approx((g.p_star, g.q_star, g.gap), rel=1e-12)


@pytest.mark.parametrize("n,k,eps", [(5, 2, 1.0), (6, 1, 0.5), (4, 3, 2.0)])
def test_report_mgf_against_brute_force_channel(n, k, eps):
    """ψ_j of the code = min(exact conditional MGF + λ²/2, Hoeffding), the MGF computed from the explicit channel."""
    oracle = pml.subset_selection(n, eps, k=k)
    W = oracle.matrix  # (N, C(N, k)); the support of a column is the rows with the larger entry
    support = np.isclose(W, W.max(axis=0, keepdims=True))
    g = (support - oracle.q_star) / oracle.gap  # (N, M): g(y)_v as columns
    lam = np.array([0.01, 0.1, 0.7])
    psi = pr._ss_report_log_mgf(n, k, eps, lam)
    for j in range(1, n):
        sigma = np.where(np.arange(n) < j, 1.0, -1.0)  # the bound depends on j only (symmetry)
        sg = sigma @ g  # σ·g(y) per output
        assert np.allclose(W @ sg, sigma)  # unbiased: E[σ·g(Y) | x] = σ_x
        # log E[exp(λ(σ·g(Y) − σ_x)) | x] from the channel: (λ, x)
        cond = np.log(np.einsum("xy,lxy->lx", W, np.exp(lam[:, None, None] * (sg[None, None, :] - sigma[None, :, None]))))
        exact = lam**2 / 2 + cond.max(axis=1)
        rng_ = sg.max() - sg.min()
        hoeff = lam**2 * rng_**2 / 8
        assert np.allclose(psi[j - 1], np.minimum(exact, hoeff), rtol=1e-9)


def test_projection_lemma_property():
    """‖Π(v) − Q‖₁ ≤ ‖v − Q‖₁ whenever Σv = 1 (docs/design.md §11.2), and the row-wise projection helper is exact."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        n = int(rng.integers(2, 9))
        v = rng.normal(size=n) * rng.exponential()
        v += (1 - v.sum()) / n
        q = rng.dirichlet(np.ones(n) * 0.5)
        pv = project_to_simplex(v)
        assert np.abs(pv - q).sum() <= np.abs(v - q).sum() + 1e-12
        assert np.allclose(_project_rows(v[None, :])[0], pv)


def test_ldp_coverage_grr_binary_with_power():
    """N = 2, GRR, P uniform: coverage ≥ 1 − δ at the radius; a radius 20 % smaller fails the same test."""
    rng = np.random.default_rng(99)
    eps1, n1, d, reps = 1.0, 2000, 1e-4, 1_000_000
    r = pr.ldp_ball_radius(2, 1, eps1, n1, d)
    o = pml.grr(2, eps1)
    c0 = rng.binomial(n1, o.q_star + o.gap * 0.5, size=reps)  # support counts of value 0 (exact law)
    f0 = np.clip((c0 / n1 - o.q_star) / o.gap, 0.0, 1.0)  # Σf̂ = 1: the projection clips
    err = 2 * np.abs(f0 - 0.5)
    limit = _binomial_test_max_failures(reps, d)
    assert np.sum(err >= r) <= limit
    assert np.sum(err >= 0.8 * r) > limit


def test_ldp_coverage_subset_selection_through_the_oracle():
    """N = 5, subset selection: reports from the oracle's own privatize, P̂ as design_from_reports computes it."""
    rng = np.random.default_rng(3)
    n, eps1, n1, reps, d = 5, 1.0, 400, 1500, 0.05
    o = pml.subset_selection(n, eps1, k=2)
    p = np.array([0.35, 0.25, 0.2, 0.15, 0.05])
    reports = o.privatize(rng.choice(n, n1 * reps, p=p), rng=rng).reshape(reps, n1, 2)
    counts = np.stack([np.bincount(r.ravel(), minlength=n) for r in reports.astype(np.int64)])
    f = (counts / n1 - o.q_star) / o.gap
    assert np.allclose(f.sum(axis=1), 1.0)
    err = np.abs(_project_rows(f) - p).sum(axis=1)
    r = pr.ldp_ball_radius(n, 2, eps1, n1, d)
    assert np.sum(err >= r) <= _binomial_test_max_failures(reps, d)
    assert np.quantile(err, 1 - d) > 0.5 * r  # the bound is not vacuous


def test_ldp_generic_radius():
    assert pr.ldp_generic_radius(4, 0.3, 100000, 1e-6) == pytest.approx(
        2 * 4 * math.sqrt(math.log(8 / 1e-6) / 200000) / 0.3)
    assert pr.ldp_generic_radius(4, 0.3, 10, 1e-6) == math.inf


# ------------------------------------------------------------------------------------------- prior_radius
def test_prior_radius_round_trip_each_source():
    assert PRIOR_SOURCES == ("public sample", "dp", "ldp reports")
    assert prior_radius("public sample", 5, 1e-6, {"m": 1000}) == l1_radius(1000, 5, 1e-6)
    params = {"dp_epsilon": 1.0, "noisy_total": 5000, "delta_ball": 0.9e-6, "delta_total": 1e-7}
    assert prior_radius("dp", 5, 1e-6, params) == pr.dp_prior_radius(5000, 5, 1.0, 0.9e-6, 1e-7)[0]
    assert prior_radius("ldp reports", 5, 1e-3, {"oracle": "SS", "k": 2, "ldp_epsilon": 1.0, "n_reports": 9000}) \
        == pr.ldp_ball_radius(5, 2, 1.0, 9000, 1e-3)
    assert prior_radius("ldp reports", 5, 1e-3, {"oracle": "GRR", "ldp_epsilon": 1.0, "n_reports": 9000}) \
        == pr.ldp_ball_radius(5, 1, 1.0, 9000, 1e-3)
    assert prior_radius("ldp reports", 5, 1e-3, {"oracle": "HR", "ldp_epsilon": 1.0, "n_reports": 9000,
                                                 "p_star": 0.7, "q_star": 0.5}) \
        == pytest.approx(pr.ldp_generic_radius(5, 0.2, 9000, 1e-3), rel=1e-12)
    with pytest.raises(ValueError, match="delta_ball"):
        prior_radius("dp", 5, 1e-5, params)
    with pytest.raises(ValueError, match="lack 'noisy_total'"):
        prior_radius("dp", 5, 1e-6, {"dp_epsilon": 1.0, "delta_ball": 0.9e-6, "delta_total": 1e-7})
    with pytest.raises(ValueError, match="prior_source must be one of"):
        prior_radius("public", 5, 1e-6, {"m": 3})
