"""PPO's training throughput on a native vector env, against CartPole-v1 trained the same way.

Issue 36's target: PPO on a lending RL id with 16 native envs trains at
least 0.8 times as fast as PPO on ``CartPole-v1`` with 16 envs, same
settings, measured in one run. Each configuration trains PPO
(stable-baselines3 defaults but ``n_steps``, ``MlpPolicy``, torch on one
thread, CPU) for ``--rollouts`` rollouts of ``--n-envs x --n-steps`` env
steps; the CPU time of ``learn`` (``time.process_time``: the env, the
rollouts and the gradient updates) gives steps per CPU second. The
configurations:

- ``cartpole-dummy``: ``CartPole-v1`` in SB3's ``DummyVecEnv``
  (``make_vec_env``: a ``Monitor`` on each env), the usual way and the
  reference of every ratio;
- ``cartpole-sync``: ``CartPole-v1`` in Gymnasium's ``SyncVectorEnv``
  (``SAME_STEP``) through :class:`osfb_gym.wrappers.sb3.SB3VecEnv` and
  SB3's ``VecMonitor``: the adapter's own cost, on the reference env;
- ``<id>-dummy``: each RL id of ``--env-ids`` in ``DummyVecEnv`` (``make_vec_env``);
- ``<id>-native``: ``gym.make_vec(id, num_envs, autoreset_mode="SameStep")``,
  the native vector env, through :class:`~osfb_gym.wrappers.sb3.SB3VecEnv`
  and ``VecMonitor`` (the episode statistics SB3 logs, as ``Monitor`` gives
  the others);
- ``<id>-train``: :func:`osfb_gym.bench.rl.train` on the id's base env and
  view (``vec="native"``, ``n_envs``, the same PPO settings, torch on one
  thread), the path ``osfb-bench train`` and the rl-vs-principled suite take;
  with ``--record 1`` it records every training episode's metrics
  (``on_episode``), as the suite's cells do.

``make_vec_env`` is given ``render_mode=None``: by default it asks every env
for ``"rgb_array"``, which costs CartPole nothing until a frame is drawn
but has the lending env record each step for its frames.

``--rounds R`` trains every configuration R times, interleaved (the order
rotated by one each round, so no configuration always goes first); each
round's ratios are taken within the round, and the median over rounds is
printed, so a load shared by both sides of a ratio cancels. Also printed,
as shares of ``learn``'s CPU time: the env (the vector env's ``step_wait``
and ``reset``), the rest of collecting rollouts (the policy's forward
passes, the buffer, callbacks: ``collect_rollouts`` minus the env) and the
gradient updates (``train``); and the load average before and after.

Run: ``python benchmarks/vec_throughput.py [--env-ids OneSidedLending-RL-v0,...]
[--n-envs 16] [--n-steps 128] [--rollouts 8] [--rounds 3] [--record 0] [--json F]``
(``--env-ids``: comma-separated RL ids with a native vector env, all
measured in the same rounds against the same CartPole reference).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, set before NumPy loads it

import dataclasses  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402
from _args import parse_args  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

import osfb_gym  # noqa: E402, F401  (registers the ids)
from osfb_gym.wrappers.sb3 import SB3VecEnv  # noqa: E402

REFERENCE = "cartpole-dummy"


@dataclasses.dataclass
class Args:
    """The benchmark's arguments (``--env-ids`` etc.)."""

    env_ids: str = "OneSidedLending-RL-v0"
    n_envs: int = 16
    n_steps: int = 128
    rollouts: int = 8
    rounds: int = 3
    seed: int = 0
    #: 1: ``<id>-train`` records the training episodes' metrics (``on_episode``)
    record: int = 0
    json: str | None = None


def configurations(args: Args) -> dict[str, Callable[[Args], dict[str, float]]]:
    """Name -> a function training the configuration once (:func:`train`, :func:`via_bench`)."""
    n, seed = args.n_envs, args.seed
    plain = {"render_mode": None}

    def cartpole_sync() -> VecEnv:
        envs = SyncVectorEnv(
            [lambda: gym.make("CartPole-v1") for _ in range(n)],
            autoreset_mode=AutoresetMode.SAME_STEP,
        )
        venv = VecMonitor(SB3VecEnv(envs))
        venv.seed(seed)
        return venv

    def native(env_id: str) -> VecEnv:
        venv = VecMonitor(SB3VecEnv(gym.make_vec(env_id, num_envs=n, autoreset_mode="SameStep")))
        venv.seed(seed)
        return venv

    def dummy(env_id: str) -> VecEnv:
        return make_vec_env(env_id, n_envs=n, seed=seed, env_kwargs=plain)

    def cartpole() -> VecEnv:
        return make_vec_env("CartPole-v1", n_envs=n, seed=seed, env_kwargs=plain)

    configs: dict[str, Callable[[Args], dict[str, float]]] = {
        REFERENCE: functools.partial(train, cartpole),
        "cartpole-sync": functools.partial(train, cartpole_sync),
    }
    for env_id in args.env_ids.split(","):
        short = env_id.removesuffix("-v0")
        configs[f"{short}-dummy"] = functools.partial(train, functools.partial(dummy, env_id))
        configs[f"{short}-native"] = functools.partial(train, functools.partial(native, env_id))
        configs[f"{short}-train"] = functools.partial(via_bench, env_id)
    return configs


def timed(obj: Any, *names: str) -> list[float]:
    """Wrap ``obj``'s methods ``names`` with one CPU-time counter (its one entry)."""
    spent = [0.0]

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        def timed_method(*a: Any, **k: Any) -> Any:
            started = time.process_time()
            try:
                return method(*a, **k)
            finally:
                spent[0] += time.process_time() - started

        return timed_method

    for name in names:
        setattr(obj, name, wrap(getattr(obj, name)))
    return spent


class _Split:
    """CPU seconds of ``learn`` and of its env, rollouts and updates, timed once it starts."""

    def __init__(self) -> None:
        self.env, self.rollouts, self.updates = [0.0], [0.0], [0.0]
        self.started = self.seconds = 0.0

    def start(self, model: Any) -> None:
        self.env = timed(model.get_env(), "step_wait", "reset")
        self.rollouts = timed(model, "collect_rollouts")
        self.updates = timed(model, "train")
        self.started = time.process_time()

    def stop(self, steps: int) -> dict[str, float]:
        seconds = time.process_time() - self.started
        return {
            "steps_per_s": steps / seconds,
            "env_share": self.env[0] / seconds,
            "policy_share": (self.rollouts[0] - self.env[0]) / seconds,
            "update_share": self.updates[0] / seconds,
        }


def train(make: Callable[[], VecEnv], args: Args) -> dict[str, float]:
    """Train PPO once on ``make()``; return steps per CPU second and the shares of time."""
    model = PPO("MlpPolicy", make(), n_steps=args.n_steps, seed=args.seed, device="cpu")
    steps, split = args.rollouts * args.n_envs * args.n_steps, _Split()
    split.start(model)
    model.learn(total_timesteps=steps)
    result = split.stop(steps)
    model.get_env().close()
    return result


def via_bench(env_id: str, args: Args) -> dict[str, float]:
    """Train PPO once through :func:`osfb_gym.bench.rl.train` (the native env); as :func:`train`."""
    from stable_baselines3.common.callbacks import BaseCallback

    from osfb_gym.bench.rl import train as bench_train

    kwargs = dict(gym.spec(env_id).kwargs)  # an RL id: its base id and view
    base, view = kwargs.pop("env_id"), kwargs.pop("view", "plain")
    if kwargs:  # a -Discrete twin: train() picks its actions from the algorithm
        raise ValueError(f"--env-ids: {env_id!r} presets {sorted(kwargs)}; give a view's RL id")
    split, steps = _Split(), args.rollouts * args.n_envs * args.n_steps
    episodes: list[dict[str, float]] = []

    class Timer(BaseCallback):
        def _on_training_start(self) -> None:
            split.start(self.model)

        def _on_step(self) -> bool:
            return True

    bench_train(
        base,
        "PPO",
        total_timesteps=steps,
        n_envs=args.n_envs,
        seed=args.seed,
        vec="native",
        view=view,
        algo_kwargs={"n_steps": args.n_steps},
        callback=Timer(),
        on_episode=episodes.append if args.record else None,
    )
    return split.stop(steps)


def main(argv: list[str] | None = None) -> None:
    """Train every configuration ``--rounds`` times, interleaved; print the ratios."""
    args = parse_args(Args, __doc__.splitlines()[0], argv)
    torch.set_num_threads(1)
    configs = configurations(args)
    warm = dataclasses.replace(args, rollouts=1, n_steps=8)
    for run in configs.values():
        run(warm)  # import and build once, outside the timings
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
    names = list(configs)
    for round_index in range(max(args.rounds, 1)):
        # the order rotates each round, so no configuration always trains first
        shift = round_index % len(names)
        rows = {name: configs[name](args) for name in names[shift:] + names[:shift]}
        for name, row in rows.items():
            row["ratio"] = row["steps_per_s"] / rows[REFERENCE]["steps_per_s"]
            runs[name].append(row)
    print(
        f"PPO MlpPolicy, n_envs={args.n_envs}, n_steps={args.n_steps}, "
        f"{args.rollouts} rollouts ({args.rollouts * args.n_envs * args.n_steps} steps) "
        f"x {args.rounds} rounds, torch and BLAS on one thread; medians over rounds"
    )
    summary = {}
    for name, rows in runs.items():
        summary[name] = {
            key: statistics.median(row[key] for row in rows)
            for key in ("steps_per_s", "env_share", "policy_share", "update_share", "ratio")
        }
        summary[name]["ratios"] = [round(row["ratio"], 3) for row in rows]  # type: ignore[assignment]
        s = summary[name]
        print(
            f"{name:42s} {s['steps_per_s']:7.0f} steps/CPU s  env {s['env_share']:6.1%}  "
            f"policy {s['policy_share']:6.1%}  updates {s['update_share']:6.1%}  "
            f"x {REFERENCE}: {s['ratio']:.3f} (rounds: {s['ratios']})",
            flush=True,
        )
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"args": dataclasses.asdict(args), "results": summary}, handle, indent=2)


if __name__ == "__main__":
    main()
