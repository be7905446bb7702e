"""MultiServiceChoice's family record (Bose et al.): the -v0 world and retention.

Sweeps, tables, the grader, the RL comparison and the tests read it through
:data:`osfb_gym.core.family.FAMILIES`; nothing else restates it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.family import Family

FAMILY = Family(
    name="services",
    env_id="MultiServiceChoice-v0",
    objective="total_loss",
    lower_is_better=True,
    metrics="osfb_gym.envs.services:ServiceMetrics",
    reference_agents=("agents.services:Uniform", "agents.services:AcQUIre"),
    columns=("fairness", "approximation_ratio"),
    curve="loss",
    curve_label="total loss after k services",
    x_label="k (services placed)",
    log_x=False,
    small_kwargs={"n_users": 40, "n_services": 4, "reference_restarts": 1},
    # the approximation ratio's solver is most of the grading time
    grade_kwargs={"reference_restarts": 0},
    oracle_keys=("loss", "total_loss", "excess_loss", "fairness", "group_losses", "services"),
    views="osfb_gym.envs.services.views:ServiceViews",
    probe="osfb_gym.envs.services.family:probe",
)


def probe(env: Any, action: Any, extreme: str) -> bool:
    """Reflect the hidden world: every loss at every service stays, preferences move.

    ``"high"`` negates every coordinate, ``"low"`` the first one only
    (nothing when ``d = 1``). Applied to preferences, loss matrices and the
    services placed so far alike (``env._world``, ``env._services``, and the
    retention world's newcomers ``env._pool``), such a reflection keeps every
    loss exactly, bit for bit (IEEE arithmetic is symmetric under sign
    changes), so any difference in what the agent sees would be a leak. The
    no-leak tests' probe (:attr:`osfb_gym.core.family.Family.probe`).
    """
    if env._world is None:
        return False
    reflection = np.ones(env.service_dim)
    if extreme == "high":
        reflection[:] = -1.0
    elif env.service_dim > 1:
        reflection[0] = -1.0
    rotation = np.diag(reflection)
    env._world = env._world.rotated(rotation)
    env._services = env._services * reflection
    if getattr(env, "_pool", None) is not None:  # the retention world's newcomers
        env._pool = env._pool.rotated(rotation)
    return True
