"""How fast do the apple-tasting learners stream 4096-dimensional hashed text?

Sculley's Table 1 streams tens of thousands of messages through each
learner, and the sculley-spam / sculley-reuters suites run hundreds of
episodes, so the per-step cost matters. This script measures, in one run on
one core (BLAS limited to one thread), on the SMS spam stream (5574
messages, hashed character 4-grams, 4096 buckets, unit length; ham
positive as in the paper):

1. the env alone (``gym.make``, with Gymnasium's wrappers), always tasting;
2. MarginPerceptron (m = 2, eta = 1, Figure 5) driven by ``run_episode``,
   env and metrics included: steps/s (target >= 20,000), and the learner's
   own time per step (act + update) measured in a separate loop;
3. the relaxed Online SVM (C = 100, buffer 1000) driven by ``run_episode``:
   steps/s, refits, and time per refit (scikit-learn's SMO on the kept Gram
   matrix).

The learners are also compared by their ratio of steps/s within this run,
so machine load affects both sides alike. Each fast measurement is the best
of ``--repeats`` episodes (the usual guard against a noisy neighbour).

Usage::

    python benchmarks/apple_speed.py [--dataset sms_spam] [--repeats 3] [--data-home DIR]
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
from _args import parse_args
from threadpoolctl import threadpool_limits

import osfb_gym  # noqa: F401
from agents.apple import OnlineSVM
from osfb_gym.bench.suites.sculley import make_learner, make_spam_env
from osfb_gym.runner import run_episode


@dataclass
class Args:
    """Command-line arguments."""

    dataset: str = "sms_spam"
    """A text dataset of the spam suite (hashed character 4-grams)."""
    repeats: int = 3
    """Episodes per fast measurement; the best is reported."""
    seed: int = 0
    """Reset seed: the stream order."""
    data_home: str | None = None
    """Directory holding the datasets (default: $OSFB_DATA, then the download cache)."""
    out: str | None = None
    """Write the measurements as JSON here."""


class TimedSVM(OnlineSVM):
    """OnlineSVM that also accumulates the wall time of its refits."""

    def reset(self, *args: Any, **kwargs: Any) -> None:
        """Reset, and the refit clock."""
        super().reset(*args, **kwargs)
        self.refit_seconds_ = 0.0

    def _refit(self) -> None:
        start = time.perf_counter()
        super()._refit()
        self.refit_seconds_ += time.perf_counter() - start


def data_home(args: Args) -> str | None:
    """The directory to read datasets from, if any."""
    # None: the data layer reads $OSFB_DATA, then its cache, and names both when it finds none
    return args.data_home or None


def env_alone(env: gym.Env, seed: int) -> tuple[int, float]:
    """Step the env to the end of its stream, tasting everything: (steps, seconds)."""
    start = time.perf_counter()
    env.reset(seed=seed)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(1)
        steps, done = steps + 1, terminated or truncated
    return steps, time.perf_counter() - start


def learner_alone(env: gym.Env, seed: int) -> tuple[int, float]:
    """MarginPerceptron's own time (act + update) over one episode, env excluded."""
    agent = make_learner("margin_perceptron")
    obs, info = env.reset(seed=seed)
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    seconds, steps, done = 0.0, 0, False
    while not done:
        start = time.perf_counter()
        action = agent.act(obs)
        seconds += time.perf_counter() - start
        next_obs, reward, terminated, truncated, info = env.step(action)
        start = time.perf_counter()
        agent.update(obs, action, float(reward), info["feedback"])
        seconds += time.perf_counter() - start
        obs, steps, done = next_obs, steps + 1, terminated or truncated
    return steps, seconds


def best_rate(measure: Any, repeats: int) -> dict[str, float]:
    """Run ``measure()`` ``repeats`` times; keep the fastest: steps, seconds, steps/s."""
    runs = [measure() for _ in range(repeats)]
    steps, seconds = min(runs, key=lambda run: run[1] / run[0])
    return {"steps": steps, "seconds": seconds, "steps_per_second": steps / seconds}


def main() -> None:
    """Measure on one core and print a summary."""
    args = parse_args(Args, __doc__.splitlines()[0])
    env = make_spam_env(args.dataset, data_home=data_home(args))
    dim = int(env.observation_space.shape[0])  # type: ignore[index]
    result: dict[str, Any] = {"dataset": args.dataset, "dim": dim}
    with threadpool_limits(1):
        env_alone(env, args.seed)  # warm-up: the hashed matrix, caches, env checker
        result["env"] = best_rate(lambda: env_alone(env, args.seed), args.repeats)

        def perceptron_episode() -> tuple[int, float]:
            start = time.perf_counter()
            trajectory = run_episode(env, make_learner("margin_perceptron"), args.seed)
            return len(trajectory.rewards), time.perf_counter() - start

        result["margin_perceptron"] = best_rate(perceptron_episode, args.repeats)
        learner = best_rate(lambda: learner_alone(env, args.seed), args.repeats)
        result["margin_perceptron_learner_us_per_step"] = 1e6 / learner["steps_per_second"]

        svm = TimedSVM(C=100.0, buffer=1000, margin=1.0)
        start = time.perf_counter()
        trajectory = run_episode(env, svm, args.seed)
        seconds = time.perf_counter() - start
        steps = len(trajectory.rewards)
        result["svm"] = {
            "steps": steps,
            "seconds": seconds,
            "steps_per_second": steps / seconds,
            "refits": svm.n_updates_,
            "refit_ms": 1000 * svm.refit_seconds_ / max(svm.n_updates_, 1),
            "refit_share": svm.refit_seconds_ / seconds,
            "f1": trajectory.metrics["f1"],
        }
    env.close()
    mp, alone, svm_result = result["margin_perceptron"], result["env"], result["svm"]
    result["ratio_perceptron_vs_svm"] = mp["steps_per_second"] / svm_result["steps_per_second"]
    result["env_share_of_perceptron_step"] = mp["steps_per_second"] / alone["steps_per_second"]
    print(f"{args.dataset}: {mp['steps']} steps, d = {dim} hashed character 4-grams, one thread")
    print(
        f"env alone (gym.make, tasting everything): {alone['steps_per_second']:,.0f} steps/s "
        f"({1e6 / alone['steps_per_second']:.1f} us/step)"
    )
    print(
        f"MarginPerceptron + env (run_episode): {mp['steps_per_second']:,.0f} steps/s "
        f"(target >= 20,000); the learner's own act + update "
        f"{result['margin_perceptron_learner_us_per_step']:.1f} us/step; the env takes "
        f"{100 * result['env_share_of_perceptron_step']:.0f}% of a step"
    )
    print(
        f"Online SVM (C = 100, buffer 1000) + env: {svm_result['steps_per_second']:,.0f} steps/s "
        f"({svm_result['seconds']:.1f} s), {svm_result['refits']} refits of "
        f"{svm_result['refit_ms']:.1f} ms each ({100 * svm_result['refit_share']:.0f}% of its "
        f"time), F1 {svm_result['f1']:.3f}"
    )
    print(
        f"MarginPerceptron is {result['ratio_perceptron_vs_svm']:,.0f}x faster than the "
        "Online SVM per step"
    )
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2, default=float))


if __name__ == "__main__":
    main()
