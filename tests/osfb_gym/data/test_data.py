"""The data layer: named datasets, provenance, caching and read-only records."""

from __future__ import annotations

import numpy as np
import pytest

from osfb_gym.data import Dataset, list_datasets, load


def test_breast_cancer_is_sklearns_data_as_shipped() -> None:
    data = load("breast_cancer")
    assert isinstance(data, Dataset)
    assert (data.n_samples, data.n_features) == (569, 30)
    assert int(data.y.sum()) == 357  # sklearn's target: 1 = benign
    assert np.isfinite(data.X).all()
    assert not data.X.flags.writeable and not data.y.flags.writeable
    assert {"origin", "license", "rows", "columns", "source", "preprocessing"} <= set(
        data.metadata
    )
    assert load("wdbc") is data


def test_unknown_name_lists_the_known_names() -> None:
    with pytest.raises(ValueError, match="known datasets: .*breast_cancer"):
        load("mnist")


def test_unknown_option_names_the_option() -> None:
    with pytest.raises(TypeError, match="topic"):
        load("breast_cancer", topic="earn")


def test_list_datasets_is_sorted_and_loadable_names() -> None:
    names = list_datasets()
    assert list(names) == sorted(names)
    assert "breast_cancer" in names
