"""AppleTasting-v0's family record (Helmbold et al. 2000; Sculley 2007).

Sweeps, tables, the grader, the RL comparison and the tests read it through
:data:`osfb_gym.core.family.FAMILIES`; nothing else restates it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
    oracle_keys=("y", "mistake", "loss", "bayes_loss"),
    oracle_objective_metric="bayes_loss",
    views="osfb_gym.envs.apple.views:AppleViews",
    probe="osfb_gym.envs.apple.family:probe",
)


def probe(env: Any, action: Any, extreme: str) -> bool:
    """Set an untasted label, ``env._y``, to 0 or 1 (the no-leak tests' probe)."""
    if env.feedback_mode == "full" or int(np.asarray(action)) != 0 or env._y is None:
        return False
    env._y = 0 if extreme == "low" else 1
    return True
