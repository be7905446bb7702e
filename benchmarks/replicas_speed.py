"""How fast and how lean is a paper's grid as replicas, and does sharing change any result?

The jiang-* suites run one grid per (dataset, cutoff, split): greedy and
six exploration methods at 14 values of alpha, 85 agents on the same
stream. This script runs that grid (default: the whole Adult stream, the
jiang-linear task of issue 18) in one run, each way in a child process of
its own (so that each has its own peak memory), on one BLAS thread:

1. ``reference``: one vector episode with every agent a replica learning on
   its own (``CutoffReplicas(agents, share=False)``, the path before issue 18);
2. ``shared``: the same with the linear agents' states shared per distinct
   history and their revealed rows kept once
   (``CutoffReplicas(agents)``, :mod:`agents.lending._shared_rls`);
3. optionally (``--alone 1``) one :func:`~osfb_gym.runner.run_episode` per agent.

and, in the same run, 100,000 steps of ``CartPole-v1`` (random actions) as
the yardstick the issue's targets are written in. It prints CPU seconds,
peak resident memory, the ratios, and whether every agent's decisions and
cumulative loss are identical between the ways.

Usage::

    python benchmarks/replicas_speed.py [--dataset adult] [--horizon 0] [--link linear|logistic]
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from _args import parse_args, step_seconds
from threadpoolctl import threadpool_limits

import osfb_gym  # noqa: F401
from agents.lending.replicas import CutoffReplicas
from osfb_gym.bench.suites.jiang import JIANG_SUITES, agent_for
from osfb_gym.runner import run_episode, run_vector_episode

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@dataclass
class Args:
    """Command-line arguments."""

    dataset: str = "adult"
    """Dataset of the stream (linear link, batch size 1: Table 1's protocol)."""
    horizon: int = 0
    """Steps of the stream prefix; 0: the whole stream (Adult: 46,400)."""
    cutoff: float = 0.5
    """Cutoff quantile."""
    link: str = "linear"
    """"linear" (the jiang-linear grid) or "logistic" (jiang-logistic: its agents learn on
    their own, with their rows kept as indices into the replicas' log)."""
    seed: int = 0
    """Reset seed: the warm-start split and the stream order."""
    alone: int = 0
    """1: also run one episode per agent (slow)."""
    modes: str = "reference,shared"
    """Which of the two replica ways to run ("shared" alone: its time and memory only)."""
    cartpole_steps: int = 100_000
    """Steps of the CartPole-v1 yardstick."""
    data_home: str | None = None
    """Directory holding the datasets (default: $OSFB_DATA, then ../shared/data)."""
    out: str | None = None
    """Write the measurements as JSON here."""


def cartpole_seconds(steps: int) -> float:
    """CPU seconds of ``steps`` CartPole-v1 steps with random actions (resets included)."""
    actions = np.random.default_rng(0).integers(0, 2, steps).tolist()
    return step_seconds(gym.make("CartPole-v1"), actions)


def _grid(link: str = "linear") -> list[tuple[str, float | None]]:
    suite = JIANG_SUITES[f"jiang-{link}"]
    return [
        (method, alpha)
        for method in suite.methods
        for alpha in ([None] if method == "greedy" else suite.alphas)
    ]


def _run(mode: str, kwargs: dict[str, Any], seed: int, queue: Any) -> None:
    """Child process: run the grid one way; report CPU time, peak memory, the trajectories."""
    grid = _grid(kwargs["link"])
    agents = [agent_for(method, alpha) for method, alpha in grid]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with threadpool_limits(1):
        started = time.process_time()
        if mode == "alone":
            env = gym.make("OneSidedLending-v0", **kwargs)
            trajectories = [run_episode(env, agent, seed) for agent in agents]
        else:
            envs = gym.make_vec("OneSidedLending-v0", num_envs=len(grid), lockstep=True, **kwargs)
            replicas = CutoffReplicas(agents, share=mode == "shared")
            trajectories = run_vector_episode(envs, replicas, seed)
        seconds = time.process_time() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(
        {
            "seconds": seconds,
            "peak_mb": peak,
            "start_mb": before,
            "actions": np.stack([t.actions for t in trajectories]),
            "losses": [t.metrics["cumulative_loss"] for t in trajectories],
            "steps": int(trajectories[0].metrics["steps"]),
        }
    )


def measure(mode: str, kwargs: dict[str, Any], seed: int) -> dict[str, Any]:
    """Run :func:`_run` in a forked child and return what it reports."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_run, args=(mode, kwargs, seed, queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def main(args: Args) -> dict[str, object]:
    """Run the grid each way and CartPole; return the measurements."""
    data_home = args.data_home or os.environ.get("OSFB_DATA") or str(SHARED_DATA)
    kwargs: dict[str, Any] = dict(
        dataset=args.dataset,
        data_home=data_home,
        link=args.link,
        batch_size=1,
        cutoff_quantile=args.cutoff,
    )
    if args.horizon:
        kwargs["horizon"] = args.horizon
    # the dataset's world is fitted once, in the parent, outside every timing
    gym.make("OneSidedLending-v0", **kwargs).reset(seed=args.seed)
    with threadpool_limits(1):
        cartpole = cartpole_seconds(args.cartpole_steps)
    modes = args.modes.split(",") + (["alone"] if args.alone else [])
    runs = {mode: measure(mode, kwargs, args.seed) for mode in modes}
    with threadpool_limits(1):
        cartpole = (cartpole + cartpole_seconds(args.cartpole_steps)) / 2
    first = runs[modes[0]]
    result: dict[str, object] = {
        "dataset": args.dataset,
        "steps": first["steps"],
        "link": args.link,
        "agents": len(_grid(args.link)),
        f"cartpole_{args.cartpole_steps}_cpu_s": round(cartpole, 2),
    }
    for mode, run in runs.items():
        result[f"{mode}_cpu_s"] = round(run["seconds"], 2)
        result[f"{mode}_peak_mb"] = round(run["peak_mb"])
        result[f"{mode}_x_cartpole"] = round(run["seconds"] / cartpole, 1)
    result["process_mb_before_episode"] = round(first["start_mb"])
    if "reference" in runs and "shared" in runs:
        speedup = runs["reference"]["seconds"] / runs["shared"]["seconds"]
        result["speedup_shared_vs_reference"] = round(speedup, 2)
    for mode in modes[1:]:
        run = runs[mode]
        same = sum(a == b for a, b in zip(first["losses"], run["losses"], strict=True))
        agree = float((first["actions"] == run["actions"]).mean())
        result[f"{mode}_identical_losses"] = f"{same} of {len(run['losses'])}"
        result[f"{mode}_decision_agreement"] = agree
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    print(json.dumps(main(parse_args(Args, __doc__.splitlines()[0])), indent=2))
