"""Boolean "is the set empty?" mechanism, eq. (9), and its Pareto frontier (Bansal et al., Sec. 5.1)."""

import numpy as np
import pytest

from pml_design.flexible import (
    boolean_is_dp,
    boolean_min_delta_lp,
    boolean_min_delta_odd,
    boolean_pareto_delta,
    boolean_probabilities,
)


@pytest.mark.parametrize("q", [2, 4, 6, 10, 20])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
def test_even_q_paper_frontier_is_lp_optimum(q, eps):
    assert boolean_min_delta_lp(eps, q) == pytest.approx(boolean_pareto_delta(eps, q), rel=1e-7, abs=1e-10)
    p = boolean_probabilities(eps, q)
    assert boolean_is_dp(p, eps, boolean_pareto_delta(eps, q))
    assert not boolean_is_dp(p, eps, 0.98 * boolean_pareto_delta(eps, q))


@pytest.mark.parametrize("q", [3, 5, 7, 9, 15])
@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_odd_q_paper_frontier_not_optimal(q, eps):
    """Erratum E8: for odd q the paper's pair is feasible but δ can be strictly smaller."""
    lp = boolean_min_delta_lp(eps, q)
    assert lp == pytest.approx(boolean_min_delta_odd(eps, q), rel=1e-7)
    assert lp < boolean_pareto_delta(eps, q) * (1 - 1e-3)
    assert boolean_is_dp(boolean_probabilities(eps, q), eps, boolean_pareto_delta(eps, q))


def test_q7_eps1_numbers():
    assert boolean_min_delta_lp(1.0, 7) == pytest.approx(0.02364, abs=1e-5)
    assert boolean_pareto_delta(1.0, 7) == pytest.approx(0.02675, abs=1e-5)


def test_probabilities_shape_and_symmetry():
    p = boolean_probabilities(0.7, 8)
    assert p[0] == 0 and p[-1] == pytest.approx(1.0)
    assert np.allclose(p + p[::-1], 1.0)
    assert np.all(np.diff(p) > 0)


def test_bad_input():
    with pytest.raises(ValueError):
        boolean_probabilities(-1.0, 4)
    with pytest.raises(ValueError):
        boolean_probabilities(1.0, 0)
    with pytest.raises(TypeError):
        boolean_probabilities(1.0, 2.5)
    with pytest.raises(ValueError):
        boolean_min_delta_odd(1.0, 4)
