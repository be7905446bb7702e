"""How much CPU does grading the template take, as a multiple of CartPole steps in the same run?

Runs ``osfb-bench grade`` (by default the untouched
``examples/assignments/template_agent.py`` on ``OneSidedLending-v0``, with the
plot) as a subprocess, ``--runs`` times, and counts the CPU time (user +
system) of the grader's process and of the agent's process it starts and
waits for, from ``getrusage(RUSAGE_CHILDREN)``: what ``/usr/bin/time``
reports. Interleaved with each grading, the same run steps ``CartPole-v1``
(``gym.make``, a seeded random policy) ``--cartpole-steps`` times, 80,000 by
default: the env steps of the default grading (10 seeds of 2,000 steps for
the submission, the two references and one constant policy). The ratio
grading / CartPole is what to compare across machines; both sides share the
machine's load of the moment, printed beside them (the 1-minute load average).

Issue 31's target: at most 10 s of CPU for the default grading.

Usage::

    python benchmarks/grade_speed.py [--runs 3] [--plot 1] [--seed 123]
        [--env OneSidedLending-v0] [--submission examples/assignments/template_agent.py]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
from _args import parse_args

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Args:
    """The grading to time and its yardstick."""

    #: the submission graded
    submission: str = str(ROOT / "examples" / "assignments" / "template_agent.py")
    #: the env id graded on (its family's grading defaults)
    env: str = "OneSidedLending-v0"
    #: gradings timed (each beside its own CartPole run)
    runs: int = 3
    #: 1 writes the plot (the default grading), 0 passes --no-plot
    plot: int = 1
    #: the grading's --seed (a reproduction; --no-cache, so the references run); -1: fresh seeds
    seed: int = 123
    #: CartPole-v1 steps of the yardstick: the default grading's env steps
    cartpole_steps: int = 80_000


def children_cpu() -> float:
    """CPU seconds (user + system) of the children this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grading_cpu(args: Args, out: str) -> tuple[float, float]:
    """Run one grading with the CLI; return its CPU seconds (grader + agent's process) and wall."""
    command = [sys.executable, "-m", "osfb_gym.cli", "grade", args.submission, "--env", args.env]
    command += ["--out", out, "--no-cache"] + ([] if args.plot else ["--no-plot"])
    if args.seed >= 0:
        command += ["--seed", str(args.seed)]
    before, started = children_cpu(), time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=out)  # noqa: S603
    return children_cpu() - before, time.perf_counter() - started


def cartpole_cpu(steps: int, seed: int) -> float:
    """CPU seconds of ``steps`` CartPole-v1 steps under a seeded random policy (resets included)."""
    env = gym.make("CartPole-v1")
    actions = np.random.default_rng(seed).integers(0, 2, steps)
    env.reset(seed=seed)
    started = time.process_time()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            env.reset()
    seconds = time.process_time() - started
    env.close()
    return seconds


def main(argv: list[str] | None = None) -> None:
    """Time the gradings and print one line per run and a summary."""
    args = parse_args(Args, __doc__.splitlines()[0], argv)
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    print(
        f"grading {Path(args.submission).name} on {args.env}, plot={bool(args.plot)}, "
        f"{args.runs} runs; yardstick: {args.cartpole_steps:,} CartPole-v1 steps"
    )
    ratios, seconds = [], []
    with tempfile.TemporaryDirectory() as out:
        for run in range(1, args.runs + 1):
            cpu, wall = grading_cpu(args, out)
            cartpole = cartpole_cpu(args.cartpole_steps, seed=run)
            ratios.append(cpu / cartpole)
            seconds.append(cpu)
            load = os.getloadavg()[0]
            print(
                f"run {run}: grading {cpu:.2f} s CPU ({wall:.2f} s wall), CartPole "
                f"{cartpole:.2f} s CPU, ratio {cpu / cartpole:.2f}, load average {load:.2f}"
            )
    print(
        f"grading CPU: {min(seconds):.2f} to {max(seconds):.2f} s (target <= 10 s); "
        f"ratio to CartPole: median {np.median(ratios):.2f} (min {min(ratios):.2f})"
    )


if __name__ == "__main__":
    main()
