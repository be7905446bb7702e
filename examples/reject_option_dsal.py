"""Reject option with DSAL: learn when to abstain, and ask for labels only near the boundary.

Shah and Manwani (2020): each example can be classified (-1 / +1) or rejected
at cost d, and the learner decides whether to ask for its label. DSOL asks for
every label; DRAL asks inside a band around its two thresholds; DSAL asks with
a probability that peaks there (eq. 5). The score is the average risk L_d;
fewer labels for the same risk is the point.

    python examples/reject_option_dsal.py            # 10 runs of T = 10,000: about 8 s
    python examples/reject_option_dsal.py --d 0.4
    python examples/reject_option_dsal.py --fast
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import osfb_gym  # noqa: E402, F401  (registers the environment ids)
from agents.reject import DRAL, DSAL, DSOL  # noqa: E402
from osfb_gym.runner import evaluate  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--d", type=float, default=0.25, help="rejection cost, in (0, 0.5)")
parser.add_argument("--horizon", type=int, default=10_000, help="trials per run (the paper's T)")
parser.add_argument("--seeds", type=int, default=10, help="runs per learner")
parser.add_argument("--out", default="examples-output/reject-option", help="folder for the plot")
parser.add_argument("--fast", action="store_true", help="2 runs of T = 300 (tests)")
args = parser.parse_args()
Path(args.out).mkdir(parents=True, exist_ok=True)
if args.fast:
    args.seeds, args.horizon = 2, 300

# The default world: two overlapping Gaussian classes, where Chow's rule rejects a band.
env_kwargs = {"d": args.d, "horizon": args.horizon}
figure, (risk_axis, query_axis) = plt.subplots(1, 2, figsize=(11, 4))
print("| learner | average risk | labels asked | rejection rate | misclassification rate |")
print("|---|---|---|---|---|")
for agent in (DSOL(), DRAL(), DSAL()):
    frame, trajectories = evaluate(
        "RejectOption-v0", agent, range(args.seeds), env_kwargs=env_kwargs, return_trajectories=True
    )
    means = frame.mean(numeric_only=True)
    name = type(agent).__name__
    print(
        f"| {name} | {means['average_risk']:.4f} ± {frame['average_risk'].sem():.4f} "
        f"| {means['query_rate']:.1%} | {means['rejection_rate']:.3f} "
        f"| {means['misclassification_rate']:.3f} |"
    )
    risk_axis.plot(np.mean([t.curves["risk"] for t in trajectories], axis=0), label=name)
    query_axis.plot(np.mean([t.curves["query_rate"] for t in trajectories], axis=0), label=name)
print(f"Chow's rule (the Bayes risk of this world): {frame['bayes_risk'].mean():.4f}")
risk_axis.set(xlabel="trial t", ylabel="average risk so far", title=f"risk, d = {args.d}")
query_axis.set(xlabel="trial t", ylabel="fraction of labels asked", title="labels asked")
risk_axis.legend()
figure.tight_layout()
plot = Path(args.out) / "reject_option.png"
figure.savefig(plot)
print(f"plot: {plot}")
