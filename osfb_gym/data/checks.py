"""Reading dataset files strictly: every departure from the spec names file, line and column.

The readers of the named datasets go through three steps, all here:

1. :func:`read_text` decodes the file (UTF-8, of which ASCII is a part) and
   rejects an empty file, a UTF-16 file and undecodable bytes;
2. :func:`split_rows` cuts the text into rows of fields, skipping blank
   lines but keeping every row's 1-based line number, and rejects a row with
   the wrong number of fields;
3. :func:`typed_frame` checks every column against the spec (a number where
   a number is expected, a label from the dataset's label set, a missing
   value only where the real file has them) and returns the typed frame.

Each failure raises :class:`DataFormatError` (a ``ValueError``) whose message
reads ``<file>, line <n>, column <name>: <what was found>; expected <what the
spec says>``, so a corrupt download or a hand-edited copy is caught where it
is, not after it has silently become extra one-hot columns or a flipped label.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np
import pandas as pd

ENCODING = "utf-8"
# The markers of a missing value in the raw files ("?" in the UCI files, an
# empty field in ProPublica's CSV); accepted only in the columns a spec names.
MISSING = ("?", "")
MISSING_CATEGORY = "?"


class DataFormatError(ValueError):
    """A dataset file does not match its spec.

    The message names the file, the 1-based line and the column where there
    is one, what was found and what was expected.
    """


def location(path: Path, line: int | None = None, column: str | None = None) -> str:
    """Return ``"<path>, line <n>, column '<name>'"`` with the parts that are known."""
    parts = [str(path)]
    if line is not None:
        parts.append(f"line {line}")
    if column is not None:
        parts.append(f"column {column!r}")
    return ", ".join(parts)


def fail(
    path: Path, found: str, expected: str, line: int | None = None, column: str | None = None
) -> NoReturn:
    """Raise :class:`DataFormatError` at ``path``/``line``/``column``.

    Examples
    --------
    >>> fail(Path("german.data"), "'?' is not a number", "a number", 5, "age")
    Traceback (most recent call last):
    ...
    osfb_gym.data.checks.DataFormatError: german.data, line 5, column 'age': '?' is not a ...
    """
    raise DataFormatError(f"{location(path, line, column)}: {found}; expected {expected}")


def read_text(path: Path, content: str) -> str:
    """Return the text of ``path``, checked to be non-empty UTF-8.

    Parameters
    ----------
    path
        The file.
    content
        What the file should hold, for the messages (e.g. ``"comma-separated
        rows of 15 fields"``).

    Raises
    ------
    DataFormatError
        If the file is empty, is UTF-16 (a byte-order mark or NUL bytes) or
        holds bytes that are not UTF-8 (e.g. Latin-1 accents); the message
        gives the line of the first bad byte.
    """
    data = path.read_bytes()
    if not data.strip():
        fail(path, "the file is empty", content)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" in data:
        first = data.find(b"\x00") if b"\x00" in data else 0
        fail(
            path,
            "the file looks UTF-16 encoded (a byte-order mark or NUL bytes)",
            f"{ENCODING} text ({content}); re-save the file as {ENCODING}",
            line=data[:first].count(b"\n") + 1,
        )
    try:
        text = data.decode(ENCODING)
    except UnicodeDecodeError as error:
        fail(
            path,
            f"byte 0x{data[error.start]:02x} is not valid {ENCODING} "
            "(a Latin-1 or Windows-1252 file?)",
            f"{ENCODING} text ({content}); re-save the file as {ENCODING}",
            line=data[: error.start].count(b"\n") + 1,
        )
    return text.removeprefix("\ufeff")  # a UTF-8 byte-order mark carries no data


@dataclass(frozen=True)
class Rows:
    """The rows of one file: string fields and the 1-based line each row came from."""

    path: Path
    fields: list[list[str]]
    lines: list[int]

    def frame(self, columns: Sequence[str]) -> pd.DataFrame:
        """Return the rows as a frame of stripped strings with ``columns`` as names."""
        # column by column in plain Python: much faster than pandas' .str.strip
        fields = zip(*self.fields, strict=True) if self.fields else ([] for _ in columns)
        data = {
            name: [value.strip() for value in values]
            for name, values in zip(columns, fields, strict=True)
        }
        return pd.DataFrame(data, columns=list(columns), dtype=object)


def split_rows(
    text: str,
    path: Path,
    *,
    sep: str | None,
    n_fields: int | None,
    skip: int = 0,
    comment: str | None = None,
) -> Rows:
    r"""Cut ``text`` into rows of fields, keeping each row's line number.

    Parameters
    ----------
    text
        The file's text.
    path
        The file, for the messages.
    sep
        Field separator (CSV quoting rules apply), or None for runs of whitespace.
    n_fields
        Number of fields every row must have; None takes the first row's.
    skip
        Leading lines to skip (a banner line, an ARFF header).
    comment
        Lines starting with this are skipped (``"%"`` in ARFF).

    Raises
    ------
    DataFormatError
        A row with another number of fields, or no rows at all.

    Examples
    --------
    >>> rows = split_rows("1,2\n\n3,4\n", Path("f.csv"), sep=",", n_fields=2)
    >>> rows.fields, rows.lines
    ([['1', '2'], ['3', '4']], [1, 3])
    >>> split_rows("1,2\n3\n", Path("f.csv"), sep=",", n_fields=2)
    Traceback (most recent call last):
    ...
    osfb_gym.data.checks.DataFormatError: f.csv, line 2: 1 ','-separated field(s); expected 2 fields
    """
    lines = text.splitlines()
    numbered = [(number, line) for number, line in enumerate(lines, 1) if number > skip]
    numbered = [
        (number, line)
        for number, line in numbered
        if line.strip() and not (comment and line.lstrip().startswith(comment))
    ]
    if sep is None:
        fields = [line.split() for _, line in numbered]
    else:
        fields = list(csv.reader([line for _, line in numbered], delimiter=sep))
    how = "whitespace-separated" if sep is None else f"{sep!r}-separated"
    if not fields:
        fail(path, "the file has no data rows", f"rows of {n_fields or 'some'} {how} fields")
    expected = n_fields if n_fields is not None else len(fields[0])
    for (number, _), row in zip(numbered, fields, strict=True):
        if len(row) != expected:
            fail(path, f"{len(row)} {how} field(s)", f"{expected} fields", line=number)
    return Rows(path, fields, [number for number, _ in numbered])


def typed_frame(
    rows: Rows,
    columns: Sequence[str],
    *,
    numeric: Collection[str],
    domains: Mapping[str, Collection[str]],
    missing: Collection[str] = (),
    header_expected: bool = False,
) -> pd.DataFrame:
    """Check every row against the spec and return the frame with numeric columns as floats.

    Parameters
    ----------
    rows
        The file's rows.
    columns
        Names of the fields, in order; only these columns are checked and returned
        when ``rows`` hold more (a file with a header: the selected ones).
    numeric
        Columns whose values must be finite numbers.
    domains
        Columns whose values must come from a fixed set, as written in the
        file: the target's labels, an ARFF file's nominal attributes.
    missing
        Columns where ``?`` (or an empty field) marks a missing value, as in
        the real file: a missing number becomes NaN, a missing category the
        category ``"?"``. Anywhere else a missing value is an error.
    header_expected
        Whether the file has a header line; when not, a bad first row gets
        the hint that it may be a header.

    Returns
    -------
    pandas.DataFrame
        One column per name in ``columns``: ``float64`` for numeric columns,
        stripped strings for the others.
    """
    frame = rows.frame(columns)
    for column in frame.columns:
        values = frame[column]
        absent = values.isin(MISSING).to_numpy()
        if column not in missing and absent.any():
            found = "an empty field" if values[absent].iloc[0] == "" else "'?' (a missing value)"
            _reject(rows, column, absent, found, _what(column, numeric, domains), header_expected)
        if column in domains:
            allowed = list(domains[column])
            bad = ~absent & ~values.isin(allowed).to_numpy()
            if bad.any():
                _reject(
                    rows,
                    column,
                    bad,
                    f"{values[bad].iloc[0]!r} is not an allowed value",
                    _what(column, numeric, domains),
                    header_expected,
                )
        if column in numeric:
            numbers = _to_floats(values, absent)
            bad = ~absent & ~np.isfinite(numbers)
            if bad.any():
                value = values[bad].iloc[0]
                _reject(
                    rows,
                    column,
                    bad,
                    f"{value!r} is not a finite number",
                    _what(column, numeric, domains),
                    header_expected,
                )
            frame[column] = numbers
        elif absent.any():
            frame[column] = values.where(~absent, MISSING_CATEGORY)
    return frame


def _to_floats(values: pd.Series, absent: np.ndarray) -> np.ndarray:
    """Return ``values`` as floats, NaN where absent or not a number (checked by the caller)."""
    if not absent.any():
        try:  # the fast path: every value parses ("nan" and "inf" too, caught after)
            return np.asarray(values.to_numpy(), dtype=float)
        except ValueError:
            pass
    return pd.to_numeric(values.where(~absent), errors="coerce").to_numpy(dtype=float)


def _what(column: str, numeric: Collection[str], domains: Mapping[str, Collection[str]]) -> str:
    if column in domains:
        return "one of " + ", ".join(repr(value) for value in domains[column])
    if column in numeric:
        return "a finite number"
    return "a value"


def _reject(
    rows: Rows, column: str, bad: np.ndarray, found: str, expected: str, header_expected: bool
) -> NoReturn:
    index = int(np.flatnonzero(bad)[0])
    line = rows.lines[index]
    if index == 0 and not header_expected:
        expected += " (this file has no header line)"
    fail(rows.path, found, expected, line=line, column=column)


def check_header(rows: Rows, required: Sequence[str]) -> tuple[list[str], Rows]:
    """Split off the header row; check it names every ``required`` column.

    Returns the header's names and the data rows. Duplicate names keep their
    first position (the COMPAS file repeats two of its columns).
    """
    header = [name.strip() for name in rows.fields[0]]
    absent = [name for name in required if name not in header]
    if absent:
        fail(
            rows.path,
            f"the header has no column {absent[0]!r} (found {', '.join(header[:8])}"
            f"{', ...' if len(header) > 8 else ''})",
            f"a header naming {', '.join(required)}",
            line=rows.lines[0],
        )
    if len(rows.fields) == 1:
        fail(rows.path, "the file has a header but no data rows", "data rows after the header")
    return header, Rows(rows.path, rows.fields[1:], rows.lines[1:])


def select(rows: Rows, header: Sequence[str], columns: Sequence[str]) -> Rows:
    """Keep only ``columns`` (by their first position in ``header``) of every row."""
    positions = [list(header).index(name) for name in columns]
    fields = [[row[position] for position in positions] for row in rows.fields]
    return Rows(rows.path, fields, rows.lines)
