"""The estimation design's incumbent: the best certified design so far (docs/design.md §7, "Anytime means monotone").

Every design offered is certified (exact leakage check and repair, :func:`~pml_design.design.certify.certify`) and
its exact criterion computed; it replaces the incumbent only when better, or as good within a tolerance on fewer
outputs. For the A-criterion the incumbent's Fisher information is kept, so the seed's (the master's matrix column)
is not computed twice.
"""

from __future__ import annotations

import math

import numpy as np

from ...mechanisms.frequency_oracles.fisher import fisher_information, mse_from_fisher
from ...uncertainty import UncertaintySet
from ..certify import certify
from ..utilities import FrequencyEstimation

__all__ = ["CertifiedIncumbent", "without_noise"]


def without_noise(W: np.ndarray) -> np.ndarray:
    """``W`` without its interior-point noise: entries ≤ 1e-6 × their column's maximum and "ghost" outputs (reached
    with probability ~1e-8) as exact zeros (:func:`~pml_design.design.linear.lp.clean_tiny`), empty columns dropped
    (rows not renormalised). Implements: the clean-up of docs/design.md §7 (the result, and an output cap).

    Parameters
    ----------
    W : numpy.ndarray, shape (N, M)
        A mechanism (not modified).

    Returns
    -------
    numpy.ndarray, shape (N, M')
        The cleaned matrix on its non-empty columns.
    """
    from ..linear.lp import clean_tiny  # noqa: PLC0415

    W = clean_tiny(W, rtol=1e-6)
    return W[:, W.sum(axis=0) > 0]


class CertifiedIncumbent:
    """The best certified design so far (exact leakage check and repair, then the exact criterion).

    Implements: docs/design.md §7 ("Anytime means monotone"): the incumbent never gets worse within a run.

    Parameters
    ----------
    uset : UncertaintySet
        The design's uncertainty set 𝒫 (the mechanism must be ε-PML for every distribution in it).
    epsilon : float
        The PML level ε.
    util : FrequencyEstimation
        The criterion (A: ``tr F⁻¹ − ‖P‖²``; D: ``−log det F``), evaluated at ``prior``.
    prior : numpy.ndarray
        The positive distribution at which the criterion is evaluated.
    max_outputs : int, optional
        The most outputs a kept design may have (the design's ``max_outputs``): a candidate with more, after its
        interior-point noise is cleaned (:func:`~pml_design.design.linear.lp.clean_tiny`), is not kept
        (``over_cap`` counts them).
    """

    def __init__(self, uset: UncertaintySet, epsilon: float, util: FrequencyEstimation, prior: np.ndarray, *,
                 max_outputs: int | None = None) -> None:
        self.uset, self.epsilon, self.util, self.prior = uset, epsilon, util, prior
        self.max_outputs = max_outputs
        self.over_cap = 0  # candidates not kept for having more than max_outputs outputs
        self.cert = None
        self.value = math.inf
        self.last = math.inf  # the criterion of the last design offered
        self.source = ""
        self.fisher = None  # the incumbent's Fisher information (criterion A)

    def offer(self, W: np.ndarray, source: str, rtol: float = 1e-9) -> bool:
        """Certify ``W`` and keep it if better (or as good within ``rtol`` on fewer outputs).

        Parameters
        ----------
        W : numpy.ndarray, shape (N, M)
            A candidate mechanism (negative entries are clipped and rows renormalised before certification).
        source : str
            Where it comes from (``info["source"]`` of the result when it is kept).
        rtol : float, default 1e-9
            A candidate on fewer outputs is kept when its criterion is within this (relative) of the incumbent's.

        Returns
        -------
        bool
            Whether it was strictly better (``last`` holds its criterion either way; ``inf`` for a candidate with more
            than ``max_outputs`` outputs, which is not certified).
        """
        W = np.maximum(W, 0.0)
        W = W / W.sum(axis=1, keepdims=True)
        if self.max_outputs is not None and np.count_nonzero(W.sum(axis=0)) > self.max_outputs:
            W = without_noise(W)
            if W.shape[1] > self.max_outputs or not np.all(W.sum(axis=1) > 0):
                self.over_cap += 1
                self.last = math.inf
                return False
            W = W / W.sum(axis=1, keepdims=True)
        cert = certify(W, self.uset, self.epsilon, drop_empty_columns=True)
        F = None
        if self.util.criterion == "A":  # (the prior is positive and empty columns are dropped: no projection)
            F = fisher_information(cert.matrix / cert.matrix.sum(axis=1, keepdims=True), self.prior)
            value = mse_from_fisher(F, self.prior)
        else:
            value = float(self.util.value(cert.matrix, self.prior))
        self.last = value
        better = value < self.value
        if self.cert is None or better or (value <= self.value * (1 + rtol) and cert.matrix.shape[1] < self.cert.matrix.shape[1]):
            self.cert, self.value, self.source, self.fisher = cert, value, source, F
        return better

    def fisher_of(self, W: np.ndarray) -> np.ndarray:
        """``F(W)`` at the prior, taken from the incumbent when it is ``W`` up to rounding (else computed).

        The seed's F is ``N²M`` flops (~3 s at N = 3 000), and the seed is usually the incumbent when the master
        first needs it as its matrix column.

        Parameters
        ----------
        W : numpy.ndarray, shape (N, M)
            A row-stochastic mechanism.

        Returns
        -------
        numpy.ndarray
            Its Fisher information, ``N × N``.
        """
        c = None if self.cert is None else self.cert.matrix
        if self.fisher is not None and c.shape == W.shape and np.allclose(c, W, rtol=1e-12, atol=0.0):
            return self.fisher
        return fisher_information(W, self.prior)
