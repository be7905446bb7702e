"""Training stable-baselines3 agents on osfb-gym environments.

:func:`train` makes vectorised training envs (:func:`osfb_gym.wrappers.rl_env`
for each copy: the oracle hidden, the observation view as a ``float32``
vector, ``Discrete`` actions for DQN), trains PPO, A2C, DQN or sb3-contrib's
RecurrentPPO (an LSTM policy, which can adapt within an episode) and
returns the model; :class:`agents.rl.SB3Agent` scores it on the plain env.

Two regimes, chosen by the env's ``world_seed``:

- *fixed world* (``world_seed`` set, or a dataset-backed env): every
  training episode is the same hidden world (beta*, w*, the population)
  with fresh draws from it; the agent learns that world across episodes
  and is then scored on fresh episodes of it;
- *resampled world* (``world_seed=None``): a new world every episode, so
  only what the policy does within an episode helps; a recurrent policy is
  the fair contender against the papers' online learners.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from agents.rl import ALGORITHMS, algorithm, normalizer_path
from osfb_gym.core.optional import require, require_for_argument
from osfb_gym.core.validation import check_choice, check_int
from osfb_gym.wrappers import rl_env

__all__ = ["ALGORITHMS", "algorithm", "model_path", "normalizer_path", "policy", "train"]

VEC_ENVS = ("dummy", "subproc")


def policy(name: str) -> str:
    """Return the MLP policy of algorithm ``name`` (an LSTM one for RecurrentPPO)."""
    return "MlpLstmPolicy" if name == "RecurrentPPO" else "MlpPolicy"


def _make(
    env_id: str,
    algo: str,
    kwargs: dict[str, Any],
    view: str = "plain",
    on_episode: Callable[[dict[str, float]], None] | None = None,
) -> gym.Env:
    return rl_env(
        env_id,
        view=view,
        discrete_actions=algo == "DQN",
        binary_as_multidiscrete=algo == "RecurrentPPO",
        on_episode=on_episode,
        **kwargs,
    )


def training_env(
    env_id: str,
    algo: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    n_envs: int = 1,
    seed: int = 0,
    vec: str = "dummy",
    view: str = "plain",
    on_episode: Callable[[dict[str, float]], None] | None = None,
) -> Any:
    """Return ``n_envs`` copies of ``env_id`` adapted for ``algo``, in a stable-baselines3 VecEnv.

    Each copy is wrapped in SB3's ``Monitor`` (episode returns for the
    logs) and seeded ``seed + i``. ``vec="subproc"`` runs the copies in
    processes (worth it only when a step is expensive). ``view`` is the
    observation view of :func:`osfb_gym.wrappers.rl_env`. ``on_episode``
    receives each finished training episode's metrics (the evaluator's
    count of the experience consumed; :class:`osfb_gym.runner.EpisodeRecorder`).
    """
    require("stable_baselines3", "training_env")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    check_choice(algo, "algo", ALGORITHMS)
    check_choice(vec, "vec", VEC_ENVS)
    check_int(n_envs, "n_envs", minimum=1)
    factory = functools.partial(_make, env_id, algo, dict(env_kwargs or {}), view, on_episode)
    # fail here, with the env's own message, on a bad id or argument (no episode recorded)
    _make(env_id, algo, dict(env_kwargs or {}), view).close()
    return make_vec_env(
        factory,
        n_envs=n_envs,
        seed=seed,
        vec_env_cls=SubprocVecEnv if vec == "subproc" else DummyVecEnv,
    )


def train(
    env_id: str,
    algo: str = "PPO",
    *,
    total_timesteps: int,
    env_kwargs: dict[str, Any] | None = None,
    n_envs: int = 1,
    seed: int = 0,
    vec: str = "dummy",
    algo_kwargs: dict[str, Any] | None = None,
    tensorboard_log: str | Path | None = None,
    progress_bar: bool = False,
    callback: Any = None,
    torch_threads: int | None = None,
    normalize: bool = False,
    view: str = "plain",
    normalize_reward: bool = False,
    on_episode: Callable[[dict[str, float]], None] | None = None,
) -> Any:
    """Train ``algo`` on ``env_id`` for ``total_timesteps`` env steps; return the model.

    Parameters
    ----------
    env_id, env_kwargs
        The environment (set ``world_seed`` for the fixed-world regime).
    algo
        ``"PPO"``, ``"A2C"``, ``"DQN"`` or ``"RecurrentPPO"``.
    total_timesteps
        Env steps of experience (over all copies).
    n_envs, vec
        Parallel env copies and how they run (:func:`training_env`).
    seed
        Seeds the algorithm (torch, numpy) and the env copies.
    algo_kwargs
        Keyword arguments of the algorithm (e.g. ``{"n_steps": 256}``).
    tensorboard_log
        A folder for TensorBoard logs (needs the ``tensorboard`` package).
    progress_bar
        SB3's progress bar (it needs ``rich``, in the ``[rl]`` extra).
    callback
        An SB3 callback (e.g. evaluations for a learning curve).
    normalize
        Normalise observations with running statistics (SB3's
        ``VecNormalize``; rewards are left alone). The statistics travel
        with the model (``model.get_vec_normalize_env()``) and
        :class:`~agents.rl.SB3Agent` applies them, frozen, when it acts.
    normalize_reward
        Also scale rewards by a running estimate of the return's spread
        (``VecNormalize(norm_reward=True)``; training only, the scores are
        the env's own), for families whose rewards are far from unit scale.
    on_episode
        Receives each finished training episode's metrics
        (:class:`osfb_gym.runner.EpisodeRecorder`): the regret of the
        experience training consumed, which the policy never sees.
    view
        What the policy sees (:func:`osfb_gym.wrappers.rl_env`): ``"plain"``,
        ``"feedback"`` or ``"features"``. Score a model trained on a
        feedback or features view through the same view
        (:func:`osfb_gym.wrappers.apply_view`), which computes it from the
        agent's channels as the training env did.
    torch_threads
        Set torch's thread count (a process-wide setting; small MLPs on a
        few cores often run fastest on 1). None leaves it alone.

    Examples
    --------
    >>> import osfb_gym
    >>> model = train("AppleTasting-v0", "A2C", total_timesteps=50,
    ...               env_kwargs={"horizon": 20})
    >>> type(model).__name__, model.num_timesteps
    ('A2C', 50)
    """
    check_int(total_timesteps, "total_timesteps", minimum=1)
    algorithm_class = algorithm(algo)  # the one-line ImportError first, when [rl] is missing
    if tensorboard_log is not None:
        require_for_argument("tensorboard", "tensorboard_log")
    if progress_bar:
        require_for_argument("rich", "progress_bar=True (SB3's progress bar)")
    if torch_threads is not None:
        import torch

        torch.set_num_threads(check_int(torch_threads, "torch_threads", minimum=1))
    env = training_env(
        env_id, algo, env_kwargs=env_kwargs, n_envs=n_envs, seed=seed, vec=vec, view=view,
        on_episode=on_episode,
    )  # fmt: skip
    if normalize or normalize_reward:
        from stable_baselines3.common.vec_env import VecNormalize

        gamma = float((algo_kwargs or {}).get("gamma", 0.99))
        env = VecNormalize(env, norm_obs=normalize, norm_reward=normalize_reward, gamma=gamma)
    model = algorithm_class(
        policy(algo),
        env,
        seed=seed,
        device="cpu",
        verbose=0,
        tensorboard_log=None if tensorboard_log is None else str(tensorboard_log),
        **(algo_kwargs or {}),
    )
    model.learn(total_timesteps=total_timesteps, progress_bar=progress_bar, callback=callback)
    return model


def model_path(folder: str | Path, algo: str, env_id: str, seed: int) -> Path:
    """Return where ``osfb-bench train`` saves a model: ``<ALGO>_<env id>_seed<k>.zip``."""
    return Path(folder) / f"{algo}_{env_id}_seed{seed}.zip"
