"""ml-fairness-gym's long-run lending comparison (D'Amour et al., FAT* 2020), on DelayedImpact.

Max-reward against equal-opportunity lenders over a long horizon, as in
ml-fairness-gym's ``experiments/lending.py``: loans per group, each group's
mean credit score over time, the bank's cumulative profit. Both agents play
the same seeds (the same applicants until their decisions differ), so every
claim's verdict is a paired test over seeds (:func:`osfb_gym.stats.paired`),
with Holm's correction over the page (:class:`osfb_gym.stats.Page`). Two
worlds: ml-fairness-gym's own (``scenario="bin_shift"``) and Liu et al.'s
FICO tables (``dataset="fico"``, run when the tables are found). The page:
docs/reproductions/dynamic-lending.md.
"""

from __future__ import annotations

from osfb_gym.bench.driver import Stage
from osfb_gym.bench.suites.dynamic_lending.analysis import (
    FINDINGS,
    claims,
    figure,
    per_seed,
    report,
    verdicts,
)
from osfb_gym.bench.suites.dynamic_lending.settings import (
    AGENTS,
    ENV,
    NAME,
    NAMES,
    WORLDS,
    Settings,
)
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec

__all__ = [
    "AGENTS",
    "FINDINGS",
    "NAME",
    "NAMES",
    "WORLDS",
    "Settings",
    "claims",
    "figure",
    "per_seed",
    "report",
    "stages",
    "sweep_spec",
    "verdicts",
]


def sweep_spec(settings: Settings) -> SweepSpec:
    """Return the comparison as one sweep: a setting per world, both agents on each."""
    envs, data_home = [], settings.data_home
    for world in settings.worlds:
        kwargs, dataset, _, _ = WORLDS[world]
        home = {"data_home": data_home} if dataset and data_home else {}
        envs.append(EnvSpec(ENV, world, {**kwargs, "horizon": settings.horizon, **home}))
    agents = tuple(AgentSpec(name, {"burnin": settings.burnin}) for name in AGENTS)
    return SweepSpec(
        NAME,
        tuple(envs),
        agents,
        tuple(range(settings.seeds)),
        "max-reward against equal-opportunity lenders over a long horizon "
        "(ml-fairness-gym's lending experiment)",
        curve_stride=settings.stride,
    )


def stages(settings: Settings) -> list[Stage]:
    """Return the one stage: both agents on each world and seed."""
    return [Stage(sweep_spec(settings))]
