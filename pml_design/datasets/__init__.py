"""Data sets bundled with :mod:`pml_design` (no network access at run time).

* :func:`load_adult` — the UCI Adult ("Census Income") data set (Becker & Kohavi 1996,
  https://doi.org/10.24432/C5XW20, CC BY 4.0), see :mod:`pml_design.datasets.adult`.
"""

from __future__ import annotations

from pml_design.datasets.adult import ADULT_COLUMNS, AdultData, load_adult

__all__ = ["ADULT_COLUMNS", "AdultData", "load_adult"]
