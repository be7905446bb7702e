"""``load``: one dataset name in, one frozen record out.

The named datasets are the rows of :data:`osfb_gym.data.specs.SPECS` (one
:class:`~osfb_gym.data.specs.DatasetSpec` each, re-exported here).
``load`` resolves the name, finds the files (see
:mod:`osfb_gym.data.sources`), reads them once per process and hands out
read-only arrays, because an environment may call ``load`` on every
construction.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import numpy as np

from osfb_gym.core.validation import check_bool
from osfb_gym.data import sources
from osfb_gym.data.dataset import Dataset
from osfb_gym.data.fico import FicoTables
from osfb_gym.data.movielens import Ratings
from osfb_gym.data.sources import DatasetNotFoundError
from osfb_gym.data.specs import SPECS, DatasetSpec, OpenML
from osfb_gym.data.text import TextDataset

__all__ = [
    "SPECS",
    "DatasetSpec",
    "OpenML",
    "available_datasets",
    "get_spec",
    "list_datasets",
    "load",
]

Record = TypeVar("Record")

_BY_NAME: dict[str, DatasetSpec] = {
    key: spec for spec in SPECS for key in (spec.name, *spec.aliases)
}


def list_datasets() -> tuple[str, ...]:
    """Return the canonical names ``load`` knows, sorted.

    Examples
    --------
    >>> list_datasets()[:4]
    ('adult', 'australian', 'bank', 'blood')
    """
    return tuple(sorted(spec.name for spec in SPECS))


def get_spec(name: str) -> DatasetSpec:
    """Return the spec of a dataset name or alias (case and ``-`` insensitive).

    Examples
    --------
    >>> get_spec("Bank-Marketing").name
    'bank'
    >>> get_spec("mnist")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'mnist'; known datasets: adult, australian, ...
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


@functools.lru_cache(maxsize=8)
def _openml_frames(data_id: int, data_home: str) -> tuple[Any, Any]:
    return sources.fetch_openml_frame(data_id, Path(data_home))


@functools.lru_cache(maxsize=64)
def _read_cached(name: str, kind: str, location: str, options: tuple[tuple[str, Any], ...]) -> Any:
    """Read a dataset once per (name, where from, options): the parsed record is immutable.

    ``kind`` is ``"bundled"``, ``"files"`` (``location`` is the folder) or
    ``"openml"`` (``location`` is the data home sklearn caches downloads in).
    """
    spec = _BY_NAME[name]
    if kind == "openml":
        assert spec.openml is not None  # load only asks for it when the spec has one
        record = spec.openml.reader(*_openml_frames(spec.openml.data_id, location), **dict(options))
        source = {"source": f"{spec.openml.url} (sklearn.datasets.fetch_openml)"}
    else:
        paths = [Path(location) / file for file in spec.files] if kind == "files" else []
        record = spec.reader(paths, **dict(options))
        source = {"source": ", ".join(map(str, paths))} if paths else {}
    metadata = {**spec.metadata, **record.metadata, **source}
    return _freeze(replace(record, metadata=metadata))


def _fetch(
    spec: DatasetSpec, data_home: str | os.PathLike[str] | None
) -> tuple[tuple[str, str] | None, list[str]]:
    """Try every remote source in turn.

    Returns the ``(kind, location)`` of the first that delivered, or None,
    and one line per failure. Only fetching is guarded: a reader's error on
    delivered data (a bad option, an OpenML copy that drifted) propagates.
    """
    assert spec.folder is not None
    errors: list[str] = []
    destination = sources.download_dir(spec.folder, data_home)
    offline = False
    if spec.downloads:
        try:
            sources.download_files(spec.downloads, destination)
            return ("files", str(destination.resolve())), errors
        # Any failure (network, HTTP, a corrupt archive) is reported, none hidden.
        except Exception as error:
            urls = ", ".join(dict.fromkeys(item.url for item in spec.downloads))
            errors.append(f"{urls} -> {_one_line(error)}")
            offline = sources.is_offline(error)
    # Without a network OpenML is unreachable too; asking it would only add retries.
    if spec.openml is not None and not offline:
        root = str(destination.parent.resolve())
        try:
            _openml_frames(spec.openml.data_id, root)
            return ("openml", root), errors
        except Exception as error:
            errors.append(f"OpenML {spec.openml.url} -> {_one_line(error)}")
    return None, errors


def _one_line(error: BaseException) -> str:
    return " ".join(f"{type(error).__name__}: {error}".split())


@overload
def load(
    name: Literal["sms_spam", "sms", "reuters_r8", "r8", "reuters"],
    *,
    data_home: str | os.PathLike[str] | None = ...,
    download: bool = ...,
    **options: Any,
) -> TextDataset: ...
@overload
def load(
    name: Literal["movielens", "movielens_10m", "ml10m"],
    *,
    data_home: str | os.PathLike[str] | None = ...,
    download: bool = ...,
    **options: Any,
) -> Ratings: ...
@overload
def load(
    name: Literal["fico", "transrisk", "fico_transrisk"],
    *,
    data_home: str | os.PathLike[str] | None = ...,
    download: bool = ...,
    **options: Any,
) -> FicoTables: ...
@overload
def load(
    name: str,
    *,
    data_home: str | os.PathLike[str] | None = ...,
    download: bool = ...,
    **options: Any,
) -> Dataset: ...
def load(
    name: str,
    *,
    data_home: str | os.PathLike[str] | None = None,
    download: bool = True,
    **options: Any,
) -> Dataset | TextDataset | Ratings | FicoTables:
    """Load a named dataset as a frozen record with provenance metadata.

    Parameters
    ----------
    name
        A name from :func:`list_datasets` or an alias (``"bank_marketing"``,
        ``"german_credit"``, ``"svmguide1"``, ...; the data folder names all work).
    data_home
        Directory laid out like the shared data folder: one sub-folder per
        dataset holding the original file names (e.g. ``adult/adult.data``).
        Defaults to ``$OSFB_DATA``; the download cache is searched after it.
        Downloads land here when given. Ignored for bundled data.
    download
        When no local copy is found, fetch the original files into
        ``data_home`` or the cache (checksummed where the published files
        are fixed), and, failing that, the OpenML copy. With ``False``, a
        missing dataset raises at once.
    **options
        Reader options of the dataset: ``encoding`` (every table read from
        files: ``"onehot"``, the default, or ``"native"``, one integer-code
        column per categorical attribute; see :func:`osfb_gym.data.encoding.encode`),
        ``quantile`` (crime, default 0.7), ``gaps`` (crime: ``"drop"``, the
        default, or ``"median"`` for the 23 columns with missing values),
        ``propublica_filter`` (compas, default False), ``topic`` (reuters_r8,
        default ``"earn"``). Others raise ``TypeError``.

    Returns
    -------
    Dataset or TextDataset or Ratings or FicoTables
        A :class:`Dataset` for tabular data, a :class:`TextDataset` for
        ``sms_spam`` and ``reuters_r8``,
        :class:`~osfb_gym.data.movielens.Ratings` for ``movielens``,
        :class:`~osfb_gym.data.fico.FicoTables` for ``fico``.
        Arrays are read-only; repeated calls with the same arguments return
        the same object.

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones) or bad option value.
    DatasetNotFoundError
        No local copy and no remote source delivered; the one-line message
        names the missing files, every place looked, every remote error and
        where to put the files.
    DataFormatError
        A file does not match the dataset's spec (a value that is not a
        number, a label outside the set, a row of the wrong length, an empty
        or non-UTF-8 file); the message names the file, line and column.

    Examples
    --------
    >>> data = load("breast_cancer")
    >>> data.X.shape, int(data.y.sum()), data.X.flags.writeable
    ((569, 30), 357, False)
    >>> load("breast_cancer") is data
    True
    """
    spec = get_spec(name)
    download = check_bool(download, "download")
    if data_home is not None and not isinstance(data_home, str | os.PathLike):
        raise TypeError(
            f"data_home must be a folder (a str or path) or None, got {data_home!r} "
            f"({type(data_home).__name__})"
        )
    resolved = tuple(sorted(_resolve_options(spec, options).items()))
    kind, where = _source(spec, data_home, download)
    return _read_cached(spec.name, kind, where, resolved)  # type: ignore[no-any-return]


def _source(
    spec: DatasetSpec, data_home: str | os.PathLike[str] | None, download: bool
) -> tuple[str, str]:
    """Where ``spec``'s data comes from: bundled, a local folder, or a download; else raise.

    Returns the ``(kind, where)`` pair :func:`_read_cached` reads: ``("bundled", "")``,
    ``("files", folder)``, or what :func:`_fetch` delivered. Raises
    :class:`DatasetNotFoundError` naming every place looked and every remote error.
    """
    if spec.folder is None:
        return "bundled", ""
    looked = sources.candidate_folders(spec.folder, data_home, spec.package_copies)
    folder = sources.find_folder(looked, spec.files)
    if folder is not None:
        return "files", str(folder)
    errors: list[str] = []
    if download:
        fetched, errors = _fetch(spec, data_home)
        if fetched is not None:
            return fetched
    destination = sources.download_dir(spec.folder, data_home)
    raise DatasetNotFoundError(
        sources.not_found_message(spec.name, spec.files, looked, destination, errors, download)
    )


def available_datasets(
    names: Sequence[str], data_home: str | None
) -> tuple[list[str], dict[str, str]]:
    """Split ``names`` into the ones found (or downloaded) and ``{name: why not}`` for the rest.

    The files are found, not read: reading Adult's costs more memory than a
    whole suite's episode keeps, and the env reads them with its own options.
    A file that does not match its spec fails where it is read, naming the
    file, line and column.
    """
    found: list[str] = []
    missing: dict[str, str] = {}
    for name in names:
        try:
            _source(get_spec(name), data_home, download=True)
        except DatasetNotFoundError as error:
            missing[name] = str(error).splitlines()[0]
        else:
            found.append(name)
    return found, missing
