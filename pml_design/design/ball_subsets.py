"""Exact smallest dual weight of a subset whose mass lies in an interval, by meet in the middle.

Implements: ``M(t1, t2) = min {Λ(S) : S ⊆ F, t1 ≤ P̂(S) ≤ t2}`` for a set of items ``F`` (``+inf`` when no subset
has its mass in the interval), the integer counterpart of the fractional knapsack bound ``L`` of
:mod:`.ball_pricing` (``M ≥ min_{[t1, t2]} L``). The pricing's branch and bound uses it on the cells of a node
bound near the threshold mass θ, where the fractional relaxation reaches masses no subset has (a subset-sum
structure; ``docs/design.md`` §5). Horowitz–Sahni meet in the middle: the subsets of the lightest
:data:`RIGHT_SIZE` items are sorted by mass with a sparse table of running minima of Λ, those of the other items
are enumerated, so a query costs ``2^(|F| − RIGHT_SIZE)`` range-minimum look-ups.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RIGHT_SIZE", "SubsetMin", "subset_sums"]

#: Items in the sorted (right) half of the meet in the middle (2^16 subsets, a 17-level sparse table).
RIGHT_SIZE = 16
#: Relative slack on the mass interval: sums of the same subset in another order differ by rounding only.
MASS_TOL = 1e-12


def subset_sums(m: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P̂(S), Λ(S))`` of all ``2^k`` subsets of k items (bit i of the index = item i), by doubling."""
    ms, ls = np.zeros(1), np.zeros(1)
    for mi, li in zip(np.asarray(m, float), np.asarray(lam, float)):
        ms = np.concatenate([ms, ms + mi])
        ls = np.concatenate([ls, ls + li])
    return ms, ls


class SubsetMin:
    """``M(t1, t2)`` over the subsets of items with masses ``m`` and dual weights ``lam`` (see module docstring).

    Items of zero mass never change a subset's mass: the ones with ``Λ < 0`` are always taken (their sum is
    added), the others never.
    """

    def __init__(self, m: np.ndarray, lam: np.ndarray, right: int = RIGHT_SIZE):
        m, lam = np.asarray(m, float), np.asarray(lam, float)
        pos = m > 0
        self.neg0 = float(np.minimum(lam[~pos], 0.0).sum())
        m, lam = m[pos], lam[pos]
        order = np.argsort(m, kind="stable")  # lightest items in the sorted half
        m, lam = m[order], lam[order]
        k = min(right, m.size)
        mr, lr = subset_sums(m[:k], lam[:k])
        srt = np.argsort(mr, kind="stable")
        self.mr = mr[srt]
        table = [lr[srt]]
        while 2 ** len(table) <= self.mr.size:
            prev, h = table[-1], 2 ** (len(table) - 1)
            table.append(np.minimum(prev[:-h], prev[h:]))
        self.table = table
        self.ml, self.ll = subset_sums(m[k:], lam[k:])
        self.scale = float(m.sum()) if m.size else 1.0

    def with_left(self, m: np.ndarray, lam: np.ndarray) -> SubsetMin:
        """The structure for this one's (right) items plus the items ``m, lam`` (enumerated; the table is shared)."""
        m, lam = np.asarray(m, float), np.asarray(lam, float)
        pos = m > 0
        new = object.__new__(SubsetMin)
        new.mr, new.table = self.mr, self.table
        new.neg0 = float(np.minimum(lam[~pos], 0.0).sum())
        new.ml, new.ll = subset_sums(m[pos], lam[pos])
        new.scale = self.scale + float(m[pos].sum())
        return new

    @property
    def cost(self) -> int:
        """Range-minimum look-ups per query."""
        return int(self.ml.size)

    def _rmq(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """``min lr[lo:hi]`` element-wise (``inf`` for empty ranges), sparse table."""
        n = hi - lo
        ok = n > 0
        k = np.zeros(n.shape, dtype=np.int64)
        k[ok] = np.floor(np.log2(n[ok])).astype(np.int64)
        out = np.full(n.shape, np.inf)
        for lev in np.unique(k[ok]):
            sel = ok & (k == lev)
            t = self.table[lev]
            out[sel] = np.minimum(t[lo[sel]], t[hi[sel] - 2**lev])
        return out

    def query(self, t1: np.ndarray, t2: np.ndarray, chunk: int = 1 << 20) -> np.ndarray:
        """``M(t1, t2)`` element-wise for interval arrays (``+inf`` where no subset's mass lies in it)."""
        t1, t2 = np.broadcast_arrays(np.asarray(t1, float), np.asarray(t2, float))
        shape = t1.shape
        t1, t2 = t1.ravel(), t2.ravel()
        tol = MASS_TOL * max(self.scale, 1.0)
        out = np.full(t1.size, np.inf)
        step = max(1, chunk // max(1, self.ml.size))
        for s in range(0, t1.size, step):
            a = t1[s:s + step, None] - self.ml[None, :] - tol
            b = t2[s:s + step, None] - self.ml[None, :] + tol
            lo = np.searchsorted(self.mr, a.ravel(), side="left").reshape(a.shape)
            hi = np.searchsorted(self.mr, b.ravel(), side="right").reshape(b.shape)
            out[s:s + step] = (self._rmq(lo, hi) + self.ll[None, :]).min(axis=1)
        return (out + self.neg0).reshape(shape)
