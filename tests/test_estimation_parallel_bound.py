"""The background moment bound (``design/estimation/parallel_bound.py``): a forked process that must be valid,
in by its deadline, quiet, and gone afterwards.

Validity by an independent path: the value never exceeds the proven optimum of the enumerated ray design (complete
enumeration, the design's own solver on every ray) on both sides of Proposition 2, rare categories, an unseen
category and the simplex, with the branch and bound pricing (enumeration off), also when fed a poor design.
"""

from __future__ import annotations

import math
import multiprocessing
import time
import warnings

import numpy as np
import pytest

import pml_design as pml
from pml_design.design.estimation import api, rounds
from pml_design.design.estimation import parallel_bound as PB
from pml_design.design.utilities import FrequencyEstimation
from pml_design.uncertainty import L1Ball

from tests.test_estimation_coordinate_bound import enumerated_optima

pytestmark = pytest.mark.skipif(not PB.available(PB.MIN_SECONDS), reason="needs Linux fork and two usable CPUs")


def _normalised(W, p):
    q = p @ W
    return W / q, q


def test_available_only_for_long_runs_and_when_enabled(monkeypatch):
    assert PB.available(PB.MIN_SECONDS)
    assert not PB.available(PB.MIN_SECONDS / 2)
    monkeypatch.setattr(PB, "ENABLED", False)
    assert not PB.available(1e6)


def test_not_from_threads_daemons_or_when_switched_off(monkeypatch):
    import threading

    seen = []
    th = threading.Thread(target=lambda: seen.append(PB.available(1e6)))
    th.start()
    th.join()
    assert seen == [False]  # forking from a thread could copy a lock another thread holds
    monkeypatch.setenv("PML_DESIGN_BACKGROUND_BOUND", "0")
    assert not PB.available(1e6)


def _env_switch():
    import os

    return os.environ.get("PML_DESIGN_BACKGROUND_BOUND")


def test_parallel_sweeps_switch_it_off_in_their_tasks(monkeypatch):
    """Process-parallel tasks get the switch; threads (where no design forks) and sequential runs are untouched,
    and the caller's environment is never changed."""
    import joblib

    monkeypatch.delenv("PML_DESIGN_BACKGROUND_BOUND", raising=False)
    par = pml.sweep(_env_switch, [{}] * 2, backend="loky", n_jobs=2, rng_arg=None)
    assert par.values == ["0", "0"]
    for backend in ("sequential", "threading"):
        assert pml.sweep(_env_switch, [{}] * 4, backend=backend, n_jobs=2, rng_arg=None).values == [None] * 4
    with joblib.parallel_config(backend="sequential"):
        assert pml.sweep(_env_switch, [{}] * 2, rng_arg=None).values == [None, None]
    assert _env_switch() is None
    import importlib

    assert importlib.import_module("pml_design.sweep")._NO_BACKGROUND == PB.ENV_SWITCH == "PML_DESIGN_BACKGROUND_BOUND"


def test_background_values_never_above_the_enumerated_optimum(no_enumeration):
    """All cases at once, each in its own process (fed the ε-LDP GRR channel as a poor newer design)."""
    cases = enumerated_optima()
    started = []
    for uset, p, eps, res in cases:
        R, w = _normalised(res.matrix, p)
        bg = PB.BackgroundBound(uset, eps, p, R, w, deadline=time.perf_counter() + 2.0)
        bg.offer(*_normalised(pml.grr(p.size, eps).matrix, p))
        started.append(bg)
    for bg, (uset, p, eps, res) in zip(started, cases):
        mb = bg.result()
        assert time.perf_counter() <= bg.deadline + 3.0  # 0.5 s, then terminate and join (a loaded machine)
        assert mb is not None, bg.error
        assert math.isfinite(mb.value) and mb.value <= res.utility * (1 + 1e-7), (uset, mb, res.utility)
        assert bg._closed


def test_an_error_in_the_child_is_reported_not_raised():
    p = np.full(4, 0.25)
    R, w = _normalised(pml.grr(4, 1.0).matrix, p)
    bg = PB.BackgroundBound(L1Ball(p, 0.1), 1.0, np.full(5, 0.2), R, w, deadline=time.perf_counter() + 2.0)
    assert bg.result() is None
    assert bg.error.startswith("ValueError") and "prior" in bg.error
    bg.close()  # idempotent
    assert bg._closed and not [c for c in multiprocessing.active_children() if c.name == "pml-design-bound"]


def test_result_waits_no_longer_than_asked():
    p = 1 / np.arange(1, 31) ** 1.1
    p /= p.sum()
    R, w = _normalised(pml.grr(30, 1.0).matrix, p)
    bg = PB.BackgroundBound(L1Ball(p, 0.3), 1.0, p, R, w, deadline=time.perf_counter() + 30.0)
    t = time.perf_counter()
    mb = bg.result(until=t + 0.3)  # what the process has reported by then (each rise is valid), or nothing
    assert time.perf_counter() - t < 3.0  # 0.3 s, then terminate and join (a loaded machine)
    assert (mb is None and bg.error) or (mb.rounds >= 1 and math.isfinite(mb.value))
    assert bg._closed


def test_the_design_uses_it_quietly_and_in_time(monkeypatch, capfd):
    """A design outside Proposition 2 without enumeration (N = 24): the background value is a valid bound that the
    design's lower bound includes; nothing is written; the time limit holds; no process is left."""
    monkeypatch.setattr(PB, "MIN_SECONDS", 1.0)
    p = 1 / np.arange(1, 25) ** 1.1
    p /= p.sum()
    uset = L1Ball(p, 0.3)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = api.design_frequency_estimation(uset, 1.0, FrequencyEstimation(), p, time_limit=4.0)
    assert time.perf_counter() - t <= 1.1 * 4.0 + 5
    bg = res.info["background_bound"]
    assert bg is not None and "value" in bg, bg
    assert math.isfinite(bg["value"]) and bg["value"] <= res.utility
    assert res.lower_bound >= bg["value"] - 1e-9 * abs(bg["value"])
    assert not [c for c in multiprocessing.active_children() if c.name == "pml-design-bound"]
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_with_it_the_rounds_take_the_end_of_run_relaxations_time(monkeypatch):
    """Once the process runs, the end-of-run relaxations (which it computes on the other CPU) are skipped and the
    rounds go on until BACKGROUND_TAIL of the limit is left; without it they run as before."""
    monkeypatch.setattr(PB, "MIN_SECONDS", 1.0)
    p = 1 / np.arange(1, 25) ** 1.1
    p /= p.sum()
    uset = L1Ball(p, 0.3)
    calls = []
    moment = rounds.moment_bound
    monkeypatch.setattr(rounds, "moment_bound", lambda *a, **k: calls.append("moment") or moment(*a, **k))
    for enabled in (True, False):
        calls.clear()
        monkeypatch.setattr(PB, "ENABLED", enabled)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = api.design_frequency_estimation(uset, 1.0, FrequencyEstimation(), p, time_limit=3.0)
        assert (res.info["background_bound"] is not None) == enabled
        assert calls == ([] if enabled else ["moment"])
        assert math.isfinite(res.lower_bound) and res.lower_bound <= res.utility
    # a process that starts but never gives a value leaves the end-of-run relaxations their share (found by review:
    # the lower bound fell to the data-processing floor)
    calls.clear()
    monkeypatch.setattr(PB, "ENABLED", True)

    def failing(*a, **k):
        raise RuntimeError("no value")

    monkeypatch.setattr(PB, "moment_bound", failing)  # in the forked child
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = api.design_frequency_estimation(uset, 1.0, FrequencyEstimation(), p, time_limit=3.0)
    assert "error" in res.info["background_bound"] and calls == ["moment"]
    assert res.lower_bound > 0.5 * res.utility


def test_short_runs_start_no_process():
    p = np.full(20, 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = api.design_frequency_estimation(L1Ball(p, 0.3), 1.0, FrequencyEstimation(), p, time_limit=1.0)
    assert res.info["background_bound"] is None


def test_the_design_does_not_depend_on_it(monkeypatch):
    """Nothing flows back: the same rounds give the same design with the background bound on and off."""
    monkeypatch.setattr(PB, "MIN_SECONDS", 1.0)
    p = 1 / np.arange(1, 25) ** 1.1
    p /= p.sum()
    uset = L1Ball(p, 0.3)
    out = []
    for enabled in (True, False):
        monkeypatch.setattr(PB, "ENABLED", enabled)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(api.design_frequency_estimation(uset, 1.0, FrequencyEstimation(), p, time_limit=20.0,
                                                       max_iter=3))
    assert out[0].info["background_bound"] is not None and out[1].info["background_bound"] is None
    assert out[0].utility == out[1].utility
    assert np.array_equal(out[0].matrix, out[1].matrix)


def test_no_threads_or_file_descriptors_are_left(no_enumeration):
    """Offers larger than a pipe's buffer (N = 70: 140 rays of 70 doubles), one never taken: after close, the same
    threads and open files as before."""
    import os
    import threading

    p = 1 / np.arange(1, 71) ** 1.1
    p /= p.sum()
    R, w = _normalised(pml.grr(70, 1.0).matrix, p)
    uset = L1Ball(p, 0.3)

    def count():
        return threading.active_count(), len(os.listdir("/proc/self/fd"))

    counts = []
    for _ in range(5):
        bg = PB.BackgroundBound(uset, 1.0, p, R, w, deadline=time.perf_counter() + 5.0)
        for _ in range(3):
            bg.offer(np.tile(R, (1, 3)), np.tile(w, 3))
        bg.close()
        bg.result()
        counts.append(count())
    # multiprocessing's shared-memory heap keeps its arenas (one file each) for reuse: a level, not a leak per run
    assert counts[-1] == counts[1] and counts[0][0] == counts[-1][0], counts


def test_the_child_never_calls_a_solver_the_parent_threaded(monkeypatch, no_enumeration):
    """Clarabel's thread pool, once started by the parent, hangs a forked child (reproduced with cvxpy: a 100 × 200
    lasso solved in the parent, then in a fork, which was still running after 10 s): the child's relaxed masters
    never fall back to cvxpy. The coordinate IPM is made to fail so that the fallback would be taken, and the
    fallback raises if called."""
    from pml_design.design.estimation import moment_master as MM

    def no_cvxpy(*a, **k):
        raise RuntimeError("cvxpy called in the background process")

    monkeypatch.setattr(MM, "_relaxed_master_ipm", lambda *a, **k: None)
    monkeypatch.setattr(MM, "_relaxed_master", no_cvxpy)
    monkeypatch.setattr(MM, "SOLVE_RATE", 1e12)  # the fallback would always fit in the time left
    uset, p, eps, res = enumerated_optima()[0]
    R, w = _normalised(res.matrix, p)
    bg = PB.BackgroundBound(uset, eps, p, R, w, deadline=time.perf_counter() + 3.0)
    mb = bg.result()
    assert bg.error is None and mb is not None and math.isfinite(mb.value), bg.error
    assert mb.value <= res.utility * (1 + 1e-7)


def test_the_offered_rays_are_the_design_s_heaviest():
    """Built column by column for the few offered (every round), they equal the heaviest of the full ray list."""
    rng = np.random.default_rng(0)
    n = 12
    V, x = rng.random((n, 30)), rng.random(31)
    W = rng.dirichlet(np.ones(200), size=n)
    W[:, 3] = 0.0  # a column no prior reaches is not a ray
    p = rng.dirichlet(np.ones(n))
    R, w = rounds._as_rays(V, x, W, p)
    top = np.argsort(-w)[: 8 * n]
    Rh, wh = rounds._heaviest_rays(V, x, W, p, 8 * n)
    assert np.array_equal(Rh, R[:, top]) and np.array_equal(wh, w[top])


def test_the_capped_dual_alone_above_the_moment_alphabets(monkeypatch):
    """Above MOMENT_MAX_N (lowered here) the child runs only the capped dual (docs/design.md §7.6): no rays are shared
    (an offer is a no-op), its value comes back as ``cap_value`` and is valid; the moment bound's value is -inf."""
    monkeypatch.setattr(PB, "CAP_MIN_N", 2)
    monkeypatch.setattr(PB, "MOMENT_MAX_N", 2)
    for uset, p, eps, res in enumerated_optima()[:2]:
        R, q = _normalised(res.matrix, p)
        bg = PB.BackgroundBound(uset, eps, p, R, q, deadline=time.perf_counter() + 2.0)
        bg.offer(R, q)
        assert bg._ch.k == 0
        mb = bg.result()
        assert mb is not None and mb.value == -math.inf
        assert np.isfinite(bg.cap_value) and bg.cap_value <= res.utility * (1 + 1e-7)
