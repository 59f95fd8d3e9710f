"""Render the README's measured tables from the committed benchmark JSON (never typed by hand).

Each generated block of README.md sits between ``<!-- BEGIN generated:NAME -->`` and
``<!-- END generated:NAME -->``; :data:`BLOCKS` maps NAME to (JSON file under ``benchmarks/results``, renderer).
``python -m benchmarks.render_readme`` rewrites the blocks; ``--check`` exits non-zero when README.md differs
from what the JSON gives (run by ``tests/test_readme.py``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from collections.abc import Callable

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"


def _estimation(data: dict) -> str:
    from .bench_estimation import markdown_table

    return markdown_table(data)


def _estimation_sizes(data: dict) -> str:
    from .bench_estimation import sizes_table

    return sizes_table(data)


def _outside_regime(data: dict) -> str:
    from .bench_outside_regime import table

    by_n = data["by_n"]
    total = sum(s["instances"] for s in by_n.values())
    return (
        table(data)
        + f"\n\n{total} random ℓ1 balls with β ≥ 2 min P̂ (N = 2–8, all four sub-convex utilities, ε ∈ [0.02, 3]); "
        "`searched` = instances checked by an independent local search over Corollary 1's constraints."
    )


def _markdown_field(data: dict) -> str:
    return str(data["markdown"]).rstrip("\n")


def _scale_subconvex(data: dict) -> str:
    sw = data.get("sweep") or {}
    extra = ""
    if sw:
        extra = (
            f"\n\nε-sweep of {sw['n_eps']} points (N = {sw['n']}, {sw['time_limit_per_point']:g} s per point): warm-started "
            f"columns give a mean relative gap of {sw['warm_mean_rel_gap']:.3g} against {sw['cold_mean_rel_gap']:.3g} cold, "
            "in the same time."
        )
    return _markdown_field(data) + f"\n\nMutual information, `time_limit` {data['time_limit']:g} s, default `design(...)`." + extra


def _deploy(data: dict) -> str:
    rows = data["rows"]
    lo, hi = rows[0], rows[-1]
    df = data["dataframe"][0]
    tr = data["rss_trace"][0]
    return (
        f"- `pml-design privatize` on a CSV (8 categories, `benchmarks/bench_deploy.py`): "
        f"{lo['privatize_rows_per_s']:.2g} rows/s at {lo['rows']:.0e} rows, {hi['privatize_rows_per_s']:.2g} rows/s at "
        f"{hi['rows']:.0e} rows (read, privatize, write); peak memory {lo['privatize_peak_MiB']:.0f}–"
        f"{hi['privatize_peak_MiB']:.0f} MiB, resident memory flat over the batches of {tr['rows']:.0e} rows "
        f"(growth {tr['rss_growth_MiB']:+.0f} MiB); `estimate` {lo['estimate_rows_per_s']:.2g}–"
        f"{max(r['estimate_rows_per_s'] for r in rows):.2g} rows/s.\n"
        f"- `privatize_dataframe` (pandas, in memory): {df['privatize_dataframe_rows_per_s']:.2g} rows/s."
    ).replace("e+0", "e").replace("e+", "e")


def _files(data: dict) -> str:
    return (data["markdown"] + "\n\nWhat follows a wide frequency-estimation design (Zipf, 20 000 samples, ε = 1, "
            "δ = 1e-6, 10 s; `benchmarks/bench_files.py`): the disclosure listing, `save` (the listing again, the "
            "hash, the file) and `load` (hash, claims and certificate re-checked), with the matrix as text (format "
            "version 2) and as binary (`matrix_binary`, format version 3: float64 bytes, zlib, base64; the default above "
            "2**22 entries). Before 2026-11-27 a 786 × 13 038 design took 29 s to save and 229 MB (one JSON line per "
            "entry); the 952 × 17 541 one 9.4 s for the listing, 14.9 s to save and 23.6 s to load (sorted "
            "disclosure, text only).")


def _cli(data: dict) -> str:
    return (data["markdown"] + "\n\n`pml-design design --counts FILE --epsilon 2 --delta 1e-6 --time-limit T -o m` on a "
            "Zipf column (200 000 samples; `benchmarks/bench_files.py --cli`), wall time of the whole process: where the "
            "files of an uncapped design would not fit the limit, the CLI caps the outputs (in brackets) so that "
            "they take at most half of it; a limit too short for the design itself is refused, naming the limit it needs. "
            "Error / LDP optimum: the design's error per report over the best ε-LDP oracle's at P̂ (below 1: better "
            "than local DP).")


def _estimation_times(data: dict) -> str:
    worst: dict[tuple[str, int], float] = {}
    for c in data["cells"]:
        key = (c["attribute"], c["n"])
        worst[key] = max(worst.get(key, 0.0), c["design_time_s"])
    parts = ", ".join(f"{a} (N = {n}) {t:.1f} s" for (a, n), t in sorted(worst.items(), key=lambda kv: kv[0][1]))
    return (
        "- Frequency-estimation designs, slowest over ε and splits (`benchmarks/bench_estimation.py`, time limit "
        f"{data['config']['time_limit']:g} s): {parts}."
    )


def _scale_gpu(data: dict) -> str:
    t = data["targets"]
    cpu = {(r["n"], r["objective"]): r["total_s"] for r in data.get("cpu_reference", [])}
    lines = ["| N | objective | wall (s) | certified gap | Clarabel, 2 CPU cores (s) | target |", "|---|---|---|---|---|---|"]
    for r in data["rows"]:
        target = t.get(str(r["n"]))
        verdict = ""
        if target is not None:
            ok = r["total_s"] <= target and r["gap"] <= t["gap"]
            verdict = f"≤ {target:g} s: {'met' if ok else 'missed'}"
        c = cpu.get((r["n"], r["objective"]))
        cpu_cell = f"{c:.3g}" if c is not None else ""
        lines.append(f"| {r['n']} | {r['objective']} | {r['total_s']:.3g} | {r['gap']:.2e} | {cpu_cell} | {verdict} |")
    missing = data.get("not_measured") or []
    note = f" Not measured: {', '.join(missing)}." if missing else ""
    text = (
        "\n".join(lines)
        + f"\n\n{data['device']}; `design(..., solver=\"CUPDLPX\")` end to end (LP build, cuPDLPx at tolerance 1e-8, "
        "exact certification); `certified gap` = valid bound − certified utility." + note
    )
    settings = data.get("settings_rows") or []
    if settings:
        rows = ["| N | objective | solver_options | wall (s) | certified gap | relative gap | polish |", "|---|---|---|---|---|---|---|"]
        for r in settings:
            opts = ([f"tol {r['tol']:g}"] if r.get("tol") is not None else [])
            opts += [f"time_limit {r['time_limit']:g}"] if r.get("time_limit") else []
            opts += [f"polish {r['polish_option']!r}"] if r.get("polish_option") is not True else []
            rows.append(f"| {r['n']} | {r['objective']} | {', '.join(opts) or 'defaults'} | {r['total_s']:.3g} | {r['gap']:.2e} | "
                        f"{r['rel_gap']:.2e} | {r['polish']}{' (' + r['note'] + ')' if r.get('note') else ''} |")
        text += "\n\nOther settings (" + data.get("settings_source", "") + "):\n\n" + "\n".join(rows)
    return text


def _audit(data: dict) -> str:
    from .bench_audit import table

    s = data["summary"]
    return (table(data) + f"\n\n{s['cases']} random designs (seed {data['seed']}, N = 2–300, every utility and method, ℓ1 balls "
            "inside and outside Proposition 2, fixed priors, the simplex, rare and degenerate masses down to 1e-300), "
            f"{data['elapsed_s']:.0f} s; guarantee re-checked independently for {s['independently_checked']}, optimum "
            f"brute-forced for {s['brute_forced']}; worst wall time beyond 1.1 × the limit: {s['max_wall_over_limit']:.1f} s.")


#: name -> (JSON file, renderer)
BLOCKS: dict[str, tuple[str, Callable[[dict], str]]] = {
    "estimation": ("estimation.json", _estimation),
    "estimation-sizes": ("estimation_sizes.json", _estimation_sizes),
    "outside-regime": ("outside_regime.json", _outside_regime),
    "scale-linear": ("scale_linear.json", _markdown_field),
    "scale-gpu": ("scale_gpu.json", _scale_gpu),
    "scale-subconvex": ("scale_subconvex.json", _scale_subconvex),
    "deploy": ("bench_deploy.json", _deploy),
    "deploy-files": ("deploy_files.json", _files),
    "deploy-cli": ("deploy_cli.json", _cli),
    "deploy-cohort": ("deploy_cohort.json", _markdown_field),
    "deploy-radius": ("deploy_radius.json", _markdown_field),
    "estimation-times": ("estimation.json", _estimation_times),
    "audit": ("audit.json", _audit),
}


def render(text: str) -> str:
    """README text with every generated block re-rendered from its JSON (blocks whose JSON is missing stay)."""
    for name, (fname, fn) in BLOCKS.items():
        path = RESULTS / fname
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        if data.get("quick"):  # a quick run (e.g. from the harness) never replaces the measured tables
            continue
        body = fn(data)
        pat = re.compile(rf"(<!-- BEGIN generated:{re.escape(name)} -->\n)(?:.*?\n)?(<!-- END generated:{re.escape(name)} -->)", re.S)
        text = pat.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if README.md is not what the JSON renders")
    args = ap.parse_args(argv)
    readme = ROOT / "README.md"
    old = readme.read_text(encoding="utf-8")
    new = render(old)
    if args.check:
        if new != old:
            print("README.md is out of date with benchmarks/results/*.json: run python -m benchmarks.render_readme")
            return 1
        return 0
    readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
