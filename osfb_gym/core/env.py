"""The base class every osfb-gym environment derives from."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from osfb_gym.core.channels import strip_oracle
from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.validation import check_int, check_options


def episode_over(t: int, terminated: bool) -> str:
    """Return the message of a ``step`` after the episode ended: what ended it; call reset.

    Examples
    --------
    >>> episode_over(3, False)
    'the episode has ended (truncated at the horizon, step 3); call reset() for a new one'
    """
    how = "terminated: its stream ran out" if terminated else "truncated at the horizon"
    return f"the episode has ended ({how}, step {t}); call reset() for a new one"


class FeedbackEnv(gym.Env):
    """A Gymnasium env whose ``info`` carries the feedback and oracle channels.

    Subclasses set ``metrics_class`` (the streaming metrics the runner keeps
    for an episode) and ``horizon`` (the most steps an episode can last),
    and document, in a "Hidden State" section, the private attributes that
    hold the outcomes the learner must not see: the no-leak tests' probe
    (the family record's ``probe``, read by ``tests/osfb_gym/envs/hidden.py``)
    changes them there.

    Time limit: ``horizon`` is an argument of the env, not only of its
    registration, because agents may need ``T`` (the paper's ``rho_t``, a
    label budget); the env truncates there itself. So that Gymnasium knows
    the limit too, the spec ``gym.make`` gives the env reports it:
    ``env.spec.max_episode_steps == env.horizon``, for ``gym.make(id)`` and
    ``gym.make(id, horizon=h)`` alike. Wrappers that need a time limit
    (``TimeAwareObservation``) then find the true one, with no
    ``TimeLimit`` wrapper added (it would only repeat the env's own
    truncation, and mark a dataset stream's last step truncated as well
    as terminated). A spec that already names a limit (``gym.make(...,
    max_episode_steps=n)``, which adds Gymnasium's ``TimeLimit``) is kept.
    Remaking an env from its spec (``gym.make(env.spec)``) adds Gymnasium's
    ``TimeLimit`` at the horizon, as Gymnasium does for any spec with a
    limit: the same episodes, except that a dataset stream's last step is
    then marked truncated as well as terminated.
    """

    metrics_class: ClassVar[type[EpisodeMetrics]] = EpisodeMetrics
    #: the keys ``reset(options=...)`` understands (none: every key is refused, by name)
    reset_options: ClassVar[tuple[str, ...]] = ()
    #: the most steps an episode lasts (a dataset's stream may end it sooner)
    horizon: int

    @property  # type: ignore[override]
    def spec(self) -> EnvSpec | None:
        """The spec ``gym.make`` set, with ``max_episode_steps`` the env's ``horizon``."""
        return self.__dict__.get("_spec")

    @spec.setter
    def spec(self, value: EnvSpec | None) -> None:
        if value is not None and value.max_episode_steps is None:
            value = replace(value, max_episode_steps=self.horizon)
        self.__dict__["_spec"] = value

    @property
    def render_truth(self) -> bool:
        """Whether renders also show hidden truth: fixed when the env is made, read-only after.

        A render shows what the agent was shown; the truth (unrevealed
        outcomes, the oracle's losses, hidden preferences) only when the env
        was made with ``render_truth=True``. The constructor sets it once;
        setting it on a made env raises ``AttributeError``, so no loop can
        turn a render fed to a policy into a view of the hidden labels.
        """
        return bool(self.__dict__.get("_render_truth", False))

    @render_truth.setter
    def render_truth(self, value: bool) -> None:
        if "_render_truth" in self.__dict__:
            raise AttributeError(
                "render_truth is fixed when the env is made (what a render keeps depends on "
                "it); make a new env with render_truth=True instead"
            )
        if not isinstance(value, bool):
            raise TypeError(f"render_truth must be True or False, got {value!r}")
        self.__dict__["_render_truth"] = value

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Seed ``np_random`` (any non-negative integer, Python's or numpy's) and check ``options``.

        Subclasses call ``super().reset(seed=seed, options=options)`` first,
        as Gymnasium asks; Gymnasium alone refuses a numpy integer seed, and
        an ``options`` that is not a dict, or holds a key the env does not
        know (:attr:`reset_options`), would be silently ignored.
        """
        if seed is not None:
            seed = check_int(seed, "seed", minimum=0)
        name = self.spec.id if self.spec is not None else type(self).__name__
        check_options(options, self.reset_options, name)
        return super().reset(seed=seed, options=options)  # type: ignore[return-value]

    def step_without_oracle(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Step as :meth:`step` does, with no ``info["oracle"]``: for loops that drop it.

        Only the oracle-hiding layers call it (an RL view over
        :class:`~osfb_gym.core.channels.HideOracle`, on its direct path): what
        :meth:`step` returns through ``HideOracle``, the same observation,
        reward, flags and feedback, and the same env state after. This
        default is exactly that, :meth:`step` then
        :func:`~osfb_gym.core.channels.strip_oracle`; a family whose oracle
        costs work of its own overrides it to skip that work (services:
        group averages, fairness, the services placed). An override computes
        the agent's channels with :meth:`step`'s own code (tested bit for
        bit against it) and falls back to this default when a subclass
        overrides :meth:`step`. Nothing hidden is kept for later: the
        oracle of such a step is never computed, so it cannot be read.
        """
        obs, reward, terminated, truncated, info = self.step(action)
        return obs, reward, terminated, truncated, strip_oracle(info)
