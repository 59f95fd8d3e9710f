"""``pml-design reproduce`` and ``pml-design bench``: the figure scripts of ``benchmarks/`` (source checkout only)."""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import time
from types import ModuleType
from typing import Any

from ._common import FORMATTER, CliError, positive_float, print_json


def add_parser(sub: Any) -> None:
    """Register ``reproduce`` and ``bench`` on the subparsers ``sub`` of the ``pml-design`` parser."""
    p = sub.add_parser("reproduce", formatter_class=FORMATTER, help="run one of the papers' figure scripts",
                       description="Run a figure script of benchmarks/ (needs a source checkout). FIGURE is a "
                       "script name such as fig_pml_fig2, pml-fig2, histogram-fig1, flexible-fig3; --list shows all.")
    p.add_argument("figure", nargs="?", metavar="FIGURE", help="figure / script name")
    p.add_argument("--list", action="store_true", help="list the available scripts")
    p.add_argument("--quick", action="store_true", help="small, fast version")
    p.add_argument("--outdir", default="benchmarks/results", help="output directory")
    p.add_argument("--json", action="store_true", help="print the script's summary as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run_reproduce)

    p = sub.add_parser("bench", formatter_class=FORMATTER,
                       help="run all benchmark / figure scripts (python -m benchmarks)",
                       description="Run every script of benchmarks/ within a time budget and write "
                       "summary.json and summary.md (needs a source checkout).")
    p.add_argument("--outdir", default="benchmarks/results", help="output directory")
    p.add_argument("--budget", type=positive_float, default=600.0, help="total time budget in seconds")
    p.add_argument("--quick", action="store_true", help="run every script in its quick mode")
    p.add_argument("--only", nargs="+", metavar="SCRIPT", help="run only these scripts")
    p.set_defaults(func=run_bench)


def find_benchmarks_dir(start: str | pathlib.Path | None = None) -> pathlib.Path:
    """Locate the ``benchmarks/`` directory of a source checkout.

    Looks in ``start`` (default: the current directory) and its parents, then next to the installed package
    (an editable install from a checkout).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    CliError
        If no ``benchmarks/`` directory with figure scripts is found (e.g. a wheel install).
    """
    here = pathlib.Path(start if start is not None else pathlib.Path.cwd()).resolve()
    candidates = [d / "benchmarks" for d in (here, *here.parents)]
    candidates.append(pathlib.Path(__file__).resolve().parents[2] / "benchmarks")  # pml_design/cli/reproduce.py
    for c in candidates:
        if c.is_dir() and any(c.glob("fig_*.py")):
            return c
    raise CliError("the figure scripts are not installed with the package: run this from a source checkout "
                   "of pml-design (a directory containing benchmarks/)")


def list_scripts(bench_dir: pathlib.Path) -> list[str]:
    """Names of the runnable scripts (``fig_*``, ``bench_*``, ``example_*``) of a benchmarks directory."""
    return sorted(p.stem for pat in ("fig_*.py", "bench_*.py", "example_*.py") for p in bench_dir.glob(pat))


def resolve_script(name: str, bench_dir: pathlib.Path) -> str:
    """Map a user's figure name (``fig_pml_fig2``, ``pml-fig2``, ``histogram_fig1`` …) to a script name."""
    names = list_scripts(bench_dir)
    key = name.strip().lower().replace("-", "_")
    key = key[:-3] if key.endswith(".py") else key
    for cand in (key, f"fig_{key}", f"bench_{key}", f"example_{key}"):
        if cand in names:
            return cand
    raise CliError(f"argument FIGURE: unknown figure {name!r}; choose one of {names}")


def load_script(name: str, bench_dir: pathlib.Path) -> ModuleType:
    """Import ``benchmarks/<name>.py`` by path (the scripts import their helpers from their own folder)."""
    path = bench_dir / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_pml_bench_{name}", path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    if str(bench_dir) not in sys.path:
        sys.path.insert(0, str(bench_dir))
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "run", None)):
        raise CliError(f"{path} has no run(quick=..., outdir=...) function")
    return mod


def call_run(mod: ModuleType, *, quick: bool, outdir: str | pathlib.Path, progress: bool) -> Any:
    """Call a script's ``run`` with ``progress`` only if it accepts it."""
    import inspect  # noqa: PLC0415

    kwargs: dict[str, Any] = {"quick": quick, "outdir": str(outdir)}
    if "progress" in inspect.signature(mod.run).parameters:
        kwargs["progress"] = progress
    return mod.run(**kwargs)


def _output_folder(path: str) -> pathlib.Path:
    """``--outdir``, created if missing; one line naming the flag when it cannot be (a file, no permission)."""
    out = pathlib.Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CliError(f"argument --outdir: not a folder (a file of that name exists): {path}") from None
    except OSError as exc:
        raise CliError(f"argument --outdir: cannot create the folder ({exc.strerror}): {path}") from None
    return out


def run_reproduce(args: argparse.Namespace) -> int:
    """Run ``pml-design reproduce``; returns the exit status."""
    bench_dir = find_benchmarks_dir()
    if args.list or args.figure is None:
        if args.figure is None and not args.list:
            raise CliError("argument FIGURE: required (or --list)")
        for n in list_scripts(bench_dir):
            print(n)
        return 0
    name = resolve_script(args.figure, bench_dir)
    outdir = _output_folder(args.outdir)
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    mod = load_script(name, bench_dir)
    t0 = time.perf_counter()
    summary = call_run(mod, quick=args.quick, outdir=outdir, progress=not args.no_progress)
    print(f"{name}: done in {time.perf_counter() - t0:.1f} s; outputs in {outdir}/")
    if args.json:
        print_json(summary)
    return 0


def run_bench(args: argparse.Namespace) -> int:
    """Run ``pml-design bench`` (the harness ``benchmarks/__main__.py``); returns its exit status."""
    bench_dir = find_benchmarks_dir()
    if str(bench_dir.parent) not in sys.path:
        sys.path.insert(0, str(bench_dir.parent))
    spec = importlib.util.spec_from_file_location("_pml_bench_harness", bench_dir / "__main__.py")
    if spec is None or spec.loader is None or not (bench_dir / "__main__.py").is_file():
        raise CliError(f"{bench_dir} has no harness (__main__.py)")
    _output_folder(args.outdir)
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    forwarded = ["--outdir", args.outdir, "--budget", str(args.budget)]
    if args.quick:
        forwarded.append("--quick")
    if args.only:
        forwarded += ["--only", *args.only]
    return int(harness.main(forwarded))
