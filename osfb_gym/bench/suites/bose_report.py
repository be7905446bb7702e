"""The report of ``bose-services``: stored rows -> tables, a figure and the paper's claims.

Everything here reads the frames :func:`osfb_gym.bench.suites.bose.tables`
builds from the engine's store; nothing runs an episode or reads an oracle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.plots import panels, save

MATCH_K = 5  # "five AcQUIre services match about 30 uniform ones" (MovieLens)
LINEAR = ("linear predictors", "census", "MovieLens")  # labels whose loss keeps a floor


@dataclass
class BoseResult:
    """What a run produced: the per-episode tables, the report and the files."""

    curves: pd.DataFrame
    references: pd.DataFrame
    fairness: pd.DataFrame
    dynamics: pd.DataFrame
    report: str
    files: list[Path]


def uniform_services_to_match(
    curves: pd.DataFrame, k: int = MATCH_K, column: str = "total_loss"
) -> pd.DataFrame:
    """Per setting: the fewest uniform services whose mean loss is at most AcQUIre's at ``k``.

    Examples
    --------
    >>> frame = pd.DataFrame({"setting": "s", "seed": 0,
    ...     "agent": ["AcQUIre"] * 3 + ["Uniform"] * 3, "k": [1, 2, 3] * 2,
    ...     "total_loss": [9.0, 4.0, 2.0, 9.0, 6.0, 3.5]})
    >>> uniform_services_to_match(frame, k=2)["uniform_services"].tolist()
    ['3']
    """
    mean = curves.groupby(["setting", "agent", "k"], sort=False)[column].mean()
    rows = []
    for setting in curves["setting"].unique():
        target = mean[(setting, "AcQUIre", k)]
        uniform = mean[setting]["Uniform"]
        matched = uniform[uniform <= target]
        text = str(int(matched.index.min())) if len(matched) else f"> {int(uniform.index.max())}"
        rows.append({"setting": setting, f"AcQUIre loss at k={k}": target,
                     "uniform_services": text})  # fmt: skip
    return pd.DataFrame(rows)


def match_per_seed(
    curves: pd.DataFrame, k: int = MATCH_K, column: str = "excess_loss"
) -> pd.DataFrame:
    """Per setting, over seeds (paired worlds): the fewest uniform services matching AcQUIre at k.

    A seed where no uniform k up to the largest matches counts as ``> K``
    (censored); the median and quartiles treat it as ``K + 1``.

    Examples
    --------
    >>> frame = pd.DataFrame({"setting": "s", "seed": [0] * 6 + [1] * 6,
    ...     "agent": (["AcQUIre"] * 3 + ["Uniform"] * 3) * 2, "k": [1, 2, 3] * 4,
    ...     "excess_loss": [9, 4, 2, 9, 6, 3.5, 9, 4, 2, 9, 3, 1.0]})
    >>> match_per_seed(frame, k=2)[["median", "range", "censored"]].to_dict("records")
    [{'median': 2.5, 'range': '2-3', 'censored': 0}]
    """
    rows = []
    for setting, part in curves.groupby("setting", sort=False):
        wide = part.pivot_table(index="seed", columns=["agent", "k"], values=column)
        largest = int(part["k"].max())
        target = wide[("AcQUIre", k)]
        uniform = wide["Uniform"].sort_index(axis=1)
        below = uniform.le(target, axis=0).to_numpy()
        first = uniform.columns.to_numpy()[np.argmax(below, axis=1)]
        counts = np.where(below.any(axis=1), first, largest + 1)
        q1, median, q3 = np.percentile(counts, [25, 50, 75])
        rows.append({"setting": setting, "seeds": len(counts), "median": median,
                     "quartiles": f"{q1:g}-{q3:g}", "range": f"{counts.min()}-{counts.max()}",
                     "censored": int((counts > largest).sum())})  # fmt: skip
    return pd.DataFrame(rows)


def _mean_sem(frame: pd.DataFrame, keys: list[str], column: str) -> pd.Series:
    grouped = frame.groupby(keys, sort=False)[column]
    return grouped.mean().map("{:.4g}".format) + " ± " + grouped.sem().map("{:.2g}".format)


def curve_table(
    curves: pd.DataFrame, ks: Sequence[int], column: str = "total_loss"
) -> pd.DataFrame:
    """Mean ± s.e. of ``column`` at ``ks``: a row per (setting, agent)."""
    picked = curves[curves["k"].isin(ks)]
    return _mean_sem(picked, ["setting", "agent", "k"], column).unstack("k").reset_index()


def ratio_table(curves: pd.DataFrame, references: pd.DataFrame) -> pd.DataFrame:
    """Mean (max) ratio of each agent's loss to the reference, per setting and k."""
    joined = curves.merge(references, on=["setting", "seed", "k"])
    joined["ratio"] = joined["total_loss"] / joined["reference_loss"]
    grouped = joined.groupby(["setting", "agent", "k"], sort=False)["ratio"]
    text = grouped.mean().map("{:.2f}".format) + " (" + grouped.max().map("{:.2f}".format) + ")"
    return text.unstack("k").reset_index()


def group_claims(fairness: pd.DataFrame, names: dict[str, tuple[str, ...]]) -> list[str]:
    """Per grouped population and k: groups where AcQUIre beats Uniform, fairness improvement."""
    lines = []
    mean = fairness.groupby(["setting", "k", "agent"], sort=False).mean(numeric_only=True)
    for setting in fairness["setting"].unique():
        labels = names.get(setting)
        parts = []
        for k in sorted(fairness["k"].unique()):
            acq, uni = mean.loc[(setting, k, "AcQUIre")], mean.loc[(setting, k, "Uniform")]
            groups = [c for c in acq.index if c.startswith("group ") and pd.notna(acq[c])]
            worse = [c for c in groups if acq[c] >= uni[c]]
            named = [labels[int(c.split()[1])] if labels else c for c in worse]
            gain = 1 - acq["fairness"] / uni["fairness"]
            parts.append(f"k = {k}: lower for {len(groups) - len(worse)} of {len(groups)} groups"
                         + (f" (not {', '.join(named)})" if named else "")
                         + f", fairness objective {abs(gain):.0%} "
                         + ("lower" if gain > 0 else "higher"))  # fmt: skip
        lines.append(f"- {setting}: " + "; ".join(parts) + ".")
    return lines


def plot_curves(curves: pd.DataFrame, path: Path, column: str, ylabel: str) -> Path:
    """One panel per setting: mean over seeds against k, band one standard error."""
    settings = list(curves["setting"].unique())
    columns = min(3, len(settings))
    figure, grid = panels(-(-len(settings) // columns), columns, width=4.6, height=3.4)
    axes = grid.ravel()
    for axis, setting in zip(axes, settings, strict=False):
        part = curves[curves["setting"] == setting]
        for agent, runs in part.groupby("agent", sort=False):
            stats = runs.groupby("k")[column].agg(["mean", "sem"])
            axis.plot(stats.index, stats["mean"], label=agent)
            axis.fill_between(stats.index, stats["mean"] - stats["sem"].fillna(0),
                              stats["mean"] + stats["sem"].fillna(0), alpha=0.25)  # fmt: skip
        axis.set_yscale("log")
        axis.set_xlabel("services k")
        axis.set_ylabel(ylabel)
        axis.set_title(setting, fontsize=9)
        axis.legend(fontsize=8)
    for axis in axes[len(settings) :]:
        axis.set_visible(False)
    return save(figure, path)


def write_report(
    suite: Any,
    out_dir: str | Path,
    frames: dict[str, pd.DataFrame],
    skipped: Sequence[str] = (),
    group_names: dict[str, tuple[str, ...]] | None = None,
    env_kwargs: dict[str, str] | None = None,
) -> BoseResult:
    """Lay out the tables and the claims as measured, and write every file."""
    curves, references = frames["curves"], frames["references"]
    fairness, dynamics = frames["fairness"], frames["dynamics"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = ("curves.csv", "references.csv", "fairness.csv", "dynamics.csv", "total_loss.png",
             "report.md")  # fmt: skip
    files = [out / name for name in names]
    for frame, path in zip((curves, references, fairness, dynamics), files, strict=False):
        frame.to_csv(path, index=False)
    plot_curves(curves, files[4], "total_loss", "total loss L(Theta_k)")
    top = suite.max_services
    ks = sorted({1, MATCH_K, 10, 20, top} & set(range(1, top + 1)))
    match_k = min(MATCH_K, top)
    paired = curves.pivot_table(index=["setting", "seed", "k"], columns="agent",
                                values="total_loss").reset_index()  # fmt: skip
    last = paired[paired["k"] == top]
    wins = (last["AcQUIre"] < last["Uniform"]).groupby(last["setting"], sort=False).mean()
    fair_table = (
        fairness.groupby(["setting", "k", "agent"], sort=False).mean(numeric_only=True)
        .drop(columns="seed").map(lambda v: "" if pd.isna(v) else f"{v:.4g}").reset_index()
    )  # fmt: skip
    dyn = dynamics.assign(change=dynamics["after_dynamics"] / dynamics["after_initialisation"] - 1)
    increases = int((dyn["after_dynamics"] > dyn["after_initialisation"] * (1 + 1e-9)).sum())
    dyn_table = pd.DataFrame({
        "after initialisation": _mean_sem(dyn, ["setting", "agent"], "after_initialisation"),
        "after dynamics": _mean_sem(dyn, ["setting", "agent"], "after_dynamics"),
        "mean change": dyn.groupby(["setting", "agent"], sort=False)["change"].mean()
        .map("{:+.1%}".format),
    }).reset_index()  # fmt: skip
    floors = curves[curves["setting"].str.startswith(LINEAR)]
    report = [
        f"# osfb-bench {suite.name}", "", suite.description, "",
        f"{len(suite.seeds)} seeds (one world each; every agent sees the same worlds); 500 users "
        "per synthetic population (subpopulations for linear predictors), 10 preference "
        "clusters of Dirichlet(1) shares; the census population is fixed by Adult. Census "
        "and linear populations report their loss (the paper's census protocol); the 'excess "
        "reports' and MovieLens settings report the excess over each subpopulation's own "
        "least-squares floor (Eq. 4), which the subpopulation knows from its own samples.",
        "", "## Total loss against k", "",
        f"Mean ± standard error over seeds of L(Theta_k) (plot: `{files[4].name}`).", "",
        curve_table(curves, ks).to_markdown(index=False), "",
        f"AcQUIre's final loss (k = {top}) is below Uniform's on the same world in this share "
        "of seeds: " + ", ".join(f"{s}: {v:.0%}" for s, v in wins.items()) + ".", "",
        "Linear-predictor subpopulations keep their OLS residual whatever the services; the "
        "excess loss (the total minus those residuals) shows what acquisition changes:", "",
        curve_table(floors, ks, "excess_loss").to_markdown(index=False), "",
        f"Uniform services needed to match {MATCH_K} AcQUIre services (the paper: about 30 on "
        "MovieLens), on the excess loss (the total where there is no floor). Per seed, on the "
        f"same world: median, quartiles and range over seeds; `censored`: seeds where {top} "
        "uniform services did not match (counted as one more):", "",
        match_per_seed(curves, match_k).to_markdown(index=False, floatfmt=".3g"), "",
        "The same on the mean curves over seeds:", "",
        uniform_services_to_match(curves, match_k, "excess_loss").to_markdown(
            index=False, floatfmt=".4g"), "",
        "## Ratio to the reference optimum", "",
        f"Mean (max) over seeds of L / L_ref; L_ref is the best of {suite.reference_restarts} "
        "restarts of Lloyd-style alternating minimisation (KMeans for the squared family), "
        "solved by the episode metrics once per world: an upper bound on the optimum, so these "
        "ratios are lower bounds on the true ones. Theorem 1's regime is O(log k); ln k + 2 is "
        + ", ".join(f"{np.log(k) + 2:.1f} at k={k}" for k in suite.reference_ks) + ".", "",
        ratio_table(curves, references).to_markdown(index=False), "",
        "## Fairness", "",
        "Mean over seeds of each group's average loss and of the fairness objective (the "
        "largest of them, eq. 3). Fair AcQUIre (Algorithm 2) knows the groups; the baseline "
        "picks user i with probability proportional to 1/|G(i)| (Appendix E). The census is "
        "grouped by sex x race, and by sex and by race as the paper reports it.", "",
        fair_table.to_markdown(index=False), "",
        *(f"Groups of {label}: " + ", ".join(f"{g} = {n}" for g, n in enumerate(group))
          + "." for label, group in (group_names or {}).items()), "",
        "AcQUIre against Uniform per group (means over seeds; the paper: lower loss for every "
        "census group, 15-25% (sex) and 7-25% (race) lower fairness objective):", "",
        *group_claims(fairness, group_names or {}), "",
        "## Learning dynamics", "",
        f"k = {suite.dynamics_services} services, then up to {suite.dynamics_rounds} rounds "
        "(users re-choose, services refit; stop when the choices are stable). Mean ± s.e. of "
        f"the total loss. Episodes where the dynamics raised the loss: {increases} of "
        f"{len(dynamics)}.", "",
        dyn_table.to_markdown(index=False),
    ]  # fmt: skip
    if skipped:
        report += ["", "Skipped: " + "; ".join(skipped)]
    if env_kwargs:
        report += ["", "Env arguments per setting:", ""]
        report += [f"- `{label}`: `{kwargs}`" for label, kwargs in env_kwargs.items()]
    text = "\n".join(report) + "\n"
    files[5].write_text(text)
    return BoseResult(curves, references, fairness, dynamics, text, files)
