"""Run a suite: every cell, agent and seed, into a results table, a markdown table and a plot."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from osfb_gym.bench.plots import plot_average_loss
from osfb_gym.bench.suites import Suite
from osfb_gym.bench.tables import summary_table
from osfb_gym.runner import Trajectory, run_episode


@dataclass
class SuiteResult:
    """What a suite run produced.

    Attributes
    ----------
    results
        One row per (cell, agent, seed) with the episode metrics.
    curves
        ``(cell label, agent name) -> array (seeds, T)`` of ``R_t / t``.
    table
        The markdown summary table.
    files
        Paths written (results CSV, table, plot).
    """

    results: pd.DataFrame
    curves: dict[tuple[str, str], np.ndarray]
    table: str
    files: list[Path]


def run_suite(
    suite: Suite,
    out_dir: str | Path,
    *,
    seeds: tuple[int, ...] | None = None,
    env_overrides: dict | None = None,
    progress: bool = True,
) -> SuiteResult:
    """Run every cell of ``suite`` and write results, table and plot to ``out_dir``.

    Parameters
    ----------
    suite
        The suite to run.
    out_dir
        Directory for ``results.csv``, ``table.md`` and ``average_loss.png``.
    seeds
        Override the suite's seeds.
    env_overrides
        Keyword arguments applied to every cell's env (e.g. a short ``horizon``).
    progress
        Show a progress bar.
    """
    seeds = suite.seeds if seeds is None else tuple(seeds)
    cells = [
        dataclasses.replace(cell, env_kwargs={**cell.env_kwargs, **(env_overrides or {})})
        for cell in suite.cells
    ]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    total = sum(len(cell.agents) for cell in cells) * len(seeds)
    rows: list[dict] = []
    curves: dict[tuple[str, str], np.ndarray] = {}
    with tqdm(total=total, desc=f"osfb-bench {suite.name}", disable=not progress) as bar:
        for cell in cells:
            env = gym.make(cell.env_id, **cell.env_kwargs)
            for make_agent in cell.agents:
                name = getattr(make_agent, "__name__", type(make_agent).__name__)
                trajectories: list[Trajectory] = []
                for seed in seeds:
                    agent = make_agent()
                    trajectory = run_episode(env, agent, seed)
                    trajectories.append(trajectory)
                    rows.append(
                        {
                            "setting": cell.label,
                            "env_id": cell.env_id,
                            "agent": name,
                            "params": repr(agent),
                            "seed": seed,
                            **trajectory.metrics,
                        }
                    )
                    bar.update()
                length = min(t.average_loss.size for t in trajectories)
                curves[(cell.label, name)] = np.stack(
                    [t.average_loss[:length] for t in trajectories]
                )
            env.close()
    results = pd.DataFrame(rows)
    table = summary_table(results)
    files = [out / "results.csv", out / "table.md", out / "average_loss.png"]
    results.to_csv(files[0], index=False)
    header = f"# osfb-bench {suite.name}\n\n{suite.description}\n\n"
    files[1].write_text(header + table + "\n")
    plot_average_loss(
        curves, files[2], title=f"osfb-bench {suite.name}: mean over seeds, band ±1 s.e."
    )
    return SuiteResult(results=results, curves=curves, table=table, files=files)
