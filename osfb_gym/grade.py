"""Grade a student's agent file: contract checks, held-out seeds, a report beside the references.

``osfb-bench grade path/to/agent.py --env OneSidedLending-v0`` runs
:func:`grade`. The submission is imported, checked and run in a child
process, so an import error, an exception, an invalid action or an
infinite loop becomes a one-paragraph diagnosis (:class:`Diagnosis`)
instead of a traceback or a hang. The submission is run only through
:func:`osfb_gym.runner.run_episode`, which strips ``info["oracle"]``: a
submission never sees the hidden truth.

Examples
--------
>>> FAMILIES["lending"].objective, FAMILIES["apple"].higher_is_better
('cumulative_loss', True)
"""

from __future__ import annotations

import importlib.util
import inspect
import multiprocessing
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from agents.base import Agent
from envs_registry import ENVS
from osfb_gym.core.validation import check_int

#: held-out grading seeds start here, far from the seeds examples and tests use
GRADE_SEED_OFFSET = 1_000_000


@dataclass(frozen=True)
class Family:
    """How one environment family is graded.

    Attributes
    ----------
    objective
        The episode metric a grade reports (mean and standard error).
    higher_is_better
        True for a score (F1), False for a loss.
    references
        ``"module:Class"`` of the reference agents, run with their defaults.
    env_kwargs
        Default environment arguments for grading (kept small, so a grade takes seconds).
    """

    objective: str
    higher_is_better: bool
    references: tuple[str, ...]
    env_kwargs: dict[str, Any] = field(default_factory=dict)


FAMILIES: dict[str, Family] = {
    "lending": Family(
        "cumulative_loss", False, ("agents.lending:Greedy", "agents.lending:Adaptive")
    ),
    "apple": Family(
        "f1",
        True,
        ("agents.apple:Perceptron", "agents.apple:MarginPerceptron", "agents.apple:LabelEfficient"),
    ),
    "reject": Family(
        "average_risk",
        False,
        ("agents.reject:DSOL", "agents.reject:DRAL", "agents.reject:DSAL"),
        {"horizon": 2000},
    ),
    "services": Family(
        "total_loss",
        False,
        ("agents.services:Uniform", "agents.services:AcQUIre"),
        {"reference_restarts": 0},  # the approximation ratio's solver is most of the time
    ),
}


class Diagnosis(Exception):
    """A submission that cannot be graded, with what is wrong and how to fix it.

    Parameters
    ----------
    kind
        One of ``"import"``, ``"contract"``, ``"raises"``, ``"invalid_action"``,
        ``"timeout"``.
    message
        The paragraph shown to the student.
    """

    KINDS = ("import", "contract", "raises", "invalid_action", "timeout")

    def __init__(self, kind: str, message: str):
        if kind not in self.KINDS:
            raise ValueError(f"kind must be one of {self.KINDS}, got {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        titles = {
            "import": "the file could not be loaded",
            "contract": "the agent breaks the Agent contract",
            "raises": "the agent raised an exception",
            "invalid_action": "the agent returned an invalid action",
            "timeout": "the agent ran past the time limit",
        }
        return f"NOT GRADED: {titles[self.kind]}.\n{self.message}"


@dataclass
class GradeReport:
    """The outcome of :func:`grade`.

    Attributes
    ----------
    agent
        The repr of the submitted agent (its class and hyperparameters).
    env_id
        The environment graded on.
    results
        One row per agent and seed: ``agent``, ``seed``, the episode metrics.
    table
        A markdown table: mean ± standard error of the family's objective per agent.
    verdict
        One sentence placing the submission among the references.
    plot
        The PNG written, or None.
    """

    agent: str
    env_id: str
    results: pd.DataFrame
    table: str
    verdict: str
    plot: Path | None = None

    def __str__(self) -> str:
        lines = [f"Graded {self.agent} on {self.env_id}.", "", self.table, "", self.verdict]
        if self.plot is not None:
            lines.append(f"plot: {self.plot}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------- loading
def family_of(env_id: str) -> Family:
    """Return the grading :class:`Family` of a registered env id (``ValueError`` otherwise)."""
    for entry in ENVS:
        if entry.id == env_id:
            return FAMILIES[entry.family]
    known = ", ".join(entry.id for entry in ENVS)
    raise ValueError(f"env_id must be a registered osfb-gym id ({known}), got {env_id!r}")


def _frames_in(error: BaseException, path: Path) -> str:
    """Return where in the submission's own file the error arose (empty if nowhere)."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if Path(frame.filename).resolve() == path
    ]
    if not frames:
        return ""
    frame = frames[-1]
    return (
        f" at line {frame.lineno} of {path.name} (in {frame.name}: `{(frame.line or '').strip()}`)"
    )


def load_agent_class(path: str | Path, class_name: str | None = None) -> type[Agent]:
    """Import the file at ``path`` and return its Agent subclass.

    Raises :class:`Diagnosis` (kind ``"import"`` or ``"contract"``) when the
    file is missing, does not import, or has no single Agent subclass.
    """
    file = Path(path).resolve()
    if not file.is_file():
        raise Diagnosis(
            "import", f"There is no file {path}. Pass the path of your agent's .py file."
        )
    module_name = f"osfb_submission_{abs(hash(str(file)))}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise Diagnosis("import", f"{path} is not a Python file that can be imported.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise Diagnosis(
            "import",
            f"{file.name} has a syntax error at line {error.lineno}: {error.msg}"
            f"{': `' + error.text.strip() + '`' if error.text else ''}. "
            "Fix it and check with `python -c \"import ast; ast.parse(open('"
            f"{file.name}').read())\"`.",
        ) from None
    except BaseException as error:  # noqa: BLE001  (any failure at import is the diagnosis)
        if isinstance(error, KeyboardInterrupt):
            raise
        hint = (
            " Install the missing package, or use only numpy and what osfb-gym provides."
            if isinstance(error, ImportError)
            else ""
        )
        raise Diagnosis(
            "import",
            f"Importing {file.name} raised {type(error).__name__}: {error}"
            f"{_frames_in(error, file)}.{hint} Code at the top level of the file runs at "
            "import; keep it to imports and class definitions.",
        ) from None
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == module_name
    ]
    agents = [
        value
        for value in classes
        if issubclass(value, Agent) and not value.__dict__.get("abstract", False)
    ]
    if class_name is not None:
        chosen = [value for value in classes if value.__name__ == class_name]
        if not chosen:
            names = ", ".join(value.__name__ for value in classes) or "none"
            raise Diagnosis(
                "import", f"{file.name} defines no class {class_name!r} (classes found: {names})."
            )
        agents = chosen
    if not agents:
        actors = [value.__name__ for value in classes if hasattr(value, "act")]
        if actors:
            raise Diagnosis(
                "contract",
                f"Class {actors[0]} in {file.name} has an act() method but does not subclass "
                f"agents.base.Agent. Write `from agents.base import Agent` and "
                f"`class {actors[0]}(Agent):` so it gets get_params(), clone() and reset().",
            )
        raise Diagnosis(
            "contract",
            f"{file.name} defines no subclass of agents.base.Agent. Start from "
            "examples/assignments/template_agent.py: `class MyAgent(Agent):` with "
            "reset(), act() and update().",
        )
    if len(agents) > 1:
        names = ", ".join(value.__name__ for value in agents)
        raise Diagnosis(
            "contract",
            f"{file.name} defines several Agent subclasses ({names}); the grader cannot tell "
            "which one to grade. Pass `--agent NAME`, or set `abstract = True` in the body of "
            "a helper base class.",
        )
    agent_class = agents[0]
    if not issubclass(agent_class, Agent):
        raise Diagnosis(
            "contract",
            f"Class {agent_class.__name__} does not subclass agents.base.Agent. Write "
            f"`class {agent_class.__name__}(Agent):`.",
        )
    return agent_class


# ---------------------------------------------------------------------------- contract
def _bind(agent_class: type[Agent], method: str, *args: Any, **kwargs: Any) -> None:
    function = getattr(agent_class, method)
    try:
        inspect.signature(function).bind(None, *args, **kwargs)
    except TypeError as error:
        expected = {
            "reset": "reset(self, observation_space, action_space, *, seed=None, feedback=None)",
            "act": "act(self, observation)",
            "update": "update(self, observation, action, reward, feedback)",
        }[method]
        raise Diagnosis(
            "contract",
            f"{agent_class.__name__}.{method} has the signature "
            f"{method}{inspect.signature(function)}, which cannot be called as the runner "
            f"calls it ({error}). Declare it as `def {expected}:`.",
        ) from None


def check_contract(agent_class: type[Agent], env: gym.Env) -> Agent:
    """Check ``agent_class`` against the Agent contract on ``env``; return an instance.

    Checks: the class can be built with no arguments, ``__init__`` stores
    every hyperparameter under its own name and nothing else,
    ``get_params`` and ``clone`` work, ``reset``/``act``/``update`` have the
    runner's signatures, and ``env_ids`` (if declared) lists the env.
    Raises :class:`Diagnosis` (kind ``"contract"``, or ``"raises"`` when
    ``__init__`` itself raises).
    """
    name = agent_class.__name__
    env_id = env.spec.id if env.spec is not None else None
    declared = tuple(getattr(agent_class, "env_ids", ()))
    if declared and env_id not in declared:
        raise Diagnosis(
            "contract",
            f"{name}.env_ids is {declared}, which does not include {env_id}. Grade it on one "
            f"of those ids, or add {env_id!r} to env_ids if it is made for it.",
        )
    try:
        agent_class._param_names()
    except TypeError as error:
        raise Diagnosis("contract", f"{error}. List each hyperparameter as a keyword.") from None
    try:
        agent = agent_class()
    except TypeError as error:
        raise Diagnosis(
            "contract",
            f"{name}() cannot be built without arguments ({error}). Give every "
            "hyperparameter of __init__ a default value, e.g. `def __init__(self, alpha=0.5):`.",
        ) from None
    except Exception as error:  # noqa: BLE001
        raise Diagnosis(
            "raises", f"{name}() raised {type(error).__name__}: {error} in __init__."
        ) from None
    missing = [param for param in agent_class._param_names() if param not in vars(agent)]
    if missing:
        raise Diagnosis(
            "contract",
            f"{name}.__init__ takes {', '.join(missing)} but does not store "
            f"{'it' if len(missing) == 1 else 'them'} unchanged under the same name. Write "
            + ", ".join(f"`self.{param} = {param}`" for param in missing)
            + " in __init__ (get_params() and clone() read them from there).",
        )
    extra = sorted(set(vars(agent)) - set(agent_class._param_names()))
    if extra:
        raise Diagnosis(
            "contract",
            f"{name}.__init__ sets {', '.join('self.' + attribute for attribute in extra)}, "
            "which is not a hyperparameter. __init__ only stores its arguments; create learned "
            "state (with a trailing underscore, e.g. `self.w_`) in reset(), so every episode "
            "starts afresh.",
        )
    try:
        clone = agent.clone()
    except Exception as error:  # noqa: BLE001
        raise Diagnosis(
            "contract",
            f"{name}().clone() raised {type(error).__name__}: {error}. clone() rebuilds the "
            "agent from get_params(); keep __init__ free of logic.",
        ) from None
    if repr(clone) != repr(agent):
        raise Diagnosis(
            "contract",
            f"{name}().clone() gives {clone!r}, not {agent!r}: __init__ must store each "
            "argument unchanged.",
        )
    observation, _ = env.reset(seed=0)
    _bind(agent_class, "reset", env.observation_space, env.action_space, seed=0, feedback={})
    _bind(agent_class, "act", observation)
    _bind(agent_class, "update", observation, env.action_space.sample(), 0.0, {})
    return agent


# ---------------------------------------------------------------------------- running
def _describe(action: Any) -> str:
    if isinstance(action, np.ndarray):
        return f"{action!r} (a numpy array of dtype {action.dtype}, shape {action.shape})"
    return f"{action!r} (a {type(action).__name__})"


def _space_hint(space: gym.Space) -> str:
    if isinstance(space, gym.spaces.MultiBinary):
        return (
            f"a numpy array of {space.n} zeros and ones, e.g. `np.ones({space.n}, dtype=np.int8)`"
        )
    if isinstance(space, gym.spaces.Discrete):
        return f"an int from {space.start} to {space.start + space.n - 1}"
    if isinstance(space, gym.spaces.MultiDiscrete):
        return f"an integer numpy array below {space.nvec.tolist()}, e.g. `np.array([2, 1])`"
    return "a value for which `action_space.contains(action)` is True"


class _Guarded(Agent):
    """Runs the submission's methods, turning its failures into a :class:`Diagnosis`."""

    def __init__(self, agent: Agent | None = None):
        self.agent = agent

    def start(self, agent: Agent, path: Path, seed: int) -> None:
        """Guard a fresh ``agent`` from ``path`` for the episode with ``seed``."""
        self.agent, self.path_, self.seed_, self.step_ = agent, path, seed, 0

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self.agent, method)(*args, **kwargs)
        except Diagnosis:
            raise
        except Exception as error:  # noqa: BLE001
            where = _frames_in(error, self.path_)
            raise Diagnosis(
                "raises",
                f"{type(self.agent).__name__}.{method}() raised {type(error).__name__}: "
                f"{error}{where}, on step {self.step_} of the episode with seed {self.seed_}.",
            ) from None

    def reset(self, observation_space, action_space, *, seed=None, feedback=None):  # noqa: D102
        self.action_space_ = action_space
        self.step_ = 0
        self._call("reset", observation_space, action_space, seed=seed, feedback=feedback)

    def act(self, observation):  # noqa: D102
        self.step_ += 1
        action = self._call("act", observation)
        candidate = np.asarray(action) if isinstance(action, (list, tuple)) else action
        try:
            valid = bool(self.action_space_.contains(candidate))
        except Exception:  # noqa: BLE001  (contains itself can fail on odd types)
            valid = False
        if not valid:
            raise Diagnosis(
                "invalid_action",
                f"{type(self.agent).__name__}.act() returned {_describe(action)} on step "
                f"{self.step_} of the episode with seed {self.seed_}, which is not in the "
                f"action space {self.action_space_}. Return "
                f"{_space_hint(self.action_space_)}.",
            )
        return action

    def update(self, observation, action, reward, feedback):  # noqa: D102
        self._call("update", observation, action, reward, feedback)


def _child(
    connection: Any,
    path: str,
    class_name: str | None,
    env_id: str,
    env_kwargs: dict[str, Any],
    seeds: list[int],
) -> None:
    """Load, check and run the submission; report each stage to the parent."""
    from osfb_gym.runner import run_episode

    def send(*message: Any) -> None:
        connection.send(message)  # unbuffered: a child that dies has said where it was

    try:
        send("stage", "importing the file")
        agent_class = load_agent_class(path, class_name)
        env = gym.make(env_id, **env_kwargs)
        send("stage", f"checking {agent_class.__name__} against the Agent contract")
        agent = check_contract(agent_class, env)
        send("loaded", repr(agent))
        guard = _Guarded(agent)
        for seed in seeds:
            send("stage", f"running the episode with seed {seed}")
            guard.start(agent.clone(), Path(path).resolve(), seed)
            trajectory = run_episode(env, guard, seed)
            send("episode", seed, trajectory.metrics, trajectory.average_loss)
        send("done")
    except Diagnosis as diagnosis:
        send("diagnosis", diagnosis.kind, diagnosis.message)
    except BaseException as error:  # noqa: BLE001  (anything else: report, never hang the parent)
        send("diagnosis", "raises", f"{type(error).__name__}: {error}")


def _next_message(receiver: Any, process: Any, time_limit: float, stage: str) -> tuple[Any, ...]:
    """Wait for the child's next message; diagnose a time-out or a child that died silently."""
    deadline = time.monotonic() + time_limit
    while True:
        if receiver.poll(min(0.5, time_limit)):
            try:
                message: tuple[Any, ...] = receiver.recv()
                return message
            except EOFError:  # the child closed its end: it is exiting, diagnosed below
                process.join(timeout=1.0)
        if not process.is_alive():
            if receiver.poll(0):  # a last message written as the child exited
                try:
                    message = receiver.recv()
                    return message
                except EOFError:
                    pass
            raise Diagnosis(
                "raises",
                f"The agent's process ended abruptly (exit code {process.exitcode}) while "
                f"{stage}: a call such as os._exit() or sys.exit() in a thread, a crash "
                "in a compiled extension, or running out of memory.",
            )
        if time.monotonic() > deadline:
            raise Diagnosis(
                "timeout",
                f"The agent ran past the time limit of {time_limit:g} s while {stage} (the "
                "process was stopped). Look for a loop that never ends in act() or update(), "
                "or work that grows with every step; an episode of a reference agent takes "
                "about a second.",
            )


def run_submission(
    path: str | Path,
    env_id: str,
    *,
    seeds: Sequence[int],
    env_kwargs: dict[str, Any] | None = None,
    class_name: str | None = None,
    time_limit: float = 30.0,
) -> tuple[str, pd.DataFrame, dict[str, np.ndarray]]:
    """Run the submission at ``path`` in a child process; return its repr, results and curves.

    Each stage (import, contract check, each episode) must finish within
    ``time_limit`` seconds, or the child is stopped and a
    :class:`Diagnosis` of kind ``"timeout"`` raised.
    """
    if not isinstance(time_limit, (int, float)) or not time_limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    methods = multiprocessing.get_all_start_methods()
    context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(
        target=_child,
        args=(sender, str(path), class_name, env_id, dict(env_kwargs or {}), list(seeds)),
        daemon=True,
    )
    process.start()
    sender.close()  # the child's copy is the only writer, so its exit is seen as EOF
    stage, name = "starting", ""
    rows: list[dict[str, Any]] = []
    curves: dict[str, np.ndarray] = {}
    try:
        while True:
            message = _next_message(receiver, process, time_limit, stage)
            kind = message[0]
            if kind == "stage":
                stage = message[1]
            elif kind == "loaded":
                name = message[1]
            elif kind == "episode":
                rows.append({"agent": name, "seed": message[1], **message[2]})
                curves[str(message[1])] = message[3]
            elif kind == "diagnosis":
                raise Diagnosis(message[1], message[2])
            else:
                break
    finally:
        if process.is_alive():
            process.terminate()
        process.join(timeout=5)
        receiver.close()
    return name, pd.DataFrame(rows), curves


def _reference(spec: str) -> Agent:
    module, name = spec.split(":")
    agent: Agent = getattr(importlib.import_module(module), name)()
    return agent


def summary_table(results: pd.DataFrame, objective: str, *, higher_is_better: bool) -> str:
    """Markdown table of mean ± standard error of ``objective`` per agent, best first.

    Examples
    --------
    >>> frame = pd.DataFrame({"agent": ["A", "A", "B", "B"], "loss": [1.0, 3.0, 0.5, 0.5]})
    >>> print(summary_table(frame, "loss", higher_is_better=False))
    | agent   | loss (mean ± s.e.)   |   seeds |
    |:--------|:---------------------|--------:|
    | B       | 0.5 ± 0              |       2 |
    | A       | 2 ± 1                |       2 |
    """
    grouped = results.groupby("agent", sort=False)[objective]
    means, errors, counts = grouped.mean(), grouped.sem(), grouped.count()
    order = means.sort_values(ascending=not higher_is_better).index
    rows = [
        {
            "agent": agent,
            f"{objective} (mean ± s.e.)": f"{means[agent]:.4g} ± {errors[agent]:.2g}",
            "seeds": int(counts[agent]),
        }
        for agent in order
    ]
    return str(pd.DataFrame(rows).to_markdown(index=False))


def _verdict(results: pd.DataFrame, yours: str, family: Family) -> str:
    means = results.groupby("agent", sort=False)[family.objective].mean()
    mine = means[yours]
    better: list[str] = []
    worse: list[str] = []
    for agent, value in means.items():
        if agent == yours:
            continue
        beats = mine > value if family.higher_is_better else mine < value
        (better if beats else worse).append(str(agent))
    direction = "higher" if family.higher_is_better else "lower"
    text = f"Your mean {family.objective} is {mine:.4g} ({direction} is better)"
    if better:
        text += f": better than {', '.join(better)}"
    if worse:
        text += f"{'; ' if better else ': '}not better than {', '.join(worse)}"
    return text + "."


def _plot(
    results: pd.DataFrame, curves: dict[str, list[np.ndarray]], family: Family, path: Path
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for agent, runs in curves.items():
        length = min(run.size for run in runs)
        left.plot(np.mean([run[:length] for run in runs], axis=0), label=agent)
    left.set(xlabel="step t", ylabel="average loss R_t / t", title="loss over the episode")
    left.legend()
    grouped = results.groupby("agent", sort=False)[family.objective]
    right.bar(range(grouped.ngroups), grouped.mean(), yerr=grouped.sem(), capsize=4)
    right.set_xticks(range(grouped.ngroups), list(grouped.groups), rotation=20)
    right.set(ylabel=family.objective, title=f"{family.objective} (mean ± s.e.)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def grade(
    path: str | Path,
    env_id: str,
    *,
    n_seeds: int = 10,
    env_kwargs: dict[str, Any] | None = None,
    class_name: str | None = None,
    time_limit: float = 30.0,
    out: str | Path | None = "osfb-results/grade",
) -> GradeReport:
    """Grade the agent in the file at ``path`` on ``env_id`` beside the family's references.

    Parameters
    ----------
    path
        The student's ``.py`` file, defining one ``agents.base.Agent`` subclass.
    env_id
        A registered id; its family picks the objective and the references.
    n_seeds
        Held-out episodes per agent (seeds from :data:`GRADE_SEED_OFFSET`).
    env_kwargs
        Environment arguments (default: the family's grading defaults).
    class_name
        Which class to grade when the file defines several.
    time_limit
        Seconds allowed for the import, the contract check and each episode.
    out
        Folder for the plot (``grade_<env_id>.png``); None writes none.

    Returns
    -------
    GradeReport

    Raises
    ------
    Diagnosis
        When the submission cannot be graded (import, contract, exception,
        invalid action, time limit).
    """
    family = family_of(env_id)
    check_int(n_seeds, "n_seeds", minimum=1)
    kwargs = dict(family.env_kwargs if env_kwargs is None else env_kwargs)
    seeds = list(range(GRADE_SEED_OFFSET, GRADE_SEED_OFFSET + n_seeds))
    gym.make(env_id, **kwargs).close()  # a bad env argument is the caller's error, not the agent's
    yours, results, own_curves = run_submission(
        path, env_id, seeds=seeds, env_kwargs=kwargs, class_name=class_name, time_limit=time_limit
    )
    label = f"{yours.split('(')[0]} (yours)"
    frames = [results.assign(agent=label)]
    curves: dict[str, list[np.ndarray]] = {label: list(own_curves.values())}
    from osfb_gym.runner import evaluate

    for spec in family.references:
        agent = _reference(spec)
        frame, trajectories = evaluate(
            env_id, agent, seeds, env_kwargs=kwargs, return_trajectories=True
        )
        frames.append(frame)
        curves[type(agent).__name__] = [trajectory.average_loss for trajectory in trajectories]
    table_frame = pd.concat(frames, ignore_index=True)
    table = summary_table(table_frame, family.objective, higher_is_better=family.higher_is_better)
    plot = None
    if out is not None:
        plot = _plot(table_frame, curves, family, Path(out) / f"grade_{env_id}.png")
    return GradeReport(
        agent=yours,
        env_id=env_id,
        results=table_frame,
        table=table,
        verdict=_verdict(table_frame, label, family),
        plot=plot,
    )
