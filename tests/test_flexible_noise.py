"""Shifted-truncated Laplace noise π_q: density, CDF, sampler (Bansal et al., Sec. 5.1 / Alg. 1)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats

from pml_design.flexible import (
    boolean_pareto_delta,
    boolean_probabilities,
    delta_star,
    sample_stlap_noise,
    stlap_noise_cdf,
    stlap_noise_pdf,
)


@pytest.mark.parametrize("q,eps", [(3.0, 0.5), (20.0, 1.0), (0.7, 2.0), (400.0, 0.05)])
def test_pdf_integrates_to_one_and_cdf_matches_quadrature(q, eps):
    total, _ = integrate.quad(stlap_noise_pdf, -q, 0, args=(q, eps), points=[-q / 2], limit=200)
    assert total == pytest.approx(1.0, abs=1e-9)
    for z in np.linspace(-q, 0, 7):
        num, _ = integrate.quad(stlap_noise_pdf, -q, z, args=(q, eps), points=[-q / 2] if z > -q / 2 else None, limit=200)
        assert stlap_noise_cdf(z, q, eps) == pytest.approx(num, abs=1e-9)


def test_cdf_limits_symmetry_and_no_overflow():
    q, eps = 5000.0, 2.0  # eps*q/2 = 5000: exp would overflow
    z = np.array([-q - 1, -q, -q / 2, 0.0, 1.0])
    F = stlap_noise_cdf(z, q, eps)
    assert np.all(np.isfinite(F))
    assert F[0] == 0 and F[1] == 0 and F[2] == pytest.approx(0.5) and F[3] == 1 and F[4] == 1
    zz = np.linspace(-30, -1, 9)
    assert np.allclose(stlap_noise_cdf(zz, 30, 0.7), 1 - stlap_noise_cdf(-30 - zz, 30, 0.7))


def test_cdf_at_minus_q_plus_one_is_delta_star():
    for q, eps in [(2.0, 1.0), (10.0, 0.3), (50.95, 0.5)]:
        assert stlap_noise_cdf(-q + 1, q, eps) == pytest.approx(delta_star(eps, q), rel=1e-10)


def test_noise_reproduces_boolean_probabilities():
    # Pr[Z > -k] = p_k of eq. (9) (the derivation of σ(t) in Sec. 5.1), even q
    eps, q = 0.8, 10
    p = boolean_probabilities(eps, q)
    k = np.arange(q + 1)
    assert np.allclose(1 - stlap_noise_cdf(-k.astype(float), q, eps), p, atol=1e-12)
    assert p[1] == pytest.approx(boolean_pareto_delta(eps, q))


def test_sampler_ks_and_power():
    q, eps = 12.0, 0.6
    z = sample_stlap_noise(q, eps, size=20000, rng=1)
    assert z.min() >= -q and z.max() <= 0
    assert stats.kstest(z, lambda t: stlap_noise_cdf(t, q, eps)).pvalue > 1e-3
    # power: the same test rejects a slightly wrong epsilon and a slightly wrong q
    assert stats.kstest(z, lambda t: stlap_noise_cdf(t, q, eps * 1.15)).pvalue < 1e-3
    assert stats.kstest(z, lambda t: stlap_noise_cdf(t, q * 1.05, eps)).pvalue < 1e-3


def test_sampler_degenerate_q_zero_and_seeding():
    assert np.all(sample_stlap_noise(0.0, 1.0, size=5, rng=0) == 0)
    a = sample_stlap_noise(3.0, 1.0, size=4, rng=np.random.default_rng(7))
    b = sample_stlap_noise(3.0, 1.0, size=4, rng=7)
    assert np.array_equal(a, b)


@settings(max_examples=25, deadline=None)
@given(q=st.floats(0.1, 500), eps=st.floats(0.01, 5), u=st.floats(0, 1))
def test_cdf_monotone_in_unit_interval(q, eps, u):
    z1, z2 = -q * u, -q * u * 0.5
    F1, F2 = stlap_noise_cdf(z1, q, eps), stlap_noise_cdf(z2, q, eps)
    assert 0 <= F1 <= F2 + 1e-12 <= 1 + 1e-12


@pytest.mark.parametrize("bad", [dict(q=-1.0, epsilon=1.0), dict(q=1.0, epsilon=0.0), dict(q=1.0, epsilon=np.nan),
                                 dict(q=np.inf, epsilon=1.0)])
def test_bad_parameters(bad):
    with pytest.raises(ValueError):
        stlap_noise_cdf(0.0, **bad)
    with pytest.raises(ValueError):
        sample_stlap_noise(size=3, rng=0, **bad)
    with pytest.raises(TypeError):
        sample_stlap_noise(1.0, "1", size=3)
