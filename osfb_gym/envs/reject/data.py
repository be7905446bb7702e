"""RejectOption's dataset mode: a named dataset (or record) streamed as (x, y), y in {-1, +1}.

Features are the data layer's stream (:func:`osfb_gym.envs._stream.load_stream`:
standardised, an intercept column last); rows are drawn in a seeded order,
a permutation (each row once, the episode ends with the data) or with
replacement (``horizon`` draws).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from osfb_gym.core.validation import check_int
from osfb_gym.envs._stream import DatasetStream, load_stream

if TYPE_CHECKING:
    from osfb_gym.data import Dataset, TextDataset

DEFAULT_HORIZON = 10_000  # the paper's T; a dataset streamed without replacement: all its rows


def open_dataset(
    dataset: str | Dataset | TextDataset,
    *,
    data_home: str | None,
    dim: int | None,
    topic: str | None,
    horizon: int | None,
    replacement: bool,
    encoding: str | None = None,
) -> tuple[DatasetStream, int]:
    """Load ``dataset`` as a stream; return it and the episode's horizon.

    Without replacement the horizon is at most the number of rows.
    """
    data = load_stream(
        dataset,
        data_home=data_home,
        dim=dim,
        topic=topic,
        setting="reject option",
        encoding=encoding,
    )
    if replacement:
        return data, DEFAULT_HORIZON if horizon is None else check_int(
            horizon, "horizon", minimum=1
        )
    if horizon is None:
        return data, data.n_rows
    return data, min(check_int(horizon, "horizon", minimum=1), data.n_rows)


def draw_order(
    data: DatasetStream, rng: np.random.Generator, replacement: bool, horizon: int
) -> np.ndarray:
    """Return the episode's rows: ``horizon + 1`` draws with replacement, else a permutation.

    (With replacement, the extra row is the one shown with the truncation.)
    """
    if replacement:
        return rng.integers(0, data.n_rows, size=horizon + 1)
    return rng.permutation(data.n_rows)
