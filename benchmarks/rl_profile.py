"""The environment's share of PPO's training time, measured inside training, on each family.

For each registered env (its default world, through
:func:`osfb_gym.wrappers.rl_env`, as :func:`osfb_gym.bench.rl.train`
builds it) and for ``CartPole-v1``, PPO (stable-baselines3 defaults, one
env, torch on one thread) trains for ``--steps`` env steps. A callback
wraps the training env's own ``step`` and ``reset`` (the ones SB3's
``DummyVecEnv`` calls) with CPU-time counters, so the env's share is what
it costs inside training: with the cache and allocator state training
leaves it, not stepped on its own in a tight loop (which underestimates
it). Also printed: each env's CPU time per step inside training as a
multiple of CartPole's, measured in the same run. Target (issue 18): env
share <= 5% on every family.

The share depends on the machine's load (on a loaded machine every share,
CartPole's too, grows): compare the CartPole-step ratio, which the load
hits on both sides. ``--rounds R`` trains every env R times, interleaved
(CartPole first in each round), and reports each env's median share and
ratio; the load average is printed before and after.

Run: ``python benchmarks/rl_profile.py [--steps 8192] [--rounds 1] [--only ID,ID] [--json F]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env

import osfb_gym  # noqa: F401  (registers the ids)
from envs_registry import ENVS
from osfb_gym.bench.rl import train


class EnvTimer(BaseCallback):
    """Count the CPU time of the training env's own ``step`` and ``reset`` calls."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0
        self.steps = 0

    def _on_training_start(self) -> None:
        venv: Any = self.training_env
        while not hasattr(venv, "envs"):  # under VecNormalize and other VecEnv wrappers
            venv = venv.venv
        for env in venv.envs:
            self._time(env)

    def _time(self, env: gym.Env) -> None:
        step, reset = env.step, env.reset

        def timed_step(action: Any) -> Any:
            started = time.process_time()
            result = step(action)
            self.seconds += time.process_time() - started
            self.steps += 1
            return result

        def timed_reset(**kwargs: Any) -> Any:
            started = time.process_time()
            result = reset(**kwargs)
            self.seconds += time.process_time() - started
            return result

        env.step = timed_step  # type: ignore[method-assign]
        env.reset = timed_reset  # type: ignore[method-assign]

    def _on_step(self) -> bool:
        return True


def profile(env_id: str, steps: int, seed: int = 0) -> dict[str, Any]:
    """Train PPO on ``env_id`` for ``steps``; return total and in-env CPU seconds."""
    timer = EnvTimer()
    started = time.process_time()
    if env_id == "CartPole-v1":
        model = PPO("MlpPolicy", make_vec_env(env_id, n_envs=1, seed=seed), seed=seed)
        model.learn(total_timesteps=steps, callback=timer)
    else:
        train(env_id, "PPO", total_timesteps=steps, seed=seed, torch_threads=1, callback=timer)
    total = time.process_time() - started
    return {
        "env_id": env_id,
        "steps": timer.steps,
        "ppo_cpu_s": round(total, 2),
        "env_cpu_s": round(timer.seconds, 3),
        "env_share": round(timer.seconds / total, 4),
        "env_us_per_step": round(1e6 * timer.seconds / max(timer.steps, 1), 1),
    }


def main() -> None:
    """Profile every family and CartPole; print the shares and per-step ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8192, help="env steps of each training run")
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--only", default=None, help="comma-separated env ids (default: all)")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (median kept)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ids = [entry.id for entry in ENVS] if args.only is None else args.only.split(",")
    ids = ["CartPole-v1", *ids]
    for env_id in ids:
        gym.make(env_id).close()  # import and build once, outside the timings
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    runs: dict[str, list[dict[str, Any]]] = {env_id: [] for env_id in ids}
    for _ in range(max(args.rounds, 1)):
        round_rows = [profile(env_id, args.steps) for env_id in ids]
        cartpole_round = round_rows[0]["env_us_per_step"]
        for row in round_rows:
            row["x_cartpole_step"] = round(row["env_us_per_step"] / cartpole_round, 2)
            runs[row["env_id"]].append(row)
    rows = []
    for env_id in ids:
        row = dict(runs[env_id][len(runs[env_id]) // 2])  # the rounds' keys, then medians
        for key in ("env_share", "env_us_per_step", "x_cartpole_step"):
            row[key] = statistics.median(run[key] for run in runs[env_id])
        row["rounds"] = [
            {k: run[k] for k in ("env_share", "x_cartpole_step")} for run in runs[env_id]
        ]
        rows.append(row)
    for row in rows:
        print(
            f"{row['env_id']:24s} PPO {row['ppo_cpu_s']:6.1f} CPU s, env inside training "
            f"{row['env_cpu_s']:6.3f} s = {row['env_share']:6.2%} (target <= 5%); "
            f"{row['env_us_per_step']:6.1f} us/step = {row['x_cartpole_step']:.2f} CartPole steps",
            flush=True,
        )
    shares = np.array([row["env_share"] for row in rows[1:]])
    print(f"largest env share of the project's families: {shares.max():.2%}")
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)


if __name__ == "__main__":
    main()
