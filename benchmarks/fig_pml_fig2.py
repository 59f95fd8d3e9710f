"""Core paper, Fig. 2: Theorem 4's bound (6) against sampled D∞(P_Y ‖ Q_Y) over ‖P − Q‖₁.

(a) Example 1: the first-privacy-region extremal mechanism of [15, Example 1], ε = log(9/8),
    P = (2/5, 1/5, 1/5, 1/5) (bound case k = 1).
(b) Example 2: a 2-singular mechanism with N = 10 (circulant: row x puts 1/2 on columns x and x+1 mod N),
    optimal for the uniform prior at ε = log(N/k) = log 5 (bound case k > 1, tight since every column has
    zeros).

For each panel, n random Q = P + t (D − P) (D ~ Dirichlet(1), t ~ U(0, 1)) are drawn, D∞(P_Y‖Q_Y) =
log max_y P_Y(y)/Q_Y(y) is computed exactly, and plotted over β = ‖P − Q‖₁ with the bound. The summary also
reports the worst-case Q of the proof of Theorem 4 (Appendix B), which meets the bound.

Usage: ``python benchmarks/fig_pml_fig2.py [--quick] [--outdir DIR]``.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _additive_figs as H  # noqa: E402

EXAMPLE1 = np.array(
    [
        [0.325, 0.225, 0.225, 0.225],
        [0.45, 0.1, 0.225, 0.225],
        [0.45, 0.225, 0.1, 0.225],
        [0.45, 0.225, 0.225, 0.1],
    ]
)
EXAMPLE1_PRIOR = np.array([0.4, 0.2, 0.2, 0.2])
EXAMPLE1_EPS = math.log(9 / 8)


def k_singular(n: int, k: int) -> np.ndarray:
    """Circulant k-singular mechanism (core paper, Example 2), from the library's closed forms."""
    from pml_design.mechanisms.closed_form import k_singular as _k_singular

    return _k_singular(n, k).matrix.copy()


def d_inf(w: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """D∞(P_Y‖Q_Y) for rows of q (shape (n, N)): log max_y (p @ w)_y / (q @ w)_y."""
    return np.log(np.max((p @ w)[None, :] / (q @ w), axis=1))


def worst_case_q(w: np.ndarray, p: np.ndarray, beta: float) -> np.ndarray:
    """The ω of the proof of Theorem 4: for the column y maximising the ratio, move β/2 of mass from the input
    with the largest entry to the input with the smallest entry (Appendix B)."""
    best, best_q = -np.inf, p
    for y in range(w.shape[1]):
        hi, lo = int(np.argmax(w[:, y])), int(np.argmin(w[:, y]))
        q = p.copy()
        move = min(beta / 2, q[hi])
        q[hi] -= move
        q[lo] += move
        val = d_inf(w, p, q[None, :])[0]
        if val > best:
            best, best_q = val, q
    return best_q


def sample_q(p: np.ndarray, n: int, rng: np.random.Generator, beta_max: float) -> tuple[np.ndarray, np.ndarray]:
    qs, betas = [], []
    while sum(len(b) for b in betas) < n:
        d = rng.dirichlet(np.ones(p.size), size=2 * n)
        t = rng.random((2 * n, 1))
        q = p + t * (d - p)
        b = np.abs(q - p).sum(axis=1)
        keep = (b < beta_max) & np.all(q > 0, axis=1)
        qs.append(q[keep])
        betas.append(b[keep])
    return np.concatenate(qs)[:n], np.concatenate(betas)[:n]


def panel(name: str, w: np.ndarray, p: np.ndarray, eps: float, n: int, rng: np.random.Generator, beta_max: float) -> dict:
    q, beta = sample_q(p, n, rng, beta_max)
    true = d_inf(w, p, q)
    bound = np.array([H.sensitivity_bound(eps, p, float(b)) for b in beta])
    grid = np.linspace(0, beta_max, 200)
    bound_grid = np.array([H.sensitivity_bound(eps, p, float(b)) for b in grid])
    checks = np.linspace(beta_max / 10, beta_max * 0.95, 5)
    tight = []
    for b in checks:
        wq = worst_case_q(w, p, float(b))
        tight.append((float(b), float(d_inf(w, p, wq[None, :])[0]), H.sensitivity_bound(eps, p, float(b))))
    return {
        "name": name,
        "epsilon": eps,
        "beta": beta,
        "d_inf": true,
        "bound": bound,
        "grid_beta": grid,
        "grid_bound": bound_grid,
        "max_violation": float(np.max(true - bound)),
        "worst_case_checks": tight,
    }


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results", seed: int = H.SEED) -> dict:
    out = H.outdir_path(outdir)
    rng = np.random.default_rng(seed)
    n = 500 if quick else 10_000
    panels = [
        panel("example1", EXAMPLE1, EXAMPLE1_PRIOR, EXAMPLE1_EPS, n, rng, 1.2),
        panel("2-singular-N10", k_singular(10, 2), np.full(10, 0.1), math.log(5), n, rng, 0.39),
    ]
    fig, axes = H.plt.subplots(1, 2, figsize=(10, 4))
    for ax, pn, title in zip(axes, panels, ["(a) Example 1", "(b) Example 2: 2-singular, N = 10"]):
        ax.scatter(pn["beta"], pn["d_inf"], s=2, alpha=0.4, label="true $D_\\infty(P_Y\\|Q_Y)$")
        ax.plot(pn["grid_beta"], pn["grid_bound"], "r-", label="bound (6)")
        ax.set_xlabel("$\\|P_X - Q_X\\|_1$")
        ax.set_ylabel("leakage increase [nats]")
        ax.set_title(title)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "fig_pml_fig2.png", dpi=120)
    H.plt.close(fig)
    rows = []
    for pn in panels:
        rows += [(pn["name"], b, d, bd) for b, d, bd in zip(pn["beta"], pn["d_inf"], pn["bound"])]
    H.write_csv(out / "fig_pml_fig2.csv", ["panel", "l1_distance", "d_inf", "bound"], rows)
    summary = {
        "figure": "core paper Fig. 2",
        "n_samples": n,
        "seed": seed,
        "panels": {
            pn["name"]: {
                "epsilon": pn["epsilon"],
                "max_d_inf_minus_bound": pn["max_violation"],
                "worst_case_checks": [
                    {"beta": b, "d_inf_worst_q": d, "bound": bd} for b, d, bd in pn["worst_case_checks"]
                ],
            }
            for pn in panels
        },
    }
    H.print_table(
        ["panel", "beta", "D_inf(worst Q)", "bound"],
        [(pn["name"], b, d, bd) for pn in panels for b, d, bd in pn["worst_case_checks"]],
    )
    print("max over samples of D_inf - bound:", {pn["name"]: pn["max_violation"] for pn in panels})
    return H.write_json(out / "fig_pml_fig2.json", summary)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    args = ap.parse_args()
    run(quick=args.quick, outdir=args.outdir)
