"""from_csv: a user's file in, a Dataset out, and a clear error for every bad input."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from osfb_gym.data import from_csv


def write(tmp_path: Path, text: str, name: str = "loans.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_numeric_features_and_0_1_target_are_taken_as_they_are(tmp_path: Path) -> None:
    data = from_csv(write(tmp_path, "a,b,y\n1,2.5,0\n3,4.5,1\n5,6.5,1\n"), "y")
    assert data.name == "loans" and data.target == "y"
    assert data.feature_names == ("a", "b")
    assert data.X.tolist() == [[1.0, 2.5], [3.0, 4.5], [5.0, 6.5]]
    assert data.y.tolist() == [0.0, 1.0, 1.0]
    assert {"origin", "license", "rows", "columns", "source", "preprocessing"} <= set(data.metadata)


def test_string_target_with_positive_and_one_hot_features(tmp_path: Path) -> None:
    text = "income;region;owner;repaid\n3.5;north;True;yes\n1.0;south;False;no\n2.0;north;True;no\n"
    data = from_csv(write(tmp_path, text), "repaid", sep=";", positive="yes", name="mine")
    assert data.name == "mine"
    assert data.feature_names == ("income", "region=north", "region=south", "owner")
    assert data.X[:, 1].tolist() == [1.0, 0.0, 1.0] and data.X[:, 3].tolist() == [1.0, 0.0, 1.0]
    assert data.y.tolist() == [1.0, 0.0, 0.0]


def test_boolean_and_other_numeric_targets(tmp_path: Path) -> None:
    assert from_csv(write(tmp_path, "x,y\n1,True\n2,False\n"), "y").y.tolist() == [1.0, 0.0]
    coded = write(tmp_path, "x,class\n1,1\n2,2\n3,2\n", "coded.csv")
    assert from_csv(coded, "class", positive=2).y.tolist() == [0.0, 1.0, 1.0]
    regression = from_csv(coded, "x", task="regression")
    assert regression.task == "regression" and regression.y.tolist() == [1.0, 2.0, 3.0]


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="path .*nope.csv.* not found"):
        from_csv(tmp_path / "nope.csv", "y")


def test_empty_file_and_header_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is empty"):
        from_csv(write(tmp_path, ""), "y")
    with pytest.raises(ValueError, match="no data rows"):
        from_csv(write(tmp_path, "a,y\n", "header.csv"), "y")


def test_missing_target_column_lists_the_columns(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'label' not found.*available columns: a, y"):
        from_csv(write(tmp_path, "a,y\n1,0\n2,1\n"), "label")


def test_non_binary_target_without_positive_names_the_values(tmp_path: Path) -> None:
    path = write(tmp_path, "a,y\n1,good\n2,bad\n")
    with pytest.raises(ValueError, match=r"'y' is not 0/1.*\['bad', 'good'\].*positive="):
        from_csv(path, "y")
    with pytest.raises(ValueError, match="positive='fine' is not a value of target column 'y'"):
        from_csv(path, "y", positive="fine")


def test_one_class_target(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'y' must hold two classes"):
        from_csv(write(tmp_path, "a,y\n1,yes\n2,yes\n"), "y", positive="yes")


def test_missing_target_values(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="target column 'y' has 1 missing"):
        from_csv(write(tmp_path, "a,y\n1,1\n2,\n3,0\n"), "y")


@pytest.mark.parametrize("value", ["", "inf", "-inf", "nan"])
def test_missing_or_infinite_feature_names_the_column(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, f"a,b,y\n1,2,0\n3,{value},1\n")
    with pytest.raises(ValueError, match="feature column 'b' has 1 missing or infinite .*row 1"):
        from_csv(path, "y")


def test_missing_categorical_feature_names_the_column(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="feature column 'c' has 1 missing"):
        from_csv(write(tmp_path, "c,y\nred,0\n,1\n"), "y")


def test_categorical_error_mode_names_the_column(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="feature column 'c' is not numeric.*categorical='onehot'"):
        from_csv(write(tmp_path, "a,c,y\n1,red,0\n2,blue,1\n"), "y", categorical="error")


def test_bad_parameters_are_named(tmp_path: Path) -> None:
    path = write(tmp_path, "a,y\n1,0\n2,1\n")
    with pytest.raises(ValueError, match="task must be one of"):
        from_csv(path, "y", task="multiclass")
    with pytest.raises(ValueError, match="categorical must be one of 'onehot', 'error'"):
        from_csv(path, "y", categorical="ordinal")
    with pytest.raises(ValueError, match="must be numeric for task='regression'"):
        from_csv(write(tmp_path, "a,y\n1,x\n2,z\n", "text.csv"), "y", task="regression")
    with pytest.raises(ValueError, match="no feature columns"):
        from_csv(write(tmp_path, "y\n0\n1\n", "only.csv"), "y")


def test_result_is_finite_float64(tmp_path: Path) -> None:
    data = from_csv(write(tmp_path, "a,c,y\n1,red,0\n2,blue,1\n"), "y")
    assert data.X.dtype == np.float64 and np.isfinite(data.X).all()


@pytest.mark.parametrize("value", ["?", "abc", "1.5.2"])
def test_a_word_in_a_numeric_column_is_an_error_not_categories(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, f"a,b,y\n1,2,0\n3,{value},1\n5,6,1\n")
    expected = re.escape(f"column 'b' holds numbers and also '{value}' (line 3")
    with pytest.raises(ValueError, match=expected):
        from_csv(path, "y")
