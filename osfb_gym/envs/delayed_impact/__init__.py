"""DelayedImpactLending-v0 (Liu et al. 2018; ml-fairness-gym's lending), one module per concern.

- :mod:`~osfb_gym.envs.delayed_impact.config`: the two configs (synthetic, FICO) and their checks;
- :mod:`~osfb_gym.envs.delayed_impact.world`: the worlds (synthetic, FICO, ml-fairness-gym's
  clusters) and the pure functions of Liu et al.'s model (the outcome curve);
- :mod:`~osfb_gym.envs.delayed_impact.metrics`: a step's reward and one-sided loss, the
  episode's per-group metrics;
- :mod:`~osfb_gym.envs.delayed_impact.render`: what a render shows;
- :mod:`~osfb_gym.envs.delayed_impact.family`: ``FAMILY``, its family record;
- :mod:`~osfb_gym.envs.delayed_impact.env`: :class:`DelayedImpactLendingEnv` itself.

Every public name is importable from ``osfb_gym.envs.delayed_impact``.
"""

from osfb_gym.envs.delayed_impact.config import FicoImpact, ImpactConfig, SyntheticImpact
from osfb_gym.envs.delayed_impact.env import DelayedImpactLendingEnv
from osfb_gym.envs.delayed_impact.family import FAMILY
from osfb_gym.envs.delayed_impact.metrics import ImpactMetrics, score_batch
from osfb_gym.envs.delayed_impact.world import (
    ImpactWorld,
    break_even,
    expected_profit,
    expected_score_change,
    fico_world,
    move_targets,
    outcome_curve,
    shift_world,
    synthetic_world,
    threshold_policy,
)

__all__ = [
    "FAMILY",
    "DelayedImpactLendingEnv",
    "FicoImpact",
    "ImpactConfig",
    "SyntheticImpact",
    "ImpactMetrics",
    "ImpactWorld",
    "break_even",
    "expected_profit",
    "expected_score_change",
    "fico_world",
    "move_targets",
    "outcome_curve",
    "score_batch",
    "shift_world",
    "synthetic_world",
    "threshold_policy",
]
