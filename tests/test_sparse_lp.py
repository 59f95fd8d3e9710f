"""The sparse LP path for linear designs (issue 13, part 3; issue 11's bound validity).

Checks against an independent derivation: the cvxpy model of :mod:`pml_design.design.polytope` solved by
HiGHS's simplex (a vertex, accurate to ~1e-15); the bound is checked to hold for arbitrary multipliers.
"""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pml_design as pd
from pml_design.design import LinearUtility, design, distortion_gain, linear_design_lp, tradeoff_curve
from tests.conftest import linear_design_optimum

lp_mod = importlib.import_module("pml_design.design.linear.lp")
backends = importlib.import_module("pml_design.design.linear.backends")


def _instance(seed: int) -> tuple:
    """Random (set, ε, gain, prior): balls inside/outside Proposition 2, simplex, finite sets."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 13))
    p = rng.dirichlet(np.ones(n) * rng.choice([0.7, 2.0, 5.0]))
    kind = seed % 5
    if kind == 0:
        uset = pd.L1Ball(p, float(rng.uniform(0.05, 0.95)) * 2 * p.min())  # Proposition 2: compact
    elif kind == 1:
        uset = pd.L1Ball(p, float(min(2.0, 2 * p.min() + rng.uniform(0.01, 0.8))))  # beyond: dual form
    elif kind == 2:
        uset = pd.L1Ball(p, 0.0)  # fixed prior
    elif kind == 3:
        n = min(n, 7)
        p = p[:n] / p[:n].sum()
        uset = pd.FiniteSet(pd.L1Ball(p, 0.5 * p.min()).extreme_points())
    else:
        uset = pd.Simplex(n)
    eps = float(rng.choice([0.05, 0.4, 1.0, 2.5]))
    g = seed % 3
    G = np.eye(n) if g == 0 else distortion_gain(n) if g == 1 else rng.normal(size=(n, n))
    return uset, eps, G, p


@pytest.mark.parametrize("seed", range(30))
def test_sparse_lp_equals_cvxpy_model(seed):
    uset, eps, G, p = _instance(seed)
    ref = linear_design_optimum(uset, eps, G, p)
    scale = max(1.0, abs(ref))
    res = design(uset, eps, utility=LinearUtility(G), prior=p)  # sparse path, Clarabel
    assert res.info["backend"] == "CLARABEL"
    assert res.certified_epsilon <= eps + 1e-12
    assert res.utility == pytest.approx(ref, abs=2e-7 * scale)
    assert res.upper_bound >= ref - 1e-12 * scale  # valid, not solver-tolerant
    assert res.optimal
    # HiGHS backend (interior point + crossover) agrees closely
    res_h = design(uset, eps, utility=LinearUtility(G), prior=p, solver="HIGHS")
    assert res_h.upper_bound >= ref - 1e-12 * scale
    assert res_h.utility == pytest.approx(ref, abs=1e-8 * scale)


@pytest.mark.parametrize("seed", [1, 6, 11, 17])
def test_dual_form_on_any_ball_matches_compact_and_finite(seed):
    # inside Proposition 2 the compact and dual forms are two exact descriptions of the same polytope
    rng = np.random.default_rng(seed)
    n = 5
    p = rng.dirichlet(np.ones(n) * 3)
    ball = pd.L1Ball(p, 0.6 * p.min())
    W = p[:, None] * distortion_gain(n)
    vals = {}
    for form in ("compact", "dual"):
        lp = linear_design_lp(ball, 0.7, W, form=form)
        vals[form] = backends.get_backend("HIGHS").solve(lp, tol=1e-9).primal_obj
    lpf = linear_design_lp(pd.FiniteSet(ball.extreme_points()), 0.7, W)
    vals["finite"] = backends.get_backend("HIGHS").solve(lpf, tol=1e-9).primal_obj
    assert vals["dual"] == pytest.approx(vals["compact"], abs=1e-9)
    assert vals["finite"] == pytest.approx(vals["compact"], abs=1e-9)


def test_lp_is_sparse_and_has_no_marginal_variables():
    n = 40
    p = np.full(n, 1 / n)
    lp = linear_design_lp(pd.L1Ball(p, 0.01), 1.0, np.eye(n) / n)
    assert set(lp.blocks) == {"P", "t", "s"}
    assert lp.n_vars == n * n + 2 * n
    # O(N·M): row sums (NM), t- and s-rows (2NM each), privacy rows with q = P̂ᵀP inlined (NM + 2M)
    assert lp.A.nnz == 6 * n * n + 2 * n
    lpd = linear_design_lp(pd.L1Ball(p, 1.5), 1.0, np.eye(n) / n)
    assert set(lpd.blocks) == {"P", "t", "s", "eta", "zeta"}
    assert lpd.A.nnz == 11 * n * n + 2 * n  # + ζ in the privacy rows (NM) and the cover rows (4NM)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.floats(1e-8, 1.0), st.sampled_from([0, 1, 4]))
def test_valid_upper_bound_holds_for_any_multipliers(seed, noise, kind):
    # weak duality with a priori bounds: perturbed, wrong-signed or random y still give a bound >= optimum
    uset, eps, G, p = _instance(seed * 5 + kind)
    lp = linear_design_lp(uset, eps, p[:, None] * G)
    opt = linear_design_optimum(uset, eps, G, p)
    sol = backends.get_backend("HIGHS").solve(lp, tol=1e-9)
    assert lp.valid_upper_bound(sol.y) == pytest.approx(opt, abs=1e-9)
    rng = np.random.default_rng(seed)
    for y in (sol.y + noise * rng.normal(size=lp.n_rows), -sol.y, rng.normal(size=lp.n_rows), np.zeros(lp.n_rows)):
        assert lp.valid_upper_bound(y) >= opt - 1e-13
    y_bad = sol.y.copy()
    y_bad[0] = np.nan
    assert lp.valid_upper_bound(y_bad) >= opt - 1e-13


@pytest.mark.parametrize("solver", ["CLARABEL", "PDLP_CPU"])
def test_no_feasible_mechanism_beats_upper_bound(solver):
    # issue 11: the bound was exceeded by feasible mechanisms by up to 1.1e-7; here it never is
    worst = -np.inf
    for seed in range(40, 52):
        uset, eps, G, p = _instance(seed)
        res = design(uset, eps, utility=LinearUtility(G), prior=p, solver=solver)
        vertex = design(uset, eps, utility=LinearUtility(G), prior=p, solver="HIGHS")  # a certified feasible P
        util = LinearUtility(G)
        for W in (vertex.matrix, res.matrix):
            assert pd.leakage_capacity(W, uset) <= eps + 1e-12
            worst = max(worst, util.value(W, p) - res.upper_bound)
    assert worst <= 0.0


def test_fake_first_order_backend_certifies_and_polishes():
    uset, eps, G, p = _instance(20)
    ref = linear_design_optimum(uset, eps, G, p)
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU", solver_options={"tol": 1e-4})
    assert res.solver == "PDLP_CPU"
    assert res.info["polish"] and res.info["polish"][0] == "support"
    assert res.certified_epsilon <= eps + 1e-12
    assert res.upper_bound >= ref - 1e-12
    assert res.optimal and res.utility == pytest.approx(ref, abs=1e-7)
    unpolished = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU",
                        solver_options={"tol": 1e-4, "polish": False})
    assert unpolished.info["polish"] == []
    assert unpolished.upper_bound >= ref - 1e-12  # still a valid bound, however loose
    assert unpolished.certified_epsilon <= eps + 1e-12
    assert unpolished.upper_bound - unpolished.utility > 1e-6  # so the polish above was needed


def _fake_cupdlpx(calls: list) -> types.ModuleType:
    """A stand-in for the cupdlpx package with its Model/PDLP API, solving on the CPU with HiGHS."""
    import scipy.sparse as sp

    mod = types.ModuleType("cupdlpx")
    PDLP = types.SimpleNamespace(MINIMIZE=1, MAXIMIZE=-1, OPTIMAL=0, PRIMAL_INFEASIBLE=1, DUAL_INFEASIBLE=2,
                                 TIME_LIMIT=3, ITERATION_LIMIT=4, INFEASIBLE_OR_UNBOUNDED=5, FEAS_POLISH_SUCCESS=6)

    class Model:
        def __init__(self, objective_vector, constraint_matrix, constraint_lower_bound, constraint_upper_bound,
                     variable_lower_bound=None, variable_upper_bound=None, objective_constant=0.0):
            assert sp.issparse(constraint_matrix)
            self.args = (np.asarray(objective_vector), constraint_matrix, constraint_lower_bound,
                         constraint_upper_bound, variable_lower_bound, variable_upper_bound)
            self.ModelSense = PDLP.MINIMIZE
            self.params: dict = {}
            self.warm = None

        def setParams(self, **kw):
            self.params.update(kw)

        def setParam(self, k, v):
            self.params[k] = v

        def setWarmStart(self, primal=None, dual=None):
            self.warm = (primal, dual)

        def optimize(self):
            c, A, rl, ru, lb, ub = self.args
            assert self.ModelSense == PDLP.MAXIMIZE
            lp = lp_mod.LinearProgram(c, A.tocsr(), rl, ru, lb, ub, lb, ub, (1, 1))
            sol = backends.HighsBackend("fake", "pdlp").solve(lp, tol=self.params["OptimalityTol"])
            calls.append((self.params, self.warm))
            self.X, self.Pi = sol.x, sol.y  # maximisation convention, like cuPDLPx
            self.ObjVal, self.DualObj = sol.primal_obj, sol.primal_obj
            self.Status = PDLP.OPTIMAL
            self.IterCount, self.Runtime = sol.iterations, sol.solve_time
            return self

    mod.Model, mod.PDLP = Model, PDLP
    return mod


def test_cupdlpx_adapter_with_a_fake_gpu_package(monkeypatch):
    calls: list = []
    monkeypatch.setitem(sys.modules, "cupdlpx", _fake_cupdlpx(calls))
    monkeypatch.setattr(backends, "cuda_device_count", lambda: 1)
    uset, eps, G, p = _instance(25)
    ref = linear_design_optimum(uset, eps, G, p)
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="CUPDLPX", solver_options={"tol": 1e-4})
    assert res.solver == "CUPDLPX" and res.optimal
    assert res.utility == pytest.approx(ref, abs=1e-7) and res.upper_bound >= ref - 1e-12
    assert calls[0][0]["OptimalityTol"] == 1e-4 and calls[0][0]["OutputFlag"] is False
    assert calls[0][0]["Presolve"] is False  # PSLP leaves these LPs unchanged, in time outside TimeLimit
    assert len(calls) > 1 and res.info["polish"][-1].startswith("tol=")  # tol 1e-4 needed a tighter re-solve...
    # ...cold: a warm start was measured 10× slower on an H100 (backends.CupdlpxBackend)
    assert calls[1][1] is None
    # automatic choice for large N (threshold lowered for the test)
    monkeypatch.setattr(backends, "GPU_AUTO_SIZE", 3)
    auto = design(uset, eps, utility=LinearUtility(G), prior=p)
    assert auto.solver == "CUPDLPX"
    monkeypatch.setattr(backends, "cuda_device_count", lambda: 0)
    assert design(uset, eps, utility=LinearUtility(G), prior=p).solver == "CLARABEL"
    with pytest.raises(ImportError, match="CUDA device"):
        design(uset, eps, utility=LinearUtility(G), prior=p, solver="CUPDLPX")


def test_missing_cupdlpx_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupdlpx", None)  # import fails
    p = np.array([0.5, 0.3, 0.2])
    with pytest.raises(ImportError, match=r"pml-design\[gpu\]"):
        design(p, 1.0, utility=LinearUtility(np.eye(3)), solver="CUPDLPX")
    assert design(p, 1.0, utility=LinearUtility(np.eye(3))).solver == "CLARABEL"


def test_bad_arguments_give_clear_errors():
    p = np.array([0.5, 0.3, 0.2])
    G = LinearUtility(np.eye(3))
    with pytest.raises(ValueError, match="NOPE.*LP backends"):
        design(p, 1.0, utility=G, solver="NOPE")
    with pytest.raises(ValueError, match="PDLP_CPU.*linear utilities"):
        design(p, 1.0, utility="mutual_information", solver="PDLP_CPU")
    with pytest.raises(ValueError, match="form"):
        design(p, 1.0, utility="mutual_information", form="bogus")  # even where no form is used
    with pytest.raises(ValueError, match="form"):
        design(p, 1.0, utility=G, form="bogus")
    with pytest.raises(ValueError, match="n_outputs"):
        design(p, 1.0, utility=G, n_outputs=0)
    with pytest.raises(ValueError, match="n_outputs"):
        design(p, 1.0, utility=G, n_outputs=4)
    with pytest.raises(ValueError, match="solver_options"):
        design(p, 1.0, utility=G, solver_options={"verbose": True})
    with pytest.raises(ValueError, match="tol"):
        design(p, 1.0, utility=G, solver_options={"tol": 2.0})
    with pytest.raises(ValueError, match="backend"):
        design(p, 1.0, utility=G, solver_options={"backend": "gpu"})
    with pytest.raises(ValueError, match="not a cvxpy solver"):
        design(p, 1.0, utility=G, solver="PDLP_CPU", solver_options={"backend": "cvxpy"})
    with pytest.raises(ValueError, match="not an LP backend"):
        design(p, 1.0, utility=G, solver="ECOS", solver_options={"backend": "sparse"})
    with pytest.raises(ValueError, match="literal"):
        linear_design_lp(pd.L1Ball(p, 0.1), 1.0, np.eye(3), form="literal")
    with pytest.raises(ValueError, match="rows"):
        linear_design_lp(p, 1.0, np.eye(4))


def test_cvxpy_path_still_available_and_agrees():
    p = np.array([0.4, 0.3, 0.2, 0.1])
    ball = pd.L1Ball(p, 0.1)
    G = LinearUtility(distortion_gain(4))
    a = design(ball, 0.6, utility=G)
    b = design(ball, 0.6, utility=G, solver="CLARABEL", solver_options={"backend": "cvxpy"})
    c = design(ball, 0.6, utility=G, solver="ECOS")  # cvxpy-only solver name
    d = design(ball, 0.6, utility=G, form="literal")
    assert "backend" in a.info and "backend" not in b.info and "backend" not in c.info and "backend" not in d.info
    for r in (b, c, d):
        assert r.utility == pytest.approx(a.utility, abs=1e-6)
    curve = tradeoff_curve(ball, [0.3, 0.6], utility=G, solver="PDLP_CPU")
    assert curve[1].utility == pytest.approx(a.utility, abs=1e-6)


def test_designs_have_exact_zeros():
    rng = np.random.default_rng(3)
    n = 10
    p = rng.dirichlet(np.ones(n) * 3)
    ball = pd.L1Ball(p, 0.5 * p.min())
    G = LinearUtility(np.eye(n))
    vertex = design(ball, 1.0, utility=G, solver="HIGHS")
    ipm = design(ball, 1.0, utility=G)  # Clarabel: an interior point answer, entries ~1e-11 before cleaning
    n_zero = int((vertex.matrix == 0).sum())
    assert n_zero > 0
    assert not np.any((vertex.matrix > 0) & (vertex.matrix < 1e-9))
    assert (ipm.matrix == 0).sum() >= n_zero // 2
    assert ipm.utility == pytest.approx(vertex.utility, abs=1e-8)


def test_zero_preserving_repair():
    p = np.array([0.5, 0.3, 0.2])
    ball = pd.L1Ball(p, 0.1)
    W = np.array([[0.7, 0.3, 0.0, 0.0], [0.1, 0.5, 0.4, 0.0], [0.2, 0.0, 0.0, 0.8]])
    eps = 1.5  # only the last column (capacity 1.897) violates it
    assert pd.leakage_capacity(W, ball) > eps
    Wr, lam = lp_mod.repair_preserving_zeros(W, ball, eps)
    assert pd.leakage_capacity(Wr, ball) <= eps + 1e-12
    np.testing.assert_allclose(Wr.sum(axis=1), 1.0)
    A, B = W.max(axis=0), ball.min_output_probability(W)
    ok = A <= np.exp(eps) * B
    assert ok.sum() == 3
    assert np.all(Wr[:, ok][W[:, ok] == 0] == 0)  # columns that satisfied the bound keep their zeros
    assert lam < pd.certify(W, ball, eps, drop_empty_columns=False).repair_weight
    same, zero = lp_mod.repair_preserving_zeros(np.full((3, 2), 0.5), ball, eps)
    assert zero == 0.0


def test_restricted_lp_multipliers_bound_the_full_lp():
    uset, eps, G, p = _instance(7)
    lp = linear_design_lp(uset, eps, p[:, None] * G)
    opt = linear_design_optimum(uset, eps, G, p)
    keep = np.ones(lp.n_vars, dtype=bool)
    keep[lp.blocks["P"]] = np.random.default_rng(0).random(lp.shape[0] * lp.shape[1]) < 0.7
    keep[lp.blocks["P"].start : lp.blocks["P"].stop : lp.shape[1]] = True  # column 0: a constant mechanism fits
    sub = backends.get_backend("CLARABEL").solve(lp.restrict(keep), tol=1e-10)
    assert sub.status == "optimal"
    assert sub.primal_obj <= opt + 1e-8
    assert lp.valid_upper_bound(sub.y) >= opt - 1e-12


def test_scale_benchmark_linear_part_runs(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "bench_scale", pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "bench_scale.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.run_linear(sizes=(8,), large=(), highs_sizes=(8,), outdir=tmp_path)
    assert (tmp_path / "scale_linear.json").exists()
    paths = {r["path"] for r in out["rows"]}
    assert paths == {"sparse CLARABEL", "cvxpy CLARABEL", "sparse HIGHS"}
    assert all(r["optimal"] for r in out["rows"] if r["path"].startswith("sparse"))


def test_time_limit_covers_the_whole_linear_design_and_warns(capsys):
    """``time_limit`` is for the whole call (issue 13: within 10 % + 1 s); a stopped solve is certified and warns."""
    import time as _time

    from pml_design.design.result import PMLDesignWarning

    rng = np.random.default_rng(0)
    n = 150
    p = rng.dirichlet(np.ones(n) * 5)
    ball = pd.L1Ball(p, 0.5 * p.min())
    limit = 0.3
    t0 = _time.perf_counter()
    with pytest.warns(PMLDesignWarning, match=r"time limit 0\.3 s.*raise solver_options"):
        res = design(ball, 1.0, utility=LinearUtility(np.eye(n)), solver="CLARABEL",
                     solver_options={"time_limit": limit, "progress": True})
    assert _time.perf_counter() - t0 <= 1.1 * limit + 1.0
    assert res.certified_epsilon <= 1.0 + 1e-12 and not res.optimal
    assert res.info["solver_status"] == "time_limit"
    full = design(ball, 1.0, utility=LinearUtility(np.eye(n)), solver_options={"progress": False})
    assert full.optimal and res.upper_bound >= full.utility - 1e-9  # the stopped solve's bound is still valid
    err = capsys.readouterr().err
    assert "linear design LP, 45300 rows" in err and "CLARABEL done in" in err and "gap" in err


def test_time_limited_solve_keeps_time_for_certification(monkeypatch):
    """The backend gets the time left minus a share for what follows it (measured 32 s after a 145 s solve at
    N = 4000 on the GPU machine): ``POST_SOLVE_S_PER_NNZ`` per LP nonzero, at most 30 % of what is left."""
    from pml_design.design.linear import lp as lp_mod

    seen: list = []
    b = backends.get_backend("CLARABEL")
    inner = b.solve

    def spy(lp, *, tol, time_limit=None, warm_start=None):
        seen.append((time_limit, lp.A.nnz))
        return inner(lp, tol=tol, time_limit=time_limit, warm_start=warm_start)

    monkeypatch.setattr(b, "solve", spy)
    uset, eps, G, p = _instance(21)
    design(uset, eps, utility=LinearUtility(G), prior=p, solver="CLARABEL", solver_options={"time_limit": 50.0})
    limit, nnz = seen[0]
    keep = min(0.3 * 50.0, lp_mod.POST_SOLVE_S_PER_NNZ * nnz)
    assert 50.0 - keep - 1.0 <= limit <= 50.0 - keep + 1e-9
    monkeypatch.setattr(lp_mod, "POST_SOLVE_S_PER_NNZ", 1.0)  # a huge LP: at most 30 % is kept back
    seen.clear()
    design(uset, eps, utility=LinearUtility(G), prior=p, solver="CLARABEL", solver_options={"time_limit": 50.0})
    assert 0.7 * 50.0 - 1.0 <= seen[0][0] <= 0.7 * 50.0 + 1e-9


def test_polish_support_only_skips_the_tighter_resolves():
    uset, eps, G, p = _instance(20)
    ref = linear_design_optimum(uset, eps, G, p)
    full = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU", solver_options={"tol": 1e-3})
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU",
                 solver_options={"tol": 1e-3, "polish": "support"})
    assert res.info["polish"] == ["support"]
    assert any(s.startswith("tol=") for s in full.info["polish"])  # the default goes on where it is needed
    assert res.certified_epsilon <= eps + 1e-12 and res.upper_bound >= ref - 1e-12
    assert res.utility == pytest.approx(ref, abs=1e-7)  # the exact solve on the support found the optimum here
    with pytest.raises(ValueError, match=r"solver_options\['polish'\] must be True, False or 'support', got 'yes'"):
        design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU", solver_options={"polish": "yes"})


def test_an_unfinished_iterate_with_empty_rows_is_still_certified(monkeypatch):
    """Found on the GPU machine (N = 4000, time limit): the support polish, stopped by the limit, returned rows
    without mass and the design raised CertificationError. Such rows now take the other rows' mean (or the whole
    matrix a constant column); a stopped support solve is not used as a polish."""
    from pml_design.design.linear import lp as lp_mod
    from pml_design.design.linear.backends import LPSolution

    uset, eps, G, p = _instance(22)
    util = LinearUtility(G)
    n = p.size
    raw = np.zeros((n, n))
    raw[0, 0] = raw[1, 1] = 1.0  # two informative rows, the others empty
    W, cert, value = lp_mod._certify_candidate(raw, uset, eps, util, p)
    assert cert.capacity <= eps + 1e-12 and np.allclose(cert.matrix.sum(axis=1), 1.0)
    assert pd.leakage_capacity(cert.matrix, uset) <= eps + 1e-12
    W0, cert0, value0 = lp_mod._certify_candidate(np.zeros((n, n)), uset, eps, util, p)
    # the uniform mechanism on the gain's n outputs: Σ_x P_x Σ_y G[x, y] / n (a one-column matrix would broadcast
    # against the gain and be valued Σ_x P_x Σ_y G[x, y], n times too much)
    assert cert0.matrix.shape == (n, n) and value0 == pytest.approx(float(p @ G.sum(axis=1)) / n)

    b = backends.get_backend("HIGHS")

    def stopped(lp, *, tol, time_limit=None, warm_start=None):
        return LPSolution(x=np.zeros(lp.n_vars), y=np.zeros(lp.n_rows), status="time_limit", primal_obj=0.0,
                          dual_obj=float("nan"), iterations=1, solve_time=0.0, backend="HIGHS")

    monkeypatch.setattr(b, "solve", stopped)
    res = design(uset, eps, utility=util, prior=p, solver="PDLP_CPU", solver_options={"tol": 1e-3, "polish": "support"})
    assert res.info["polish"] == [] and res.certified_epsilon <= eps + 1e-12


def test_support_polish_needs_time_for_its_setup(monkeypatch):
    """With less time left than ``POST_SOLVE_S_PER_NNZ`` per nonzero, the exact support solve is not started (its
    setup is outside any time limit: 50 s on a 12 s budget at N = 4000 on the GPU machine)."""
    from pml_design.design.linear import lp as lp_mod

    uset, eps, G, p = _instance(20)
    called: list = []
    b = backends.get_backend("HIGHS")
    inner = b.solve
    monkeypatch.setattr(b, "solve", lambda lp, **kw: called.append(1) or inner(lp, **kw))
    monkeypatch.setattr(lp_mod, "POST_SOLVE_S_PER_NNZ", 1e9)  # no budget is ever enough
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU",
                 solver_options={"tol": 1e-3, "polish": "support", "time_limit": 30.0})
    assert called == [] and res.info["polish"] == [] and res.certified_epsilon <= eps + 1e-12
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU",
                 solver_options={"tol": 1e-3, "polish": "support"})  # no time limit: polished
    assert called and res.info["polish"] == ["support"]


def test_tighter_resolve_needs_time_for_its_certification(monkeypatch):
    """A tolerance re-solve starts only with more than ``POST_SOLVE_S_PER_NNZ`` per nonzero left, and its backend
    gets what is left minus that reserve (device session 3, N = 4000, time limit 150 s: a re-solve started with
    ~25 s left after a solve stopped by the limit, and its certification ended the call at 169 s)."""
    from pml_design.design.linear import lp as lp_mod

    uset, eps, G, p = _instance(20)
    b = backends.get_backend("PDLP_CPU")
    inner = b.solve
    seen: list = []

    def spy(lp, *, tol, time_limit=None, warm_start=None):
        seen.append((tol, time_limit, lp.A.nnz))
        return inner(lp, tol=tol, time_limit=time_limit, warm_start=warm_start)

    monkeypatch.setattr(b, "solve", spy)
    opts = {"tol": 1e-3, "polish": True, "polish_solver": "HIGHS", "time_limit": 60.0}
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU", solver_options=opts)
    resolves = [s for s in seen if s[0] < 1e-3]
    assert resolves and any(st.startswith("tol=") for st in res.info["polish"])  # time enough: polished
    for _tol, limit, nnz in resolves:  # each one keeps the reserve back from what was left
        assert limit <= 60.0 - lp_mod.POST_SOLVE_S_PER_NNZ * nnz + 1e-9
    monkeypatch.setattr(lp_mod, "POST_SOLVE_S_PER_NNZ", 0.3 * 60.0 / seen[0][2])  # 18 s kept back per solve
    seen.clear()
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU", solver_options=opts)
    assert len(seen) == 1 or all(limit <= 60.0 - 18.0 + 1e-9 for _t, limit, _n in seen[1:])
    monkeypatch.setattr(lp_mod, "POST_SOLVE_S_PER_NNZ", 1e9)  # never time enough for a re-solve's certification
    seen.clear()
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="PDLP_CPU", solver_options=opts)
    assert len(seen) == 1 and not any(st.startswith("tol=") for st in res.info["polish"])
    assert res.certified_epsilon <= eps + 1e-12


def test_an_all_zero_iterate_is_not_valued_as_a_perfect_mechanism(monkeypatch):
    """Review 2: a stopped solve returning x = 0 was "certified" as a one-column constant mechanism, which
    LinearUtility.value broadcast against the gain: probability of truth 1.0 at ε = 1, reported optimal."""
    from pml_design.design.linear.backends import LPSolution

    n = 6
    p = np.random.default_rng(1).dirichlet(np.ones(n))
    uset = pd.L1Ball(p, 0.1 * p.min())
    b = backends.get_backend("PDLP_CPU")

    def stopped(lp, *, tol, time_limit=None, warm_start=None):
        return LPSolution(x=np.zeros(lp.n_vars), y=np.zeros(lp.n_rows), status="time_limit", primal_obj=0.0,
                          dual_obj=float("nan"), iterations=1, solve_time=0.0, backend="PDLP_CPU")

    monkeypatch.setattr(b, "solve", stopped)
    with pytest.warns(pd.PMLDesignWarning, match=r"no time limit was set, the solver stopped short.*another solver"):
        res = design(uset, 1.0, utility=LinearUtility(np.eye(n)), prior=p, solver="PDLP_CPU",
                     solver_options={"polish": False})
    assert res.matrix.shape == (n, n) and not res.optimal
    assert res.utility == pytest.approx(1.0 / n)  # the uniform mechanism: truth with probability 1/n
    assert res.certified_epsilon <= 1.0 + 1e-12


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 7),
    m=st.integers(1, 7),
    scale=st.sampled_from([1.0, 1e-3, 1e-12, 1e-15]),
    dead=st.floats(0.0, 1.0),
)
def test_certify_candidate_of_any_iterate_is_certified_and_row_stochastic(seed, n, m, scale, dead):
    """Review 2: an iterate whose rows carry only tiny mass (entries ≤ 1e-9 × their column's maximum, or below
    1e-13), NaN, ±inf or negative entries is certified with its output alphabet kept (a row emptied by the
    cleaning raised CertificationError before)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n))
    uset = pd.L1Ball(p, float(rng.uniform(0.0, 2.0)))
    raw = rng.dirichlet(np.full(m, 0.5), size=n) * rng.choice([1.0, scale], size=(n, 1))
    kill = rng.random(n) < dead  # rows with no or only tiny mass
    raw[kill] = rng.choice([0.0, 1e-12, 1e-14, -1.0, np.nan], size=(int(kill.sum()), 1)) * np.ones(m)
    spoil = rng.random((n, m)) < 0.1
    raw[spoil] = rng.choice([np.nan, -np.inf, np.inf, -1e-3], size=int(spoil.sum()))
    G = rng.normal(size=(n, m))
    W, cert, value = lp_mod._certify_candidate(raw, uset, 1.0, LinearUtility(G), p)
    M = cert.matrix
    assert M.shape == (n, m) and np.all(M >= 0) and np.allclose(M.sum(axis=1), 1.0, atol=1e-12)
    assert pd.leakage_capacity(M, uset) <= 1.0 + 1e-12
    assert value == pytest.approx(float(np.sum(p[:, None] * G * M)), abs=1e-12)  # the value of the matrix returned


def test_linear_utility_value_rejects_a_matrix_of_another_shape():
    """Review 2: ``np.sum(weights * matrix)`` broadcast an (N, 1) matrix against an (N, M) gain (M times too much)."""
    p = np.array([0.5, 0.3, 0.2])
    util = LinearUtility(np.eye(3))
    assert util.value(np.full((3, 3), 1 / 3), p) == pytest.approx(1 / 3)  # closed form: truth with probability 1/3
    with pytest.raises(ValueError, match=r"matrix has shape \(3, 1\) but the gain has shape \(3, 3\)"):
        util.value(np.ones((3, 1)), p)


@pytest.mark.parametrize(
    ("opts", "err", "match"),
    [
        ({"polish": 1}, ValueError, r"solver_options\['polish'\] must be True, False or 'support', got 1"),
        ({"polish": np.array([1, 0])}, ValueError, r"solver_options\['polish'\] must be True, False or 'support'"),
        ({"polish": None}, ValueError, r"solver_options\['polish'\] must be True, False or 'support', got None"),
        ({"polish_solver": "NOPE"}, ValueError, r"solver_options\['polish_solver'\]: unknown LP backend 'NOPE'"),
        ({"polish_solver": 3}, TypeError, r"solver_options\['polish_solver'\]: solver must be a string, got 3"),
    ],
)
def test_polish_options_are_checked_before_the_solve(opts, err, match):
    """Review 2: ``polish`` accepted 1/0 and raised numpy's own error for an array; an unknown ``polish_solver`` was
    only noticed when a polish was needed (never, after an exact solve)."""
    p = np.array([0.5, 0.3, 0.2])
    with pytest.raises(err, match=match):
        design(pd.L1Ball(p, 0.1), 1.0, utility=LinearUtility(np.eye(3)), prior=p, solver="HIGHS", solver_options=opts)
    res = design(pd.L1Ball(p, 0.1), 1.0, utility=LinearUtility(np.eye(3)), prior=p, solver="HIGHS",
                 solver_options={"polish": np.True_, "polish_solver": "clarabel"})  # numpy bools and any case accepted
    assert res.optimal
