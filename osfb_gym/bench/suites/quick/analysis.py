"""The fixed lending world's part of the ``quick`` page: per-run rows, the table, verdicts."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.report import mean_se
from osfb_gym.core.family import FAMILIES
from osfb_gym.stats import Page, best_of

__all__ = ["experience_rows", "experience_section", "experience_table", "experience_verdicts"]


def experience_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (agent, run, experience): the means over the run's scored episodes."""
    out = []
    for row in rows.itertuples():
        for point in row.points:
            out.append(
                {
                    "setting": row.setting,
                    "agent": row.agent,
                    "seed": row.seed,
                    "experience": int(point["budget"]),
                    FAMILIES["lending"].objective: float(np.mean(point["objective"])),
                    "episodes": len(point["objective"]),
                    **{k[len("mean_") :]: v for k, v in point.items() if k.startswith("mean_")},
                }
            )
    return pd.DataFrame(out)


def experience_table(frame: pd.DataFrame) -> str:
    """Return the fixed world's table: per experience, each agent's mean ± s.e. over runs."""
    family = FAMILIES["lending"]
    objective = f"{family.objective} (mean ± s.e.)"
    lines = []
    for (setting, experience, agent), group in frame.groupby(
        ["setting", "experience", "agent"], sort=False
    ):
        values = group[family.objective]
        lines.append(
            {
                "setting": setting,
                "experience (env steps)": f"{experience:,}",
                "agent": agent,
                objective: mean_se(float(values.mean()), float(values.sem())),
                **{c: round(float(group[c].mean()), 3) for c in family.columns if c in group},
                "runs": len(values),
            }
        )
    table = pd.DataFrame(lines)
    order = frame.drop_duplicates("agent")["agent"].tolist()
    table["_agent"] = table["agent"].map(order.index)
    table["_steps"] = [int(text.replace(",", "")) for text in table["experience (env steps)"]]
    table = table.sort_values(["_steps", "_agent"], kind="stable")
    return table.drop(columns=["_agent", "_steps"]).to_markdown(index=False)


def experience_verdicts(frame: pd.DataFrame) -> str:
    """Return the fixed world's verdicts: per experience, whether the lowest mean is clear.

    Every agent of a run plays the same world and the same scored episodes, so
    the agents are compared paired by run (:func:`osfb_gym.stats.best_of`, exact
    sign-flip tests), with Holm's correction over every comparison of the section.
    """
    objective = FAMILIES["lending"].objective
    page, labels = Page(), []
    for (setting, experience), group in frame.groupby(["setting", "experience"], sort=False):
        wide = group.pivot_table(objective, "seed", "agent", sort=False).dropna()
        if wide.shape[1] < 2:
            continue
        runs = {str(agent): wide[agent].to_numpy(float) for agent in wide}
        page.add_best(best_of(runs, lower_is_better=True))
        labels.append(f"{setting}, {experience:,} env steps")
    if not labels:
        return ""
    lines = [
        f"Verdicts ({objective}, paired by run: the same world and scored episodes for every "
        f"agent). {page.sentence}",
        "",
    ]
    for label, best in zip(labels, page.bests, strict=True):
        lines.append(f"- {label}: {best.text}")
        lines.extend(f"    - {verdict.text}" for verdict in best.comparisons)
    return "\n".join(lines)


def experience_section(
    frame: pd.DataFrame, steps: int, episodes: int, ppo: dict[str, Any], skipped: str | None
) -> str:
    """Return the fixed world's section of the page: what experience means, then the table."""
    n = steps
    text = (
        f"## lending, fixed world: {FAMILIES['lending'].objective} after equal experience "
        "(lower is better)\n\n"
    )
    if skipped:
        text += f"The PPO row was skipped: {skipped} (in a clone: pip install -e '.[rl]').\n\n"
    text += (
        "Experience: the env steps of the run's world an agent saw before each scored "
        "episode; every agent of a block had the same. "
    )
    if not skipped:
        text += (
            f"At {n:,}, PPO has trained for them ({json.dumps(ppo)}; it learns from "
            f"whole rollouts of {ppo['n_steps']} steps, so from the last complete one) "
            "and at 0 it is its untrained policy. "
        )
    text += (
        f"At {n:,}, Greedy and Adaptive have played them (episodes of the world, keeping what "
        "they learned), and each scored episode starts from that state; at 0 they learn "
        "within the scored episode only. A run is its own world (world_seed = seed) and "
        "training seed; a row is the mean ± s.e. over runs of each run's mean over its "
        f"{episodes} scored episodes (the same reset seeds for every agent).\n\n"
    )
    text += (
        "The fresh-world tables above describe means over seeds and name no winner; the "
        "fixed world's agents are compared by the tests below the table.\n\n"
    )
    verdicts = experience_verdicts(frame)
    return text + experience_table(frame) + (f"\n\n{verdicts}" if verdicts else "")
