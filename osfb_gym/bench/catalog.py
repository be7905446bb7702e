"""The built-in suites by name, and how ``osfb-bench run NAME`` starts each one.

This module imports nothing heavy, so ``osfb-bench --help`` can name the
suites at once; a suite's module is imported when the suite runs. Every suite
takes the same options (:class:`RunOptions`); what only one suite has (a
paper's datasets, its grid of alphas) is a ``--set key=value`` setting,
checked here and named in the error when it is unknown or bad.
"""

from __future__ import annotations

import math
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
        return {
            "resume": self.resume,
            "executor": self.executor,
            "workers": self.workers,
            "address": self.address,
            "progress": self.progress,
        }

    def setting(self, key: str, parse: Callable[[str], Any], expects: str) -> Any:
        """Return setting ``key`` parsed (None when not set); a bad value raises naming it."""
        text = self.settings.get(key)
        try:
            return None if text is None else parse(text)
        except (ValueError, OverflowError):  # 'inf' as a count, 2.0**2000 as an alpha
            raise ValueError(f"--set {key}= {expects}, got {text!r}") from None


@dataclass(frozen=True)
class Suite:
    """A built-in suite: what ``list`` says about it, its settings and its run function.

    ``settings`` maps each ``--set`` key to how its text is read (a key of
    :data:`KINDS`). ``run`` is ``"module:function"`` (or the function):
    ``run(name, out, seeds=, horizon=, data_home=, **engine, **settings)``
    returns a :class:`~osfb_gym.bench.report.Report`.
    """

    name: str
    summary: str
    settings: dict[str, str]
    run: str | Callable[..., Any]


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _count(text: str) -> int:
    value = float(text)  # 1e4 reads as 10000
    if value < 1 or value != int(value):
        raise ValueError(text)
    return int(value)


#: the exponents an alphas grid may span: 2^-64 .. 2^64 is far past any useful bonus scale
ALPHA_EXPONENTS = 64


def _alphas(text: str) -> tuple[float, ...]:
    low, high = (int(part) for part in text.split(":"))
    if low > high or max(abs(low), abs(high)) > ALPHA_EXPONENTS:
        raise ValueError(text)
    return tuple(2.0**k for k in range(low, high + 1))


def _floats(text: str, positive: bool = False) -> tuple[float, ...]:
    values = tuple(float(part) for part in _names(text))
    if not values or not all(map(math.isfinite, values)) or (positive and min(values) <= 0):
        raise ValueError(text)
    return values


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(text)
    return text.lower() == "true"


#: how a setting's text is read, by kind: the parser and what a bad value's error says
KINDS: dict[str, tuple[Callable[[str], Any], str]] = {
    "names": (_names, "expects a comma-separated list"),
    "count": (_count, "expects a positive integer"),
    "counts": (
        lambda text: tuple(map(_count, _names(text))),
        "expects positive integers, comma-separated",
    ),
    "floats": (_floats, "expects numbers, comma-separated"),
    "gammas": (lambda text: _floats(text, positive=True), "must be positive numbers, e.g. 1,2,3"),
    "alphas": (_alphas, "must read LOW:HIGH (powers of 2), -64 <= LOW <= HIGH <= 64"),
    "bool": (_bool, "expects true or false"),
    "text": (str, ""),
}
_JIANG = {"datasets": "names", "alphas": "alphas", "splits": "count", "fit": "text"}
_RL = {
    "families": "names",
    "regimes": "names",
    "fixed_views": "names",
    "resampled_views": "names",
    "algos": "names",
    "budgets": "counts",
    "episodes": "count",
    "validation_seeds": "count",
    "n_steps": "counts",
    "ent_coef": "floats",
    "batch_size": "count",
}
_SUITES = "osfb_gym.bench.suites."

SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        Suite(
            "quick",
            "every env family, its principled agents and PPO (the main job)",
            {"total_timesteps": "count"},
            "osfb_gym.bench.suites.quick:run",
        ),
        Suite(
            "jiang-linear",
            "Jiang et al. 2021, Table 1 (linear link, real datasets)",
            _JIANG,
            f"{_SUITES}jiang:run_jiang",
        ),
        Suite(
            "jiang-logistic",
            "Jiang et al. 2021, Table 2 (logistic link, real datasets)",
            _JIANG,
            f"{_SUITES}jiang:run_jiang",
        ),
        Suite(
            "sculley-spam",
            "Sculley 2007, apple tasting on spam streams",
            {"datasets": "names", "learners": "names"},
            f"{_SUITES}sculley:run_sculley",
        ),
        Suite(
            "sculley-reuters",
            "Sculley 2007, minority topics of Reuters R8",
            {"topics": "names", "learners": "names", "svm_seeds": "count", "full_grid": "bool"},
            f"{_SUITES}sculley:run_sculley",
        ),
        Suite(
            "shah-reject",
            "Shah and Manwani 2020, online reject option",
            {"datasets": "names", "gammas": "gammas"},
            f"{_SUITES}shah:run_shah",
        ),
        Suite(
            "bose-services",
            "Bose et al. (AcQUIre), multi-service user choice",
            {},
            f"{_SUITES}bose:run_bose",
        ),
        Suite(
            "rl-vs-principled",
            "does generic RL beat the principled agents? equal experience, "
            "tuned, 5 runs, bootstrap CIs",
            _RL,
            f"{_SUITES}rl_vs_principled:run",
        ),
    )
}
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
    from osfb_gym.core.family import load

    suite = get(name)
    unknown = sorted(set(options.settings) - set(suite.settings))
    if unknown:
        raise ValueError(
            f"--set {unknown[0]}: suite {suite.name} has no such setting; "
            f"its settings: {', '.join(suite.settings) or 'none'}"
        )
    settings = {key: options.setting(key, *KINDS[suite.settings[key]]) for key in options.settings}
    function = load(suite.run) if isinstance(suite.run, str) else suite.run
    return str(
        function(
            suite.name,
            Path(out),
            seeds=options.seed_list(),
            horizon=options.horizon,
            data_home=options.data_home,
            **options.engine,
            **settings,
        )
    )


def describe() -> str:
    """Return what ``osfb-bench list`` prints: suites, aliases, envs and their agents."""
    from envs_registry import ENVS
    from osfb_gym.bench.sweep import agents_for
    from osfb_gym.core.family import FAMILIES

    lines = ["suites (settings for --set in brackets):"]
    lines += [
        f"  {suite.name:16s} {suite.summary}"
        + (f" [{', '.join(suite.settings)}]" if suite.settings else "")
        for suite in SUITES.values()
    ]
    lines.append("aliases: " + ", ".join(f"{alias} -> {name}" for alias, name in ALIASES.items()))
    lines.append("environments (family: objective, direction):")
    for entry in ENVS:
        family = FAMILIES[entry.family]
        lines.append(
            f"  {entry.id:24s} {family.name}: {family.objective}, {family.direction} is better"
        )
    lines.append("agents by environment (RL algorithms are trained, then scored):")
    lines += [f"  {entry.id:24s} {', '.join(agents_for(entry.id))}" for entry in ENVS]
    return "\n".join(lines)
