"""The ``osfb-bench`` command.

Examples
--------
``osfb-bench run quick`` runs the main job and prints its table;
``osfb-bench list`` shows the suites, env ids and agents.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import pandas as pd

import osfb_gym  # noqa: F401  (registers the ids)
from envs_registry import ENVS
from osfb_gym.bench import ALIASES, SUITES, get_suite, run_suite
from osfb_gym.bench.dean import DEAN_SUITES, run_dean
from osfb_gym.bench.jiang import JIANG_SUITES, run_jiang, write_report
from osfb_gym.bench.rl import ALGORITHMS, VEC_ENVS, model_path, normalizer_path, train
from osfb_gym.bench.rl_vs_bandit import RL_DESCRIPTION, RL_SUITE, run_rl_vs_bandit
from osfb_gym.bench.sculley import SCULLEY_SUITES, run_sculley
from osfb_gym.bench.shah import SHAH_SUITES, run_shah
from osfb_gym.core.validation import check_int


def _positive_int(text: str) -> int:
    try:
        return check_int(int(text), "value", minimum=1)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from error


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``osfb-bench``."""
    parser = argparse.ArgumentParser(
        prog="osfb-bench", description="Benchmark agents under one-sided feedback."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a built-in suite")
    run.add_argument(
        "suite",
        choices=sorted(
            {**SUITES, **JIANG_SUITES, **SCULLEY_SUITES, **SHAH_SUITES, **DEAN_SUITES, RL_SUITE: 0}
            | ALIASES.keys()
        ),
        help="suite name",
    )
    run.add_argument("--out", default=None, help="output directory (default osfb-results/SUITE)")
    run.add_argument("--seeds", type=_positive_int, default=None, help="number of seeds")
    run.add_argument("--horizon", type=_positive_int, default=None, help="override T of every env")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    paper = run.add_argument_group("jiang-linear / jiang-logistic (and shah-reject)")
    paper.add_argument("--datasets", default=None, help="comma-separated dataset names")
    paper.add_argument("--data-home", default=None, help="folder of the dataset files")
    paper.add_argument(
        "--alphas", default=None, help="exponents k of the grid 2^k, LOW:HIGH (default -10:3)"
    )
    paper.add_argument("--jobs", type=int, default=1, help="worker processes (-1: all cores)")
    sculley = run.add_argument_group(
        "sculley-spam / sculley-reuters (also --datasets for spam, --data-home, --seeds)"
    )
    sculley.add_argument("--topics", default=None, help="comma-separated R8 topics (reuters)")
    sculley.add_argument(
        "--learners", default=None, help="comma-separated learners, e.g. svm,margin_perceptron"
    )
    sculley.add_argument(
        "--svm-seeds",
        type=_positive_int,
        default=None,
        help="reuters: how many of the seeds the Online SVM runs (default 2)",
    )
    sculley.add_argument(
        "--full-grid",
        action="store_true",
        help="reuters: the SVM's example weights over the paper's whole C_neg grid 0.001..128",
    )
    train = commands.add_parser(
        "train", help="train a stable-baselines3 agent on an env, save it and score it"
    )
    train.add_argument("env_id", help="a registered id, e.g. OneSidedLending-v0")
    train.add_argument("--algo", default="PPO", choices=ALGORITHMS, help="algorithm")
    train.add_argument(
        "--total-timesteps", type=_positive_int, default=20_000, help="env steps of training"
    )
    train.add_argument("--seed", type=int, default=0, help="seed of the algorithm and envs")
    train.add_argument("--n-envs", type=_positive_int, default=1, help="parallel env copies")
    train.add_argument("--vec", default="dummy", choices=VEC_ENVS, help="how the copies run")
    train.add_argument(
        "--env-kwargs", default="{}", help="env arguments as JSON, e.g. '{\"horizon\": 200}'"
    )
    train.add_argument(
        "--world-seed",
        type=int,
        default=None,
        help="fix the world across episodes (the fixed-world regime); default: resampled",
    )
    train.add_argument(
        "--algo-kwargs", default="{}", help="algorithm arguments as JSON, e.g. '{\"n_steps\": 256}'"
    )
    train.add_argument("--tensorboard", default=None, help="folder for TensorBoard logs")
    train.add_argument("--save", default="osfb-results/models", help="folder for the model")
    train.add_argument(
        "--eval-seeds", type=int, default=10, help="held-out episodes to score it on (0: none)"
    )
    train.add_argument("--threads", type=_positive_int, default=1, help="torch threads")
    train.add_argument(
        "--normalize", action="store_true", help="normalise observations (SB3's VecNormalize)"
    )
    train.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    rl = run.add_argument_group("rl-vs-bandit (--seeds: held-out episodes per agent)")
    rl.add_argument(
        "--total-timesteps",
        type=_positive_int,
        default=None,
        help="training steps per RL agent (also quick's PPO)",
    )
    rl.add_argument("--families", default=None, help="comma-separated: lending,apple,reject")
    rl.add_argument("--regimes", default=None, help="comma-separated: fixed,resampled")
    rl.add_argument("--algos", default=None, help="comma-separated: PPO,RecurrentPPO,A2C,DQN")
    _add_executor_arguments(run.add_argument_group("quick: where the cells run"))
    sweep = commands.add_parser(
        "sweep", help="run a sweep spec (TOML): envs x agents x grids x seeds, resumable"
    )
    sweep.add_argument("spec", help="a TOML sweep spec, e.g. examples/sweeps/lending_alpha.toml")
    sweep.add_argument("--out", default=None, help="output directory (default osfb-results/NAME)")
    sweep.add_argument(
        "--seeds", type=_positive_int, default=None, help="run seeds 0..N-1 instead of the spec's"
    )
    sweep.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    _add_executor_arguments(sweep)
    commands.add_parser("list", help="list suites, environments and agents")
    table = commands.add_parser(
        "table", help="rebuild a jiang-* table from results.csv files (e.g. runs of grid parts)"
    )
    table.add_argument("suite", choices=sorted(JIANG_SUITES), help="suite name")
    table.add_argument("results", nargs="+", help="results.csv files written by runs")
    table.add_argument("--out", required=True, help="output directory")
    table.add_argument("--data-home", default=None, help="folder of the dataset files")
    _add_grade_parser(commands)
    return parser


def _add_grade_parser(commands: Any) -> None:
    grade = commands.add_parser(
        "grade",
        help="grade a student's agent file on held-out seeds beside the reference agents",
    )
    grade.add_argument("path", help="the .py file defining one agents.base.Agent subclass")
    grade.add_argument("--env", required=True, help="a registered id, e.g. OneSidedLending-v0")
    grade.add_argument("--agent", default=None, help="the class to grade, if the file has several")
    grade.add_argument("--seeds", type=_positive_int, default=10, help="held-out episodes")
    grade.add_argument(
        "--env-kwargs", default=None, help="env arguments as JSON (default: the family's)"
    )
    grade.add_argument(
        "--time-limit", type=float, default=30.0, help="seconds allowed per episode (and import)"
    )
    grade.add_argument("--out", default="osfb-results/grade", help="folder for the plot")


def _grade(args: argparse.Namespace) -> int:
    from osfb_gym.grade import Diagnosis, grade

    env_kwargs = None if args.env_kwargs is None else _json_dict(args.env_kwargs, "--env-kwargs")
    try:
        report = grade(
            args.path,
            args.env,
            n_seeds=args.seeds,
            env_kwargs=env_kwargs,
            class_name=args.agent,
            time_limit=args.time_limit,
            out=args.out,
        )
    except Diagnosis as diagnosis:
        print(diagnosis, file=sys.stderr)
        return 1
    except (ValueError, TypeError, gym.error.Error) as error:
        raise SystemExit(f"osfb-bench grade: {error}") from None
    print(report)
    return 0


def _add_executor_arguments(group: Any) -> None:
    group.add_argument(
        "--resume", action="store_true", help="skip the cells already finished in --out"
    )
    group.add_argument("--workers", type=_positive_int, default=1, help="worker processes/CPUs")
    group.add_argument(
        "--executor", default="local", choices=("local", "ray"), help="local processes or Ray"
    )
    group.add_argument(
        "--address", default=None, help="Ray cluster address ('auto': the running one)"
    )


def _executor_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "resume": args.resume,
        "workers": args.workers,
        "executor": args.executor,
        "address": args.address,
        "progress": not args.no_progress,
    }


def _sweep(args: argparse.Namespace) -> int:
    from osfb_gym.bench import load_spec, run_sweep

    try:
        spec = load_spec(args.spec)
        if args.seeds is not None:
            spec = dataclasses.replace(spec, seeds=tuple(range(args.seeds)))
        result = run_sweep(spec, args.out or f"osfb-results/{spec.name}", **_executor_options(args))
    except (OSError, ValueError) as error:
        raise SystemExit(f"osfb-bench sweep: {error}") from None
    print(result.summary)
    return 0


def _list_agents_by_env() -> None:
    from osfb_gym.bench.sweep import agents_for

    print("agents by environment (RL algorithms are trained, then scored):")
    for entry in ENVS:
        print(f"  {entry.id:24s} {', '.join(agents_for(entry.id))}")
    print("aliases: " + ", ".join(f"{alias} -> {name}" for alias, name in ALIASES.items()))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``osfb-bench``; returns the exit code."""
    args = build_parser().parse_args(argv)
    if args.command == "sweep":
        return _sweep(args)
    if args.command == "run":
        args.suite = ALIASES.get(args.suite, args.suite)
    if args.command == "list":
        print("suites:")
        descriptions = {name: suite.description for name, suite in SUITES.items()}
        descriptions.update({name: suite.description for name, suite in JIANG_SUITES.items()})
        descriptions.update({name: suite.description for name, suite in SCULLEY_SUITES.items()})
        descriptions.update({name: suite.description for name, suite in SHAH_SUITES.items()})
        descriptions[RL_SUITE] = RL_DESCRIPTION
        descriptions.update({name: suite.description for name, suite in DEAN_SUITES.items()})
        for name, description in descriptions.items():
            print(f"  {name:15s} {description}")
        print("environments:")
        for entry in ENVS:
            print(f"  {entry.id:24s} family={entry.family}")
        _list_agents_by_env()
        return 0

    if args.command == "train":
        return _train(args)
    if args.command == "grade":
        return _grade(args)
    if args.command == "table":
        frame = pd.concat([pd.read_csv(path) for path in args.results], ignore_index=True)
        report = write_report(frame, JIANG_SUITES[args.suite], args.out, data_home=args.data_home)
        print(report.files[2].read_text())
        return 0
    if args.suite in JIANG_SUITES:
        return _run_paper_suite(args)
    if args.suite in SCULLEY_SUITES:
        return _run_sculley_suite(args)
    if args.suite in SHAH_SUITES:
        return _run_shah_suite(args)
    if args.suite == RL_SUITE:
        return _run_rl_suite(args)
    if args.suite in DEAN_SUITES:
        return _run_dean_suite(args)
    return _run_quick(args)


def _run_quick(args: argparse.Namespace) -> int:
    suite = get_suite(args.suite)
    try:
        result = run_suite(
            suite,
            args.out or f"osfb-results/{suite.name}",
            seeds=None if args.seeds is None else tuple(range(args.seeds)),
            env_overrides=None if args.horizon is None else {"horizon": args.horizon},
            total_timesteps=args.total_timesteps,
            **_executor_options(args),
        )
    except ValueError as error:
        raise SystemExit(f"osfb-bench run {suite.name}: {error}") from None
    print(f"\n{suite.description}\n")
    print(result.summary)
    return 0


def _alpha_grid(text: str) -> tuple[float, ...]:
    try:
        low, high = (int(part) for part in text.split(":"))
    except ValueError:
        raise SystemExit(f"--alphas must read LOW:HIGH (exponents of 2), got {text!r}") from None
    if low > high:
        raise SystemExit(f"--alphas must have LOW <= HIGH, got {text!r}")
    return tuple(2.0**k for k in range(low, high + 1))


def _run_paper_suite(args: argparse.Namespace) -> int:
    suite = JIANG_SUITES[args.suite]
    result = run_jiang(
        suite,
        args.out or f"osfb-results/{suite.name}",
        datasets=None if args.datasets is None else args.datasets.split(","),
        seeds=None if args.seeds is None else tuple(range(args.seeds)),
        alphas=None if args.alphas is None else _alpha_grid(args.alphas),
        data_home=args.data_home,
        horizon=args.horizon,
        n_jobs=args.jobs,
        progress=not args.no_progress,
        resume=args.resume,
    )
    print(result.files[2].read_text())
    print("written: " + ", ".join(str(path) for path in result.files))
    return 0


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [name.strip() for name in text.split(",") if name.strip()]


def _run_sculley_suite(args: argparse.Namespace) -> int:
    options: dict[str, object] = {
        "seeds": None if args.seeds is None else tuple(range(args.seeds)),
        "learners": _names(args.learners),
        "data_home": args.data_home,
        "horizon": args.horizon,
        "progress": not args.no_progress,
        "resume": args.resume,
    }
    if args.suite == "sculley-spam":
        if args.topics is not None or args.svm_seeds is not None or args.full_grid:
            raise SystemExit("--topics, --svm-seeds and --full-grid apply to sculley-reuters")
        options["datasets"] = _names(args.datasets)
    else:
        if args.datasets is not None:
            raise SystemExit("sculley-reuters streams reuters_r8; choose topics with --topics")
        options.update(
            topics=_names(args.topics), svm_seeds=args.svm_seeds, full_grid=args.full_grid
        )
    try:
        result = run_sculley(args.suite, args.out or f"osfb-results/{args.suite}", **options)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    print(result.report)
    print("written: " + ", ".join(str(path) for path in result.files))
    return 0


#: held-out scoring seeds start here, far from the training envs' seeds
EVAL_SEED_OFFSET = 10_000


def _json_dict(text: str, flag: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise SystemExit(f"{flag} must be a JSON object, got {text!r}: {error}") from None
    if not isinstance(value, dict):
        raise SystemExit(f"{flag} must be a JSON object, got {text!r}")
    return value


def _train(args: argparse.Namespace) -> int:
    from agents.rl import SB3Agent
    from osfb_gym.runner import evaluate

    env_kwargs = _json_dict(args.env_kwargs, "--env-kwargs")
    if args.world_seed is not None:
        env_kwargs["world_seed"] = args.world_seed
    try:
        model = train(
            args.env_id,
            args.algo,
            total_timesteps=args.total_timesteps,
            env_kwargs=env_kwargs,
            n_envs=args.n_envs,
            seed=args.seed,
            vec=args.vec,
            algo_kwargs=_json_dict(args.algo_kwargs, "--algo-kwargs"),
            tensorboard_log=args.tensorboard,
            progress_bar=not args.no_progress,
            torch_threads=args.threads,
            normalize=args.normalize,
        )
    except (ValueError, TypeError, gym.error.Error) as error:
        raise SystemExit(f"osfb-bench train: {error}") from None
    path = model_path(args.save, args.algo, args.env_id, args.seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    if args.normalize:
        model.get_vec_normalize_env().save(str(normalizer_path(path)))
    print(f"trained {args.algo} on {args.env_id} for {model.num_timesteps:,} steps; saved {path}")
    if args.eval_seeds > 0:
        seeds = range(EVAL_SEED_OFFSET, EVAL_SEED_OFFSET + args.eval_seeds)
        frame = evaluate(args.env_id, SB3Agent(model), seeds, env_kwargs=env_kwargs)
        summary = frame.drop(columns=["seed", "agent"]).agg(["mean", "std"]).T
        print(f"\nscored on {args.eval_seeds} held-out episodes (seeds {seeds.start}..):")
        print(summary.to_markdown(floatfmt=".4g"))
    return 0


def _run_rl_suite(args: argparse.Namespace) -> int:
    options: dict[str, Any] = {"progress": not args.no_progress, "resume": args.resume}
    if args.total_timesteps is not None:
        options["total_timesteps"] = args.total_timesteps
    if args.seeds is not None:
        options["eval_seeds"] = args.seeds
    for name in ("families", "regimes", "algos"):
        if getattr(args, name) is not None:
            options[name] = _names(getattr(args, name))
    try:
        result = run_rl_vs_bandit(args.out or f"osfb-results/{RL_SUITE}", **options)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    print(result.report)
    print("written: " + ", ".join(str(path) for path in result.files))
    return 0


def _run_shah_suite(args: argparse.Namespace) -> int:
    suite = SHAH_SUITES[args.suite]
    try:
        result = run_shah(
            suite,
            args.out or f"osfb-results/{suite.name}",
            datasets=_names(args.datasets),
            seeds=None if args.seeds is None else tuple(range(args.seeds)),
            horizon=args.horizon,
            data_home=args.data_home,
            n_jobs=args.jobs,
            progress=not args.no_progress,
            resume=args.resume,
        )
    except ValueError as error:
        raise SystemExit(str(error)) from None
    print(result.report)
    print("written: " + ", ".join(str(path) for path in result.files))
    return 0


def _run_dean_suite(args: argparse.Namespace) -> int:
    """dean-services: --seeds, --data-home, --out; --horizon caps k (quick checks)."""
    result = run_dean(
        DEAN_SUITES[args.suite],
        args.out or f"osfb-results/{args.suite}",
        seeds=None if args.seeds is None else tuple(range(args.seeds)),
        data_home=args.data_home,
        max_services=args.horizon,
        progress=not args.no_progress,
        resume=args.resume,
    )
    print(result.report)
    print("written: " + ", ".join(str(path) for path in result.files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
