"""Shah and Manwani (2020): DSOL, DRAL and DSAL on Phishing and Guide, Figures 5-6.

Two stages on the engine (the selection of ``gamma`` on validation seeds, then the
reported runs) and a report: a table at ``T`` with DSOL's risk after as many labels
as each active learner asked, the paper's five panels per ``d`` and its claims. The
protocol and where it differs from the paper: docs/reproductions/shah.md.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agents.reject import DRAL, DSAL, DSOL
from osfb_gym.bench.report import (
    Claim,
    Report,
    band,
    cell,
    claims_table,
    colours,
    datasets_found,
    panels,
    save,
    save_report,
    subset,
    tuned,
)
from osfb_gym.bench.run import run_cells
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec

ENV_ID = "RejectOption-v0"
LEARNERS = {"DSOL": DSOL, "DRAL": DRAL, "DSAL": DSAL}
TUNED = ("DSOL", "DSAL")  # the double sigmoid learners, whose gamma is selected
CURVES = ("risk", "query_rate", "misclassification_rate", "rejection_rate", "n_queries")
CURVE_LABELS = {"risk": "average risk", "query_rate": "fraction of labels asked",
                "misclassification_rate": "misclassification rate",
                "rejection_rate": "rejection rate"}  # fmt: skip
WORDS = CURVE_LABELS | {"average_risk": "risk"}  # a metric's name in the claims
CURVE_STRIDE = 50  # curves are stored every this many trials (and at the last)
#: the engine's identity and trajectory columns of a row, not metrics
ENGINE_COLUMNS = ("key", "setting", "env_id", "env_kwargs", "agent", "params", "seed",
                  "total_reward", "revealed_total", "seconds")  # fmt: skip


@dataclass(frozen=True)
class ShahSuite:
    """The grid: ``datasets`` x ``d_values`` x learners x ``seeds``, ``horizon`` trials each.

    ``kernels`` maps a dataset to a scikit-learn kernel (else linear);
    ``gammas`` is the double sigmoid grid (one value: no selection stage),
    selected on ``tune_seeds``.
    """

    name: str = "shah-reject"
    description: str = (
        "Shah & Manwani (2020), Figures 5-6: DSOL, DRAL and DSAL on phishing (linear) and "
        "guide (polynomial kernel), d in {0.1, 0.25, 0.4}, 100 runs of T = 10,000."
    )
    datasets: tuple[str, ...] = ("phishing", "guide")
    d_values: tuple[float, ...] = (0.1, 0.25, 0.4)
    seeds: tuple[int, ...] = tuple(range(100))
    horizon: int = 10_000
    kernels: dict[str, str] = field(default_factory=lambda: {"guide": "poly"})
    gammas: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0)
    tune_seeds: tuple[int, ...] = tuple(range(10_000, 10_010))


def run_shah(
    suite: str | ShahSuite, out_dir: str | Path, *, datasets: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None, horizon: int | None = None,
    gammas: Sequence[float] | None = None, data_home: str | None = None, **engine: Any,
) -> Report:  # fmt: skip
    """Run ``suite`` (narrowed by ``datasets``, ``seeds``, ``horizon``, ``gammas``); report it.

    A name means the paper's suite (:class:`ShahSuite`'s defaults). Both stages run on the
    engine: ``engine`` goes to :func:`osfb_gym.bench.run.run_cells` (``workers``,
    ``executor``, ``resume``, ...).
    """
    suite = ShahSuite() if isinstance(suite, str) else suite
    if gammas is not None:
        suite = dataclasses.replace(suite, gammas=tuple(float(g) for g in gammas))
    names = subset(datasets, suite.datasets, f"datasets of {suite.name}")
    found, missing = datasets_found(names, data_home, suite.name)
    started = time.perf_counter()
    chosen: dict[tuple[str, str], float] = {}
    selection = None
    if len(suite.gammas) > 1:
        tuning = sweep_spec(suite, found, suite.tune_seeds, horizon, data_home, tune=True)
        selection, chosen = select_gamma(run_cells(tuning, Path(out_dir), **engine)[0])
    spec = sweep_spec(suite, found, seeds, horizon, data_home, chosen=chosen)
    rows, _ = run_cells(spec, Path(out_dir), **engine)  # in (dataset, d, learner, seed) order
    return write_shah_report(_frame(rows), _mean_curves(rows), suite, out_dir, missing=missing,
                             selection=selection,
                             minutes=(time.perf_counter() - started) / 60)  # fmt: skip


def sweep_spec(
    suite: ShahSuite, datasets: Sequence[str], seeds: Sequence[int] | None, horizon: int | None,
    data_home: str | None, *, tune: bool = False, chosen: dict | None = None,
) -> SweepSpec:  # fmt: skip
    """Return a stage as a sweep: a setting per (dataset, d), each learner with its kernel.

    ``tune``: the selection stage (the gamma grid on the double sigmoid learners,
    no DRAL, no curves); else each (setting, learner) at its ``chosen`` gamma
    (default ``suite.gammas[0]``).
    """
    horizon = suite.horizon if horizon is None else horizon
    envs, agents = [], []
    for dataset in datasets:
        labels = tuple(f"{dataset}, d={d:g}" for d in suite.d_values)
        envs += [EnvSpec(ENV_ID, label, {"dataset": dataset, "data_home": data_home,
                                         "replacement": True, "horizon": horizon, "d": d},
                         {"dataset": dataset, "d": d})
                 for label, d in zip(labels, suite.d_values, strict=True)]  # fmt: skip
        fixed = {"kernel": suite.kernels.get(dataset, "linear")}
        for name in LEARNERS:
            if name not in TUNED:
                agents += [] if tune else [_learner(name, fixed, None, labels)]
            elif tune:
                agents += [_learner(name, fixed, gamma, labels) for gamma in suite.gammas]
            else:
                agents += [_learner(name, fixed, (chosen or {}).get((label, name),
                                                                    suite.gammas[0]), (label,))
                           for label in labels]  # fmt: skip
    return SweepSpec(f"{suite.name}-selection" if tune else suite.name, tuple(envs),
                     tuple(agents), tuple(suite.seeds if seeds is None else seeds),
                     suite.description, curve_stride=None if tune else CURVE_STRIDE)  # fmt: skip


def _learner(name: str, fixed: dict, gamma: float | None, envs: tuple[str, ...]) -> AgentSpec:
    """Return learner ``name`` at ``gamma`` (None: none) on ``envs``, tagged for the report."""
    params = fixed if gamma is None else fixed | {"gamma": gamma}
    tags = {"learner": name, **fixed, "gamma": np.nan if gamma is None else gamma}
    return AgentSpec(name, params, envs=envs, tags=tags)


def _frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Return the engine's rows as (dataset, d, learner, kernel, gamma, seed) and the metrics."""
    keys = ["dataset", "d", "learner", "kernel", "gamma", "seed"]
    metrics = [c for c in rows if c not in (*ENGINE_COLUMNS, *keys) and not c.startswith("curve_")]
    return rows[[*keys, *metrics, "seconds"]]


def select_gamma(rows: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[str, str], float]]:
    """Choose each (setting, learner)'s gamma from the selection stage's ``rows``.

    Return the validation means per gamma (``risk_se``, ``runs``, ``chosen``)
    and ``(setting, learner) -> gamma``.
    """
    best = tuned(rows, "average_risk", then="query_rate")
    first = best.groupby(["setting", "agent"], sort=False)["params"].first()
    chosen = {key: float(json.loads(params)["gamma"]) for key, params in first.items()}
    frame = _frame(rows).assign(setting=rows["setting"])
    grouped = frame.groupby(["dataset", "d", "learner", "gamma", "setting"], sort=False)
    means = grouped[["average_risk", "query_rate"]].mean()
    means["risk_se"], means["runs"] = grouped["average_risk"].sem(), grouped["seed"].count()
    means = means.reset_index()
    keys = zip(means["setting"], means["learner"], means["gamma"], strict=True)
    means["chosen"] = [chosen[s, x] == g for s, x, g in keys]
    return means.drop(columns="setting"), chosen


def _mean_curves(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over runs of each curve, per (dataset, d, learner)."""
    frames = []
    for (dataset, d, learner), runs in rows.groupby(["dataset", "d", "learner"], sort=False):
        frame = pd.DataFrame({"dataset": dataset, "d": d, "learner": learner,
                              "t": np.asarray(runs["curve_t"].iloc[0])})  # fmt: skip
        n = len(runs)
        for name in CURVES:  # summed row by row in seed order, as the runs arrive
            values = np.stack([np.asarray(c, dtype=float) for c in runs[f"curve_{name}"]])
            mean = values.sum(axis=0) / n
            variance = np.maximum((values**2).sum(axis=0) / n - mean**2, 0.0) * n / max(n - 1, 1)
            frame[name], frame[f"{name}_std"] = mean, np.sqrt(variance)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def summary(results: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """Return means and stds over runs at ``T`` per (dataset, d, learner).

    ``dsol_risk_same_labels``: DSOL's average risk at the trial where it had
    asked as many labels as the learner did in all (DSOL asks every label).
    """
    grouped = results.groupby(["dataset", "d", "learner"], sort=False)
    rates = ["query_rate", "misclassification_rate", "rejection_rate"]
    table = grouped[["average_risk", "query_rate", "n_queries", *rates[1:]]].mean()
    for name in ("average_risk", *rates):
        table[f"{name}_std"] = grouped[name].std()
    table["runs"], table["gamma"] = grouped["seed"].count(), grouped["gamma"].first()
    same = []
    for (dataset, d, _), row in table.iterrows():
        dsol = curves[(curves["dataset"] == dataset) & (curves["d"] == d)
                      & (curves["learner"] == "DSOL")]  # fmt: skip
        same.append(float(np.interp(row["n_queries"], dsol["t"], dsol["risk"]))
                    if len(dsol) else np.nan)  # fmt: skip
    table["dsol_risk_same_labels"] = same
    return table.reset_index()


#: section 6 per dataset (Figures 5-6): DSAL's risk and labels against DRAL's, and the
#: learners whose risk beats DSOL's at the same number of labels
PAPER: dict[str, dict[str, str]] = {
    "phishing": {"risk": "higher", "labels": "lower", "fewer_same_labels": "DRAL, DSAL"},
    "guide": {"risk": "lower", "labels": "same", "fewer_same_labels": "DSAL"},
}


#: the trends in d the paper's figures show: (metric, +1 rises / -1 falls, learners)
TRENDS = (("average_risk", 1, tuple(LEARNERS)), ("query_rate", -1, ("DRAL", "DSAL")),
          ("misclassification_rate", 1, tuple(LEARNERS)),
          ("rejection_rate", -1, tuple(LEARNERS)))  # fmt: skip


def _compare(a: float, b: float, se: float) -> str:
    """``"higher"``, ``"lower"`` or ``"same"`` (within 2 standard errors of the difference)."""
    return "same" if abs(a - b) <= 2 * se else "higher" if a > b else "lower"


def claims(table: pd.DataFrame) -> list[str]:
    """Return the paper's claims as measured in ``table`` (:func:`summary`): a table per dataset.

    Two means differ when they are more than 2 standard errors of their
    difference apart; where the paper has no figure for a dataset the column
    "paper" says "not stated" and the verdict is our check alone.
    """
    lines: list[str] = []
    for dataset, part in table.groupby("dataset", sort=False):
        lines += [f"**{dataset}**", "", claims_table(_claims(str(dataset), part)), ""]
    return lines


def _claims(dataset: str, part: pd.DataFrame) -> list[Claim]:
    by = {(row.d, row.learner): row for row in part.itertuples()}
    ds, paper = sorted(part["d"].unique()), PAPER.get(dataset, {})

    def get(name: str, x: str) -> list[float]:
        return [getattr(by[d, x], name) for d in ds]

    def shown(name: str, x: str) -> str:
        return ", ".join(f"{v:.4f}" for v in get(name, x))

    out = []
    for x in ("DRAL", "DSAL"):
        gaps = [by[d, x].dsol_risk_same_labels - by[d, x].average_risk for d in ds]
        out.append(Claim(f"with as many labels as {x} asked, DSOL's risk is higher",
                         "yes" if x in paper.get("fewer_same_labels", "") else None,
                         f"DSOL minus {x}: {min(gaps):+.4f} to {max(gaps):+.4f}",
                         min(gaps) > 0))  # fmt: skip
    for key, name in (("risk", "average_risk"), ("labels", "query_rate")):
        se = [np.hypot(*(getattr(by[d, x], f"{name}_std") / np.sqrt(by[d, x].runs)
                         for x in ("DSAL", "DRAL"))) for d in ds]  # fmt: skip
        found = [_compare(*v) for v in zip(get(name, "DSAL"), get(name, "DRAL"), se, strict=True)]
        claim = paper.get(key)
        measured = f"DSAL {shown(name, 'DSAL')}; DRAL {shown(name, 'DRAL')}: " + ", ".join(found)
        why = ""
        if key == "labels" and "gamma" in part:
            bands = ", ".join(f"{4 / by[d, 'DSAL'].gamma:.2g}" for d in ds)
            why = f"DSAL's query band 4 / gamma = {bands} (gamma chosen per d) against DRAL's 2"
        holds = all(f == (claim or found[0]) for f in found)
        out.append(Claim(f"DSAL's {WORDS[name]} against DRAL's", claim and f"DSAL {claim}",
                         measured, holds, "" if holds else why))  # fmt: skip
    for name, sign, learners in TRENDS:
        for x in learners:
            v = get(name, x)
            way = "rises" if sign > 0 else "falls"
            holds = all(sign * (b - a) > 0 for a, b in zip(v, v[1:], strict=False))
            out.append(Claim(f"{x}'s {WORDS[name]} {way} as d rises", way if paper else None,
                             shown(name, x), holds))  # fmt: skip
    for what, name in (("misclassifies least", "misclassification_rate"),
                       ("rejects most", "rejection_rate")):  # fmt: skip
        top = []
        for d in ds:
            values = {x: getattr(by[d, x], name) for x in LEARNERS}
            top.append((min if "least" in what else max)(values, key=values.__getitem__))
        out.append(Claim(f"DRAL {what} of the three", "DRAL" if paper else None, ", ".join(top),
                         all(x == "DRAL" for x in top)))  # fmt: skip
    return out


def write_shah_report(
    results: pd.DataFrame, curves: pd.DataFrame, suite: ShahSuite, out_dir: str | Path, *,
    missing: dict[str, str] | None = None, minutes: float | None = None,
    selection: pd.DataFrame | None = None,
) -> Report:  # fmt: skip
    """Write results, curves, ``selection.csv``, ``report.md`` and a PNG per dataset."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table, figures = summary(results, curves), []
    took = f", {minutes:.1f} minutes" if minutes is not None else ""
    lines = [f"# osfb-bench {suite.name}", "", suite.description, "",
             f"Measured: {int(table['runs'].min()) if len(table) else 0} runs of T = "
             f"{int(curves['t'].max()) if len(curves) else 0:,} per cell{took}. Means over the "
             "runs at T (average risk ± its standard deviation over the runs); risk is the "
             "average L_d over the T trials.", "",
             *(f"- {name}: not run ({why})" for name, why in (missing or {}).items())]  # fmt: skip
    palette = colours(LEARNERS)
    for dataset, part in table.groupby("dataset", sort=False):
        ran = results[results["dataset"] == dataset]
        gamma = ran.groupby(["d", "learner"])["gamma"].agg(
            lambda g: ", ".join(f"{v:g}" for v in g.dropna().unique()) or "-")  # fmt: skip
        shown = pd.DataFrame({
            "d": part["d"], "learner": part["learner"], "kernel": ran["kernel"].iloc[0],
            "gamma": [gamma[d, x] for d, x in zip(part["d"], part["learner"], strict=True)],
            "average risk": [cell(m, s, digits=".4f") for m, s in
                             zip(part["average_risk"], part["average_risk_std"], strict=True)],
            "labels asked": part["query_rate"].map("{:.3f}".format),
            "misclassified": part["misclassification_rate"].map("{:.4f}".format),
            "rejected": part["rejection_rate"].map("{:.4f}".format),
            "DSOL risk, same labels": part["dsol_risk_same_labels"].map("{:.4f}".format),
        })  # fmt: skip
        figures.append(plot_panels(curves[curves["dataset"] == dataset], out / f"{dataset}.png",
                                   title=str(dataset), palette=palette))  # fmt: skip
        lines += [f"## {dataset}", "", shown.to_markdown(index=False), "",
                  f"![{dataset}]({figures[-1].name})", ""]  # fmt: skip
    frames = {"results": results, "curves": curves}
    if selection is not None:
        frames["selection"] = selection
        lines += [*selection_lines(selection), ""]
    lines += ["## The paper's claims, as measured", "", *claims(table), ""]
    return save_report(out, "report.md", "\n".join(lines), frames, figures, selection=selection)


def selection_lines(selection: pd.DataFrame) -> list[str]:
    """Return the selection stage as markdown: validation risk and labels per gamma."""
    shown = selection[["dataset", "d", "learner"]].assign(
        gamma=selection["gamma"].map("{:g}".format),
        **{"validation risk": [cell(m, s, digits=".4f") for m, s in
                               zip(selection["average_risk"], selection["risk_se"], strict=True)],
           "labels asked": selection["query_rate"].map("{:.3f}".format),
           "chosen": selection["chosen"].map({True: "yes", False: ""})})  # fmt: skip
    return ["## Selection of gamma (validation seeds)", "",
            f"{int(selection['runs'].min())} runs per gamma on seeds apart from the reported "
            "ones; per (dataset, d, learner) the fewest labels among the gammas whose mean "
            "validation risk is within one standard error (±) of the lowest.", "",
            shown.to_markdown(index=False)]  # fmt: skip


def plot_panels(curves: pd.DataFrame, path: str | Path, *, title: str = "",
                palette: dict[str, str] | None = None) -> Path:  # fmt: skip
    """Plot the paper's five panels per d (a row each): mean over runs, band ±1 std."""
    palette = palette or colours(LEARNERS)
    ds = sorted(curves["d"].unique())
    figure, axes = panels(len(ds), 5, width=4, height=3.4, dpi=80)
    for row, d in zip(axes, ds, strict=True):
        for learner, part in curves[curves["d"] == d].groupby("learner", sort=False):
            colour, label = palette[str(learner)], str(learner)
            band(row[0], part["n_queries"], part["risk"], part["risk_std"], colour=colour,
                 label=label)  # fmt: skip
            for axis, name in zip(row[1:], CURVE_LABELS, strict=True):
                band(axis, part["t"], part[name], part[f"{name}_std"], colour=colour, label=label)
        row[0].set(xlabel="labels asked", ylabel=f"d = {d:g}\naverage risk")
        row[0].set_title("risk against labels asked", fontsize=9)
        for axis, name in zip(row[1:], CURVE_LABELS.values(), strict=True):
            axis.set_xlabel("t")
            axis.set_title(name, fontsize=9)
        row[0].legend(fontsize=8)
    return save(figure, path, title=title)
