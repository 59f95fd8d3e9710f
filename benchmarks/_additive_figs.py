"""Shared helpers of the core paper's figure scripts (``fig_pml_fig*.py``): output, tables, plotting, bounds.

Private to ``benchmarks/``. The bound functions come from :mod:`pml_design.bounds` (the lead's module) when it
is available; until it is merged, local implementations of the same printed formulas are used (they are only
used to draw Fig. 2 and Fig. 3 and are cross-checked against :mod:`pml_design.bounds` in
``tests/test_additive_figures.py`` when that module exists).
"""

from __future__ import annotations

import csv
import json
import math
import pathlib
from typing import Any, Iterable, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = [
    "delta_min",
    "epsilon_prime",
    "outdir_path",
    "plt",
    "print_table",
    "sensitivity_bound",
    "write_csv",
    "write_json",
]

SEED = 20240601


def outdir_path(outdir: str | pathlib.Path) -> pathlib.Path:
    path = pathlib.Path(outdir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _clean(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def write_json(path: pathlib.Path, obj: Any) -> Any:
    cleaned = _clean(obj)
    path.write_text(json.dumps(cleaned, indent=1))
    return cleaned


def write_csv(path: pathlib.Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for row in rows:
            w.writerow([f"{v:.10g}" if isinstance(v, (float, np.floating)) else v for v in row])


def print_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    rows = [[f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v) for v in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths)))


# --- bounds of the core paper (Section IV) -------------------------------------------------------------
try:  # the lead's implementation
    from pml_design.bounds import delta_min as _delta_min
    from pml_design.bounds import epsilon_prime as _epsilon_prime
    from pml_design.bounds import sensitivity_bound as _sensitivity_bound

    HAVE_BOUNDS = True
except ImportError:  # pragma: no cover - depends on merge order
    HAVE_BOUNDS = False


def _log_num_subsets(n: int) -> float:
    return n * math.log(2.0) + math.log1p(-(2.0 ** (1 - n)))  # log(2^N − 2)


def sensitivity_bound(epsilon: float, prior: np.ndarray, radius: float) -> float:
    """Theorem 4, eq. (6) (k = 1 and k > 1 cases)."""
    if HAVE_BOUNDS:
        try:  # β ≥ 2 p_min is outside Theorem 4's hypothesis but the bound stays valid (proof, Appendix B)
            return float(_sensitivity_bound(epsilon, prior, radius, strict=False))
        except TypeError:
            return float(_sensitivity_bound(epsilon, prior, radius))
    p = np.sort(np.asarray(prior, float))[::-1]
    p_min = p[-1]
    eps1 = -math.log(1.0 - p_min)  # end of the first privacy region
    x = radius / 2 * (math.exp(epsilon) - 1) / p_min if epsilon < eps1 else radius * math.exp(epsilon) / 2
    return -math.log1p(-x) if x < 1 else math.inf


def epsilon_prime(epsilon: float, delta: float, m: int, support_size: int) -> float:
    """Eq. (8) with the corrected eq. (7); ``inf`` where the bound is vacuous."""
    if HAVE_BOUNDS:
        try:
            return float(_epsilon_prime(epsilon, delta, m, support_size))
        except ValueError:
            return math.inf
    beta = math.sqrt(2.0 / m * (_log_num_subsets(support_size) - math.log(delta)))
    x = beta * math.exp(epsilon) / 2
    return epsilon - math.log1p(-x) if x < 1 else math.inf


def delta_min(epsilon: float, eps_prime: float, m: int, support_size: int) -> float:
    """Corollary 3, clipped to 1."""
    if HAVE_BOUNDS:
        return float(_delta_min(epsilon, eps_prime, m, support_size))
    gap = math.exp(-epsilon) - math.exp(-eps_prime)
    return min(1.0, math.exp(_log_num_subsets(support_size) - 2.0 * m * gap * gap))
