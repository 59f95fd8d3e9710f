"""The scalable (column-generation) designer against the exact one, and its bounds."""

from __future__ import annotations

import numpy as np
import pytest

import pml_design as pd
from pml_design.design import LinearUtility, distortion_gain, tradeoff_curve
from pml_design.mechanisms.closed_form import uniform_optimal_mutual_information

UTILS = ["mutual_information", "map_accuracy", "chi_square_information", "total_variation_information"]


def _family(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    p = rng.dirichlet(np.ones(n) * 2)
    kind = seed % 3
    uset = [pd.L1Ball(p, float(rng.uniform(0, 0.9)) * 2 * p.min()), p, pd.Simplex(n)][kind]
    return uset, p, float(rng.uniform(0.1, 2.0))


@pytest.mark.parametrize("seed", range(9))
@pytest.mark.parametrize("utility", UTILS)
def test_scalable_equals_exact_on_small_cases(seed, utility):
    uset, p, eps = _family(seed)
    kw = {"prior": p} if isinstance(uset, pd.Simplex) else {}
    exact = pd.design(uset, eps, utility=utility, method="exact", **kw)
    sc = pd.design(uset, eps, utility=utility, method="scalable", **kw)
    assert sc.utility == pytest.approx(exact.utility, abs=1e-6)
    assert sc.upper_bound >= exact.utility - 1e-7  # a valid bound
    assert sc.certified_epsilon <= eps + 1e-12
    assert pd.leakage_capacity(sc.matrix, uset) <= eps + 1e-12


def test_scalable_linear_utility_matches_convex():
    p = np.random.default_rng(3).dirichlet(np.ones(12) * 4)
    ball = pd.L1Ball(p, 0.5 * p.min())
    for G in (np.eye(12), distortion_gain(12)):
        a = pd.design(ball, 1.0, utility=LinearUtility(G), solver="HIGHS")
        b = pd.design(ball, 1.0, utility=LinearUtility(G), method="scalable")
        assert b.utility == pytest.approx(a.utility, abs=1e-6)
        assert b.matrix.shape == (12, 12)
        assert b.optimal


def test_scalable_larger_case_certified_with_valid_bound():
    rng = np.random.default_rng(11)
    n = 20
    p = rng.dirichlet(np.ones(n) * 3)
    ball = pd.L1Ball(p, 0.4 * p.min())
    res = pd.design(ball, 1.0, method="scalable", solver_options={"time_limit": 8, "max_nodes": 500})
    assert res.certified_epsilon <= 1.0 + 1e-12
    assert res.upper_bound >= res.utility - 1e-12
    # a feasible alternative cannot beat the bound: the fixed-prior design at eps' of eq. (13) lies in the set
    eps_p = float(np.log(np.e / (1 + 0.4 * p.min() / 2 * np.e)))
    assert res.upper_bound >= pd.design(p, eps_p, method="scalable", solver_options={"time_limit": 8, "max_nodes": 500}).utility - 1e-9


def test_uniform_prior_n40_reaches_known_optimum():
    n = 40
    p = np.full(n, 1 / n)
    for eps in (0.7, 1.3):
        res = pd.design(p, eps, method="scalable")
        assert res.utility == pytest.approx(uniform_optimal_mutual_information(n, eps), abs=1e-7)
        assert res.upper_bound >= res.utility - 1e-12


def test_auto_picks_exact_for_small_alphabets():
    p = np.array([0.5, 0.3, 0.2])
    assert pd.design(p, 0.5).method == "exact"
    import warnings

    from pml_design.mechanisms import uniform_optimal_mutual_information

    with warnings.catch_warnings():  # the value is optimal; proving it may take longer than 5 s (a gap warning)
        warnings.simplefilter("ignore", pd.PMLDesignWarning)
        res = pd.design(np.full(20, 0.05), 0.5, solver_options={"time_limit": 5})
    assert res.method == "scalable"
    assert res.utility == pytest.approx(uniform_optimal_mutual_information(20, 0.5), rel=1e-6)  # closed form


def test_scalable_outside_proposition2_is_certified_and_bounded():
    p = np.array([0.5, 0.3, 0.15, 0.05])
    ball = pd.L1Ball(p, 0.3)  # beta >= 2 min p
    exact = pd.design(ball, 1.0, method="exact")
    sc = pd.design(ball, 1.0, method="scalable")
    assert sc.certified_epsilon <= 1.0 + 1e-12
    assert sc.utility <= exact.utility + 1e-9 <= sc.upper_bound + 2e-9
    assert not sc.optimal or sc.utility == pytest.approx(exact.utility, abs=1e-7)


def test_scalable_refuses_unsupported_sets():
    fs = pd.FiniteSet([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    with pytest.raises(ValueError, match="scalable"):
        pd.design(fs, 1.0, method="scalable", prior=[0.4, 0.3, 0.3])


def test_tradeoff_curve_reuse_equals_rebuild_and_is_monotone():
    p = np.random.default_rng(5).dirichlet(np.ones(8) * 3)
    ball = pd.L1Ball(p, 0.5 * p.min())
    eps = np.linspace(0.1, 2.5, 6)
    G = LinearUtility(distortion_gain(8))
    a = tradeoff_curve(ball, eps, utility=G)
    b = tradeoff_curve(ball, eps, utility=G, reuse=False)
    ua = np.array([r.utility for r in a])
    np.testing.assert_allclose(ua, [r.utility for r in b], atol=1e-6)
    assert np.all(np.diff(ua) >= -1e-7)
    for r, e in zip(a, eps):
        assert pd.leakage_capacity(r.matrix, ball) <= e + 1e-12
    mi = tradeoff_curve(ball, eps[:3])
    assert [r.epsilon for r in mi] == list(eps[:3])


def test_scalable_progress_option_and_bad_option(capsys):
    p = np.full(6, 1 / 6)
    r = pd.design(p, 0.5, method="scalable", solver_options={"progress": True, "time_limit": 5})
    assert r.certified_epsilon <= 0.5 + 1e-12
    with pytest.raises(ValueError, match="solver_options"):
        pd.design(p, 0.5, method="scalable", solver_options={"nope": 1})


def test_window_columns_decompose_the_constant_column():
    # an independent check of the trapezoid argument: an LP finds weights θ ≥ 0 with Σθ c = 1 and Σθ = 1
    from scipy.optimize import linprog

    from pml_design.design.scalable import slice_structure
    from pml_design.design.scalable.cone import window_columns

    p = np.random.default_rng(4).dirichlet(np.ones(25) * 0.5)
    p[3] = 0.0
    p /= p.sum()
    for uset, eps in ((pd.L1Ball(p, 0.0), 0.7), (pd.L1Ball(np.full(25, 0.04), 0.01), 1.5)):
        st = slice_structure(uset, eps, uset.center)
        C = window_columns(st)
        T0 = float(st.top(0.0))
        assert C.shape[0] >= 2 and np.all(C >= 0) and np.all(C <= T0 * (1 + 1e-12))
        np.testing.assert_allclose(C @ st.nu, 1.0, atol=1e-12)
        A = np.vstack([C.T, np.ones(C.shape[0])])
        lp = linprog(np.zeros(C.shape[0]), A_eq=A, b_eq=np.ones(A.shape[0]), bounds=(0, None), method="highs")
        assert lp.status == 0


def test_fixed_prior_column_generation_is_informative_at_n100():
    # regression: the master started at the degenerate "constant column alone" vertex and returned MI ≈ 0
    from pml_design.design import MutualInformation
    from pml_design.design.scalable import column_generation

    n, eps = 100, 2.0
    p = np.random.default_rng(0).dirichlet(np.ones(n))
    out = column_generation(pd.L1Ball(p, 0.0), eps, MutualInformation(), p, time_limit=2.0)
    W = out["matrix"] / out["matrix"].sum(axis=1, keepdims=True)
    mi = MutualInformation().value(W, p)
    assert mi == pytest.approx(out["value"], abs=1e-8)
    rr = MutualInformation().value(pd.randomized_response(n, eps).matrix, p)
    # I(X; Y) <= min(eps, H(P)) for every mechanism of M(eps, P) (Definition 5): within 10 % of that bound
    assert mi >= max(rr, 0.9 * min(eps, -(p * np.log(p)).sum()))
    res = pd.design(pd.L1Ball(p, 0.0), eps, method="scalable", solver_options={"time_limit": 2.0, "progress": False})
    assert res.certified_epsilon <= eps + 1e-12 and pd.leakage_capacity(res.matrix, p) <= eps + 1e-12
    assert res.utility >= 0.9 * eps and res.info.get("seed_used") is None
