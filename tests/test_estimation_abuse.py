"""Inputs a user may give the estimation design that once ended in a raw exception (a review, 2026-11-26)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pml_design as pml
from pml_design.design.estimation import api as est_api
from pml_design.design.result import PMLDesignWarning, SolverFailedError
from pml_design.uncertainty import L1Ball


def _sample():
    return np.random.default_rng(0).choice(4, 2000, p=[0.1, 0.2, 0.3, 0.4])


@pytest.mark.parametrize("epsilon", [1e-6, 1e-8])
def test_tiny_epsilon_is_refused_by_name(epsilon):
    # the Fisher information of every ε-PML channel is of order ε²: singular in double precision
    with pytest.raises(ValueError, match=r"^epsilon is too small for utility 'frequency_estimation'"):
        pml.design_from_samples(_sample(), 4, epsilon=epsilon, delta=1e-3, utility="frequency_estimation",
                                solver_options={"time_limit": 3})


def test_a_master_that_fails_numerically_leaves_the_certified_incumbent(monkeypatch):
    p = np.array([0.1, 0.2, 0.3, 0.4])
    uset = L1Ball(p, 0.05)

    def broken(*args, **kwargs):
        raise SolverFailedError("estimation master: the Newton system is numerically singular", "singular")

    monkeypatch.setattr(est_api, "solve_master", broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = pml.design(uset, 1.0, utility="frequency_estimation", solver_options={"time_limit": 3})
    msgs = [str(w.message) for w in caught if issubclass(w.category, PMLDesignWarning)]
    assert any("stopped early" in m and "numerically singular" in m for m in msgs), msgs
    # the result is a certified design: its exact leakage is within ε over the ball, and it is the seed's value
    assert res.certified_epsilon <= 1.0 + 1e-9
    assert np.allclose(res.matrix.sum(axis=1), 1.0)
    assert res.utility == pytest.approx(pml.FrequencyEstimation().value(res.matrix, p), rel=1e-9)
    assert res.utility <= res.info["ldp_seed_mse"] * (1 + 1e-9)
