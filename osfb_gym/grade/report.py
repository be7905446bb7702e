"""The grader's report: the table, the paired verdicts, the hint and the plot."""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.core.family import Family
from osfb_gym.stats import ALPHA, Placement, place

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


#: per family, where a submission that a constant policy beats usually goes wrong
TIPS = {
    "lending": (
        "is your score on the scale of the cutoff c (a least-squares fit needs an intercept "
        "column: lending.md, step 1), and do you deny the applicants scored below it?"
    ),
    "apple": "does action 1 taste, and do you learn from the tasted examples' labels?",
    "reject": "are the decision codes right (0 predicts -1, 1 rejects, 2 predicts +1)?",
    "services": "do you pick users by their reported losses, and not the same one twice?",
}


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


def verdict_sentence(results: pd.DataFrame, yours: str, family: Family) -> str:
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


def hint_line(
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
    tip = f": {TIPS[family.name]}" if family.name in TIPS else "."
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


def write_plot(
    results: pd.DataFrame, curves: dict[str, np.ndarray], family: Family, path: Path
) -> Path:
    """Write the report's figure to ``path``: the loss curves and the objective per agent."""
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
