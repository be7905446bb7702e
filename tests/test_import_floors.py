"""Imports follow the floors: no upward import, no import circle.

The floors are data (:data:`FLOORS`, lowest first). A module may import
modules of its own part (e.g. ``osfb_gym.envs`` within ``osfb_gym.envs``) and
of any part on a lower floor; never a part on a higher floor, nor another
part of its own floor (siblings stay independent: agents never import envs,
bench never imports grade). Between modules there is no circle at all, even
inside one part.

Imports are read with :mod:`ast`, so nothing is executed. For the floors
every import counts: module-level ones, those inside functions (a lazy
upward import is still an upward dependency, only deferred) and those under
``if TYPE_CHECKING:`` (a type a lower floor names is a type it depends
on). For circles, every import that runs counts, lazy ones included (a
circle closed inside a function is still a circle, only deferred); those
under ``if TYPE_CHECKING:`` do not, as they never run: annotating a
parameter with the class of the module that calls you (the services
kernels take a ``Population``) is no circle.
An import names the module it reads from: ``from pkg import sub`` the
submodule ``pkg.sub`` when there is one, else ``pkg`` (its ``__init__``);
the parents Python imports first are not counted (every module would depend
on its package's ``__init__`` otherwise).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("envs_registry", "osfb_gym", "agents")

#: the floors, lowest first: each a tuple of parts (a module belongs to the
#: longest part that prefixes its name; "osfb_gym" is the package's own __init__)
FLOORS: tuple[tuple[str, ...], ...] = (
    ("envs_registry",),  # the table of env ids -> entry points (strings only)
    ("osfb_gym.core",),  # the contract: channels, env base, links, seeding, encoding, Family
    # the package's __init__ (registers the ids), data, verdicts, and the agents
    # (which see only core, the id table and their own package)
    ("osfb_gym", "osfb_gym.data", "osfb_gym.stats", "agents"),
    ("osfb_gym.envs",),  # the families
    ("osfb_gym.runner",),  # the one loop (reads agents.base)
    ("osfb_gym.wrappers",),  # HideOracle's kin and the RL views (agents' estimators, envs)
    ("osfb_gym.bench", "osfb_gym.grade"),  # the suite engine; the grader
    ("osfb_gym.cli",),  # osfb-bench
)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _known(name: str) -> str | None:
    """The project's module ``name`` is, or lives in (None: not the project's)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            target = _known(alias.name)
            if target:
                yield target
        return
    if node.level:
        base = module.split(".")
        if path.name != "__init__.py":
            base.pop()
        base = base[: len(base) - node.level + 1]
        source = ".".join([*base, node.module] if node.module else base)
    else:
        source = node.module or ""
    for alias in node.names:
        target = f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else _known(source)
        if target:
            yield target


def _type_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:`` (never run)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                found.update(id(sub) for sub in ast.walk(inner))
    return found


def _graph(*, type_only: bool) -> dict[str, set[str]]:
    """Module -> the project's modules it imports (``type_only``: with the typing-only ones)."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = set() if type_only else _type_only(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skip:
                graph[module].update(t for t in _targets(module, path, node) if t != module)
    return graph


GRAPH = _graph(type_only=True)  # the floors: every import counts
RUNTIME = _graph(type_only=False)  # the circles: the imports that run
PARTS = {part: level for level, floor in enumerate(FLOORS) for part in floor}


def _part(module: str) -> str:
    name = module
    while name not in PARTS:
        if "." not in name:
            raise AssertionError(f"{module} is on no floor: add its part to FLOORS")
        name = name.rpartition(".")[0]
    return name


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        # iterative DFS: (node, iterator over its successors)
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        found.append(sorted(component))
    return found


def test_every_module_is_on_a_floor():
    assert len(MODULES) > 50  # the scan found the tree
    for module in MODULES:
        _part(module)


def test_no_upward_or_sideways_import():
    wrong = []
    for module, targets in sorted(GRAPH.items()):
        part = _part(module)
        for target in sorted(targets):
            other = _part(target)
            if other != part and PARTS[other] >= PARTS[part]:
                wrong.append(f"{module} -> {target} ({part} may not import {other})")
    assert not wrong, "imports against the floors:\n" + "\n".join(wrong)


def test_no_import_circle():
    circles = _circles(RUNTIME)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set(), "c": {"c"}}, [["c"]]),
        ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, []),
    ],
)
def test_the_circle_finder_finds_circles(graph, expected):
    assert sorted(_circles(graph)) == expected


def test_the_reader_sees_lazy_relative_and_typing_imports():
    # agents.checks registers the ids lazily (inside a function): counted
    assert "envs_registry" in GRAPH["agents.checks"]
    # a package's __init__ re-exporting its submodules by relative or absolute import
    assert "osfb_gym.wrappers.views" in GRAPH["osfb_gym.wrappers"]
    # the kernels annotate with the world's Population (typing only): a floor edge, not a run one
    assert "osfb_gym.envs.services.world" in GRAPH["osfb_gym.envs.services._fast.kernels"]
    assert "osfb_gym.envs.services.world" not in RUNTIME["osfb_gym.envs.services._fast.kernels"]
