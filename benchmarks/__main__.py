"""Run every benchmark / figure script of ``benchmarks/`` within a time budget; write one summary.

Usage (from a source checkout)::

    python -m benchmarks                      # all scripts, sizes chosen to fit in 10 minutes
    python -m benchmarks --quick              # every script in its quick mode (about a minute)
    python -m benchmarks --only fig_pml_fig2 bench_flexible
    pml-design bench                          # the same

Each script runs in its own subprocess (``run(quick=..., outdir=...)``), with a timeout equal to the budget
left; its stdout/stderr go to ``<outdir>/logs/<script>.log``. The harness writes ``<outdir>/summary.json``
(one record per script: mode, status, seconds, the dict its ``run`` returned) and ``<outdir>/summary.md``
(a Markdown table).

Mode per script: :data:`PLAN` gives the mode that fits the default 10-minute budget on 2 cores together with
the measured full-size time; a script planned "full" is run quick instead when the budget left is smaller
than its expected full time (plus what the remaining scripts need in quick mode).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import platform
import subprocess
import sys
import time
from typing import Any

BENCH_DIR = pathlib.Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if str(ROOT) not in sys.path:  # `python benchmarks/__main__.py` from anywhere
    sys.path.insert(0, str(ROOT))

from pml_design.cli import call_run, list_scripts, load_script  # noqa: E402

#: script -> (planned mode, expected seconds in that mode, expected seconds quick) on 2 cores.
#: Measured with ``python -m benchmarks`` (see summary.md); scripts not listed run quick.
PLAN: dict[str, tuple[str, float, float]] = {
    "fig_pml_fig2": ("full", 5.0, 3.0),
    "fig_pml_fig3": ("full", 5.0, 3.0),
    "fig_pml_fig4": ("full", 20.0, 4.0),
    "fig_pml_fig5": ("full", 15.0, 4.0),
    "fig_pml_fig67": ("full", 10.0, 4.0),
    "fig_histogram_fig1": ("full", 10.0, 3.0),
    "fig_flexible_fig3": ("full", 60.0, 5.0),
    "example_histogram_adult": ("full", 5.0, 3.0),
    "bench_flexible": ("full", 40.0, 5.0),
    # full sizes (N = 1000 LPs, column generation up to N = 200) need far more than 10 minutes: quick here,
    # full numbers in the closing note / README (``python benchmarks/bench_designer.py``)
    "bench_designer": ("quick", 5.0, 5.0),
    "bench_scalable": ("quick", 20.0, 20.0),
    # linear part: full (N = 100, 300 against cvxpy, HiGHS at 200, N = 1000) takes ~12 min on 2 cores
    "bench_scale": ("quick", 3.0, 3.0),
}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):
        return _jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)


def run_one(name: str, quick: bool, outdir: pathlib.Path, result_file: pathlib.Path) -> None:
    """Run one script in this process and write its summary to ``result_file`` (used by the subprocess)."""
    import matplotlib

    matplotlib.use("Agg")
    os.environ.setdefault("PML_DESIGN_NO_PROGRESS", "1")
    mod = load_script(name, BENCH_DIR)
    summary = call_run(mod, quick=quick, outdir=outdir, progress=False)
    result_file.write_text(json.dumps(_jsonable(summary)), encoding="utf-8")


def _highlights(summary: Any, limit: int = 110) -> str:
    """A short 'key=value' rendering of a summary's scalar top-level entries for the Markdown table."""
    if not isinstance(summary, dict):
        return ""
    parts = []
    for k, v in summary.items():
        if k in ("quick", "seed", "files", "outdir") or isinstance(v, (dict, list)):
            continue
        if isinstance(v, float):
            v = f"{v:.4g}"
        parts.append(f"{k}={v}")
    text = ", ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _markdown(records: list[dict], total: float, budget: float) -> str:
    lines = [
        f"# Benchmark summary\n",
        f"Total {total:.1f} s (budget {budget:.0f} s), {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs.\n",
        "| script | mode | status | seconds | highlights |",
        "|---|---|---|---:|---|",
    ]
    for r in records:
        hl = r.get("error") or _highlights(r.get("summary"))
        hl = str(hl).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['script']} | {r['mode']} | {r['status']} | {r['seconds']:.1f} | {hl} |")
    return "\n".join(lines) + "\n"


def run_all(
    outdir: str | pathlib.Path = "benchmarks/results",
    *,
    budget: float = 600.0,
    quick: bool = False,
    only: list[str] | None = None,
) -> dict:
    """Run the scripts (each in a subprocess) and write ``summary.json`` and ``summary.md`` into ``outdir``.

    Parameters
    ----------
    outdir : path
        Where the scripts and the summary write their files.
    budget : float
        Total seconds; scripts are downgraded to quick mode (and finally skipped) to respect it.
    quick : bool
        Run every script quick.
    only : list of str, optional
        Script names to run (default: all).

    Returns
    -------
    dict
        The content of ``summary.json``.
    """
    out = pathlib.Path(outdir)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    names = list_scripts(BENCH_DIR)
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            raise ValueError(f"only: unknown scripts {unknown}; choose from {names}")
        names = [n for n in names if n in only]
    t0 = time.perf_counter()
    records = []
    for i, name in enumerate(names):
        planned, t_plan, t_quick = PLAN.get(name, ("quick", 30.0, 30.0))
        elapsed = time.perf_counter() - t0
        left = budget - elapsed
        rest_quick = sum(PLAN.get(n, ("quick", 30.0, 30.0))[2] for n in names[i + 1:])
        mode = "quick" if quick or planned == "quick" or t_plan + rest_quick > left else "full"
        if left <= 1.0:
            records.append({"script": name, "mode": mode, "status": "skipped", "seconds": 0.0,
                            "error": "time budget exhausted", "summary": None})
            continue
        result_file = logs / f"{name}.json"
        result_file.unlink(missing_ok=True)
        cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--one", name, "--outdir", str(out),
               "--result-file", str(result_file)] + (["--quick"] if mode == "quick" else [])
        env = dict(os.environ, PML_DESIGN_NO_PROGRESS="1", MPLBACKEND="Agg")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        print(f"[{i + 1}/{len(names)}] {name} ({mode}) ...", flush=True)
        s = time.perf_counter()
        status, error, summary = "ok", None, None
        with (logs / f"{name}.log").open("w", encoding="utf-8") as log:
            try:
                proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=max(left, 1.0), env=env,
                                      cwd=str(ROOT))
                if proc.returncode != 0:
                    status, error = "failed", f"exit status {proc.returncode}; see logs/{name}.log"
            except subprocess.TimeoutExpired:
                status, error = "timeout", f"killed after {left:.0f} s (budget)"
        seconds = time.perf_counter() - s
        if status == "ok":
            try:
                summary = json.loads(result_file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                status, error = "failed", f"no summary: {exc}"
        print(f"    {status} in {seconds:.1f} s", flush=True)
        records.append({"script": name, "mode": mode, "status": status, "seconds": seconds, "error": error,
                        "summary": summary})
    total = time.perf_counter() - t0
    result = {"total_seconds": total, "budget_seconds": budget, "python": platform.python_version(),
              "cpus": os.cpu_count(), "scripts": records}
    (out / "summary.json").write_text(json.dumps(_jsonable(result), indent=2) + "\n", encoding="utf-8")
    md = _markdown(records, total, budget)
    (out / "summary.md").write_text(md, encoding="utf-8")
    print()
    print(md)
    if pathlib.Path(outdir).resolve() == (BENCH_DIR / "results").resolve():
        from benchmarks.render_readme import main as render_readme  # noqa: PLC0415

        render_readme([])  # README tables from the JSON just written (quick runs are skipped)
        print("README.md tables re-rendered from benchmarks/results/*.json")
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line of the harness; returns 0 if every script succeeded, 1 otherwise."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--outdir", default="benchmarks/results")
    ap.add_argument("--budget", type=float, default=600.0, help="total seconds (default 600)")
    ap.add_argument("--quick", action="store_true", help="run every script quick")
    ap.add_argument("--only", nargs="+", metavar="SCRIPT", help="run only these scripts")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--result-file", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        run_one(a.one, a.quick, pathlib.Path(a.outdir), pathlib.Path(a.result_file))
        return 0
    try:
        result = run_all(a.outdir, budget=a.budget, quick=a.quick, only=a.only)
    except ValueError as exc:
        print(f"python -m benchmarks: error: {exc}", file=sys.stderr)
        return 2
    return 0 if all(r["status"] == "ok" for r in result["scripts"]) else 1


if __name__ == "__main__":
    sys.exit(main())
