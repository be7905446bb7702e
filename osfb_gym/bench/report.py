"""The engine's report helpers: what a run writes, tuned tables, curves and figures.

What a run returns and writes (:class:`Report`, :func:`save_report`), tuned
cells and their table, curves with bands in one colour per agent, figures.
What only the suites' pages use (claims tables, published numbers, subsets)
is in :mod:`osfb_gym.bench.suites.tables`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


# --------------------------------------------------------------------- what a run gives
@dataclass
class Report:
    """What a suite's run wrote: its page (markdown), its files and its named tables.

    A named table reads as an attribute too: ``report.tuned`` is
    ``report.tables["tuned"]``.
    """

    text: str
    files: list[Path]
    tables: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["tables"][name]
        except KeyError:
            raise AttributeError(f"the report has no table {name!r}") from None

    def __str__(self) -> str:
        """Return what ``osfb-bench run`` prints: the page, then ``written: a, b``."""
        return f"{self.text}\nwritten: " + ", ".join(str(path) for path in self.files)


#: the page of every run, in its output folder
PAGE = "report.md"


def save_report(
    out: str | Path,
    text: str,
    frames: dict[str, pd.DataFrame],
    figures: Sequence[Path] = (),
    **tables: Any,
) -> Report:
    """Write each of ``frames`` to ``out/<name>.csv`` and ``text`` to ``out/report.md``.

    A frame's index is written when it is named. The report's tables are
    ``frames`` and ``tables`` (which take precedence: e.g. the rows with
    their curves where the CSV has none); its files: CSVs, page, ``figures``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / f"{name}.csv" for name in frames]
    for path, frame in zip(files, frames.values(), strict=True):
        frame.to_csv(path, index=any(level is not None for level in frame.index.names))
    (out / PAGE).write_text(text)
    return Report(text, [*files, out / PAGE, *figures], {**frames, **tables})


# ----------------------------------------------------------------------- tuned cells
def _varied(params: pd.Series) -> list[str]:
    """Names of the hyperparameters that take more than one value among ``params`` (JSON)."""
    parsed = [json.loads(text) for text in params.unique()]
    names = dict.fromkeys(name for point in parsed for name in point)
    return [name for name in names if len({json.dumps(p.get(name)) for p in parsed}) > 1]


def tuned(
    results: pd.DataFrame,
    metric: str,
    *,
    lower_is_better: bool = True,
) -> pd.DataFrame:
    """Pick each agent's best hyperparameters per setting, as the papers tune.

    ``results`` has one row per cell with ``setting``, ``agent``, ``params``
    (JSON text), ``seed`` and ``metric``. For every (setting, agent) the
    setting of the grid with the best mean ``metric`` over its seeds is
    chosen (ties: the first in ``results``); the rows of that choice are
    returned, with a ``chosen`` column naming the grid values picked (empty
    when the agent had no grid).

    Examples
    --------
    >>> frame = pd.DataFrame({"setting": ["s"] * 4, "agent": ["A"] * 4, "seed": [0, 1, 0, 1],
    ...     "params": ['{"alpha": 1}'] * 2 + ['{"alpha": 2}'] * 2, "loss": [3.0, 5.0, 1.0, 2.0]})
    >>> best = tuned(frame, "loss")
    >>> best["chosen"].unique().tolist(), best["loss"].tolist()
    (['alpha=2'], [1.0, 2.0])
    """
    chosen = []
    for _, group in results.groupby(["setting", "agent"], sort=False):
        candidates = group.groupby("params", sort=False)
        means = candidates[metric].mean()
        best = means.idxmin() if lower_is_better else means.idxmax()
        rows = group[group["params"] == best].copy()
        point = json.loads(best)
        rows["chosen"] = ", ".join(f"{n}={point.get(n)}" for n in _varied(group["params"]))
        chosen.append(rows)
    return pd.concat(chosen, ignore_index=True)


def tuned_table(
    results: pd.DataFrame,
    metric: str,
    *,
    lower_is_better: bool = True,
    extra: tuple[str, ...] = (),
) -> str:
    """Return a markdown table of each agent's tuned ``metric`` per setting (mean ± s.e.).

    The spread is the standard error of the mean over seeds (left out with one
    seed), and the column's header says so. ``extra`` metrics are shown as means
    of the chosen setting's seeds.

    >>> frame = pd.DataFrame({"setting": "s", "agent": "A", "seed": [0, 1], "params": "{}",
    ...                       "loss": [1.0, 3.0]})
    >>> print(tuned_table(frame, "loss"))
    | setting   | agent   | loss (mean ± s.e.)   |   seeds |
    |:----------|:--------|:---------------------|--------:|
    | s         | A       | 2 ± 1                |       2 |
    """
    best = tuned(results, metric, lower_is_better=lower_is_better)
    grouped = best.groupby(["setting", "agent"], sort=False)
    mean, error = grouped[metric].mean(), grouped[metric].sem()
    table = pd.DataFrame(index=mean.index)
    table["chosen"] = grouped["chosen"].first()
    table[f"{metric} (mean ± s.e.)"] = [mean_se(m, e) for m, e in zip(mean, error, strict=True)]
    for name in extra:
        if name in best:
            table[name] = grouped[name].mean().round(3)
    table["seeds"] = grouped["seed"].count()
    if not table["chosen"].astype(bool).any():
        table = table.drop(columns="chosen")
    return table.reset_index().to_markdown(index=False)


# ---------------------------------------------------------------------------- tables
def mean_se(mean: float, error: float) -> str:
    """Format ``mean ± error`` (a standard error) as the tables do; a NaN error is left out.

    >>> mean_se(2.0, 1.0), mean_se(0.2979, 0.0443), mean_se(3.0, float("nan"))
    ('2 ± 1', '0.2979 ± 0.044', '3')
    """
    return f"{mean:.4g} ± {error:.2g}" if np.isfinite(error) else f"{mean:.4g}"


# ---------------------------------------------------------------------------- figures
def colours(agents: Iterable[Any]) -> dict[str, str]:
    """One colour per agent, in order of first appearance: pass it to every panel and file.

    >>> colours(["DSOL", "DRAL", "DSOL", "DSAL"])
    {'DSOL': 'C0', 'DRAL': 'C1', 'DSAL': 'C2'}
    """
    import matplotlib as mpl

    names = list(dict.fromkeys(str(agent) for agent in agents))
    extra = [mpl.colors.to_hex(c) for c in mpl.colormaps["tab20b"].colors]  # type: ignore[attr-defined]
    return {
        name: f"C{i}" if i < 10 else extra[(i - 10) % len(extra)] for i, name in enumerate(names)
    }


def band(
    axis: Any,
    x: Any,
    mean: Any,
    spread: Any = 0.0,
    *,
    colour: str,
    label: str,
    style: str = "-",
    alpha: float = 0.2,
    bounds: Any = None,
    **line: Any,
) -> None:
    """Draw ``mean`` against ``x`` with a band ``mean ± spread`` in ``colour`` on ``axis``.

    ``bounds``: the band's ``(low, high)`` instead (e.g. a confidence interval);
    ``line``: more arguments of the line (``marker``).
    """
    mean, spread = np.asarray(mean, dtype=float), np.asarray(spread, dtype=float)
    low, high = (mean - spread, mean + spread) if bounds is None else bounds
    axis.plot(x, mean, style, color=colour, label=label, **line)
    axis.fill_between(x, low, high, color=colour, alpha=alpha)


def panels(rows: int, columns: int, *, width: float, height: float, dpi: int = 100) -> Any:
    """Return a headless matplotlib figure and its ``(rows, columns)`` array of axes.

    ``width`` and ``height`` are those of one panel, in inches. The Agg
    canvas needs no display and touches no global pyplot state.

    >>> figure, axes = panels(2, 3, width=1, height=1)
    >>> axes.shape
    (2, 3)
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width * columns, height * rows), dpi=dpi)
    FigureCanvasAgg(figure)
    return figure, figure.subplots(rows, columns, squeeze=False)


def save(figure: Any, path: str | Path, *, title: str = "") -> Path:
    """Lay out ``figure`` (with ``title`` above its panels) and write it to ``path``."""
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path)
    return path


def curves_over_seeds(rows: pd.DataFrame, column: str) -> dict[tuple[str, str], Any]:
    """Return the curves of :func:`plot_curves`: ``(setting, agent) -> (t, runs)``.

    ``rows`` are stored rows (one agent setting per ``(setting, agent)``, e.g.
    :func:`tuned`'s) with ``curve_t`` and ``column``; a group whose rows hold
    no curve or curves of different lengths (truncated streams) is left out.
    """
    return {
        key: (np.asarray(group["curve_t"].iloc[0]), np.stack(group[column].map(np.asarray)))
        for key, group in rows.groupby(["setting", "agent"], sort=False)
        if "curve_t" in group and len({len(t) for t in group["curve_t"]}) == 1
    }


def plot_curves(
    curves: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]],
    path: str | Path,
    *,
    title: str = "",
    ylabel: str = "average one-sided loss R_t / t",
    xlabel: str = "t",
    log_x: bool = True,
    log_y: bool = False,
    columns: int | None = None,
    size: tuple[float, float] = (5, 3.6),
    title_size: int = 10,
) -> Path:
    """Plot curves sampled at steps ``t``: one panel per setting, mean and ±1 s.e. over seeds.

    ``curves`` maps ``(setting, agent)`` to ``(t, runs)``, ``runs`` of shape
    ``(seeds, len(t))``. An agent keeps its colour in every panel
    (:func:`colours` of the agents in order). ``columns`` panels a row (None:
    one row), each of ``size`` inches.

    >>> t, runs = np.arange(1, 4), np.ones((2, 3))
    >>> import tempfile; folder = tempfile.mkdtemp()
    >>> plot_curves({("s", "A"): (t, runs)}, Path(folder) / "c.png").name
    'c.png'
    """
    palette = colours(agent for _, agent in curves)
    settings = list(dict.fromkeys(setting for setting, _ in curves))
    across = len(settings) if columns is None else min(columns, len(settings))
    figure, grid = panels(-(-len(settings) // across), across, width=size[0], height=size[1])
    for axis in grid.ravel()[len(settings) :]:
        axis.set_visible(False)
    for axis, setting in zip(grid.ravel(), settings, strict=False):
        for (label, agent), (t, runs) in curves.items():
            if label == setting:
                error = runs.std(axis=0, ddof=1) / np.sqrt(len(runs)) if len(runs) > 1 else 0
                band(
                    axis,
                    t,
                    runs.mean(axis=0),
                    error + 0 * runs[0],
                    colour=palette[agent],
                    label=agent,
                    alpha=0.25,
                )
        axis.set(
            xscale="log" if log_x else "linear",
            yscale="log" if log_y else "linear",
            xlabel=xlabel,
            ylabel=ylabel,
        )
        axis.set_title(setting, fontsize=title_size)
        axis.legend(fontsize=8)
    return save(figure, path, title=title)


def plot_average_loss(
    curves: dict[tuple[str, str], np.ndarray], path: str | Path, *, title: str = ""
) -> Path:
    """Plot average loss ``R_t / t`` against ``t``: one panel per setting, bands over seeds.

    ``curves`` maps ``(setting, agent)`` to an array of shape ``(seeds, T)``.
    """
    at = {key: np.arange(1, runs.shape[1] + 1) for key, runs in curves.items()}
    return plot_curves({key: (at[key], runs) for key, runs in curves.items()}, path, title=title)
