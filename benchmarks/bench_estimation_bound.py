"""Proven gaps of the frequency-estimation design with the valid pricing bound of ``design/estimation/bound.py``.

For Zipf P̂ ∝ 1/i^1.1 with the ℓ1 radius from 5 000 samples (δ = 1e-6), runs today's
``pml.design(..., utility="frequency_estimation")`` with a time limit, rebuilds the Fisher information ``F`` of the
returned mechanism (its columns ``w_y = θ_y r_y``, ``π·r_y = 1``), takes ``M = F⁻²`` and the multipliers
``ν = F⁻¹ Σ_y θ_y r_y (r_yᵀMr_y)`` (the KKT multipliers at an optimum; any ν gives a valid bound), and reports the
Frank–Wolfe lower bound ``tr F⁻¹ + tr F⁻¹ − ν·1 − max_ray_value(...)`` (minus ‖P̂‖², as the error per report) and
the proven relative gap ``(value − bound)/value``. Not a test; timings are noisy on a shared machine.

    PYTHONPATH=$PWD python benchmarks/bench_estimation_bound.py --quick          # N = 50, ε = 1
    PYTHONPATH=$PWD python benchmarks/bench_estimation_bound.py --n 50 100 300 --eps 1 2 --time-limit 60

``--cells`` compares the two cell bounds of ``bound_cells.py`` (docs/design.md §7.1) on a design from samples
(Zipf N = 50, 5 000 samples, ε = 1, δ = 1e-6, 10 s): the branch and bound on a separable ``Φ(r) = Σ d_x r_x² − w·r``
(``d = (1 − π)²/(s − 1)²``, ``s_x = Σ_y θ_y r_xy²`` over the design's normalised columns, ``w`` the least-squares
fit of ``Σ d_x r_x² ≈ w·r`` on them) after a fixed number of rounds (``bound_cells.MAX_ROUNDS``; no clock), upper
bound against the best actual ray found, with the two independent knapsacks alone and item branching at factor 1
(the code before the three-choice dual, "old"), with the dual at factor 1, and with the dual at today's
``ITEM_FACTOR`` ("new"); then ``ray_value_bounds`` (``.upper`` / ``.lower``) on the same design's ``M = F⁻²`` and KKT ν
in the same three configurations, with the same refinement time.

    PYTHONPATH=$PWD python benchmarks/bench_estimation_bound.py --cells --rounds 100 1000 --bound-seconds 10 --save DIR
    PYTHONPATH=$PWD python benchmarks/bench_estimation_bound.py --cells --load DIR/cells_design_n50.npz
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

import pml_design as pml
from pml_design.design.estimation import bound as bound_module
from pml_design.design.estimation import bound_cells
from pml_design.design.estimation.bound import frank_wolfe_lower_bound, ray_value_bounds
from pml_design.mechanisms.frequency_oracles.fisher import fisher_information


def run(n: int, eps: float, time_limit: float, bound_seconds: float, save: str | None = None) -> dict:
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    p /= p.sum()
    radius = pml.l1_radius(5000, n, 1e-6)
    uset = pml.L1Ball(p, radius)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pml.design(uset, eps, utility="frequency_estimation", solver_options={"time_limit": time_limit})
    if save:
        np.savez(f"{save}/design_n{n}_eps{eps:g}.npz", W=res.matrix, p=p, radius=radius, eps=eps)
    t_design = time.perf_counter() - t0
    return bound_design(res.matrix, p, uset, eps, bound_seconds) | {"design_s": round(t_design, 1),
                                                                    "library_value": res.utility}


def bound_design(W: np.ndarray, p: np.ndarray, uset, eps: float, bound_seconds: float) -> dict:
    """The proven gap of the mechanism ``W`` (rows = inputs) at the prior ``p`` (see module docstring)."""
    n = p.size
    F = fisher_information(W, p)
    Fi = np.linalg.inv(F)
    M = Fi @ Fi
    theta = p @ W
    R = W / theta
    quad = np.einsum("ik,ik->k", R, M @ R)
    nu = np.linalg.solve(F, (R * theta) @ quad)
    f = float(np.trace(Fi))
    t1 = time.perf_counter()
    rb = ray_value_bounds(uset, eps, p, M, nu, deadline=t1 + bound_seconds, rays=R)
    t_bound = time.perf_counter() - t1
    lower = frank_wolfe_lower_bound(f, -float(quad @ theta), float(nu.sum()), rb.upper) - float(p @ p)
    value = f - float(p @ p)
    return {"n": n, "eps": eps, "radius": round(float(uset.radius), 4), "interior": uset.in_interior_regime,
            "value": value, "lower_bound": lower, "relative_gap": (value - lower) / value,
            "pricing_upper": rb.upper, "pricing_lower": rb.lower, "bound_method": rb.method, "cells": rb.cells,
            "bound_s": round(t_bound, 2), "outputs": int(W.shape[1])}


class KnapsackCells(bound_cells.BallCells):
    """The cell bound before the three-choice dual: the two independent knapsacks only (for comparison)."""

    def bounds(self, *cell):
        it = self.items(*cell)
        return np.where(it["feas"], self.knapsack_bounds(it), -np.inf)


def compare_cells(rounds: list[int], bound_seconds: float, n: int = 50, save: str | None = None,
                  load: str | None = None) -> list[dict]:
    """Old against new cell bound on a design from samples (module docstring, ``--cells``); the design (time-limited,
    so not reproducible) is written to ``save`` (a folder) or read from ``load`` (that npz)."""
    if load:
        z = np.load(load)
        W, pi, uset = z["W"], z["prior"], pml.L1Ball(z["center"], float(z["radius"]))
    else:
        z = 1.0 / np.arange(1, n + 1) ** 1.1
        sample = np.random.default_rng(n).choice(n, size=5000, p=z / z.sum())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = pml.design_from_samples(sample, n, epsilon=1.0, delta=1e-6, utility="frequency_estimation",
                                          allow_zero=True, solver_options={"time_limit": 10, "progress": False})
        W, pi, uset = res.result.matrix, res.result.prior, res.result.uncertainty
        if save:
            np.savez_compressed(f"{save}/cells_design_n{n}.npz", W=W, prior=pi, center=uset.center, radius=uset.radius)
    theta = pi @ W
    R = W / theta
    s = (R * R) @ theta
    d = (1.0 - pi) ** 2 / (s - 1.0) ** 2
    w = np.linalg.lstsq(R.T, d @ (R * R), rcond=None)[0]
    out = []
    factor = bound_cells.ITEM_FACTOR
    configs = (("old: knapsacks, item factor 1", KnapsackCells, 1.0),
               ("dual, item factor 1", bound_cells.BallCells, 1.0),
               (f"new: dual, item factor {factor:g}", bound_cells.BallCells, factor))
    for name, cls, f in configs:
        for k in rounds:
            cone = cls(uset.center, uset.radius, 1.0, pi, d, w, None, None)
            bound_cells.MAX_ROUNDS, bound_cells.ITEM_FACTOR = k, f
            t = time.perf_counter()
            try:
                up, _, best, _, cells = bound_cells.branch_and_bound(
                    cone, np.inf, 0.0, lambda X: (d[:, None] * X * X).sum(axis=0) - w @ X)
            finally:
                bound_cells.MAX_ROUNDS, bound_cells.ITEM_FACTOR = None, factor
            out.append({"bound": name, "rounds": k, "upper": up, "best_ray": best, "live_cells": cells,
                        "seconds": round(time.perf_counter() - t, 2), "separable_on_design": float(
                            ((d[:, None] * R * R).sum(axis=0) - w @ R).max())})
            print(json.dumps(out[-1]), flush=True)
    for name, cls, f in configs:
        saved, bound_module.BallCells, bound_cells.ITEM_FACTOR = bound_module.BallCells, cls, f
        try:
            out.append({"bound": name, "ray_value_bounds": bound_design(W, pi, uset, 1.0, bound_seconds)})
        finally:
            bound_module.BallCells, bound_cells.ITEM_FACTOR = saved, factor
        print(json.dumps(out[-1]), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[50, 100, 300])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0])
    ap.add_argument("--time-limit", type=float, default=60.0, help="design time limit (s)")
    ap.add_argument("--bound-seconds", type=float, default=10.0, help="refinement time of the pricing bound (s)")
    ap.add_argument("--quick", action="store_true", help="N = 50, ε = 1, 30 s")
    ap.add_argument("--save", help="folder for the designs (npz), to re-bound them later with --load")
    ap.add_argument("--load", nargs="+", help="npz files saved by --save: bound these designs instead")
    ap.add_argument("--cells", action="store_true", help="old against new cell bound (module docstring)")
    ap.add_argument("--rounds", type=int, nargs="+", default=[100, 1000], help="branch-and-bound rounds (--cells)")
    a = ap.parse_args()
    if a.cells:
        compare_cells(a.rounds, a.bound_seconds, save=a.save, load=a.load[0] if a.load else None)
        return
    if a.quick:
        a.n, a.eps, a.time_limit = [50], [1.0], 30.0
    if a.load:
        for path in a.load:
            z = np.load(path)
            uset = pml.L1Ball(z["p"], float(z["radius"]))
            print(json.dumps(bound_design(z["W"], z["p"], uset, float(z["eps"]), a.bound_seconds)), flush=True)
        return
    for n in a.n:
        for eps in a.eps:
            print(json.dumps(run(n, eps, a.time_limit, a.bound_seconds, a.save)), flush=True)


if __name__ == "__main__":
    main()
