"""The ``osfb-bench`` command: ``run``, ``sweep``, ``train``, ``grade``, ``list``, ``table``.

A user error (an unknown suite or dataset, a bad flag value, a missing file)
is one line on stderr naming the flag or file, with exit code 2; anything
else is a bug: its traceback, then a line asking to report it. Nothing heavy
is imported before a command runs, so ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from osfb_gym import __version__
from osfb_gym.bench.driver import RunOptions, Suite, flags_of, settings_of
from osfb_gym.bench.suites import ALIASES, SUITES, get, run

#: held-out scoring seeds of ``train`` start here, far from the training envs' seeds
EVAL_SEED_OFFSET = 10_000
ALGORITHMS = ("PPO", "A2C", "DQN", "RecurrentPPO", "TRPO", "QRDQN")  # bench.rl.ALGORITHMS (tested)
VEC_ENVS = ("auto", "native", "dummy", "subproc")  # osfb_gym.bench.rl.VEC_ENVS (tested)


class _Defaults(argparse.HelpFormatter):
    """Show a flag's default when it has one worth saying (not None, False or empty)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default not in (None, False, [], argparse.SUPPRESS) and "default" not in text:
            text += " (default: %(default)s)"
        return text


class _SuiteHelp(argparse.Action):
    """``run --help``; after a suite's name, also its settings, defaults, types and cost."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, *_: Any) -> NoReturn:
        suite, text = getattr(namespace, "suite", None), ""
        if suite is not None:
            try:
                text = f"\n{help_text(get(suite))}"
            except ValueError as error:  # an unknown suite: the one-line error
                parser.error(str(error))
        parser.print_help()
        print(text, end="\n" if text else "")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line: a usage block would bury the error
        self.exit(2, f"{self.prog}: error: {message}\n")


def _positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _count(text: str) -> int:  # a seed or a number of episodes: an integer >= 0
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return int(text)


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key.strip(), value


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def _file(path: str) -> str:
    if not Path(path).is_file():
        found = "a folder" if Path(path).is_dir() else "no such file"
        raise argparse.ArgumentTypeError(f"{path}: {found}; give a file")
    return path


def _folder(path: str, exists: bool = False) -> str:  # a folder, or (not exists) one to create
    if (exists or Path(path).exists()) and not Path(path).is_dir():
        found = "a file" if Path(path).exists() else "not found"
        raise argparse.ArgumentTypeError(f"{path}: {found}; give a folder")
    return path


def _f(name: str, help: str, **kwargs: Any) -> tuple[str, dict[str, Any]]:  # a flag, its kwargs
    return name, {"help": help, **kwargs}


def _set_flag(help: str) -> tuple[str, dict[str, Any]]:
    """``--set KEY=VALUE``, repeatable, gathered in ``settings``."""
    return _f(
        "--set",
        help,
        dest="settings",
        type=_setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
    )


def help_text(suite: Suite) -> str:
    """Return what ``osfb-bench run NAME --help`` adds: the settings and the measured cost."""
    settings = settings_of(suite)
    lines = [f"{suite.name}: {suite.summary}", ""]
    if settings:
        lines.append("settings (--set KEY=VALUE; lists comma-separated):")
        width = max(len(key) for key in settings)
        for setting in settings.values():
            lines.append(f"  {setting.key:{width}s}  {setting.type} = {setting.text()}")
            if setting.help:
                lines.append(f"  {'':{width}s}    {setting.help}")
    else:
        lines.append("settings: none (--set takes no key)")
    flags = [
        f"--{key.replace('_', '-')}"
        + ("" if key == "data_home" else f" {default}" if default else " none (each env's own)")
        for key, default in flags_of(suite).items()
    ]
    taken = ", ".join(flags) or "none of --seeds, --horizon, --data-home"
    lines += ["", f"flags it takes (defaults): {taken}"]
    lines += ["", f"cost of the default run: {suite.cost}"]
    return "\n".join(lines)


def describe(suites: dict[str, Suite] = SUITES, aliases: dict[str, str] = ALIASES) -> str:
    """Return what ``osfb-bench list`` prints: suites, aliases, envs and their agents."""
    from envs_registry import ENVS
    from osfb_gym.bench.sweep import agents_for
    from osfb_gym.core.family import FAMILIES

    lines = ["suites (settings for --set in brackets; `osfb-bench run NAME --help` for more):"]
    for suite in suites.values():
        keys = ", ".join(settings_of(suite))
        lines.append(f"  {suite.name:18s} {suite.summary}" + (f" [{keys}]" if keys else ""))
    lines.append("aliases: " + ", ".join(f"{alias} -> {name}" for alias, name in aliases.items()))
    lines.append("environments (family: objective, direction):")
    for entry in ENVS:
        family = FAMILIES[entry.family]
        lines.append(
            f"  {entry.id:24s} {family.name}: {family.objective}, {family.direction} is better"
        )
    lines.append("agents by environment (RL algorithms are trained, then scored):")
    lines += [f"  {entry.id:24s} {', '.join(agents_for(entry.id))}" for entry in ENVS]
    return "\n".join(lines)


def _options(args: argparse.Namespace) -> RunOptions:
    """Return the options ``run`` and ``sweep`` share (a sweep has no horizon or settings)."""
    return RunOptions(
        seeds=args.seeds,
        horizon=getattr(args, "horizon", None),
        workers=args.workers,
        executor=args.executor,
        address=args.address,
        resume=args.resume,
        progress=not args.no_progress,
        data_home=getattr(args, "data_home", None),
        settings=dict(getattr(args, "settings", [])),
        chunk_size=args.chunk_size,
        dry_run=getattr(args, "dry_run", False),
    )


def _run(args: argparse.Namespace) -> str:
    out = args.out or f"osfb-results/{get(args.suite).name}"
    return str(run(args.suite, out, _options(args)))


def _leaderboard(args: argparse.Namespace) -> str:
    from osfb_gym.bench.suites.rl_vs_principled.scores import leaderboard_add

    return leaderboard_add(args.agent, args.budget, args.out, args.store, _options(args))


def _sweep(args: argparse.Namespace) -> str:
    import dataclasses

    from osfb_gym.bench.suites.family_page import run_sweep
    from osfb_gym.bench.sweep import load_spec

    spec, options = load_spec(args.spec), _options(args)
    if options.seeds is not None:
        spec = dataclasses.replace(spec, seeds=tuple(range(options.seeds)))
    out = args.out or f"osfb-results/{spec.name}"
    return str(run_sweep(spec, out, **options.engine))


def _table(args: argparse.Namespace) -> str:
    from osfb_gym.bench.suites.jiang import JIANG_SUITES, read_results, write_report

    frame = read_results(args.results)
    suite = JIANG_SUITES[args.suite]()
    return write_report(frame, suite, args.out, data_home=args.data_home).text


def _train(args: argparse.Namespace) -> str:
    import gymnasium as gym

    from agents.rl import SB3Agent
    from envs_registry import ENVS, RL_ENVS, register_all
    from osfb_gym.bench.rl import save, train
    from osfb_gym.core.validation import check_env_kwargs
    from osfb_gym.runner import evaluate
    from osfb_gym.wrappers import apply_view, rl_preset

    register_all()
    if args.env_id not in gym.registry:  # (Gymnasium's own message suggests MuJoCo ids)
        ids = ", ".join(entry.id for entry in (*ENVS, *RL_ENVS))
        raise ValueError(f"env_id {args.env_id!r} is not a registered id; osfb-gym's: {ids}")

    world = {} if args.world_seed is None else {"world_seed": args.world_seed}
    base, preset = rl_preset(args.env_id)  # an env whose world is not drawn from a seed has none
    check_env_kwargs(base, world, "--world-seed")
    check_env_kwargs(base, args.env_kwargs, "--env-kwargs")
    env_kwargs = args.env_kwargs | world
    model = train(
        args.env_id,
        args.algo,
        total_timesteps=args.total_timesteps,
        env_kwargs=env_kwargs,
        n_envs=args.n_envs,
        seed=args.seed,
        vec=args.vec,
        algo_kwargs=args.algo_kwargs,
        tensorboard_log=args.tensorboard,
        progress_bar=not args.no_progress,
        torch_threads=args.threads,
        normalize=args.normalize,
    )
    path = save(model, args.save, args.env_id, args.seed)
    text = f"trained {args.algo} on {args.env_id} for {model.num_timesteps:,} steps; saved {path}"
    if args.eval_seeds > 0:
        seeds = range(EVAL_SEED_OFFSET, EVAL_SEED_OFFSET + args.eval_seeds)
        # an RL-ready id hides the oracle the scores need: play its base id through its view
        env = gym.make(base, **env_kwargs)
        frame = evaluate(apply_view(env, preset["view"]) if preset else env, SB3Agent(model), seeds)
        summary = frame.drop(columns=["seed", "agent"]).agg(["mean", "std"]).T
        text += (
            f"\n\nscored on {args.eval_seeds} held-out episodes (seeds {seeds.start}..):\n"
            + summary.to_markdown(floatfmt=".4g")
        )
    return text


def _grade(args: argparse.Namespace) -> str | int:
    from osfb_gym.grade import Diagnosis, family_of, grade, write_gradescope

    cache: bool | str = args.cache if args.cache is not None else not args.no_cache
    try:
        report = grade(
            args.path,
            args.env,
            n_seeds=args.seeds,
            env_kwargs=args.env_kwargs,
            class_name=args.agent,
            time_limit=args.time_limit,
            seed=args.seed,
            out=None if args.no_plot else args.out,
            cache=cache,
        )
    except Diagnosis as diagnosis:  # the submission's fault, explained at length
        if args.gradescope is not None:
            references = tuple(spec.split(":")[1] for spec in family_of(args.env).reference_agents)
            write_gradescope(diagnosis, args.gradescope, references=references)
        print(diagnosis, file=sys.stderr)
        return 1
    if args.gradescope is not None:
        write_gradescope(report, args.gradescope)
    return str(report)


def _seed(text: str) -> int:
    """``--seed``'s integer, or with ``-`` the first line of standard input's.

    Every process can read a command line (``/proc/<pid>/cmdline``), the
    graded agent's too; standard input it cannot.
    """
    where = ""
    if text == "-":
        text, where = sys.stdin.readline().strip(), " on standard input"
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0{where}, got {text!r}")
    return int(text)


_N, _HOME = {"type": _positive_int}, {"type": lambda path: _folder(path, exists=True)}
_COMMON = [
    _f("--seeds", "seeds 0..N-1", **_N),
    _f("--out", "output directory (default osfb-results/NAME)", type=_folder),
    _f("--resume", "skip the cells already in --out", action="store_true"),
    _f("--workers", "processes / CPUs", default=1, **_N),
    _f("--executor", "where", default="local", choices=("local", "ray")),
    _f("--address", "Ray cluster address ('auto')"),
    _f("--no-progress", "hide the progress bars", action="store_true"),
    _f(
        "--chunk-size",
        "cells per task; a task's rows are stored when it ends, so smaller tasks keep a "
        "slow run's progress more often (default: about 8 tasks per worker, at most 256)",
        **_N,
    ),
]
#: each command: its help, its flags and what runs it
_COMMANDS: dict[str, tuple[str, list[tuple[str, dict[str, Any]]], Any]] = {
    "run": (
        "run a built-in suite",
        [
            _f("suite", "one of: " + ", ".join([*SUITES, *ALIASES]), metavar="SUITE"),
            _f("--horizon", "truncate episodes to T", **_N),
            _f("--data-home", "folder of the dataset files", **_HOME),
            _set_flag("a suite's setting (`osfb-bench run SUITE --help` lists them)"),
            *_COMMON,
            _f(
                "--dry-run",
                "say what --resume would run into --out, stage by stage, and about how long "
                "from the cells stored there; run and write nothing",
                action="store_true",
            ),
        ],
        _run,
    ),
    "leaderboard": (
        "run rl-vs-principled for your agent and append its rows to a leaderboard CSV",
        [
            _f("action", "what to do", choices=("add",)),
            _f("agent", "your agent as module:Class (an agents.base.Agent subclass)"),
            _f(
                "--budget",
                "env steps of experience (repeat for several)",
                action="append",
                required=True,
                **_N,
            ),
            _f("--out", "the leaderboard CSV", default="docs/results/rl-leaderboard.csv"),
            _f(
                "--store",
                "folder of the run's cells and report",
                type=_folder,
                default="osfb-results/rl-leaderboard",
            ),
            _f("--horizon", "truncate episodes to T", **_N),
            _set_flag("a setting of rl-vs-principled"),
            *[flag for flag in _COMMON if flag[0] != "--out"],
        ],
        _leaderboard,
    ),
    "sweep": (
        "run a TOML sweep spec (envs x agents x grids x seeds), resumable",
        [_f("spec", "a TOML sweep spec (examples/sweeps/)", type=_file), *_COMMON],
        _sweep,
    ),
    "train": (
        "train a stable-baselines3 agent, save and score it",
        [
            _f("env_id", "a registered id, e.g. OneSidedLending-v0"),
            _f("--algo", "algorithm", default="PPO", choices=ALGORITHMS),
            _f("--total-timesteps", "env steps", default=20_000, **_N),
            _f("--seed", "seed of the algorithm and envs", type=_count, default=0),
            _f("--n-envs", "parallel env copies", default=1, **_N),
            _f(
                "--vec",
                "how they run (auto: the native vector env where one covers the id, else dummy)",
                default="auto",
                choices=VEC_ENVS,
            ),
            _f("--env-kwargs", "env arguments as a JSON object", default="{}", type=_json_object),
            _f("--world-seed", "fix the world (default: resampled at every episode)", type=_count),
            _f("--algo-kwargs", "algorithm arguments as JSON", default="{}", type=_json_object),
            _f("--tensorboard", "folder for TensorBoard logs"),
            _f("--save", "folder for the model", default="osfb-results/models"),
            _f("--eval-seeds", "held-out episodes (0: none)", type=_count, default=10),
            _f("--threads", "torch threads", default=1, **_N),
            _f("--normalize", "SB3's VecNormalize", action="store_true"),
            _f("--no-progress", "hide the progress bar", action="store_true"),
        ],
        _train,
    ),
    "grade": (
        "grade a student's agent file on held-out seeds",
        [
            _f("path", "the .py file defining one agents.base.Agent subclass"),
            _f("--env", "a registered id, e.g. OneSidedLending-v0", required=True),
            _f("--agent", "the class to grade, if the file has several"),
            _f("--seeds", "held-out episodes", default=10, **_N),
            _f("--env-kwargs", "env arguments as JSON (default: the family's)", type=_json_object),
            _f("--time-limit", "seconds per episode", type=float, default=30.0),
            _f(
                "--seed",
                "reproduce a grading: draw the held-out seeds from this integer, or with '-' "
                "from standard input, where the agent cannot read it (default: fresh secret "
                "seeds, an official grading)",
                type=_seed,
            ),
            _f("--out", "folder for the plot", default="osfb-results/grade"),
            _f("--no-plot", "write no plot (saves importing matplotlib)", action="store_true"),
            _f("--gradescope", "also write Gradescope's results.json here", metavar="PATH"),
            _f(
                "--cache",
                "folder of the references' cached scores for --seed gradings (default: "
                "$OSFB_GRADE_CACHE or ~/.cache/osfb-gym/grade)",
                metavar="DIR",
            ),
            _f("--no-cache", "run the references even if cached", action="store_true"),
        ],
        _grade,
    ),
    "list": ("list suites, environments and agents", [], lambda args: describe(SUITES, ALIASES)),
    "table": (
        "rebuild a jiang-* table from results.csv files",
        [
            _f("suite", "suite name", choices=("jiang-linear", "jiang-logistic")),
            _f("results", "results.csv files written by runs", nargs="+", type=_file),
            _f("--out", "output directory", required=True, type=_folder),
            _f("--data-home", "folder of the dataset files", **_HOME),
        ],
        _table,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``osfb-bench``."""
    parser = _Parser(
        prog="osfb-bench",
        description="Benchmark agents under one-sided feedback.",
        epilog="An error is one line; OSFB_DEBUG=1 in the environment prints its traceback too.",
        formatter_class=_Defaults,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, (summary, flags, handler) in _COMMANDS.items():
        command = commands.add_parser(
            name, help=summary, formatter_class=_Defaults, add_help=name != "run"
        )
        if name == "run":  # SUITE --help adds the suite's settings and cost
            helps = "show this help; after SUITE, its settings, their defaults and its cost"
            command.add_argument("-h", "--help", action=_SuiteHelp, help=helps)
        command.set_defaults(handler=handler)
        for flag, kwargs in flags:
            command.add_argument(flag, **kwargs)
    return parser


def _user_errors() -> tuple[type[BaseException], ...]:
    from osfb_gym.core.optional import MissingExtraError  # an extra to install: one line

    errors = [ValueError, TypeError, OSError, MissingExtraError]
    if "gymnasium.error" in sys.modules:  # not imported: nothing can have raised it
        errors.append(sys.modules["gymnasium.error"].Error)
    return tuple(errors)


@contextlib.contextmanager
def _importing_from_the_current_folder() -> Iterator[None]:
    """Let ``module:Class`` name a module in the current folder, as ``python -m`` does.

    A console script's ``sys.path`` starts at its own folder, so ``leaderboard add
    my_agent:MyAgent`` beside ``my_agent.py`` could not import it. The folder goes last:
    a file there never shadows an installed package (a user's ``agents.py``). A process
    pool's workers inherit the path; Ray's import from the driver's folder themselves.
    It is taken away again after the command, for callers of :func:`main` in-process.
    """
    here = os.getcwd()
    added = "" not in sys.path and here not in sys.path
    if added:
        sys.path.append(here)
    try:
        yield
    finally:
        if added and here in sys.path:
            sys.path.remove(here)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``osfb-bench``; returns the exit code (2 for a user error, 1 for a bug)."""
    args = build_parser().parse_args(argv)
    try:
        with _importing_from_the_current_folder():
            result = args.handler(args)
    except KeyboardInterrupt:
        print("osfb-bench: interrupted", file=sys.stderr)
        return 130
    except _user_errors() as error:
        if isinstance(error, OSError) and error.filename is None and error.errno is not None:
            return _bug()  # an OS failure naming no file (a lost pipe) is not the user's
        if os.environ.get("OSFB_DEBUG"):  # is it really the input? the traceback says where
            traceback.print_exc()
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"osfb-bench {args.command}: error: {message}", file=sys.stderr)
        return 2
    except Exception:
        return _bug()
    if isinstance(result, int):
        return result
    print(result)
    return 0


def _bug() -> int:
    traceback.print_exc()
    error = sys.exc_info()[1]
    where = None if error is None else _users_frame(error)
    if where is not None:  # a user's agent (leaderboard, extra_agents, sweep) raised it
        print(
            f"osfb-bench: the error above was raised in your code ({where}), not in "
            "osfb-bench: the traceback shows the call that led there",
            file=sys.stderr,
        )
        return 1
    print(
        "osfb-bench: this is a bug in osfb-bench, not in your input; please report it to "
        "the osfb-gym issue tracker with the command and the traceback above",
        file=sys.stderr,
    )
    return 1


def _users_frame(error: BaseException) -> str | None:
    """Return ``file:line`` of the innermost frame of ``error`` outside osfb-gym and libraries.

    The innermost frame that is neither osfb-gym's packages (``osfb_gym``, ``agents``,
    ``envs_registry``), an installed library nor the standard library is the user's
    code: their agent or env. A worker process's frames come as text (the
    ``__cause__`` a process pool or :func:`osfb_gym.bench.executors.execute`'s Ray
    path attaches); they are read from it. None when the
    error arose in osfb-gym or a library.
    """
    import re
    import sysconfig

    import agents
    import envs_registry

    ours = [Path(str(module.__file__)).resolve().parent for module in (agents, envs_registry)]
    ours.append(Path(__file__).resolve().parent)
    paths = sysconfig.get_paths()
    libraries = {Path(paths[key]).resolve() for key in ("stdlib", "purelib", "platlib")}
    frames = [(f.f_code.co_filename, n) for f, n in traceback.walk_tb(error.__traceback__)]
    if error.__cause__ is not None and error.__cause__.__traceback__ is None:  # a worker's text
        text = str(error.__cause__)
        frames += [(f, int(n)) for f, n in re.findall(r'File "([^"]+)", line (\d+)', text)]
    found = None
    for name, line in frames:
        path = Path(name).resolve()
        if not path.is_file():  # <frozen ...>, <string>
            continue
        if not any(path.is_relative_to(folder) for folder in (*ours, *libraries)):
            found = f"{path}:{line}"
    return found


if __name__ == "__main__":
    sys.exit(main())
