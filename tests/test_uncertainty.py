"""Tests of pml_design.uncertainty: exact leakage capacity and sensitivity (core paper §IV)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pml_design as pd
from tests.conftest import EXAMPLE1, EXAMPLE1_PRIOR, lp_min_output, random_mechanism


def sample_ball(rng, center, radius, size):
    """Random points of the ball ∩ simplex: Dirichlet points pulled towards the centre (stays in simplex)."""
    q = rng.dirichlet(np.ones(center.shape[0]) * rng.choice([0.2, 1.0, 5.0]), size=size)
    d = np.abs(q - center).sum(axis=1)
    t = np.minimum(1.0, radius / np.maximum(d, 1e-300))
    return center + t[:, None] * (q - center)


@pytest.mark.parametrize("radius_factor", [0.0, 0.3, 0.99, 1.0, 1.5, 3.0, 10.0])
def test_min_output_probability_matches_lp(rng, radius_factor):
    for _ in range(15):
        n = int(rng.integers(2, 7))
        center = rng.dirichlet(np.ones(n))
        radius = min(2.0, radius_factor * 2 * center.min() + (0.7 if radius_factor >= 3 else 0.0))
        ball = pd.L1Ball(center, radius)
        cols = rng.random((n, 4)) * (rng.random((n, 4)) > 0.3)
        exact = ball.min_output_probability(cols)
        for j in range(cols.shape[1]):
            val, _ = lp_min_output(ball.center, ball.radius, cols[:, j])
            assert exact[j] == pytest.approx(val, abs=1e-10)
        # the minimisers are in the ball and attain the value
        q = ball.minimizers(cols)
        for j in range(cols.shape[1]):
            assert ball.contains(q[j], atol=1e-12)
            assert q[j] @ cols[:, j] == pytest.approx(exact[j], abs=1e-12)


@pytest.mark.parametrize("beta_scale", [0.5, 1.0, 1.6, 2.5])
def test_capacity_is_never_exceeded_by_sampling_and_attained(rng, beta_scale):
    for _ in range(10):
        n = int(rng.integers(2, 6))
        center = rng.dirichlet(np.ones(n) * 2)
        radius = min(2.0, beta_scale * 2 * center.min())
        W = random_mechanism(rng, n, n, zero_frac=0.2)
        ball = pd.L1Ball(center, radius)
        cap = pd.leakage_capacity(W, ball)
        qs = sample_ball(rng, center, radius, 3000)
        # epsilon_min over samples, vectorised
        py = qs @ W
        top = W.max(axis=0)
        with np.errstate(divide="ignore"):
            vals = np.where(top > 0, np.log(top) - np.log(py), -np.inf).max(axis=1)
        assert np.all(vals <= cap + 1e-9)
        # an extreme point attains the capacity: per column, the LP vertex solution
        best = -np.inf
        for j in np.flatnonzero(top > 0):
            _, qj = lp_min_output(ball.center, ball.radius, W[:, j])
            qj = np.maximum(qj, 0)
            qj /= qj.sum()
            if np.all(qj > 1e-15):
                best = max(best, pd.epsilon_min(W, qj))
            else:  # boundary point: leakage defined on its support; capacity may be infinite
                with np.errstate(divide="ignore"):
                    best = max(best, float(np.log(top[j]) - np.log(qj @ W[:, j])))
        assert best == pytest.approx(cap, rel=1e-9, abs=1e-9) or (np.isinf(cap) and np.isinf(best))


def test_extreme_points_corollary1(rng):
    # Corollary 1: capacity over the ball = max of eps_min over its extreme points, any radius
    for radius in (0.05, 0.3, 0.9, 1.7):
        center = np.array([0.5, 0.3, 0.15, 0.05])
        ball = pd.L1Ball(center, radius)
        pts = ball.extreme_points()
        for p in pts:
            assert ball.contains(p, atol=1e-12)
        W = random_mechanism(rng, 4, 4)
        assert pd.leakage_capacity(W, pd.FiniteSet(pts)) == pytest.approx(pd.leakage_capacity(W, ball), rel=1e-12)


def test_interior_extreme_points_count():
    ball = pd.L1Ball([0.25, 0.25, 0.5], 0.2)
    assert ball.in_interior_regime
    assert ball.extreme_points().shape == (6, 3)


def test_simplex_is_ldp_and_ball_of_radius_two():
    W = np.array([[0.6, 0.4], [0.2, 0.8]])
    ldp = np.log(max(0.6 / 0.2, 0.8 / 0.4))
    assert pd.leakage_capacity(W, pd.Simplex(2)) == pytest.approx(ldp)
    assert pd.leakage_capacity(W, pd.L1Ball([0.3, 0.7], 2.0)) == pytest.approx(ldp)
    assert pd.leakage_capacity(np.eye(2), pd.Simplex(2)) == np.inf


def test_single_prior_and_finite_set():
    assert pd.leakage_capacity(EXAMPLE1, EXAMPLE1_PRIOR) == pytest.approx(np.log(9 / 8))
    fs = pd.FiniteSet([EXAMPLE1_PRIOR, [0.25, 0.25, 0.25, 0.25]])
    expected = max(pd.epsilon_min(EXAMPLE1, EXAMPLE1_PRIOR), pd.epsilon_min(EXAMPLE1, [0.25] * 4))
    assert pd.leakage_capacity(EXAMPLE1, fs) == pytest.approx(expected)
    assert fs.contains([0.325, 0.225, 0.225, 0.225])
    assert not fs.contains([0.1, 0.3, 0.3, 0.3])


@given(st.integers(2, 6), st.integers(0, 10**6), st.floats(0.0, 2.0))
def test_capacity_monotone_in_radius_and_at_least_center(n, seed, radius):
    rng = np.random.default_rng(seed)
    center = rng.dirichlet(np.ones(n))
    W = random_mechanism(rng, n, n, zero_frac=0.2)
    c1 = pd.leakage_capacity(W, pd.L1Ball(center, radius))
    c2 = pd.leakage_capacity(W, pd.L1Ball(center, min(2.0, radius + 0.1)))
    e0 = pd.epsilon_min(W, center) if center.min() > 0 else 0.0
    assert c1 >= e0 - 1e-12
    assert c2 >= c1 - 1e-12
    assert c1 <= pd.leakage_capacity(W, pd.Simplex(n)) + 1e-12


@given(st.integers(2, 6), st.integers(0, 10**6), st.floats(0.0, 1.0))
def test_capacity_permutation_invariant(n, seed, radius):
    rng = np.random.default_rng(seed)
    center = rng.dirichlet(np.ones(n))
    W = random_mechanism(rng, n, n)
    perm = rng.permutation(n)
    colperm = rng.permutation(n)
    a = pd.leakage_capacity(W, pd.L1Ball(center, radius))
    b = pd.leakage_capacity(W[perm][:, colperm], pd.L1Ball(center[perm], radius))
    assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


def test_sensitivity_definition6(rng):
    W = random_mechanism(rng, 4, 4)
    p = np.array([0.4, 0.3, 0.2, 0.1])
    ball = pd.L1Ball(p, 0.1)
    s = pd.leakage_sensitivity(W, p, ball)
    assert s == pytest.approx(pd.leakage_capacity(W, ball) - pd.epsilon_min(W, p))
    assert 0 <= s <= pd.max_divergence_shift(W, p, ball) + 1e-12
    q = pd.worst_case_distribution(W, ball)
    assert ball.contains(q)
    assert pd.epsilon_min(W, q) == pytest.approx(pd.leakage_capacity(W, ball))


def test_bad_inputs():
    with pytest.raises(ValueError, match="radius"):
        pd.L1Ball([0.5, 0.5], -0.1)
    with pytest.raises(ValueError, match="center"):
        pd.L1Ball([0.5, 0.6], 0.1)
    with pytest.raises(ValueError, match="rows"):
        pd.leakage_capacity(np.eye(3), pd.L1Ball([0.5, 0.5], 0.1))
    with pytest.raises(ValueError, match="uncertainty"):
        pd.leakage_capacity(np.eye(2), [0.2, 0.2])
    with pytest.raises(ValueError, match="size"):
        pd.Simplex(1)


def test_sensitivity_is_not_max_divergence_in_general():
    # Erratum (core paper, before Example 1): S_P = sup_Q D_inf(P_Y||Q_Y) holds for extremal mechanisms
    # (every output leaks eps), but in general S_P (Definition 6) is strictly smaller.
    p = np.array([0.33503547, 0.44675413, 0.21821039])
    W = np.array(
        [[0.64388441, 0.03379511, 0.32232048], [0.31045309, 0.524138, 0.16540891], [0.30232624, 0.52707717, 0.17059659]]
    )
    W /= W.sum(axis=1, keepdims=True)
    ball = pd.L1Ball(p / p.sum(), 0.5 * p.min())
    assert pd.leakage_sensitivity(W, ball.center, ball) < pd.max_divergence_shift(W, ball.center, ball) - 0.02
    # equality for the extremal mechanism of Example 1
    b1 = pd.L1Ball(EXAMPLE1_PRIOR, 0.1)
    assert pd.leakage_sensitivity(EXAMPLE1, EXAMPLE1_PRIOR, b1) == pytest.approx(
        pd.max_divergence_shift(EXAMPLE1, EXAMPLE1_PRIOR, b1), rel=1e-12
    )


@given(seed=st.integers(0, 2**32 - 1), radius=st.floats(0.0, 2.0), zero_low=st.booleans(),
       ulps=st.sampled_from([0.0, 1e-15, 5e-13]))
def test_two_level_columns_in_closed_form_match_the_lp_and_the_sort(seed, radius, zero_low, ulps):
    """The closed form for two-level columns (every LDP channel's; large inputs) against an LP per column and the
    per-column sort, levels jittered by up to 5e-13 (a row normalisation's rounding): never above either beyond
    rounding, below by at most the jitter and its rounding allowance; mixed batches keep the sort for the others."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 9)), 6
    ball = pd.L1Ball(rng.dirichlet(np.ones(n) * rng.choice([0.3, 3.0])), radius)
    S = rng.random((n, m)) < rng.random(m)
    hi = rng.uniform(0.5, 2.0, m)
    lo = np.zeros(m) if zero_low else hi * rng.uniform(0.05, 1.0, m)
    cols = np.where(S, hi, lo) * (1.0 + ulps * rng.uniform(-1.0, 1.0, (n, m)))
    cols[:, -1] = rng.random(n)  # a column with many levels: the sort
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pd.uncertainty, "TWO_LEVEL_MIN_SIZE", 1)
        fast = ball.min_output_probability(cols)
    slow = ball._sorted_min(cols)
    assert np.all(fast <= slow * (1 + 1e-14) + 1e-300)
    assert np.all(fast >= slow * (1 - 4 * ulps - 1e-14) - 1e-14 * cols.max())  # (rounding allowance, absolute)
    for j in range(m):  # a second solver (HiGHS: its feasibility tolerance, ~1e-7, moves mass at tiny radii)
        val, _ = lp_min_output(ball.center, ball.radius, cols[:, j])
        assert fast[j] == pytest.approx(val, abs=1e-10 + 2e-7 * float(cols.max()))


def test_two_level_closed_form_certifies_a_large_ldp_channel_like_the_sort():
    """A 1 500 × 1 506 cyclotomic LDP channel (above TWO_LEVEL_MIN_SIZE): the same capacity as the sort to 1e-13,
    never above its ε (LDP ⇒ ε-PML for every prior) beyond the certificate's tolerance."""
    from pml_design.mechanisms.frequency_oracles.optimum import compact_ldp_channel

    n = 1500
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    p /= p.sum()
    W = compact_ldp_channel(n, 1.0, p, max_outputs=2 * n).matrix
    assert W.size >= pd.uncertainty.TWO_LEVEL_MIN_SIZE
    for radius in (0.1, 0.7, 2.0):
        ball = pd.L1Ball(p, radius)
        fast = ball.min_output_probability(W)
        slow = ball._sorted_min(W)
        assert np.max(np.abs(fast - slow) / slow) <= 1e-12
        assert pd.leakage_capacity(W, ball) <= 1.0 + 1e-12


def test_two_level_closed_form_is_never_above_the_exact_minimum_where_it_cancels():
    """Radius near 2·P̂(S) with a lower level far below the upper one: P̂(S) − β/2 cancels. Against the greedy in
    exact rational arithmetic neither the closed form nor the per-column sort (small inputs, other columns) is ever
    above the exact minimum (a capacity is never understated), and both stay within 1e-12 of it where it does not
    cancel. Power: the sort without its rounding allowance is above (beyond 1e-14) on some of these cases
    (docs/design.md §12)."""
    from fractions import Fraction

    def exact(p, radius, c):
        p, c, budget = [Fraction(float(x)) for x in p], [Fraction(float(x)) for x in c], Fraction(float(radius)) / 2
        q, moved = list(p), Fraction(0)
        for i in sorted(range(len(c)), key=lambda i: -c[i]):
            t = min(max(budget - moved, Fraction(0)), q[i])
            q[i] -= t
            moved += t
        q[min(range(len(c)), key=lambda i: c[i])] += moved
        return sum(a * b for a, b in zip(q, c))

    rng = np.random.default_rng(5)
    checked = above = 0
    for _ in range(400):
        n = int(rng.integers(2, 10))
        p = pd.L1Ball(rng.dirichlet(np.ones(n)), 0).center
        S = rng.random(n) < 0.5
        if not S.any() or S.all():
            continue
        radius = min(2.0, 2 * float(p[S].sum()) * (1 - rng.choice([1e-15, 1e-14, 1e-10, 0.01])))
        c = np.where(S, 1.0, float(rng.choice([0.0, 1e-20, 1e-10, 0.3])))[:, None]
        ball = pd.L1Ball(p, radius)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(pd.uncertainty, "TWO_LEVEL_MIN_SIZE", 1)
            fast = ball.min_output_probability(c)[0]
        slow = ball._sorted_min(c)[0]
        ex = exact(ball.center, ball.radius, c[:, 0])
        assert Fraction(float(fast)) <= ex
        assert Fraction(float(slow)) <= ex * Fraction(1 + 1e-14)  # (the final sum's rounding)
        naive = _naive_sorted_min(ball, c)[0]
        above += Fraction(float(naive)) > ex * Fraction(1 + 1e-14)
        if ex > 1e-9:
            assert float(ex) - slow <= 1e-12 * float(ex)
        checked += 1
    assert checked > 200
    assert above > 0
    # the running sum rounds up to β/2 before a donor the exact greedy still empties (a review's reproducer): the
    # exact minimum is 0 (an infinite leakage), and the sort must not report a positive one
    ball = pd.L1Ball(np.array([0.3, 0.7, 1e-20, 0.0]), 2.0)
    c = np.array([[1.0], [1.0], [0.5], [0.0]])
    assert exact(ball.center, ball.radius, c[:, 0]) == 0
    assert ball._sorted_min(c)[0] == 0.0
    rng = np.random.default_rng(11)  # near-zero masses beside large ones, radius on the running sums
    for _ in range(2000):
        n = int(rng.integers(3, 7))
        p = rng.dirichlet(np.ones(n)) * (rng.random(n) < 0.7)
        p[rng.integers(n)] += 0.5
        tiny = rng.random(n) < 0.3
        p[tiny] = 10.0 ** rng.uniform(-22, -15, tiny.sum())
        p /= p.sum()
        c = rng.choice([0.0, 0.5, 1.0, 1e-3], size=(n, 1))
        radius = min(2.0, 2 * float(np.cumsum(np.sort(p))[rng.integers(n)]))
        ball = pd.L1Ball(p, radius)
        assert Fraction(float(ball._sorted_min(c)[0])) <= exact(ball.center, ball.radius, c[:, 0]) * Fraction(1 + 1e-14)


def _naive_sorted_min(ball, c):
    """The per-column sort without its rounding allowance (the code before 2026-11-26): power for the test above."""
    order, taken, receiver, moved = ball._greedy(c)
    keep = ball.center[order] - taken
    return np.maximum((keep * np.take_along_axis(c, order, axis=0)).sum(axis=0), 0.0) + moved * c[
        receiver, np.arange(c.shape[1])]
