"""Tests of pml_design.sweep: identical results for every backend, seeds, ordering, errors."""

from __future__ import annotations

import importlib.util
import os
import pathlib

import joblib
import numpy as np
import pytest

from pml_design.sweep import BACKEND_ENV, grid, sweep, task_seed


def noisy_mean(scale: float, n: int, rng: np.random.Generator) -> dict:
    """A small randomized task (module level so every backend can pickle it)."""
    x = rng.laplace(0.0, scale, size=n)
    return {"mean": float(x.mean()), "pid": os.getpid()}


def deterministic(a: int, b: int) -> int:
    return 10 * a + b


TASKS = grid(scale=[0.5, 1.0, 2.0], n=[5, 50])


def _means(res):
    return [v["mean"] for v in res.values]


def test_grid_product_order_and_errors():
    assert grid(a=[1, 2], b=["x", "y"]) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]
    with pytest.raises(ValueError, match="axis 'a'"):
        grid(a=[])
    with pytest.raises(TypeError, match="axis 'a'"):
        grid(a="abc")


def test_seeds_are_seedsequence_spawns():
    """task_seed(s, i, r) is the r-th spawn of the i-th spawn of SeedSequence(s): independent of everything else."""
    a = np.random.default_rng(task_seed(7, 3, 2)).random(4)
    b = np.random.default_rng(np.random.SeedSequence(7).spawn(4)[3].spawn(3)[2]).random(4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, np.random.default_rng(task_seed(7, 3, 1)).random(4))


def test_values_match_a_plain_loop_in_task_order():
    res = sweep(noisy_mean, TASKS, seed=11, repetitions=3, backend="sequential")
    expected = [noisy_mean(**t, rng=np.random.default_rng(task_seed(11, i, r)))["mean"]
                for i, t in enumerate(TASKS) for r in range(3)]
    assert _means(res) == expected
    assert [(p.index, p.repetition) for p in res.points] == [(i, r) for i in range(len(TASKS)) for r in range(3)]
    assert res.rows()[4] == {**TASKS[1], "repetition": 1, **res.values[4]}
    assert len(res.by_task()) == len(TASKS) and all(len(g) == 3 for g in res.by_task())
    # power: a different seed gives different values
    assert _means(sweep(noisy_mean, TASKS, seed=12, repetitions=3, backend="sequential")) != expected


def test_identical_across_local_backends_and_worker_counts():
    ref = _means(sweep(noisy_mean, TASKS, seed=5, repetitions=2, backend="sequential"))
    loky = sweep(noisy_mean, TASKS, seed=5, repetitions=2, backend="loky", n_jobs=2)
    assert _means(loky) == ref
    assert any(v["pid"] != os.getpid() for v in loky.values)  # really ran in worker processes
    assert _means(sweep(noisy_mean, TASKS, seed=5, repetitions=2, backend="threading", n_jobs=3)) == ref


def test_more_repetitions_keep_earlier_ones():
    two = sweep(noisy_mean, TASKS, seed=5, repetitions=2, backend="sequential").by_task()
    four = sweep(noisy_mean, TASKS, seed=5, repetitions=4, backend="sequential").by_task()
    assert [[v["mean"] for v in g[:2]] for g in four] == [[v["mean"] for v in g] for g in two]


def test_seed_none_records_entropy_that_reproduces():
    res = sweep(noisy_mean, TASKS[:2], seed=None, backend="sequential")
    again = sweep(noisy_mean, TASKS[:2], seed=res.seed_entropy, backend="sequential")
    assert _means(res) == _means(again)


def test_backend_from_environment_and_outer_parallel_config(monkeypatch):
    ref = _means(sweep(noisy_mean, TASKS, seed=1, backend="sequential"))
    monkeypatch.setenv(BACKEND_ENV, "threading")
    res = sweep(noisy_mean, TASKS, seed=1)
    assert res.backend == "threading" and _means(res) == ref
    monkeypatch.delenv(BACKEND_ENV)
    with joblib.parallel_config("threading", n_jobs=2):
        res = sweep(noisy_mean, TASKS, seed=1)
    assert res.backend == "ThreadingBackend" and _means(res) == ref


def test_deterministic_functions_and_dict_of_axes():
    res = sweep(deterministic, {"a": [1, 2], "b": [3, 4]}, rng_arg=None, backend="sequential")
    assert res.values == [13, 14, 23, 24]


def test_empty_task_list():
    res = sweep(noisy_mean, [], seed=0, backend="sequential")
    assert res.values == [] and res.rows() == []


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"backend": "spark"}, ValueError, "backend must be one of"),
        ({"backend": 3}, TypeError, "backend must be"),
        ({"repetitions": 0}, ValueError, "repetitions"),
        ({"seed": -1}, ValueError, "seed"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"backend": "dask"}, ValueError, "running dask cluster"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sweep(noisy_mean, TASKS, **kwargs)


def test_bad_tasks():
    with pytest.raises(TypeError, match=r"tasks\[0\]"):
        sweep(noisy_mean, [3])
    with pytest.raises(ValueError, match="generator argument 'rng'"):
        sweep(noisy_mean, [{"scale": 1, "n": 2, "rng": 0}])
    with pytest.raises(TypeError, match="func must be callable"):
        sweep(3, TASKS)


def test_dask_backend_with_local_cluster_gives_identical_results():
    distributed = pytest.importorskip("distributed")
    ref = _means(sweep(noisy_mean, TASKS, seed=9, repetitions=2, backend="sequential"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as lc, \
            distributed.Client(lc) as client:
        by_name = sweep(noisy_mean, TASKS, seed=9, repetitions=2, backend="dask")
        by_client = sweep(noisy_mean, TASKS, seed=9, repetitions=2, backend=client, progress=True)
        fig1 = _load_fig1()
        rows_dask = fig1.figure1_rows(**fig1.QUICK, backend="dask")
    assert by_name.backend == "dask" and by_client.backend == "dask"
    assert _means(by_name) == ref
    assert _means(by_client) == ref
    # a figure script's sweep: the same rows on a cluster as in the calling process
    assert rows_dask == fig1.figure1_rows(**fig1.QUICK, backend="sequential")


def _load_fig1():
    path = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "fig_histogram_fig1.py"
    spec = importlib.util.spec_from_file_location("fig_histogram_fig1_sweeptest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ray_backend_if_installed():
    ray = pytest.importorskip("ray")
    ref = _means(sweep(noisy_mean, TASKS[:2], seed=2, backend="sequential"))
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True)
    try:
        assert _means(sweep(noisy_mean, TASKS[:2], seed=2, backend="ray")) == ref
    finally:
        ray.shutdown()
