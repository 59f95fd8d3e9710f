"""Benchmark of the deployment workflow: ``pml-design privatize`` / ``estimate`` throughput and memory.

For each size, a CSV with an id column, an 8-category column and a numeric column is generated in a
temporary directory (deleted afterwards), a mechanism file is designed from a 10⁴-record sample
(``map_accuracy``, ε = 1, δ = 1e-6), and the commands run in their own subprocesses:

* ``privatize``: rows/s as reported by the command (streaming time, without the interpreter start) and the
  whole command's wall time; peak resident memory of the process (its VmHWM), which must stay flat in the
  file size (the file is read and written in 4 MiB blocks);
* ``estimate``: the same for reading the privatized column back and estimating with 95 % intervals (error
  against the true frequencies of the generated column, and how many intervals cover them);
* ``privatize_dataframe`` on a pandas DataFrame in memory, in this process;
* resident memory batch by batch while privatizing the largest file in this process (first vs last quarter
  of the batches: flat means no growth with the number of rows processed).

Baseline: the peak memory of ``pml-design --version`` (the interpreter with ``pml_design`` imported).

Cohort trade-off (``--part cohort``, writes ``deploy_cohort.json``; closed form, no sampling): a population of n
users, no trusted curator. (A) everyone answers through the best ε-LDP oracle (GRR, k-subset selection, OUE;
smallest asymptotic error); (B) a first cohort of n₁ users answers through an ε-LDP oracle (GRR or subset
selection, the better), the others through the (ε, δ)-PML design over the ball of
:func:`pml_design.priors.ldp_ball_radius` (δ = 1e-6) around P̂ ≈ P (the estimate's expected value), designed for
``utility="frequency_estimation"``. Errors are the exact asymptotic total MSE ``E‖P̂ − P‖²`` of the maximum-
likelihood estimate from all n reports: the Fisher informations of the reports add, so (B) is
``tr (n₁F₁ + (n − n₁)F₂)⁻¹ − ‖P‖²/n`` — the optimal combination of both groups' reports — and (A) is
``(tr F⁻¹ − ‖P‖²)/n`` (:func:`pml_design.estimation_mse`). (B) is what :func:`pml_design.combined_estimate` (``pml-design
estimate --first-cohort``) attains: ``tests/test_cohort_combined.py`` simulates its MSE against :func:`combined_error`.
Reported: the ratio B/A at the best cohort size,
the best cohort fraction, and the break-even n (smallest n on the grid where B beats A), on Adult columns, ε ∈
{1, 2}.

First-cohort radius (``--part radius``, writes ``deploy_radius.json``): the reports each ε₁-LDP oracle needs for a
ball of radius below 1 at δ = 1e-6 (docs/design.md §11.2; Hadamard response's Bernstein radius against its old
coordinate-wise one, OUE's Bernstein radius, GRR and subset selection with their exact report MGF).

Run ``python benchmarks/bench_deploy.py [--quick] [--part throughput|cohort|radius|all]``; writes
``bench_deploy.json``, ``deploy_cohort.json`` and ``deploy_radius.json`` into ``--outdir``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
CATEGORIES = [f"city_{i}" for i in range(8)]
PROBS = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.05, 0.02])


def write_csv(path: pathlib.Path, rows: int, seed: int = 12345) -> np.ndarray:
    """An (id, city, value) CSV with ``rows`` rows (blocks, pyarrow); returns the city counts.

    The data seed differs from the privatize seed (0): with the same seed, numpy's ``choice`` and the
    privatizing uniforms would come from one stream and be correlated.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    block = 10**6
    counts = np.zeros(len(CATEGORIES), dtype=np.int64)
    with path.open("wb") as fh:
        for start in range(0, rows, block):
            k = min(block, rows - start)
            codes = rng.choice(8, k, p=PROBS)
            counts += np.bincount(codes, minlength=len(CATEGORIES))
            table = pa.table({
                "id": np.arange(start, start + k),
                "city": pa.array(np.asarray(CATEGORIES, dtype=object)[codes], pa.string()),
                "value": rng.integers(0, 1000, k),
            })
            pacsv.write_csv(table, fh, pacsv.WriteOptions(include_header=start == 0, quoting_style="none"))
    return counts


#: Runs a command in a fresh interpreter and reports its own peak RSS (VmHWM of the exec'd process; the
#: rusage of a child would include the parent's pages at fork time).
_WRAPPER = (
    "import runpy, sys\n"
    "sys.argv = ['pml-design', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('pml_design.cli', run_name='__main__')\n"
    "finally:\n"
    "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
    "    sys.stderr.write(f'\\nPEAK_KIB {hwm}\\n')\n"
)


def _run_cli(args: list[str]) -> tuple[dict, float, float]:
    """Run ``pml-design ARGS --json`` in a subprocess: (its JSON, wall seconds, peak RSS in MiB)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PML_DESIGN_NO_PROGRESS="1")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args, "--json"], capture_output=True, text=True,
                          env=env, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"pml-design {' '.join(args)} failed: {proc.stderr[-2000:]}")
    peak = [ln for ln in proc.stderr.splitlines() if ln.startswith("PEAK_KIB")][-1]
    return json.loads(proc.stdout), wall, int(peak.split()[1]) / 1024.0


def baseline_rss() -> float:
    """Peak RSS (MiB) of the wrapper running ``pml-design --version`` (imports pml_design, does nothing)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, "--version"], capture_output=True, text=True, env=env,
                          check=False)
    return int([ln for ln in proc.stderr.splitlines() if ln.startswith("PEAK_KIB")][-1].split()[1]) / 1024.0


def make_mechanism(folder: pathlib.Path) -> pathlib.Path:
    import pml_design as pml

    rng = np.random.default_rng(1)
    sample = np.asarray(CATEGORIES, dtype=object)[rng.choice(8, 10_000, p=PROBS)]
    est = pml.design_from_samples(sample, epsilon=1.0, delta=1e-6, utility="map_accuracy")
    return est.save(folder / "mech.json")


def deploy_row(folder: pathlib.Path, mech: pathlib.Path, rows: int) -> dict:
    data, out = folder / f"data_{rows}.csv", folder / f"private_{rows}.csv"
    truth = write_csv(data, rows) / rows
    size_mib = data.stat().st_size / 2**20
    priv, priv_wall, priv_rss = _run_cli(["privatize", str(mech), "--csv", str(data), "--column", "city",
                                          "--seed", "0", "-o", str(out)])
    est, est_wall, est_rss = _run_cli(["estimate", str(mech), "--csv", str(out), "--column", "city"])
    low, high = np.array(est["ci_low"]), np.array(est["ci_high"])
    row = {
        "rows": rows,
        "file_MiB": size_mib,
        "privatize_rows_per_s": priv["rows_per_second"],
        "privatize_cmd_wall_s": priv_wall,
        "privatize_peak_MiB": priv_rss,
        "estimate_rows_per_s": rows / est["seconds"],
        "estimate_cmd_wall_s": est_wall,
        "estimate_peak_MiB": est_rss,
        "max_abs_error": float(np.max(np.abs(np.array(est["estimate"]) - truth))),
        "ci_covers_truth": f"{int(np.sum((low <= truth) & (truth <= high)))}/{len(truth)}",
    }
    data.unlink()
    out.unlink()
    return row


def _rss_mib() -> float:
    return int([ln for ln in open("/proc/self/status") if ln.startswith("VmRSS")][0].split()[1]) / 1024.0


def rss_trace(folder: pathlib.Path, mech: pathlib.Path, rows: int) -> dict:
    """Resident memory batch by batch while privatizing ``rows`` rows in this process: flat = no growth."""
    import pml_design as pml
    from pml_design.deploy.streaming import TableSource, privatize_table

    data = folder / "trace.csv"
    write_csv(data, rows)
    source = TableSource(data, "--csv")
    trace: list[float] = []
    batches = source.batches

    def traced(columns=None):
        for batch in batches(columns):
            trace.append(_rss_mib())
            yield batch

    source.batches = traced  # type: ignore[method-assign]
    privatize_table(source, "city", pml.load_mechanism(mech), folder / "trace_out.csv", np.random.default_rng(0))
    q = max(len(trace) // 4, 1)
    return {"rows": rows, "batches": len(trace), "rss_first_quarter_max_MiB": max(trace[:q]),
            "rss_last_quarter_max_MiB": max(trace[-q:]), "rss_growth_MiB": max(trace[-q:]) - max(trace[:q])}


def dataframe_row(mech: pathlib.Path, rows: int) -> dict:
    import pandas

    import pml_design as pml

    rng = np.random.default_rng(2)
    df = pandas.DataFrame({"id": np.arange(rows),
                           "city": np.asarray(CATEGORIES, dtype=object)[rng.choice(8, rows, p=PROBS)]})
    m = pml.load_mechanism(mech)
    t0 = time.perf_counter()
    pml.privatize_dataframe(df, "city", m, rng=0)
    dt = time.perf_counter() - t0
    return {"rows": rows, "privatize_dataframe_rows_per_s": rows / dt, "seconds": dt}


def _table(rows: list[dict], title: str) -> None:
    print(f"\n{title}")
    cols = list(rows[0])
    print(" | ".join(f"{c:>20}" for c in cols))
    for r in rows:
        print(" | ".join(f"{r[c]:>20.4g}" if isinstance(r[c], float) else f"{str(r[c]):>20}" for c in cols))


#: Adult columns of the cohort trade-off (quick: the first only) and the cohort sizes n₁ designed for.
COHORT_COLUMNS = ("race", "marital-status", "workclass", "education")
COHORT_SIZES = [int(round(10 ** (k / 3))) for k in range(6, 21)]  # 100 … 4.6·10⁶
POPULATIONS = [int(round(10 ** (k / 6))) for k in range(15, 43)]  # 316 … 10⁷
COHORT_DELTA = 1e-6


def _best_ldp(n: int, eps: float, p: np.ndarray) -> tuple[str, np.ndarray]:
    """(name, Fisher information of one report) of the ε-LDP oracle with the smallest asymptotic error at p."""
    import pml_design as pml
    from pml_design.mechanisms.frequency_oracles.fisher import fisher_information

    cands = {"GRR": pml.grr(n, eps), "SS": pml.subset_selection(n, eps)}
    if 2**n * n <= 1 << 22:
        cands["OUE"] = pml.oue(n, eps)
    errs = {k: pml.estimation_mse(o.matrix, p) for k, o in cands.items()}
    best = min(errs, key=errs.get)
    return best, fisher_information(cands[best].matrix, p)


def combined_error(f1: np.ndarray, n1: int, f2: np.ndarray, n2: int, p: np.ndarray) -> float:
    """Asymptotic total MSE ``tr(n₁F₁ + n₂F₂)⁻¹ − ‖P‖²/n`` of the maximum-likelihood estimate from n₁ reports with
    per-report Fisher information F₁ and n₂ with F₂ (the informations add; ``− ‖P‖²/n``: the simplex), i.e. of
    :func:`pml_design.combined_estimate` (module docstring)."""
    return float(np.trace(np.linalg.inv(n1 * f1 + n2 * f2)) - p @ p / (n1 + n2))


def cohort_tradeoff(column: str, eps: float, sizes: list[int], populations: list[int]) -> dict:
    """Total error of "cohort LDP + PML for the rest" against "everyone on the best LDP oracle" (see module doc)."""
    import warnings

    import pml_design as pml
    import pml_design as pml
    from pml_design import priors
    from pml_design.datasets import load_adult
    from pml_design.mechanisms.frequency_oracles.fisher import fisher_information

    codes, cats = load_adult().categorical(column)
    n = len(cats)
    p = np.bincount(codes, minlength=n) / codes.size
    base_name, f_base = _best_ldp(n, eps, p)
    base = float(np.trace(np.linalg.inv(f_base)) - p @ p)  # per-report error of (A)
    grr, ss = pml.grr(n, eps), pml.subset_selection(n, eps)
    cohort = min((grr, ss), key=lambda o: pml.estimation_mse(o.matrix, p))
    f_cohort = fisher_information(cohort.matrix, p)
    designs = []
    for n1 in sizes:
        beta = priors.ldp_ball_radius(n, int(getattr(cohort, "k", 1)), eps, n1, COHORT_DELTA)
        if not beta < 2.0:  # the ball is the whole simplex: the rest would get an LDP design
            continue
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = pml.design(pml.L1Ball(p, beta), eps, utility="frequency_estimation",
                             solver_options={"time_limit": 30, "progress": False})
        designs.append({"n1": n1, "radius": beta, "pml_error": pml.estimation_mse(res.matrix, p),
                        "certified_epsilon": res.certified_epsilon, "design_s": time.perf_counter() - t0,
                        "F": fisher_information(res.matrix, p)})
    rows = []
    for pop in populations:
        best = None
        for d in designs:
            if d["n1"] >= pop:
                continue
            err = combined_error(f_cohort, d["n1"], d["F"], pop - d["n1"], p)
            if best is None or err < best[0]:
                best = (err, d)
        a = base / pop
        row = {"n": pop, "ldp_error": a}
        if best is not None:
            row.update(cohort_error=best[0], ratio=best[0] / a, best_n1=best[1]["n1"],
                       best_fraction=best[1]["n1"] / pop, radius=best[1]["radius"])
        rows.append(row)
    # break-even: the smallest n from which on (B) beats (A) at every larger n of the grid
    wins = [r["n"] for i, r in enumerate(rows) if all(q.get("ratio", 2.0) < 1.0 for q in rows[i:])]
    return {"column": column, "N": n, "epsilon": eps, "delta": COHORT_DELTA, "ldp_oracle": base_name,
            "ldp_error_per_report": base, "cohort_oracle": cohort.name + (f" (k={cohort.k})" if cohort.name == "SS" else ""),
            "designs": [{k: v for k, v in d.items() if k != "F"} for d in designs], "rows": rows,
            "break_even_n": min(wins) if wins else None}


def cohort_markdown(data: dict) -> str:
    """README table: per column and ε, B/A at n = 10⁴ … 10⁷ (best cohort fraction) and the break-even n."""
    shown = [10**4, 10**5, 10**6, 10**7]
    head = "| column (N) | ε | best LDP | " + " | ".join(f"n = 1e{int(np.log10(v))}" for v in shown) + " | break-even n |"
    lines = [head, "|" + "---|" * (4 + len(shown))]
    for c in data["cases"]:
        cells = []
        for v in shown:
            r = next((r for r in c["rows"] if r["n"] == v), None)
            cells.append("—" if r is None or "ratio" not in r else f"{r['ratio']:.2f} ({100 * r['best_fraction']:.2g} %)")
        be, first = c["break_even_n"], c["rows"][0]["n"]
        shown_be = "none ≤ 1e7" if be is None else f"≤ {be:,}" if be == first else f"{be:,}"
        lines.append(f"| {c['column']} ({c['N']}) | {c['epsilon']:g} | {c['ldp_oracle']} | " + " | ".join(cells)
                     + f" | {shown_be} |")
    return "\n".join(lines) + (
        "\n\nError ratio = total MSE of (B) a first cohort on ε-LDP (GRR or subset selection) + the (ε, 1e-6)-PML "
        "design for the rest (its ball centred at P, the estimate's expected value), both groups' reports combined by "
        "maximum likelihood, over (A) everyone on the best ε-LDP oracle (exact asymptotic errors, "
        "`benchmarks/bench_deploy.py --part cohort`); in brackets the best "
        "cohort fraction; break-even n: from there on (B) wins on the grid 10^(k/6) (its smallest point is 316).")


def run_cohort(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    columns = COHORT_COLUMNS[:1] if quick else COHORT_COLUMNS
    sizes = COHORT_SIZES[::2] if quick else COHORT_SIZES
    t0 = time.perf_counter()
    cases = [cohort_tradeoff(col, eps, sizes, POPULATIONS) for col in columns for eps in (1.0, 2.0)]
    data = {"quick": quick, "cases": cases, "seconds": time.perf_counter() - t0}
    data["markdown"] = cohort_markdown(data)
    print("\ncohort LDP + PML for the rest vs everyone on the best LDP oracle: error ratio (best cohort fraction)")
    print(data["markdown"])
    (outdir / "deploy_cohort.json").write_text(json.dumps(data, indent=2))
    return data


RADIUS_CASES: list[tuple[int, float]] = [(16, 1.0), (60, 0.5), (60, 1.0), (60, 2.0), (300, 1.0)]
RADIUS_DELTA: float = 1e-6


def reports_needed(radius_of, target: float = 1.0) -> int:
    """Smallest n₁ (to 0.1 % above: geometric, then integer bisection on [10², 10¹⁰]) whose radius is below ``target``."""
    lo, hi = 100, 10**10
    while hi > 1.001 * lo + 1:
        mid = int(round((lo * hi) ** 0.5)) if hi > 2 * lo else (lo + hi) // 2
        lo, hi = (lo, mid) if radius_of(mid) < target else (mid, hi)
    return hi


def radius_rows(cases: list[tuple[int, float]]) -> list[dict]:
    """First-cohort reports each oracle needs for a ball of radius below 1 (δ = 1e-6): docs/design.md §11.2."""
    import pml_design as pml
    from pml_design import priors

    rows = []
    for n, eps in cases:
        hr, k = pml.hadamard_response(n, eps), pml.subset_selection(n, eps).k
        rows.append({"N": n, "epsilon": eps, "ss_k": int(k),
                     "HR": reports_needed(lambda m: priors.hadamard_ball_radius(n, eps, m, RADIUS_DELTA)),
                     "HR coordinate-wise": reports_needed(
                         lambda m: priors.ldp_generic_radius(n, hr.gap, m, RADIUS_DELTA)),
                     "OUE": reports_needed(lambda m: priors.unary_ball_radius(n, eps, m, RADIUS_DELTA)),
                     "GRR": reports_needed(lambda m: priors.ldp_ball_radius(n, 1, eps, m, RADIUS_DELTA)),
                     "SS": reports_needed(lambda m: priors.ldp_ball_radius(n, k, eps, m, RADIUS_DELTA))})
    return rows


def run_radius(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    """The first-cohort radius table (``--part radius``): writes ``deploy_radius.json``."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = radius_rows(RADIUS_CASES[:3] if quick else RADIUS_CASES)
    lines = ["| N, ε₁ | HR (Bernstein) | HR (coordinate-wise) | OUE (Bernstein) | GRR | subset selection (k) |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['N']}, {r['epsilon']:g} | {r['HR']:,} | {r['HR coordinate-wise']:,} | {r['OUE']:,} | {r['GRR']:,} | "
              f"{r['SS']:,} ({r['ss_k']}) |" for r in rows]
    data = {"quick": quick, "delta": RADIUS_DELTA, "rows": rows, "seconds": time.perf_counter() - t0,
            "markdown": "\n".join(lines)}
    print("\nfirst-cohort reports for a ball of radius < 1 (delta = 1e-6)")
    print(data["markdown"])
    (outdir / "deploy_radius.json").write_text(json.dumps(data, indent=2))
    return data


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    sizes = [10**5, 10**6] if quick else [10**6, 3 * 10**6, 10**7]
    with tempfile.TemporaryDirectory(prefix="pml_bench_deploy_") as tmp:
        folder = pathlib.Path(tmp)
        mech = make_mechanism(folder)
        rows = [deploy_row(folder, mech, n) for n in sizes]
        frame = [dataframe_row(mech, 10**6)]
        trace = [rss_trace(folder, mech, sizes[-1])]
    base = baseline_rss()
    _table(rows, f"pml-design privatize / estimate (8 categories; 'pml-design --version' peaks at {base:.0f} MiB)")
    _table(frame, "privatize_dataframe (pandas, in memory)")
    _table(trace, "resident memory while privatizing, batch by batch (in process)")
    summary = {"rows": rows, "dataframe": frame, "rss_trace": trace, "import_only_peak_MiB": base,
               "peak_growth_MiB": rows[-1]["privatize_peak_MiB"] - rows[0]["privatize_peak_MiB"]}
    (outdir / "bench_deploy.json").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--part", choices=("throughput", "cohort", "radius", "all"), default="all")
    a = ap.parse_args()
    if a.part in ("throughput", "all"):
        run(quick=a.quick, outdir=a.outdir)
    if a.part in ("cohort", "all"):
        run_cohort(quick=a.quick, outdir=a.outdir)
    if a.part in ("radius", "all"):
        run_radius(quick=a.quick, outdir=a.outdir)
