"""The MovieLens loader, on small generated files: local copies and the download path."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from osfb_gym.data import load, sources
from osfb_gym.data.movielens import Ratings

LINES = [
    "5::100::4::978300760",
    "5::7::2.5::978300761",
    "9::100::0.5::978300762",
    "2::3::5::978300763",
]


def write_copy(root: Path) -> Path:
    folder = root / "movielens_10m"
    folder.mkdir(parents=True)
    (folder / "ratings.dat").write_text("\n".join(LINES) + "\n")
    return folder


def test_a_local_copy_is_read_with_ids_mapped_and_arrays_frozen(tmp_path):
    write_copy(tmp_path)
    data = load("movielens", data_home=tmp_path, download=False)
    assert isinstance(data, Ratings)
    assert data.user_ids.tolist() == [2, 5, 9] and data.item_ids.tolist() == [3, 7, 100]
    dense = data.matrix().toarray()
    assert dense.tolist() == [[5.0, 0.0, 0.0], [0.0, 2.5, 4.0], [0.0, 0.0, 0.5]]
    assert not data.rating.flags.writeable and data.metadata["rows"] == 4
    assert load("ml10m", data_home=tmp_path, download=False) is data


def test_a_csv_release_is_read_by_the_same_reader(tmp_path):
    from osfb_gym.data.movielens import read_movielens

    path = tmp_path / "ratings.csv"
    path.write_text("userId,movieId,rating,timestamp\n1,2,3.0,0\n1,5,4.5,0\n")
    data = read_movielens([path])
    assert (data.n_users, data.n_items) == (1, 2)
    np.testing.assert_array_equal(data.rating, [3.0, 4.5])


def test_missing_copy_is_downloaded_from_grouplens_into_the_cache(tmp_path, monkeypatch):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ml-10M100K/ratings.dat", "\n".join(LINES) + "\n")
    served: list[str] = []

    def fake_open(url: str) -> bytes:
        served.append(url)
        return buffer.getvalue()

    monkeypatch.setattr(sources, "_open_url", fake_open)
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "sklearn_home"))
    monkeypatch.delenv(sources.ENV_VAR, raising=False)
    data = load("movielens_10m")
    assert served == ["https://files.grouplens.org/datasets/movielens/ml-10m.zip"]
    cached = tmp_path / "sklearn_home" / "osfb_gym" / "movielens_10m" / "ratings.dat"
    assert cached.read_text().splitlines() == LINES and data.n_users == 3
    # the second time the cache is found: no download
    assert load("movielens_10m").n_users == 3 and len(served) == 1


def test_a_malformed_file_is_rejected(tmp_path):
    folder = write_copy(tmp_path / "bad")
    (folder / "ratings.dat").write_text("1::2\n")
    with pytest.raises(ValueError, match="UserID::MovieID::Rating::Timestamp"):
        load("movielens", data_home=tmp_path / "bad", download=False)
