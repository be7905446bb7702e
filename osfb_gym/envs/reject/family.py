"""RejectOption-v0's family record (Shah and Manwani 2020).

Sweeps, tables, the grader, the RL comparison and the tests read it through
:data:`osfb_gym.core.family.FAMILIES`; nothing else restates it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.family import Family

FAMILY = Family(
    name="reject",
    env_id="RejectOption-v0",
    objective="average_risk",
    lower_is_better=True,
    metrics="osfb_gym.envs.reject:RejectMetrics",
    reference_agents=("agents.reject:DSOL", "agents.reject:DRAL", "agents.reject:DSAL"),
    columns=("rejection_rate", "query_rate"),
    small_kwargs={"horizon": 50},
    grade_kwargs={"horizon": 2000},
    oracle_keys=("y", "loss", "risk", "misclassified", "rejected", "bayes_risk"),
    # regret against Chow's rule, the Bayes-optimal reject rule the oracle exposes
    oracle_objective_metric="bayes_risk",
    objective_per_step=True,
    views="osfb_gym.envs.reject.views:RejectViews",
    probe="osfb_gym.envs.reject.family:probe",
)


def probe(env: Any, action: Any, extreme: str) -> bool:
    """Set an unqueried label, ``env._y``, to -1 or +1 (the no-leak tests' probe)."""
    if env.feedback_mode == "full" or env._y is None or int(np.asarray(action)[1]) == 1:
        return False
    env._y = -1 if extreme == "low" else 1
    return True
