"""Grade a student's agent file: contract checks, held-out seeds, a report beside the references.

``osfb-bench grade path/to/agent.py --env OneSidedLending-v0`` runs
:func:`grade`. The trust boundary is a process boundary: the submission is
loaded, checked and run in its own confined process
(:mod:`osfb_gym.grade.sandbox`, spawned fresh, with memory, CPU, output
and process limits, killed with its process group), which receives only
what :func:`osfb_gym.runner.run_episode` gives an agent. The env, the
runner and the metrics run here, in the grader's process, driving the
submission through :class:`~osfb_gym.grade.boundary.SubmissionAgent`.
An import error, an exception, an invalid action, a time-out or a
resource limit becomes a one-paragraph :class:`Diagnosis` instead of a
traceback or a hang; a result no agent can reach is flagged
(:mod:`osfb_gym.grade.integrity`). See docs/grading.md for the trust model.

Examples
--------
>>> FAMILIES["lending"].objective, FAMILIES["apple"].lower_is_better
('cumulative_loss', True)
"""

from __future__ import annotations

import importlib
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from agents.base import Agent
from osfb_gym.core.family import FAMILIES, Family
from osfb_gym.core.family import family_of as _family_of
from osfb_gym.core.validation import check_float, check_int
from osfb_gym.grade.boundary import Limits, SubmissionAgent
from osfb_gym.grade.integrity import implausible, impossible
from osfb_gym.grade.sandbox import Diagnosis
from osfb_gym.grade.secret import grading_streams, secret_worlds
from osfb_gym.runner import Trajectory, evaluate, run_episode

__all__ = [
    "FAMILIES",
    "Diagnosis",
    "Family",
    "GradeReport",
    "Limits",
    "family_of",
    "grade",
    "held_out_seeds",
    "run_submission",
    "summary_table",
]

#: a difference to a reference within this many standard errors (of the paired
#: per-seed differences) is called a tie
TIE_STANDARD_ERRORS = 2.0


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
    suspicious
        Why some of the submission's results are impossible or implausible
        (no honest agent scores them, :mod:`osfb_gym.grade.integrity`), one
        line per reason; empty for an honest grading. When it is not empty
        the verdict places the submission nowhere.
    mode
        ``"official"`` (secret seeds from fresh entropy) or
        ``"reproduction"`` (a ``seed`` was given: a small one can be
        searched by a submission, so it is no official grading).
    world
        What the graded worlds are (e.g. a secret bootstrap replicate of a dataset).
    """

    agent: str
    env_id: str
    results: pd.DataFrame
    table: str
    verdict: str
    plot: Path | None = None
    suspicious: list[str] = field(default_factory=list)
    mode: str = "official"
    world: str = ""

    def __str__(self) -> str:
        lines = [f"Graded {self.agent} on {self.env_id}.", "", self.table, "", self.verdict]
        if self.world:
            lines += ["", f"Worlds: {self.world}."]
        if self.mode == "reproduction":
            lines += ["", "REPRODUCTION (a seed was given): not an official grading."]
        if self.suspicious:
            lines += ["", "SUSPICIOUS: results no agent can reach (report this grading):"]
            lines += [f"- {reason}" for reason in self.suspicious]
        if self.plot is not None:
            lines.append(f"plot: {self.plot}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------- arguments
def family_of(env_id: str) -> Family:
    """Return the :class:`~osfb_gym.core.family.Family` of a registered env id.

    The grader reads the one family record (objective, direction, reference
    agents, grading kwargs) that sweeps and tables read too.
    """
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a registered osfb-gym id (a str), got {env_id!r}")
    try:
        return _family_of(env_id)
    except ValueError:
        known = ", ".join(family.env_id for family in FAMILIES.values())
        raise ValueError(
            f"env_id must be a registered osfb-gym id ({known}), got {env_id!r}"
        ) from None


def held_out_seeds(n_seeds: int, seed: int | None = None) -> list[int]:
    """Return ``n_seeds`` episode seeds drawn from ``seed`` (None: fresh entropy, secret).

    The seeds are what keeps a submission from rebuilding the grading worlds
    in its own process (``gym.make`` and ``reset(seed)`` are public), so by
    default every grading draws new ones from the operating system. Pass
    ``seed`` (kept private) to reproduce a grading.

    Examples
    --------
    >>> held_out_seeds(2, seed=7) == held_out_seeds(2, seed=7) != held_out_seeds(2)
    True
    """
    n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
    if seed is not None:
        seed = check_int(seed, "seed", minimum=0)
    state = np.random.SeedSequence(seed).generate_state(n_seeds, dtype=np.uint64)
    return [int(value >> np.uint64(1)) for value in state]  # within int64, for tables


def _check_limits(time_limit: Any, memory_limit: Any, n_episodes: int) -> Limits:
    time_limit = check_float(time_limit, "time_limit", low=0, low_inclusive=False)
    memory_limit = check_int(memory_limit, "memory_limit", minimum=256)
    # CPU time over the process's life: the wall-clock budget of every stage, and a second
    cpu_limit = int(np.ceil(time_limit * (n_episodes + 1))) + 1
    return Limits(time_limit=time_limit, memory_limit=memory_limit, cpu_limit=cpu_limit)


def _check_path(value: Any, name: str) -> Path:
    if isinstance(value, bool) or not isinstance(value, str | os.PathLike):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got {value!r}")
    return Path(value)


def _check_env_kwargs(env_kwargs: Any, family: Family) -> dict[str, Any]:
    if env_kwargs is None:
        return dict(family.grade_kwargs)
    if not isinstance(env_kwargs, dict) or not all(isinstance(key, str) for key in env_kwargs):
        raise TypeError(
            f"env_kwargs must be a dict of argument names to values, or None; got {env_kwargs!r}"
        )
    return dict(env_kwargs)


def _check_class_name(class_name: Any) -> str | None:
    if class_name is not None and not (isinstance(class_name, str) and class_name.isidentifier()):
        raise ValueError(
            f"class_name must be a class name (an identifier) or None, got {class_name!r}"
        )
    return class_name


# ---------------------------------------------------------------------------- running
def run_submission(
    path: str | os.PathLike[str],
    env_id: str,
    *,
    seeds: Sequence[int],
    env_kwargs: dict[str, Any] | None = None,
    class_name: str | None = None,
    time_limit: float = 30.0,
    memory_limit: int = 2048,
    agent_seeds: Sequence[int] | None = None,
    episode_env_kwargs: Sequence[dict[str, Any]] | None = None,
) -> tuple[str, list[Trajectory]]:
    """Run the submission at ``path`` in its own process, one episode per seed.

    The env is made here and driven by :func:`~osfb_gym.runner.run_episode`;
    the submission's agent answers from its process. Each stage (loading,
    each episode) must finish within ``time_limit`` seconds; the process
    has ``memory_limit`` MB of address space. The agent's reset seeds are
    ``agent_seeds`` (one per seed; None: fresh entropy), never derived
    from the episode's seed. ``episode_env_kwargs`` (one dict per seed)
    gives each episode a world of its own (:func:`grade` passes its
    secret worlds); None makes every episode's env from ``env_kwargs``.

    Returns
    -------
    tuple[str, list[Trajectory]]
        The agent's repr and one trajectory per seed.

    Raises
    ------
    Diagnosis
        When the submission cannot be graded.
    """
    file = _check_path(path, "path")
    family = family_of(env_id)
    seeds = [check_int(seed, "seeds", minimum=0) for seed in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed, got none")
    kwargs = _check_env_kwargs(env_kwargs, family)
    class_name = _check_class_name(class_name)
    limits = _check_limits(time_limit, memory_limit, len(seeds))
    if agent_seeds is None:
        agent_seeds = grading_streams(len(seeds), None).agent_seeds
    agent_seeds = [check_int(value, "agent_seeds", minimum=0) for value in agent_seeds]
    if len(agent_seeds) != len(seeds):
        raise ValueError(
            f"agent_seeds must hold one seed per episode ({len(seeds)}), got {len(agent_seeds)}"
        )
    worlds = [kwargs] * len(seeds) if episode_env_kwargs is None else list(episode_env_kwargs)
    if len(worlds) != len(seeds) or not all(isinstance(world, dict) for world in worlds):
        raise ValueError(
            f"episode_env_kwargs must hold one dict per episode ({len(seeds)}), got {worlds!r}"
        )
    env = gym.make(env_id, **worlds[0])  # a bad env argument is the caller's error, not the agent's
    try:
        with SubmissionAgent() as agent:
            name = agent.open(file, class_name, env, limits)
            trajectories = []
            for episode, (seed, agent_seed) in enumerate(zip(seeds, agent_seeds, strict=True), 1):
                if episode > 1 and worlds[episode - 1] is not worlds[episode - 2]:
                    env.close()
                    env = gym.make(env_id, **worlds[episode - 1])
                agent.begin_episode(episode, len(seeds), agent_seed)
                trajectories.append(run_episode(env, agent, seed))
    finally:
        env.close()
    return name, trajectories


def _evaluate_worlds(
    env_id: str, agent: Agent, seeds: list[int], worlds: list[dict[str, Any]], **extra: Any
) -> tuple[pd.DataFrame, list[Trajectory]]:
    """:func:`~osfb_gym.runner.evaluate` with each seed in its own world (``extra`` on top)."""
    frames, trajectories = [], []
    for seed, world in zip(seeds, worlds, strict=True):
        frame, runs = evaluate(
            env_id, agent, [seed], env_kwargs={**world, **extra}, return_trajectories=True
        )
        frames.append(frame)
        trajectories += runs
    return pd.concat(frames, ignore_index=True), trajectories


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
    """Place ``yours`` among the references: better, tied (within the standard errors) or worse.

    Every agent ran on the same seeds, so each comparison uses the per-seed
    differences: a tie when their mean is within :data:`TIE_STANDARD_ERRORS`
    standard errors of 0 (with one seed there is no standard error, and
    only an exact tie is called).
    """
    table = results.pivot_table(index="seed", columns="agent", values=family.objective)
    mine = table[yours]
    groups: dict[str, list[str]] = {"better": [], "tied": [], "worse": []}
    for agent in results["agent"].unique():
        if agent == yours:
            continue
        difference = mine - table[agent]
        mean, error = float(difference.mean()), float(difference.sem())
        if mean == 0 or (np.isfinite(error) and abs(mean) <= TIE_STANDARD_ERRORS * error):
            groups["tied"].append(str(agent))
        elif (mean < 0) == family.lower_is_better:
            groups["better"].append(str(agent))
        else:
            groups["worse"].append(str(agent))
    direction = "lower" if family.lower_is_better else "higher"
    parts = []
    if groups["better"]:
        parts.append(f"better than {', '.join(groups['better'])}")
    if groups["tied"]:
        parts.append(
            f"a tie with {', '.join(groups['tied'])} (the difference is within "
            f"{TIE_STANDARD_ERRORS:g} standard errors)"
        )
    if groups["worse"]:
        parts.append(f"worse than {', '.join(groups['worse'])}")
    return f"Your mean {family.objective} is {mine.mean():.4g} ({direction} is better): " + (
        "; ".join(parts) + "."
    )


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
    # written beside and renamed over: a file or link planted at the path is replaced, not followed
    handle, temporary = tempfile.mkstemp(suffix=".png", dir=path.parent)
    with os.fdopen(handle, "wb") as stream:
        figure.savefig(stream, format="png", dpi=100)
    plt.close(figure)
    os.replace(temporary, path)
    return path


def plot_path(out: str | os.PathLike[str], submission: str | os.PathLike[str], env_id: str) -> Path:
    """Return the plot file of ``submission`` on ``env_id`` in ``out``: one per submission.

    Examples
    --------
    >>> plot_path("grades", "alice/my agent.py", "OneSidedLending-v0").as_posix()
    'grades/grade_my_agent_OneSidedLending-v0.png'
    """
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(submission).stem) or "submission"
    return Path(out) / f"grade_{stem}_{env_id}.png"


def grade(
    path: str | os.PathLike[str],
    env_id: str,
    *,
    n_seeds: int = 10,
    env_kwargs: dict[str, Any] | None = None,
    class_name: str | None = None,
    time_limit: float = 30.0,
    memory_limit: int = 2048,
    seed: int | None = None,
    out: str | os.PathLike[str] | None = "osfb-results/grade",
) -> GradeReport:
    """Grade the agent in the file at ``path`` on ``env_id`` beside the family's references.

    Parameters
    ----------
    path
        The student's ``.py`` file, defining one ``agents.base.Agent`` subclass.
    env_id
        A registered id; its family picks the objective and the references.
    n_seeds
        Held-out episodes per agent.
    env_kwargs
        Environment arguments (default: the family's grading defaults).
    class_name
        Which class to grade when the file defines several.
    time_limit
        Wall-clock seconds (finite, > 0) allowed for loading the file and
        for each episode.
    memory_limit
        Megabytes of address space of the agent's process (>= 256).
    seed
        Draws the held-out episode seeds (:func:`held_out_seeds`), the
        agents' seeds and the world's secret (:mod:`osfb_gym.grade.secret`);
        None (default) draws fresh secret ones (an official grading), an
        int reproduces a grading (``mode="reproduction"`` in the report).
    out
        Folder for the plot (``grade_<file>_<env_id>.png``, one per
        submission); None writes none.

    Returns
    -------
    GradeReport

    Raises
    ------
    Diagnosis
        When the submission cannot be graded (import, contract, exception,
        invalid action, time limit, resource limit).
    TypeError, ValueError
        For a bad argument, naming it.
    """
    file = _check_path(path, "path")
    family = family_of(env_id)
    kwargs = _check_env_kwargs(env_kwargs, family)
    seeds = held_out_seeds(n_seeds, seed)
    streams = grading_streams(n_seeds, seed)
    gym.make(env_id, **kwargs).close()  # a bad env argument is the caller's error, not the agent's
    worlds, world = secret_worlds(env_id, kwargs, streams.world, n_seeds)
    _check_limits(time_limit, memory_limit, n_seeds)
    _check_class_name(class_name)
    if out is not None:
        out = _check_path(out, "out")
    yours, trajectories = run_submission(
        file,
        env_id,
        seeds=seeds,
        env_kwargs=kwargs,
        class_name=class_name,
        time_limit=time_limit,
        memory_limit=memory_limit,
        agent_seeds=streams.agent_seeds,
        episode_env_kwargs=worlds,
    )
    label = f"{yours.split('(')[0]} (yours)"
    frames = [pd.DataFrame([{"seed": t.seed, "agent": label, **t.metrics} for t in trajectories])]
    curves: dict[str, list[np.ndarray]] = {label: [t.average_loss for t in trajectories]}
    suspicious = [
        f"episode {episode}: {reason}"
        for episode, trajectory in enumerate(trajectories, start=1)
        for reason in impossible(family_of(env_id).name, trajectory)
    ]
    for spec in family.reference_agents:
        agent = _reference(spec)
        frame, references = _evaluate_worlds(env_id, agent, seeds, worlds)
        frames.append(frame)
        curves[type(agent).__name__] = [trajectory.average_loss for trajectory in references]
    table_frame = pd.concat(frames, ignore_index=True)
    suspicious += _implausible(table_frame, label, env_id, worlds, seeds, family)
    table = summary_table(
        table_frame, family.objective, higher_is_better=not family.lower_is_better
    )
    plot = None
    if out is not None:
        plot = _plot(table_frame, curves, family, plot_path(out, file, env_id))
    return GradeReport(
        agent=yours,
        env_id=env_id,
        results=table_frame,
        table=table,
        verdict=(
            "Not placed among the references: the results are SUSPICIOUS (below)."
            if suspicious
            else _verdict(table_frame, label, family)
        ),
        plot=plot,
        suspicious=suspicious,
        mode=streams.mode,
        world=world,
    )


def _implausible(
    results: pd.DataFrame,
    label: str,
    env_id: str,
    worlds: list[dict[str, Any]],
    seeds: list[int],
    family: Family,
) -> list[str]:
    """Compare a submission that beats every reference with the references shown every outcome.

    :func:`osfb_gym.grade.integrity.implausible` on the same worlds and
    seeds; run only when the submission beats every reference on average,
    and only for families with a ``feedback="full"`` mode.
    """
    table = results.pivot_table(index="seed", columns="agent", values=family.objective)
    sign = 1.0 if family.lower_is_better else -1.0
    others = [agent for agent in table.columns if agent != label]
    if not others or not all(
        sign * table[label].mean() < sign * table[other].mean() for other in others
    ):
        return []
    try:
        gym.make(env_id, **{**worlds[0], "feedback": "full"}).close()
    except (TypeError, ValueError):  # no full-information mode
        return []
    bounds = {}
    for spec in family.reference_agents:
        agent = _reference(spec)
        frame, _ = _evaluate_worlds(env_id, agent, seeds, worlds, feedback="full")
        values = frame.set_index("seed")[family.objective]
        bounds[f"{type(agent).__name__} (full)"] = {int(s): float(values[s]) for s in seeds}
    mine = {int(s): float(table.loc[s, label]) for s in seeds}
    return implausible(mine, bounds, lower_is_better=family.lower_is_better)
