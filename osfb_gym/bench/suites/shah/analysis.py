"""The report of ``shah-reject``: a table at ``T``, the paper's five panels per ``d``, claims.

DSOL's risk after as many labels as each active learner asked; every
comparison of two learners a test over runs paired by seed, Holm over the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.report import Report, band, colours, panels, save, save_report
from osfb_gym.bench.suites.tables import Claim, cell, claims_table
from osfb_gym.envs.reject.metrics import RejectMetrics
from osfb_gym.stats import Page, Verdict, paired, unpaired

LEARNERS = ("DSOL", "DRAL", "DSAL")
KEYS = ["dataset", "d", "learner"]  # a cell of the report: its runs are the seeds
RATES = ("average_risk", "query_rate", "misclassification_rate", "rejection_rate")
#: the paper's five panels per d: (x, its label, curve, title)
PANELS = (
    ("n_queries", "labels asked", "risk", "risk against labels asked"),
    ("t", "t", "risk", "average risk"),
    ("t", "t", "query_rate", "fraction of labels asked"),
    ("t", "t", "misclassification_rate", "misclassification rate"),
    ("t", "t", "rejection_rate", "rejection rate"),
)
#: a metric's name in the claims
WORDS = {curve: title for _, _, curve, title in PANELS[2:]} | {"average_risk": "risk"}


def _mean_curves(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over runs of each curve, per (dataset, d, learner)."""
    frames = []
    for key, runs in rows.groupby(KEYS, sort=False):
        columns = dict(zip(KEYS, key, strict=True)) | {"t": runs["curve_t"].iloc[0]}
        n = len(runs)
        for name in RejectMetrics().curves():  # summed row by row in seed order, as they arrive
            values = np.stack(runs[f"curve_{name}"].map(np.asarray))
            mean = values.sum(axis=0) / n
            variance = np.maximum((values**2).sum(axis=0) / n - mean**2, 0.0) * n / max(n - 1, 1)
            columns |= {name: mean, f"{name}_std": np.sqrt(variance)}
        frames.append(pd.DataFrame(columns))
    return pd.concat(frames, ignore_index=True)


def summary(results: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """Return means and stds over runs at ``T`` per (dataset, d, learner).

    ``dsol_risk_same_labels``: DSOL's average risk at the trial where it had
    asked as many labels as the learner did in all (DSOL asks every label).
    """
    table = results.groupby(KEYS, sort=False).agg(
        **{name: (name, "mean") for name in (*RATES, "n_queries")},
        **{f"{name}_std": (name, "std") for name in RATES},
        runs=("seed", "count"),
        kernel=("kernel", "first"),
        gamma=("gamma", "first"),
    )
    dsol = dict(list(curves[curves["learner"] == "DSOL"].groupby(["dataset", "d"])))
    table["dsol_risk_same_labels"] = [
        np.interp(labels, dsol[key[:2]]["t"], dsol[key[:2]]["risk"])
        for key, labels in table["n_queries"].items()
    ]
    return table.reset_index()


#: section 6 per dataset (Figures 5-6): DSAL's risk and labels against DRAL's, the
#: learners whose risk beats DSOL's at the same number of labels, and the two statements
#: comparing DSOL with the active learners (a key present: the paper states it)
PAPER: dict[str, dict[str, str]] = {
    "phishing": {
        "risk": "higher",
        "labels": "lower",
        "fewer_same_labels": "DRAL, DSAL",
        "dsol_best": "DSOL marginally better than DSAL and DRAL",
    },
    "guide": {
        "risk": "lower",
        "labels": "same",
        "fewer_same_labels": "DSAL",
        "dsal_like_dsol": "DSAL similar to DSOL",
    },
}


#: the trends in d the paper's figures show: (metric, +1 rises / -1 falls, learners)
TRENDS = (
    ("average_risk", 1, LEARNERS),
    ("query_rate", -1, ("DRAL", "DSAL")),
    ("misclassification_rate", 1, LEARNERS),
    ("rejection_rate", -1, LEARNERS),
)


#: the paired comparisons per (dataset, d) behind the claims: (key, metric, A, B)
PAIRS = (
    ("risk", "average_risk", "DSAL", "DRAL"),
    ("labels", "query_rate", "DSAL", "DRAL"),
    ("dsol_dsal", "average_risk", "DSOL", "DSAL"),
    ("dsol_dral", "average_risk", "DSOL", "DRAL"),
)


def _outcome(verdict: Verdict) -> str:
    """``"lower"``, ``"higher"`` (A against B) or ``"same"`` (a tie within noise)."""
    winner = verdict.winner
    return "same" if winner is None else "lower" if winner == verdict.a else "higher"


def _short(verdict: Verdict) -> str:
    """Return a verdict for a table cell: the outcome, A - B with its CI, Holm's p."""
    winner = verdict.winner
    said = "tie" if winner is None else f"{winner} lower"
    return (
        f"{said} ({verdict.effect:+.4f} [{verdict.low:+.4f}, {verdict.high:+.4f}], "
        f"p={verdict.p:.2g})"
    )


def verdicts(results: pd.DataFrame) -> tuple[Page, dict[tuple[str, str, float], int]]:
    """Compare the learners run by run for every claim of :func:`claims`, Holm over all.

    Run ``s`` of every learner in a (dataset, d) setting plays the same stream
    of examples (the env's reset seed ``s`` draws it, whatever the learner
    asks), so the runs are paired by seed: an exact sign-flip test of the mean
    difference (:func:`osfb_gym.stats.paired`). Where the two learners' seeds
    differ the runs are compared unpaired (exact permutation test). Return the
    page and ``(dataset, key, d) -> index`` into ``page.verdicts``.
    """
    page, index = Page(), {}
    for (dataset, d), part in results.groupby(["dataset", "d"], sort=False):
        for key, metric, a, b in PAIRS:
            runs = {x: part[part["learner"] == x].set_index("seed")[metric] for x in (a, b)}
            if runs[a].empty or runs[b].empty:
                continue
            same = set(runs[a].index) == set(runs[b].index)
            kwargs: dict[str, Any] = {"lower_is_better": True, "names": (a, b)}
            if same and len(runs[a]) >= 2:
                order = sorted(runs[a].index)
                verdict = paired(runs[a][order], runs[b][order], **kwargs)
            else:
                verdict = unpaired(runs[a], runs[b], **kwargs)
            index[str(dataset), key, float(d)] = page.add(verdict)
    return page, index


def claims(table: pd.DataFrame, results: pd.DataFrame) -> list[str]:
    """Return the paper's claims as measured in ``table`` (:func:`summary`): a table per dataset.

    Comparisons of two learners come from :func:`verdicts` over the per-run
    ``results`` (paired by seed, Holm over every comparison of the page);
    where the paper has no figure for a dataset the column "paper" says "not
    stated" and the verdict is our check alone.
    """
    page, index = verdicts(results)
    resolved = page.verdicts
    lines: list[str] = []
    for dataset, part in table.groupby("dataset", sort=False):
        mine = {(k, d): resolved[i] for (name, k, d), i in index.items() if name == dataset}
        lines += [f"**{dataset}**", "", claims_table(_claims(str(dataset), part, mine)), ""]
    lines += [
        "Each pairwise claim is decided per d by a test over the runs, paired by seed "
        "(run s of every learner plays the same stream of examples): A - B, its 95% CI "
        "and Holm's adjusted p-value. " + page.sentence,
        "",
    ]
    return lines


def _claims(
    dataset: str, part: pd.DataFrame, tests: dict[tuple[str, float], Verdict]
) -> list[Claim]:
    wide = part.pivot(index="d", columns="learner")  # wide[metric, learner]: a value per d
    paper = PAPER.get(dataset, {})
    ds = [float(d) for d in wide.index]

    def shown(name: str, x: str) -> str:
        return ", ".join(f"{v:.4f}" for v in wide[name, x])

    def per_d(key: str) -> list[Verdict]:
        return [tests[key, d] for d in ds if (key, d) in tests]

    def cells(found: list[Verdict]) -> str:
        return "; ".join(f"d={v_d:g}: {_short(v)}" for v_d, v in zip(ds, found, strict=False))

    out = []
    for x in ("DRAL", "DSAL"):
        gaps = wide["dsol_risk_same_labels", x] - wide["average_risk", x]
        claim = f"with as many labels as {x} asked, DSOL's risk is higher"
        stated = "yes" if x in paper.get("fewer_same_labels", "") else None
        measured = f"DSOL minus {x}: {gaps.min():+.4f} to {gaps.max():+.4f} (means)"
        out.append(Claim(claim, stated, measured, gaps.min() > 0))
    for key, name in (("risk", "average_risk"), ("labels", "query_rate")):
        tested = per_d(key)
        found = [_outcome(v) for v in tested]
        measured = f"DSAL {shown(name, 'DSAL')}; DRAL {shown(name, 'DRAL')}: " + ", ".join(found)
        stated = paper.get(key)
        holds = bool(found) and all(f == (stated or found[0]) for f in found)
        why = ""
        if key == "labels" and "gamma" in part and not holds:
            bands = ", ".join(f"{4 / gamma:.2g}" for gamma in wide["gamma", "DSAL"])
            why = f"DSAL's query band 4 / gamma = {bands} (gamma chosen per d) against DRAL's 2"
        claim = f"DSAL's {WORDS[name]} against DRAL's"
        out.append(Claim(claim, stated and f"DSAL {stated}", measured, holds, why))
    # section 6, Phishing: "DSOL marginally better than DSAL and DRAL"; Guide: "DSAL
    # similar to DSOL"
    better = per_d("dsol_dsal") + per_d("dsol_dral")
    holds = bool(better) and all(v.effect < 0 and v.winner != v.b for v in better)
    stated = "DSOL marginally lower" if "dsol_best" in paper else None
    out.append(
        Claim(
            "DSOL's risk is lower than DSAL's and DRAL's",
            stated,
            f"against DSAL: {cells(per_d('dsol_dsal'))}; against DRAL: {cells(per_d('dsol_dral'))}",
            holds,
        )
    )
    similar = per_d("dsol_dsal")
    lower = {v.winner for v in similar if v.winner is not None}
    stated = "similar" if "dsal_like_dsol" in paper else None
    out.append(
        Claim(
            "DSAL's risk is similar to DSOL's (a tie)",
            stated,
            cells(similar),
            bool(similar) and all(v.winner is None for v in similar),
            ", ".join(f"{x}'s risk clearly lower at some d" for x in sorted(lower)),
        )
    )
    for name, sign, learners in TRENDS:
        way = "rises" if sign > 0 else "falls"
        for x in learners:
            holds = bool(np.all(sign * np.diff(wide[name, x]) > 0))
            claim = f"{x}'s {WORDS[name]} {way} as d rises"
            out.append(Claim(claim, way if paper else None, shown(name, x), holds))
    stated = "DRAL" if paper else None
    top = {
        "misclassifies least": wide["misclassification_rate"][list(LEARNERS)].idxmin(axis=1),
        "rejects most": wide["rejection_rate"][list(LEARNERS)].idxmax(axis=1),
    }
    for what, learners in top.items():
        holds = bool((learners == "DRAL").all())
        out.append(Claim(f"DRAL {what} of the three", stated, ", ".join(learners), holds))
    return out


def write_shah_report(
    results: pd.DataFrame,
    curves: pd.DataFrame,
    suite: Any,
    out_dir: str | Path,
    *,
    missing: dict[str, str] | None = None,
    took: str | None = None,
    selection: pd.DataFrame | None = None,
) -> Report:
    """Write results, curves, ``selection.csv``, ``report.md`` and a PNG per dataset."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = summary(results, curves)
    took = f", {took}" if took is not None else ""
    lines = [
        f"# osfb-bench {suite.name}",
        "",
        suite.description,
        "",
        f"Measured: {table['runs'].min()} runs of T = {curves['t'].max():,} per cell{took}. Means "
        "over the runs at T (average risk ± its standard error over the runs); risk is the "
        "average L_d over the T trials.",
        "",
        *(f"- {name}: not run ({why})" for name, why in (missing or {}).items()),
    ]
    figures = []
    for dataset, part in table.groupby("dataset", sort=False):
        shown = part[["d", "learner", "kernel"]].assign(
            gamma=part["gamma"].map("{:g}".format).where(part["gamma"].notna(), "-"),
            **{
                "average risk (mean ± s.e.)": _cells(part, "average_risk", "average_risk_std"),
                "labels asked": part["query_rate"].map("{:.3f}".format),
                "misclassified": part["misclassification_rate"].map("{:.4f}".format),
                "rejected": part["rejection_rate"].map("{:.4f}".format),
                "DSOL risk, same labels": part["dsol_risk_same_labels"].map("{:.4f}".format),
            },
        )
        ran = curves[curves["dataset"] == dataset]
        figure = plot_panels(ran, out / f"{dataset}.png", title=str(dataset))
        figures.append(figure)
        lines += [f"## {dataset}", "", shown.to_markdown(index=False), ""]
        lines += [f"![{dataset}]({figure.name})", ""]
    frames = {"results": results, "curves": curves}
    if selection is not None:
        frames["selection"] = selection
        lines += [*selection_lines(selection), ""]
    lines += ["## The paper's claims, as measured", "", *claims(table, results), ""]
    return save_report(out, "\n".join(lines), frames, figures, selection=selection)


def _cells(frame: pd.DataFrame, mean: str, std: str) -> list[str]:
    """Return ``mean ± standard error`` cells from the means, stds and ``runs`` of ``frame``."""
    errors = frame[std] / np.sqrt(frame["runs"])
    return [cell(m, e, digits=".4f") for m, e in zip(frame[mean], errors, strict=True)]


def selection_lines(selection: pd.DataFrame) -> list[str]:
    """Return the selection stage as markdown: validation risk and labels per gamma."""
    shown = selection[KEYS].assign(
        gamma=selection["gamma"].map("{:g}".format),
        **{
            "validation risk": _cells(selection, "average_risk", "risk_se"),
            "labels asked": selection["query_rate"].map("{:.3f}".format),
            "chosen": selection["chosen"].map({True: "yes", False: ""}),
        },
    )
    return [
        "## Selection of gamma (validation seeds)",
        "",
        f"{selection['runs'].min()} runs per gamma on seeds apart from the reported "
        "ones; per (dataset, d, learner) the fewest labels among the gammas whose mean "
        "validation risk is within one standard error (±) of the lowest.",
        "",
        shown.to_markdown(index=False),
    ]


def plot_panels(curves: pd.DataFrame, path: str | Path, *, title: str = "") -> Path:
    """Plot the paper's five panels per d (a row each): mean over runs, band ±1 std."""
    palette = colours(LEARNERS)
    ds = sorted(curves["d"].unique())
    figure, axes = panels(len(ds), 5, width=4, height=3.4, dpi=80)
    for row, d in zip(axes, ds, strict=True):
        parts = list(curves[curves["d"] == d].groupby("learner", sort=False))
        for axis, (x, xlabel, y, heading) in zip(row, PANELS, strict=True):
            for name, part in parts:
                band(axis, part[x], part[y], part[f"{y}_std"], colour=palette[name], label=name)
            axis.set_xlabel(xlabel)
            axis.set_title(heading, fontsize=9)
        row[0].set_ylabel(f"d = {d:g}\naverage risk")
        row[0].legend(fontsize=8)
    return save(figure, path, title=title)
