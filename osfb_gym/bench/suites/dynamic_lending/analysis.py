"""The report of ``dynamic-lending``: per-seed measures, paired verdicts, the figure, the page."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.driver import RunInfo
from osfb_gym.bench.report import Report, band, colours, panels, save, save_report
from osfb_gym.bench.suites.dynamic_lending.settings import AGENTS, NAME, NAMES, WORLDS, Settings
from osfb_gym.bench.suites.tables import Claim, claims_table
from osfb_gym.stats import Page, Verdict, paired


def per_seed(rows: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (world, agent, seed): the measures the claims compare."""
    out = []
    for row_dict in rows.to_dict("records"):
        world = row_dict["setting"]
        _, _, low, _ = WORLDS[world]
        high = 1 - low
        last = {g: float(np.asarray(row_dict[f"curve_mean_score_{g}"])[-1]) for g in (low, high)}
        change = {g: float(row_dict[f"score_change_{g}"]) for g in (low, high)}
        out.append(
            {
                "world": world,
                "agent": NAMES.get(row_dict["agent"], row_dict["agent"]),
                "seed": int(row_dict["seed"]),
                "approval_disadvantaged": row_dict[f"approval_rate_{low}"],
                "approval_advantaged": row_dict[f"approval_rate_{high}"],
                "tpr_gap": row_dict["tpr_gap"],
                "score_change_disadvantaged": row_dict[f"score_change_{low}"],
                "score_change_advantaged": row_dict[f"score_change_{high}"],
                "final_score_gap": last[high] - last[low],
                "initial_score_gap": (last[high] - change[high]) - (last[low] - change[low]),
                "profit": row_dict["return"],
                "loans": row_dict["n_revealed"],
            }
        )
    return pd.DataFrame(out)


def _pairs(frame: pd.DataFrame, world: str, column: str) -> tuple[np.ndarray, np.ndarray]:
    wide = frame[frame["world"] == world].pivot_table(column, "seed", "agent")
    return wide["equal-opportunity"].to_numpy(), wide["max-reward"].to_numpy()


def verdicts(frame: pd.DataFrame, worlds: Sequence[str]) -> tuple[Page, list[dict[str, Any]]]:
    """Add each world's claims' paired tests to one page; return it and what each one tests."""
    page, tested = Page(), []
    eo, mr = "equal-opportunity", "max-reward"
    for world in worlds:
        tests = [
            ("lends more to the disadvantaged group", "approval_disadvantaged", False, eo),
            ("per-step EO leaves an aggregate TPR gap", "tpr_gap", None, "gap > 0"),
            ("disadvantaged group's mean score ends lower", "score_change_disadvantaged", False,
             mr),
            ("score gap between the groups ends wider", "final_score_gap", False, eo),
            ("the bank earns less", "profit", False, mr),
        ]  # fmt: skip
        for what, column, lower, expected in tests:
            a, b = _pairs(frame, world, column)
            if lower is None:  # one agent against 0: is EO's aggregate gap above zero?
                verdict = paired(a, np.zeros_like(a), lower_is_better=False, names=(eo, "0"))
                expected = eo
            else:
                verdict = paired(a, b, lower_is_better=lower, names=(eo, mr))
            index = page.add(verdict)
            tested.append(
                {"world": world, "what": what, "index": index, "expected": expected,
                 "column": column}
            )  # fmt: skip
    return page, tested


#: the findings of D'Amour et al. (2020) and ml-fairness-gym's lending docs, by claim
FINDINGS = {
    "lends more to the disadvantaged group": (
        "The EO agent lends more to the disadvantaged group than max-reward",
        "'the EO agent overlends to the disadvantaged group (group 2, which initially has a "
        "lower average credit score)'",
    ),
    "per-step EO leaves an aggregate TPR gap": (
        "Equalising TPR at each step does not equalise it over the run",
        "'enforcing equalized TPR between groups at each step does not equalize TPR in "
        "aggregate over the simulation'",
    ),
    "disadvantaged group's mean score ends lower": (
        "Under EO the disadvantaged group's mean credit score ends lower than under max-reward",
        "overlending lowers group 2's credit scores (Fig. of final credit distributions; "
        "paraphrased from issue 35)",
    ),
    "score gap between the groups ends wider": (
        "Under EO the gap between the groups' mean credit scores ends wider than under max-reward",
        "the credit gap grows (paraphrased from issue 35; not checked against the text)",
    ),
    "the bank earns less": (
        "EO costs the bank profit: max-reward's cumulative profit is higher",
        None,
    ),
}


def claims(page: Page, tested: list[dict[str, Any]], frame: pd.DataFrame) -> list[Claim]:
    """One claim per (world, finding): the Holm-adjusted verdict decides whether it holds."""
    found = []
    resolved = page.verdicts
    for item in tested:
        verdict: Verdict = resolved[item["index"]]
        claim, paper = FINDINGS[item["what"]]
        means = frame[frame["world"] == item["world"]].groupby("agent")[item["column"]].mean()
        measured = ", ".join(f"{agent} {value:.4g}" for agent, value in means.items())
        holds = verdict.winner == item["expected"]
        why = ""
        if not holds:
            why = "no winner within noise" if verdict.winner is None else "the other way round"
        found.append(
            Claim(
                f"{item['world']}: {claim}",
                paper,
                f"mean over seeds: {measured}. {verdict.text}",
                holds,
                why,
            )
        )
    return found


def figure(rows: pd.DataFrame, worlds: Sequence[str], path: Path) -> Path:
    """Each world's groups' mean score over time, per agent (mean over seeds, band ±1 s.e.)."""
    fig, axes = panels(1, len(worlds), width=5.0, height=3.6)
    palette = colours(NAMES[a] for a in AGENTS)
    for axis, world in zip(axes[0], worlds, strict=True):
        _, _, low, names = WORLDS[world]
        part = rows[rows["setting"] == world]
        for agent in AGENTS:
            mine = part[part["agent"] == agent]
            t = np.asarray(mine["curve_t"].iloc[0])
            for g, style in ((1 - low, "-"), (low, "--")):
                runs = np.stack([np.asarray(c, dtype=float) for c in mine[f"curve_mean_score_{g}"]])
                error = runs.std(axis=0, ddof=1) / np.sqrt(len(runs)) if len(runs) > 1 else 0.0
                band(
                    axis, t, runs.mean(axis=0), error, colour=palette[NAMES[agent]],
                    label=f"{NAMES[agent]}, {names[g]}", style=style,
                )  # fmt: skip
        axis.set_title(f"{world}: mean credit score per group", fontsize=9)
        axis.set_xlabel("step (one applicant each)")
        axis.set_ylabel("mean score" if world == "fico" else "mean cluster (0-6)")
        axis.legend(fontsize=7)
    return save(fig, path, title="dynamic-lending: mean over seeds, band ±1 s.e.")


def report(stored: Sequence[pd.DataFrame], settings: Settings, run: RunInfo) -> Report:
    """Write the claims (paired over seeds), the per-agent table and the figure."""
    rows, out, worlds = stored[0], run.out, list(settings.worlds)
    skipped = [
        f"{name}: {why} (pass --data-home or set OSFB_DATA)" for name, why in run.missing.items()
    ]
    frame = per_seed(rows)
    page, tested = verdicts(frame, worlds)
    found = claims(page, tested, frame)
    plot = figure(rows, worlds, out / "mean_scores.png")
    summary = frame.groupby(["world", "agent"], sort=False).agg(["mean", "sem"])
    summary = summary.drop(columns="seed")
    table = pd.DataFrame(
        {
            column: [f"{m:.4g} ± {s:.2g}" for m, s in summary[column].to_numpy()]
            for column in dict.fromkeys(c for c, _ in summary.columns)
        },
        index=summary.index,
    )
    text = _page(settings, skipped, page.sentence, claims_table(found), table, plot.name)
    results = rows.drop(columns=[c for c in rows if c.startswith("curve_")])
    report = save_report(out, text, {"results": results, "per_seed": frame}, [plot])
    report.tables["claims"] = found
    report.tables["rows"] = rows
    return report


def _page(
    settings: Settings,
    skipped: list[str],
    sentence: str,
    claims_text: str,
    table: pd.DataFrame,
    plot: str,
) -> str:
    """Return the page: the setting, what was not run, the claims, the per-agent table."""
    worlds = settings.worlds
    lines = [
        f"# osfb-bench {NAME}",
        "",
        f"Max-reward (`MaxProfit`) against equal-opportunity (`EqualOpportunity`) lenders on "
        f"DelayedImpactLending-v0, {settings.seeds} seeds, {settings.horizon} steps of one "
        f"applicant each, burn-in {settings.burnin} steps; both agents learn repayment from "
        "the loans they make (ml-fairness-gym's agents are oracles that know it). Worlds: "
        + ", ".join(worlds)
        + ".",
        "",
        *(["Not run: " + "; ".join(skipped) + ".", ""] if skipped else []),
        "## Claims",
        "",
        sentence + " Each verdict pairs the two agents by seed (the same applicants until "
        "their decisions differ); 'gap > 0' tests equal-opportunity's aggregate TPR gap "
        "against zero.",
        "",
        claims_text,
        "",
        "## Per agent (mean ± s.e. over seeds)",
        "",
        "approval rates are the share of each group's applicants approved; score changes "
        "are in FICO points (fico) or clusters (bin_shift); the score gap is the advantaged "
        "group's mean score minus the disadvantaged group's.",
        "",
        table.reset_index().to_markdown(index=False),
        "",
        f"![mean scores]({plot})",
        "",
    ]
    return "\n".join(lines)
