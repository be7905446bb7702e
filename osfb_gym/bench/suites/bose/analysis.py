"""The report of ``bose-services``: the engine's stored rows -> tables, a figure and prose."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from osfb_gym.bench.report import Report, curves_over_seeds, plot_curves, save_report
from osfb_gym.bench.suites.bose import verdicts
from osfb_gym.bench.sweep import SweepSpec

MATCH_K = 5  # "five AcQUIre services match about 30 uniform ones" (MovieLens)
FLOORED = ("linear predictors", "census", "MovieLens")  # populations whose loss keeps a floor
MEAN_SEM = "{mean:.4g} ± {sem:.2g}"  # a cell of the loss tables
#: the report's names of the agents not called by their class's name
NAMES = {
    "MaxLossGreedy": "Greedy",
    "FairAcQUIre": "Fair AcQUIre",
    "GroupBalancedUniform": "Group-balanced uniform",
}


def frames(rows: pd.DataFrame, suite: Any) -> dict[str, pd.DataFrame]:
    """Return the engine's rows as the report's frames: curves, references, fairness, dynamics."""
    rows = _named(rows)
    key = ["setting", "seed", "agent"]
    curves = rows[rows["measurement"] == "curves"]
    names = {"curve_t": "k"} | {f"curve_{n}": n for n in ("total_loss", "excess_loss", "fairness")}
    long = curves[key + list(names)].explode(list(names), ignore_index=True).rename(columns=names)
    long = long.astype(dict.fromkeys(names.values(), float) | {"k": int})
    acquire = curves[curves["agent"] == "AcQUIre"]  # one reference per world
    ks = {f"reference_loss_k{k}": k for k in suite.reference_ks}
    wide = acquire.set_index(["setting", "seed"])[list(ks)].rename(columns=ks)
    references = wide.rename_axis(columns="k").stack().rename("reference_loss").reset_index()
    fair = rows[rows["measurement"] == "fairness"].dropna(axis=1, how="all")  # its groups only
    groups = sorted(int(c.rsplit("_", 1)[1]) for c in fair if c.startswith("curve_group_loss_"))
    at_k = {"fairness": fair["curve_fairness"]}
    at_k |= {f"group {g}": fair[f"curve_group_loss_{g}"] for g in groups}
    parts = [
        fair[key].assign(k=k, **{n: v.str[k - 1] for n, v in at_k.items()}) for k in suite.fair_ks
    ]
    fairness = pd.concat(parts).sort_index(kind="stable").reset_index(drop=True)  # row, then k
    dynamics = rows[rows["measurement"] == "dynamics"].reset_index(drop=True)
    dynamics = dynamics[key].assign(
        after_initialisation=dynamics["loss_before_dynamics"],
        after_dynamics=dynamics["loss_after_dynamics"],
    )
    return {"curves": long, "references": references, "fairness": fairness, "dynamics": dynamics}


def _named(rows: pd.DataFrame) -> pd.DataFrame:
    """Return the engine's rows with the report's keys: population as ``setting``, agent names."""
    rows = rows.reset_index(drop=True)  # in order: the fairness rows are sorted by it
    return rows.assign(
        setting=rows["population"],
        seed=rows["seed"].astype(int),
        agent=rows["agent"].replace(NAMES),
    )


def group_names(spec: SweepSpec) -> dict[str, tuple[str, ...]]:
    """Return the names of the census groups per fairness population (public env metadata)."""
    names = {}
    for env in spec.envs:
        if env.tags["measurement"] == "fairness" and env.kwargs.get("population") == "census":
            with gym.make(env.id, **env.kwargs) as made:
                names[env.tags["population"]] = made.unwrapped.group_names  # type: ignore[attr-defined]
    return names


def match_per_seed(curves: pd.DataFrame, k: int, column: str = "excess_loss") -> pd.DataFrame:
    """Per setting, over seeds (paired worlds): the fewest uniform services matching AcQUIre at k.

    A seed where no uniform k up to the largest matches is censored: counted as ``K + 1``.

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
        uniform = wide["Uniform"].sort_index(axis=1)
        below = uniform.le(wide[("AcQUIre", k)], axis=0).to_numpy()
        first = uniform.columns.to_numpy()[np.argmax(below, axis=1)]
        counts = np.where(below.any(axis=1), first, largest + 1)
        q1, median, q3 = np.percentile(counts, [25, 50, 75])
        rows.append(
            {
                "setting": setting,
                "seeds": len(counts),
                "median": median,
                "quartiles": f"{q1:g}-{q3:g}",
                "range": f"{counts.min()}-{counts.max()}",
                "censored": int((counts > largest).sum()),
            }
        )
    return pd.DataFrame(rows)


def _stats(frame: pd.DataFrame, keys: list[str], column: str, text: str = MEAN_SEM) -> pd.Series:
    """Return ``text`` of each group's mean, standard error and max of ``column`` (in order)."""
    stats = frame.groupby(keys, sort=False)[column].agg(["mean", "sem", "max"])
    return stats.apply(lambda row: text.format(**row), axis=1)


def _markdown(frame: pd.DataFrame) -> str:
    return frame.reset_index().to_markdown(index=False)


def _by_k(curves: pd.DataFrame, column: str, text: str = MEAN_SEM) -> str:
    """Return a markdown table of :func:`_stats` per (setting, agent), a column per k."""
    return _markdown(_stats(curves, ["setting", "agent", "k"], column, text).unstack("k"))


def write_report(
    rows: pd.DataFrame,
    spec: SweepSpec,
    suite: Any,
    out_dir: str | Path,
    skipped: Sequence[str] = (),
) -> Report:
    """Write the frames (CSV), the figure and ``report.md`` from the engine's rows."""
    tables = frames(rows, suite)
    curves, references, fairness, dynamics = tables.values()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figure = _plot(rows, out / "total_loss.png")
    top, names = suite.max_services, group_names(spec)
    picked = curves[curves["k"].isin({1, MATCH_K, 10, 20, top})]
    joined = curves.merge(references, on=["setting", "seed", "k"])
    joined["ratio"] = joined["total_loss"] / joined["reference_loss"]
    bounds = ", ".join(f"{np.log(k) + 2:.1f} at k={k}" for k in suite.reference_ks)
    verdict_page, tested = verdicts.build(curves, fairness, top)
    page = [
        f"# osfb-bench {suite.name}",
        suite.description,
        f"{len(suite.seeds)} seeds (one world each; every agent sees the same worlds); 500 users "
        "per synthetic population (subpopulations for linear predictors), 10 preference "
        "clusters of Dirichlet(1) shares; the census population is fixed by Adult. Census "
        "and linear populations report their loss (the paper's census protocol); the 'excess "
        "reports' and MovieLens settings report the excess over each subpopulation's own "
        "least-squares floor (Eq. 4), which the subpopulation knows from its own samples.",
        "## Total loss against k",
        f"Mean ± standard error over seeds of L(Theta_k) (plot: `{figure.name}`).",
        _by_k(picked, "total_loss"),
        "Linear-predictor subpopulations keep their OLS residual whatever the services; the "
        "excess loss (the total minus those residuals) shows what acquisition changes:",
        _by_k(picked[picked["setting"].str.startswith(FLOORED)], "excess_loss"),
        f"Uniform services needed to match {MATCH_K} AcQUIre services (the paper: about 30 on "
        "MovieLens), on the excess loss (the total where there is no floor). Per seed, on the "
        f"same world: median, quartiles and range over seeds; `censored`: seeds where {top} "
        "uniform services did not match (counted as one more):",
        match_per_seed(curves, min(MATCH_K, top)).to_markdown(index=False, floatfmt=".3g"),
        "## Ratio to the reference optimum",
        f"Mean (max) over seeds of L / L_ref; L_ref is the best of {suite.reference_restarts} "
        "restarts of Lloyd-style alternating minimisation (KMeans for the squared family), "
        "solved by the episode metrics once per world: an upper bound on the optimum, so these "
        f"ratios are lower bounds on the true ones. Theorem 1's regime is O(log k); ln k + 2 is "
        f"{bounds}. Lower bounds cannot confirm an upper-bound theorem: the check against "
        "exact optima (tiny worlds, `python -m osfb_gym.bench.suites.bose.exact OUT`) is on "
        "docs/reproductions/bose-services.md.",
        _by_k(joined, "ratio", "{mean:.2f} ({max:.2f})"),
        *_fairness_and_dynamics(fairness, dynamics, names, suite),
        *verdicts.section(verdict_page, tested, names),
        *(["Skipped: " + "; ".join(skipped)] if skipped else []),
        "Env arguments per setting:",
        "\n".join(
            f"- `{env.label}`: `{json.dumps(env.kwargs, sort_keys=True)}`" for env in spec.envs
        ),
    ]
    page = [part for part in page if part]  # no census found: no names of its groups
    return save_report(out, "\n\n".join(page) + "\n", tables, [figure])


def _fairness_and_dynamics(
    fairness: pd.DataFrame, dynamics: pd.DataFrame, names: dict[str, Any], suite: Any
) -> list[str]:
    """Return the page's sections on fairness and on learning dynamics."""
    fair_means = fairness.groupby(["setting", "k", "agent"], sort=False).mean(numeric_only=True)
    fair_table = fair_means.drop(columns="seed").map(lambda v: "" if pd.isna(v) else f"{v:.4g}")
    dyn = dynamics.assign(change=dynamics["after_dynamics"] / dynamics["after_initialisation"] - 1)
    increases = int((dyn["after_dynamics"] > dyn["after_initialisation"] * (1 + 1e-9)).sum())
    dyn_table = pd.DataFrame(
        {
            "after initialisation": _stats(dyn, ["setting", "agent"], "after_initialisation"),
            "after dynamics": _stats(dyn, ["setting", "agent"], "after_dynamics"),
            "mean change": _stats(dyn, ["setting", "agent"], "change", "{mean:+.1%}"),
        }
    )
    return [
        "## Fairness",
        "Mean over seeds of each group's average loss and of the fairness objective (the "
        "largest of them, eq. 3). Fair AcQUIre (Algorithm 2) knows the groups; the baseline "
        "picks user i with probability proportional to 1/|G(i)| (Appendix E). The census is "
        "grouped by sex x race, and by sex and by race as the paper reports it.",
        _markdown(fair_table),
        "\n".join(
            f"Groups of {label}: " + ", ".join(f"{g} = {n}" for g, n in enumerate(group)) + "."
            for label, group in names.items()
        ),
        "AcQUIre against Uniform per group and on the fairness objective, paired by seed: "
        "section Verdicts (the paper: lower loss for every census group, 15-25% (sex) and "
        "7-25% (race) lower fairness objective).",
        "## Learning dynamics",
        f"k = {suite.dynamics_services} services, then up to {suite.dynamics_rounds} rounds "
        "(users re-choose, services refit; stop when the choices are stable). Mean ± s.e. of "
        f"the total loss. Episodes where the dynamics raised the loss: {increases} of "
        f"{len(dynamics)}.",
        _markdown(dyn_table),
    ]


def _plot(rows: pd.DataFrame, path: Path) -> Path:
    """Total loss against k, a panel per population: mean over seeds, band one s.e."""
    curves = _named(rows[rows["measurement"] == "curves"])
    return plot_curves(
        curves_over_seeds(curves, "curve_total_loss"),
        path,
        ylabel="total loss L(Theta_k)",
        xlabel="services k",
        log_x=False,
        log_y=True,
        columns=3,
        size=(4.6, 3.4),
        title_size=9,
    )
