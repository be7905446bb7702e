"""RL against the adaptive agent: PPO trained over many episodes, Adaptive learning online.

PPO (stable-baselines3) learns a policy over many training episodes, then is
scored on held-out episodes; Adaptive and Greedy start every episode from the
warm-start sample alone. In the *fixed-world* regime (default, ``world_seed=0``)
every episode has the same hidden beta*, so PPO can learn the world itself;
with ``--resampled`` every episode draws a new world, and only learning within
the episode helps, the setting the online agents are built for.

    python examples/rl_vs_adaptive.py                # 30,000 PPO steps: about 30 s
    python examples/rl_vs_adaptive.py --resampled
    python examples/rl_vs_adaptive.py --fast

The ``rl-vs-principled`` suite (``osfb-bench run rl-vs-principled``) is the
full version: both regimes, observation views, equal experience, tuned
hyperparameters, five runs per cell with bootstrap CIs. Needs the ``[rl]``
extra (``pip install 'osfb-gym[rl]'``); without it the script says so in one line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import osfb_gym  # noqa: F401  (registers the environment ids)
from agents.lending import Adaptive, Greedy
from agents.rl import SB3Agent
from osfb_gym.bench.report import plot_average_loss
from osfb_gym.bench.rl import train
from osfb_gym.core.optional import require
from osfb_gym.runner import evaluate

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--total-timesteps", type=int, default=30_000, help="PPO's training steps")
parser.add_argument("--horizon", type=int, default=200, help="applicants per episode")
parser.add_argument("--seeds", type=int, default=20, help="held-out episodes per agent")
parser.add_argument("--out", default="examples-output/rl-vs-adaptive", help="folder for the plot")
parser.add_argument("--resampled", action="store_true", help="a new world every episode")
parser.add_argument("--fast", action="store_true", help="512 PPO steps, 2 episodes (tests)")
args = parser.parse_args()
Path(args.out).mkdir(parents=True, exist_ok=True)
if args.fast:
    args.total_timesteps, args.seeds = 512, 2

regime = "resampled worlds" if args.resampled else "fixed world"
env_kwargs: dict = {"horizon": args.horizon}
if not args.resampled:
    env_kwargs["world_seed"] = 0
try:
    require("stable_baselines3", "rl_vs_adaptive.py")
except ImportError as error:
    raise SystemExit(str(error)) from None
model = train(
    "OneSidedLending-v0",
    "PPO",
    total_timesteps=args.total_timesteps,
    env_kwargs=env_kwargs,
    algo_kwargs={"n_steps": 256 if args.fast else 1024},
    torch_threads=1,
    seed=0,
)
held_out = range(10_000, 10_000 + args.seeds)  # never seen in training

curves = {}
print("| agent | cumulative one-sided loss (mean ± s.e.) | approval rate |\n|---|---|---|")
for name, agent in (("PPO", SB3Agent(model)), ("Greedy", Greedy()), ("Adaptive", Adaptive())):
    frame, trajectories = evaluate(
        "OneSidedLending-v0", agent, held_out, env_kwargs=env_kwargs, return_trajectories=True
    )
    loss = frame["cumulative_loss"]
    print(
        f"| {name} | {loss.mean():.2f} ± {loss.sem():.2f} | {frame['approval_rate'].mean():.3f} |"
    )
    curves[(regime, name)] = np.stack([t.average_loss for t in trajectories])

title = f"PPO after {args.total_timesteps:,} steps vs the online agents"
plot = plot_average_loss(curves, Path(args.out) / "rl_vs_adaptive.png", title=title)
print(f"plot: {plot}")
