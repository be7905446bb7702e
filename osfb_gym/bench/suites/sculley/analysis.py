"""The Sculley suites' report: stored rows -> Table 1 / Tables 2-3 beside the paper's, claims.

The paper's numbers are CSV files in ``osfb_gym/bench/papers/`` (``sculley_table1``,
``sculley_tables23``, ``sculley_topics``), read by :func:`osfb_gym.bench.report.published`.
:func:`write_report` writes ``results.csv``, ``summary.csv`` (spam) or ``best.csv``
(Reuters) and ``table.md``, the page docs/results/ keeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.report import Claim, Report, claims_table, published, save_report

#: the ten topics of Tables 2-3 and the positive rate the paper prints beside each
PAPER_TOPICS: dict[str, float] = dict(published("sculley_topics").itertuples(index=False))
SPAM_CORPORA = {"trec05p-1": (92189, 0.43), "trec06p": (37822, 0.34)}  # size, ham rate (6.1)
#: Sculley's grids (Table 3), read by the suite's stages and named in this report
THRESHOLD_BIASES = (0.0, 0.008, 0.016, 0.032, 0.064, 0.128, 0.25, 0.75, 1.0)  # threshold = -b
PERCEPTRON_WEIGHTS = tuple(2.0**k for k in range(8))  # Table 3: c_pos, c_neg = 1
LOCKUP_RECALL = 0.1  # an episode below this recall rejects (and so never sees) nearly all ham
METRICS = [
    "tp",
    "fp",
    "tn",
    "fn",
    "precision",
    "recall",
    "f1",
    "label_requests",
    "tasted_negatives",
    "sampled",
    "updates",
    "seconds",
]
NAMES = {
    "svm": "Online SVM",
    "margin_perceptron": "Perceptron with margins",
    "perceptron": "Perceptron",
    "perceptron_bias": "Perceptron with a bias (not in the paper)",
    "margins_only": "Marg. Only",
    "apple_tasting": "Apple T.",
    "label_efficient": "Label Eff.",
    "threshold": "Table 2 (threshold biasing)",
    "weight": "Table 3 (example weighting)",
}
SHORT = {"svm": "SVM", "margin_perceptron": "Pcpt. Mgn."}
ROW_LABELS = {"one_sided": "Margins", "apple_tasting": "With AppleTaste", "full": "Full Fb."}
MARGIN_LEARNERS = ("svm", "margin_perceptron")
PAPER_LEARNERS = (*MARGIN_LEARNERS, "perceptron")  # Table 1's
SAMPLERS = ("label_efficient", "apple_tasting")
#: Table 1's columns: ours, the paper's beside (counts with one decimal, rates with three)
TABLE1 = {"F1": "f1", "Rec.": "recall", "Prec.": "precision", "#FN": "fn", "#FP": "fp"}
FEATURES = {  # the page's words for the env's ``features``
    "binary": "binary case-preserving character 4-grams hashed into {dim} buckets",
    "counts": "lower-cased character 4-gram counts hashed into {dim} buckets",
    "unit": "standardised, intercept dropped, rows scaled to unit length",
}
METHODS = ("margins_only", "apple_tasting", "label_efficient")  # Tables 2-3's column order


def published_spam() -> pd.DataFrame:
    """Table 1, index ``(corpus, learner, variant)``: f1, recall, precision, fn, fp.

    >>> published_spam().loc[("trec06p", "perceptron", "one_sided"), ["recall", "fn"]].tolist()
    [0.003, 12875.0]
    """
    return published("sculley_table1", ["corpus", "learner", "variant"]).astype(float)


def published_reuters() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables 2-3 (index weighting, learner, method; a column per topic) and the printed averages.

    >>> published_reuters()[1].loc[("weight", "svm", "margins_only"), "avg"]
    np.float64(0.554)
    """
    table = published("sculley_tables23", ["weighting", "learner", "method"])
    return table[list(PAPER_TOPICS)], table[["avg"]]


def write_report(
    suite: Any,
    results: pd.DataFrame,
    out_dir: str | Path,
    *,
    data_home: str | None = None,
    missing: dict[str, str] | None = None,
    horizon: int | None = None,
    minutes: float | None = None,
) -> Report:
    """Summarise ``results`` (a run's rows, or a saved ``results.csv``) and write the files."""
    if suite.spam:
        summary, name = spam_summary(results), "summary"
        claims = spam_claims(summary)
        lines = _spam_page(suite, summary, results)
    else:
        summary, name = reuters_best(results), "best"
        claims = reuters_claims(summary)
        lines = _reuters_page(suite, summary, data_home)
    lines = [f"# osfb-bench {suite.name}", "", suite.description, "", *lines]
    lines += ["## Claims", "", claims_table(claims), ""]
    if missing:
        lines += ["Skipped (not found locally):", *(f"- {k}: {v}" for k, v in missing.items()), ""]
    if horizon is not None:
        lines += [f"Streams truncated to {horizon} steps: not the paper's protocol.", ""]
    if minutes is not None:
        lines += [f"Run time: {minutes:.1f} min ({len(results)} episodes).", ""]
    frames = {"results": results, name: summary}
    tables = {"summary": summary, "claims": claims, "missing": missing or {}}
    return save_report(out_dir, "\n".join(lines), frames, **tables)


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


def _paper(learner: str, column: str, *variants: str) -> str:
    """Return the paper's ``column`` for ``learner``'s ``variants``: "a / b against c / d"."""
    digits = ".0f" if column in ("fn", "fp") else ".3f"
    values = [published_spam().loc[(slice(None), learner, v), column] for v in variants]
    return " against ".join(" / ".join(f"{x:{digits}}" for x in row) for row in values)


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
            ours = f"{cell[metric]:{'.1f' if metric in ('fn', 'fp') else '.3f'}}"
            paper = f" ({_paper(learner, metric, variant)})" if learner != "perceptron_bias" else ""
            row[column] = ours + paper
        row["label requests"] = f"{cell['label_requests']:.0f}"
        row["sampled"] = f"{cell['sampled']:.0f}"
        rows.append(row)
    return pd.DataFrame(rows)


def spam_claims(summary: pd.DataFrame) -> list[Claim]:
    """Return Table 1's claims per dataset as measured (the paper's: trec05p-1 / trec06p)."""
    fp = published_spam()["fp"].unstack("variant")
    # per learner, on how many corpora a variant tastes fewer negatives than Apple Tasting
    fewer = fp.lt(fp["apple_tasting"], axis=0).groupby(level="learner").sum()
    paper = fewer["label_efficient"].sum(), fewer.loc[list(MARGIN_LEARNERS), "one_sided"].sum()
    return [
        replace(claim, claim=f"{dataset}: {claim.claim}")
        for dataset in dict.fromkeys(summary.index.get_level_values("dataset"))
        for claim in _dataset_claims(summary.xs(dataset), *paper)
    ]


def _dataset_claims(cells: pd.DataFrame, paper_le: int, paper_at: int) -> Iterator[Claim]:
    """Table 1's claims on one dataset's ``cells``; ``paper_*``: the paper's #FP counts."""

    def get(metric: str, lr: str, *variants: str) -> list[float]:
        """``metric`` of ``lr``'s ``variants`` (NaN where not run)."""
        rows = cells.reindex([(lr, v) for v in variants])
        return rows[metric].tolist() if metric in rows else [np.nan] * len(variants)

    def has(*values: float) -> bool:
        return not np.isnan(values).any()

    one, full = get("recall", "perceptron", "one_sided", "full")
    if has(one, full):
        (bias,) = get("recall", "perceptron_bias", "one_sided")
        with_bias = f"; with a bias {bias:.3f}" if has(bias) else ""
        yield Claim(
            "the classical perceptron's recall collapses one-sided (by > 0.1)",
            f"{_paper('perceptron', 'recall', 'one_sided', 'full')} full",
            f"{one:.3f} against {full:.3f}{with_bias}",
            one < full - 0.1,
        )
    near = {lr: get("f1", lr, "one_sided", "full") for lr in MARGIN_LEARNERS}
    near = {lr: [*v, *get("f1_median", lr, "one_sided")] for lr, v in near.items() if has(*v)}
    if near:
        yield Claim(
            "unmodified margin learners come within 0.02 F1 of full feedback",
            "; ".join(_paper(lr, "f1", "one_sided", "full") for lr in near),
            "; ".join(
                f"{NAMES[lr]} {o:.3f} against {f:.3f}"
                + (f" (median over orders {m:.3f})" if has(m) and abs(m - o) >= 0.005 else "")
                for lr, (o, f, m) in near.items()
            ),
            all(o >= f - 0.02 for o, f, _ in near.values()),
        )
    le, at, os_ = get("f1", "perceptron", *SAMPLERS, "one_sided")
    if has(le, at, os_):
        yield Claim(
            "Label Efficient and Apple Tasting repair the classical perceptron, Label Efficient "
            "better",
            f"F1 {_paper('perceptron', 'f1', *SAMPLERS)}",
            f"F1 {le:.3f} against {at:.3f} (one-sided {os_:.3f})",
            le > at > os_,
        )
    # #FP of Label Efficient and Apple Tasting, then what each sampled
    pairs = {lr: get("fp", lr, *SAMPLERS) + get("sampled", lr, *SAMPLERS) for lr in PAPER_LEARNERS}
    pairs = {lr: values for lr, values in pairs.items() if has(*values)}
    if pairs:
        wins = sum(a < b for a, b, _, _ in pairs.values())
        recall = {lr: get("recall", lr, *SAMPLERS) for lr in pairs}
        yield Claim(
            "Label Efficient tastes fewer negatives (#FP) than Apple Tasting",
            f"{paper_le} of 6 corpus x learner pairs",
            f"{wins} of {len(pairs)}: "
            + "; ".join(
                f"{NAMES[lr]} {a:.0f} against {b:.0f} (sampled {s:.0f} against {t:.0f})"
                for lr, (a, b, s, t) in pairs.items()
            ),
            wins == len(pairs),
            "; ".join(
                f"β is chosen for F1 alone: {NAMES[lr]}'s Label Efficient samples {s:.0f} "
                f"predicted negatives against {t:.0f} and buys recall "
                f"({recall[lr][0]:.3f} against {recall[lr][1]:.3f})"
                for lr, (a, b, s, t) in pairs.items()
                if a >= b
            ),
        )
    inbox = {lr: get("fp", lr, "one_sided", "apple_tasting") for lr in MARGIN_LEARNERS}
    inbox = {lr: values for lr, values in inbox.items() if has(*values)}
    if inbox:
        wins = sum(o < a for o, a in inbox.values())
        yield Claim(
            "unmodified margin learners put less spam in the inbox (#FP) than with Apple Tasting",
            f"{paper_at} of 4 pairs; SVM {_paper('svm', 'fp', 'one_sided', 'apple_tasting')}",
            f"{wins} of {len(inbox)}: "
            + "; ".join(f"{NAMES[lr]} {o:.0f} against {a:.0f}" for lr, (o, a) in inbox.items()),
            wins == len(inbox),
        )
    if "lockup_seeds" in cells:
        locked = [
            f"{NAMES[lr]} {v.replace('_', ' ')} on seeds {s.replace(' ', ', ')}"
            for (lr, v), s in cells["lockup_seeds"].items()
            if s and lr in MARGIN_LEARNERS
        ]
        yield Claim(
            f"no margin learner locks up on an order (recall < {LOCKUP_RECALL})",
            None,
            "; ".join(locked) or "none",
            not locked,
        )


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


def _spam_page(suite: Any, summary: pd.DataFrame, results: pd.DataFrame) -> list[str]:
    seeds = sorted(set(results.loc[results["phase"] == "eval", "seed"]))
    lines = [
        f"Mean over {len(seeds)} seeded stream orders (seeds {seeds}); the paper's Table 1 "
        "in parentheses as (trec05p-1 / trec06p). Its corpora are 17x and 7x larger than "
        "ours, so compare rates and the shape of the effects, not counts. Label Efficient's "
        f"β was chosen for the best mean F1 over the coarse grid {list(suite.betas)} on the "
        f"{suite.rows[0]} part of each corpus (rows i with i mod 4 = 3), the tables reporting "
        f"its {suite.rows[1]} part, in stream orders {list(suite.tune_seeds)}: tuning data the "
        "reported episodes never see, as the paper tuned on a separate corpus. label requests: "
        "tasted examples (TP + FP); sampled: predicted negatives a sampling strategy tasted.",
        "",
    ]
    for dataset in dict.fromkeys(results["dataset"]):
        first = results[(results["dataset"] == dataset) & (results["phase"] == "eval")].iloc[0]
        n, ham = int(first[["tp", "fp", "tn", "fn"]].sum()), int(first["tp"] + first["fn"])
        text = suite.text if dataset == "sms_spam" else {"features": "unit"}
        lines += [
            f"## {dataset} (its {suite.rows[1]} part): {n} messages, {ham} ham ({ham / n:.1%}, "
            f"the positive class); {FEATURES[text['features']].format(**text)}",
            "",
            spam_table(summary, dataset).to_markdown(index=False),
            "",
        ]
    return lines + [
        "## Tuning of Label Efficient's β",
        "",
        "Mean F1 / tasted negatives (#FP) of Label Efficient on the tuning data, per β; `*` "
        "marks the β the tables use (the best F1; ties to the smaller β).",
        "",
        tuning_table(results).reset_index().to_markdown(index=False),
        "",
    ]


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


def reuters_claims(best: pd.DataFrame) -> list[Claim]:
    """Return the claims of Tables 2-3 as measured, the paper's over the same topics beside."""
    # both indexed (weighting, learner, method, topic)
    tables = {"ours": best["f1"], "paper": published_reuters()[0].stack()}
    level = best.index.get_level_values
    topics = [t for t in PAPER_TOPICS if t in level("topic")]
    learners = [lr for lr in MARGIN_LEARNERS if lr in level("learner")]
    weightings = [w for w in ("threshold", "weight") if w in level("weighting")]
    cells = [(w, lr, t) for w in weightings for lr in learners for t in topics]
    quads = [(w, lr, m, t) for w in weightings for lr in learners for m in METHODS for t in topics]
    counts = {}  # cells where Marg. Only, Label Eff. beat Apple T.; where Marg. Only is best
    for name, table in tables.items():
        scores = pd.DataFrame([{m: table[w, lr, m, t] for m in METHODS} for w, lr, t in cells])
        beats = scores[["margins_only", "label_efficient"]].gt(scores["apple_tasting"], axis=0)
        counts[name] = [*beats.sum(), (scores["margins_only"] >= scores.max(axis=1)).sum()]
    (mo, le, top), (p_mo, p_le, p_top), n = counts["ours"], counts["paper"], len(cells)
    claims = [
        Claim(
            "Apple Tasting is the weakest method: beaten by Marg. Only / Label Eff. (cells: "
            "topic x learner x weighting)",
            f"{p_mo} / {p_le} of {n}",
            f"{mo} / {le} of {n}",
            mo >= n / 2 and le >= n / 2,
        ),
        Claim(
            "Marg. Only has the best F1 of the three methods (ties counted)",
            f"{p_top} of {n}",
            f"{top} of {n}",
            top >= n / 2,
        ),
    ]
    for learner in learners if len(weightings) == 2 else []:
        (ours_t, ours_w), (paper_t, paper_w) = (
            [np.mean([table[q] for q in quads if q[:2] == (w, learner)]) for w in weightings]
            for table in tables.values()
        )
        claims.append(
            Claim(
                f"{NAMES[learner]}: mean best F1, threshold biasing against example weighting",
                f"{paper_t:.3f} against {paper_w:.3f}",
                f"{ours_t:.3f} against {ours_w:.3f}",
                (ours_t > ours_w) == (paper_t > paper_w),
            )
        )
    low = {
        name: "; ".join(
            f"{t} ({SHORT[lr]} {NAMES[m]}, {NAMES[w][9:-1]}, {table[w, lr, m, t]:.3f})"
            for w, lr, m, t in quads
            if table[w, lr, m, t] < 0.1
        )
        or "none"
        for name, table in tables.items()
    }
    claims.append(
        Claim(
            "Best F1 below 0.1 (no grid value lets the learner find the topic) in the same cells",
            low["paper"],
            low["ours"],
            low["ours"] == low["paper"],
        )
    )
    return claims


def _reuters_page(suite: Any, best: pd.DataFrame, data_home: str | None) -> list[str]:
    from osfb_gym.data import load

    level = best.index.get_level_values
    rates = {}
    for topic in level("topic").unique():
        record = load("reuters_r8", data_home=data_home, topic=topic)
        rates[topic] = float(np.mean(record.y[: int(record.metadata["train_rows"])]))
    learners = [lr for lr in MARGIN_LEARNERS if lr in level("learner")]
    seeds = {"svm": list(suite.seeds)[: suite.svm_seeds], "margin_perceptron": list(suite.seeds)}
    runs = "; ".join(f"{NAMES[lr]} on seeds {seeds[lr]}" for lr in learners)
    paper, printed = published_reuters()
    lines = [
        "Best mean F1 over each grid (ours), the paper's in parentheses; a topic's label "
        "gives its positive rate in our stream and in the paper's. Stream: the R8 training "
        "documents in a seeded random order, the first positive moved to the front; "
        f"{runs}. Label Efficient β = {suite.betas[0]:g}. "
        f"Features: {FEATURES[suite.text['features']].format(**suite.text)}. Threshold biases "
        f"b (threshold = -b): {list(THRESHOLD_BIASES)}. Example weights: perceptron c_pos "
        f"{[f'{w:g}' for w in PERCEPTRON_WEIGHTS]} (c_neg = 1); SVM C_neg "
        f"{[f'{w:g}' for w in suite.svm_weights]} (C_pos = 100). The Avg. F1 row averages the "
        "topics shown; the paper's own averages over its ten topics are listed below.",
        "",
    ]
    for weighting in ("threshold", "weight"):
        if weighting in level("weighting"):
            averages = ", ".join(
                f"{SHORT[lr]} {NAMES[m]} {printed.loc[(weighting, lr, m), 'avg']:.3f}"
                for lr in learners
                for m in METHODS
            )
            lines += [
                f"## {NAMES[weighting]}",
                "",
                reuters_table(best, weighting, rates).to_markdown(index=False),
                "",
                f"Paper's printed Avg. F1 over its 10 topics: {averages}.",
                "",
            ]
    gap = float((paper.mean(axis=1) - printed["avg"]).abs().max())
    topics = [t for t in PAPER_TOPICS if t in rates]
    ours = best["f1"].groupby("topic").mean()
    theirs = paper[topics].mean()
    return lines + [
        f"The paper's printed averages differ from the means of its printed topic values by up "
        f"to {gap:.3f}; the Avg. F1 row above uses the topic values.",
        "",
        "Mean best F1 per topic over learners, methods and weightings, ours (paper): "
        + ", ".join(f"{t} {ours[t]:.3f} ({theirs[t]:.3f})" for t in topics)
        + " (the paper's order: its positive rates, falling).",
        "",
    ]
