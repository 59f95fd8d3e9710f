"""The problem builder: the mechanism polytope M(ε, 𝒫) as cvxpy constraints.

Implements: core paper, eq. (1) (ε-PML for every distribution of 𝒫), Proposition 2 (eqs. (10)–(13),
ℓ1 ball), Corollary 1 (finitely many extreme points), [15, Lemma 1] (fixed prior), Remark 1 (simplex =
ε-LDP); plus an exact LP-duality form for ℓ1 balls of any radius (outside Proposition 2's assumption).

Every form writes the constraint of Definition 5 column by column,

    ``max_x P(y|x) ≤ e^ε · min_{Q ∈ 𝒫} Q·P(y|·)``,

with O(N·M) constraints: auxiliary variables ``t_y ≥ P(y|x)`` (column maximum), ``s_y ≤ P(y|x)``
(column minimum) and the marginal ``q = P̂ᵀP`` kept as an M-vector (never broadcast into the N·M
constraints). The privacy parameter enters only through the parameter ``e^{−ε}`` (:attr:`inv_exp_eps`),
so one compiled problem can be re-solved for many ε (:meth:`MechanismPolytope.set_epsilon`).

Forms
-----
``"fixed"``    [15, Lemma 1]: ``e^{−ε} t ≤ q``.
``"compact"``  Proposition 2 (β < 2 min P̂): ``(e^{−ε} + β/2) t ≤ q + (β/2) s`` — Appendix D's form, i.e.
               eq. (10) with ε' of eq. (13), multiplied through.
``"dual"``     Any β ∈ [0, 2]: the inner ``min_Q Q·c`` is the fractional knapsack
               ``P̂·c − max{Σ_x w_x (c_x − s) : 0 ≤ w ≤ P̂, Σ w ≤ β/2}``; replacing the inner max by its LP
               dual ``min{(β/2) η + P̂·ζ : η + ζ_x ≥ c_x − s, η, ζ ≥ 0}`` gives
               ``e^{−ε} t ≤ q − (β/2) η − P̂ᵀζ`` with ``η + ζ_{x} ≥ P(·|x) − s`` (exact by strong duality).
``"finite"``   Corollary 1: ``e^{−ε} t ≤ π_kᵀ P`` for every listed distribution π_k.
``"ldp"``      Remark 1: ``e^{−ε} t ≤ s`` (ε-LDP).
``"literal"``  eq. (10) transcribed literally, ``p_ij ≤ e^{ε'} (Σ_i P̂_i p_ij + β/2 p_i'j)`` for all
               i, i', j with the marginal inlined: O(N³) non-zeros. For the benchmark only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from .._validation import check_epsilon, check_positive_int, fmt
from ..uncertainty import FiniteSet, L1Ball, Simplex, UncertaintySet, as_uncertainty_set
from .result import SolverFailedError
from .quiet import silent_solve

__all__ = ["FORMS", "MechanismPolytope", "build_polytope", "check_form", "default_form", "resolve_form"]

FORMS = ("fixed", "compact", "dual", "finite", "ldp", "literal")


def default_form(uset: UncertaintySet) -> str:
    """The exact, most compact form for an uncertainty set.

    Implements: the choice among the forms of the module docstring ([15, Lemma 1], Proposition 2, the dual form,
    Corollary 1, Remark 1).

    Parameters
    ----------
    uset : UncertaintySet
        An :class:`L1Ball`, :class:`FiniteSet` or :class:`Simplex`.

    Returns
    -------
    str
        ``"fixed"`` (ball of radius 0, one-point set), ``"compact"`` (ball in Proposition 2's regime), ``"dual"``
        (other balls), ``"finite"`` (several points) or ``"ldp"`` (simplex).

    Raises
    ------
    TypeError
        Any other set.
    """
    if isinstance(uset, L1Ball):
        if uset.radius == 0:
            return "fixed"
        return "compact" if uset.in_interior_regime else "dual"
    if isinstance(uset, FiniteSet):
        return "fixed" if uset.distributions.shape[0] == 1 else "finite"
    if isinstance(uset, Simplex):
        return "ldp"
    raise TypeError(f"no polytope form for uncertainty set {fmt(uset)}")


def check_form(form: object) -> str:
    """Validate a form name (``"auto"`` or one of :data:`FORMS`) without looking at a set.

    Implements: the form names of the module docstring (``docs/design.md`` §2).

    Parameters
    ----------
    form : object
        The ``form`` argument as given.

    Returns
    -------
    str
        ``form`` unchanged.

    Raises
    ------
    ValueError
        Not ``"auto"`` nor a name in :data:`FORMS`.
    """
    if not isinstance(form, str) or (form != "auto" and form not in FORMS):
        raise ValueError(f"form must be 'auto' or one of {FORMS}, got {form!r}")
    return form


def resolve_form(uset: UncertaintySet, form: object) -> str:
    """The form to build for ``uset``: ``"auto"`` → :func:`default_form`; else checked to apply to the set.

    Implements: the forms of the module docstring and their assumptions (Proposition 2: ``β < 2 min P̂``).

    Parameters
    ----------
    uset : UncertaintySet
        The uncertainty set 𝒫.
    form : object
        ``"auto"`` or a name in :data:`FORMS`.

    Returns
    -------
    str
        A name in :data:`FORMS` that applies to ``uset``.

    Raises
    ------
    ValueError
        For an unknown form, or one that does not apply to the set (``"compact"``/``"literal"`` outside
        Proposition 2's assumption ``β < 2 min P̂``, ``"finite"`` for a non-finite set, ...).
    """
    form = check_form(form)
    if form == "auto":
        return default_form(uset)
    if form in ("compact", "literal", "dual"):
        if not isinstance(uset, L1Ball):
            raise ValueError(f"form {form!r} applies to an L1Ball, got {fmt(uset)}")
        if form in ("compact", "literal") and not uset.in_interior_regime:
            raise ValueError(
                f"form {form!r} (Proposition 2) requires radius < 2 min(center) = {2 * uset.center.min()!r}, "
                f"got radius {uset.radius!r}; use form='dual' (exact for any radius)"
            )
    elif form == "finite" and not isinstance(uset, FiniteSet):
        raise ValueError(f"form 'finite' applies to a FiniteSet, got {fmt(uset)}")
    elif form == "fixed":
        _center(uset)
    return form


def _center(uset: UncertaintySet) -> np.ndarray:
    if isinstance(uset, L1Ball):
        return uset.center
    if isinstance(uset, FiniteSet) and uset.distributions.shape[0] == 1:
        return uset.distributions[0]
    raise ValueError(f"this form needs a single reference distribution, got {fmt(uset)}")


@dataclass
class MechanismPolytope:
    """M(ε, 𝒫) as cvxpy objects: add your own constraints and objective, then solve.

    Attributes
    ----------
    P : cvxpy.Variable, shape (N, M)
        The mechanism (rows = x, columns = y), non-negative.
    constraints : list of cvxpy constraints
        Row-stochasticity and the privacy constraints of the chosen form.
    inv_exp_eps : cvxpy.Parameter
        ``e^{−ε}``; change it with :meth:`set_epsilon` to re-solve for another ε without rebuilding.
    aux : dict
        Auxiliary variables (``t``, ``s``, ``q``, ``eta``, ``zeta``) of the form.
    """

    uncertainty: UncertaintySet
    epsilon: float
    form: str
    P: cp.Variable
    inv_exp_eps: cp.Parameter
    constraints: list = field(default_factory=list)
    aux: dict = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.P.shape)  # type: ignore[return-value]

    def set_epsilon(self, epsilon: float) -> None:
        """Set ε (updates the parameter ``e^{−ε}``; the literal form has ε baked in and refuses)."""
        eps = check_epsilon(epsilon)
        if self.form == "literal":
            raise ValueError("the literal form has epsilon baked in; rebuild it")
        self.epsilon = eps
        self.inv_exp_eps.value = float(np.exp(-eps))

    def problem(self, objective: cp.Expression, extra_constraints: list | None = None) -> cp.Problem:
        """``cp.Problem(cp.Maximize(objective), constraints + extra_constraints)``."""
        return cp.Problem(cp.Maximize(objective), self.constraints + list(extra_constraints or []))


def _col_max(P: cp.Variable, n: int, m: int) -> tuple[cp.Variable, list]:
    t = cp.Variable(m, name="t")
    return t, [P <= np.ones((n, 1)) @ cp.reshape(t, (1, m), order="C")]


def _col_min(P: cp.Variable, n: int, m: int) -> tuple[cp.Variable, list]:
    s = cp.Variable(m, nonneg=True, name="s")
    return s, [P >= np.ones((n, 1)) @ cp.reshape(s, (1, m), order="C")]


def build_polytope(
    uncertainty: object,
    epsilon: float,
    *,
    n_outputs: int | None = None,
    form: str = "auto",
) -> MechanismPolytope:
    """Build the linear constraints of ``M(ε, 𝒫)`` for a cvxpy problem.

    Implements: core paper, Proposition 2 (eqs. (10)–(13)) in compact O(N·M) form, Corollary 1,
    [15, Lemma 1], Remark 1; the ``"dual"`` form is exact for any ℓ1 radius (see module docstring).

    Parameters
    ----------
    uncertainty : UncertaintySet or array_like
        :class:`~pml_design.L1Ball`, :class:`~pml_design.FiniteSet`, :class:`~pml_design.Simplex`, or a prior.
    epsilon : float
        Privacy parameter ε ≥ 0.
    n_outputs : int, optional
        Output alphabet size M (default N; M ≤ N loses no sub-convex utility, [15, Theorem 1]).
    form : str, default "auto"
        One of :data:`FORMS` or "auto" (the exact compact form for the set, :func:`default_form`).

    Returns
    -------
    MechanismPolytope

    Raises
    ------
    ValueError
        For an unknown form, or a form that does not apply to the set (e.g. ``"compact"``/``"literal"``
        outside Proposition 2's assumption ``β < 2 min P̂`` — use ``"dual"``).
    """
    uset = as_uncertainty_set(uncertainty)
    eps = check_epsilon(epsilon)
    n = uset.size
    m = n if n_outputs is None else check_positive_int(n_outputs, "n_outputs")
    form = resolve_form(uset, form)

    P = cp.Variable((n, m), nonneg=True, name="P")
    inv = cp.Parameter(nonneg=True, value=float(np.exp(-eps)), name="inv_exp_eps")
    cons: list = [cp.sum(P, axis=1) == 1]
    aux: dict = {}

    if form == "literal":
        beta = uset.radius
        eps_p = float(np.log(np.exp(eps) / (1 + beta / 2 * np.exp(eps))))  # eq. (13)
        marg = uset.center @ P  # inlined in every constraint below (the O(N^3) transcription)
        for ip in range(n):
            rhs = np.exp(eps_p) * (np.ones((n, 1)) @ cp.reshape(marg + beta / 2 * P[ip, :], (1, m), order="C"))
            cons.append(P <= rhs)
        return MechanismPolytope(uset, eps, form, P, inv, cons, aux)

    t, c_t = _col_max(P, n, m)
    cons += c_t
    aux["t"] = t
    if form == "fixed":
        q = cp.Variable(m, name="q")
        cons += [q == _center(uset) @ P, inv * t <= q]
        aux["q"] = q
    elif form == "compact":
        beta = uset.radius
        s, c_s = _col_min(P, n, m)
        q = cp.Variable(m, name="q")
        cons += c_s + [q == uset.center @ P, (inv + beta / 2) * t <= q + beta / 2 * s]
        aux.update(s=s, q=q)
    elif form == "dual":
        beta = uset.radius
        s, c_s = _col_min(P, n, m)
        q = cp.Variable(m, name="q")
        eta = cp.Variable(m, nonneg=True, name="eta")
        zeta = cp.Variable((n, m), nonneg=True, name="zeta")
        ones = np.ones((n, 1))
        cons += c_s + [
            q == uset.center @ P,
            ones @ cp.reshape(eta + s, (1, m), order="C") + zeta >= P,
            inv * t <= q - beta / 2 * eta - uset.center @ zeta,
        ]
        aux.update(s=s, q=q, eta=eta, zeta=zeta)
    elif form == "finite":
        k = uset.distributions.shape[0]
        Q = cp.Variable((k, m), name="Q")
        cons += [Q == uset.distributions @ P, np.ones((k, 1)) @ cp.reshape(inv * t, (1, m), order="C") <= Q]
        aux["Q"] = Q
    elif form == "ldp":
        s, c_s = _col_min(P, n, m)
        cons += c_s + [inv * t <= s]
        aux["s"] = s
    return MechanismPolytope(uset, eps, form, P, inv, cons, aux)


_OK = (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)


def _solve(prob: cp.Problem, solver: str, options: dict, at: str = "") -> float:
    """Solve a cvxpy design problem; return the solve time (s). ``at`` (e.g. " at epsilon=0.5") goes into errors.

    Raises :class:`~pml_design.design.result.SolverFailedError` on a solver error or a status other than
    optimal / optimal_inaccurate (never a half-solved problem).
    """
    opts = dict(options)
    if solver == "CLARABEL":
        opts.setdefault("direct_solve_method", "qdldl")
    t0 = time.perf_counter()
    try:
        silent_solve(prob, solver=solver, **opts)
    except cp.error.SolverError as exc:
        raise SolverFailedError(f"solver {solver} failed{at}: {exc}", str(prob.status)) from exc
    elapsed = time.perf_counter() - t0
    if prob.status not in _OK:
        raise SolverFailedError(f"the design problem{at} was not solved", str(prob.status))
    return elapsed
