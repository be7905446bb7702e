"""The table of named datasets, and ``load``: one name in, one frozen record out.

Every named dataset is one :class:`DatasetSpec` row: its canonical name and
aliases, the folder and file names it is read from, the reader that turns
those files into a record, the options the reader accepts and the
provenance that goes into ``metadata``. ``load`` resolves the name, finds
the files (see :mod:`osfb_gym.data.sources`), reads them once per process
and hands out read-only arrays, because an environment may call ``load`` on
every construction.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from sklearn.datasets import load_breast_cancer

from osfb_gym.data.dataset import Dataset, from_arrays

Record = TypeVar("Record")


@dataclass(frozen=True)
class DatasetSpec:
    """One named dataset: where its files live and how to read them.

    Attributes
    ----------
    name
        Canonical name, also the key of :func:`list_datasets`.
    reader
        ``reader(folder, **options)`` returns the record; ``folder`` is the
        directory holding ``files`` (``None`` for bundled data).
    aliases
        Other names ``load`` accepts (the folder name among them).
    folder
        Folder name under a data home, ``None`` for data shipped with a package.
    files
        File names the reader needs inside ``folder``.
    options
        Option names the reader accepts, with their defaults.
    metadata
        Provenance merged into the record's metadata: ``origin``, ``license``
        and, for the lending paper's datasets, ``paper_rows``.
    """

    name: str
    reader: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    folder: str | None = None
    files: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _read_breast_cancer(folder: Path | None) -> Dataset:
    bunch = load_breast_cancer()
    return from_arrays(
        bunch.data,
        bunch.target,
        name="breast_cancer",
        feature_names=list(bunch.feature_names),
        target="target",
        metadata={
            "source": "sklearn.datasets.load_breast_cancer",
            "preprocessing": "none: scikit-learn's features and target as shipped "
            "(y = 1 benign, 0 malignant).",
        },
    )


SPECS: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        "breast_cancer",
        _read_breast_cancer,
        aliases=("wdbc",),
        metadata={
            "origin": "UCI Breast Cancer Wisconsin (Diagnostic), bundled with scikit-learn",
            "license": "CC BY 4.0 (UCI); shipped in scikit-learn (BSD-3-Clause)",
        },
    ),
)

_BY_NAME: dict[str, DatasetSpec] = {
    key: spec for spec in SPECS for key in (spec.name, *spec.aliases)
}


def list_datasets() -> tuple[str, ...]:
    """Return the canonical names ``load`` knows, sorted.

    Examples
    --------
    >>> "breast_cancer" in list_datasets()
    True
    """
    return tuple(sorted(spec.name for spec in SPECS))


def get_spec(name: str) -> DatasetSpec:
    """Return the spec of a dataset name or alias (case and ``-`` insensitive).

    Examples
    --------
    >>> get_spec("Breast-Cancer").name
    'breast_cancer'
    >>> get_spec("mnist")
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'mnist'; known datasets: breast_cancer
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {name!r} ({type(name).__name__})")
    spec = _BY_NAME.get(name.strip().lower().replace("-", "_"))
    if spec is None:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(list_datasets())}")
    return spec


def _resolve_options(spec: DatasetSpec, options: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        accepted = ", ".join(sorted(spec.options)) or "none"
        raise TypeError(
            f"load({spec.name!r}) got unknown option(s) {', '.join(unknown)}; "
            f"options for {spec.name}: {accepted}"
        )
    return {**spec.options, **options}


def _freeze(record: Record) -> Record:
    """Make every numpy array attribute of ``record`` read-only, in place.

    The cache hands the same record to every caller, so a caller that
    writes into ``X`` would silently change the data of every other one.
    """
    for value in vars(record).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return record


@functools.lru_cache(maxsize=64)
def _read_cached(name: str, folder: str | None, options: tuple[tuple[str, Any], ...]) -> Any:
    spec = _BY_NAME[name]
    record = spec.reader(None if folder is None else Path(folder), **dict(options))
    metadata = {**spec.metadata, **record.metadata}
    return _freeze(replace(record, metadata=metadata))


def load(name: str, *, data_home: str | Path | None = None, **options: Any) -> Any:
    """Load a named dataset as a frozen record with provenance metadata.

    Parameters
    ----------
    name
        A name from :func:`list_datasets` or an alias (e.g. ``"wdbc"``).
    data_home
        Directory laid out like the shared data folder (one sub-folder per
        dataset). Ignored for data bundled with a package.
    **options
        Reader options of the dataset (see its spec); unknown ones raise
        ``TypeError``.

    Returns
    -------
    Dataset
        Numeric features and a 0/1 (or real) target, arrays read-only.
        Repeated calls with the same arguments return the same object.

    Examples
    --------
    >>> data = load("breast_cancer")
    >>> data.X.shape, int(data.y.sum()), data.X.flags.writeable
    ((569, 30), 357, False)
    >>> load("breast_cancer") is data
    True
    """
    spec = get_spec(name)
    resolved = _resolve_options(spec, options)
    folder = None
    if spec.folder is not None:  # pragma: no cover - files arrive with the named loaders
        raise NotImplementedError(f"{spec.name} needs local files, not supported yet")
    return _read_cached(spec.name, folder, tuple(sorted(resolved.items())))
