"""The one loop that drives an agent in an environment, and evaluation over seeds.

This module is the only place that reads ``info["oracle"]``: it feeds the
episode metrics and the per-step loss, and hands the agent ``info`` with
the oracle stripped (the agent's ``update`` receives the feedback alone).
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Literal, cast, overload

import gymnasium as gym
import numpy as np
import pandas as pd

from agents.base import Agent
from osfb_gym.core.channels import FEEDBACK, ORACLE, strip_oracle
from osfb_gym.core.env import FeedbackEnv
from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.seeding import spawn_seed
from osfb_gym.core.validation import check_bool, check_env_kwargs, check_int

AGENT_STREAM = 1


@dataclass
class Trajectory:
    """What happened in one episode, step by step, and its summary.

    Attributes
    ----------
    rewards
        Reward of each step.
    oracle_loss
        The family's loss or regret term of each step (``oracle["loss"]``).
    actions
        Action of each step, stacked.
    n_revealed
        Number of outcomes each step revealed.
    metrics
        The family's episode metrics.
    curves
        The family's per-step curves (e.g. running rates of reject option).
    seed
        The reset seed of the episode.
    """

    rewards: np.ndarray
    oracle_loss: np.ndarray
    actions: np.ndarray
    n_revealed: np.ndarray
    metrics: dict[str, float] = field(default_factory=dict)
    seed: int | None = None
    curves: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def cumulative_loss(self) -> np.ndarray:
        """``R_t``, the running sum of the oracle loss."""
        return np.cumsum(self.oracle_loss)

    @property
    def average_loss(self) -> np.ndarray:
        """``R_t / t``, the curve of the papers' figures."""
        return self.cumulative_loss / np.arange(1, self.oracle_loss.size + 1)


def check_env(env: Any, caller: str) -> gym.Env:
    """Return ``env`` if it is a Gymnasium env (wrappers included); else raise naming it."""
    if not isinstance(env, gym.Env):
        raise TypeError(
            f"{caller}: env must be a gymnasium Env (e.g. gym.make('OneSidedLending-v0')), "
            f"got {env!r:.80} ({type(env).__name__})"
        )
    return env


def check_agent_like(agent: Any, caller: str) -> Any:
    """Return ``agent`` if it has the Agent methods (an instance, not a class); else raise."""
    missing = [
        name for name in ("reset", "act", "update") if not callable(getattr(agent, name, None))
    ]
    if isinstance(agent, type) or missing:
        what = "a class, not an instance" if isinstance(agent, type) else f"no {', '.join(missing)}"
        raise TypeError(
            f"{caller}: agent must be an agents.base.Agent instance (e.g. Greedy()), got "
            f"{agent!r:.80} ({what})"
        )
    return agent


def _no_oracle(env: gym.Env | gym.vector.VectorEnv) -> ValueError:
    return ValueError(
        f"run_episode scores from info['oracle'], which {env} does not give: pass the osfb-gym "
        "env itself (HideOracle and the RL views strip the oracle; the runner strips it "
        "before the agent sees info)"
    )


def _metrics_for(env: gym.Env) -> EpisodeMetrics:
    unwrapped = env.unwrapped
    if isinstance(unwrapped, FeedbackEnv):
        return unwrapped.metrics_class()
    return EpisodeMetrics()


@dataclass
class _Steps:
    """What both loops keep of each step: reward, oracle loss, action, outcomes revealed.

    Lists for one env; :class:`_StepColumns` (blocks of steps) for a vector env.
    """

    rewards: Any = field(default_factory=list)
    losses: Any = field(default_factory=list)
    actions: Any = field(default_factory=list)
    revealed: Any = field(default_factory=list)


def _play(
    env: gym.Env | gym.vector.VectorEnv,
    agent: Any,
    obs: Any,
    metrics: EpisodeMetrics,
    steps: _Steps,
    *,
    vector: bool,
    max_steps: int | None = None,
) -> _Steps:
    """Step ``agent`` in ``env`` from ``obs`` to the episode's end; return what each step gave.

    The per-step bookkeeping of :func:`run_episode` (``vector=False``: one
    env, a float reward) and :func:`run_vector_episode` (``vector=True``:
    arrays over the sub-env axis, whose episodes must end together): the
    agent learns from the feedback, the metrics from the oracle, which the
    agent never sees.
    """
    played = 0
    while max_steps is None or played < max_steps:
        played += 1
        action = agent.act(obs)
        next_obs, step_reward, terminated, truncated, info = env.step(action)
        oracle = info.get(ORACLE)
        if oracle is None:
            raise _no_oracle(env)
        feedback = info[FEEDBACK]
        reward: Any = step_reward if vector else float(step_reward)
        agent.update(obs, action, reward, feedback)
        metrics.update(action, reward, feedback, oracle)
        steps.rewards.append(reward)
        if vector:
            steps.losses.append(oracle["loss"])
            steps.actions.append(action)
            # count_nonzero(axis=1)'s own sum, without its wrapper (a call per step)
            revealed = np.asarray(feedback["revealed"], dtype=bool)
            steps.revealed.append(revealed.sum(axis=1, dtype=np.intp))
        else:
            steps.losses.append(float(oracle["loss"]))
            steps.actions.append(np.asarray(action))
            steps.revealed.append(int(np.count_nonzero(feedback["revealed"])))
        obs = next_obs
        if _ended(terminated, truncated, vector):
            break
    return steps


def _ended(terminated: Any, truncated: Any, vector: bool) -> bool:
    """Whether the episode ended; a vector env's sub-envs must end together."""
    if not vector:
        return bool(terminated or truncated)
    done = np.asarray(terminated) | np.asarray(truncated)
    if done.all():
        return True
    if done.any():
        raise RuntimeError(
            "run_vector_episode needs sub-env episodes that end together; "
            f"sub-envs {np.flatnonzero(done).tolist()} ended alone"
        )
    return False


def run_episode(
    env: gym.Env,
    agent: Agent,
    seed: int,
    *,
    max_steps: int | None = None,
    reset_agent: bool = True,
) -> Trajectory:
    """Run ``agent`` for one episode of ``env`` from ``reset(seed=seed)``.

    The agent is reset with an independent seed derived from ``seed`` and
    with the reset's ``info["feedback"]``; each step it acts on the
    observation and then learns from ``(obs, action, reward, feedback)``.

    Parameters
    ----------
    env
        An osfb-gym environment (any wrappers allowed).
    agent
        The agent; it is reset here, so a fitted one starts afresh.
    seed
        Reset seed of the environment.
    max_steps
        Stop after this many steps even if the episode goes on.
    reset_agent
        Reset the agent (the default). False keeps what it learned in
        earlier episodes (and ignores this reset's warm start): the
        equal-experience regime of an RL agent trained over many episodes
        of a fixed world (:func:`evaluate` with ``keep_agent=True``).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from agents.lending import Greedy
    >>> trajectory = run_episode(gym.make("OneSidedLending-v0", horizon=5), Greedy(), seed=1)
    >>> len(trajectory.rewards), trajectory.metrics["steps"]
    (5, 5.0)
    """
    check_env(env, "run_episode")
    check_agent_like(agent, "run_episode")
    check_int(seed, "seed", minimum=0)
    if max_steps is not None:
        check_int(max_steps, "max_steps", minimum=1)
    reset_agent = check_bool(reset_agent, "reset_agent")
    obs, info = env.reset(seed=seed)
    if reset_agent:
        agent.reset(
            env.observation_space,
            env.action_space,
            seed=spawn_seed(seed, AGENT_STREAM),
            feedback=info.get(FEEDBACK),
        )
    metrics = _metrics_for(env)
    steps = _play(env, agent, obs, metrics, _Steps(), vector=False, max_steps=max_steps)
    return Trajectory(
        rewards=np.asarray(steps.rewards),
        oracle_loss=np.asarray(steps.losses),
        actions=np.stack(steps.actions) if steps.actions else np.empty(0),
        n_revealed=np.asarray(steps.revealed),
        metrics=metrics.get(),
        seed=seed,
        curves=metrics.curves(),
    )


def run_vector_episode(
    envs: gym.vector.VectorEnv, agent: Any, seed: int | Sequence[int]
) -> list[Trajectory]:
    """Run one lockstep episode per sub-env of ``envs``; sub-env ``i`` is decided by replica ``i``.

    The vector counterpart of :func:`run_episode`, for sub-envs whose
    episodes end together, best the lockstep replicas that share a stream
    (``gym.make_vec("OneSidedLending-v0", num_envs, lockstep=True)``), and
    an agent that decides for all sub-envs at once
    (:class:`~agents.lending.CutoffReplicas`). The agent gets
    the feedback and never the oracle; each replica's seed is derived from
    its sub-env's reset seed as :func:`run_episode` derives it.

    Parameters
    ----------
    envs
        The vector env.
    agent
        ``reset(single_observation_space, single_action_space, seeds=, feedback=)``,
        ``act(observations) -> actions`` and ``update(observations, actions,
        rewards, feedback)``, each over the sub-env axis.
    seed
        One reset seed for every sub-env (replicas of one episode), or one
        per sub-env.

    Returns
    -------
    list[Trajectory]
        One per sub-env, as :func:`run_episode` would return it.
    """
    given = [seed] * envs.num_envs if isinstance(seed, Integral) else cast("Sequence[int]", seed)
    seeds = [check_int(value, "seed", minimum=0) for value in given]
    metrics_class = getattr(envs.unwrapped, "metrics_class", None)
    if metrics_class is None:  # Gymnasium's SyncVectorEnv: its sub-envs' class
        sub_envs = getattr(envs, "envs", None)
        metrics_class = (
            getattr(sub_envs[0].unwrapped, "metrics_class", EpisodeMetrics)
            if sub_envs
            else EpisodeMetrics
        )
    metrics = metrics_class(num_envs=envs.num_envs)
    obs, info = envs.reset(seed=seeds)  # type: ignore[arg-type]  # a seed per sub-env
    agent.reset(
        envs.single_observation_space,
        envs.single_action_space,
        seeds=[spawn_seed(value, AGENT_STREAM) for value in seeds],
        feedback=info[FEEDBACK],
    )
    steps = _Steps(*(_StepColumns(envs.num_envs) for _ in range(4)))
    _play(envs, agent, obs, metrics, steps, vector=True)
    summaries = metrics_class.split(metrics.get())
    stacked = [
        columns.join() for columns in (steps.rewards, steps.losses, steps.actions, steps.revealed)
    ]
    return [
        Trajectory(
            rewards=np.asarray(stacked[0][index], dtype=float),
            oracle_loss=np.asarray(stacked[1][index], dtype=float),
            actions=stacked[2][index],
            n_revealed=stacked[3][index],
            metrics=summaries[index],
            seed=seeds[index],
        )
        for index in range(envs.num_envs)
    ]


class _StepColumns:
    """Per-step arrays of every sub-env, written into one (sub-env, step, ...) array.

    ``join()`` gives what ``np.stack(values, axis=1)`` of the appended arrays
    gives (the same dtype and values). The array is an anonymous memory map
    that doubles when full: a page costs memory once written, and a map given
    up on growing returns to the system at once, where a heap block may stay
    held. A paper's grid (85 sub-envs, 46,400 steps) so holds each kind once:
    not one array object per step, nor blocks and then their join.
    """

    START = 4096  # steps the first map holds

    def __init__(self, num_envs: int) -> None:
        self._num_envs = num_envs
        self._array: np.ndarray | None = None
        self._used = 0

    def append(self, values: Any) -> None:
        """Add one step's values (shape (num_envs, ...))."""
        values = np.asarray(values)
        array = self._array
        if array is None or self._used == array.shape[1] or values.dtype != array.dtype:
            array = self._grow(values)
        array[:, self._used] = values
        self._used += 1

    def _grow(self, values: np.ndarray) -> np.ndarray:
        """Move to a map with room for the next step and ``values``' dtype (promoted, not cast)."""
        old = self._array
        dtype = values.dtype if old is None else np.result_type(old.dtype, values.dtype)
        if old is not None and self._used < old.shape[1] and dtype == old.dtype:
            return old  # a dtype that casts safely into the map's
        steps = self.START if old is None else old.shape[1] * (2 if self._used else 1)
        shape = (self._num_envs, steps, *values.shape[1:])
        size = int(np.prod(shape)) * dtype.itemsize
        array = np.frombuffer(
            mmap.mmap(-1, max(size, 1)), dtype=dtype, count=size // dtype.itemsize
        )
        array = array.reshape(shape)
        if old is not None:
            array[:, : self._used] = old[:, : self._used]
        self._array = array
        return array

    def join(self) -> np.ndarray:
        """Return the steps as one (num_envs, steps, ...) array (a view of the map)."""
        if self._array is None:
            return np.empty((self._num_envs, 0))
        array, self._array = self._array, None
        return array[:, : self._used]


EnvSource = str | gym.Env | Callable[[], gym.Env]


def _make_env(env: EnvSource, env_kwargs: dict[str, Any] | None) -> gym.Env:
    if env_kwargs is not None and not isinstance(env_kwargs, dict):
        raise TypeError(f"env_kwargs must be a dict or None, got {env_kwargs!r}")
    if isinstance(env, str):
        check_env_kwargs(env, env_kwargs or {}, "env_kwargs")  # names those the env takes
        return gym.make(env, **(env_kwargs or {}))
    if env_kwargs:
        raise ValueError("env_kwargs can only be given with an env id (a string)")
    if isinstance(env, gym.Env):
        return env
    if not callable(env):
        raise TypeError(
            f"evaluate: env must be an env id, a gymnasium Env or a function making one, got "
            f"{env!r:.80} ({type(env).__name__})"
        )
    return check_env(env(), "evaluate: the env factory's result")


@overload
def evaluate(
    env: EnvSource,
    agent: Agent,
    seeds: Iterable[int],
    *,
    env_kwargs: dict[str, Any] | None = None,
    return_trajectories: Literal[False] = False,
    keep_agent: bool = False,
) -> pd.DataFrame: ...


@overload
def evaluate(
    env: EnvSource,
    agent: Agent,
    seeds: Iterable[int],
    *,
    env_kwargs: dict[str, Any] | None = None,
    return_trajectories: Literal[True],
    keep_agent: bool = False,
) -> tuple[pd.DataFrame, list[Trajectory]]: ...


def evaluate(
    env: EnvSource,
    agent: Agent,
    seeds: Iterable[int],
    *,
    env_kwargs: dict[str, Any] | None = None,
    return_trajectories: bool = False,
    keep_agent: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, list[Trajectory]]:
    """Run a fresh clone of ``agent`` for one episode per seed (or one clone for them all).

    Parameters
    ----------
    env
        An env id (made once with ``env_kwargs``), an env, or a factory.
    agent
        The agent; each seed gets ``agent.clone()``.
    seeds
        Reset seeds, one episode each.
    env_kwargs
        Keyword arguments for ``gym.make`` when ``env`` is an id.
    return_trajectories
        Also return the list of :class:`Trajectory`.
    keep_agent
        One clone plays every episode in ``seeds`` order, keeping what it
        learned (reset once, before the first): the experience an RL agent
        gets from training on a fixed world. Needs a fixed world
        (``world_seed`` an int).

    Returns
    -------
    pandas.DataFrame
        One row per seed: ``seed``, ``agent`` and the episode metrics.

    Examples
    --------
    >>> import osfb_gym
    >>> from agents.lending import Greedy
    >>> frame = evaluate("OneSidedLending-v0", Greedy(), seeds=[0, 1], env_kwargs={"horizon": 5})
    >>> frame[["seed", "agent", "steps"]].to_dict("list")
    {'seed': [0, 1], 'agent': ['Greedy', 'Greedy'], 'steps': [5.0, 5.0]}
    """
    check_agent_like(agent, "evaluate")
    return_trajectories = check_bool(return_trajectories, "return_trajectories")
    keep_agent = check_bool(keep_agent, "keep_agent")
    if isinstance(seeds, str) or not isinstance(seeds, Iterable):
        raise TypeError(f"evaluate: seeds must be an iterable of integers, got {seeds!r:.80}")
    environment = _make_env(env, env_kwargs)
    if keep_agent and getattr(environment.unwrapped, "world_seed", None) is None:
        raise ValueError(
            "keep_agent=True needs a fixed world (an env with world_seed=int): across "
            "resampled worlds what the agent learned would not carry over"
        )
    rows, trajectories = [], []
    player = agent.clone()
    try:
        for index, seed in enumerate(seeds):
            if not keep_agent:
                player = agent.clone()
            trajectory = run_episode(
                environment, player, seed, reset_agent=index == 0 or not keep_agent
            )
            rows.append({"seed": seed, "agent": type(agent).__name__, **trajectory.metrics})
            if return_trajectories:
                trajectories.append(trajectory)
    finally:
        if environment is not env:
            environment.close()
    frame = pd.DataFrame(rows)
    return (frame, trajectories) if return_trajectories else frame


class EpisodeRecorder(gym.Wrapper):
    """Score the episodes an RL library drives, as :func:`run_episode` scores them; hide the oracle.

    The training-time counterpart of :func:`run_episode`: a library such as
    stable-baselines3 runs its own loop, so the experience it consumes (the
    regret of its training episodes) would go unmeasured. Put this wrapper
    right on the env, below :class:`~osfb_gym.core.channels.HideOracle`'s
    place: each step it feeds the family's episode metrics from the
    oracle (as :func:`run_episode` does), strips the oracle from ``info``
    and, when an episode ends, calls ``on_episode(metrics)``. Nothing
    hidden is kept where the library could read it: the metrics go to the
    evaluator's callback, the wrapper holds no public attribute.

    Examples
    --------
    >>> import osfb_gym
    >>> episodes = []
    >>> env = EpisodeRecorder(gym.make("AppleTasting-v0", horizon=3), episodes.append)
    >>> _, info = env.reset(seed=0)
    >>> for _ in range(3):
    ...     _, _, _, _, info = env.step(1)
    >>> "oracle" in info, episodes[0]["steps"]
    (False, 3.0)
    """

    def __init__(self, env: gym.Env, on_episode: Callable[[dict[str, float]], None]) -> None:
        super().__init__(env)
        if not callable(on_episode):
            raise TypeError(f"on_episode must be callable, got {on_episode!r}")
        self._on_episode = on_episode
        self._metrics: EpisodeMetrics | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset the env and the episode's metrics; the oracle is stripped from ``info``."""
        obs, info = self.env.reset(**kwargs)
        self._metrics = _metrics_for(self.env)
        return obs, strip_oracle(info)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Step, feed the metrics from the oracle, strip it; report them at an episode end."""
        if self._metrics is None:
            raise RuntimeError("EpisodeRecorder: call reset() before step()")
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._metrics.update(action, float(reward), info[FEEDBACK], info[ORACLE])
        if terminated or truncated:
            self._on_episode(self._metrics.get())
            self._metrics = None
        return obs, reward, terminated, truncated, strip_oracle(info)
