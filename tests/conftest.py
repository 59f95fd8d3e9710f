"""Shared test fixtures and helpers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile("ci")

EXAMPLE1 = np.array(
    [
        [0.325, 0.225, 0.225, 0.225],
        [0.45, 0.1, 0.225, 0.225],
        [0.45, 0.225, 0.1, 0.225],
        [0.45, 0.225, 0.225, 0.1],
    ]
)
EXAMPLE1_PRIOR = np.array([0.4, 0.2, 0.2, 0.2])


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def random_mechanism(rng: np.random.Generator, n: int, m: int, zero_frac: float = 0.0) -> np.ndarray:
    W = rng.dirichlet(np.ones(m), size=n)
    if zero_frac > 0:
        mask = rng.random((n, m)) < zero_frac
        W[mask] = 0.0
        W[W.sum(axis=1) == 0, 0] = 1.0
        W /= W.sum(axis=1, keepdims=True)
    return W


def lp_min_output(center: np.ndarray, radius: float, c: np.ndarray) -> tuple[float, np.ndarray]:
    """Independent check: min_Q c·Q over {Q ∈ simplex, ‖Q − center‖₁ ≤ radius} by an LP (HiGHS)."""
    from scipy.optimize import linprog

    n = center.shape[0]
    # variables: Q (n), u (n), v (n);  Q - u + v = center, sum Q = 1, sum u + v <= radius
    cost = np.concatenate([c, np.zeros(2 * n)])
    A_eq = np.block([[np.eye(n), -np.eye(n), np.eye(n)], [np.ones((1, n)), np.zeros((1, 2 * n))]])
    b_eq = np.concatenate([center, [1.0]])
    A_ub = np.concatenate([np.zeros(n), np.ones(2 * n)])[None, :]
    res = linprog(cost, A_ub=A_ub, b_ub=[radius], A_eq=A_eq, b_eq=b_eq, bounds=[(0, None)] * (3 * n), method="highs-ds")
    assert res.status == 0, res.message
    return float(res.fun), res.x[:n]


def linear_design_optimum(uset, eps: float, G: np.ndarray, p: np.ndarray) -> float:
    """The linear design's LP optimum from an independent derivation: the cvxpy model of
    :mod:`pml_design.design.polytope` (not the sparse LP), solved by HiGHS's dual simplex (a vertex, ~1e-15)."""
    import cvxpy as cp

    import pml_design as pd

    poly = pd.build_polytope(uset, eps, n_outputs=G.shape[1])
    prob = poly.problem(cp.sum(cp.multiply(p[:, None] * G, poly.P)))
    prob.solve(solver="HIGHS")
    assert prob.status == cp.OPTIMAL
    return float(prob.value)


@pytest.fixture()
def no_enumeration(monkeypatch):
    """Force the estimation bounds' branch and bound (the rays are enumerated by ``bound.enumerated_rays``, whose
    limits these are)."""
    from pml_design.design.estimation import bound as B

    monkeypatch.setattr(B, "ENUMERATE_GENERIC", 0)
    monkeypatch.setattr(B, "ENUMERATE_MAX", 0)
