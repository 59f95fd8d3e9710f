"""The design contract: honest bounds and gaps for both senses, one optimality rule, the gap warning, checked
``solver_options``, silent solvers, edge designs (non-square gains, degenerate masses, subnormal entries) and time
limits (issues 21 and 23)."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import pml_design as pml
from pml_design import L1Ball
from pml_design.design import DesignResult, LinearUtility, MutualInformation, PMLDesignWarning
from pml_design.design.anytime import warn_result_gap
from pml_design.design.result import GAP_ABS_FLOOR, proven_optimal, relative_gap


def _result(value: float, upper: float, lower: float, sense: str) -> DesignResult:
    return DesignResult(
        matrix=np.eye(2), utility=value, certified_epsilon=0.0, epsilon=1.0, uncertainty=L1Ball([0.5, 0.5], 0.0),
        prior=np.array([0.5, 0.5]), upper_bound=upper, optimal=False, status="x", method="scalable", solver="x",
        utility_name="u", lower_bound=lower, sense=sense,
    )


# ------------------------------------------------------------------------------------ bounds and gaps
def test_bound_convention_brackets_the_optimum_for_both_senses():
    mx = _result(2.0, 2.5, float("-inf"), "max")
    assert (mx.lower_bound, mx.upper_bound, mx.bound) == (2.0, 2.5, 2.5)  # [value, proven bound]
    assert mx.gap == 0.5 and mx.relative_gap == pytest.approx(0.25)
    mn = _result(2.0, 2.0, 1.5, "min")
    assert (mn.lower_bound, mn.upper_bound, mn.bound) == (1.5, 2.0, 1.5)  # [proven bound, value]
    assert mn.gap == 0.5 and mn.relative_gap == pytest.approx(0.25)  # one formula for both senses
    none = _result(2.0, 2.0, float("-inf"), "min")
    assert none.bound == -np.inf and none.gap == np.inf and none.relative_gap == np.inf
    # relative to the value, not to max(1, value): a small utility gets a large relative gap
    assert relative_gap(3.184e-9, 3.288e-9) == pytest.approx(0.104 / 3.184, rel=1e-3)


def test_optimality_rule_is_relative_with_a_noise_floor_only():
    assert proven_optimal(1.0, 1.0 + 5e-7) and not proven_optimal(1.0, 1.0 + 2e-6)
    assert not proven_optimal(3.184e-9, 3.288e-9)  # issue 23: an absolute 1e-6 called this optimal
    assert proven_optimal(0.0, GAP_ABS_FLOOR / 2) and not proven_optimal(0.0, 1e-12)
    assert not proven_optimal(1.0, np.inf) and not proven_optimal(1.0, np.nan)


def test_scalable_never_claims_optimal_at_small_chi_square():
    # issue 23: scalable chi^2 claimed optimal at 3.184e-9 where the exact method finds 3.288e-9
    rng = np.random.default_rng(3)
    for _ in range(3):
        p = rng.dirichlet(np.ones(5))
        ball = L1Ball(p, float(p.min()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PMLDesignWarning)
            a = pml.design(ball, 1e-4, utility="chi_square_information", method="scalable",
                           solver_options={"time_limit": 1, "progress": False})
        b = pml.design(ball, 1e-4, utility="chi_square_information", method="exact")
        assert b.optimal and b.utility > 0
        if a.optimal:
            assert abs(a.utility - b.utility) <= 1e-6 * b.utility
        assert a.bound >= b.utility * (1 - 1e-9)  # the proven bound is valid


def test_gap_warning_when_large_or_unknown():
    with pytest.warns(PMLDesignWarning, match="no bound on the optimum was proven"):
        warn_result_gap(_result(2.0, 2.0, float("-inf"), "min"), 5.0)
    with pytest.warns(PMLDesignWarning, match=r"within 25\.00% of optimal only.*time_limit"):
        warn_result_gap(_result(2.0, 2.5, float("-inf"), "max"), 5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_result_gap(_result(2.0, 2.001, float("-inf"), "max"), 5.0)  # 0.05 %: silent


def test_gap_warning_at_the_bounds_floor_gives_one_advice():
    """A review (design --reports, N = 16, 60 s): the frequency-estimation design said "more time for the bound alone
    will not lower the gap much" and, in the same warning, "raise --time-limit to reduce the gap". At the bound's
    floor the warning no longer advises more time; elsewhere it still does."""
    floor = ("the diagonal-moment relaxation that gives this bound cannot prove less than 1.52% for this design, its "
             "own loss at the optimum included, so more time for the bound alone will not lower the gap much")
    with pytest.warns(PMLDesignWarning) as rec:
        warn_result_gap(_result(28.3, float("inf"), 27.7, "min"), 60.0, detail=floor)
    text = str(rec[0].message)
    assert "will not lower the gap much" in text and "time limit 60 s" in text and "raise" not in text
    with pytest.warns(PMLDesignWarning, match=r"raise solver_options=\{'time_limit': \.\.\.\} to reduce the gap"):
        warn_result_gap(_result(28.3, float("inf"), 27.7, "min"), 60.0, detail=floor.split(", so more")[0])


# ------------------------------------------------------------------------------------ solver_options
@pytest.mark.parametrize("method,utility", [("auto", "mutual_information"), ("exact", "mutual_information"),
                                            ("scalable", "mutual_information"), ("auto", "frequency_estimation"),
                                            ("convex", np.eye(3))])
def test_unknown_solver_options_key_is_refused_with_the_accepted_ones(method, utility):
    with pytest.raises(ValueError, match=r"tme_limit.*time_limit|time_limit.*tme_limit"):
        pml.design(L1Ball([0.5, 0.3, 0.2], 0.1), 1.0, utility=utility, method=method,
                   solver_options={"tme_limit": 5})


def test_exact_method_takes_a_time_limit_and_literal_form_refuses_one_it_cannot_keep():
    res = pml.design(L1Ball([0.5, 0.3, 0.2], 0.1), 1.0, method="exact", solver_options={"time_limit": 5})
    assert res.optimal and res.method == "exact"
    p = np.full(40, 1 / 40)
    with pytest.raises(ValueError, match="form='literal'.*time_limit"):
        pml.design(L1Ball(p, 0.01), 1.0, utility=np.eye(40), form="literal", solver_options={"time_limit": 2})


def test_auto_solves_exactly_up_to_n16_and_under_a_short_limit_up_to_n14():
    import time

    from pml_design.design.rays import auto_exact_size

    p = np.random.default_rng(0).dirichlet(np.ones(15) * 3)
    ball = L1Ball(p, float(p.min()))
    assert auto_exact_size(ball) == 16 and auto_exact_size(ball, 2.0) == 14 and auto_exact_size(ball, 30.0) == 16
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PMLDesignWarning)
        res = pml.design(ball, 1.0, solver_options={"time_limit": 2, "progress": False})
    assert res.method == "scalable" and time.perf_counter() - t0 <= 1.1 * 2 + 5


def test_exact_time_out_returns_the_best_certified_design(monkeypatch):
    from pml_design.design import exact

    monkeypatch.setattr(exact, "solve_ray_lp", lambda *a, **k: (_ for _ in ()).throw(
        exact.SolverFailedError("extreme-ray LP failed within solver_options['time_limit']", "scipy-highs:1")))
    ball = L1Ball([0.4, 0.3, 0.2, 0.1], 0.05)
    res = pml.design(ball, 1.0, method="exact", solver_options={"time_limit": 1})
    assert res.method == "scalable" and pml.leakage_capacity(res.matrix, ball) <= 1 + 1e-12
    with pytest.raises(exact.SolverFailedError):  # no time limit: a failed solve is an error, never a silent switch
        pml.design(ball, 1.0, method="exact")


# ------------------------------------------------------------------------------------ edge designs
def test_non_square_gain_with_the_scalable_method_outside_proposition_2():
    gain = np.random.default_rng(0).normal(size=(3, 4))
    ball = L1Ball([0.6, 0.3, 0.1], 0.5)
    res = pml.design(ball, 1, utility=LinearUtility(gain), method="scalable", solver_options={"progress": False})
    ref = pml.design(ball, 1, utility=LinearUtility(gain), method="convex")  # the exact LP optimum
    assert res.matrix.shape == (3, 4) and pml.leakage_capacity(res.matrix, ball) <= 1 + 1e-12
    assert res.utility <= ref.bound + 1e-9 and res.bound >= ref.utility - 1e-9


def test_degenerate_masses_give_a_certified_design():
    p = np.concatenate([np.random.default_rng(1).dirichlet(np.ones(6)), np.full(5, 1e-19)])
    p /= p.sum()
    for beta in (0.0, 1e-20, 0.1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PMLDesignWarning)
            res = pml.design(L1Ball(p, beta), 1.0, utility="total_variation_information", method="scalable",
                             solver_options={"time_limit": 1, "progress": False})
        assert pml.leakage_capacity(res.matrix, L1Ball(p, beta)) <= 1.0 + 1e-12 and res.utility > 0


def test_failed_master_lp_falls_back_to_the_best_certified_seed(monkeypatch):
    from pml_design.design.result import SolverFailedError
    from pml_design.design.scalable import master

    def fail(self, time_limit=None):  # noqa: ANN001, ANN202
        raise SolverFailedError("column-generation master LP failed", "kNotset")

    monkeypatch.setattr(master._Master, "solve", fail)
    ball = L1Ball([0.4, 0.3, 0.2, 0.1], 0.05)
    with pytest.warns(PMLDesignWarning, match="of optimal only"):  # the a priori bound min(eps, H(P)) remains
        res = pml.design(ball, 1.0, method="scalable", solver_options={"progress": False})
    rr = pml.randomized_response_for_pml(ball, 1.0).matrix
    assert res.utility >= MutualInformation().value(rr, ball.center) - 1e-12
    assert res.relative_gap > 0.01 and not res.optimal and "failure" in res.info


def test_capacity_is_exact_for_subnormal_entries():
    W = np.array([[5e-324, 1 - 5e-324], [1e-323, 1 - 1e-323]])
    p = np.array([0.555, 0.445])
    exact = -math.log(0.555 * 0.5 + 0.445)  # column / its max = [1/2, 1]: exact ratios of the subnormals
    assert pml.leakage_capacity(W, p) == pytest.approx(exact, rel=1e-12)
    assert pml.leakage(W, p)[0] == pytest.approx(exact, rel=1e-12)
    ball = L1Ball(p, 0.1)  # the worst case moves 0.05 of mass from row 1 (c = 1) to row 0 (c = 1/2)
    assert pml.leakage_capacity(W, ball) == pytest.approx(-math.log(0.605 * 0.5 + 0.395), rel=1e-12)
    # its twin, sup_Q D_inf(P_Y || Q_Y) (Theorem 4's quantity): P_Y(y0) / min_Q Q_Y(y0) on the scaled column
    from pml_design.uncertainty import max_divergence_shift

    shift = math.log((0.555 * 0.5 + 0.445) / (0.605 * 0.5 + 0.395))
    assert max_divergence_shift(W, p, ball) == pytest.approx(shift, rel=1e-12)


# ------------------------------------------------------------------------------------ silent solvers
_DESIGNS = textwrap.dedent("""
    import numpy as np, warnings
    warnings.simplefilter("ignore")
    import pml_design as pml
    from pml_design import L1Ball
    p = np.random.default_rng(0).dirichlet(np.ones(60))
    pml.design(L1Ball(p, 3 * p.min() + 0.01), 1.0, solver_options={"time_limit": 2, "progress": False})
    pml.design(L1Ball(p, p.min()), 1.0, utility=np.eye(60), solver="HIGHS")
    pml.design(L1Ball(np.full(6, 1 / 6), 0.01), 1.0, utility=np.eye(6), solver="HIGHS", form="literal")
    pml.design(L1Ball([0.5, 0.3, 0.2], 0.1), 1.0, method="exact")
""")


def test_designs_write_nothing_on_stdout_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-c", _DESIGNS], capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert out.stdout == b""


def test_c_level_stdout_is_silenced_around_solver_construction(capfd):
    import os

    from pml_design.design.quiet import c_stdout_silenced, new_highs

    with c_stdout_silenced():
        os.write(1, b"from C\n")
    print("after", flush=True)
    new_highs()
    assert capfd.readouterr().out == "after\n"


def test_dense_work_beyond_the_time_budget_returns_the_trivial_certified_design(monkeypatch):
    # N = 10000 with a 20 s limit: the dense N x N seeds alone took 60 s; the call now returns within the limit
    from pml_design.design.scalable import api

    monkeypatch.setattr(api, "DENSE_S_PER_ENTRY", 1.0)  # as if N x N work did not fit: the same path at N = 50
    p = np.random.default_rng(0).dirichlet(np.ones(50))
    with pytest.warns(PMLDesignWarning, match="far from optimal"):
        res = pml.design(L1Ball(p, 3 * p.min()), 1.0, solver_options={"time_limit": 5, "progress": False})
    assert res.matrix.shape[1] == 1 and res.certified_epsilon <= 1e-15 and "dense" in res.info["failure"]
    assert res.bound == pytest.approx(1.0)  # the a priori bound min(eps, H(P)) stays valid


@pytest.mark.parametrize("eps", [1e-9, 1e-10, 1e-12])
@pytest.mark.parametrize("utility", ["mutual_information", "map_accuracy"])
def test_tiny_epsilon_gives_the_trivial_design_proven_not_an_infeasible_lp(eps, utility):
    """A review: ε = 1e-9 made HiGHS call the exact ray LP infeasible (SolverFailedError), and ε = 1e-12 returned
    optimal=True beside a 'far from optimal: 1.78e+284 times its value away' warning. The LP is feasible for every ε
    (the constant mechanism); where HiGHS fails, the trivial design is returned with weak duality at y = 0 as its
    bound, and a design proven optimal gets no gap warning. Independent check: an ε-PML mechanism has
    P(x | y) ≤ e^ε P(x), so its MAP accuracy is at most e^ε max P and its MI at most ε."""
    import warnings

    import pml_design as pml

    p = np.array([0.5, 0.3, 0.2])
    ball = pml.L1Ball(p, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all
        res = pml.design(ball, eps, utility=utility)
    assert res.optimal and res.certified_epsilon <= eps + 1e-12
    assert pml.leakage_capacity(res.matrix, ball) <= eps + 1e-12
    assert res.bound >= res.utility
    if utility == "map_accuracy":
        assert 0.5 - 1e-12 <= res.utility <= np.exp(eps) * 0.5 + 1e-12 and res.bound <= 0.5 * np.exp(eps) + 1e-9
    else:
        assert -1e-15 <= res.utility <= eps and res.bound <= eps


def test_a_small_scale_utility_far_from_its_bound_still_warns():
    """The no-warning rule for proven-optimal results applies only where value and bound are both zero to rounding:
    a gain scaled by 1e-13 is optimal=True by proven_optimal's absolute floor at a relative gap of 95 % (a review of
    the first version, which skipped the warning for every optimal result)."""
    import pml_design as pml

    rng = np.random.default_rng(1)
    p, G = rng.dirichlet(np.ones(5)), rng.random((5, 5))
    with pytest.warns(pml.PMLDesignWarning, match="proven within"):
        res = pml.design(pml.L1Ball(p, 0.1), 1.0, utility=pml.LinearUtility(G * 1e-13))
    assert res.relative_gap > 0.5 and not res.optimal  # the floor is in the gain's own scale (it was optimal=True)
    for scale in (1.0, 1e6):  # the same design at ordinary scales is proven optimal
        assert pml.design(pml.L1Ball(p, 0.1), 1.0, utility=pml.LinearUtility(G * scale)).optimal


@pytest.mark.parametrize("seed", range(4))
def test_the_cvxpy_path_bound_is_a_proof_not_the_solvers_objective(seed):
    """A review: on the cvxpy path (solver="SCS") the bound was prob.value, below the optimum (0.7331527 against
    0.7331529) beside optimal=True. It is now weak duality on the sparse LP of the same set (valid for any
    multipliers). Independent check: the optimum from HiGHS's simplex on the cvxpy model (tests/conftest.py)."""
    import pml_design as pml
    from tests.conftest import linear_design_optimum

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    p = rng.dirichlet(np.ones(n))
    ball = pml.L1Ball(p, float(rng.uniform(0.05, 0.9)) * 2 * p.min())
    G = rng.random((n, n))
    ref = linear_design_optimum(ball, 1.0, G, p)
    res = pml.design(ball, 1.0, utility=pml.LinearUtility(G), solver="SCS")
    assert res.method == "convex" and res.upper_bound >= ref - 1e-12
    assert res.utility <= ref + 1e-12 and pml.leakage_capacity(res.matrix, ball) <= 1.0 + 1e-12


def test_text_is_not_a_number_and_a_path_is_named():
    """A review: L1Ball(["0.5", "0.5"], 0.1) was accepted (numpy parses the text); save(5) raised os.fspath's
    TypeError without naming the argument."""
    import pml_design as pml

    for center in (["0.5", "0.5"], np.array(["0.5", "0.5"]), [0.5, "0.5"]):
        with pytest.raises(TypeError, match="center must be an array of real numbers, got text"):
            pml.L1Ball(center, 0.1)
    assert pml.L1Ball(np.array([0.5, 0.5], dtype=object), 0.1).size == 2
    res = pml.design(pml.L1Ball([0.5, 0.3, 0.2], 0.1), 1.0)
    with pytest.raises(TypeError, match=r"path must be a file path \(str or os.PathLike\), got int 5"):
        res.save(5)


def test_core_api_review_items():
    """A new user's review (2026-11-27): optimal=True beside a 'far from optimal' warning (value 0, bound 3.6e-15);
    closed forms overflowing at large ε; max_nodes unchecked; unknown keys reaching a cvxpy solver's own TypeError;
    a gain matrix as a nested list refused."""
    import math
    import warnings

    import pml_design as pml
    from pml_design.design.utilities import distortion_gain
    from pml_design.mechanisms.closed_form import uniform_optimal_mutual_information

    with warnings.catch_warnings():
        warnings.simplefilter("error", pml.PMLDesignWarning)
        res = pml.design(np.full(3, 1 / 3), math.log(3), utility=distortion_gain(3))
    assert res.optimal
    rr = pml.randomized_response(3, 1e4).matrix
    assert np.array_equal(rr, np.eye(3))
    np.testing.assert_allclose(pml.randomized_response(3, 1.0).matrix[0, 0], math.e / (math.e + 2), rtol=1e-15)
    ball = pml.L1Ball([0.5, 0.3, 0.2], 0.1)
    assert np.array_equal(pml.randomized_response_for_pml(ball, 800).matrix, np.eye(3))
    assert np.array_equal(pml.uniform_optimal(3, 800).matrix, np.eye(3))
    assert np.array_equal(pml.binary_optimal([0.7, 0.3], 800).matrix, np.eye(2))
    assert uniform_optimal_mutual_information(3, 800) == pytest.approx(math.log(3), rel=1e-15)
    wide = pml.L1Ball([0.5, 0.3, 0.2], 0.5)
    for bad, kind in ((-5, ValueError), (0, ValueError), (1.5, ValueError), (float("nan"), ValueError),
                      (True, TypeError), (None, TypeError), ("a", TypeError)):
        with pytest.raises(kind, match=r"solver_options\['max_nodes'\] must be a positive integer"):
            pml.design(wide, 1.0, method="scalable", solver_options={"max_nodes": bad})
    with pytest.raises(ValueError, match=r"solver_options key\(s\) \['foo'\] are not options of solver 'SCS'"):
        pml.design(ball, 1.0, utility=np.eye(3), solver="SCS", solver_options={"foo": 1})
    assert pml.design(ball, 1.0, utility=[[1, 0, 0], [0, 1, 0], [0, 0, 1]]).utility == pytest.approx(
        pml.design(ball, 1.0, utility=np.eye(3)).utility, rel=1e-12)
    with pytest.raises(TypeError, match="gain must be an array of real numbers"):
        pml.design(ball, 1.0, utility=[[1, 0, 0], [0, "a", 0], [0, 0, 1]])


def test_a_finite_set_design_keeps_its_time_limit():
    """A review: a 12-symbol, 8-point FiniteSet with method='exact' and a 2 s limit ran past 40 s (pycddlib's double
    description has no deadline), and method='auto' (N = 10) took 8 s and raised advising method='scalable', which
    refuses a FiniteSet. The enumeration now runs in a child process stopped at the deadline, and the result is the
    certified randomized response at its largest ε-PML ratio, with the gap-unknown warning."""
    import time

    import pml_design as pml

    rng = np.random.default_rng(1)
    for n, method in ((12, "exact"), (10, "auto")):
        D = [rng.dirichlet(np.ones(n)) for _ in range(8)]
        t = time.perf_counter()
        with pytest.warns(pml.PMLDesignWarning, match="no bound on the optimum"):
            res = pml.design(pml.FiniteSet(D), 1.0, method=method, prior=D[0], solver_options={"time_limit": 2})
        assert time.perf_counter() - t < 1.1 * 2 + 5
        assert res.status == "time limit" and not res.optimal and res.utility > 0
        assert pml.leakage_capacity(res.matrix, pml.FiniteSet(D)) <= 1.0 + 1e-9


def test_no_trivial_design_where_the_ray_lp_fails_at_large_epsilon():
    """A review: at ε = 16–30 with β just under 2 min P̂ HiGHS called the exact ray LP infeasible and the design was
    the trivial one (utility 0; 57 of 150 such balls), where the column generation reaches the optimum (1.27985 for
    the reviewer's ball, also found by HIGHS / CLARABEL / ECOS on the LP). The column generation's certified result
    now replaces it; its capacity is checked here by the ball's own leakage code."""
    import pml_design as pml

    c = np.array([0.4, 0.3, 0.2, 0.1]) / 1.0000000000000002
    res = pml.design(pml.L1Ball(c, 0.2), 20.0)
    assert res.optimal and res.utility == pytest.approx(1.2798541889858692, rel=1e-9)
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 5))
        p = rng.dirichlet(np.ones(n))
        ball = pml.L1Ball(p, 2 * p.min() * (1 - 10 ** rng.uniform(-12, -6)))
        eps = float(rng.choice([16.0, 20.0, 30.0]))
        res = pml.design(ball, eps)
        assert res.optimal and res.utility > 0.01
        assert pml.leakage_capacity(res.matrix, ball) <= eps * (1 + 1e-9)


def test_compare_at_zero_epsilon_and_progress_flag():
    """A review: compare_with_ldp at ε = 0 leaked numpy's RuntimeWarning and printed 'gain infx' (both designs are
    constant there: the gain is 1); progress=3 was accepted."""
    import warnings

    import pml_design as pml

    res = pml.design(pml.L1Ball([0.5, 0.3, 0.2], 0.1), 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        cmp = pml.compare_with_ldp(res)
    assert cmp.gain_over_ldp == 1.0 and "infx" not in cmp.to_table()
    with pytest.raises(TypeError, match=r"solver_options\['progress'\] must be True, False or None, got 3"):
        pml.design(pml.L1Ball([0.5, 0.3, 0.2], 0.5), 1.0, method="scalable", solver_options={"progress": 3})


def test_estimate_ci_must_be_a_number():
    import pml_design as pml

    m = pml.randomized_response(3, 1.0)
    reports = m.privatize(np.random.default_rng(0).choice(3, 500), rng=1)
    for bad in ("0.9", True):
        with pytest.raises(TypeError, match="ci"):
            m.estimate(reports, ci=bad)
    assert m.estimate(reports, ci=0.9).ci_low.shape == (3,)


def test_options_without_effect_on_a_sub_convex_design_are_refused():
    """A review: n_outputs= and form='literal' were silently ignored for a sub-convex utility (frequency estimation
    already refused them)."""
    import pml_design as pml

    ball = pml.L1Ball([0.5, 0.3, 0.2], 0.1)
    for kw, needle in (({"n_outputs": 5}, "n_outputs=5"), ({"form": "literal"}, "form='literal'")):
        with pytest.raises(ValueError, match=f"{needle} has no effect on a sub-convex utility"):
            pml.design(ball, 1.0, **kw)
    assert pml.design(ball, 1.0, utility=np.eye(3), form="literal").optimal  # a linear design uses them
