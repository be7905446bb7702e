"""MultiServiceChoice's family record (Bose et al.): the -v0 world and retention.

Sweeps, tables, the grader, the RL comparison and the tests read it through
:data:`osfb_gym.core.family.FAMILIES`; nothing else restates it.
"""

from __future__ import annotations

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
)
