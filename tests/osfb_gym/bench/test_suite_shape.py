"""Every suite has one shape; the engine (bench outside suites/) names no env, family or agent."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from osfb_gym.bench.driver import FLAGS, RunInfo, Stage, flags_of, settings_of
from osfb_gym.bench.suites import SUITES
from osfb_gym.bench.sweep import SweepSpec

BENCH = Path(__file__).parents[3] / "osfb_gym" / "bench"


#: the replica code of executors.py, which the speed work moves behind the families' own
#: declaration of replica support (issue 33, item 2); delete this allowance when it lands
@pytest.mark.parametrize("name", list(SUITES))
def test_every_suite_is_a_package_with_settings_stages_and_report(name):
    suite = SUITES[name]
    module = suite.load()
    assert Path(module.__file__).name == "__init__.py", "a suite is a package"
    cls = suite.settings_class()
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    settings = cls()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seeds = 1  # type: ignore[misc]  # (liu has no seeds: still frozen)
    fields = {item.name: item for item in dataclasses.fields(cls)}
    if "seeds" in fields:  # one meaning everywhere: a number of runs, seeds 0..seeds-1
        assert fields["seeds"].type in ("int", int), name
    for setting in settings_of(suite).values():
        assert setting.help, f"{name}: --set {setting.key} has no #: comment"
        assert setting.parse(setting.text()) is not None
    assert set(flags_of(suite)) <= set(FLAGS)
    stages = module.stages(settings)
    assert isinstance(stages, list) and all(isinstance(stage, Stage) for stage in stages)
    for stage in stages:
        assert isinstance(stage.spec, SweepSpec) or callable(stage.spec)
    parameters = list(inspect.signature(module.report).parameters)
    assert len(parameters) == 3, f"{name}: report(rows, settings, run)"
    assert RunInfo.__dataclass_params__.frozen


def _forbidden() -> set[str]:
    """Every registered env id, family name and agent class name (but the RL seam's)."""
    from agents.base import all_agents
    from envs_registry import ENVS, RL_ENVS
    from osfb_gym.core.family import FAMILIES

    agents = {cls.__name__ for cls in all_agents()} - {"SB3Agent"}  # the engine's RL cells
    return {entry.id for entry in (*ENVS, *RL_ENVS)} | set(FAMILIES) | agents


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                found.add(id(body[0].value))
    return found


def _names(tree: ast.AST) -> list[tuple[int, str]]:
    """Return (line, word) for the code's strings, identifiers and imported modules."""
    skip = _docstrings(tree)
    words = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            words.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            words.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom) and node.module:
            words += [(node.lineno, part) for part in node.module.split(".")]
            words += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            words += [(node.lineno, p) for a in node.names for p in a.name.split(".")]
    return words


def test_the_engine_names_no_env_id_family_or_agent():
    forbidden = _forbidden()
    found = []
    for path in sorted(BENCH.glob("*.py")):
        for line, word in _names(ast.parse(path.read_text())):
            named = [name for name in forbidden if name == word or f"{name}-v" in word]
            found += [f"{path.name}:{line}: {name}" for name in named]
    assert not found, "the engine names " + ", ".join(found)


def test_the_name_check_finds_a_name():
    tree = ast.parse('"""OneSidedLending-v0 in a docstring is prose."""\nX = "OneSidedLending-v0"')
    assert [word for _, word in _names(tree)] == ["X", "OneSidedLending-v0"]
    assert "OneSidedLending-v0" in _forbidden() and "lending" in _forbidden()


@dataclasses.dataclass(frozen=True)
class _Reads:
    """Settings that read a dataset absent here and one bundled with scikit-learn."""

    data_home: str | None = None
    narrows: bool = True

    def needs(self) -> tuple[str, ...]:
        return ("german", "breast_cancer")

    def without(self, missing: dict[str, str]) -> _Reads | None:
        return dataclasses.replace(self, narrows=False) if self.narrows else None


def test_the_driver_narrows_the_settings_to_the_data_found_or_names_what_is_missing(tmp_path):
    from osfb_gym.bench.driver import Suite, check_data

    suite = Suite("fake", "", __name__)
    settings, missing = check_data(suite, _Reads(data_home=str(tmp_path)))
    assert list(missing) == ["german"] and settings == _Reads(str(tmp_path), narrows=False)
    with pytest.raises(FileNotFoundError, match="no dataset of fake was found: german"):
        check_data(suite, _Reads(data_home=str(tmp_path), narrows=False))


@dataclasses.dataclass(frozen=True)
class _Breaks:
    """Settings of a suite that fails after its cells ran, in a later stage or its report."""

    seeds: int = 2
    where: str = "report"  #: or "stage", or "nowhere"


def _breaks_module():
    from types import ModuleType

    from osfb_gym.bench.sweep import AgentSpec, EnvSpec

    module = ModuleType("breaks")
    env = EnvSpec("OneSidedLending-v0", "lending", {"horizon": 5})

    def stages(settings):
        seeds = tuple(range(settings.seeds))
        first = SweepSpec("breaks", (env,), (AgentSpec("Greedy"),), seeds=seeds)

        def second(rows):
            if settings.where == "stage":
                raise KeyError("a column the first stage never wrote")
            return first

        return [Stage(first), Stage(second, label="tests")]

    def report(rows, settings, run):
        from osfb_gym.bench.report import Report

        if settings.where == "report":
            raise ValueError("zip() argument 2 is shorter than argument 1")
        return Report("a page", [])

    module.Settings, module.stages, module.report = _Breaks, stages, report
    return module


@pytest.mark.parametrize("where", ["stage", "report"])
def test_a_failure_after_cells_are_stored_is_the_suites_bug_and_keeps_the_cells(
    tmp_path, monkeypatch, where
):
    """A ValueError from a report once cells ran read as the user's mistake: now a bug."""
    import sys

    from osfb_gym.bench.driver import RunOptions, Suite, SuiteBug, run

    monkeypatch.setitem(sys.modules, "breaks", _breaks_module())
    suite = Suite("breaks", "", "breaks")
    options = RunOptions(progress=False, settings={"where": where})
    failed = "stage tests" if where == "stage" else "report"
    with pytest.raises(SuiteBug, match=f"suite's {failed} failed after its cells") as caught:
        run(suite, tmp_path, options)
    assert isinstance(caught.value.__cause__, KeyError if where == "stage" else ValueError)
    assert "--resume reads them back" in str(caught.value)
    assert len(list((tmp_path / "cells").iterdir())) == 2


def test_the_cli_shows_a_suites_bug_as_a_bug_with_its_traceback(tmp_path, monkeypatch, capsys):
    import sys

    from osfb_gym.bench.driver import Suite
    from osfb_gym.bench.suites import SUITES
    from osfb_gym.cli import main

    monkeypatch.setitem(sys.modules, "breaks", _breaks_module())
    monkeypatch.setitem(SUITES, "breaks", Suite("breaks", "", "breaks"))
    argv = ["run", "breaks", "--out", str(tmp_path), "--no-progress"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "zip() argument 2 is shorter" in err
    assert "SuiteBug: the suite's report failed after its cells were stored" in err
    assert "this is a bug in osfb-bench, not in your input" in err


def test_a_dry_run_says_what_resume_would_run_and_writes_nothing(tmp_path, monkeypatch):
    import sys

    from osfb_gym.bench.driver import RunOptions, Suite, run

    monkeypatch.setitem(sys.modules, "breaks", _breaks_module())
    suite, out = Suite("breaks", "", "breaks"), tmp_path / "out"

    def dry(seeds: int) -> list[str]:
        options = RunOptions(progress=False, settings={"where": "nowhere"}, dry_run=True)
        text = run(suite, out, dataclasses.replace(options, seeds=seeds))
        assert text.startswith(
            f"osfb-bench breaks, a dry run: nothing runs; with --resume into {out}"
        )
        return text.splitlines()[1:3]

    assert dry(2) == [
        "  stage 1: 2 cells, 0 stored, 2 to run (no stored cell of their agents to time them by)",
        "  stage 2 (tests): chosen from the rows of the stages before it, once stored",
    ]
    assert not out.exists()  # nothing written, not even the store's folder
    run(suite, out, RunOptions(progress=False, seeds=2, settings={"where": "nowhere"}))
    assert dry(2) == ["  stage 1: 2 cells, all stored", "  stage 2 (tests): 2 cells, all stored"]
    first, second = dry(3)  # one run more: priced by the stored cells of its setting and agent
    assert first.startswith("  stage 1: 3 cells, 2 stored, 1 to run, about 0.0 worker-hours")
    assert second == "  stage 2 (tests): chosen from the rows of the stages before it, once stored"
    assert len(list((out / "cells").iterdir())) == 2


def test_the_cli_dry_run_prints_the_plan(tmp_path, monkeypatch, capsys):
    import sys

    from osfb_gym.bench.driver import Suite
    from osfb_gym.bench.suites import SUITES
    from osfb_gym.cli import main

    monkeypatch.setitem(sys.modules, "breaks", _breaks_module())
    monkeypatch.setitem(SUITES, "breaks", Suite("breaks", "", "breaks"))
    argv = ["run", "breaks", "--out", str(tmp_path / "out"), "--dry-run", "--seeds", "4"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "stage 1: 4 cells, 0 stored, 4 to run" in out and not (tmp_path / "out").exists()


def test_the_dry_run_prices_cells_by_their_work_and_plans_a_fixed_stage_after_an_open_one(
    tmp_path,
):
    from osfb_gym.bench.driver import Stage
    from osfb_gym.bench.run import plan
    from osfb_gym.bench.store import ResultStore
    from osfb_gym.bench.sweep import AgentSpec, EnvSpec

    env = EnvSpec("OneSidedLending-v0", "lending", {"horizon": 5})

    def spec(size: float, seeds: int, agent: str = "Greedy") -> SweepSpec:
        agents = (AgentSpec(agent, {"l2": size}),)  # l2 stands for a cell's work here
        return SweepSpec("work", (env,), agents, seeds=tuple(range(seeds)))

    stored = spec(100, 1).cells()[0]
    row = {"key": stored.key, "setting": "lending", "agent": "Greedy", "seconds": 360.0}
    ResultStore(tmp_path).write({**row, "params": stored.params})
    steps = lambda params: float(params["l2"])  # noqa: E731
    later = Stage(lambda rows: spec(100, 1), label="chosen", work=steps)
    lines = plan(
        [
            Stage(spec(1_000, 2), work=steps),  # two cells of 10 times the stored one's work
            Stage(spec(100, 1), work=steps),  # the stored cell
            later,
            Stage(spec(100, 1, "Adaptive"), work=steps),  # an agent with no stored cell
        ],
        tmp_path,
    )
    assert lines == [
        "stage 1: 2 cells, 0 stored, 2 to run, about 2.0 worker-hours",  # 2 x 10 x 360 s
        "stage 2: 1 cells, all stored",
        "stage 3 (chosen): chosen from the rows of the stages before it, once stored",
        "stage 4: 1 cells, 0 stored, 1 to run (no stored cell of their agents to time them by)",
    ]
