"""The report of ``rl-vs-principled``: stored rows -> tables, figures and verdicts (markdown)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench import stats
from osfb_gym.bench.report import Report, band, colours, panels, save, save_report
from osfb_gym.bench.suites.rl_vs_principled import NAME, Protocol, choose, scored
from osfb_gym.core.family import FAMILIES

KEYS = ["family", "regime", "seed"]
READING = (
    "Each verdict compares a run of RL with a run of the principled agent chosen on "
    "validation (probability of improvement over the 5 runs, bootstrap 95% CI): a CI "
    "above 0.5 is an RL win, below 0.5 a principled win. In a resampled world a "
    "principled agent starts every episode afresh, so its score does not depend on N. "
    "The oracle of reject option is Chow's rule's expected risk, which an episode's "
    "realised risk can undercut by chance (normalised regrets slightly below 0); apple's "
    "oracle value is 0, a lower bound (its oracle does not expose the Bayes decision)."
)


def normalise(test: pd.DataFrame) -> pd.DataFrame:
    """Return the test points with normalised regret and total regret over N + T steps.

    Normalised: ``(metric - oracle) / (best constant - oracle)``, 0 the oracle, 1 the
    best constant action (chosen per run on the test episodes).
    """
    constants = []
    for row in test[test["agent"] == "constant"].itertuples():
        sign = 1 if FAMILIES[row.setting].lower_is_better else -1
        best = min(row.constants, key=lambda c: np.mean(c["objective"]) * sign)  # noqa: B023
        constants.append({"family": row.setting, "regime": json.loads(row.params)["regime"],
                          "seed": row.seed, "constant": json.dumps(best["action"]),
                          "constant_objective": float(np.mean(best["objective"])),
                          "constant_regret": float(np.mean(best["regret"]))})  # fmt: skip
    frame = scored(test).merge(pd.DataFrame(constants), on=KEYS)
    span = frame["constant_objective"] - frame["oracle"]
    frame["normalised"] = (frame["objective"] - frame["oracle"]) / span
    frame["total_regret"] = frame["train_regret"] + frame["regret"]
    episodes = frame["budget"] / frame["steps_per_episode"] + 1
    frame["total_normalised"] = frame["total_regret"] / (episodes * frame["constant_regret"])
    return frame


def _ci(values: Any, statistic: str = "iqm", digits: str = ".3g") -> str:
    value, low, high = stats.interval(np.asarray(values), statistic)
    return f"{value:{digits}} [{low:{digits}}, {high:{digits}}]"


def _signal(agent: str, family: str, config: str) -> str:
    if "+" not in agent:
        return "revealed outcomes (info['feedback'])"
    lump = " (hidden losses as one lump at the episode end)" if family == "reject" else ""
    return f"env reward, gamma={json.loads(config).get('gamma')}{lump}"


def _intro(protocol: Protocol) -> str:
    p = protocol
    return (
        f"Families {', '.join(p.families)}; regimes {', '.join(p.regimes)} (fixed: run s plays "
        f"world s, its own training seed); RL views fixed {'/'.join(p.fixed_views)}, resampled "
        f"{'/'.join(p.resampled_views)} (O0 plain, O1 estimator features, O2 feedback); "
        f"algorithms {', '.join(p.algos)}; budgets N = {', '.join(f'{b:,}' for b in p.budgets)} "
        f"env steps; {p.seeds} runs per cell; {p.episodes} held-out episodes of {p.horizon} "
        f"steps; hyperparameters chosen on {p.validation_seeds} validation run(s) (worlds and "
        "episode seeds apart from the test ones): RL at the smallest budget over gamma x "
        f"n_steps {list(p.n_steps)} x ent_coef {list(p.ent_coef)}, the principled agents' "
        "grids at the largest. Principled agents get the same N steps: in a fixed world they "
        "keep their state across episodes."
    )


def report(test: pd.DataFrame, validation: pd.DataFrame, protocol: Protocol, out: Path) -> Report:
    """Write ``points.csv``, ``rl-vs-principled.md`` and the figures into ``out``."""
    frame = normalise(test)
    chosen = choose(scored(validation))
    principled = chosen[chosen["kind"] == "principled"].sort_values("regret")
    best = {(p.family, p.regime): p.agent
            for p in principled.groupby(["family", "regime"]).head(1).itertuples()}  # fmt: skip
    top = max(protocol.budgets)
    figures = [plot_curves(frame, out / "rl_vs_principled_curves.png", "normalised",
                           "normalised regret (IQM, 95% CI)", "iqm"),
               plot_curves(frame, out / "rl_vs_principled_total_regret.png", "total_normalised",
                           "total regret / constant's (mean, 95% CI)", "mean"),
               plot_profiles(frame, best, top, out / "rl_vs_principled_profiles.png")]  # fmt: skip
    minutes = (test["seconds"].sum() + validation["seconds"].sum()) / 60
    lines = [f"# osfb-bench {NAME}", "", _intro(protocol),
             f"{len(validation)} validation and {len(test)} test cells, {minutes:.0f} "
             "worker-minutes (wall time of the cells, summed).", "",
             "## Verdicts", "", *verdicts(frame, best, top), "", READING, "",
             "## Deployment score after N env steps of experience", "",
             "Normalised regret of the held-out episodes, (metric - oracle) / (best constant "
             "- oracle): 0 is the oracle, 1 the best constant policy, lower is better. IQM "
             "over runs [stratified bootstrap 95% CI]; the last column is the mean.",
             ""]  # fmt: skip
    groups = list(frame.groupby(["family", "regime"], sort=False))
    for (family, regime), part in groups:
        table = {}
        for agent, rows in part.groupby("agent", sort=False):
            last, config = rows[rows["budget"] == top], rows["config"].iloc[0]
            table[agent] = {
                **{f"N={n:,}": _ci(rows[rows["budget"] == n]["normalised"])
                   for n in sorted(rows["budget"].unique())},
                f"mean at N={top:,}": _ci(last["normalised"], "mean"),
                "objective (mean)": f"{last['objective'].mean():.4g}",
                "training signal": _signal(str(agent), family, config),
                "chosen on validation": config,
            }  # fmt: skip
        const = part.groupby("seed")[["constant_objective", "oracle"]].first().mean()
        lines += [f"### {family}, {regime} world ({FAMILIES[family].objective}: best constant "
                  f"{const['constant_objective']:.4g}, oracle {const['oracle']:.4g})", "",
                  pd.DataFrame(table).T.to_markdown(), ""]  # fmt: skip
    lines += ["## Total regret over the N + T steps each agent consumed", "",
              "Regret of the N training / warm-up steps plus one held-out episode of T steps "
              "(mean over runs [95% CI]), in the family's units. The figure divides it by the "
              "best constant policy's regret over the same N + T steps.", ""]  # fmt: skip
    for (family, regime), part in groups:
        table = {agent: {f"N={n:,}": _ci(rows[rows["budget"] == n]["total_regret"], "mean", ".4g")
                         for n in sorted(rows["budget"].unique()) if n > 0}
                 for agent, rows in part.groupby("agent", sort=False)}  # fmt: skip
        lines += [f"### {family}, {regime} world", "", pd.DataFrame(table).T.to_markdown(), ""]
    lines += ["## Figures", "", *[f"![{p.stem}]({p.name})" for p in figures], ""]
    points = frame.drop(columns=[c for c in frame if c.startswith("mean_")])
    return save_report(out, f"{NAME}.md", "\n".join(lines), {"points": points}, figures)


def verdicts(frame: pd.DataFrame, best: dict[tuple[str, str], str], top: int) -> list[str]:
    """One line per (family, regime): each RL view against the validation-best principled agent."""
    lines = []
    last = frame[frame["budget"] == top]
    for (family, regime), part in last.groupby(["family", "regime"], sort=False):
        principled = best.get((family, regime))
        if principled is None:
            continue
        y = part[part["agent"] == principled].sort_values("seed")["normalised"].to_numpy()
        for agent, rows in part[part["kind"] == "rl"].groupby("agent", sort=False):
            x = rows.sort_values("seed")["normalised"].to_numpy()
            p, low, high = stats.probability_of_improvement(x, y, lower_is_better=True)
            word = ("RL better" if low > 0.5 else "principled better" if high < 0.5
                    else "no clear winner")  # fmt: skip
            lines.append(
                f"- {family}, {regime}, N={top:,}: {agent} IQM {stats.iqm(x):.3g} vs "
                f"{principled} {stats.iqm(y):.3g} (normalised regret); P({agent} better) = "
                f"{p:.2f} [{low:.2f}, {high:.2f}]: {word}."
            )
    return lines


def plot_curves(frame: pd.DataFrame, path: Path, column: str, label: str, statistic: str) -> Path:
    """Per family (rows) and regime (columns): ``column`` against N, CI bands, every agent.

    An agent has one colour in every panel; RL is drawn solid, principled agents dashed.
    """
    families, regimes = list(dict.fromkeys(frame["family"])), list(dict.fromkeys(frame["regime"]))
    palette = colours(frame["agent"])
    figure, axes = panels(len(families), len(regimes), width=4.6, height=3.2, dpi=90)
    for (family, regime), axis in zip(
            [(f, r) for f in families for r in regimes], axes.ravel(), strict=True):  # fmt: skip
        part = frame[(frame["family"] == family) & (frame["regime"] == regime)]
        for agent, rows in part.groupby("agent", sort=False):
            budgets = [b for b in sorted(rows["budget"].unique())
                       if b > 0 or column != "total_normalised"]  # fmt: skip
            value, low, high = np.array([stats.interval(rows[rows["budget"] == b][column]
                                                        .to_numpy(), statistic)
                                         for b in budgets]).T  # fmt: skip
            band(axis, budgets, value, colour=palette[agent], label=agent, bounds=(low, high),
                 style="-" if "+" in str(agent) else "--", marker="o")  # fmt: skip
        ticks = sorted(part["budget"].unique())
        axis.set_xticks(ticks, [f"{t / 1000:g}k" if t else "0" for t in ticks])
        # symlog: the oracle's 0, the best constant's 1 and small regrets all readable
        axis.set_yscale("symlog", linthresh=0.01)
        axis.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        axis.set_title(f"{family}, {regime} world", fontsize=9)
        axis.set_xlabel("N (env steps of experience)")
        axis.set_ylabel(label + " (symlog)", fontsize=7)
        axis.legend(fontsize=6)
    return save(figure, path)


def plot_profiles(frame: pd.DataFrame, best: dict[tuple[str, str], str], top: int,
                  path: Path) -> Path:  # fmt: skip
    """Per regime: the fraction of runs with normalised regret <= tau, tasks = families."""
    last = frame[frame["budget"] == top]
    regimes = list(dict.fromkeys(last["regime"]))
    figure, axes = panels(1, len(regimes), width=4.6, height=3.2, dpi=90)
    taus = np.linspace(0.0, 1.5, 31)
    runs: dict[str, dict[str, list[pd.Series]]] = {regime: {} for regime in regimes}
    for regime in regimes:
        for family, rows in last[last["regime"] == regime].groupby("family", sort=False):
            for agent, sub in rows.groupby("agent", sort=False):
                if "+" in str(agent) or agent == best.get((family, regime)):
                    name = str(agent) if "+" in str(agent) else "principled (validation-best)"
                    runs[regime].setdefault(name, []).append(sub.sort_values("seed")["normalised"])
    palette = colours(name for names in runs.values() for name in names)
    for axis, regime in zip(axes[0], regimes, strict=True):
        for name, columns in runs[regime].items():
            n = min(len(c) for c in columns)
            matrix = np.column_stack([np.asarray(c)[:n] for c in columns])
            value, low, high = stats.performance_profile(matrix, taus, lower_is_better=True)
            label = f"{name} ({matrix.shape[1]} families)"
            band(axis, taus, value, colour=palette[name], label=label, bounds=(low, high))
        axis.set_title(f"{regime} world, N={top:,}", fontsize=9)
        axis.set_xlabel("tau (normalised regret)")
        axis.set_ylabel("fraction of runs with regret <= tau", fontsize=7)
        axis.legend(fontsize=6)
    return save(figure, path)
