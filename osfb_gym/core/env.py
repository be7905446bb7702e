"""The base class every osfb-gym environment derives from."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym

from osfb_gym.core.metrics import EpisodeMetrics


class FeedbackEnv(gym.Env):
    """A Gymnasium env whose ``info`` carries the feedback and oracle channels.

    Subclasses set ``metrics_class`` (the streaming metrics the runner keeps
    for an episode) and implement :meth:`_override_hidden`, the probe the
    no-leak tests use to change outcomes the learner must not see.
    """

    metrics_class: ClassVar[type[EpisodeMetrics]] = EpisodeMetrics

    def _override_hidden(self, action: Any, extreme: str) -> bool:
        """Set every outcome ``action`` would leave hidden to an extreme value.

        Parameters
        ----------
        action
            The action about to be taken.
        extreme
            ``"low"`` or ``"high"``: which extreme of the outcome range.

        Returns
        -------
        bool
            Whether any outcome was hidden (and so changed). Only tests call
            this: it lets them prove that nothing the agent sees depends on
            a hidden outcome.
        """
        raise NotImplementedError
