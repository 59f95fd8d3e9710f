"""Shared argument checks.

Every public function of :mod:`pml_design` validates its inputs through these helpers, so that
bad input raises a :class:`ValueError` or :class:`TypeError` that names the argument and the bad
value, instead of a traceback from deep inside numpy or cvxpy, or a silent ``nan``.

Conventions
-----------
* Probability vectors: 1-D, finite, non-negative, summing to one within ``PROB_ATOL``.
* Mechanisms: 2-D row-stochastic matrices, rows = inputs ``x``, columns = outputs ``y``.
* Randomness: ``rng`` is a :class:`numpy.random.Generator`, an integer seed, or ``None``
  (fresh OS entropy).
* Counts: non-negative integers below 2**62 (:data:`MAX_COUNT`, one limit for the package); their messages quote none.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

#: Tolerance on ``sum(p) == 1`` for probability vectors and rows of mechanisms.
PROB_ATOL: float = 1e-9
#: Largest count (and total, where bounded) of :func:`check_integer_counts`: below 2**62, so a count plus noise and
#: the sum of two counts stay exact in int64. Largest integral float count: 2**53 (float64 skips integers above).
MAX_COUNT: int = 2**62 - 1
MAX_FLOAT_COUNT: int = 2**53
HIDDEN_COUNTS: str = "not shown: they are counts of protected records"

__all__ = ["PROB_ATOL", "as_generator", "check_delta", "check_dense_size", "check_epsilon", "check_finite_array",
           "check_integer_counts", "check_mechanism", "check_positive_int", "check_positive_real",
           "check_probability_vector", "check_radius", "check_real", "fmt", "not_a_file_reason"]


def not_a_file_reason(path: Any) -> str | None:
    """Why ``path`` cannot be read as a data file, or None when it is a regular file.

    Implements: the file checks of the readers (module docstring: bad input raises an error that names it).

    Parameters
    ----------
    path : str or os.PathLike
        The path to check (anything :func:`os.fspath` accepts).

    Returns
    -------
    str or None
        None for a regular file, else ``"file not found"``, ``"is a directory, not a file"`` or ``"not a regular
        file (a device, pipe or socket)"``.
    """
    import os  # noqa: PLC0415
    import pathlib  # noqa: PLC0415

    p = pathlib.Path(os.fspath(path))
    if p.is_file():
        return None
    if not p.exists():
        return "file not found"
    if p.is_dir():
        return "is a directory, not a file"
    return "not a regular file (a device, pipe or socket)"


def fmt(value: Any) -> str:
    """Short, readable representation of a (possibly large) value for error messages.

    Implements: the error messages of the module docstring (they name the bad value).

    Parameters
    ----------
    value : object
        The value to show.

    Returns
    -------
    str
        For a numpy array, its shape and an abbreviated print (at most 8 entries shown, 6 digits); otherwise its
        ``repr``, cut to 120 characters (117 and ``"..."``).
    """
    if isinstance(value, np.ndarray):
        with np.printoptions(threshold=8, precision=6, edgeitems=3):
            return f"array(shape={value.shape}, values={np.array2string(value)})"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def check_real(value: Any, name: str) -> float:
    """Return ``value`` as a float, rejecting non-numbers (``TypeError``) and booleans.

    Implements: the shared real-number check of the module docstring.

    Parameters
    ----------
    value : object
        A real number: a Python or numpy real scalar, or a 0-d numeric array (booleans are refused).
    name : str
        The argument's name, for the error message.

    Returns
    -------
    float
        ``float(value)`` (may be ``nan`` or ``±inf``: callers check finiteness).

    Raises
    ------
    TypeError
        If ``value`` is not a real number, or is a boolean.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.number):
            return float(value)
        raise TypeError(f"{name} must be a real number, got {fmt(value)} of type {type(value).__name__}")
    return float(value)


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = False, positive: bool = False) -> float:
    """Validate a privacy parameter ε: finite (unless ``allow_inf``) and ≥ 0 (> 0 if ``positive``).

    Implements: the ε of ε-PML (core paper, Definition 2) and (ε, δ)-PML (Definition 3), checked as in the module
    docstring.

    Parameters
    ----------
    value : object
        The privacy parameter ε (a real number, see :func:`check_real`).
    name : str, default "epsilon"
        The argument's name, for the error messages.
    allow_inf : bool, default False
        Accept ``ε = +inf`` (no privacy constraint).
    positive : bool, default False
        Require ``ε > 0`` instead of ``ε ≥ 0``.

    Returns
    -------
    float
        ε as a float.

    Raises
    ------
    TypeError, ValueError
        TypeError if ``value`` is not a real number; ValueError if ε is nan, infinite (without ``allow_inf``),
        negative, or zero with ``positive``.
    """
    eps = check_real(value, name)
    if np.isnan(eps) or (np.isinf(eps) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {eps!r}")
    if positive and not eps > 0:
        raise ValueError(f"{name} must be > 0, got {eps!r}")
    if eps < 0:
        raise ValueError(f"{name} must be >= 0, got {eps!r}")
    return eps


#: Largest ε a design accepts: ``e^ε`` must stay a finite float (``e^709.78`` overflows), and any
#: ε ≥ −log(min probability) already allows the identity mechanism.
EPSILON_MAX: float = 700.0


def check_design_epsilon(value: Any, name: str = "epsilon") -> float:
    """Validate the ε of a mechanism design: :func:`check_epsilon` and at most :data:`EPSILON_MAX`."""
    eps = check_epsilon(value, name)
    if eps > EPSILON_MAX:
        raise ValueError(
            f"{name} must be <= {EPSILON_MAX:g} (e^epsilon overflows a float beyond ~709; any epsilon >= "
            f"-log(min probability) already allows the identity mechanism), got {eps!r}"
        )
    return eps


def check_delta(value: Any, name: str = "delta", *, allow_zero: bool = False) -> float:
    """Validate a failure probability δ ∈ (0, 1) (or [0, 1) with ``allow_zero``).

    δ = 1 is refused everywhere (the design, the pipeline, the calibrations, the histogram and additive
    mechanisms, mechanism files): an (ε, δ) statement that holds with probability ≥ 1 − δ = 0 says nothing.
    δ = 0 is meaningful only where a function says so (e.g. the LDP limit of core paper Remark 4).

    Parameters
    ----------
    value : object
        The failure probability δ (a real number, see :func:`check_real`).
    name : str, default "delta"
        The argument's name, for the error messages.
    allow_zero : bool, default False
        Accept ``δ = 0``.

    Returns
    -------
    float
        δ as a float, in (0, 1) (or [0, 1) with ``allow_zero``).

    Raises
    ------
    TypeError, ValueError
        TypeError if ``value`` is not a real number; ValueError if δ is not finite or outside the allowed interval.
    """
    d = check_real(value, name)
    lo_ok = d >= 0 if allow_zero else d > 0
    if not (np.isfinite(d) and lo_ok and d < 1):
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        why = " (delta = 1 makes the guarantee vacuous: it would hold with probability >= 0)" if d == 1 else ""
        raise ValueError(f"{name} must lie in {interval}{why}, got {d!r}")
    return d


def check_positive_real(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """Validate a finite real number > 0 (or ≥ 0 with ``allow_zero``).

    Implements: the shared positive-number check of the module docstring.

    Parameters
    ----------
    value : object
        The number (a real number, see :func:`check_real`).
    name : str
        The argument's name, for the error messages.
    allow_zero : bool, default False
        Accept 0.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    TypeError, ValueError
        TypeError if ``value`` is not a real number; ValueError if it is not finite, or not > 0 (≥ 0 with
        ``allow_zero``).
    """
    v = check_real(value, name)
    ok = v >= 0 if allow_zero else v > 0
    if not (np.isfinite(v) and ok):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {v!r}")
    return v


def check_radius(value: Any, name: str = "radius") -> float:
    """Validate an ℓ1 radius β ∈ [0, 2] (2 is the diameter of the simplex in ℓ1).

    Implements: the radius of the ℓ1-ball uncertainty set (core paper, Definition 5 and eq. (5); docs/design.md §1).

    Parameters
    ----------
    value : object
        The radius β (a real number, see :func:`check_real`).
    name : str, default "radius"
        The argument's name, for the error messages.

    Returns
    -------
    float
        ``min(β, 2.0)``: a finite radius ≥ 0, radii above the ℓ1 diameter 2 of the simplex clipped to 2.

    Raises
    ------
    TypeError, ValueError
        TypeError if ``value`` is not a real number; ValueError if β is not finite or is negative.
    """
    r = check_real(value, name)
    if not (np.isfinite(r) and 0 <= r):
        raise ValueError(f"{name} must be a finite number >= 0, got {r!r}")
    return min(r, 2.0)


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Validate an integer ≥ ``minimum`` (numpy integers and integral floats are rejected/accepted sanely).

    Implements: the shared integer check of the module docstring.

    Parameters
    ----------
    value : object
        An integer: a Python or numpy integer, or a float with an integral value (booleans are refused).
    name : str
        The argument's name, for the error messages.
    minimum : int, default 1
        The smallest accepted value.

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    TypeError, ValueError
        TypeError if ``value`` is a boolean, or neither an integer nor an integral float; ValueError if it is below
        ``minimum``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, (numbers.Integral, np.integer)):
        v = int(value)
    elif isinstance(value, (float, np.floating)) and float(value).is_integer():
        v = int(value)
    else:
        raise TypeError(f"{name} must be an integer, got {fmt(value)} of type {type(value).__name__}")
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


#: Largest dense mechanism matrix (entries) a closed form will build: 2**28 float64 entries = 2 GiB.
MAX_DENSE_ENTRIES: int = 2**28


def check_dense_size(n_rows: int, n_cols: int, name: str = "n") -> None:
    """Refuse a dense ``n_rows × n_cols`` float64 matrix above :data:`MAX_DENSE_ENTRIES` entries (clear error).

    Implements: the size guard of the closed-form mechanisms (module docstring: a clear error, not a failed
    allocation).

    Parameters
    ----------
    n_rows : int
        Rows of the matrix (inputs).
    n_cols : int
        Columns of the matrix (outputs).
    name : str, default "n"
        The name of the size argument, for the error message.

    Raises
    ------
    ValueError
        If ``n_rows * n_cols`` exceeds :data:`MAX_DENSE_ENTRIES`.
    """
    entries = int(n_rows) * int(n_cols)
    if entries > MAX_DENSE_ENTRIES:
        side = int(MAX_DENSE_ENTRIES**0.5)
        raise ValueError(f"{name}={n_rows} is too large: the {n_rows} x {n_cols} mechanism matrix would need "
                         f"{entries * 8 / 2**30:.3g} GiB (limit {MAX_DENSE_ENTRIES * 8 / 2**30:.0f} GiB, about "
                         f"{name} <= {side} for a square matrix)")


def check_finite_array(value: Any, name: str, *, ndim: int | None = None) -> np.ndarray:
    """Convert to a float array, checking dimensionality and finiteness.

    Implements: the shared array check of the module docstring.

    Parameters
    ----------
    value : array_like
        The values (anything :func:`numpy.asarray` converts to floats).
    name : str
        The argument's name, for the error messages.
    ndim : int or None, default None
        The required number of dimensions; None accepts any.

    Returns
    -------
    np.ndarray
        ``np.asarray(value, dtype=float)``: non-empty, finite, with ``ndim`` dimensions when given.

    Raises
    ------
    TypeError, ValueError
        TypeError if ``value`` cannot be converted to a float array; ValueError if the dimensionality is wrong, the
        array is empty, or a value is not finite.
    """
    raw = value if isinstance(value, np.ndarray) else None
    try:  # a list of numbers converts in C (a 16 M-entry matrix took 4.4 s as objects); a ragged one keeps objects
        raw = np.asarray(value) if raw is None and isinstance(value, (list, tuple)) else raw
    except (TypeError, ValueError):
        raw = np.asarray(value, dtype=object)
    if raw is not None and (raw.dtype.kind in "USa" or (raw.dtype.kind == "O" and any(
            isinstance(v, (str, bytes)) for v in raw.ravel()))):  # '0.5' is text, not a number (numpy would parse it)
        raise TypeError(f"{name} must be an array of real numbers, got text: {fmt(value)}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of real numbers, got {fmt(value)}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values, got {fmt(arr)}")
    return arr


def check_integer_counts(value: Any, name: str, *, ndim: int | None = 1, max_count: int = MAX_COUNT,
                         max_total: int | None = None, hidden: str = HIDDEN_COUNTS) -> np.ndarray:
    """Validate a non-empty array of non-negative integer counts; return it as ``int64``, exactly.

    The one count check of the DP count release (:mod:`pml_design.priors`), the histogram release and the flexible
    histograms. No message quotes a count, a number of bad entries or a position (``hidden`` stands for them).
    Integers stay exact; integral floats up to :data:`MAX_FLOAT_COUNT`; booleans and text (``'3'``) are refused.

    Implements: the shared count check of the module docstring (one limit for the package, :data:`MAX_COUNT`).

    Parameters
    ----------
    value : array_like of int
        The counts (a numpy array, a nested list or tuple, a pandas Series, ...); all zero is accepted.
    name : str
        The argument's name, for the error messages.
    ndim : int or None, default 1
        The required number of dimensions; None accepts any number ≥ 1 (e.g. leading repetition axes).
    max_count, max_total : int, int or None
        The largest count (default :data:`MAX_COUNT`) and the largest total (default None: not bounded).
    hidden : str, default :data:`HIDDEN_COUNTS`
        What the messages say in place of the values.

    Returns
    -------
    numpy.ndarray of int64
        The counts, with the input's shape.

    Raises
    ------
    TypeError, ValueError
        Text, booleans or non-numbers (TypeError); a ragged or empty array, the wrong ``ndim``, a count that is
        negative, not finite, not whole, a float above 2**53 or above ``max_count``, a larger total (ValueError).
    """
    text = f"{name} must hold integer counts, got text (a string such as '3' is not a count; convert it first)"
    if isinstance(value, (str, bytes)):
        raise TypeError(text)
    arr = value
    if not (isinstance(value, np.ndarray) and value.dtype != object):
        try:
            arr = np.asarray(value, dtype=object)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a rectangular array of counts") from None
        kinds = set(map(type, arr.ravel().tolist()))
        for bad, exc, why in ((list | tuple | np.ndarray, ValueError, "must be a rectangular array of counts"),
                              (bool | np.bool_, TypeError, f"must hold integer counts, got booleans ({hidden})"),
                              (str | bytes | np.str_ | np.bytes_, TypeError, text[len(name) + 1:])):
            if any(issubclass(t, bad) for t in kinds):
                raise exc(f"{name} {why}")
        if not all(issubclass(t, (numbers.Real, np.integer, np.floating)) for t in kinds):
            raise TypeError(f"{name} must hold integer counts; some entries are not numbers ({hidden})")
        if arr.ndim:
            try:
                arr = np.asarray(arr.tolist())
            except (ValueError, OverflowError):  # Python ints beyond 64 bits beside negative ones: stay objects
                pass
            if arr.dtype == object and not all(issubclass(t, numbers.Integral) for t in kinds):
                arr = arr.astype(float)  # Fractions, Decimals
    kind = arr.dtype.kind
    if kind not in "iufO":
        what = "booleans" if kind == "b" else "text" if kind in "USa" else f"an array of dtype {arr.dtype}"
        raise TypeError(f"{name} must hold integer counts, got {what}")
    if (arr.ndim == 0) if ndim is None else (arr.ndim != ndim):
        raise ValueError(f"{name} must be {ndim or 'at least 1'}-dimensional, got {arr.ndim} dimension(s)")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if kind == "O" and any(int(v) < 0 for v in arr.ravel().tolist()) or kind in "if" and np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative; some are negative ({hidden})")
    if kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite; some are NaN or inf ({hidden})")
        if np.any(arr != np.floor(arr)):
            raise ValueError(f"{name} must be whole numbers; some have a fractional part ({hidden})")
        if np.any(arr > MAX_FLOAT_COUNT):
            raise ValueError(f"{name} given as floats must be at most 2**53, beyond which floats skip integers; pass "
                             f"an integer array or Python ints ({hidden})")
    def limit(n: int) -> str:
        return f"{'below 2**62' if n == MAX_COUNT else f'at most {n}'}, the exact limit of this package ({hidden})"

    if kind == "O" or np.any(arr > max_count):  # compared in the input's own dtype (exact); objects: beyond int64
        raise ValueError(f"{name} must be {limit(max_count)}")
    out = arr.astype(np.int64)
    if max_total is not None and float(out.sum(dtype=np.float64)) >= max_total / 2:  # large: add exactly
        if sum(int(v) for v in out.ravel().tolist()) > max_total:
            raise ValueError(f"{name} has too many items in total: the total must be {limit(max_total)}")
    return out


def check_probability_vector(
    value: Any, name: str = "prior", *, size: int | None = None, full_support: bool = False
) -> np.ndarray:
    """Validate a probability vector (1-D, ≥ 0, sums to 1 within ``PROB_ATOL``).

    The returned copy is renormalised (division by its sum) so downstream exact computations see a vector summing to
    one up to rounding; a vector that already does (within ``min(4·N·ε_mach, 1e-12)``: the division leaves far less,
    about ``log2(N)·ε_mach``) is returned as it is, so validating twice gives the same vector (idempotent).

    Implements: the probability-vector convention of the module docstring.

    Parameters
    ----------
    value : array_like
        The probability vector (see :func:`check_finite_array`).
    name : str, default "prior"
        The argument's name, for the error messages.
    size : int or None, default None
        The required length; None accepts any.
    full_support : bool, default False
        Require every entry to be > 0.

    Returns
    -------
    np.ndarray
        A 1-D float copy, divided by its sum unless that is 1 within ``min(4·N·ε_mach, 1e-12)``.

    Raises
    ------
    TypeError, ValueError
        TypeError if ``value`` cannot be converted to a float array; ValueError if it is not 1-D, empty, not finite, of
        the wrong length, has a negative entry, does not sum to 1 within :data:`PROB_ATOL`, or (with ``full_support``)
        has a zero entry.
    """
    p = check_finite_array(value, name, ndim=1)
    if size is not None and p.shape[0] != size:
        raise ValueError(f"{name} must have length {size}, got length {p.shape[0]}")
    if np.any(p < 0):
        raise ValueError(f"{name} must be non-negative, got {fmt(p)}")
    total = p.sum()
    if abs(total - 1.0) > PROB_ATOL:
        raise ValueError(f"{name} must sum to 1 (within {PROB_ATOL:g}), got sum {float(total)!r}")
    if full_support and np.any(p <= 0):
        zeros = np.flatnonzero(p <= 0).tolist()
        raise ValueError(f"{name} must have full support (all entries > 0); zero at indices {zeros}")
    if abs(total - 1.0) <= min(4.0 * p.shape[0] * np.finfo(float).eps, 1e-12):
        # already normalised to rounding: kept as it is, so that validating twice changes nothing (a file's P̂,
        # saved from a validated vector and validated again on load, must compare equal: a review found 6 of 40
        # designs whose file would not load, "p_hat is [...] but ... give [...]", last-bit differences)
        return p.copy()
    return p / total


def check_mechanism(value: Any, name: str = "mechanism", *, n_inputs: int | None = None) -> np.ndarray:
    """Validate a row-stochastic matrix (rows = inputs x, columns = outputs y).

    Implements: the mechanism convention of the module docstring.

    Parameters
    ----------
    value : array_like or Mechanism
        The matrix, or an object with a ``matrix`` attribute (a mechanism or a design result), which is used.
    name : str, default "mechanism"
        The argument's name, for the error messages.
    n_inputs : int or None, default None
        The required number of rows (symbols of the prior); None accepts any.

    Returns
    -------
    np.ndarray
        The matrix as a 2-D float array (not renormalised).

    Raises
    ------
    TypeError, ValueError
        TypeError if it cannot be converted to a float array; ValueError if it is not 2-D, empty, not finite, has the
        wrong number of rows, a negative entry, or a row whose sum differs from 1 by more than :data:`PROB_ATOL`.
    """
    if hasattr(value, "matrix") and not isinstance(value, np.ndarray):
        value = value.matrix  # accept mechanism/result objects
    W = check_finite_array(value, name, ndim=2)
    if n_inputs is not None and W.shape[0] != n_inputs:
        raise ValueError(
            f"{name} has {W.shape[0]} rows but the prior/uncertainty set has {n_inputs} symbols "
            "(rows = inputs x)"
        )
    if np.any(W < 0):
        raise ValueError(f"{name} must have non-negative entries, got minimum {float(W.min())!r}")
    rows = W.sum(axis=1)
    bad = np.flatnonzero(np.abs(rows - 1.0) > PROB_ATOL)
    if bad.size:
        raise ValueError(
            f"{name} must be row-stochastic (each row sums to 1); row {int(bad[0])} sums to {float(rows[bad[0]])!r}"
        )
    return W


def as_generator(rng: Any, name: str = "rng") -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from a Generator, seed, SeedSequence, or ``None``.

    Implements: the randomness convention of the module docstring.

    Parameters
    ----------
    rng : numpy.random.Generator, int, numpy.random.SeedSequence or None
        A Generator (returned as is), a seed ≥ 0 or SeedSequence (passed to :func:`numpy.random.default_rng`), or
        None (fresh OS entropy).
    name : str, default "rng"
        The argument's name, for the error messages.

    Returns
    -------
    numpy.random.Generator
        The generator.

    Raises
    ------
    TypeError, ValueError
        TypeError if ``rng`` is none of the accepted types (booleans are refused); ValueError if an integer seed is
        negative.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (numbers.Integral, np.integer, np.random.SeedSequence)):
        if isinstance(rng, (bool, np.bool_)):
            raise TypeError(f"{name} must be a numpy Generator, an integer seed, a SeedSequence or None, got {rng!r}")
        if isinstance(rng, (numbers.Integral, np.integer)) and int(rng) < 0:
            raise ValueError(f"{name} seed must be >= 0, got {rng!r}")
        return np.random.default_rng(rng)
    raise TypeError(f"{name} must be a numpy Generator, an integer seed, a SeedSequence or None, got {fmt(rng)}")
