"""Quickstart: Greedy against Adaptive on one-sided lending, where greedy can get stuck.

A lender sees whether a loan is repaid only if it approves it. Greedy refits on
what it saw and approves when the estimate beats the cutoff; Adaptive (Algorithm 2
of Jiang, Jiang and Pacchiano 2021) adds an optimism bonus, so it keeps
approving applicants it is unsure about and corrects its mistakes. On the
paper's ``greedy_trap`` world (Theorem 1) greedy denies a whole kind of good
applicant forever.

    python examples/quickstart.py            # 10 seeds of T = 2000: about 10 s
    python examples/quickstart.py --fast     # a smoke run

Prints a table of the cumulative one-sided loss and saves a plot of R_t / t.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import osfb_gym  # noqa: F401  (registers the environment ids)
from agents.lending import Adaptive, Greedy
from osfb_gym.bench.report import plot_average_loss
from osfb_gym.runner import evaluate

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seeds", type=int, default=10, help="episodes per agent and world")
parser.add_argument("--horizon", type=int, default=2000, help="applicants per episode (T)")
parser.add_argument("--out", default="examples-output/quickstart", help="folder for the plot")
parser.add_argument("--fast", action="store_true", help="2 seeds of T = 100 (for the tests)")
args = parser.parse_args()
Path(args.out).mkdir(parents=True, exist_ok=True)
if args.fast:
    args.seeds, args.horizon = 2, 100

# Two worlds: the default logistic world, and the construction where greedy stalls.
worlds = {"default": {}, "greedy trap": {"scenario": "greedy_trap"}}
rows, curves = [], {}
for world, kwargs in worlds.items():
    for agent in (Greedy(), Adaptive()):
        frame, trajectories = evaluate(
            "OneSidedLending-v0",
            agent,
            seeds=range(args.seeds),
            env_kwargs={"horizon": args.horizon, **kwargs},
            return_trajectories=True,
        )
        name = type(agent).__name__
        losses = frame["cumulative_loss"]
        rows.append(
            f"| {world} | {name} | {losses.mean():.2f} ± {losses.sem():.2f} "
            f"| {frame['approval_rate'].mean():.3f} |"
        )
        curves[(world, name)] = np.stack([t.average_loss for t in trajectories])

print("| world | agent | cumulative one-sided loss (mean ± s.e.) | approval rate |")
print("|---|---|---|---|")
print("\n".join(rows))
plot = plot_average_loss(curves, Path(args.out) / "quickstart.png", title="Greedy vs Adaptive")
print(f"plot: {plot}")
