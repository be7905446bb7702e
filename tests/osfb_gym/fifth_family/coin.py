"""A toy family: flip a coin whose bias depends on a context; see it land only when you bet.

The env package a new family writes (here all in one file: env, metrics,
its ``FAMILY`` record), plus an agent for it;
``tests/osfb_gym/test_fifth_family.py`` adds its registry lines and checks
that the project's generic machinery runs it with nothing else changed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from agents.base import Agent
from osfb_gym.core.channels import make_info
from osfb_gym.core.env import FeedbackEnv
from osfb_gym.core.family import Family
from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.validation import check_int


class CoinMetrics(EpisodeMetrics):
    """The shared metrics plus the rate of bets."""

    def __init__(self, num_envs: int | None = None) -> None:
        super().__init__(num_envs)
        self.bets = self._zeros()

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        super().update(action, reward, feedback, oracle)
        self.bets += self._count(np.asarray(action) == 1)

    def get(self) -> dict[str, Any]:
        return {**super().get(), "bet_rate": self._value(self.bets) / max(self.steps, 1)}


class CoinEnv(FeedbackEnv):
    """Bet (1) or pass (0) on a coin of heads probability sigmoid(x . w); heads pay +1, tails -1.

    Hidden State: the coin ``_y`` (1 heads), revealed only on a bet.
    """

    metadata = {"render_modes": []}
    metrics_class = CoinMetrics

    def __init__(self, dim: int = 2, horizon: int = 100) -> None:
        self.dim = check_int(dim, "dim", minimum=1)
        self.horizon = check_int(horizon, "horizon", minimum=1)
        self.observation_space = spaces.Box(-10.0, 10.0, (self.dim,), np.float64)
        self.action_space = spaces.Discrete(2)

    def _draw(self) -> None:
        self._x = np.clip(self.np_random.normal(size=self.dim), -10.0, 10.0)
        self._p = 1.0 / (1.0 + np.exp(-self._x @ self._w))
        self._y = int(self.np_random.random() < self._p)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed, options=options)
        self._w = self.np_random.normal(size=self.dim)
        self._t = 0
        self._draw()
        return self._x.copy(), make_info({"revealed": np.zeros(1, bool)}, {"loss": 0.0})

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(action):
            raise ValueError(f"action must be 0 or 1, got {action!r}")
        bet = int(action) == 1
        reward = float(2 * self._y - 1) if bet else 0.0
        feedback = {"revealed": np.array([bet]), "y": self._y if bet else 0}  # as apple tasting
        bayes = self._p > 0.5
        oracle = {"loss": abs(2 * self._p - 1) * float(bayes != bet), "y": self._y}
        self._t += 1
        self._draw()
        info = make_info(feedback, oracle)
        return self._x.copy(), reward, False, self._t >= self.horizon, info


def override_hidden(env: CoinEnv, action: Any, extreme: str) -> bool:
    """The family's no-leak probe (its record's ``probe``): set the coin passed on, ``env._y``."""
    if int(action) == 1:
        return False
    env._y = 0 if extreme == "low" else 1
    return True


class AlwaysBet(Agent):
    """The reference agent of the toy family: bet every time."""

    env_ids = ("Coin-v0",)

    def act(self, observation: Any) -> int:
        return 1

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        pass


FAMILY = Family(
    name="coin",
    env_id="Coin-v0",
    objective="cumulative_loss",
    lower_is_better=True,
    metrics="tests.osfb_gym.fifth_family.coin:CoinMetrics",
    reference_agents=("tests.osfb_gym.fifth_family.coin:AlwaysBet",),
    columns=("bet_rate",),
    small_kwargs={"horizon": 20},
    probe="tests.osfb_gym.fifth_family.coin:override_hidden",
)
