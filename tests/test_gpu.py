"""The real GPU backend (``solver="CUPDLPX"``, issue 13 part 3): skipped unless cupdlpx imports and a CUDA device exists.

CI has no GPU, so there these tests are skipped and ``tests/test_sparse_lp.py`` checks the adapter against a fake
cupdlpx package. On a CUDA machine (``benchmarks/gpu/device_run.sh … --tests``) they check the real solver against
an independent derivation: the cvxpy model of :mod:`pml_design.design.polytope` solved by HiGHS's dual simplex.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import pml_design as pd
from pml_design.design import LinearUtility, design, distortion_gain
from tests.conftest import linear_design_optimum

backends = importlib.import_module("pml_design.design.linear.backends")

pytestmark = pytest.mark.skipif(
    not backends.backend_available("CUPDLPX"), reason="needs cupdlpx (pml-design[gpu]) and a CUDA device"
)


@pytest.mark.parametrize("seed", range(12))
def test_cupdlpx_matches_simplex_and_is_certified(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    p = rng.dirichlet(np.ones(n) * rng.choice([0.7, 2.0, 5.0]))
    inside = seed % 2 == 0
    beta = float(rng.uniform(0.1, 0.95)) * 2 * p.min() if inside else float(min(2.0, 2 * p.min() + rng.uniform(0.01, 0.8)))
    uset = pd.L1Ball(p, beta)
    eps = float(rng.choice([0.1, 0.5, 1.0, 3.0]))
    G = np.eye(n) if seed % 3 else distortion_gain(n)
    ref = linear_design_optimum(uset, eps, G, p)
    res = design(uset, eps, utility=LinearUtility(G), prior=p, solver="CUPDLPX")
    assert res.solver == "CUPDLPX"
    assert res.certified_epsilon <= eps + 1e-12
    assert res.upper_bound >= ref - 1e-9 * max(1.0, abs(ref))  # the weak-duality bound is valid
    assert res.utility <= ref + 1e-9 * max(1.0, abs(ref))  # nothing certified beats the optimum
    assert res.utility == pytest.approx(ref, abs=1e-6 * max(1.0, abs(ref)))


def test_auto_choice_uses_the_gpu_from_gpu_auto_size() -> None:
    n = backends.GPU_AUTO_SIZE
    assert backends.select_backend(None, n) == "CUPDLPX"
    assert backends.select_backend(None, n - 1) == "CLARABEL"
