"""``quick``, the main job: every env family, its principled agents and PPO, in minutes.

Lending: Greedy and Adaptive on the default logistic world and on Theorem 1's greedy
trap, OneSidedEpsilonGreedy tuned over alpha as the paper tunes its baselines, and PPO
(10,000 env steps) beside them on a fixed world; apple tasting, reject option,
services and delayed impact: each family's principled agents on its registered
defaults. The paper suites have their own modules here; :mod:`osfb_gym.bench.catalog`
names every suite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from osfb_gym.bench.report import Report
from osfb_gym.bench.run import run_suite
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec

#: the settings of the lending agents tuned on the default and trap worlds
LENDING_WORLDS = ("lending default (logistic)", "lending greedy trap (logistic)")
LENDING_ALL = (*LENDING_WORLDS, "lending fixed world (T=200)")

QUICK = SweepSpec(
    name="quick",
    description=(
        "Every env family with its principled agents, and PPO on a fixed lending world; "
        "10 seeds. Tables: each agent's tuned setting, mean ± std over seeds."
    ),
    envs=(
        EnvSpec("OneSidedLending-v0", LENDING_WORLDS[0]),
        EnvSpec("OneSidedLending-v0", LENDING_WORLDS[1], {"scenario": "greedy_trap"}),
        EnvSpec("OneSidedLending-v0", LENDING_ALL[2], {"horizon": 200, "world_seed": 0}),
        EnvSpec("AppleTasting-v0", "apple tasting (separable)"),
        EnvSpec("RejectOption-v0", "reject option (d=0.25)", {"horizon": 2000}),
        EnvSpec("MultiServiceChoice-v0", "services (k=10)", {"reference_restarts": 1}),
        EnvSpec("DelayedImpactLending-v0", "delayed impact (T=500)", {"horizon": 500}),
    ),
    agents=(
        *(AgentSpec(name, envs=LENDING_ALL) for name in ("Greedy", "Adaptive")),
        AgentSpec(
            "OneSidedEpsilonGreedy", grid={"alpha": [0.25, 0.5, 1.0, 2.0]}, envs=LENDING_WORLDS
        ),
        AgentSpec("PPO", params={"total_timesteps": 10_000}, envs=(LENDING_ALL[2],)),
        *map(AgentSpec, ("Perceptron", "MarginPerceptron", "LabelEfficient")),  # apple tasting
        *map(AgentSpec, ("DSOL", "DRAL", "DSAL")),  # reject option
        *map(AgentSpec, ("AcQUIre", "FairAcQUIre", "Uniform", "MaxLossGreedy")),  # services
        *map(AgentSpec, ("MaxProfit", "DemographicParity", "EqualOpportunity")),  # delayed impact
    ),
)


def run(name: str, out: str | Path, **options: Any) -> Report:
    """Run :data:`QUICK` into ``out`` (``osfb-bench run quick``): :func:`run_suite`."""
    return run_suite(QUICK, out, **options)
