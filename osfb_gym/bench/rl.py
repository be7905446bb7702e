"""Training stable-baselines3 agents on osfb-gym environments (docs/rl-training.md).

:func:`train` trains PPO, A2C, DQN or sb3-contrib's RecurrentPPO, TRPO or QR-DQN
(:data:`ALGORITHMS`) on copies of :func:`osfb_gym.wrappers.rl_env` (the oracle
hidden, the observation as a ``float32`` vector, ``Discrete`` actions for DQN and
QR-DQN) and returns the model;
:class:`agents.rl.SB3Agent` scores it on the plain env. With the env's
``world_seed`` set, every training episode is the same hidden world, learned
across episodes; with ``world_seed=None`` each episode is a new world, where
only adapting within an episode helps (a recurrent policy).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.rl import ALGORITHMS, algorithm, algorithm_info, normalizer_path
from osfb_gym.core.optional import require_for_argument
from osfb_gym.core.validation import check_choice, check_env_kwargs, check_int
from osfb_gym.wrappers import rl_env, rl_preset

__all__ = [
    "ALGORITHMS",
    "algorithm",
    "algorithm_info",
    "model_path",
    "normalizer_path",
    "save",
    "train",
]

#: ``train``'s choices of vector env (``"auto"``: native where it applies, else dummy)
VEC_ENVS = ("auto", "native", "dummy", "subproc")


def train(
    env_id: str,
    algo: str = "PPO",
    *,
    total_timesteps: int,
    env_kwargs: dict[str, Any] | None = None,
    n_envs: int = 1,
    seed: int = 0,
    vec: str = "auto",
    algo_kwargs: dict[str, Any] | None = None,
    tensorboard_log: str | Path | None = None,
    progress_bar: bool = False,
    callback: Any = None,
    torch_threads: int | None = None,
    normalize: bool = False,
    view: str | None = None,
    normalize_reward: bool = False,
    on_episode: Callable[[dict[str, float]], None] | None = None,
) -> Any:
    """Train ``algo`` on ``env_id`` for ``total_timesteps`` env steps; return the model.

    Parameters
    ----------
    env_id, env_kwargs
        The environment (set ``world_seed`` for the fixed-world regime).
    algo, algo_kwargs
        One of :data:`ALGORITHMS` (``"PPO"``, ``"A2C"``, ``"DQN"``,
        ``"RecurrentPPO"``, ``"TRPO"``, ``"QRDQN"``), and its arguments.
    n_envs, vec, seed
        Env copies, sub-env ``i`` seeded ``seed + i`` (``seed`` seeds the
        algorithm too), stepped by ``vec``: ``"native"`` the family's vector
        env (:func:`~osfb_gym.wrappers.sb3.make_sb3_vec_env`), ``"dummy"`` or
        ``"subproc"`` SB3's, ``"auto"`` native when ``n_envs > 1`` and it
        covers the arguments. Native and dummy train the same model (tested).
    tensorboard_log, progress_bar, callback, torch_threads
        TensorBoard's folder, a :func:`progress` bar, an SB3 callback, torch's
        process-wide threads (None: left alone).
    normalize, normalize_reward
        SB3's ``VecNormalize`` of observations (saved with the model, applied
        frozen by :class:`~agents.rl.SB3Agent`) and of rewards.
    view
        What the policy sees (:func:`~osfb_gym.wrappers.rl_env`); score through the same view.
        None: an RL-ready id's own (``OneSidedLending-RL-Feedback-v0``: ``"feedback"``,
        :func:`~osfb_gym.wrappers.rl_preset`), ``"plain"`` for a base id. A view other
        than an RL-ready id's is refused.
    on_episode
        Receives each finished training episode's metrics (by step, then
        sub-env), which the policy never sees; not with ``vec="subproc"``.

    Examples
    --------
    >>> import osfb_gym
    >>> model = train("AppleTasting-v0", "A2C", total_timesteps=50, env_kwargs={"horizon": 20})
    >>> type(model).__name__, model.num_timesteps
    ('A2C', 50)
    """
    check_int(total_timesteps, "total_timesteps", minimum=1)
    algorithm_class = algorithm(algo)  # the one-line ImportError first, when [rl] is missing
    _check_extras(tensorboard_log, torch_threads)
    env = _vec_env(
        env_id,
        algo,
        env_kwargs or {},
        n_envs=n_envs,
        seed=seed,
        vec=vec,
        view=view,
        normalize=(normalize, normalize_reward),
        gamma=float((algo_kwargs or {}).get("gamma", 0.99)),
        on_episode=on_episode,
    )
    try:
        model = algorithm_class(
            "MlpLstmPolicy" if algorithm_info(algo).recurrent else "MlpPolicy",
            env,
            seed=seed,
            device="cpu",
            verbose=0,
            tensorboard_log=None if tensorboard_log is None else str(tensorboard_log),
            **(algo_kwargs or {}),
        )
    except AssertionError as error:  # SB3 checks its arguments with asserts (n_steps x n_envs)
        raise ValueError(f"algo_kwargs: {algo} refuses {algo_kwargs or {}}: {error}") from error
    if progress_bar:
        callback = _with_bar(callback, progress(f"training {algo} on {env_id}", total_timesteps))
    model.learn(total_timesteps=total_timesteps, callback=callback)
    return model


def _with_bar(callback: Any, bar: Any) -> Any:
    """Return SB3's callback of ``callback`` (may be None) and the progress ``bar``."""
    from stable_baselines3.common.callbacks import CallbackList

    return bar if callback is None else CallbackList([callback, bar])


def _check_extras(tensorboard_log: str | Path | None, torch_threads: int | None) -> None:
    """Refuse TensorBoard's folder without its extra; set torch's thread count if given."""
    if tensorboard_log is not None:
        require_for_argument("tensorboard", "tensorboard_log")
    if torch_threads is not None:
        import torch

        torch.set_num_threads(check_int(torch_threads, "torch_threads", minimum=1))


def _vec_env(
    env_id: str,
    algo: str,
    env_kwargs: dict[str, Any],
    *,
    n_envs: int,
    seed: int,
    vec: str,
    view: str | None,
    normalize: tuple[bool, bool],
    gamma: float,
    on_episode: Callable[[dict[str, float]], None] | None,
) -> Any:
    """Return :func:`train`'s env copies: SB3's vector env of the view, normalised if asked."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize

    from osfb_gym.wrappers.sb3 import make_sb3_vec_env

    check_choice(vec, "vec", VEC_ENVS)
    check_int(n_envs, "n_envs", minimum=1)
    if vec == "subproc" and on_episode is not None:
        raise ValueError(
            "on_episode cannot be used with vec='subproc' (it would be called in the worker "
            "processes, and the metrics lost): use vec='native', 'auto' or 'dummy'"
        )
    base, preset = rl_preset(env_id)  # an RL-ready id's view and actions stay its own
    check_env_kwargs(base, env_kwargs, "env_kwargs")
    info = algorithm_info(algo)
    if info.discrete:
        _check_discrete(env_id, algo, env_kwargs)
    rl_kwargs = dict(
        view=preset.get("view", "plain") if view is None else view,
        discrete_actions=info.discrete or bool(preset.get("discrete_actions")),
        binary_as_multidiscrete=info.recurrent,
        **env_kwargs,
    )
    if preset and rl_kwargs["view"] != preset["view"]:
        raise ValueError(
            f"view={view!r} contradicts env_id {env_id!r}, which is the {preset['view']!r} "
            f"view: drop view, or train on the base id {base!r} with it"
        )
    rl_env(base, **rl_kwargs).close()  # fail here, with the env's own message
    env = make_sb3_vec_env(
        env_id,
        n_envs,
        seed,
        native={"auto": None, "native": True}.get(vec, False),
        vec_env_cls=SubprocVecEnv if vec == "subproc" else DummyVecEnv if vec == "dummy" else None,
        **rl_kwargs,
        **({} if on_episode is None else {"on_episode": on_episode}),
    )
    observations, rewards = normalize
    if observations or rewards:
        env = VecNormalize(env, norm_obs=observations, norm_reward=rewards, gamma=gamma)
    return env


def _check_discrete(env_id: str, algo: str, env_kwargs: dict[str, Any]) -> None:
    """Refuse DQN or QR-DQN on an RL-ready id whose actions are not ``Discrete``, naming its twin.

    A base id (``OneSidedLending-v0``) is made Discrete by :func:`rl_env`'s
    ``discrete_actions``, as its ``-Discrete`` twin is; an RL id names its action
    space, so DQN takes the twin.
    """
    import gymnasium as gym
    from gymnasium import spaces

    spec = gym.spec(env_id)
    if "env_id" not in spec.kwargs:
        return
    env = gym.make(env_id, **env_kwargs)
    space = env.action_space
    env.close()
    if not isinstance(space, spaces.Discrete):
        twin = env_id.replace("-v", "-Discrete-v") if "Discrete" not in env_id else env_id
        raise ValueError(
            f"env_id {env_id!r} has {space} actions; {algo} needs Discrete ones: use {twin!r}"
        )


def steps_taken(model: Any, total_timesteps: int) -> int:
    """Return the env steps ``model.learn(total_timesteps)`` takes: on-policy, whole rollouts.

    PPO, A2C, RecurrentPPO and TRPO collect ``n_steps`` steps in each of ``n_envs``
    envs before they stop, so they end at the next multiple of a rollout; other
    algorithms (DQN, QR-DQN) at ``total_timesteps``.
    """
    rollout = int(getattr(model, "n_steps", 0)) * int(getattr(model, "n_envs", 1))
    return -(-total_timesteps // rollout) * rollout if rollout > 0 else total_timesteps


def progress(desc: str, total_timesteps: int) -> Any:
    """Return an SB3 callback drawing a tqdm bar of the env steps a training run takes.

    The bar's total is the steps the run really takes (:func:`steps_taken`), so it
    ends at its total, e.g. ``10,240/10,240 step`` for PPO's default rollouts of 2,048
    asked for 10,000.
    """
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm.auto import tqdm

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            total = steps_taken(self.model, total_timesteps)
            self.bar = tqdm(total=total, desc=desc, unit="step", unit_scale=False)

        def _on_step(self) -> bool:
            self.bar.update(self.model.num_timesteps - self.bar.n)
            return True

        def _on_training_end(self) -> None:
            self.bar.total = max(self.bar.total, self.bar.n)  # never past its total
            self.bar.refresh()
            self.bar.close()

    return Progress()


def model_path(folder: str | Path, algo: str, env_id: str, seed: int) -> Path:
    """Return where ``osfb-bench train`` saves a model: ``<ALGO>_<env id>_seed<k>.zip``."""
    return Path(folder) / f"{algo}_{env_id}_seed{seed}.zip"


def save(model: Any, folder: str | Path, env_id: str, seed: int) -> Path:
    """Save ``model`` (and its ``VecNormalize`` statistics) where :meth:`SB3Agent.load` finds it.

    Returns the model's path (:func:`model_path`).
    """
    path = model_path(folder, type(model).__name__, env_id, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    if model.get_vec_normalize_env() is not None:
        model.get_vec_normalize_env().save(str(normalizer_path(path)))
    return path
