"""One driver for every suite: settings from the flags, data, stages, timing, notes, the page.

A suite is a module (a package under :mod:`osfb_gym.bench.suites`) holding

- a frozen settings dataclass: its fields are the ``--set`` keys, with their
  types and defaults (``seeds``, ``horizon`` and ``data_home``, when it has
  them, are set by the flags ``--seeds``, ``--horizon`` and ``--data-home``);
  ``seeds`` is always a number of runs: seeds ``0..seeds-1``. It may say which
  datasets it reads (``needs()``) and how it runs without some of them
  (``without(missing)``);
- ``stages(settings) -> list[Stage]``: the sweep stages, each a
  :class:`~osfb_gym.bench.sweep.SweepSpec` or a function of the rows of the
  stages before it (a stage that selects on the previous one's results);
- ``report(rows, settings, run) -> Report``: the stored rows of every stage
  (a list, in stage order) -> the page (``report.md``, written by
  :func:`~osfb_gym.bench.report.save_report`), tables and figures.

:func:`run` does the rest for all of them: reads the ``--set`` text by the
fields' types, checks the datasets, runs the stages with
:func:`~osfb_gym.bench.run.run_cells`, times them and writes ``run.json``
(the settings, cells run and resumed, seconds, what was missing) beside the
page. This module imports nothing heavy, so ``osfb-bench --help`` answers at once.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import math
import re
import time
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from osfb_gym.bench.sweep import SweepSpec

#: the fields of a settings dataclass given by a flag of ``osfb-bench run``, not by --set
FLAGS = ("seeds", "horizon", "data_home")
#: the most runs a suite takes (seeds 0..MAX_RUNS-1): more is a slip of the keyboard, not a plan
MAX_RUNS = 100_000
#: the file of a run's notes, beside its page
NOTES = "run.json"


class SuiteBug(RuntimeError):
    """A suite failed after some of its cells were stored: its bug, never the input's.

    The flags and settings were read and accepted, and cells ran; a
    ``ValueError`` from the report (or from a stage built on earlier rows)
    would read as a user's mistake to the CLI, which shows this one with its
    traceback as a bug instead. The stored cells stay: ``--resume`` reads
    them back once it is fixed.
    """


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
    chunk_size: int | None = None  #: cells per task (None: the stage's, else the engine's)
    dry_run: bool = False  #: say what ``--resume`` would run into the folder, run nothing

    @property
    def engine(self) -> dict[str, Any]:
        """Return the options of :func:`osfb_gym.bench.run.run_cells`: where and how cells run."""
        return {
            "resume": self.resume,
            "executor": self.executor,
            "workers": self.workers,
            "address": self.address,
            "progress": self.progress,
            "chunk_size": self.chunk_size,
        }


@dataclass(frozen=True)
class Suite:
    """A built-in suite: its name, what ``list`` says of it, its module, settings and cost.

    ``module`` holds ``stages`` and ``report``; ``settings`` names its settings
    dataclass there; ``cost`` is the measured cost of the default run and
    where it was recorded.
    """

    name: str
    summary: str
    module: str
    settings: str = "Settings"
    cost: str = "not measured"

    def load(self) -> ModuleType:
        """Import and return the suite's module."""
        return importlib.import_module(self.module)

    def settings_class(self) -> type:
        """Return the suite's settings dataclass."""
        return getattr(self.load(), self.settings)


@dataclass(frozen=True)
class Stage:
    """A sweep stage: a spec, or a function of the earlier stages' rows returning one.

    ``label`` names its progress bar; ``chunk_size`` is the engine's cells per
    task (None: the engine's default); ``work`` says how much work a cell is
    from its params (e.g. the env steps it trains), so that ``--dry-run``
    prices the cells to run by the stored cells' seconds per unit of it (None:
    every cell alike).
    """

    spec: SweepSpec | Callable[[list[pd.DataFrame]], SweepSpec]
    label: str | None = None
    chunk_size: int | None = None
    work: Callable[[dict[str, Any]], float] | None = None


@dataclass(frozen=True)
class RunInfo:
    """What the driver tells a report: the folder, what was missing, cells and seconds."""

    out: Path
    missing: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    cells: int = 0
    ran: int = 0
    where: str = "local x1"

    @property
    def minutes(self) -> float:
        """Return the stages' wall time in minutes."""
        return self.seconds / 60

    @property
    def took(self) -> str:
        """Return the stages' wall time as a page says it, naming the cells resumed, if any.

        >>> RunInfo(Path("."), seconds=6.0, cells=10, ran=0).took
        '0.1 min in this invocation, which ran 0 of the 10 cells (the others were resumed)'
        """
        text = f"{self.minutes:.1f} min"
        if self.ran < self.cells:
            text += (
                f" in this invocation, which ran {self.ran:,} of the {self.cells:,} cells (the "
                "others were resumed)"
            )
        return text


# ------------------------------------------------------------------- the --set keys
def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _count(text: str, minimum: int = 1) -> int:
    value = float(text)  # 1e4 reads as 10000
    if value < minimum or value != int(value):
        raise ValueError(text)
    return int(value)


def _floats(text: str, positive: bool = False, empty: bool = False) -> tuple[float, ...]:
    values = tuple(float(part) for part in _names(text))
    if not (values or empty) or not all(map(math.isfinite, values)):
        raise ValueError(text)
    if positive and values and min(values) <= 0:
        raise ValueError(text)
    return values


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(text)
    return text.lower() == "true"


#: the exponents an alphas grid may span: 2^-64 .. 2^64 is far past any useful bonus scale
ALPHA_EXPONENTS = 64


def _alphas(text: str) -> tuple[float, ...]:
    low, high = (int(part) for part in text.split(":"))
    if low > high or max(abs(low), abs(high)) > ALPHA_EXPONENTS:
        raise ValueError(text)
    return tuple(2.0**k for k in range(low, high + 1))


def _show_alphas(value: Sequence[float]) -> str:
    return f"{round(math.log2(min(value)))}:{round(math.log2(max(value)))}"


#: how a field's type reads its text, and what a bad value's error says
READERS: dict[Any, tuple[Callable[[str], Any], str]] = {
    tuple[str, ...]: (_names, "expects a comma-separated list"),
    tuple[int, ...]: (
        lambda t: tuple(map(_count, _names(t))),
        "expects positive integers, comma-separated",
    ),
    tuple[float, ...]: (_floats, "expects numbers, comma-separated"),
    int: (_count, "expects a positive integer"),
    bool: (_bool, "expects true or false"),
    str: (str, ""),
}
#: field metadata for a grid of powers of two given as ``LOW:HIGH``
POWERS_OF_TWO = {
    "read": _alphas,
    "expects": f"must read LOW:HIGH (powers of 2), -{ALPHA_EXPONENTS} <= LOW <= HIGH <= "
    f"{ALPHA_EXPONENTS}",
    "show": _show_alphas,
}
#: field metadata for positive numbers
POSITIVE = {
    "read": lambda text: _floats(text, positive=True),
    "expects": "must be positive numbers, e.g. 1,2,3",
}
#: field metadata for positive numbers or none (empty: the suite's default, e.g. each
#: algorithm's own learning rate)
POSITIVE_OR_NONE = {
    "read": lambda text: _floats(text, positive=True, empty=True),
    "expects": "must be positive numbers, comma-separated, or empty",
}
#: field metadata for a whole number that may be 0 (0: none, e.g. no cap)
COUNT_OR_ZERO = {
    "read": lambda text: _count(text, minimum=0),
    "expects": "must be a whole number, or 0 for none",
}


@dataclass(frozen=True)
class Setting:
    """One ``--set`` key of a suite: its type, default, reader and what it is."""

    key: str
    type: str
    default: Any
    read: Callable[[str], Any]
    expects: str
    help: str = ""
    show: Callable[[Any], str] | None = None

    def text(self) -> str:
        """Return the default as ``--set key=`` would take it (lists comma-separated)."""
        value = self.default
        if self.show is not None:
            return self.show(value)
        if isinstance(value, tuple | list):
            return ",".join(map(str, value))
        return str(value).lower() if isinstance(value, bool) else str(value)

    def parse(self, text: str) -> Any:
        """Return ``text`` read as this setting; a bad value raises naming the key."""
        try:
            return self.read(text)
        except (ValueError, OverflowError):  # 'inf' as a count, 2.0**2000 as an alpha
            raise ValueError(f"--set {self.key}= {self.expects}, got {text!r}") from None


def _comments(cls: type) -> dict[str, str]:
    """Return each field's ``#:`` comment in ``cls``'s source (what Sphinx documents)."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):  # a subclass's comments win
        try:
            lines = inspect.getsource(klass).splitlines()
        except (OSError, TypeError):  # pragma: no cover - no source (a frozen app)
            continue
        comment: list[str] = []
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

    A field's reader comes from its type (``tuple[str, ...]`` reads a comma-separated
    list, ``int`` a positive integer, ...) or from its metadata (``read``,
    ``expects``, ``show``: e.g. :data:`POWERS_OF_TWO`); its help from its ``#:`` comment.
    """
    cls = suite.settings_class()
    hints, comments = typing.get_type_hints(cls), _comments(cls)
    found = {}
    for item in dataclasses.fields(cls):
        if item.name in FLAGS or not item.metadata.get("set", True):
            continue
        read, expects = item.metadata.get("read"), item.metadata.get("expects", "")
        if read is None and hints[item.name] in READERS:
            read, expects = READERS[hints[item.name]]
        if read is None:
            raise TypeError(f"setting {item.name} of {suite.name}: no reader for {item.type}")
        found[item.name] = Setting(
            item.name,
            str(item.type),
            item.default,
            read,
            expects,
            comments.get(item.name, ""),
            item.metadata.get("show"),
        )
    return found


def flags_of(suite: Suite) -> dict[str, Any]:
    """Return the flags ``suite`` takes (of :data:`FLAGS`) and their defaults."""
    fields = dataclasses.fields(suite.settings_class())
    return {item.name: item.default for item in fields if item.name in FLAGS}


def settings_for(suite: Suite, options: RunOptions) -> Any:
    """Return ``suite``'s settings: the defaults, the ``--set`` text read, then the flags.

    An unknown key, a bad value or a flag the suite does not take raises naming it.
    """
    known, flags = settings_of(suite), flags_of(suite)
    unknown = sorted(set(options.settings) - set(known))
    if unknown:
        raise ValueError(
            f"--set {unknown[0]}: suite {suite.name} has no such setting; "
            f"its settings: {', '.join(known) or 'none'}"
        )
    given = {key: known[key].parse(text) for key, text in options.settings.items()}
    for flag in FLAGS:
        value = getattr(options, flag)
        if value is not None and flag not in flags:
            name = flag.replace("_", "-")
            raise ValueError(f"--{name} does not apply to {suite.name}: it takes no {flag}")
        if value is not None:
            given[flag] = value
    return suite.settings_class()(**given)


def check_data(suite: Suite, settings: Any) -> tuple[Any, dict[str, str]]:
    """Return ``settings`` narrowed to the datasets found, and why each other one was not.

    ``settings.needs()`` names the datasets (none: nothing to check);
    ``settings.without(missing)`` returns the settings without the missing ones,
    or None when nothing is left to run (no ``without``: every one is needed).
    Nothing to run raises the standard message, with the first reason.
    """
    needs = getattr(settings, "needs", None)
    if needs is None or not needs():
        return settings, {}
    from osfb_gym.data.registry import available_datasets

    _, missing = available_datasets(list(needs()), getattr(settings, "data_home", None))
    if not missing:
        return settings, {}
    without = getattr(settings, "without", None)
    narrowed = None if without is None else without(missing)
    if narrowed is None:
        raise FileNotFoundError(
            f"no dataset of {suite.name} was found: {', '.join(missing)}; pass data_home= "
            "(--data-home) or set OSFB_DATA (see osfb_gym.data.load). First reason: "
            + next(iter(missing.values()))
        )
    return narrowed, missing


def run_stages(
    stages: Sequence[Stage], out: Path, engine: dict[str, Any]
) -> tuple[list[Any], int, int]:
    """Run ``stages`` in order into ``out``; return each one's rows, cells in all, cells run."""
    from osfb_gym.bench.run import run_cells

    rows: list[Any] = []
    cells = ran = 0
    for stage in stages:
        if not callable(stage.spec):
            spec = stage.spec
        elif rows:  # built on the rows of the stages before: the input was accepted
            spec = _after_cells(stage.spec, rows, out, f"stage {stage.label or len(rows) + 1}")
        else:
            spec = stage.spec(rows)
        options = dict(engine)
        if stage.chunk_size is not None and options.get("chunk_size") is None:
            options["chunk_size"] = stage.chunk_size
        frame, n_run = run_cells(spec, out, label=stage.label, **options)
        rows.append(frame)
        cells, ran = cells + len(frame), ran + n_run
    return rows, cells, ran


def _after_cells(step: Callable[[list[Any]], Any], rows: list[Any], out: Path, what: str) -> Any:
    """Return ``step(rows)``; its plain error, once cells are stored, as a :class:`SuiteBug`."""
    try:
        return step(rows)
    except (ValueError, TypeError, KeyError, IndexError) as error:
        raise SuiteBug(
            f"the suite's {what} failed after its cells were stored in {out}: "
            f"{type(error).__name__}: {error}. This is a bug of the suite; the cells stay, "
            "and --resume reads them back once it is fixed"
        ) from error


def dry_run(suite: Suite, stages: Sequence[Stage], out: Path) -> str:
    """Return what ``--resume`` would run into ``out``, stage by stage, and its estimated time."""
    from osfb_gym.bench.run import plan

    lines = plan(stages, out)
    head = f"osfb-bench {suite.name}, a dry run: nothing runs; with --resume into {out}:"
    tail = (
        "worker-hours: each cell at the median wall time, per unit of the stage's work, of "
        "the stored cells of its setting and agent (else of its agent), so a first run has "
        "no estimate"
    )
    timed = any("worker-hours" in line for line in lines)
    return "\n".join([head, *(f"  {line}" for line in lines), *([tail] if timed else [])])


def run(suite: Suite, out: str | Path, options: RunOptions | None = None, **changes: Any) -> Any:
    """Run ``suite`` into ``out``: settings, data, stages, the report and ``run.json``.

    ``changes`` (Python values) replace fields of the suite's settings after
    ``options`` (the flags and the ``--set`` text) are applied. Return the
    suite's :class:`~osfb_gym.bench.report.Report`, its text ending with a line
    of what ran, how long, where; with ``options.dry_run``, only the text of
    :func:`dry_run`, writing and running nothing.
    """
    options = options or RunOptions()
    module, out = suite.load(), Path(out)
    chosen = settings_for(suite, options)
    if changes:
        chosen = dataclasses.replace(chosen, **changes)
    runs = getattr(chosen, "seeds", None)
    if isinstance(runs, int) and runs > MAX_RUNS:
        raise ValueError(f"seeds (--seeds) must be at most {MAX_RUNS:,} runs, got {runs:,}")
    settings: Any
    settings, missing = check_data(suite, chosen)
    if options.dry_run:
        return dry_run(suite, module.stages(settings), out)
    started = time.perf_counter()
    rows, cells, ran = run_stages(module.stages(settings), out, options.engine)
    seconds = time.perf_counter() - started
    where = f"{options.executor} x{options.workers}"
    info = RunInfo(out, missing, seconds, cells, ran, where)
    report = _after_cells(lambda rows: module.report(rows, settings, info), rows, out, "report")
    notes = {
        "suite": suite.name,
        "settings": dataclasses.asdict(settings),
        "cells": cells,
        "run_now": ran,
        "seconds": round(seconds, 3),
        "where": where,
        "missing": missing,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / NOTES).write_text(json.dumps(notes, indent=2, default=str) + "\n")
    from osfb_gym.bench.run import summary_line

    line = summary_line(suite.name, cells, ran, seconds, where)
    report.text = f"{report.text.rstrip()}\n\n{line}\n"
    report.files.append(out / NOTES)
    return report
