"""Run a sweep: its unfinished cells into the store, then tables, plots and a summary.

:func:`run_cells` runs the cells of a :class:`~osfb_gym.bench.sweep.SweepSpec`
not finished yet (all of them without ``resume``) on an executor and writes
each row to the :class:`~osfb_gym.bench.store.ResultStore` as it arrives; a
suite's report starts from the rows it returns. :func:`run_sweep` adds
``results.csv``, one tuned table per env family (``report.md``) and one plot
per family (``osfb-bench sweep``). A built-in suite runs through
:mod:`osfb_gym.bench.driver`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from osfb_gym.bench.executors import execute, train_models
from osfb_gym.bench.report import (
    Report,
    curves_over_seeds,
    plot_curves,
    save_report,
    tuned,
    tuned_table,
)
from osfb_gym.bench.store import ResultStore
from osfb_gym.bench.sweep import SweepSpec, validate
from osfb_gym.core.family import family_of


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
    label: str | None = None,
) -> tuple[pd.DataFrame, int]:
    """Validate ``spec``, run its unfinished cells into the store; return every row, how many ran.

    The rows are the store's, in the spec's cell order, with ``params`` and
    ``env_kwargs`` as JSON text, after the columns of the cells'
    :attr:`~osfb_gym.bench.sweep.Cell.tags`. ``resume`` skips the cells already stored
    (else every cell runs again and replaces its file); RL models are trained
    first, under ``out/models``; the other options are
    :func:`osfb_gym.bench.executors.execute`'s; ``progress`` shows a bar of the cells
    finished, with the ETA, named ``label`` (default: ``osfb-bench <spec name>``).
    """
    validate(spec)
    store = ResultStore(out)
    cells = spec.cells()
    finished = store.done() if resume else set()
    todo = [cell for cell in cells if cell.key not in finished]
    models = train_models(todo, out / "models", progress=progress)
    desc = label or f"osfb-bench {spec.name}"
    with tqdm(total=len(todo), desc=desc, unit="cell", disable=not progress) as bar:

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
    if any(cell.tags for cell in cells):
        tags = pd.DataFrame([cell.tags for cell in cells])
        if set(tags) & set(results):  # the rows are stored: a run with other tags resumes them
            raise ValueError(f"tags {sorted(set(tags) & set(results))} name columns of the rows")
        results = pd.concat([tags, results], axis=1)
    return results, len(todo)


def summary_line(name: str, cells: int, ran: int, seconds: float, where: str) -> str:
    """Return the line that ends a run's text: cells run and resumed, seconds, where, rate."""
    rate = f": {ran / seconds:.1f} cells/s" if ran and seconds > 0 else ""
    return (
        f"osfb-bench {name}: {cells} cells ({ran} run now, {cells - ran} resumed from "
        f"the store) in {seconds:.1f} s on {where}{rate}"
    )


def run_sweep(spec: SweepSpec, out_dir: str | Path, **engine: Any) -> Report:
    """Run ``spec`` into ``out_dir`` (``engine``: options of :func:`run_cells`), write outputs.

    The report's text is a summary: the description, cells run and resumed, the rate, the
    tables.
    """
    started = time.perf_counter()
    results, n_run = run_cells(spec, Path(out_dir), **engine)
    seconds = time.perf_counter() - started
    report = write_outputs(spec, results, Path(out_dir))
    where = f"{engine.get('executor', 'local')} x{engine.get('workers', 1)}"
    line = summary_line(spec.name, len(results), n_run, seconds, where)
    intro = f"\n{spec.description}\n\n" if spec.description else ""
    report.text = f"{intro}{line}\n\n{report.table}\n"
    return report


def write_outputs(
    spec: SweepSpec,
    results: pd.DataFrame,
    out: Path,
    *,
    sections: Sequence[str] = (),
    frames: dict[str, pd.DataFrame] | None = None,
) -> Report:
    """Write ``results.csv``, the per-family tuned tables (``report.md``) and plots.

    The plots show each agent's tuned setting's curves over seeds (``R_t / t``;
    the per-step loss for services). ``sections`` (markdown) follow the tables on
    the page; ``frames`` are more CSVs to write (:func:`~osfb_gym.bench.report.save_report`).
    """
    out.mkdir(parents=True, exist_ok=True)
    tables, plots = [], []
    for family in dict.fromkeys(family_of(env_id) for env_id in results["env_id"]):
        rows = results[[family_of(env_id) is family for env_id in results["env_id"]]]
        metric, lower = family.objective, family.lower_is_better
        best = tuned(rows, metric, lower_is_better=lower)
        tables.append(
            f"## {family.name}: {metric} ({family.direction} is better; tuned setting per agent)"
            "\n\n" + tuned_table(rows, metric, lower_is_better=lower, extra=family.columns)
        )
        curves = curves_over_seeds(best, f"curve_{family.curve}")
        average = family.curve == "average_loss"
        band = ", mean over seeds, band ±1 s.e." if average else ""
        plots.append(
            plot_curves(
                curves,
                out / f"{'average_loss' if average else 'loss_vs_k'}_{family.name}.png",
                ylabel=family.curve_label,
                xlabel=family.x_label,
                log_x=family.log_x,
                title=f"{spec.name}: {family.name}{band}",
            )
        )
    table = "\n\n".join([*tables, *sections])
    header = f"# osfb-bench {spec.name}\n\n{spec.description}\n\n" if spec.description else ""
    stored = results.drop(columns=[c for c in results if c.startswith("curve_")])
    return save_report(
        out,
        f"{header or f'# osfb-bench {spec.name}'}\n\n{table}\n",
        {"results": stored, **(frames or {})},
        plots,
        results=results,
        table=table,
    )
