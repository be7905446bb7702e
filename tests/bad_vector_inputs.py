"""Bad inputs of the native vector envs: what ``gym.make_vec`` and their step are handed.

Part of :func:`tests.bad_inputs.all_cases` (kept apart for the size of that
module): every RL id with a ``vector_entry_point``, so an id that gets a
native env is covered for free.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tests.bad_inputs import SMALL, Case


def rl_vector_cases() -> Iterator[Case]:
    """The RL ids with a native vector env: what ``gym.make_vec`` and its step are handed."""
    import gymnasium as gym

    from envs_registry import RL_ENVS

    for entry in RL_ENVS:
        if entry.vector_entry_point is None:
            continue
        env_id = entry.id
        small = SMALL.get(str(entry.kwargs["env_id"]), {})
        bad: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
            ("num_envs=0", {"num_envs": 0}, ("num_envs",)),
            ("num_envs=1.5", {"num_envs": 1.5}, ("num_envs",)),
            ("autoreset_mode=Disabled", {"autoreset_mode": "Disabled"}, ("autoreset_mode",)),
            ("native=yes", {"native": "yes"}, ("native",)),
            ("native=True render_mode", {"native": True, "render_mode": "ansi"}, ("native",)),
        ]
        for label, kwargs, names in bad:
            yield Case(
                f"vector env {env_id} {label}",
                lambda env_id=env_id, small=small, kwargs=kwargs: gym.make_vec(
                    env_id, **{"num_envs": 2, **small, **kwargs}
                ),
                names,
            )
        yield Case(
            f"vector env {env_id} step(nan actions)",
            lambda env_id=env_id, small=small: _vector_step(env_id, small),
            ("actions",),
        )


def _vector_step(env_id: str, small: dict[str, Any]) -> Any:
    import gymnasium as gym

    envs = gym.make_vec(env_id, num_envs=2, **small)
    envs.reset(seed=0)
    actions = np.full(envs.action_space.shape, np.nan)
    return envs.step(actions)
