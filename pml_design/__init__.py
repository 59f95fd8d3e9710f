"""pml_design: privacy mechanism design with context-aware guarantees.

Flat public API: ``import pml_design as pml; pml.design(...)``. The names are imported lazily (PEP 562): ``import
pml_design`` loads no numerical stack, and ``pml.design`` imports :mod:`pml_design.design` (and cvxpy) on first
use. Module map — *core paper* = Grosse, Saeidian, Oechtering, Skoglund, "Privacy Mechanism Design based on
Empirical Distributions"; *histogram paper* = "PML guarantees of Laplace histograms"; *flexible paper* =
"Flexible accuracy for differential privacy". The layers and the direction of their imports are in
``docs/architecture.md``.

==============================  =====================================================================
module                          implements
==============================  =====================================================================
``leakage``                     core §II-A: Theorem 1, Definitions 2–4 (ε_min, (ε,δ) tail, regions)
``estimation``                  core §II-B, §III: eq. (3), φ, κ, Theorem 2, eq. (7) (corrected)
``uncertainty``                 core §IV: L1Ball / FiniteSet / Simplex, Definitions 5–6 (exact)
``bounds``                      core §IV: Theorems 3–4, Corollaries 2–3, eq. (8)
``mechanisms``                  Mechanism object; Theorem 5, RR, extremal mechanisms; LDP baselines and
                                frequency oracles (GRR, OUE, OLH, subset selection, HR; estimation MSE)
``design``                      core §V: Proposition 2 polytope, eq. (9), [15, Thm 6], certification;
                                ``design.scalable``: column generation for large alphabets
``pipeline``                    core Fig. 1 / §IV-D: samples → (ε, δ)-PML design, and back
``deploy``                      mechanism files (``file``), DataFrames (``dataframe``), streamed CSV /
                                Parquet (``streaming``, the CLI's engine)
``additive``                    core §VI: binary Laplace (``laplace``: Prop. 3, eq. (16)) and Gaussian
                                (``gaussian``: eq. (17)); samplers (``release``); Adult (``adult``)
``histogram``                   histogram paper: eq. (1)–(2), calibration (``bounds``), release
                                (``release``), exact leakage (``exact``)
``flexible``                    flexible paper: STLap, BucketHist, distances, accounting, baselines
``datasets``                    the bundled UCI Adult data
``sweep``                       joblib sweeps (local, Dask, Ray) with per-task SeedSequence seeds
``progress``                    progress bars (``PML_DESIGN_NO_PROGRESS`` turns them off)
``cli``                         the ``pml-design`` command (one module per subcommand)
==============================  =====================================================================
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: The flat API: submodule (relative to ``pml_design``) -> the names it provides here.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "leakage": (
        "PrivacyRegions", "epsilon_max", "epsilon_min", "leakage", "leakage_tail", "output_distribution",
        "privacy_region", "privacy_regions",
    ),
    "estimation": (
        "counts_distribution", "empirical_distribution", "kappa", "l1_deviation_delta", "l1_radius", "phi",
        "samples_needed",
    ),
    "uncertainty": (
        "FiniteSet", "L1Ball", "Simplex", "UncertaintySet", "leakage_capacity", "leakage_sensitivity",
        "max_divergence_shift", "max_posterior", "worst_case_distribution",
    ),
    "bounds": (
        "capacity_bound", "corollary2_bound", "delta_min", "epsilon_prime", "lipschitz_constant",
        "sensitivity_bound",
    ),
    "mechanisms": (
        "FrequencyEstimate", "FrequencyOracle", "LdpComparison", "Mechanism", "binary_ldp", "binary_optimal",
        "compare_with_ldp", "estimation_mse", "first_region_mechanism", "grr", "hadamard_response", "k_singular",
        "olh", "optimal_ldp", "oue", "randomized_response", "randomized_response_for_pml", "subset_selection",
        "theorem5_binary", "uniform_optimal",
    ),
    "design": (
        "ChiSquareInformation", "ConcaveUtility", "DesignResult", "FrequencyEstimation", "LinearProgram",
        "LinearUtility", "MapAccuracy", "MutualInformation", "PMLDesignWarning", "SolverFailedError",
        "SubConvexUtility", "TotalVariationInformation", "build_polytope", "certify", "design", "linear_design_lp",
    ),
    "pipeline": (
        "DisclosureWarning", "EstimatedDesign", "PmlStatement", "delta_for_epsilon", "design_from_samples",
        "guarantee_for_mechanism",
    ),
    "cohort": ("combined_estimate", "design_from_reports"),
    "deploy": (
        "MechanismFileError", "MechanismFileWarning", "OutputFileError", "load_mechanism", "privatize_dataframe",
        "save_mechanism", "split_file",
    ),
    "additive": (
        "binary_decision", "empirical_mutual_information", "gaussian_delta1", "gaussian_mechanism",
        "gaussian_pml_guarantee", "laplace_ldp_scale", "laplace_mechanism", "laplace_pml_epsilon",
        "laplace_pml_epsilon_estimated", "laplace_scale_for", "pldp_gaussian_sigma",
    ),
    "histogram": (
        "HistogramGuarantee", "alpha_from_estimate", "histogram_counts", "histogram_dp_epsilon",
        "histogram_dp_scale_for", "histogram_guarantee_from_estimate", "histogram_guarantee_from_samples",
        "histogram_pml_epsilon", "histogram_pml_epsilon_composition", "histogram_pml_epsilon_relaxed",
        "histogram_scale_for", "laplace_histogram", "release_histogram", "total_variation_distance",
    ),
    "datasets": (
        "AdultData", "load_adult",
    ),
    "sweep": (
        "SweepResult", "grid", "sweep", "task_seed",
    ),
}

#: Submodules reachable as attributes (``pml.histogram``), imported on first access like the names above.
_SUBMODULES: frozenset[str] = frozenset({
    "additive", "bounds", "cli", "datasets", "deploy", "design", "estimation", "flexible", "histogram", "leakage",
    "cohort", "mechanisms", "pipeline", "priors", "progress", "sweep", "uncertainty",
})

_MODULE_OF: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}

#: Names of the flat API that are also submodule names (``design``, ``leakage``, ``sweep``): the function wins.
_SHADOWED: frozenset[str] = frozenset(_MODULE_OF) & _SUBMODULES

__all__ = sorted([*_MODULE_OF, "flexible"], key=str.lower)

if TYPE_CHECKING:  # the same names for type checkers and IDEs (tests/test_architecture.py checks both agree)
    from . import flexible
    from .leakage import (
        PrivacyRegions,
        epsilon_max,
        epsilon_min,
        leakage,
        leakage_tail,
        output_distribution,
        privacy_region,
        privacy_regions,
    )
    from .estimation import (
        counts_distribution,
        empirical_distribution,
        kappa,
        l1_deviation_delta,
        l1_radius,
        phi,
        samples_needed,
    )
    from .uncertainty import (
        FiniteSet,
        L1Ball,
        Simplex,
        UncertaintySet,
        leakage_capacity,
        leakage_sensitivity,
        max_divergence_shift,
        max_posterior,
        worst_case_distribution,
    )
    from .bounds import (
        capacity_bound,
        corollary2_bound,
        delta_min,
        epsilon_prime,
        lipschitz_constant,
        sensitivity_bound,
    )
    from .mechanisms import (
        FrequencyEstimate,
        FrequencyOracle,
        LdpComparison,
        Mechanism,
        binary_ldp,
        binary_optimal,
        compare_with_ldp,
        estimation_mse,
        first_region_mechanism,
        grr,
        hadamard_response,
        k_singular,
        olh,
        optimal_ldp,
        oue,
        randomized_response,
        randomized_response_for_pml,
        subset_selection,
        theorem5_binary,
        uniform_optimal,
    )
    from .design import (
        ChiSquareInformation,
        ConcaveUtility,
        DesignResult,
        FrequencyEstimation,
        LinearProgram,
        LinearUtility,
        MapAccuracy,
        MutualInformation,
        PMLDesignWarning,
        SolverFailedError,
        SubConvexUtility,
        TotalVariationInformation,
        build_polytope,
        certify,
        design,
        linear_design_lp,
    )
    from .pipeline import (
        DisclosureWarning,
        EstimatedDesign,
        PmlStatement,
        delta_for_epsilon,
        design_from_samples,
        guarantee_for_mechanism,
    )
    from .cohort import combined_estimate, design_from_reports
    from .deploy import (
        MechanismFileError,
        MechanismFileWarning,
        OutputFileError,
        load_mechanism,
        privatize_dataframe,
        save_mechanism,
        split_file,
    )
    from .additive import (
        binary_decision,
        empirical_mutual_information,
        gaussian_delta1,
        gaussian_mechanism,
        gaussian_pml_guarantee,
        laplace_ldp_scale,
        laplace_mechanism,
        laplace_pml_epsilon,
        laplace_pml_epsilon_estimated,
        laplace_scale_for,
        pldp_gaussian_sigma,
    )
    from .histogram import (
        HistogramGuarantee,
        alpha_from_estimate,
        histogram_counts,
        histogram_dp_epsilon,
        histogram_dp_scale_for,
        histogram_guarantee_from_estimate,
        histogram_guarantee_from_samples,
        histogram_pml_epsilon,
        histogram_pml_epsilon_composition,
        histogram_pml_epsilon_relaxed,
        histogram_scale_for,
        laplace_histogram,
        release_histogram,
        total_variation_distance,
    )
    from .datasets import AdultData, load_adult
    from .sweep import SweepResult, grid, sweep, task_seed


def __getattr__(name: str) -> Any:
    """Import a name of the flat API (or a submodule) on first access (PEP 562) and cache it here."""
    module = _MODULE_OF.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | (_SUBMODULES - {n for n in _SUBMODULES if n.startswith("_")}))


def _mirror_submodule(function: Any, module: types.ModuleType, attr: str) -> None:
    """Bind ``module``'s submodule ``attr`` (if it is one) on the ``function`` that shadows ``module`` too.

    The submodule is taken from ``sys.modules``: a package may bind a *name* over its submodule of the same name
    (``pml_design.design.certify`` is the function ``certify``), the import system still needs the module.
    """
    sub = sys.modules.get(f"{module.__name__}.{attr}")
    if isinstance(sub, types.ModuleType) and function.__dict__.get(attr) is not sub:
        if attr not in function.__dict__ and hasattr(function, attr):
            return  # a built-in attribute of functions (never a module name of ours; kept)
        function.__dict__[attr] = sub


class _ShadowedModule(types.ModuleType):
    """Type of a submodule shadowed by a function of the flat API (:mod:`pml_design.design`).

    ``import pml_design.design.scalable as s`` resolves ``pml_design.design`` *by attribute*, i.e. to the
    function ``pml.design``; so every submodule bound on the module is bound on the function too
    (``pml.design.scalable`` is the module).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        function = self.__dict__.get(self.__name__.rsplit(".", 1)[1])
        if callable(function) and not isinstance(function, types.ModuleType):
            _mirror_submodule(function, self, name)


class _Package(types.ModuleType):
    """The package's module type: keeps ``pml.design`` (and ``leakage``, ``sweep``) the function of the flat API.

    Importing a submodule binds it as an attribute of its package, so importing :mod:`pml_design.design`
    (which any design does) would otherwise replace the function ``pml.design`` by the module. The function
    gets the module's submodules as attributes (see :class:`_ShadowedModule`), so ``import
    pml_design.design.<module>`` works in every form.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            module, value = value, getattr(value, name)
            for attr in list(vars(module)):
                _mirror_submodule(value, module, attr)
            if type(module) is types.ModuleType:
                module.__class__ = _ShadowedModule
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
