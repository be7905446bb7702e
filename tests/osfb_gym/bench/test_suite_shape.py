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
