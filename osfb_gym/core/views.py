"""A family's part of the RL observation views: the :class:`FamilyViews` interface.

The views of :mod:`osfb_gym.wrappers.views` are generic: the plain vector,
the counters of steps and revealed outcomes, the learner's clone and its
updates. What differs by family (the bounds and content of the block
``"feedback"`` appends, the learner ``"features"`` reads and the features
themselves) lives in the family's package (``osfb_gym/envs/<family>/views.py``),
named by its :class:`~osfb_gym.core.family.Family` record's ``views`` field.

A family's views read what an agent may read: the observation, its action,
the reward, ``info["feedback"]``, and the env's public task terms (the
cutoff, the batch size, the costs), never hidden state.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class FamilyViews:
    """The family-specific half of the feedback and features views of one env.

    Made from the unwrapped env (its public task terms) and its observation
    space; one per view, so it may keep per-episode state
    (:meth:`reset`, :meth:`update`).

    Attributes
    ----------
    learner
        ``("module:Base", "module:Default")``: the class a features view's
        learner must be an instance of, and the one made when none is given;
        None where the features need no learner (services: the provider's
        own records).
    """

    learner: tuple[str, str] | None = None

    def __init__(self, env: Any, observation_space: Any) -> None:
        self.observation_space = observation_space

    def block_bounds(self) -> tuple[list[float], list[float]]:
        """Return the bounds of the block the feedback view appends."""
        raise NotImplementedError

    def block(self, action: Any, reward: float, feedback: dict[str, Any]) -> list[Any]:
        """Return the step's block, as pieces concatenated in order."""
        raise NotImplementedError

    def feature_bounds(self, learner: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the bounds of :meth:`features` (``learner``: the features view's)."""
        raise NotImplementedError

    def reset(self) -> None:
        """Start an episode's per-family counts."""

    def update(self, feedback: dict[str, Any], revealed: np.ndarray) -> None:
        """Take in one step's feedback (``revealed``: its mask, as booleans)."""

    def features(
        self, observation: Any, learner: Any, *, t: int, revealed: int, horizon: float
    ) -> np.ndarray:
        """Return the features of ``observation`` under ``learner``'s state.

        ``t`` steps taken and ``revealed`` outcomes revealed this episode;
        ``horizon`` the env's (services: its ``n_services``).
        """
        raise NotImplementedError
