"""Release objects of STLap and BucketHist: what may be published, and the data owner's private accounting.

A release object holds the DP output ``y`` next to quantities computed from the protected data (q = τ|x| in
relative mode, the certified α, the (ε', δ') at N = |x| - 1, the noise-free bucket counts).  The DP guarantee
covers ``y`` only, so the printed form shows only the public fields and :meth:`publishable` returns exactly what
may be published (``docs/flexible.md``, "What a release may publish").

Implements: the outputs of Bansal et al. (AISTATS 2022), Algorithm 1 / Theorem 3 and Algorithms 3, 5 / Theorem 4,
with the corrected accounting of ``docs/errata-flexible.md`` (E1, E2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pml_design._validation import check_positive_int
from pml_design.flexible.accounting import PrivacyGuarantee, guarantee_relative_q

__all__ = ["STLapRelease", "BucketHistRelease"]


def _public_repr(cls: str, public: dict[str, Any], hidden: list[str]) -> str:
    parts = [f"{k}={v!r}" for k, v in public.items()]
    return f"{cls}({', '.join(parts)}; private fields not shown: {', '.join(hidden)})"


def _relative_privacy(epsilon: float | None, tau: float | None, n_items: int | None, support: int,
                      n_min_public: Any) -> PrivacyGuarantee:
    """The relative-q guarantee at a PUBLIC lower bound on the smaller neighbour's size (publishable)."""
    n_min = check_positive_int(n_min_public, "n_min_public", minimum=0)
    if epsilon is None or tau is None:
        raise ValueError("this release does not record epsilon and tau; build it with stlap_release / bucket_hist")
    if n_items is not None and n_min > max(n_items - 1, 0):
        # one bit about |x|: the data owner must treat this refusal as private and not publish it
        raise ValueError("n_min_public must be chosen without looking at the data and be at most |x| - 1; this "
                         "input is too small for it, so its guarantee would not cover this release (treat this "
                         "refusal as private)")
    return guarantee_relative_q(epsilon, tau, n_min, support)


def _with_guarantee(release: Any, pub: dict[str, Any], support: int, n_min_public: Any, **fixed: Any) -> dict[str, Any]:
    """``pub`` plus what a release may publish of its guarantee: in fixed mode its public q, the largest drop per bar,
    its privacy and ``fixed``; in relative mode the relative-q guarantee at ``n_min_public``, only when given."""
    if release.q_mode == "fixed":
        if n_min_public is not None:
            raise ValueError("n_min_public is only used with q_mode='relative' (fixed mode is public already)")
        pub.update(n_public=release.n_public, q=release.q, max_drop_per_bar=math.floor(release.q + 0.5),
                   privacy=release.privacy, **fixed)
    elif n_min_public is not None:
        pub["privacy"] = _relative_privacy(release.epsilon, release.tau, release._n_items, support, n_min_public)
    return pub


@dataclass(frozen=True, repr=False)
class STLapRelease:
    """Output of :func:`stlap_release`: the histogram, the public parameters, and the PRIVATE accounting.

    Only ``y`` and the public parameters may be published; :meth:`publishable` returns exactly those, and the
    printed form (``repr``/``str``) shows only those.  With ``q_mode="relative"`` (q = τ|x|) the fields ``q``,
    ``accuracy_alpha``, ``privacy`` and ``paper_delta`` are functions of the protected data: q/τ *is* |x|,
    ``privacy.statement`` names |x| - 1, and ε', δ', α change when one item is added.  None of them is covered by
    the DP guarantee, which covers ``y`` alone.  With ``q_mode="fixed"`` the same fields except
    ``accuracy_alpha`` are data-independent and public.

    Attributes
    ----------
    y : numpy.ndarray
        Released histogram (the DP output): public.
    q : float
        Truncation width used.  PRIVATE in relative mode (q = τ|x| reveals |x| exactly); public in fixed mode.
    accuracy_alpha : float
        PRIVATE in both modes.  Certified ∂_drop distortion: (α, 0, 0)-accuracy for the identity with
        α = Σ_g min(x(g), round(q)) / |x| <= (#non-empty bars)·round(q)/|x| (rounding included; the
        paper's τt ignores it).
    privacy : PrivacyGuarantee
        Certified (ε, δ) of the mechanism that ran.  PRIVATE in relative mode (computed at N = |x| - 1); for a
        publishable relative-mode guarantee use ``publishable(n_min_public=N)`` with a public N.
    paper_delta : float or None
        δ*(ε, q) as the paper would print it (NOT a guarantee in relative mode with > 1 bar).  PRIVATE in
        relative mode (a function of q).
    tau, epsilon : float or None
        τ and the noise ε: public (None only for objects built by hand).
    q_mode : {"relative", "fixed"}
        Which mode ran (public); objects built by hand count as "relative" (everything data-dependent private).
    n_public : int or None
        The public size of fixed mode.
    """

    y: np.ndarray
    q: float
    accuracy_alpha: float
    privacy: PrivacyGuarantee
    paper_delta: float | None
    tau: float | None = None
    epsilon: float | None = None
    q_mode: str = "relative"
    n_public: int | None = None
    _n_items: int | None = field(default=None, compare=False)

    def publishable(self, *, n_min_public: int | None = None) -> dict[str, Any]:
        """What may be published: the noisy output and the data-independent parameters, nothing else.

        Parameters
        ----------
        n_min_public : int, optional
            Relative mode only: a public lower bound N on the size of the smaller neighbour, chosen without
            looking at the data.  Given it, the result includes the publishable guarantee
            :func:`~pml_design.flexible.accounting.guarantee_relative_q` at (ε, τ, N, len(y)), which holds for
            every neighbour pair whose smaller input has >= N items.  A ``ValueError`` is raised when this input
            has fewer than N + 1 items (the guarantee would not cover it): that refusal is itself private.

        Returns
        -------
        dict
            ``y`` (a copy), ``tau``, ``epsilon``, ``q_mode``; in fixed mode also ``n_public``, ``q``,
            ``max_drop_per_bar`` (round(q)), ``privacy`` and ``paper_delta``; in relative mode ``privacy`` only
            when ``n_min_public`` is given.

        Notes
        -----
        Implements: the release of Bansal et al. (AISTATS 2022), Algorithm 1, whose DP guarantee (Theorem 3,
        corrected in erratum E1) covers the output y only; q = τ|x| is an internal quantity of the algorithm.
        """
        pub: dict[str, Any] = {"y": np.array(self.y, copy=True), "tau": self.tau, "epsilon": self.epsilon,
                               "q_mode": self.q_mode}
        return _with_guarantee(self, pub, int(np.size(self.y)), n_min_public, paper_delta=self.paper_delta)

    def __repr__(self) -> str:
        hidden = ["accuracy_alpha"] if self.q_mode == "fixed" else ["q", "accuracy_alpha", "privacy", "paper_delta"]
        return _public_repr(type(self).__name__, self.publishable(), hidden)


@dataclass(frozen=True, repr=False)
class BucketHistRelease:
    """Output of BucketHist: the released bucket histogram, its public parameters and the PRIVATE accounting.

    Only ``y`` and the public parameters may be published; :meth:`publishable` returns exactly those, and the
    printed form (``repr``/``str``) shows only those.  ``bucketed`` (the noise-free bucket counts M_buc(x)) and
    ``accuracy_alpha`` are PRIVATE in both modes; with ``q_mode="relative"`` so are ``q`` (q/τ = |x|) and
    ``privacy`` (computed at N = |x| - 1).  None of them is covered by the DP guarantee, which covers ``y``.

    Attributes
    ----------
    y : numpy.ndarray
        Released bucket counts, shape (t,)*d (the DP output): public.
    centres : numpy.ndarray
        Per-axis bucket centres: public.
    w, tau : float
        Bucket width and per-bar fraction τ = α/t: public.
    q : float
        Truncation width used: PRIVATE in relative mode (q = τ|x|), public in fixed mode.
    n_buckets : int
        t (number of buckets, t = ceil(B/w)^d): public.
    alpha, beta : float
        Requested accuracy (α, β): public.
    accuracy_alpha : float
        PRIVATE.  Certified ∂_drop part including rounding: Σ_a min(z(a), round(q))/|x| for the bucket counts z
        (<= α + t/(2|x|) in relative mode, <= α·n_public/|x| + t/(2|x|) in fixed mode).
    privacy : PrivacyGuarantee
        Certified privacy of what ran: PRIVATE in relative mode (use ``publishable(n_min_public=N)``), public in
        fixed mode.
    bucketed : numpy.ndarray
        PRIVATE.  The intermediate (noise-free) bucket counts M_buc(x), kept for the data owner's certificates
        and tests; never publish them.
    epsilon : float or None
        The noise ε: public.
    q_mode : {"relative", "fixed"}
        Which mode ran; objects built by hand count as "relative".
    n_public : int or None
        The public size of fixed mode.
    """

    y: np.ndarray
    centres: np.ndarray
    w: float
    tau: float
    q: float
    n_buckets: int
    alpha: float
    beta: float
    accuracy_alpha: float
    privacy: PrivacyGuarantee
    bucketed: np.ndarray
    epsilon: float | None = None
    q_mode: str = "relative"
    n_public: int | None = None
    _n_items: int | None = field(default=None, compare=False)

    def publishable(self, *, n_min_public: int | None = None) -> dict[str, Any]:
        """What may be published: the noisy bucket counts and the data-independent parameters, nothing else.

        Parameters
        ----------
        n_min_public : int, optional
            Relative mode only: a public lower bound N on the smaller neighbour's size, chosen without looking at
            the data; adds the publishable :func:`~pml_design.flexible.accounting.guarantee_relative_q` at
            (ε, τ, N, ``n_buckets``).  Raises ``ValueError`` when this input has fewer than N + 1 items (a
            refusal that is itself private).

        Returns
        -------
        dict
            ``y`` (a copy), ``centres``, ``w``, ``tau``, ``n_buckets``, ``alpha``, ``beta``, ``epsilon``,
            ``q_mode``; in fixed mode also ``n_public``, ``q``, ``max_drop_per_bar`` and ``privacy``; in relative
            mode ``privacy`` only when ``n_min_public`` is given.

        Notes
        -----
        Implements: the release of Bansal et al. (AISTATS 2022), Algorithm 3 / Theorem 4 (Algorithm 5 for
        d > 1), whose DP guarantee (corrected, erratum E1) covers the output y only.
        """
        pub: dict[str, Any] = {"y": np.array(self.y, copy=True), "centres": np.array(self.centres, copy=True),
                               "w": self.w, "tau": self.tau, "n_buckets": self.n_buckets, "alpha": self.alpha,
                               "beta": self.beta, "epsilon": self.epsilon, "q_mode": self.q_mode}
        return _with_guarantee(self, pub, self.n_buckets, n_min_public)

    def __repr__(self) -> str:
        hidden = ["accuracy_alpha", "bucketed"] if self.q_mode == "fixed" else [
            "q", "accuracy_alpha", "privacy", "bucketed"]
        return _public_repr(type(self).__name__, self.publishable(), hidden)
