"""MovieLens ratings (the AcQUIre paper's movie-recommendation task) as a sparse record.

``load("movielens")`` reads MovieLens 10M (Harper and Konstan 2015), the
paper's data set: 10,000,054 ratings of 10,681 movies by 71,567 users,
from ``ratings.dat`` (``UserID::MovieID::Rating::Timestamp``). The file is
looked for like every other dataset (``data_home``, ``$OSFB_DATA``, the
download cache) and, when missing, extracted from GroupLens' ``ml-10m.zip``
into the cache. A ``ratings.csv`` of the newer releases (``userId,movieId,
rating,timestamp`` with a header) is read by the same reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Ratings:
    """Who rated what, how much: one entry per rating, ids mapped to ``0..n-1``.

    Attributes
    ----------
    name
        The name ``load`` knows it by.
    user
        Row index of each rating's user, ``int64`` of shape ``(r,)``.
    item
        Column index of each rating's movie, ``int64`` of shape ``(r,)``.
    rating
        The ratings (``float64``; 0.5 to 5 stars).
    user_ids, item_ids
        The original ids of rows and columns.
    metadata
        Provenance, as for :class:`~osfb_gym.data.Dataset`.
    """

    name: str
    user: np.ndarray
    item: np.ndarray
    rating: np.ndarray
    user_ids: np.ndarray
    item_ids: np.ndarray
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_users(self) -> int:
        """Number of users."""
        return int(self.user_ids.size)

    @property
    def n_items(self) -> int:
        """Number of movies."""
        return int(self.item_ids.size)

    def matrix(self) -> Any:
        """Return the ``(n_users, n_items)`` rating matrix as ``scipy.sparse`` CSR."""
        import scipy.sparse as sp

        shape = (self.n_users, self.n_items)
        return sp.csr_matrix((self.rating, (self.user, self.item)), shape=shape)


def read_ratings_file(path: Path) -> pd.DataFrame:
    """Read ``ratings.dat`` (``::``-separated) or ``ratings.csv`` into four columns."""
    columns = ["user", "item", "rating", "timestamp"]
    expected = (
        "userId,movieId,rating,timestamp"
        if path.suffix == ".csv"
        else ("UserID::MovieID::Rating::Timestamp")
    )
    try:
        if path.suffix == ".csv":
            frame = pd.read_csv(path, header=0, names=columns)
        else:
            # "1::122::5::838985046" split on ":" gives empty fields between the values;
            # the C parser on one character is far faster than a two-character regex
            frame = pd.read_csv(path, sep=":", header=None, usecols=[0, 2, 4, 6])
            frame.columns = columns
    except ValueError as error:
        raise ValueError(f"{path} is not a ratings file ({expected}): {error}") from None
    if frame.isna().any().any():
        raise ValueError(f"{path} has missing fields; expected {expected}")
    return frame


def read_movielens(paths: Sequence[Path], name: str = "movielens") -> Ratings:
    r"""Read a MovieLens ratings file into a :class:`Ratings` record.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "ratings.dat").write_text("1::10::5::0\n1::20::3.5::0\n7::10::1::0\n")
    >>> data = read_movielens([folder / "ratings.dat"])
    >>> data.n_users, data.n_items, data.matrix().toarray().tolist()
    (2, 2, [[5.0, 3.5], [1.0, 0.0]])
    """
    frame = read_ratings_file(paths[0])
    user_ids, user = np.unique(frame["user"].to_numpy(), return_inverse=True)
    item_ids, item = np.unique(frame["item"].to_numpy(), return_inverse=True)
    rating = frame["rating"].to_numpy(dtype=float)
    return Ratings(
        name,
        user.astype(np.int64),
        item.astype(np.int64),
        rating,
        user_ids,
        item_ids,
        {
            "rows": int(rating.size),
            "users": int(user_ids.size),
            "items": int(item_ids.size),
            "preprocessing": "none: every rating of the file; ids mapped to 0..n-1 in "
            "increasing order of the original ids.",
        },
    )
