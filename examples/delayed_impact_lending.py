"""Delayed impact: how three lending policies move two groups' credit scores over time.

Liu et al. (ICML 2018): a repaid loan raises the borrower's score (+75), a default
lowers it (-150). A lender that maximises profit, one that equalises approval rates
(demographic parity) and one that equalises true-positive rates (equal opportunity)
each learn per-group thresholds from the outcomes of the loans they approve, and the
groups' mean scores drift with their decisions. A lender that approves everyone shows
the harm of lending where repayment is unlikely.

    python examples/delayed_impact_lending.py                 # 10 seeds, 1,000 steps
    python examples/delayed_impact_lending.py --dataset fico  # the FICO TransRisk tables
    python examples/delayed_impact_lending.py --fast
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import osfb_gym  # noqa: E402, F401  (registers the environment ids)
from agents.base import Agent  # noqa: E402
from agents.delayed_impact import DemographicParity, EqualOpportunity, MaxProfit  # noqa: E402
from osfb_gym.runner import evaluate  # noqa: E402


class ApproveAll(Agent):
    """Approve every applicant (the lender that ignores repayment)."""

    env_ids = ("DelayedImpactLending-v0",)

    def act(self, observation: Any) -> np.ndarray:
        return np.ones(len(observation), dtype=np.int8)


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--dataset", default=None, help="None (synthetic two groups) or fico")
parser.add_argument("--horizon", type=int, default=1000, help="steps per episode")
parser.add_argument("--seeds", type=int, default=10, help="episodes per lender")
parser.add_argument("--out", default="examples-output/delayed_impact", help="folder for the plot")
parser.add_argument("--fast", action="store_true", help="2 seeds of 100 steps (tests)")
args = parser.parse_args()
Path(args.out).mkdir(parents=True, exist_ok=True)
if args.fast:
    args.seeds, args.horizon = 2, 100

env_kwargs: dict[str, Any] = {"horizon": args.horizon}
if args.dataset:
    env_kwargs["dataset"] = args.dataset
figure, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
print(
    "| lender | profit | one-sided loss | approval g0 / g1 | score change g0 / g1 |\n"
    "|---|---|---|---|---|"
)
for agent in (ApproveAll(), MaxProfit(), DemographicParity(), EqualOpportunity()):
    frame, trajectories = evaluate(
        "DelayedImpactLending-v0",
        agent,
        range(args.seeds),
        env_kwargs=env_kwargs,
        return_trajectories=True,
    )
    name = type(agent).__name__
    print(
        f"| {name} | {frame['return'].mean():.1f} | {frame['cumulative_loss'].mean():.1f} | "
        f"{frame['approval_rate_0'].mean():.2f} / {frame['approval_rate_1'].mean():.2f} | "
        f"{frame['score_change_0'].mean():+.1f} / {frame['score_change_1'].mean():+.1f} |"
    )
    for group, axis in enumerate(axes):
        mean = np.mean([t.curves[f"mean_score_{group}"] for t in trajectories], axis=0)
        axis.plot(np.arange(1, mean.size + 1), mean, label=name)
for group, axis in enumerate(axes):
    axis.set(xlabel="step", title=f"group {group}: mean score (true)")
axes[0].set_ylabel("mean score")
axes[1].legend(fontsize=8)
figure.tight_layout()
plot = Path(args.out) / "delayed_impact.png"
figure.savefig(plot)
print(f"plot: {plot}")
