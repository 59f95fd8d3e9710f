"""LDP frequency oracles (GRR, OUE, OLH, k-subset selection, Hadamard response) with their standard estimators, and the
asymptotic estimation MSE of any finite mechanism.

Implements
----------
* [WBLJ17] T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
  Estimation", USENIX Security 2017: the *pure protocol* framework (§3: every report ``y`` supports a set of
  values; ``P(v ∈ Support(y)) = p*`` if the input is ``v`` and ``= q*`` otherwise), the unbiased estimator
  ``f̂_v = (C_v/n − q*)/(p* − q*)`` with ``C_v`` the number of reports supporting ``v``, and its variance
  (Theorem 2)

      ``Var[f̂_v] = q*(1 − q*)/(n (p* − q*)²) + f_v (1 − p* − q*)/(n (p* − q*))``;

  Direct Encoding = generalized randomized response (GRR, §4.1), Optimized Unary Encoding (OUE, §4.3) and
  Optimized Local Hashing (OLH, §4.4).
* k-subset selection (SS): S. Wang, L. Huang, P. Wang, Y. Nie, H. Xu, W. Yang, X.-Y. Li, C. Qiao, "Mutual
  information optimally local private discrete distribution estimation", arXiv:1607.08025 (2016), and
  M. Ye, A. Barg, "Optimal schemes for discrete distribution estimation under locally differential
  privacy", IEEE Trans. Inf. Theory 64(8), 2018: report a k-subset ``S`` with ``P(S | x) ∝ e^ε`` if
  ``x ∈ S`` else ``1``, ``k ≈ N/(e^ε + 1)``. It is a pure protocol (derivation of p*, q* in
  ``docs/ldp.md``), so the same estimator and variance apply.
* :func:`estimation_mse`: the A-optimal (trace) Cramér–Rao bound of a channel for the distribution on the
  simplex, ``tr F(W)⁻¹ − ‖P‖²`` with ``F(W) = Σ_y w_y w_yᵀ/(P·w_y)`` (Fisher information of one report;
  the ``− ‖P‖²`` is the sum-to-one constraint: Gorman & Hero 1990, Stoica & Ng 1998, "On the Cramér–Rao
  bound under parametric constraints"). It is the per-report asymptotic MSE of the MLE (the IBU limit).

Variance models
---------------
``inputs="fixed"`` ([WBLJ17]'s fixed data set) or ``inputs="iid"`` (records drawn i.i.d.; see :mod:`.base`).
:func:`estimation_mse` is in the i.i.d. model.

Memory
------
Reports of OUE are an (n, N) boolean matrix (1 byte per bit) and of subset selection an (n, k) matrix of the
smallest unsigned integer type holding N − 1; temporaries are generated in chunks of at most
:data:`CHUNK_ELEMENTS` numbers, and a privatization whose reports would exceed :data:`MAX_REPORT_BYTES`
raises a ``ValueError`` (privatize in batches and add their :meth:`FrequencyOracle.support_counts`, then
call :meth:`FrequencyOracle.estimate_from_counts`).

Modules
-------
* :mod:`.base`: the pure-protocol base class :class:`FrequencyOracle` (estimator, variance, channel, limits);
* :mod:`.encodings`: GRR and OUE; :mod:`.hashing`: OLH; :mod:`.subsets`: k-subset selection;
* :mod:`.hadamard`: Hadamard response (Acharya, Sun & Zhang 2019);
* :mod:`.optimum`: the LDP optimum over all oracles (:func:`ldp_optimum`) and compact pair-balanced channels with
  subset selection's variance (:func:`compact_ldp_channel`);
* :mod:`.fisher`: :func:`estimation_mse` (and the Fisher information it is built on).
"""

from __future__ import annotations

from .base import CHUNK_ELEMENTS, MAX_CHANNEL_ENTRIES, MAX_REPORT_BYTES, FrequencyOracle
from .encodings import GeneralizedRandomizedResponse, OptimizedUnaryEncoding, grr, oue
from .fisher import estimation_mse
from .hadamard import HadamardResponse, hadamard_response
from .hashing import MAX_HASH_RANGE, OptimizedLocalHashing, olh  # noqa: F401 (MAX_HASH_RANGE: as before the split)
from .optimum import (
    LdpOptimum,
    PairBalancedChannel,
    build_candidate,
    compact_ldp_channel,
    ldp_optimum,
    pair_balanced_mse,
    ranked_candidates,
)
from .subsets import SubsetSelection, subset_selection

__all__ = [
    "CHUNK_ELEMENTS",
    "MAX_CHANNEL_ENTRIES",
    "MAX_REPORT_BYTES",
    "FrequencyOracle",
    "GeneralizedRandomizedResponse",
    "HadamardResponse",
    "LdpOptimum",
    "OptimizedLocalHashing",
    "OptimizedUnaryEncoding",
    "PairBalancedChannel",
    "SubsetSelection",
    "build_candidate",
    "compact_ldp_channel",
    "estimation_mse",
    "grr",
    "hadamard_response",
    "ldp_optimum",
    "olh",
    "oue",
    "pair_balanced_mse",
    "ranked_candidates",
    "subset_selection",
]
