"""The report of the ``jiang-*`` suites: their rows -> Tables 1 and 2 beside the paper's.

The report tunes ``alpha`` twice with
:func:`osfb_gym.bench.report.tuned`: on the splits it is reported on (the paper's
protocol) and held out (on the even-ranked splits, reported on the others); each
cell's "clearly lowest" or "tied (within noise)" is a paired verdict over the
splits (:mod:`osfb_gym.bench.suites.jiang.verdicts`). ``fit="paper"`` fits as
the paper's text says, ``"legacy"`` as the earlier runs (docs/reproductions/jiang.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from osfb_gym.bench.report import (
    Report,
    curves_over_seeds,
    plot_curves,
    save_report,
    tuned,
)
from osfb_gym.bench.suites.jiang.settings import AGENTS, FITS, METHOD_OF, METHODS, JiangSuite
from osfb_gym.bench.suites.jiang.verdicts import (
    cell_text,
    cell_verdicts,
    grid_note,
    grid_text,
    power_note,
    scale_note,
    tally,
)
from osfb_gym.bench.suites.tables import published as _read
from osfb_gym.data import load
from osfb_gym.data.registry import get_spec
from osfb_gym.stats import BestOf


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


def _verdict(ours: pd.Series, paper: pd.Series | None, cell: BestOf | None) -> str:
    """Say how the cell's verdict stands to the paper's lowest, and greedy's scale."""
    if paper is None:
        return "not in the paper's tables"
    first = str(paper.idxmin())
    if cell is None:
        parts = [f"paper's lowest {first}"]
    elif cell.clear:
        parts = ["matches (clearly)" if cell.best == first else f"differs: paper's lowest {first}"]
    elif first == cell.best or first in cell.tied:
        parts = [f"consistent: the paper's lowest ({first}) is among the tied"]
    else:
        parts = [f"differs: the paper's lowest ({first}) is clearly above {cell.best}"]
    if {"greedy", "ours"} <= set(ours.index) and ours["greedy"] > 0:
        change, theirs = ours["ours"] / ours["greedy"] - 1, paper["ours"] / paper["greedy"] - 1
        parts.append(
            f"greedy x{ours['greedy'] / paper['greedy']:.2f} the paper's; ours "
            f"{change:+.0%} on greedy (paper {theirs:+.0%})"
        )
    return "; ".join(parts)


def _table(rows: pd.DataFrame, best: pd.DataFrame, link: str) -> tuple[list[dict], dict]:
    """Return the table's rows (ours beside the paper's, the cells' verdicts) and the pages.

    The second value holds the paper's-protocol page (``"cells"``, a
    :class:`~osfb_gym.bench.suites.jiang.verdicts.CellVerdicts`), the held-out
    page (``"held_out"``), the paper's lowest per cell (``"paper"``) and
    greedy's ratio to the paper's (``"ratios"``).
    """
    seeds = sorted(rows["seed"].unique())
    held_choice = tuned(rows[rows["seed"].isin(seeds[0::2])], "cumulative_loss")
    report = rows[rows["seed"].isin(seeds[1::2])]
    held_best = report.merge(held_choice[["setting", "agent", "params"]].drop_duplicates())
    cells, index = cell_verdicts(best)
    held, held_index = cell_verdicts(held_best)
    bests, held_bests = cells.bests, held.bests
    paper = published(link)
    table, paper_lowest, ratios = [], [], []
    for (dataset, cutoff), part in best.groupby(["dataset", "cutoff"], sort=False):
        means = part.groupby("method")["cumulative_loss"].mean()
        key = (str(dataset), float(cutoff))
        cell = bests[index[key]] if key in index else None
        held_cell = held_bests[held_index[key]] if key in held_index else None
        reference = paper.loc[(dataset, cutoff)] if (dataset, cutoff) in paper.index else None
        row = {"dataset": dataset, "cutoff": f"{cutoff:.0%}"}
        for method in (m for m in METHODS if m in means):
            theirs = "" if reference is None else f" ({reference[method]:.2f})"
            row[method] = f"{means[method]:.2f}{theirs}"
        row["lowest (paired verdict)"] = "-" if cell is None else cell_text(cell)
        row["held-out"] = "-" if held_cell is None else cell_text(held_cell)
        row["against the paper"] = _verdict(means, reference, cell)
        table.append(row)
        if reference is not None:
            paper_lowest.append(str(reference.idxmin()))
            if "greedy" in means and reference["greedy"] > 0:
                ratios.append(float(means["greedy"] / reference["greedy"]))
    return table, {"cells": cells, "held_out": held, "paper": paper_lowest, "ratios": ratios}


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
    table, pages = _table(rows, best, suite.link)
    text = pd.DataFrame(table).to_markdown(index=False)
    cells = best.groupby(["dataset", "cutoff", "method"])
    tuned_cells = cells["cumulative_loss"].agg(["mean", "sem"]).join(cells["alpha"].first())
    tuned_cells["seeds"] = cells["seed"].count()
    plots = _plots(best, out)
    seeds = [int(seed) for seed in sorted(rows["seed"].unique())]
    alphas = sorted(rows["alpha"].dropna().unique())
    tuned_methods = [m for m in METHODS if AGENTS[m][1] and m in set(rows["method"])]
    notes = [_data_note(name, data_home, suite) for name in sorted(rows["dataset"].unique())]
    paper_wins = pages["paper"].count("ours")
    page = [
        f"# osfb-bench {suite.name}",
        suite.description,
        f"Fit `{suite.fit}`: {json.dumps(FITS[suite.fit])}. Mean cumulative one-sided loss "
        f"over {len(seeds)} splits (seeds {seeds[0]}-{seeds[-1]}), each method at its best "
        f"alpha in {grid_text(alphas)} (greedy untuned), the paper's number in parentheses. "
        "'lowest (paired verdict)': under the paper's protocol (alpha tuned on the splits it is "
        "reported on), the lowest mean is 'clearly lowest' only when paired tests over the "
        "splits put it below every other method, else 'tied (within noise)' with the methods "
        "it cannot be told from; the interval is the paired CI of the lowest against its "
        f"closest competitor. 'held-out': alpha tuned on splits {seeds[0::2]}, the verdict on "
        f"splits {seeds[1::2]} (its own Holm family).",
        text,
        tally(pages["cells"], METHODS)
        + f" Held-out tuning: {tally(pages['held_out'], METHODS)} The paper's table has "
        f"Adaptive (ours) lowest in {paper_wins} of the {len(pages['paper'])} cells it reports "
        "(means, no test).",
        power_note(pages["cells"]),
        grid_note(alphas, tuned_methods),
        scale_note(pages["ratios"]),
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
