"""Reproduce the experiments of Shah and Manwani (2020): DSOL, DRAL and DSAL on Phishing and Guide.

For each dataset and rejection cost ``d`` in {0.1, 0.25, 0.4}, each learner
runs ``T = 10,000`` trials drawn from the dataset ("sample x_t in S") over
many repetitions (the paper: 100). The paper's five panels per ``d`` (its
Figures 5-6): average risk against the number of labels asked for, and
average risk, fraction of labels asked for, misclassification rate and
rejection rate, each against ``t``, as mean and standard deviation over the
repetitions. A summary table gives the values at ``T`` and, for the active
learners, the risk DSOL had after asking for as many labels, and the report
states the paper's claims as measured.

The paper's protocol, and where we differ:

- Data: Phishing (linear learners) and Guide (the polynomial kernel, as the
  paper's Figure 6). Gisette, the paper's third dataset, is not in the data
  layer. Features standardised with an intercept column appended
  (RejectOption-v0's dataset mode); labels 1 -> +1, 0 -> -1.
- Step sizes: the paper starts "by a small value" and decreases it "by a
  small constant" per trial, without the values; every learner here uses
  the agents' defaults (0.1, falling by 5e-6 per trial, floored at 0.01).
- The slope ``gamma`` of the double sigmoid loss (DSOL and DSAL; it also
  sets DSAL's query band, whose width is ``4 / gamma``): the paper's
  section 6 says the parameter "in the double sigmoid loss function is
  chosen to minimize the average risk and average fraction of queried
  labels (averaged over 100 runs)", without the grid or how the two are
  weighed. Here a first stage runs ``gammas`` on validation seeds
  (``tune_seeds``, apart from the reported ``seeds``) and, per dataset,
  ``d`` and learner, keeps the gamma with the fewest labels among those
  whose mean validation risk is within one standard error of the lowest
  (:func:`osfb_gym.bench.tables.tuned` with ``then="query_rate"``; for
  DSOL, which asks every label, that is the lowest risk within the band).
  The reported runs use the chosen gamma. DRAL has no gamma.
- Kernel on Guide: scikit-learn's polynomial kernel with its defaults
  (degree 3, ``gamma = 1 / n_features``, ``coef0 = 1``); the paper does not
  give its parameters.
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
from osfb_gym.bench.plots import panels, save
from osfb_gym.bench.run import run_cells
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.bench.tables import tuned
from osfb_gym.data.registry import available_datasets

ENV_ID = "RejectOption-v0"
LEARNERS: dict[str, type[DRAL] | type[DSAL]] = {"DSOL": DSOL, "DRAL": DRAL, "DSAL": DSAL}
#: the learners of the double sigmoid loss, whose gamma the paper chose on risk and labels
TUNED = ("DSOL", "DSAL")
#: the curves of RejectMetrics, in the order of the paper's panels (after risk vs labels)
CURVES = ("risk", "query_rate", "misclassification_rate", "rejection_rate", "n_queries")
CURVE_LABELS = {
    "risk": "average risk",
    "query_rate": "fraction of labels asked",
    "misclassification_rate": "misclassification rate",
    "rejection_rate": "rejection rate",
}
#: the curves are stored every this many trials (and at the last)
CURVE_STRIDE = 50


@dataclass(frozen=True)
class ShahSuite:
    """The reproduction's grid.

    Attributes
    ----------
    name, description
        For ``osfb-bench list``.
    datasets
        Names in the data layer.
    d_values
        Rejection costs.
    seeds
        One repetition per seed (the paper: 100).
    horizon
        Trials per repetition ``T``.
    kernels
        Dataset -> scikit-learn kernel name; a dataset not listed is linear.
    gammas
        The grid of the double sigmoid loss's ``gamma`` (DSOL, DSAL); one
        value skips the selection stage.
    tune_seeds
        The validation seeds of the selection stage, apart from ``seeds``.
    """

    name: str
    description: str
    datasets: tuple[str, ...] = ("phishing", "guide")
    d_values: tuple[float, ...] = (0.1, 0.25, 0.4)
    seeds: tuple[int, ...] = tuple(range(100))
    horizon: int = 10_000
    kernels: dict[str, str] = field(default_factory=lambda: {"guide": "poly"})
    gammas: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0)
    tune_seeds: tuple[int, ...] = tuple(range(10_000, 10_010))


SHAH_SUITES = {
    "shah-reject": ShahSuite(
        name="shah-reject",
        description=(
            "Shah & Manwani (2020), Figures 5-6: DSOL, DRAL and DSAL on phishing (linear) "
            "and guide (polynomial kernel), d in {0.1, 0.25, 0.4}, 100 runs of T = 10,000."
        ),
    )
}


@dataclass
class ShahResult:
    """What a run wrote: per-run results, mean curves, the report and the files."""

    results: pd.DataFrame
    curves: pd.DataFrame
    report: str
    files: list[Path]
    #: the selection stage: validation means per (dataset, d, learner, gamma), ``chosen``
    selection: pd.DataFrame | None = None


def run_shah(
    suite: ShahSuite,
    out_dir: str | Path,
    *,
    datasets: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    horizon: int | None = None,
    gammas: Sequence[float] | None = None,
    data_home: str | None = None,
    n_jobs: int = 1,
    progress: bool = True,
    resume: bool = False,
    executor: str = "local",
    address: str | None = None,
) -> ShahResult:
    """Run ``suite`` (or the named ``datasets`` of it) and write its report to ``out_dir``.

    Parameters
    ----------
    suite
        The grid (:data:`SHAH_SUITES`).
    out_dir
        Folder for ``results.csv``, ``curves.csv``, ``report.md`` and a PNG
        per dataset.
    datasets, seeds, horizon
        Narrow the suite (e.g. 10 seeds for a quick look).
    gammas
        Another grid for the gamma selection (one value: no selection).
    data_home
        Folder of the dataset files.
    n_jobs, executor, address
        Worker processes (or Ray CPUs) over the cells, and where they run
        (:func:`osfb_gym.bench.executors.execute`).
    progress
        Show a progress bar over the cells.
    resume
        Skip the cells (dataset, d, learner, seed) already in ``out_dir``'s
        store; the suite runs on the sweep engine
        (:func:`osfb_gym.bench.run.run_cells`), one stored row per episode.
    """
    if gammas is not None:
        suite = dataclasses.replace(suite, gammas=tuple(float(g) for g in gammas))
    names = list(suite.datasets if datasets is None else datasets)
    unknown = sorted(set(names) - set(suite.datasets))
    if unknown:
        raise ValueError(
            f"datasets {unknown} are not in {suite.name}; choose from {list(suite.datasets)}"
        )
    found, missing = available_datasets(names, data_home)
    if not found:
        raise ValueError("no dataset of the suite could be loaded: " + "; ".join(missing.values()))
    started = time.perf_counter()
    run: dict[str, Any] = {"resume": resume, "workers": n_jobs, "progress": progress,
                           "executor": executor, "address": address}  # fmt: skip
    chosen: dict[tuple[str, str], float] = {}
    selection = None
    if len(suite.gammas) > 1:
        tuning = sweep_spec(suite, found, suite.tune_seeds, horizon, data_home, tune=True)
        stage, _ = run_cells(tuning, Path(out_dir), **run)
        selection, chosen = select_gamma(stage)
    spec = sweep_spec(suite, found, seeds, horizon, data_home, chosen=chosen)
    rows, _ = run_cells(spec, Path(out_dir), **run)
    results = _frame(rows)
    order = {"dataset": found, "learner": list(LEARNERS)}
    results = _ordered(results, order).sort_values(
        ["dataset", "d", "learner", "seed"], kind="stable"
    )
    curves = _ordered(_mean_curves(results, rows), order).sort_values(
        ["dataset", "d", "learner", "t"], kind="stable"
    )
    return write_shah_report(
        results.reset_index(drop=True),
        curves.reset_index(drop=True),
        suite,
        out_dir,
        missing=missing,
        minutes=(time.perf_counter() - started) / 60,
        selection=selection,
    )


def _frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Return the engine's rows as (dataset, d, learner, kernel, gamma, seed) and the metrics."""
    params = [json.loads(p) for p in rows["params"]]
    frame = pd.DataFrame(
        {"dataset": [json.loads(k)["dataset"] for k in rows["env_kwargs"]],
         "d": [json.loads(k)["d"] for k in rows["env_kwargs"]], "learner": rows["agent"],
         "kernel": [p["kernel"] for p in params],
         "gamma": [p.get("gamma", np.nan) for p in params], "seed": rows["seed"]}
    )  # fmt: skip
    metrics = [c for c in rows if c not in ENGINE_COLUMNS and not c.startswith("curve_")]
    return pd.concat([frame, rows[[*metrics, "seconds"]]], axis=1)


def select_gamma(rows: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[str, str], float]]:
    """Choose each (setting, learner)'s gamma from the selection stage's ``rows``.

    The rule (stated in the module docstring): the fewest labels among the
    gammas whose mean validation risk is within one standard error of the
    lowest. Return the validation means per gamma with a ``chosen`` column,
    and ``(setting, learner) -> gamma``.
    """
    best = tuned(rows, "average_risk", then="query_rate")
    chosen = {
        (setting, agent): float(json.loads(params)["gamma"])
        for (setting, agent), params in best.groupby(["setting", "agent"], sort=False)["params"]
        .first()
        .items()
    }
    frame = _frame(rows)
    frame["setting"] = rows["setting"]
    grouped = frame.groupby(["dataset", "d", "learner", "gamma", "setting"], sort=False)
    means = grouped[["average_risk", "query_rate"]].mean()
    means["risk_se"] = grouped["average_risk"].sem()
    means["runs"] = grouped["seed"].count()
    means = means.reset_index()
    means["chosen"] = [
        chosen[setting, learner] == gamma
        for setting, learner, gamma in zip(means["setting"], means["learner"], means["gamma"],
                                           strict=True)
    ]  # fmt: skip
    return means.drop(columns="setting"), chosen


#: the engine's own columns of a row (identity and trajectory summary), not metrics
ENGINE_COLUMNS = ("key", "setting", "env_id", "env_kwargs", "agent", "params", "seed",
                  "total_reward", "revealed_total", "seconds")  # fmt: skip


def sweep_spec(
    suite: ShahSuite,
    datasets: Sequence[str],
    seeds: Sequence[int] | None,
    horizon: int | None,
    data_home: str | None,
    *,
    tune: bool = False,
    chosen: dict[tuple[str, str], float] | None = None,
) -> SweepSpec:
    """Return the suite as a sweep: a setting per (dataset, d), each learner with its kernel.

    ``tune``: the selection stage (the gamma grid on the double sigmoid
    learners, DRAL left out, no curves). ``chosen``: the reported stage with
    each (setting, learner)'s chosen gamma; without it, ``suite.gammas[0]``.
    """
    horizon = suite.horizon if horizon is None else horizon
    envs, agents = [], []
    for dataset in datasets:
        labels = tuple(f"{dataset}, d={d:g}" for d in suite.d_values)
        envs += [
            EnvSpec(ENV_ID, label, {"dataset": dataset, "data_home": data_home,
                                    "replacement": True, "horizon": horizon, "d": d})
            for label, d in zip(labels, suite.d_values, strict=True)
        ]  # fmt: skip
        fixed = {"kernel": suite.kernels.get(dataset, "linear")}
        for name in LEARNERS:
            if name not in TUNED:
                agents += [] if tune else [AgentSpec(name, fixed, envs=labels)]
            elif tune:
                agents.append(AgentSpec(name, fixed, {"gamma": list(suite.gammas)}, envs=labels))
            else:
                agents += [
                    AgentSpec(name, fixed | {"gamma": (chosen or {}).get((label, name),
                                                                        suite.gammas[0])},
                              envs=(label,))
                    for label in labels
                ]  # fmt: skip
    name = f"{suite.name}-selection" if tune else suite.name
    seeds = suite.seeds if seeds is None else seeds
    return SweepSpec(name, tuple(envs), tuple(agents), tuple(seeds), suite.description,
                     curve_stride=None if tune else CURVE_STRIDE)  # fmt: skip


def _mean_curves(results: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds of each curve, per (dataset, d, learner)."""
    frames = []
    for (dataset, d, learner), part in results.groupby(
        ["dataset", "d", "learner"], observed=True, sort=False
    ):
        runs = rows.loc[part.index]
        t = np.asarray(runs["curve_t"].iloc[0])
        frame = pd.DataFrame({"dataset": dataset, "d": d, "learner": learner, "t": t})
        n = len(runs)
        for name in CURVES:
            # summed in seed order, as the values of one run arrive
            sums, squares = np.zeros(t.size), np.zeros(t.size)
            for curve in runs[f"curve_{name}"]:
                values = np.asarray(curve, dtype=float)
                sums += values
                squares += values**2
            mean = sums / n
            variance = np.maximum(squares / n - mean**2, 0.0) * n / max(n - 1, 1)
            frame[name] = mean
            frame[f"{name}_std"] = np.sqrt(variance)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _ordered(frame: pd.DataFrame, order: dict[str, list[str]]) -> pd.DataFrame:
    for column, values in order.items():
        frame[column] = pd.Categorical(frame[column], categories=values, ordered=True)
    return frame


def summary(results: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """Return the values at ``T`` per (dataset, d, learner): means and stds over the runs.

    ``dsol_risk_same_labels`` is DSOL's average risk at the trial where it
    had asked for as many labels as the learner asked for in all (DSOL
    asks for every label, so that trial is the learner's label count).
    """
    grouped = results.groupby(["dataset", "d", "learner"], observed=True, sort=True)
    metrics = ["average_risk", "query_rate", "n_queries", "misclassification_rate",
               "rejection_rate"]  # fmt: skip
    table = grouped[metrics].mean()
    table["average_risk_std"] = grouped["average_risk"].std()
    for name in ("query_rate", "misclassification_rate", "rejection_rate"):
        table[f"{name}_std"] = grouped[name].std()
    table["runs"] = grouped["seed"].count()
    same = []
    for (dataset, d, _learner), row in table.iterrows():
        dsol = curves[(curves["dataset"] == dataset) & (curves["d"] == d)
                      & (curves["learner"] == "DSOL")]  # fmt: skip
        if dsol.empty:
            same.append(np.nan)
            continue
        labels = row["n_queries"]
        same.append(float(np.interp(labels, dsol["t"], dsol["risk"])))
    table["dsol_risk_same_labels"] = same
    return table.reset_index()


#: what the paper's section 6 says per dataset (Figures 5-6), for the claims table:
#: "higher"/"lower": DSAL's value against DRAL's; None: the paper says nothing
PAPER: dict[str, dict[str, str | None]] = {
    "phishing": {"risk": "higher", "labels": "lower", "fewer_same_labels": "DRAL, DSAL"},
    "guide": {"risk": "lower", "labels": "same", "fewer_same_labels": "DSAL"},
}


def _compare(a: float, b: float, se: float) -> str:
    """``"higher"``, ``"lower"`` or ``"same"`` (within 2 standard errors of the difference)."""
    if abs(a - b) <= 2 * se:
        return "same"
    return "higher" if a > b else "lower"


def claims(table: pd.DataFrame) -> list[str]:
    """State the paper's claims (section 6) as measured in ``table`` (from :func:`summary`).

    A markdown table per dataset: the claim, what was measured, and the
    verdict (reproduced / not reproduced; "-" where the paper has no claim
    for the dataset). Two means are called different when they differ by
    more than 2 standard errors of their difference (over the runs).
    """
    lines: list[str] = []
    for dataset, part in table.groupby("dataset", observed=True, sort=False):
        if not part.empty:
            lines += _dataset_claims(str(dataset), part)
    return lines


def _dataset_claims(dataset: str, part: pd.DataFrame) -> list[str]:
    by = {(row.d, row.learner): row for row in part.itertuples()}
    ds = sorted(part["d"].unique())
    paper = PAPER.get(dataset, {})
    in_paper = True if paper else None  # verdicts only where the paper makes the claim

    def se(d: float, name: str, a: str = "DSAL", b: str = "DRAL") -> float:
        return float(np.hypot(*(getattr(by[d, x], f"{name}_std") / np.sqrt(by[d, x].runs)
                                for x in (a, b))))  # fmt: skip

    def values(name: str, learner: str) -> str:
        return ", ".join(f"{getattr(by[d, learner], name):.4f}" for d in ds)

    def rises(name: str, learner: str) -> bool:
        v = [getattr(by[d, learner], name) for d in ds]
        return all(b > a for a, b in zip(v, v[1:], strict=False))

    def falls(name: str, learner: str) -> bool:
        v = [getattr(by[d, learner], name) for d in ds]
        return all(b < a for a, b in zip(v, v[1:], strict=False))

    rows: list[tuple[str, str, str]] = []
    expected = paper.get("fewer_same_labels")
    for learner in ("DRAL", "DSAL"):
        gaps = [by[d, learner].dsol_risk_same_labels - by[d, learner].average_risk for d in ds]
        holds = min(gaps) > 0
        claimed = expected is not None and learner in expected
        rows.append((
            f"with as many labels as {learner} asked, DSOL's risk is higher",
            f"DSOL minus {learner}: {min(gaps):+.4f} to {max(gaps):+.4f}",
            _verdict(holds, claimed or None),
        ))  # fmt: skip
    for learner in LEARNERS:
        rows.append((f"{learner}'s risk rises with d", values("average_risk", learner),
                     _verdict(rises("average_risk", learner), in_paper)))  # fmt: skip
    for key, name, what in (("risk", "average_risk", "risk"),
                            ("labels", "query_rate", "fraction of labels asked")):  # fmt: skip
        found = [_compare(getattr(by[d, "DSAL"], name), getattr(by[d, "DRAL"], name),
                          se(d, name)) for d in ds]  # fmt: skip
        claim = paper.get(key)
        text = {"higher": "higher than", "lower": "lower than", "same": "the same as"}
        rows.append((
            f"DSAL's {what} is {text.get(claim or '', 'compared with')} DRAL's",
            f"DSAL {values(name, 'DSAL')}; DRAL {values(name, 'DRAL')}: {', '.join(found)}",
            "-" if claim is None else _verdict(all(f == claim for f in found), True),
        ))  # fmt: skip
    for learner in ("DRAL", "DSAL"):
        rows.append((f"{learner}'s fraction of labels asked falls as d rises",
                     values("query_rate", learner),
                     _verdict(falls("query_rate", learner), in_paper)))  # fmt: skip
    for learner in LEARNERS:
        rows.append((f"{learner}'s misclassification rate rises with d",
                     values("misclassification_rate", learner),
                     _verdict(rises("misclassification_rate", learner), in_paper)))  # fmt: skip
    lowest = [min(LEARNERS, key=lambda x: by[d, x].misclassification_rate) for d in ds]
    rows.append(("DRAL misclassifies least of the three", "lowest: " + ", ".join(lowest),
                 _verdict(all(x == "DRAL" for x in lowest), in_paper)))  # fmt: skip
    most = [max(LEARNERS, key=lambda x: by[d, x].rejection_rate) for d in ds]
    rows.append(("DRAL rejects most of the three", "most: " + ", ".join(most),
                 _verdict(all(x == "DRAL" for x in most), in_paper)))  # fmt: skip
    for learner in LEARNERS:
        rows.append((f"{learner}'s rejection rate falls as d rises",
                     values("rejection_rate", learner),
                     _verdict(falls("rejection_rate", learner), in_paper)))  # fmt: skip
    measured = f"measured (d = {', '.join(f'{d:g}' for d in ds)})"
    frame = pd.DataFrame(rows, columns=["claim", measured, "verdict"])
    return [f"**{dataset}**", "", frame.to_markdown(index=False), ""]


def _verdict(holds: bool, claimed: bool | None) -> str:
    if claimed is None:
        return "holds" if holds else "does not hold"
    return "reproduced" if holds else "not reproduced"


def write_shah_report(
    results: pd.DataFrame,
    curves: pd.DataFrame,
    suite: ShahSuite,
    out_dir: str | Path,
    *,
    missing: dict[str, str] | None = None,
    minutes: float | None = None,
    selection: pd.DataFrame | None = None,
) -> ShahResult:
    """Write ``results.csv``, ``curves.csv``, ``report.md`` and a PNG per dataset.

    ``selection`` (from :func:`select_gamma`) adds the gamma-selection table
    and ``selection.csv``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = summary(results, curves)
    files = [out / "results.csv", out / "curves.csv", out / "report.md"]
    results.to_csv(files[0], index=False)
    curves.to_csv(files[1], index=False)
    runs = int(table["runs"].min()) if len(table) else 0
    horizon = int(curves["t"].max()) if len(curves) else 0
    lines = [
        f"# osfb-bench {suite.name}",
        "",
        suite.description,
        "",
        f"Measured: {runs} runs of T = {horizon:,} per cell"
        + (f", {minutes:.1f} minutes" if minutes is not None else "")
        + ". Means over the runs at T; risk is the average L_d over the T trials.",
        "",
    ]
    for name, why in (missing or {}).items():
        lines += [f"- {name}: not run ({why})"]
    for dataset, part in table.groupby("dataset", observed=True, sort=False):
        if part.empty:
            continue
        shown = pd.DataFrame(
            {
                "d": part["d"],
                "learner": part["learner"],
                "kernel": results[results["dataset"] == dataset]["kernel"].iloc[0],
                "gamma": [_gamma(results, dataset, d, learner)
                          for d, learner in zip(part["d"], part["learner"], strict=True)],
                "average risk": [f"{m:.4f} ± {s:.4f}" for m, s in
                                 zip(part["average_risk"], part["average_risk_std"], strict=True)],
                "labels asked": part["query_rate"].map("{:.3f}".format),
                "misclassified": part["misclassification_rate"].map("{:.4f}".format),
                "rejected": part["rejection_rate"].map("{:.4f}".format),
                "DSOL risk, same labels": part["dsol_risk_same_labels"].map("{:.4f}".format),
            }
        )  # fmt: skip
        png = out / f"{dataset}.png"
        plot_panels(curves[curves["dataset"] == dataset], png, title=f"{dataset}")
        files.append(png)
        lines += [
            f"## {dataset}",
            "",
            shown.to_markdown(index=False),
            "",
            f"![{dataset}]({png.name})",
            "",
        ]  # noqa: E501
    if selection is not None:
        selection.to_csv(out / "selection.csv", index=False)
        files.append(out / "selection.csv")
        lines += [*selection_lines(selection), ""]
    lines += ["## The paper's claims, as measured", "", *claims(table), ""]
    report = "\n".join(lines)
    files[2].write_text(report)
    return ShahResult(
        results=results, curves=curves, report=report, files=files, selection=selection
    )


def _gamma(results: pd.DataFrame, dataset: str, d: float, learner: str) -> str:
    """Return the gamma a learner ran with in a cell ("-" for DRAL, which has none)."""
    values = results.loc[(results["dataset"] == dataset) & (results["d"] == d)
                         & (results["learner"] == learner), "gamma"].dropna().unique()  # fmt: skip
    return ", ".join(f"{g:g}" for g in values) or "-"


def selection_lines(selection: pd.DataFrame) -> list[str]:
    """Return the selection stage as markdown: validation risk and labels per gamma."""
    runs = int(selection["runs"].min())
    shown = pd.DataFrame(
        {"dataset": selection["dataset"], "d": selection["d"], "learner": selection["learner"],
         "gamma": selection["gamma"].map("{:g}".format),
         "validation risk": [f"{m:.4f} ± {s:.4f}" for m, s in
                             zip(selection["average_risk"], selection["risk_se"], strict=True)],
         "labels asked": selection["query_rate"].map("{:.3f}".format),
         "chosen": selection["chosen"].map({True: "yes", False: ""})}
    )  # fmt: skip
    return [
        "## Selection of gamma (validation seeds)",
        "",
        f"{runs} runs per gamma on seeds apart from the reported ones; per (dataset, d, "
        "learner) the fewest labels among the gammas whose mean validation risk is within "
        "one standard error (±) of the lowest.",
        "",
        shown.to_markdown(index=False),
    ]


def plot_panels(curves: pd.DataFrame, path: str | Path, *, title: str = "") -> Path:
    """Plot the paper's five panels for each d (a row each): mean over runs, band +-1 std."""
    ds = sorted(curves["d"].unique())
    figure, axes = panels(len(ds), 5, width=4, height=3.4, dpi=80)
    for row, d in zip(axes, ds, strict=True):
        for learner, part in curves[curves["d"] == d].groupby("learner", observed=True):
            t = part["t"].to_numpy()
            risk, risk_std = part["risk"].to_numpy(), part["risk_std"].to_numpy()
            row[0].plot(part["n_queries"], risk, label=str(learner))
            row[0].fill_between(part["n_queries"], risk - risk_std, risk + risk_std, alpha=0.2)
            for axis, name in zip(row[1:], list(CURVE_LABELS), strict=True):
                mean, std = part[name].to_numpy(), part[f"{name}_std"].to_numpy()
                axis.plot(t, mean, label=str(learner))
                axis.fill_between(t, mean - std, mean + std, alpha=0.2)
        row[0].set_xlabel("labels asked")
        row[0].set_ylabel(f"d = {d:g}\naverage risk")
        for axis, name in zip(row[1:], CURVE_LABELS.values(), strict=True):
            axis.set_xlabel("t")
            axis.set_title(name, fontsize=9)
        row[0].set_title("risk against labels asked", fontsize=9)
        row[0].legend(fontsize=8)
    return save(figure, path, title=title)
