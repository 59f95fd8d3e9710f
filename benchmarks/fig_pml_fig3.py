"""Core paper, Fig. 3: the (ε', δ) trade-off of an ε-PML mechanism designed on an estimate from m samples.

(a) δ_min(ε') of Corollary 3 (clipped at 1, where the bound is vacuous) against ε', N = 20, ε = log 5,
    several m.
(b) ε'(δ) of eq. (8) (with the corrected eq. (7)) against m, N = 20, δ = 1e-5, several ε; dashed lines mark
    ε. Points where eq. (8) is vacuous (β*(δ) e^ε ≥ 2) are left out (``null`` in the JSON).

Usage: ``python benchmarks/fig_pml_fig3.py [--quick] [--outdir DIR]``.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _additive_figs as H  # noqa: E402

N = 20
EPS_A = math.log(5)
MS_A = (10**3, 10**4, 10**5, 10**6)
DELTA_B = 1e-5
EPS_B = (math.log(2), math.log(5), math.log(10))


def run(quick: bool = False, outdir: str | pathlib.Path = "benchmarks/results") -> dict:
    out = H.outdir_path(outdir)
    n_pts = 40 if quick else 400
    eps_prime = EPS_A + np.linspace(0.0, 1.5, n_pts)
    dmin = {m: np.array([H.delta_min(EPS_A, float(e), m, N) for e in eps_prime]) for m in MS_A}
    ms_b = np.unique(np.round(np.logspace(2, 7, 30 if quick else 200)).astype(np.int64))
    epsp = {e: np.array([H.epsilon_prime(e, DELTA_B, int(m), N) for m in ms_b]) for e in EPS_B}

    fig, (ax1, ax2) = H.plt.subplots(1, 2, figsize=(11, 4))
    for m in MS_A:
        ax1.semilogy(eps_prime, dmin[m], label=f"m = {m:.0e}")
    ax1.set_xlabel("$\\varepsilon'$")
    ax1.set_ylabel("$\\delta_{\\min}(\\varepsilon')$")
    ax1.set_title(f"(a) N = {N}, $\\varepsilon$ = log 5")
    ax1.legend()
    for e in EPS_B:
        line = ax2.semilogx(ms_b, np.where(np.isfinite(epsp[e]), epsp[e], np.nan), label=f"$\\varepsilon$ = {e:.3g}")
        ax2.axhline(e, ls="--", color=line[0].get_color())
    ax2.set_xlabel("m")
    ax2.set_ylabel("$\\varepsilon'(\\delta)$")
    ax2.set_title(f"(b) N = {N}, $\\delta$ = 1e-5")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(out / "fig_pml_fig3.png", dpi=120)
    H.plt.close(fig)

    H.write_csv(
        out / "fig_pml_fig3a.csv",
        ["epsilon_prime"] + [f"delta_min_m{m}" for m in MS_A],
        [[e] + [dmin[m][i] for m in MS_A] for i, e in enumerate(eps_prime)],
    )
    H.write_csv(
        out / "fig_pml_fig3b.csv",
        ["m"] + [f"epsilon_prime_eps{e:.6f}" for e in EPS_B],
        [[int(m)] + [epsp[e][i] for e in EPS_B] for i, m in enumerate(ms_b)],
    )
    summary = {
        "figure": "core paper Fig. 3",
        "a": {"N": N, "epsilon": EPS_A, "epsilon_prime": eps_prime, "delta_min": {str(m): dmin[m] for m in MS_A}},
        "b": {"N": N, "delta": DELTA_B, "m": ms_b, "epsilon_prime": {f"{e:.6f}": epsp[e] for e in EPS_B}},
    }
    rows = []
    for m in MS_A:
        below = eps_prime[dmin[m] < 1e-5]
        rows.append((f"a: m={m}", "eps' with delta_min < 1e-5 from", float(below[0]) if below.size else math.inf))
    for e in EPS_B:
        finite = ms_b[np.isfinite(epsp[e])]
        rows.append((f"b: eps={e:.3g}", "first m with finite eps'", int(finite[0]) if finite.size else -1))
        rows.append((f"b: eps={e:.3g}", "eps' at m=1e7", float(epsp[e][-1])))
    H.print_table(["panel", "quantity", "value"], rows)
    return H.write_json(out / "fig_pml_fig3.json", summary)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--outdir", default="benchmarks/results")
    args = ap.parse_args()
    run(quick=args.quick, outdir=args.outdir)
