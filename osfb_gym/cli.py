"""The ``osfb-bench`` command.

Examples
--------
``osfb-bench run quick`` runs the main job and prints its table;
``osfb-bench list`` shows the suites, env ids and agents.

A user error (an unknown suite or dataset, a bad flag value, a missing
file) is one line on stderr naming the flag or file, with exit code 2;
anything else is a bug: its traceback, then a line asking to report it.
Nothing heavy (pandas, scikit-learn, torch) is imported before a command
runs, so ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from osfb_gym import __version__
from osfb_gym.bench.catalog import ALIASES, SUITES, RunOptions

#: held-out scoring seeds of ``train`` start here, far from the training envs' seeds
EVAL_SEED_OFFSET = 10_000
ALGORITHMS = ("PPO", "A2C", "DQN", "RecurrentPPO")  # osfb_gym.bench.rl.ALGORITHMS (tested)


class UsageError(ValueError):
    """A user error found by the command itself (a flag's value, a file)."""


class _Defaults(argparse.HelpFormatter):
    """Show a flag's default when it has one worth saying (not None, False or empty)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default not in (None, False, [], argparse.SUPPRESS) and "default" not in text:
            text += " (default: %(default)s)"
        return text


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # one line: argparse's usage block would bury what was wrong
        self.exit(2, f"{self.prog}: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``osfb-bench``."""
    defaults = _Defaults
    parser = _Parser(prog="osfb-bench", description="Benchmark agents under one-sided feedback.",
                     formatter_class=defaults)  # fmt: skip
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    names = ", ".join([*SUITES, *ALIASES])
    run = commands.add_parser("run", help="run a built-in suite", formatter_class=defaults)
    run.add_argument("suite", metavar="SUITE", help=f"one of: {names}")
    run.add_argument("--seeds", type=_positive_int, default=None, help="seeds 0..N-1")
    run.add_argument("--horizon", type=_positive_int, default=None, help="truncate episodes to T")
    run.add_argument("--data-home", default=None, help="folder of the dataset files")
    run.add_argument(
        "--set",
        dest="settings",
        type=_setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a suite's own setting (see `osfb-bench list`)",
    )
    _add_common(run, "osfb-results/SUITE")
    sweep = commands.add_parser("sweep", help="run a TOML sweep spec (envs x agents x grids x "
                                "seeds), resumable", formatter_class=defaults)  # fmt: skip
    sweep.add_argument("spec", help="a TOML sweep spec, e.g. examples/sweeps/lending_alpha.toml")
    sweep.add_argument("--seeds", type=_positive_int, default=None, help="seeds 0..N-1")
    _add_common(sweep, "osfb-results/NAME")
    train = commands.add_parser("train", help="train a stable-baselines3 agent, save and score "
                                "it", formatter_class=defaults)  # fmt: skip
    train.add_argument("env_id", help="a registered id, e.g. OneSidedLending-v0")
    train.add_argument("--algo", default="PPO", choices=ALGORITHMS, help="algorithm")
    train.add_argument("--total-timesteps", type=_positive_int, default=20_000, help="env steps")
    train.add_argument("--seed", type=int, default=0, help="seed of the algorithm and envs")
    train.add_argument("--n-envs", type=_positive_int, default=1, help="parallel env copies")
    train.add_argument("--vec", default="dummy", choices=("dummy", "subproc"), help="how they run")
    train.add_argument("--env-kwargs", default="{}", help="env arguments as a JSON object")
    train.add_argument("--world-seed", type=int, default=None, help="fix the world (default: "
                       "resampled at every episode)")  # fmt: skip
    train.add_argument("--algo-kwargs", default="{}", help="algorithm arguments as JSON")
    train.add_argument("--tensorboard", default=None, help="folder for TensorBoard logs")
    train.add_argument("--save", default="osfb-results/models", help="folder for the model")
    train.add_argument("--eval-seeds", type=int, default=10, help="held-out episodes (0: none)")
    train.add_argument("--threads", type=_positive_int, default=1, help="torch threads")
    train.add_argument("--normalize", action="store_true", help="SB3's VecNormalize")
    train.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    grade = commands.add_parser("grade", help="grade a student's agent file on held-out seeds",
                                formatter_class=defaults)  # fmt: skip
    grade.add_argument("path", help="the .py file defining one agents.base.Agent subclass")
    grade.add_argument("--env", required=True, help="a registered id, e.g. OneSidedLending-v0")
    grade.add_argument("--agent", default=None, help="the class to grade, if the file has several")
    grade.add_argument("--seeds", type=_positive_int, default=10, help="held-out episodes")
    grade.add_argument("--env-kwargs", default=None, help="env arguments as JSON (default: the "
                       "family's)")  # fmt: skip
    grade.add_argument("--time-limit", type=float, default=30.0, help="seconds per episode")
    grade.add_argument("--out", default="osfb-results/grade", help="folder for the plot")
    commands.add_parser("list", help="list suites, environments and agents")
    table = commands.add_parser("table", help="rebuild a jiang-* table from results.csv files")
    table.add_argument("suite", choices=("jiang-linear", "jiang-logistic"), help="suite name")
    table.add_argument("results", nargs="+", help="results.csv files written by runs")
    table.add_argument("--out", required=True, help="output directory")
    table.add_argument("--data-home", default=None, help="folder of the dataset files")
    return parser


def _add_common(command: argparse.ArgumentParser, out: str) -> None:
    command.add_argument("--out", default=None, help=f"output directory (default {out})")
    command.add_argument("--resume", action="store_true", help="skip the cells already in --out")
    command.add_argument("--workers", type=_positive_int, default=1, help="processes / CPUs")
    command.add_argument("--executor", default="local", choices=("local", "ray"), help="where")
    command.add_argument("--address", default=None, help="Ray cluster address ('auto')")
    command.add_argument("--no-progress", action="store_true", help="hide the progress bars")


def _folder(path: str | None, flag: str, *, exists: bool = False) -> str | None:
    if path is not None and (Path(path).exists() or exists) and not Path(path).is_dir():
        what = "a file" if Path(path).exists() else "not found"
        raise UsageError(f"{flag} {path}: {what}; give a folder")
    return path


def _json_dict(text: str, flag: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{flag} must be a JSON object, got {text!r}: {error}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{flag} must be a JSON object, got {text!r}")
    return value


def _run(args: argparse.Namespace) -> int:
    from osfb_gym.bench.catalog import get, run

    suite = get(args.suite)
    options = RunOptions(
        seeds=args.seeds, horizon=args.horizon, workers=args.workers, executor=args.executor,
        address=args.address, resume=args.resume, progress=not args.no_progress,
        data_home=_folder(args.data_home, "--data-home", exists=True),
        settings=dict(args.settings),
    )  # fmt: skip
    out = _folder(args.out, "--out") or f"osfb-results/{suite.name}"
    print(run(args.suite, out, options))
    return 0


def _sweep(args: argparse.Namespace) -> int:
    import dataclasses

    from osfb_gym.bench.run import run_sweep
    from osfb_gym.bench.sweep import load_spec

    if not Path(args.spec).is_file():
        raise UsageError(f"spec {args.spec}: no such file")
    spec = load_spec(args.spec)
    if args.seeds is not None:
        spec = dataclasses.replace(spec, seeds=tuple(range(args.seeds)))
    result = run_sweep(
        spec, _folder(args.out, "--out") or f"osfb-results/{spec.name}", resume=args.resume,
        workers=args.workers, executor=args.executor, address=args.address,
        progress=not args.no_progress,
    )  # fmt: skip
    print(result.summary)
    return 0


def _list() -> int:
    from envs_registry import ENVS
    from osfb_gym.bench.sweep import agents_for
    from osfb_gym.core.family import FAMILIES

    print("suites (settings for --set in brackets):")
    for suite in SUITES.values():
        settings = f" [{', '.join(suite.settings)}]" if suite.settings else ""
        print(f"  {suite.name:16s} {suite.summary}{settings}")
    print("aliases: " + ", ".join(f"{alias} -> {name}" for alias, name in ALIASES.items()))
    print("environments (family: objective, direction):")
    for entry in ENVS:
        family = FAMILIES[entry.family]
        print(f"  {entry.id:24s} {family.name}: {family.objective}, {family.direction} is better")
    print("agents by environment (RL algorithms are trained, then scored):")
    for entry in ENVS:
        print(f"  {entry.id:24s} {', '.join(agents_for(entry.id))}")
    return 0


def _table(args: argparse.Namespace) -> int:
    import pandas as pd

    from osfb_gym.bench.suites.jiang import JIANG_SUITES, write_report

    for path in args.results:
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such file")
    frame = pd.concat([pd.read_csv(path) for path in args.results], ignore_index=True)
    out = _folder(args.out, "--out") or args.out  # required: never None
    report = write_report(frame, JIANG_SUITES[args.suite], out, data_home=args.data_home)
    print(report.files[2].read_text())
    return 0


def _train(args: argparse.Namespace) -> int:
    from agents.rl import SB3Agent
    from osfb_gym.bench.rl import model_path, normalizer_path, train
    from osfb_gym.runner import evaluate

    env_kwargs = _json_dict(args.env_kwargs, "--env-kwargs")
    if args.world_seed is not None:
        env_kwargs["world_seed"] = args.world_seed
    model = train(
        args.env_id, args.algo, total_timesteps=args.total_timesteps, env_kwargs=env_kwargs,
        n_envs=args.n_envs, seed=args.seed, vec=args.vec,
        algo_kwargs=_json_dict(args.algo_kwargs, "--algo-kwargs"),
        tensorboard_log=args.tensorboard, progress_bar=not args.no_progress,
        torch_threads=args.threads, normalize=args.normalize,
    )  # fmt: skip
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


def _grade(args: argparse.Namespace) -> int:
    from osfb_gym.grade import Diagnosis, grade

    env_kwargs = None if args.env_kwargs is None else _json_dict(args.env_kwargs, "--env-kwargs")
    try:
        report = grade(
            args.path, args.env, n_seeds=args.seeds, env_kwargs=env_kwargs, class_name=args.agent,
            time_limit=args.time_limit, out=args.out,
        )  # fmt: skip
    except Diagnosis as diagnosis:  # the submission's fault, explained at length
        print(diagnosis, file=sys.stderr)
        return 1
    print(report)
    return 0


def _user_errors() -> tuple[type[BaseException], ...]:
    from osfb_gym.core.optional import MissingExtraError  # an extra to install: one line

    errors: list[type[BaseException]] = [ValueError, TypeError, OSError, MissingExtraError]
    gymnasium = sys.modules.get("gymnasium.error")
    if gymnasium is not None:
        errors.append(gymnasium.Error)
    return tuple(errors)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``osfb-bench``; returns the exit code (2 for a user error, 1 for a bug)."""
    args = build_parser().parse_args(argv)
    commands = {"run": _run, "sweep": _sweep, "train": _train, "grade": _grade,
                "table": _table, "list": lambda _: _list()}  # fmt: skip
    try:
        return commands[args.command](args)
    except KeyboardInterrupt:
        print("osfb-bench: interrupted", file=sys.stderr)
        return 130
    except _user_errors() as error:
        if isinstance(error, OSError) and error.filename is None and error.errno is not None:
            return _bug()  # an OS failure naming no file (a lost pipe) is not the user's
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"osfb-bench {args.command}: error: {message}", file=sys.stderr)
        return 2
    except Exception:
        return _bug()


def _bug() -> int:
    traceback.print_exc()
    print(
        "osfb-bench: this is a bug in osfb-bench, not in your input; please report it to "
        "the osfb-gym issue tracker with the command and the traceback above",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
