"""What a design states, and the fingerprint of the records it was designed on.

Implements: the (ε, δ)-PML statement of core paper Theorem 2 with eq. (7) for each source of P̂ (a public sample, a
DP release of the counts, a first cohort's LDP reports; docs/design.md §11), and the design-data fingerprint that a
mechanism file keeps so that the records behind P̂ are not the records released (docs/design.md §10). Re-exported by
:mod:`pml_design.pipeline`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["FINGERPRINT_MIN_BITS", "design_fingerprint", "order_entropy_bits", "pml_statement", "source_statement",
           "values_sha256"]


def _fmt_delta(delta: float) -> str:
    """δ with 3 significant digits, and more where that would misstate the probability ``1 − δ`` it is read as.

    ``f"{1 - 1e-16:.3g}"`` is ``"1"``, so "probability >= 1 - 1" would read as a vacuous statement where the exact
    one holds with probability 1e-16; the digits grow until ``1 − δ`` is shown to within 1 %. Every δ ≤ 0.5 keeps its 3 digits (their rounding moves
    ``1 − δ`` by at most 0.5 %), so statements of files written before this rule are re-derived the same on load.
    """
    d = float(delta)
    for digits in range(3, 18):
        text = f"{d:.{digits}g}"
        if not (0.0 < 1.0 - d) or abs((1.0 - float(text)) - (1.0 - d)) <= 1e-2 * (1.0 - d):
            return text
    return repr(d)


def pml_statement(epsilon: float, delta: float, radius: float, m: int, *, prior_source: str = "public sample",
                  prior_params: dict | None = None) -> str:
    """The (ε, δ)-PML statement of a mechanism certified over ``B_β(P̂)`` with β = β*(δ) from m samples.

    Implements: core paper, Theorem 2 with eq. (7) (the ball contains the true distribution w.p. ≥ 1 − δ); for
    ``prior_source="dp"`` / ``"ldp reports"`` the ball of :mod:`pml_design.priors` (docs/design.md), and the
    statement also names the guarantee of the records behind P̂ (ε₀-DP, or ε₁-LDP for the first cohort).

    Parameters
    ----------
    epsilon, delta : float
        The guarantee (ε, δ).
    radius : float
        The ℓ1 radius β of the ball the mechanism is certified over.
    m : int
        The number of records behind P̂ (a lower bound of it for a DP release).
    prior_source : {"public sample", "dp", "ldp reports"}, default "public sample"
        Where P̂ came from.
    prior_params : dict, optional
        That source's parameters (``dp_epsilon``, ``neighbouring``, ``delta_total``; ``ldp_epsilon``, ``oracle``,
        ``k``).

    Returns
    -------
    str
        One sentence, ready to print or store.
    """
    pml = (f"({epsilon:.6g}, {_fmt_delta(delta)})-PML for every released record: the mechanism is {epsilon:.6g}-PML for "
           f"every distribution within l1 distance {radius:.4g} of the estimate")
    p = prior_params or {}
    if prior_source == "dp":
        seeded = ", drawn from a seeded generator: void if the seed is known" if "seeded" in str(p.get("noise")) else ""
        return (f"{p.get('dp_epsilon', float('nan')):.6g}-DP for the design records (their counts released with "
                f"discrete Laplace noise{seeded}, {p.get('neighbouring', 'add/remove one record')} neighbours); " + pml
                + f" from these noisy counts (at least m={m} records with probability >= 1 - "
                f"{_fmt_delta(p.get('delta_total', float('nan')))}), which contains the true distribution with probability "
                f">= 1 - {_fmt_delta(delta)} (docs/design.md)")
    if prior_source == "ldp reports":
        k = f", k={p['k']}" if p.get("oracle") == "SS" else ""
        return (f"{p.get('ldp_epsilon', float('nan')):.6g}-LDP for the first cohort's m={m} reports (oracle "
                f"{p.get('oracle', '?')}{k}); " + pml + f" from these reports, which contains the true distribution "
                f"with probability >= 1 - {_fmt_delta(delta)} (docs/design.md)")
    return (
        f"({epsilon:.6g}, {_fmt_delta(delta)})-PML: the mechanism is {epsilon:.6g}-PML for every distribution "
        f"within l1 distance {radius:.4g} of the estimate from m={m} samples, which contains the true "
        f"distribution with probability >= 1 - {_fmt_delta(delta)} (Theorem 2)"
    )


def source_statement(prior_source: str, epsilon: float, delta: float, radius: float, m: int, params: dict) -> str:
    """The (ε, δ)-PML statement of a design whose P̂ came from ``prior_source``; re-derived when a file is loaded.

    Implements: core paper, Theorem 2 with eq. (7) for ``"public sample"`` (:func:`pml_statement`). The other
    sources of :data:`pml_design.estimation.PRIOR_SOURCES` name their own guarantees here (one place, so that
    :meth:`EstimatedDesign.statement`, :func:`pml_design.save_mechanism` and :func:`pml_design.load_mechanism`
    agree).

    Parameters
    ----------
    prior_source : str
        One of :data:`pml_design.estimation.PRIOR_SOURCES`.
    epsilon, delta, radius, m, params
        As for :func:`pml_statement` (``params`` its ``prior_params``).

    Returns
    -------
    str
        The statement.

    Raises
    ------
    ValueError
        An unknown ``prior_source``.
    """
    from .estimation import PRIOR_SOURCES  # noqa: PLC0415

    if prior_source not in PRIOR_SOURCES:
        raise ValueError(f"prior_source must be one of {list(PRIOR_SOURCES)}, got {prior_source!r}")
    return pml_statement(epsilon, delta, radius, m, prior_source=prior_source, prior_params=params)


#: A fingerprint of the design records is kept only when guessing their order takes at least 2^128 hashes.
FINGERPRINT_MIN_BITS: float = 128.0


def order_entropy_bits(counts: object) -> float:
    """log2 of the number of orderings of records with these counts, ``log2(m! / Π c_i!)``.

    P̂ and m (in every mechanism file) give the counts, so a hash of the records in order can reveal at most their
    order; a brute force over the orderings costs this many bits (:func:`design_fingerprint`; docs/design.md §10).

    Parameters
    ----------
    counts : array_like
        The records' count per category.

    Returns
    -------
    float
        The multinomial coefficient's log2.
    """
    c = np.asarray(counts, dtype=float)
    return float((math.lgamma(c.sum() + 1.0) - sum(math.lgamma(v + 1.0) for v in c)) / math.log(2.0))


def values_sha256(values: object) -> str:
    """SHA-256 (hex) of a column's values in order: each value's text, trimmed, followed by a NUL byte.

    The same for a Python sequence, a numpy array, a pandas Series and a streamed CSV / Parquet column
    (:func:`pml_design.deploy.guard.table_column_sha256`), so a design and a privatization can be compared
    (docs/design.md §10).

    Parameters
    ----------
    values : array_like or pandas.Series
        The column, in order.

    Returns
    -------
    str
        The hex digest.
    """
    import hashlib  # noqa: PLC0415

    arr = values.to_numpy(dtype=object) if hasattr(values, "to_numpy") else np.asarray(values, dtype=object)
    text = "".join(f"{str(v).strip()}\x00" for v in arr.ravel().tolist())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def design_fingerprint(values: object, counts: object, *, sha256: str | None = None) -> dict:
    """The fingerprint of the design records that a mechanism file keeps (``design_data``).

    ``{"kind": "column sha256", "sha256": …}`` (:func:`values_sha256`) when the records' order has at least
    :data:`FINGERPRINT_MIN_BITS` bits of entropy given their counts (:func:`order_entropy_bits`), else
    ``{"kind": None, "why": …}``: a hash of a few records could be inverted by trying every order. A hash of
    counts is never kept (a small histogram is guessed quickly). ``sha256``: the column's digest when the caller
    already has it (``pml-design design`` hashes a streamed file in the pass that counts it); ``values`` is then
    not read (docs/design.md §10).

    Parameters
    ----------
    values : array_like or pandas.Series
        The design records' column, in order.
    counts : array_like
        Their count per category.
    sha256 : str, optional
        The column's digest, when already computed.

    Returns
    -------
    dict
        ``{"kind": "column sha256", "sha256": …}`` or ``{"kind": None, "why": …}``.
    """
    bits = order_entropy_bits(counts)
    if bits < FINGERPRINT_MIN_BITS:
        return {"kind": None, "why": f"too few design records to fingerprint safely (their order has {bits:.0f} < "
                f"{FINGERPRINT_MIN_BITS:.0f} bits of entropy)"}
    return {"kind": "column sha256", "sha256": values_sha256(values) if sha256 is None else sha256}
