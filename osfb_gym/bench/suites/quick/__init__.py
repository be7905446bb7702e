"""``quick``, the main job: every env family, its principled agents and PPO, in minutes.

Two stages on the engine. :data:`QUICK`: lending's Greedy and Adaptive on the
default logistic world and on Theorem 1's greedy trap, OneSidedEpsilonGreedy
tuned over alpha as the paper tunes its baselines; apple tasting, reject
option, services and delayed impact: each family's principled agents on its
registered defaults. :func:`fixed_world`: Greedy, Adaptive and PPO on a fixed lending
world, each scored after the same N env steps of that world and at 0, by the
equal-experience cells of :mod:`osfb_gym.bench.suites.experience` (run ``s`` plays
world ``s`` and trains on its own seed). Without stable-baselines3 the PPO
row is left out and the run says so in one line. The paper suites have their
own packages here; :mod:`osfb_gym.bench.suites` names every suite.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from osfb_gym.bench.driver import RunInfo, Stage
from osfb_gym.bench.report import Report
from osfb_gym.bench.suites.family_page import write_outputs
from osfb_gym.bench.suites.quick.analysis import experience_rows, experience_section
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.core.optional import missing_message
from osfb_gym.core.validation import check_int, env_arguments

NAME = "quick"
LENDING_WORLDS = ("lending default (logistic)", "lending greedy trap (logistic)")
FIXED_WORLD = "lending fixed world"
#: PPO's arguments in the fixed world: what rl-vs-principled chose there on its validation
#: worlds (docs/results/rl-vs-principled.md); a decision's reward does not depend on later ones
PPO_KWARGS = {"gamma": 0.0, "n_steps": 512, "batch_size": 128}
EXPERIENCE = "osfb_gym.bench.suites.experience"


@dataclass(frozen=True)
class Settings:
    """What a ``quick`` run covers; each field but ``seeds`` and ``horizon`` is a ``--set`` key."""

    #: runs: seeds 0..seeds-1 of both stages (a run of the fixed world each)
    seeds: int = 10
    #: truncate every episode that has a horizon (None: each env's own; the fixed world: 200)
    horizon: int | None = None
    #: env steps of the fixed lending world every agent there sees before it is scored
    total_timesteps: int = 10_000
    #: scored episodes per run of the fixed world (the same reset seeds for every agent)
    episodes: int = 5

    def __post_init__(self) -> None:
        for name in ("seeds", "total_timesteps", "episodes"):
            check_int(getattr(self, name), name, minimum=1)
        if self.horizon is not None:
            check_int(self.horizon, "horizon", minimum=1)


QUICK = SweepSpec(
    name=NAME,
    description=(
        "Every env family with its principled agents on fresh worlds, 10 seeds; then a fixed "
        "lending world where every agent, RL or not, is scored after the same experience. "
        "Tables: each agent's tuned setting, mean ± s.e. (standard error) over seeds."
    ),
    envs=(
        EnvSpec("OneSidedLending-v0", LENDING_WORLDS[0]),
        EnvSpec("OneSidedLending-v0", LENDING_WORLDS[1], {"scenario": "greedy_trap"}),
        EnvSpec("AppleTasting-v0", "apple tasting (separable)"),
        EnvSpec("RejectOption-v0", "reject option (d=0.25)", {"horizon": 2000}),
        EnvSpec("MultiServiceChoice-v0", "services (k=10)", {"reference_restarts": 1}),
        EnvSpec("DelayedImpactLending-v0", "delayed impact (T=500)", {"horizon": 500}),
    ),
    agents=(
        *(AgentSpec(name, envs=LENDING_WORLDS) for name in ("Greedy", "Adaptive")),
        AgentSpec(
            "OneSidedEpsilonGreedy", grid={"alpha": [0.25, 0.5, 1.0, 2.0]}, envs=LENDING_WORLDS
        ),
        *map(AgentSpec, ("Perceptron", "MarginPerceptron", "LabelEfficient")),  # apple tasting
        *map(AgentSpec, ("DSOL", "DRAL", "DSAL")),  # reject option
        *map(AgentSpec, ("AcQUIre", "FairAcQUIre", "Uniform", "MaxLossGreedy")),  # services
        *map(AgentSpec, ("MaxProfit", "DemographicParity", "EqualOpportunity")),  # delayed impact
    ),
)


def with_horizon(spec: SweepSpec, horizon: int | None) -> SweepSpec:
    """Return ``spec`` with every env that takes a ``horizon`` truncated to ``horizon`` steps."""
    if horizon is None:
        return spec
    envs = tuple(
        EnvSpec(env.id, env.label, env.kwargs | {"horizon": horizon}, env.tags)
        if "horizon" in (env_arguments(env.id) or ())
        else env
        for env in spec.envs
    )
    return dataclasses.replace(spec, envs=envs)


def rl_missing() -> str | None:
    """Return why the PPO row cannot run here (the ``[rl]`` extra is missing), or None.

    Looked up, not imported: this process then need not load torch (its workers
    import what their cells use).
    """
    for module in ("stable_baselines3", "torch"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a broken or hidden install
            found = False
        if not found:
            return missing_message(module, "PPO")
    return None


def fixed_world(
    settings: Settings, seeds: Sequence[int], horizon: int | None = None, rl: bool = True
) -> SweepSpec:
    """Return the equal-experience stage: Greedy, Adaptive (and PPO) after N steps of a world.

    Each seed is a run: world ``world_seed = seed``, PPO's training seed and the
    principled agents' warm-up episodes of
    :func:`~osfb_gym.bench.suites.experience.principled_cell`; every agent is scored at 0
    and at ``settings.total_timesteps`` env steps on the run's ``settings.episodes``
    held-out episodes.
    """
    steps = horizon or 200
    env = EnvSpec("OneSidedLending-v0", f"{FIXED_WORLD} (T={steps})", {"horizon": steps})
    common = {
        "regime": "fixed",
        "split": "test",
        "budgets": [settings.total_timesteps],
        "episodes": settings.episodes,
    }
    agents = [
        AgentSpec(
            name,
            common | {"agent": name, "agent_params": {}},
            envs=(env.label,),
            runner=f"{EXPERIENCE}:principled_cell",
        )
        for name in ("Greedy", "Adaptive")
    ]
    if rl:
        ppo = {"algo": "PPO", "view": "plain", "algo_kwargs": PPO_KWARGS}
        agents.append(
            AgentSpec("PPO", common | ppo, envs=(env.label,), runner=f"{EXPERIENCE}:rl_cell")
        )
    return SweepSpec(NAME, (env,), tuple(agents), tuple(seeds))


def stages(settings: Settings) -> list[Stage]:
    """Return the fresh worlds (:data:`QUICK`), then the fixed world (a run a task)."""
    seeds = tuple(range(settings.seeds))
    main = dataclasses.replace(with_horizon(QUICK, settings.horizon), seeds=seeds)
    fixed = fixed_world(settings, seeds, settings.horizon, rl=rl_missing() is None)
    # a cell is a whole run (PPO trains in it): one a task, so workers share them out
    return [
        Stage(main, f"{NAME}, fresh worlds"),
        Stage(fixed, f"{NAME}, fixed world (runs)", chunk_size=1),
    ]


def report(rows: Sequence[pd.DataFrame], settings: Settings, run: RunInfo) -> Report:
    """Write the page: each family's tuned table and plot, then the fixed world's section."""
    main, fixed = rows
    frame = experience_rows(fixed)
    steps, episodes = settings.total_timesteps, settings.episodes
    section = experience_section(frame, steps, episodes, PPO_KWARGS, rl_missing())
    report = write_outputs(QUICK, main, run.out, sections=[section], frames={"experience": frame})
    report.text = f"\n{QUICK.description}\n\n{report.table}\n"
    report.tables["experience"] = frame
    return report
