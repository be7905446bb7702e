"""How long does one acquisition step of MultiServiceChoice take at scale, and the reference?

Issue 18's targets, at n = 100,000 users and k = 100 services: one
acquisition step (place a service, every user re-chooses and reports its
loss; AcQUIre draws the next user) takes <= 3 ms, and the evaluator's
reference optimum costs nothing when no metric needs it. This script
measures, in one run, with BLAS limited to one thread and CPU time
(``time.process_time``, so other jobs on the machine matter less), for
each loss family at dimension ``--dim`` (default 2, the env's):

0. the loss kernel at one step, every user: the reference
   (``loss_at_reference``), the NumPy kernel and the world's own
   (``loss_at``: the compiled loop where numba is installed), checked
   equal byte for byte;
1. the env alone (``gym.make``, Gymnasium's wrappers included), acquiring
   users in a fixed random order: CPU time per step;
2. AcQUIre driven by ``run_episode`` (env, agent and metrics, no
   reference): per step, and the agent's own ``act`` + ``update``;
3. the reset (drawing the 100,000-user world), once.

The first line says whether the compiled loops run (numba, the ``fast``
extra); ``OSFB_NUMBA=0`` times the NumPy path, the same bits. Run with
``PYTHONPATH`` pointing at another tree, the script times that code.

Then, for the squared family, the reference optimum (``--restarts`` KMeans
restarts), printed as ratios to an episode that asks for none:
stepping the env outside the runner with ``reference_restarts`` left at
its default (no metric: the env never solves it; ratio ~1), a
``run_episode`` that asks for it on a new world (the solve), and a second
``run_episode`` on the same fixed world (``world_seed``: solved once, so
~1 again). The Mahalanobis family keeps one matrix per preference cluster
(10 here), indexed per user. Each per-step figure is the best of
``--repeats`` episodes.

Last (``--rl-steps``, 0 to skip), the default-size env (500 users,
k = 10) inside stable-baselines3 PPO training, as
``benchmarks/rl_profile.py`` trains it (:func:`osfb_gym.bench.rl.train`,
the plain view, one torch thread), and CartPole-v1 in the same run: each
layer of the training env's wrapper stack is wrapped in a CPU-time
counter, so the env's own step and reset, the RL view (with the layers
below it, which it steps only until Gymnasium's checkers are spent) and
SB3's Monitor are told apart. The env's step counts its
``step_without_oracle``, which the view calls on that direct path (the
oracle hidden by ``HideOracle`` is then not computed), or its
``step_encoded``, which the plain view calls instead where the env writes
the view's vector in its step's compiled loop (then the view's own
encoding is in the env's step). Printed per training step and as CartPole
steps (CartPole's Monitor step and reset, inside its own PPO training),
so that the machine's load mostly cancels.

Usage::

    python benchmarks/services_speed.py [--n-users 100000] [--n-services 100] [--dim 2]
        [--rl-steps 2048]
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from _args import parse_args
from threadpoolctl import threadpool_limits

import osfb_gym  # noqa: F401
from agents.services import AcQUIre
from osfb_gym.runner import run_episode

TARGET_SECONDS = 0.003  # issue 18: <= 3 ms per acquisition step


@dataclass
class Args:
    """Command-line arguments."""

    n_users: int = 100_000
    """Users ``n``."""
    n_services: int = 100
    """Services ``k``: steps per episode."""
    dim: int = 2
    """Preference dimension ``d``."""
    losses: str = "squared,mahalanobis,huber,cosine"
    """Comma-separated loss families to measure."""
    repeats: int = 3
    """Episodes per measurement; the fastest is reported."""
    seed: int = 0
    """Reset seed."""
    restarts: int = 10
    """Restarts of the reference solver (the env's default)."""
    parts: int = 0
    """1: also time the parts of a step inside ``run_episode`` (loss kernel, best-service
    update, group averages, the rest of the env's step, AcQUIre's act and update, the
    metrics), per family."""
    rl_steps: int = 2048
    """PPO training steps of the in-training breakdown (0: skip it)."""
    out: str | None = None
    """Write the measurements as JSON here."""


def env_alone(env: gym.Env, seed: int) -> tuple[int, float]:
    """Step the env through one episode in a seeded random order: (steps, seconds)."""
    env.reset(seed=seed)
    order = np.random.default_rng(seed).permutation(env.action_space.n)  # type: ignore[attr-defined]
    start = time.process_time()
    steps, done = 0, False
    while not done:
        _, _, done, _, _ = env.step(int(order[steps]))
        steps += 1
    return steps, time.process_time() - start


def agent_alone(env: gym.Env, seed: int) -> tuple[int, float]:
    """AcQUIre's own time (act + update) over one episode, env excluded."""
    agent = AcQUIre()
    obs, info = env.reset(seed=seed)
    agent.reset(env.observation_space, env.action_space, seed=seed, feedback=info["feedback"])
    seconds, steps, done = 0.0, 0, False
    while not done:
        start = time.process_time()
        action = agent.act(obs)
        seconds += time.process_time() - start
        next_obs, reward, done, _, info = env.step(action)
        start = time.process_time()
        agent.update(obs, action, float(reward), info["feedback"])
        seconds += time.process_time() - start
        obs, steps = next_obs, steps + 1
    return steps, seconds


def full_episode(env: gym.Env, seed: int) -> tuple[int, float]:
    """AcQUIre through ``run_episode``, reset excluded: (steps, seconds)."""
    start = time.process_time()
    env.reset(seed=seed)
    reset_seconds = time.process_time() - start
    start = time.process_time()
    trajectory = run_episode(env, AcQUIre(), seed)
    # run_episode resets too; take that reset's time out again
    return len(trajectory.rewards), time.process_time() - start - reset_seconds


def best_seconds_per_step(measure: Any, env: gym.Env, seed: int, repeats: int) -> float:
    """Run ``measure(env, seed)`` ``repeats`` times and return the fastest seconds per step."""
    runs = (measure(env, seed) for _ in range(repeats))
    return min(seconds / steps for steps, seconds in runs)


def reference_ratios(args: Args) -> dict[str, float]:
    """Episode CPU time with the reference, as ratios to one that asks for none (squared)."""
    kwargs: dict[str, Any] = {
        "n_users": args.n_users,
        "n_services": args.n_services,
        "dim": args.dim,
        "world_seed": args.seed,
    }
    plain = gym.make("MultiServiceChoice-v0", reference_restarts=0, **kwargs)
    base = best_seconds_per_step(full_episode, plain, args.seed, args.repeats)
    default = gym.make("MultiServiceChoice-v0", **kwargs)  # reference_restarts=10, no metric
    stepped = best_seconds_per_step(env_alone, default, args.seed, args.repeats)
    alone = best_seconds_per_step(env_alone, plain, args.seed, args.repeats)
    asked = gym.make("MultiServiceChoice-v0", reference_restarts=args.restarts, **kwargs)
    first = full_episode(asked, args.seed)
    again = full_episode(asked, args.seed + 1)  # same fixed world: the solve is cached
    return {
        "env_without_metric_ratio": stepped / alone,
        "episode_first_solve_ratio": first[1] / first[0] / base,
        "episode_same_world_ratio": again[1] / again[0] / base,
        "episode_no_reference_step_seconds": base,
    }


def kernel_ratios(args: Args, loss: str, services: int = 30) -> dict[str, Any]:
    """The loss kernel at one step against the reference (best of 3): seconds and equality.

    ``fast`` is the world's own kernel (``loss_at``: compiled where the
    compiled loops are on); ``numpy`` the NumPy kernel (absent on code
    before ``osfb_gym.envs.services._fast.kernels``).
    """
    env = gym.make(
        "MultiServiceChoice-v0",
        n_users=args.n_users,
        n_services=args.n_services,
        dim=args.dim,
        loss=loss,
        reference_restarts=0,
    )
    env.reset(seed=args.seed)
    world = env.unwrapped._world  # type: ignore[attr-defined]
    order = np.random.default_rng(args.seed).permutation(world.n)[:services]
    thetas = world.preferences[order]
    candidates = {"fast": world.loss_at, "reference": world.loss_at_reference}
    try:
        from osfb_gym.envs.services._fast.kernels import numpy_kernel
    except ImportError:
        pass
    else:
        kernel = numpy_kernel(world)
        candidates["numpy"] = lambda theta: kernel(world, theta)
    best: dict[str, Any] = {}
    for _ in range(3):
        for name, function in candidates.items():
            start = time.process_time()
            for theta in thetas:
                function(theta)
            seconds = (time.process_time() - start) / services
            best[name] = min(best.get(name, seconds), seconds)
    best["equal"] = all(
        function(t).tobytes() == world.loss_at_reference(t).tobytes()
        for t in thetas
        for function in candidates.values()
    )
    return best


def compiled_loops_on(n_users: int) -> bool | None:
    """Whether the services' compiled loops run at ``n_users`` (None: code without them)."""
    try:
        from osfb_gym.envs.services._fast.kernels import compiled_loops
    except ImportError:
        return None
    return compiled_loops(n_users) is not None


def step_parts(args: Args, loss: str) -> dict[str, float]:
    """CPU seconds per step of each part of a step inside ``run_episode`` (fastest episode).

    The parts' methods are wrapped in CPU-time counters for the measurement
    and restored after; a part the code does not have (code before
    ``kernels.update_best``) is left out. The world is fixed
    (``world_seed``), so the episode's reset draws none.
    """
    import importlib

    from agents.services.base import ServiceAgent
    from osfb_gym.envs.services.env import MultiServiceChoiceEnv
    from osfb_gym.envs.services.metrics import ServiceMetrics
    from osfb_gym.envs.services.world import GroupAverages, Population

    env_module = importlib.import_module("osfb_gym.envs.services.env")
    # the env's step calls update_best through kernels.settle (NumPy's path) since the
    # step became one compiled call (which computes the squared loss itself: no loss_at)
    kernels_module = importlib.import_module("osfb_gym.envs.services._fast.kernels")
    owner = kernels_module if hasattr(kernels_module, "settle") else env_module
    targets = [
        (Population, "loss_at", "loss kernel"),
        (owner, "update_best", "best-service update"),
        (GroupAverages, "__call__", "group averages"),
        (MultiServiceChoiceEnv, "_step", "env step"),
        (ServiceAgent, "act", "AcQUIre act"),
        (ServiceAgent, "update", "AcQUIre update"),
        (ServiceMetrics, "update", "metrics"),
    ]
    seconds: dict[str, float] = {}
    saved = []
    for owner, name, label in targets:
        if not hasattr(owner, name):
            continue
        inner = getattr(owner, name)
        saved.append((owner, name, inner))

        def timed(*a: Any, _inner: Any = inner, _label: str = label, **k: Any) -> Any:
            started = time.process_time()
            result = _inner(*a, **k)
            seconds[_label] = seconds.get(_label, 0.0) + time.process_time() - started
            return result

        setattr(owner, name, timed)
    env = gym.make(
        "MultiServiceChoice-v0",
        n_users=args.n_users,
        n_services=args.n_services,
        dim=args.dim,
        loss=loss,
        reference_restarts=0,
        world_seed=args.seed,
    )
    best: dict[str, float] = {}
    try:
        run_episode(env, AcQUIre(), args.seed)  # the world drawn, the constants computed
        for _ in range(args.repeats):
            seconds.clear()
            started = time.process_time()
            steps = len(run_episode(env, AcQUIre(), args.seed).rewards)
            seconds["run_episode"] = time.process_time() - started
            if not best or seconds["run_episode"] < best["run_episode"] * steps:
                best = {key: value / steps for key, value in seconds.items()}
    finally:
        for owner, name, inner in saved:
            setattr(owner, name, inner)
    # the env's step includes the kernel, the update and the group averages: its rest
    rest = best["env step"] - sum(
        best.get(key, 0.0) for key in ("loss kernel", "best-service update", "group averages")
    )
    best["rest of the env step"] = rest
    return best


class LayerTimer:
    """An SB3 callback timing ``step`` and ``reset`` of every layer of the training env."""

    def __init__(self) -> None:
        from stable_baselines3.common.callbacks import BaseCallback

        timer = self

        class Callback(BaseCallback):
            def _on_training_start(self) -> None:
                venv: Any = self.training_env
                while not hasattr(venv, "envs"):
                    venv = venv.venv
                env, depth = venv.envs[0], 0
                while True:
                    # the view steps the raw env by step_without_oracle (or step_encoded,
                    # which also writes the view's vector) once the layers below it are
                    # spent (under HideOracle): timed as the env's step
                    for method in ("step", "reset", "step_without_oracle", "step_encoded"):
                        if hasattr(env, method):
                            key = f"{depth}:{type(env).__name__}.{method}"
                            key = key.replace("_without_oracle", "").replace("_encoded", "")
                            timer.wrap(env, method, key)
                    if not hasattr(env, "env"):
                        break
                    env, depth = env.env, depth + 1

            def _on_step(self) -> bool:
                return True

        self.callback = Callback()
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, env: Any, method: str, key: str) -> None:
        """Count the CPU time and calls of ``env.method`` under ``key``."""
        inner = getattr(env, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            result = inner(*args, **kwargs)
            self.seconds[key] = self.seconds.get(key, 0.0) + time.process_time() - started
            self.calls[key] = self.calls.get(key, 0) + 1
            return result

        setattr(env, method, timed)

    def layer(self, name: str, method: str) -> float:
        """Seconds of the outermost layer called ``name`` (class name), or of the env."""
        for key, seconds in sorted(self.seconds.items()):
            if key.split(":", 1)[1] == f"{name}.{method}":
                return seconds
        raise KeyError(name)


#: the parts of a training step ``in_training`` tells apart, in print order
PARTS = ("env step", "env reset", "view and the layers below it", "Monitor")


def in_training(steps: int, seed: int = 0) -> dict[str, float]:
    """PPO on the default env and on CartPole: CPU per training step of each layer."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    from osfb_gym.bench.rl import train

    torch.set_num_threads(1)
    results: dict[str, float] = {}
    cartpole = LayerTimer()
    started = time.process_time()
    model = PPO("MlpPolicy", make_vec_env("CartPole-v1", n_envs=1, seed=seed), seed=seed)
    model.learn(total_timesteps=steps, callback=cartpole.callback)
    cartpole_total = time.process_time() - started
    cartpole_env = cartpole.layer("Monitor", "step") + cartpole.layer("Monitor", "reset")
    services = LayerTimer()
    started = time.process_time()
    train(
        "MultiServiceChoice-v0",
        "PPO",
        total_timesteps=steps,
        seed=seed,
        torch_threads=1,
        callback=services.callback,
    )
    services_total = time.process_time() - started
    n = services.calls[next(k for k in services.calls if k.endswith("Monitor.step"))]
    env = "MultiServiceChoiceEnv"
    outer = services.layer("Monitor", "step") + services.layer("Monitor", "reset")
    view = services.layer("VectorObservation", "step") + services.layer(
        "VectorObservation", "reset"
    )
    env_step, env_reset = services.layer(env, "step"), services.layer(env, "reset")
    # the view steps the layers below it only until Gymnasium's checkers are spent and the
    # unwrapped env directly after that (osfb_gym.wrappers.observations), so their share
    # is counted with the view's: all the view's time that is not the env's
    parts = dict(
        zip(PARTS, (env_step, env_reset, view - env_step - env_reset, outer - view), strict=True)
    )
    per_cartpole = cartpole_env / cartpole.calls["0:Monitor.step"]
    results["cartpole_us_per_step"] = 1e6 * per_cartpole
    results["cartpole_env_share"] = cartpole_env / cartpole_total
    results["services_us_per_step"] = 1e6 * outer / n
    results["services_cartpole_steps"] = outer / n / per_cartpole
    results["services_env_share"] = outer / services_total
    for name, seconds in parts.items():
        results[f"{name} us_per_step"] = 1e6 * seconds / n
        results[f"{name} cartpole_steps"] = seconds / n / per_cartpole
    return results


def main() -> None:
    """Measure on one core and print a summary."""
    args = parse_args(Args, __doc__.splitlines()[0])
    results: dict[str, Any] = {
        "n_users": args.n_users,
        "n_services": args.n_services,
        "dim": args.dim,
    }
    compiled = compiled_loops_on(args.n_users)
    results["compiled_loops"] = compiled
    print(
        f"n = {args.n_users:,} users, k = {args.n_services} services, d = {args.dim}, "
        f"one thread, CPU time; compiled loops: "
        f"{'n/a (code before them)' if compiled is None else 'on' if compiled else 'off'}"
    )
    with threadpool_limits(1):
        for loss in args.losses.split(","):
            env = gym.make(
                "MultiServiceChoice-v0",
                n_users=args.n_users,
                n_services=args.n_services,
                dim=args.dim,
                loss=loss,
                reference_restarts=0,
            )
            start = time.process_time()
            env.reset(seed=args.seed)
            reset = time.process_time() - start
            kernel = kernel_ratios(args, loss)
            reference, fast = kernel["reference"], kernel["fast"]
            numpy = f", NumPy {1000 * kernel['numpy']:5.2f} ms" if "numpy" in kernel else ""
            print(
                f"{loss:12s} loss kernel: reference {1000 * reference:5.2f} ms{numpy}, fast "
                f"{1000 * fast:5.2f} ms ({reference / fast:.1f}x), equal bit for bit: "
                f"{kernel['equal']}"
            )
            step = best_seconds_per_step(env_alone, env, args.seed, args.repeats)
            agent = best_seconds_per_step(agent_alone, env, args.seed, args.repeats)
            episode = best_seconds_per_step(full_episode, env, args.seed, args.repeats)
            results[loss] = {
                "kernel_seconds": {k: v for k, v in kernel.items() if k != "equal"},
                "kernel_equal": kernel["equal"],
                "reset_seconds": reset,
                "env_step_seconds": step,
                "acquire_act_update_seconds": agent,
                "run_episode_step_seconds": episode,
                "meets_target": episode <= TARGET_SECONDS,
            }
            print(
                f"{loss:12s} env step {1000 * step:6.1f} ms | AcQUIre act+update "
                f"{1000 * agent:5.1f} ms | run_episode step {1000 * episode:6.1f} ms "
                f"(target <= {1000 * TARGET_SECONDS:.0f} ms: "
                f"{'met' if episode <= TARGET_SECONDS else 'MISSED'}) | reset {reset:.2f} s"
            )
            if args.parts:
                parts = step_parts(args, loss)
                results[loss]["parts_seconds"] = parts
                order = (
                    "loss kernel",
                    "best-service update",
                    "group averages",
                    "rest of the env step",
                    "AcQUIre act",
                    "AcQUIre update",
                    "metrics",
                )
                print(
                    f"{loss:12s} parts of a step (ms, fastest episode): run_episode "
                    f"{1000 * parts['run_episode']:.2f} = "
                    + ", ".join(f"{key} {1000 * parts[key]:.2f}" for key in order if key in parts)
                    + " + the runner and wrappers"
                )
            env.close()
        if "squared" in args.losses.split(","):
            ratios = reference_ratios(args)
            results["reference"] = ratios
            print(
                f"reference (squared, {args.restarts} restarts), episode CPU time over one "
                f"without it: env stepped without metrics "
                f"{ratios['env_without_metric_ratio']:.2f}x | run_episode solving it "
                f"{ratios['episode_first_solve_ratio']:.1f}x | again on the same world "
                f"{ratios['episode_same_world_ratio']:.2f}x"
            )
    if args.rl_steps > 0:
        rl = in_training(args.rl_steps, args.seed)
        results["in_training"] = rl
        print(
            f"inside PPO training ({args.rl_steps} steps, default env: 500 users, k = 10): "
            f"CartPole {rl['cartpole_us_per_step']:.0f} us/step "
            f"({rl['cartpole_env_share']:.1%} of its training); services "
            f"{rl['services_us_per_step']:.0f} us/step = {rl['services_cartpole_steps']:.2f} "
            f"CartPole steps ({rl['services_env_share']:.1%} of its training), of which:"
        )
        for name in PARTS:
            print(
                f"  {name:30s} {rl[f'{name} us_per_step']:6.0f} us/step = "
                f"{rl[f'{name} cartpole_steps']:.2f} CartPole steps"
            )
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2, default=float))


if __name__ == "__main__":
    main()
