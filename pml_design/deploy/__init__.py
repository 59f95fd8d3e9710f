"""Deploying a designed mechanism: mechanism files, DataFrames, streamed CSV / Parquet tables.

==========================  ==========================================================================
module                      implements
==========================  ==========================================================================
:mod:`.file`                mechanism files: save, load (hash-checked, re-certified, core Definition 5)
:mod:`.matrix_binary`       a wide matrix in a mechanism file as float64 bytes, zlib, base64 (format version 3)
:mod:`.dataframe`           privatize a column of a pandas / Dask DataFrame (per-partition seeds)
:mod:`.streaming`           streamed CSV / Parquet privatize and estimate (the command line's engine)
:mod:`.reports`             a first cohort's LDP oracle reports as text: privatize a table, count them back
:mod:`.split`               a random disjoint split of a table: design records apart from released ones
:mod:`.guard`               fingerprints of the design records; privatizing them is refused
==========================  ==========================================================================

pandas, dask and pyarrow are imported only inside the functions that use them.
"""

from __future__ import annotations

from .dataframe import as_mechanism, privatize_dataframe
from .file import (
    FORMAT,
    FORMAT_VERSION,
    MechanismFileError,
    MechanismFileWarning,
    content_hash,
    load_mechanism,
    save_mechanism,
)
from .file import temporary_sibling  # noqa: F401 - importable from here as before the split (not in __all__)
from .output import OutputFileError
from .split import split_file
from .streaming import MISSING_VALUES, TableError, TableSource, column_counts, privatize_table, report_counts

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MISSING_VALUES",
    "MechanismFileError",
    "MechanismFileWarning",
    "OutputFileError",
    "TableError",
    "TableSource",
    "as_mechanism",
    "column_counts",
    "content_hash",
    "load_mechanism",
    "privatize_dataframe",
    "privatize_table",
    "report_counts",
    "save_mechanism",
    "split_file",
]
