"""Tables 1 and 2 of Jiang, Jiang and Pacchiano (2021): one sweep stage and a report.

Section 8's protocol on the engine. The report tunes ``alpha`` twice with
:func:`osfb_gym.bench.report.tuned`: on the splits it is reported on (the paper's
protocol) and held out (on the even-ranked splits, reported on the others); each
cell's "clearly lowest" or "tied (within noise)" is a paired verdict over the
splits (:mod:`osfb_gym.bench.suites.jiang_verdicts`). ``fit="paper"`` fits as
the paper's text says, ``"legacy"`` as the earlier runs (docs/reproductions/jiang.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from osfb_gym.bench.report import (
    Report,
    curves_over_seeds,
    datasets_found,
    plot_curves,
    save_report,
    tuned,
)
from osfb_gym.bench.report import published as _read
from osfb_gym.bench.run import run_cells
from osfb_gym.bench.suites.jiang_verdicts import (
    cell_text,
    cell_verdicts,
    grid_note,
    grid_text,
    power_note,
    scale_note,
    tally,
)
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.data import load
from osfb_gym.data.registry import SPECS, get_spec
from osfb_gym.stats import BestOf

#: the lending paper's datasets, in its tables' order: those whose spec has its row count
LENDING_DATASETS = tuple(spec.name for spec in SPECS if "paper_rows" in spec.metadata)
#: the paper's columns in its order: the agent and its tuned hyperparameter ("ours" = Adaptive)
AGENTS: dict[str, tuple[str, str | None]] = {
    "greedy": ("Greedy", None),
    "eps-greedy": ("EpsilonGreedy", "alpha"),
    "os-eps-greedy": ("OneSidedEpsilonGreedy", "alpha"),
    "noise": ("Noise", "alpha"),
    "os-noise": ("OneSidedNoise", "alpha"),
    "margin": ("Margin", "alpha"),
    "ours": ("Adaptive", "rho"),
}
METHODS = tuple(AGENTS)
METHOD_OF = {name: method for method, (name, _) in AGENTS.items()}
#: env and learner arguments per fit (why each: docs/reproductions/jiang.md)
FITS: dict[str, dict[str, dict[str, Any]]] = {
    "paper": {
        "env": {"encoding": "native", "scaling": "robust"},
        "linear": {"l2": 1e-6},
        "logistic": {"l2": 1.0, "design_l2": 1e-6, "free_intercept": True},
        "ours": {"rho_schedule": "sqrt_log_t", "per_applicant_A": True},
    },
    "legacy": {"env": {}, "linear": {}, "logistic": {}, "ours": {}},
}


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


@dataclass(frozen=True)
class JiangSuite:
    """One of the two tables: link, datasets, cutoffs, splits (seeds), grid and fit."""

    name: str
    link: str
    datasets: tuple[str, ...] = LENDING_DATASETS
    cutoffs: tuple[float, ...] = (0.5, 0.7)
    seeds: tuple[int, ...] = tuple(range(10))
    alphas: tuple[float, ...] = tuple(2.0**k for k in range(-10, 4))
    methods: tuple[str, ...] = METHODS
    description: str = field(default="", compare=False)
    fit: str = "paper"

    @property
    def grid_size(self) -> int:
        """Cells of one (dataset, cutoff, split): greedy once, every other method at each alpha."""
        return sum(len(self.alphas) if AGENTS[method][1] else 1 for method in self.methods)

    def batch_size(self, dataset: str) -> int:
        """Return the paper's batch size for ``dataset`` under this suite's link."""
        return 1 if self.link == "linear" else 1000 if dataset in ("adult", "bank", "eeg") else 100

    def spec(self, data_home: str | None, horizon: int | None) -> SweepSpec:
        """Return the sweep: a setting per (dataset, cutoff), each method's alpha grid."""
        if self.fit not in FITS:
            raise ValueError(f"fit must be one of {sorted(FITS)}, got {self.fit!r}")
        fit = FITS[self.fit]
        common = {"link": self.link, **fit["env"]}
        common |= {k: v for k, v in (("data_home", data_home), ("horizon", horizon)) if v}
        envs = []
        for dataset in self.datasets:
            options = dict(common, dataset=dataset, batch_size=self.batch_size(dataset))
            if "encoding" not in get_spec(dataset).options:  # bundled data: no codes
                options.pop("encoding", None)
            for cutoff in self.cutoffs:
                kwargs = options | {"cutoff_quantile": cutoff}
                envs.append(EnvSpec("OneSidedLending-v0", f"{dataset} {cutoff:.0%}", kwargs))
        agents = []
        for method in self.methods:
            name, parameter = AGENTS[method]
            params = {**fit[self.link], **(fit["ours"] if method == "ours" else {})}
            grid = {parameter: list(self.alphas)} if parameter else {}
            agents.append(AgentSpec(name, params, grid))
        return SweepSpec(self.name, tuple(envs), tuple(agents), self.seeds, self.description)


JIANG_SUITES = {
    "jiang-linear": JiangSuite(
        "jiang-linear",
        "linear",
        description="Table 1 of Jiang, Jiang and Pacchiano (2021): least squares, batch size 1.",
    ),
    "jiang-logistic": JiangSuite(
        "jiang-logistic",
        "logistic",
        description="Table 2 of Jiang, Jiang and Pacchiano (2021): logistic regression, batch "
        "size 1000 (Adult, Bank, EEG) or 100.",
    ),
}


@dataclass(frozen=True)
class Settings:
    """The ``--set`` keys of the ``jiang-*`` suites, with :class:`JiangSuite`'s defaults."""

    #: the datasets to run (of those found under the data home)
    datasets: tuple[str, ...] = JiangSuite.datasets
    #: the grid of every method's alpha (Adaptive's rho), LOW:HIGH as powers of 2
    alphas: tuple[float, ...] = field(default=JiangSuite.alphas, metadata={"kind": "alphas"})
    #: the paper's random splits: seeds 0..splits-1
    splits: int = len(JiangSuite.seeds)
    #: the learners' fit: "paper" or "legacy" (the fit before the fidelity work)
    fit: str = JiangSuite.fit


def run_jiang(
    suite: str | JiangSuite,
    out_dir: str | Path,
    *,
    datasets: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    splits: int | None = None,
    alphas: Sequence[float] | None = None,
    fit: str | None = None,
    data_home: str | None = None,
    horizon: int | None = None,
    **engine: Any,
) -> Report:
    """Run ``suite`` on the datasets found, then report; ``engine`` goes to :func:`run_cells`.

    ``splits`` (the paper's random splits) is another name for ``seeds`` 0..splits-1.
    """
    suite = JIANG_SUITES[suite] if isinstance(suite, str) else suite
    if splits is not None and seeds is not None:
        raise ValueError("give --seeds or --set splits=, not both (they are the same)")
    seeds = seeds if splits is None else tuple(range(splits))
    found, missing = datasets_found(
        suite.datasets if datasets is None else datasets, data_home, suite.name
    )
    suite = replace(
        suite,
        datasets=tuple(found),
        seeds=tuple(seeds or suite.seeds),
        alphas=tuple(alphas or suite.alphas),
        fit=fit or suite.fit,
    )
    if engine.get("chunk_size") is None:
        # a task per (dataset, cutoff, split): the engine's default chunks (256 cells, closed
        # at a split's end) hold four Adult or Bank splits, the last of which pack worse
        engine["chunk_size"] = suite.grid_size
    rows, _ = run_cells(suite.spec(data_home, horizon), Path(out_dir), **engine)
    return write_report(rows, suite, out_dir, data_home=data_home, missing=missing)


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
    :class:`~osfb_gym.bench.suites.jiang_verdicts.CellVerdicts`), the held-out
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
    return save_report(out, "table.md", page_text, frames, plots, results=rows, table=text)


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
