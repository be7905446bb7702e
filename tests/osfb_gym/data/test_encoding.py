"""encoding='native' (one integer-code column per categorical) beside the default one-hot."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import osfb_gym  # noqa: F401
from osfb_gym.data import from_arrays, load
from osfb_gym.data.tabular import encode


@pytest.fixture
def shared(osfb_data: Path) -> Path:
    return osfb_data


def test_native_codes_keep_numbers_and_number_labels_in_sorted_order():
    frame = pd.DataFrame({"age": [30, 40, 50], "sex": ["M", "F", None], "code": [7, 3, 7]})
    X, names = encode(frame, categorical=["code"], encoding="native")
    assert names == ["age", "sex", "code"]
    # "?" (missing) < "F" < "M"; the integer-coded column keeps the file's own codes
    assert X.tolist() == [[30.0, 2.0, 7.0], [40.0, 1.0, 3.0], [50.0, 0.0, 7.0]]
    with pytest.raises(ValueError, match="encoding must be one of"):
        encode(frame, encoding="ordinal")


@pytest.mark.parametrize(
    ("name", "onehot", "native"),
    [
        ("german", 61, 20),
        ("australian", 38, 14),
        ("compas", 15, 8),
        ("churn", 73, 19),
        ("crime", 99, 99),
        ("blood", 4, 4),
        # the two large files take seconds to parse in each encoding
        pytest.param("adult", 108, 14, marks=pytest.mark.slow),
        pytest.param("bank", 51, 16, marks=pytest.mark.slow),
    ],
)
def test_native_encoding_has_one_column_per_attribute(name, onehot, native, shared):
    wide, narrow = load(name, data_home=shared), load(name, data_home=shared, encoding="native")
    assert (wide.n_features, narrow.n_features) == (onehot, native)
    assert narrow.n_samples == wide.n_samples and np.array_equal(narrow.y, wide.y)
    assert narrow.metadata["encoding"] == "native"


def test_german_native_codes_are_german_docs(shared):
    data = load("german", data_home=shared, encoding="native")
    column = data.feature_names.index("purpose")
    # purpose A40 ... A410: values 0-10 (german.doc), 'A410' is 10, not sorted after 'A41'
    assert set(np.unique(data.X[:, column])) <= set(range(11)) and data.X[:, column].max() == 10
    assert data.X[0, data.feature_names.index("checking_status")] == 1.0  # row 1 is A11


def test_encoding_is_refused_where_it_means_nothing(shared):
    with pytest.raises(TypeError, match="encoding"):
        load("breast_cancer", encoding="native")
    with pytest.raises(ValueError, match="encoding must be one of"):
        load("german", data_home=shared, encoding="dummies")
    with pytest.raises(ValueError, match="apply to a dataset only"):
        gym.make("OneSidedLending-v0", encoding="native")
    with pytest.raises(ValueError, match="encoding applies to a dataset given by name"):
        gym.make("OneSidedLending-v0", dataset=load("german", data_home=shared), encoding="native")


def test_envs_take_the_native_encoding(shared):
    kwargs = dict(dataset="german", data_home=str(shared), encoding="native")
    lending = gym.make("OneSidedLending-v0", link="linear", scaling="robust", **kwargs)
    assert lending.observation_space.shape == (1, 21)  # 20 attributes and the intercept
    assert gym.make("AppleTasting-v0", **kwargs).observation_space.shape == (21,)
    assert gym.make("RejectOption-v0", **kwargs).observation_space.shape == (21,)


def test_robust_scaling_is_not_squeezed_by_outliers():
    rng = np.random.default_rng(0)
    column = np.r_[rng.standard_normal(990), np.full(10, 1e4)]
    data = from_arrays(column[:, None], (column > 0).astype(float))
    standard, robust = data.standardized().X[:990, 0], data.robust_scaled().X[:990, 0]
    # the bulk's spread: squeezed to ~0.01 by ten outliers, about 1 / 1.35 with the IQR
    assert standard.std() < 0.02 < 0.5 < robust.std() < 1.0
