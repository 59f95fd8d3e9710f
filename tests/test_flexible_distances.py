"""Lossy Wasserstein distances and distortions (Bansal et al., Defs. 1, 2, 7, eqs. (3), (38), (39))."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import linprog

from pml_design.flexible import (
    check_accuracy,
    d_drmv,
    d_drop,
    d_hist,
    d_move,
    d_supp,
    empirical_lossy_beta,
    lossy_wavg,
    lossy_winf,
    lossy_winf_1d,
    lossy_winf_general,
)


def _direct_phi_lp(P, Q, C, gamma, allowed=None, objective=None):
    """Direct LP over Φ^γ(P, Q) on Ω = the index set: min of objective (or of the TV loss)."""
    n = P.size
    nv = n * n + 2 * n  # φ, u, v
    A, b = [], []
    for i in range(n):  # ±(φ1 - P) <= u
        for s in (1, -1):
            r = np.zeros(nv)
            r[i * n:(i + 1) * n] = s
            r[n * n + i] = -1
            A.append(r)
            b.append(s * P[i])
    for j in range(n):
        for s in (1, -1):
            r = np.zeros(nv)
            r[j:n * n:n] = s
            r[n * n + n + j] = -1
            A.append(r)
            b.append(s * Q[j])
    loss = np.zeros(nv)
    loss[n * n:] = 0.5
    A_eq = [np.concatenate([np.ones(n * n), np.zeros(2 * n)])]
    bounds = [(0, None)] * nv
    if allowed is not None:
        for idx, ok in enumerate(allowed.ravel()):
            if not ok:
                bounds[idx] = (0, 0)
    if objective is None:
        c = loss
    else:
        A.append(loss)
        b.append(gamma)
        c = np.concatenate([objective.ravel(), np.zeros(2 * n)])
    res = linprog(c, A_ub=np.array(A), b_ub=np.array(b), A_eq=np.array(A_eq), b_eq=[1.0], bounds=bounds, method="highs")
    return res.fun if res.status == 0 else np.inf


def _direct_winf(P, Q, C, gamma):
    for r in np.unique(np.concatenate([[0.0], C.ravel()])):
        if _direct_phi_lp(P, Q, C, gamma, allowed=C <= r) <= gamma + 1e-9:
            return r
    raise AssertionError


def test_winf_matches_direct_lp_of_definition():
    rng = np.random.default_rng(0)
    for _ in range(25):
        B = rng.integers(2, 6)
        P = rng.integers(0, 4, B).astype(float)
        Q = rng.integers(0, 4, B).astype(float)
        P[rng.integers(B)] += 1
        Q[rng.integers(B)] += 1
        gamma = float(rng.choice([0.0, 0.1, 0.25, 0.5, 0.8]))
        g = np.arange(B, dtype=float)
        C = np.abs(g[:, None] - g[None, :])
        ref = _direct_winf(P / P.sum(), Q / Q.sum(), C, gamma)
        assert lossy_winf(P, Q, gamma) == ref
        assert lossy_winf_general(P, Q, C, gamma) == ref


def test_general_metric_space_matches_direct_lp():
    rng = np.random.default_rng(1)
    for _ in range(10):
        pts = rng.random((4, 2))
        C = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
        P, Q = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        gamma = float(rng.choice([0.0, 0.2, 0.5]))
        assert lossy_winf_general(P, Q, C, gamma) == pytest.approx(_direct_winf(P, Q, C, gamma))


def _quantile_winf(x, y):
    """γ = 0 on the line: sup |F^{-1} - G^{-1}| via merged integer breakpoints."""
    nx, ny = x.sum(), y.sum()
    cx = np.cumsum(x) * ny
    cy = np.cumsum(y) * nx
    br = np.unique(np.concatenate([[0], cx, cy]))
    best = 0
    for lo, hi in zip(br[:-1], br[1:]):
        u = lo  # the interval (lo, hi] of "scaled mass"
        i = np.searchsorted(cx, u, side="right")
        j = np.searchsorted(cy, u, side="right")
        best = max(best, abs(i - j))
    return best


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=2, max_size=8), st.lists(st.integers(0, 5), min_size=2, max_size=8))
def test_winf_gamma0_equals_quantile_formula(a, b):
    B = max(len(a), len(b))
    x = np.pad(np.array(a), (0, B - len(a)))
    y = np.pad(np.array(b), (0, B - len(b)))
    if x.sum() == 0 or y.sum() == 0:
        return
    assert lossy_winf(x, y, 0.0) == _quantile_winf(x, y)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_lemmas_1_and_7(data):
    B = data.draw(st.integers(2, 7))
    vec = st.lists(st.integers(0, 4), min_size=B, max_size=B).filter(lambda v: sum(v) > 0)
    P, Q, R = (np.array(data.draw(vec), float) for _ in range(3))
    g1, g2 = data.draw(st.sampled_from([0, 0.1, 0.3])), data.draw(st.sampled_from([0, 0.2, 0.4]))
    # Lemma 1: lossy triangle inequality
    assert lossy_winf(P, R, g1 + g2) <= lossy_winf(P, Q, g1) + lossy_winf(Q, R, g2)
    # Lemma 7: W^∞_γ = 0 iff TV <= γ
    tv = 0.5 * np.abs(P / P.sum() - Q / Q.sum()).sum()
    assert (lossy_winf(P, Q, g2) == 0) == (tv <= g2 + 1e-12)


def test_lemma5_and_wavg_matches_direct_lp():
    rng = np.random.default_rng(3)
    for _ in range(12):
        B = 5
        P, Q = rng.dirichlet(np.ones(B)), rng.dirichlet(np.ones(B))
        g = np.arange(B, dtype=float)
        C = np.abs(g[:, None] - g[None])
        th = float(rng.choice([0.0, 0.1, 0.3]))
        w = lossy_wavg(P, Q, th)
        assert w == pytest.approx(_direct_phi_lp(P, Q, C, th, objective=C), abs=1e-8)
        # Lemma 5: W_β <= W^∞_β <= W_β' / (β - β')
        beta, beta_p = 0.4, 0.1
        wi = lossy_winf(P, Q, beta)
        assert lossy_wavg(P, Q, beta) <= wi + 1e-9
        assert wi <= lossy_wavg(P, Q, beta_p) / (beta - beta_p) + 1e-9


def test_lemma6_point_mass_and_laplace_example():
    rng = np.random.default_rng(4)
    grid = np.linspace(-40, 40, 8001)
    b = 2.0
    dens = np.exp(-np.abs(grid) / b)
    for gamma in (0.05, 0.2):
        # W^∞_γ(δ_0, Lap(b)) = b ln(1/γ) up to the grid spacing (Sec. 3 Laplace example, Lemma 6)
        w = lossy_winf_1d([0.0], [1.0], grid, dens, gamma)
        assert w == pytest.approx(b * np.log(1 / gamma), abs=0.02)
    s = rng.normal(size=200)
    for gamma in (0.0, 0.1):
        beta = lossy_winf_1d([0.0], [1.0], s, np.ones_like(s), gamma)
        assert np.mean(np.abs(s) > beta) <= gamma + 1e-12
        assert np.mean(np.abs(s) > beta - 1e-9) > gamma
        assert empirical_lossy_beta(np.abs(s), gamma) == pytest.approx(beta)
    assert check_accuracy([0.1, 0.2, 5.0], beta=0.2, gamma=0.34)
    assert not check_accuracy([0.1, 0.2, 5.0], beta=0.2, gamma=0.3)


def test_d_drop_and_d_move():
    assert d_drop([3, 2], [1, 2]) == pytest.approx(0.4)
    assert d_drop([3, 2], [4, 0]) == np.inf
    assert d_drop([0, 0], [0, 0]) == 0.0
    assert d_move([2, 0, 1], [0, 2, 1]) == 1.0
    assert d_move([2, 0, 1], [0, 2, 0]) == np.inf
    # ∂_move is max |sorted(x)_i - sorted(y)_i| for equal sizes
    x, y = np.array([1, 0, 3, 0, 1]), np.array([0, 2, 0, 0, 3])
    sx, sy = np.repeat(np.arange(5), x), np.repeat(np.arange(5), y)
    assert d_move(x, y) == np.max(np.abs(sx - sy))


def _drmv_brute(x, y, eta):
    best = np.inf
    for z in itertools.product(*[range(c + 1) for c in x]):
        z = np.array(z)
        if z.sum() != y.sum():
            continue
        dz = d_drop(x, z) if x.sum() else 0.0
        mv = d_move(z, y) if z.sum() else 0.0
        best = min(best, dz + eta * mv)
    return best


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=4, max_size=4), st.lists(st.integers(0, 2), min_size=4, max_size=4),
       st.sampled_from([0.5, 1.0, 3.0]))
def test_drmv_equals_brute_force(a, b, eta):
    x, y = np.array(a), np.array(b)
    if y.sum() > x.sum():
        assert d_drmv(x, y, eta) == np.inf
        return
    ref = _drmv_brute(x, y, eta) if x.sum() else 0.0
    assert d_drmv(x, y, eta) == pytest.approx(ref)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=4, max_size=4), min_size=3, max_size=3))
def test_drmv_triangle_inequality(hs):
    x, y, z = (np.array(h) for h in hs)
    assert d_drmv(x, z, 1.0) <= d_drmv(x, y, 1.0) + d_drmv(y, z, 1.0) + 1e-12


def test_drmv_eta_zero_not_a_quasi_metric():
    """Erratum E6: at η = 0, ∂_drmv(x, y) = 0 for distinct x, y of equal size (brute force)."""
    x, y = np.array([1, 0, 0]), np.array([0, 0, 1])
    assert _drmv_brute(x, y, 0.0) == 0.0
    with pytest.raises(ValueError):
        d_drmv(x, y, 0.0)


def test_d_supp_counterexample_app_h3():
    """Erratum E9: d_supp is not max(|min1-min2|, |max1-max2|)."""
    assert d_supp([0, 10], [0, 5, 10]) == 5.0
    assert d_supp([], []) == 0.0 and d_supp([1], []) == np.inf


def test_d_hist_with_positions_and_empty():
    assert d_hist([1, 0, 1], [1, 1], positions_prime=[0.5, 2.5]) == 0.5
    assert d_hist([0, 0], [0, 0]) == 0.0
    assert d_hist([0, 1], [0, 0]) == np.inf
    assert d_hist([2, 0, 0, 2], [1, 0, 0, 1]) == 0.0


def test_exact_integer_arithmetic_large_counts():
    # masses that do not normalise exactly in floating point
    x = np.array([10**6 + 1, 0, 0, 3 * 10**6 - 1])
    y = np.array([0, 10**6 + 1, 0, 3 * 10**6 - 1])
    assert lossy_winf(x, y, 0.0) == 1.0
    assert lossy_winf(x, y, 0.25) == 1.0
    assert lossy_winf(x, y, 0.2500003) == 0.0


@pytest.mark.parametrize("call", [
    lambda: lossy_winf([1, 2], [1, 2, 3], 0.1),
    lambda: lossy_winf([1, -2], [1, 2], 0.1),
    lambda: lossy_winf([1, 2], [1, 2], 1.5),
    lambda: lossy_winf([0, 0], [1, 2], 0.1),
    lambda: lossy_winf([1, np.nan], [1, 2], 0.1),
    lambda: d_drop([1.5, 2], [1, 2]),
    lambda: d_drmv([1, 2], [1, 2], -1),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()
