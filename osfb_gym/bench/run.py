"""Run a sweep: cells into the store, then tables, plots and a one-screen summary.

:func:`run_sweep` runs the cells of a :class:`~osfb_gym.bench.sweep.SweepSpec`
that are not finished yet (all of them without ``resume``) on an executor,
writes each finished cell to the :class:`~osfb_gym.bench.store.ResultStore`
as it arrives, and then builds, from the store, ``results.csv``, one tuned
table per env family (``table.md``) and one plot per family.
:func:`run_suite` runs a built-in suite (``quick``) with its overrides.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from osfb_gym.bench.executors import execute, train_models
from osfb_gym.bench.plots import plot_curves
from osfb_gym.bench.store import ResultStore
from osfb_gym.bench.sweep import EnvSpec, SweepSpec, env_arguments, validate
from osfb_gym.bench.tables import tuned, tuned_table
from osfb_gym.core.family import family_of


@dataclass
class SuiteResult:
    """What a sweep run produced.

    Attributes
    ----------
    results
        One row per cell of the sweep (from the store), metrics and summary.
    curves
        ``(setting, agent) -> (t, runs)``: each agent's tuned setting's
        ``R_t / t`` curves over seeds (per-step loss for services).
    table
        The markdown tables, one per env family.
    files
        Paths written (results CSV, tables, plots).
    summary
        The one-screen summary printed at the end.
    """

    results: pd.DataFrame
    curves: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]
    table: str
    files: list[Path]
    summary: str = ""


def run_sweep(
    spec: SweepSpec,
    out_dir: str | Path,
    *,
    resume: bool = False,
    executor: str = "local",
    workers: int = 1,
    address: str | None = None,
    chunk_size: int | None = None,
    progress: bool = True,
) -> SuiteResult:
    """Run ``spec`` into ``out_dir``; see the module docstring.

    Parameters
    ----------
    spec
        The sweep (validated again here, before any work).
    out_dir
        Folder of the store (``cells/``), trained RL models (``models/``),
        ``results.csv``, ``table.md`` and the PNG plots.
    resume
        Skip the cells already in the store; without it every cell runs
        again and replaces its file.
    executor, workers, address, chunk_size
        Where the cells run (:func:`osfb_gym.bench.executors.execute`).
    progress
        Show a progress bar with the ETA.
    """
    started = time.perf_counter()
    out = Path(out_dir)
    results, n_run = run_cells(
        spec, out, resume=resume, executor=executor, workers=workers, address=address,
        chunk_size=chunk_size, progress=progress,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    table, curves, files = write_outputs(spec, results, out)
    summary = _summary(spec, len(results), n_run, seconds, executor, workers, table, files)
    return SuiteResult(results=results, curves=curves, table=table, files=files, summary=summary)


def run_cells(
    spec: SweepSpec,
    out: Path,
    *,
    resume: bool = False,
    executor: str = "local",
    workers: int = 1,
    address: str | None = None,
    chunk_size: int | None = None,
    progress: bool = True,
) -> tuple[pd.DataFrame, int]:
    """Validate ``spec``, run its unfinished cells into the store; return every row, how many ran.

    The rows are the store's, in the spec's cell order; ``params`` and
    ``env_kwargs`` are JSON text. A suite's report starts from them.
    """
    validate(spec)
    store = ResultStore(out)
    cells = spec.cells()
    finished = store.done() if resume else set()
    todo = [cell for cell in cells if cell.key not in finished]
    models = train_models(todo, out / "models", progress=progress)
    with tqdm(total=len(todo), desc=f"osfb-bench {spec.name}", disable=not progress) as bar:

        def write(rows: list[dict[str, Any]]) -> None:
            for row in rows:
                store.write(row)
            bar.update(len(rows))

        execute(
            todo,
            write,
            executor=executor,
            workers=workers,
            address=address,
            models=models,
            chunk_size=chunk_size,
        )
    results = store.read([cell.key for cell in cells])
    for column in ("params", "env_kwargs"):
        results[column] = [json.dumps(value, sort_keys=True) for value in results[column]]
    return results, len(todo)


def write_outputs(
    spec: SweepSpec, results: pd.DataFrame, out: Path
) -> tuple[str, dict[tuple[str, str], tuple[np.ndarray, np.ndarray]], list[Path]]:
    """Write ``results.csv``, the per-family tuned tables and plots; return table, curves, files."""
    results.drop(columns=[c for c in results if c.startswith("curve_")]).to_csv(
        out / "results.csv", index=False
    )
    files = [out / "results.csv", out / "table.md"]
    sections, all_curves = [], {}
    families = dict.fromkeys(family_of(env_id) for env_id in results["env_id"])
    for family in families:
        rows = results[[family_of(env_id) is family for env_id in results["env_id"]]]
        metric, lower = family.objective, family.lower_is_better
        best = tuned(rows, metric, lower_is_better=lower)
        sections.append(
            f"## {family.name}: {metric} ({family.direction} is better; tuned setting per agent)"
            "\n\n" + tuned_table(rows, metric, lower_is_better=lower, extra=family.columns)
        )
        column = f"curve_{family.curve}"
        curves = {
            key: (np.asarray(group["curve_t"].iloc[0]), np.stack(group[column].map(np.asarray)))
            for key, group in best.groupby(["setting", "agent"], sort=False)
        }
        all_curves.update(curves)
        stem = "average_loss" if family.curve == "average_loss" else "loss_vs_k"
        title = f"{spec.name}: {family.name}"
        if family.curve == "average_loss":
            title += ", mean over seeds, band ±1 s.e."
        path = plot_curves(
            curves, out / f"{stem}_{family.name}.png", ylabel=family.curve_label,
            xlabel=family.x_label, log_x=family.log_x, title=title,
        )  # fmt: skip
        files.append(path)
    table = "\n\n".join(sections)
    header = f"# osfb-bench {spec.name}\n\n{spec.description}\n\n" if spec.description else ""
    files[1].write_text(f"{header or f'# osfb-bench {spec.name}'}\n\n{table}\n")
    return table, all_curves, files


def _summary(
    spec: SweepSpec,
    n_cells: int,
    n_run: int,
    seconds: float,
    executor: str,
    workers: int,
    table: str,
    files: list[Path],
) -> str:
    rate = f"{n_run / seconds:.1f} cells/s" if n_run and seconds > 0 else "nothing to run"
    return "\n".join(
        [
            f"osfb-bench {spec.name}: {n_cells} cells ({n_run} run now, "
            f"{n_cells - n_run} resumed from the store) in {seconds:.1f} s "
            f"on {executor} x{workers}: {rate}",
            "",
            table,
            "",
            "written: " + ", ".join(str(path) for path in files),
        ]
    )


def with_overrides(
    spec: SweepSpec,
    *,
    seeds: tuple[int, ...] | None = None,
    env_overrides: dict | None = None,
    total_timesteps: int | None = None,
) -> SweepSpec:
    """Return ``spec`` with other seeds, env arguments or RL training budget.

    An env argument a setting's env does not take (``horizon`` for
    services) is left out there; ``total_timesteps`` replaces the budget of
    every RL agent.
    """
    overrides = env_overrides or {}
    agents = tuple(
        dataclasses.replace(agent, params=agent.params | {"total_timesteps": total_timesteps})
        if agent.is_rl and total_timesteps is not None
        else agent
        for agent in spec.agents
    )
    envs = tuple(
        EnvSpec(
            env.id,
            env.label,
            env.kwargs | {k: v for k, v in overrides.items() if k in env_arguments(env.id)},
        )
        for env in spec.envs
    )
    return dataclasses.replace(
        spec, envs=envs, agents=agents, seeds=spec.seeds if seeds is None else tuple(seeds)
    )


def run_suite(
    suite: SweepSpec,
    out_dir: str | Path,
    *,
    seeds: tuple[int, ...] | None = None,
    env_overrides: dict | None = None,
    total_timesteps: int | None = None,
    progress: bool = True,
    **options: Any,
) -> SuiteResult:
    """Run a built-in suite with overridden seeds, env arguments (a short ``horizon``), RL budget.

    ``options`` go to :func:`run_sweep` (``resume``, ``workers``, ``executor``, ...).
    """
    spec = with_overrides(
        suite, seeds=seeds, env_overrides=env_overrides, total_timesteps=total_timesteps
    )
    return run_sweep(spec, out_dir, progress=progress, **options)
