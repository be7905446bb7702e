"""OneSidedLending-v0's family record (Jiang, Jiang and Pacchiano 2021).

Sweeps, tables, the grader, the RL comparison and the tests read it through
:data:`osfb_gym.core.family.FAMILIES`; nothing else restates it.
"""

from __future__ import annotations

from osfb_gym.core.family import Family

FAMILY = Family(
    name="lending",
    env_id="OneSidedLending-v0",
    objective="cumulative_loss",
    lower_is_better=True,
    metrics="osfb_gym.envs.lending:LendingMetrics",
    reference_agents=("agents.lending:Greedy", "agents.lending:Adaptive"),
    columns=("approval_rate", "bayes_agreement"),
    small_kwargs={"horizon": 30, "batch_size": 4},
    oracle_keys=("mu", "y", "bayes_action", "loss"),
    views="osfb_gym.envs.lending.views:LendingViews",
)
