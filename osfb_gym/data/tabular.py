"""Readers of the tabular benchmark datasets: a table of small per-dataset functions.

Each dataset is one :class:`Tabular` row with two small functions:

- ``read(paths)`` parses the raw files (in the order the registry lists
  them) into a frame with the dataset's own column names, values as in the
  file;
- ``split(frame, **options)`` picks the feature columns and binarises the
  target.

Everything after that is shared by all datasets (:func:`encode`), following
Section 8 of Jiang, Jiang and Pacchiano (2021), which uses all examples of
each dataset: every row is kept, numeric columns become floats, and every
non-numeric column (plus integer-coded categoricals the row names) is
one-hot encoded into ``column=value`` features, one per value, none
dropped. A missing categorical value is a category of its own, ``"?"``.

An OpenML copy of a dataset goes through :meth:`Tabular.from_openml`: its
columns are renamed, by position, to the raw file's names and its target
values mapped back to the raw file's, so the same ``split`` and
:func:`encode` serve both sources.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.io import arff
from sklearn.datasets import load_svmlight_files

from osfb_gym.core.validation import check_float
from osfb_gym.data.dataset import Dataset, from_arrays

MISSING_CATEGORY = "?"

Split = Callable[..., tuple[pd.DataFrame, np.ndarray]]


def _natural_key(value: str) -> tuple[int, float, str]:
    """Order category labels numerically when they are numbers ("2" before "10")."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def _as_numeric(series: pd.Series) -> pd.Series | None:
    """Return ``series`` as float if every present value is a number, else None."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.astype(float)
    converted = pd.to_numeric(series, errors="coerce")
    if converted.notna().sum() != series.notna().sum():
        return None
    return converted.astype(float)


def encode(
    features: pd.DataFrame, categorical: Collection[str] = ()
) -> tuple[np.ndarray, list[str]]:
    """One-hot encode the non-numeric (and the named) columns; numeric ones become floats.

    Parameters
    ----------
    features
        The feature columns.
    categorical
        Columns to one-hot encode even though their values are numbers
        (integer-coded categories).

    Returns
    -------
    X, names
        The ``float64`` matrix and one name per column; one-hot columns read
        ``column=value``, ordered by value (numerically when values are
        numbers). A missing categorical value becomes the category ``"?"``;
        a missing numeric value stays NaN for the caller to reject.

    Examples
    --------
    >>> frame = pd.DataFrame({"age": [30, 40], "sex": ["F", "M"], "code": [2, 10]})
    >>> X, names = encode(frame, categorical=["code"])
    >>> names
    ['age', 'sex=F', 'sex=M', 'code=2', 'code=10']
    >>> X.tolist()
    [[30.0, 1.0, 0.0, 1.0, 0.0], [40.0, 0.0, 1.0, 0.0, 1.0]]
    """
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for column in features.columns:
        series = features[column]
        numeric = None if column in categorical else _as_numeric(series)
        if numeric is not None:
            blocks.append(numeric.to_numpy(dtype=float)[:, None])
            names.append(str(column))
            continue
        labels = series.astype(object).where(series.notna(), MISSING_CATEGORY).astype(str)
        values = sorted(labels.unique(), key=_natural_key)
        codes = pd.Categorical(labels, categories=values).codes
        blocks.append(np.eye(len(values))[codes])
        names.extend(f"{column}={value}" for value in values)
    return np.hstack(blocks), names


@dataclass(frozen=True)
class Tabular:
    """How one tabular dataset goes from its raw files to a :class:`Dataset`.

    Attributes
    ----------
    name
        The dataset's canonical name.
    read
        ``read(paths)``: the raw files, in the registry's order, as one frame
        with the file's column names.
    split
        ``split(frame, **options)``: the feature columns and a boolean target.
    target
        Name of the target column in the raw frame.
    preprocessing
        One sentence for the record's metadata.
    columns
        The raw feature columns in file order, for files without a header and
        for renaming an OpenML copy by position.
    categorical
        Integer-coded categorical columns to one-hot encode.
    openml_target
        OpenML target label -> the raw file's target value.
    """

    name: str
    read: Callable[[Sequence[Path]], pd.DataFrame]
    split: Split
    target: str
    preprocessing: str
    columns: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    openml_target: Mapping[str, Any] = field(default_factory=dict)

    def prepare(self, frame: pd.DataFrame, **options: Any) -> Dataset:
        """Turn the raw frame into the numeric record (shared by every source)."""
        features, positive = self.split(frame, **options)
        X, names = encode(features, self.categorical)
        return from_arrays(
            X,
            np.asarray(positive, dtype=float),
            name=self.name,
            feature_names=names,
            target=self.target,
            metadata={"preprocessing": self.preprocessing},
        )

    def load(self, paths: Sequence[Path], **options: Any) -> Dataset:
        """Read the raw files and prepare them."""
        return self.prepare(self.read(paths), **options)

    def from_openml(self, features: pd.DataFrame, target: pd.Series, **options: Any) -> Dataset:
        """Prepare an OpenML copy: rename its columns to the raw names, map its labels back.

        Raises
        ------
        ValueError
            If the OpenML copy has another number of columns or unknown target
            labels than this reader expects (OpenML versions drift).
        """
        if self.columns and len(features.columns) != len(self.columns):
            raise ValueError(
                f"OpenML copy of {self.name} has {len(features.columns)} feature columns "
                f"({', '.join(map(str, features.columns))}), expected {len(self.columns)}"
            )
        labels = target.astype(str).str.strip()
        unknown = sorted(set(labels) - set(self.openml_target))
        if unknown:
            raise ValueError(
                f"OpenML copy of {self.name} has target labels {unknown}, "
                f"expected {sorted(self.openml_target)}"
            )
        if self.columns:
            features = features.set_axis(list(self.columns), axis=1)
        frame = features.reset_index(drop=True)
        frame[self.target] = labels.map(dict(self.openml_target)).to_numpy()
        return self.prepare(frame, **options)


# --------------------------------------------------------------------------- file formats
def _headerless(
    columns: Sequence[str], *, sep: str = ",", skiprows: int = 0
) -> Callable[[Sequence[Path]], pd.DataFrame]:
    """Reader of files without a header, concatenated in order.

    ``skiprows`` lines are skipped in every file after the first (a test
    file's banner line).
    """

    def read(paths: Sequence[Path]) -> pd.DataFrame:
        frames = [
            pd.read_csv(
                path,
                header=None,
                names=list(columns),
                sep=sep,
                skiprows=skiprows if index > 0 else 0,
                skipinitialspace=True,
                # '?' and the like stay strings: the categorical encoder keeps
                # them as a category instead of pandas guessing NaN.
                keep_default_na=False,
                na_values=[],
            )
            for index, path in enumerate(paths)
        ]
        return pd.concat(frames, ignore_index=True)

    return read


def _read_arff(paths: Sequence[Path]) -> pd.DataFrame:
    records, _ = arff.loadarff(paths[0])
    frame = pd.DataFrame(records)
    for column in frame.columns:
        if frame[column].dtype == object:  # nominal attributes come back as bytes
            frame[column] = frame[column].str.decode("utf-8")
    return frame


def _feature_target(target: str, positive: Callable[[pd.Series], Any]) -> Split:
    """Split keeping every other column as a feature, ``positive(target column)`` as y."""

    def split(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        return frame.drop(columns=[target]), np.asarray(positive(frame[target]), dtype=bool)

    return split


def _equals(value: Any) -> Callable[[pd.Series], Any]:
    return lambda series: series == value


# --------------------------------------------------------------------------- Adult
ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
)

ADULT = Tabular(
    "adult",
    # adult.test opens with the banner line "|1x3 Cross validator".
    _headerless((*ADULT_COLUMNS, "income"), skiprows=1),
    # Test labels end in '.', ">50K." is the same class as ">50K".
    _feature_target("income", lambda s: s.astype(str).str.rstrip(".") == ">50K"),
    target="income",
    preprocessing=(
        "adult.data and adult.test concatenated (48,842 rows, none dropped); y = income >50K; "
        "all 14 attributes kept; the 8 categorical ones one-hot encoded with '?' as a category."
    ),
    columns=ADULT_COLUMNS,
    openml_target={">50K": ">50K", "<=50K": "<=50K"},
)

# --------------------------------------------------------------------------- Bank marketing
BANK_COLUMNS = (
    "age",
    "job",
    "marital",
    "education",
    "default",
    "balance",
    "housing",
    "loan",
    "contact",
    "day",
    "month",
    "duration",
    "campaign",
    "pdays",
    "previous",
    "poutcome",
)


def _read_semicolon(paths: Sequence[Path]) -> pd.DataFrame:
    return pd.read_csv(paths[0], sep=";", keep_default_na=False, na_values=[])


BANK = Tabular(
    "bank",
    _read_semicolon,
    _feature_target("y", _equals("yes")),
    target="y",
    preprocessing=(
        "bank-full.csv, all 45,211 rows; y = 1 if y == 'yes'; all 16 attributes kept "
        "(duration included, as the paper uses every feature, though it is only known "
        "after the call); the 9 categorical ones one-hot encoded."
    ),
    columns=BANK_COLUMNS,
    openml_target={"1": "no", "2": "yes"},
)

# --------------------------------------------------------------------------- COMPAS
COMPAS_FEATURES = (
    "sex",
    "age",
    "race",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
    "priors_count",
    "c_charge_degree",
)


def _read_compas(paths: Sequence[Path]) -> pd.DataFrame:
    return pd.read_csv(paths[0])


def _split_compas(
    frame: pd.DataFrame, *, propublica_filter: bool
) -> tuple[pd.DataFrame, np.ndarray]:
    if not isinstance(propublica_filter, bool):
        raise TypeError(f"propublica_filter must be a bool, got {propublica_filter!r}")
    if propublica_filter:
        keep = (
            frame["days_b_screening_arrest"].between(-30, 30)
            & (frame["is_recid"] != -1)
            & (frame["c_charge_degree"] != "O")
            & (frame["score_text"] != "N/A")
        )
        frame = frame[keep]
    return frame[list(COMPAS_FEATURES)], frame["two_year_recid"].to_numpy() == 1


COMPAS = Tabular(
    "compas",
    _read_compas,
    _split_compas,
    target="two_year_recid",
    preprocessing=(
        "compas-scores-two-years.csv, all 7,214 rows (6,172 with propublica_filter=True); "
        "y = two_year_recid; features: sex, age, race, juvenile felony/misdemeanour/other "
        "counts, priors_count, charge degree; outcome columns (is_recid, r_*, vr_*, "
        "violent_recid) and COMPAS's own decile/score columns left out."
    ),
)

# --------------------------------------------------------------------------- Communities and crime
CRIME_ID_COLUMNS = ("state", "county", "community", "communityname", "fold")


def _read_crime(paths: Sequence[Path]) -> pd.DataFrame:
    data, names = paths
    columns = [
        line.split()[1]
        for line in names.read_text(encoding="latin-1").splitlines()
        if line.lower().startswith("@attribute")
    ]
    return pd.read_csv(data, header=None, names=columns, na_values="?")


def _split_crime(frame: pd.DataFrame, *, quantile: float) -> tuple[pd.DataFrame, np.ndarray]:
    quantile = check_float(
        quantile, "quantile", low=0, high=1, low_inclusive=False, high_inclusive=False
    )
    target = frame["ViolentCrimesPerPop"]
    features = frame.drop(columns=[*CRIME_ID_COLUMNS, "ViolentCrimesPerPop"])
    # The 22 LEMAS police columns are missing for 84% of communities and
    # OtherPerCap for one; dropping them keeps all 1,994 rows, as the paper.
    features = features.dropna(axis=1)
    return features, (target > target.quantile(quantile)).to_numpy()


CRIME = Tabular(
    "crime",
    _read_crime,
    _split_crime,
    target="ViolentCrimesPerPop",
    preprocessing=(
        "communities.data, all 1,994 rows; y = ViolentCrimesPerPop > its `quantile` "
        "quantile (0.7, the paper's 'high crime'); the 5 non-predictive columns and the "
        "23 columns with missing values (22 LEMAS police columns, OtherPerCap) dropped."
    ),
)

# --------------------------------------------------------------------------- German credit
GERMAN_COLUMNS = (
    "checking_status",
    "duration",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment_since",
    "installment_rate",
    "personal_status_sex",
    "other_debtors",
    "residence_since",
    "property",
    "age",
    "other_installment_plans",
    "housing",
    "existing_credits",
    "job",
    "people_liable",
    "telephone",
    "foreign_worker",
)

GERMAN = Tabular(
    "german",
    _headerless((*GERMAN_COLUMNS, "class"), sep=r"\s+"),
    _feature_target("class", _equals(1)),
    target="class",
    preprocessing=(
        "german.data, all 1,000 rows; y = 1 for good credit (class 1), 0 for bad (class 2); "
        "the 13 categorical attributes (codes A11...A202) one-hot encoded, 7 numeric kept."
    ),
    columns=GERMAN_COLUMNS,
    openml_target={"good": 1, "bad": 2},
)

# --------------------------------------------------------------------------- Blood transfusion
BLOOD_COLUMNS = ("recency_months", "frequency_times", "monetary_cc", "time_months")


def _read_blood(paths: Sequence[Path]) -> pd.DataFrame:
    # The header's label name differs between copies; the columns are fixed.
    return pd.read_csv(
        paths[0], header=0, names=[*BLOOD_COLUMNS, "donated"], skipinitialspace=True
    )


BLOOD = Tabular(
    "blood",
    _read_blood,
    _feature_target("donated", _equals(1)),
    target="donated",
    preprocessing="transfusion.data, all 748 rows; y = donated blood in March 2007; "
    "the 4 numeric attributes as they are.",
    columns=BLOOD_COLUMNS,
    openml_target={"1": 0, "2": 1},
)

# --------------------------------------------------------------------------- Pima diabetes
DIABETES_COLUMNS = (
    "pregnancies",
    "glucose",
    "blood_pressure",
    "skin_thickness",
    "insulin",
    "bmi",
    "diabetes_pedigree",
    "age",
)

DIABETES = Tabular(
    "diabetes",
    _headerless((*DIABETES_COLUMNS, "class")),
    _feature_target("class", _equals(1)),
    target="class",
    preprocessing="pima-indians-diabetes.csv, all 768 rows; y = tested positive; the 8 numeric "
    "attributes as they are (zeros that code missing values are kept, as on OpenML).",
    columns=DIABETES_COLUMNS,
    openml_target={"tested_positive": 1, "tested_negative": 0},
)

# --------------------------------------------------------------------------- EEG eye state
EEG_COLUMNS = (
    "AF3", "F7", "F3", "FC5", "T7", "P7", "O1", "O2", "P8", "T8", "FC6", "F4", "F8", "AF4",
)  # fmt: skip

EEG = Tabular(
    "eeg",
    _read_arff,
    _feature_target("eyeDetection", lambda s: s.astype(str) == "1"),
    target="eyeDetection",
    preprocessing="EEG Eye State.arff, all 14,980 rows in recording order; y = 1 eye closed; "
    "the 14 channels as they are (outliers kept).",
    columns=EEG_COLUMNS,
    openml_target={"1": "0", "2": "1"},
)

# --------------------------------------------------------------------------- Australian credit
AUSTRALIAN_COLUMNS = tuple(f"A{j}" for j in range(1, 15))

AUSTRALIAN = Tabular(
    "australian",
    _headerless((*AUSTRALIAN_COLUMNS, "A15"), sep=r"\s+"),
    _feature_target("A15", _equals(1)),
    target="A15",
    preprocessing="australian.dat, all 690 rows; y = A15 (1 approved); the integer-coded "
    "categoricals with more than two values (A4, A5, A6, A12) one-hot encoded, the 0/1 ones "
    "(A1, A8, A9, A11) and the 6 continuous ones kept as numbers.",
    columns=AUSTRALIAN_COLUMNS,
    categorical=("A4", "A5", "A6", "A12"),
    openml_target={"0": 0, "1": 1},
)

# --------------------------------------------------------------------------- Churn
CHURN_COLUMNS = (
    "state",
    "account_length",
    "area_code",
    "phone_number",
    "international_plan",
    "voice_mail_plan",
    "number_vmail_messages",
    "total_day_minutes",
    "total_day_calls",
    "total_day_charge",
    "total_eve_minutes",
    "total_eve_calls",
    "total_eve_charge",
    "total_night_minutes",
    "total_night_calls",
    "total_night_charge",
    "total_intl_minutes",
    "total_intl_calls",
    "total_intl_charge",
    "number_customer_service_calls",
)


def _split_churn(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    churned = frame["class"].astype(str).str.strip().str.lower() == "true"
    return frame.drop(columns=["class", "phone_number"]), churned.to_numpy()


CHURN = Tabular(
    "churn",
    _headerless((*CHURN_COLUMNS, "class")),
    _split_churn,
    target="class",
    preprocessing="churn.all, all 5,000 rows; y = churned; phone_number (an identifier) "
    "dropped; state, area_code (3 codes), international_plan and voice_mail_plan one-hot "
    "encoded, the 15 usage counts kept.",
    columns=CHURN_COLUMNS,
    categorical=("area_code",),
    openml_target={"1": "True", "0": "False"},
)

# --------------------------------------------------------------------------- Phishing
PHISHING_COLUMNS = (
    "having_IP_Address", "URL_Length", "Shortining_Service", "having_At_Symbol",
    "double_slash_redirecting", "Prefix_Suffix", "having_Sub_Domain", "SSLfinal_State",
    "Domain_registeration_length", "Favicon", "port", "HTTPS_token", "Request_URL",
    "URL_of_Anchor", "Links_in_tags", "SFH", "Submitting_to_email", "Abnormal_URL",
    "Redirect", "on_mouseover", "RightClick", "popUpWidnow", "Iframe", "age_of_domain",
    "DNSRecord", "web_traffic", "Page_Rank", "Google_Index", "Links_pointing_to_page",
    "Statistical_report",
)  # fmt: skip

PHISHING = Tabular(
    "phishing",
    _read_arff,
    _feature_target("Result", lambda s: s.astype(int) == -1),
    target="Result",
    preprocessing="Training Dataset.arff, all 11,055 rows; y = 1 for a phishing site "
    "(Result = -1), the class the detector is after; the 30 features kept as numbers in "
    "{-1, 0, 1} (they are ordered: legitimate, suspicious, phishing).",
    columns=PHISHING_COLUMNS,
    openml_target={"-1": "-1", "1": "1"},
)

# --------------------------------------------------------------------------- svmguide1
GUIDE_COLUMNS = ("x1", "x2", "x3", "x4")


def _read_svmlight(paths: Sequence[Path]) -> pd.DataFrame:
    parts = load_svmlight_files([str(path) for path in paths], n_features=len(GUIDE_COLUMNS))
    X = np.vstack([matrix.toarray() for matrix in parts[0::2]])
    frame = pd.DataFrame(X, columns=list(GUIDE_COLUMNS))
    frame["label"] = np.concatenate(parts[1::2])
    return frame


GUIDE = Tabular(
    "guide",
    _read_svmlight,
    _feature_target("label", _equals(1)),
    target="label",
    preprocessing="svmguide1 (3,089) and svmguide1.t (4,000) concatenated; y = label 1; "
    "the 4 features unscaled (Dataset.standardized() rescales them).",
    columns=GUIDE_COLUMNS,
)

# --------------------------------------------------------------------------- Spambase
_SPAMBASE_ATTRIBUTE = re.compile(r"^(\S+?):\s+continuous\.\s*$")


def _read_spambase(paths: Sequence[Path]) -> pd.DataFrame:
    data, names = paths
    columns = [
        match.group(1)
        for line in names.read_text(encoding="latin-1").splitlines()
        if (match := _SPAMBASE_ATTRIBUTE.match(line))
    ]
    return pd.read_csv(data, header=None, names=[*columns, "spam"])


SPAMBASE = Tabular(
    "spambase",
    _read_spambase,
    _feature_target("spam", _equals(1)),
    target="spam",
    preprocessing="spambase.data, all 4,601 rows; y = spam; the 57 numeric attributes "
    "(names from spambase.names) as they are.",
    openml_target={"1": 1, "0": 0},
)
