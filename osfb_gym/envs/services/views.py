"""MultiServiceChoice's part of the RL observation views (see :mod:`osfb_gym.core.views`).

Feedback block: the acquired user's one-hot (the revealed mask, n) and
``squash(r / n)``. Features (no learner: the provider's own records): for
each user ``squash(l)``, ``l / max l`` (0 before any service), whether
acquired, its chosen service ``/ k`` (1: none yet), the share of users on
that service (0 before any), and with ``reveal_groups`` its group
``/ (G - 1)`` and its group's share of users; then ``t / k``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.spaces import squash
from osfb_gym.core.views import FamilyViews


class ServiceViews(FamilyViews):
    """The feedback block and the provider's features of a services env."""

    def __init__(self, env: Any, observation_space: Any) -> None:
        super().__init__(env, observation_space)
        self.n_users, self.k = env.n_users, env.n_services
        self.groups = "groups" in observation_space.spaces
        self.acquired = np.zeros(0)

    def block_bounds(self) -> tuple[list[float], list[float]]:
        """Return the bounds of the acquired one-hot and the reward."""
        return [0.0] * self.n_users + [-1.0], [1.0] * self.n_users + [1.0]

    def block(self, action: Any, reward: float, feedback: dict[str, Any]) -> list[Any]:
        """Return the acquired user's one-hot and the squashed reward per user."""
        revealed = np.asarray(feedback["revealed"], dtype=np.float64).ravel()
        return [revealed, [float(squash(reward / revealed.size))]]

    def feature_bounds(self, learner: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the bounds of the per-user columns and ``t / k`` (all in [0, 1])."""
        size = (7 if self.groups else 5) * self.n_users + 1
        return np.zeros(size), np.ones(size)

    def reset(self) -> None:
        """Mark no user acquired."""
        self.acquired = np.zeros(self.n_users)

    def update(self, feedback: dict[str, Any], revealed: np.ndarray) -> None:
        """Mark the acquired user."""
        self.acquired = np.maximum(self.acquired, revealed)

    def features(
        self, observation: Any, learner: Any, *, t: int, revealed: int, horizon: float
    ) -> np.ndarray:
        """Return the per-user columns, then ``t / k``."""
        losses = np.asarray(observation["losses"], dtype=np.float64)
        choices = np.asarray(observation["choices"])
        k, n = self.k, self.n_users
        top = losses.max()
        placed = choices < k
        counts = np.bincount(choices, minlength=k + 1)
        columns = [
            squash(losses),
            losses / top if top > 0 else np.zeros(n),
            self.acquired,
            choices / k,
            np.where(placed, counts[choices] / n, 0.0),
        ]
        if self.groups:
            groups = np.asarray(observation["groups"])
            n_groups = int(self.observation_space["groups"].nvec.max())
            sizes = np.bincount(groups, minlength=n_groups)
            columns += [groups / max(n_groups - 1, 1), sizes[groups] / n]
        return np.concatenate([np.column_stack(columns).ravel(), [min(t / k, 1.0)]])
