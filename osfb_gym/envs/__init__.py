"""Environment families, one module each."""

from osfb_gym.envs.apple import AppleTastingEnv
from osfb_gym.envs.lending import OneSidedLendingEnv

__all__ = ["AppleTastingEnv", "OneSidedLendingEnv"]
