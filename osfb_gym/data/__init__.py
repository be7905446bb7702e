"""Data sources: named datasets and a user's own files.

``load(name)`` returns a frozen record for a named dataset (see
``list_datasets()``), searching ``data_home``, ``$OSFB_DATA`` and the
download cache, and downloading the original files when allowed.
``from_csv`` and ``from_arrays`` wrap a user's own data. Synthetic worlds
are drawn by the environments themselves (``dataset=None``).
"""

from osfb_gym.data.checks import DataFormatError
from osfb_gym.data.dataset import Dataset, from_arrays
from osfb_gym.data.files import from_csv
from osfb_gym.data.registry import list_datasets, load
from osfb_gym.data.sources import DatasetNotFoundError
from osfb_gym.data.text import TextDataset

__all__ = [
    "DataFormatError",
    "Dataset",
    "DatasetNotFoundError",
    "TextDataset",
    "from_arrays",
    "from_csv",
    "list_datasets",
    "load",
]
