"""AppleTasting-v0's family record (Helmbold et al. 2000; Sculley 2007).

Sweeps, tables, the grader, the RL comparison and the tests read it through
:data:`osfb_gym.core.family.FAMILIES`; nothing else restates it.
"""

from __future__ import annotations

from osfb_gym.core.family import Family

FAMILY = Family(
    name="apple",
    env_id="AppleTasting-v0",
    objective="cumulative_loss",
    lower_is_better=True,
    metrics="osfb_gym.envs.apple:AppleMetrics",
    reference_agents=(
        "agents.apple:Perceptron",
        "agents.apple:MarginPerceptron",
        "agents.apple:LabelEfficient",
    ),
    columns=("f1", "label_requests"),
    small_kwargs={"horizon": 50},
    oracle_keys=("y", "mistake", "loss"),
    views="osfb_gym.envs.apple.views:AppleViews",
)
