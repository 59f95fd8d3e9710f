"""Do the reports fit the mechanism? A likelihood-ratio (G) test of the report counts against ``q̂ = π̂ᵀ W``.

Reports are evidence about the mechanism as well as about the distribution: counts privatized by another
mechanism (a different ε, a file from another design with the same categories) still give an estimate, often
a plausible-looking one. Under the right mechanism the counts are multinomial with probabilities ``q = πᵀW``
for some π in the simplex; the likelihood-ratio statistic of that model against the saturated one,

    G = 2 Σ_y c_y log(c_y / (n q̂_y)),      q̂ = π̂ᵀ W,  π̂ the maximum-likelihood estimate,

is asymptotically χ² (Wilks) with ``df = K − 1 − (rank(W) − 1) = K − rank(W)`` degrees of freedom, K the
number of output cells (the fitted π̂ has ``rank(W) − 1`` free directions that move q; rows of W sum to 1).
Cells with an expected count below :data:`MIN_EXPECTED` are pooled into one (Cochran's rule), and ``K`` counts
the pooled cells. When π̂ lies on the boundary of the simplex (a category estimated at ~0), the statistic is
a mixture of χ² laws with up to one more degree of freedom per active constraint (Chernoff 1954; Self & Liang
1987); we add one per category with ``π̂_x < 1/√n`` (at or within about a standard error of the boundary) to
``df``, which can only make the test more conservative. A square invertible W fits any
interior report distribution exactly (df = 0, G = 0): then only the boundary has power, which is exactly the
case of a wrong mechanism that drives a category to 0.

Reports with an output the mechanism can never produce (its column is all zero) are impossible: refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["FIT_LEVEL", "MIN_EXPECTED", "ReportFit", "ReportsFitWarning", "check_possible_reports", "report_fit"]

#: Significance level of the warning: a correct file of 10^7 reports passes (false alarm probability 1e-6).
FIT_LEVEL: float = 1e-6
#: Smallest expected count of a cell; smaller cells are pooled.
MIN_EXPECTED: float = 5.0


class ReportsFitWarning(UserWarning):
    """The reports are very unlikely under the mechanism: they were probably privatized by another one."""


@dataclass(frozen=True)
class ReportFit:
    """Result of :func:`report_fit`: ``G``, its degrees of freedom and the p-value ``P(χ²_df ≥ G)``."""

    statistic: float
    df: int
    p_value: float
    cells: int


def check_possible_reports(W: np.ndarray, counts: np.ndarray, output_labels: object = None) -> None:
    """Refuse reports on outputs whose column of ``W`` is all zero (the mechanism never produces them).

    Implements: the last rule of the module docstring (an output the mechanism cannot produce is impossible).

    Parameters
    ----------
    W : numpy.ndarray, shape (N, M)
        The mechanism matrix.
    counts : numpy.ndarray, shape (M,)
        Report counts per output.
    output_labels : sequence or None, default None
        Output names used in the message (default: the column indices).

    Raises
    ------
    ValueError
        If some report falls on an output with an all-zero column (the first five such outputs are named).
    """
    never = (W.max(axis=0) <= 0) & (counts > 0)
    if never.any():
        j = np.flatnonzero(never)
        names = [output_labels[i] for i in j[:5]] if output_labels is not None else j[:5].tolist()
        raise ValueError(f"reports include {int(counts[j].sum())} report(s) on output(s) {names} that this mechanism "
                         "never produces (probability 0 for every input): they were not privatized by it")


def report_fit(W: np.ndarray, counts: np.ndarray, pi: np.ndarray, *, rank: int | None = None) -> ReportFit:
    """Likelihood-ratio goodness-of-fit test of ``counts`` against ``q̂ = π̂ᵀ W`` (see the module docstring).

    Parameters
    ----------
    W : numpy.ndarray, shape (N, K)
        Row-stochastic mechanism.
    counts : numpy.ndarray, shape (K,)
        Reports per output.
    pi : numpy.ndarray, shape (N,)
        The maximum-likelihood estimate of the input distribution.
    rank : int, optional
        The rank of ``W`` if known (an SVD of W otherwise).

    Returns
    -------
    ReportFit
    """
    from scipy import stats  # noqa: PLC0415

    c = np.asarray(counts, dtype=float)
    n = float(c.sum())
    q = np.clip(np.asarray(pi, dtype=float) @ W, 0.0, None)
    q = q / q.sum()
    e = n * q
    small = e < MIN_EXPECTED
    obs, exp = list(c[~small]), list(e[~small])
    if small.any():
        obs.append(float(c[small].sum()))
        exp.append(float(e[small].sum()))
    o, x = np.array(obs), np.array(exp)
    if x.size > 1 and x.min() < MIN_EXPECTED:  # the pooled cell is still small: merge it with the smallest other
        k = int(np.argmin(x[:-1]))
        o[k] += o[-1]
        x[k] += x[-1]
        o, x = o[:-1], x[:-1]
    pos = o > 0
    if np.any(x[pos] <= 0):
        return ReportFit(math.inf, max(x.size - 1, 1), 0.0, int(x.size))
    g = float(2.0 * np.sum(o[pos] * np.log(o[pos] / x[pos])))
    rank = int(np.linalg.matrix_rank(W)) if rank is None else int(rank)
    # categories estimated within about a standard error of 0 (π̂_x < 1/√n): at or near the boundary of the simplex,
    # where the iterative MLE also converges slowly; each adds a degree of freedom (conservative)
    active = int(np.sum(np.asarray(pi) < 1.0 / math.sqrt(n)))
    df = min(max(x.size - rank, 0) + active, x.size - 1)
    if df <= 0:
        return ReportFit(max(g, 0.0), 0, 1.0, int(x.size))
    return ReportFit(max(g, 0.0), int(df), float(stats.chi2.sf(max(g, 0.0), df)), int(x.size))
