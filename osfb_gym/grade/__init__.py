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

The report places the submission beside each reference by the paired
differences of their objective over the same seeds (exact paired tests of
:mod:`osfb_gym.stats`, :data:`TIE_RULE`), adds a one-line hint when the
submission does worse than a policy that learns nothing or is far from
every reference, and can be
written as Gradescope's ``results.json`` (:mod:`osfb_gym.grade.gradescope`).
A grading with ``seed=S`` is reproducible: the same file, env, arguments and
seed print the same report (:data:`GradeReport.mode`).

The modules: :mod:`~osfb_gym.grade.arguments` (checks of the arguments,
the held-out seeds), :mod:`~osfb_gym.grade.references` (the reference
agents, the policies that learn nothing, the full-information bounds, on
the submission's worlds and seeds), :mod:`~osfb_gym.grade.report` (the
table, the verdicts, the hint, the plot), :mod:`~osfb_gym.grade.boundary`
and :mod:`~osfb_gym.grade.sandbox` (the two sides of the process boundary)
and :mod:`~osfb_gym.grade.wire` (the pipe between them); this module runs
a grading from them.

Examples
--------
>>> FAMILIES["lending"].objective, FAMILIES["apple"].lower_is_better
('cumulative_loss', True)
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from osfb_gym.core.family import FAMILIES, Family
from osfb_gym.core.validation import check_int
from osfb_gym.grade.arguments import (
    check_cache,
    check_class_name,
    check_env_kwargs,
    check_limits,
    check_path,
    family_of,
    held_out_seeds,
)
from osfb_gym.grade.boundary import Limits, SubmissionAgent
from osfb_gym.grade.integrity import impossible
from osfb_gym.grade.references import (
    CONSTANT_POLICIES,
    ConstantPolicy,
    episode_rows,
    flag_implausible,
    mean_curve,
    reference_agent,
    run_agents,
    run_baselines,
)
from osfb_gym.grade.report import (
    TIE_RULE,
    GradeReport,
    hint_line,
    paired_comparisons,
    plot_path,
    summary_table,
    verdict_sentence,
    write_plot,
)
from osfb_gym.grade.sandbox import Diagnosis
from osfb_gym.grade.secret import GradingStreams, grading_streams, secret_worlds
from osfb_gym.runner import Trajectory, run_episode

__all__ = [
    "CONSTANT_POLICIES",
    "FAMILIES",
    "TIE_RULE",
    "ConstantPolicy",
    "Diagnosis",
    "Family",
    "GradeReport",
    "Limits",
    "family_of",
    "grade",
    "gradescope_results",
    "held_out_seeds",
    "paired_comparisons",
    "plot_path",
    "run_submission",
    "summary_table",
    "write_gradescope",
]


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
    file = check_path(path, "path")
    family = family_of(env_id)
    seeds = [check_int(seed, "seeds", minimum=0) for seed in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed, got none")
    kwargs = check_env_kwargs(env_kwargs, family)
    class_name = check_class_name(class_name)
    limits = check_limits(time_limit, memory_limit, len(seeds))
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
                agent.end_episode()
    finally:
        env.close()
    return name, trajectories


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
    cache: bool | str | os.PathLike[str] = True,
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
        int reproduces a grading exactly: the same file, env, arguments and
        seed give the same report (``mode="reproduction"``: a small seed
        can be searched, so it is no official grading).
    out
        Folder for the plot (``grade_<file>_<env_id>.png``, one per
        submission); None writes none.
    cache
        Where a reproduced grading (``seed`` given) keeps the references'
        scores (:mod:`osfb_gym.grade.cache`): True (default) the user cache
        folder, a path that folder, False none. A fresh grading's seeds
        match no entry, so it neither reads nor writes one.

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
    started = time.monotonic()
    setup = _prepare(
        path, env_id, n_seeds, env_kwargs, class_name, time_limit, memory_limit, seed, out, cache
    )
    yours, trajectories = run_submission(
        setup.file,
        env_id,
        seeds=setup.seeds,
        env_kwargs=setup.kwargs,
        class_name=class_name,
        time_limit=time_limit,
        memory_limit=memory_limit,
        agent_seeds=setup.streams.agent_seeds,
        episode_env_kwargs=setup.worlds,
    )
    report = _report(setup, yours, trajectories)
    report.elapsed = time.monotonic() - started
    return report


@dataclass(frozen=True)
class _Setup:
    """A grading's checked arguments and its secrets (seeds, streams, worlds)."""

    file: Path
    env_id: str
    family: Family
    kwargs: dict[str, Any]
    seed: int | None
    seeds: list[int]
    streams: GradingStreams
    worlds: list[dict[str, Any]]
    world: str
    out: Path | None
    folder: Path | None


def _prepare(
    path: Any,
    env_id: str,
    n_seeds: int,
    env_kwargs: Any,
    class_name: Any,
    time_limit: Any,
    memory_limit: Any,
    seed: Any,
    out: Any,
    cache: Any,
) -> _Setup:
    """Check :func:`grade`'s arguments (each error naming its parameter); draw the secrets."""
    file = check_path(path, "path")
    family = family_of(env_id)
    kwargs = check_env_kwargs(env_kwargs, family)
    seeds = held_out_seeds(n_seeds, seed)
    streams = grading_streams(n_seeds, seed)
    check_limits(time_limit, memory_limit, n_seeds)
    check_class_name(class_name)
    folder = check_cache(cache)
    gym.make(env_id, **kwargs).close()  # a bad env argument is the caller's error, not the agent's
    worlds, world = secret_worlds(env_id, kwargs, streams.world, n_seeds)
    if seed is None or any(episode is not worlds[0] for episode in worlds):
        # fresh secret seeds match no entry, and a secret world per episode must not be kept
        folder = None
    return _Setup(
        file=file,
        env_id=env_id,
        family=family,
        kwargs=kwargs,
        seed=seed,
        seeds=seeds,
        streams=streams,
        worlds=list(worlds),
        world=world,
        out=None if out is None else check_path(out, "out"),
        folder=folder,
    )


def _score(
    setup: _Setup, label: str, trajectories: Sequence[Trajectory]
) -> tuple[pd.DataFrame, dict[str, np.ndarray], Path | None]:
    """Run the references on the submission's seeds and worlds; the rows of every agent.

    Returns the results (one row per agent and seed), each agent's mean
    curve R_t/t and the cache file the references' scores came from.
    """
    references = {
        type(agent).__name__: agent for agent in map(reference_agent, setup.family.reference_agents)
    }
    scored, cached = run_agents(setup.env_id, references, setup.seeds, setup.worlds, setup.folder)
    rows = episode_rows(label, trajectories)
    curves = {label: mean_curve([t.average_loss for t in trajectories])}
    for name, value in scored.items():
        rows += value["rows"]
        curves[name] = value["curve"]
    return pd.DataFrame(rows), curves, cached


def _report(setup: _Setup, yours: str, trajectories: Sequence[Trajectory]) -> GradeReport:
    """Score the submission's episodes beside the references and write the report."""
    family, env_id = setup.family, setup.env_id
    label = f"{yours.split('(')[0]} (yours)"
    suspicious = [
        f"episode {episode}: {reason}"
        for episode, trajectory in enumerate(trajectories, start=1)
        for reason in impossible(family.name, trajectory)
    ]
    results, curves, cached = _score(setup, label, trajectories)
    comparisons = paired_comparisons(
        results, label, family.objective, lower_is_better=family.lower_is_better
    )
    suspicious += flag_implausible(results, label, env_id, setup.worlds, setup.seeds, family)
    baselines = run_baselines(
        env_id, results, comparisons, label, family, setup.seeds, setup.worlds, setup.folder
    )
    table = summary_table(
        results, family.objective, higher_is_better=not family.lower_is_better, yours=label
    )
    plot = None
    if setup.out is not None:
        plot = write_plot(results, curves, family, plot_path(setup.out, setup.file, env_id))
    return GradeReport(
        agent=yours,
        env_id=env_id,
        results=results,
        table=table,
        verdict=(
            "Not placed among the references: the results are SUSPICIOUS (below)."
            if suspicious
            else verdict_sentence(results, label, family)
        ),
        plot=plot,
        suspicious=suspicious,
        seed=setup.seed,
        seeds=list(setup.seeds),
        objective=family.objective,
        lower_is_better=family.lower_is_better,
        yours=label,
        comparisons=comparisons,
        baselines=baselines,
        hint=hint_line(results, baselines, comparisons, label, family),
        cached=cached,
        world=setup.world,
    )


def gradescope_results(outcome: GradeReport | Diagnosis, **options: Any) -> dict[str, Any]:
    """Return Gradescope's ``results.json`` of a grading (see :mod:`osfb_gym.grade.gradescope`)."""
    from osfb_gym.grade import gradescope

    return gradescope.results(outcome, **options)


def write_gradescope(
    outcome: GradeReport | Diagnosis, path: str | os.PathLike[str], **options: Any
) -> Path:
    """Write Gradescope's ``results.json`` of a grading to ``path``.

    The options are :func:`gradescope_results`'s.
    """
    from osfb_gym.grade import gradescope

    return gradescope.write(outcome, check_path(path, "path"), **options)
