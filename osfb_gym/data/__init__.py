"""Tabular data sources: named datasets, a user's own files, synthetic generators."""

from osfb_gym.data.dataset import Dataset, from_arrays

__all__ = ["Dataset", "from_arrays"]
