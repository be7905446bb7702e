"""How long does one acquisition step of MultiServiceChoice take at scale?

Issue 6 asks that acquisition scale: with n = 100,000 users, k = 100
services and d = 16, a step (place a service, every user re-chooses and
reports its loss) must take under 50 ms on one core. This script measures,
in one run with BLAS limited to one thread, for each loss family:

1. the env alone (``gym.make``, Gymnasium's wrappers included), acquiring
   users in a fixed random order: seconds per step;
2. AcQUIre driven by ``run_episode`` (env, agent and metrics): seconds per
   step, and the agent's own ``act`` + ``update`` time per step;
3. the reset (drawing the 100,000-user world), once.

The Mahalanobis family keeps one matrix per preference cluster (10 here),
indexed per user: an ``(n, d, d)`` float64 array would take 200 MB. The
reference solver is switched off (``reference_restarts=0``): it is an
oracle for the benchmark tables, not part of an acquisition step. Each
per-step figure is the best of ``--repeats`` episodes.

Usage::

    python benchmarks/services_speed.py [--n-users 100000] [--n-services 100] [--dim 16]
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from _args import parse_args
from threadpoolctl import threadpool_limits

import osfb_gym  # noqa: F401
from agents.services import AcQUIre
from osfb_gym.runner import run_episode

TARGET_SECONDS = 0.050


@dataclass
class Args:
    """Command-line arguments."""

    n_users: int = 100_000
    """Users ``n``."""
    n_services: int = 100
    """Services ``k``: steps per episode."""
    dim: int = 16
    """Preference dimension ``d``."""
    losses: str = "squared,mahalanobis,huber,cosine"
    """Comma-separated loss families to measure."""
    repeats: int = 3
    """Episodes per measurement; the fastest is reported."""
    seed: int = 0
    """Reset seed."""
    out: str | None = None
    """Write the measurements as JSON here."""


def env_alone(env: gym.Env, seed: int) -> tuple[int, float]:
    """Step the env through one episode in a seeded random order: (steps, seconds)."""
    env.reset(seed=seed)
    order = np.random.default_rng(seed).permutation(env.action_space.n)  # type: ignore[attr-defined]
    start = time.perf_counter()
    steps, done = 0, False
    while not done:
        _, _, done, _, _ = env.step(int(order[steps]))
        steps += 1
    return steps, time.perf_counter() - start


def agent_alone(env: gym.Env, seed: int) -> tuple[int, float]:
    """AcQUIre's own time (act + update) over one episode, env excluded."""
    agent = AcQUIre()
    obs, info = env.reset(seed=seed)
    agent.reset(env.observation_space, env.action_space, seed=seed, feedback=info["feedback"])
    seconds, steps, done = 0.0, 0, False
    while not done:
        start = time.perf_counter()
        action = agent.act(obs)
        seconds += time.perf_counter() - start
        next_obs, reward, done, _, info = env.step(action)
        start = time.perf_counter()
        agent.update(obs, action, float(reward), info["feedback"])
        seconds += time.perf_counter() - start
        obs, steps = next_obs, steps + 1
    return steps, seconds


def full_episode(env: gym.Env, seed: int) -> tuple[int, float]:
    """AcQUIre through ``run_episode``, reset excluded: (steps, seconds)."""
    start = time.perf_counter()
    env.reset(seed=seed)
    reset_seconds = time.perf_counter() - start
    start = time.perf_counter()
    trajectory = run_episode(env, AcQUIre(), seed)
    # run_episode resets too; take that reset's time out again
    return len(trajectory.rewards), time.perf_counter() - start - reset_seconds


def best_seconds_per_step(measure: Any, env: gym.Env, seed: int, repeats: int) -> float:
    """Run ``measure(env, seed)`` ``repeats`` times and return the fastest seconds per step."""
    runs = (measure(env, seed) for _ in range(repeats))
    return min(seconds / steps for steps, seconds in runs)


def main() -> None:
    """Measure on one core and print a summary."""
    args = parse_args(Args, __doc__.splitlines()[0])
    results: dict[str, Any] = {"n_users": args.n_users, "n_services": args.n_services,
                               "dim": args.dim}  # fmt: skip
    print(f"n = {args.n_users:,} users, k = {args.n_services} services, d = {args.dim}, one thread")
    with threadpool_limits(1):
        for loss in args.losses.split(","):
            env = gym.make(
                "MultiServiceChoice-v0",
                n_users=args.n_users,
                n_services=args.n_services,
                dim=args.dim,
                loss=loss,
                reference_restarts=0,
            )
            start = time.perf_counter()
            env.reset(seed=args.seed)
            reset = time.perf_counter() - start
            step = best_seconds_per_step(env_alone, env, args.seed, args.repeats)
            agent = best_seconds_per_step(agent_alone, env, args.seed, args.repeats)
            episode = best_seconds_per_step(full_episode, env, args.seed, args.repeats)
            results[loss] = {
                "reset_seconds": reset,
                "env_step_seconds": step,
                "acquire_act_update_seconds": agent,
                "run_episode_step_seconds": episode,
                "meets_target": episode < TARGET_SECONDS,
            }
            print(
                f"{loss:12s} env step {1000 * step:6.1f} ms | AcQUIre act+update "
                f"{1000 * agent:5.1f} ms | run_episode step {1000 * episode:6.1f} ms "
                f"(target < {1000 * TARGET_SECONDS:.0f} ms: "
                f"{'met' if episode < TARGET_SECONDS else 'MISSED'}) | reset {reset:.2f} s"
            )
            env.close()
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2, default=float))


if __name__ == "__main__":
    main()
