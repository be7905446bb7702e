"""What does one reset of MultiServiceChoice-v0 cost (a new world of 500 users), tree against tree?

Inside RL training the services env draws a new world at every reset
(every ``n_services = 10`` steps): about a third of its time per step
there. This script times the reset in a tight loop, CPU time
(``time.process_time``), one BLAS thread, of the default env (500 users,
``k = 10``, the squared family):

- ``env``: the unwrapped env's ``reset()`` (the seeded world stream);
- ``rl``: ``osfb_gym.wrappers.rl_env(...).reset()`` after two steps, as
  training calls it (the plain view resets the env directly once
  Gymnasium's checkers are spent, then encodes the observation).

Both in a process that has built the RL view, which imports numba when it
is installed, as training does: the reset's compiled loops then run
(``OSFB_NUMBA=0``: NumPy's lines, the same worlds).

Each source tree given with ``--trees`` (default: this one) is timed in its
own subprocess (``PYTHONPATH`` set to the tree), the trees alternated
``--rounds`` times in one run, so that the machine's load hits them alike;
printed: each tree's median microseconds per reset and, for two trees, the
ratio of the second to the first.

Usage::

    python benchmarks/services_reset.py [--trees OLD NEW] [--rounds 7] [--resets 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def child(resets: int) -> dict[str, float]:
    """Time ``resets`` resets of the unwrapped env and of the RL-wrapped one (us per reset)."""
    import gymnasium as gym

    import osfb_gym  # noqa: F401  (registers the ids)
    from osfb_gym.wrappers import rl_env

    env = gym.make("MultiServiceChoice-v0").unwrapped
    env.reset(seed=0)
    wrapped = rl_env("MultiServiceChoice-v0")
    wrapped.reset(seed=0)
    wrapped.step(0)  # the checkers' first steps: the view then resets the env directly
    wrapped.step(1)
    out = {}
    for name, reset in (("env", env.reset), ("rl", wrapped.reset)):
        for _ in range(100):
            reset()
        started = time.process_time()
        for _ in range(resets):
            reset()
        out[name] = 1e6 * (time.process_time() - started) / resets
    return out


def main() -> None:
    """Alternate the trees' subprocesses; print medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="+", default=[str(Path(__file__).parents[1])])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--resets", type=int, default=2000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.resets)))
        return
    environ = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    times: dict[str, dict[str, list[float]]] = {tree: {"env": [], "rl": []} for tree in args.trees}
    for _ in range(args.rounds):
        for tree in args.trees:
            command = [sys.executable, __file__, "--child", "--resets", str(args.resets)]
            result = subprocess.run(
                command,
                env=dict(environ, PYTHONPATH=tree),
                capture_output=True,
                text=True,
                check=True,
            )
            for key, value in json.loads(result.stdout.strip().splitlines()[-1]).items():
                times[tree][key].append(value)
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    medians = {
        tree: {k: statistics.median(v) for k, v in parts.items()} for tree, parts in times.items()
    }
    for tree, parts in medians.items():
        print(
            f"{tree}: env.reset {parts['env']:.1f} us, rl_env reset {parts['rl']:.1f} us "
            f"(median of {args.rounds} rounds of {args.resets})"
        )
    if len(args.trees) == 2:
        old, new = (medians[tree] for tree in args.trees)
        print(
            f"ratio new/old: env.reset {new['env'] / old['env']:.3f}, "
            f"rl_env reset {new['rl'] / old['rl']:.3f}"
        )


if __name__ == "__main__":
    main()
