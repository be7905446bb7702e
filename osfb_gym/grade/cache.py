"""An on-disk cache of the reference agents' scores, for reproduced gradings.

A grading with ``seed=S`` runs the references on the same held-out seeds
each time; their scores depend only on the env id, its arguments, the
seeds and the code (this project's and the numerical libraries'), so the
grader keeps them in a JSON file named by a hash of exactly those, and a
second grading with the same seed reads them instead of running the
references again. Anything else (another kwarg, another seed, one edited
source file, another numpy) gives another key: an entry is never reused
where it was not computed.

A fresh grading (``seed=None``, the default) draws new secret seeds, which
no entry can match: it neither reads nor writes the cache. A reproduction
is a check of an earlier grading, not an official one, so an entry that
another process of the same user could have written is acceptable there
(the report says when scores came from the cache). Files are JSON, never
pickles: reading one runs no code. Delete the folder (:func:`default_folder`)
at any time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import sys
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

#: the packages whose code decides a reference's score
_PACKAGES = ("agents", "osfb_gym", "envs_registry")
#: the libraries whose versions decide it too
_LIBRARIES = ("numpy", "scipy", "scikit-learn", "gymnasium", "pandas", "numba")
#: the layout of an entry; bumped when it changes
FORMAT = 1


def default_folder() -> Path:
    """Return the cache folder: ``$OSFB_GRADE_CACHE``, else ``<user cache>/osfb-gym/grade``.

    The user cache is ``$XDG_CACHE_HOME`` or ``~/.cache``.
    """
    explicit = os.environ.get("OSFB_GRADE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "osfb-gym" / "grade"


_CODE_VERSION: str | None = None


def code_version() -> str:
    """Return a hash of every source file of the project and the libraries' versions.

    Computed once per process (about a hundred small files).
    """
    global _CODE_VERSION
    if _CODE_VERSION is None:
        digest = hashlib.sha256()
        for package in _PACKAGES:
            module = sys.modules.get(package) or __import__(package)
            root = Path(module.__file__ or "").parent
            for path in sorted(root.rglob("*.py")):
                digest.update(path.relative_to(root.parent).as_posix().encode())
                digest.update(path.read_bytes())
        for library in _LIBRARIES:
            try:
                version = metadata.version(library)
            except metadata.PackageNotFoundError:
                version = "absent"
            digest.update(f"{library}={version}".encode())
        digest.update(f"{sys.version}|{platform.machine()}".encode())
        _CODE_VERSION = digest.hexdigest()
    return _CODE_VERSION


def entry_key(
    env_id: str, env_kwargs: dict[str, Any], seeds: Sequence[int], agents: Sequence[str]
) -> str:
    """Return the key of the scores of ``agents`` on ``env_id(**env_kwargs)`` over ``seeds``."""
    identity = {
        "format": FORMAT,
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "seeds": [int(seed) for seed in seeds],
        "agents": list(agents),
        "code": code_version(),
    }
    text = json.dumps(identity, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def load(folder: Path, key: str) -> dict[str, Any] | None:
    """Return the entry ``key`` in ``folder``, or None if absent or unreadable."""
    path = folder / f"{key}.json"
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    return entry


def store(folder: Path, key: str, agents: dict[str, Any]) -> Path | None:
    """Write the entry ``key`` atomically; return its path (None: the folder is not writable)."""
    temporary = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(suffix=".json", dir=folder)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump({"key": key, "agents": agents}, stream, default=_plain)
        os.replace(temporary, folder / f"{key}.json")
    except OSError:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        return None
    return folder / f"{key}.json"


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON data")
