"""Run a sweep: its unfinished cells into the store, and the rows back.

:func:`run_cells` runs the cells of a :class:`~osfb_gym.bench.sweep.SweepSpec`
not finished yet (all of them without ``resume``) on an executor and writes
each row to the :class:`~osfb_gym.bench.store.ResultStore` as it arrives; a
suite's report starts from the rows it returns. A built-in suite runs through
:mod:`osfb_gym.bench.driver`; ``osfb-bench sweep`` (a spec of your own) through
:func:`osfb_gym.bench.suites.family_page.run_sweep`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from tqdm.auto import tqdm

from osfb_gym.bench.executors import execute, train_models
from osfb_gym.bench.store import ResultStore
from osfb_gym.bench.sweep import Cell, SweepSpec, validate

if TYPE_CHECKING:
    from osfb_gym.bench.driver import Stage


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
    return stored_rows(cells, store), len(todo)


def stored_rows(cells: list[Cell], store: ResultStore) -> pd.DataFrame:
    """Return the stored rows of ``cells`` (all stored), in order, as :func:`run_cells` does."""
    results = store.read([cell.key for cell in cells])
    for column in ("params", "env_kwargs"):
        results[column] = [json.dumps(value, sort_keys=True) for value in results[column]]
    if any(cell.tags for cell in cells):
        tags = pd.DataFrame([cell.tags for cell in cells])
        if set(tags) & set(results):  # the rows are stored: a run with other tags resumes them
            raise ValueError(f"tags {sorted(set(tags) & set(results))} name columns of the rows")
        results = pd.concat([tags, results], axis=1)
    return results


def plan(stages: Sequence[Stage], out: Path) -> list[str]:
    """Return a line per stage of what ``--resume`` would run into ``out``; run nothing.

    A stage whose spec is a function of the rows of the stages before it (a
    stage that selects on earlier results) is known only once those are
    stored. The time still to run is estimated from the stored cells'
    ``seconds`` (wall time in a worker) per unit of the stage's ``work`` (1 a
    cell unless the suite says, e.g. env steps): each cell to run costs its
    work at the median rate of the stored cells of its setting and agent,
    else of its agent.
    """
    store = ResultStore(out, read_only=True)
    stored = store.rows()
    done = {row["key"] for row in stored}
    lines: list[str] = []
    rows: list[pd.DataFrame] = []  # of the stages before, while all of them are stored
    for number, stage in enumerate(stages, 1):
        name = f"stage {number}" + (f" ({stage.label})" if stage.label else "")
        if callable(stage.spec) and len(rows) < number - 1:
            lines.append(f"{name}: chosen from the rows of the stages before it, once stored")
            continue
        spec = stage.spec(rows) if callable(stage.spec) else stage.spec
        validate(spec)
        cells = spec.cells()
        todo = [cell for cell in cells if cell.key not in done]
        if todo:
            state = f"{len(cells) - len(todo):,} stored, {_cost(todo, stored, stage.work)}"
        lines.append(f"{name}: {len(cells):,} cells, {state if todo else 'all stored'}")
        if not todo and len(rows) == number - 1:
            rows.append(stored_rows(cells, store))
    return lines


def _cost(
    todo: list[Cell],
    stored: list[dict[str, Any]],
    work: Callable[[dict[str, Any]], float] | None,
) -> str:
    """Return "N to run, about H worker-hours", saying how many cells it could not price."""
    units = work or (lambda params: 1.0)
    rates = pd.DataFrame(
        [
            (row["setting"], row["agent"], row["seconds"] / max(units(row["params"]), 1e-12))
            for row in stored
        ],
        columns=["setting", "agent", "rate"],
    )
    median = {
        **rates.groupby("agent")["rate"].median().to_dict(),
        **rates.groupby(["setting", "agent"])["rate"].median().to_dict(),
    }
    known = [
        (median.get((cell.setting, cell.agent), median.get(cell.agent)), units(cell.params))
        for cell in todo
    ]
    seconds = [rate * size for rate, size in known if rate is not None]
    text = f"{len(todo):,} to run"
    if not seconds:
        return text + " (no stored cell of their agents to time them by)"
    text += f", about {sum(seconds) / 3600:.1f} worker-hours"
    if len(seconds) < len(todo):
        text += f" for {len(seconds):,} of them (no stored cell of the others' agents)"
    return text


def summary_line(name: str, cells: int, ran: int, seconds: float, where: str) -> str:
    """Return the line that ends a run's text: cells run and resumed, seconds, where, rate."""
    rate = f": {ran / seconds:.1f} cells/s" if ran and seconds > 0 else ""
    return (
        f"osfb-bench {name}: {cells} cells ({ran} run now, {cells - ran} resumed from "
        f"the store) in {seconds:.1f} s on {where}{rate}"
    )
