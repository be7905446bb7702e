"""Environment families, one module each."""

from osfb_gym.envs.lending import OneSidedLendingEnv

__all__ = ["OneSidedLendingEnv"]
