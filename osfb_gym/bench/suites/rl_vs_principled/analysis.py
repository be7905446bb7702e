"""The report of ``rl-vs-principled``: stored rows -> tables, figures and verdicts (markdown)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.report import Report, band, colours, panels, save, save_report
from osfb_gym.bench.suites.rl_vs_principled.protocol import (
    NAME,
    PROTOCOL_VERSION,
    SENSITIVITY_BASE,
    Protocol,
    scored,
)
from osfb_gym.bench.suites.rl_vs_principled.scores import (
    best_principled,
    normalise,
    tidy,
    undefined_runs,
)
from osfb_gym.bench.suites.tables import package_toml
from osfb_gym.core.family import family_of
from osfb_gym.stats import ALPHA, Page, paired
from osfb_gym.stats import aggregates as stats
from osfb_gym.stats.paired import min_p_paired, pairs_needed

#: the page's words (``page.toml`` beside this module), filled in below
PAGE: dict[str, str] = package_toml("osfb_gym.bench.suites.rl_vs_principled", "page.toml")


def _ci(values: pd.Series, statistic: str = "iqm", digits: str = ".3g") -> str:
    """Return ``value [low, high]`` over the defined values (NaN: undefined, :func:`normalise`)."""
    values = values.dropna()
    if values.empty:
        return "undefined"
    value, low, high = stats.interval(values.to_numpy(), statistic)
    return f"{value:{digits}} [{low:{digits}}, {high:{digits}}]"


def _per_budget(rows: pd.DataFrame, column: str, *how: str) -> dict[str, str]:
    """Return the ``N=..`` cells of a table: :func:`_ci` of ``column`` at each budget."""
    return {f"N={n:,}": _ci(values, *how) for n, values in rows.groupby("budget")[column]}


def _signal(agent: str, family: str, configs: pd.Series) -> str:
    """Return what an agent learns from; an RL agent's gamma, or "by budget" where it differs."""
    if "+" not in agent:
        return "revealed outcomes (info['feedback'])"
    lump = " (hidden losses as one lump at the episode end)" if family == "reject" else ""
    gammas = {json.loads(config).get("gamma") for config in configs}
    gamma = f"={gammas.pop()}" if len(gammas) == 1 else " as chosen at each budget"
    return f"env reward, gamma{gamma}{lump}"


def _chosen(configs: pd.Series) -> str:
    """Return the configuration chosen at each budget, the budgets of one configuration together."""
    budgets: dict[str, list[int]] = {}
    for budget, config in configs.items():
        budgets.setdefault(str(config), []).append(int(budget))
    return "; ".join(
        f"N={', '.join(f'{n:,}' for n in found)}: {config}" for config, found in budgets.items()
    )


def _markdown(table: dict[str, dict[str, str]], first: list[str]) -> str:
    """Return ``table`` (agent -> column -> text) as markdown, ``first`` columns first.

    Blank where an agent has no value (RecurrentPPO past its cap).
    """
    frame = pd.DataFrame.from_dict(table, orient="index")
    columns = [c for c in first if c in frame] + [c for c in frame if c not in first]
    return frame.reindex(columns=columns).fillna("").to_markdown()


def _tables(frame: pd.DataFrame, top: int) -> tuple[list[str], list[str]]:
    """Return the deployment and total-regret tables, one per (family, regime)."""
    deployment, total = [], []
    for (family, regime), part in frame.groupby(["family", "regime"], sort=False):
        table, totals = {}, {}
        budgets = [f"N={n:,}" for n in sorted(part["budget"].unique())]
        for agent, rows in part.groupby("agent", sort=False):
            last = rows[rows["budget"] == top]
            configs = rows[rows["budget"] > 0].groupby("budget")["config"].first()
            table[agent] = {
                **_per_budget(rows, "normalised"),
                f"mean at N={top:,}": _ci(last["normalised"], "mean") if len(last) else "",
                "objective (mean)": f"{last['objective'].mean():.4g}" if len(last) else "",
                "training signal": _signal(str(agent), family, configs),
                "chosen on validation": _chosen(configs),
            }
            totals[agent] = _per_budget(rows[rows["budget"] > 0], "total_regret", "mean", ".4g")
        const = part.groupby("seed")[["constant_objective", "oracle"]].first().mean()
        objective = family_of(part["env_id"].iloc[0]).objective
        deployment += [
            f"### {family}, {regime} world ({objective}: best constant "
            f"{const['constant_objective']:.4g}, oracle {const['oracle']:.4g})",
            "",
            _markdown(table, budgets),
            "",
        ]
        total += [f"### {family}, {regime} world", "", _markdown(totals, budgets), ""]
    return deployment, total


def _described(protocol: Protocol, *keys: str) -> dict[str, Any]:
    """Return the words of a page's header that describe ``protocol``, and ``keys`` as set."""
    p = protocol
    return {
        **{key: getattr(p, key) for key in ("episodes", "horizon", "validation_seeds", *keys)},
        "version": PROTOCOL_VERSION,
        "families": ", ".join(p.families),
        "regimes": ", ".join(p.regimes),
        "fixed_views": "/".join(p.fixed_views),
        "resampled_views": "/".join(p.resampled_views),
        "budgets": ", ".join(f"{b:,}" for b in p.budgets),
    }


def _header(protocol: Protocol, validation: pd.DataFrame, test: pd.DataFrame) -> list[str]:
    p, minutes = protocol, (test["seconds"].sum() + validation["seconds"].sum()) / 60
    words = PAGE["header"].format(
        **_described(p, "seeds", "tuning"),
        algos=", ".join(p.algos) or "none (principled side only)",
        learning_rate=list(p.learning_rate) or "default",
        n_steps=list(p.n_steps),
        ent_coef=list(p.ent_coef),
    )
    if "RecurrentPPO" in p.algos and p.budgets_of("RecurrentPPO") != p.budgets_of("PPO"):
        capped = "recurrent_cap" if p.budgets_of("RecurrentPPO") else "recurrent_none"
        words += " " + PAGE[capped].format(cap=p.recurrent_budget)
    cost = PAGE["cost"].format(validation=len(validation), test=len(test), minutes=minutes)
    return [f"# osfb-bench {NAME}", "", words, cost, ""]


def report(test: pd.DataFrame, validation: pd.DataFrame, protocol: Protocol, out: Path) -> Report:
    """Write ``points.csv``, ``scores.csv``, ``rl-vs-principled.md`` and figures into ``out``."""
    from osfb_gym.bench.suites.rl_vs_principled.card import card

    everything = normalise(test, validation)
    frame = everything[everything["selected"]]
    best = best_principled(scored(validation))
    top = max(protocol.budgets)
    curves = {
        "curves": ("normalised", "normalised regret (IQM, 95% CI)", "iqm"),
        "total_regret": ("total_normalised", "total regret / constant's (mean, 95% CI)", "mean"),
    }
    figures = [plot_curves(frame, out / f"rl_vs_principled_{n}.png", *c) for n, c in curves.items()]
    figures.append(plot_profiles(frame, best, top, out / "rl_vs_principled_profiles.png"))
    deployment, total = _tables(frame, top)
    lines = [
        *_header(protocol, validation, test),
        "## Report card",
        "",
        *card(tidy(everything), best),
        "",
        "## Verdicts",
        "",
        *verdicts(frame, best),
        "",
        PAGE["verdicts_note"],
        "",
        "## Deployment score after N env steps of experience",
        "",
        PAGE["deployment"],
        "",
        *_undefined(everything),
        *deployment,
        "## Total regret over the N + T steps each agent consumed",
        "",
        PAGE["total"],
        "",
        *total,
        *sensitivity_table(validation),
        "## Figures",
        "",
        *[f"![{path.stem}]({path.name})" for path in figures],
        "",
    ]
    points = everything.drop(columns=[c for c in everything if c.startswith("mean_")])
    tables = {"points": points, "scores": tidy(everything)}
    return save_report(out, "\n".join(lines), tables, figures)


def _undefined(frame: pd.DataFrame) -> list[str]:
    """Say which runs have no normalised regret (:func:`.scores.undefined_runs`), if any."""
    gone = undefined_runs(frame)
    if gone.empty:
        return []
    runs = len(frame[["family", "regime", "seed"]].drop_duplicates())
    which = "; ".join(
        f"{family}, {regime}: run {', '.join(str(r) for r in part['run'])}"
        for (family, regime), part in gone.groupby(["family", "regime"], sort=False)
    )
    return [PAGE["undefined"].format(count=len(gone), runs=runs, which=which), ""]


def sensitivity_table(validation: pd.DataFrame) -> list[str]:
    """PPO's sensitivity runs: mean normalised validation regret per setting and budget.

    Normalised by the constant actions of ``validation`` (:func:`.scores.normalise`);
    no section without sensitivity runs.
    """
    rows = normalise(validation, validation) if len(validation) else pd.DataFrame()
    rows = rows[(rows["purpose"] == "sensitivity") & (rows["budget"] > 0)] if len(rows) else rows
    if not len(rows):
        return []
    base = SENSITIVITY_BASE
    varied = [
        ", ".join(f"{k}={v:g}" for k, v in json.loads(c).items() if k in base and v != base[k])
        or "base"
        for c in rows["config"]
    ]
    table = rows.assign(setting=varied).pivot_table(
        index=["family", "regime", "agent", "setting"],
        columns="budget",
        values="normalised",
        sort=False,
    )
    table.columns = [f"N={n:,}" for n in table.columns]
    table = table.astype(object).where(table.notna(), None).reset_index()  # None: not run
    return [
        "## PPO's sensitivity (validation runs)",
        "",
        PAGE["sensitivity"],
        "",
        table.to_markdown(floatfmt=".3g", index=False),
        "",
    ]


def sensitivity_report(validation: pd.DataFrame, protocol: Protocol, out: Path) -> Report:
    """Write the page of ``sensitivity=only``: the table, and its runs' ``scores.csv``.

    ``scores.csv`` has the columns of the full protocol's (:func:`.scores.tidy`), one row
    per sensitivity run and checkpoint, none of them selected.
    """
    points = normalise(validation, validation)
    points = points[points["purpose"] == "sensitivity"].reset_index(drop=True)
    words = PAGE["sensitivity_header"].format(
        **_described(protocol, "n_envs"),
        cells=len(validation),
        minutes=validation["seconds"].sum() / 60,
    )
    lines = [
        f"# osfb-bench {NAME}: PPO's sensitivity",
        "",
        words,
        "",
        *sensitivity_table(validation),
    ]
    tables = {"points": points, "scores": tidy(points)}
    return save_report(out, "\n".join(lines), tables)


def verdicts(frame: pd.DataFrame, best: dict[tuple[str, str, int], str]) -> list[str]:
    """One line per (family, regime, budget, RL agent): against the validation-best principled.

    Paired by run: run s of RL and of the principled agent play the same
    held-out episodes (the same reset seeds, so the same worlds in every
    regime), so each verdict is an exact sign-flip test of the per-run
    differences of normalised regret at that budget, with Holm's correction
    over the page's verdicts, every budget's (:class:`osfb_gym.stats.Page`).
    A winner is named only where the test rejects; with 5 runs it never can
    (smallest two-sided p 0.0625).
    """
    page, cells = Page(), []
    keys = ["family", "regime", "budget"]
    for (family, regime, budget), part in frame[frame["budget"] > 0].groupby(keys, sort=False):
        principled = best.get((family, regime, budget))
        if principled is None:
            continue
        theirs = part[part["agent"] == principled].set_index("seed")["normalised"]
        for agent, rows in part[part["kind"] == "rl"].groupby("agent", sort=False):
            both = pd.concat([rows.set_index("seed")["normalised"], theirs], axis=1, join="inner")
            x, y = both.dropna().sort_index().to_numpy().T
            if not len(x):  # no run with a defined score on both sides
                continue
            names = (str(agent), str(principled))
            index = page.add(paired(x, y, lower_is_better=True, names=names))
            cells.append((family, regime, int(budget), names, x, y, index))
    found, lines, words = page.verdicts, [], []
    for family, regime, budget, (agent, principled), x, y, index in cells:
        verdict = found[index]
        if verdict.winner is not None:
            word = "RL better" if verdict.winner == agent else "principled better"
        else:
            word = "tie (within noise)" if verdict.can_reject else f"cannot tell at n={len(x)}"
        words.append((family, regime, budget, agent, word))
        lines.append(
            f"- {family}, {regime}, N={budget:,}: {agent} mean {x.mean():.3g} (IQM "
            f"{stats.iqm(x):.3g}) vs {principled} {y.mean():.3g} (IQM {stats.iqm(y):.3g}), "
            f"normalised regret; {verdict.text}: **{word}**."
        )
    power = _power(page.size, len(cells) and len(cells[0][4]))
    return [*who_won(words), *lines, "", page.sentence, "", power]


def who_won(words: list[tuple[str, str, int, str, str]]) -> list[str]:
    """Return the verdicts as one table ((cell, budget) x algorithm) and where the answer depends.

    A row is a (family, regime, budget), a column an algorithm; where an algorithm saw
    several views in a row, each verdict is prefixed by its view's label. The answer of
    a (family, regime) cell depends on the algorithm, the view or the budget when its
    verdicts differ between two rows that differ only in that.
    """
    if not words:
        return []
    frame = pd.DataFrame(words, columns=["family", "regime", "budget", "agent", "word"])
    frame["algorithm"] = frame["agent"].str.split("+").str[0]
    frame["view"] = frame["agent"].str.split("+").str[1]
    row = ["family", "regime", "budget"]
    views = frame.groupby([*row, "algorithm"])["view"].transform("nunique")
    frame["shown"] = frame["word"].where(views == 1, frame["view"] + ": " + frame["word"])
    table = frame.pivot_table(index=row, columns="algorithm", values="shown", aggfunc="; ".join)
    table.index = [f"{family}, {regime}, N={budget:,}" for family, regime, budget in table.index]
    depends = []
    for (family, regime), part in frame.groupby(["family", "regime"], sort=False):
        what = [
            name
            for name, fixed in (
                ("the algorithm", ["view", "budget"]),
                ("the view", ["algorithm", "budget"]),
                ("the budget", ["algorithm", "view"]),
            )
            if (part.groupby(fixed)["word"].nunique() > 1).any()
        ]
        if what:
            depends.append(f"- {family}, {regime}: the verdict depends on {', '.join(what)}.")
    return [
        table.fillna("").to_markdown(),
        "",
        *(depends or ["No cell's verdict depends on the algorithm, the view or the budget."]),
        "",
    ]


def _power(comparisons: int, runs: int) -> str:
    """Say how many runs a cell needs before its verdict can name a winner on this page."""
    if comparisons == 0:
        return ""
    return PAGE["power"].format(
        runs=runs,
        min_p=min_p_paired(runs),
        comparisons=comparisons,
        alpha=ALPHA,
        needed=pairs_needed(comparisons),
    )


def steps_label(steps: int) -> str:
    """Return a budget as an axis shows it: ``0``, ``10k``, ``1M``.

    >>> [steps_label(n) for n in (0, 500, 10_000, 1_000_000)]
    ['0', '500', '10k', '1M']
    """
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if steps >= size:
            return f"{steps / size:g}{suffix}"
    return str(int(steps))


def plot_curves(frame: pd.DataFrame, path: Path, column: str, label: str, statistic: str) -> Path:
    """Per family (rows) and regime (columns): ``column`` against N, CI bands, every agent.

    An algorithm has one colour in every panel (PPO+O0 and PPO+O2 alike) and a view one
    marker (:func:`_styles`); RL is drawn solid, principled agents dashed. A (family,
    regime) the run has no rows for (apple has no dynamic world) stays blank.
    """
    styles = _styles(frame["agent"])
    families, regimes = (list(dict.fromkeys(frame[key])) for key in ("family", "regime"))
    figure, axes = panels(len(families), len(regimes), width=4.6, height=3.2, dpi=90)
    drawn = set()
    for (family, regime), part in frame.groupby(["family", "regime"], sort=False):
        axis = axes[families.index(family), regimes.index(regime)]
        drawn.add(axis)
        for agent, rows in part.groupby("agent", sort=False):
            if column == "total_normalised":
                rows = rows[rows["budget"] > 0]
            rows = rows.dropna(subset=[column])  # undefined runs (scores.normalise)
            if rows.empty:
                continue
            cis = rows.groupby("budget")[column].agg(stats.interval, statistic)
            value, low, high = np.array(cis.tolist()).T
            colour, marker = styles[str(agent)]
            band(
                axis,
                cis.index,
                value,
                colour=colour,
                label=agent,
                bounds=(low, high),
                style="-" if "+" in str(agent) else "--",
                marker=marker,
            )
        ticks = sorted(part["budget"].unique())
        positive = [t for t in ticks if t > 0]
        if positive and max(positive) >= 10 * min(positive):  # 1e4..1e6: a log axis past 0
            axis.set_xscale("symlog", linthresh=min(positive))
        axis.set_xticks(ticks, [steps_label(t) for t in ticks])
        _symlog(axis.yaxis, axis.set_yscale, LINTHRESH, (1, 2, 5))
        # no regret below the oracle's: no negative half of the axis (a panel whose runs
        # are all undefined has no line)
        lowest = [np.nanmin(line.get_ydata()) for line in axis.get_lines()]
        if lowest and min(lowest) >= 0:
            axis.set_ylim(bottom=0.0)
        axis.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
        axis.set_title(f"{family}, {regime} world", fontsize=9)
        axis.set_xlabel("N (env steps of experience)")
        axis.set_ylabel(label + " (symlog)", fontsize=7)
        axis.legend(fontsize=6)
    for axis in set(axes.flat) - drawn:
        axis.set_axis_off()
    return save(figure, path)


#: a view's marker on the figures: one algorithm's views share its colour and differ in shape
VIEW_MARKERS = {"O0": "o", "O1": "s", "O2": "^"}


def _styles(agents: Iterable[Any]) -> dict[str, tuple[str, str]]:
    """Return each agent's colour and marker: a colour per algorithm, a marker per view.

    ``"PPO+O2"`` is PPO on the feedback view; a principled agent (no ``+``) gets a circle.

    >>> _styles(["PPO+O0", "Greedy", "PPO+O2"])
    {'PPO+O0': ('C0', 'o'), 'Greedy': ('C1', 'o'), 'PPO+O2': ('C0', '^')}
    """
    names = [str(agent) for agent in dict.fromkeys(agents)]
    palette = colours(name.partition("+")[0] for name in names)
    return {
        name: (palette[name.partition("+")[0]], VIEW_MARKERS.get(name.partition("+")[2], "o"))
        for name in names
    }


#: the linear range of the figures' symlog axes: below it, regrets are near the oracle's 0
LINTHRESH = 0.01


def _symlog(axis: Any, set_scale: Any, linthresh: float, subs: tuple[float, ...]) -> None:
    """Put ``axis`` on a symlog scale with ticks at ``subs`` of each decade, read as numbers.

    The oracle's 0, small regrets and the best constant's 1 all stay readable; with
    ``subs`` (1, 2, 5) a panel that spans less than a decade (0.5-1) still has ticks.
    """
    from matplotlib.ticker import FuncFormatter, SymmetricalLogLocator

    set_scale("symlog", linthresh=linthresh)
    axis.set_major_locator(SymmetricalLogLocator(base=10, linthresh=linthresh, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


def plot_profiles(
    frame: pd.DataFrame, best: dict[tuple[str, str, int], str], top: int, path: Path
) -> Path:
    """Per regime: the fraction of runs with normalised regret <= tau, tasks = families.

    Each RL agent against the validation-best principled agent of each family.
    """
    last = frame[frame["budget"] == top]
    keys = zip(last["family"], last["regime"], [top] * len(last), strict=True)
    principled = last["agent"] == [best.get(key) for key in keys]
    last = last[principled | (last["kind"] == "rl")]
    names = last["agent"].where(last["kind"] == "rl", "principled (validation-best)")
    last = last.assign(name=names)
    styles = _styles(last["name"])
    figure, axes = panels(1, last["regime"].nunique(), width=4.6, height=3.2, dpi=90)
    # from the oracle's 0 to past the constant's 1, dense where good agents differ (1e-3..1e-1)
    taus = np.concatenate([[0.0], np.geomspace(LINTHRESH / 10, 1.5, 60)])
    for axis, (regime, part) in zip(axes[0], last.groupby("regime", sort=False), strict=True):
        for name, rows in part.groupby("name", sort=False):
            runs = rows.pivot(index="seed", columns="family", values="normalised").dropna()
            matrix = runs[rows["family"].unique()].to_numpy()  # the families in order
            value, low, high = stats.performance_profile(matrix, taus, lower_is_better=True)
            count = matrix.shape[1]
            label = f"{name} ({count} {'family' if count == 1 else 'families'})"
            colour, marker = styles[str(name)]
            band(
                axis, taus, value, colour=colour, label=label, bounds=(low, high),
                marker=marker, markevery=6, markersize=4,
            )  # fmt: skip
        _symlog(axis.xaxis, axis.set_xscale, LINTHRESH / 10, (1,))
        axis.set_title(f"{regime} world, N={top:,}", fontsize=9)
        axis.set_xlabel("tau (normalised regret, symlog)")
        axis.set_ylabel("fraction of runs with regret <= tau", fontsize=7)
        axis.legend(fontsize=6)
    return save(figure, path)
