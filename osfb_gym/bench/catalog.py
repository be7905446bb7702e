"""The built-in suites by name, and how ``osfb-bench run NAME`` starts each one.

This module imports nothing heavy, so ``osfb-bench --help`` can name the
suites at once; a suite's module is imported when the suite runs or its help
is asked for. Every suite takes the same options (:class:`RunOptions`); what
only one suite has (a paper's datasets, its grid of alphas) is a ``--set
key=value`` setting: a field of the suite's frozen settings dataclass, whose
type says how its text is read (:func:`settings_of`), checked here and named
in the error when it is unknown or bad.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import typing
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
    """A built-in suite: what ``list`` says about it, its settings, run function and cost.

    ``settings`` is ``"module:Class"`` of a frozen dataclass whose fields (but
    ``seeds`` and ``horizon``, which are flags) are the ``--set`` keys, with
    their types and defaults (None: no settings). ``run`` is
    ``"module:function"`` (or the function):
    ``run(name, out, seeds=, horizon=, data_home=, **engine, **settings)``
    returns a :class:`~osfb_gym.bench.report.Report`. ``cost`` is the measured
    cost of the default run and where it was recorded.
    """

    name: str
    summary: str
    settings: str | None
    run: str | Callable[..., Any]
    cost: str = "not measured"


@dataclass(frozen=True)
class Setting:
    """One ``--set`` key of a suite: its type, default, how its text is read, what it is."""

    key: str
    type: str
    default: Any
    kind: str
    help: str = ""

    def text(self) -> str:
        """Return the default as ``--set key=`` would take it (lists comma-separated)."""
        value = self.default
        if self.kind == "alphas":  # powers of 2: LOW:HIGH
            return f"{round(math.log2(min(value)))}:{round(math.log2(max(value)))}"
        if isinstance(value, tuple | list):
            return ",".join(map(str, value))
        return str(value).lower() if isinstance(value, bool) else str(value)


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
_SUITES = "osfb_gym.bench.suites."
#: where the measured costs below were written down
_BENCH, _RESULTS = "docs/benchmark.md", "docs/results/"

SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (
        Suite(
            "quick",
            "every env family, its principled agents and PPO after equal experience (the main job)",
            f"{_SUITES}quick:Settings",
            f"{_SUITES}quick:run",
            "99 s of CPU with 1 worker; wall time follows the machine's load: 7 min 55 s on a "
            f"2-core VM at load average 7-9 ({_BENCH}, Speed, measured 2026-11-28)",
        ),
        Suite(
            "jiang-linear",
            "Jiang et al. 2021, Table 1 (linear link, real datasets)",
            f"{_SUITES}jiang:Settings",
            f"{_SUITES}jiang:run_jiang",
            "122 CPU minutes (91 + 31: two processes, the run stopped once and resumed) for "
            "the default 17,000 episodes with fit=paper; the legacy fit's took 37 CPU minutes, "
            f"19 min 27 s of wall time with --workers 2 ({_RESULTS}jiang-linear.md)",
        ),
        Suite(
            "jiang-logistic",
            "Jiang et al. 2021, Table 2 (logistic link, real datasets)",
            f"{_SUITES}jiang:Settings",
            f"{_SUITES}jiang:run_jiang",
            "fit=paper: 65 min of wall time for the first 7,140 episodes at load 10-27 (CPU "
            "not recorded), 10 min 52 s and 604 CPU s for the other 9,860; the legacy fit's "
            f"17,000: 19 min 40 s wall, 1,947 CPU s, --workers 2 ({_RESULTS}jiang-logistic.md)",
        ),
        Suite(
            "sculley-spam",
            "Sculley 2007, apple tasting on spam streams",
            f"{_SUITES}sculley:SpamSettings",
            f"{_SUITES}sculley:run_sculley",
            "1 h 53 min of wall time and 1,520 CPU s with --workers 2 at load average 17-23, "
            "a second command's 360 CPU s beside it, 150 earlier episodes reused from a store "
            f"({_RESULTS}sculley-spam.md, 2026-11-23)",
        ),
        Suite(
            "sculley-reuters",
            "Sculley 2007, minority topics of Reuters R8",
            f"{_SUITES}sculley:ReutersSettings",
            f"{_SUITES}sculley:run_sculley",
            f"41.0 min, one process, 2,808 episodes ({_RESULTS}sculley-reuters.md)",
        ),
        Suite(
            "shah-reject",
            "Shah and Manwani 2020, online reject option",
            f"{_SUITES}shah:Settings",
            f"{_SUITES}shah:run_shah",
            "phishing 39 min of wall time with --workers 2; guide's last invocation (resumed "
            "after a stop) 67.4 min with 1 worker at load average 10-25 (the datasets run "
            f"apart; {_RESULTS}shah-reject.md)",
        ),
        Suite(
            "bose-services",
            "Bose et al. (AcQUIre), multi-service user choice",
            None,
            f"{_SUITES}bose:run_bose",
            "38 min of wall time (17:47-18:25 UTC; 1 worker, resumed with --workers 2) on a "
            "2-core VM at load average 18-21, MovieLens 10M absent "
            f"({_RESULTS}bose-services.md, its header, 23 Nov 2026)",
        ),
        Suite(
            "rl-vs-principled",
            "does generic RL beat the principled agents? equal experience, "
            "tuned, 5 runs, bootstrap CIs",
            f"{_SUITES}rl_vs_principled:Protocol",
            f"{_SUITES}rl_vs_principled:run",
            "35 min of wall time, 70 worker-minutes, with --workers 2 on a 2-core shared VM "
            "(docs/reproductions/rl-vs-principled.md, Measured)",
        ),
        Suite(
            "liu-outcome-curves",
            "Liu et al. 2018, delayed impact: outcome curves and operating points on the FICO "
            "tables (exact, no episodes)",
            f"{_SUITES}liu:Settings",
            f"{_SUITES}liu:run",
            "9.7 s of wall time (2.8 s of CPU), one process, no episodes: an exact "
            f"computation on the tables ({_RESULTS}liu-outcome-curves.md, 28 Nov 2026)",
        ),
        Suite(
            "dynamic-lending",
            "D'Amour et al. 2020 (ml-fairness-gym's lending experiment): max-reward against "
            "equal-opportunity lenders over a long horizon",
            f"{_SUITES}dynamic_lending:Settings",
            f"{_SUITES}dynamic_lending:run",
            "11 min of wall time with --workers 2 on a 2-core VM at load average 7-8 (the "
            "cells' own timings add up to 1,283 s; FICO equal-opportunity cells 45 s each) "
            f"({_RESULTS}dynamic-lending.md, its header, 28 Nov 2026)",
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
    "liu": "liu-outcome-curves",
    "delayed-impact": "liu-outcome-curves",
    "fairness-gym-lending": "dynamic-lending",
}


#: what a field's type reads as: the key of :data:`KINDS`
_KIND_OF_TYPE = {
    tuple[str, ...]: "names",
    tuple[int, ...]: "counts",
    tuple[float, ...]: "floats",
    int: "count",
    bool: "bool",
    str: "text",
}
#: fields of a settings dataclass given by a flag of every suite, not by --set
_FLAGS = ("seeds", "horizon")


def _comments(cls: type) -> dict[str, str]:
    """Return each field's ``#:`` comment in ``cls``'s source (what Sphinx documents)."""
    try:
        lines = inspect.getsource(cls).splitlines()
    except (OSError, TypeError):  # pragma: no cover - no source (a frozen app)
        return {}
    found, comment = {}, []
    for line in lines:
        text = line.strip()
        if text.startswith("#:"):
            comment.append(text[2:].strip())
        elif (match := re.match(r"(\w+)\s*:", text)) and comment:
            found[match.group(1)] = " ".join(comment)
            comment = []
        else:
            comment = []
    return found


def settings_of(suite: Suite) -> dict[str, Setting]:
    """Return ``suite``'s ``--set`` settings, read from its settings dataclass.

    A field's kind comes from its type (``tuple[str, ...]`` reads a comma-separated
    list, ``int`` a positive integer, ...) or from its ``metadata["kind"]`` (e.g.
    ``"alphas"``: ``LOW:HIGH``, powers of 2); its help from its ``#:`` comment.
    """
    if not suite.settings:
        return {}
    from osfb_gym.core.family import load

    cls = load(suite.settings)
    hints, comments = typing.get_type_hints(cls), _comments(cls)
    found = {}
    for item in dataclasses.fields(cls):
        if item.name in _FLAGS:
            continue
        kind = item.metadata.get("kind") or _KIND_OF_TYPE.get(hints[item.name])
        if kind not in KINDS:
            raise TypeError(f"setting {item.name} of {suite.name}: no reader for {item.type}")
        found[item.name] = Setting(
            item.name, str(item.type), item.default, kind, comments.get(item.name, "")
        )
    return found


def help_text(name: str) -> str:
    """Return what ``osfb-bench run NAME --help`` adds: the settings and the measured cost."""
    suite = get(name)
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
    if suite.settings:  # the flags' defaults where the settings hold them
        from osfb_gym.core.family import load

        flags = [f for f in dataclasses.fields(load(suite.settings)) if f.name in _FLAGS]
        if flags:
            given = ", ".join(f"--{f.name} {f.default}" for f in flags)
            lines += ["", f"this suite's defaults of the flags: {given}"]
    lines += ["", f"cost of the default run: {suite.cost}"]
    return "\n".join(lines)


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
    known = settings_of(suite)
    unknown = sorted(set(options.settings) - set(known))
    if unknown:
        raise ValueError(
            f"--set {unknown[0]}: suite {suite.name} has no such setting; "
            f"its settings: {', '.join(known) or 'none'}"
        )
    settings = {key: options.setting(key, *KINDS[known[key].kind]) for key in options.settings}
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

    lines = ["suites (settings for --set in brackets; `osfb-bench run NAME --help` for more):"]
    for suite in SUITES.values():
        keys = ", ".join(settings_of(suite))
        lines.append(f"  {suite.name:16s} {suite.summary}" + (f" [{keys}]" if keys else ""))
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
