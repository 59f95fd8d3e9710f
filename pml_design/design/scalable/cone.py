"""The normalised column cone of the scalable designer as a union of boxes.

Implements: the column cone ``K(ε, 𝒫)`` of core paper eq. (1) / Definition 5, normalised to ``ν·c = 1``, in the
two-level form derived in ``docs/design.md`` §5: ``K1 = ∪_{S ∈ [s_lo, s_hi]} {S ≤ c ≤ T(S), ν·c = 1}`` with
``T(S) = a + bS``, for

* a fixed prior P (ν = P):          ``S = 0``, ``T = e^ε``                  ([15, Lemma 1])
* the ℓ1 ball, β < 2 min P̂ (ν = P̂): ``T(S) = e^{ε'}(1 + (β/2) S)``       (Proposition 2, eq. (13))
* the simplex (ν = prior):           ``T(S) = e^ε S``                        (ε-LDP, Remark 1)

and the feasible vertices of ``K1`` that a relaxation's pattern (coordinates at the top / at the bottom)
suggests (used by the pricing oracles).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...uncertainty import FiniteSet, L1Ball, Simplex, UncertaintySet

__all__ = ["SliceStructure", "slice_structure", "window_columns"]


@dataclass(frozen=True)
class SliceStructure:
    """Normalised column cone ``K1 = ∪_{S ∈ [s_lo, s_hi]} {S ≤ c ≤ a + bS, ν·c = 1}``."""

    nu: np.ndarray
    a: float
    b: float
    s_lo: float
    s_hi: float

    def top(self, s: np.ndarray | float) -> np.ndarray | float:
        return self.a + self.b * np.asarray(s)


def slice_structure(uset: UncertaintySet, epsilon: float, prior: np.ndarray) -> SliceStructure:
    """The two-level box structure of the column cone for the supported sets (see module docstring).

    Implements: the two-level form of ``K(ε, 𝒫)`` of ``docs/design.md`` §5 (module docstring).

    Parameters
    ----------
    uset : UncertaintySet
        A fixed prior (an ℓ1 ball of radius 0 or a one-point finite set), an ℓ1 ball inside Proposition 2, or
        the simplex.
    epsilon : float
        The PML target ε.
    prior : numpy.ndarray, shape (N,)
        The utility prior (the normalisation ν for the simplex).

    Returns
    -------
    SliceStructure
        ``ν``, ``a``, ``b``, ``s_lo`` and ``s_hi`` of ``K1``.

    Raises
    ------
    ValueError
        For an ℓ1 ball outside Proposition 2 (``β ≥ 2 min P̂``) or an unsupported set.
    """
    e = math.exp(epsilon)
    if isinstance(uset, FiniteSet) and uset.distributions.shape[0] == 1:
        uset = L1Ball(uset.distributions[0], 0.0)
    if isinstance(uset, L1Ball):
        if uset.radius == 0:
            return SliceStructure(uset.center, e, 0.0, 0.0, 0.0)
        if not uset.in_interior_regime:
            raise ValueError(
                "the scalable method supports L1 balls with radius < 2 min(center) (Proposition 2), a fixed prior, "
                f"or the simplex; got radius {uset.radius!r} >= 2 min(center) = {2 * uset.center.min()!r} "
                "(use method='exact' for small alphabets)"
            )
        beta = uset.radius
        a = e / (1.0 + beta * e / 2.0)
        b = a * beta / 2.0
        s_lo = max(0.0, (1.0 - a) / b) if a < 1 else 0.0
        return SliceStructure(uset.center, a, b, s_lo, 1.0)
    if isinstance(uset, Simplex):
        return SliceStructure(prior, 0.0, e, 1.0 / e, 1.0)
    raise ValueError(f"the scalable method does not support {uset!r}; use method='exact'")


def _vertices_from_pattern(top: np.ndarray, free: np.ndarray, st: SliceStructure) -> list[np.ndarray]:
    """Feasible vertices of K1 sharing a relaxation's pattern (``top`` mask; ``free`` indices may go either way).

    Family (b): tops at ``T(S)``, the rest at ``S`` with ``S = (1 − a m)/(b m + 1 − m)``, ``m = ν(tops)``;
    family (a) (when ``S = 0`` is allowed): tops at ``T(0)``, one free coordinate solving ``ν·c = 1``, rest 0.
    """
    nu = st.nu
    out: list[np.ndarray] = []
    patterns = [top.copy()]
    for f in free[:2]:
        t2 = top.copy()
        t2[f] = True
        patterns.append(t2)
    for U in patterns:
        m = float(nu[U].sum())
        denom = st.b * m + (1.0 - m)
        if st.b > 0 and 0 < m < 1 and denom > 0:
            S = (1.0 - st.a * m) / denom
            T = st.a + st.b * S
            if S >= 0 and S <= T:
                out.append(np.where(U, T, S))
    if st.s_lo == 0.0:
        T0 = float(st.top(0.0))
        base = np.where(top, T0, 0.0)
        rem = 1.0 - nu @ base
        cands = list(free[:3]) + list(np.flatnonzero(~top)[:3])
        for f in cands:
            if nu[f] <= 0 or top[f]:
                continue
            cf = rem / nu[f]
            if 0 <= cf <= T0 * (1 + 1e-12):
                c = base.copy()
                c[f] = min(cf, T0)
                out.append(c)
    return out


def _in_slice(c: np.ndarray, st: SliceStructure) -> bool:
    return bool(
        c.min() >= -1e-15
        and abs(st.nu @ c - 1.0) <= 1e-9
        and c.max() <= float(st.top(c.min())) * (1 + 1e-12) + 1e-15
    )


def window_columns(st: SliceStructure) -> np.ndarray:
    """Sliding-window columns of the ``S = 0`` slice: an exactly feasible, informative start for the master.

    Lay the positive-mass symbols on a circle of circumference ``ν·1 = 1`` (symbol x an arc ``I_x`` of length
    ``ν_x``) and let ``w_s`` be the window ``[s, s + L)``, ``L = 1/T0``, ``T0 = T(0)``. The column
    ``c_s(x) = T0·|w_s ∩ I_x|/ν_x`` lies in ``K1`` (``0 ≤ c_s ≤ T0``, ``ν·c_s = T0 L = 1``; zero-mass symbols get 1).
    Averaged over a uniform start, ``∫ c_s(x) ds = T0·L·ν_x/ν_x = 1``: the windows decompose the constant column.
    ``s ↦ c_s(x)`` is piecewise linear with breakpoints among the item ends ``b_i`` and ``b_i − L``, so the
    trapezoid rule on those nodes is exact: the returned columns (one per node, each with at most one partial
    symbol) admit weights summing to 1 with ``Σθ c = 1``. Their mixture is the "window" mechanism (output = a
    window containing x), whose mutual information tends to ``log T0`` (ε for a fixed prior, ε' of eq. (13) for the
    ball) as the masses shrink; it gives the master a non-degenerate, informative basis from the first iteration.

    Implements: the sliding-window start of ``docs/design.md`` §5.

    Parameters
    ----------
    st : SliceStructure
        The normalised column cone.

    Returns
    -------
    numpy.ndarray, shape (K, N)
        The window columns as rows; empty (shape ``(0, N)``) when ``s_lo > 0`` or ``T0 ≤ 1``.
    """
    nu = st.nu
    n = nu.shape[0]
    T0 = float(st.top(0.0))
    if st.s_lo > 0 or T0 <= 1.0 + 1e-12:
        return np.zeros((0, n))
    L = 1.0 / T0
    pos = np.flatnonzero(nu > 0)
    m = nu[pos]
    b = np.concatenate([[0.0], np.cumsum(m)])
    b = b / b[-1]
    lo, hi = b[:-1], b[1:]
    starts = np.unique(np.round(np.concatenate([lo, np.mod(lo - L, 1.0)]), 15))
    s = starts[:, None]
    # overlap of [s, s + L) with I_x on the circle: the straight overlap plus the part wrapped past 1
    ov = np.clip(np.minimum(s + L, hi) - np.maximum(s, lo), 0.0, None)
    ov += np.clip(np.minimum(s + L - 1.0, hi) - np.maximum(s - 1.0, lo), 0.0, None)
    C = np.ones((starts.size, n))
    C[:, pos] = np.minimum(T0 * ov / m, T0)
    return C
