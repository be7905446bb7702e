"""How an agent says it runs as a replica: one of many agents in one lockstep vector episode.

A paper's grid is the same few agents at many hyperparameters on one
stream. Where an env offers a lockstep vector env (``gym.make_vec(id,
num_envs, lockstep=True)``: every sub-env reads one stream) and an agent
class a runner that decides for many agents at once, the suite engine runs a
setting's cells of one seed as one vector episode. The engine names no env
and no agent: it asks each cell's agent for its :class:`ReplicaSpec`
(``agent.replica_spec()``, None: the agent runs alone) and groups the
consecutive cells whose specs name the same runner and list the cell's env.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReplicaSpec:
    """How cells of an agent run as replicas of one lockstep vector episode.

    Parameters
    ----------
    runner
        ``"module:Name"`` of a callable that takes the agents (one per
        sub-env) and returns the object that decides for all of them:
        ``reset(observation_space, action_space, *, seeds, feedback)``,
        ``act(observations)`` and ``update(observations, actions, rewards,
        feedback)`` over the sub-env axis (what
        :func:`osfb_gym.runner.run_vector_episode` calls). Each agent's
        decisions and metrics must be those it makes alone (the runner's
        tests show it).
    env_ids
        The env ids whose lockstep vector env the runner drives.

    Examples
    --------
    >>> spec = ReplicaSpec("agents.lending._fast:CutoffReplicas", ("OneSidedLending-v0",))
    >>> spec.runs_on("OneSidedLending-v0"), spec.runs_on("CartPole-v1")
    (True, False)
    """

    runner: str
    env_ids: tuple[str, ...]

    def runs_on(self, env_id: str) -> bool:
        """Whether cells on ``env_id`` can run as replicas under this spec."""
        return env_id in self.env_ids


def replica_spec_of(agent: Any) -> ReplicaSpec | None:
    """Return ``agent.replica_spec()``, or None when the agent does not offer one."""
    method = getattr(agent, "replica_spec", None)
    spec = method() if callable(method) else None
    return spec if isinstance(spec, ReplicaSpec) else None
