"""Privatize a column of a pandas or Dask DataFrame with a designed mechanism.

The same call works on a pandas DataFrame in memory and, unchanged, on a Dask DataFrame partitioned over a
cluster: :func:`privatize_dataframe` maps every partition independently (no shuffle, no collection to the
client), drawing partition ``i``'s randomness from ``numpy.random.SeedSequence(seed, spawn_key=(i,))``, so
the result is reproducible for a given seed and partitioning, and the streams of different partitions are
independent (O'Neill 2015; NumPy's ``SeedSequence`` spawning). Each record gets ``Y ∼ P_{Y|X=x}``
independently (core paper, Section II), exactly as :meth:`pml_design.Mechanism.privatize`.

pandas and dask are imported only when used.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._validation import as_generator, fmt

__all__ = ["as_mechanism", "privatize_dataframe"]


def as_mechanism(mechanism: object) -> Any:
    """A :class:`~pml_design.Mechanism` from a Mechanism, a DesignResult / EstimatedDesign, or a mechanism file.

    Parameters
    ----------
    mechanism : Mechanism, DesignResult, EstimatedDesign, str or os.PathLike
        A path is read with :func:`pml_design.load_mechanism` (checked and re-certified).

    Returns
    -------
    Mechanism
    """
    from ..mechanisms.mechanism import Mechanism  # noqa: PLC0415

    if isinstance(mechanism, Mechanism):
        return mechanism
    if isinstance(mechanism, (str, os.PathLike)):
        from .file import load_mechanism  # noqa: PLC0415

        return load_mechanism(mechanism)
    inner = getattr(mechanism, "mechanism", None)
    if isinstance(inner, Mechanism):
        return inner
    raise TypeError(f"mechanism must be a Mechanism, a DesignResult, an EstimatedDesign or a mechanism file path, "
                    f"got {fmt(mechanism)}")


def _seed_sequence(rng: object) -> np.random.SeedSequence:
    """Root SeedSequence from ``rng``: a seed, a SeedSequence, a Generator (draws the entropy) or None."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    as_generator(rng)  # validates the type and the sign of a seed
    return np.random.SeedSequence(None if rng is None else int(rng))  # type: ignore[arg-type]


def _privatize_series(series: Any, mech: Any, gen: np.random.Generator) -> Any:
    """Privatized values of one pandas Series: output labels (a Categorical if the input was one) or codes."""
    import pandas as pd  # noqa: PLC0415

    from ..mechanisms.mechanism import _encode  # noqa: PLC0415

    if len(series) == 0:
        return series.copy()
    name = "column" if series.name is None else f"column {series.name!r}"
    codes, as_labels = _encode(series, mech.labels, mech.n_inputs, name, protected=True)
    y = mech.privatize_codes(codes, gen)
    if not as_labels:
        return pd.Series(y, index=series.index, name=series.name)
    out_labels = list(mech.output_labels)
    if isinstance(series.dtype, pd.CategoricalDtype):
        values = pd.Categorical.from_codes(y, categories=out_labels)
    elif isinstance(series.dtype, pd.StringDtype) and all(isinstance(v, str) for v in out_labels):
        import pyarrow as pa  # noqa: PLC0415 - pandas' string dtype is pyarrow-backed

        values = pd.array(pa.array(out_labels, type=pa.string()).take(pa.array(y)), dtype=series.dtype)
    else:
        values = np.empty(len(out_labels), dtype=object)
        values[:] = out_labels
        values = values[y]
    return pd.Series(values, index=series.index, name=series.name, dtype=None if not isinstance(values, np.ndarray)
                     else object)


def _check_column(columns: Any, column: object, output_column: object) -> Any:
    names = list(columns)
    if column not in names:
        raise ValueError(f"column {column!r} is not in the DataFrame; its columns are {fmt(names)}")
    if names.count(column) > 1:  # df[column] would be a DataFrame (pandas raised an AttributeError)
        raise ValueError(f"column {column!r} names {names.count(column)} columns of the DataFrame; rename them first")
    if output_column is not None and output_column != column and output_column in names:
        raise ValueError(f"output_column {output_column!r} is already a column of the DataFrame; refusing to overwrite "
                         "it (choose a new name, or leave output_column=None to replace the privatized column "
                         f"{column!r} itself)")
    return column if output_column is None else output_column


def privatize_dataframe(df: Any, column: Any, mechanism: object, rng: object = None, *,
                        output_column: Any = None, allow_design_data: bool = False) -> Any:
    """Replace one column of a pandas or Dask DataFrame by its privatized values.

    Implements: the local model of the core paper (Section II), per record ``Y ∼ P_{Y|X=x}``, vectorised per
    partition (:meth:`~pml_design.Mechanism.privatize`).

    Parameters
    ----------
    df : pandas.DataFrame or dask.dataframe.DataFrame
        The data; not modified (a new frame is returned; lazy for Dask).
    column : hashable
        The column holding the secret categories (labels of the mechanism, or integer codes).
    mechanism : Mechanism, DesignResult, EstimatedDesign, str or os.PathLike
        The mechanism, or the path of a mechanism file (:func:`pml_design.load_mechanism`).
    rng : numpy.random.Generator, int, numpy.random.SeedSequence or None
        Randomness. pandas: used as one Generator over the column (the result equals
        ``mechanism.privatize(df[column], rng=rng)``). Dask: partition ``i`` uses
        ``default_rng(SeedSequence(seed, spawn_key=(i,)))``, reproducible for a seed and a partitioning (a
        Generator is turned into a seed by drawing from it; None: fresh OS entropy).
    output_column : hashable, optional
        Write the privatized values to this new column instead and keep ``column`` (e.g. for testing; do not
        release the original column). It may not name another existing column (refused, not overwritten).
    allow_design_data : bool, default False
        A pandas column whose values (in order) are the records the mechanism was designed on (its
        ``design_data`` fingerprint, from :func:`pml_design.design_from_samples` or ``pml-design design``), or that
        holds exactly their counts per category (the design records in another order), is refused: the mechanism
        file publishes their counts (P̂ · m), which the guarantee does not cover. Not caught: a part of them, or them
        among other records. True
        privatizes it anyway, with a warning, and marks the result
        (``result.attrs["pml_design.design_data_privatized"] = True``). Dask frames and older files
        fingerprinted by file bytes (``"file sha256"``) are not checked here.

    Returns
    -------
    pandas.DataFrame or dask.dataframe.DataFrame
        A copy with ``column`` (or ``output_column``) holding the privatized labels: the mechanism's
        :attr:`~pml_design.Mechanism.output_labels` (as a Categorical when the input column is one), or
        integer output codes when the column holds codes.

    Raises
    ------
    ValueError
        Unknown column, values the mechanism does not know (naming a few of them), or the design records
        (see ``allow_design_data``).
    TypeError
        ``df`` is not a DataFrame, or a bad ``mechanism`` / ``rng``.
    """
    mech = as_mechanism(mechanism)
    module = type(df).__module__
    if module.startswith("dask"):
        return _privatize_dask(df, column, mech, _seed_sequence(rng), output_column)
    import pandas as pd  # noqa: PLC0415

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas or Dask DataFrame, got {type(df).__name__}")
    target = _check_column(df.columns, column, output_column)
    design_data = _design_data_guard(df[column], column, mechanism, mech, allow_design_data)
    out = df.copy()
    out[target] = _privatize_series(df[column], mech, as_generator(rng))
    if design_data:
        out.attrs["pml_design.design_data_privatized"] = True
    return out


def _design_data_guard(series: Any, column: Any, given: object, mech: Any, allow: bool) -> bool:
    """Refuse the design records (ValueError) unless ``allow``; True (with a warning) if they are privatized."""
    import warnings  # noqa: PLC0415

    from .guard import DESIGN_DATA_MESSAGE, PUBLISHED_COUNTS, design_data_of, matches_design_data  # noqa: PLC0415

    fingerprint = design_data_of(mech) or design_data_of(given)
    if matches_design_data(fingerprint, values=series):
        why = DESIGN_DATA_MESSAGE
    elif _design_counts_match(fingerprint, series, given, mech):  # (a review: the message said "its fingerprint")
        why = f"its counts per category are exactly theirs (the design records in another order?): {PUBLISHED_COUNTS}"
    else:
        return False
    if not allow:
        raise ValueError(f"column {column!r} holds the records the mechanism was designed on: {why} or pass "
                         "allow_design_data=True")
    warnings.warn(f"privatizing column {column!r}, the records the mechanism was designed on (allow_design_data=True): "
                  "the mechanism file publishes their counts (p_hat * m); the guarantee does not cover them",
                  UserWarning, stacklevel=3)
    return True


def _design_counts_match(fingerprint: dict, series: Any, given: object, mech: Any) -> bool:
    """Whether ``series`` holds exactly the design records' counts per category (``P̂ · m``, which the mechanism file
    publishes): the design records in another order (a new user's trial shuffled them past the fingerprint, which
    hashes the values in order). Only where a fingerprint exists (a public-sample P̂) and the mechanism is labelled."""
    import pandas as pd  # noqa: PLC0415

    if not fingerprint.get("kind") or mech.labels is None:
        return False
    from .guard import design_counts_match  # noqa: PLC0415

    meta = mech.metadata if isinstance(mech.metadata, dict) and "p_hat" in mech.metadata else {}
    p_hat = meta.get("p_hat", getattr(given, "p_hat", None))
    m = meta.get("m", getattr(given, "m", None))
    counts = pd.Series(series).value_counts()  # (no object copy of the column: 0.26 s on 2 M rows, a review)
    counts = counts[counts > 0]  # (a Categorical's unused categories, count 0, are no records: a review)
    return bool(counts.index.isin(list(mech.labels)).all()) and design_counts_match(
        p_hat, m, counts.reindex(list(mech.labels), fill_value=0).to_numpy())


def _privatize_dask(ddf: Any, column: Any, mech: Any, root: np.random.SeedSequence, output_column: Any) -> Any:
    import pandas as pd  # noqa: PLC0415

    target = _check_column(ddf.columns, column, output_column)
    entropy = root.entropy
    base_key = tuple(root.spawn_key)

    def one_partition(part: Any, partition_info: dict | None = None) -> Any:
        index = 0 if partition_info is None else int(partition_info["number"])
        seq = np.random.SeedSequence(entropy, spawn_key=(*base_key, index))
        out = part.copy()
        out[target] = _privatize_series(part[column], mech, np.random.default_rng(seq))
        return out

    meta = ddf._meta.copy()
    if mech.labels is None:
        meta[target] = pd.Series([], dtype=np.int64)
    elif isinstance(meta[column].dtype, pd.CategoricalDtype):
        meta[target] = pd.Series(pd.Categorical([], categories=list(mech.output_labels)))
    else:
        meta[target] = pd.Series([], dtype=object)
    return ddf.map_partitions(one_partition, meta=meta)
