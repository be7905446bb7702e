"""The one table of osfb-gym environment ids, and idempotent registration.

Entry points are strings, so registering imports no environment module;
``import osfb_gym`` calls :func:`register_all`, and
``gym.make("osfb_gym:OneSidedLending-v0")`` works without that import
(Gymnasium imports ``osfb_gym`` first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


@dataclass(frozen=True)
class EnvEntry:
    """One registered environment.

    Attributes
    ----------
    id
        The Gymnasium id, ``Name-vN``.
    entry_point
        ``"module:Class"``, imported only when the env is made.
    family
        The environment family (the paper's setting) the id belongs to.
    kwargs
        Defaults passed to the constructor (overridable in ``gym.make``).
    max_episode_steps
        Gymnasium's time limit; None where the env's own ``horizon`` rules.
    vector_entry_point
        ``"module:Class"`` of a native vector env (``gym.make_vec``), if any.
    rl_views
        The observation views registered as RL-ready ids (see ``RL_ENVS``):
        ``"plain"`` works for any family; ``"features"`` and ``"feedback"``
        need the family's views (its package's ``views`` module, named by its
        Family record's ``views``), so a new family lists only ``("plain",)``
        until it has them.
    discrete_rl
        Whether the action space is not ``Discrete`` (lending's
        ``MultiBinary``, reject's ``MultiDiscrete``): each RL-ready id then
        has a twin ``...-Discrete-v0`` whose actions are
        :class:`~osfb_gym.wrappers.DiscreteActions`' codes, for the libraries
        that take ``Discrete`` actions only (CleanRL's ``ppo.py`` and
        ``dqn.py``, DQN).
    """

    id: str
    entry_point: str
    family: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    max_episode_steps: int | None = None
    vector_entry_point: str | None = None
    rl_views: tuple[str, ...] = ("plain", "features", "feedback")
    discrete_rl: bool = False


ENVS: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="OneSidedLending-v0",
        entry_point="osfb_gym.envs.lending:OneSidedLendingEnv",
        family="lending",
        # Gymnasium's SyncVectorEnv; lockstep=True: replicas of a paper's grid sharing a stream
        vector_entry_point="osfb_gym.envs.lending.vector:make_vector_env",
        discrete_rl=True,  # MultiBinary(batch_size): 2 ** batch_size codes (2 by default)
    ),
    EnvEntry(
        id="AppleTasting-v0",
        entry_point="osfb_gym.envs.apple:AppleTastingEnv",
        family="apple",
    ),
    EnvEntry(
        id="RejectOption-v0",
        entry_point="osfb_gym.envs.reject:RejectOptionEnv",
        family="reject",
        discrete_rl=True,  # MultiDiscrete([3, 2]): 6 codes
    ),
    EnvEntry(
        id="MultiServiceChoice-v0",
        entry_point="osfb_gym.envs.services:MultiServiceChoiceEnv",
        family="services",
    ),
    EnvEntry(
        id="MultiServiceChoice-Retention-v0",
        entry_point="osfb_gym.envs.services:MultiServiceChoiceRetentionEnv",
        family="services",
        rl_views=("plain",),  # the estimator views: a later change (the "dynamic" regime)
    ),
    EnvEntry(
        id="DelayedImpactLending-v0",
        entry_point="osfb_gym.envs.delayed_impact:DelayedImpactLendingEnv",
        family="delayed_impact",
        discrete_rl=True,  # MultiBinary(batch_size): 2 ** batch_size codes (2 by default)
    ),
)


#: family name -> ``"module:Name"`` of its :class:`~osfb_gym.core.family.Family` record,
#: which lives in the family's package (read through ``osfb_gym.core.family.FAMILIES``).
#: Each ``EnvEntry.family`` above names one of these; each record's ``env_id`` is in ``ENVS``.
FAMILY_RECORDS: dict[str, str] = {
    "lending": "osfb_gym.envs.lending:FAMILY",
    "apple": "osfb_gym.envs.apple:FAMILY",
    "reject": "osfb_gym.envs.reject:FAMILY",
    "services": "osfb_gym.envs.services:FAMILY",
    "delayed_impact": "osfb_gym.envs.delayed_impact:FAMILY",
}


#: RL-ready ids: each env above behind ``HideOracle`` with a ``float32``, bounded,
#: 1-D observation (:func:`osfb_gym.wrappers.rl_env`; ``view`` is overridable in
#: ``gym.make``). Kept apart from ``ENVS``: their oracle is hidden, so the runner,
#: the grader and the generic env suite, which read it, iterate ``ENVS`` alone.
RL_VIEW_SUFFIXES = {"plain": "RL", "features": "RL-Features", "feedback": "RL-Feedback"}
#: what the ``Discrete`` twin of an RL-ready id adds to its name (``discrete_rl``)
DISCRETE_SUFFIX = "Discrete"


#: base ids with a native vector env of their RL ids, every view and Discrete twin
#: (registered as their ``vector_entry_point``; keywords it does not cover fall
#: back to a sync env there)
NATIVE_RL_VECTOR = (
    "OneSidedLending-v0",
    "AppleTasting-v0",
    "RejectOption-v0",
    "DelayedImpactLending-v0",
    "MultiServiceChoice-v0",
    "MultiServiceChoice-Retention-v0",
)
_RL_VECTOR_ENTRY_POINT = "osfb_gym.wrappers.vector:make_rl_vector_env"


def rl_entries(entries: tuple[EnvEntry, ...]) -> tuple[EnvEntry, ...]:
    """Return the RL-ready entries of ``entries``: one per view each lists in ``rl_views``.

    An entry with ``discrete_rl`` gets a ``Discrete`` twin of each, right after it:
    ``<Name>-RL-Discrete-v0``, ``<Name>-RL-Features-Discrete-v0``, ...
    """
    out = []
    for entry in entries:
        for view, suffix in RL_VIEW_SUFFIXES.items():
            if view not in entry.rl_views:
                continue
            twins: list[tuple[str, dict[str, Any]]] = [(suffix, {})]
            if entry.discrete_rl:
                twins.append((f"{suffix}-{DISCRETE_SUFFIX}", {"discrete_actions": True}))
            for name, extra in twins:
                out.append(
                    EnvEntry(
                        id=entry.id.replace("-v0", f"-{name}-v0"),
                        entry_point="osfb_gym.wrappers:rl_env",
                        family=entry.family,
                        kwargs={"env_id": entry.id, "view": view, **extra},
                        vector_entry_point=_RL_VECTOR_ENTRY_POINT
                        if entry.id in NATIVE_RL_VECTOR
                        else None,
                    )
                )
    return tuple(out)


RL_ENVS: tuple[EnvEntry, ...] = rl_entries(ENVS)


def register_all() -> list[str]:
    """Register every id not registered yet (``RL_ENVS`` too); return the ids of ``ENVS``.

    Examples
    --------
    >>> "OneSidedLending-v0" in register_all()
    True
    """
    for entry in (*ENVS, *RL_ENVS):
        if entry.id not in gym.registry:
            gym.register(
                id=entry.id,
                entry_point=entry.entry_point,
                kwargs=dict(entry.kwargs),
                max_episode_steps=entry.max_episode_steps,
                vector_entry_point=entry.vector_entry_point,
            )
    return [entry.id for entry in ENVS]


def env_ids(family: str | None = None) -> list[str]:
    """Return the registered ids, optionally of one family."""
    return [entry.id for entry in ENVS if family is None or entry.family == family]


def rl_env_ids(family: str | None = None, *, discrete: bool | None = None) -> list[str]:
    """Return the RL-ready ids, optionally of one family.

    ``discrete=True`` keeps the ids whose action space is ``Discrete`` (the
    ``-Discrete`` twins, and every RL id of a family whose actions are
    ``Discrete`` already): the ids CleanRL's ``ppo.py`` and ``dqn.py`` take;
    ``discrete=False`` keeps the others; None (default) all.

    Examples
    --------
    >>> rl_env_ids("reject")  # doctest: +NORMALIZE_WHITESPACE
    ['RejectOption-RL-v0', 'RejectOption-RL-Discrete-v0', 'RejectOption-RL-Features-v0',
     'RejectOption-RL-Features-Discrete-v0', 'RejectOption-RL-Feedback-v0',
     'RejectOption-RL-Feedback-Discrete-v0']
    >>> rl_env_ids("apple", discrete=True) == rl_env_ids("apple")
    True
    """
    base = {entry.id: entry for entry in ENVS}
    ids = []
    for entry in RL_ENVS:
        if family is not None and entry.family != family:
            continue
        parent = base.get(entry.kwargs["env_id"])
        is_discrete = bool(entry.kwargs.get("discrete_actions")) or (
            parent is not None and not parent.discrete_rl
        )
        if discrete is None or discrete == is_discrete:
            ids.append(entry.id)
    return ids
