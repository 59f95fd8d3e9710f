"""Benchmark of the deployment workflow: ``pml-design privatize`` / ``estimate`` throughput and memory.

For each size, a CSV with an id column, an 8-category column and a numeric column is generated in a
temporary directory (deleted afterwards), a mechanism file is designed from a 10⁴-record sample
(``map_accuracy``, ε = 1, δ = 1e-6), and the commands run in their own subprocesses:

* ``privatize``: rows/s as reported by the command (streaming time, without the interpreter start) and the
  whole command's wall time; peak resident memory of the process (``wait4`` rusage), which must stay flat
  in the file size (the file is read and written in ~16 MiB blocks);
* ``estimate``: the same for reading the privatized column back and estimating with 95 % intervals;
* ``privatize_dataframe`` on a pandas DataFrame in memory, in this process.

Baseline: the peak memory of a process that only imports ``pml_design``.
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


def write_csv(path: pathlib.Path, rows: int, seed: int = 0) -> None:
    """An (id, city, value) CSV with ``rows`` rows, written in blocks (pyarrow)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    block = 10**6
    with path.open("wb") as fh:
        for start in range(0, rows, block):
            k = min(block, rows - start)
            table = pa.table({
                "id": np.arange(start, start + k),
                "city": pa.array(np.asarray(CATEGORIES, dtype=object)[rng.choice(8, k, p=PROBS)], pa.string()),
                "value": rng.integers(0, 1000, k),
            })
            pacsv.write_csv(table, fh, pacsv.WriteOptions(include_header=start == 0, quoting_style="none"))


def _run_cli(args: list[str]) -> tuple[dict, float, float]:
    """Run ``pml-design ARGS --json`` in a subprocess: (its JSON, wall seconds, peak RSS in MiB)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PML_DESIGN_NO_PROGRESS="1")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pml_design.cli", *args, "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"pml-design {' '.join(args)} failed: {err.decode()[-2000:]}")
    return json.loads(out), wall, usage.ru_maxrss / 1024.0


def baseline_rss() -> float:
    """Peak RSS (MiB) of a process that only imports pml_design."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", "import pml_design"], env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024.0


def make_mechanism(folder: pathlib.Path) -> pathlib.Path:
    import pml_design as pd

    rng = np.random.default_rng(1)
    sample = np.asarray(CATEGORIES, dtype=object)[rng.choice(8, 10_000, p=PROBS)]
    est = pd.design_from_samples(sample, epsilon=1.0, delta=1e-6, utility="map_accuracy")
    return est.save(folder / "mech.json")


def deploy_row(folder: pathlib.Path, mech: pathlib.Path, rows: int) -> dict:
    data, out = folder / f"data_{rows}.csv", folder / f"private_{rows}.csv"
    write_csv(data, rows)
    size_mib = data.stat().st_size / 2**20
    priv, priv_wall, priv_rss = _run_cli(["privatize", str(mech), "--csv", str(data), "--column", "city",
                                          "--seed", "0", "-o", str(out)])
    est, est_wall, est_rss = _run_cli(["estimate", str(mech), "--csv", str(out), "--column", "city"])
    truth = np.bincount(np.random.default_rng(0).choice(8, rows, p=PROBS), minlength=8) / rows
    row = {
        "rows": rows,
        "file_MiB": size_mib,
        "privatize_rows_per_s": priv["rows_per_second"],
        "privatize_wall_s": priv_wall,
        "privatize_peak_MiB": priv_rss,
        "estimate_rows_per_s": rows / max(est_wall, 1e-9),
        "estimate_wall_s": est_wall,
        "estimate_peak_MiB": est_rss,
        "max_abs_error": float(np.max(np.abs(np.array(est["estimate"]) - truth))),
        "ci_covers_truth": int(np.sum((np.array(est["ci_low"]) <= truth) & (truth <= np.array(est["ci_high"])))),
    }
    data.unlink()
    out.unlink()
    return row


def dataframe_row(mech: pathlib.Path, rows: int) -> dict:
    import pandas

    import pml_design as pd

    rng = np.random.default_rng(2)
    df = pandas.DataFrame({"id": np.arange(rows),
                           "city": np.asarray(CATEGORIES, dtype=object)[rng.choice(8, rows, p=PROBS)]})
    m = pd.load_mechanism(mech)
    t0 = time.perf_counter()
    pd.privatize_dataframe(df, "city", m, rng=0)
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
    sizes = [10**5, 10**6] if quick else [10**6, 10**7]
    with tempfile.TemporaryDirectory(prefix="pml_bench_deploy_") as tmp:
        folder = pathlib.Path(tmp)
        mech = make_mechanism(folder)
        rows = [deploy_row(folder, mech, n) for n in sizes]
        frame = [dataframe_row(mech, 10**6)]
    base = baseline_rss()
    _table(rows, f"pml-design privatize / estimate (8 categories; 'import pml_design' alone peaks at {base:.0f} MiB)")
    _table(frame, "privatize_dataframe (pandas, in memory)")
    summary = {"rows": rows, "dataframe": frame, "import_only_peak_MiB": base,
               "peak_growth_MiB": rows[-1]["privatize_peak_MiB"] - rows[0]["privatize_peak_MiB"]}
    (outdir / "bench_deploy.json").write_text(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    a = ap.parse_args()
    run(quick=a.quick, outdir=a.outdir)
