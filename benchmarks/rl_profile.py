"""The environment's share of PPO's training time, on each env family's default world.

For each family, PPO (stable-baselines3 defaults, one env, torch on one
thread) trains for ``--steps`` env steps; separately, the same adapted
env (:func:`osfb_gym.wrappers.rl_env`) is stepped ``--steps`` times with
random actions (resetting at each episode end). The env's share is the
second time over the first: how much of PPO's wall time the environment
itself costs. Target: at most 10%. Both are timed in the same run, so the
share is a ratio of like with like on a shared, noisy machine.

Run: ``python benchmarks/rl_profile.py [--steps 8192] [--json out.json]``
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch

import osfb_gym  # noqa: F401  (registers the ids)
from envs_registry import ENVS
from osfb_gym.bench.rl import train
from osfb_gym.wrappers import rl_env


def env_seconds(env_id: str, steps: int, seed: int = 0) -> float:
    """Seconds for ``steps`` random-action steps of the adapted env (resets included)."""
    env = rl_env(env_id)
    env.action_space.seed(seed)
    actions = [env.action_space.sample() for _ in range(steps)]
    started = time.perf_counter()
    env.reset(seed=seed)
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return time.perf_counter() - started


def ppo_seconds(env_id: str, steps: int, seed: int = 0) -> float:
    """Seconds for PPO to train ``steps`` env steps on the adapted env."""
    started = time.perf_counter()
    train(env_id, "PPO", total_timesteps=steps, seed=seed, torch_threads=1)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8192, help="env steps of each measurement")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for entry in ENVS:
        gym.make(entry.id).close()  # import and build once, outside the timings
        ppo = ppo_seconds(entry.id, args.steps)
        env = env_seconds(entry.id, args.steps)
        rows.append(
            {
                "env_id": entry.id,
                "steps": args.steps,
                "ppo_seconds": round(ppo, 2),
                "env_seconds": round(env, 3),
                "env_share": round(env / ppo, 4),
                "ppo_steps_per_second": round(args.steps / ppo),
            }
        )
        print(
            f"{entry.id:24s} PPO {ppo:6.1f} s ({args.steps / ppo:6.0f} steps/s), env alone "
            f"{env:6.3f} s: env share {env / ppo:6.2%} (target <= 10%)",
            flush=True,
        )
    shares = np.array([row["env_share"] for row in rows])
    print(f"largest env share: {shares.max():.2%}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)


if __name__ == "__main__":
    main()
