"""Parameter sweeps that run the same on a laptop and on a cluster, with identical results.

One small utility, built on :mod:`joblib`: :func:`sweep` evaluates a function on every point of a parameter
grid (ε, δ, m, …) times a number of repetitions, in parallel, and returns the results **in task order**.

* Backends: local processes (joblib's ``"loky"``) by default; ``"threading"``, ``"sequential"``; ``"dask"``
  (needs :mod:`distributed` and a running ``distributed.Client``, or pass the client itself as ``backend``);
  ``"ray"`` (if :mod:`ray` is installed). The backend can also come from the environment variable
  ``PML_DESIGN_BACKEND`` or from an enclosing ``joblib.parallel_config(...)`` block, so code that calls
  :func:`sweep` runs on a cluster without being changed.
* Randomness: the task ``i``, repetition ``r`` gets its own generator built from
  ``numpy.random.SeedSequence(seed, spawn_key=(i, r))`` — the same stream :meth:`SeedSequence.spawn` would give
  — so results depend only on ``(seed, i, r)``, never on the backend, the number of workers or the order in
  which tasks finish. Adding repetitions leaves the earlier ones unchanged.
* Progress: a tqdm bar on ``stderr`` (see :mod:`pml_design.progress`), off with ``progress=False``.

Example
-------
>>> import numpy as np
>>> from pml_design.sweep import grid, sweep
>>> def mean_of_noise(scale, n, rng):
...     return float(rng.laplace(0.0, scale, size=n).mean())
>>> res = sweep(mean_of_noise, grid(scale=[0.5, 1.0], n=[10]), seed=0, repetitions=2, backend="sequential")
>>> len(res.values)
4
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import joblib
import numpy as np

from ._validation import check_positive_int, fmt
from .progress import progress_bar

__all__ = ["BACKEND_ENV", "BACKENDS", "SweepPoint", "SweepResult", "grid", "sweep", "task_seed"]

#: Environment variable naming the default backend of :func:`sweep` (e.g. ``dask``) when none is passed.
BACKEND_ENV: str = "PML_DESIGN_BACKEND"

#: Backend names accepted by :func:`sweep` (a ``distributed.Client`` is accepted as well).
BACKENDS: tuple[str, ...] = ("loky", "threading", "sequential", "multiprocessing", "dask", "ray")


@dataclass(frozen=True)
class SweepPoint:
    """One evaluated task of a sweep.

    Attributes
    ----------
    index : int
        Position of the task in the task list.
    repetition : int
        Repetition number ``0 … repetitions−1``.
    params : dict
        The keyword arguments the function was called with (without ``rng``).
    value : Any
        What the function returned.
    """

    index: int
    repetition: int
    params: dict
    value: Any


@dataclass(frozen=True)
class SweepResult:
    """Results of :func:`sweep`, in task order (task-major, repetitions inner).

    Attributes
    ----------
    points : tuple of SweepPoint
    seed_entropy : int
        Root entropy of the per-task seeds: pass it as ``seed`` to reproduce the run exactly (also when the
        sweep was started with ``seed=None``).
    backend : str
        The joblib backend that ran the tasks.
    repetitions : int
    """

    points: tuple[SweepPoint, ...]
    seed_entropy: int
    backend: str
    repetitions: int

    @property
    def values(self) -> list[Any]:
        """The returned values, in task order (repetitions inner)."""
        return [p.value for p in self.points]

    def rows(self) -> list[dict]:
        """Flat records ``{**params, "repetition": r, **value}`` (``"value": value`` if it is not a dict)."""
        out = []
        for p in self.points:
            row = dict(p.params)
            row["repetition"] = p.repetition
            if isinstance(p.value, Mapping):
                row.update(p.value)
            else:
                row["value"] = p.value
            out.append(row)
        return out

    def by_task(self) -> list[list[Any]]:
        """Values grouped per task: ``result.by_task()[i][r]``."""
        r = self.repetitions
        vals = self.values
        return [vals[i : i + r] for i in range(0, len(vals), r)]


def grid(**axes: Sequence[Any]) -> list[dict]:
    """The Cartesian product of parameter axes, as a list of keyword-argument dicts (last axis fastest).

    Parameters
    ----------
    **axes : sequence
        One sequence of values per parameter name, e.g. ``epsilon=[0.5, 1.0], m=[100, 1000]``.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> grid(epsilon=[0.5, 1.0], m=[10])
    [{'epsilon': 0.5, 'm': 10}, {'epsilon': 1.0, 'm': 10}]
    """
    names = list(axes)
    values = []
    for name in names:
        v = axes[name]
        if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
            raise TypeError(f"grid axis {name!r} must be a sequence of values, got {fmt(v)}")
        v = list(v)
        if not v:
            raise ValueError(f"grid axis {name!r} must not be empty")
        values.append(v)
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def task_seed(seed: int, index: int, repetition: int = 0) -> np.random.SeedSequence:
    """The seed of task ``index``, repetition ``repetition`` of a sweep with root ``seed``.

    Equal to ``SeedSequence(seed).spawn(index + 1)[index].spawn(repetition + 1)[repetition]``: independent
    streams per task and repetition that depend on nothing else.

    Parameters
    ----------
    seed : int
        Root entropy (≥ 0).
    index, repetition : int
        Task position and repetition number (≥ 0).

    Returns
    -------
    numpy.random.SeedSequence
    """
    return np.random.SeedSequence(int(seed), spawn_key=(int(index), int(repetition)))


#: Environment variable that keeps a design from starting its background bound process: a parallel sweep already
#: uses the CPUs. The same name as ``pml_design.design.estimation.parallel_bound.ENV_SWITCH`` (this layer may not import
#: that one; a test ties the two).
_NO_BACKGROUND = "PML_DESIGN_BACKGROUND_BOUND"


def _call(func: Callable[..., Any], params: dict, seq: np.random.SeedSequence | None, rng_arg: str | None,
          solo: bool = True) -> Any:
    kwargs = dict(params)
    if rng_arg is not None:
        kwargs[rng_arg] = np.random.default_rng(seq)
    if solo:
        return func(**kwargs)
    old = os.environ.get(_NO_BACKGROUND)
    os.environ[_NO_BACKGROUND] = "0"  # tasks side by side: no design adds a process of its own
    try:
        return func(**kwargs)
    finally:
        if old is None:
            os.environ.pop(_NO_BACKGROUND, None)
        else:
            os.environ[_NO_BACKGROUND] = old


def _in_processes(name: str, n_jobs: int | None) -> bool:
    """True when the tasks run side by side in worker processes (each on its main thread): there a design must not
    add a process of its own. Thread backends need nothing (a design off the main thread starts none), and they must
    not touch ``os.environ`` from several threads."""
    if name == "outer":
        backend, outer_jobs = joblib.parallel.get_active_backend()
        kind = type(backend).__name__
        jobs = n_jobs if n_jobs is not None else outer_jobs
        return kind in ("LokyBackend", "MultiprocessingBackend", "RayBackend") and jobs != 1
    return name == "ray" or (name in ("loky", "multiprocessing") and n_jobs != 1)


def _outer_backend() -> str | None:
    """Name of the backend set by an enclosing ``joblib.parallel_config`` block (None if there is none)."""
    try:  # joblib keeps the active configuration in a thread-local; not a public attribute
        cfg = joblib.parallel._backend.config  # type: ignore[attr-defined]
        backend = cfg["backend"]
    except (AttributeError, KeyError, TypeError):
        return None
    if backend is None or type(backend).__name__ == "default" or isinstance(backend, str):
        return backend if isinstance(backend, str) else None
    return "outer"


def _resolve_backend(backend: object) -> tuple[str, dict]:
    """Return (joblib backend name or ``"outer"``, backend parameters)."""
    if backend is not None and not isinstance(backend, str):
        if hasattr(backend, "submit") and hasattr(backend, "scheduler_info"):  # a distributed.Client
            return "dask", {"client": backend}
        raise TypeError(f"backend must be a backend name {BACKENDS}, a distributed.Client or None, got {fmt(backend)}")
    if backend is None:
        env = os.environ.get(BACKEND_ENV, "").strip()
        if env:
            backend = env
        elif _outer_backend() is not None:
            return "outer", {}
        else:
            backend = "loky"
    name = str(backend).lower()
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} (or a distributed.Client), got {backend!r}")
    if name == "dask":
        try:
            import distributed  # noqa: F401, PLC0415
        except ImportError as exc:
            raise ImportError("backend 'dask' needs the 'distributed' package: pip install 'dask[distributed]'") from exc
        from distributed import get_client  # noqa: PLC0415

        try:
            get_client()
        except ValueError as exc:
            raise ValueError(
                "backend 'dask' needs a running dask cluster: create a distributed.Client (e.g. "
                "Client(LocalCluster()) or Client('scheduler:8786')) first, or pass the client as backend"
            ) from exc
    if name == "ray":
        try:
            from ray.util.joblib import register_ray  # noqa: PLC0415
        except ImportError as exc:
            raise ImportError("backend 'ray' needs the 'ray' package: pip install 'ray[default]'") from exc
        register_ray()
    return name, {}


def sweep(
    func: Callable[..., Any],
    tasks: Iterable[Mapping[str, Any]] | Mapping[str, Sequence[Any]],
    *,
    seed: int | None = 0,
    repetitions: int = 1,
    backend: object = None,
    n_jobs: int | None = None,
    progress: bool = False,
    desc: str | None = None,
    rng_arg: str | None = "rng",
) -> SweepResult:
    """Evaluate ``func(**params, rng=...)`` for every task and repetition, in parallel, results in task order.

    Parameters
    ----------
    func : callable
        A picklable function (module level for process/cluster backends; loky also accepts closures).
        Called as ``func(**params, rng=numpy.random.Generator)``; its return value must be picklable.
    tasks : iterable of dict, or dict of sequences
        Keyword arguments per task; a dict of sequences is expanded with :func:`grid`.
    seed : int or None, default 0
        Root seed; ``None`` draws fresh OS entropy (recorded in :attr:`SweepResult.seed_entropy`).
    repetitions : int, default 1
        Independent repetitions per task (each with its own generator).
    backend : str, distributed.Client or None
        ``"loky"`` (local processes), ``"threading"``, ``"sequential"``, ``"multiprocessing"``, ``"dask"``,
        ``"ray"``, or a ``distributed.Client``. ``None``: the environment variable ``PML_DESIGN_BACKEND``,
        else an enclosing ``joblib.parallel_config`` block, else ``"loky"``.
    n_jobs : int, optional
        Number of workers (default: all CPUs / all cluster workers; ``1`` runs in the calling process).
    progress : bool, default False
        Show a progress bar on ``stderr``.
    desc : str, optional
        Label of the progress bar.
    rng_arg : str or None, default "rng"
        Name of the generator argument of ``func``; ``None`` for deterministic functions.

    Returns
    -------
    SweepResult
        ``.values`` in task order, ``.rows()``, ``.by_task()``, and the seed entropy that reproduces them.

    Notes
    -----
    Reproducibility: task ``i``, repetition ``r`` uses ``np.random.default_rng(task_seed(seed, i, r))``
    (:class:`numpy.random.SeedSequence` spawn keys), so for a given seed the results are identical for every
    backend and worker count — tested in ``tests/test_sweep.py`` for sequential, loky, threading and Dask.
    Not a paper result: the experiment harness of every figure script.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got {fmt(func)}")
    task_list = grid(**tasks) if isinstance(tasks, Mapping) else list(tasks)
    for i, t in enumerate(task_list):
        if not isinstance(t, Mapping):
            raise TypeError(f"tasks[{i}] must be a dict of keyword arguments, got {fmt(t)}")
        if rng_arg is not None and rng_arg in t:
            raise ValueError(f"tasks[{i}] must not contain the generator argument {rng_arg!r} (sweep supplies it)")
    reps = check_positive_int(repetitions, "repetitions")
    if n_jobs is not None:
        n_jobs = int(n_jobs)
        if n_jobs == 0:
            raise ValueError("n_jobs must be a positive number of workers or negative (all CPUs), got 0")
    if seed is None:
        entropy = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    else:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer or None, got {fmt(seed)}")
        entropy = int(seed)
    name, params = _resolve_backend(backend)

    jobs = [
        (i, r, dict(t), task_seed(entropy, i, r) if rng_arg is not None else None)
        for i, t in enumerate(task_list)
        for r in range(reps)
    ]
    solo = not _in_processes(name, n_jobs)
    calls = (joblib.delayed(_call)(func, t, seq, rng_arg, solo) for _, _, t, seq in jobs)
    if name == "outer":
        config: Any = contextlib.nullcontext()
        kwargs: dict = {} if n_jobs is None else {"n_jobs": n_jobs}
        used = type(joblib.parallel.get_active_backend()[0]).__name__
    elif name == "sequential":
        config, kwargs, used = contextlib.nullcontext(), {"n_jobs": 1}, name
    else:
        config = joblib.parallel_config(backend=name, n_jobs=n_jobs if n_jobs is not None else -1, **params)
        kwargs, used = {}, name
    values: list[Any] = []
    if jobs:
        with config:
            parallel = joblib.Parallel(return_as="generator", **kwargs)
            bar = progress_bar(parallel(calls), total=len(jobs), desc=desc or "sweep", enabled=progress)
            with bar:
                values = list(bar)
    points = tuple(SweepPoint(i, r, t, v) for (i, r, t, _), v in zip(jobs, values))
    return SweepResult(points=points, seed_entropy=entropy, backend=used, repetitions=reps)
