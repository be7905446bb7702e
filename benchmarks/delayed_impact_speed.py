"""How fast does DelayedImpactLending-v0 step, beside CartPole-v1 in the same run?

An RL agent trains on millions of steps, so the env's step cost is what a
planning learner pays. This script steps, with the same seeded random
actions, CPU time (``time.process_time``), BLAS limited to one thread:

1. ``CartPole-v1`` (``gym.make``, Gymnasium's wrappers), the reference;
2. ``DelayedImpactLending-v0`` with its defaults (one applicant a step,
   ``gym.make``'s wrappers), with the oracle built (``step``);
3. the same env's ``step_without_oracle`` (what the RL views call);
4. ``DelayedImpactLending-RL-v0`` (the plain RL view, oracle hidden);
5. the FICO world (198 scores; needs the tables) and a batch of 10.

Each measurement is the best of ``--repeats`` rounds, the rounds of all
settings interleaved so that the machine's load affects each alike; the
ratio to CartPole is printed per setting (per step, and per applicant for
the batch).

Usage::

    python benchmarks/delayed_impact_speed.py [--steps 20000] [--repeats 5] [--out FILE]
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from _args import parse_args, step_seconds
from threadpoolctl import threadpool_limits

import osfb_gym  # noqa: F401


@dataclass
class Args:
    """Command-line arguments."""

    steps: int = 20_000
    """Steps of each measurement."""
    repeats: int = 5
    """Rounds; the fastest of each setting is reported."""
    out: str | None = None
    """Write the measurements as JSON here."""


class WithoutOracle(gym.Wrapper):
    """Step the unwrapped env by ``step_without_oracle`` (what the RL views' direct path does)."""

    def step(self, action: Any) -> Any:
        """Step without building the oracle."""
        return self.env.unwrapped.step_without_oracle(action)


def settings(fico: bool) -> dict[str, Callable[[], gym.Env]]:
    """The envs to time, by label (made fresh for each round)."""
    made: dict[str, Callable[[], gym.Env]] = {
        "CartPole-v1": lambda: gym.make("CartPole-v1"),
        "DelayedImpactLending-v0 (step)": lambda: gym.make("DelayedImpactLending-v0"),
        "DelayedImpactLending-v0 (step_without_oracle)": lambda: WithoutOracle(
            gym.make("DelayedImpactLending-v0")
        ),
        "DelayedImpactLending-RL-v0 (plain view)": lambda: gym.make("DelayedImpactLending-RL-v0"),
        "DelayedImpactLending-v0 batch_size=10": lambda: gym.make(
            "DelayedImpactLending-v0", batch_size=10
        ),
    }
    if fico:
        made["DelayedImpactLending-v0 dataset=fico"] = lambda: gym.make(
            "DelayedImpactLending-v0", dataset="fico"
        )
    return made


def main(args: Args) -> dict[str, Any]:
    """Time every setting; return seconds per step and the ratios to CartPole."""
    fico = bool(os.environ.get("OSFB_DATA"))
    envs = settings(fico)
    actions: dict[str, list[Any]] = {}
    for label, make in envs.items():
        space = make().action_space
        space.seed(0)
        actions[label] = [space.sample() for _ in range(args.steps)]
    best = {label: np.inf for label in envs}
    with threadpool_limits(1):
        for _ in range(args.repeats):
            for label, make in envs.items():
                seconds = step_seconds(make(), actions[label])
                best[label] = min(best[label], seconds / args.steps)
    cartpole = best["CartPole-v1"]
    result = {
        "steps": args.steps,
        "repeats": args.repeats,
        "microseconds_per_step": {label: 1e6 * value for label, value in best.items()},
        "ratio_to_cartpole": {label: value / cartpole for label, value in best.items()},
    }
    return result


if __name__ == "__main__":
    args = parse_args(Args, __doc__.splitlines()[0])
    result = main(args)
    for label, micro in result["microseconds_per_step"].items():
        ratio = result["ratio_to_cartpole"][label]
        print(f"{label:48s} {micro:8.1f} us/step  {ratio:6.1f} x CartPole")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(result, handle, indent=2)
