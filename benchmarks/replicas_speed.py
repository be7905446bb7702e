"""How much do vectorised replicas save on a paper's grid, and do they change any result?

The jiang-* suites run one grid per (dataset, cutoff, split): greedy and
six exploration methods at 14 values of alpha, 85 agents on the same
stream. This script runs that grid on one split's stream prefix, in one
process on one core (BLAS limited to one thread), two ways:

1. one :func:`~osfb_gym.runner.run_episode` per agent (how the suite ran
   before), and
2. one vector episode of ``OneSidedLending-v0`` with every agent as a
   replica (:class:`~agents.lending.replicas.CutoffReplicas`, how it runs now);

and reports both times, their ratio (both measured in the same run, so
machine noise hits both alike) and whether every agent's cumulative loss
is identical between the two.

Usage::

    python benchmarks/replicas_speed.py [--dataset adult] [--horizon 3000] [--data-home DIR]
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
from _args import parse_args
from threadpoolctl import threadpool_limits

import osfb_gym  # noqa: F401
from agents.lending.replicas import CutoffReplicas
from osfb_gym.bench.suites.jiang import JIANG_SUITES, agent_for
from osfb_gym.runner import run_episode, run_vector_episode

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@dataclass
class Args:
    """Command-line arguments."""

    dataset: str = "adult"
    """Dataset of the stream (linear link, batch size 1: Table 1's protocol)."""
    horizon: int = 3000
    """Steps of the stream prefix (the whole Adult stream is 46,400)."""
    cutoff: float = 0.5
    """Cutoff quantile."""
    seed: int = 0
    """Reset seed: the warm-start split and the stream order."""
    data_home: str | None = None
    """Directory holding the datasets (default: $OSFB_DATA, then ../shared/data)."""


def main(args: Args) -> dict[str, object]:
    """Run the grid both ways; return the measurements."""
    data_home = args.data_home or os.environ.get("OSFB_DATA") or str(SHARED_DATA)
    suite = JIANG_SUITES["jiang-linear"]
    grid = [
        (method, alpha)
        for method in suite.methods
        for alpha in ([None] if method == "greedy" else suite.alphas)
    ]
    kwargs = dict(
        dataset=args.dataset,
        data_home=data_home,
        link="linear",
        batch_size=1,
        cutoff_quantile=args.cutoff,
        horizon=args.horizon,
    )

    def agents() -> list:
        return [agent_for(method, alpha) for method, alpha in grid]

    env = gym.make("OneSidedLending-v0", **kwargs)
    envs = gym.make_vec("OneSidedLending-v0", num_envs=len(grid), lockstep=True, **kwargs)
    env.reset(seed=args.seed)  # the dataset's world is fitted once, outside both timings
    with threadpool_limits(1):
        started = time.perf_counter()
        alone = [run_episode(env, agent, args.seed).metrics for agent in agents()]
        one_by_one = time.perf_counter() - started
        started = time.perf_counter()
        together = [
            t.metrics for t in run_vector_episode(envs, CutoffReplicas(agents()), args.seed)
        ]
        replicas = time.perf_counter() - started
    pairs = zip(alone, together, strict=True)
    same = sum(a["cumulative_loss"] == b["cumulative_loss"] for a, b in pairs)
    return {
        "dataset": args.dataset,
        "steps": int(alone[0]["steps"]),
        "agents": len(grid),
        "one_by_one_s": round(one_by_one, 2),
        "replicas_s": round(replicas, 2),
        "speedup": round(one_by_one / replicas, 2),
        "identical_losses": f"{same} of {len(grid)}",
    }


if __name__ == "__main__":
    print(json.dumps(main(parse_args(Args, __doc__.splitlines()[0])), indent=2))
