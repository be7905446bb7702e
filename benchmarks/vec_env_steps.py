"""The native vector envs' own step against SyncVectorEnv over the single RL id, no learner.

For each RL id of ``--env-ids`` (comma-separated; ids with a native vector
env), ``--n-envs`` sub-envs are stepped ``--steps`` times with the same
pre-drawn random actions, ``SAME_STEP`` autoreset (what SB3 trains on), by
``gym.make_vec(id, ...)`` (native) and by Gymnasium's ``SyncVectorEnv`` over
``gym.make(id)`` (what ``gym.make_vec`` gave before); CPU time
(``time.process_time``) gives vector steps per CPU second. ``--rounds R``
measures both R times, interleaved, and the median ratio native / sync is
printed with every round's, so a load shared by both cancels in the ratio.
:mod:`vec_throughput` measures the same envs inside PPO's training.

Run: ``python benchmarks/vec_env_steps.py [--env-ids A,B] [--n-envs 16]
[--steps 2000] [--rounds 3]``
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, set before NumPy loads it

import dataclasses  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import gymnasium as gym  # noqa: E402
from _args import parse_args  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402

import osfb_gym  # noqa: E402, F401  (registers the ids)

IDS = (
    "OneSidedLending-RL-v0,AppleTasting-RL-v0,RejectOption-RL-v0,DelayedImpactLending-RL-v0,"
    "OneSidedLending-RL-Features-v0,RejectOption-RL-Feedback-v0,"
    "DelayedImpactLending-RL-Features-v0"
)


@dataclasses.dataclass
class Args:
    """The benchmark's arguments (``--env-ids`` etc.)."""

    env_ids: str = IDS
    n_envs: int = 16
    steps: int = 2000
    rounds: int = 3


def steps_per_second(envs: Any, actions: list[Any]) -> float:
    """Vector steps per CPU second of ``envs`` through ``actions`` (reset seeded 0)."""
    envs.reset(seed=0)
    started = time.process_time()
    for action in actions:
        envs.step(action)
    seconds = time.process_time() - started
    envs.close()
    return len(actions) / seconds


def main(argv: list[str] | None = None) -> None:
    """Step every id's native and sync env ``--rounds`` times, interleaved; print the ratios."""
    args = parse_args(Args, __doc__.splitlines()[0], argv)
    mode = AutoresetMode.SAME_STEP
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    for env_id in args.env_ids.split(","):

        def native(env_id: str = env_id) -> Any:
            return gym.make_vec(env_id, num_envs=args.n_envs, autoreset_mode=mode)

        def sync(env_id: str = env_id) -> Any:
            makers = [lambda: gym.make(env_id) for _ in range(args.n_envs)]
            return SyncVectorEnv(makers, autoreset_mode=mode)

        space = native().action_space
        space.seed(0)
        actions = [space.sample() for _ in range(args.steps)]
        rows = []
        for round_index in range(max(args.rounds, 1)):
            order = [("native", native), ("sync", sync)][:: 1 if round_index % 2 == 0 else -1]
            rates = {name: steps_per_second(make(), actions) for name, make in order}
            rows.append(rates)
        ratios = [row["native"] / row["sync"] for row in rows]
        print(
            f"{env_id:40s} native {statistics.median(r['native'] for r in rows):8.0f}  "
            f"sync {statistics.median(r['sync'] for r in rows):7.0f} vector steps/CPU s  "
            f"native / sync: {statistics.median(ratios):.2f} "
            f"(rounds: {[round(r, 2) for r in ratios]})",
            flush=True,
        )
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
