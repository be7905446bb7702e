"""What the families' configs share: storing a checked value, and a config given with keywords.

Each family's ``config`` module holds its frozen config types (one per kind
of world); these helpers are the two steps every one of them repeats.
"""

from __future__ import annotations

from typing import Any


def set_checked(config: Any, name: str, value: Any) -> None:
    """Store a checked (normalised) value on a frozen config in its ``__post_init__``.

    The checks are idempotent (a checked value checks to itself), so
    ``dataclasses.replace`` of a config gives an equal config.
    """
    object.__setattr__(config, name, value)


def given_config(
    config: Any, types: tuple[type, ...], arguments: dict[str, Any], defaults: dict[str, Any]
) -> Any:
    """Return ``config`` if it is one of ``types`` and every keyword argument kept its default.

    ``defaults`` maps each keyword to its default (a missing one: None).
    Raises ``TypeError`` naming ``config`` or the keywords given beside it.
    """
    if not isinstance(config, types):
        names = " or ".join(cls.__name__ for cls in types)
        raise TypeError(f"config must be a {names}, got {config!r} ({type(config).__name__})")
    changed = [
        name for name, value in arguments.items() if not _is_default(value, defaults.get(name))
    ]
    if changed:
        raise TypeError(
            f"give config or keyword arguments, not both: config={config!r} with {changed}"
        )
    return config


def _is_default(value: Any, default: Any) -> bool:
    if value is default:
        return True
    same_type = type(value) is type(default) and isinstance(value, str | int | float)
    return same_type and bool(value == default)
