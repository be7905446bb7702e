"""Liu et al. (2018), "Delayed Impact of Fair Machine Learning", Section 6 on the FICO tables.

The outcome curve of a group (Liu et al.'s ``Delta mu`` against the
selection rate), the bank's operating points under maximum profit
(MaxUtil), demographic parity (DemParity) and equal opportunity (EqOpt),
and the region of active harm, computed exactly from the TransRisk tables
with the pure functions of :mod:`osfb_gym.envs.delayed_impact`: no
episode is run, nothing is random, so every claim's verdict is a plain
comparison of computed numbers (no test: there is no noise to test
against). The page: docs/reproductions/liu-outcome-curves.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from osfb_gym.bench.driver import RunInfo, Stage
from osfb_gym.bench.report import Report
from osfb_gym.bench.report import save_report as _save
from osfb_gym.bench.suites.liu.analysis import (
    claims,
    classify,
    compute,
    curve_summary,
    figure,
    operating_points,
    page,
)
from osfb_gym.bench.suites.liu.settings import NAME, PAIR, Settings

__all__ = [
    "NAME",
    "PAIR",
    "Settings",
    "claims",
    "classify",
    "compute",
    "curve_summary",
    "figure",
    "operating_points",
    "report",
    "stages",
]


def stages(settings: Settings) -> list[Stage]:
    """Return no stage: the computation is exact and runs no episode (see :func:`report`)."""
    return []


def report(rows: Sequence[pd.DataFrame], settings: Settings, run: RunInfo) -> Report:
    """Compute the curves, operating points and claims from the tables; write the page."""
    from osfb_gym.data import load

    frames = compute(load("fico", data_home=settings.data_home), settings)
    run.out.mkdir(parents=True, exist_ok=True)
    plot = figure(frames, settings, run.out / "outcome_curves.png")
    found = claims(frames, settings)
    report = _save(run.out, page(frames, settings, found, plot), frames, [plot])
    report.tables["claims"] = found
    return report
