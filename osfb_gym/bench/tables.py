"""Tuned cells and their markdown table; the code lives in :mod:`osfb_gym.bench.report`."""

from osfb_gym.bench.report import tuned, tuned_table

__all__ = ["tuned", "tuned_table"]
