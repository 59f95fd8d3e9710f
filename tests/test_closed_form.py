"""Closed-form mechanisms against the exact designer (independent derivations)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pml_design as pd
from pml_design.design import design
from pml_design.design.utilities import as_utility
from pml_design.mechanisms.closed_form import (
    binary_optimal,
    first_region_mechanism,
    k_singular,
    randomized_response,
    randomized_response_for_pml,
    theorem5_binary,
    uniform_optimal,
    uniform_optimal_mutual_information,
)
from tests.conftest import EXAMPLE1, EXAMPLE1_PRIOR

GRID = [
    (p1, frac, efrac)
    for p1 in (0.5, 0.6, 0.75, 0.9)
    for frac in (0.0, 0.3, 0.8)
    for efrac in (0.1, 0.5, 1.0)
]


@pytest.mark.parametrize("p1,frac,efrac", GRID)
@pytest.mark.parametrize("utility", ["mutual_information", "map_accuracy"])
def test_theorem5_equals_designer(p1, frac, efrac, utility):
    p = np.array([p1, 1 - p1])
    beta = frac * 2 * (1 - p1)
    eps = efrac * -math.log(p1 - beta / 2)
    if eps == 0:
        return
    ball = pd.L1Ball(p, beta)
    res = design(ball, eps, utility=utility)
    T5 = theorem5_binary(p, beta, eps)
    u = as_utility(utility)
    assert u.value(T5.matrix, p) == pytest.approx(res.utility, abs=1e-9)
    assert pd.leakage_capacity(T5, ball) <= eps + 1e-12


def test_theorem5_appendix_c_sign_is_the_typo():
    p1, beta, eps = 0.7, 0.2, 0.4
    e = math.exp(eps)
    p11_appendix = e * (1 - p1 - beta / 2) / (1 + beta * e)
    p12 = (1 - e * (1 - p1 - beta / 2)) / (1 + beta * e)
    assert abs(p11_appendix + p12 - 1) > 0.05  # the appendix's entry breaks the row sum
    T5 = theorem5_binary([p1, 1 - p1], beta, eps).matrix
    np.testing.assert_allclose(T5.sum(axis=1), 1.0)
    assert T5[0, 0] == pytest.approx(e * (1 - p1 + beta / 2) / (1 + beta * e))


def test_remark3_warner():
    for eps in (0.1, 1.0, 2.0):
        np.testing.assert_allclose(theorem5_binary([0.5, 0.5], 1.0 - 1e-12, eps).matrix, randomized_response(2, eps).matrix, atol=1e-10)
        assert pd.leakage_capacity(randomized_response(2, eps), pd.Simplex(2)) == pytest.approx(eps)


def test_example1_reproduced_by_designer_and_closed_form():
    eps = math.log(9 / 8)
    np.testing.assert_allclose(first_region_mechanism(EXAMPLE1_PRIOR, eps).matrix, EXAMPLE1, atol=1e-15)
    res = design(EXAMPLE1_PRIOR, eps)
    assert res.utility == pytest.approx(as_utility("mutual_information").value(EXAMPLE1, EXAMPLE1_PRIOR), abs=1e-12)
    # same columns up to order
    got = sorted(map(tuple, np.round(res.matrix.T, 10)))
    want = sorted(map(tuple, np.round(EXAMPLE1.T, 10)))
    assert got == want


@pytest.mark.parametrize("utility", ["mutual_information", "map_accuracy", "chi_square_information", "total_variation_information"])
def test_first_region_mechanism_optimal_for_all_subconvex(utility, rng):
    for _ in range(3):
        p = rng.dirichlet(np.ones(4) * 3)
        eps = 0.8 * pd.privacy_regions(p).thresholds[1]
        W = first_region_mechanism(p, eps)
        assert pd.epsilon_min(W, p) == pytest.approx(eps)
        assert as_utility(utility).value(W.matrix, p) == pytest.approx(design(p, eps, utility=utility).utility, abs=1e-9)


@pytest.mark.parametrize("p", [[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]])
@pytest.mark.parametrize("eps", [0.1, 0.4, 0.9, 1.4, 2.5])
def test_binary_optimal_every_region(p, eps):
    W = binary_optimal(p, eps)
    assert pd.epsilon_min(W, p) <= eps + 1e-12
    for u in ("mutual_information", "map_accuracy"):
        assert as_utility(u).value(W.matrix, np.array(p)) == pytest.approx(design(p, eps, utility=u).utility, abs=1e-9)


@pytest.mark.parametrize("n", [4, 6, 7])
def test_uniform_closed_form_equals_designer(n):
    p = np.full(n, 1 / n)
    for eps in (0.2, 0.7, math.log(n / 2), 1.6):
        W = uniform_optimal(n, eps)
        assert pd.epsilon_min(W, p) <= eps + 1e-12
        mi = as_utility("mutual_information").value(W.matrix, p)
        assert mi == pytest.approx(uniform_optimal_mutual_information(n, eps), abs=1e-12)
        assert mi == pytest.approx(design(p, eps).utility, abs=1e-9)


def test_k_singular_is_doubly_stochastic_and_log_n_over_k():
    W = k_singular(10, 2).matrix
    np.testing.assert_allclose(W.sum(axis=0), 1)
    np.testing.assert_allclose(W.sum(axis=1), 1)
    assert pd.epsilon_min(W, np.full(10, 0.1)) == pytest.approx(math.log(5))
    np.testing.assert_allclose(uniform_optimal(10, math.log(5)).matrix.round(12), uniform_optimal(10, math.log(5)).matrix.round(12))


def test_rr_for_pml_is_tight_and_beats_ldp(rng):
    for _ in range(10):
        n = int(rng.integers(2, 7))
        p = rng.dirichlet(np.ones(n) * 3)
        ball = pd.L1Ball(p, 0.5 * p.min())
        eps = float(rng.uniform(0.1, 1.5))
        rr = randomized_response_for_pml(ball, eps)
        cap = pd.leakage_capacity(rr, ball)
        assert cap <= eps + 1e-12
        if not np.allclose(rr.matrix, np.eye(n)):
            assert cap == pytest.approx(eps, abs=1e-10)
        # PML calibration is never noisier than LDP RR at the same eps
        assert rr.matrix[0, 0] >= randomized_response(n, eps).matrix[0, 0] - 1e-12


def test_closed_form_bad_inputs():
    with pytest.raises(ValueError, match="radius"):
        theorem5_binary([0.7, 0.3], 0.7, 0.1)
    with pytest.raises(ValueError, match="epsilon"):
        theorem5_binary([0.7, 0.3], 0.1, 5.0)
    with pytest.raises(ValueError, match="first privacy region"):
        first_region_mechanism([0.5, 0.3, 0.2], 1.0)
    with pytest.raises(ValueError, match="k"):
        k_singular(3, 4)
    with pytest.raises(ValueError, match="p_hat"):
        theorem5_binary([0.5, 0.3, 0.2], 0.1, 0.1)
