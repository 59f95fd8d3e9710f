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


# --- bounds of the core paper (Section IV), from the library ------------------------------------------
from pml_design.bounds import delta_min as _delta_min  # noqa: E402
from pml_design.bounds import epsilon_prime as _epsilon_prime  # noqa: E402
from pml_design.bounds import sensitivity_bound as _sensitivity_bound  # noqa: E402


def sensitivity_bound(epsilon: float, prior: np.ndarray, radius: float) -> float:
    """Theorem 4, eq. (6); beyond beta < 2 p_min the bound stays valid (proof, Appendix B), hence strict=False."""
    return float(_sensitivity_bound(epsilon, prior, radius, strict=False))


def epsilon_prime(epsilon: float, delta: float, m: int, support_size: int) -> float:
    """Eq. (8) with the corrected eq. (7); ``inf`` where the bound is vacuous."""
    try:
        return float(_epsilon_prime(epsilon, delta, m, support_size))
    except ValueError:
        return math.inf


def delta_min(epsilon: float, eps_prime: float, m: int, support_size: int) -> float:
    """Corollary 3, clipped to 1."""
    return float(_delta_min(epsilon, eps_prime, m, support_size))
