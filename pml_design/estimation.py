"""Distribution estimation and the large-deviation radius of the ℓ1 uncertainty ball.

Implements: core paper, Section II-B (eq. (3), φ, κ_P, Theorem 2 = [26, Thm. 1] of Weissman et al.),
Section III (the radius needed for a failure probability δ) and Section IV-D (eq. (7)).

Erratum (eq. (7))
-----------------
The printed eq. (7) reads ``β*(δ) = sqrt(2/m) (log(2^N − 2) − log δ)``; the square root must cover the
whole product, ``β*(δ) = sqrt(2/m · (log(2^N − 2) − log δ))``, as derived in Section III, as in the binary
case eq. (14), and as required for Corollary 3 to follow from eq. (8) (see ``docs/errata.md`` and
``tests/test_estimation.py::test_eq7_matches_corollary3_algebra``).

Zero counts
-----------
PML is defined w.r.t. a full-support distribution. If a symbol never occurs among the samples, the
empirical estimate has a zero there. :func:`empirical_distribution` then raises unless
``allow_zero=True``; with it, the zero is kept: an :class:`~pml_design.uncertainty.L1Ball` of radius
β > 0 around such an estimate still contains full-support distributions and every computation in this
library handles it exactly, but Proposition 2 / Theorem 4 (which assume ``β < 2 min P̂``) do not apply.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import (
    check_delta,
    check_finite_array,
    check_positive_int,
    check_probability_vector,
    check_radius,
    check_real,
    fmt,
)

__all__ = [
    "counts_distribution",
    "empirical_distribution",
    "kappa",
    "l1_deviation_delta",
    "l1_radius",
    "log_num_subsets",
    "PRIOR_SOURCES",
    "phi",
    "prior_radius",
    "samples_needed",
]

#: Largest alphabet for which :func:`kappa` is computed exactly (meet-in-the-middle subset sums).
KAPPA_EXACT_MAX_SIZE: int = 40


def counts_distribution(counts: object, *, allow_zero: bool = False) -> np.ndarray:
    """Empirical distribution from symbol counts (eq. (3) with the counts given).

    Implements: core paper, eq. (3).

    Parameters
    ----------
    counts : array_like of int, shape (N,)
        Non-negative integer counts, at least one positive.
    allow_zero : bool, default False
        Whether zero counts are allowed (see module docstring).

    Returns
    -------
    numpy.ndarray, shape (N,)
    """
    c = check_finite_array(counts, "counts", ndim=1)
    if np.any(c < 0) or np.any(c != np.round(c)):
        raise ValueError(f"counts must be non-negative integers, got {fmt(c)}")
    total = c.sum()
    if total <= 0:
        raise ValueError("counts must contain at least one sample (all counts are zero)")
    if not allow_zero and np.any(c == 0):
        zeros = np.flatnonzero(c == 0).tolist()
        shown = f"{zeros}" if len(zeros) <= 10 else f"{zeros[:10]} ... ({len(zeros)} in all)"
        raise ValueError(
            f"symbols {shown} never occur, so the estimate lacks full support (PML needs P_X > 0); "
            "pass allow_zero=True to keep the zeros (an L1Ball of radius > 0 still covers full-support "
            "distributions), or collect more samples"
        )
    return c / total


def empirical_distribution(samples: object, support_size: int, *, allow_zero: bool = False) -> np.ndarray:
    """Empirical distribution ``P̂(x) = (1/m) Σ_i 1{d_i = x}`` over the alphabet ``{0, …, N−1}``.

    Implements: core paper, eq. (3).

    Parameters
    ----------
    samples : array_like of int
        The observed symbols, each in ``{0, …, support_size − 1}``.
    support_size : int
        Alphabet size N (declared, not inferred: unseen symbols count as zeros).
    allow_zero : bool, default False
        Whether symbols with zero count are allowed (see module docstring).

    Returns
    -------
    numpy.ndarray, shape (N,)
    """
    n = check_positive_int(support_size, "support_size", minimum=2)
    arr = np.asarray(samples)
    if arr.size == 0:
        raise ValueError("samples must not be empty")
    if not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"samples must be integers in [0, {n}), got dtype {arr.dtype}")
    arr = arr.ravel()
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        raise ValueError(f"samples must lie in [0, {n}); found {int(arr[bad][0])}")
    return counts_distribution(np.bincount(arr, minlength=n), allow_zero=allow_zero)


def phi(p: float) -> float:
    """``φ(p) = log((1 − p)/p) / (1 − 2p)`` on ``[0, 1/2]``, with ``φ(1/2) = 2`` and ``φ(0) = ∞``.

    Implements: core paper, Section II-B (definition of φ before Theorem 2).

    Parameters
    ----------
    p : float
        A probability in ``[0, 1/2]``.

    Returns
    -------
    float
        ``φ(p)`` (decreasing from ``∞`` at 0 to 2 at 1/2).

    Raises
    ------
    ValueError
        If ``p`` is outside ``[0, 1/2]``.

    Notes
    -----
    Computed as ``2 artanh(u)/u`` with ``u = 1 − 2p``, which is accurate near ``p = 1/2``.
    """
    x = check_real(p, "p")
    if not (0.0 <= x <= 0.5):
        raise ValueError(f"p must lie in [0, 0.5], got {x!r}")
    if x == 0.0:
        return math.inf
    u = 1.0 - 2.0 * x
    if u == 0.0:
        return 2.0
    return 2.0 * math.atanh(u) / u


def _subset_sums(p: np.ndarray) -> np.ndarray:
    sums = np.zeros(1)
    for v in p:
        sums = np.concatenate([sums, sums + v])
    return sums


def kappa(prior: object) -> float:
    """``κ_P = max_{A ⊆ 𝒳} min{P(A), 1 − P(A)}`` — a subset-sum problem.

    Implements: core paper, Section II-B (definition of κ_P before Theorem 2).

    Exact for ``N ≤ 40`` (meet-in-the-middle over subset sums) and whenever ``max P ≥ 1/2`` (then
    ``κ = 1 − max P``). Otherwise returns the upper bound ``1/2``, which is *safe* for Theorem 2 because
    φ is decreasing (a larger κ gives a smaller φ and so a larger δ / radius).

    Parameters
    ----------
    prior : array_like, shape (N,)

    Returns
    -------
    float
        κ_P in ``[0, 1/2]``.
    """
    p = check_probability_vector(prior, "prior")
    pmax = float(p.max())
    if pmax >= 0.5:
        return 1.0 - pmax
    n = p.shape[0]
    if n > KAPPA_EXACT_MAX_SIZE:
        return 0.5
    half = n // 2
    a = _subset_sums(p[:half])
    b = np.sort(_subset_sums(p[half:]))
    idx = np.searchsorted(b, 0.5 - a)
    best = 0.0
    for shift in (-1, 0):
        j = np.clip(idx + shift, 0, b.shape[0] - 1)
        s = a + b[j]
        best = max(best, float(np.max(np.minimum(s, 1.0 - s))))
    return min(best, 0.5)


def log_num_subsets(support_size: int) -> float:
    """``log(2^N − 2)``, the union-bound factor of Theorem 2, without overflow (N ≥ 2).

    Implements: core paper, Theorem 2 ([26, Thm. 1]): the factor ``2^N − 2`` (number of nontrivial subsets).

    Parameters
    ----------
    support_size : int
        Alphabet size N ≥ 2.

    Returns
    -------
    float
        ``N log 2 + log1p(−2^{1−N})``.
    """
    n = check_positive_int(support_size, "support_size", minimum=2)
    return n * math.log(2.0) + math.log1p(-(2.0 ** (1 - n)))


def _phi_for(prior: object | None, n: int) -> float:
    if prior is None:
        return 2.0
    p = check_probability_vector(prior, "prior", size=n)
    return phi(kappa(p))


def l1_deviation_delta(m: int, support_size: int, radius: float, *, prior: object | None = None) -> float:
    """Theorem 2: ``P{‖P − P̂‖₁ ≥ β} ≤ (2^N − 2) exp(−m φ(κ_P) β² / 4)``.

    Implements: core paper, Theorem 2 ([26, Thm. 1]); with ``prior=None`` the distribution-free
    ``φ ≥ 2`` (eq. (7) inverted).

    Parameters
    ----------
    m : int
        Number of i.i.d. samples behind the estimate.
    support_size : int
        Alphabet size N ≥ 2.
    radius : float
        ℓ1 radius β ≥ 0.
    prior : array_like, optional
        The (true or assumed) distribution, for the distribution-dependent φ(κ_P).

    Returns
    -------
    float
        The failure probability bound δ, clipped to ``[0, 1]``.
    """
    m = check_positive_int(m, "m")
    n = check_positive_int(support_size, "support_size", minimum=2)
    beta = check_radius(radius, "radius")
    ph = _phi_for(prior, n)
    if math.isinf(ph):
        return 0.0 if beta > 0 else 1.0
    log_delta = log_num_subsets(n) - m * ph * beta * beta / 4.0
    return float(min(1.0, math.exp(log_delta)))


def l1_radius(m: int, support_size: int, delta: float, *, prior: object | None = None) -> float:
    """Radius ``β*(δ)`` of the ℓ1 ball around ``P̂`` that contains ``P`` with probability ≥ 1 − δ.

    ``β*(δ) = sqrt(2/m · (log(2^N − 2) − log δ))`` (distribution-free, φ ≥ 2), or
    ``2 sqrt((log(2^N − 2) − log δ) / (m φ(κ_P)))`` with ``prior``.

    Implements: core paper, eq. (7) (corrected, see module docstring), Section III, eq. (14) for N = 2.

    Parameters
    ----------
    m : int
        Number of samples behind the estimate, ≥ 1.
    support_size : int
        Alphabet size N ≥ 2.
    delta : float
        Failure probability in (0, 1].
    prior : array_like, optional
        Distribution for the distribution-dependent version (uses κ_P of Theorem 2).

    Returns
    -------
    float
        β ≥ 0. Values ≥ 2 mean the samples rule out nothing (the ball is the whole simplex).
    """
    m = check_positive_int(m, "m")
    n = check_positive_int(support_size, "support_size", minimum=2)
    d = check_delta(delta)
    ph = _phi_for(prior, n)
    if math.isinf(ph):
        return 0.0
    num = log_num_subsets(n) - math.log(d)
    return 2.0 * math.sqrt(max(num, 0.0) / (m * ph))


def samples_needed(radius: float, support_size: int, delta: float, *, prior: object | None = None) -> int:
    """Smallest m with ``l1_radius(m, N, δ) ≤ radius`` (inverse of eq. (7) in m).

    Implements: core paper, eq. (7) / Theorem 2 solved for m.

    Parameters
    ----------
    radius : float
        Target radius β > 0 of the ℓ1 ball.
    support_size : int
        Alphabet size N ≥ 2.
    delta : float
        Failure probability in (0, 1].
    prior : array_like, optional
        Distribution for the distribution-dependent version (uses κ_P of Theorem 2); None: φ = 2.

    Returns
    -------
    int
        The smallest m ≥ 1 with :func:`l1_radius` ``(m, N, δ) ≤ β`` (1 when ``φ(κ_P) = ∞``).

    Raises
    ------
    ValueError
        If ``radius`` is not positive.
    """
    beta = check_radius(radius, "radius")
    if beta <= 0:
        raise ValueError(f"radius must be > 0 (no finite sample size gives radius 0), got {radius!r}")
    n = check_positive_int(support_size, "support_size", minimum=2)
    d = check_delta(delta)
    ph = _phi_for(prior, n)
    if math.isinf(ph):
        return 1
    num = log_num_subsets(n) - math.log(d)
    m = max(1, math.ceil(4.0 * num / (ph * beta * beta) * (1 - 1e-15)))
    while l1_radius(m, n, d, prior=prior) > beta:
        m += 1
    while m > 1 and l1_radius(m - 1, n, d, prior=prior) <= beta:
        m -= 1
    return m


#: Where the centre P̂ of the uncertainty ball can come from (mechanism-file field ``prior_source``).
PRIOR_SOURCES: tuple[str, ...] = ("public sample", "dp", "ldp reports")


def prior_radius(prior_source: str, support_size: int, delta: float, params: dict) -> float:
    """The ℓ1 radius that a stated prior source implies, re-derived from its parameters.

    Implements: core paper eq. (7) (corrected, :func:`l1_radius`) for ``"public sample"``; for ``"dp"`` and
    ``"ldp reports"`` the radii of :mod:`pml_design.priors` (derivations in docs/design.md, "Where P̂ comes
    from"). A thin dispatcher: the mechanism-file loader calls it to check a stored radius.

    Parameters
    ----------
    prior_source : str
        One of :data:`PRIOR_SOURCES`.
    support_size : int
        Alphabet size N.
    delta : float
        The total failure probability of the ball.
    params : dict
        The source's parameters as stored in a mechanism file:

        * ``"public sample"``: ``{"m": m}``;
        * ``"dp"``: ``{"dp_epsilon": ε₀, "noisy_total": Σc̃, "delta_ball": δ₁, "delta_total": δ₂, ...}`` with
          ``δ₁ + δ₂ = delta`` (:func:`pml_design.priors.dp_prior_radius`);
        * ``"ldp reports"``: ``{"oracle": "GRR" | "SS", "ldp_epsilon": ε₁, "n_reports": n₁, "k": k}``
          (:func:`pml_design.priors.ldp_ball_radius`; k = 1 for GRR), or for another pure protocol
          ``{"oracle": name, "ldp_epsilon": ε₁, "n_reports": n₁, "p_star": p*, "q_star": q*}``
          (:func:`pml_design.priors.ldp_generic_radius`); Hadamard response adds ``"ball":``
          :data:`pml_design.priors.HADAMARD_BALL` (:func:`pml_design.priors.hadamard_ball_radius`), optimized
          unary encoding ``"ball":`` :data:`pml_design.priors.UNARY_BALL`
          (:func:`pml_design.priors.unary_ball_radius`); files without the key keep the generic radius.

    Returns
    -------
    float
        The radius β (``inf`` when the source rules out nothing at this δ).
    """
    from . import priors  # noqa: PLC0415 - same layer; priors imports this module

    if prior_source not in PRIOR_SOURCES:
        raise ValueError(f"prior_source must be one of {list(PRIOR_SOURCES)}, got {prior_source!r}")
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    d = check_delta(delta)
    try:
        if prior_source == "public sample":
            return l1_radius(params["m"], support_size, d)
        if prior_source == "dp":
            d1, d2 = check_delta(params["delta_ball"], "delta_ball"), check_delta(params["delta_total"], "delta_total")
            if not math.isclose(d1 + d2, d, rel_tol=1e-9):
                raise ValueError(f"params: delta_ball + delta_total = {d1 + d2!r} differs from delta = {d!r}")
            return priors.dp_prior_radius(params["noisy_total"], support_size, params["dp_epsilon"], d1, d2)[0]
        oracle = params["oracle"]
        if "ball" in params:
            return _oracle_ball(oracle, params, support_size, d)
        if oracle in ("GRR", "SS"):
            k = 1 if oracle == "GRR" else params["k"]
            return priors.ldp_ball_radius(support_size, k, params["ldp_epsilon"], params["n_reports"], d)
        gap = check_real(params["p_star"], "p_star") - check_real(params["q_star"], "q_star")
        return priors.ldp_generic_radius(support_size, gap, params["n_reports"], d)
    except KeyError as exc:
        raise ValueError(f"params for prior_source={prior_source!r} lack {exc.args[0]!r}, got {sorted(params)}") from None


def _oracle_ball(oracle: object, params: dict, support_size: int, delta: float) -> float:
    """The radius of an oracle's own ball (``params["ball"]``: Hadamard response, OUE), after checking that the
    ball is that oracle's and that the stored ``p_star``, ``q_star`` are the oracle's at ``ldp_epsilon``."""
    from . import priors  # noqa: PLC0415

    balls = {("HR", priors.HADAMARD_BALL): priors.hadamard_ball_radius,
             ("OUE", priors.UNARY_BALL): priors.unary_ball_radius}
    ball = params["ball"]
    if not (isinstance(oracle, str) and isinstance(ball, str) and (oracle, ball) in balls):
        raise ValueError(f"params: the ball {fmt(ball)} is not one of oracle {fmt(oracle)}")
    eps1 = check_real(params["ldp_epsilon"], "ldp_epsilon")
    t = math.exp(-eps1) if eps1 > 0 else 1.0
    own = (1.0 / (1.0 + t), 0.5) if oracle == "HR" else (0.5, t / (1.0 + t))
    stored = (params["p_star"], params["q_star"])
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isclose(v, w, rel_tol=1e-9)
               for v, w in zip(stored, own)):
        raise ValueError(f"params: p_star, q_star = {fmt(stored)} are not those of oracle {oracle} at ldp_epsilon = "
                         f"{eps1!r} ({own[0]!r}, {own[1]!r})")
    return balls[oracle, ball](support_size, eps1, params["n_reports"], delta)
