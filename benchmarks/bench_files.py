"""Benchmark of what follows a wide design: the disclosure listing, writing and reading its mechanism file.

A frequency-estimation design on a Zipf column (P ∝ 1/i^1.1, 20 000 samples, ε = 1, δ = 1e-6, time limit 10 s) has
8–18 N outputs, so its matrix has millions of entries at N = 1 000. For each N this measures, on that design:

* ``disclosure_s``: :meth:`DesignResult.disclosure` (the largest posterior per output over the ball, exact);
* ``save_s``: :func:`pml_design.save_mechanism` (the same listing again, the content hash, the JSON file);
* ``load_s``: :func:`pml_design.load_mechanism` (hash, claims and certificate re-checked);
* the file's size, and seconds per matrix entry of the three together (the CLI keeps
  ``design.POST_SECONDS_PER_ENTRY`` per entry of its ``--time-limit`` back for them);

each with the matrix as text (format version 2) and as binary (``matrix_binary``, format version 3, the default
above 2**22 entries since 2026-11-27).

Before 2026-11-27 the file was written by ``json.dumps(..., indent=2)`` (the pure-Python encoder, one line per
entry): a review measured 29 s for a 786 × 13 038 design and 229 MB; here the rows are formatted once
(``deploy/matrix_text.py``). Run ``python benchmarks/bench_files.py [--quick]``; writes ``deploy_files.json``.

``--cli`` runs ``pml-design design --counts … --time-limit T -o m`` end to end instead (N = 1 000 – 10 000, ε = 2,
T = 30 – 200 s), where the CLI caps the design's outputs so that the files fit the limit (docs/cli.md): wall time,
outputs and cap, the files' size and the error over the LDP optimum's; writes ``deploy_cli.json``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import tempfile
import time
import warnings

import numpy as np

import pml_design as pml


def wide_design(n: int, seed: int = 0, time_limit: float = 10.0) -> object:
    """A frequency-estimation design from 20 000 Zipf samples over ``n`` categories (labels ``c0`` …)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    x = rng.choice(n, size=20_000, p=p / p.sum())
    labels = np.array([f"c{i}" for i in range(n)])[x]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pml.design_from_samples(labels, epsilon=1.0, delta=1e-6, utility="frequency_estimation",
                                       solver_options={"time_limit": time_limit, "progress": False})


def file_rows(n: int, folder: pathlib.Path) -> list[dict]:
    """The timings of one design (see the module docstring), its file written with the matrix as text and as binary."""
    est = wide_design(n)
    res = est.result
    t = time.perf_counter()
    res.disclosure()
    t_disc = time.perf_counter() - t
    rows = []
    for fmt in ("text", "binary"):
        path = folder / f"m{n}_{fmt}.json"
        t = time.perf_counter()
        pml.save_mechanism(est, path, matrix_format=fmt)
        t_save = time.perf_counter() - t
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pml.load_mechanism(path)
        t_load = time.perf_counter() - t
        entries = int(res.matrix.size)
        rows.append({"n": int(res.matrix.shape[0]), "outputs": int(res.matrix.shape[1]), "entries": entries,
                     "matrix_format": fmt, "disclosure_s": t_disc, "save_s": t_save, "load_s": t_load,
                     "file_MB": path.stat().st_size / 1e6, "us_per_entry": 1e6 * (t_disc + t_save + t_load) / entries})
    return rows


def markdown(rows: list[dict]) -> str:
    """The table of the rows."""
    out = ["| N | outputs | entries | matrix | disclosure (s) | save (s) | load (s) | file (MB) | µs per entry |",
           "|---|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['n']} | {r['outputs']} | {r['entries']:.3g} | {r.get('matrix_format', 'text')} | "
            f"{r['disclosure_s']:.2f} | {r['save_s']:.2f} | {r['load_s']:.2f} | {r['file_MB']:.0f} | "
            f"{r['us_per_entry']:.2f} |" for r in rows]
    return "\n".join(out)


def cli_row(n: int, time_limit: float, folder: pathlib.Path, epsilon: float = 2.0) -> dict:
    """``pml-design design --counts … --time-limit T -o m`` end to end on a Zipf column of ``n`` categories (200 000
    samples plus one per category): wall time (the process, imports included), outputs, file size, the error per
    report over the best ε-LDP oracle's at P̂ (``ldp_optimum``) and the output cap the limit implied."""
    import re  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from pml_design.mechanisms.frequency_oracles.optimum import ldp_optimum  # noqa: PLC0415

    p = 1.0 / np.arange(1, n + 1) ** 1.1
    counts = np.random.default_rng(0).multinomial(200_000, p / p.sum()) + 1
    path = folder / f"z{n}.txt"
    path.write_text("".join(f"c{i},{c}\n" for i, c in enumerate(counts.tolist())))
    prefix = folder / f"cli{n}_{time_limit:g}"
    argv = [sys.executable, "-m", "pml_design", "design", "--counts", str(path), "--epsilon", f"{epsilon:g}",
            "--delta", "1e-6", "--time-limit", f"{time_limit:g}", "-o", str(prefix), "--no-progress"]
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if done.returncode != 0:
        return {"n": n, "time_limit": time_limit, "wall_s": wall, "refused": done.stderr.strip()[-300:]}
    mo = re.search(r"designed (\d+)x(\d+) mechanism: frequency_estimation error per report = ([0-9.e+-]+)",
                   done.stdout)
    cap = re.search(r"note: at most (\d+) outputs", done.stdout)
    error = float(mo.group(3))
    ldp = ldp_optimum(n, epsilon, counts / counts.sum())
    size = sum(f.stat().st_size for f in folder.glob(prefix.name + ".*"))
    for f in folder.glob(prefix.name + ".*"):
        f.unlink()
    return {"n": n, "time_limit": time_limit, "epsilon": epsilon, "wall_s": wall, "outputs": int(mo.group(2)),
            "output_cap": int(cap.group(1)) if cap else None, "files_MB": size / 1e6, "error": error,
            "ldp_optimum": ldp.name, "ldp_optimum_error": float(ldp.mse), "ratio": error / float(ldp.mse)}


def cli_markdown(rows: list[dict]) -> str:
    """The table of the CLI rows."""
    out = ["| N | --time-limit (s) | wall (s) | outputs (cap) | files (MB) | error / LDP optimum |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        if "refused" in r:
            out.append(f"| {r['n']} | {r['time_limit']:g} | {r['wall_s']:.1f} | refused | | |")
            continue
        cap = "" if r["output_cap"] is None else f" ({r['output_cap']})"
        out.append(f"| {r['n']} | {r['time_limit']:g} | {r['wall_s']:.1f} | {r['outputs']}{cap} | "
                   f"{r['files_MB']:.0f} | {r['ratio']:.3f} |")
    return "\n".join(out)


def run_cli(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    """The CLI rows (``--cli``): N = 1 000, 2 000, 3 000 at ``--time-limit`` 30 and 60 s, N = 5 000 at 60 s and
    N = 10 000 at 120 s (refused, naming the limit the design needs) and 200 s (quick: N = 1 000, 30 s);
    writes ``deploy_cli.json``."""
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    cells = [(1000, 30.0)] if quick else [(n, t) for n in (1000, 2000, 3000) for t in (30.0, 60.0)] + [
        (5000, 60.0), (10000, 120.0), (10000, 200.0)]
    with tempfile.TemporaryDirectory(prefix="pml_bench_cli_") as tmp:
        rows = [cli_row(n, t, pathlib.Path(tmp)) for n, t in cells]
    data = {"rows": rows, "markdown": cli_markdown(rows), "quick": quick}
    print(data["markdown"])
    (outdir / "deploy_cli.json").write_text(json.dumps(data, indent=2))
    return data


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    sizes = [300] if quick else [300, 1000, 2000]
    with tempfile.TemporaryDirectory(prefix="pml_bench_files_") as tmp:
        rows = [row for n in sizes for row in file_rows(n, pathlib.Path(tmp))]
    data = {"rows": rows, "markdown": markdown(rows), "quick": quick}
    print(data["markdown"])
    (outdir / "deploy_files.json").write_text(json.dumps(data, indent=2))
    return data


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--cli", action="store_true", help="the CLI end to end at N = 1 000 - 3 000 (deploy_cli.json)")
    a = ap.parse_args()
    (run_cli if a.cli else run)(quick=a.quick, outdir=a.outdir)
