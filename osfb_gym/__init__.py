"""osfb-gym: Gymnasium environments for learning under one-sided feedback.

Importing the package registers every environment id, so
``gym.make("OneSidedLending-v0")`` works after ``import osfb_gym``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from envs_registry import register_all
from osfb_gym.core.channels import HideOracle

try:
    __version__ = version("osfb-gym")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

register_all()

__all__ = ["HideOracle", "__version__", "register_all"]
