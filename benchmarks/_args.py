"""What the benchmark scripts share: their command-line arguments, and CPU-timed stepping.

Each script declares its arguments once, as a dataclass with documented
defaults; :func:`parse_args` turns every field into a ``--flag`` of the
field's type (a field defaulting to None takes a string).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any, TypeVar

T = TypeVar("T")


def parse_args(args_class: type[T], description: str, argv: list[str] | None = None) -> T:
    """Parse ``argv`` (default: the command line) into an ``args_class`` instance."""
    parser = argparse.ArgumentParser(description=description)
    for field in dataclasses.fields(args_class):  # type: ignore[arg-type]
        default: Any = field.default
        parser.add_argument(
            f"--{field.name.replace('_', '-')}",
            type=type(default) if default is not None else str,
            default=default,
        )
    return args_class(**vars(parser.parse_args(argv)))


def step_seconds(env: Any, actions: list[Any]) -> float:
    """CPU seconds of stepping ``env`` through ``actions`` (resets included)."""
    env.reset(seed=0)
    started = time.process_time()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return time.process_time() - started
