"""OneSidedLending-v0 (Jiang, Jiang and Pacchiano 2021), one module per concern.

- :mod:`~osfb_gym.envs.lending.config`: the two configs (synthetic, dataset) and their checks;
- :mod:`~osfb_gym.envs.lending.world`: synthetic worlds (Gaussian, the greedy trap);
- :mod:`~osfb_gym.envs.lending.data`: dataset worlds (scaling, the fitted ``beta*``);
- :mod:`~osfb_gym.envs.lending.metrics`: a step's reward and one-sided loss, the
  episode metrics;
- :mod:`~osfb_gym.envs.lending.render`: what a render shows;
- :mod:`~osfb_gym.envs.lending.family`: ``FAMILY``, its family record;
- :mod:`~osfb_gym.envs.lending.env`: :class:`OneSidedLendingEnv` itself;
- :mod:`~osfb_gym.envs.lending.vector`: the native vector env (lockstep replicas).

Every public name is importable from ``osfb_gym.envs.lending``.
"""

from osfb_gym.envs.lending.config import DatasetLending, LendingConfig, SyntheticLending
from osfb_gym.envs.lending.data import (
    SCALINGS,
    DatasetWorld,
    build_dataset_world,
    dataset_world,
    fit_beta,
    stratified_split,
)
from osfb_gym.envs.lending.env import (
    OneSidedLendingEnv,
)
from osfb_gym.envs.lending.family import FAMILY
from osfb_gym.envs.lending.metrics import (
    LendingMetrics,
    bayes_decision,
    one_sided_loss,
    revealed_reward,
)
from osfb_gym.envs.lending.world import (
    FEATURE_BOUND,
    LendingWorld,
    draw_gaussian_world,
    draw_trap_world,
    gaussian_score_cutoff,
)

__all__ = [
    "FAMILY",
    "DatasetLending",
    "DatasetWorld",
    "FEATURE_BOUND",
    "LendingConfig",
    "LendingMetrics",
    "LendingWorld",
    "OneSidedLendingEnv",
    "SCALINGS",
    "SyntheticLending",
    "bayes_decision",
    "build_dataset_world",
    "dataset_world",
    "draw_gaussian_world",
    "draw_trap_world",
    "fit_beta",
    "gaussian_score_cutoff",
    "one_sided_loss",
    "revealed_reward",
    "stratified_split",
]
