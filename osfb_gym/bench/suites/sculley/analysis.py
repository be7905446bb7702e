"""The Sculley suites' report: stored rows -> Table 1 / Tables 2-3 beside the paper's, claims.

The paper's numbers and the pages' words are read in
:mod:`~osfb_gym.bench.suites.sculley.paper`, the claims in
:mod:`~osfb_gym.bench.suites.sculley.claims`. :func:`report` writes ``results.csv``,
``summary.csv`` (spam) or ``best.csv`` (Reuters) and ``report.md``, the page
docs/results/ keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.driver import RunInfo
from osfb_gym.bench.report import Report, save_report
from osfb_gym.bench.suites.claims import verdict_table
from osfb_gym.bench.suites.sculley.claims import reuters_claims, spam_claims
from osfb_gym.bench.suites.sculley.paper import (
    LOCKUP_RECALL,
    MARGIN_LEARNERS,
    METHODS,
    NAMES,
    PAGE,
    PAPER_TOPICS,
    PROTOCOL,
    SHORT,
    paper_values,
    published_reuters,
)
from osfb_gym.bench.suites.sculley.settings import (
    PERCEPTRON_WEIGHTS,
    THRESHOLD_BIASES,
    VARIANTS,
    ReutersSettings,
    SculleySuite,
    SpamSettings,
    protocol,
)

METRICS: list[str] = PROTOCOL["metrics"]
ROW_LABELS: dict[str, str] = PROTOCOL["row_labels"]
#: Table 1's columns: ours, the paper's beside (counts with one decimal, rates with three)
TABLE1: dict[str, str] = PROTOCOL["table1"]
FEATURES: dict[str, str] = PROTOCOL["features"]  # the page's words for the env's ``features``
IDENTITY = ("key", "setting", "env_id", "env_kwargs", "agent", "params")  # the tags say it


def measured(rows: pd.DataFrame) -> pd.DataFrame:
    """Return a stage's rows as the report reads them: tags, seed and what was measured."""
    return rows.drop(columns=[*IDENTITY, *(c for c in rows if c.startswith("curve_"))])


def report(
    rows: Sequence[pd.DataFrame], settings: SpamSettings | ReutersSettings, run: RunInfo
) -> Report:
    """Write the page: the paper's tables beside ours, the claims read from paired verdicts."""
    suite = protocol(settings)
    results = pd.concat([measured(frame) for frame in rows])
    if suite.spam:
        order = {v: i for i, v in enumerate(("tune", *suite.datasets, *suite.learners, *VARIANTS))}
        by = ["phase", "dataset", "learner", "variant"]  # "eval" is not in order: last
        results = results.sort_values(by, kind="stable", key=lambda column: column.map(order))
    results = results.reset_index(drop=True)
    if suite.spam:
        summary, name = spam_summary(results), "summary"
        claims = spam_claims(summary, results)
        lines = _spam_page(suite, summary, results)
    else:
        summary, name = reuters_best(results), "best"
        claims = reuters_claims(summary, results)
        lines = _reuters_page(suite, summary, settings.data_home)
    lines = [f"# osfb-bench {suite.name}", "", suite.description, "", *lines]
    note = PROTOCOL["claims_note"] + ("" if suite.spam else " " + PROTOCOL["claims_note_reuters"])
    lines += ["## Claims", "", verdict_table(claims), "", note, ""]
    if run.missing:
        lines += ["Skipped (not found locally):", *(f"- {k}: {v}" for k, v in run.missing.items())]
        lines += [""]
    if settings.horizon is not None:
        lines += [f"Streams truncated to {settings.horizon} steps: not the paper's protocol.", ""]
    lines += [f"Run time: {run.took}; {len(results):,} episodes.", ""]
    frames = {"results": results, name: summary}
    tables = {"summary": summary, "claims": claims, "missing": run.missing}
    return save_report(run.out, "\n".join(lines), frames, **tables)


# --------------------------------------------------------------------------- Table 1
def spam_summary(results: pd.DataFrame) -> pd.DataFrame:
    """Return the means over the reported seeds per (dataset, learner, variant).

    Also F1's std and median, Label Efficient's ``beta``, ``seeds`` and
    ``lockup_seeds`` (the seeds with recall below :data:`LOCKUP_RECALL`).
    """
    keys, reported = ["dataset", "learner", "variant"], results[results["phase"] == "eval"]
    grouped = reported.groupby(keys, sort=False)
    summary = grouped[METRICS].mean()
    summary["f1_std"] = grouped["f1"].std().fillna(0.0)
    summary["f1_median"] = grouped["f1"].median()
    summary["beta"] = grouped["beta"].first()
    summary["seeds"] = grouped["seed"].count()
    locked = reported[reported["recall"] < LOCKUP_RECALL].groupby(keys, sort=False)["seed"]
    locked = locked.agg(lambda seeds: " ".join(str(int(s)) for s in seeds))
    summary["lockup_seeds"] = [locked.get(key, "") for key in summary.index]
    return summary


def spam_table(summary: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """Table 1 for ``dataset``: a row per (learner, variant), ours (trec05p-1 / trec06p)."""
    rows = []
    for (learner, variant), cell in summary.xs(dataset).iterrows():  # type: ignore[misc]
        if variant == "label_efficient":
            label = f"Label Efficient (β={cell['beta']:g})"
        elif learner.startswith("perceptron") and variant == "one_sided":
            label = "No margins"
        else:
            label = ROW_LABELS[variant]
        row = {"learner": NAMES[learner], "variant": label}
        for column, metric in TABLE1.items():
            row[column] = f"{cell[metric]:{'.1f' if metric in ('fn', 'fp') else '.3f'}}"
            if learner != "perceptron_bias":
                row[column] += f" ({paper_values(learner, metric, variant)})"
        row["label requests"] = f"{cell['label_requests']:.0f}"
        row["sampled"] = f"{cell['sampled']:.0f}"
        rows.append(row)
    return pd.DataFrame(rows)


def tuning_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean F1 / tasted negatives of Label Efficient per β on the tuning data (chosen: *)."""
    tuning = results[results["phase"] == "tune"]
    means = tuning.groupby(["dataset", "learner", "beta"])[["f1", "fp"]].mean()
    chosen = results[(results["phase"] == "eval") & (results["variant"] == "label_efficient")]
    picked = set(zip(chosen["dataset"], chosen["learner"], chosen["beta"], strict=True))
    text = means["f1"].map("{:.3f}".format) + " / " + means["fp"].map("{:.0f}".format)
    frame = (text + [" *" if key in picked else "" for key in means.index]).unstack()
    frame.columns.name = "β: F1 / #FP"
    return frame


def _features(text: dict[str, Any]) -> str:
    return FEATURES[text["features"]].format(**text)


def _spam_page(suite: SculleySuite, summary: pd.DataFrame, results: pd.DataFrame) -> list[str]:
    seeds = sorted(set(results.loc[results["phase"] == "eval", "seed"]))
    betas, tune_seeds = list(suite.betas), list(suite.tune_seeds)
    lines = [
        PAGE["spam"].format(
            n=len(seeds),
            seeds=seeds,
            betas=betas,
            tune_rows=suite.rows[0],
            rows=suite.rows[1],
            tune_seeds=tune_seeds,
        ),
        "",
    ]
    for dataset in dict.fromkeys(results["dataset"]):
        first = results[(results["dataset"] == dataset) & (results["phase"] == "eval")].iloc[0]
        n, ham = int(first[["tp", "fp", "tn", "fn"]].sum()), int(first["tp"] + first["fn"])
        text = suite.text if dataset == "sms_spam" else {"features": "unit"}
        lines += [
            f"## {dataset} (its {suite.rows[1]} part): {n} messages, {ham} ham ({ham / n:.1%}, "
            f"the positive class); {_features(text)}",
            "",
            spam_table(summary, dataset).to_markdown(index=False),
            "",
        ]
    tuning = tuning_table(results).reset_index().to_markdown(index=False)
    return [*lines, "## Tuning of Label Efficient's β", "", PAGE["tuning"], "", tuning, ""]


# --------------------------------------------------------------------------- Tables 2-3
def reuters_best(results: pd.DataFrame) -> pd.DataFrame:
    """Best mean F1 over the grid per (weighting, learner, method, topic): f1, value, seeds.

    Ties go to the smallest value.

    >>> frame = pd.DataFrame({"weighting": "threshold", "learner": "svm",
    ...                       "method": "apple_tasting", "topic": "ship",
    ...                       "value": [0.0, 0.0, 0.25, 0.25], "seed": [0, 1, 0, 1],
    ...                       "f1": [0.2, 0.4, 0.5, 0.3]})
    >>> reuters_best(frame)[["f1", "value"]].to_dict("records")
    [{'f1': 0.4, 'value': 0.25}]
    """
    keys = ["weighting", "learner", "method", "topic"]
    grid = results.groupby([*keys, "value"]).agg(f1=("f1", "mean"), seeds=("seed", "count"))
    best = grid.loc[grid.groupby(level=keys)["f1"].idxmax()].reset_index("value")
    return best[["f1", "value", "seeds"]]


def reuters_table(best: pd.DataFrame, weighting: str, rates: dict[str, float] | None = None):
    """Table 2 (``"threshold"``) or 3 (``"weight"``): a row per topic and Avg. F1, ours (paper)."""
    part = best.xs(weighting, level="weighting")["f1"]
    topics = [t for t in PAPER_TOPICS if t in part.index.get_level_values("topic")]
    paper = published_reuters()[0].loc[weighting]
    columns = [(lr, m) for lr in MARGIN_LEARNERS for m in METHODS if (lr, m, topics[0]) in part]
    rows = []
    for topic in [*topics, "Avg. F1"]:  # the average of the topics shown
        over = topics if topic == "Avg. F1" else [topic]
        rate = f"{rates[topic]:.1%}, " if rates and topic in rates else ""
        label = (
            f"{topic} ({rate}paper {PAPER_TOPICS[topic]:.1%})" if topic in PAPER_TOPICS else topic
        )
        row = {"topic": label}
        for lr, m in columns:
            value, theirs = np.mean([part[(lr, m, t)] for t in over]), paper.loc[(lr, m), over]
            row[f"{SHORT[lr]} {NAMES[m]}"] = f"{value:.3f} ({theirs.mean():.3f})"
        rows.append(row)
    return pd.DataFrame(rows)


def _reuters_page(suite: SculleySuite, best: pd.DataFrame, data_home: str | None) -> list[str]:
    from osfb_gym.data import load

    level = best.index.get_level_values
    rates = {}
    for topic in level("topic").unique():
        record = load("reuters_r8", data_home=data_home, topic=topic)
        rates[topic] = float(np.mean(record.y[: int(record.metadata["train_rows"])]))
    learners = [lr for lr in MARGIN_LEARNERS if lr in level("learner")]
    seeds = {"svm": list(suite.seeds)[: suite.svm_seeds], "margin_perceptron": list(suite.seeds)}
    runs = "; ".join(f"{NAMES[lr]} on seeds {seeds[lr]}" for lr in learners)
    shown = {"weights": PERCEPTRON_WEIGHTS, "svm_weights": suite.svm_weights}
    intro = PAGE["reuters"].format(
        runs=runs,
        beta=suite.betas[0],
        features=_features(suite.text),
        biases=list(THRESHOLD_BIASES),
        **{k: [f"{w:g}" for w in v] for k, v in shown.items()},
    )
    paper, printed = published_reuters()
    lines = [intro, ""]
    for weighting in ("threshold", "weight"):
        if weighting in level("weighting"):
            averages = ", ".join(
                f"{SHORT[lr]} {NAMES[m]} {printed.loc[(weighting, lr, m), 'avg']:.3f}"
                for lr in learners
                for m in METHODS
            )
            table = reuters_table(best, weighting, rates).to_markdown(index=False)
            lines += [f"## {NAMES[weighting]}", "", table, ""]
            lines += [f"Paper's printed Avg. F1 over its 10 topics: {averages}.", ""]
    gap = float((paper.mean(axis=1) - printed["avg"]).abs().max())
    topics = [t for t in PAPER_TOPICS if t in rates]
    ours, theirs = best["f1"].groupby("topic").mean(), paper[topics].mean()
    per_topic = ", ".join(f"{t} {ours[t]:.3f} ({theirs[t]:.3f})" for t in topics)
    return [
        *lines,
        PAGE["reuters_gap"].format(gap=gap),
        "",
        PAGE["reuters_topics"].format(topics=per_topic),
        "",
    ]
