"""Optimal mechanism design under PML for a set of distributions.

Implements: core paper, eq. (9) (``max U(P_{Y|X}, P̂_X)`` over ``M(ε, B_β(P̂_X))``), Proposition 2 and
Corollary 1 (the feasible polytope, :mod:`.polytope`), [15, Theorem 6] (exact sub-convex design by the
extreme-ray LP, :mod:`.exact` over the rays of :mod:`.rays`; column generation for large alphabets,
:mod:`.scalable`), and the certification of every result (:mod:`.certify`).

Entry point: :func:`design` (:mod:`.api`).

Where things are
----------------
* :mod:`.api` — :func:`design`: validation and dispatch;
* :mod:`.polytope` — ``M(ε, 𝒫)`` as cvxpy constraints (Proposition 2, Corollary 1, [15, Lemma 1], Remark 1);
* :mod:`.linear` (``lp_model``, ``lp``, ``backends``) — linear designs as sparse LPs with a valid bound;
* :mod:`.rays`, :mod:`.exact` — the extreme rays and [15, Theorem 6]'s ray LP (:func:`solve_ray_lp`,
  :func:`ray_lp_upper_bound`);
* :mod:`.scalable` (with ``ball_pricing``, ``ball_column_bound``), :mod:`.anytime` — column generation on that LP
  (anytime, bounded; outside Proposition 2: nested-pair pricing and the best-column bound);
* :mod:`.estimation` — the frequency-estimation (A/D-optimal) design;
* :mod:`.tradeoff` — utility–privacy curves; :mod:`.certify`, :mod:`.result` — certification and results;
  :mod:`.disclosure` — what a design discloses (outputs that single out an input, largest posteriors);
  :mod:`.utilities` — utility functions.
"""

from __future__ import annotations

from .api import DEFAULT_SOLVER, design
from .linear.backends import BACKENDS as LP_BACKENDS
from .linear.backends import LPSolution, register_backend
from .certify import CERT_TOL, Certificate, CertificationError, certified_result, certify, clean_matrix
from .exact import ray_lp_upper_bound, solve_ray_lp
from .linear.lp import LinearProgram, linear_design_lp, solve_linear_design, use_sparse_path
from .polytope import FORMS, MechanismPolytope, build_polytope, check_form, default_form
from .rays import (
    AUTO_EXACT_SIZE,
    AUTO_EXACT_SIZE_GENERIC,
    MAX_EXACT_SIZE,
    RayEnumerationError,
    enumerate_rays,
    in_cone,
    l1_ball_rays,
    rays_cdd,
)
from .result import DesignResult, PMLDesignWarning, SolverFailedError
from .tradeoff import tradeoff_curve
from .utilities import (
    ChiSquareInformation,
    ConcaveUtility,
    FrequencyEstimation,
    LinearUtility,
    MapAccuracy,
    MutualInformation,
    SubConvexUtility,
    TotalVariationInformation,
    Utility,
    as_utility,
    distortion_gain,
    hamming_gain,
)

__all__ = [
    "CERT_TOL",
    "FORMS",
    "Certificate",
    "CertificationError",
    "ChiSquareInformation",
    "ConcaveUtility",
    "FrequencyEstimation",
    "DEFAULT_SOLVER",
    "DesignResult",
    "LPSolution",
    "LP_BACKENDS",
    "LinearProgram",
    "LinearUtility",
    "MapAccuracy",
    "MechanismPolytope",
    "MutualInformation",
    "PMLDesignWarning",
    "SolverFailedError",
    "SubConvexUtility",
    "TotalVariationInformation",
    "Utility",
    "as_utility",
    "build_polytope",
    "certified_result",
    "certify",
    "clean_matrix",
    "default_form",
    "design",
    "distortion_gain",
    "enumerate_rays",
    "hamming_gain",
    "in_cone",
    "l1_ball_rays",
    "linear_design_lp",
    "RayEnumerationError",
    "rays_cdd",
    "ray_lp_upper_bound",
    "register_backend",
    "solve_ray_lp",
    "tradeoff_curve",
]
