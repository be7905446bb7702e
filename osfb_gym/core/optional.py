"""Optional dependencies: imported where they are used, named with their extra when missing.

The core install (``pip install osfb-gym``) has the environments, the
papers' agents and the benchmark engine, and no PyTorch. The RL baselines
need stable-baselines3 (and PyTorch through it), the Ray executor needs
Ray; each is an extra of the distribution. Code that needs one calls
:func:`require` first (:func:`require_for_argument` when an argument's
value needs it), so a user without it reads one line saying which extra to
install instead of a ``ModuleNotFoundError`` from deep inside an
import chain (scikit-learn's ``check_matplotlib_support`` does the same).

numba (the ``fast`` extra) is optional in another way: the loops it
compiles are the NumPy path's arithmetic, so without it, or with the
environment variable ``OSFB_NUMBA=0``, :func:`compiled` returns None and the
code runs NumPy's path instead, with the same bits.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

#: import name -> (the distribution to name, the osfb-gym extra that installs it)
EXTRAS: dict[str, tuple[str, str]] = {
    "stable_baselines3": ("stable-baselines3", "rl"),
    "sb3_contrib": ("sb3-contrib", "rl"),
    "torch": ("torch", "rl"),
    "rich": ("rich", "rl"),
    "ray": ("ray", "ray"),
    "tensorboard": ("tensorboard", "tensorboard"),
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def missing_message(module: str, needed_by: str) -> str:
    """Return the one line that says what ``needed_by`` needs and how to install it.

    Parameters
    ----------
    module
        The top-level import name (a key of :data:`EXTRAS`).
    needed_by
        What needs it, as the user knows it (``"SB3Agent"``, ``"executor='ray'"``).

    Examples
    --------
    >>> missing_message("stable_baselines3", "SB3Agent")
    "SB3Agent needs stable-baselines3: pip install 'osfb-gym[rl]'"
    """
    if module not in EXTRAS:
        raise ValueError(f"module must be one of {sorted(EXTRAS)}, got {module!r}")
    distribution, extra = EXTRAS[module]
    return f"{needed_by} needs {distribution}: pip install 'osfb-gym[{extra}]'"


def require(module: str, needed_by: str) -> ModuleType:
    """Import the optional ``module`` and return it, or raise a one-line ``ImportError``.

    Parameters
    ----------
    module
        The top-level import name (a key of :data:`EXTRAS`).
    needed_by
        What needs it, named in the message.

    Raises
    ------
    MissingExtraError
        An ``ImportError``, when ``module`` (or a package it imports, such as torch under
        stable-baselines3) is not installed; the message names the extra,
        the original error is chained as its cause.

    Examples
    --------
    >>> require("rich", "SB3's progress bar").__name__
    'rich'
    """
    message = missing_message(module, needed_by)
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(message, name=module) from error


def require_for_argument(module: str, argument: str) -> ModuleType:
    """Import ``module`` that the value of ``argument`` needs, or raise a one-line ``ValueError``.

    An argument whose value cannot be used here (``executor="ray"`` without
    Ray, a TensorBoard folder without TensorBoard) gets the ``ValueError``
    any other unusable argument value gets, with :func:`require`'s message.

    Examples
    --------
    >>> require_for_argument("rich", "progress_bar=True").__name__
    'rich'
    """
    try:
        return require(module, argument)
    except ImportError as error:
        raise ValueError(str(error)) from error


def compiled(module: str) -> ModuleType | None:
    """Import ``module``, whose loops numba compiles, or return None to run NumPy's path.

    None with the environment variable ``OSFB_NUMBA=0`` (read at each call,
    so a test can switch it) or when numba is not installed; ``module`` is
    imported once. Pass ``"numba"`` itself where the loops are defined at
    the call.

    >>> import os
    >>> os.environ["OSFB_NUMBA"] = "0"
    >>> compiled("numba") is None
    True
    >>> del os.environ["OSFB_NUMBA"]
    """
    if os.environ.get("OSFB_NUMBA", "1") == "0":
        return None
    return _import_compiled(module)


@functools.cache
def _import_compiled(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name != "numba" and not (error.name or "").startswith("numba."):
            raise  # a missing module of ours is a bug, not a missing extra
        return None
