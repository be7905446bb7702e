"""Initialising services with AcQUIre: which users to ask, so k services serve everyone.

Bose et al. (NeurIPS 2024): a provider places k services, one at a time, each
at the preference of a user it chooses to ask; every user then takes the service best
for them. AcQUIre asks user j with probability proportional to the loss j
reports at its current service (k-means++ seeding with the users' own losses);
Uniform asks users at random; MaxLossGreedy asks the worst-off user.

    python examples/services_acquire.py                 # 20 seeds, k = 30: about 45 s
    python examples/services_acquire.py --loss huber
    python examples/services_acquire.py --fast
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import osfb_gym  # noqa: E402, F401  (registers the environment ids)
from agents.services import AcQUIre, MaxLossGreedy, Uniform  # noqa: E402
from osfb_gym.runner import evaluate  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--loss", default="squared", help="squared, mahalanobis, huber or cosine")
parser.add_argument("--services", type=int, default=30, help="k, the services to place")
parser.add_argument("--seeds", type=int, default=20, help="worlds per agent")
parser.add_argument("--out", default="examples-output/services", help="folder for the plot")
parser.add_argument("--users", type=int, default=500, help="n, the users")
parser.add_argument("--fast", action="store_true", help="2 seeds, 100 users, k = 5 (tests)")
args = parser.parse_args()
Path(args.out).mkdir(parents=True, exist_ok=True)
if args.fast:
    args.seeds, args.users, args.services = 2, 100, 5

# Users in 10 preference clusters of unequal sizes (the env's default population).
env_kwargs = {"n_users": args.users, "n_services": args.services, "loss": args.loss}
figure, axis = plt.subplots(figsize=(7, 4))
print("| agent | total loss after k services (mean ± s.e.) | approximation ratio |\n|---|---|---|")
for agent in (AcQUIre(), Uniform(), MaxLossGreedy()):
    frame, trajectories = evaluate(
        "MultiServiceChoice-v0",
        agent,
        range(args.seeds),
        env_kwargs=env_kwargs,
        return_trajectories=True,
    )
    loss = frame["total_loss"]
    name = type(agent).__name__
    ratio = frame["approximation_ratio"].mean()
    print(f"| {name} | {loss.mean():.4g} ± {loss.sem():.2g} | {ratio:.2f} |")
    # each reward is the decrease of the total loss, so minus the running sum is the loss after k
    after_k = -np.mean([np.cumsum(t.rewards) for t in trajectories], axis=0)
    axis.plot(np.arange(1, after_k.size + 1), after_k, marker=".", label=name)
axis.set(xlabel="services placed k", ylabel="total loss", yscale="log", title=f"{args.loss} loss")
axis.legend()
figure.tight_layout()
plot = Path(args.out) / "services_acquire.png"
figure.savefig(plot)
print(f"plot: {plot}")
