"""Sweeps: envs x agents x hyperparameter grids x seeds, declared in TOML or in code.

A spec names settings (an env id, its keyword arguments, a grid that expands
into one setting per combination), agents (a class under ``agents`` by name,
or an RL algorithm, with fixed params and a grid) and seeds; each *cell*
(setting, agent, params, seed) is one episode, stored as one row. Everything
is checked before any work: an unknown or bad name or value is an error
naming it and the valid choices. The TOML format: docs/benchmark.md and
``examples/sweeps/lending_alpha.toml``.
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import gymnasium as gym
from sklearn.utils._param_validation import InvalidParameterError

from agents.base import Agent
from envs_registry import ENVS, register_all
from osfb_gym.bench.rl import ALGORITHMS
from osfb_gym.bench.store import canonical, stable_key
from osfb_gym.core.family import load
from osfb_gym.core.validation import (
    MAKE_ARGUMENTS,
    check_choice,
    check_memory,
    env_arguments,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: hyperparameters of an RL agent in a sweep (what :func:`osfb_gym.bench.rl.train` takes)
RL_PARAMS: dict[str, Any] = {
    "total_timesteps": 10_000,
    "train_seed": 100_000,  # far from the scoring seeds, so training never sees their episodes
    "n_envs": 1,
    "algo_kwargs": {},
    "deterministic": True,
}
SPEC_KEYS = ("name", "description", "seeds", "envs", "agents")
ENV_KEYS = ("id", "kwargs", "label", "grid")
AGENT_KEYS = ("name", "params", "grid", "envs")


def _same_as(value: Any) -> str:
    """Return a text equal for values an agent or env takes as the same (``1`` and ``1.0``).

    A float with an integer value reads as that integer (inside lists and
    tables too); a bool stays a bool. Used to find repeated grid values and
    settings, never to store a cell.
    """

    def plain(item: Any) -> Any:
        if isinstance(item, float) and item.is_integer():
            return int(item)
        if isinstance(item, dict):
            return {key: plain(entry) for key, entry in item.items()}
        if isinstance(item, list | tuple):
            return [plain(entry) for entry in item]
        return item

    return canonical(plain(value))


@cache
def agent_classes() -> dict[str, type[Agent]]:
    """Return every agent class under ``agents`` by name; RL agents are named by algorithm."""
    from agents.base import all_agents

    found: dict[str, type[Agent]] = {}
    for cls in all_agents():
        if cls.__name__ == "SB3Agent":
            continue
        other = found.setdefault(cls.__name__, cls)
        if other is not cls:  # a spec names agents by class name: two would shadow each other
            raise RuntimeError(
                f"two agent classes are named {cls.__name__!r} ({other.__module__} and "
                f"{cls.__module__}); sweep specs name agents by class name, rename one"
            )
    return dict(sorted(found.items()))


def agents_for(env_id: str) -> list[str]:
    """Return the names of the agents (classes, then RL algorithms) that run on ``env_id``."""
    names = [name for name, cls in agent_classes().items() if env_id in cls.env_ids]
    return names + list(ALGORITHMS)


@dataclass(frozen=True)
class EnvSpec:
    """One environment setting of a sweep: an id, its keyword arguments and a label.

    ``tags`` name the setting for a report: columns its rows get from
    :func:`osfb_gym.bench.run.run_cells` (not stored, not part of a cell's key).
    """

    id: str
    label: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentSpec:
    """An agent of a sweep: a class name (or RL algorithm), fixed params and a grid.

    ``envs`` restricts it to settings with these labels; empty means every
    setting whose env the agent declares in ``env_ids``. ``runner``
    (``"module:function"``) makes its cells *custom*: the function gets the
    :class:`Cell` and returns the row's measurements (e.g. train an RL agent
    and score it at checkpoints); the engine stores, resumes and distributes
    them like any other cell, and the name and params are the runner's. ``tags``:
    as :attr:`EnvSpec.tags`, after the setting's.
    """

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    envs: tuple[str, ...] = ()
    runner: str | None = None
    tags: dict[str, Any] = field(default_factory=dict)

    @property
    def is_rl(self) -> bool:
        """Whether this is an RL algorithm trained before it is scored."""
        return self.name in ALGORITHMS

    def settings(self) -> list[dict[str, Any]]:
        """Return the hyperparameter settings: the fixed params with each grid point."""
        names = list(self.grid)
        return [
            {**self.params, **dict(zip(names, values, strict=True))}
            for values in itertools.product(*(self.grid[name] for name in names))
        ]


@dataclass(frozen=True)
class Cell:
    """One unit of work: an episode of ``agent(**params)`` on a setting, from ``seed``."""

    setting: str
    env_id: str
    env_kwargs: dict[str, Any]
    agent: str
    params: dict[str, Any]
    seed: int
    #: sample the stored curves every this many steps (and at the last); None: log-spaced
    curve_stride: int | None = None
    #: ``"module:function"`` computing a custom cell's row (:class:`AgentSpec`); None: one episode
    runner: str | None = None
    #: the setting's and the agent's tags: columns of its row in a report, not stored
    tags: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        """A stable hash of (env id, env kwargs, agent, params, seed): the cell's file name."""
        parts: tuple[Any, ...] = (self.env_id, self.env_kwargs, self.agent, self.params, self.seed)
        return stable_key(*parts) if self.runner is None else stable_key(*parts, self.runner)

    @property
    def model_key(self) -> str:
        """For an RL cell, the hash of what its trained model depends on (not the seed)."""
        return stable_key(self.env_id, self.env_kwargs, self.agent, self.params)


@dataclass(frozen=True)
class SweepSpec:
    """A whole sweep: settings, agents, seeds."""

    name: str
    envs: tuple[EnvSpec, ...]
    agents: tuple[AgentSpec, ...]
    seeds: tuple[int, ...] = tuple(range(10))
    description: str = ""
    #: store the family's curves every this many steps (a paper's figures); None: only the
    #: loss curves, log-spaced (:func:`osfb_gym.bench.executors.curve_indices`)
    curve_stride: int | None = None

    def agents_on(self, env: EnvSpec) -> list[AgentSpec]:
        """Return the agents that run on setting ``env``."""
        return [
            agent
            for agent in self.agents
            if (env.label in agent.envs if agent.envs else env.id in _agent_env_ids(agent.name))
        ]

    def cells(self) -> list[Cell]:
        """Return every cell, in spec order (setting, agent, setting of the grid, seed)."""
        return [
            Cell(
                env.label,
                env.id,
                dict(env.kwargs),
                agent.name,
                params,
                seed,
                self.curve_stride,
                agent.runner,
                env.tags | agent.tags,
            )
            for env in self.envs
            for agent in self.agents_on(env)
            for params in agent.settings()
            for seed in self.seeds
        ]


def _agent_env_ids(name: str) -> tuple[str, ...]:
    if name in ALGORITHMS:
        return tuple(entry.id for entry in ENVS)
    return agent_classes()[name].env_ids


def _choices(values: Any) -> str:
    return ", ".join(str(value) for value in values) or "none"


def _table(value: Any, where: str, valid: tuple[str, ...] = ()) -> dict[str, Any]:
    """Return ``value`` if it is a table (with only ``valid`` keys, when given); else raise."""
    if not isinstance(value, dict):
        raise TypeError(f"{where} must be a table, got {value!r}")
    if valid:
        for key in value:
            check_choice(key, f"a key of {where}", valid)
    return value


def _check_unique(values: list[Any], what: str) -> None:
    """Raise naming the values that occur more than once in ``values``."""
    repeated = sorted(str(value) for value, count in Counter(values).items() if count > 1)
    if repeated:
        raise ValueError(f"{what} lists {', '.join(repeated)} more than once; list each once")


def _grid(table: Any, where: str) -> dict[str, list[Any]]:
    """Return a grid table checked: each value a non-empty list of distinct values."""
    for name, values in _table(table, where).items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid value of {name!r} must be a non-empty list, got {values!r}")
        _check_unique([_same_as(value) for value in values], f"the grid of {name!r}")
    return dict(table)


def _entry(entry: Any, where: str, keys: tuple[str, ...], choices: Callable[[], str]) -> tuple:
    """Check an envs/agents table (keys: the required one, the fixed arguments', ...)."""
    _table(entry, where, keys)
    if keys[0] not in entry:
        raise ValueError(f"{where} needs {keys[0]!r}; choose one of {choices()}")
    fixed = dict(_table(entry.get(keys[1], {}), f"{where}.{keys[1]}"))
    return fixed, _grid(entry.get("grid", {}), f"{where}.grid")


def _text(value: Any, where: str) -> str:
    """Return ``value`` if it is a string; else raise naming ``where``."""
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a string, got {value!r} ({type(value).__name__})")
    return value


def _expand_env(entry: Any, index: int) -> list[EnvSpec]:
    kwargs, grid = _entry(entry, f"envs[{index}]", ENV_KEYS, lambda: _choices(register_all()))
    _text(entry["id"], f"envs[{index}].id")
    label = _text(entry.get("label", entry["id"]), f"envs[{index}].label")
    specs = []
    for values in itertools.product(*grid.values()):
        point = dict(zip(grid, values, strict=True))
        suffix = ", ".join(f"{name}={value}" for name, value in point.items())
        specs.append(EnvSpec(entry["id"], f"{label} {suffix}" if suffix else label, kwargs | point))
    return specs


def _agent(entry: Any, index: int) -> AgentSpec:
    params, grid = _entry(entry, f"agents[{index}]", AGENT_KEYS, _all_agents)
    envs = entry.get("envs", [])
    if not isinstance(envs, list):
        raise TypeError(
            f"agents[{index}].envs must be a list of env labels, got {envs!r} "
            f"({type(envs).__name__})"
        )
    labels = tuple(_text(label, f"agents[{index}].envs[{i}]") for i, label in enumerate(envs))
    return AgentSpec(_text(entry["name"], f"agents[{index}].name"), params, grid, labels)


def check_name(name: Any) -> str:
    """Return ``name`` if it is a plain name (a folder of the output); else raise naming it."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {name!r}")
    if name.strip() in ("", ".", "..") or any(sep in name for sep in ("/", "\\", "\0")):
        raise ValueError(
            "name must be a plain name (no path separators, not empty, not '.' or '..'), "
            f"got {name!r}"
        )
    return name


def spec_from_dict(data: dict[str, Any], *, name: str = "sweep") -> SweepSpec:
    """Build a :class:`SweepSpec` from a parsed TOML table and validate it."""
    _table(data, "the spec", SPEC_KEYS)
    seeds = data.get("seeds", 10)
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be a count >= 1 or a list of seeds, got seeds = {seeds}")
        # a Python int per seed and a cell per seed at least: refused before the list is made
        check_memory(100 * seeds, f"seeds = {seeds} (a cell each)")
        seeds = list(range(seeds))
    if not isinstance(seeds, list) or not all(
        isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds
    ):
        raise ValueError(f"seeds must be a count or a list of non-negative integers, got {seeds!r}")
    for part in ("envs", "agents"):
        if not isinstance(data.get(part, []), list):
            raise TypeError(f"{part} must be a list of tables ([[{part}]]), got {data[part]!r}")
    envs = [spec for i, entry in enumerate(data.get("envs", [])) for spec in _expand_env(entry, i)]
    spec = SweepSpec(
        name=check_name(data.get("name", name)),
        envs=tuple(envs),
        agents=tuple(_agent(entry, i) for i, entry in enumerate(data.get("agents", []))),
        seeds=tuple(seeds),
        description=_text(data.get("description", ""), "description"),
    )
    validate(spec)
    return spec


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a TOML sweep spec (docs/benchmark.md has the format)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path} is not valid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text: {error}") from None
    return spec_from_dict(data, name=path.stem)


def _all_agents() -> str:
    return _choices([*agent_classes(), *ALGORITHMS])


def _check_env(env: EnvSpec, ids: list[str]) -> None:
    check_choice(env.id, "env id", ids)
    valid = env_arguments(env.id)  # None: an env taking **kwargs checks them itself (retention)
    for name, value in env.kwargs.items():
        if name in MAKE_ARGUMENTS:  # gym.make's own: a cell makes its envs as its runner needs
            length = (
                " (an episode's length is the env's horizon)" if "horizon" in (valid or ()) else ""
            )
            raise ValueError(
                f"{name} is gym.make's argument, not one of {env.id}'s: a sweep's env "
                f"kwargs are the env's own{length}"
            )
        if valid is not None:
            check_choice(name, f"an argument of {env.id}", valid)
        if name == "dataset" and isinstance(value, str):  # not a Dataset object given in code
            from osfb_gym.data import list_datasets
            from osfb_gym.data.registry import get_spec

            try:
                get_spec(value)
            except (KeyError, ValueError):
                raise ValueError(
                    f"unknown dataset {value!r}; choose one of {_choices(list_datasets())}"
                ) from None


def validate(spec: SweepSpec) -> None:
    """Check every name and value of ``spec`` before any work; raise ``ValueError`` naming it.

    Every setting's env is made once, so a bad argument value fails here with
    the env's own message.
    """
    ids = register_all()
    if not spec.envs:
        raise ValueError(f"sweep {spec.name!r} has no envs; choose ids from {_choices(ids)}")
    if not spec.agents:
        raise ValueError(f"sweep {spec.name!r} has no agents; choose from {_all_agents()}")
    check_name(spec.name)
    if not spec.seeds:
        raise ValueError("seeds must not be empty")
    _check_unique(list(spec.seeds), "seeds")
    _check_unique([env.label for env in spec.envs], "the env labels")
    worlds: dict[str, str] = {}
    for env in spec.envs:
        other = worlds.setdefault(_same_as([env.id, env.kwargs]), env.label)
        if other != env.label:
            raise ValueError(
                f"settings {other!r} and {env.label!r} are the same env with the same "
                "arguments; keep one"
            )
    for env in spec.envs:
        _check_env(env, ids)
    for agent in spec.agents:
        _validate_agent(agent, spec)
    _check_unique(
        [
            f"{agent.name} with {_same_as(params)} on {env.label!r}"
            for env in spec.envs
            for agent in spec.agents_on(env)
            for params in agent.settings()
        ],
        "the sweep's agents",
    )
    for env in spec.envs:
        if not spec.agents_on(env):
            raise ValueError(
                f"no agent of the sweep runs on {env.label!r} ({env.id}); "
                f"agents for it: {_choices(agents_for(env.id))}"
            )
        try:
            gym.make(env.id, **env.kwargs).close()
        except (TypeError, ValueError) as error:
            raise ValueError(f"env {env.label!r}: {error}") from None


def _validate_agent(agent: AgentSpec, spec: SweepSpec) -> None:
    labels = {env.label: env.id for env in spec.envs}
    if agent.runner is not None:
        try:
            load(agent.runner)
        except (ImportError, AttributeError, ValueError) as error:
            raise ValueError(f"agent {agent.name}: runner {agent.runner!r}: {error}") from None
        if not agent.envs or not set(agent.envs) <= set(labels):
            raise ValueError(
                f"agent {agent.name} with a runner must name its settings (envs) among "
                f"{_choices(labels)}; got {list(agent.envs)}"
            )
        return
    check_choice(agent.name, "agent", [*agent_classes(), *ALGORITHMS])
    defaults = RL_PARAMS if agent.is_rl else agent_classes()[agent.name]().get_params(deep=False)
    for name in [*agent.params, *agent.grid]:
        if "__" not in name:  # a nested parameter (base__m): set_params checks it
            check_choice(name, f"a hyperparameter of {agent.name}", defaults)
    for label in agent.envs:
        check_choice(label, f"an env label of agent {agent.name}", labels)
        if labels[label] not in _agent_env_ids(agent.name):
            raise ValueError(
                f"agent {agent.name} does not run on {labels[label]}; "
                f"agents for it: {_choices(agents_for(labels[label]))}"
            )
    if agent.is_rl:
        return
    for params in agent.settings():
        built = make_agent(agent.name, params)
        try:  # the agent's own constraints table, checked now instead of at its first reset
            built._validate_params()
            built._check_params()
        except InvalidParameterError as error:
            raise InvalidParameterError(f"{agent.name}({canonical(params)}): {error}") from None


def make_agent(name: str, params: dict[str, Any]) -> Agent:
    """Build agent ``name`` with ``params``; a string naming an agent class becomes one.

    So a spec can say ``params = { base = "MarginPerceptron" }`` for a wrapper
    such as :class:`agents.apple.LabelEfficient`; a name with a double
    underscore (``base__m = 2``) is a nested parameter, set with ``set_params``.
    """
    classes = agent_classes()
    built = {
        key: classes[value]() if isinstance(value, str) and value in classes else value
        for key, value in params.items()
        if "__" not in key
    }
    nested = {key: value for key, value in params.items() if "__" in key}
    try:
        agent = classes[name](**built)
    except TypeError as error:
        raise ValueError(f"{name}({canonical(params)}): {error}") from None
    return agent.set_params(**nested) if nested else agent
