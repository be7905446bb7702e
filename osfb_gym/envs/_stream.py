"""Streams of labelled examples from the data layer, shared by the classification envs.

AppleTasting-v0 and RejectOption-v0 both stream a dataset's rows one at a
time: tabular data standardised with an intercept column appended, text
as hashed character 4-grams kept sparse. The stream of a record is built
once per (record, hashing dimension) and shared by every env made on it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from osfb_gym.core.validation import check_int
from osfb_gym.envs._text import PAPER_TEXT_DIM, TEXT_FEATURES, hash_char_4grams

if TYPE_CHECKING:
    from osfb_gym.data import Dataset, TextDataset

DEFAULT_TEXT_DIM = 4096  # hashed character 4-grams of a text dataset


@dataclass(frozen=True)
class DatasetStream:
    """The fixed examples of a dataset-backed episode (read-only arrays).

    Attributes
    ----------
    name
        The dataset's name.
    X
        Tabular data: standardised features with the ``"intercept"`` column
        (all ones) last, ``float32``. Text: the hashed character 4-grams, a
        ``float32`` CSR matrix with unit-norm rows.
    y
        The 0/1 labels, ``int8``.
    bound
        The largest ``|feature|``: the observation space's bound.
    feature_names
        Names of the columns of a tabular ``X``; None for text.
    """

    name: str
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    bound: float
    feature_names: tuple[str, ...] | None = None

    @property
    def n_rows(self) -> int:
        """Number of examples."""
        return int(self.y.shape[0])

    @property
    def dim(self) -> int:
        """Number of features of a row."""
        return int(self.X.shape[1])

    def row(self, i: int) -> np.ndarray:
        """Return example ``i`` as a fresh dense ``float32`` vector."""
        X = self.X
        if isinstance(X, np.ndarray):
            return X[i].copy()
        row = np.zeros(X.shape[1], dtype=np.float32)
        start, end = X.indptr[i], X.indptr[i + 1]
        row[X.indices[start:end]] = X.data[start:end]
        return row


def binary_labels(y: np.ndarray, name: str, setting: str = "apple tasting") -> np.ndarray:
    """Return 0/1 labels as ``int8``, or raise naming ``dataset`` and the values found.

    Examples
    --------
    >>> binary_labels(np.array([0.0, 1.0, 1.0]), "mine").tolist()
    [0, 1, 1]
    >>> binary_labels(np.array([0.0, 2.5]), "mine")
    Traceback (most recent call last):
    ...
    ValueError: dataset 'mine' must have labels in {0, 1} for apple tasting, found [0.0, 2.5]
    """
    values = np.unique(y)
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError(
            f"dataset {name!r} must have labels in {{0, 1}} for {setting}, "
            f"found {values[:5].tolist()}"
        )
    return np.asarray(y).astype(np.int8)


def tabular_stream(data: Dataset, setting: str = "apple tasting") -> DatasetStream:
    """Standardise ``data`` and append the intercept column; features rounded to ``float32``."""
    y = binary_labels(data.y, data.name, setting)
    standard = data.standardized().X
    X = np.hstack([standard, np.ones((standard.shape[0], 1))]).astype(np.float32)
    for array in (X, y):
        array.flags.writeable = False
    return DatasetStream(
        data.name, X, y, float(np.max(np.abs(X))), (*data.feature_names, "intercept")
    )


def text_stream(
    data: TextDataset, dim: int, setting: str = "apple tasting", text_features: str = "counts"
) -> DatasetStream:
    """Hash ``data``'s texts into ``dim`` character 4-gram buckets (:func:`hash_char_4grams`).

    ``text_features`` names the featurisation (:data:`~osfb_gym.envs._text.TEXT_FEATURES`).
    """
    y = binary_labels(data.y, data.name, setting)
    y.flags.writeable = False
    binary, lowercase = TEXT_FEATURES[text_features]
    X = hash_char_4grams(data.texts, dim, binary=binary, lowercase=lowercase)
    return DatasetStream(data.name, X, y, 1.0)


_STREAM_CACHE: OrderedDict[tuple[int, int | None, str], tuple[Any, DatasetStream]] = OrderedDict()
_STREAM_CACHE_SIZE = 8


def dataset_stream(
    data: Dataset | TextDataset,
    dim: int | None,
    setting: str = "apple tasting",
    text_features: str = "counts",
) -> DatasetStream:
    """Return the stream of ``data`` (``dim``: the hashing dimension of text), built once.

    ``load`` hands out the same record for the same name and folder, so
    every env built on it shares one standardisation or one vectorisation.
    """
    from osfb_gym.data import TextDataset

    key = (id(data), dim, text_features)
    hit = _STREAM_CACHE.get(key)
    if hit is not None and hit[0] is data:
        _STREAM_CACHE.move_to_end(key)
        return hit[1]
    if isinstance(data, TextDataset):
        default = DEFAULT_TEXT_DIM if text_features == "counts" else PAPER_TEXT_DIM
        stream = text_stream(data, default if dim is None else dim, setting, text_features)
    else:
        stream = tabular_stream(data, setting)
    _STREAM_CACHE[key] = (data, stream)  # the record is kept so its id is not reused
    while len(_STREAM_CACHE) > _STREAM_CACHE_SIZE:
        _STREAM_CACHE.popitem(last=False)
    return stream


def load_stream(
    dataset: Any,
    *,
    data_home: str | None,
    dim: int | None,
    topic: str | None,
    setting: str,
    text_features: str = "counts",
    encoding: str | None = None,
) -> DatasetStream:
    """Resolve an env's ``dataset`` argument (a name or a record) to its stream.

    ``topic`` picks the positive topic of ``"reuters_r8"`` (by name only);
    ``dim`` is the hashing dimension of a text dataset and must be None for
    a tabular one, whose columns fix it. ``setting`` names the env in the
    errors. ``text_features`` names a text dataset's featurisation
    (:data:`~osfb_gym.envs._text.TEXT_FEATURES`).
    errors. ``encoding`` is the loader's option for a tabular dataset
    given by name (``"onehot"``, the loader's default, or ``"native"``).
    """
    # imported here: the data layer pulls in scikit-learn and pandas, which a
    # synthetic world never needs
    from osfb_gym.data import Dataset, TextDataset, load
    from osfb_gym.data.registry import get_spec

    record: Any
    if isinstance(dataset, str):
        name = get_spec(dataset).name
        if topic is not None and name != "reuters_r8":
            raise ValueError(
                f"topic applies to dataset='reuters_r8' only, got topic={topic!r} "
                f"with dataset={dataset!r}"
            )
        options: dict[str, Any] = {} if topic is None else {"topic": topic}
        if encoding is not None:
            if "encoding" not in get_spec(dataset).options:
                raise ValueError(
                    f"encoding applies to tabular datasets read from files, got "
                    f"encoding={encoding!r} with dataset={dataset!r}"
                )
            options["encoding"] = encoding
        record = load(dataset, data_home=data_home, **options)
    elif encoding is not None:
        raise ValueError(
            "encoding applies to a dataset given by name (the loader encodes it), "
            f"got encoding={encoding!r} with a record"
        )
    elif isinstance(dataset, Dataset | TextDataset):
        if topic is not None:
            raise ValueError(
                f"topic applies to dataset='reuters_r8' by name only, got topic={topic!r}"
            )
        record = dataset
    else:
        raise TypeError(
            f"dataset must be a name (str), a Dataset or TextDataset record, or None, "
            f"got {dataset!r} ({type(dataset).__name__})"
        )
    if not isinstance(record, Dataset | TextDataset):
        raise ValueError(
            f"dataset {dataset!r} is not a stream of labelled examples "
            f"({type(record).__name__}); {setting} needs features and 0/1 labels"
        )
    if isinstance(record, TextDataset):
        default = DEFAULT_TEXT_DIM if text_features == "counts" else PAPER_TEXT_DIM
        dim = default if dim is None else check_int(dim, "dim", minimum=1)
    elif dim is not None:
        raise ValueError(
            f"dim is fixed by the columns of tabular dataset {record.name!r} "
            f"(dim sets the hashing dimension of text datasets only), got dim={dim!r}"
        )
    return dataset_stream(record, dim, setting, text_features)
