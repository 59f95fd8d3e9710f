"""The Adult utility experiment of the binary Laplace mechanism (Fig. 4 and Fig. 5 of the core paper).

Implements: pml-design-empirical-distributions (the "core paper"), Section VI-C1. For each of ``n_shuffles``
random shuffles of the data, the first ``m`` records give ``P̂_X``; the scale ``b`` solves eq. (16) for the
target ε at failure probability δ (``δ = 0`` is the ε-LDP scale ``2/ε``, Remark 4); the ``m`` records are
privatized with Laplace noise, mapped back to {-1, +1} by the decision rule, and the empirical mutual
information between private and decided values is recorded.

Vectorisation: shuffles are an array axis; for one ``m`` the same standard-Laplace draws ``Z`` (shape
``(n_shuffles, m)``) are scaled by every calibrated ``b`` (common random numbers), so differences between
mechanisms are not blurred by independent noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, check_delta, check_epsilon, check_positive_int
from .common import binary_l1_radius, check_binary_data
from .laplace import laplace_scale_for
from .release import empirical_mutual_information

__all__ = ["LaplaceUtilityResult", "adult_laplace_experiment", "laplace_utility_experiment"]


@dataclass(frozen=True)
class LaplaceUtilityResult:
    """Empirical MI of the calibrated binary Laplace mechanism (core paper, Fig. 4 / Fig. 5).

    Attributes
    ----------
    ms, epsilons, deltas : numpy.ndarray
        The grid. ``delta = 0`` rows are the ε-LDP mechanism (``b = 2/ε``).
    mi : numpy.ndarray, shape (len(deltas), len(epsilons), len(ms), n_shuffles)
        Empirical mutual information (nats) per shuffle.
    scale : numpy.ndarray, same shape as ``mi``
        The scale ``b`` used (``0`` marks a shuffle where the target exceeded ``−log p_min``, so no noise
        was needed; see ``n_unreachable``).
    n_unreachable : int
        Number of (δ, ε, m, shuffle) cells released without noise for that reason.
    """

    ms: np.ndarray
    epsilons: np.ndarray
    deltas: np.ndarray
    mi: np.ndarray
    scale: np.ndarray
    n_unreachable: int

    @property
    def mi_mean(self) -> np.ndarray:
        """Mean MI over shuffles, shape (len(deltas), len(epsilons), len(ms))."""
        return self.mi.mean(axis=-1)

    @property
    def mi_std(self) -> np.ndarray:
        """Standard deviation of the MI over shuffles."""
        return self.mi.std(axis=-1)


def laplace_utility_experiment(
    x: object,
    ms: object,
    epsilons: object,
    deltas: object = (1e-9, 0.0),
    n_shuffles: int = 100,
    rng: object = None,
) -> LaplaceUtilityResult:
    """Run the Section VI-C1 utility experiment on a binary data column ``x``.

    Implements: core paper, Section VI-C1 (eq. (14), eq. (16), the decision rule and the empirical MI,
    corrected as in :func:`pml_design.additive.empirical_mutual_information`).

    Parameters
    ----------
    x : array_like of {-1, +1}, shape (n,)
        The data set's binary feature.
    ms : sequence of int
        Sample sizes ``m`` (each ≤ n).
    epsilons : sequence of float
        Targets ε > 0.
    deltas : sequence of float, default (1e-9, 0.0)
        Failure probabilities in [0, 1]; ``0`` gives the LDP baseline.
    n_shuffles : int, default 100
        Number of random shuffles (the paper uses 100).
    rng : numpy.random.Generator, int or None
        Source of randomness (shuffles and noise).

    Returns
    -------
    LaplaceUtilityResult
        The grid, the empirical MI and the scale ``b`` per (δ, ε, m, shuffle), and the number of cells
        released without noise (target above ``−log p_min``).
    """
    data = check_binary_data(x, "x")
    if data.ndim != 1:
        raise ValueError(f"x must be 1-dimensional, got shape {data.shape}")
    n = data.shape[0]
    ms_arr = np.array([check_positive_int(m, "ms") for m in np.atleast_1d(ms)], dtype=np.int64)
    if np.any(ms_arr > n):
        raise ValueError(f"ms must be <= the number of records {n}, got max {int(ms_arr.max())}")
    eps_arr = np.array([check_epsilon(e, "epsilons", positive=True) for e in np.atleast_1d(epsilons)])
    del_arr = np.array([check_delta(d, "deltas", allow_zero=True) for d in np.atleast_1d(deltas)])
    reps = check_positive_int(n_shuffles, "n_shuffles")
    gen = as_generator(rng)

    perms = gen.permuted(np.tile(np.arange(n), (reps, 1)), axis=1)
    shuffled = data.astype(np.int8)[perms]  # (reps, n)
    shape = (del_arr.size, eps_arr.size, ms_arr.size, reps)
    mi = np.empty(shape)
    scales = np.empty(shape)
    unreachable = 0
    for k, m in enumerate(ms_arr):
        d = shuffled[:, :m]
        p_minus_hat = np.mean(d == -1, axis=1)
        p_hat_min = np.minimum(p_minus_hat, 1.0 - p_minus_hat)
        z = gen.laplace(0.0, 1.0, size=(reps, int(m)))
        for i, delta in enumerate(del_arr):
            beta = binary_l1_radius(int(m), float(delta))
            for j, eps in enumerate(eps_arr):
                b = np.empty(reps)
                for r in range(reps):
                    p_worst = max(p_hat_min[r] - beta / 2.0, 0.0)
                    if p_worst > 0.0 and eps >= -math.log(p_worst):
                        b[r] = 0.0  # target above the no-noise leakage: release as is
                        unreachable += 1
                    else:
                        b[r] = laplace_scale_for(float(eps), float(p_hat_min[r]), int(m), float(delta))
                decided = np.where(d + b[:, None] * z < 0, -1, 1)
                mi[i, j, k] = empirical_mutual_information(d, decided)
                scales[i, j, k] = b
    return LaplaceUtilityResult(ms_arr, eps_arr, del_arr, mi, scales, unreachable)


def adult_laplace_experiment(
    feature: str = "income",
    ms: object = (100, 300, 1000, 3000, 10_000, 30_000, 48_842),
    epsilons: object = (0.25, 0.5, 0.75, 1.0),
    deltas: object = (1e-9, 0.0),
    n_shuffles: int = 100,
    rng: object = None,
    split: str = "all",
) -> LaplaceUtilityResult:
    """The Section VI-C1 experiment on the bundled Adult data (``feature`` = ``"income"`` or ``"sex"``).

    Implements: core paper, Section VI-C1, Fig. 4 (``deltas = (1e-9, 0)``) and Fig. 5
    (``epsilons = (log 2,)``, several δ including 0). See :func:`laplace_utility_experiment`.

    Parameters
    ----------
    feature : {"income", "sex"}, default "income"
        The binary column of the Adult data to use.
    ms : sequence of int, default (100, 300, 1000, 3000, 10000, 30000, 48842)
        Sample sizes ``m`` (each ≤ the number of records of ``split``).
    epsilons : sequence of float, default (0.25, 0.5, 0.75, 1.0)
        Targets ε > 0.
    deltas : sequence of float, default (1e-9, 0.0)
        Failure probabilities in [0, 1]; ``0`` gives the LDP baseline.
    n_shuffles : int, default 100
        Number of random shuffles.
    rng : numpy.random.Generator, int or None
        Source of randomness (shuffles and noise).
    split : {"train", "test", "all"}, default "all"
        Which part of the bundled data to load (:func:`pml_design.datasets.load_adult`).

    Returns
    -------
    LaplaceUtilityResult
        The result of :func:`laplace_utility_experiment` on that column.

    Raises
    ------
    ValueError
        If ``feature`` is neither ``"income"`` nor ``"sex"``.
    """
    from ..datasets import load_adult

    if feature not in ("income", "sex"):
        raise ValueError(f"feature must be 'income' or 'sex', got {feature!r}")
    data = load_adult(split)
    x = data.income if feature == "income" else data.sex
    return laplace_utility_experiment(x, ms, epsilons, deltas, n_shuffles, rng)
