"""The contracts shared by every environment: channels, links, seeding, validation."""

from osfb_gym.core.channels import FEEDBACK, ORACLE, HideOracle, make_info, strip_oracle
from osfb_gym.core.env import FeedbackEnv
from osfb_gym.core.links import LINKS, Link, get_link, logistic
from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.seeding import check_world_seed, spawn_seed, world_rng
from osfb_gym.core.validation import (
    check_binary_array,
    check_choice,
    check_float,
    check_int,
)

__all__ = [
    "FEEDBACK",
    "LINKS",
    "ORACLE",
    "EpisodeMetrics",
    "FeedbackEnv",
    "HideOracle",
    "Link",
    "check_binary_array",
    "check_choice",
    "check_float",
    "check_int",
    "check_world_seed",
    "get_link",
    "logistic",
    "make_info",
    "spawn_seed",
    "strip_oracle",
    "world_rng",
]
