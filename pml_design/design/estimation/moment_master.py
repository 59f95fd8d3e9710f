"""The diagonal-moment relaxation's master (docs/design.md §7.3): its spectral derivatives and interior-point method.

Implements: the relaxed master ``max 2 tr Q^½ + g·1 − ν·1`` subject to ``Σ_x g_x r_x² ≤ ν·r`` on a pool of rays
(``Q = A₀ᵀ Diag(g) A₀``, :func:`.moment_bound.frame`), by a primal–dual interior-point method with the Hessian of
``2 tr Q^½`` from Daleckii–Krein divided differences (exact, or by quadrature from :data:`QUADRATURE_MIN_N`
symbols on), and its reduction to classes of interchangeable symbols (:func:`_class_master`, docs/design.md §7.7).
:mod:`.moment_bound` runs the rounds, the pricing and the valuation; nothing here is a bound by itself.
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.linalg

from .coordinate_bound import SOLVE_RATE, _relaxed_master, _relaxed_master_ipm, _to_boundary
from .symmetry import SymbolClasses

#: The relaxed master's interior-point method: most Newton steps per solve, relative duality gap, and stationarity
#: residual (relative to the gradient) at which it stops.
NEWTON_STEPS: int = 80
MASTER_TOL: float = 1e-4
STATIONARY_TOL: float = 1e-7
#: The class master's stationarity residual (docs/design.md §7.7): with g ≥ 0 a class's g can sit on its floor, and
#: there the residual stalls near 2·10⁻⁷ of the gradient while the gap falls to 10⁻³⁰ (Adult ε = 0.5, value settled
#: to 10 digits); the N-dimensional master on the same pool meets 10⁻⁷.
CLASS_STATIONARY_TOL: float = 1e-5
#: First complementarity target (× |objective| / constraints), from the coordinate optimum.
MU_START: float = 1e-2
#: Centring σ of the primal–dual steps (each aims at σ × the current mean complementarity).
CENTRED: float = 0.1
#: Keep ``g ≥ −G_FLOOR·max g_start`` in the master (0: g ≥ 0; inf: free). Free g is the exact dual, but its optimum puts
#: a large negative weight on a dominant symbol (Adult: g = −4 901 at π = 0.91), whose concave term the mass cells
#: bound poorly; g ≥ 0 loses a little of the relaxation (docs/design.md §7.3) and the branch and bound closes.
G_FLOOR: float = 0.0
#: Solve a master the interior-point method of the coordinate relaxation fails on by cvxpy instead. Off in the
#: background process of :mod:`.parallel_bound`: a solver whose thread pool the parent started (Clarabel's) hangs
#: in a forked child.
CVXPY_FALLBACK: bool = True
#: Primal steps keep at least this share of the smallest eigenvalue of Q.
BOUNDARY: float = 0.1
#: From this many symbols on, the Hessian of ``2 tr Q^½`` (diagonal relaxation) is a quadrature of Hadamard squares,
#: ``N³`` per node instead of the ``N⁴/2`` of the exact divided-difference sum (:func:`_hessian_quadrature`). At
#: N = 300: 0.055 s against 0.30 s a Newton step, relative error 4e-8; equal cost near N = 100.
QUADRATURE_MIN_N: int = 150
#: The quadrature's step in ``log t`` and its truncation: the left tail is cut where it holds ``QUAD_TAIL`` of the
#: smallest divided difference, the right one where ``e^{−t(√λ_i+√λ_j)} ≤ e^{−QUAD_RIGHT}``.
QUAD_STEP: float = 0.5
QUAD_TAIL: float = 1e-10
QUAD_RIGHT: float = 50.0


def _q_matrix(g, A0, y=None, h=None, d=None, s=0.0):
    """``Q = A₀ᵀ Z A₀`` with ``Z = Diag(g)``, plus the arrow row ``e_h yᵀ + y e_hᵀ`` when ``y`` is given, plus
    ``s ddᵀ`` when ``d`` is given (the rank-one moment)."""
    Q = (A0 * g[:, None]).T @ A0
    if y is not None:
        c = A0.T @ y
        Q = Q + np.outer(A0[h], c) + np.outer(c, A0[h])
    if d is not None and s:
        c = A0.T @ d
        Q = Q + s * np.outer(c, c)
    return Q


def _t_derivatives(g, A0, mu=0.0, hessian=True, y=None, h=None, d=None, s=0.0):
    """``T = 2 tr Q^½`` (``Q = A₀ᵀ Z A₀``, ``Z = Diag(g)`` or with the arrow row of ``y``), ``log det Q``, the
    gradient of ``T + μ log det Q`` in g (and in ``y`` without its entry h, after g), and (optionally) the Hessian of
    ``−T − μ log det Q``, from one eigendecomposition (Daleckii–Krein: the second derivative of ``tr f(Q)`` along
    ``dQ`` is ``Σ_ij f'[λ_i, λ_j] (Vᵀ dQ V)_ij²``, divided differences of ``f'``; from
    :data:`QUADRATURE_MIN_N` symbols on, without the arrow row, by :func:`_hessian_quadrature`). With ``d`` the
    rank-one weight s is one more parameter, after g: its direction ``A₀ᵀd`` is one more row of ``P`` (``Pᵀd``)."""
    w, V = np.linalg.eigh(_q_matrix(g, A0, y, h, d, s))
    if w.min() <= 0:
        return None
    sw = np.sqrt(w)
    P = A0 @ V  # row x: Vᵀ a_x
    if d is not None:
        P = np.vstack([P, d @ P])  # dQ/ds = (A₀ᵀd)(A₀ᵀd)ᵀ: its row Vᵀ A₀ᵀ d
    T, logdet = 2.0 * float(sw.sum()), float(np.log(w).sum())
    f1 = 1.0 / sw + mu / w
    grad = (P * P) @ f1  # a_xᵀ (Q^{-1/2} + μQ⁻¹) a_x (and the rank-one direction's)
    others = None
    if y is not None:  # dQ/dy_x = a_h a_xᵀ + a_x a_hᵀ
        others = np.delete(np.arange(g.size), h)
        grad = np.concatenate([grad, 2.0 * (P[others] * P[h]) @ f1])
    if not hessian:
        return T, logdet, grad, None, float(w.min())
    if y is None and g.size >= QUADRATURE_MIN_N:
        return T, logdet, grad, _hessian_quadrature(P, sw, w, mu), float(w.min())
    # −f'[λ_i, λ_j] of λ^{-1/2} is 1/(√λ_i √λ_j (√λ_i + √λ_j)); that of −μ log det is μ/(λ_i λ_j)
    K = 1.0 / (np.outer(sw, sw) * (sw[:, None] + sw[None, :])) + mu / np.outer(w, w)
    iu = np.triu_indices(w.size)
    Z = P[:, iu[0]] * P[:, iu[1]]
    if y is not None:
        Z = np.vstack([Z, P[h, iu[0]] * P[others][:, iu[1]] + P[others][:, iu[0]] * P[h, iu[1]]])
    H = (Z * (np.where(iu[0] == iu[1], 1.0, 2.0) * K[iu])) @ Z.T
    return T, logdet, grad, H, float(w.min())


def _hessian_quadrature(P: np.ndarray, sw: np.ndarray, w: np.ndarray, mu: float) -> np.ndarray:
    """The Hessian of ``−2 tr Q^½ − μ log det Q`` in g (diagonal relaxation), ``H_xy = Σ_ij K_ij c_i c_j`` with
    ``c = (Vᵀa_x)∘(Vᵀa_y)`` (rows of ``P = A₀V``), in ``O(N³)`` per quadrature node.

    Implements: the Daleckii–Krein sum of :func:`_t_derivatives` (docs/design.md §7.3) with the divided difference
    ``1/(√λ_i √λ_j (√λ_i + √λ_j)) = ∫_0^∞ f_i(t) f_j(t) dt``, ``f_i(t) = e^{−t√λ_i}/√λ_i``, by the trapezoid rule in
    ``log t``: ``H ≈ Σ_k h t_k M_k∘M_k + μ M_μ∘M_μ``, ``M_k = P Diag(f(t_k)) Pᵀ``, ``M_μ = P Diag(1/λ) Pᵀ``. The
    integrand in ``log t`` is analytic in a strip of half-width π/2, so the rule converges geometrically (step 0.5:
    relative error ~1e-8 on every entry); each term is a Hadamard square of a PSD matrix, so H stays PSD (Schur).
    Only the Newton direction uses it; the gradient and every value are exact.
    """
    lo = math.log(QUAD_TAIL / (2.0 * float(sw.max())))
    hi = math.log(QUAD_RIGHT / (2.0 * float(sw.min())))
    H = np.zeros((P.shape[0], P.shape[0]))
    for tau in np.arange(lo, hi + QUAD_STEP, QUAD_STEP):
        t = math.exp(tau)
        S = P * np.sqrt(np.exp(-t * sw) / sw)
        M = S @ S.T
        H += (QUAD_STEP * t) * (M * M)
    if mu:
        S = P / np.sqrt(w)
        M = S @ S.T
        H += mu * (M * M)
    return H


def _master(R: np.ndarray, pi: np.ndarray, A0: np.ndarray, deadline: float, h: int | None = None,
            direction: np.ndarray | None = None):
    """The relaxed master's dual over the pool ``R`` by a primal–dual interior-point method; (value, θ, g, ν, y) or
    None (``y`` None unless ``h`` is given: then ``Z = Diag(g) + e_h yᵀ + y e_hᵀ``, the arrow relaxation, with
    ``y_h = 0``; the slacks are ``ν·r − rᵀZr`` and the objective's linear part ``1ᵀZ1 − ν·1``).

    Implements: ``max J = 2 tr (A₀ᵀ Diag(g) A₀)^½ + g·1 − ν·1`` subject to ``a_k = ν·r_k − Σ_x g_x r_xk² ≥ 0`` on
    every pool ray (docs/design.md §7.3; g has either sign, only ``Q = A₀ᵀ Diag(g) A₀ ≻ 0`` matters). The primal
    weights θ are the constraints' multipliers; each Newton step solves ``(H_T + Aᵀ Diag(θ/a) A) dz = ∇J + Aᵀ(σμ/a)``
    (2N unknowns; ``H_T`` the Hessian of ``−2 tr Q^½`` by Daleckii–Krein), separate primal and dual steps, the
    primal one also keeping ``λ_min(Q)`` above :data:`BOUNDARY` of its value (``2 tr Q^½`` is not self-concordant).
    It starts from the coordinate relaxation's optimum over the same pool (:mod:`.coordinate_bound`; g > 0 there, so
    Q ≻ 0; warm starts from the last round took 26–79 steps against 20 at N = 100), moved towards the central path
    by ``ν += tπ`` (every pool ray has ``π·r = 1``: all slacks grow by t). With ``d`` (the rank-one moment): one more
    unknown s (either sign) after g, ``Z = Diag(g) + s ddᵀ`` (``d = direction``); then the result has a sixth entry, s.
    """
    n, k = R.shape
    S = R * R
    sol = _relaxed_master_ipm(R, (1.0 - pi) ** 2, pi, deadline)
    # cvxpy's solve of the same, the coordinate bound's own fallback; its compile and set-up ignore the time
    # limit, so it is started only when 1.5 × its expected time is left
    if sol is None and CVXPY_FALLBACK and deadline - time.perf_counter() > 1.5 * R.size / SOLVE_RATE:
        sol = _relaxed_master(R, (1.0 - pi) ** 2, deadline)
    if sol is not None:
        start = (sol[2], sol[3])
    else:  # g > 0 (Q ≻ 0) and ν = tπ with every slack t − g·r² positive
        g = 1.0 / S.max(axis=1)
        start = (g, (2.0 * float((g @ S).max()) + 1.0) * pi)
    arrow = h is not None
    others = np.delete(np.arange(n), h) if arrow else np.zeros(0, int)
    dvec = direction
    one = 1 if dvec is not None else 0
    mz = n + others.size + one  # Z's parameters: g, then y without its entry h, or s
    g0 = np.asarray(start[0], dtype=float)
    s0 = [0.0] if one else []  # s has either sign (the bound binds dᵀXd ≥ E(d·r)² along F's top eigenvector)
    z = np.concatenate([g0, np.zeros(others.size), s0, np.asarray(start[1], dtype=float)])
    A = np.hstack([-S.T, -2.0 * (R[others] * R[h]).T if arrow else np.zeros((k, 0)),
                   -((dvec @ R) ** 2)[:, None] if one else np.zeros((k, 0)), R.T])  # slacks a = A·z

    def tder(zz):
        if one:
            return _t_derivatives(zz[:n], A0, d=dvec, s=float(zz[n]))
        if not arrow:
            return _t_derivatives(zz[:n], A0)
        yy = np.zeros(n)
        yy[others] = zz[n:mz]
        return _t_derivatives(zz[:n], A0, y=yy, h=h)

    lin = np.concatenate([np.ones(n), np.full(others.size, 2.0), [float(dvec.sum()) ** 2] if one else [],
                          -np.ones(n)])  # ∇(1ᵀZ1 − ν·1)
    out = _ipm(z, A, lin, tder, mz, pi, deadline)
    if out is None:
        return None
    J, th, z = out
    y = None
    if arrow:
        y = np.zeros(n)
        y[others] = z[n:mz]
    if one:
        return J, th, z[:n], z[mz:], y, float(z[n])
    return J, th, z[:n], z[mz:], y


def _ipm(z: np.ndarray, A: np.ndarray, lin: np.ndarray, tder, mz: int, shift: np.ndarray, deadline: float,
         stationary: float = STATIONARY_TOL):
    """The primal–dual interior-point method of :func:`_master` from ``z`` (g first, ``mz`` of them with the
    rows' other parameters, then ν): ``max T(z) + lin·z`` subject to ``A z ≥ 0`` (one row per pool ray) and, with
    :data:`G_FLOOR` finite, ``g ≥ −floor``; ``tder(z)`` gives T's value, gradient, Hessian (of −T) and the smallest
    eigenvalue of Q, or None outside ``Q ≻ 0``; ``ν += t·shift`` raises every ray's slack by t; ``stationary`` is the
    relative stationarity residual at which it stops (with the gap). (J, θ, z) or None.
    """
    nrays = A.shape[0]
    n = shift.size
    off = np.zeros(nrays)
    if math.isfinite(G_FLOOR):  # g ≥ −G_FLOOR·max g_start too (see G_FLOOR)
        floor = G_FLOOR * max(float(z[:n].max()), 0.0)
        A = np.vstack([A, np.hstack([np.eye(n), np.zeros((n, mz))])])
        off = np.concatenate([off, np.full(n, floor)])
        z[:n] = np.maximum(z[:n], -floor + 1e-6 * max(float(np.abs(z[:n]).max()), 1e-300))
    k = A.shape[0]
    td = tder(z)
    if td is None:
        return None
    scale = max(abs(td[0] + float(lin @ z)), 1.0)
    mu0 = scale * MU_START / k
    a = A @ z + off
    z[mz:] += max(mu0 * k - float(a[:nrays].min()), 0.0) * shift  # ray slacks near μ/θ_k with θ_k ≈ 1/k
    a = A @ z + off
    th = mu0 / a
    try:
        for _ in range(NEWTON_STEPS):
            if time.perf_counter() > deadline:
                return None
            T, _, gT, HT, wmin = td
            J = T + float(lin @ z)
            gJ = lin.copy()
            gJ[:mz] += gT
            rd = gJ + A.T @ th
            gap = float(th @ a)
            if gap <= MASTER_TOL * max(abs(J), 1.0) and np.abs(rd).max() <= stationary * (1.0 + np.abs(gJ).max()):
                break
            target = CENTRED * gap / k
            H = (A * (th / a)[:, None]).T @ A
            H[:mz, :mz] += HT
            d = np.sqrt(np.maximum(np.diag(H), 1e-300))
            Hs = H / d[:, None] / d[None, :]
            Hs[np.diag_indices_from(Hs)] += 1e-13
            dz = scipy.linalg.cho_solve(scipy.linalg.cho_factor(Hs), (gJ + A.T @ (target / a)) / d) / d
            da = A @ dz
            dth = (target - th * a - th * da) / a
            step = 0.99 * min(_to_boundary(a, da), 1.0)
            while step > 1e-10:  # Q ≻ 0 with room
                nxt = tder(z + step * dz)
                if nxt is not None and nxt[4] >= BOUNDARY * wmin:
                    break
                step *= 0.5
            else:
                return None
            z, a, td = z + step * dz, a + step * da, nxt
            th = th + 0.99 * min(_to_boundary(th, dth), 1.0) * dth
            if not (np.all(np.isfinite(z)) and np.all(a > 0)):
                return None
        else:  # not converged: its multipliers would steer badly (measured: pricing values of 10⁶)
            return None
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        return None
    return td[0] + float(lin @ z) + float(th @ a), th[:nrays], z


def _class_t_derivatives(g: np.ndarray, classes: SymbolClasses):
    """:func:`_t_derivatives` (without the barrier) for a g constant on the classes, in the G class values:
    ``T = 2 Σ_j (n_j − 1)√g_j + 2 tr (W₀ᵀ Diag(g) W₀)^½`` (docs/design.md §7.7), its gradient and the Hessian of −T;
    the smallest eigenvalue counts the repeated ``g_j``."""
    rep = classes.counts > 1
    if np.any(g[rep] <= 0):
        return None
    if classes.size > 1:
        td = _t_derivatives(g, classes.frame)
        if td is None:
            return None
        T, logdet, grad, H, wmin = td
    else:
        T, logdet, grad, H, wmin = 0.0, 0.0, np.zeros(1), np.zeros((1, 1)), math.inf
    m = (classes.counts - 1).astype(float)
    sg = np.sqrt(np.where(rep, g, 1.0))
    T += 2.0 * float(m @ sg)
    grad = grad + m / sg
    H = H + np.diag(m / (2.0 * sg ** 3))
    return T, logdet, grad, H, min(wmin, float(g[rep].min()) if rep.any() else math.inf)


def _class_master(R: np.ndarray, classes: SymbolClasses, deadline: float,
                  start: tuple[np.ndarray, np.ndarray] | None = None):
    """The relaxed master of :func:`_master` (diagonal relaxation) with g and ν constant on the classes of
    interchangeable symbols: (value, θ, g, ν, None) with g and ν expanded to the N symbols, or None.

    Implements: docs/design.md §7.7. Each pool ray enters through its class sums (``Σ_j g_j Σ_{x∈j} r_x² ≤
    Σ_j ν_j Σ_{x∈j} r_x``), the objective is ``2 tr Q^½ + Σ_j n_j g_j − Σ_j n_j ν_j`` with the reduced spectrum
    (:func:`_class_t_derivatives`): 2G unknowns. It starts from ``start`` (the class values of g and ν, e.g. the last
    round's optimum; ν is raised along π until every slack is positive), else from ``g_j = 1/max_k Σ_{x∈j} r_xk²``
    and ``ν = (2 max_k g·s_k + 1) π``; the same interior-point method (:func:`_ipm`).
    """
    Rc, Sc = classes.sums(R)
    G = classes.size
    if start is not None and np.all(start[0][classes.counts > 1] > 0) and np.all(start[0] >= 0):
        z = np.concatenate([start[0], start[1]]).astype(float)
    else:
        g = 1.0 / np.maximum(Sc.max(axis=1), 1e-300)
        z = np.concatenate([g, (2.0 * float((g @ Sc).max()) + 1.0) * classes.prior])
    A = np.hstack([-Sc.T, Rc.T])
    lin = np.concatenate([classes.counts, -classes.counts]).astype(float)
    out = _ipm(z, A, lin, lambda zz: _class_t_derivatives(zz[:G], classes), G, classes.prior, deadline,
               CLASS_STATIONARY_TOL)
    if out is None:
        return None
    J, th, z = out
    return J, th, z[:G][classes.labels], z[G:][classes.labels], None
