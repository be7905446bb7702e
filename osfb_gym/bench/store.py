"""A result store that loses nothing: one JSON file per finished cell, ``DIR/cells/<key>.json``.

Each file is written atomically (:func:`write_atomically`), so a crash or
``kill -9`` leaves the whole file or none, and a cell never appears twice
because its name is its key. A file that does not hold a whole row of its
own key is named in a :class:`CorruptCellWarning` and its cell computed
again (docs/benchmark.md, *Resume*).
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


def _builtin(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    raise TypeError(f"a result row holds {type(value).__name__}, which JSON cannot store")


class CorruptCellWarning(UserWarning):
    """A cell file that is not JSON or holds another cell's row; the cell is recomputed."""


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

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.cells = self.root / "cells"
        self.cells.mkdir(parents=True, exist_ok=True)
        for stale in self.cells.glob(".*.tmp"):  # a write interrupted by a crash
            stale.unlink(missing_ok=True)

    def path(self, key: str) -> Path:
        """Return the file of cell ``key``."""
        return self.cells / f"{key}.json"

    def done(self) -> set[str]:
        """Return the keys of the finished cells (whole files holding their own key's row)."""
        return {path.stem for path in self.cells.glob("*.json") if self.load(path) is not None}

    def load(self, path: Path) -> dict[str, Any] | None:
        """Return the row in ``path``, or None (with a warning naming it) when it is corrupt."""
        try:
            row = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError) as error:
            reason = f"is not a whole JSON row ({error})"
        else:
            if isinstance(row, dict) and row.get("key") == path.stem:
                return row
            found = row.get("key") if isinstance(row, dict) else type(row).__name__
            reason = f"holds the row of {found!r}, not of {path.stem!r}"
        message = f"cell file {path} {reason}; its cell is computed again"
        warnings.warn(message, CorruptCellWarning, stacklevel=2)
        return None

    def write(self, row: dict[str, Any]) -> None:
        """Write one finished cell atomically (``row["key"]`` names it)."""
        write_atomically(self.path(str(row["key"])), json.dumps(row, default=_builtin).encode())

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
