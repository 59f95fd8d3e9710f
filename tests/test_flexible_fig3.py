"""Figure 3 / 4 reproduction (App. L): the two findings of issue 15, checked against closed forms.

* Experiment (1): the choosing-based baseline is gated shut at small ε (nothing is released, the statistic is
  a uniform index), so its max error equals the closed form E|U - max(x)|/B, and it does not beat New.
* Experiments (5)-(6): for the mode, New and the stability histogram both reduce to argmax(x + i.i.d.
  Lap(1/ε)) up to a common shift, rounding and events of probability ~δ: their exact mode laws coincide.  The
  stability histogram samples discrete Laplace noise (its exact law is computed with ties to the left).
"""

import numpy as np
import pytest
from scipy import integrate, stats

from benchmarks.fig_flexible_fig3 import DELTA, run_experiment
from pml_design.flexible import evaluate_statistic, q_for_delta, stability_histogram, stability_threshold, stlap_with_q


def test_exp1_choosing_is_the_uniform_fallback_at_small_eps_and_does_not_beat_new():
    rows = run_experiment(1, [0.1], n_datasets=3, runs=300, seed=7, progress=False)
    by = {r["mechanism"]: r for r in rows}
    # data of (1): max(x) = 89 (bar 90) in every data set; a uniform index U on 0..99 has E|U - 89| = 40.6
    closed = sum(abs(u - 89) for u in range(100)) / 100
    ch = by["Choosing"]
    assert abs(ch["actual_error_pct"] - closed) < 4 * ch["actual_se"] + 1e-9
    assert by["New"]["actual_error_pct"] < ch["actual_error_pct"] - 3 * ch["actual_se"]
    assert by["New"]["flexible_error_pct"] < ch["flexible_error_pct"]


def _mode_law_new(x, q, eps):
    """Exact law of mode(STLap_q(x)): y_j = max(0, round(x_j + Z_j)), Z_j ~ Lap(-q/2, 1/ε) truncated to [-q, 0]."""
    lap = stats.laplace(loc=-q / 2, scale=1 / eps)
    lo, hi = lap.cdf(-q), lap.cdf(0.0)
    v = np.arange(0, x.max() + 2)

    def cdf(j):  # Pr[y_j <= v]
        if x[j] == 0:
            return np.ones(v.size)
        return np.clip((lap.cdf(v + 0.5 - x[j]) - lo) / (hi - lo), 0.0, 1.0)

    F = np.array([cdf(j) for j in range(x.size)])
    pmf = np.diff(np.concatenate([np.zeros((x.size, 1)), F], axis=1), axis=1)
    law = np.zeros(x.size)
    for i in range(x.size):
        below = np.prod(F[:i, :-1], axis=0) if i else np.ones(v.size - 1)     # Pr[y_j <= v - 1], j < i
        above = np.prod(F[i + 1:, 1:], axis=0) if i + 1 < x.size else np.ones(v.size - 1)  # Pr[y_j <= v], j > i
        law[i] = np.sum(pmf[i, 1:] * below * above)
    return law


def _mode_law_stability(x, eps, delta, scale=None):
    """Exact law of mode(stability histogram): x_j + Lap(b) kept if > T; argmax is a.s. unique."""
    b = 1 / eps if scale is None else scale
    T = 1 + b * np.log(1 / (2 * delta))
    lap = stats.laplace(scale=b)
    u = np.linspace(T, x.max() + 40 * b, 200_001)                         # integrand ~ e^{-40} beyond
    live = np.flatnonzero(x)
    logF = lap.logcdf(u[None, :] - x[live, None])
    dens = lap.pdf(u[None, :] - x[live, None]) * np.exp(logF.sum(axis=0) - logF)
    law = np.zeros(x.size)
    law[live] = integrate.simpson(dens, x=u, axis=1)                   # Pr[x_i + L_i = max, max > T]
    return law


def _mode_law_stability_discrete(x, eps, delta):
    """Exact law of mode(stability histogram) as sampled: x_j + Z_j, Z_j discrete Laplace, kept if >= k*.

    Ties go to the left-most bar (the library's mode), as in :func:`_mode_law_new`.
    """
    r, k = np.exp(-eps), stability_threshold(eps, delta)
    v = np.arange(0, x.max() + int(60 / eps))                               # tail beyond: < e^{-60}

    def cdf_z(z):  # Pr[Z <= z]
        z = np.asarray(z, dtype=float)
        return np.where(z >= 0, 1 - r ** (np.maximum(z, 0) + 1) / (1 + r), r ** np.abs(np.minimum(z, 0)) / (1 + r))

    def cdf(j):  # Pr[released y_j <= v]: 0 below the threshold, x_j + Z_j above
        if x[j] == 0:
            return np.ones(v.size)
        return np.where(v < k, cdf_z(k - 1 - x[j]), cdf_z(v - x[j]))

    F = np.array([cdf(j) for j in range(x.size)])
    pmf = np.diff(np.concatenate([np.zeros((x.size, 1)), F], axis=1), axis=1)
    law = np.zeros(x.size)
    for i in range(x.size):
        below = np.prod(F[:i, :-1], axis=0) if i else np.ones(v.size - 1)
        above = np.prod(F[i + 1:, 1:], axis=0) if i + 1 < x.size else np.ones(v.size - 1)
        law[i] = np.sum(pmf[i, 1:] * below * above)
    return law


@pytest.mark.parametrize("eps", [0.2, 1.0])
def test_mode_new_and_stability_have_the_same_law(eps):
    # a 12-bar instance of experiment (6)'s shape: steps 130, 200, 185, 190, 130
    x = np.array([130, 131, 200, 198, 185, 186, 190, 191, 188, 130, 128, 0])
    q = q_for_delta(eps, DELTA)
    p_new, p_stab = _mode_law_new(x, q, eps), _mode_law_stability_discrete(x, eps, DELTA)
    # integer noise: ties go to the left-most bar, like New's (the continuous law splits them)
    assert p_new.sum() == pytest.approx(1, abs=1e-6) and p_stab.sum() == pytest.approx(1, abs=1e-6)
    f = evaluate_statistic(x, "mode")
    err = lambda p: float(p @ np.abs(np.arange(x.size) - f))  # noqa: E731
    # same law up to rounding: New's bars are integers, and near-ties go to the left-most bar (here the mode)
    assert 0.5 * np.abs(p_new - p_stab).sum() < 0.05
    assert abs(err(p_new) - err(p_stab)) < 0.1  # in bars: < 1 % of the range
    # contrast (power): the stability histogram calibrated for replacement neighbours, Lap(2/ε), differs clearly
    p_rep = _mode_law_stability(x, eps, DELTA, scale=2 / eps)
    assert 0.5 * np.abs(p_new - p_rep).sum() > 0.1 and err(p_rep) > 1.3 * err(p_new)
    # the library samplers follow these laws
    n = 6000
    for law, Y in ((p_new, stlap_with_q(x, q, eps, rng=1, n_draws=n)),
                   (p_stab, stability_histogram(x, eps, DELTA, n_runs=n, rng=2))):
        obs = np.bincount(evaluate_statistic(Y, "mode"), minlength=x.size)
        keep = law > 1e-3
        assert obs[~keep].sum() <= 5
        assert stats.chisquare(obs[keep], law[keep] / law[keep].sum() * obs[keep].sum()).pvalue > 1e-3
