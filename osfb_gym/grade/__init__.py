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
:mod:`osfb_gym.stats`, :data:`TIE_RULE`), adds a one-line hint when the submission does worse than a
policy that learns nothing or is far from every reference, and can be
written as Gradescope's ``results.json`` (:mod:`osfb_gym.grade.gradescope`).
A grading with ``seed=S`` is reproducible: the same file, env, arguments and
seed print the same report (:data:`GradeReport.mode`).

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
import time
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
from osfb_gym.grade import cache as _cache
from osfb_gym.grade.boundary import Limits, SubmissionAgent
from osfb_gym.grade.integrity import implausible, impossible
from osfb_gym.grade.sandbox import Diagnosis
from osfb_gym.grade.secret import grading_streams, secret_worlds
from osfb_gym.runner import Trajectory, evaluate, run_episode
from osfb_gym.stats import ALPHA, Placement, place

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
    "run_submission",
    "summary_table",
    "write_gradescope",
]

#: how the report decides "better", "tied" or "worse", as it states it under the table
TIE_RULE = (
    "Verdicts: yours against each reference by an exact paired sign-flip test over the shared "
    f"seeds (two-sided at {ALPHA:g}, Holm over the references, osfb_gym.stats); a reference "
    "not shown different by the test is a tie (within noise), whatever the means say."
)


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
        A markdown table: mean ± standard error of the family's objective per
        agent, and against each reference the paired difference (yours minus
        theirs, per seed) with its standard error and the verdict.
    verdict
        One sentence placing the submission among the references.
    plot
        The PNG written, or None.
    suspicious
        Why some of the submission's results are impossible or implausible
        (no honest agent scores them, :mod:`osfb_gym.grade.integrity`), one
        line per reason; empty for an honest grading. When it is not empty
        the verdict places the submission nowhere.
    world
        What the graded worlds are (e.g. a secret bootstrap replicate of a dataset).
    seed
        The seed the held-out seeds were drawn from, or None for a fresh,
        secret draw (see :attr:`mode`).
    seeds
        The held-out episode seeds (known once the agent's process is gone).
    objective, lower_is_better
        The family's objective and its direction.
    yours
        The submission's label in ``results`` (``"<Class> (yours)"``).
    comparisons
        One row per reference: ``agent``, ``mean_difference`` and
        ``standard_error`` of yours minus theirs per seed, ``seeds`` and
        ``verdict`` (``"better"``, ``"tied"``, ``"worse"``: yours against it).
    baselines
        The policies that learn nothing (:data:`CONSTANT_POLICIES`) on the
        same seeds: ``agent``, ``seed`` and the objective; empty when they
        did not run (a submission that ties or beats every reference).
    hint
        One line for a submission that does worse than a constant policy or
        is far from every reference, else empty.
    cached
        The cache file the references' scores were read from, or None.
    elapsed
        Wall-clock seconds of the grading (not printed: the report of a
        reproduced grading is identical).
    """

    agent: str
    env_id: str
    results: pd.DataFrame
    table: str
    verdict: str
    plot: Path | None = None
    suspicious: list[str] = field(default_factory=list)
    seed: int | None = None
    seeds: list[int] = field(default_factory=list)
    objective: str = ""
    lower_is_better: bool = True
    yours: str = ""
    comparisons: pd.DataFrame = field(default_factory=pd.DataFrame)
    baselines: pd.DataFrame = field(default_factory=pd.DataFrame)
    hint: str = ""
    cached: Path | None = None
    elapsed: float = 0.0
    world: str = ""

    @property
    def mode(self) -> str:
        """``"official"`` (fresh secret seeds) or ``"reproduction"`` (drawn from ``seed``).

        A small seed can be searched by a submission (the streams are public
        code), so a reproduction is never an official grading.
        """
        return "official" if self.seed is None else "reproduction"

    def mode_line(self) -> str:
        """Say which seeds ran: fresh and secret, or drawn from ``seed`` (reproducible)."""
        n = len(self.seeds)
        if self.seed is None:
            return (
                f"Seeds: {n} held-out episodes, drawn fresh and kept secret (a new draw at every "
                "grading; --seed S reproduces a grading)."
            )
        return (
            f"REPRODUCTION, not an official grading: {n} held-out episodes drawn from --seed "
            f"{self.seed} (the same file, env, arguments and seed give this report again)."
        )

    def __str__(self) -> str:
        lines = [f"Graded {self.agent} on {self.env_id}.", self.mode_line(), "", self.table]
        lines += ["", TIE_RULE, "", self.verdict]
        if self.world:
            lines.append(f"Worlds: {self.world}.")
        if self.hint:
            lines.append(self.hint)
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
    env_id: str, agent: Agent, seeds: Sequence[int], worlds: Sequence[dict[str, Any]], **extra: Any
) -> list[Trajectory]:
    """Run ``agent`` one episode per seed, each in its world (``extra`` on top).

    Consecutive episodes given the same world (the same dict) share one env.
    """
    trajectories: list[Trajectory] = []
    env: gym.Env[Any, Any] | None = None
    current: dict[str, Any] | None = None
    try:
        for seed, world in zip(seeds, worlds, strict=True):
            if env is None or world is not current:
                if env is not None:
                    env.close()
                env, current = gym.make(env_id, **{**world, **extra}), world
            _, runs = evaluate(env, agent, [seed], return_trajectories=True)
            trajectories += runs
    finally:
        if env is not None:
            env.close()
    return trajectories


def _reference(spec: str) -> Agent:
    module, name = spec.split(":")
    agent: Agent = getattr(importlib.import_module(module), name)()
    return agent


# ---------------------------------------------------------------------------- constant policies
class ConstantPolicy(Agent):
    """Play the same action every step and learn nothing: the floor a learner must clear.

    ``value`` fills the action space: a 0/1 per applicant (``MultiBinary``),
    an int (``Discrete``) or one entry per component (``MultiDiscrete``).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("OneSidedLending-v0", horizon=3, batch_size=2)
    >>> run_episode(env, ConstantPolicy(value=0), seed=0).actions.tolist()
    [[0, 0], [0, 0], [0, 0]]
    """

    abstract = True  # a yardstick of the grader, not an agent to benchmark

    def __init__(self, value: int | tuple[int, ...] = 0) -> None:
        self.value = value

    def act(self, observation: Any) -> Any:  # noqa: D102
        space = self.action_space_
        if isinstance(space, gym.spaces.Discrete):
            return int(self.value)  # type: ignore[arg-type]
        return np.broadcast_to(np.asarray(self.value, dtype=space.dtype), space.shape or ()).copy()

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:  # noqa: D102
        return None


#: per family, the policies that learn nothing, by name: a submission doing worse than one
#: of them gets a hint (services: every service at one user is a single service)
CONSTANT_POLICIES: dict[str, dict[str, int | tuple[int, ...]]] = {
    "lending": {"deny everyone": 0, "approve everyone": 1},
    "apple": {"never taste": 0, "always taste": 1},
    "reject": {
        "reject everything": (1, 0),
        "always predict -1": (0, 0),
        "always predict +1": (2, 0),
    },
    "services": {"always ask user 0": 0},
}

#: per family, where a submission that a constant policy beats usually goes wrong
_TIPS = {
    "lending": (
        "is your score on the scale of the cutoff c (a least-squares fit needs an intercept "
        "column: lending.md, step 1), and do you deny the applicants scored below it?"
    ),
    "apple": "does action 1 taste, and do you learn from the tasted examples' labels?",
    "reject": "are the decision codes right (0 predicts -1, 1 rejects, 2 predicts +1)?",
    "services": "do you pick users by their reported losses, and not the same one twice?",
}


def _episode_rows(label: str, trajectories: Sequence[Trajectory]) -> list[dict[str, Any]]:
    return [{"seed": t.seed, "agent": label, **t.metrics} for t in trajectories]


def _mean_curve(runs: Sequence[np.ndarray]) -> np.ndarray:
    length = min(run.size for run in runs)
    return np.mean([run[:length] for run in runs], axis=0)


def _run_agents(
    env_id: str,
    agents: dict[str, Agent],
    seeds: Sequence[int],
    worlds: Sequence[dict[str, Any]],
    folder: Path | None,
) -> tuple[dict[str, Any], Path | None]:
    """Run ``agents`` (by label) on ``seeds`` in ``worlds``; cache in ``folder`` (None: none).

    The cache is used only when every episode has the same, public world
    (:func:`grade` passes None otherwise).

    Returns, per label, the episode rows and the mean curve R_t/t, and the
    cache file they were read from (None when they ran).
    """
    key = ""
    if folder is not None:
        specs = [f"{label}={agent!r}" for label, agent in agents.items()]
        key = _cache.entry_key(env_id, worlds[0], seeds, specs)
        entry = _cache.load(folder, key)
        if entry is not None and set(entry["agents"]) == set(agents):
            return {
                label: {"rows": value["rows"], "curve": np.asarray(value["curve"], dtype=float)}
                for label, value in entry["agents"].items()
            }, folder / f"{key}.json"
    scored: dict[str, Any] = {}
    for label, agent in agents.items():
        trajectories = _evaluate_worlds(env_id, agent, seeds, worlds)
        scored[label] = {
            "rows": _episode_rows(label, trajectories),
            "curve": _mean_curve([t.average_loss for t in trajectories]),
        }
    if folder is not None:
        _cache.store(folder, key, scored)
    return scored, None


# ---------------------------------------------------------------------------- the report
def _placement(
    results: pd.DataFrame, yours: str, objective: str, *, lower_is_better: bool
) -> tuple[Placement, pd.DataFrame]:
    """Place ``yours`` among the other agents of ``results`` (:func:`osfb_gym.stats.place`).

    Returns the placement and the per-seed table (seeds as rows, agents as
    columns) it was computed from, over the seeds every agent shares.
    """
    table = results.pivot_table(index="seed", columns="agent", values=objective, sort=False)
    table = table.dropna()
    others = [str(agent) for agent in results["agent"].unique() if agent != yours]
    placement = place(
        table[yours].to_numpy(dtype=float),
        {agent: table[agent].to_numpy(dtype=float) for agent in others},
        lower_is_better=lower_is_better,
        name=yours,
    )
    return placement, table


def paired_comparisons(
    results: pd.DataFrame, yours: str, objective: str, *, lower_is_better: bool
) -> pd.DataFrame:
    """Compare ``yours`` with every other agent of ``results`` over the seeds they share.

    Returns one row per other agent: ``agent``, ``mean_difference`` and
    ``standard_error`` of ``objective`` (yours minus theirs, per seed),
    ``seeds``, ``p_value`` (Holm-adjusted over the agents) and ``verdict``
    (yours is ``"better"``, ``"tied"`` or ``"worse"``: :data:`TIE_RULE`,
    decided by :func:`osfb_gym.stats.place`).

    Examples
    --------
    >>> frame = pd.DataFrame({"agent": ["me"] * 10 + ["B"] * 10, "seed": list(range(10)) * 2,
    ...                       "loss": [1.0] * 10 + [2.0 + 0.1 * s for s in range(10)]})
    >>> row = paired_comparisons(frame, "me", "loss", lower_is_better=True).iloc[0]
    >>> row["agent"], round(float(row["mean_difference"]), 3), row["verdict"]
    ('B', -1.45, 'better')
    >>> paired_comparisons(frame[frame.seed < 5], "me", "loss", lower_is_better=True).verdict[0]
    'tied'
    """
    placement, table = _placement(results, yours, objective, lower_is_better=lower_is_better)
    verdict_of = {agent: "better" for agent in placement.better}
    verdict_of |= {agent: "tied" for agent in placement.tied}
    verdict_of |= {agent: "worse" for agent in placement.worse}
    rows = []
    for found in placement.verdicts:
        differences = (table[yours] - table[found.b]).to_numpy(dtype=float)
        n = differences.size
        rows.append(
            {
                "agent": found.b,
                "mean_difference": float(differences.mean()),
                "standard_error": (
                    float(differences.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan
                ),
                "seeds": int(n),
                "p_value": found.p_adjusted,
                "verdict": verdict_of[found.b],
            }
        )
    return pd.DataFrame(
        rows,
        columns=["agent", "mean_difference", "standard_error", "seeds", "p_value", "verdict"],
    )


def _plus_minus(mean: float, error: float, *, signed: bool = False) -> str:
    text = f"{mean:+.4g}" if signed else f"{mean:.4g}"
    return f"{text} ± {error:.2g}" if np.isfinite(error) else f"{text} (one seed)"


def summary_table(
    results: pd.DataFrame,
    objective: str,
    *,
    higher_is_better: bool,
    yours: str | None = None,
) -> str:
    """Markdown table of mean ± standard error of ``objective`` per agent, best first.

    With ``yours`` (an agent of ``results``), two columns compare every
    other agent with it over the seeds they share: the mean of the per-seed
    differences, yours minus theirs, with its standard error, and the
    verdict of :func:`paired_comparisons` (read it as "yours is ... than this agent").

    Examples
    --------
    >>> frame = pd.DataFrame({"agent": ["A", "A", "B", "B"], "loss": [1.0, 3.0, 0.5, 0.5]})
    >>> print(summary_table(frame, "loss", higher_is_better=False))
    | agent   | loss (mean ± s.e.)   |   seeds |
    |:--------|:---------------------|--------:|
    | B       | 0.5 ± 0              |       2 |
    | A       | 2 ± 1                |       2 |
    >>> frame["seed"] = [0, 1, 0, 1]
    >>> print(summary_table(frame, "loss", higher_is_better=False, yours="A"))
    | agent   | loss (mean ± s.e.)   | yours − this, paired (± s.e.)   | yours is   |   seeds |
    |:--------|:---------------------|:--------------------------------|:-----------|--------:|
    | B       | 0.5 ± 0              | +1.5 ± 1                        | tied       |       2 |
    | A       | 2 ± 1                |                                 | (yours)    |       2 |
    """
    grouped = results.groupby("agent", sort=False)[objective]
    means, errors, counts = grouped.mean(), grouped.sem(), grouped.count()
    order = means.sort_values(ascending=not higher_is_better, kind="stable").index
    comparisons = (
        paired_comparisons(
            results, yours, objective, lower_is_better=not higher_is_better
        ).set_index("agent")
        if yours is not None
        else None
    )
    rows = []
    for agent in order:
        row: dict[str, Any] = {
            "agent": agent,
            f"{objective} (mean ± s.e.)": f"{means[agent]:.4g} ± {errors[agent]:.2g}",
        }
        if comparisons is not None:
            if agent == yours:
                difference, verdict = "", "(yours)"
            else:
                compared = comparisons.loc[agent]
                difference = _plus_minus(
                    compared["mean_difference"], compared["standard_error"], signed=True
                )
                verdict = compared["verdict"]
            row["yours − this, paired (± s.e.)"] = difference
            row["yours is"] = verdict
        row["seeds"] = int(counts[agent])
        rows.append(row)
    return str(pd.DataFrame(rows).to_markdown(index=False))


def _verdict(results: pd.DataFrame, yours: str, family: Family) -> str:
    """Place ``yours`` among the references: better, tied (within noise) or worse.

    Every agent ran on the same seeds, so each comparison is paired
    (:func:`osfb_gym.stats.place`: exact sign-flip tests, Holm over the
    references); the sentence names the test and says when the seeds are
    too few to ever name a winner.
    """
    placement, _ = _placement(
        results, yours, family.objective, lower_is_better=family.lower_is_better
    )
    mine = results.loc[results["agent"] == yours, family.objective]
    return (
        f"Your mean {family.objective} is {mine.mean():.4g} ({family.direction} is better): "
        + placement.sentence
    )


#: a submission worse than every reference (:func:`paired_comparisons`) with an objective
#: this many times the nearest reference's is "far" from them
FAR_FACTOR = 3.0


def _hint(
    results: pd.DataFrame,
    baselines: pd.DataFrame,
    comparisons: pd.DataFrame,
    yours: str,
    family: Family,
) -> str:
    """One line for a submission worse than (or the same as) a policy that learns nothing.

    Else one line for a submission worse than every reference and far from them all.
    """
    objective, sign = family.objective, 1.0 if family.lower_is_better else -1.0
    mine = float(results.loc[results["agent"] == yours, objective].mean())
    tip = f": {_TIPS[family.name]}" if family.name in _TIPS else "."
    if not baselines.empty:
        means = baselines.groupby("agent", sort=False)[objective].mean()
        beaten_by = [
            (str(name), float(value)) for name, value in means.items() if sign * (mine - value) > 0
        ]
        if beaten_by:
            name, value = min(beaten_by, key=lambda item: sign * item[1])
            return (
                f"Hint: a policy that learns nothing, '{name}', scores {value:.4g} on the same "
                f"seeds, better than your {mine:.4g}{tip}"
            )
    if not baselines.empty:
        own = results.loc[results["agent"] == yours].set_index("seed")[objective]
        for name, group in baselines.groupby("agent", sort=False):
            theirs = group.set_index("seed")[objective].reindex(own.index)
            if np.array_equal(theirs.to_numpy(dtype=float), own.to_numpy(dtype=float)):
                return (
                    f"Hint: your agent scored exactly as '{name}', a policy that learns "
                    f"nothing, on every seed{tip}"
                )
    references = results[results["agent"] != yours].groupby("agent", sort=False)[objective].mean()
    if references.empty or not np.isfinite(mine):
        return ""
    nearest_name = str(min(references.index, key=lambda name: abs(mine - references[name])))
    nearest = float(references[nearest_name])
    # advice on means (a far mean is the effect size that matters here), not a verdict
    worse_than_all = bool((sign * comparisons["mean_difference"] > 0).all())
    if worse_than_all and abs(mine - nearest) > (FAR_FACTOR - 1) * abs(nearest):
        ratio = f"{mine / nearest:.3g} times" if nearest else "far from"
        return (
            f"Hint: your {objective} is {ratio} the nearest reference's ({nearest_name}, "
            f"{nearest:.4g}), far from every reference{tip}"
        )
    return ""


def _plot(results: pd.DataFrame, curves: dict[str, np.ndarray], family: Family, path: Path) -> Path:
    # the object-oriented API without pyplot: no GUI backend, no global figure registry
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 4))
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    for agent, curve in curves.items():
        left.plot(curve, label=agent)
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


def _baselines(
    env_id: str,
    results: pd.DataFrame,
    comparisons: pd.DataFrame,
    yours: str,
    family: Family,
    seeds: Sequence[int],
    worlds: Sequence[dict[str, Any]],
    folder: Path | None,
) -> pd.DataFrame:
    """Run the family's constant policies on ``seeds`` in ``worlds`` until one beats ``yours``.

    None runs for a submission whose mean is at least every reference's (the
    references are then the bar it clears); the policies run in
    :data:`CONSTANT_POLICIES` order and stop at the first that does better
    than the submission, which is all the hint needs.
    """
    rows: list[dict[str, Any]] = []
    sign = 1.0 if family.lower_is_better else -1.0
    # advice, not a verdict: any reference with a better mean makes the floor worth showing
    if not (sign * comparisons["mean_difference"] > 0).any():
        return pd.DataFrame(rows, columns=["seed", "agent", family.objective])
    mine = float(results.loc[results["agent"] == yours, family.objective].mean())
    for name, value in CONSTANT_POLICIES.get(family.name, {}).items():
        policy = {name: ConstantPolicy(value=value)}
        scored, _ = _run_agents(env_id, policy, seeds, worlds, folder)
        rows += scored[name]["rows"]
        theirs = float(np.mean([row[family.objective] for row in scored[name]["rows"]]))
        if sign * (mine - theirs) > 0:
            break
    return pd.DataFrame(rows)


def _check_cache(cache: Any) -> Path | None:
    if cache is True:
        return _cache.default_folder()
    if cache is False or cache is None:
        return None
    return _check_path(cache, "cache")


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
    file = _check_path(path, "path")
    family = family_of(env_id)
    kwargs = _check_env_kwargs(env_kwargs, family)
    seeds = held_out_seeds(n_seeds, seed)
    streams = grading_streams(n_seeds, seed)
    _check_limits(time_limit, memory_limit, n_seeds)
    _check_class_name(class_name)
    if out is not None:
        out = _check_path(out, "out")
    folder = _check_cache(cache)
    gym.make(env_id, **kwargs).close()  # a bad env argument is the caller's error, not the agent's
    worlds, world = secret_worlds(env_id, kwargs, streams.world, n_seeds)
    if seed is None or any(episode is not worlds[0] for episode in worlds):
        # fresh secret seeds match no entry, and a secret world per episode must not be kept
        folder = None
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
    suspicious = [
        f"episode {episode}: {reason}"
        for episode, trajectory in enumerate(trajectories, start=1)
        for reason in impossible(family.name, trajectory)
    ]
    references = {type(agent).__name__: agent for agent in map(_reference, family.reference_agents)}
    scored, cached = _run_agents(env_id, references, seeds, worlds, folder)
    rows = _episode_rows(label, trajectories)
    curves = {label: _mean_curve([t.average_loss for t in trajectories])}
    for name, value in scored.items():
        rows += value["rows"]
        curves[name] = value["curve"]
    results = pd.DataFrame(rows)
    comparisons = paired_comparisons(
        results, label, family.objective, lower_is_better=family.lower_is_better
    )
    suspicious += _implausible(results, label, env_id, worlds, seeds, family)
    baselines = _baselines(env_id, results, comparisons, label, family, seeds, worlds, folder)
    table = summary_table(
        results, family.objective, higher_is_better=not family.lower_is_better, yours=label
    )
    plot = None
    if out is not None:
        plot = _plot(results, curves, family, plot_path(out, file, env_id))
    return GradeReport(
        agent=yours,
        env_id=env_id,
        results=results,
        table=table,
        verdict=(
            "Not placed among the references: the results are SUSPICIOUS (below)."
            if suspicious
            else _verdict(results, label, family)
        ),
        plot=plot,
        suspicious=suspicious,
        seed=seed,
        seeds=list(seeds),
        objective=family.objective,
        lower_is_better=family.lower_is_better,
        yours=label,
        comparisons=comparisons,
        baselines=baselines,
        hint=_hint(results, baselines, comparisons, label, family),
        cached=cached,
        elapsed=time.monotonic() - started,
        world=world,
    )


def _implausible(
    results: pd.DataFrame,
    label: str,
    env_id: str,
    worlds: Sequence[dict[str, Any]],
    seeds: Sequence[int],
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
        runs = _evaluate_worlds(env_id, agent, seeds, worlds, feedback="full")
        bounds[f"{type(agent).__name__} (full)"] = {
            int(seed): float(run.metrics[family.objective])
            for seed, run in zip(seeds, runs, strict=True)
        }
    mine = {int(s): float(table.loc[s, label]) for s in seeds}
    return implausible(mine, bounds, lower_is_better=family.lower_is_better)


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

    return gradescope.write(outcome, _check_path(path, "path"), **options)
