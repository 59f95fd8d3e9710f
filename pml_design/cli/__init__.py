"""The ``pml-design`` command: demo, design, privatize, estimate, calibrate, reproduce, bench.

Every subcommand has ``--help``. User mistakes (bad arguments, unreadable files, values the library rejects)
print one line ``pml-design: error: …`` on ``stderr`` and exit with status 2; no tracebacks. A solver failure
exits with status 1. ``--json`` prints machine-readable output on ``stdout`` (progress goes to ``stderr``).

Subcommands
-----------
``demo``       the core paper's pipeline (Figure 1) end to end on the bundled Adult data, against LDP.
``split``      a random disjoint split of a CSV/Parquet file: design records apart from the records to release.
``design``     an optimal PML mechanism from a CSV column or a counts file; a mechanism file (+ CSV matrix) out.
``privatize``  a copy of a CSV/Parquet file with one column privatized by a mechanism file (streamed).
``estimate``   the distribution of the original column, with confidence intervals, from privatized data.
``calibrate``  noise scales for the Laplace / Gaussian / histogram mechanisms for a target guarantee.
``reproduce``  run one of the papers' figure scripts of ``benchmarks/`` (source checkout only).
``bench``      run every benchmark / figure script within a time budget (``python -m benchmarks``).

The reference is ``docs/cli.md``.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence

from .. import __version__
from . import calibrate, demo, deploy, design, reproduce, split
from ._common import PROG, UTILITIES, CliError, Parser, cli_words, name_argument
from .reproduce import call_run, find_benchmarks_dir, list_scripts, load_script, resolve_script

__all__ = ["UTILITIES", "CliError", "build_parser", "call_run", "find_benchmarks_dir", "list_scripts", "load_script",
           "main", "resolve_script"]

#: The subcommand modules, in the order of ``pml-design --help``; each has ``add_parser(subparsers)``.
COMMANDS = (demo, split, design, deploy, calibrate, reproduce)


def build_parser() -> Parser:
    """The argument parser of ``pml-design`` (demo, design, privatize, estimate, calibrate, reproduce, bench).

    Building it imports the standard library only (no numpy, scipy or cvxpy), so ``--help`` and argument
    errors are fast; each subcommand imports what it needs when it runs.

    Implements: the command line of ``docs/cli.md``.

    Returns
    -------
    Parser
        The top-level parser, with ``--version`` and one subparser per entry of ``COMMANDS``.
    """
    parser = Parser(prog=PROG, description="Privacy mechanisms with context-aware guarantees (PML).",
                    epilog="Run 'pml-design demo' to see the library's main job on real data.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: object = None, line: str | None = None) -> None:
    """Library warnings as one line ``pml-design: warning: …`` in the command line's words (no file:line)."""
    sys.stderr.write(f"{PROG}: warning: {cli_words(' '.join(str(message).split()))}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pml-design`` console script; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 for a user mistake (one line on stderr), 1 if a solver failed.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help / --version (0) or a parse error (2, already reported)
        return int(exc.code) if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    previous = _on_sigterm()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            # the commands print what a design discloses themselves (pipeline.DisclosureWarning is for the API)
            warnings.filterwarnings("ignore", message="the design discloses inputs exactly")
            return int(args.func(args))
    except (CliError, ValueError, TypeError, FileNotFoundError, ImportError) as exc:
        if os.environ.get("PML_DESIGN_DEBUG"):
            raise
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        sys.stderr.write(f"{PROG}: error: {name_argument(msg)}\n")
        return 2
    except BrokenPipeError:  # e.g. `pml-design design ... --json | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # an output folder that is a file, a path without permission, a full disk
        if os.environ.get("PML_DESIGN_DEBUG"):
            raise
        where = f": {exc.filename}" if exc.filename else ""
        what = exc.strerror or (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        sys.stderr.write(f"{PROG}: error: {what}{where}\n")
        return 2
    except RuntimeError as exc:  # SolverFailedError and friends
        if os.environ.get("PML_DESIGN_DEBUG"):
            raise
        sys.stderr.write(f"{PROG}: error: {type(exc).__name__}: {str(exc).splitlines()[0]}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except _Terminated:
        sys.stderr.write(f"{PROG}: terminated\n")
        return 143
    finally:
        _restore_sigterm(previous)


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``except BaseException`` clean-up runs (a partial output file
    is removed, as on Ctrl-C; with the default action a review found a hidden ``.partial`` file left behind)."""


def _on_sigterm() -> object:
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        return None

    def handler(signum: int, frame: object) -> None:
        raise _Terminated

    return signal.signal(signal.SIGTERM, handler)


def _restore_sigterm(previous: object) -> None:
    if previous is not None:
        import signal  # noqa: PLC0415

        signal.signal(signal.SIGTERM, previous)
