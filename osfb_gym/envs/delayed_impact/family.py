"""DelayedImpactLending-v0's family record (Liu et al. 2018).

Sweeps, tables, the grader, the RL comparison and the tests read it through
:data:`osfb_gym.core.family.FAMILIES`; nothing else restates it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.family import Family

FAMILY = Family(
    name="delayed_impact",
    env_id="DelayedImpactLending-v0",
    objective="cumulative_loss",
    lower_is_better=True,
    metrics="osfb_gym.envs.delayed_impact:ImpactMetrics",
    reference_agents=(
        "agents.delayed_impact:MaxProfit",
        "agents.delayed_impact:DemographicParity",
        "agents.delayed_impact:EqualOpportunity",
    ),
    columns=("approval_rate", "default_rate", "tpr_gap", "score_change_0"),
    small_kwargs={"horizon": 30, "batch_size": 4},
    oracle_keys=(
        "repay_prob",
        "y",
        "group",
        "bayes_action",
        "loss",
        "mean_score",
        "score_change",
        "pi",
    ),
    views="osfb_gym.envs.delayed_impact.views:ImpactViews",
    probe="osfb_gym.envs.delayed_impact.family:probe",
)


def probe(env: Any, action: Any, extreme: str) -> bool:
    """Set denied applicants' outcomes, ``env._y``, to 0 or 1 (the no-leak tests' probe)."""
    hidden = np.asarray(action).reshape(-1) == 0
    if env.feedback_mode == "full" or not hidden.any():
        return False
    env._y = np.where(hidden, 0.0 if extreme == "low" else 1.0, env._y)
    return True
