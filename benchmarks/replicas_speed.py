"""How fast and how lean is a paper's grid as replicas, and does sharing change any result?

The jiang-* suites run one grid per (dataset, cutoff, split): greedy and
six exploration methods at 14 values of alpha, 85 agents on the same
stream. This script runs the suite's own task (default: the whole Adult
stream of the jiang-linear suite, the task of issue 18): the env kwargs and
agent params come from :func:`osfb_gym.bench.suites.jiang.sweep`
under the suite's fit (``--fit paper``, the suite's default; ``--fit legacy``:
the one-hot encoding and the agents' default parameters of the earlier runs).
Each way runs in a child process of its own (so that each has its own peak
memory), on one BLAS thread:

1. ``reference``: one vector episode with every agent a replica learning on
   its own (``CutoffReplicas(agents, share=False)``, the path before issue 18);
2. ``shared``: the same with the linear agents' states shared per distinct
   history and their revealed rows kept once
   (``CutoffReplicas(agents)``, :mod:`agents.lending._fast.shared_rls`);
3. ``engine``: the task as the suite's engine runs it
   (:func:`osfb_gym.bench.executors.run_task` on the task's cells: replica
   groups as vector episodes, any cell the replica path does not take alone);
4. optionally (``--alone 1``) one :func:`~osfb_gym.runner.run_episode` per agent.

``--profile N`` instead profiles the shared way on the first N steps
(cProfile on CPU time, the top functions by own and cumulative time);
``--suite 1`` times one split of every (dataset, cutoff) task of the suite
as its engine runs it and estimates the whole suite on ``--workers``;
``--suite-run N`` runs the whole suite on N splits as its engine does and times it;
``--blas-rounds N`` times the shared way with and without NumPy's BLAS products compiled
into the one-row update (alternated in one process);
``--refit-rows N`` times a logistic refit on N rows kept as float64 copies
against rows kept as indices into the replicas' log (d of the task's env).

and, in the same run, 100,000 steps of ``CartPole-v1`` (random actions) as
the yardstick the issue's targets are written in. It prints CPU seconds,
peak resident memory, the ratios, and whether every agent's decisions and
cumulative loss are identical between the ways.

Usage::

    python benchmarks/replicas_speed.py [--dataset adult] [--horizon 0] [--link linear|logistic]
        [--fit paper|legacy] [--modes reference,shared,engine] [--profile 2000]
    python benchmarks/replicas_speed.py --suite 1 [--link linear] [--workers 2]
    python benchmarks/replicas_speed.py --suite-run 10 --workers 2   # the whole suite, timed
"""

from __future__ import annotations

import cProfile
import io
import json
import multiprocessing
import os
import pstats
import resource
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from _args import parse_args, step_seconds
from threadpoolctl import threadpool_limits

import osfb_gym  # noqa: F401
from agents.lending._fast.rank_one import warm as warm_rank_one
from agents.lending._fast.replicas import CutoffReplicas
from agents.lending._fast.row_log import LoggedGLMEstimator, RowLog
from agents.lending.glm import GLMEstimator
from osfb_gym.bench.executors import execute, run_task
from osfb_gym.bench.suites import jiang
from osfb_gym.bench.suites.jiang import JIANG_SUITES
from osfb_gym.bench.sweep import Cell, make_agent
from osfb_gym.core.links import get_link
from osfb_gym.runner import run_episode, run_vector_episode


@dataclass
class Args:
    """Command-line arguments."""

    dataset: str = "adult"
    """Dataset of the stream."""
    horizon: int = 0
    """Steps of the stream prefix; 0: the whole stream (Adult: 46,400)."""
    cutoff: float = 0.5
    """Cutoff quantile."""
    link: str = "linear"
    """"linear" (the jiang-linear task) or "logistic" (jiang-logistic)."""
    fit: str = "paper"
    """The suite's fit: "paper" (the suite's default) or "legacy" (one-hot, default params)."""
    seed: int = 0
    """The split (the suite's seed): the warm-start split and the stream order."""
    alone: int = 0
    """1: also run one episode per agent (slow)."""
    modes: str = "reference,shared"
    """Which ways to run, of reference, shared and engine ("shared" alone: its time only)."""
    profile: int = 0
    """N > 0: only profile the shared way on the first N steps (cProfile) and print it."""
    suite: int = 0
    """1: instead, time one split (--seed) of every (dataset, cutoff) task of the suite as
    its engine runs it, each in a child process, and estimate the whole suite from them."""
    suite_run: int = 0
    """N > 0: instead, run the whole suite on its first N splits (the engine's executor on
    --workers processes, no store, no report) and report its CPU time (the workers' and
    this process's) and wall time; 10: the suite as ``osfb-bench run jiang-linear --seeds 10``
    runs its cells."""
    blas_rounds: int = 0
    """N > 0: instead, run the shared way N times with NumPy's BLAS products compiled into
    the one-row update and N times without (alternated, in this process) and compare."""
    refit_rows: int = 0
    """N > 0: instead, time a logistic refit on N rows (d of the task's env) kept as
    float64 copies against rows kept as indices into the replicas' log."""
    workers: int = 2
    """Workers of the suite estimate."""
    suite_cutoffs: str = ""
    """Cutoffs the suite estimate times (comma-separated; empty: the suite's); an untimed
    cutoff is taken to cost what the timed ones of its dataset cost on average."""
    cartpole_steps: int = 100_000
    """Steps of the CartPole-v1 yardstick."""
    data_home: str | None = None
    """Directory holding the datasets (default: $OSFB_DATA, then the download cache)."""
    out: str | None = None
    """Write the measurements as JSON here."""


def cartpole_seconds(steps: int) -> float:
    """CPU seconds of ``steps`` CartPole-v1 steps with random actions (resets included)."""
    actions = np.random.default_rng(0).integers(0, 2, steps).tolist()
    return step_seconds(gym.make("CartPole-v1"), actions)


def task_cells(args: Args, data_home: str | None = None) -> list[Cell]:
    """The cells of one task of the suite: one (dataset, cutoff, split), every method and alpha.

    Built by the suite itself (:func:`osfb_gym.bench.suites.jiang.sweep`), so the env kwargs and the
    agents' params are exactly those of the suite's cells under ``args.fit``.
    """
    suite = JIANG_SUITES[f"jiang-{args.link}"](
        datasets=(args.dataset,),
        cutoffs=(args.cutoff,),
        fit=args.fit,
        data_home=data_home,
        horizon=args.horizon or None,
    )
    return jiang.sweep(suite, seeds=(args.seed,)).cells()


def _episode(mode: str, cells: list[Cell]) -> list[Any]:
    """Run the task's cells one way; return one trajectory (or engine row) per cell."""
    first = cells[0]
    agents = [make_agent(cell.agent, cell.params) for cell in cells]
    if mode == "alone":
        env = gym.make(first.env_id, **first.env_kwargs)
        return [run_episode(env, agent, first.seed) for agent in agents]
    if mode == "engine":
        return run_task((cells, {}))
    envs = gym.make_vec(first.env_id, num_envs=len(cells), lockstep=True, **first.env_kwargs)
    return run_vector_episode(envs, CutoffReplicas(agents, share=mode == "shared"), first.seed)


def _run(mode: str, cells: list[Cell], queue: Any) -> None:
    """Child process: run the task one way; report CPU time, peak memory, the trajectories."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with threadpool_limits(1):
        started = time.process_time()
        trajectories = _episode(mode, cells)
        seconds = time.process_time() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if mode == "engine":  # rows: no actions kept
        losses = [row["cumulative_loss"] for row in trajectories]
        actions, steps = None, int(trajectories[0]["steps"])
    else:
        losses = [t.metrics["cumulative_loss"] for t in trajectories]
        actions = np.stack([t.actions for t in trajectories])
        steps = int(trajectories[0].metrics["steps"])
    queue.put(
        {
            "seconds": seconds,
            "peak_mb": peak,
            "start_mb": before,
            "actions": actions,
            "losses": losses,
            "steps": steps,
        }
    )


def measure(mode: str, cells: list[Cell]) -> dict[str, Any]:
    """Run :func:`_run` in a forked child and return what it reports."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_run, args=(mode, cells, queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def profile(cells: list[Cell], top: int = 25) -> str:
    """cProfile of the shared way on the cells' (truncated) stream: own time, then cumulative."""
    profiler = cProfile.Profile(time.process_time)
    with threadpool_limits(1):
        profiler.enable()
        _episode("shared", cells)
        profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return text.getvalue()


def suite_estimate(args: Args, data_home: str | None) -> dict[str, object]:
    """CPU seconds of one split of every task of the suite (engine); the suite's estimate.

    The estimate: each task's CPU time times the suite's splits (and, when only
    some cutoffs are timed, times the suite's cutoffs over the timed ones), summed, over
    ``workers`` (the engine's chunks are whole tasks, so this assumes they pack
    evenly and that a split costs what the measured one costs).
    """
    base = JIANG_SUITES[f"jiang-{args.link}"]()
    cutoffs = [float(c) for c in args.suite_cutoffs.split(",")] if args.suite_cutoffs else None
    with threadpool_limits(1):
        cartpole = cartpole_seconds(args.cartpole_steps)
    # numba's dger loop (the optional extra) compiled once, here: a pool's worker compiles
    # it once for all its tasks, and each forked child below inherits it
    numba = warm_rank_one()
    tasks: dict[str, float] = {}
    peaks: dict[str, int] = {}
    for dataset in base.datasets:
        for cutoff in cutoffs or base.cutoffs:
            cells = task_cells(replace(args, dataset=dataset, cutoff=cutoff), data_home)
            first = cells[0]
            gym.make(first.env_id, **first.env_kwargs).reset(seed=first.seed)  # fit once
            run = measure("engine", cells)
            tasks[f"{dataset} {cutoff:.0%}"] = round(run["seconds"], 2)
            peaks[f"{dataset} {cutoff:.0%}"] = round(run["peak_mb"])
            print(
                f"{dataset} {cutoff:.0%}: {run['seconds']:.2f} CPU s, {run['steps']} steps",
                flush=True,
            )
    with threadpool_limits(1):
        cartpole = (cartpole + cartpole_seconds(args.cartpole_steps)) / 2
    scale = len(base.cutoffs) / len(cutoffs or base.cutoffs)  # untimed cutoffs: the average
    total = sum(tasks.values()) * len(base.seeds) * scale
    return {
        "suite": base.name,
        "fit": args.fit,
        "split_timed": args.seed,
        "task_cpu_s": tasks,
        "task_peak_mb": peaks,
        f"cartpole_{args.cartpole_steps}_cpu_s": round(cartpole, 2),
        "numba_dger_loop": numba,
        "suite_cpu_s_estimate": round(total),
        # load-independent: the estimate in units of 100k CartPole steps timed in this run
        "suite_estimate_x_cartpole": round(total / cartpole * 100_000 / args.cartpole_steps),
        f"suite_minutes_on_{args.workers}_workers_estimate": round(total / args.workers / 60, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def suite_run(args: Args, data_home: str | None) -> dict[str, object]:
    """Run the suite's cells on its first ``args.suite_run`` splits as its engine does; time it.

    CPU time is this process's plus its reaped children's (the pool's workers), so
    it counts every task, the pool's packing and pickling included (not the store's
    writes nor the report, which ``osfb-bench run`` adds).
    """
    suite = JIANG_SUITES[f"jiang-{args.link}"](
        seeds=args.suite_run, fit=args.fit, data_home=data_home, horizon=args.horizon or None
    )
    cells = jiang.sweep(suite).cells()
    with threadpool_limits(1):
        cartpole = cartpole_seconds(args.cartpole_steps)

    def cpu() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    rows: list[dict[str, Any]] = []
    started, wall = cpu(), time.perf_counter()
    execute(
        cells, rows.extend, workers=args.workers, chunk_size=suite.grid_size
    )  # as jiang's stage
    seconds, wall = cpu() - started, time.perf_counter() - wall
    return {
        "suite": suite.name,
        "fit": args.fit,
        "splits": args.suite_run,
        "cells": len(cells),
        "rows": len(rows),
        "workers": args.workers,
        "cpu_s": round(seconds),
        "wall_minutes": round(wall / 60, 1),
        f"cartpole_{args.cartpole_steps}_cpu_s": round(cartpole, 2),
        "cpu_x_cartpole": round(seconds / cartpole * 100_000 / args.cartpole_steps),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def blas_speed(cells: list[Cell], rounds: int) -> dict[str, object]:
    """CPU seconds of the shared way with and without the compiled BLAS products, alternated.

    Without: ``SharedRLS`` gets no :func:`~agents.lending._fast.rank_one.one_row_blas_kernel`
    and makes the products with NumPy's stacked ``matmul`` (the same bits: tested).
    """
    import agents.lending._fast.shared_rls as shared_rls

    compiled = shared_rls.one_row_blas_kernel
    seconds: dict[bool, list[float]] = {True: [], False: []}
    with threadpool_limits(1):
        for index in range(2 * rounds):
            blas = index % 4 in (0, 3)  # ABBA: with, without, without, with, ...
            shared_rls.one_row_blas_kernel = compiled if blas else lambda: None  # type: ignore[assignment]
            started = time.process_time()
            _episode("shared", cells)
            seconds[blas].append(time.process_time() - started)
    shared_rls.one_row_blas_kernel = compiled  # type: ignore[assignment]
    return {
        "blas_available": compiled() is not None,
        "with_cpu_s": [round(x, 2) for x in seconds[True]],
        "without_cpu_s": [round(x, 2) for x in seconds[False]],
        "with_over_without": round(sum(seconds[True]) / sum(seconds[False]), 3),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def refit_speed(rows: int, dim: int, rounds: int = 5) -> dict[str, object]:
    """CPU seconds of incremental-logistic refits, rows as copies vs as log indices, interleaved.

    The same seeded rows (float32, as the env observes them) and outcomes; the
    estimators compute the same numbers (the replicas' tests), only where the
    rows are kept differs.
    """
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, dim)).astype(np.float32)
    y = (rng.random(rows) < 0.3).astype(float)
    copies = GLMEstimator(get_link("logistic"), dim, 1.0)
    copies.add(x.astype(float), y)
    log = RowLog(dim, np.dtype(np.float32))
    log.append(x)
    logged = LoggedGLMEstimator.adopt(GLMEstimator(get_link("logistic"), dim, 1.0), log, 0)
    logged.add_logged(x.astype(float), y, np.arange(rows))
    seconds = {"copies": 0.0, "log": 0.0}
    with threadpool_limits(1):
        for _ in range(rounds):
            for name, model in (("copies", copies), ("log", logged)):
                started = time.process_time()
                for _ in range(3):
                    model._refit()
                seconds[name] += time.process_time() - started
    return {
        "rows": rows,
        "dim": dim,
        "refits": 3 * rounds,
        "copies_cpu_s": round(seconds["copies"], 3),
        "log_cpu_s": round(seconds["log"], 3),
        "log_speed_vs_copies": round(seconds["copies"] / seconds["log"], 2),
    }


def main(args: Args) -> dict[str, object]:
    """Run the task each way and CartPole; return the measurements."""
    data_home = args.data_home or None  # None: $OSFB_DATA, then the data layer's cache
    if args.suite or args.suite_run:
        result = suite_run(args, data_home) if args.suite_run else suite_estimate(args, data_home)
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=2))
        return result
    cells = task_cells(args, data_home)
    first = cells[0]
    if args.refit_rows:
        dim = gym.make(first.env_id, **first.env_kwargs).observation_space.shape[-1]
        return refit_speed(args.refit_rows, int(dim))
    # the dataset's world is fitted once, in the parent, outside every timing
    gym.make(first.env_id, **first.env_kwargs).reset(seed=first.seed)
    if args.blas_rounds:
        warm_rank_one()
        return blas_speed(cells, args.blas_rounds)
    if args.profile:
        cells = [
            replace(cell, env_kwargs={**cell.env_kwargs, "horizon": args.profile}) for cell in cells
        ]
        print(profile(cells))
        return {}
    with threadpool_limits(1):
        cartpole = cartpole_seconds(args.cartpole_steps)
    numba = warm_rank_one()  # compiled once, before the children fork
    modes = args.modes.split(",") + (["alone"] if args.alone else [])
    runs = {mode: measure(mode, cells) for mode in modes}
    with threadpool_limits(1):
        cartpole = (cartpole + cartpole_seconds(args.cartpole_steps)) / 2
    base = runs[modes[0]]
    result: dict[str, object] = {
        "dataset": args.dataset,
        "link": args.link,
        "fit": args.fit,
        "env_kwargs": {k: v for k, v in first.env_kwargs.items() if k != "data_home"},
        "steps": base["steps"],
        "agents": len(cells),
        f"cartpole_{args.cartpole_steps}_cpu_s": round(cartpole, 2),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "numba_dger_loop": numba,
    }
    for mode, run in runs.items():
        result[f"{mode}_cpu_s"] = round(run["seconds"], 2)
        result[f"{mode}_peak_mb"] = round(run["peak_mb"])
        result[f"{mode}_x_cartpole"] = round(run["seconds"] / cartpole, 1)
    result["process_mb_before_episode"] = round(base["start_mb"])
    if "reference" in runs and "shared" in runs:
        speedup = runs["reference"]["seconds"] / runs["shared"]["seconds"]
        result["speedup_shared_vs_reference"] = round(speedup, 2)
    for mode in modes[1:]:
        run = runs[mode]
        same = sum(a == b for a, b in zip(base["losses"], run["losses"], strict=True))
        result[f"{mode}_identical_losses"] = f"{same} of {len(run['losses'])}"
        if base["actions"] is not None and run["actions"] is not None:
            result[f"{mode}_decision_agreement"] = float((base["actions"] == run["actions"]).mean())
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    measured = main(parse_args(Args, __doc__.splitlines()[0]))
    if measured:
        print(json.dumps(measured, indent=2))
