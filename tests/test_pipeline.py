"""End-to-end (Figure 1 procedure) and the LDP comparison."""

from __future__ import annotations

import numpy as np
import pytest

import pml_design as pd
from pml_design.design import rays_cdd, solve_ray_lp
from pml_design.design.utilities import as_utility


def test_end_to_end_guarantee_holds_for_true_distribution_in_most_repetitions():
    rng = np.random.default_rng(8)
    p_true = np.array([0.4, 0.3, 0.2, 0.1])
    eps, delta, m, reps = 1.0, 0.2, 3000, 25
    ok = 0
    for _ in range(reps):
        samples = rng.choice(4, size=m, p=p_true)
        out = pd.design_from_samples(samples, 4, eps, delta)
        assert out.radius == pytest.approx(pd.l1_radius(m, 4, delta))
        assert out.result.certified_epsilon <= eps + 1e-12
        ok += pd.epsilon_min(out.result.matrix, p_true) <= eps + 1e-12
    assert ok / reps >= 1 - delta


def test_end_to_end_counts_and_statement():
    out = pd.design_from_samples([500, 300, 200], 3, 0.8, 1e-3, counts=True)
    assert out.m == 1000
    assert "PML" in out.statement() and "1 - 0.001" in out.statement()


def test_too_few_samples_says_how_many():
    with pytest.raises(ValueError, match="need m >="):
        pd.design_from_samples([0, 1, 2, 1], 3, 1.0, 1e-6)


def test_guarantee_for_mechanism_exact_vs_eq8():
    p_hat = np.full(10, 0.1)
    W = pd.k_singular(10, 2).matrix
    st = pd.guarantee_for_mechanism(W, p_hat, 200_000, 1e-6)
    assert st.epsilon_exact <= st.epsilon_bound + 1e-12
    assert st.epsilon_exact == pytest.approx(st.epsilon_bound, rel=1e-9)  # zero in every column: tight
    d_exact, d_cor3 = pd.delta_for_epsilon(W, p_hat, 200_000, st.epsilon_bound)
    assert d_exact <= d_cor3 * (1 + 1e-6)
    assert d_cor3 == pytest.approx(1e-6, rel=1e-6)


@pytest.mark.parametrize("utility", ["mutual_information", "map_accuracy"])
def test_optimal_ldp_equals_staircase_lp_from_cdd(utility, rng):
    for _ in range(3):
        n = int(rng.integers(2, 5))
        p = rng.dirichlet(np.ones(n) * 2)
        eps = float(rng.uniform(0.2, 2.0))
        res = pd.optimal_ldp(p, eps, utility=utility)
        R = rays_cdd(pd.Simplex(n), eps)  # independent enumeration (double description)
        _, val, _, _ = solve_ray_lp(R, as_utility(utility).mu(R, p))
        assert res.utility == pytest.approx(val, abs=1e-9)
        assert pd.leakage_capacity(res.matrix, pd.Simplex(n)) <= eps + 1e-12


@pytest.mark.parametrize("eps", [0.1, 0.7, 2.0])
def test_binary_optimal_ldp_is_warner_rr(eps):
    p = np.array([0.5, 0.5])
    for u in ("mutual_information", "map_accuracy"):
        val = as_utility(u).value(pd.randomized_response(2, eps).matrix, p)
        assert pd.optimal_ldp(p, eps, utility=u).utility == pytest.approx(val, abs=1e-10)


def test_pml_beats_ldp_and_comparison_object():
    p = np.array([0.45, 0.3, 0.15, 0.1])
    res = pd.design(pd.L1Ball(p, 0.05), 1.0)
    cmp = pd.compare_with_ldp(res)
    assert cmp.pml >= cmp.optimal_ldp - 1e-12
    assert cmp.optimal_ldp >= cmp.randomized_response - 1e-12
    assert cmp.rr_pml >= cmp.randomized_response - 1e-12
    assert cmp.gain_over_ldp > 1
