"""Moved to the services family: re-exports for old imports.

The services world is :mod:`osfb_gym.envs.services.world`, its reference
solver :mod:`osfb_gym.envs.services.reference` (the family's, not the
contract).
"""

from osfb_gym.envs.services.reference import d2_seeding, reference_loss
from osfb_gym.envs.services.world import (
    FAMILIES,
    GATHER_BLOCK,
    HUBER_IRLS_STEPS,
    Population,
    check_spd,
    choose,
    fairness_objective,
    group_losses,
    huber,
    learning_dynamics,
)

__all__ = [
    "FAMILIES",
    "GATHER_BLOCK",
    "HUBER_IRLS_STEPS",
    "Population",
    "check_spd",
    "choose",
    "d2_seeding",
    "fairness_objective",
    "group_losses",
    "huber",
    "learning_dynamics",
    "reference_loss",
]
