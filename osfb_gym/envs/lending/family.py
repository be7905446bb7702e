"""OneSidedLending-v0's family record (Jiang, Jiang and Pacchiano 2021).

Sweeps, tables, the grader, the RL comparison and the tests read it through
:data:`osfb_gym.core.family.FAMILIES`; nothing else restates it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
    probe="osfb_gym.envs.lending.family:probe",
)


def probe(env: Any, action: Any, extreme: str) -> bool:
    """Set the outcomes of the applicants ``action`` leaves unapproved, ``env._y``, to an extreme.

    0 or 1 for the logistic link; -1e3 or +1e3 for the linear one (the no-leak
    tests' probe, :attr:`osfb_gym.core.family.Family.probe`).
    """
    hidden = np.asarray(action) == 0
    if env.feedback_mode == "full" or not hidden.any():
        return False
    if env.link.name == "logistic":
        value = 0.0 if extreme == "low" else 1.0
    else:
        value = -1e3 if extreme == "low" else 1e3
    env._y = np.where(hidden, value, env._y)
    return True
