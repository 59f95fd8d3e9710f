"""Radii of the ℓ1 uncertainty ball when P̂ is not a public sample: a DP release of the design counts, or the
reports of a first cohort answering through an LDP frequency oracle.

Implements: the core paper's Theorem 2 / eq. (7) argument (``‖Q − P‖₁ = 2 max_A (Q(A) − P(A))``, a union over
the ``2^N − 2`` subsets, one Chernoff bound per subset) extended to noisy estimates; the derivations are in
``docs/design.md`` ("Where P̂ comes from"):

* ``"dp"`` — the counts ``c`` of m design records are released as ``c̃ = c + Z``, ``Z_i`` i.i.d. discrete
  Laplace ``P(Z = z) ∝ e^{−ε₀|z|}`` (ε₀-DP for add/remove-one-record neighbours: the histogram has ℓ1
  sensitivity 1); ``P̂ = c̃⁺/Σc̃⁺`` (clip at 0, renormalise). :func:`dp_ball_radius` bounds the sampling and
  the noise in *one* Chernoff bound per subset (variances add, so the widening is second order), and
  :func:`dp_count_margin` gives the one-sided (1 − δ₂) bound T on ``ΣZ``, so that ``m ≥ Σc̃ − T`` (m itself
  is private). The ball contains P with probability ≥ 1 − δ₁ − δ₂.
* ``"ldp reports"`` — n₁ users answer through an ε₁-LDP pure protocol: the radii of :mod:`pml_design.ldp_priors`
  (:func:`ldp_ball_radius` for GRR and k-subset selection, :func:`hadamard_ball_radius` for Hadamard response,
  :func:`unary_ball_radius` for optimized unary encoding, :func:`ldp_generic_radius` for any other), re-exported
  here.

The Chernoff exponents are minimised over a fixed grid of λ: any λ gives a valid bound, so the grid only
costs sharpness, never validity; the radius is found by bisection and the returned end is the one that
satisfies the bound. Everything here is deterministic, so a mechanism file's radius can be re-derived from
its stored parameters (:func:`pml_design.estimation.prior_radius`).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator

import numpy as np
from scipy.special import logsumexp

from ._validation import check_delta, check_integer_counts, check_positive_int, check_positive_real, fmt
from .ldp_priors import (  # noqa: F401 - the "ldp reports" radii, importable from here as before
    BISECTION_STEPS,
    EXACT_MGF_WORK,
    HADAMARD_BALL,
    LAMBDA_GRID,
    UNARY_BALL,
    _log_binom,
    _solve_radius,
    _ss_report_log_mgf,
    hadamard_ball_radius,
    ldp_ball_radius,
    ldp_generic_radius,
    subset_selection_constants,
    unary_ball_radius,
)

__all__ = ["DP_DELTA_SHARE", "DP_NEIGHBOURING", "dp_estimate", "dp_ball_radius", "dp_count_margin", "dp_prior_radius",
           "dp_release_counts", "hadamard_ball_radius", "ldp_ball_radius", "ldp_generic_radius",
           "subset_selection_constants", "unary_ball_radius"]

#: The neighbouring relation of the DP release (the histogram's ℓ1 sensitivity is 1 under it).
DP_NEIGHBOURING: str = "add/remove one record"
#: The noise of the DP release, as a mechanism file names it.
DP_NOISE: str = "discrete Laplace, scale 1/dp_epsilon per category"
#: The same noise drawn from a seeded numpy generator (``rng`` given): reproducible, so whoever knows the seed can
#: remove it; a mechanism file and its statement say so (a review: a seeded release was stored as plain ε₀-DP).
DP_NOISE_SEEDED: str = DP_NOISE + ", from a seeded generator (tests and simulations only: the seed removes it)"
#: Smallest ε₀ accepted: below it the noise's scale (1/ε₀ counts) drowns any count, and ``e^{−ε₀}`` rounds to 1
#: (ε₀ ≲ 1e-16 gave a bare "math domain error").
DP_EPSILON_MIN: float = 1e-9
#: Above this ε₀ a warning says the release is nearly the exact counts (the noise is non-zero on a fraction
#: ``2e^{−ε₀}/(1 + e^{−ε₀})`` < 1e-4 of the counts).
DP_EPSILON_LARGE: float = 10.0
#: Points of the grid of β_s/β in the split bound of :func:`dp_ball_radius`.
SPLIT_GRID: int = 99
#: What the messages of the DP route say instead of the protected records' counts.
_HIDDEN_COUNTS: str = "not shown: they are the protected records' counts"
#: What a refusal before the DP release says about itself (docs/design.md §11.1, "What a refusal may say").
_HIDDEN_RECORDS: str = ("no value, count or position is shown: the records are protected by dp_epsilon; this "
                        "refusal itself says only that the data do not fit the arguments")


# ----------------------------------------------------------------------------------------------------------
# "dp": discrete Laplace noise on the design counts
# ----------------------------------------------------------------------------------------------------------
def check_dp_epsilon(dp_epsilon: object, name: str = "dp_epsilon", *, warn_large: bool = False) -> float:
    """ε₀ of a DP count release: a real number in [:data:`DP_EPSILON_MIN`, ∞).

    Implements: the validation of the ε₀ of docs/design.md §11.1 (below the minimum the noise of scale 1/ε₀ counts
    drowns any count and ``e^{−ε₀}`` rounds towards 1).

    Parameters
    ----------
    dp_epsilon : float
        The value to check.
    name : str, default "dp_epsilon"
        The argument's name, for the message.
    warn_large : bool, default False
        Warn above :data:`DP_EPSILON_LARGE` (the DP release of the design counts; not for other users of the
        sampler, e.g. a histogram whose small scale is what its own guarantee asks for).

    Returns
    -------
    float
        ε₀.
    """
    eps0 = check_positive_real(dp_epsilon, name)
    if warn_large and eps0 > DP_EPSILON_LARGE:  # (a review: 1e308 published the exact counts under "1e+308-DP", without a word)
        import warnings  # noqa: PLC0415

        p_noise = 2 * math.exp(-eps0) / (1 + math.exp(-eps0))  # P(noise != 0) per count: 0.0 once e^-eps0 underflows
        chance = f"{p_noise:.2g}" if p_noise > 0 else f"about 10^({math.log10(2) - eps0 / math.log(10):.3g})"
        warnings.warn(f"{name}={eps0:g} is so large that the noise of a count is 0 except with probability {chance}: "
                      "the release is the exact counts in all but name, and the DP guarantee says next to nothing",
                      UserWarning, stacklevel=3)
    if eps0 < DP_EPSILON_MIN:
        raise ValueError(f"{name}={eps0!r} is too small: its noise (scale 1/{name} = {1 / eps0:.3g} counts) would drown "
                         f"any count; use {name} >= {DP_EPSILON_MIN:g}")
    return eps0


def _dlap_log_mgf(lam: np.ndarray, t: float) -> np.ndarray:
    """``log E e^{λZ}`` of the discrete Laplace ``P(Z = z) = (1−t)/(1+t) t^{|z|}`` (finite for ``t e^λ < 1``)."""
    return 2.0 * math.log1p(-t) - np.log1p(-t * np.exp(lam)) - np.log1p(-t * np.exp(-lam))


def _dlap_pos_log_mgf(lam: np.ndarray, t: float) -> np.ndarray:
    """``log E e^{λ max(Z, 0)}`` = ``log[1/(1+t) + (1−t) t e^λ / ((1+t)(1 − t e^λ))]``."""
    te = t * np.exp(lam)
    return np.log(1.0 / (1.0 + t) + (1.0 - t) * te / ((1.0 + t) * (1.0 - te)))


def _dp_lambda_grid(eps0: float) -> np.ndarray:
    top = min(eps0 * (1.0 - 1e-9), 60.0)
    return np.geomspace(top * 1e-9, top, LAMBDA_GRID)


def dp_count_margin(support_size: int, dp_epsilon: float, delta: float) -> int:
    """Smallest integer T with ``P(Σ_{i<N} Z_i > T) ≤ δ`` for N i.i.d. discrete Laplace(ε₀) variables (Chernoff).

    ``P(ΣZ ≥ T + 1) ≤ inf_{0<λ<ε₀} exp(N log E e^{λZ} − λ(T + 1))``. With the noisy total ``Σc̃ = m + ΣZ`` of
    the DP release, ``m ≥ Σc̃ − T`` with probability ≥ 1 − δ.

    Implements: docs/design.md, "A differentially private P̂" (the private record count).

    Parameters
    ----------
    support_size : int
        N, the number of noisy counts.
    dp_epsilon : float
        ε₀ > 0 of the discrete Laplace noise.
    delta : float
        δ ∈ (0, 1).

    Returns
    -------
    int
        T.
    """
    n = check_positive_int(support_size, "support_size", minimum=1)
    eps0 = check_dp_epsilon(dp_epsilon)
    d = check_delta(delta)
    t = math.exp(-eps0)
    lam = _dp_lambda_grid(eps0)
    psi = n * _dlap_log_mgf(lam, t)
    # smallest x = T + 1 with min_λ (psi − λ x) ≤ log δ, i.e. x ≥ min_λ (psi − log δ)/λ
    x = float(np.min((psi - math.log(d)) / lam))
    return max(int(math.ceil(x)) - 1, 0)


def dp_ball_radius(m: int, support_size: int, dp_epsilon: float, delta: float) -> float:
    """Radius β with ``P(‖P̂ − P‖₁ ≥ β) ≤ δ`` for ``P̂ = c̃⁺/Σc̃⁺``, ``c̃ = c + Z`` (discrete Laplace at ε₀).

    The smaller failure bound of two (docs/design.md, "A differentially private P̂"), each valid:

    * joint: for every non-empty proper subset A with k elements, sampling and noise in one Chernoff bound

          ``P(P̂(A) − P(A) ≥ β/2) ≤ inf_{0<λ<ε₀} exp(m(λ²/8 − λβ/2) + k log E e^{λZ⁺} + (N − k) log E e^{λZ})``

      (Hoeffding's lemma for the m records, the exact MGFs of the noise), union over the ``C(N, k)`` subsets;
    * split: ``β = β_s + β_n`` with eq. (7)'s ``(2^N − 2) e^{−mβ_s²/2}`` for the sampling and, for the noise,
      ``‖P̂ − c/m‖₁ ≤ 2 max(ΣZ⁺, ΣZ⁻)/m`` (no union over subsets), so
      ``2 inf_{0<λ<ε₀} exp(N log E e^{λZ⁺} − λmβ_n/2)``; β_s/β on a fixed grid.

    The joint bound wins when the noise is small against the sampling error (the widening is then second
    order), the split one when it dominates (small ε₀: λ < ε₀ caps the joint bound). Reduces to eq. (7)
    (corrected) as ε₀ → ∞.

    Parameters
    ----------
    m : int
        Number of design records (or a lower bound on it: the radius is non-increasing in m).
    support_size : int
        Alphabet size N ≥ 2.
    dp_epsilon : float
        ε₀ > 0 of the release.
    delta : float
        Failure probability δ₁ in (0, 1].

    Returns
    -------
    float
        β in (0, 2], or ``inf`` when no β ≤ 2 reaches δ.
    """
    m = check_positive_int(m, "m")
    n = check_positive_int(support_size, "support_size", minimum=2)
    eps0 = check_dp_epsilon(dp_epsilon)
    d = check_delta(delta)
    t = math.exp(-eps0)
    lam = _dp_lambda_grid(eps0)
    pos = _dlap_pos_log_mgf(lam, t)
    k = np.arange(1, n)[:, None]
    base = k * pos[None, :] + (n - k) * _dlap_log_mgf(lam, t)[None, :] + m * lam[None, :] ** 2 / 8.0  # (N−1, G)
    logc = _log_binom(n)
    log_subsets = float(logsumexp(logc))
    share = np.linspace(0.0, 1.0, SPLIT_GRID + 2)[1:-1, None]  # β_s/β

    def log_failure(beta: float) -> float:
        joint = float(logsumexp(logc + np.minimum(np.min(base - m * lam[None, :] * beta / 2.0, axis=1), 0.0)))
        sampling = log_subsets - m * (share[:, 0] * beta) ** 2 / 2.0
        noise = math.log(2.0) + np.min(n * pos[None, :] - lam[None, :] * m * (1.0 - share) * beta / 2.0, axis=1)
        split = float(np.min(np.logaddexp(sampling, noise)))
        return min(joint, split, 0.0)

    return _solve_radius(log_failure, d)


def dp_prior_radius(noisy_total: int, support_size: int, dp_epsilon: float, delta_ball: float,
                    delta_total: float) -> tuple[float, int]:
    """Radius of the ball around a DP-released P̂, and the lower bound on m it uses.

    ``m_low = Σc̃ − T(δ₂)`` (:func:`dp_count_margin`), ``β = dp_ball_radius(m_low, N, ε₀, δ₁)``: the ball
    contains P with probability ≥ 1 − δ₁ − δ₂ (docs/design.md).

    Implements: docs/design.md §11.1, "A differentially private P̂".

    Parameters
    ----------
    noisy_total : int
        Σc̃, the sum of the released noisy counts.
    support_size : int
        N.
    dp_epsilon : float
        ε₀ > 0 of the release.
    delta_ball : float
        δ₁, the failure probability of the ball given m_low.
    delta_total : float
        δ₂, the failure probability of ``m ≥ m_low``.

    Returns
    -------
    (radius, m_low)

    Raises
    ------
    ValueError
        If ``m_low < 1`` (too few records for this ε₀: the noise may account for all of them).
    """
    total = int(noisy_total)
    n = check_positive_int(support_size, "support_size", minimum=2)
    margin = dp_count_margin(n, dp_epsilon, delta_total)
    m_low = total - margin
    if m_low < 1:
        raise ValueError(f"dp_epsilon={dp_epsilon!r}: the noisy record count {total} minus its margin {margin} "
                         "leaves no record; use more design records or a larger dp_epsilon")
    return dp_ball_radius(m_low, n, dp_epsilon, delta_ball), m_low


#: Serialises :func:`_opendp_contrib` (one thread's restore must not disable the flag while another builds).
_OPENDP_FEATURES_LOCK = threading.Lock()


@contextlib.contextmanager
def _opendp_contrib() -> Iterator[object]:
    """OpenDP's ``prelude`` with its process-wide ``"contrib"`` feature (``make_laplace`` on integers needs it) set
    only inside the block, where the measurement is built (constructors check it, invocations do not), and removed
    after unless the caller had set it: other users of OpenDP keep their own state (docs/design.md §11.1)."""
    import opendp.prelude as dp  # noqa: PLC0415 - only a release needs it
    from opendp.mod import GLOBAL_FEATURES  # noqa: PLC0415

    with _OPENDP_FEATURES_LOCK:
        had = "contrib" in GLOBAL_FEATURES
        if not had:
            dp.enable_features("contrib")
        try:
            yield dp
        finally:
            if not had:
                dp.disable_features("contrib")


def _opendp_discrete_laplace(c: np.ndarray, eps0: float) -> np.ndarray:
    """``c + Z`` by OpenDP's exact integer sampler, on 64-bit integers (its ``T=int`` is 32-bit: a review found
    counts of 3e9 refused with "not representable by i32", the count quoted), at a scale whose OpenDP privacy map
    is at most ε₀ (``1/ε₀`` rounded gives ``map(1) = 0.7000000000000001`` for ε₀ = 0.7: the scale is nudged up by
    ulps until it is not above). OpenDP's ``"contrib"`` flag is set only while the measurement is built
    (:func:`_opendp_contrib`)."""
    with _opendp_contrib() as dp:
        space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
        scale = 1.0 / eps0
        for _ in range(64):
            meas = dp.m.make_laplace(*space, scale=scale)
            if meas.map(1) <= eps0:
                break
            scale = math.nextafter(scale, math.inf)
        else:  # pragma: no cover - 64 ulps always suffice
            raise RuntimeError(f"no OpenDP scale found whose privacy map is at most dp_epsilon={eps0!r}")
    return np.asarray(meas([int(v) for v in c]), dtype=np.int64)


def dp_release_counts(counts: object, dp_epsilon: float, *, rng: object = None) -> np.ndarray:
    """``c + Z``: the counts with i.i.d. discrete Laplace noise of scale 1/ε₀ (ε₀-DP, add/remove neighbours).

    With ``rng=None`` (the default, what a release must use) the noise comes from OpenDP's exact integer
    sampler (``make_laplace`` on an integer vector domain, OS randomness; no floating-point Laplace, which is
    attackable). A seed or Generator gives reproducible noise as the difference of two geometric variables
    from numpy: for tests and simulations only — whoever knows the seed can remove the noise.

    Implements: the discrete Laplace (two-sided geometric) mechanism, Ghosh, Roughgarden & Sundararajan 2009;
    OpenDP ``opendp.measurements.make_laplace`` (integer domains sample exactly).

    Parameters
    ----------
    counts : array_like of int
        The N exact counts (1-D, non-negative integers below 2**62; integral floats up to 2**53; text and booleans
        are refused: :func:`pml_design._validation.check_integer_counts`, whose messages quote no count).
    dp_epsilon : float
        ε₀ > 0.
    rng : numpy.random.Generator, int or None, default None
        None for a release (OpenDP); a seed or Generator only for tests and simulations.

    Returns
    -------
    numpy.ndarray of int64, shape (N,)
    """
    eps0 = check_dp_epsilon(dp_epsilon)
    c = check_integer_counts(counts, "counts", hidden=_HIDDEN_COUNTS)
    if rng is None:
        return _opendp_discrete_laplace(c, eps0)
    from ._validation import as_generator  # noqa: PLC0415

    gen = as_generator(rng)
    p = -math.expm1(-eps0)  # success probability of the geometric on {1, 2, …}: P(G ≥ g) = t^{g−1}
    z = gen.geometric(p, size=c.shape) - gen.geometric(p, size=c.shape)
    return c + z.astype(np.int64)


#: Share of δ spent on the private record count of a DP release (δ₂ = share·δ; the ball gets δ₁ = δ − δ₂).
DP_DELTA_SHARE: float = 0.1


def dp_estimate(count_vector: object, data: object, n: int, delta: float, dp_epsilon: object, allow_zero: bool,
                 rng: object) -> tuple[np.ndarray, int, float, dict]:
    """(P̂, m_low, β, prior_params) from an ε₀-DP release of the counts (docs/design.md §11.1).

    Used by :func:`pml_design.design_from_samples` with ``dp_epsilon``: ``count_vector`` holds the counts (or None
    with integer codes in ``data``); ``rng`` as in :func:`dp_release_counts`.

    Validation errors name the format only: nothing computed from the exact counts reaches a message, and empty data
    are not refused before the release (docs/design.md §11.1, "What a refusal may say").

    Parameters
    ----------
    count_vector : array_like of int or None
        The N counts, or None when ``data`` holds integer codes.
    data : array_like of int
        Integer codes in [0, N) (used when ``count_vector`` is None).
    n : int
        The support size N.
    delta : float
        The total δ, split into δ₁ = δ − δ₂ for the ball and δ₂ = :data:`DP_DELTA_SHARE` · δ for the record count.
    dp_epsilon : float
        ε₀ > 0 of the count release.
    allow_zero : bool
        Keep categories whose noisy count is <= 0 (zeros of P̂) instead of refusing them.
    rng : numpy.random.Generator, int or None
        As in :func:`dp_release_counts` (None: OpenDP's exact sampler).

    Returns
    -------
    (numpy.ndarray, int, float, dict)
        P̂ (the noisy counts clipped at 0 and normalised), m_low and β of :func:`dp_prior_radius`, and the prior
        parameters recorded with the design (``dp_epsilon``, ``noisy_total``, ``delta_ball``, ``delta_total``,
        ``neighbouring``, ``noise``).
    """

    eps0 = check_dp_epsilon(dp_epsilon, warn_large=True)
    # before the release only the form is checked, naming no record, count or position; empty data are not refused
    if count_vector is None:  # integer codes
        arr = np.asarray(data).ravel()
        if arr.dtype.kind not in "iuf" or not (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
                                               and np.all((arr >= 0) & (arr < n))):
            raise ValueError(f"data must hold integer codes in [0, {n}) (support_size={n}); some do not "
                             f"({_HIDDEN_RECORDS})")
        c = np.bincount(arr.astype(np.int64), minlength=n)
    else:
        c = check_integer_counts(count_vector, "data (counts)", hidden=_HIDDEN_COUNTS)
        if c.shape[0] != n:
            raise ValueError(f"data (counts) must have length support_size = {n}, got length {c.shape[0]}")
    if rng is not None:
        import warnings  # noqa: PLC0415

        from ._validation import as_generator  # noqa: PLC0415

        as_generator(rng)  # a bad rng is refused before the warning about a good one (a trial: rng=0.5 warned first)
        warnings.warn(f"rng={fmt(rng)} draws the DP noise of the design counts from a seeded generator: whoever knows "
                      "the seed can remove it, so the records' dp_epsilon guarantee holds only while the seed stays "
                      "secret (the mechanism file says so); for a release leave rng=None (OpenDP's exact sampler, OS "
                      "randomness)", UserWarning, stacklevel=3)
    noisy = dp_release_counts(c, eps0, rng=rng)
    del c  # from here on only the ε₀-DP release is used
    d2 = delta * DP_DELTA_SHARE
    params = {"dp_epsilon": eps0, "noisy_total": sum(int(v) for v in noisy.tolist()),  # exact: no int64 overflow
              "delta_ball": delta - d2, "delta_total": d2,
              "neighbouring": DP_NEIGHBOURING, "noise": DP_NOISE if rng is None else DP_NOISE_SEEDED}
    # the release is made: every error from here on says that a second attempt spends dp_epsilon again
    spent = (f" (the {eps0:g}-DP release of the counts is already made: another design on the same records releases "
             f"them again, and the records' guarantee becomes the sum of both dp_epsilon)")
    try:
        beta, m_low = dp_prior_radius(params["noisy_total"], n, eps0, params["delta_ball"], d2)
    except ValueError as exc:
        raise ValueError(str(exc) + spent) from None
    clipped = np.maximum(noisy, 0).astype(float)
    if clipped.sum() <= 0:
        raise ValueError(f"dp_epsilon={eps0!r}: every noisy count is <= 0; use more design records or a larger "
                         "dp_epsilon" + spent)
    p_hat = clipped / clipped.sum()
    if not allow_zero and np.any(p_hat == 0):
        raise ValueError(f"after the {eps0:g}-DP noise, {int(np.sum(p_hat == 0))} categories have a noisy count <= 0 "
                         "(the estimate lacks full support); pass allow_zero=True to keep the zeros, or use more "
                         "design records or a larger dp_epsilon" + spent)
    return p_hat, m_low, beta, params
