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
Run ``python benchmarks/bench_deploy.py [--quick]``; writes ``bench_deploy.json`` into ``--outdir``.
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
    a = ap.parse_args()
    run(quick=a.quick, outdir=a.outdir)
