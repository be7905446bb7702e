"""Readers of the tabular benchmark datasets: a table of small per-dataset functions.

Each dataset is one :class:`Tabular` row with two small functions and its spec:

- ``read(paths)`` cuts the raw files (in the order the registry lists
  them) into rows of string fields with their line numbers
  (:mod:`osfb_gym.data.checks`);
- the spec (``numeric`` columns, the target's ``labels``, the columns where
  the real file has ``missing`` values) is checked on every row by
  :meth:`Tabular.parse`, which names the file, line and column of the first
  value that does not fit and returns the typed frame;
- ``split(frame, **options)`` picks the feature columns and binarises the
  target.

Everything after that is shared by all datasets (:func:`encode`), following
Section 8 of Jiang, Jiang and Pacchiano (2021), which uses all examples of
each dataset: every row is kept, numeric columns become floats, and every
non-numeric column (plus integer-coded categoricals the row names) is
one-hot encoded into ``column=value`` features, one per value, none
dropped. A missing categorical value, where the spec allows one (Adult's
``workclass``, ``occupation`` and ``native-country``), is a category of its
own, ``"?"``; a value the spec does not allow is an error, never a new
category.

An OpenML copy of a dataset goes through :meth:`Tabular.from_openml`: its
columns are renamed, by position, to the raw file's names and its target
values mapped back to the raw file's labels (as strings), so the same
``split`` and :func:`encode` serve both sources.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.core.validation import check_float
from osfb_gym.data.checks import (
    MISSING_CATEGORY,
    Rows,
    check_header,
    fail,
    read_text,
    select,
    split_rows,
    typed_frame,
)
from osfb_gym.data.dataset import Dataset, from_arrays

Split = Callable[..., tuple[pd.DataFrame, np.ndarray]]


@dataclass(frozen=True)
class RawFile:
    """One file cut into rows, with what :func:`~osfb_gym.data.checks.typed_frame` needs.

    Attributes
    ----------
    rows
        The data rows and their line numbers.
    columns
        The name of each field.
    header
        Whether the file had a header line.
    domains
        Allowed values of columns the file itself declares (ARFF nominal attributes).
    """

    rows: Rows
    columns: tuple[str, ...]
    header: bool = False
    domains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


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


#: how categorical columns become numbers: one 0/1 column per value, or one code column
ENCODINGS = ("onehot", "native")


def native_codes(series: pd.Series, code: Callable[[str], float] | None = None) -> np.ndarray:
    """Return one number per row for a categorical column: its integer code.

    The file's own numbers where the values are numbers (Australian's
    ``A4``, Churn's ``area_code``); else ``code(value)`` where the dataset
    has a documented coding (German's ``A43`` is value 3 of attribute 4);
    else the position of the value among the column's values in sorted
    order (numbers numerically), as scikit-learn's ``OrdinalEncoder`` and
    pandas' category codes number them; a missing value is the category
    ``"?"``, numbered like the others.

    Examples
    --------
    >>> native_codes(pd.Series(["b", "a", None, "b"])).tolist()
    [2.0, 1.0, 0.0, 2.0]
    >>> native_codes(pd.Series(["A43", "A410"]), lambda v: float(v[2:])).tolist()
    [3.0, 10.0]
    """
    numeric = _as_numeric(series)
    if numeric is not None and not numeric.isna().any():  # the file's own integer codes
        return numeric.to_numpy(dtype=float)
    labels = series.astype(object).where(series.notna(), MISSING_CATEGORY).astype(str)
    if code is not None:
        coded = np.array([code(value) for value in labels], dtype=float)
        if not np.isnan(coded).any():
            return coded
    values = sorted(labels.unique(), key=_natural_key)
    return pd.Categorical(labels, categories=values).codes.astype(float)


def encode(
    features: pd.DataFrame,
    categorical: Collection[str] = (),
    encoding: str = "onehot",
    code: Callable[[str], float] | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Encode the non-numeric (and the named) columns; numeric ones become floats.

    Parameters
    ----------
    features
        The feature columns.
    categorical
        Columns to encode as categories even though their values are
        numbers (integer-coded categories).
    encoding
        ``"onehot"``: one 0/1 column per value, none dropped. ``"native"``:
        one column of integer codes per categorical (:func:`native_codes`),
        the form UCI's integer-coded files and OpenML's ordinal codes have.
    code
        The dataset's own coding of a category label, for ``"native"``
        (NaN for a label it does not code: the column is numbered in
        sorted order instead).

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
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for column in features.columns:
        series = features[column]
        numeric = None if column in categorical else _as_numeric(series)
        if numeric is not None:
            blocks.append(numeric.to_numpy(dtype=float)[:, None])
            names.append(str(column))
            continue
        if encoding == "native":
            blocks.append(native_codes(series, code)[:, None])
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
        ``read(paths)``: the raw files, in the registry's order, cut into rows.
    split
        ``split(frame, **options)``: the feature columns and a boolean target.
    target
        Name of the target column in the raw frame.
    preprocessing
        One sentence for the record's metadata.
    text
        Columns whose values are categories; every other column but a
        labelled target must hold finite numbers.
    labels
        The target's values as written in the files; empty for a numeric target.
    missing
        Columns where the real files mark missing values with ``?`` (or an
        empty field); a missing value anywhere else is an error.
    columns
        The raw feature columns in file order, for files without a header and
        for renaming an OpenML copy by position.
    categorical
        Integer-coded categorical columns to one-hot encode.
    openml_target
        OpenML target label -> the raw file's target value.
    """

    name: str
    read: Callable[[Sequence[Path]], list[RawFile]]
    split: Split
    target: str
    preprocessing: str
    text: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    openml_target: Mapping[str, Any] = field(default_factory=dict)
    code: Callable[[str], float] | None = None

    def prepare(self, frame: pd.DataFrame, encoding: str = "onehot", **options: Any) -> Dataset:
        """Turn the raw frame into the numeric record (shared by every source).

        ``encoding`` (:data:`ENCODINGS`) says how categorical columns become numbers.
        """
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
        features, positive = self.split(frame, **options)
        # the spec says which columns are categories: no guessing from the values
        categorical = (*self.categorical, *self.text)
        X, names = encode(features, categorical, encoding, self.code)
        preprocessing = self.preprocessing
        coded = [c for c in features.columns if c in categorical]
        if encoding == "native" and coded:
            preprocessing += (
                f" encoding='native': the {len(coded)} categorical attributes "
                f"({', '.join(map(str, coded))}) are one integer-code column each instead "
                "(the file's own codes where it has numbers or a documented coding, else "
                "the value's rank in sorted order)."
            )
        return from_arrays(
            X,
            np.asarray(positive, dtype=float),
            name=self.name,
            feature_names=names,
            target=self.target,
            metadata={"preprocessing": preprocessing, "encoding": encoding},
        )

    def parse(self, paths: Sequence[Path]) -> pd.DataFrame:
        """Read the raw files, check every row against the spec, return one typed frame.

        Raises
        ------
        osfb_gym.data.checks.DataFormatError
            The first value, row or file that does not fit the spec, by file,
            line and column.
        """
        frames = []
        for raw in self.read(paths):
            domains = {**raw.domains, **({self.target: self.labels} if self.labels else {})}
            words = {*self.text, *([self.target] if self.labels else [])}
            frames.append(
                typed_frame(
                    raw.rows,
                    raw.columns,
                    numeric=[column for column in raw.columns if column not in words],
                    domains=domains,
                    missing=self.missing,
                    header_expected=raw.header,
                )
            )
        return pd.concat(frames, ignore_index=True)

    def load(self, paths: Sequence[Path], **options: Any) -> Dataset:
        """Read and check the raw files, and prepare them."""
        return self.prepare(self.parse(paths), **options)

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
    columns: Sequence[str], *, sep: str | None = ",", skip: int = 0
) -> Callable[[Sequence[Path]], list[RawFile]]:
    """Reader of files without a header line, one row of ``columns`` per line.

    ``skip`` lines are skipped in every file after the first (a test
    file's banner line). ``sep=None`` splits on runs of whitespace.
    """
    how = "whitespace" if sep is None else repr(sep)
    content = f"rows of {len(columns)} {how}-separated fields, no header"

    def read(paths: Sequence[Path]) -> list[RawFile]:
        return [
            RawFile(
                split_rows(
                    read_text(path, content),
                    path,
                    sep=sep,
                    n_fields=len(columns),
                    skip=skip if index > 0 else 0,
                ),
                tuple(columns),
            )
            for index, path in enumerate(paths)
        ]

    return read


def _with_header(
    columns: Sequence[str], *, sep: str = ",", names: Sequence[str] | None = None
) -> Callable[[Sequence[Path]], list[RawFile]]:
    """Reader of a file with a header line naming (at least) ``columns``.

    Only ``columns`` are kept, found by name. With ``names``, the header is
    only counted, not read (copies of the file name the columns differently),
    and the fields are called ``names``.
    """

    def read(paths: Sequence[Path]) -> list[RawFile]:
        path = paths[0]
        fields = len(names) if names is not None else None
        text = read_text(path, f"a {sep!r}-separated file with a header line")
        rows = split_rows(text, path, sep=sep, n_fields=fields)
        if names is not None:
            _, data = check_header(rows, ())
            return [RawFile(data, tuple(names), header=True)]
        header, data = check_header(rows, columns)
        return [RawFile(select(data, header, columns), tuple(columns), header=True)]

    return read


_ARFF_ATTRIBUTE = re.compile(r"@attribute\s+('[^']*'|\"[^\"]*\"|\S+)\s+(.+)", re.IGNORECASE)


def _arff(columns: Sequence[str]) -> Callable[[Sequence[Path]], list[RawFile]]:
    """Reader of an ARFF file whose attributes must be ``columns``, in order.

    The header is read for its attribute names and nominal value sets
    (``{-1,1}``), which the data rows are then held to.
    """

    def read(paths: Sequence[Path]) -> list[RawFile]:
        path = paths[0]
        text = read_text(path, "an ARFF file (@attribute lines, @data, comma-separated rows)")
        declared: list[tuple[int, str]] = []
        domains: dict[str, tuple[str, ...]] = {}
        data_line = None
        for number, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if stripped.lower().startswith("@data"):
                data_line = number
                break
            match = _ARFF_ATTRIBUTE.match(stripped)
            if match is not None:
                name, kind = match.group(1).strip("'\""), match.group(2).strip()
                declared.append((number, name))
                if kind.startswith("{"):
                    values = kind.strip("{}").split(",")
                    domains[name] = tuple(value.strip().strip("'\"") for value in values)
        expected = f"the {len(columns)} attributes {', '.join(columns[:2])}, ... then @data"
        for (number, name), column in zip(declared, columns, strict=False):
            if name != column:
                fail(path, f"attribute {name!r}", f"attribute {column!r} ({expected})", number)
        if data_line is None or len(declared) != len(columns):
            found = "no @data line" if data_line is None else f"{len(declared)} attributes"
            fail(path, found, expected, data_line)
        rows = split_rows(text, path, sep=",", n_fields=len(columns), skip=data_line, comment="%")
        return [RawFile(rows, tuple(columns), header=True, domains=domains)]

    return read


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
    _headerless((*ADULT_COLUMNS, "income"), skip=1),
    # Test labels end in '.', ">50K." is the same class as ">50K".
    _feature_target("income", lambda s: s.astype(str).str.rstrip(".") == ">50K"),
    target="income",
    text=(
        "workclass",
        "education",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "native-country",
    ),
    labels=("<=50K", ">50K", "<=50K.", ">50K."),
    # The real files mark unknown values '?' in these three columns only.
    missing=("workclass", "occupation", "native-country"),
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


BANK = Tabular(
    "bank",
    _with_header((*BANK_COLUMNS, "y"), sep=";"),
    _feature_target("y", _equals("yes")),
    target="y",
    text=(
        "job",
        "marital",
        "education",
        "default",
        "housing",
        "loan",
        "contact",
        "month",
        "poutcome",
    ),
    labels=("no", "yes"),
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


COMPAS_COLUMNS = (
    *COMPAS_FEATURES,
    "days_b_screening_arrest",
    "is_recid",
    "score_text",
    "two_year_recid",
)


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
    return frame[list(COMPAS_FEATURES)], frame["two_year_recid"].to_numpy() == "1"


COMPAS = Tabular(
    "compas",
    _with_header(COMPAS_COLUMNS),
    _split_compas,
    target="two_year_recid",
    text=("sex", "race", "c_charge_degree", "score_text"),
    labels=("0", "1"),
    # ProPublica leaves days_b_screening_arrest empty where there was no arrest date.
    missing=("days_b_screening_arrest",),
    preprocessing=(
        "compas-scores-two-years.csv, all 7,214 rows (6,172 with propublica_filter=True); "
        "y = two_year_recid; features: sex, age, race, juvenile felony/misdemeanour/other "
        "counts, priors_count, charge degree; outcome columns (is_recid, r_*, vr_*, "
        "violent_recid) and COMPAS's own decile/score columns left out."
    ),
)

# --------------------------------------------------------------------------- Communities and crime
CRIME_ID_COLUMNS = ("state", "county", "community", "communityname", "fold")


# The columns communities.names lists as having missing values ('?'): two
# identifiers, OtherPerCap (one gap) and 22 LEMAS police columns (84% gaps).
CRIME_GAPPY = (
    "OtherPerCap", "LemasSwornFT", "LemasSwFTPerPop", "LemasSwFTFieldOps",
    "LemasSwFTFieldPerPop", "LemasTotalReq", "LemasTotReqPerPop", "PolicReqPerOffic",
    "PolicPerPop", "RacialMatchCommPol", "PctPolicWhite", "PctPolicBlack", "PctPolicHisp",
    "PctPolicAsian", "PctPolicMinor", "OfficAssgnDrugUnits", "NumKindsDrugsSeiz",
    "PolicAveOTWorked", "PolicCars", "PolicOperBudg", "LemasPctPolicOnPatr",
    "LemasGangUnitDeploy", "PolicBudgPerPop",
)  # fmt: skip
CRIME_ATTRIBUTES = 128


def _attribute_names(path: Path, pattern: re.Pattern[str], count: int) -> list[str]:
    """Return the column names a ``.names`` file declares; there must be ``count``."""
    text = read_text(path, f"a .names file declaring {count} attributes")
    names = [match.group(1) for line in text.splitlines() if (match := pattern.match(line))]
    if len(names) != count:
        fail(path, f"{len(names)} attribute declarations", f"{count}")
    return names


def _read_crime(paths: Sequence[Path]) -> list[RawFile]:
    data, names = paths
    columns = _attribute_names(names, re.compile(r"@attribute\s+(\S+)", re.I), CRIME_ATTRIBUTES)
    text = read_text(data, f"rows of {len(columns)} comma-separated fields, no header")
    return [RawFile(split_rows(text, data, sep=",", n_fields=len(columns)), tuple(columns))]


def _split_crime(frame: pd.DataFrame, *, quantile: float) -> tuple[pd.DataFrame, np.ndarray]:
    quantile = check_float(
        quantile, "quantile", low=0, high=1, low_inclusive=False, high_inclusive=False
    )
    target = frame["ViolentCrimesPerPop"]
    # The 22 LEMAS police columns are missing for 84% of communities and
    # OtherPerCap for one; dropping them keeps all 1,994 rows, as the paper.
    features = frame.drop(columns=[*CRIME_ID_COLUMNS, *CRIME_GAPPY, "ViolentCrimesPerPop"])
    return features, (target > target.quantile(quantile)).to_numpy()


CRIME = Tabular(
    "crime",
    _read_crime,
    _split_crime,
    target="ViolentCrimesPerPop",
    # every attribute but the community's name is a number (most scaled to [0, 1])
    text=("communityname",),
    missing=("county", "community", *CRIME_GAPPY),
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

GERMAN_NUMERIC = (
    "duration",
    "credit_amount",
    "installment_rate",
    "residence_since",
    "age",
    "existing_credits",
    "people_liable",
)

_GERMAN_CODE = re.compile(r"A(\d+)")
# german.doc's attribute numbers of the 13 categorical attributes
_GERMAN_CATEGORICAL = frozenset((1, 3, 4, 6, 7, 9, 10, 12, 14, 15, 17, 19, 20))


def _german_code(value: str) -> float:
    """German's documented code: ``A43`` is value 3 of attribute 4 (``A410``: value 10).

    german.doc numbers attribute ``j``'s values ``Aj0, Aj1, ...``; the
    attribute number is the code's leading digits (two when they name one
    of the 13 categorical attributes and digits remain), the value the
    rest. OpenML's copy (labels such as ``'<0'``) has no such codes and is
    numbered in sorted order instead.

    Examples
    --------
    >>> [_german_code(v) for v in ("A11", "A410", "A121", "A201", "A40")]
    [1.0, 10.0, 1.0, 1.0, 0.0]
    """
    match = _GERMAN_CODE.fullmatch(value)
    digits = "" if match is None else match.group(1)
    for width in (2, 1):  # attributes 10-20 have two digits
        if len(digits) > width and int(digits[:width]) in _GERMAN_CATEGORICAL:
            return float(digits[width:])
    return math.nan  # not a german.doc code (OpenML's labels): sorted order instead


GERMAN = Tabular(
    "german",
    _headerless((*GERMAN_COLUMNS, "class"), sep=None),
    _feature_target("class", _equals("1")),
    target="class",
    text=tuple(c for c in GERMAN_COLUMNS if c not in GERMAN_NUMERIC),
    labels=("1", "2"),
    preprocessing=(
        "german.data, all 1,000 rows; y = 1 for good credit (class 1), 0 for bad (class 2); "
        "the 13 categorical attributes (codes A11...A202) one-hot encoded, 7 numeric kept."
    ),
    columns=GERMAN_COLUMNS,
    openml_target={"good": "1", "bad": "2"},
    code=_german_code,
)

# --------------------------------------------------------------------------- Blood transfusion
BLOOD_COLUMNS = ("recency_months", "frequency_times", "monetary_cc", "time_months")


BLOOD = Tabular(
    "blood",
    # The header's label name differs between copies; the columns are fixed.
    _with_header((), names=(*BLOOD_COLUMNS, "donated")),
    _feature_target("donated", _equals("1")),
    target="donated",
    labels=("0", "1"),
    preprocessing="transfusion.data, all 748 rows; y = donated blood in March 2007; "
    "the 4 numeric attributes as they are.",
    columns=BLOOD_COLUMNS,
    openml_target={"1": "0", "2": "1"},
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
    _feature_target("class", _equals("1")),
    target="class",
    labels=("0", "1"),
    preprocessing="pima-indians-diabetes.csv, all 768 rows; y = tested positive; the 8 numeric "
    "attributes as they are (zeros that code missing values are kept, as on OpenML).",
    columns=DIABETES_COLUMNS,
    openml_target={"tested_positive": "1", "tested_negative": "0"},
)

# --------------------------------------------------------------------------- EEG eye state
EEG_COLUMNS = (
    "AF3", "F7", "F3", "FC5", "T7", "P7", "O1", "O2", "P8", "T8", "FC6", "F4", "F8", "AF4",
)  # fmt: skip

EEG = Tabular(
    "eeg",
    _arff((*EEG_COLUMNS, "eyeDetection")),
    _feature_target("eyeDetection", _equals("1")),
    target="eyeDetection",
    labels=("0", "1"),
    preprocessing="EEG Eye State.arff, all 14,980 rows in recording order; y = 1 eye closed; "
    "the 14 channels as they are (outliers kept).",
    columns=EEG_COLUMNS,
    openml_target={"1": "0", "2": "1"},
)

# --------------------------------------------------------------------------- Australian credit
AUSTRALIAN_COLUMNS = tuple(f"A{j}" for j in range(1, 15))

AUSTRALIAN = Tabular(
    "australian",
    _headerless((*AUSTRALIAN_COLUMNS, "A15"), sep=None),
    _feature_target("A15", _equals("1")),
    target="A15",
    labels=("0", "1"),
    preprocessing="australian.dat, all 690 rows; y = A15 (1 approved); the integer-coded "
    "categoricals with more than two values (A4, A5, A6, A12) one-hot encoded, the 0/1 ones "
    "(A1, A8, A9, A11) and the 6 continuous ones kept as numbers.",
    columns=AUSTRALIAN_COLUMNS,
    categorical=("A4", "A5", "A6", "A12"),
    openml_target={"0": "0", "1": "1"},
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
    churned = frame["class"] == "True"
    return frame.drop(columns=["class", "phone_number"]), churned.to_numpy()


CHURN = Tabular(
    "churn",
    _headerless((*CHURN_COLUMNS, "class")),
    _split_churn,
    target="class",
    text=("state", "phone_number", "international_plan", "voice_mail_plan"),
    labels=("False", "True"),
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
    "URL_of_Anchor", "Links_in_tags", "SFH", "Submitting_to_email", "Abnormal_URL", "Redirect",
    "on_mouseover", "RightClick", "popUpWidnow", "Iframe", "age_of_domain", "DNSRecord",
    "web_traffic", "Page_Rank", "Google_Index", "Links_pointing_to_page", "Statistical_report",
)  # fmt: skip

PHISHING = Tabular(
    "phishing",
    _arff((*PHISHING_COLUMNS, "Result")),
    _feature_target("Result", _equals("-1")),
    target="Result",
    labels=("-1", "1"),
    preprocessing="Training Dataset.arff, all 11,055 rows; y = 1 for a phishing site "
    "(Result = -1), the class the detector is after; the 30 features kept as numbers in "
    "{-1, 0, 1} (they are ordered: legitimate, suspicious, phishing).",
    columns=PHISHING_COLUMNS,
    openml_target={"-1": "-1", "1": "1"},
)

# --------------------------------------------------------------------------- svmguide1
GUIDE_COLUMNS = ("x1", "x2", "x3", "x4")


_SVMLIGHT_PAIR = re.compile(r"(\d+):(\S*)")


def _read_svmlight(paths: Sequence[Path]) -> list[RawFile]:
    """Cut the LIBSVM files into rows of 4 values and a label, line by line.

    Each line is ``label index:value ...`` with indices 1 to 4. Parsed here
    rather than by ``sklearn.datasets.load_svmlight_files`` so that a
    malformed pair, an index out of range, a value that is not a number or
    a label outside {0, 1} is reported with its line.
    """
    content = f"LIBSVM lines 'label index:value ...' with indices 1 to {len(GUIDE_COLUMNS)}"
    raws = []
    for path in paths:
        rows = split_rows(read_text(path, content), path, sep=None, n_fields=None)
        fields = []
        for tokens, number in zip(rows.fields, rows.lines, strict=True):
            values = ["0"] * len(GUIDE_COLUMNS)  # an index left out holds 0
            for token in tokens[1:]:
                pair = _SVMLIGHT_PAIR.fullmatch(token)
                index = int(pair.group(1)) if pair is not None else 0
                if not 1 <= index <= len(GUIDE_COLUMNS):
                    expected = f"index:value with an index from 1 to {len(GUIDE_COLUMNS)}"
                    fail(path, f"{token!r}", expected, line=number)
                values[index - 1] = token.partition(":")[2]  # checked as a number later
            fields.append([*values, tokens[0]])
        raws.append(RawFile(Rows(path, fields, rows.lines), (*GUIDE_COLUMNS, "label")))
    return raws


GUIDE = Tabular(
    "guide",
    _read_svmlight,
    _feature_target("label", _equals("1")),
    target="label",
    labels=("0", "1"),
    preprocessing="svmguide1 (3,089) and svmguide1.t (4,000) concatenated; y = label 1; "
    "the 4 features unscaled (Dataset.standardized() rescales them).",
    columns=GUIDE_COLUMNS,
)

# --------------------------------------------------------------------------- Spambase
_SPAMBASE_ATTRIBUTE = re.compile(r"^(\S+?):\s+continuous\.\s*$")


SPAMBASE_ATTRIBUTES = 57


def _read_spambase(paths: Sequence[Path]) -> list[RawFile]:
    data, names = paths
    columns = (*_attribute_names(names, _SPAMBASE_ATTRIBUTE, SPAMBASE_ATTRIBUTES), "spam")
    text = read_text(data, f"rows of {len(columns)} comma-separated numbers, no header")
    return [RawFile(split_rows(text, data, sep=",", n_fields=len(columns)), columns)]


SPAMBASE = Tabular(
    "spambase",
    _read_spambase,
    _feature_target("spam", _equals("1")),
    target="spam",
    labels=("0", "1"),
    preprocessing="spambase.data, all 4,601 rows; y = spam; the 57 numeric attributes "
    "(names from spambase.names) as they are.",
    openml_target={"1": "1", "0": "0"},
)
