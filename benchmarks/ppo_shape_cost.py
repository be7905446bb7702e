"""What PPO's speed owes to the observation's size and the number of actions, env aside.

``vec_throughput.py`` finds ``MultiServiceChoice-RL-v0`` (a 1,501-number
observation, ``Discrete(500)`` actions, 10-step episodes by default) training
at under half CartPole's speed while its env is about 5% of the time. This
script trains PPO with the same settings (``MlpPolicy``, 16 envs in SB3's
``DummyVecEnv``, ``n_steps``, torch on one thread) on a do-nothing env
whose observation has ``d`` numbers and whose action space is
``Discrete(n)``, for ``(d, n)`` in CartPole's shape (4, 2), the services'
(1501, 500) and the two mixed ones, interleaved over ``--rounds``; the
steps per CPU second of ``learn`` say which of the two costs PPO's network
more. The env returns a fixed random observation and reward 0, ending
episodes after ``--horizon`` steps, so its own cost is negligible.

Run: ``python benchmarks/ppo_shape_cost.py [--shapes 4x2,1501x2,4x500,1501x500]
[--n-envs 16] [--n-steps 128] [--rollouts 4] [--rounds 3] [--horizon 10]``
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
import numpy as np  # noqa: E402
import torch  # noqa: E402
from _args import parse_args  # noqa: E402
from gymnasium import spaces  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402


@dataclasses.dataclass
class Args:
    """The benchmark's arguments (``--shapes`` etc.)."""

    shapes: str = "4x2,1501x2,4x500,1501x500"
    n_envs: int = 16
    n_steps: int = 128
    rollouts: int = 4
    rounds: int = 3
    horizon: int = 10


class Shaped(gym.Env):
    """A do-nothing env: a fixed ``d``-number observation, ``Discrete(n)``, reward 0."""

    def __init__(self, d: int, n: int, horizon: int) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(d,), dtype=np.float32)
        self.action_space = spaces.Discrete(n)
        self._obs = np.random.default_rng(0).uniform(-1, 1, d).astype(np.float32)
        self._horizon, self._t = horizon, 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        """Start an episode."""
        super().reset(seed=seed)
        self._t = 0
        return self._obs.copy(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Count the step; truncate at the horizon."""
        self._t += 1
        return self._obs.copy(), 0.0, False, self._t >= self._horizon, {}


def train(d: int, n: int, args: Args) -> float:
    """Train PPO once on the ``(d, n)`` env; return env steps per CPU second of ``learn``."""
    venv = make_vec_env(lambda: Shaped(d, n, args.horizon), n_envs=args.n_envs, seed=0)
    model = PPO("MlpPolicy", venv, n_steps=args.n_steps, seed=0, device="cpu")
    steps = args.rollouts * args.n_envs * args.n_steps
    started = time.process_time()
    model.learn(total_timesteps=steps)
    return steps / (time.process_time() - started)


def main(argv: list[str] | None = None) -> None:
    """Train every shape ``--rounds`` times, interleaved; print steps/s and ratios to the first."""
    args = parse_args(Args, __doc__.splitlines()[0], argv)
    torch.set_num_threads(1)
    shapes = [tuple(int(v) for v in shape.split("x")) for shape in args.shapes.split(",")]
    train(*shapes[0], dataclasses.replace(args, rollouts=1))  # imports, outside the timings
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    rates: dict[tuple[int, ...], list[float]] = {shape: [] for shape in shapes}
    ratios: dict[tuple[int, ...], list[float]] = {shape: [] for shape in shapes}
    for round_index in range(args.rounds):
        shift = round_index % len(shapes)
        done = {shape: train(*shape, args) for shape in shapes[shift:] + shapes[:shift]}
        for shape, rate in done.items():
            rates[shape].append(rate)
            ratios[shape].append(rate / done[shapes[0]])
    print(
        f"PPO MlpPolicy, n_envs={args.n_envs}, n_steps={args.n_steps}, {args.rollouts} rollouts, "
        f"{args.rounds} rounds; medians"
    )
    for shape in shapes:
        print(
            f"obs {shape[0]:5d} numbers, Discrete({shape[1]:3d}): "
            f"{statistics.median(rates[shape]):6.0f} steps/CPU s, x {shapes[0]}: "
            f"{statistics.median(ratios[shape]):.3f} (rounds: "
            f"{[round(r, 3) for r in ratios[shape]]})",
            flush=True,
        )
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
