"""How one tabular dataset goes from its raw files to a :class:`~osfb_gym.data.dataset.Dataset`.

Each dataset (:mod:`osfb_gym.data.tabular`) is one :class:`Tabular` row with
two small functions and its spec:

- ``read(paths)`` cuts the raw files (in the order the registry lists
  them) into rows of string fields with their line numbers
  (:mod:`osfb_gym.data.checks`); the file formats are built here
  (:func:`headerless`, :func:`with_header`, :func:`arff`,
  :func:`with_names_file`, :func:`svmlight`);
- the spec (``numeric`` columns, the target's ``labels``, the columns where
  the real file has ``missing`` values) is checked on every row by
  :meth:`Tabular.parse`, which names the file, line and column of the first
  value that does not fit and returns the typed frame;
- ``split(frame, **options)`` picks the feature columns and binarises the
  target (:func:`feature_target` for the common case).

Everything after that is shared by all datasets
(:func:`osfb_gym.data.encoding.encode`): every row is kept, numeric columns
become floats, categorical ones are one-hot or native-coded. A missing
categorical value, where the spec allows one (Adult's ``workclass``,
``occupation`` and ``native-country``), is a category of its own, ``"?"``;
a value the spec does not allow is an error, never a new category.

An OpenML copy of a dataset goes through :meth:`Tabular.from_openml`: its
columns are renamed, by position, to the raw file's names and its target
values mapped back to the raw file's labels (as strings), so the same
``split`` and ``encode`` serve both sources.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.data.checks import (
    Rows,
    check_header,
    fail,
    read_text,
    select,
    split_rows,
    typed_frame,
)
from osfb_gym.data.dataset import Dataset, from_arrays
from osfb_gym.data.encoding import ENCODINGS, encode

Split = Callable[..., tuple[pd.DataFrame, np.ndarray]]
Reader = Callable[[Sequence[Path]], list["RawFile"]]


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
    code
        The documented number of a category's code (German's ``A43``), if any.
    domains
        The documented values of categorical columns (German's codes): a
        value outside them is an error naming the file, line, column and code.
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
    domains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

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
            domains = {
                **self.domains,
                **raw.domains,
                **({self.target: self.labels} if self.labels else {}),
            }
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


def headerless(columns: Sequence[str], *, sep: str | None = ",", skip: int = 0) -> Reader:
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


def with_header(
    columns: Sequence[str], *, sep: str = ",", names: Sequence[str] | None = None
) -> Reader:
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


def arff(columns: Sequence[str]) -> Reader:
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


def feature_target(target: str, positive: Callable[[pd.Series], Any]) -> Split:
    """Split keeping every other column as a feature, ``positive(target column)`` as y."""

    def split(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
        return frame.drop(columns=[target]), np.asarray(positive(frame[target]), dtype=bool)

    return split


def equals(value: Any) -> Callable[[pd.Series], Any]:
    """Return the test ``series == value``, a target's positive class."""
    return lambda series: series == value


def attribute_names(path: Path, pattern: re.Pattern[str], count: int) -> list[str]:
    """Return the column names a ``.names`` file declares; there must be ``count``."""
    text = read_text(path, f"a .names file declaring {count} attributes")
    names = [match.group(1) for line in text.splitlines() if (match := pattern.match(line))]
    if len(names) != count:
        fail(path, f"{len(names)} attribute declarations", f"{count}")
    return names


def with_names_file(
    pattern: re.Pattern[str], count: int, *, extra: Sequence[str] = (), what: str = "fields"
) -> Reader:
    """Reader of a headerless data file whose columns a ``.names`` file declares.

    ``paths`` are the data file and the ``.names`` file; ``pattern``'s first
    group is a declared name, ``count`` how many there must be, ``extra``
    columns the ``.names`` file does not declare (a label).
    """

    def read(paths: Sequence[Path]) -> list[RawFile]:
        data, names = paths
        columns = (*attribute_names(names, pattern, count), *extra)
        text = read_text(data, f"rows of {len(columns)} comma-separated {what}, no header")
        return [RawFile(split_rows(text, data, sep=",", n_fields=len(columns)), columns)]

    return read


_SVMLIGHT_PAIR = re.compile(r"(\d+):(\S*)")


def svmlight(columns: Sequence[str], label: str = "label") -> Reader:
    """Reader of LIBSVM files: rows of ``columns`` values and a ``label``, line by line.

    Each line is ``label index:value ...`` with indices 1 to ``len(columns)``.
    Parsed here rather than by ``sklearn.datasets.load_svmlight_files`` so
    that a malformed pair, an index out of range, a value that is not a
    number or a label outside the spec's set is reported with its line.
    """
    width = len(columns)

    def read(paths: Sequence[Path]) -> list[RawFile]:
        content = f"LIBSVM lines 'label index:value ...' with indices 1 to {width}"
        raws = []
        for path in paths:
            rows = split_rows(read_text(path, content), path, sep=None, n_fields=None)
            fields = []
            for tokens, number in zip(rows.fields, rows.lines, strict=True):
                values = ["0"] * width  # an index left out holds 0
                for token in tokens[1:]:
                    pair = _SVMLIGHT_PAIR.fullmatch(token)
                    index = int(pair.group(1)) if pair is not None else 0
                    if not 1 <= index <= width:
                        expected = f"index:value with an index from 1 to {width}"
                        fail(path, f"{token!r}", expected, line=number)
                    values[index - 1] = token.partition(":")[2]  # checked as a number later
                fields.append([*values, tokens[0]])
            raws.append(RawFile(Rows(path, fields, rows.lines), (*columns, label)))
        return raws

    return read
