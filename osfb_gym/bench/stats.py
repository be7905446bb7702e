"""Moved to :mod:`osfb_gym.stats.aggregates`; this name re-exports it for old imports.

The one home of the project's statistics is :mod:`osfb_gym.stats` (DESIGN
section 8): rliable's aggregates there, and the verdicts that name winners
in :mod:`osfb_gym.stats.verdicts`.
"""

from __future__ import annotations

from osfb_gym.stats.aggregates import (
    LEVEL,
    REPS,
    STATISTICS,
    interval,
    iqm,
    performance_profile,
    probability_of_improvement,
)

__all__ = [
    "LEVEL",
    "REPS",
    "STATISTICS",
    "interval",
    "iqm",
    "performance_profile",
    "probability_of_improvement",
]
