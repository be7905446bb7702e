"""The one-screen report card of ``rl-vs-principled``: one score per capability, bsuite's manner.

Every score is read from the released rows (``scores.csv``, :mod:`.scores`): the
rows validation selected, at the largest budget N each side was trained to (the
run's, or RecurrentPPO's ``recurrent_budget`` where it stops earlier). A row's *skill* is
``clip(1 - normalised regret, 0, 1)``: 1 the oracle, 0 the best constant action or
worse. An algorithm's score on a capability is the mean skill over its runs of the
capability's (family, regime) cells; RL algorithms are pooled over their views (each
view's cells count), the principled side is the agent validation chose per cell and
budget. The capabilities (:data:`CAPABILITIES`):

exploring under one-sided feedback
    Lending and apple in the fixed world: the outcome shows only after an approval
    (or a taste), so learning the world needs decisions that pay to explore.
credit for hidden losses that arrive late
    Reject option, both regimes: the losses of unqueried decisions reach the
    reward only as one lump at the episode's end.
adapting within an episode to a new world
    Every family in the resampled regime: a new world each episode, so only
    learning within the episode helps.
planning in worlds with consequences
    The dynamic regime (delayed-impact lending, services with retention): decisions
    change the later population.
scale
    How much of the gap to the oracle experience closes: per cell, ``clip(1 - n_large
    / n_small, 0, 1)`` with ``n_small`` and ``n_large`` the mean normalised regret at
    the side's smallest and largest budget (cells with ``n_small <= 0`` skipped),
    averaged over every cell; needs two budgets.

A capability without rows says so ("no rows": its families or regime were not run).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from osfb_gym.bench.suites.tables import package_toml

#: capability -> which rows of scores.csv measure it
CAPABILITIES: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
    "exploring under one-sided feedback": lambda f: (
        f["family"].isin(["lending", "apple"]) & (f["regime"] == "fixed")
    ),
    "credit for hidden losses that arrive late": lambda f: f["family"] == "reject",
    "adapting within an episode to a new world": lambda f: f["regime"] == "resampled",
    "planning in worlds with consequences": lambda f: f["regime"] == "dynamic",
}
PRINCIPLED = "principled (validation-best)"
#: the page's words (``page.toml``)
PAGE: dict[str, str] = package_toml("osfb_gym.bench.suites.rl_vs_principled", "page.toml")


def sides(scores: pd.DataFrame, best: dict[tuple[str, str, int], str]) -> pd.DataFrame:
    """Return the selected rows named by side: the RL algorithm, or the chosen principled agent."""
    rows = scores[scores["selected"].astype(bool)]
    chosen = [
        best.get((f, r, int(b))) == a
        for f, r, b, a in rows[["family", "regime", "budget", "algorithm"]].itertuples(index=False)
    ]
    rows = rows[(rows["kind"] == "rl") | np.asarray(chosen, dtype=bool)]
    names = rows["algorithm"].str.split("+").str[0].where(rows["kind"] == "rl", PRINCIPLED)
    return rows.assign(side=names)


def largest_budgets(rows: pd.DataFrame) -> pd.Series:
    """Return each side's largest budget: the run's, or lower where the side stops earlier.

    RecurrentPPO stops at ``recurrent_budget`` (1e5 where the others train to 1e6): its
    card scores are read there, rather than left out.
    """
    return rows.groupby("side")["budget"].max()


def card_scores(scores: pd.DataFrame, best: dict[tuple[str, str, int], str]) -> pd.DataFrame:
    """Return the card: capabilities x sides, NaN where a capability has no rows.

    Each side is read at its own largest budget (:func:`largest_budgets`).
    """
    rows = sides(scores, best)
    rows = rows[rows["budget"] > 0]
    out: dict[str, dict[str, float]] = {}
    if rows.empty:
        return pd.DataFrame(index=[*CAPABILITIES, "scale"], dtype=float)
    largest = rows["side"].map(largest_budgets(rows))
    smallest = rows["side"].map(rows.groupby("side")["budget"].min())
    top = rows[rows["budget"] == largest]
    skill = (1.0 - top["normalised"]).clip(0.0, 1.0)
    for capability, which in CAPABILITIES.items():
        mask = which(top)
        out[capability] = skill[mask].groupby(top.loc[mask, "side"]).mean().to_dict()
    ends = rows[(rows["budget"] == smallest) | (rows["budget"] == largest)]
    ends = ends.assign(end=np.where(ends["budget"] == smallest.loc[ends.index], "small", "large"))
    keys = ["side", "family", "regime", "algorithm"]
    means = ends.pivot_table(index=keys, columns="end", values="normalised")
    out["scale"] = {}
    if {"small", "large"} <= set(means.columns):  # a side with one budget has no scale
        means = means[means["small"] > 0].dropna()
        closed = (1.0 - means["large"] / means["small"]).clip(0.0, 1.0)
        out["scale"] = closed.groupby(level="side").mean().to_dict()
    return pd.DataFrame(out).T.reindex([*CAPABILITIES, "scale"])


def card(scores: pd.DataFrame, best: dict[tuple[str, str, int], str]) -> list[str]:
    """Return the card's markdown: the table, then which capabilities have no rows."""
    table = card_scores(scores, best)
    budgets = sorted(b for b in scores["budget"].unique() if b > 0)
    top = f"N={budgets[-1]:,}" if budgets else "no budget"
    rows = sides(scores, best)
    largest = largest_budgets(rows[rows["budget"] > 0]) if budgets else pd.Series(dtype=int)
    earlier = [f"{side} at N={int(n):,}" for side, n in largest.items() if n < budgets[-1]]
    if earlier:
        top += f" ({', '.join(earlier)}: the largest it was trained to)"
    empty = [name for name, row in table.iterrows() if row.isna().all()]
    lines = [
        PAGE["card"].format(top=top),
        "",
        table.map(lambda v: "no rows" if pd.isna(v) else f"{v:.2f}").to_markdown()
        if len(table.columns)
        else "(no rows)",
        "",
    ]
    if empty:
        lines.append(f"No rows (not run): {', '.join(empty)}.")
    return lines
