"""A result store that loses nothing: one JSON file per finished cell, ``DIR/cells/<key>.json``.

Each file is written atomically (:func:`write_atomically`), so a crash or
``kill -9`` leaves the whole file or none, and a cell never appears twice
because its name is its key. Each file holds its row with the SHA-256 of
the row's canonical JSON (:func:`checksum`), so a row edited by hand, a
field deleted or added, or a file written before rows carried checksums
is told apart from a finished cell. A file that does not hold a whole,
unaltered row of its own key is named in a :class:`CorruptCellWarning`
and its cell computed again (docs/benchmark.md, *Resume*).

The checksum guards against accidents (an editor, a script that rewrites
a column, a partial copy), not against someone who recomputes it: the
store is as trustworthy as the folder it lives in.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd


def stable_key(*parts: Any) -> str:
    """Return a stable hash of JSON-friendly ``parts``: a cell's file name.

    Examples
    --------
    >>> stable_key("env", {"b": 1, "a": 2}, 0) == stable_key("env", {"a": 2, "b": 1}, 0)
    True
    """
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a flushed temporary file and ``os.replace``."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


#: the layout of a cell file: ``{"format": FORMAT, "sha256": checksum(row), "row": row}``
FORMAT = 2


def canonical(row: dict[str, Any]) -> str:
    """Return the canonical JSON text of ``row``: sorted keys, no spaces, NumPy values as Python's.

    Parsing this text and writing it again gives the same text, so the
    checksum of a row read back is the checksum of the row written.
    """
    return json.dumps(row, sort_keys=True, separators=(",", ":"), default=_builtin)


def checksum(row: dict[str, Any]) -> str:
    """Return the SHA-256 (hex) of ``row``'s :func:`canonical` text.

    Examples
    --------
    >>> checksum({"key": "a", "loss": 1.5}) == checksum({"loss": 1.5, "key": "a"})
    True
    >>> checksum({"key": "a", "loss": 1.5}) == checksum({"key": "a", "loss": -999})
    False
    """
    return hashlib.sha256(canonical(row).encode()).hexdigest()


def _builtin(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    raise TypeError(f"a result row holds {type(value).__name__}, which JSON cannot store")


class CorruptCellWarning(UserWarning):
    """A cell file that is not a whole, unaltered row of its own cell; the cell is recomputed.

    Truncated or not JSON, another cell's row, a row whose checksum does
    not match (edited, a field deleted), or a file without a checksum
    (written before osfb-gym stored them).
    """


class ResultStore:
    """The per-cell files under ``root/cells``.

    Examples
    --------
    >>> import tempfile
    >>> store = ResultStore(tempfile.mkdtemp())
    >>> store.write({"key": "abc", "seed": 0, "cumulative_loss": 1.5})
    >>> store.done(), store.read()["cumulative_loss"].tolist()
    ({'abc'}, [1.5])
    """

    def __init__(self, root: str | Path, *, read_only: bool = False) -> None:
        self.root = Path(root)
        self.cells = self.root / "cells"
        if read_only:  # a folder that does not exist reads as an empty store
            return
        self.cells.mkdir(parents=True, exist_ok=True)
        for stale in self.cells.glob(".*.tmp"):  # a write interrupted by a crash
            stale.unlink(missing_ok=True)

    def path(self, key: str) -> Path:
        """Return the file of cell ``key``."""
        return self.cells / f"{key}.json"

    def done(self) -> set[str]:
        """Return the keys of the finished cells (whole, unaltered files of their own key's row)."""
        return {path.stem for path in self.cells.glob("*.json") if self.load(path) is not None}

    def load(self, path: Path) -> dict[str, Any] | None:
        """Return the row in ``path``, or None (with a warning naming it) when it is corrupt.

        Corrupt: not whole JSON, not a cell file of this format (one
        written before rows carried checksums included), a checksum that
        does not match the row (edited, a field deleted or added), or the
        row of another key.
        """
        reason = _why_not_a_row(path)
        if isinstance(reason, dict):
            return reason
        message = f"cell file {path} {reason}; its cell is computed again"
        warnings.warn(message, CorruptCellWarning, stacklevel=2)
        return None

    def write(self, row: dict[str, Any]) -> None:
        """Write one finished cell atomically (``row["key"]`` names it), with its checksum."""
        text = canonical(row)
        # the row as it reads back (tuples as lists, NumPy values as Python's): its checksum
        # is the one a later load computes
        stored = json.loads(text)
        digest = hashlib.sha256(text.encode()).hexdigest()
        envelope = {"format": FORMAT, "sha256": digest, "row": stored}
        write_atomically(self.path(str(row["key"])), json.dumps(envelope).encode())

    def rows(self, keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Return the stored rows, of ``keys`` in their order if given (missing ones skipped)."""
        if keys is None:
            paths = sorted(self.cells.glob("*.json"))
        else:
            paths = [path for path in map(self.path, keys) if path.exists()]
        return [row for row in map(self.load, paths) if row is not None]

    def read(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """Return the stored rows as a DataFrame, one row per cell."""
        return pd.DataFrame(self.rows(keys))


def _why_not_a_row(path: Path) -> dict[str, Any] | str:
    """Return the row stored in ``path``, or why it is not a finished cell's row."""
    try:
        content = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as error:
        return f"is not a whole JSON row ({error})"
    if not isinstance(content, dict):
        return f"holds a JSON {type(content).__name__}, not a cell's row"
    if "row" not in content or "sha256" not in content:
        found = content.get("key")
        if found is not None and "format" not in content:
            # the layout of osfb-gym 0.1.0: the bare row, nothing to check it against
            return "has no checksum (written before cell files carried one)"
        return "is not a cell file (no row and checksum in it)"
    row, digest = content["row"], content["sha256"]
    if content.get("format") != FORMAT:
        return f"has format {content.get('format')!r}, not {FORMAT}"
    if not isinstance(row, dict):
        return f"holds a JSON {type(row).__name__} as its row, not an object"
    if not isinstance(digest, str) or checksum(row) != digest:
        return "holds a row that does not match its checksum (edited, or a field lost)"
    if row.get("key") != path.stem:
        return f"holds the row of {row.get('key')!r}, not of {path.stem!r}"
    return row
