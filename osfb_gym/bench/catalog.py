"""The built-in suites by name, and how ``osfb-bench run NAME`` starts each one.

This module imports nothing heavy, so ``osfb-bench --help`` can name the
suites at once; a suite's module is imported when the suite runs.

Every suite takes the same options (:class:`RunOptions`); what only one
suite has (a paper's datasets, its grid of alphas) is a ``--set key=value``
setting, checked here and named in the error when it is unknown or bad.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RunOptions:
    """What ``osfb-bench run`` passes to every suite.

    Attributes
    ----------
    seeds
        Run seeds ``0..seeds-1`` (None: the suite's own).
    horizon
        Truncate every episode to this many steps (None: the suite's own).
    workers, executor, address
        Where the cells run.
    resume
        Skip the cells already stored in the output folder.
    progress
        Show progress bars.
    data_home
        Folder of the dataset files.
    settings
        The suite's own ``--set key=value`` settings (values as text).
    """

    seeds: int | None = None
    horizon: int | None = None
    workers: int = 1
    executor: str = "local"
    address: str | None = None
    resume: bool = False
    progress: bool = True
    data_home: str | None = None
    settings: dict[str, str] = field(default_factory=dict)

    def seed_list(self) -> tuple[int, ...] | None:
        """Return ``0..seeds-1``, or None for the suite's own seeds."""
        return None if self.seeds is None else tuple(range(self.seeds))


@dataclass(frozen=True)
class Suite:
    """A built-in suite: what ``list`` says about it, its settings and how it runs."""

    name: str
    summary: str
    settings: tuple[str, ...]
    run: Callable[[str, Path, RunOptions], str]


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _int(options: RunOptions, key: str) -> int | None:
    text = options.settings.get(key)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"--set {key}= expects an integer, got {text!r}") from None
    if value < 1:
        raise ValueError(f"--set {key}= expects a positive integer, got {text!r}")
    return value


def _list(options: RunOptions, key: str) -> list[str] | None:
    return None if key not in options.settings else _names(options.settings[key])


def _local_only(name: str, options: RunOptions) -> None:
    # the paper pipelines have their own loops; only sweeps reach Ray today
    if options.executor != "local":
        raise ValueError(f"--executor {options.executor}: suite {name} runs on local processes")


def _quick(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.run import run_suite
    from osfb_gym.bench.suites.quick import get_suite

    suite = get_suite(name)
    result = run_suite(
        suite, out, seeds=options.seed_list(),
        env_overrides=None if options.horizon is None else {"horizon": options.horizon},
        total_timesteps=_int(options, "total_timesteps"), resume=options.resume,
        workers=options.workers, executor=options.executor, address=options.address,
        progress=options.progress,
    )  # fmt: skip
    return f"\n{suite.description}\n\n{result.summary}"


def _alphas(text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        low, high = (int(part) for part in text.split(":"))
    except ValueError:
        raise ValueError(f"--set alphas= must read LOW:HIGH (powers of 2), got {text!r}") from None
    if low > high:
        raise ValueError(f"--set alphas= must have LOW <= HIGH, got {text!r}")
    return tuple(2.0**k for k in range(low, high + 1))


def _jiang(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.jiang import JIANG_SUITES, run_jiang

    splits = _int(options, "splits")  # the paper's random splits are the seeds
    if splits is not None and options.seeds is not None:
        raise ValueError("give --seeds or --set splits=, not both (they are the same)")
    result = run_jiang(
        JIANG_SUITES[name], out, datasets=_list(options, "datasets"),
        seeds=options.seed_list() if splits is None else tuple(range(splits)),
        alphas=_alphas(options.settings.get("alphas")), fit=options.settings.get("fit"),
        data_home=options.data_home,
        horizon=options.horizon, workers=options.workers, progress=options.progress,
        resume=options.resume, executor=options.executor, address=options.address,
    )  # fmt: skip
    return result.files[2].read_text() + _written(result.files)


def _written(files: list[Path]) -> str:
    return "\nwritten: " + ", ".join(str(path) for path in files)


def _sculley(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.sculley import run_sculley

    extra: dict[str, Any] = {}
    if name == "sculley-spam":
        extra["datasets"] = _list(options, "datasets")
    else:
        extra["datasets"] = _list(options, "topics")
        extra["svm_seeds"] = _int(options, "svm_seeds")
        full = options.settings.get("full_grid", "false").lower()
        if full not in ("true", "false"):
            raise ValueError(f"--set full_grid= expects true or false, got {full!r}")
        extra["full_grid"] = full == "true"
    result = run_sculley(
        name, out, seeds=options.seed_list(), learners=_list(options, "learners"),
        data_home=options.data_home, horizon=options.horizon, progress=options.progress,
        resume=options.resume, executor=options.executor, workers=options.workers,
        address=options.address, **extra,
    )  # fmt: skip
    return result.report + _written(result.files)


def _gammas(text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    bad = ValueError(f"--set gammas= must be positive numbers, e.g. 1,2,3; got {text!r}")
    try:
        values = tuple(float(part) for part in _names(text))
    except ValueError:
        raise bad from None
    if not values or min(values) <= 0:
        raise bad
    return values


def _shah(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.shah import SHAH_SUITES, run_shah

    result = run_shah(
        SHAH_SUITES[name], out, datasets=_list(options, "datasets"), seeds=options.seed_list(),
        gammas=_gammas(options.settings.get("gammas")),
        horizon=options.horizon, data_home=options.data_home, n_jobs=options.workers,
        progress=options.progress, resume=options.resume, executor=options.executor,
        address=options.address,
    )  # fmt: skip
    return result.report + _written(result.files)


def _bose(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.bose import BOSE_SUITES, run_bose

    result = run_bose(
        BOSE_SUITES[name], out, seeds=options.seed_list(),
        data_home=options.data_home, max_services=options.horizon, progress=options.progress,
        resume=options.resume, workers=options.workers, executor=options.executor,
        address=options.address,
    )  # fmt: skip
    return result.report + _written(result.files)


def _rl(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.rl_vs_principled import from_settings, run

    protocol = from_settings(options.settings, options.seeds, options.horizon)
    text = run(
        out, protocol, resume=options.resume, executor=options.executor,
        workers=options.workers, address=options.address, progress=options.progress,
    )  # fmt: skip
    return text + f"\nwritten: {out}"


#: rl-vs-principled's settings (the fields of its Protocol, lists comma-separated)
_RL_SETTINGS = (
    "families", "regimes", "fixed_views", "resampled_views", "algos", "budgets", "episodes",
    "validation_seeds", "n_steps", "ent_coef", "batch_size",
)  # fmt: skip

SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        Suite("quick", "every env family, its principled agents and PPO (the main job)",
              ("total_timesteps",), _quick),
        Suite("jiang-linear", "Jiang et al. 2021, Table 1 (linear link, real datasets)",
              ("datasets", "alphas", "splits", "fit"), _jiang),
        Suite("jiang-logistic", "Jiang et al. 2021, Table 2 (logistic link, real datasets)",
              ("datasets", "alphas", "splits", "fit"), _jiang),
        Suite("sculley-spam", "Sculley 2007, apple tasting on spam streams",
              ("datasets", "learners"), _sculley),
        Suite("sculley-reuters", "Sculley 2007, minority topics of Reuters R8",
              ("topics", "learners", "svm_seeds", "full_grid"), _sculley),
        Suite("shah-reject", "Shah and Manwani 2020, online reject option",
              ("datasets", "gammas"), _shah),
        Suite("bose-services", "Bose et al. (AcQUIre), multi-service user choice", (), _bose),
        Suite("rl-vs-principled", "does generic RL beat the principled agents? equal experience, "
              "tuned, 5 runs, bootstrap CIs", _RL_SETTINGS, _rl),
    )
}  # fmt: skip
#: other names of suites: the issues' names and the old name of bose-services
ALIASES: dict[str, str] = {
    "reject-option": "shah-reject",
    "acquire": "bose-services",
    "dean-services": "bose-services",
    "sculley-minority": "sculley-reuters",
    "rl-vs-bandit": "rl-vs-principled",
}


def get(name: str) -> Suite:
    """Return the suite called ``name`` (or an alias of it); else raise naming the choices."""
    suite = SUITES.get(ALIASES.get(name, name))
    if suite is None:
        raise ValueError(f"unknown suite {name!r}; choose one of {', '.join([*SUITES, *ALIASES])}")
    return suite


def run(name: str, out: str | Path, options: RunOptions) -> str:
    """Run suite ``name`` into ``out`` and return the text to print; settings checked first."""
    suite = get(name)
    unknown = sorted(set(options.settings) - set(suite.settings))
    if unknown:
        raise ValueError(
            f"--set {unknown[0]}: suite {suite.name} has no such setting; "
            f"its settings: {', '.join(suite.settings) or 'none'}"
        )
    return suite.run(suite.name, Path(out), options)


def describe() -> str:
    """Return what ``osfb-bench list`` prints: suites, aliases, envs and their agents."""
    from envs_registry import ENVS
    from osfb_gym.bench.sweep import agents_for
    from osfb_gym.core.family import FAMILIES

    lines = ["suites (settings for --set in brackets):"]
    lines += [f"  {suite.name:16s} {suite.summary}"
              + (f" [{', '.join(suite.settings)}]" if suite.settings else "")
              for suite in SUITES.values()]  # fmt: skip
    lines.append("aliases: " + ", ".join(f"{alias} -> {name}" for alias, name in ALIASES.items()))
    lines.append("environments (family: objective, direction):")
    for entry in ENVS:
        family = FAMILIES[entry.family]
        lines.append(f"  {entry.id:24s} {family.name}: {family.objective}, "
                     f"{family.direction} is better")  # fmt: skip
    lines.append("agents by environment (RL algorithms are trained, then scored):")
    lines += [f"  {entry.id:24s} {', '.join(agents_for(entry.id))}" for entry in ENVS]
    return "\n".join(lines)
