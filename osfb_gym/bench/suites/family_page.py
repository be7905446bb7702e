"""The page of any sweep: each env family's tuned table and plot (``osfb-bench sweep``, quick).

:func:`write_outputs` writes ``results.csv``, one tuned table per env family
(``report.md``) and one plot per family from a sweep's rows; :func:`run_sweep`
runs a spec of your own (``osfb-bench sweep FILE``) on the engine and writes
that page. ``quick`` writes it too, with its own section after the tables.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from osfb_gym.bench.report import (
    Report,
    curves_over_seeds,
    plot_curves,
    save_report,
    tuned,
    tuned_table,
)
from osfb_gym.bench.run import run_cells, summary_line
from osfb_gym.bench.sweep import SweepSpec
from osfb_gym.core.family import family_of

__all__ = ["run_sweep", "write_outputs"]


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
