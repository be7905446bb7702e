"""A result store that loses nothing: one small JSON file per finished cell.

Each finished (setting, agent, params, seed) cell is written to
``DIR/cells/<key>.json``, where ``key`` is a stable hash of what the cell
computes (:attr:`osfb_gym.bench.sweep.Cell.key`). The file is written to a
temporary name, flushed to disk and moved into place with ``os.replace``,
which is atomic: a crash or ``kill -9`` at any moment leaves either the
whole file or none, and a cell can never appear twice because its name is
its key. Reading merges the files into one DataFrame; ``--resume`` skips
the cells whose file holds a whole row of that key. A file that does not
(truncated by hand, or holding another cell's row) is reported by path with
a :class:`CorruptCellWarning` and its cell computed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable, Iterable
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


def _builtin(value: Any) -> Any:
    """Return numpy scalars and arrays as Python numbers and lists, for ``json.dump``."""
    if hasattr(value, "tolist"):
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
        warnings.warn(
            f"cell file {path} {reason}; its cell is computed again",
            CorruptCellWarning,
            stacklevel=2,
        )
        return None

    def write(self, row: dict[str, Any]) -> None:
        """Write one finished cell atomically (``row["key"]`` names it)."""
        key = str(row["key"])
        temporary = self.cells / f".{key}.{os.getpid()}.tmp"
        with open(temporary, "w") as handle:
            json.dump(row, handle, default=_builtin)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path(key))

    def cell(
        self, key: str, compute: Callable[[], dict[str, Any]], *, resume: bool
    ) -> dict[str, Any]:
        """Return cell ``key``: read back when stored and ``resume``, else computed and stored.

        Examples
        --------
        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.cell("k", lambda: {"loss": 1.0}, resume=True)
        {'loss': 1.0}
        >>> store.cell("k", lambda: {"loss": 2.0}, resume=True)  # read back, not recomputed
        {'loss': 1.0}
        """
        path = self.path(key)
        stored = self.load(path) if resume and path.exists() else None
        if stored is not None:
            del stored["key"]
            return stored
        row = compute()
        self.write({"key": key, **row})
        return row

    def rows(self, keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Return the stored rows, of ``keys`` in their order if given (missing ones skipped)."""
        if keys is None:
            paths = sorted(self.cells.glob("*.json"))
        else:
            paths = [path for path in map(self.path, keys) if path.exists()]
        rows = (self.load(path) for path in paths)
        return [row for row in rows if row is not None]

    def read(self, keys: Iterable[str] | None = None) -> pd.DataFrame:
        """Return the stored rows as a DataFrame, one row per cell."""
        return pd.DataFrame(self.rows(keys))
