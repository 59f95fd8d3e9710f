"""Pricing of the estimation design: the three-level (nested U ⊆ V) directions and their local search.

Independent paths: the directions against the bitmask enumeration of :func:`pml_design.design.rays.l1_ball_rays`
and the cone test :func:`in_cone`; the search's O(N) incremental values against the explicit reduced costs, and
its best ray against the maximum over the complete ray list.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import pml_design as pml
from pml_design.design import enumerate_rays
from pml_design.design.estimation.pricing import _nested_values, nested_pricing, reduced_costs
from pml_design.design.estimation.seeds import nested_directions, nested_levels, subset_directions
from pml_design.design.rays import in_cone, l1_ball_rays


def _normalised_set(C: np.ndarray, p: np.ndarray) -> set:
    C = C / (p @ C)
    return {tuple(np.round(c, 9)) for c in C.T}


def _all_nested(n: int) -> tuple[np.ndarray, np.ndarray]:
    states = np.array(list(itertools.product(range(3), repeat=n)))
    return states == 2, states >= 1


@pytest.mark.parametrize("radius_rule", ["inside", "outside", "wide", "fixed"])
def test_nested_directions_are_exactly_the_l1_ball_ray_family(radius_rule):
    rng = np.random.default_rng(3)
    n = 6
    p = rng.dirichlet(np.ones(n))
    beta = {"inside": 1.5 * p.min(), "outside": 2.5 * p.min(), "wide": 0.8, "fixed": 0.0}[radius_rule]
    ball = pml.L1Ball(p, beta)
    for eps in (0.4, 1.3):
        U, V = _all_nested(n)
        _, _, ok = nested_levels(ball, eps, U, V)
        C = nested_directions(ball, eps, U[ok], V[ok])
        assert in_cone(C, ball, eps).all()
        # the family is l1_ball_rays's (a second derivation, by bitmasks), plus only cone points
        ref = _normalised_set(l1_ball_rays(p, beta, eps), p)
        assert ref <= _normalised_set(C, p)


@pytest.mark.parametrize("uset_kind", ["simplex", "finite", "prior"])
def test_nested_directions_lie_in_the_cone_of_every_set(uset_kind):
    rng = np.random.default_rng(11)
    n = 7
    p = rng.dirichlet(np.ones(n))
    uset = {"simplex": pml.Simplex(n), "finite": pml.FiniteSet(rng.dirichlet(np.ones(n), size=4)),
            "prior": pml.FiniteSet(p[None])}[uset_kind]
    U = rng.random((400, n)) < 0.3
    V = U | (rng.random((400, n)) < 0.5)
    _, _, ok = nested_levels(uset, 1.0, U, V)
    assert ok.any()
    assert in_cone(nested_directions(uset, 1.0, U[ok], V[ok]), uset, 1.0).all()


def test_nested_directions_extend_the_two_level_ones():
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(9))
    ball = pml.L1Ball(p, 0.3)
    masks = rng.random((30, 9)) < 0.4
    np.testing.assert_allclose(nested_directions(ball, 1.0, masks, np.ones_like(masks)),
                               subset_directions(ball, 1.0, masks), rtol=1e-13, atol=1e-13)
    V = masks | (rng.random((30, 9)) < 0.5)
    _, _, ok = nested_levels(ball, 1.0, np.zeros_like(V), V)
    C = nested_directions(ball, 1.0, np.zeros_like(V), V)
    np.testing.assert_array_equal(C[:, ok], V[ok].T.astype(float))  # U empty: the indicator of V


def _random_dual(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    A = rng.normal(size=(n, n))
    return A @ A.T / n, rng.normal(size=n)


def test_incremental_values_match_the_explicit_reduced_costs():
    rng = np.random.default_rng(8)
    n = 12
    p = rng.dirichlet(np.ones(n))
    ball = pml.L1Ball(p, 3 * p.min())
    M, nu = _random_dual(n, rng)
    S = rng.integers(0, 3, size=(200, n))
    U, W = S == 2, S == 1
    mU, mW = U.astype(float) @ M, W.astype(float) @ M
    stats = (np.einsum("ij,ij->i", mU, U), np.einsum("ij,ij->i", mU, W), np.einsum("ij,ij->i", mW, W))
    vals = _nested_values(ball, 1.0, p, M, nu, U, W, stats)
    ok = np.isfinite(vals)
    C = nested_directions(ball, 1.0, U[ok], U[ok] | W[ok])
    np.testing.assert_allclose(vals[ok], -reduced_costs(C / (p @ C), M, nu), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_search_finds_the_best_enumerated_ray_on_small_alphabets(seed):
    # hard regimes too: a radius beyond twice the rarest probability, a rare category
    rng = np.random.default_rng(seed)
    n = 6
    p = rng.dirichlet(np.ones(n) * 0.7)
    for beta in (0.5 * p.min(), 2.5 * p.min()):
        ball = pml.L1Ball(p, beta)
        M, nu = _random_dual(n, rng)
        R = enumerate_rays(ball, 1.0)
        best = float(-reduced_costs(R / (p @ R), M, nu).min())
        C = nested_pricing(ball, 1.0, p, M, nu, np.random.default_rng(0), restarts=30)
        np.testing.assert_allclose(p @ C, 1.0)
        assert in_cone(C, ball, 1.0).all()
        found = float(-reduced_costs(C, M, nu).min())
        assert found <= best + 1e-9 * max(1.0, abs(best))  # never above the true maximum (they are cone points)
        assert found == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_search_respects_its_deadline_and_start_states():
    rng = np.random.default_rng(2)
    n = 20
    p = rng.dirichlet(np.ones(n))
    ball = pml.L1Ball(p, 0.2)
    M, nu = _random_dual(n, rng)
    start = np.full((1, n), 2)
    C = nested_pricing(ball, 1.0, p, M, nu, np.random.default_rng(0), starts=start, restarts=50, deadline=0.0)
    assert C.shape[1] >= 1 and in_cone(C, ball, 1.0).all()  # the first start always runs; no random one after


def test_valid_only_leaves_out_exactly_the_masks_without_a_column():
    rng = np.random.default_rng(6)
    p = rng.dirichlet(np.ones(8))
    ball = pml.L1Ball(p, 0.1)
    U = rng.random((100, 8)) < 0.2
    V = U | (rng.random((100, 8)) < 0.3)
    _, _, ok = nested_levels(ball, 0.5, U, V)
    assert ok.any() and not ok.all()
    np.testing.assert_array_equal(nested_directions(ball, 0.5, U, V, valid_only=True),
                                  nested_directions(ball, 0.5, U, V)[:, ok])


def test_master_columns_give_back_their_level_sets_as_starts():
    """``rounds._level_states`` inverts ``nested_directions`` (a column's top level is U, its zeros are outside V) for
    the heaviest columns, in weight order; two-level columns (V = everything) come back with no symbol out."""
    from pml_design.design.estimation.rounds import _level_states

    rng = np.random.default_rng(8)
    n = 9
    p = rng.dirichlet(np.ones(n))
    ball = pml.L1Ball(p, 0.4)
    U = rng.random((300, n)) < 0.3
    V = U | (rng.random((300, n)) < 0.4)
    alpha, beta, ok = nested_levels(ball, 1.0, U, V)
    distinct = ok & (U.sum(axis=1) > 0) & np.any(V & ~U, axis=1)  # three visible levels (two where V = everything)
    C = nested_directions(ball, 1.0, U[distinct], V[distinct])
    lv = C.max(axis=0)
    keep = np.array([np.unique(np.round(c / m, 9)).size == (2 if np.all(c > 0) else 3) for c, m in zip(C.T, lv)])
    assert keep.sum() >= 20
    C, Us, Vs = C[:, keep] / (p @ C[:, keep]), U[distinct][keep], V[distinct][keep]
    w = rng.random(C.shape[1])
    states = _level_states(C, w, 12)
    order = np.argsort(-w)[:12]
    np.testing.assert_array_equal(states, np.where(Us[order], 2, np.where(Vs[order], 1, 0)))
    # the LDP seed's two-level columns: U and V∖U only
    W = pml.subset_selection(n, 1.0).matrix
    s = _level_states(W, W.sum(axis=0), 5)
    assert s.shape == (5, n) and set(np.unique(s)) <= {1, 2} and np.all((s == 2).sum(axis=1) >= 1)


@pytest.mark.parametrize("n, radius, eps", [(12, 0.1, 1.0), (30, 0.3, 2.0), (40, 2.5, 0.5), (60, 0.05, 4.0)])
def test_lockstep_climbs_find_what_one_at_a_time_finds(monkeypatch, n, radius, eps):
    """``pricing.BATCH_CLIMBS``: the ℓ1 ball's climbs in lockstep give the same candidate columns as one start at a
    time (each climb is the same sequence of best moves; the set of states met is the same), here and where the work
    budget would bind (chunks of one start then)."""
    from pml_design.design.estimation import pricing as PR

    rng = np.random.default_rng(n)
    p = rng.dirichlet(np.full(n, 0.7))
    p = np.maximum(p, 1e-4) / np.maximum(p, 1e-4).sum()
    ball = pml.L1Ball(p, radius)
    A = rng.standard_normal((n, n))
    M = A @ A.T / n
    nu = rng.random(n) * np.trace(M) / n * 3
    for work in (10**6, 3 * n):
        out = []
        for b in (0, 64):
            monkeypatch.setattr(PR, "BATCH_CLIMBS", b)
            out.append(PR.nested_pricing(ball, eps, p, M, nu, np.random.default_rng(5), restarts=40, work=work))
        assert out[0].shape == out[1].shape
        np.testing.assert_array_equal(out[0], out[1])


def test_a_value_that_overflows_is_skipped_not_priced():
    """At ε near 700 the levels ``e^ε`` of a three-level column overflow its value; such a column is skipped (−inf),
    never priced as +inf or NaN, and numpy's overflow warning no longer reaches the caller."""
    import warnings

    from pml_design.design.estimation.pricing import _values

    alpha = np.array([1e300, 2.0, 3.0])
    beta = np.array([1.0, 1.0, 1.0])
    ok = np.array([True, True, True])
    stats = (np.ones(3), np.ones(3), np.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        val = _values(alpha, beta, ok, np.full(3, 1e-300), np.full(3, 0.5), np.zeros(3), np.zeros(3), stats)
    assert val[0] == -np.inf and np.all(np.isfinite(val[1:]))
