"""Can a memoryless RL policy learn a resampled lending world when it sees the estimator's features?

PPO (stable-baselines3) trains on ``OneSidedLending-RL-Features-v0``
(resampled worlds: ``world_seed=None``; horizon 200, one applicant a
step): each observation is what Greedy's ridge GLM fit knows about the
applicant (``mu(x . beta_hat) - c``, the width ``sqrt(x^T A^-1 x)``,
``n / T``, ``t / T``; :class:`osfb_gym.wrappers.EstimatorFeatures`). The
trained policy is then scored by the project's runner (the oracle's
one-sided loss, summed over the episode) on held-out reset seeds that no
training episode used, next to deny-all (approve nobody), Greedy and
Adaptive on the same seeds. As the sanity check, PPO trains for the same
budget on the plain observation (``OneSidedLending-RL-v0``: the applicant's
features alone), where no policy can beat the best constant action.

PPO settings are fixed, not tuned on anything: ``gamma = 0`` (a decision's
reward does not depend on later ones), ``n_steps = 1024``, otherwise
stable-baselines3's defaults; one env, torch on one thread.

Run (about 2 CPU minutes per training seed on a laptop core)::

    nice python benchmarks/ppo_lending_features.py [--train-seeds 3] [--total-timesteps 40000]
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from _args import parse_args
from threadpoolctl import threadpool_limits

import osfb_gym  # noqa: F401  (registers the ids)
from agents.base import Agent
from agents.lending import Adaptive, Greedy
from agents.rl import SB3Agent
from osfb_gym.runner import evaluate
from osfb_gym.wrappers import apply_view


@dataclass
class Args:
    """Arguments (each is a ``--flag``)."""

    total_timesteps: int = 40_000  # PPO's env steps of training, per run
    horizon: int = 200  # decisions per episode
    train_seeds: int = 3  # PPO runs on the features, seeds 0, 1, ...
    plain_seeds: int = 1  # PPO runs on the plain observation (the sanity check)
    test_seed: int = 10_000  # held-out reset seeds start here
    n_test: int = 20  # held-out episodes, each agent on the same seeds
    n_steps: int = 1024  # PPO rollout length
    gamma: float = 0.0  # PPO discount
    json: str | None = None  # also write the results here


class DenyAll(Agent):
    """Approve nobody: the best constant policy of lending's default world (cutoff at 70%)."""

    def act(self, observation: Any) -> np.ndarray:
        """Deny every applicant."""
        return np.zeros(np.shape(observation)[0], dtype=np.int8)


def summary(losses: np.ndarray) -> tuple[float, float]:
    """Mean and standard error of the per-episode losses."""
    return float(losses.mean()), float(losses.std(ddof=1) / np.sqrt(losses.size))


def train_and_score(view: str, seed: int, args: Args, seeds: list[int]) -> dict[str, Any]:
    """Train PPO on ``view`` with ``seed``; score it on ``seeds``; return losses and CPU times."""
    from stable_baselines3 import PPO

    env_kwargs = {"horizon": args.horizon}
    env_id = {"features": "OneSidedLending-RL-Features-v0", "plain": "OneSidedLending-RL-v0"}[view]
    started = time.process_time()
    model = PPO(
        "MlpPolicy",
        gym.make(env_id, **env_kwargs),
        gamma=args.gamma,
        n_steps=args.n_steps,
        seed=seed,
        device="cpu",
        verbose=0,
    )
    model.learn(total_timesteps=args.total_timesteps)
    train_cpu = time.process_time() - started
    started = time.process_time()
    frame = evaluate(
        lambda: apply_view(gym.make("OneSidedLending-v0", **env_kwargs), view),
        SB3Agent(model),
        seeds,
    )
    return {
        "view": view,
        "train_seed": seed,
        "losses": frame["cumulative_loss"].to_numpy(),
        "train_cpu_s": train_cpu,
        "score_cpu_s": time.process_time() - started,
    }


def report(row: dict[str, Any]) -> None:
    """Print one agent's line as soon as it is measured."""
    mean, se = summary(row["losses"])
    train = f"{row['train_cpu_s']:.0f}" if "train_cpu_s" in row else ""
    print(f"{row['agent']:24s} {mean:9.3f} ± {se:5.3f} {train:>12s} {row['score_cpu_s']:12.1f}")


def main() -> None:
    args = parse_args(Args, __doc__.splitlines()[0])
    torch.set_num_threads(1)
    seeds = list(range(args.test_seed, args.test_seed + args.n_test))
    print(
        f"resampled OneSidedLending-v0, horizon {args.horizon}; cumulative one-sided loss over "
        f"held-out seeds {seeds[0]}..{seeds[-1]} (mean ± s.e., lower is better); PPO "
        f"{args.total_timesteps} steps, gamma={args.gamma}, n_steps={args.n_steps}"
    )
    print(f"{'agent':24s} {'loss':>16s} {'train CPU s':>12s} {'score CPU s':>12s}", flush=True)
    rows: list[dict[str, Any]] = []
    # features seed 0 and the plain sanity check first, then the other training seeds
    runs = [("features", 0)] * min(args.train_seeds, 1) + [
        ("plain", seed) for seed in range(args.plain_seeds)
    ]
    runs += [("features", seed) for seed in range(1, args.train_seeds)]
    with threadpool_limits(1):
        principled = (("deny-all", DenyAll()), ("Greedy", Greedy()), ("Adaptive", Adaptive()))
        for name, agent in principled:
            started = time.process_time()
            frame = evaluate(
                "OneSidedLending-v0", agent, seeds, env_kwargs={"horizon": args.horizon}
            )
            row = {
                "agent": name,
                "losses": frame["cumulative_loss"].to_numpy(),
                "score_cpu_s": time.process_time() - started,
            }
            rows.append(row)
            report(row)
        for view, seed in runs:
            row = train_and_score(view, seed, args, seeds)
            row["agent"] = f"PPO[{view}] seed {seed}"
            rows.append(row)
            report(row)
            if args.json is not None:
                with open(args.json, "w") as handle:
                    json.dump([{**r, "losses": r["losses"].tolist()} for r in rows], handle)
    features = [r for r in rows if r.get("view") == "features"]
    if features:
        means = np.array([r["losses"].mean() for r in features])
        print(
            f"PPO[features] over {len(means)} training seeds: {means.mean():.3f} (runs: "
            f"{', '.join(f'{m:.3f}' for m in means)})"
        )


if __name__ == "__main__":
    main()
