"""CPU cost of one env step of training, per RL algorithm, as rl-vs-principled trains them.

For each (family, algorithm) it trains one validation cell of the suite's grid
(:func:`osfb_gym.bench.suites.experience.rl_cell`: checkpoints scored, training
episodes' regret recorded) on one core, for ``--steps`` and for twice as many env
steps, after a short run that pays the imports and compiled loops. Both runs score
two checkpoints (0 and the last) and set up the same, so the difference of their CPU
times is ``--steps`` steps of training alone: it prints
that, in CPU milliseconds per env step, the CPU hours a 1e6-step run takes at that
rate, and the fixed cost of a cell (setup and scoring two checkpoints), which
dominates short runs. This is what a protocol at scale costs (the suite's
``recurrent_budget`` rests on it): run it before choosing budgets. Compare rows of
one run: the machine's load moves every row.

Run: ``python benchmarks/rl_algo_cost.py [--steps 16384] [--n-envs 16]
[--families lending,apple] [--algos PPO,A2C,DQN,RecurrentPPO] [--view feedback]``
"""

from __future__ import annotations

import argparse
import os
import time

from osfb_gym.bench.suites.experience import rl_cell
from osfb_gym.bench.suites.rl_vs_principled import validation_spec
from osfb_gym.bench.suites.rl_vs_principled.protocol import Protocol


def cost(family: str, algo: str, steps: int, n_envs: int, view: str) -> float:
    """Return the CPU seconds of the suite's first ``algo`` cell on ``family``, ``steps`` long."""
    protocol = Protocol(
        families=(family,),
        regimes=("resampled",),
        algos=(algo,),
        resampled_views=(view,),
        budgets=(steps,),
        n_envs=n_envs,
        recurrent_budget=0,
    )
    cell = next(c for c in validation_spec(protocol).cells() if c.params.get("algo") == algo)
    started = time.process_time()
    rl_cell(cell)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16384)
    parser.add_argument("--n-envs", type=int, default=16)
    parser.add_argument("--families", default="lending,apple")
    parser.add_argument("--algos", default="PPO,A2C,DQN,RecurrentPPO")
    parser.add_argument("--view", default="feedback", help="the resampled world's view")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for family in args.families.split(","):
        for algo in args.algos.split(","):
            cost(family, algo, 1_024, args.n_envs, args.view)  # imports, compiled loops: once
            short = cost(family, algo, args.steps, args.n_envs, args.view)
            long = cost(family, algo, 2 * args.steps, args.n_envs, args.view)
            per_step = (long - short) / args.steps
            print(
                f"{family:8s} {algo:13s} {per_step * 1e3:7.3f} ms of CPU a training step "
                f"= {per_step * 1e6 / 3600:6.2f} CPU hours a 1e6-step run; "
                f"a cell's fixed cost {short - per_step * args.steps:6.1f} CPU s",
                flush=True,
            )
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
