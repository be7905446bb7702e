"""What every agent of MultiServiceChoice shares: reading the reported losses, sampling users."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from agents.base import Agent, check_finite


class ServiceAgent(Agent):
    """Pick one user per step from the reported losses (and groups, if revealed).

    Subclasses implement :meth:`weights`, the unnormalised probability of
    acquiring each user; a user already acquired is left out unless
    ``allow_repeats`` (acquiring it again only duplicates a service), and
    when every weight is 0 the pick is uniform. The agent remembers whom
    it acquired from its own actions: nothing of the hidden world.

    Parameters
    ----------
    allow_repeats
        Whether a user acquired before may be drawn again (the paper's
        sampling with replacement); by default it is not.

    Attributes
    ----------
    n_users_
        Number of users (the action space's size).
    acquired_
        Mask of the users this agent acquired in the episode.
    """

    env_ids: ClassVar[tuple[str, ...]] = ("MultiServiceChoice-v0",)
    abstract = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {"allow_repeats": ["boolean"]}

    def __init__(self, allow_repeats: bool = False) -> None:
        self.allow_repeats = allow_repeats

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Forget the episode's acquisitions; seed the generator."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        if not isinstance(action_space, gym.spaces.Discrete):
            raise TypeError(
                f"{type(self).__name__} needs a Discrete action space, got {action_space}"
            )
        self.n_users_ = int(action_space.n)
        self.acquired_ = np.zeros(self.n_users_, dtype=bool)

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return the unnormalised probability of acquiring each user."""
        raise NotImplementedError

    def act(self, observation: dict[str, Any]) -> int:
        """Sample a user with probability proportional to :meth:`weights`."""
        self._require_reset("act")
        losses = np.asarray(observation["losses"])
        check_finite(losses, "observation['losses']", type(self).__name__)
        if losses.shape != (self.n_users_,):
            raise ValueError(
                f"{type(self).__name__}: observation['losses'] must hold one loss per user, "
                f"shape ({self.n_users_},), got shape {losses.shape}"
            )
        if (losses < 0).any():
            raise ValueError(
                f"{type(self).__name__}: observation['losses'] must be >= 0, got {losses.min()}"
            )
        weights = np.asarray(self.weights(observation), dtype=float)
        candidates = np.ones(self.n_users_, dtype=bool)
        if not self.allow_repeats and not self.acquired_.all():
            candidates = ~self.acquired_
        weights = np.where(candidates, weights, 0.0)
        total = weights.sum()
        if not np.isfinite(total) or total <= 0:
            weights, total = candidates.astype(float), float(candidates.sum())
        return draw(self.rng_, weights / total)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Remember whom this agent acquired."""
        self._require_reset("update")
        if not self.action_space_.contains(action):
            raise ValueError(
                f"{type(self).__name__}: action must be a user index in {self.action_space_}, "
                f"got {action!r}"
            )
        self.acquired_[int(action)] = True


def draw(rng: np.random.Generator, p: np.ndarray) -> int:
    """Return ``int(rng.choice(len(p), p=p))``, the same draw, without its checks on ``p``.

    ``Generator.choice`` validates ``p`` (a Kahan sum, sign and NaN checks)
    before the same cumulative sum and search; ``act`` has checked the
    weights already, and at 100,000 users the checks cost as much as the
    draw. Equal draw for draw (tested against ``choice``).

    Examples
    --------
    >>> p = np.array([0.2, 0.0, 0.5, 0.3])
    >>> a, b = np.random.default_rng(4), np.random.default_rng(4)
    >>> [draw(a, p) for _ in range(6)] == [int(b.choice(4, p=p)) for _ in range(6)]
    True
    """
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    return int(cdf.searchsorted(rng.random(), side="right"))


def reported_losses(observation: dict[str, Any]) -> np.ndarray:
    """Return the users' reported losses as float64."""
    return np.asarray(observation["losses"], dtype=float)


def inverse_group_sizes(observation: dict[str, Any], owner: str) -> np.ndarray:
    """Return ``1 / |G(i)|`` for every user, from the revealed group ids."""
    if "groups" not in observation:
        raise ValueError(
            f"{owner} needs the users' group ids; make the env with reveal_groups=True"
        )
    groups = np.asarray(observation["groups"], dtype=np.int64)
    return 1.0 / np.bincount(groups)[groups]
