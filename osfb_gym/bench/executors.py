"""Where the cells of a sweep run: this process, a pool of local processes, or Ray.

Cells travel in chunks and come back as rows, stored as each chunk returns;
every cell is seeded, so the rows are the same on every executor. RL models
are trained once, in this process, and travel with the tasks as bytes.
"""

from __future__ import annotations

import io
import itertools
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from osfb_gym.bench.rl import ALGORITHMS
from osfb_gym.bench.store import write_atomically
from osfb_gym.bench.sweep import RL_PARAMS, Cell, make_agent
from osfb_gym.core.optional import require, require_for_argument
from osfb_gym.core.replicas import replica_spec_of
from osfb_gym.core.validation import check_choice, check_int
from osfb_gym.runner import Trajectory, run_episode

EXECUTORS = ("local", "ray")
MAX_CHUNK = 256  # cells a task holds by default before it closes at a group boundary
#: how many points of the R_t / t curve a stored row keeps (log-spaced, last step included)
CURVE_POINTS = 60
#: a task (chunk of cells) with the RL models it needs, by model key
Task = tuple[list[Cell], dict[str, bytes]]

_ENVS: dict[str, gym.Env] = {}


def curve_indices(steps: int, points: int = CURVE_POINTS, stride: int | None = None) -> np.ndarray:
    """Return the 0-based steps at which a stored row samples its curves.

    Log-spaced (``points`` of them), or every ``stride`` steps and the last.

    Examples
    --------
    >>> curve_indices(5).tolist(), int(curve_indices(2000)[-1])
    ([0, 1, 2, 3, 4], 1999)
    >>> curve_indices(120, stride=50).tolist()
    [49, 99, 119]
    """
    if stride is not None:
        return np.unique(np.r_[np.arange(stride, steps + 1, stride), steps]) - 1
    if steps <= points:
        return np.arange(steps)
    return np.unique(np.geomspace(1, steps, points).round().astype(int) - 1)


def _env(cell: Cell) -> gym.Env:
    # making an env can load a dataset: keep the last few per worker process
    key = repr((cell.env_id, sorted(cell.env_kwargs.items())))
    if key not in _ENVS:
        if len(_ENVS) >= 4:
            _ENVS.pop(next(iter(_ENVS))).close()
        _ENVS[key] = gym.make(cell.env_id, **cell.env_kwargs)
    return _ENVS[key]


def _rl_agent(cell: Cell, model: bytes) -> Any:
    from agents.rl import SB3Agent, algorithm

    require("torch", f"the {cell.agent} agent").set_num_threads(1)
    loaded = algorithm(cell.agent).load(io.BytesIO(model), device="cpu")
    return SB3Agent(loaded, deterministic=cell.params.get("deterministic", True))


def run_cell(cell: Cell, model: bytes | None = None) -> dict[str, Any]:
    """Run one cell's episode; return its row: identity, metrics, reward, curves at ``curve_t``."""
    started = time.perf_counter()
    agent = make_agent(cell.agent, cell.params) if model is None else _rl_agent(cell, model)
    trajectory = run_episode(_env(cell), agent, cell.seed)
    # what an agent counted about its own episode (e.g. labels a sampler requested)
    counts: dict[str, Any] = getattr(agent, "episode_counts", dict)()
    return {
        **_row(cell, trajectory, time.perf_counter() - started),
        **{key: float(value) for key, value in counts.items()},
    }


def _identity(cell: Cell) -> dict[str, Any]:
    """Return the columns that say which cell a row is."""
    return {
        "key": cell.key,
        "setting": cell.setting,
        "env_id": cell.env_id,
        "env_kwargs": cell.env_kwargs,
        "agent": cell.agent,
        "params": cell.params,
        "seed": cell.seed,
    }


def run_custom(cell: Cell) -> dict[str, Any]:
    """Run a custom cell (:attr:`Cell.runner`) and return its row: identity and what it measured."""
    from osfb_gym.core.family import load

    started = time.perf_counter()
    measured = load(str(cell.runner))(cell)
    return {**_identity(cell), **measured, "seconds": time.perf_counter() - started}


def run_replicas(cells: Sequence[Cell]) -> list[dict[str, Any]]:
    """Run cells that share a setting, a seed and a replica runner as one vector episode.

    The runner is the one the agents' :class:`~osfb_gym.core.replicas.ReplicaSpec`
    names (:func:`replica_groups` grouped them by it), on the env's lockstep
    vector env. The rows are those :func:`run_cell` returns for each cell
    (tested); ``seconds`` is the episode's time divided among them.
    """
    from osfb_gym.core.family import load
    from osfb_gym.runner import run_vector_episode

    started = time.perf_counter()
    first = cells[0]
    agents = [make_agent(cell.agent, cell.params) for cell in cells]
    spec = replica_spec_of(agents[0])
    if spec is None:
        raise ValueError(f"{first.agent} declares no replica spec: its cells run alone")
    envs = gym.make_vec(first.env_id, num_envs=len(cells), lockstep=True, **first.env_kwargs)
    trajectories = run_vector_episode(envs, load(spec.runner)(agents), first.seed)
    envs.close()
    seconds = (time.perf_counter() - started) / len(cells)
    return [_row(c, t, seconds) for c, t in zip(cells, trajectories, strict=True)]


def _row(cell: Cell, trajectory: Trajectory, seconds: float) -> dict[str, Any]:
    at = curve_indices(trajectory.oracle_loss.size, stride=cell.curve_stride)
    # a paper's figures need the family's own curves (from its metrics, via the runner)
    family = {} if cell.curve_stride is None else trajectory.curves
    return {
        **_identity(cell),
        **trajectory.metrics,
        "total_reward": float(np.sum(trajectory.rewards)),
        "revealed_total": int(np.sum(trajectory.n_revealed)),
        "curve_t": (at + 1).tolist(),
        "curve_average_loss": trajectory.average_loss[at].tolist(),
        "curve_loss": trajectory.oracle_loss[at].tolist(),
        **{f"curve_{name}": np.asarray(curve)[at].tolist() for name, curve in family.items()},
        "seconds": seconds,
    }


def replica_groups(cells: Sequence[Cell]) -> list[list[Cell]]:
    """Split ``cells`` (in order) into runs that can be replicas of one vector episode.

    Consecutive cells on the same setting and seed whose agents declare the
    same replica runner for the cell's env (``agent.replica_spec()``, a
    :class:`~osfb_gym.core.replicas.ReplicaSpec`) form a group; every other
    cell (an RL agent, a custom runner, an agent that runs alone) is a group
    of its own.
    """
    from osfb_gym.bench.sweep import agent_classes

    classes = agent_classes()

    def stream(cell: Cell) -> object:
        if cell.runner is not None or cell.agent not in classes:
            return object()  # equal to no other: a group of its own
        spec = replica_spec_of(make_agent(cell.agent, cell.params))
        if spec is None or not spec.runs_on(cell.env_id):
            return object()
        return repr((spec.runner, cell.env_id, sorted(cell.env_kwargs.items()), cell.seed))

    return [list(group) for _, group in itertools.groupby(cells, key=stream)]


def run_task(task: Task) -> list[dict[str, Any]]:
    """Run a chunk of cells in order, replica groups as one vector episode: the unit of work."""
    from threadpoolctl import threadpool_limits

    cells, models = task
    rows: list[dict[str, Any]] = []
    # one BLAS thread everywhere: the workers share the cores, and a sum's order
    # (so its last bits) must not depend on the executor's thread settings
    with threadpool_limits(limits=1):
        for group in replica_groups(cells):
            cell = group[0]
            try:
                if len(group) > 1:
                    rows += run_replicas(group)
                elif cell.runner is not None:
                    rows.append(run_custom(cell))
                else:
                    rows.append(run_cell(cell, models.get(cell.model_key)))
            except (ValueError, TypeError) as error:
                if type(error) not in (ValueError, TypeError):  # a subclass keeps its own
                    raise
                where = f"{cell.agent} on {cell.env_id} (setting {cell.setting}, seed {cell.seed})"
                raise type(error)(f"{where}: {error}") from error
    return rows


def train_models(
    cells: Sequence[Cell], folder: str | Path, *, progress: bool = False
) -> dict[str, bytes]:
    """Train each RL model the cells need, once, saved under ``folder`` (reused on resume).

    ``progress`` shows stable-baselines3's progress bar while a model trains.
    """
    from osfb_gym.bench.rl import train

    models: dict[str, bytes] = {}
    for cell in cells:
        if cell.agent not in ALGORITHMS or cell.runner is not None or cell.model_key in models:
            continue
        path = Path(folder) / f"{cell.agent}-{cell.model_key}.zip"
        if not path.exists():
            params = {**RL_PARAMS, **cell.params}
            model = train(
                cell.env_id,
                cell.agent,
                total_timesteps=int(params["total_timesteps"]),
                env_kwargs=cell.env_kwargs,
                n_envs=int(params["n_envs"]),
                seed=int(params["train_seed"]),
                algo_kwargs=dict(params["algo_kwargs"]),
                torch_threads=1,
                progress_bar=progress,
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            buffer = io.BytesIO()
            model.save(buffer)
            write_atomically(path, buffer.getvalue())
        models[cell.model_key] = path.read_bytes()
    return models


def _group(cell: Cell) -> tuple[str, int, str]:
    """Return the key that keeps cells in one task: a setting's seed, whose cells may be replicas.

    A cell that always runs alone (a custom runner's, an RL model's) is its own key,
    so ``chunk_size`` bounds its task: the RL comparison's cells of one setting and
    seed (every agent, configuration and regime, 35 trainings of 1e6 steps) were one
    task, stored only when all of them had ended.
    """
    alone = cell.runner is not None or cell.agent in ALGORITHMS
    return cell.setting, cell.seed, cell.key if alone else ""


def chunked(
    cells: Sequence[Any],
    workers: int,
    chunk_size: int | None = None,
    key: Callable[[Any], Any] | None = None,
) -> list[list[Any]]:
    """Split ``cells`` into chunks: about eight per worker, so the last ones finish together.

    With ``key``, consecutive cells of one key stay in one chunk (a lending
    setting's seed runs as one replica group); a chunk closes at the first key
    change once it holds ``size`` cells. The default size is at most
    ``MAX_CHUNK``, so a long run stores its rows (and can resume) every few
    minutes even on one worker.

    Examples
    --------
    >>> [len(chunk) for chunk in chunked(list(range(10)), workers=1, chunk_size=4)]
    [4, 4, 2]
    >>> [len(chunk) for chunk in chunked([1, 1, 1, 2, 2, 3], 1, chunk_size=2, key=int)]
    [3, 2, 1]
    """
    size = chunk_size or min(MAX_CHUNK, max(1, math.ceil(len(cells) / (8 * workers))))
    chunks: list[list[Any]] = [[]]
    for previous, cell in zip([None, *cells], cells, strict=False):
        full = len(chunks[-1]) >= size
        if full and (key is None or key(previous) != key(cell)):
            chunks.append([])
        chunks[-1].append(cell)
    return [chunk for chunk in chunks if chunk]


def execute(
    cells: Sequence[Cell],
    on_rows: Callable[[list[dict[str, Any]]], None],
    *,
    executor: str = "local",
    workers: int = 1,
    address: str | None = None,
    models: dict[str, bytes] | None = None,
    chunk_size: int | None = None,
) -> None:
    """Run ``cells`` and hand each finished chunk's rows to ``on_rows`` (in this process).

    ``executor="local"`` runs in this process when ``workers`` is 1, else in a
    pool of ``workers`` processes; ``"ray"`` runs Ray tasks on the cluster at
    ``address``, or on a local Ray with ``workers`` CPUs when it is None.
    ``models`` are the trained RL models by model key (:func:`train_models`);
    ``chunk_size`` is cells per task (default: about eight tasks per worker,
    at most ``MAX_CHUNK``; a setting's seed whose cells may be replicas never split).
    """
    check_choice(executor, "executor", EXECUTORS)
    check_int(workers, "workers", minimum=1)
    # a setting's cells of one seed side by side, so lending grids run as replicas
    ordered = sorted(cells, key=lambda cell: (cell.setting, cell.seed))
    models = models or {}
    tasks: list[Task] = [
        (chunk, {c.model_key: models[c.model_key] for c in chunk if c.model_key in models})
        for chunk in chunked(ordered, workers, chunk_size, key=_group)
    ]
    if executor == "ray":
        results: Iterable[list[dict[str, Any]]] = _ray(tasks, workers, address)
    else:
        results = map(run_task, tasks) if workers == 1 else _pool(tasks, workers)
    for rows in results:
        on_rows(rows)


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this worker when the process that started it dies (even ``kill -9``).

    On Linux the kernel sends the worker SIGKILL when its parent dies
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere a daemon thread polls the parent's pid.
    """
    if sys.platform == "linux":
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    else:  # pragma: no cover

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _completed(futures: list[Future]) -> Iterator[list[dict[str, Any]]]:
    return (future.result() for future in as_completed(futures))


def _pool(tasks: list[Task], workers: int) -> Iterator[list[dict[str, Any]]]:
    import multiprocessing

    # fork starts workers at once; but a parent that has loaded torch (an RL model
    # was trained) has its thread pool, which a forked child can deadlock on: spawn then
    method = "spawn" if "torch" in sys.modules or sys.platform != "linux" else "fork"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(workers, context, die_with_parent, (os.getpid(),)) as pool:
        yield from _completed([pool.submit(run_task, task) for task in tasks])


def _ray(tasks: list[Task], workers: int, address: str | None) -> Iterator[list[dict[str, Any]]]:
    ray = require_for_argument("ray", "executor='ray'")
    started_here = not ray.is_initialized()
    if started_here and address is not None:
        ray.init(address=address, log_to_driver=False)
    elif started_here:  # a local cluster: its workers import this checkout, as the driver does
        root = str(Path(__file__).resolve().parents[2])
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": root}},
        )
    try:
        remote = ray.remote(num_cpus=1)(run_task)
        yield from _completed([remote.remote(task).future() for task in tasks])
    except ray.exceptions.RayTaskError as error:
        # Ray wraps the task's error in one whose message is its colored traceback; raise
        # the error itself, with the worker's traceback as text, as a process pool does
        if not isinstance(error.cause, Exception):
            raise
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # Ray's frames left out, no colors
        raise error.cause from RemoteTraceback(text)
    finally:
        if started_here:
            ray.shutdown()


class RemoteTraceback(Exception):
    """A worker's traceback, as text: the ``__cause__`` of an error a Ray task raised.

    The error itself is raised in this process, as a process pool raises its
    worker's (whose ``__cause__`` is the same kind of text).
    """

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'
