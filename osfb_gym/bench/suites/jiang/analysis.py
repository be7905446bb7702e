"""The report of the ``jiang-*`` suites: their rows -> Tables 1 and 2 beside the paper's.

The report tunes ``alpha`` twice with
:func:`osfb_gym.bench.report.tuned`: on the splits it is reported on (the paper's
protocol) and held out (on the even-ranked splits, reported on the others), each
lowest method with its bootstrap probability over splits. ``fit="paper"`` fits as
the paper's text says, ``"legacy"`` as the earlier runs (docs/reproductions/jiang.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from osfb_gym.bench.report import (
    Report,
    curves_over_seeds,
    plot_curves,
    save_report,
    tuned,
)
from osfb_gym.bench.report import published as _read
from osfb_gym.bench.suites.jiang.settings import AGENTS, FITS, METHOD_OF, METHODS, JiangSuite
from osfb_gym.data import load
from osfb_gym.data.registry import get_spec

N_BOOTSTRAP = 2000


def published(link: str) -> pd.DataFrame:
    """Return the paper's Table 1 (``link="linear"``) or 2 (``"logistic"``) as printed.

    Mean cumulative one-sided loss over 10 splits, each method at its best
    alpha (``papers/jiang_table1.csv``, ``jiang_table2.csv``); index
    ``(dataset, cutoff)``, a column per method in :data:`METHODS` order.

    >>> published("linear").loc[("adult", 0.5), "ours"]
    np.float64(144.92)
    """
    if link not in ("linear", "logistic"):
        raise ValueError(f"link must be 'linear' or 'logistic', got {link!r}")
    table = _read("jiang_table1" if link == "linear" else "jiang_table2", ["dataset", "cutoff"])
    return table[list(METHODS)]


#: the columns of an engine's rows a jiang table is rebuilt from
RESULT_COLUMNS = ("key", "env_kwargs", "agent", "params", "seed", "cumulative_loss")


def read_results(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Read ``results.csv`` files of jiang runs into one frame; raise naming a file that is not one.

    Each file must have :data:`RESULT_COLUMNS` and rows of the jiang
    methods' agents on a dataset (``osfb-bench table`` rebuilds the table
    from them); a ``ValueError`` names the file and what it lacks.
    """
    frames = []
    for path in paths:
        frame = pd.read_csv(path)
        absent = [column for column in RESULT_COLUMNS if column not in frame.columns]
        if absent:
            raise ValueError(
                f"{path}: no column {', '.join(map(repr, absent))}; expected a results.csv "
                f"written by `osfb-bench run jiang-linear|jiang-logistic` (columns "
                f"{', '.join(RESULT_COLUMNS)}, ...)"
            )
        others = sorted(set(frame["agent"].astype(str)) - set(METHOD_OF))
        if others:
            raise ValueError(
                f"{path}: rows of agent {others[0]!r}, not one of a jiang suite's "
                f"({', '.join(METHOD_OF)}); give the results.csv of a jiang run"
            )
        for text in frame["env_kwargs"]:
            kwargs = json.loads(text) if isinstance(text, str) else None
            if not isinstance(kwargs, dict) or not {"dataset", "cutoff_quantile"} <= set(kwargs):
                raise ValueError(
                    f"{path}: env_kwargs {text!r} has no dataset and cutoff_quantile; give "
                    "the results.csv of a jiang run"
                )
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _cells(rows: pd.DataFrame) -> pd.DataFrame:
    """Return the engine's rows with the tables' keys: dataset, cutoff, method, alpha."""
    kwargs = [json.loads(text) for text in rows["env_kwargs"]]
    methods = [METHOD_OF[name] for name in rows["agent"]]
    params = [json.loads(text) for text in rows["params"]]
    return rows.assign(
        dataset=[k["dataset"] for k in kwargs],
        method=methods,
        alpha=[p.get(AGENTS[m][1] or "", math.nan) for p, m in zip(params, methods, strict=True)],
        cutoff=[k["cutoff_quantile"] for k in kwargs],
    )


def _lowest(frame: pd.DataFrame, chosen: pd.DataFrame | None) -> tuple[str, float]:
    """Return a setting's lowest method and its bootstrap probability over splits.

    ``chosen`` None: the paper's protocol, each resample of the splits tuned
    again over the grid; else the held-out choice (one ``params`` per method).
    """
    if chosen is not None:
        frame = frame.merge(chosen[["agent", "params"]].drop_duplicates(), on=["agent", "params"])
    losses = frame.pivot_table("cumulative_loss", "seed", ["method", "params"]).dropna(axis=1)
    methods = losses.columns.get_level_values("method").to_numpy()
    names = [m for m in METHODS if m in set(methods)]
    values = losses.to_numpy()

    def winner(splits: np.ndarray) -> np.ndarray:
        means = values[splits].mean(axis=-2)  # (..., columns)
        return np.stack([means[..., methods == m].min(axis=-1) for m in names], -1).argmin(-1)

    n = len(values)
    top = int(winner(np.arange(n)))
    resamples = np.random.default_rng(0).integers(0, n, (N_BOOTSTRAP, n))
    return names[top], float(np.mean(winner(resamples) == top)) if n > 1 else math.nan


def _verdict(ours: pd.Series, paper: pd.Series | None, low: str, held: str) -> str:
    if paper is None:
        return "not in the paper's tables"
    first = paper.idxmin()
    parts = [
        ("lowest matches" if low == first else f"lowest {low}, paper {first}"),
        ("held-out agrees" if held == low else f"held-out: {held}"),
    ]
    if {"greedy", "ours"} <= set(ours.index) and ours["greedy"] > 0:
        change, theirs = ours["ours"] / ours["greedy"] - 1, paper["ours"] / paper["greedy"] - 1
        parts.append(
            f"greedy x{ours['greedy'] / paper['greedy']:.2f} the paper's; ours "
            f"{change:+.0%} on greedy (paper {theirs:+.0%})"
        )
    return "; ".join(parts)


def _table(rows: pd.DataFrame, best: pd.DataFrame, link: str) -> tuple[list[dict], dict]:
    """Return the table's rows (ours beside the paper's, both verdicts) and the win counts."""
    seeds = sorted(rows["seed"].unique())
    held_choice = tuned(rows[rows["seed"].isin(seeds[0::2])], "cumulative_loss")
    paper = published(link)
    table, wins = [], {"ours": 0, "held_out": 0, "paper": 0, "cells": 0}
    for (dataset, cutoff), part in rows.groupby(["dataset", "cutoff"], sort=False):
        setting = part["setting"].iloc[0]
        means = best[best["setting"] == setting].groupby("method")["cumulative_loss"].mean()
        low, p_low = _lowest(part, None)
        report = part[part["seed"].isin(seeds[1::2])]
        choice = held_choice[held_choice["setting"] == setting]  # this setting's own choice
        held, p_held = _lowest(report, choice) if len(report) else ("-", math.nan)
        reference = paper.loc[(dataset, cutoff)] if (dataset, cutoff) in paper.index else None
        row = {"dataset": dataset, "cutoff": f"{cutoff:.0%}"}
        for method in (m for m in METHODS if m in means):
            theirs = "" if reference is None else f" ({reference[method]:.2f})"
            row[method] = f"{means[method]:.2f}{theirs}"
        row["lowest (P)"] = f"{low} ({p_low:.2f})"
        row["held-out lowest (P)"] = f"{held} ({p_held:.2f})"
        row["matches the paper?"] = _verdict(means, reference, low, held)
        table.append(row)
        wins["cells"] += 1
        wins["ours"] += low == "ours"
        wins["held_out"] += held == "ours"
        wins["paper"] += reference is not None and reference.idxmin() == "ours"
    return table, wins


def _plots(best: pd.DataFrame, out: Path) -> list[Path]:
    """One PNG per dataset: R_t / t of each method at its tuned alpha, a panel per cutoff."""
    files = []
    for dataset, part in best.assign(agent=best["method"]).groupby("dataset"):
        curves = curves_over_seeds(part, "curve_average_loss")
        if curves:
            files.append(plot_curves(curves, out / f"average_loss-{dataset}.png", title=dataset))
    return files


def write_report(
    results: pd.DataFrame,
    suite: JiangSuite,
    out_dir: str | Path,
    *,
    data_home: str | None = None,
    missing: dict | None = None,
) -> Report:
    """Tune both ways and write results, tuned cells, the table beside the paper's and plots.

    ``results`` are the engine's rows (``results.csv`` of one or more runs: a
    row repeated across runs is kept once).
    """
    rows = _cells(results.drop_duplicates(subset=["key"]).reset_index(drop=True))
    rows = rows.sort_values(["dataset", "cutoff", "method", "alpha", "seed"], kind="stable")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    best = tuned(rows, "cumulative_loss")
    table, wins = _table(rows, best, suite.link)
    text = pd.DataFrame(table).to_markdown(index=False)
    cells = best.groupby(["dataset", "cutoff", "method"])
    tuned_cells = cells["cumulative_loss"].agg(["mean", "sem"]).join(cells["alpha"].first())
    tuned_cells["seeds"] = cells["seed"].count()
    plots = _plots(best, out)
    seeds = [int(seed) for seed in sorted(rows["seed"].unique())]
    grid = ", ".join(f"2^{math.log2(a):g}" for a in sorted(rows["alpha"].dropna().unique()))
    notes = [_data_note(name, data_home, suite) for name in sorted(rows["dataset"].unique())]
    page = [
        f"# osfb-bench {suite.name}",
        suite.description,
        f"Fit `{suite.fit}`: {json.dumps(FITS[suite.fit])}. Mean cumulative one-sided loss "
        f"over {len(seeds)} splits (seeds {seeds[0]}-{seeds[-1]}), each method at its best "
        f"alpha in {{{grid}}} (greedy untuned), the paper's number in parentheses. 'lowest (P)':"
        " the lowest mean under the paper's protocol (alpha tuned on the splits it is reported "
        f"on) and its bootstrap probability over splits ({N_BOOTSTRAP} resamples, each tuned "
        f"again); 'held-out': alpha tuned on splits {seeds[0::2]}, the lowest and its "
        f"probability on splits {seeds[1::2]}.",
        text,
        f"Adaptive (ours) has the lowest mean loss in {wins['ours']} of {wins['cells']} cells "
        f"under the paper's protocol and in {wins['held_out']} with held-out tuning (the paper: "
        f"{wins['paper']} of the same cells).",
        "\n".join(["Our data against the paper's:", *notes]),
    ]
    if plots:
        names = ", ".join(f"`{path.name}`" for path in plots)
        page.append(f"R_t / t at the tuned alpha (mean, 1 s.e. over splits): {names}.")
    if missing:
        page.append(
            "\n".join(["Skipped (not found):", *(f"- {k}: {v}" for k, v in missing.items())])
        )
    if any("horizon" in json.loads(kwargs) for kwargs in rows["env_kwargs"]):
        steps = ", ".join(map(str, sorted(set(rows["steps"].astype(int)))))
        page.append(f"Streams truncated to {steps} steps: not the paper's protocol.")
    frames = {"results": rows.loc[:, ~rows.columns.str.startswith("curve_")], "tuned": tuned_cells}
    page_text = "\n\n".join(page) + "\n"
    return save_report(out, page_text, frames, plots, results=rows, table=text)


def _data_note(name: str, data_home: str | None, suite: JiangSuite) -> str:
    """Rows and columns of a dataset as the suite's fit encodes it, against the paper's."""
    options = {k: v for k, v in FITS[suite.fit]["env"].items() if k == "encoding"}
    if "encoding" not in get_spec(name).options:
        options = {}  # bundled data: as shipped
    meta = load(name, data_home=data_home, **options).metadata
    encoding = options.get("encoding", "onehot")
    line = f"- {name}: {meta['rows']} rows x {meta['columns']} features ({encoding})"
    if meta.get("paper_rows") not in (None, meta["rows"]):
        line += f" (the paper reports {meta['paper_rows']} rows)"
    return f"{line}; {meta.get('preprocessing', '')}"
