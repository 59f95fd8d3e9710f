"""Is a time limit long enough for the starting ε-LDP channel alone? (the time contract above N = 1 200).

Implements: docs/design.md §12 (time limits): above the column generation's range the design is the certified compact
LDP channel, whose build, certification and exact error cost ``O(N·K + N²·K + N³)``; a limit too short for that is
refused before any large work, with what it would take, instead of ending far beyond ``1.1 × time_limit + 5 s``.
"""

from __future__ import annotations

import math
import time

import numpy as np

__all__ = ["EVALUATION_LENIENCY", "EVALUATION_SECONDS", "REFERENCE_WORKLOAD_SECONDS", "SINGLE_THREAD_WORKLOAD_SECONDS",
           "cached_machine_factor", "cached_single_thread_factor", "check_affordable", "machine_factor"]

#: Seconds one evaluation of an N × K channel takes on the 2-core reference machine (build, certification, cleaning
#: and exact error): per entry (N·K), per term of the Fisher information (N²·K) and of its Cholesky trace (N³).
#: N = 10 000, K = 30 027 (ε = 1): 119 s for the whole call with a 120 s limit (profiled: ~58 + 33 + 9 s), 126 s
#: predicted. Scaled by :func:`machine_factor`.
EVALUATION_SECONDS: tuple[float, float, float] = (2.4e-7, 1.4e-11, 1.2e-11)
#: Seconds of :func:`machine_factor`'s fixed workload on the reference machine (0.0125–0.020 s measured there).
REFERENCE_WORKLOAD_SECONDS: float = 0.014
#: Seconds of :func:`machine_factor`'s workload on one BLAS thread (:func:`cached_single_thread_factor`), measured on
#: the reference machine at a load of about 1 (0.016–0.018 s in six processes, where the default threads gave factors
#: of 1.06–5.13: two BLAS threads thrash as soon as anything else runs).
SINGLE_THREAD_WORKLOAD_SECONDS: float = 0.016
#: A limit is refused only when this share of the estimate exceeds what the time contract allows (the estimate's
#: machine factor varies by ±25 %): refused when clearly impossible, never where the run would have fitted. N = 10 000,
#: ε = 1: refused at 60 s (estimate 117–161 s), run at 120 s (119 s measured).
EVALUATION_LENIENCY: float = 0.8

#: Seconds a measured :func:`machine_factor` is reused by :func:`cached_machine_factor` (the measurement costs ~0.1 s).
FACTOR_TTL_SECONDS: float = 60.0
_factor_cache: list[float] = []  # [value, time.perf_counter() of the measurement]
_single_cache: list[float] = []  # the same, on one BLAS thread


def cached_machine_factor() -> float:
    """:func:`machine_factor`, measured at most once every :data:`FACTOR_TTL_SECONDS` in a process (the cap bound's
    affordability asks for it several times in one design).

    Returns
    -------
    float
        The factor that scales a time measured on the reference machine to this one.
    """
    now = time.perf_counter()
    if not _factor_cache or now - _factor_cache[1] > FACTOR_TTL_SECONDS:
        _factor_cache[:] = [machine_factor(), now]
    return _factor_cache[0]


def cached_single_thread_factor() -> float:
    """:func:`machine_factor` on one BLAS thread, over :data:`SINGLE_THREAD_WORKLOAD_SECONDS`; measured at most once
    every :data:`FACTOR_TTL_SECONDS` in a process.

    For single-threaded work (formatting and writing a mechanism file, the disclosure listing: the CLI's time kept
    back, ``cli.design._time_budget``). A review found the CLI's output cap and refusals changing from run to run:
    the default factor read 1.02–4.86 in back-to-back processes at a load of 1.3–2.4 while that work took the same
    0.74 µs an entry; on one thread the workload took 0.016–0.018 s in every process.

    Returns
    -------
    float
        The factor that scales a single-threaded time measured on the reference machine to this one (≥ 0.5).
    """
    now = time.perf_counter()
    if not _single_cache or now - _single_cache[1] > FACTOR_TTL_SECONDS:
        from threadpoolctl import threadpool_limits  # noqa: PLC0415

        with threadpool_limits(1):
            _single_cache[:] = [machine_factor(SINGLE_THREAD_WORKLOAD_SECONDS), now]
    return _single_cache[0]


def machine_factor(reference: float = REFERENCE_WORKLOAD_SECONDS) -> float:
    """This machine's time for a fixed workload (a 400 × 400 product and a pass over 4·10⁶ doubles, three times;
    best of five, ~0.1 s) over the reference machine's, at least 0.5. On the reference machine it varies by ±25 %
    from one process to the next (0.0125–0.020 s), hence :data:`EVALUATION_LENIENCY`.

    Parameters
    ----------
    reference : float, default :data:`REFERENCE_WORKLOAD_SECONDS`
        The workload's seconds on the reference machine (:data:`SINGLE_THREAD_WORKLOAD_SECONDS` on one thread).

    Returns
    -------
    float
        The factor that scales :data:`EVALUATION_SECONDS` to this machine.
    """
    x, y = np.full((400, 400), 0.5), np.full(4_000_000, 0.25)
    best = math.inf
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(3):
            _ = x @ x.T, float(np.maximum(y, 0.5).sum())
        best = min(best, time.perf_counter() - t)
    return max(0.5, best / reference)


def check_affordable(n: int, epsilon: float, prior: np.ndarray, max_outputs: int, seconds: float) -> None:
    """Refuse, before any large work, a time limit too short to build, certify and evaluate even the starting
    ε-LDP channel (the time contract: the call ends within 1.1 × time_limit + a few seconds; docs/design.md §12).

    Parameters
    ----------
    n, epsilon, prior, max_outputs
        The design's symbols, ε, prior and the compact channel's output budget.
    seconds : float
        What is left of the time limit.

    Raises
    ------
    ValueError
        When :data:`EVALUATION_LENIENCY` × the estimated time exceeds ``1.1 × seconds + 5``: it names the time
        needed and the subset-selection oracle as the alternative.
    """
    from ...mechanisms.frequency_oracles.optimum import _best_candidate  # noqa: PLC0415

    name, k = _best_candidate(n, epsilon, prior, max_outputs)[:2]
    a, b, c = EVALUATION_SECONDS
    need = machine_factor() * (a * n * k + b * n * n * k + c * float(n) ** 3)
    if EVALUATION_LENIENCY * need > 1.1 * seconds + 5.0:
        raise ValueError(
            f"the time limit is too short for N = {n} symbols: building, certifying and evaluating the starting "
            f"epsilon-LDP channel ({name}, {k} outputs) alone takes about {need:.0f} s on this machine, and "
            f"{max(seconds, 0):.0f} s are left; set solver_options={{'time_limit': ...}} to at least "
            f"{math.ceil(1.2 * need)} s, or deploy the subset-"
            f"selection oracle (pml_design.subset_selection({n}, {epsilon:g})), which is epsilon-LDP and hence "
            "epsilon-PML for every distribution"
        )
