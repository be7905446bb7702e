"""AcQUIre (Bose et al., Section 5 and Appendix E) on MultiServiceChoice-v0: one sweep, a report.

Three measurements share the sweep: the total loss for k = 1..K (with a reference
optimum at a few k), each group's loss and the fairness objective, and the loss
after learning dynamics. The populations, what their users report and where they
differ from the paper's: docs/reproductions/bose-services.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from osfb_gym.bench.driver import RunInfo, Stage
from osfb_gym.bench.report import Report
from osfb_gym.bench.suites.bose.analysis import write_report
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.core.validation import check_int

ENV = "MultiServiceChoice-v0"
CURVE_AGENTS = ("AcQUIre", "Uniform", "MaxLossGreedy")
FAIR_AGENTS = ("FairAcQUIre", "GroupBalancedUniform", "AcQUIre", "Uniform")


@dataclass(frozen=True)
class Setting:
    """A population: its label, the env's arguments, the data set it needs."""

    label: str
    env_kwargs: dict[str, Any]
    dataset: str | None = None


SYNTHETIC = (
    Setting("clusters, squared", {"loss": "squared"}),
    Setting("clusters, squared, 2% outliers", {"loss": "squared", "outlier_fraction": 0.02}),
    Setting("clusters, Mahalanobis", {"loss": "mahalanobis"}),
    Setting("clusters, Huber", {"loss": "huber"}),
    Setting("clusters, cosine (d=3)", {"loss": "cosine", "dim": 3}),
    Setting("linear predictors (d=3)", {"population": "linear", "dim": 3}),
)
CENSUS = Setting("census (Adult cells)", {"population": "census"}, "adult")
CENSUS_EXCESS = Setting(
    "census, excess reports (Eq. 4)", {"population": "census", "report": "excess"}, "adult"
)
MOVIELENS = Setting(
    "MovieLens 10M (200 subpopulations, 50 movies)",
    {"population": "movielens", "report": "excess"},
    "movielens",
)
CURVE_SETTINGS = (*SYNTHETIC, CENSUS, CENSUS_EXCESS, MOVIELENS)
FAIR_SETTINGS = (
    Setting(
        "clusters, squared, 4 groups (correlation 0.9)",
        {"loss": "squared", "n_groups": 4, "group_correlation": 0.9},
    ),
    CENSUS,
    Setting("census, groups by sex", {"population": "census", "census_groups": "sex"}, "adult"),
    Setting("census, groups by race", {"population": "census", "census_groups": "race"}, "adult"),
)


@dataclass(frozen=True)
class BoseSuite:
    """The reproduction's sizes (``seeds``: one world each; census: one order of its cells)."""

    name: str = "bose-services"
    max_services: int = 30
    reference_ks: tuple[int, ...] = (5, 10, 20, 30)
    reference_restarts: int = 5
    fair_ks: tuple[int, ...] = (5, 10, 20)
    dynamics_services: int = 10
    dynamics_rounds: int = 50
    seeds: tuple[int, ...] = tuple(range(20))
    description: str = (
        "AcQUIre (Algorithms 1-2) against uniform, greedy and group-balanced acquisition on "
        "MultiServiceChoice-v0: total loss against k, ratio to a reference optimum, fairness, "
        "learning dynamics."
    )

    def stages(self) -> dict[str, tuple[tuple[Setting, ...], tuple[str, ...], dict[str, Any]]]:
        """Return each measurement's populations, agents, env arguments (default: no reference)."""
        curves = {
            "n_services": self.max_services,
            "reference_restarts": self.reference_restarts,
            "reference_ks": list(self.reference_ks),
        }
        fairness = {"n_services": max(self.fair_ks)}
        dynamics = {"n_services": self.dynamics_services, "dynamics_rounds": self.dynamics_rounds}
        # what users report does not change the dynamics: no census with excess reports
        reported = tuple(s for s in CURVE_SETTINGS if s is not CENSUS_EXCESS)
        return {
            "curves": (CURVE_SETTINGS, CURVE_AGENTS, curves),
            "fairness": (FAIR_SETTINGS, FAIR_AGENTS, fairness),
            "dynamics": (reported, CURVE_AGENTS, dynamics),
        }


@dataclass(frozen=True)
class Settings:
    """What a ``bose-services`` run covers: seeds, the largest k, where the data are.

    No ``--set`` key: the sizes are the reproduction's (:class:`BoseSuite`).
    """

    #: worlds: seeds 0..seeds-1 (the --seeds flag)
    seeds: int = 20
    #: the largest k (services), for quick checks: larger ks are dropped (the --horizon flag)
    horizon: int | None = None
    #: folder of the dataset files (the --data-home flag)
    data_home: str | None = None
    #: the datasets not found (their populations are skipped); set by the driver
    absent: tuple[str, ...] = field(default=(), metadata={"set": False})

    def __post_init__(self) -> None:
        check_int(self.seeds, "seeds", minimum=1)
        if self.horizon is not None:
            check_int(self.horizon, "horizon", minimum=1)

    def needs(self) -> tuple[str, ...]:
        """Return the datasets of the populations that need one."""
        return ("adult", "movielens")

    def without(self, missing: dict[str, str]) -> Settings:
        """Return these settings with the populations of ``missing`` datasets skipped."""
        return replace(self, absent=tuple(missing))


def protocol(settings: Settings) -> BoseSuite:
    """Return the reproduction's sizes under ``settings`` (``horizon``: the largest k)."""
    suite = BoseSuite(seeds=tuple(range(settings.seeds)))
    horizon = settings.horizon
    if horizon is None:
        return suite
    cut = lambda ks: tuple(k for k in ks if k <= horizon) or (1,)  # noqa: E731
    return replace(
        suite,
        max_services=horizon,
        reference_ks=cut(suite.reference_ks),
        fair_ks=cut(suite.fair_ks),
        dynamics_services=min(suite.dynamics_services, horizon),
    )


def sweep_spec(settings: Settings) -> SweepSpec:
    """Return the suite as one sweep: a setting per (measurement, population found)."""
    suite, data_home = protocol(settings), settings.data_home
    envs, runs = [], {name: list[str]() for name in (*CURVE_AGENTS, *FAIR_AGENTS)}
    for measurement, (populations, agents, kwargs) in suite.stages().items():
        for setting in populations:
            if setting.dataset is not None and setting.dataset in settings.absent:
                continue
            home = {} if setting.dataset is None or data_home is None else {"data_home": data_home}
            label = f"{measurement} | {setting.label}"
            tags = {"measurement": measurement, "population": setting.label}
            options = {"reference_restarts": 0, **setting.env_kwargs, **kwargs, **home}
            envs.append(EnvSpec(ENV, label, options, tags))
            for name in agents:
                runs[name].append(label)
    specs = tuple(AgentSpec(name, envs=tuple(labels)) for name, labels in runs.items())
    return SweepSpec(suite.name, tuple(envs), specs, suite.seeds, suite.description, curve_stride=1)


def stages(settings: Settings) -> list[Stage]:
    """Return the one stage: every measurement's populations and agents."""
    return [Stage(sweep_spec(settings))]


def report(rows: Sequence[pd.DataFrame], settings: Settings, run: RunInfo) -> Report:
    """Write the frames (CSV), the figure and the page from the stage's rows."""
    skipped = [
        f"{label} ({name} not found locally; --data-home)"
        for name, label in (("adult", "census"), ("movielens", MOVIELENS.label))
        if name in settings.absent
    ]
    return write_report(rows[0], sweep_spec(settings), protocol(settings), run.out, skipped)
