"""Linear designs as sparse linear programs, solved without the modelling layer, with a valid upper bound.

Implements: core paper, eq. (9) for a linear utility over the polytope of Proposition 2 (eqs. (10)–(13)) —
the same forms as :mod:`.polytope` ("compact", "dual", "fixed", "finite", "ldp"; see its docstring and
``docs/design.md`` §9) — assembled directly as ``scipy.sparse`` matrices in the standard form

    ``max cᵀx  s.t.  row_lower ≤ A x ≤ row_upper,  lb ≤ x ≤ ub``

and handed to an LP backend (:mod:`.backends`) by :func:`~pml_design.design.linear.lp.solve_linear_design`. The marginal ``q = P̂ᵀP`` (and ``Q = ΠP`` for a finite set)
is substituted into the privacy rows instead of being a variable: each privacy row then holds one column
of P (N non-zeros) plus its auxiliaries, so the matrix has O(N·M) non-zeros and no extra equality rows.

Valid upper bound (weak duality with a priori bounds)
-----------------------------------------------------
For ANY row multipliers ``y`` (of either sign, however inaccurate) and any box ``lo ≤ x ≤ hi`` that contains
an optimal solution, every feasible ``x`` in the box satisfies

    ``cᵀx = yᵀ(Ax) + rᵀx ≤ Σ_i max(y_i row_lower_i, y_i row_upper_i) + Σ_j max(r_j lo_j, r_j hi_j)``,
    ``r = c − Aᵀy``,

(``y_i`` is set to 0 where the bound it needs is infinite). The box is ``[0, 1]`` for every variable: P is
row-stochastic; for any feasible P the column maximum ``t = max_x P``, the column minimum ``s = min_x P``
and the minimal knapsack multipliers ``η, ζ`` of the dual form (which lie in ``[0, 1]``) are feasible
auxiliaries (lowering t and raising s only relax the privacy rows). So the right-hand side, plus a
floating-point error bound on its own evaluation, is an upper bound on the optimum that holds regardless
of the solver's tolerance: an inaccurate ``y`` only makes it looser (:meth:`LinearProgram.valid_upper_bound`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..._validation import check_epsilon, check_finite_array
from ...uncertainty import as_uncertainty_set
from ..polytope import _center, resolve_form

__all__ = ["SPARSE_FORMS", "LinearProgram", "linear_design_lp"]

#: Forms the sparse builder assembles (the O(N³) "literal" transcription stays a cvxpy benchmark).
SPARSE_FORMS = ("fixed", "compact", "dual", "finite", "ldp")

_U = np.finfo(float).eps / 2  # unit roundoff


def _gamma(k: float) -> float:
    """Higham's ``γ_k = k u / (1 − k u)``: relative error bound of a k-term floating-point sum/dot product."""
    ku = k * _U
    return ku / (1.0 - ku)


@dataclass(frozen=True, eq=False)
class LinearProgram:
    """``max cᵀx  s.t.  row_lower ≤ A x ≤ row_upper,  lb ≤ x ≤ ub`` with a map to the mechanism.

    Attributes
    ----------
    c : numpy.ndarray, shape (n,)
        Objective (maximised).
    A : scipy.sparse.csr_matrix, shape (m, n)
    row_lower, row_upper : numpy.ndarray, shape (m,)
        Row bounds (``±inf`` for none; equal for an equality row).
    lb, ub : numpy.ndarray, shape (n,)
        Variable bounds that define the LP (``±inf`` for none).
    box_lower, box_upper : numpy.ndarray, shape (n,)
        Finite a priori bounds, inside ``[lb, ub]``, that contain an optimal solution (``[0, 1]`` here). A backend
        may impose them (same optimum); :meth:`valid_upper_bound` relies on them.
    shape : tuple of int
        ``(N, M)`` of the mechanism.
    blocks : dict of str to slice
        Where each variable block lives in x: ``"P"`` (row-major ``P[x, y]`` at ``x·M + y``), and the
        auxiliaries ``"t"``, ``"s"``, ``"eta"``, ``"zeta"`` of the form (empty for a sub-problem).
    form : str
    epsilon : float
    row_blocks : dict of str to slice
        Where the row-stochasticity rows are (``"rowsum"``, row x); used to tighten :meth:`valid_upper_bound`.
    """

    c: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    box_lower: np.ndarray
    box_upper: np.ndarray
    shape: tuple[int, int]
    blocks: dict = field(default_factory=dict)
    form: str = ""
    epsilon: float = 0.0
    row_blocks: dict = field(default_factory=dict)

    @property
    def n_vars(self) -> int:
        return int(self.A.shape[1])

    @property
    def n_rows(self) -> int:
        return int(self.A.shape[0])

    def mechanism(self, x: np.ndarray) -> np.ndarray:
        """The (N, M) mechanism block of a solution vector (a copy)."""
        return np.array(x[self.blocks["P"]], dtype=float).reshape(self.shape)

    def objective(self, x: np.ndarray) -> float:
        return float(self.c @ x)

    def valid_upper_bound(self, y: np.ndarray) -> float:
        """An upper bound on the LP optimum from any row multipliers ``y`` (weak duality; module docstring).

        Valid for every finite or non-finite ``y`` (non-finite entries count as 0) and whatever accuracy the
        solver reached; a floating-point error bound on this evaluation (Higham's γ_k for the sums) is added,
        so the returned float is ≥ the exact optimum.
        """
        y = np.array(y, dtype=float, copy=True).ravel()
        if y.shape != (self.n_rows,):
            raise ValueError(f"y must have {self.n_rows} entries (one per row), got shape {y.shape}")
        y[~np.isfinite(y)] = 0.0
        y[(y > 0) & ~np.isfinite(self.row_upper)] = 0.0
        y[(y < 0) & ~np.isfinite(self.row_lower)] = 0.0
        AT = self.A.T.tocsr()
        y = self._tighten(y, AT)
        rhs = np.where(y > 0, self.row_upper, np.where(y < 0, self.row_lower, 0.0))
        row_terms = np.where(y != 0, y * np.where(y != 0, rhs, 0.0), 0.0)
        r = self.c - AT @ y
        col_terms = np.maximum(r * self.box_lower, r * self.box_upper)
        value = float(row_terms.sum() + col_terms.sum())
        # rounding: r_j has error <= γ_{k_j+1} (|c_j| + (|A|ᵀ|y|)_j), times max |box_j|; the two final sums
        # (n + m terms, pairwise or sequential) have error <= γ_{n+m} Σ|terms|; products add one u each.
        k_max = float(np.diff(AT.indptr).max(initial=0)) + 2.0
        absA = abs(AT)
        r_err = _gamma(k_max) * (np.abs(self.c) + absA @ np.abs(y)) * np.maximum(np.abs(self.box_lower), np.abs(self.box_upper))
        terms = np.abs(row_terms).sum() + np.abs(col_terms).sum() + r_err.sum()
        slack = float(r_err.sum() + _gamma(self.n_vars + self.n_rows + 4) * terms)
        return value + 2.0 * slack

    def _tighten(self, y: np.ndarray, AT: sp.csr_matrix) -> np.ndarray:
        """Adjust y where that provably lowers the bound (the result is just another y: still valid).

        Adding ``δ_x = max_y r[x, y]`` (``r = c − Aᵀy``) to the multiplier of ``Σ_y P[x, y] = 1`` changes the
        bound by ``δ_x − Σ_y max(r[x, y], 0) ≤ 0``: the mechanism's part becomes the exact maximum of
        ``Σ_y r[x, y] P[x, y]`` over the simplex instead of over the box ``[0, 1]^M``.
        """
        if "P" not in self.blocks or "rowsum" not in self.row_blocks:
            return y
        n, m = self.shape
        r = self.c - AT @ y
        y[self.row_blocks["rowsum"]] += r[self.blocks["P"]].reshape(n, m).max(axis=1)
        return y

    def restrict(self, keep: np.ndarray) -> LinearProgram:
        """The LP with the variables outside ``keep`` (a boolean mask) fixed at 0 and removed.

        Every removed variable must allow 0 (``lb ≤ 0 ≤ ub``); the rows are kept, so the sub-problem's row
        multipliers are multipliers of the full LP (:meth:`valid_upper_bound` applies to them directly).
        """
        keep = np.asarray(keep, dtype=bool)
        if np.any((self.lb[~keep] > 0) | (self.ub[~keep] < 0)):
            raise ValueError("restrict: a removed variable cannot be fixed at 0")
        return LinearProgram(
            c=self.c[keep],
            A=self.A[:, keep].tocsr(),
            row_lower=self.row_lower,
            row_upper=self.row_upper,
            lb=self.lb[keep],
            ub=self.ub[keep],
            box_lower=self.box_lower[keep],
            box_upper=self.box_upper[keep],
            shape=self.shape,
            blocks={},
            form=self.form,
            epsilon=self.epsilon,
        )


def _coo(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return rows.ravel(), cols.ravel(), np.broadcast_to(vals, rows.shape).ravel().astype(float)


def linear_design_lp(uncertainty: object, epsilon: float, gain_weights: object, form: str = "auto") -> LinearProgram:
    """Assemble the linear design LP ``max Σ W ⊙ P over M(ε, 𝒫)`` as sparse matrices (no loops over constraints).

    Implements: core paper eq. (9) with a linear utility over Proposition 2 ("compact":
    ``(e^{−ε} + β/2) t_y ≤ P̂ᵀP_{·y} + (β/2) s_y``, ``s_y ≤ P_{xy} ≤ t_y``), the exact LP-duality form for any
    ℓ1 radius ("dual"), [15, Lemma 1] ("fixed"), Corollary 1 ("finite") and Remark 1 ("ldp"); the forms of
    :func:`~pml_design.design.build_polytope` with the marginals substituted.

    Parameters
    ----------
    uncertainty : UncertaintySet or array_like
    epsilon : float
        ε ≥ 0.
    gain_weights : array_like, shape (N, M)
        Objective coefficients ``W[x, y] = P̂(x) G[x, y]`` (:meth:`LinearUtility.weights`).
    form : str, default "auto"
        One of :data:`SPARSE_FORMS` or "auto" (:func:`~pml_design.design.polytope.default_form`).

    Returns
    -------
    LinearProgram
        Variables ``[vec(P) (row-major), t, s?, eta?, zeta?]``; all with the a priori box ``[0, 1]``.

    Raises
    ------
    ValueError
        Bad weights, an unknown form, "literal", or a form that does not apply to the set.
    """
    uset = as_uncertainty_set(uncertainty)
    eps = check_epsilon(epsilon)
    W = check_finite_array(gain_weights, "gain_weights", ndim=2)
    n = uset.size
    if W.shape[0] != n:
        raise ValueError(f"gain_weights has {W.shape[0]} rows but the uncertainty set has {n} symbols")
    m = W.shape[1]
    if m < 1:
        raise ValueError(f"gain_weights must have at least one column, got shape {W.shape}")
    form = resolve_form(uset, form)
    if form not in SPARSE_FORMS:
        raise ValueError(f"the sparse LP builder supports forms {SPARSE_FORMS}, got {form!r} (use the cvxpy path)")
    inv = float(np.exp(-eps))
    nm = n * m
    X, Y = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")  # (n, m)
    pidx = X * m + Y  # variable index of P[x, y]
    blocks = {"P": slice(0, nm)}
    nxt = nm

    def block(name: str, size: int) -> np.ndarray:
        nonlocal nxt
        blocks[name] = slice(nxt, nxt + size)
        nxt += size
        return np.arange(blocks[name].start, blocks[name].stop)

    t = block("t", m)
    needs_s = form in ("compact", "dual", "ldp")
    s = block("s", m) if needs_s else None
    if form == "dual":
        eta = block("eta", m)
        zeta = block("zeta", nm).reshape(n, m)

    R: list = []
    C: list = []
    V: list = []
    lo: list = []
    hi: list = []
    row0 = 0

    def add(rows: np.ndarray, cols: np.ndarray, vals: object) -> None:
        r, c_, v = _coo(rows, cols, np.asarray(vals, dtype=float))
        R.append(r)
        C.append(c_)
        V.append(v)

    def new_rows(count: int, lower: float, upper: float) -> int:
        nonlocal row0
        start = row0
        row0 += count
        lo.append(np.full(count, lower))
        hi.append(np.full(count, upper))
        return start

    # row-stochastic: Σ_y P[x, y] = 1
    r = new_rows(n, 1.0, 1.0)
    add(r + X, pidx, 1.0)
    row_blocks = {"rowsum": slice(r, r + n)}
    # column maximum: t_y − P[x, y] ≥ 0
    r = new_rows(nm, 0.0, np.inf) + pidx
    add(r, np.broadcast_to(t, (n, m)), 1.0)
    add(r, pidx, -1.0)
    if needs_s:  # column minimum: P[x, y] − s_y ≥ 0
        r = new_rows(nm, 0.0, np.inf) + pidx
        add(r, pidx, 1.0)
        add(r, np.broadcast_to(s, (n, m)), -1.0)

    def marginal_rows(dist: np.ndarray, t_coef: float, extra: list[tuple[np.ndarray, object]]) -> None:
        """Rows ``t_coef·t_y − Σ_x dist_x P[x, y] + Σ extra ≤ 0`` for every y (one per column)."""
        r0 = new_rows(m, -np.inf, 0.0)
        ry = r0 + np.arange(m)
        add(ry, t, t_coef)
        add(np.broadcast_to(ry, (n, m)), pidx, -np.broadcast_to(dist[:, None], (n, m)))
        for cols, vals in extra:
            add(np.broadcast_to(ry, cols.shape), cols, np.broadcast_to(np.asarray(vals, dtype=float), cols.shape))

    if form == "fixed":
        marginal_rows(_center(uset), inv, [])
    elif form == "compact":
        half = uset.radius / 2  # type: ignore[attr-defined]
        marginal_rows(uset.center, inv + half, [(s, -half)])  # type: ignore[attr-defined]
    elif form == "dual":
        half = uset.radius / 2  # type: ignore[attr-defined]
        p = uset.center  # type: ignore[attr-defined]
        marginal_rows(p, inv, [(eta, half), (zeta, np.broadcast_to(p[:, None], (n, m)))])
        # knapsack cover: eta_y + zeta[x, y] + s_y − P[x, y] ≥ 0
        r = new_rows(nm, 0.0, np.inf) + pidx
        add(r, np.broadcast_to(eta, (n, m)), 1.0)
        add(r, zeta, 1.0)
        add(r, np.broadcast_to(s, (n, m)), 1.0)
        add(r, pidx, -1.0)
    elif form == "finite":
        D = uset.distributions  # type: ignore[attr-defined]
        k = D.shape[0]
        r0 = new_rows(k * m, -np.inf, 0.0)
        K, Yk = np.meshgrid(np.arange(k), np.arange(m), indexing="ij")
        ry = r0 + K * m + Yk  # (k, m)
        add(ry, t[Yk], inv)
        rows3 = np.broadcast_to(ry[:, None, :], (k, n, m))
        add(rows3, np.broadcast_to(pidx[None], (k, n, m)), -np.broadcast_to(D[:, :, None], (k, n, m)))
    elif form == "ldp":
        r0 = new_rows(m, -np.inf, 0.0)
        ry = r0 + np.arange(m)
        add(ry, t, inv)
        add(ry, s, -1.0)

    nvar = nxt
    A = sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))), shape=(row0, nvar))
    A.sum_duplicates()
    A.eliminate_zeros()
    c = np.zeros(nvar)
    c[:nm] = W.ravel()
    lb = np.full(nvar, -np.inf)
    if not needs_s:  # with s: P ≥ s ≥ 0 implies P ≥ 0 (N·M fewer cone rows for an interior point solver)
        lb[:nm] = 0.0
    for name in ("eta", "zeta", "s"):
        if name in blocks:
            lb[blocks[name]] = 0.0
    return LinearProgram(
        c=c,
        A=A,
        row_lower=np.concatenate(lo),
        row_upper=np.concatenate(hi),
        lb=lb,
        ub=np.full(nvar, np.inf),
        box_lower=np.zeros(nvar),
        box_upper=np.ones(nvar),
        shape=(n, m),
        blocks=blocks,
        form=form,
        epsilon=eps,
        row_blocks=row_blocks,
    )
