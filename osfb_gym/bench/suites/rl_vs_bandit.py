"""RL against the papers' agents: who wins each family's world, at what cost in experience.

``osfb-bench run rl-vs-bandit`` trains PPO and RecurrentPPO (an LSTM
policy) on each env family's default world, then scores them next to the
papers' agents on the same held-out episodes. Two regimes
(:mod:`osfb_gym.bench.rl`):

- ``fixed``: one hidden world (``world_seed=0``) for training and scoring;
  RL learns that world across many training episodes, the principled
  agents learn it within the one episode they are scored on;
- ``resampled``: a new world every episode, training and scoring alike;
  only learning within an episode helps.

The report gives each agent's mean episode objective with its standard
error, and the experience it consumed: RL, the env steps of training
(plus the scored episode); a principled agent, the scored episode alone.
A PNG plots the RL agents' objective at checkpoints during
training, the principled agents as horizontal lines.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from agents.apple import LabelEfficient, MarginPerceptron
from agents.base import Agent
from agents.lending import Adaptive, Greedy
from agents.reject import DRAL, DSAL, DSOL
from agents.rl import SB3Agent
from agents.services import AcQUIre, MaxLossGreedy, Uniform
from osfb_gym.bench.plots import panels, save
from osfb_gym.bench.rl import algorithm, train
from osfb_gym.bench.store import ResultStore, stable_key
from osfb_gym.core.family import FAMILIES
from osfb_gym.core.optional import require
from osfb_gym.runner import evaluate

RL_SUITE = "rl-vs-bandit"
RL_DESCRIPTION = (
    "PPO and RecurrentPPO trained on each family's default world (fixed and resampled), "
    "scored next to the papers' agents on the same held-out episodes."
)
#: scoring episodes use seeds from here on, apart from the training envs' (0, 1, ...)
HELD_OUT = 10_000
REGIMES: dict[str, dict[str, Any]] = {"fixed": {"world_seed": 0}, "resampled": {}}
RL_ALGOS = ("PPO", "RecurrentPPO")


@dataclass(frozen=True)
class Matchup:
    """One env family's default world and the principled agents RL faces there.

    The objective and its direction are the family's
    (:data:`osfb_gym.core.family.FAMILIES`).

    Attributes
    ----------
    family
        The family's name (as in ``envs_registry``), in tables and plots.
    env_kwargs
        The world (``world_seed`` is set by the regime).
    principled
        Factories of the papers' agents.
    """

    family: str
    env_kwargs: dict[str, Any]
    principled: tuple[Callable[[], Agent], ...]

    @property
    def env_id(self) -> str:
        """The family's registered id."""
        return FAMILIES[self.family].env_id

    @property
    def objective(self) -> str:
        """The episode metric compared (the family's objective)."""
        return FAMILIES[self.family].objective

    @property
    def lower_is_better(self) -> bool:
        """Whether a lower objective is better."""
        return FAMILIES[self.family].lower_is_better


# Episodes of 200 decisions: long enough for the principled agents to learn,
# short enough that RL sees dozens of episodes in its budget. Services: the
# env's default (500 users, k = 10 services).
MATCHUPS: tuple[Matchup, ...] = (
    Matchup("lending", {"horizon": 200}, (Greedy, Adaptive)),
    Matchup("apple", {"horizon": 200}, (MarginPerceptron, LabelEfficient)),
    Matchup("reject", {"horizon": 200}, (DSOL, DRAL, DSAL)),
    Matchup("services", {}, (AcQUIre, Uniform, MaxLossGreedy)),
)


@dataclass
class RLResult:
    """What a run wrote: the scored episodes, the learning curves, the report, the files."""

    results: pd.DataFrame
    curves: pd.DataFrame
    report: str
    files: list[Path]


def _callback(every: int, score: Callable[[Any], float]) -> Any:
    """Return an SB3 callback recording ``(timesteps, score(model))`` every ``every`` steps."""
    require("stable_baselines3", "the rl-vs-bandit suite")
    from stable_baselines3.common.callbacks import BaseCallback

    class Checkpoints(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.points: list[tuple[int, float]] = []
            self.next = every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                self.points.append((self.num_timesteps, score(self.model)))
                self.next += every
            return True

    return Checkpoints()


def run_rl_vs_bandit(
    out_dir: str | Path,
    *,
    families: Sequence[str] | None = None,
    regimes: Sequence[str] = tuple(REGIMES),
    algos: Sequence[str] = RL_ALGOS,
    total_timesteps: int = 20_000,
    eval_seeds: int = 20,
    checkpoints: int = 5,
    seed: int = 0,
    algo_kwargs: dict[str, dict[str, Any]] | None = None,
    progress: bool = True,
    resume: bool = False,
) -> RLResult:
    """Train the RL agents, score everyone on held-out episodes, write the report.

    Parameters
    ----------
    out_dir
        Folder for ``results.csv``, ``curves.csv``, ``report.md`` and PNGs.
    families
        Names of :data:`MATCHUPS` to run (default: all).
    regimes
        ``"fixed"`` and/or ``"resampled"``.
    algos
        RL algorithms (``"PPO"``, ``"RecurrentPPO"``, ``"A2C"``, ``"DQN"``).
    total_timesteps
        Training budget of each RL agent, in env steps.
    eval_seeds
        Held-out episodes each agent is scored on.
    checkpoints
        Learning-curve points during training (each on 5 held-out episodes).
    seed
        Seed of the RL training.
    algo_kwargs
        Per algorithm, keyword arguments of its constructor (default: SB3's).
    progress
        Show a progress bar over the trainings.
    resume
        Reuse the cells (a family, regime and agent: the principled agents'
        scores, or one RL agent's training and scores) already in
        ``out_dir``'s store; each is stored atomically as it finishes.
    """
    for algo in algos:
        algorithm(algo)  # a bad name, or no [rl] extra, stops the run before any work
    chosen = [m for m in MATCHUPS if families is None or m.family in families]
    unknown = sorted(set(families or ()) - {m.family for m in MATCHUPS})
    if unknown:
        raise ValueError(f"unknown families {unknown}; choose from {[m.family for m in MATCHUPS]}")
    for regime in regimes:
        if regime not in REGIMES:
            raise ValueError(f"regime must be one of {list(REGIMES)}, got {regime!r}")
    held_out = range(HELD_OUT, HELD_OUT + eval_seeds)
    rows: list[dict[str, Any]] = []
    curves: list[dict[str, Any]] = []
    started = time.perf_counter()
    store = ResultStore(out_dir)
    sizes = (total_timesteps, eval_seeds, checkpoints, seed)
    total = len(chosen) * len(regimes) * len(algos)
    with tqdm(total=total, desc="osfb-bench rl-vs-bandit", disable=not progress) as bar:
        for matchup in chosen:
            for regime in regimes:
                kwargs = {**matchup.env_kwargs, **REGIMES[regime]}
                key = {"family": matchup.family, "regime": regime, "objective": matchup.objective}
                cell = ("rl-vs-bandit", matchup.family, regime, kwargs, *sizes)
                principled = store.cell(
                    stable_key(*cell, "principled"),
                    functools.partial(_score_principled, matchup, kwargs, key, held_out),
                    resume=resume,
                )
                rows += principled["rows"]
                for algo in algos:
                    options = (algo_kwargs or {}).get(algo)
                    trained = store.cell(
                        stable_key(*cell, algo, options),
                        functools.partial(
                            _train_and_score, matchup, kwargs, key, held_out, algo, options,
                            total_timesteps, checkpoints, seed,
                        ),
                        resume=resume,
                    )  # fmt: skip
                    rows += trained["rows"]
                    curves += trained["curves"]
                    bar.update()
    results = pd.DataFrame(rows)
    curve_frame = pd.DataFrame(curves)
    return write_rl_report(
        results, curve_frame, out_dir, total_timesteps, (time.perf_counter() - started) / 60
    )


def _score_principled(
    matchup: Matchup,
    kwargs: dict[str, Any],
    key: dict[str, Any],
    held_out: range,
) -> dict[str, Any]:
    """Score each principled agent of ``matchup`` on the held-out episodes."""
    rows = []
    for factory in matchup.principled:
        frame = evaluate(matchup.env_id, factory(), held_out, env_kwargs=kwargs)
        rows += _rows(frame, key, factory.__name__, "principled", 0, matchup)
    return {"rows": rows}


def _train_and_score(
    matchup: Matchup,
    kwargs: dict[str, Any],
    key: dict[str, Any],
    held_out: range,
    algo: str,
    algo_kwargs: dict[str, Any] | None,
    total_timesteps: int,
    checkpoints: int,
    seed: int,
) -> dict[str, Any]:
    """Train ``algo`` with learning-curve checkpoints; score it on the held-out episodes."""
    score = functools.partial(_score, matchup.env_id, kwargs, matchup.objective, held_out[:5])
    callback = _callback(max(total_timesteps // checkpoints, 1), score)
    clock = time.perf_counter()
    model = train(
        matchup.env_id,
        algo,
        total_timesteps=total_timesteps,
        env_kwargs=kwargs,
        seed=seed,
        callback=callback,
        algo_kwargs=algo_kwargs,
        torch_threads=1,
    )
    seconds = time.perf_counter() - clock
    frame = evaluate(matchup.env_id, SB3Agent(model), held_out, env_kwargs=kwargs)
    return {
        "rows": _rows(frame, key, algo, "rl", model.num_timesteps, matchup,
                      train_seconds=seconds),
        "curves": [{**key, "agent": algo, "timesteps": t, "value": v}
                   for t, v in callback.points],
    }  # fmt: skip


def _score(
    env_id: str, env_kwargs: dict[str, Any], objective: str, seeds: range, model: Any
) -> float:
    """Mean ``objective`` of ``model`` over held-out ``seeds`` (a learning-curve point)."""
    frame = evaluate(env_id, SB3Agent(model), seeds, env_kwargs=env_kwargs)
    return float(frame[objective].mean())


def _rows(
    frame: pd.DataFrame,
    key: dict[str, Any],
    agent: str,
    kind: str,
    training_steps: int,
    matchup: Matchup,
    train_seconds: float = 0.0,
) -> list[dict[str, Any]]:
    """One row per scored episode; experience = training steps + the episode's own steps."""
    return [
        {**key, "agent": agent, "kind": kind, "seed": int(row["seed"]),
         "value": float(row[matchup.objective]),
         "experience": training_steps + int(row["steps"]),
         "train_seconds": train_seconds, "lower_is_better": matchup.lower_is_better}
        for _, row in frame.iterrows()
    ]  # fmt: skip


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Mean objective, its standard error and the experience, per (family, regime, agent)."""
    grouped = results.groupby(["family", "regime", "agent"], sort=False)
    table = grouped.agg(
        objective=("objective", "first"),
        mean=("value", "mean"),
        std=("value", "std"),
        episodes=("seed", "count"),
        experience=("experience", "first"),
        kind=("kind", "first"),
        lower_is_better=("lower_is_better", "first"),
        train_seconds=("train_seconds", "first"),
    ).reset_index()
    table["se"] = table["std"] / np.sqrt(table["episodes"])
    return table


def verdicts(table: pd.DataFrame) -> list[str]:
    """One line per (family, regime): the best RL agent against the best principled one."""
    lines = []
    for (family, regime), part in table.groupby(["family", "regime"], sort=False):
        sign = 1.0 if bool(part["lower_is_better"].iloc[0]) else -1.0
        best = {
            kind: part[part["kind"] == kind].sort_values("mean", key=lambda s: sign * s).iloc[0]
            for kind in ("rl", "principled")
            if (part["kind"] == kind).any()
        }
        if len(best) < 2:
            continue
        rl, principled = best["rl"], best["principled"]
        gap = sign * (rl["mean"] - principled["mean"])
        within = abs(gap) <= rl["se"] + principled["se"]
        verb = "ties" if within else ("beats" if gap < 0 else "loses to")
        lines.append(
            f"- {family}, {regime} world: {rl['agent']} ({rl['mean']:.4g} {rl['objective']}, "
            f"{int(rl['experience']):,} env steps) {verb} {principled['agent']} "
            f"({principled['mean']:.4g}, {int(principled['experience']):,} steps)"
            + (" (within one standard error each)" if within else "")
            + "."
        )
    return lines


def write_rl_report(
    results: pd.DataFrame,
    curves: pd.DataFrame,
    out_dir: str | Path,
    total_timesteps: int,
    minutes: float | None = None,
) -> RLResult:
    """Write ``results.csv``, ``curves.csv``, ``report.md`` and a learning-curve PNG."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "results.csv", out / "curves.csv", out / "report.md", out / "learning.png"]
    results.to_csv(files[0], index=False)
    curves.to_csv(files[1], index=False)
    table = summary(results)
    shown = pd.DataFrame(
        {
            "family": table["family"],
            "regime": table["regime"],
            "agent": table["agent"],
            "objective": [f"{o} ({'lower' if low else 'higher'} is better)"
                          for o, low in zip(table["objective"], table["lower_is_better"],
                                            strict=True)],
            "mean ± s.e.": [f"{m:.4g} ± {s:.2g}" for m, s in zip(table["mean"], table["se"],
                                                                  strict=True)],
            "experience (env steps)": table["experience"].map("{:,}".format),
            "training (s)": table["train_seconds"].map(lambda s: f"{s:.0f}" if s else ""),
        }
    )  # fmt: skip
    episodes = int(table["episodes"].min()) if len(table) else 0
    lines = [
        "# osfb-bench rl-vs-bandit",
        "",
        f"RL agents trained for {total_timesteps:,} env steps each; every agent scored on the "
        f"same {episodes} held-out episodes (seeds {HELD_OUT}..)"
        + (f"; {minutes:.1f} minutes in all" if minutes is not None else "")
        + ".",
        "",
        shown.to_markdown(index=False),
        "",
        "## Verdicts",
        "",
        *verdicts(table),
        "",
        f"![learning curves]({files[3].name})",
        "",
    ]
    report = "\n".join(lines)
    files[2].write_text(report)
    plot_learning(table, curves, files[3])
    return RLResult(results=results, curves=curves, report=report, files=files)


def plot_learning(table: pd.DataFrame, curves: pd.DataFrame, path: Path) -> Path:
    """Plot each RL agent's objective against training steps; principled agents as lines.

    One row of panels per family, one column per regime.
    """
    families = list(dict.fromkeys(table["family"]))
    regimes = list(dict.fromkeys(table["regime"]))
    figure, axes = panels(max(len(families), 1), max(len(regimes), 1), width=5.0, height=3.2,
                          dpi=90)  # fmt: skip
    styles = ("--", ":", "-.")
    for row, family in zip(axes, families, strict=False):
        for axis, regime in zip(row, regimes, strict=False):
            part = table[(table["family"] == family) & (table["regime"] == regime)]
            principled = part[part["kind"] == "principled"]
            for i, line in enumerate(principled.itertuples()):
                axis.axhline(line.mean, linestyle=styles[i % len(styles)], linewidth=1.2,
                             color=f"C{i + 2}", label=f"{line.agent} (one episode)")  # fmt: skip
            if len(curves):
                mine = curves[(curves["family"] == family) & (curves["regime"] == regime)]
                for j, (agent, points) in enumerate(mine.groupby("agent", sort=False)):
                    axis.plot(points["timesteps"], points["value"], marker="o", color=f"C{j}",
                              label=str(agent))  # fmt: skip
            axis.set_title(f"{family}, {regime} world", fontsize=9)
            axis.set_xlabel("training env steps")
            axis.set_ylabel(str(part["objective"].iloc[0]) if len(part) else "")
            axis.legend(fontsize=7)
    return save(figure, path)
