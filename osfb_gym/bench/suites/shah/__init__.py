"""Shah and Manwani (2020): DSOL, DRAL and DSAL on Phishing and Guide, Figures 5-6.

Two stages on the engine (the selection of ``gamma`` on validation seeds, then the
reported runs) and a report (:mod:`~osfb_gym.bench.suites.shah.analysis`): a table at
``T`` with DSOL's risk after as many labels as each active learner asked, the paper's
five panels per ``d`` and its claims. The protocol and where it differs from the
paper: docs/reproductions/shah.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from osfb_gym.bench.driver import POSITIVE, RunInfo, Stage
from osfb_gym.bench.report import Report
from osfb_gym.bench.suites.shah.analysis import KEYS, LEARNERS, _mean_curves, write_shah_report
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.core.validation import check_int
from osfb_gym.data.registry import get_spec
from osfb_gym.envs.reject.metrics import RejectMetrics

ENV_ID = "RejectOption-v0"
TUNED = ("DSOL", "DSAL")  # the double sigmoid learners, whose gamma is selected
CURVE_STRIDE = 50  # curves are stored every this many trials (and at the last)
#: the validation runs' seeds start here, far from the reported runs' 0..seeds-1
TUNE_SEED = 10_000


@dataclass(frozen=True)
class Settings:
    """The grid: ``datasets`` x ``d_values`` x learners x ``seeds`` runs of ``horizon`` trials.

    Each field but the flags' is a ``--set`` key. ``gammas`` is the double sigmoid
    grid (one value: no selection stage), selected on ``validation_seeds`` runs.
    """

    name: ClassVar[str] = "shah-reject"
    description: ClassVar[str] = (
        "Shah & Manwani (2020), Figures 5-6: DSOL, DRAL and DSAL on phishing (linear) and "
        "guide (polynomial kernel), d in {0.1, 0.25, 0.4}, 100 runs of T = 10,000."
    )
    #: a dataset's scikit-learn kernel (else linear)
    kernels: ClassVar[dict[str, str]] = {"guide": "poly"}

    #: runs per cell: seeds 0..seeds-1 (the --seeds flag)
    seeds: int = 100
    #: trials per run (the --horizon flag)
    horizon: int = 10_000
    #: folder of the dataset files (the --data-home flag)
    data_home: str | None = None
    #: the datasets to run
    datasets: tuple[str, ...] = ("phishing", "guide")
    #: the costs of rejection d
    d_values: tuple[float, ...] = (0.1, 0.25, 0.4)
    #: DSAL's double sigmoid grid, chosen on validation runs (one value: no selection)
    gammas: tuple[float, ...] = field(default=(1.0, 2.0, 3.0, 4.0), metadata=POSITIVE)
    #: validation runs per gamma (seeds 10000..)
    validation_seeds: int = 10

    def __post_init__(self) -> None:
        for name in ("seeds", "horizon", "validation_seeds"):
            check_int(getattr(self, name), name, minimum=1)
        if not self.datasets or not self.d_values or not self.gammas:
            raise ValueError("datasets, d_values and gammas must each name at least one value")
        for dataset in self.datasets:
            get_spec(dataset)  # an unknown name raises naming the registry's

    @property
    def tune_seeds(self) -> tuple[int, ...]:
        """Return the validation runs' seeds."""
        return tuple(range(TUNE_SEED, TUNE_SEED + self.validation_seeds))

    def needs(self) -> tuple[str, ...]:
        """Return the datasets the run reads."""
        return self.datasets

    def without(self, missing: dict[str, str]) -> Settings | None:
        """Return these settings without the ``missing`` datasets (None: none left)."""
        found = tuple(d for d in self.datasets if d not in missing)
        return replace(self, datasets=found) if found else None


def sweep_spec(suite: Settings, chosen: dict | None = None) -> SweepSpec:
    """Return a stage as a sweep: a setting per (dataset, d), each learner with its kernel.

    Without ``chosen``, the selection stage: the gamma grid on the double sigmoid
    learners, no DRAL, no curves, on ``tune_seeds``. With it, the reported runs:
    each (setting, learner) at its ``chosen`` gamma (default ``suite.gammas[0]``).
    """
    envs, agents = [], []
    for dataset in suite.datasets:
        fixed = {"kernel": suite.kernels.get(dataset, "linear")}
        for d in suite.d_values:
            label = f"{dataset}, d={d:g}"
            where = {"dataset": dataset, "d": d}
            kwargs = where | {
                "data_home": suite.data_home,
                "replacement": True,
                "horizon": suite.horizon,
            }
            envs.append(EnvSpec(ENV_ID, label, kwargs, where))
            for name in LEARNERS:
                if name not in TUNED:
                    gammas: Sequence[float | None] = [] if chosen is None else [None]
                elif chosen is None:
                    gammas = suite.gammas
                else:
                    gammas = [chosen.get((label, name), suite.gammas[0])]
                for gamma in gammas:
                    params = fixed if gamma is None else fixed | {"gamma": gamma}
                    tags = {"learner": name, **fixed, "gamma": np.nan if gamma is None else gamma}
                    agents.append(AgentSpec(name, params, envs=(label,), tags=tags))
    return SweepSpec(
        f"{suite.name}-selection" if chosen is None else suite.name,
        tuple(envs),
        tuple(agents),
        suite.tune_seeds if chosen is None else tuple(range(suite.seeds)),
        suite.description,
        curve_stride=None if chosen is None else CURVE_STRIDE,
    )


def one_standard_error(rows: pd.DataFrame) -> dict[tuple[str, str], float]:
    """Return ``(setting, learner) -> gamma`` by the one-standard-error rule.

    Among the gammas whose mean ``average_risk`` is within one standard error
    (over seeds) of the best mean, the one with the lowest mean ``query_rate``
    (ties: the lower risk, then the first in ``rows``).

    Examples
    --------
    >>> rows = pd.DataFrame({"setting": ["s"] * 4, "agent": ["A"] * 4, "seed": [0, 1, 0, 1],
    ...     "params": ['{"gamma": 1}'] * 2 + ['{"gamma": 2}'] * 2, "gamma": [1.0, 1.0, 2.0, 2.0],
    ...     "average_risk": [1.0, 1.2, 1.05, 1.25], "query_rate": [0.9, 0.9, 0.1, 0.1]})
    >>> one_standard_error(rows)  # gamma 2 is within one s.e. of the best and asks less
    {('s', 'A'): 2.0}
    """
    chosen = {}
    for key, group in rows.groupby(["setting", "agent"], sort=False):
        candidates = group.groupby("params", sort=False)
        means = candidates["average_risk"].mean()
        best = means.idxmin()
        near = means - means[best] <= candidates["average_risk"].sem().fillna(0.0)[best]
        order = pd.DataFrame({"then": candidates["query_rate"].mean(), "metric": means})[near]
        best = order.sort_values(["then", "metric"], kind="stable").index[0]
        chosen[key] = float(group.loc[group["params"] == best, "gamma"].iloc[0])
    return chosen


def select_gamma(rows: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[str, str], float]]:
    """Choose each (setting, learner)'s gamma from the selection stage's ``rows``.

    Return the validation means per gamma (``risk_se``, ``runs``, ``chosen``)
    and ``(setting, learner) -> gamma`` (:func:`one_standard_error`).
    """
    chosen = one_standard_error(rows)
    keys = zip(rows["setting"], rows["agent"], rows["gamma"], strict=True)
    rows = rows.assign(chosen=[chosen[s, x] == g for s, x, g in keys])
    means = rows.groupby([*KEYS, "gamma"], sort=False).agg(
        average_risk=("average_risk", "mean"),
        query_rate=("query_rate", "mean"),
        risk_se=("average_risk", "sem"),
        runs=("seed", "count"),
        chosen=("chosen", "first"),
    )
    return means.reset_index(), chosen


def stages(settings: Settings) -> list[Stage]:
    """Return the selection of gamma (when the grid has more than one), then the reported runs."""
    if len(settings.gammas) == 1:
        return [Stage(sweep_spec(settings, {}))]
    return [
        Stage(sweep_spec(settings)),
        Stage(lambda rows: sweep_spec(settings, select_gamma(rows[0])[1])),
    ]


def report(rows: Sequence[pd.DataFrame], settings: Settings, run: RunInfo) -> Report:
    """Write results, curves, the selection, ``report.md`` and a PNG per dataset."""
    final = rows[-1]  # in (dataset, d, learner, seed) order
    selection = select_gamma(rows[0])[0] if len(rows) > 1 else None
    results = final[[*KEYS, "kernel", "gamma", "seed", *RejectMetrics().get(), "seconds"]]
    return write_shah_report(
        results,
        _mean_curves(final),
        settings,
        run.out,
        missing=run.missing,
        selection=selection,
        took=run.took,
    )
