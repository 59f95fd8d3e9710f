"""The largest posterior over the ball (pml_design/posterior.py): the two-level evaluation against the ball's
vertices (an independent derivation: a linear-fractional function attains its maximum at a vertex) and against
the sorted evaluation, on the columns where it applies (at most two positive values), with ties, zeros, empty
rows of P̂ and radii beyond 2 min P̂."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pml_design as pml
from pml_design.posterior import _levels_max_posterior, _sorted_max_posterior, ball_max_posterior

from _independent import ball_vertices


def _level_columns(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    """A row-stochastic matrix whose every column has at most two positive values (and zeros): columns
    ``hi·1_U + lo·1_{V∖U}`` as a frequency-estimation design's rays, scaled so that each row sums to 1 by adding
    one output that carries each row's rest (itself a column of two levels only when it happens to be)."""
    hi = rng.random(m) + 0.5
    lo = hi * rng.choice([0.0, 0.25, 1.0], size=m)
    code = rng.integers(0, 3, size=(n, m))
    W = np.where(code == 0, hi, np.where(code == 1, lo, 0.0))
    W /= max(1.0, W.sum(axis=1).max()) * 1.25
    return np.column_stack([W, 1.0 - W.sum(axis=1)])


def _brute(W: np.ndarray, p: np.ndarray, beta: float) -> np.ndarray:
    V = ball_vertices(p, beta)
    joint = V[:, :, None] * W[None]
    total = joint.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, joint / total, 0).max(axis=0)


@pytest.mark.parametrize("seed", range(6))
def test_two_level_columns_match_the_ball_vertices(seed):
    rng = np.random.default_rng(seed)
    for _ in range(10):
        n, m = int(rng.integers(2, 7)), int(rng.integers(1, 6))
        W = _level_columns(rng, n, m)
        p = rng.dirichlet(np.full(n, 0.6))
        if rng.random() < 0.3:
            p[rng.integers(n)] = 0.0  # an empty row of P̂
            p /= p.sum()
        for beta in (0.0, 0.05, 2 * p.min(), 2 * p.min() + 0.1, 1.0, 2.0):
            beta = float(min(beta, 2.0))
            np.testing.assert_allclose(pml.max_posterior(W, pml.L1Ball(p, beta)), _brute(W, p, beta), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 9), st.integers(1, 7), st.integers(0, 10**6), st.floats(0.0, 2.0))
def test_the_two_evaluations_agree_where_both_apply(n, m, seed, beta):
    rng = np.random.default_rng(seed)
    Wt = np.ascontiguousarray(_level_columns(rng, n, m).T)[:m]  # the two-level columns, one per row
    p = rng.dirichlet(np.full(n, 0.5))
    T = np.minimum(beta / 2.0, 1.0 - p)
    hi = Wt.max(axis=1)
    lo = np.where(Wt > 0, Wt, np.inf).min(axis=1)
    in_hi = Wt == hi[:, None]
    in_lo = (Wt == lo[:, None]) & ~in_hi
    levels = _levels_max_posterior(Wt, in_hi, in_lo, hi, p, T)
    np.testing.assert_allclose(levels, _sorted_max_posterior(Wt, p, T), rtol=1e-12, atol=1e-14)


def test_a_matrix_mixing_both_kinds_of_column_is_evaluated_column_by_column():
    rng = np.random.default_rng(7)
    n = 6
    W = _level_columns(rng, n, 5)
    W = np.column_stack([W[:, :-1] * 0.6, 0.4 * rng.dirichlet(np.ones(3), size=n), W[:, -1:] * 0.6])  # generic columns
    p = rng.dirichlet(np.ones(n))
    whole = ball_max_posterior(W, p, 0.3)
    for j in range(W.shape[1]):
        np.testing.assert_allclose(whole[:, j], ball_max_posterior(W[:, [j]], p, 0.3)[:, 0], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(whole, _brute(W, p, 0.3), atol=1e-12)


def test_randomized_response_has_the_closed_form_posterior():
    # RR at ε on N symbols: column y is e^ε on x = y, 1 elsewhere (divided by e^ε + N − 1). The posterior of x = y
    # is largest when β/2 moves to y from the others: (p_y + t) e^ε / ((p_y + t) e^ε + (1 − p_y − t)).
    n, eps, beta = 5, 1.3, 0.2
    p = np.array([0.4, 0.25, 0.15, 0.12, 0.08])
    W = (np.exp(eps) * np.eye(n) + (1 - np.eye(n))) / (np.exp(eps) + n - 1)
    post = pml.max_posterior(W, pml.L1Ball(p, beta))
    q = p + beta / 2
    np.testing.assert_allclose(np.diag(post), q * np.exp(eps) / (q * np.exp(eps) + 1 - q), rtol=1e-13)


def test_blocks_of_outputs_give_the_whole_matrix_result(monkeypatch):
    import pml_design.posterior as posterior

    rng = np.random.default_rng(11)
    n = 7
    W = np.column_stack([_level_columns(rng, n, 6)[:, :-1] * 0.5, 0.5 * rng.dirichlet(np.ones(5), size=n)])
    p = rng.dirichlet(np.ones(n))
    whole = ball_max_posterior(W, p, 0.4)
    monkeypatch.setattr(posterior, "BLOCK_ENTRIES", 2 * n)  # two outputs a block, mixed and pure blocks
    np.testing.assert_array_equal(ball_max_posterior(W, p, 0.4), whole)
    np.testing.assert_allclose(whole, _brute(W, p, 0.4), atol=1e-12)


def test_levels_equal_up_to_a_rows_rescaling_count_as_one_level():
    # rows rescaled to sum to 1 leave "equal" values differing in their last bits; the result is the exact one's
    rng = np.random.default_rng(3)
    W = _level_columns(rng, 6, 4)
    W = W * (1.0 + rng.integers(-4, 5, size=W.shape) * 2.0**-52)
    p = rng.dirichlet(np.ones(6))
    np.testing.assert_allclose(pml.max_posterior(W, pml.L1Ball(p, 0.3)), _brute(W, p, 0.3), atol=1e-12)
