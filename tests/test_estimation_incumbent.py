"""The estimation design's incumbent (``design/estimation/incumbent.py``): certified offers, the kept Fisher
information, and ``mse_from_fisher`` against ``estimation_mse``'s independent closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import pml_design as pml
from pml_design.design.estimation.incumbent import CertifiedIncumbent
from pml_design.mechanisms.frequency_oracles.fisher import estimation_mse, fisher_information, mse_from_fisher


def test_mse_from_fisher_is_grr_closed_form():
    # GRR's exact per-report variance (Wang et al. 2017) is an independent derivation of tr F⁻¹ − ‖P‖²
    n, eps = 7, 1.3
    p = np.random.default_rng(0).dirichlet(np.ones(n))
    e = np.exp(eps)
    W = np.full((n, n), 1.0 / (e + n - 1))
    np.fill_diagonal(W, e / (e + n - 1))
    q = (e - 1) / (e + n - 1)
    pi = (1 - q) / n + q * p  # each output's probability
    closed = float(np.sum(pi * (1 - pi)) / q**2)  # Σ_x Var of the unbiased estimate, per report
    assert mse_from_fisher(fisher_information(W, p), p) == pytest.approx(closed, rel=1e-10)
    assert mse_from_fisher(fisher_information(W, p), p) == pytest.approx(estimation_mse(W, p), rel=1e-13)


def test_the_incumbent_keeps_its_fisher_information_and_never_gets_worse():
    n, eps = 9, 1.0
    p = np.random.default_rng(1).dirichlet(np.ones(n) * 2)
    ball = pml.L1Ball(p, 0.05)
    inc = CertifiedIncumbent(ball, eps, pml.FrequencyEstimation(), p)
    ss = pml.subset_selection(n, eps, k=3).matrix
    grr = pml.subset_selection(n, eps, k=1).matrix
    assert inc.offer(ss, "ss") and inc.source == "ss"
    F = inc.fisher
    assert inc.fisher_of(ss) is F  # taken from the incumbent, not recomputed
    np.testing.assert_allclose(F, fisher_information(ss, p), rtol=1e-12, atol=1e-14)
    assert inc.value == pytest.approx(estimation_mse(ss, p), rel=1e-12)
    worse = estimation_mse(grr, p) > inc.value
    kept = inc.offer(grr, "grr")
    assert kept == (not worse) and inc.last == pytest.approx(estimation_mse(grr, p), rel=1e-12)
    other = inc.fisher_of(grr)  # not the incumbent (if it was not kept): computed
    np.testing.assert_allclose(other, fisher_information(grr, p), rtol=1e-12, atol=1e-14)
    assert inc.value <= min(estimation_mse(ss, p), estimation_mse(grr, p)) * (1 + 1e-12)
    assert pml.leakage_capacity(inc.cert.matrix, ball) <= eps + 1e-12
    d_inc = CertifiedIncumbent(ball, eps, pml.FrequencyEstimation(criterion="D"), p)
    d_inc.offer(ss, "ss")
    assert d_inc.fisher is None and d_inc.fisher_of(ss).shape == (n, n)  # D keeps none; computed on request
