"""What every agent of MultiServiceChoice shares: reading the reported losses, sampling users."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from agents.base import Agent, check_finite, float_array
from osfb_gym.core.optional import compiled


class ServiceAgent(Agent):
    """Pick one user per step from the reported losses (and groups, if revealed).

    Subclasses implement :meth:`weights`, the unnormalised probability of
    acquiring each user; a user already acquired is left out unless
    ``allow_repeats`` (acquiring it again only duplicates a service), and
    when every weight is 0 the pick is uniform. The agent remembers whom
    it acquired from its own actions: nothing of the hidden world. Where
    the observation says who is still active (``"active"``, the retention
    world), departed users get weight 0 and are left out of the uniform
    pick too (unless no active candidate is left).

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

    # myopic: they run in the retention world as they are (departed users report 0 and
    # read inactive: see act)
    env_ids: ClassVar[tuple[str, ...]] = (
        "MultiServiceChoice-v0",
        "MultiServiceChoice-Retention-v0",
    )
    abstract = True
    #: whether :meth:`weights` returns a new array at each call, which ``act`` may then
    #: overwrite (every agent here); False: ``act`` copies it first. A subclass that
    #: defines its own ``weights`` is False unless it sets this too.
    fresh_weights: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "weights" in cls.__dict__ and "fresh_weights" not in cls.__dict__:
            cls.fresh_weights = False

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
                f"{type(self).__name__} needs a Discrete action_space (one user a step), "
                f"got {action_space}"
            )
        self.n_users_ = int(action_space.n)
        self.acquired_ = np.zeros(self.n_users_, dtype=bool)
        self._acquired_users: list[int] = []  # acquired_'s users, each once
        self._inverse_sizes: np.ndarray | None = None  # 1 / |G(i)|, read once an episode

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return the unnormalised probability of acquiring each user."""
        raise NotImplementedError

    def act(self, observation: dict[str, Any]) -> int:
        """Sample a user with probability proportional to :meth:`weights`.

        The weights of the users left out (acquired before, unless
        ``allow_repeats``) are set to 0.0, then the draw is
        :func:`draw`'s: the same values and the same user as
        ``np.where(candidates, weights, 0.0)`` and ``rng.choice(n,
        p=weights / total)`` (tested), in place.
        """
        self._require_reset("act")
        if type(observation) is not dict and not (
            isinstance(observation, Mapping) and "losses" in observation
        ):
            raise TypeError(
                f"{type(self).__name__}.act: observation must be MultiServiceChoice's dict "
                f"(with 'losses', 'choices', 'n_services'), got {observation!r:.80} "
                f"({type(observation).__name__})"
            )
        if "losses" not in observation:
            raise ValueError(
                f"{type(self).__name__}.act: observation must hold 'losses' (one per user), "
                f"got keys {sorted(map(str, observation))}"
            )
        losses = float_array(observation["losses"], "observation['losses']", type(self).__name__)
        check_finite(losses, "observation['losses']", type(self).__name__)
        if losses.shape != (self.n_users_,):
            raise ValueError(
                f"{type(self).__name__}: observation['losses'] must hold one loss per user, "
                f"shape ({self.n_users_},), got shape {losses.shape}"
            )
        # finite (checked): the smallest is negative exactly when some loss is
        if losses.min() < 0:
            raise ValueError(
                f"{type(self).__name__}: observation['losses'] must be >= 0, got {losses.min()}"
            )
        weights = np.asarray(self.weights(observation), dtype=float)
        if not self.fresh_weights or weights is losses:
            weights = weights.copy()
        excluded = not self.allow_repeats and len(self._acquired_users) < self.n_users_
        if excluded and self._acquired_users:
            weights[self._acquired_users] = 0.0
        # a world whose users leave (MultiServiceChoice-Retention-v0) says who is active:
        # a departed user cannot be acquired (public information; absent from -v0)
        active = observation.get("active") if isinstance(observation, dict) else None
        if active is not None:
            gone = np.asarray(active) == 0
            weights[gone] = 0.0
        total = weights.sum()
        if not np.isfinite(total) or total <= 0:
            candidates = ~self.acquired_ if excluded else np.ones(self.n_users_, dtype=bool)
            if active is not None and (candidates & ~gone).any():
                candidates &= ~gone
            weights, total = candidates.astype(float), float(candidates.sum())
        return _draw_in_place(self.rng_, weights, total)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Remember whom this agent acquired."""
        self._check_update(action, reward, feedback, keys=())  # reads none of it
        user = int(action)
        if not self.acquired_[user]:
            self.acquired_[user] = True
            self._acquired_users.append(user)

    def inverse_group_sizes(self, observation: dict[str, Any]) -> np.ndarray:
        """Return ``1 / |G(i)|`` for every user, a new array; computed once an episode.

        The group ids are public and fixed for the episode (the env's
        contract): they are read from the first observation that the agent
        acts on, and not counted again at every step (a ``bincount`` over
        every user).
        """
        if self._inverse_sizes is None:
            self._inverse_sizes = inverse_group_sizes(observation, type(self).__name__)
        return self._inverse_sizes.copy()


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
    return _draw_in_place(rng, np.array(p, dtype=float))


def _draw_in_place(rng: np.random.Generator, p: np.ndarray, total: float = 1.0) -> int:
    """:func:`draw` of ``p / total``, its cumulative sum written over ``p`` (float64, changed).

    ``p /= total`` then the draw; with numba (the optional ``fast`` extra,
    unless ``OSFB_NUMBA=0``) and at least :data:`COMPILED_MIN_USERS` users,
    one compiled pass, the same user
    (:mod:`agents.services._draw`; tested).
    """
    loop = _compiled_draw(p.size)
    if loop is not None:
        return int(loop(p, total, rng.random()))
    if total != 1.0:  # (x / 1.0 is x)
        p /= total
    cdf = np.cumsum(p, out=p)
    cdf /= cdf[-1]
    return int(cdf.searchsorted(rng.random(), side="right"))


#: the fewest users for which the compiled draw runs (the env's threshold, for the
#: same reason: numba's import and loading cost more than small episodes save)
COMPILED_MIN_USERS = 10_000


def _compiled_draw(n_users: int) -> Callable[[np.ndarray, float, float], int] | None:
    """Return the compiled draw, or None (few users, no numba, or ``OSFB_NUMBA=0``)."""
    if n_users < COMPILED_MIN_USERS:
        return None
    loops = compiled("agents.services._draw")
    return None if loops is None else loops.draw_loop  # type: ignore[no-any-return]


def reported_losses(observation: dict[str, Any]) -> np.ndarray:
    """Return the users' reported losses as float64, a new array."""
    return np.array(observation["losses"], dtype=float)


def inverse_group_sizes(observation: dict[str, Any], owner: str) -> np.ndarray:
    """Return ``1 / |G(i)|`` for every user, from the revealed group ids."""
    if "groups" not in observation:
        raise ValueError(
            f"{owner} needs the users' group ids; make the env with reveal_groups=True"
        )
    groups = np.asarray(observation["groups"], dtype=np.int64)
    return 1.0 / np.bincount(groups)[groups]
