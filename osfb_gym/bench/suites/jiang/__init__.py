"""Tables 1 and 2 of Jiang, Jiang and Pacchiano (2021): settings, one sweep stage, a report.

Section 8's protocol on the engine: a setting per (dataset, cutoff), each
method over its alpha grid, the paper's random splits as seeds. The settings:
:mod:`~osfb_gym.bench.suites.jiang.settings`; the report (both tunings beside the
paper's numbers): :mod:`~osfb_gym.bench.suites.jiang.analysis`. ``fit="paper"`` fits
as the paper's text says, ``"legacy"`` as the earlier runs (docs/reproductions/jiang.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from osfb_gym.bench.driver import RunInfo, Stage
from osfb_gym.bench.report import Report
from osfb_gym.bench.suites.jiang.analysis import published, read_results, write_report
from osfb_gym.bench.suites.jiang.sensitivity import register
from osfb_gym.bench.suites.jiang.settings import (
    AGENTS,
    FITS,
    JIANG_SUITES,
    LENDING_DATASETS,
    METHODS,
    JiangSuite,
    LinearSettings,
    LogisticSettings,
)
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.data.registry import get_spec

register()  # the sensitivity variants are fits too: --set fit=onehot, ...

__all__ = [
    "AGENTS",
    "FITS",
    "JIANG_SUITES",
    "LENDING_DATASETS",
    "METHODS",
    "JiangSuite",
    "LinearSettings",
    "LogisticSettings",
    "published",
    "read_results",
    "report",
    "stages",
    "sweep",
    "write_report",
]


def sweep(settings: JiangSuite, seeds: Sequence[int] | None = None) -> SweepSpec:
    """Return the sweep: a setting per (dataset, cutoff), each method's alpha grid.

    ``seeds``: the splits (default ``0..settings.seeds-1``).
    """
    fit = FITS[settings.fit]
    common: dict[str, Any] = {"link": settings.link, **fit["env"]}
    given = (("data_home", settings.data_home), ("horizon", settings.horizon))
    common |= {k: v for k, v in given if v}
    envs = []
    for dataset in settings.datasets:
        options = dict(common, dataset=dataset, batch_size=settings.batch_size(dataset))
        if "encoding" not in get_spec(dataset).options:  # bundled data: no codes
            options.pop("encoding", None)
        for cutoff in settings.cutoffs:
            kwargs = options | {"cutoff_quantile": cutoff}
            envs.append(EnvSpec("OneSidedLending-v0", f"{dataset} {cutoff:.0%}", kwargs))
    agents = []
    for method in settings.methods:
        name, parameter = AGENTS[method]
        params = {**fit[settings.link], **(fit["ours"] if method == "ours" else {})}
        grid = {parameter: list(settings.grid)} if parameter else {}
        agents.append(AgentSpec(name, params, grid))
    splits = tuple(range(settings.seeds)) if seeds is None else tuple(seeds)
    return SweepSpec(settings.name, tuple(envs), tuple(agents), splits, settings.description)


def stages(settings: JiangSuite) -> list[Stage]:
    """Return the one stage, a task per (dataset, cutoff, split).

    The engine's default chunks (256 cells, closed at a split's end) would hold
    four Adult or Bank splits, the last of which pack worse.
    """
    return [Stage(sweep(settings), chunk_size=settings.grid_size)]


def report(rows: Sequence[pd.DataFrame], settings: JiangSuite, run: RunInfo) -> Report:
    """Tune both ways; write the table beside the paper's, the tuned cells and plots."""
    return write_report(
        rows[0], settings, run.out, data_home=settings.data_home, missing=run.missing
    )
