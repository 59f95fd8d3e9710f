"""Audit of the design contract: random designs of every utility and method, checked independently.

Implements the audit of issue 23 ("Designs that fail or over-claim at the edges"): random designs (N = 2–300 in
the full run, every utility — mutual information, χ², total variation, MAP accuracy, a linear gain (identity,
distortion, a random non-square one), frequency estimation — and every method — auto, exact, scalable, convex,
the estimation design; ℓ1 balls inside and outside Proposition 2, fixed priors, the simplex, rare categories,
masses down to 1e-300) and four counts that must all be 0:

* **violations**: the guarantee fails when checked by a code path other than ``certify``/``leakage_capacity``: the
  worst-case mass ``min_{Q ∈ ball} Q·c`` of every output by an LP (SciPy HiGHS over ``(Q, t)``, ``|Q − P̂| ≤ t``,
  ``Σt ≤ β``) on columns scaled by their maximum, or by the ball's vertices enumerated with pycddlib from the 2^N
  sign inequalities (N ≤ 5); a matrix that is not row-stochastic counts too;
* **raw errors**: an exception other than ``ValueError``/``TypeError`` (a clear refusal is fine);
* **false optimal claims**: ``optimal=True`` while a brute-force optimum (N ≤ 4: every extreme ray of the column
  cone from the vertex inequalities, by trying every choice of N − 1 tight rows, then the ray LP; linear gains, N ≤ 5:
  the LP over
  the mechanism with one constraint per vertex, x and y) differs from the utility by more than 1e-6 relative
  (the documented floor 1e-13 absolute); a proven bound on the wrong side of that optimum counts too;
* **overruns**: a call with ``time_limit`` T that ends after ``1.1 T + 5`` s.

``python -m benchmarks.bench_audit [--quick] [--cases K] [--seed S]`` writes ``benchmarks/results/audit.json``
(``--quick``: ~100 small cases, 1–2 minutes; the README table is rendered from a full run only).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pathlib
import time
import traceback
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "results" / "audit.json"
REL = 1e-6
ABS = 1e-13
#: Largest N whose cone rays are brute-forced (every choice of N − 1 of the ~N·|vertices| rows: 2e4 at N = 4, 4.6e6
#: and ~30 s at N = 5); linear gains are brute-forced up to N = 5 (one LP).
BRUTE_RAYS_SIZE = 4
SUBCONVEX = ("mutual_information", "chi_square_information", "total_variation_information", "map_accuracy")


# ----------------------------------------------------------------------------------------------- the cases
def _prior(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    if kind == "zipf":
        p = 1.0 / np.arange(1, n + 1) ** rng.uniform(0.8, 1.5)
    elif kind == "rare":  # a few categories of mass 1e-3 … 1e-6
        p = rng.dirichlet(np.ones(n))
        k = int(rng.integers(1, max(2, n // 3)))
        p[rng.choice(n, k, replace=False)] = 10.0 ** rng.uniform(-6, -3, k)
    elif kind == "tiny":  # degenerate masses: 1e-19 … 1e-300
        p = rng.dirichlet(np.ones(n))
        k = int(rng.integers(1, max(2, n // 2)))
        p[rng.choice(n, k, replace=False)] = 10.0 ** rng.uniform(-300, -19, k)
    else:
        p = rng.dirichlet(np.full(n, rng.choice([0.5, 1.0, 5.0])))
        p = np.maximum(p, 1e-12)
    p = p / p.sum()
    rng.shuffle(p)
    return p


def make_case(rng: np.random.Generator, quick: bool) -> dict:
    """One random design: set, ε, utility, method, time limit."""
    r = rng.random()
    if quick:
        n = int(rng.integers(2, 6)) if r < 0.6 else int(rng.integers(6, 40))
    else:
        n = int(rng.integers(2, 6)) if r < 0.4 else int(rng.integers(6, 61)) if r < 0.85 else int(rng.integers(61, 301))
    kind = str(rng.choice(["dirichlet", "zipf", "rare", "tiny"], p=[0.4, 0.2, 0.2, 0.2]))
    p = _prior(rng, n, kind)
    set_kind = str(rng.choice(["inside", "outside", "prior", "simplex"], p=[0.35, 0.4, 0.15, 0.1]))
    radius = 0.0
    if set_kind == "inside":
        radius = float(2 * p.min() * rng.uniform(0.05, 0.95))
    elif set_kind == "outside":
        radius = float(max(2 * p.min(), 1e-300) * rng.uniform(1.0, 4.0) + rng.choice([0.0, 0.05, 0.3]))
    utility = str(rng.choice(list(SUBCONVEX) + ["identity", "distortion", "random_gain", "frequency_estimation"],
                             p=[0.2, 0.12, 0.12, 0.1, 0.12, 0.08, 0.11, 0.15]))
    if utility == "frequency_estimation":
        method = "auto"
        if set_kind == "simplex":
            set_kind = "inside"
            radius = float(2 * p.min() * 0.5)
    elif utility in SUBCONVEX:
        method = str(rng.choice(["auto", "exact", "scalable"], p=[0.5, 0.2, 0.3]))
    else:
        method = str(rng.choice(["auto", "convex", "scalable"], p=[0.4, 0.3, 0.3]))
    m_gain = int(rng.integers(2, n + 3)) if utility == "random_gain" else n
    return {
        "n": n, "prior_kind": kind, "set": set_kind, "radius": radius, "p": p.tolist(),
        "epsilon": float(rng.choice([0.05, 0.3, 1.0, 2.0, 4.0])), "utility": utility, "method": method,
        "time_limit": float(rng.choice([1.0, 2.0] if quick else [1.0, 2.0, 5.0])), "m_gain": m_gain,
        "gain_seed": int(rng.integers(2**31)),
    }


def build(case: dict) -> tuple:
    """``(uncertainty set, utility object or name)`` of a case."""
    from pml_design import L1Ball, Simplex
    from pml_design.design import LinearUtility, distortion_gain

    p = np.asarray(case["p"])
    n = case["n"]
    uset = Simplex(n) if case["set"] == "simplex" else L1Ball(p, case["radius"])
    u = case["utility"]
    if u == "identity":
        util = LinearUtility(np.eye(n))
    elif u == "distortion":
        util = LinearUtility(distortion_gain(n))
    elif u == "random_gain":
        util = LinearUtility(np.random.default_rng(case["gain_seed"]).normal(size=(n, case["m_gain"])))
    else:
        util = u
    return uset, util


# ------------------------------------------------------------------------------------- independent checks
def _lp_min_mass(c: np.ndarray, p: np.ndarray, beta: float) -> float:
    """``min Q·c`` over ``{Q ≥ 0, ΣQ = 1, ‖Q − p‖₁ ≤ β}`` by an LP in ``(Q, t)`` (SciPy HiGHS)."""
    from scipy.optimize import linprog

    n = p.size
    eye = np.eye(n)
    A_ub = np.block([[eye, -eye], [-eye, -eye], [np.zeros((1, n)), np.ones((1, n))]])
    b_ub = np.concatenate([p, -p, [beta]])
    res = linprog(np.concatenate([c, np.zeros(n)]), A_ub=A_ub, b_ub=b_ub,
                  A_eq=np.concatenate([np.ones(n), np.zeros(n)])[None, :], b_eq=[1.0], bounds=(0, None),
                  method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"checker LP failed: {res.message}")
    return float(res.fun)


def ball_vertices(p: np.ndarray, beta: float) -> np.ndarray:
    """Vertices of ``{Q ≥ 0, ΣQ = 1, Σ s_i (Q_i − p_i) ≤ β ∀ s ∈ {±1}^N}`` (the ℓ1 ball ∩ simplex) by pycddlib."""
    import cdd

    n = p.size
    rows = [[0.0] + list(np.eye(n)[i]) for i in range(n)]  # Q_i ≥ 0
    for s in itertools.product((-1.0, 1.0), repeat=n):
        s = np.array(s)
        rows.append([beta + float(s @ p)] + list(-s))  # β + s·p − s·Q ≥ 0
    rows.append([-1.0] + [1.0] * n)  # ΣQ − 1 = 0 (linearity)
    mat = cdd.matrix_from_array(rows, rep_type=cdd.RepType.INEQUALITY, lin_set=[len(rows) - 1])
    gen = np.array(cdd.copy_generators(cdd.polyhedron_from_matrix(mat)).array, dtype=float)
    return gen[gen[:, 0] == 1, 1:]


def vertices(uset) -> np.ndarray | None:  # noqa: ANN001
    from pml_design import Simplex

    if isinstance(uset, Simplex):
        return np.eye(uset.size)
    if uset.radius == 0:
        return uset.center[None, :]
    return ball_vertices(uset.center, uset.radius) if uset.size <= 5 else None


def check_capacity(W: np.ndarray, uset, eps: float, verts: np.ndarray | None) -> tuple[float, str]:  # noqa: ANN001
    """Worst-case leakage of ``W`` over the set, by vertices (small N) or one LP per output (N ≤ 60), else ``nan``."""
    from pml_design import Simplex

    cols = W[:, W.max(axis=0) > 0]
    cols = cols / cols.max(axis=0)  # scaled columns: no subnormal mass is formed
    if verts is not None:
        return float(np.max(-np.log((verts @ cols).min(axis=0)))), "vertices"
    if isinstance(uset, Simplex):
        return float(np.max(-np.log(cols.min(axis=0)))), "simplex"
    if cols.shape[1] > 1000 or uset.size > 60:
        return float("nan"), "skipped"
    low = np.array([_lp_min_mass(cols[:, j], uset.center, uset.radius) for j in range(cols.shape[1])])
    return float(np.max(-np.log(low))), "lp"


def _util_obj(util):  # noqa: ANN001, ANN202
    from pml_design.design.utilities import as_utility

    return as_utility(util)


def cone_rays(A: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Every extreme ray of ``{c : A c ≥ 0}`` (pointed, in R^N) by brute force: the null vector of each choice of
    N − 1 rows (generalised cross product of minors), kept when it satisfies every row. No adjacency test, so no
    ray is lost to floating-point tolerance (pycddlib's float double description lost 16 of 40 rays at β = 1.6e-3)."""
    k, n = A.shape
    out = []
    for combo in _chunks(itertools.combinations(range(k), n - 1), 200000):
        S = A[np.array(combo)]  # (B, n−1, n)
        v = np.stack([(-1) ** j * np.linalg.det(np.delete(S, j, axis=2)) for j in range(n)], axis=1)
        norm = np.abs(v).max(axis=1)
        v = v[norm > 1e-12] / norm[norm > 1e-12, None]
        for sgn in (1.0, -1.0):
            w = sgn * v
            ok = (A @ w.T >= -tol * np.abs(A).sum(axis=1)[:, None]).all(axis=0)
            out.append(w[ok])
    R = np.vstack(out) if out else np.zeros((0, n))
    R = np.where(np.abs(R) < 1e-13, 0.0, R)
    R = R[R.max(axis=1) > 0]
    return np.unique(np.round(R / R.sum(axis=1, keepdims=True), 12), axis=0).T


def _chunks(it, size: int):  # noqa: ANN001, ANN202
    buf = []
    for x in it:
        buf.append(x)
        if len(buf) == size:
            yield buf
            buf = []
    if buf:
        yield buf


def brute_optimum(uset, eps: float, util, prior: np.ndarray, verts: np.ndarray) -> float:  # noqa: ANN001
    """The optimum by an independent route (N ≤ 5): every extreme ray of the cone by brute force (:func:`cone_rays`)
    + the ray LP, or the mechanism LP with one constraint per vertex for a linear gain."""
    from scipy.optimize import linprog

    from pml_design.design import LinearUtility

    n = uset.size
    e = math.exp(eps)
    u = _util_obj(util)
    if isinstance(u, LinearUtility):
        m = u.gain.shape[1]
        w = u.weights(prior)  # (N, M)
        rows = []
        for q in verts:  # W[x, y] − e Σ_x' q_x' W[x', y] ≤ 0 for every x, y
            for x in range(n):
                a = -e * np.repeat(q[:, None], 1, axis=1)
                a[x] += 1.0
                for y in range(m):
                    r = np.zeros((n, m))
                    r[:, y] = a[:, 0]
                    rows.append(r.ravel())
        A_eq = np.kron(np.eye(n), np.ones((1, m)))
        res = linprog(-w.ravel(), A_ub=np.array(rows), b_ub=np.zeros(len(rows)), A_eq=A_eq, b_eq=np.ones(n),
                      bounds=(0, None), method="highs")
        if res.status != 0:
            raise RuntimeError(f"brute-force LP failed: {res.message}")
        return float(-res.fun)
    A = [np.eye(n)]  # c ≥ 0 and e^ε q·c − c_x ≥ 0 for every vertex q and x
    for q in verts:
        A.append(e * np.repeat(q[None, :], n, axis=0) - np.eye(n))
    R = cone_rays(np.unique(np.round(np.vstack(A), 15), axis=0))
    R = R / R.sum(axis=0)
    vals = np.asarray(u.mu(R, prior), dtype=float)
    res = linprog(-vals, A_eq=R, b_eq=np.ones(n), bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"brute-force ray LP failed: {res.message}")
    return float(-res.fun)


# ------------------------------------------------------------------------------------------------ one run
def run_case(case: dict) -> dict:
    from pml_design import design
    from pml_design.design import PMLDesignWarning

    rec = {k: case[k] for k in ("n", "prior_kind", "set", "radius", "epsilon", "utility", "method", "time_limit")}
    rec["min_p"] = float(min(case["p"]))
    uset, util = build(case)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = design(uset, case["epsilon"], utility=util, method=case["method"],
                         prior=np.asarray(case["p"]) if case["set"] == "simplex" else None,
                         solver_options={"time_limit": case["time_limit"], "progress": False})
    except (ValueError, TypeError) as exc:
        rec.update(outcome="refused", message=str(exc)[:300], wall=time.perf_counter() - t0)
        return rec
    except Exception as exc:  # noqa: BLE001 - the audit counts them
        rec.update(outcome="raw_error", message=f"{type(exc).__name__}: {exc}"[:300], wall=time.perf_counter() - t0,
                   trace=traceback.format_exc()[-1500:])
        return rec
    wall = time.perf_counter() - t0
    rec.update(outcome="designed", wall=wall, method_used=res.method, utility_value=float(res.utility),
               bound=float(res.bound), relative_gap=float(res.relative_gap), optimal=bool(res.optimal),
               certified_epsilon=float(res.certified_epsilon), sense=res.sense,
               warned=any(issubclass(w.category, PMLDesignWarning) for w in caught))
    rec["overrun"] = bool(wall > 1.1 * case["time_limit"] + 5.0)
    W = np.asarray(res.matrix)
    stochastic = bool(np.all(W >= 0) and np.allclose(W.sum(axis=1), 1.0, atol=1e-9))
    verts = vertices(uset)
    cap, how = check_capacity(W, uset, case["epsilon"], verts)
    rec.update(check_capacity=cap, checker=how)
    rec["violation"] = bool(not stochastic or (np.isfinite(cap) and cap > case["epsilon"] + 1e-7)
                            or not np.isfinite(res.certified_epsilon) or res.certified_epsilon > case["epsilon"] + 1e-12)
    rec["capacity_mismatch"] = bool(np.isfinite(cap) and abs(cap - res.certified_epsilon) > 1e-6 * max(1.0, cap))
    rec["missing_warning"] = bool(not res.relative_gap <= 0.01 and not rec["warned"])
    small = uset.size <= (5 if case["utility"] in ("identity", "distortion", "random_gain") else BRUTE_RAYS_SIZE)
    if verts is not None and small and case["utility"] != "frequency_estimation":
        try:
            opt = brute_optimum(uset, case["epsilon"], util, res.prior, verts)
        except Exception as exc:  # noqa: BLE001 - a checker failure is recorded, not counted
            rec["brute_error"] = str(exc)[:200]
        else:
            tol = REL * abs(opt) + ABS
            rec["brute_optimum"] = opt
            rec["false_optimal"] = bool(res.optimal and abs(opt - res.utility) > tol)
            rec["invalid_bound"] = bool(np.isfinite(res.bound) and res.bound < opt - max(tol, 1e-9 * abs(opt)))
            rec["above_optimum"] = bool(res.utility > opt + max(tol, 1e-9 * abs(opt)))
    return rec


def summarise(records: list[dict]) -> dict:
    designed = [r for r in records if r["outcome"] == "designed"]
    return {
        "cases": len(records),
        "designed": len(designed),
        "refused": sum(r["outcome"] == "refused" for r in records),
        "violations": sum(r.get("violation", False) for r in designed),
        "raw_errors": sum(r["outcome"] == "raw_error" for r in records),
        "false_optimal": sum(r.get("false_optimal", False) for r in designed),
        "invalid_bounds": sum(r.get("invalid_bound", False) or r.get("above_optimum", False) for r in designed),
        "overruns": sum(r.get("overrun", False) for r in designed),
        "missing_warnings": sum(r.get("missing_warning", False) for r in designed),
        "capacity_mismatches": sum(r.get("capacity_mismatch", False) for r in designed),
        "brute_forced": sum("brute_optimum" in r for r in designed),
        "independently_checked": sum(r.get("checker") in ("vertices", "lp", "simplex") for r in designed),
        "optimal_claims": sum(r.get("optimal", False) for r in designed),
        "max_wall_over_limit": max((r["wall"] - 1.1 * r["time_limit"] for r in designed), default=0.0),
    }


def table(data: dict) -> str:
    """The README table: one row per utility."""
    cols = ["violations", "raw_errors", "false_optimal", "invalid_bounds", "overruns", "missing_warnings"]
    head = ("| utility | cases | designed | refused | violations | raw errors | false `optimal` | invalid bounds | "
            "overruns | missing warnings | brute-forced | proven optimal |")
    lines = [head, "|" + "---|" * 12]
    by_u: dict[str, list] = {}
    for r in data["records"]:
        by_u.setdefault(r["utility"], []).append(r)
    for u in sorted(by_u):
        s = summarise(by_u[u])
        lines.append(f"| {u} | {s['cases']} | {s['designed']} | {s['refused']} | "
                     + " | ".join(str(s[c]) for c in cols) + f" | {s['brute_forced']} | {s['optimal_claims']} |")
    s = data["summary"]
    lines.append(f"| **all** | {s['cases']} | {s['designed']} | {s['refused']} | "
                 + " | ".join(f"**{s[c]}**" for c in cols) + f" | {s['brute_forced']} | {s['optimal_claims']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="~100 small cases (1-2 minutes)")
    ap.add_argument("--cases", type=int, default=None, help="number of random cases (default 100 quick, 400 full)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    k = args.cases or (100 if args.quick else 400)
    records = []
    t0 = time.perf_counter()
    for i in range(k):
        case = make_case(rng, args.quick)
        rec = run_case(case)
        records.append(rec)
        bad = [c for c in ("violation", "false_optimal", "invalid_bound", "overrun", "missing_warning") if rec.get(c)]
        if rec["outcome"] == "raw_error" or bad:
            print(f"[{i}] {rec['outcome']} {bad} {rec}", flush=True)
    data = {"quick": bool(args.quick), "seed": args.seed, "elapsed_s": time.perf_counter() - t0,
            "summary": summarise(records), "records": records}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, default=float))
    tmp.replace(args.out)
    print(json.dumps(data["summary"], indent=1))
    print(table(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
