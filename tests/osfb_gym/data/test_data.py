"""Named datasets: counts as documented in each SOURCE.md, provenance, caching, search, remotes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from osfb_gym.data import (
    Dataset,
    TextDataset,
    list_datasets,
    load,
    registry,
    sources,
    tabular,
)
from osfb_gym.data.sources import PackageCopy

METADATA_KEYS = {"origin", "license", "rows", "columns", "source", "preprocessing"}

# name -> (rows, features after encoding, positives). Rows and positives are
# the counts each SOURCE.md verified; the feature counts follow from the
# documented preprocessing (one-hot levels included).
TABULAR = {
    "adult": (48842, 108, 11687),
    "bank": (45211, 51, 5289),
    "compas": (7214, 15, 3251),
    "crime": (1994, 99, 583),
    "german": (1000, 61, 700),
    "blood": (748, 4, 178),
    "diabetes": (768, 8, 268),
    "eeg": (14980, 14, 6723),
    "australian": (690, 38, 307),
    "churn": (5000, 73, 707),
    "phishing": (11055, 30, 4898),
    "guide": (7089, 4, 4000),
    "spambase": (4601, 57, 1813),
}
LENDING = (
    "adult",
    "bank",
    "compas",
    "crime",
    "german",
    "blood",
    "diabetes",
    "eeg",
    "australian",
    "churn",
)
ALIASES = {
    "bank_marketing": "bank",
    "communities_crime": "crime",
    "german_credit": "german",
    "blood_transfusion": "blood",
    "pima_diabetes": "diabetes",
    "eeg_eye_state": "eeg",
    "australian_credit": "australian",
    "svmguide1": "guide",
}


@pytest.fixture
def shared(osfb_data: Path) -> Path:
    """The real files, from ``$OSFB_DATA`` (the session fixture skips when it is unset)."""
    return osfb_data


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """No network: every URL and OpenML fetch fails and is recorded; caches point at tmp_path."""
    attempted: list[str] = []

    def no_url(url: str) -> bytes:
        attempted.append(url)
        raise OSError("network disabled in tests")

    def no_openml(data_id: int, data_home: Path) -> tuple[object, object]:
        attempted.append(f"openml:{data_id}")
        raise OSError("network disabled in tests")

    monkeypatch.setattr(sources, "_open_url", no_url)
    monkeypatch.setattr(sources, "fetch_openml_frame", no_openml)
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "sklearn_home"))
    monkeypatch.delenv(sources.ENV_VAR, raising=False)
    yield attempted


# --------------------------------------------------------------------------- named tabular
@pytest.mark.parametrize("name", sorted(TABULAR))
def test_tabular_dataset_matches_its_source_counts(name: str, shared: Path) -> None:
    data = load(name, data_home=shared)
    rows, features, positives = TABULAR[name]
    assert isinstance(data, Dataset)
    assert data.name == name and data.task == "binary"
    assert (data.n_samples, data.n_features, int(data.y.sum())) == (rows, features, positives)
    assert data.X.dtype == np.float64 and np.isfinite(data.X).all()
    assert set(np.unique(data.y)) == {0.0, 1.0}
    assert len(data.feature_names) == data.n_features == len(set(data.feature_names))
    assert not data.X.flags.writeable and not data.y.flags.writeable
    assert METADATA_KEYS <= set(data.metadata)
    assert (data.metadata["rows"], data.metadata["columns"]) == (rows, features)
    assert str(shared.resolve()) in data.metadata["source"]  # sources are resolved paths
    if name in LENDING:
        assert data.metadata["paper_rows"] > 0


def test_records_are_cached_and_read_only(shared: Path) -> None:
    data = load("german", data_home=shared)
    assert load("german", data_home=str(shared)) is data
    with pytest.raises(ValueError, match="read-only"):
        data.X[0, 0] = 1.0
    scaled = data.standardized()
    assert np.allclose(scaled.X.mean(axis=0), 0.0)


@pytest.mark.parametrize(("alias", "name"), sorted(ALIASES.items()))
def test_aliases_and_folder_names_load_the_same_record(alias: str, name: str, shared: Path) -> None:
    assert load(alias, data_home=shared) is load(name, data_home=shared)


def test_adult_keeps_unknown_values_as_a_category(shared: Path) -> None:
    data = load("adult", data_home=shared)
    assert {"workclass=?", "occupation=?", "native-country=?"} <= set(data.feature_names)
    assert data.metadata["paper_rows"] == data.n_samples


def test_compas_leaves_out_outcomes_and_scores_and_offers_propublica_filter(
    shared: Path,
) -> None:
    data = load("compas", data_home=shared)
    names = " ".join(data.feature_names)
    for leak in ("is_recid", "decile_score", "score_text", "violent_recid", "r_charge"):
        assert leak not in names
    filtered = load("compas", data_home=shared, propublica_filter=True)
    assert filtered.n_samples == 6172
    with pytest.raises(TypeError, match="propublica_filter"):
        load("compas", data_home=shared, propublica_filter="yes")


def test_crime_threshold_is_an_option(shared: Path) -> None:
    data = load("crime", data_home=shared, quantile=0.5)
    assert 900 < data.y.sum() < 1000
    dropped = {"state", "communityname", "fold", "LemasSwornFT", "PolicCars", "OtherPerCap"}
    assert not dropped & set(data.feature_names)
    assert "LemasPctOfficDrugUn" in data.feature_names  # a LEMAS column with no gaps stays
    with pytest.raises(ValueError, match="quantile"):
        load("crime", data_home=shared, quantile=1.5)


def test_crime_keeps_the_gappy_columns_on_request_and_says_what_the_paper_leaves_open(
    shared: Path,
) -> None:
    dropped = load("crime", data_home=shared)
    filled = load("crime", data_home=shared, gaps="median")
    assert (filled.n_samples, filled.n_features) == (1994, 122) and dropped.n_features == 99
    assert np.isfinite(filled.X).all() and np.array_equal(filled.y, dropped.y)
    column = filled.feature_names.index("PolicCars")
    values, counts = np.unique(filled.X[:, column], return_counts=True)
    assert counts.max() >= 1675 and len(values) > 10  # 1,675 gaps filled, the rest kept
    assert "319" in dropped.metadata["preprocessing"]  # rows left if rows with gaps were dropped
    with pytest.raises(ValueError, match="gaps must be one of"):
        load("crime", data_home=shared, gaps="mean")


def test_compas_description_says_why_its_rows_differ_from_the_paper(shared: Path) -> None:
    text = load("compas", data_home=shared).metadata["preprocessing"]
    assert "7,918" in text and "704" in text


def test_phishing_positive_class_is_phishing(shared: Path) -> None:
    data = load("phishing", data_home=shared)
    assert "Result = -1" in data.metadata["preprocessing"]
    assert int(data.y.sum()) == 4898


# --------------------------------------------------------------------------- text
def test_sms_spam_is_text_with_spam_as_positive(shared: Path) -> None:
    data = load("sms_spam", data_home=shared)
    assert isinstance(data, TextDataset)
    assert (data.n_samples, int(data.y.sum())) == (5574, 747)
    assert all(isinstance(text, str) and text for text in data.texts[:50])
    assert not data.y.flags.writeable
    assert METADATA_KEYS <= set(data.metadata)


def test_reuters_r8_is_one_topic_against_the_rest(shared: Path) -> None:
    earn = load("reuters_r8", data_home=shared)
    assert isinstance(earn, TextDataset)
    assert earn.n_samples == 7674 and int(earn.y.sum()) == 2840 + 1083
    assert (earn.metadata["train_rows"], earn.metadata["test_rows"]) == (5485, 2189)
    assert "Class" not in earn.texts[0]  # the added header line is skipped
    assert int(load("r8", data_home=shared, topic="acq").y.sum()) == 1596 + 696
    with pytest.raises(ValueError, match="topic must be one of 'acq'.*'trade'"):
        load("reuters_r8", data_home=shared, topic="sports")


# --------------------------------------------------------------------------- names and options
def test_list_datasets_names_every_dataset() -> None:
    expected = {*TABULAR, "breast_cancer", "sms_spam", "reuters_r8", "movielens", "fico"}
    assert set(list_datasets()) == expected
    assert list(list_datasets()) == sorted(expected)


def test_breast_cancer_is_sklearns_data_as_shipped() -> None:
    data = load("breast_cancer")
    assert isinstance(data, Dataset)
    assert (data.n_samples, data.n_features, int(data.y.sum())) == (569, 30, 357)
    assert not data.X.flags.writeable
    assert METADATA_KEYS <= set(data.metadata)
    assert load("wdbc") is data


def test_unknown_name_lists_the_known_names() -> None:
    with pytest.raises(ValueError, match="known datasets: adult, australian, bank.*spambase"):
        load("mnist")
    with pytest.raises(TypeError, match="name must be a string"):
        load(3)  # type: ignore[call-overload]


def test_unknown_option_names_the_option_and_the_accepted_ones() -> None:
    expected = "unknown option.*topic.*options for crime: encoding, gaps, quantile"
    with pytest.raises(TypeError, match=expected):
        load("crime", topic="earn")


# --------------------------------------------------------------------------- where files are found
def test_osfb_data_environment_variable(monkeypatch: pytest.MonkeyPatch, shared: Path) -> None:
    monkeypatch.setenv("OSFB_DATA", str(shared))
    data = load("blood")
    expected = shared.resolve() / "blood_transfusion" / "transfusion.data"
    assert data.metadata["source"] == str(expected)


def test_data_home_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared: Path
) -> None:
    monkeypatch.setenv("OSFB_DATA", str(tmp_path / "nothing here"))
    assert load("blood", data_home=shared).n_samples == 748


def test_the_download_cache_is_searched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared: Path, offline: list[str]
) -> None:
    cached = tmp_path / "sklearn_home" / "osfb_gym" / "blood_transfusion"
    cached.mkdir(parents=True)
    (cached / "transfusion.data").write_bytes(
        (shared / "blood_transfusion" / "transfusion.data").read_bytes()
    )
    data = load("blood_transfusion")
    assert data.metadata["source"].startswith(str(cached.resolve()))
    assert offline == []


def test_an_installed_package_copy_is_searched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "site" / "fakedatapkg"
    (package / "dataset" / "german").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    found = sources.candidate_folders(
        "german_credit", None, [PackageCopy("fakedatapkg", "dataset/german")]
    )
    assert found[-1] == package / "dataset" / "german"
    assert sources.package_folder(PackageCopy("no_such_package_xyz", "data")) is None


# --------------------------------------------------------------------------- remote sources
def _openml_frames(name: str, shared: Path) -> tuple[pd.DataFrame, pd.Series]:
    """An OpenML-shaped copy built from the local files: other column names, coded labels."""
    if name == "blood":
        frame = pd.read_csv(shared / "blood_transfusion" / "transfusion.data")
        features = frame.iloc[:, :4].set_axis([f"V{j}" for j in range(1, 5)], axis=1)
        return features, (frame.iloc[:, 4] + 1).astype(str).astype("category").rename("Class")
    paths = [shared / "adult" / "adult.data", shared / "adult" / "adult.test"]
    frame = tabular.ADULT.parse(paths).replace("?", np.nan)
    target = frame.pop("income").str.rstrip(".").astype("category").rename("class")
    return frame.set_axis([f"openml_{c}" for c in frame.columns], axis=1), target


@pytest.mark.parametrize("name", ["blood", "adult"])
def test_openml_copy_is_mapped_to_the_same_preprocessing(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared: Path, offline: list[str]
) -> None:
    frames = _openml_frames(name, shared)
    monkeypatch.setattr(sources, "fetch_openml_frame", lambda data_id, home: frames)
    fetched = load(name, data_home=tmp_path / "elsewhere")
    local = load(name, data_home=shared)
    assert fetched.metadata["source"].startswith("https://www.openml.org/d/")
    assert fetched.feature_names == local.feature_names
    assert np.array_equal(fetched.X, local.X) and np.array_equal(fetched.y, local.y)
    assert offline == [registry.get_spec(name).downloads[0].url]  # the URLs were tried first


def test_openml_copy_that_drifted_raises_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shared: Path, offline: list[str]
) -> None:
    features, target = _openml_frames("blood", shared)
    monkeypatch.setattr(
        sources, "fetch_openml_frame", lambda data_id, home: (features.iloc[:, :3], target)
    )
    with pytest.raises(ValueError, match="OpenML copy of blood has 3 feature columns"):
        load("blood", data_home=tmp_path / "drift")
    monkeypatch.setattr(
        sources, "fetch_openml_frame", lambda data_id, home: (features, target.cat.codes)
    )
    with pytest.raises(ValueError, match="target labels"):
        load("blood", data_home=tmp_path / "drift2")
