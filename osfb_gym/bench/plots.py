"""PNG plots of benchmark results, as in the papers' figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def panels(rows: int, columns: int, *, width: float, height: float, dpi: int = 100) -> Any:
    """Return a headless matplotlib figure and its ``(rows, columns)`` array of axes.

    ``width`` and ``height`` are those of one panel, in inches. The Agg
    canvas needs no display and touches no global pyplot state.
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


def plot_average_loss(
    curves: dict[tuple[str, str], np.ndarray], path: str | Path, *, title: str = ""
) -> Path:
    """Plot average loss ``R_t / t`` against ``t``: one panel per setting, bands over seeds.

    ``curves`` maps ``(setting, agent)`` to an array of shape ``(seeds, T)``;
    the line is the mean over seeds and the band one standard error.
    """
    at = {key: np.arange(1, runs.shape[1] + 1) for key, runs in curves.items()}
    return plot_curves({key: (at[key], runs) for key, runs in curves.items()}, path, title=title)


def plot_curves(
    curves: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]],
    path: str | Path,
    *,
    title: str = "",
    ylabel: str = "average one-sided loss R_t / t",
    xlabel: str = "t",
    log_x: bool = True,
) -> Path:
    """Plot curves sampled at steps ``t``: one panel per setting, mean and ±1 s.e. over seeds.

    ``curves`` maps ``(setting, agent)`` to ``(t, runs)``, ``runs`` of shape
    ``(seeds, len(t))``.
    """
    settings = list(dict.fromkeys(setting for setting, _ in curves))
    figure, grid = panels(1, len(settings), width=5, height=3.6)
    axes = grid[0]
    for axis, setting in zip(axes, settings, strict=True):
        for (label, agent), (t, runs) in curves.items():
            if label != setting:
                continue
            mean = runs.mean(axis=0)
            error = runs.std(axis=0, ddof=1) / np.sqrt(len(runs)) if len(runs) > 1 else 0 * mean
            axis.plot(t, mean, label=agent)
            axis.fill_between(t, mean - error, mean + error, alpha=0.25)
        if log_x:
            axis.set_xscale("log")
        axis.set_xlabel(xlabel)
        axis.set_ylabel(ylabel)
        axis.set_title(setting, fontsize=10)
        axis.legend(fontsize=8)
    return save(figure, path, title=title)
