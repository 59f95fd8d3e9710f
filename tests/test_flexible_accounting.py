"""Privacy accounting of STLap: paper formulas vs exact δ(ε) (Bansal et al., Thm 3, Lemmas 9-10, Cor. 1)."""

import math

import numpy as np
import pytest

from pml_design.flexible import (
    brute_force_delta,
    delta_star,
    exact_delta,
    fixed_q_delta,
    paper_corollary1_applies,
    paper_delta_explicit_bound,
    paper_lemma9_min_n,
    paper_lemma10_min_n,
    paper_theorem3_delta,
    q_for_delta,
    relative_q_bound,
    stlap_noise_cdf,
)


def _pair(K, c, c_star=None):
    """x' with K+1 bars (bar 0 has c_star items, the rest c); x = x' plus one item in bar 0."""
    xp = np.full(K + 1, c)
    if c_star is not None:
        xp[0] = c_star
    x = xp.copy()
    x[0] += 1
    return x, xp


@pytest.mark.parametrize("mode", ["relative", "fixed"])
@pytest.mark.parametrize("xs", [([3, 2, 4], [2, 2, 4]), ([1, 5, 0], [0, 5, 0]), ([6, 6], [6, 5])])
def test_exact_delta_brackets_brute_force(mode, xs):
    x, xp = map(np.array, xs)
    kw = dict(q_mode="fixed", n_public=12) if mode == "fixed" else {}
    eg = np.array([0.2, 0.8, 1.3])
    cur = exact_delta(x, xp, 0.4, 0.9, eg, **kw)
    bf = np.array([brute_force_delta(x, xp, 0.4, 0.9, e, **kw) for e in eg])
    assert np.all(cur.delta_lower <= bf + 1e-12) and np.all(bf <= cur.delta_upper + 1e-12)
    assert np.all(cur.delta_upper - cur.delta_lower < 0.01)


@pytest.mark.parametrize("eps,q,K,c", [(1.0, 20.0, 30, 25), (0.5, 40.0, 10, 60), (2.0, 6.0, 5, 4)])
def test_fixed_q_delta_is_exact_for_any_support(eps, q, K, c):
    x, xp = _pair(K, c)
    n_public = 1000
    tau = q / n_public
    cur = exact_delta(x, xp, tau, eps, [eps], q_mode="fixed", n_public=n_public)
    target = fixed_q_delta(eps, q)
    assert cur.delta_lower[0] <= target * (1 + 1e-9) + 1e-13
    assert target <= cur.delta_upper[0] * (1 + 1e-9) + 1e-13
    assert target == pytest.approx(delta_star(eps, q), rel=1e-10)


@pytest.mark.parametrize("eps,tau,n", [(1.0, 0.1, 40), (0.5, 0.05, 200), (1.0, 0.4, 10)])
def test_relative_q_single_bar_satisfies_paper_delta(eps, tau, n):
    x, xp = np.array([n + 1]), np.array([n])
    assert paper_corollary1_applies(eps, tau, n)
    cur = exact_delta(x, xp, tau, eps, [eps])
    assert cur.delta_upper[0] <= delta_star(eps, tau * n) * (1 + 1e-6)


@pytest.mark.parametrize("eps,tau,K,c,min_true", [(0.5, 0.02, 39, 50, 3.3e-3), (1.0, 0.005, 199, 50, 2.9e-3)])
def test_relative_q_many_bars_violates_paper_delta(eps, tau, K, c, min_true):
    """Erratum E1: with q = τ|x| and many non-empty bars, Theorem 3 / Corollary 1's δ is wrong."""
    x, xp = _pair(K, c)
    N = int(xp.sum())
    assert paper_corollary1_applies(eps, tau, N)
    paper = paper_theorem3_delta(eps, tau, N)
    cur = exact_delta(x, xp, tau, eps, [eps])
    assert cur.delta_lower[0] >= min_true
    assert cur.delta_lower[0] > 100 * paper
    # ... while the same pair with one non-empty bar is fine, and the replacement bound holds
    e1, d1 = relative_q_bound(eps, tau, N, K)
    assert d1 < min_true
    # not refuted by the exact computation (the upper bracket at exactly ε' is inflated by the loss
    # grid, because ε' is the largest possible privacy loss; tiny pairs are certified exactly below)
    assert exact_delta(x, xp, tau, eps, [e1]).delta_lower[0] <= d1


def test_relative_q_replacement_bound_holds_exactly_on_tiny_pairs():
    """Certification without discretisation: brute-force δ(ε') <= δ' for random small neighbours."""
    rng = np.random.default_rng(1)
    done = 0
    while done < 12:
        B = int(rng.integers(1, 4))
        xp = rng.integers(0, 9, B)
        i = int(rng.integers(B))
        x = xp.copy()
        x[i] += 1
        N = int(xp.sum())
        if N == 0:
            continue
        eps = float(rng.choice([0.3, 1.0, 2.0]))
        tau = float(rng.choice([0.1, 0.3, 0.6]))
        K = int(np.count_nonzero(np.delete(xp, i)))
        e1, d1 = relative_q_bound(eps, tau, N, K)
        assert brute_force_delta(x, xp, tau, eps, e1) <= d1 + 1e-12
        assert brute_force_delta(xp, x, tau, eps, e1) <= d1 + 1e-12
        done += 1


def test_relative_q_replacement_bound_not_refuted_on_random_pairs():
    rng = np.random.default_rng(0)
    for _ in range(8):
        B = int(rng.integers(2, 12))
        xp = rng.integers(0, 30, B)
        i = int(rng.integers(B))
        x = xp.copy()
        x[i] += 1
        eps = float(rng.choice([0.3, 1.0, 2.0]))
        tau = float(rng.choice([0.02, 0.1, 0.3]))
        N = int(xp.sum())
        if N == 0:
            continue
        K = int(np.count_nonzero(np.delete(xp, i)))
        e1, d1 = relative_q_bound(eps, tau, N, K)
        cur = exact_delta(x, xp, tau, eps, [e1, e1 + 0.01])
        assert cur.delta_lower[0] <= d1 + 1e-12
        assert cur.delta_upper[1] <= d1 + 1e-12


def test_claim4_corrected_integral():
    """Claim 4 (erratum E11): ∫_{-q'}^{-q'+1-τ} π_{q'} = (e^{ε(1-τ)} - 1)/(2(e^{εq'/2} - 1))."""
    eps, tau, qp = 0.7, 0.05, 30.0
    val = stlap_noise_cdf(-qp + 1 - tau, qp, eps)
    assert val == pytest.approx(math.expm1(eps * (1 - tau)) / (2 * math.expm1(eps * qp / 2)), rel=1e-10)
    assert val <= delta_star(eps, qp)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("tau", [0.001, 0.01, 0.1])
@pytest.mark.parametrize("nu", [0.0, 0.2, 1.0])
def test_claim5_threshold_equivalence(eps, tau, nu):
    """Claim 5: n >= N9  <=>  ln((1 - e^{-ετ(n+1)/2}) / (1 - e^{-ετn/2})) <= ε(ν + τ/2)."""
    N9 = paper_lemma9_min_n(eps, tau, nu)

    def cond(n):
        return math.log(-math.expm1(-eps * tau * (n + 1) / 2) / -math.expm1(-eps * tau * n / 2)) <= eps * (nu + tau / 2) + 1e-15

    n_hi = max(1, math.ceil(N9))
    assert cond(n_hi)
    if math.floor(N9) - 1 >= 1:
        assert not cond(math.floor(N9) - 1)
    # Corollary 1: for ν = 0 the threshold is below 2/(ετ)
    if nu == 0:
        assert N9 <= 2 / (eps * tau)


def test_lemma10_is_tau_to_zero_limit():
    for eps, nu in [(1.0, 1.0), (0.5, 0.3)]:
        lim = paper_lemma10_min_n(eps, nu)
        vals = [paper_lemma9_min_n(eps, t, nu) for t in (0.1, 0.01, 1e-4, 1e-6)]
        # N9 is decreasing in τ, so its supremum over τ > 0 is the τ -> 0+ limit of Lemma 10
        assert all(a <= b + 1e-12 for a, b in zip(vals, vals[1:]))
        assert all(v <= lim + 1e-9 for v in vals)
        assert vals[-1] == pytest.approx(lim, rel=1e-4)


def test_q_for_delta_inverts_delta_star_and_matches_table():
    d = 2.0 ** -20
    for eps, q in [(0.1, 218.35), (0.5, 50.95), (1.0, 27.42), (2.0, 15.02)]:
        assert q_for_delta(eps, d) == pytest.approx(q, abs=0.01)
        assert delta_star(eps, q_for_delta(eps, d)) == pytest.approx(d, rel=1e-9)
        assert eps * q_for_delta(eps, d) >= 2


def test_explicit_theorem3_bound_and_errors():
    for eps, q in [(0.5, 4.0), (1.0, 30.0), (0.1, 500.0)]:
        assert delta_star(eps, q) <= paper_delta_explicit_bound(eps, q) * (1 + 1e-12)
    with pytest.raises(ValueError):
        paper_theorem3_delta(1.0, 0.01, 100)  # ετn = 1 < 2
    with pytest.raises(ValueError):
        relative_q_bound(1.0, 1.5, 10, 2)
    with pytest.raises(ValueError):
        exact_delta([1, 2], [1, 4], 0.1, 1.0, [1.0])  # not neighbours
    with pytest.raises(ValueError):
        q_for_delta(1.0, 0.0)
    assert fixed_q_delta(1.0, 0.5) == 1.0
