"""Tabular data sources: named datasets, a user's own files, synthetic generators."""

from osfb_gym.data.dataset import Dataset, from_arrays
from osfb_gym.data.registry import list_datasets, load

__all__ = ["Dataset", "from_arrays", "list_datasets", "load"]
