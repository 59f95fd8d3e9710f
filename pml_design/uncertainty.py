"""Uncertainty sets of distributions, leakage capacity and leakage sensitivity, computed exactly.

Implements: core paper, Section IV — eq. (1) (ε-PML for a set 𝒫), Corollary 1 (finitely many extreme
points), eq. (5) (the ℓ1 ball ``B_β(P̂) ∩ simplex``), Definition 5 (𝒫-local leakage capacity),
Definition 6 (local leakage sensitivity), Remark 1 (the whole simplex gives LDP).

All three kinds of set share one primitive, :meth:`UncertaintySet.min_output_probability`: for every
output column ``c = P_{Y|X}(y|·)`` it returns ``min_{Q ∈ 𝒫} Q·c`` exactly. The capacity is then

    ``C(P_{Y|X}, 𝒫) = max_y log( max_x c_x / min_{Q ∈ 𝒫} Q·c )``    (Definition 5),

which is ``+inf`` when some distribution in the (closed) set gives an emitted output probability 0.

The ℓ1 ball, exactly (any radius)
---------------------------------
``min_Q Q·c`` over ``{Q ∈ simplex : ‖Q − P̂‖₁ ≤ β}`` is a fractional knapsack: moving mass ``t`` changes
the ℓ1 distance by ``2t``, so at most ``β/2`` mass moves, it is taken from the rows with the largest
``c_x`` (at most ``P̂(x)`` from row ``x``) and given to a row with the smallest ``c_x``. The greedy
solution is optimal for every ``β ∈ [0, 2]``, including ``β ≥ 2 min P̂`` where rows empty out and the
paper's formulas (Theorem 4, Proposition 2) no longer apply.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from ._validation import (
    check_finite_array,
    check_mechanism,
    check_positive_int,
    check_probability_vector,
    check_radius,
    fmt,
)
from .leakage import _leakage_unchecked
from .posterior import ball_max_posterior

__all__ = [
    "FiniteSet",
    "L1Ball",
    "Simplex",
    "UncertaintySet",
    "as_uncertainty_set",
    "leakage_capacity",
    "leakage_sensitivity",
    "max_divergence_shift",
    "max_posterior",
    "worst_case_distribution",
]

#: :meth:`L1Ball.min_output_probability` takes two-level columns (``lo + (hi − lo)·1_S``, every ε-LDP channel's) in
#: closed form from this many entries on, O(N·M) instead of a sort per column: the certification of a 10 000 × 30 027
#: LDP channel took 71 s, 48 of them in the sort (docs/design.md §12).
TWO_LEVEL_MIN_SIZE: int = 1 << 16
#: Entries within this relative distance of a column's maximum (minimum) count as its upper (lower) level there (a
#: row-normalised LDP channel's levels spread by ~2e-13: rounding of its row sums); the value is taken with the upper
#: level's smallest entry, so it is never above the exact one and below it by at most that spread.
TWO_LEVEL_RTOL: float = 1e-12


class UncertaintySet(ABC):
    """A closed convex set 𝒫 of distributions on ``{0, …, N−1}`` (core paper, Section III–IV)."""

    @property
    @abstractmethod
    def size(self) -> int:
        """Alphabet size N."""

    @abstractmethod
    def min_output_probability(self, columns: np.ndarray) -> np.ndarray:
        """``min_{Q ∈ 𝒫} Q · columns[:, j]`` for every column ``j`` (exact).

        Parameters
        ----------
        columns : numpy.ndarray, shape (N, M), entries ≥ 0

        Returns
        -------
        numpy.ndarray, shape (M,)
        """

    @abstractmethod
    def minimizers(self, columns: np.ndarray) -> np.ndarray:
        """A distribution attaining :meth:`min_output_probability` per column, shape (M, N)."""

    def contains(self, q: object, *, atol: float = 1e-9) -> bool:
        """Whether ``q`` (a probability vector) lies in the set, within ``atol``."""
        try:
            qq = check_probability_vector(q, "q", size=self.size)
        except ValueError:
            return False
        return self._contains(qq, atol)

    @abstractmethod
    def _contains(self, q: np.ndarray, atol: float) -> bool: ...


@dataclass(frozen=True, eq=False)
class L1Ball(UncertaintySet):
    """``B_β(P̂) = {Q ∈ simplex : ‖Q − P̂‖₁ ≤ β}`` — the uncertainty set of eq. (5) (closed).

    Parameters
    ----------
    center : array_like, shape (N,)
        The estimate ``P̂``; may contain zeros (the ball still reaches interior points when β > 0).
    radius : float
        β ≥ 0; values above 2 (the ℓ1 diameter of the simplex) are clipped to 2, which is the whole simplex.

    Notes
    -----
    Implements: core paper, eq. (5). Proposition 2 and Theorem 4 assume ``β < 2 min P̂``
    (:attr:`in_interior_regime`); the exact computations here do not.
    """

    center: np.ndarray
    radius: float

    def __init__(self, center: object, radius: float) -> None:
        c = check_probability_vector(center, "center")
        if c.shape[0] < 2:
            raise ValueError(f"center must have at least 2 symbols, got {c.shape[0]}")
        c = np.array(c, dtype=float)  # an own, read-only copy: the certificate is over this ball
        c.setflags(write=False)
        object.__setattr__(self, "center", c)
        object.__setattr__(self, "radius", check_radius(radius, "radius"))

    @property
    def size(self) -> int:
        return int(self.center.shape[0])

    @property
    def in_interior_regime(self) -> bool:
        """True when ``β < 2 min P̂`` (assumption of Theorem 4 and Proposition 2)."""
        return bool(self.radius < 2 * self.center.min())

    def __repr__(self) -> str:
        return f"L1Ball(center={fmt(self.center)}, radius={self.radius!r})"

    def _greedy(self, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Greedy knapsack: returns (order, taken-in-order, receiver index, moved mass) per column."""
        c = columns
        p = self.center
        budget = self.radius / 2.0
        order = np.argsort(-c, axis=0, kind="stable")  # rows sorted by decreasing c, per column
        avail = p[order]  # (N, M)
        before = np.cumsum(avail, axis=0) - avail
        taken = np.clip(budget - before, 0.0, avail)
        receiver = np.argmin(c, axis=0)
        return order, taken, receiver, taken.sum(axis=0)

    def min_output_probability(self, columns: np.ndarray) -> np.ndarray:
        c = np.asarray(columns, dtype=float)
        if c.ndim == 2 and c.size >= TWO_LEVEL_MIN_SIZE:
            # two-level columns (every LDP channel's, up to the rounding of its row normalisation): the greedy in
            # closed form, O(N) a column, with every entry of the upper level lowered to that level's smallest
            # (c' ≤ c entrywise, so min Q·c' ≤ min Q·c: never above the exact value, below it by ≤ TWO_LEVEL_RTOL)
            hi, lo = c.max(axis=0), c.min(axis=0)
            top = c >= hi * (1.0 - TWO_LEVEL_RTOL)
            two = np.all(top | (c <= lo * (1.0 + TWO_LEVEL_RTOL)), axis=0)
            if two.any():  # (no copy of the matrix: at N = 10 000 one is 2.4 GB)
                upper = np.min(c, axis=0, where=top, initial=np.inf)
                if two.all():
                    return self._two_level(top, upper, lo)
                out = np.empty(c.shape[1])
                out[two] = self._two_level(top[:, two], upper[two], lo[two])
                out[~two] = self._sorted_min(c[:, ~two])
                return out
        return self._sorted_min(c)

    def _two_level(self, top: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
        """:meth:`min_output_probability` of columns ``lo + (hi − lo)·1_S`` (``top`` = 1_S): the greedy moves
        ``m = min(β/2, P̂(S))`` from S to a ``lo`` entry, so ``(P̂(S) − m)·hi + (1 − P̂(S) + m)·lo`` (mass moved from
        entries at ``lo`` changes nothing), every term non-negative and the differences lowered by their rounding."""
        p = self.center
        total = float(p.sum())
        mass = np.empty(top.shape[1])
        step = max(1, (1 << 24) // max(p.size, 1))  # P̂(S) a chunk of columns at a time (bounded temporaries)
        for j in range(0, top.shape[1], step):
            mass[j:j + step] = p @ top[:, j:j + step]
        m = np.minimum(self.radius / 2.0, mass)
        # P̂(S) − m cancels where the radius is near 2P̂(S): it is lowered by a bound on the rounding of P̂(S) (a sum
        # of N terms) and of the subtraction, so the value is never above the exact one (a capacity is never
        # understated; without it, 11 % above where the exact value is 5e-16, 9e-7 elsewhere)
        err = (p.size + 2) * np.finfo(float).eps
        rest = np.maximum(mass - m - err * mass, 0.0)
        return rest * hi + np.maximum(total - mass - err * total, 0.0) * lo + m * lo

    def _sorted_min(self, c: np.ndarray) -> np.ndarray:
        order, taken, receiver, moved = self._greedy(c)
        m_idx = np.arange(c.shape[1])
        c_sorted = np.take_along_axis(c, order, axis=0)
        # Q·c with Q = P̂ − taken + moved·e_receiver; all terms >= 0
        avail = self.center[order]
        keep = avail - taken
        # A donor the exact greedy may empty in part keeps (P̂ of the donors up to it) − β/2, which cancels where the
        # radius is near twice that mass, and the running sum can round up to β/2 before a donor the exact greedy
        # still reaches. Every donor with mass kept and the mass before it within rounding of β/2 or below has what
        # it keeps lowered by a bound on the rounding of the running sum and of the two subtractions, so the value
        # is never above the exact one beyond the rounding of the final sum of non-negative terms (a capacity is
        # never understated; without it, 18 % above where the exact value is 5e-16, and a zero minimum reported as
        # 5e-21). Donors emptied whole keep exactly 0 (avail − avail), those the running sum never reaches their mass.
        err = (avail.shape[0] + 3) * np.finfo(float).eps
        cum = np.cumsum(avail, axis=0)
        partial = (keep > 0.0) & (cum - avail < self.radius / 2.0 + err * cum)
        if partial.any():
            keep = np.where(partial, np.maximum(keep - err * cum, 0.0), keep)
        # the receiver may itself have given mass (only when its c equals the max); handled exactly
        return np.maximum((keep * c_sorted).sum(axis=0), 0.0) + moved * c[receiver, m_idx]

    def minimizers(self, columns: np.ndarray) -> np.ndarray:
        c = np.asarray(columns, dtype=float)
        order, taken, receiver, moved = self._greedy(c)
        n, m = c.shape
        q = np.tile(self.center, (m, 1))
        cols = np.arange(m)
        np.subtract.at(q, (np.broadcast_to(cols, (n, m)).T, order.T), taken.T)
        q[cols, receiver] += moved
        return np.maximum(q, 0.0)

    def _contains(self, q: np.ndarray, atol: float) -> bool:
        return bool(np.abs(q - self.center).sum() <= self.radius + atol)

    def extreme_points(self) -> np.ndarray:
        """Vertices of ``B_β(P̂) ∩ simplex`` (shape (K, N)), by the greedy structure.

        Every vertex moves mass ``min(β/2, …)`` from a set of donor rows, emptied in some order with at
        most one partially emptied, to one receiver. For ``β < 2 min P̂`` these are the ``N(N−1)`` points
        ``P̂ + β/2 (e_r − e_d)`` used by Corollary 1. In general they are enumerated as the minimisers of
        ``Q·c`` over all 0/1-patterned ``c`` (a finite, exhaustive family for this polytope), which is
        exponential in N; intended for small alphabets and tests.
        """
        n = self.size
        if self.radius == 0:
            return self.center[None, :].copy()
        if self.in_interior_regime:
            half = self.radius / 2
            pts = []
            for r in range(n):
                for d in range(n):
                    if r != d:
                        q = self.center.copy()
                        q[r] += half
                        q[d] -= half
                        pts.append(q)
            return np.array(pts)
        if n > 8:
            raise ValueError(f"extreme_points beyond the interior regime is limited to N <= 8, got N={n}")
        # minimisers of linear functionals with generic weights: each vertex is the unique minimiser of
        # some c; ordering-based enumeration over receiver and donor order covers them all.
        from itertools import permutations

        pts = set()
        for r in range(n):
            others = [i for i in range(n) if i != r]
            for perm in permutations(others):
                c = np.empty(n)
                c[r] = 0.0
                c[list(perm)] = np.arange(len(perm), 0, -1, dtype=float)
                q = self.minimizers(c[:, None])[0]
                pts.add(tuple(np.round(q, 15)))
        return np.array(sorted(pts))


@dataclass(frozen=True, eq=False)
class FiniteSet(UncertaintySet):
    """A finite set of distributions ``{π⁽¹⁾, …, π⁽ᴷ⁾}`` (or, equivalently, their convex hull).

    By Proposition 1 (convexity of ε_min in P_X) and Corollary 1, capacity and ε-PML over the convex hull
    equal those over the listed points.

    Parameters
    ----------
    distributions : array_like, shape (K, N)
    """

    distributions: np.ndarray

    def __init__(self, distributions: object) -> None:
        d = check_finite_array(distributions, "distributions")
        if d.ndim == 1:
            d = d[None, :]
        if d.ndim != 2:
            raise ValueError(f"distributions must have shape (K, N), got {d.shape}")
        rows = [check_probability_vector(r, f"distributions[{i}]") for i, r in enumerate(d)]
        rows = np.array(rows)
        rows.setflags(write=False)
        object.__setattr__(self, "distributions", rows)

    @property
    def size(self) -> int:
        return int(self.distributions.shape[1])

    def __repr__(self) -> str:
        return f"FiniteSet(distributions={fmt(self.distributions)})"

    def min_output_probability(self, columns: np.ndarray) -> np.ndarray:
        return (self.distributions @ np.asarray(columns, dtype=float)).min(axis=0)

    def minimizers(self, columns: np.ndarray) -> np.ndarray:
        k = (self.distributions @ np.asarray(columns, dtype=float)).argmin(axis=0)
        return self.distributions[k]

    def _contains(self, q: np.ndarray, atol: float) -> bool:
        # membership in the convex hull: small LP
        from scipy.optimize import linprog

        k = self.distributions.shape[0]
        res = linprog(
            np.zeros(k),
            A_eq=np.vstack([self.distributions.T, np.ones((1, k))]),
            b_eq=np.concatenate([q, [1.0]]),
            bounds=[(0, None)] * k,
            method="highs",
        )
        return bool(res.status == 0)

    def extreme_points(self) -> np.ndarray:
        """The listed distributions (a superset of the hull's vertices)."""
        return self.distributions.copy()


@dataclass(frozen=True, eq=False)
class Simplex(UncertaintySet):
    """All distributions on N symbols: ε-PML for all of them is ε-LDP (core paper, Remark 1).

    Parameters
    ----------
    size : int
        Alphabet size N ≥ 2.
    """

    n: int = field(default=2)

    def __init__(self, size: int) -> None:
        object.__setattr__(self, "n", check_positive_int(size, "size", minimum=2))

    @property
    def size(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"Simplex(size={self.n})"

    def min_output_probability(self, columns: np.ndarray) -> np.ndarray:
        return np.asarray(columns, dtype=float).min(axis=0)

    def minimizers(self, columns: np.ndarray) -> np.ndarray:
        c = np.asarray(columns, dtype=float)
        return np.eye(self.n)[c.argmin(axis=0)]

    def _contains(self, q: np.ndarray, atol: float) -> bool:
        return True

    def extreme_points(self) -> np.ndarray:
        """The point masses (the simplex's vertices)."""
        return np.eye(self.n)


def as_uncertainty_set(uncertainty: object, name: str = "uncertainty") -> UncertaintySet:
    """Accept an :class:`UncertaintySet` or a single prior vector (a zero-radius ball).

    Implements: the sets 𝒫 of core paper Definition 5 (a single prior: [15]'s fixed-prior case).

    Parameters
    ----------
    uncertainty : UncertaintySet or array_like
        A set (returned as is) or a probability vector.
    name : str, default "uncertainty"
        The argument's name in error messages.

    Returns
    -------
    UncertaintySet
        ``uncertainty``, or a one-point :class:`FiniteSet` holding the vector.
    """
    if isinstance(uncertainty, UncertaintySet):
        return uncertainty
    try:
        p = check_probability_vector(uncertainty, name)
    except (TypeError, ValueError) as exc:
        raise type(exc)(
            f"{name} must be an UncertaintySet (L1Ball, FiniteSet, Simplex) or a prior vector: {exc}"
        ) from exc
    return FiniteSet(p[None, :])


def _column_data(mechanism: object, uset: UncertaintySet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    W = check_mechanism(mechanism, "mechanism", n_inputs=uset.size)
    emitted = W.max(axis=0) > 0
    return W, W[:, emitted], emitted


def leakage_capacity(mechanism: object, uncertainty: object) -> float:
    """𝒫-local leakage capacity ``C(P_{Y|X}, 𝒫) = sup_{Q ∈ 𝒫} ε_min(P_{Y|X}, Q)``, exactly.

    Implements: core paper, Definition 5 (and Remark 1 for the simplex, eq. (5) for the ℓ1 ball).

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
        Row-stochastic matrix (rows = x, columns = y).
    uncertainty : UncertaintySet or array_like
        An :class:`L1Ball`, :class:`FiniteSet`, :class:`Simplex`, or a single prior vector.

    Returns
    -------
    float
        Capacity in nats; ``inf`` if some distribution of the (closed) set makes an emitted output
        impossible while another input emits it (e.g. a zero entry under the simplex: no finite LDP ε).

    Notes
    -----
    Over the closed set the supremum is a maximum; for the interior ``int(𝒫_X)`` of the paper the value is
    the same by continuity (or ``+inf`` as a limit).
    """
    uset = as_uncertainty_set(uncertainty)
    _, cols, _ = _column_data(mechanism, uset)
    return float(np.max(_log_ratios(cols, uset)))


def _log_ratios(cols: np.ndarray, uset: UncertaintySet) -> np.ndarray:
    """``log(max_x c_x / min_Q Q·c)`` per column, exact for any finite entries (subnormal ones included).

    Each column is divided by its maximum first (exact up to one rounding per entry), so the ratio never forms a
    subnormal mass ``Q·c`` whose rounding would hide the leakage (column ``[5e-324, 1e-323]``: ``Q·c`` rounds to
    ``1e-323`` = its maximum, though the scaled column ``[0.5, 1]`` gives ``log(1/(0.5 Q_0 + Q_1))``).
    """
    top = cols.max(axis=0)
    low = uset.min_output_probability(cols / top)
    with np.errstate(divide="ignore"):
        return -np.log(low)


def worst_case_distribution(mechanism: object, uncertainty: object) -> np.ndarray:
    """A distribution of the set attaining the leakage capacity (Definition 5's maximiser).

    Implements: core paper, Definition 5 (the maximising Q of :func:`leakage_capacity`).

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
        Row-stochastic matrix (rows = x, columns = y).
    uncertainty : UncertaintySet or array_like
        An :class:`L1Ball`, :class:`FiniteSet`, :class:`Simplex`, or a single prior vector.

    Returns
    -------
    numpy.ndarray, shape (N,)
        A Q of the set minimising ``Q·c`` for the emitted column c of largest leakage ratio.
    """
    uset = as_uncertainty_set(uncertainty)
    _, cols, _ = _column_data(mechanism, uset)
    j = int(np.argmax(_log_ratios(cols, uset)))
    return uset.minimizers(cols[:, [j]])[0]


def leakage_sensitivity(mechanism: object, reference: object, uncertainty: object) -> float:
    """Local leakage sensitivity ``S_P(P_{Y|X}, 𝒫) = sup_{Q∈𝒫} ε_min(Q) − ε_min(P)``, exactly.

    Implements: core paper, Definition 6.

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
    reference : array_like, shape (N,)
        The reference distribution ``P`` (e.g. the estimate ``P̂``); should lie in the set.
    uncertainty : UncertaintySet or array_like

    Returns
    -------
    float
        ``C(P_{Y|X}, 𝒫) − ε_min(P_{Y|X}, P)``.
    """
    uset = as_uncertainty_set(uncertainty)
    p = check_probability_vector(reference, "reference", size=uset.size)
    W = check_mechanism(mechanism, "mechanism", n_inputs=uset.size)
    return leakage_capacity(W, uset) - float(_leakage_unchecked(W, p).max())


def max_divergence_shift(mechanism: object, reference: object, uncertainty: object) -> float:
    """``sup_{Q ∈ 𝒫} D_∞(P_Y ‖ Q_Y)`` with ``P_Y = P_{Y|X}∘P`` and ``Q_Y = P_{Y|X}∘Q``, exactly.

    The quantity bounded in the proof of Theorem 4 (Appendix B) and plotted in Fig. 2 of the core paper;
    it upper-bounds the sensitivity of Definition 6 and equals the bound (6) in the theorem's equality cases.

    Implements: core paper, Theorem 4 / Appendix B, Fig. 2.

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
        Row-stochastic matrix (rows = x, columns = y).
    reference : array_like, shape (N,)
        The distribution P.
    uncertainty : UncertaintySet or array_like
        The set 𝒫 (or a single prior vector).

    Returns
    -------
    float
        The supremum in nats, over the outputs with ``P_Y(y) > 0`` (``inf`` if some Q makes one impossible).
    """
    uset = as_uncertainty_set(uncertainty)
    p = check_probability_vector(reference, "reference", size=uset.size)
    W = check_mechanism(mechanism, "mechanism", n_inputs=uset.size)
    occurs = (p @ W) > 0
    cols = W[:, occurs]
    scaled = cols / cols.max(axis=0)  # as in _log_ratios: no subnormal masses, the ratio is unchanged
    low = uset.min_output_probability(scaled)
    with np.errstate(divide="ignore"):
        return float(np.max(np.log(p @ scaled) - np.log(low)))


def max_posterior(mechanism: object, uncertainty: object) -> np.ndarray:
    """Largest posterior ``P(x | y)`` over the set, per input x and output y, exactly.

    ``max_{Q ∈ 𝒫} Q(x) W(x,y) / Σ_x' Q(x') W(x',y)`` (0 where ``W(x,y) = 0``): how sure an observer of output y can
    become that the input was x, whichever distribution of the set is the true one. A column with a single
    non-zero entry *singles out* its input: the posterior is 1 for every distribution.

    Implements: the disclosure listing of a design (docs/design.md, §10). For the ℓ1 ball the maximisation is
    linear-fractional; its optimum moves ``T = min(β/2, 1 − P̂(x))`` mass *to* x (raising the numerator and
    lowering the denominator dominates any other receiver) taken from the other rows in decreasing order of
    ``W(x',y)`` (for a fixed T this minimises the denominator): the greedy knapsack of
    :meth:`L1Ball.min_output_probability` with the receiver forced to x, evaluated for all (x, y) at once from
    per-column prefix sums, or without a sort where a column has at most two positive values
    (:mod:`pml_design.posterior`). A finite set (or its convex hull: a linear-fractional function attains its
    maximum at a vertex) takes the largest value over its points; the simplex reaches 1 wherever ``W(x,y) > 0``.

    Parameters
    ----------
    mechanism : array_like, shape (N, M)
        Row-stochastic matrix (rows = x, columns = y).
    uncertainty : UncertaintySet or array_like
        An :class:`L1Ball`, :class:`FiniteSet`, :class:`Simplex`, or a single prior vector.

    Returns
    -------
    numpy.ndarray, shape (N, M)
        Entries in [0, 1] (0 where no distribution of the set makes x produce y).
    """
    uset = as_uncertainty_set(uncertainty)
    W = check_mechanism(mechanism, "mechanism", n_inputs=uset.size)
    if isinstance(uset, Simplex):
        return (W > 0).astype(float)
    if isinstance(uset, FiniteSet):
        joint = uset.distributions[:, :, None] * W[None, :, :]  # (K, N, M)
        total = joint.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            post = np.where(total > 0, joint / total, 0.0)
        return np.clip(post.max(axis=0), 0.0, 1.0)
    if not isinstance(uset, L1Ball):
        raise TypeError(f"max_posterior needs an L1Ball, FiniteSet or Simplex, got {fmt(uset)}")
    return ball_max_posterior(W, uset.center, uset.radius)
