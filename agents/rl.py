"""stable-baselines3 models as agents, so RL and the papers' agents run in the same loop.

:class:`SB3Agent` wraps a trained model (PPO, A2C, DQN from
stable-baselines3; RecurrentPPO, TRPO, QR-DQN from sb3-contrib). It acts on the env's own
observations and returns the env's own actions: when the model was trained
on the adapted env of :func:`osfb_gym.wrappers.rl_env` (the plain
``float32`` vector of the observation, :func:`osfb_gym.wrappers.encode`;
``Discrete`` actions for DQN and QR-DQN), the agent applies the same adaptation
itself, so it is scored on the plain env by the same runner and metrics as
every other agent. A recurrent policy's state is carried from
step to step and reset at every episode start.

The model is frozen: :meth:`SB3Agent.update` learns nothing (training is
``osfb-bench train`` / :func:`osfb_gym.bench.rl.train`). What the model
learned across training episodes is its experience; within an episode only
a recurrent policy can adapt, through its state.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agents.base import Agent
from envs_registry import env_ids
from osfb_gym.core.optional import require
from osfb_gym.core.validation import check_choice


@dataclass(frozen=True)
class AlgorithmInfo:
    """What training and the RL comparison need to know of an algorithm.

    ``package`` holds its class (``stable_baselines3`` or ``sb3_contrib``);
    ``discrete``: it acts in ``Discrete`` spaces only, so it trains on
    :func:`osfb_gym.wrappers.rl_env`'s ``discrete_actions`` (the ``-Discrete``
    twins); ``recurrent``: an LSTM policy (``MlpLstmPolicy``), which runs on the
    feedback view; ``tunes``: the arguments the RL comparison's grid sets, in
    grid order; ``planned``: a schedule of its defaults runs over a fraction of
    ``learn``'s ``total_timesteps`` (DQN's and QR-DQN's exploration rate), so
    the model after N steps of a longer run is not the model of a run of N
    steps (PPO's, A2C's and TRPO's defaults are constant: it is).
    """

    package: str
    tunes: tuple[str, ...]
    discrete: bool = False
    recurrent: bool = False
    planned: bool = False


_ON_POLICY = ("gamma", "learning_rate", "n_steps", "ent_coef", "batch_size")

#: the stable-baselines3 / sb3-contrib algorithms an :class:`SB3Agent` can wrap by name.
#: Every osfb-gym env acts in Discrete, MultiDiscrete or MultiBinary spaces, so the
#: algorithms for Box actions only (SAC, TD3, DDPG, TQC, CrossQ) have no env to train on.
ALGORITHM_INFO: dict[str, AlgorithmInfo] = {
    "PPO": AlgorithmInfo("stable_baselines3", _ON_POLICY),
    "A2C": AlgorithmInfo("stable_baselines3", _ON_POLICY[:4]),  # no minibatches
    "DQN": AlgorithmInfo(
        "stable_baselines3", ("gamma", "learning_rate"), discrete=True, planned=True
    ),
    "RecurrentPPO": AlgorithmInfo("sb3_contrib", _ON_POLICY, recurrent=True),
    "TRPO": AlgorithmInfo("sb3_contrib", ("gamma", "learning_rate", "n_steps", "batch_size")),
    "QRDQN": AlgorithmInfo("sb3_contrib", ("gamma", "learning_rate"), discrete=True, planned=True),
}
ALGORITHMS = tuple(ALGORITHM_INFO)


def algorithm(name: str) -> Any:
    """Return the algorithm class called ``name`` (one of :data:`ALGORITHMS`).

    It lives here, with the agent that loads models, so that ``agents`` never
    imports ``osfb_gym.bench`` (which imports ``agents``); the bench's
    training helpers (:mod:`osfb_gym.bench.rl`) re-export it.

    Examples
    --------
    >>> algorithm("PPO").__name__
    'PPO'
    >>> algorithm("SAC")
    Traceback (most recent call last):
    ...
    ValueError: algo must be one of 'PPO', 'A2C', 'DQN', 'RecurrentPPO', 'TRPO', 'QRDQN'; got 'SAC'
    """
    return getattr(require(algorithm_info(name).package, name), name)


def algorithm_info(name: str) -> AlgorithmInfo:
    """Return what is known of algorithm ``name`` (one of :data:`ALGORITHMS`)."""
    check_choice(name, "algo", ALGORITHMS)
    return ALGORITHM_INFO[name]


def normalizer_path(path: str | Path) -> Path:
    """Return where a model's observation statistics are saved, beside the model file."""
    path = Path(path)
    return path.with_name(path.name.removesuffix(".zip") + ".vecnormalize.pkl")


def _same_space(a: gym.Space, b: gym.Space) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, spaces.Box):
        return a.shape == b.shape  # bounds may be float32 / float64 copies
    return a == b


class SB3Agent(Agent):
    """A trained stable-baselines3 model acting through the Agent contract.

    Needs the ``[rl]`` extra (``pip install 'osfb-gym[rl]'``).

    Parameters
    ----------
    model
        A trained ``BaseAlgorithm`` (``PPO``, ``A2C``, ``DQN``,
        ``RecurrentPPO``, ...).
    deterministic
        Act on the policy's mode (True) or sample from it (False; the
        sample is seeded from ``reset``'s seed through torch's generator).
    normalizer
        The ``VecNormalize`` the model was trained behind; None takes the
        model's own (``train(..., normalize=True)``), if any. Its
        statistics are applied frozen, as they were at the end of training.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from stable_baselines3 import PPO
    >>> from osfb_gym.wrappers import rl_env
    >>> from osfb_gym.runner import run_episode
    >>> model = PPO("MlpPolicy", rl_env("RejectOption-v0", horizon=50), n_steps=64, seed=0)
    >>> agent = SB3Agent(model)
    >>> trajectory = run_episode(gym.make("RejectOption-v0", horizon=50), agent, seed=0)
    >>> trajectory.actions.shape
    (50, 2)

    References
    ----------
    Antonin Raffin, Ashley Hill, Adam Gleave, Anssi Kanervisto, Maximilian
    Ernestus, Noah Dormann. Stable-Baselines3: Reliable Reinforcement
    Learning Implementations. JMLR 22(268), 2021.
    """

    # every registered env: the model's own spaces decide where it can act
    env_ids: ClassVar[tuple[str, ...]] = tuple(env_ids())

    def __init__(
        self, model: Any = None, deterministic: bool = True, normalizer: Any = None
    ) -> None:
        self.model = model
        self.deterministic = deterministic
        self.normalizer = normalizer

    @classmethod
    def load(cls, path: str | Path, algo: str | None = None, **kwargs: Any) -> SB3Agent:
        """Load a model saved by ``model.save(path)`` (or ``osfb-bench train``).

        ``algo`` names its class (one of :data:`ALGORITHMS`); by default it is read
        from the file name ``<ALGO>_...zip`` that ``osfb-bench train`` writes.
        """
        require("stable_baselines3", "SB3Agent")
        name = algo if algo is not None else Path(path).name.split("_", 1)[0]
        stats = normalizer_path(path)
        if stats.is_file() and "normalizer" not in kwargs:
            # VecNormalize.save pickles the wrapper without its envs; only its
            # statistics are needed to act, so no env is attached
            with stats.open("rb") as handle:
                kwargs["normalizer"] = pickle.load(handle)
        return cls(algorithm(name).load(str(path), device="cpu"), **kwargs)

    def clone(self, **overrides: Any) -> SB3Agent:
        """Return a fresh agent sharing the (frozen) model; nothing learned is copied."""
        params = {**self.get_params(deep=False), **overrides}
        return type(self)(**params)

    def __sklearn_clone__(self) -> SB3Agent:
        # sklearn.base.clone would deep-copy the model (torch modules); a trained
        # model is a frozen hyperparameter here, shared like the project's clone()
        return self.clone()

    # ------------------------------------------------------------------ contract
    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Match the env's spaces to the model's; clear the recurrent state.

        The env's observation is encoded as :func:`osfb_gym.wrappers.rl_env`'s
        plain view encodes it (:func:`osfb_gym.wrappers.encode`) when the
        model was trained on that vector, and a ``Discrete`` model action is mapped to
        the env's ``MultiDiscrete`` / ``MultiBinary`` action (DiscreteActions' codes), as
        :func:`osfb_gym.wrappers.rl_env` does for training.
        """
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        model = self.model
        if model is None or not hasattr(model, "predict"):
            raise ValueError(
                f"SB3Agent needs a trained stable-baselines3 model, got model={model!r}"
            )
        if not isinstance(self.deterministic, bool):
            raise TypeError(f"deterministic must be True or False, got {self.deterministic!r}")
        self.encode_ = self._observation_adapter(observation_space, model.observation_space)
        self.unravel_ = self._action_adapter(action_space, model.action_space)
        normalizer = self.normalizer
        if normalizer is None and hasattr(model, "get_vec_normalize_env"):
            normalizer = model.get_vec_normalize_env()
        self.obs_stats_: tuple[np.ndarray, np.ndarray, float] | None = None
        if normalizer is not None and normalizer.norm_obs:
            rms = normalizer.obs_rms
            scale = np.sqrt(rms.var + normalizer.epsilon)
            self.obs_stats_ = (rms.mean.copy(), scale, float(normalizer.clip_obs))
        self.state_: tuple[np.ndarray, ...] | None = None
        self.episode_start_ = np.ones(1, dtype=bool)
        if not self.deterministic and seed is not None:
            require("torch", "SB3Agent").manual_seed(seed)

    @staticmethod
    def _observation_adapter(env_space: gym.Space, model_space: gym.Space) -> bool:
        """Whether observations go through the plain view's ``encode`` (else as they are)."""
        from osfb_gym.core.spaces import encode_space

        if _same_space(env_space, model_space):
            return False
        vector = encode_space(env_space)
        if _same_space(vector, model_space):
            return True
        raise ValueError(
            f"the model was trained on observations {model_space}, the env gives {env_space} "
            f"(as rl_env's plain vector: {vector}); score it on the env it was trained on, "
            "or, for a model trained on a feedback or features view, through that view "
            "(osfb_gym.wrappers.apply_view)"
        )

    @staticmethod
    def _action_adapter(env_space: gym.Space, model_space: gym.Space) -> tuple[int, ...] | None:
        if _same_space(env_space, model_space):
            return None
        if (
            isinstance(env_space, spaces.MultiBinary)
            and isinstance(model_space, spaces.MultiDiscrete)
            and np.all(np.asarray(model_space.nvec) == 2)
            and model_space.shape == env_space.shape
        ):
            return ()  # the same 0/1 decisions in integer form (BinaryAsMultiDiscrete)
        if isinstance(model_space, spaces.Discrete):
            if isinstance(env_space, spaces.MultiDiscrete):
                nvec = tuple(int(n) for n in np.asarray(env_space.nvec).ravel())
            elif isinstance(env_space, spaces.MultiBinary):
                nvec = (2,) * int(np.prod(env_space.shape))  # DiscreteActions' bits
            else:
                nvec = ()
            if nvec and int(np.prod(nvec)) == int(model_space.n):
                return nvec
        raise ValueError(
            f"the model acts in {model_space}, the env takes {env_space}; score it on the env "
            "it was trained on"
        )

    def act(self, observation: Any) -> Any:
        """Return the model's action for ``observation``, in the env's action space."""
        if self.encode_:
            from osfb_gym.core.spaces import encode

            obs = encode(self.observation_space_, observation)
        else:
            obs = observation
        if self.obs_stats_ is not None:
            mean, scale, clip = self.obs_stats_
            obs = np.clip((np.asarray(obs) - mean) / scale, -clip, clip).astype(np.float32)
        action, self.state_ = self.model.predict(
            obs,
            state=self.state_,
            episode_start=self.episode_start_,
            deterministic=self.deterministic,
        )
        self.episode_start_ = np.zeros(1, dtype=bool)
        space = self.action_space_
        if self.unravel_:
            joint = np.array(np.unravel_index(int(action), self.unravel_))
            return joint.reshape(space.shape).astype(space.dtype)
        if isinstance(space, spaces.Discrete):
            return int(action)
        return np.asarray(action).reshape(space.shape).astype(space.dtype)
