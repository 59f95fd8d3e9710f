"""Histogram-based statistics (Section 5.2) and their flexible-accuracy guarantees.

Statistics on a histogram y over bar positions (default: the grid 0..B-1), vectorised over leading
axes (one histogram per row):

* f_max(y) = max{g : y(g) > 0}, f_min, f_supp (Sec. 5.2);
* max_k(y) = max{g : y(g) >= k} (max = max_1) and mode(y) = argmax_g y(g), smallest g on ties (Sec. 6).

Undefined values (empty histogram; no bar reaching k) are returned as the documented sentinel
``UNDEFINED = -1`` (an index, never a position), not an exception.

Guarantees (Theorem 5 with Corollaries 2-3): M_f = f ∘ BucketHist is (α, Δ_f(β), 0)-accurate w.r.t.
∂_drop with Δ_max(β) = Δ_min(β) <= β and Δ_supp(β) <= β (w.r.t. d_supp).  max_k (k >= 2) and mode have
unbounded metric sensitivity, so Theorem 5 gives them no guarantee (:func:`metric_sensitivity`
returns ∞); Theorem 6 (∂^η_drmv) still applies to any statistic.

Implements: Bansal et al. (AISTATS 2022), Section 5.2, eq. (10), Definition 6, Theorem 5,
Corollaries 2-3, Theorem 6; the flexible error of Section 6 / App. L (∂_drop distortion 0.005).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from pml_design._validation import check_positive_int, check_positive_real
from pml_design.flexible._checks import check_histogram, check_real_array, check_unit_interval
from pml_design.flexible.mechanisms import BucketHistRelease, bucket_hist

__all__ = [
    "UNDEFINED",
    "f_max",
    "f_min",
    "f_supp",
    "max_k",
    "mode",
    "evaluate_statistic",
    "metric_sensitivity",
    "StatisticRelease",
    "histogram_statistic",
    "buckethist_certificate",
    "reachable_values",
    "flexible_error",
]

#: Sentinel index for an undefined statistic (empty histogram, no bar >= k).
UNDEFINED: int = -1

Statistic = Literal["max", "min", "max_k", "mode"]


def _arr(y: Any) -> np.ndarray:
    a = check_real_array(y, "y")
    if a.ndim < 1:
        raise ValueError("y must have at least one axis (bars on the last axis)")
    return a


def max_k(y: Any, k: int) -> np.ndarray | int:
    """max_k(y) = index of the right-most bar with y(g) >= k (``UNDEFINED`` if none); last axis = bars.

    Parameters
    ----------
    y : array_like
        Histogram(s), bars on the last axis (one histogram per row of the leading axes).
    k : int
        Threshold k > 0.

    Returns
    -------
    int or numpy.ndarray
        The bar index (``UNDEFINED`` where no bar reaches k): an int for one histogram, else an array over the
        leading axes.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 6 / App. L (max_k, max = max_1).
    """
    a = _arr(y)
    k = check_positive_real(k, "k")
    hit = a >= k
    B = a.shape[-1]
    last = B - 1 - np.argmax(hit[..., ::-1], axis=-1)
    out = np.where(hit.any(axis=-1), last, UNDEFINED)
    return int(out) if out.ndim == 0 else out


def f_max(y: Any) -> np.ndarray | int:
    """f_max(y) = max{g : y(g) > 0} (index; ``UNDEFINED`` for an empty histogram).

    Parameters
    ----------
    y : array_like
        Histogram(s), bars on the last axis.

    Returns
    -------
    int or numpy.ndarray
        The index of the right-most non-empty bar (``UNDEFINED`` if empty): an int for one histogram, else an
        array over the leading axes.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.2 (f_max), Corollary 2.
    """
    a = _arr(y)
    hit = a > 0
    last = a.shape[-1] - 1 - np.argmax(hit[..., ::-1], axis=-1)
    out = np.where(hit.any(axis=-1), last, UNDEFINED)
    return int(out) if out.ndim == 0 else out


def f_min(y: Any) -> np.ndarray | int:
    """f_min(y) = min{g : y(g) > 0} (index; ``UNDEFINED`` for an empty histogram).

    Parameters
    ----------
    y : array_like
        Histogram(s), bars on the last axis.

    Returns
    -------
    int or numpy.ndarray
        The index of the left-most non-empty bar (``UNDEFINED`` if empty): an int for one histogram, else an
        array over the leading axes.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.2 (f_min), Corollary 2.
    """
    a = _arr(y)
    hit = a > 0
    out = np.where(hit.any(axis=-1), np.argmax(hit, axis=-1), UNDEFINED)
    return int(out) if out.ndim == 0 else out


def f_supp(y: Any) -> np.ndarray:
    """f_supp(y) = {g : y(g) > 0} as a sorted index array (empty array for an empty histogram).

    Parameters
    ----------
    y : array_like
        One histogram (1-D).

    Returns
    -------
    numpy.ndarray
        The sorted indices of the non-empty bars (empty for an empty histogram).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.2 (f_supp), Corollary 3.
    """
    a = check_real_array(y, "y", ndim=1)
    return np.flatnonzero(a > 0)


def mode(y: Any) -> np.ndarray | int:
    """mode(y) = argmax_g y(g), the smallest index on ties (``UNDEFINED`` if all bars are 0).

    Parameters
    ----------
    y : array_like
        Histogram(s), bars on the last axis.

    Returns
    -------
    int or numpy.ndarray
        The index of the largest bar, smallest on ties (``UNDEFINED`` if every bar is 0): an int for one
        histogram, else an array over the leading axes.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 6 / App. L (mode).
    """
    a = _arr(y)
    out = np.where(a.max(axis=-1) > 0, np.argmax(a, axis=-1), UNDEFINED)
    return int(out) if out.ndim == 0 else out


def evaluate_statistic(y: Any, statistic: Statistic, k: int = 1) -> np.ndarray | int:
    """Dispatch to :func:`f_max`, :func:`f_min`, :func:`max_k` or :func:`mode` by name.

    Parameters
    ----------
    y : array_like
        Histogram(s), bars on the last axis.
    statistic : {"max", "min", "max_k", "mode"}
        Which statistic.
    k : int, default 1
        Threshold for ``"max_k"`` (ignored otherwise).

    Returns
    -------
    int or numpy.ndarray
        The statistic's index (``UNDEFINED`` where undefined), as returned by the function dispatched to.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 5.2 / 6 (histogram-based statistics).
    """
    if statistic == "max":
        return f_max(y)
    if statistic == "min":
        return f_min(y)
    if statistic == "max_k":
        return max_k(y, k)
    if statistic == "mode":
        return mode(y)
    raise ValueError(f"statistic must be one of 'max', 'min', 'max_k', 'mode', got {statistic!r}")


def metric_sensitivity(statistic: str, beta: float, k: int = 1) -> float:
    """Upper bound on the metric sensitivity Δ_f(β) (Definition 6) used by Theorem 5.

    ``"max"``, ``"min"``, ``"supp"`` (d_supp), and ``"max_k"`` with k = 1: β (Corollaries 2, 3).
    ``"max_k"`` with k >= 2 and ``"mode"``: ∞ (unbounded: d_hist(x, 2x) = 0 but max_k can jump, and a
    mode can move across the range at d_hist = 1; see ``tests/test_flexible_statistics.py``).

    Parameters
    ----------
    statistic : str
        ``"max"``, ``"min"``, ``"supp"``, ``"max_k"`` or ``"mode"``.
    beta : float
        β ≥ 0.
    k : int, default 1
        Threshold for ``"max_k"``.

    Returns
    -------
    float
        β, or ``inf`` for ``"max_k"`` with k >= 2 and ``"mode"``.

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Definition 6, Corollaries 2 and 3.
    """
    beta = check_positive_real(beta, "beta", allow_zero=True)
    if statistic in ("max", "min", "supp") or (statistic == "max_k" and k == 1):
        return beta
    if statistic in ("max_k", "mode"):
        return float("inf")
    raise ValueError(f"unknown statistic {statistic!r}")


@dataclass(frozen=True, repr=False)
class StatisticRelease:
    """Output of :func:`histogram_statistic`: value (a bucket centre, or None if undefined) and guarantees.

    Only ``value`` and the public parameters may be published: :meth:`publishable` returns exactly those, and the
    printed form shows only those.  ``accuracy`` carries the certified α of the run, a function of the protected
    data, and ``release`` holds private fields too (see :class:`~pml_design.flexible.BucketHistRelease`).

    Attributes
    ----------
    value : float or numpy.ndarray or None
        f(y) in [0, B) coordinates (array of centres for "supp"); None if undefined.  Public (post-processing of
        the DP output y).
    accuracy : tuple or None
        (α, β, γ) of Theorem 5 w.r.t. ∂_drop (None when Theorem 5 gives no guarantee: max_k, mode);
        α includes the rounding slack and is PRIVATE (data-dependent); the publishable form is the nominal
        (α requested, Δ_f(β), 0) of :meth:`publishable`.
    release : BucketHistRelease
        The underlying histogram release (its ``privacy`` is the certified DP guarantee; PRIVATE in relative mode).
    """

    value: Any
    accuracy: tuple[float, float, float] | None
    release: BucketHistRelease

    def publishable(self, *, n_min_public: int | None = None) -> dict[str, Any]:
        """What may be published: the value, the nominal accuracy and the release's public part.

        Parameters
        ----------
        n_min_public : int, optional
            As in :meth:`BucketHistRelease.publishable` (relative mode: a public lower bound on the smaller
            neighbour's size, for a publishable privacy guarantee).

        Returns
        -------
        dict
            ``value``; ``nominal_accuracy`` = (α requested, Δ_f(β), 0) or None (the certified α adds a rounding
            slack that depends on |x|: <= t/(2|x|) in relative mode); ``release``: the release's publishable dict.

        Notes
        -----
        Implements: eq. (10) and Theorem 5 of Bansal et al. (AISTATS 2022): f(y) is post-processing of the DP
        output, so it is covered by the release's guarantee.
        """
        val = np.array(self.value, copy=True) if isinstance(self.value, np.ndarray) else self.value
        nominal = None if self.accuracy is None else (self.release.alpha, self.accuracy[1], 0.0)
        return {"value": val, "nominal_accuracy": nominal,
                "release": self.release.publishable(n_min_public=n_min_public)}

    def __repr__(self) -> str:
        pub = self.publishable()
        return (f"StatisticRelease(value={pub['value']!r}, nominal_accuracy={pub['nominal_accuracy']!r}, "
                f"release={self.release!r}; private fields not shown: accuracy)")


def histogram_statistic(x: Any, statistic: Literal["max", "min", "supp", "max_k", "mode"], alpha: float,
                        beta: float, epsilon: float, *, k: int = 1, B: float | None = None, rng: Any = None,
                        q_mode: Literal["relative", "fixed"] = "relative", n_public: int | None = None) -> StatisticRelease:
    """M_f^{α,β,[0,B)} = f ∘ BucketHist (eq. (10)) for f in {max, min, supp, max_k, mode}.

    Parameters
    ----------
    x : array_like of int
        Histogram over the grid 0..len(x)-1 ⊂ [0, B).
    statistic : str
        Which statistic.
    alpha, beta, epsilon : float
        BucketHist parameters.
    k : int
        Threshold for ``"max_k"``.
    B, rng, q_mode, n_public
        As in :func:`pml_design.flexible.bucket_hist`.

    Returns
    -------
    StatisticRelease
        Publish only ``res.publishable()``: ``accuracy`` and parts of ``release`` are private (data-dependent).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), eq. (10), Theorem 5, Corollaries 2-3.
    """
    if statistic not in ("max", "min", "supp", "max_k", "mode"):  # before the release (a trial: after, without 'supp')
        raise ValueError(f"statistic must be one of 'max', 'min', 'supp', 'max_k', 'mode', got {statistic!r}")
    k = check_positive_int(k, "k")
    rel = bucket_hist(x, alpha, beta, epsilon, B=B, rng=rng, q_mode=q_mode, n_public=n_public)
    if statistic == "supp":
        idx = f_supp(rel.y)
        value: Any = rel.centres[idx] if idx.size else None
    else:
        i = evaluate_statistic(rel.y, statistic, k)  # type: ignore[arg-type]
        value = None if i == UNDEFINED else float(rel.centres[i])
    sens = metric_sensitivity(statistic, beta, k)
    acc = (rel.accuracy_alpha, sens, 0.0) if np.isfinite(sens) else None
    return StatisticRelease(value=value, accuracy=acc, release=rel)


def buckethist_certificate(x: Any, release: BucketHistRelease) -> np.ndarray:
    """Integral accuracy certificate x'' for a 1-D BucketHist release on the unit grid.

    x'' keeps, in each bucket a, y(a) of the original items of that bucket (the left-most ones).  Then
    x'' <= x, ∂_drop(x, x'') = (|x| - |y|)/|x| <= ``release.accuracy_alpha`` and
    d_hist(y, x'') <= w/2 = β — an explicit witness of Theorem 4's (α, β, 0)-accuracy.

    Parameters
    ----------
    x : array_like of int
        The input histogram over the unit grid 0..len(x)-1.
    release : BucketHistRelease
        A 1-D BucketHist release of ``x`` (its ``y``, ``w`` and ``n_buckets`` are used).

    Returns
    -------
    numpy.ndarray
        x'' (int64, same length as ``x``), with 0 <= x'' <= x.

    Notes
    -----
    Implements: the accuracy argument of Bansal et al. (AISTATS 2022), Theorem 4 / App. G, with an
    integral certificate instead of the fractional f_φ construction (erratum E7).
    """
    xv = check_histogram(x, "x")
    w = release.w
    t = release.n_buckets
    g = np.arange(xv.size)
    b = np.minimum(np.floor(g / w).astype(np.int64), t - 1)
    keep = release.y.ravel()[b]  # per grid point: the bucket's surviving count
    # cumulative count of items of the bucket strictly before g
    cum = np.cumsum(xv) - xv
    start = np.zeros(t, dtype=np.int64)
    first = np.searchsorted(b, np.arange(t))
    start = np.where(first < xv.size, cum[np.minimum(first, xv.size - 1)], 0)
    before = cum - start[b]
    return np.clip(keep - before, 0, xv).astype(np.int64)


def reachable_values(x: Any, statistic: Statistic, alpha: float, k: int = 1) -> np.ndarray:
    """R(x) = {f(x') : x' <= x, ∂_drop(x, x') <= α} (indices), for max, min, max_k, mode.

    With D = floor(α|x|) droppable items:

    * max: v with x(v) > 0 and Σ_{g>v} x(g) <= D;  min symmetric;
    * max_k: v with x(v) >= k and Σ_{g>v} max(0, x(g) - k + 1) <= D;
    * mode (smallest index on ties): v with x(v) > 0 and
      Σ_{g<v} max(0, x(g) - x(v) + 1) + Σ_{g>v} max(0, x(g) - x(v)) <= D.

    Parameters
    ----------
    x : array_like of int
        The input histogram.
    statistic : {"max", "min", "max_k", "mode"}
        Which statistic.
    alpha : float
        α ∈ [0, 1], the fraction of items that may be dropped.
    k : int, default 1
        Threshold for ``"max_k"``.

    Returns
    -------
    numpy.ndarray
        The sorted bar indices of R(x) (empty when x is empty).

    Notes
    -----
    Implements: the flexible error of Bansal et al. (AISTATS 2022), Section 6 / App. L (∂_drop
    distortion); the reachable sets are derived here and checked by brute force over all x' <= x.
    """
    xv = check_histogram(x, "x")
    alpha = check_unit_interval(alpha, "alpha")
    n = int(xv.sum())
    D = int(np.floor(alpha * n + 1e-9))
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if statistic == "max":
        above = np.cumsum(xv[::-1])[::-1] - xv
        return np.flatnonzero((xv > 0) & (above <= D))
    if statistic == "min":
        below = np.cumsum(xv) - xv
        return np.flatnonzero((xv > 0) & (below <= D))
    if statistic == "max_k":
        k = check_positive_int(k, "k")
        excess = np.maximum(0, xv - k + 1)
        above = np.cumsum(excess[::-1])[::-1] - excess
        return np.flatnonzero((xv >= k) & (above <= D))
    if statistic == "mode":
        h = xv[:, None]
        g = np.arange(xv.size)
        left = (g[None, :] < g[:, None]) * np.maximum(0, xv[None, :] - h + 1)
        right = (g[None, :] > g[:, None]) * np.maximum(0, xv[None, :] - h)
        cost = left.sum(axis=1) + right.sum(axis=1)
        return np.flatnonzero((xv > 0) & (cost <= D))
    raise ValueError(f"statistic must be 'max', 'min', 'max_k' or 'mode', got {statistic!r}")


def flexible_error(x: Any, outputs: Any, statistic: Statistic, alpha: float, k: int = 1) -> np.ndarray:
    """Per-output flexible error min_{v in R(x)} |o - v| (o in index units; ∞ if R(x) is empty).

    ``alpha = 0`` gives the actual error |o - f(x)| (R(x) = {f(x)}).

    Parameters
    ----------
    x : array_like of int
        The input histogram.
    outputs : array_like
        Released values o, in index units (any shape).
    statistic : {"max", "min", "max_k", "mode"}
        Which statistic.
    alpha : float
        α ∈ [0, 1], the ∂_drop distortion allowed.
    k : int, default 1
        Threshold for ``"max_k"``.

    Returns
    -------
    numpy.ndarray
        The flexible error of each output (shape of ``outputs``).

    Notes
    -----
    Implements: Bansal et al. (AISTATS 2022), Section 6 / App. L ("flexible error, allowing ∂_drop
    distortion of α"), Definition 3 with a free coupling.
    """
    R = reachable_values(x, statistic, alpha, k)
    o = np.asarray(outputs, dtype=float)
    if R.size == 0:
        return np.full(o.shape, np.inf)
    pos = np.searchsorted(R, o)
    left = np.abs(o - R[np.clip(pos - 1, 0, R.size - 1)])
    right = np.abs(R[np.clip(pos, 0, R.size - 1)] - o)
    return np.minimum(left, right)
