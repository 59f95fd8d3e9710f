"""Shared pieces of the ``pml-design`` subcommands: errors, argument types, output helpers, input readers.

Kept light on purpose: this module and every ``add_parser`` of the subcommand modules import the standard
library only, so ``pml-design --help`` and argument errors never load numpy, scipy or cvxpy; numpy is imported
inside the helpers that need it.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import pathlib
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import numpy as np

PROG = "pml-design"

#: The --utility choices of every subcommand (one list: extend it here).
UTILITIES = ("frequency_estimation", "mutual_information", "map_accuracy", "chi_square_information",
             "total_variation_information")


class CliError(Exception):
    """A user mistake detected by the command line itself (reported as one line, exit status 2)."""


class Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line naming the bad argument (no usage dump), and which takes no
    abbreviated option (a new user's ``--ldp 1`` was read as ``--ldp-epsilon 1`` without a word)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default, except ``None`` (an option without one; its help says what happens instead)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


#: The help formatter of every subcommand (shows the defaults, not "(default: None)").
FORMATTER = _DefaultsFormatter


# ---------------------------------------------------------------------------------------------------------
# argument types
# ---------------------------------------------------------------------------------------------------------
def argument_type(convert: Callable[[str], Any], ok: Callable[[Any], bool], requirement: str) -> Callable[[str], Any]:
    """An argparse ``type=`` that converts with ``convert`` and checks ``ok``, with one-line messages."""
    noun = "an integer" if convert is int else "a number"

    def parse(text: str) -> Any:
        try:
            v = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {noun}: {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"{requirement}, got {text!r}")
        return v

    return parse


positive_float = argument_type(float, lambda v: math.isfinite(v) and v > 0, "must be a finite number > 0")
positive_int = argument_type(int, lambda v: v >= 1, "must be >= 1")
nonneg_int = argument_type(int, lambda v: v >= 0, "must be >= 0")
probability = argument_type(float, lambda v: 0 < v <= 1, "must lie in (0, 1]")
#: δ of an (ε, δ)-PML statement: δ = 1 would make it vacuous (it holds with probability ≥ 0).
failure_probability = argument_type(float, lambda v: 0 < v < 1, "must lie in (0, 1) (a failure probability: "
                                    "0 cannot be promised from finite data, 1 makes the guarantee vacuous)")
#: ε of a design: e^ε must be a finite float (pml_design._validation.EPSILON_MAX; literal here: no numpy at --help).
design_epsilon = argument_type(float, lambda v: math.isfinite(v) and 0 < v <= 700,
                               "must be a number in (0, 700] (e^epsilon overflows beyond ~709)")
#: An l1 radius: 2 is the diameter of the simplex (the whole simplex), larger values are meaningless.
ball_radius = argument_type(float, lambda v: math.isfinite(v) and 0 <= v <= 2, "must lie in [0, 2] (2 is the "
                            "l1 diameter of the simplex)")
confidence = argument_type(float, lambda v: 0 < v < 1, "must lie in (0, 1), e.g. 0.95")
unit_interval = argument_type(float, lambda v: 0 <= v <= 1, "must lie in [0, 1]")


def parse_categories(spec: str) -> list[str]:
    """The public ``--categories A,B,...`` list: at least 2 distinct, non-empty names, each its exact text.

    Nothing is stripped, as for labels everywhere (docs/cli.md): a name with surrounding whitespace (``'a, b'``) is
    refused, naming it, instead of being matched to ``'b'`` silently or to no value of the data. A name holding a
    comma cannot be written here: :func:`read_categories_file` (``--categories-file``) takes it.

    Parameters
    ----------
    spec : str
        The text of ``--categories``.

    Returns
    -------
    list of str
        The names, in the order given.

    Raises
    ------
    CliError
        An empty name, one with surrounding whitespace, a name given twice (named), fewer than 2 names.
    """
    cats = spec.split(",")
    padded = [c for c in cats if c.strip() and c != c.strip()]
    if padded:
        raise CliError(f"argument --categories: {padded[0]!r} has surrounding whitespace; category names are exact "
                       "text, as labels everywhere (nothing is stripped): write them without spaces around the "
                       f"commas, e.g. {','.join(c.strip() for c in cats)!r}, or, if a name holds a comma (as "
                       "'Korea, Republic of'), give one name per line in --categories-file FILE")
    if any(not c for c in cats):
        raise CliError(f"argument --categories: an empty name in {spec!r} (two commas in a row, or one at an end); "
                       "a category holding a comma is given with --categories-file")
    return _checked_categories(cats, "--categories", "positions")


def _checked_categories(cats: list[str], option: str, where: str) -> list[str]:
    """``cats`` if they are at least 2 and distinct; else one line naming the duplicate and ``where`` (``"positions"``,
    ``"FILE, lines"``) it is."""
    first: dict[str, int] = {}
    for i, c in enumerate(cats, start=1):
        if c in first:
            raise CliError(f"argument {option}: the category {c!r} is given twice ({where} {first[c]} and {i}); give "
                           "each category once")
        first[c] = i
    if len(cats) < 2:
        raise CliError(f"argument {option}: need at least 2 categories, got {len(cats)}: {cats}")
    return cats


def read_categories_file(path: str) -> list[str]:
    """The public list of categories from ``--categories-file``: UTF-8 text, one category per line.

    Each line is taken exactly as written but its line ending (``\\n`` or ``\\r\\n``), so a category may hold a
    comma (which ``--categories A,B,...`` cannot); nothing is stripped, as for labels everywhere: a line with
    surrounding whitespace is refused, and so is an empty line, each naming its line number. A UTF-8 byte-order
    mark is ignored; the final line ending is optional.

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    list of str
        The categories, in the file's order.

    Raises
    ------
    CliError
        An unreadable file or not UTF-8 text; an empty line, a line with surrounding whitespace, a category given
        twice, fewer than 2 categories (each naming the line).
    """
    from .._validation import not_a_file_reason  # noqa: PLC0415

    option = "--categories-file"
    why = not_a_file_reason(path)
    if why is not None:
        raise CliError(f"argument {option}: {why}: {path}")
    raw = pathlib.Path(path).read_bytes()
    if b"\x00" in raw:
        raise CliError(f"argument {option}: not a text file (it contains NUL bytes): {path}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"argument {option}: not UTF-8 text (bad byte at offset {exc.start}): {path}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":  # the final line ending
        lines.pop()
    cats = [line[:-1] if line.endswith("\r") else line for line in lines]
    for i, c in enumerate(cats, start=1):
        if not c:
            raise CliError(f"argument {option}: {path}, line {i} is empty (one category per line, no empty line)")
        if c != c.strip():
            raise CliError(f"argument {option}: {path}, line {i}: {c!r} has surrounding whitespace; category names "
                           "are exact text, as labels everywhere (nothing is stripped)")
    return _checked_categories(cats, option, f"{path}, lines")


def add_categories_arguments(p: argparse.ArgumentParser, what: str) -> None:
    """``--categories A,B,...`` and ``--categories-file FILE`` (mutually exclusive) on a subcommand's parser.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    what : str
        When they are used, appended to both helps.
    """
    g = p.add_mutually_exclusive_group()
    g.add_argument("--categories", metavar="A,B,...", default=None, help="the public list of categories, "
                   f"comma-separated, each name its exact text; {what}")
    g.add_argument("--categories-file", metavar="FILE", default=None, help="the same list from a UTF-8 file, one "
                   "category per line, each line its exact text (a category may hold a comma); instead of "
                   "--categories")


def categories_from_args(args: argparse.Namespace) -> list[str] | None:
    """The public categories of ``--categories`` or ``--categories-file`` (checked), or None when neither is given.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments with ``categories`` and ``categories_file``.

    Returns
    -------
    list of str or None
        The same list whichever form gave it.
    """
    if args.categories_file is not None:
        return read_categories_file(args.categories_file)
    return None if args.categories is None else parse_categories(args.categories)


def categories_option(args: argparse.Namespace) -> str:
    """The option that gave the categories, to name it in errors: ``--categories-file`` or ``--categories``."""
    return "--categories-file" if getattr(args, "categories_file", None) is not None else "--categories"


#: Library parameter names -> the command-line option that sets them (to name the argument in errors).
OPTION_OF = {
    "epsilon": "--epsilon", "delta": "--delta", "delta2": "--delta2", "radius": "--radius", "alpha": "--alpha",
    "p_hat_min": "--p-hat-min", "p_hat": "--p-hat", "m": "--m", "solver": "--solver", "utility": "--utility",
    "method": "--method", "counts": "--counts", "samples": "--samples", "name": "--attribute",
    "dp_epsilon": "--dp-epsilon", "ldp_epsilon": "--ldp-epsilon",
}


#: Python spellings in library messages -> the command line's (a CLI user reads flags, not keyword arguments).
_PYTHON_TO_CLI: tuple[tuple[str, str], ...] = (
    (r"solver_options=\{'time_limit': [^}]*\}", "--time-limit SECONDS"),
    (r"solver_options\[['\"]time_limit['\"]\]", "--time-limit"),
    (r"solver_options\[['\"]max_outputs['\"]\]", "--max-outputs or --time-limit, whichever caps it"),
    (r"\bmethod=['\"](\w+)['\"]", r"--method \1"),
    (r"\bsolver=['\"](\w+)['\"]", r"--solver \1"),
    (r"\butility=['\"](\w+)['\"]", r"--utility \1"),
    (r"\ballow_zero=True", "--allow-zero"),
    (r"\boverwrite=True", "--force"),
)


def cli_words(message: str) -> str:
    """``message`` with the library's Python spellings (``method='scalable'``) replaced by CLI flags."""
    import re  # noqa: PLC0415

    for pattern, repl in _PYTHON_TO_CLI:
        message = re.sub(pattern, repl, message)
    return message


def name_argument(message: str) -> str:
    """Prefix a library error message with the command-line option it is about (``argument --x: ...``)."""
    message = cli_words(message)
    if message.startswith("argument "):
        return message
    first = message.split(" ", 1)[0].split("=", 1)[0].strip("'\"")  # ("dp_epsilon=1e-12 is too small")
    opt = OPTION_OF.get(first)
    if opt is None and "ray enumeration is limited" in message:
        opt = "--method"
    return f"argument {opt}: {message}" if opt else message


# ---------------------------------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------------------------------
def jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and non-finite floats into JSON-compatible values."""
    import numpy as np  # noqa: PLC0415 - keep `--help` free of numpy
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, pathlib.Path):
        return str(obj)
    return obj


def print_json(obj: Any) -> None:
    """Print ``obj`` as indented JSON on stdout (numpy values converted by :func:`jsonable`).

    A top-level 2-D float array (a design's ``matrix``) is printed one row per line, its rows formatted once
    (``deploy.matrix_text``, as in a mechanism file): ``json.dumps`` with an indent runs the pure-Python encoder, one line per
    entry (8 M entries at N = 1 000: ~25 s)."""
    import numpy as np  # noqa: PLC0415

    big = {k: v for k, v in obj.items() if isinstance(v, np.ndarray) and v.ndim == 2 and v.dtype.kind == "f"
           and v.size > 10_000 and np.isfinite(v).all()} if isinstance(obj, dict) else {}
    if not big:
        print(json.dumps(jsonable(obj), indent=2))
        return
    from ..deploy.matrix_text import _matrix_lines, _splice_rows  # noqa: PLC0415

    tokens = {k: f"matrix-{k}-{id(v)}" for k, v in big.items()}
    text = json.dumps(jsonable({k: tokens.get(k, v) for k, v in obj.items()}), indent=2)
    for k, v in big.items():
        text = _splice_rows(text, tokens[k], _matrix_lines(v))
    print(text)


def privatized_summary(args: argparse.Namespace, summary: dict, used: str) -> bool:
    """Say what ``privatize`` wrote: the ``--seed`` warning on stderr (also with ``--json``: a seeded output must not
    be released unawares), then ``summary`` as JSON (returns True) or two lines naming ``used`` (returns False); the
    ``guarantee:`` line adds ``summary["guarantee_caveat"]`` when there is one."""
    if args.seed is not None:
        sys.stderr.write(f"{PROG}: warning: --seed {args.seed} makes this output reproducible: whoever knows the seed "
                         "can undo its noise, so the guarantee does not hold for it; a release must omit --seed (fresh "
                         "OS entropy)\n")
        # in the result too, not on stderr only (a new user's trial: with 2>/dev/null nothing showed it, session 21)
        seeded = f"void for this output: --seed {args.seed} makes its noise reproducible (tests only)"
        summary["guarantee_caveat"] = "; ".join(c for c in (summary.get("guarantee_caveat"), seeded) if c)
    if args.json:
        print_json(summary)
        return True
    print(f"privatized column {args.column!r} of {summary['rows']} rows with {used} in {summary['seconds']:.2f} s "
          f"({summary['rows_per_second']:.3g} rows/s); wrote {args.output}"
          + (f" and its mark {pathlib.Path(summary['mark']).name}" if summary.get("mark") else "")
          + (f" and its provenance file {pathlib.Path(summary['provenance']).name} (design --reports needs it beside "
             "the reports)" if summary.get("provenance") else ""))
    caveat = summary.get("guarantee_caveat")  # (privatize --allow-design-data: the design records are not covered)
    print(f"guarantee: {summary['statement']}" + (f"; {caveat}" if caveat else ""))
    return False


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned, floats with 4 digits."""
    import numpy as np  # noqa: PLC0415

    def cell(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.4g}"
        return str(v)

    cells = [[cell(v) for v in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# input: counts files and streamed CSV / Parquet columns
# ---------------------------------------------------------------------------------------------------------
def table_option(args: argparse.Namespace) -> str:
    """The option that named the table: ``--csv`` or ``--parquet`` (to name it in errors)."""
    return "--csv" if args.csv is not None else "--parquet"


def table_source(path: str, option: str, delimiter: str | None = None, parquet: bool | None = None,
                 protected: bool = False) -> Any:
    """A streamed CSV/Parquet source (:class:`pml_design.deploy.TableSource`); pyarrow imported lazily."""
    from ..deploy.streaming import TableSource  # noqa: PLC0415

    return TableSource(path, option, delimiter=delimiter, parquet=parquet, protected=protected)


def csv_column_counts(path: str, column: str, delimiter: str | None, option: str = "--csv",
                      parquet: bool | None = None, *, digest: Any = None, quote_values: bool = True) -> Any:
    """Sorted distinct values of a column and their counts (streamed; blanks and '?'/NA dropped).

    ``digest``: a ``hashlib`` object fed the column in the same pass (:func:`pml_design.deploy.streaming.column_counts`);
    ``quote_values=False``: no message names a value (records protected by ``--dp-epsilon``).
    """
    from ..deploy.streaming import column_counts  # noqa: PLC0415

    return column_counts(table_source(path, option, delimiter, parquet, protected=not quote_values), column,
                         digest=digest, quote_values=quote_values)  # (protected: a parse error quotes no row)


_SEPARATOR_NAMES = {"\t": "tabs", ",": "commas", ";": "semicolons"}
_UNSET = object()
_PLAIN_COUNT = re.compile(r"[0-9]+")


def _counts_separator(line: str) -> str | None:
    """The separator of a counts file, from its first line: the first of tab, semicolon, comma that splits it into
    at most two fields (``category;count`` and ``a;12,345`` give the semicolon), else spaces (None)."""
    for sep in "\t;,":
        if sep in line:
            fields = [t for t in next(csv.reader([line], delimiter=sep, skipinitialspace=True)) if t.strip()]
            if len(fields) <= 2:
                return sep
    return next((c for c in "\t;," if c in line), None)  # (more than two fields either way: refused below)


def read_counts(path: str, *, quote_labels: bool = True) -> tuple[np.ndarray, list[str]]:
    """Counts per category from a file: one ``count`` or ``label,count`` per line (header line optional).

    One separator for the whole file, from its first line: the first of tab, semicolon or comma that splits it
    into at most two fields (CSV quoting: ``"a, b",3``), else whitespace. A line of more than two fields is an error
    (``phone,1,200`` was read as phone = 200), and so is a count that is not plain digits (``1.000``, ``12,345``:
    ambiguous). A header is the first line only if its last field is a name (letters, no digits), e.g.
    ``category,count``; a first line such as ``a,1x`` is an error, not a header. Labels must be distinct.
    ``quote_labels=False`` (counts of records protected by ``--dp-epsilon``: a label may be a record's value): no
    message names a label, and a file with fewer than 2 (or no) labels is not refused (the public ``--categories``
    decide).
    """
    from .._validation import not_a_file_reason  # noqa: PLC0415

    p = pathlib.Path(path)
    why = not_a_file_reason(p)
    if why is not None:
        raise CliError(f"argument --counts: {why}: {path}")
    raw_bytes = p.read_bytes()
    if b"\x00" in raw_bytes[:65536]:
        raise CliError(f"argument --counts: not a text file (it contains NUL bytes): {path}")
    try:
        text = raw_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"argument --counts: not UTF-8 text (bad byte at offset {exc.start}): {path}") from None
    labels: list[str] = []
    counts: list[float] = []
    first_line: dict[str, int] = {}
    seen_data = False
    sep: object = _UNSET
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if sep is _UNSET:  # one separator for the whole file, from its first line (header or data)
            sep = _counts_separator(line)
        if sep is None:
            parts = line.split()
        else:
            parts = [t.strip() for t in next(csv.reader([line], delimiter=sep, skipinitialspace=True)) if t.strip() != ""]
        if len(parts) > 2:  # a label, a count and more: never guess which field is which (fields are not echoed)
            how = (f"separated by {_SEPARATOR_NAMES[sep]}; quote a label that holds the separator (\"a, b\",3)"
                   if sep is not None else "separated by spaces; write 'label,count' for a label with spaces")
            raise CliError(
                f"argument --counts: {path}, line {lineno}: expected a count or 'label,count' (2 fields), got "
                f"{len(parts)} fields {how}, and counts without thousands separators"
            )
        if not _PLAIN_COUNT.fullmatch(parts[-1]):
            if not seen_data and all(ch.isalpha() or ch in "_ -" for ch in parts[-1]):  # a header line
                seen_data = True
                continue
            raise CliError(f"argument --counts: {path}, line {lineno}: the count is not a non-negative integer in "
                           "plain digits (no decimal point, thousands separator, sign or exponent: such counts are "
                           "ambiguous)")
        seen_data = True
        value = float(int(parts[-1]))
        label = parts[0] if len(parts) > 1 else str(len(labels))
        if label in first_line:
            shown, why = (f" {label!r}", "") if quote_labels else ("", "; not shown: with --dp-epsilon a label may "
                                                                  "be the value of a protected record")
            raise CliError(f"argument --counts: {path}, line {lineno}: duplicate label{shown} (first on line "
                           f"{first_line[label]}{why})")
        first_line[label] = lineno
        counts.append(value)
        labels.append(label)
    if not counts and quote_labels:  # (with --dp-epsilon: not refused, that would tell that there is no record;
        raise CliError(f"argument --counts: {path} holds no counts (file is empty)")  # the public --categories count)
    if len(counts) < 2 and quote_labels:
        raise CliError(f"argument --counts: {path} must hold at least 2 categories, got {len(counts)}")
    import numpy as np  # noqa: PLC0415

    return np.asarray(counts, dtype=np.int64), labels
