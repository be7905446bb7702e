"""The built-in suites by name, and how ``osfb-bench run NAME`` starts each one.

This module imports nothing heavy, so ``osfb-bench --help`` can name the
suites at once; a suite's module is imported when the suite runs. Every suite
takes the same options (:class:`RunOptions`); what only one suite has (a
paper's datasets, its grid of alphas) is a ``--set key=value`` setting,
checked here and named in the error when it is unknown or bad.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RunOptions:
    """What ``osfb-bench run`` passes to every suite (None: the suite's own value)."""

    seeds: int | None = None  #: run seeds 0..seeds-1
    horizon: int | None = None  #: truncate every episode to this many steps
    workers: int = 1
    executor: str = "local"
    address: str | None = None
    resume: bool = False  #: skip the cells already stored in the output folder
    progress: bool = True
    data_home: str | None = None  #: folder of the dataset files
    settings: dict[str, str] = field(default_factory=dict)  #: ``--set key=value`` (text)

    def seed_list(self) -> tuple[int, ...] | None:
        """Return ``0..seeds-1``, or None for the suite's own seeds."""
        return None if self.seeds is None else tuple(range(self.seeds))

    @property
    def engine(self) -> dict[str, Any]:
        """Return the options of :func:`osfb_gym.bench.run.run_cells`: where and how cells run."""
        return {"resume": self.resume, "executor": self.executor, "workers": self.workers,
                "address": self.address, "progress": self.progress}  # fmt: skip

    def setting(self, key: str, parse: Callable[[str], Any], expects: str) -> Any:
        """Return setting ``key`` parsed (None when not set); a bad value raises naming it."""
        text = self.settings.get(key)
        try:
            return None if text is None else parse(text)
        except ValueError:
            raise ValueError(f"--set {key}= {expects}, got {text!r}") from None


@dataclass(frozen=True)
class Suite:
    """A built-in suite: what ``list`` says about it, its settings and how it runs."""

    name: str
    summary: str
    settings: tuple[str, ...]
    run: Callable[[str, Path, RunOptions], str]


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _positive_int(text: str) -> int:
    if int(text) < 1:
        raise ValueError(text)
    return int(text)


def _int(options: RunOptions, key: str) -> int | None:
    return options.setting(key, _positive_int, "expects a positive integer")


def _list(options: RunOptions, key: str) -> list[str] | None:
    return options.setting(key, _names, "expects a comma-separated list")


def _alphas(text: str) -> tuple[float, ...]:
    low, high = (int(part) for part in text.split(":"))
    if low > high:
        raise ValueError(text)
    return tuple(2.0**k for k in range(low, high + 1))


def _gammas(text: str) -> tuple[float, ...]:
    values = tuple(float(part) for part in _names(text))
    if not values or min(values) <= 0:
        raise ValueError(text)
    return values


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(text)
    return text.lower() == "true"


def _written(files: list[Path]) -> str:
    return "\nwritten: " + ", ".join(str(path) for path in files)


def _quick(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.run import run_suite
    from osfb_gym.bench.suites.quick import get_suite

    suite = get_suite(name)
    horizon = None if options.horizon is None else {"horizon": options.horizon}
    budget = _int(options, "total_timesteps")
    result = run_suite(suite, out, seeds=options.seed_list(), env_overrides=horizon,
                       total_timesteps=budget, **options.engine)  # fmt: skip
    return f"\n{suite.description}\n\n{result.summary}"


def _jiang(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.jiang import JIANG_SUITES, run_jiang

    splits = _int(options, "splits")  # the paper's random splits are the seeds
    if splits is not None and options.seeds is not None:
        raise ValueError("give --seeds or --set splits=, not both (they are the same)")
    alphas = options.setting("alphas", _alphas, "must read LOW:HIGH (powers of 2), LOW <= HIGH")
    result = run_jiang(
        JIANG_SUITES[name], out, datasets=_list(options, "datasets"),
        seeds=options.seed_list() if splits is None else tuple(range(splits)), alphas=alphas,
        fit=options.settings.get("fit"), data_home=options.data_home, horizon=options.horizon,
        **options.engine,
    )  # fmt: skip
    return result.files[2].read_text() + _written(result.files)


def _sculley(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.sculley import run_sculley

    extra: dict[str, Any] = {"datasets": _list(options, "datasets")}
    if name == "sculley-reuters":
        full = options.setting("full_grid", _bool, "expects true or false")
        extra = {"datasets": _list(options, "topics"), "svm_seeds": _int(options, "svm_seeds"),
                 "full_grid": bool(full)}  # fmt: skip
    result = run_sculley(
        name, out, seeds=options.seed_list(), learners=_list(options, "learners"),
        data_home=options.data_home, horizon=options.horizon, **options.engine, **extra,
    )  # fmt: skip
    return result.report + _written(result.files)


def _shah(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.shah import SHAH_SUITES, run_shah

    engine = options.engine
    engine["n_jobs"] = engine.pop("workers")  # shah's name for it
    result = run_shah(
        SHAH_SUITES[name], out, datasets=_list(options, "datasets"), seeds=options.seed_list(),
        gammas=options.setting("gammas", _gammas, "must be positive numbers, e.g. 1,2,3"),
        horizon=options.horizon, data_home=options.data_home, **engine,
    )  # fmt: skip
    return result.report + _written(result.files)


def _bose(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.bose import BOSE_SUITES, run_bose

    result = run_bose(BOSE_SUITES[name], out, seeds=options.seed_list(),
                      data_home=options.data_home, max_services=options.horizon,
                      **options.engine)  # fmt: skip
    return result.report + _written(result.files)


def _rl(name: str, out: Path, options: RunOptions) -> str:
    from osfb_gym.bench.suites.rl_vs_principled import from_settings, run

    protocol = from_settings(options.settings, options.seeds, options.horizon)
    return run(out, protocol, **options.engine) + f"\nwritten: {out}"


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
