"""How long does a step of MultiServiceChoice-Retention-v0 take, beside CartPole-v1?

One run, CPU time (``time.process_time``), BLAS limited to one thread:
``gym.make`` of each id with its registered defaults (Gymnasium's
wrappers included), random actions from a seeded action space, resets
included, interleaved over ``--rounds`` rounds of ``--steps`` steps each so
that the machine's load falls on all alike; the best round of each is
kept. Printed: microseconds per step of ``CartPole-v1``,
``MultiServiceChoice-v0`` and ``MultiServiceChoice-Retention-v0`` (500
users, 10 services; the retention world on its NumPy path), and each
services id as CartPole steps.

Usage::

    python benchmarks/retention_speed.py [--steps 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import gymnasium as gym  # noqa: E402

import osfb_gym  # noqa: E402, F401  (registers the ids)

IDS = ("CartPole-v1", "MultiServiceChoice-v0", "MultiServiceChoice-Retention-v0")


def seconds_per_step(env: gym.Env, steps: int, seed: int) -> float:
    """CPU seconds per step of ``steps`` random steps (resets included)."""
    env.action_space.seed(seed)
    env.reset(seed=seed)
    start = time.process_time()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    return (time.process_time() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    envs = {env_id: gym.make(env_id) for env_id in IDS}
    best = {env_id: float("inf") for env_id in IDS}
    for round_ in range(args.rounds):
        for env_id, env in envs.items():
            best[env_id] = min(best[env_id], seconds_per_step(env, args.steps, round_))
    cartpole = best["CartPole-v1"]
    result = {f"{env_id} us/step": round(best[env_id] * 1e6, 2) for env_id in IDS}
    result.update(
        {f"{env_id} CartPole steps": round(best[env_id] / cartpole, 1) for env_id in IDS[1:]}
    )
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
