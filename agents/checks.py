"""The Agent contract as named checks: :func:`check_agent`, :func:`yield_checks`.

River's ``check_estimator`` and scikit-learn's ``parametrize_with_checks``:
each rule of the contract is one check that builds the agent afresh and
raises :class:`AgentContractError` naming the agent and the rule, so the
project's tests, the grader and a student's own tests check the same
contract. Re-exported by :mod:`agents.base`.

The checks, in the order :func:`check_agent` runs them:

1. ``hyperparameters``: ``__init__`` lists them as explicit keywords;
   the class can be built from them (a class: with no arguments);
2. ``init stores only``: ``__init__`` stores each hyperparameter
   unchanged under its own name (a class: the default itself) and sets
   nothing else;
3. ``constraints table``: ``_parameter_constraints`` names every
   hyperparameter and nothing else, and the values pass it
   (skipped with ``require_constraints=False``);
4. ``set_params``: an unknown name is refused with a ``ValueError``;
5. ``clone``: ``sklearn.base.clone`` gives the same class and equal
   parameters, twice over (idempotent), and the same repr;
6. ``episode on <id>``: for every id of ``env_ids``, a seeded episode
   of at most ``steps`` steps runs and every action is in the action
   space; the episode changes no hyperparameter, and a
   clone taken after it has no learned state;
7. ``reproducible on <id>``: a second run with the same seed gives the
   same actions;
8. ``pickle on <id>``: a pickled copy taken mid-episode acts as the
   original.
"""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

import gymnasium as gym
import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import validate_parameter_constraints

from agents.agent import Agent

__all__ = [
    "AGENT_CHECKS",
    "CHECK_STEPS",
    "ENV_CHECKS",
    "AgentContractError",
    "NamedCheck",
    "check_agent",
    "check_clone",
    "check_constraints_table",
    "check_episode",
    "check_hyperparameters",
    "check_init_stores_only",
    "check_pickle",
    "check_reproducible",
    "check_set_params",
    "parametrize_with_checks",
    "yield_checks",
]

CHECK_STEPS = 40  # steps of each checking episode (a TimeLimit on the env's own defaults)


class AgentContractError(AssertionError):
    """Raised by :func:`check_agent`: the message names the agent and the failed check.

    ``check`` is the failed check's name (``"hyperparameters"``, ``"clone"``,
    ``"episode on <id>"``, ...), ``reason`` the message without the prefix.
    """

    def __init__(self, name: str, check: str, reason: str) -> None:
        super().__init__(f"check_agent({name}): {check}: {reason}")
        self.check, self.reason = check, reason


def _fail(name: str, check: str, message: str) -> AgentContractError:
    return AgentContractError(name, check, message)


def _same(a: Any, b: Any) -> bool:
    """Whether two hyperparameter values, actions or observations are equal."""
    if hasattr(a, "get_params") and hasattr(b, "get_params"):
        return type(a) is type(b) and _same(a.get_params(deep=False), b.get_params(deep=False))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, np.ndarray | np.generic) or isinstance(b, np.ndarray | np.generic):
        return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b, equal_nan=True))
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    try:
        return bool(a == b) or (a != a and b != b)  # NaN equals NaN here
    except Exception:  # noqa: BLE001  (an object without a usable ==)
        return repr(a) == repr(b)


def _episode(
    agent: Agent, env: gym.Env, seed: int, steps: int | None = None
) -> tuple[list[Any], Any]:
    """Run ``agent`` on ``env`` (the oracle withheld); return its actions and last observation."""
    observation, info = env.reset(seed=seed)
    agent.reset(env.observation_space, env.action_space, seed=seed, feedback=info.get("feedback"))
    actions: list[Any] = []
    done = False
    while not done and (steps is None or len(actions) < steps):
        action = agent.act(observation)
        if not env.action_space.contains(np.asarray(action, dtype=env.action_space.dtype)):
            raise AssertionError(f"act() returned {action!r}, not in {env.action_space}")
        actions.append(action)
        next_observation, reward, terminated, truncated, info = env.step(action)
        agent.update(observation, action, float(reward), info.get("feedback"))
        observation, done = next_observation, terminated or truncated
    return actions, observation


class _Subject:
    """What a check is about: the agent's class, the instance given (if any) and its name."""

    def __init__(self, agent_or_class: Any) -> None:
        instance: Agent | None
        if isinstance(agent_or_class, type):
            if not issubclass(agent_or_class, Agent):
                raise _fail(
                    repr(agent_or_class), "is an Agent", "not a subclass of agents.base.Agent"
                )
            cls, instance = agent_or_class, None
        elif isinstance(agent_or_class, Agent):
            # (Agent derives from the untyped BaseEstimator, so mypy cannot narrow here)
            instance = cast(Agent, agent_or_class)
            cls = type(instance)
        else:
            raise _fail(repr(agent_or_class), "is an Agent", "not an agents.base.Agent")
        self.cls: type[Agent] = cls
        self.instance = instance
        self.name = cls.__name__

    def names(self) -> list[str]:
        """Return the hyperparameters' names (a failure is the ``hyperparameters`` check's)."""
        return list(_run(self.name, "hyperparameters", lambda: self.cls._get_param_names()))

    def build(self) -> Agent:
        """Build a fresh agent: the class's defaults, or the instance's hyperparameters."""
        cls, name = self.cls, self.name
        try:
            if self.instance is None:
                return cls()
            return cls(**self.instance.get_params(deep=False))
        except TypeError as error:
            raise _fail(
                name,
                "hyperparameters",
                f"{name}() cannot be built from its hyperparameters ({error}); give every "
                "hyperparameter of __init__ a default value, e.g. `def __init__(self, alpha=0.5):`",
            ) from error
        except Exception as error:  # noqa: BLE001  (the diagnosis: __init__ itself raises)
            raise _fail(
                name, "init raises", f"{name}() raised {type(error).__name__}: {error} in __init__"
            ) from error


def check_hyperparameters(agent_or_class: Agent | type[Agent]) -> None:
    """Check that ``__init__`` lists the hyperparameters as keywords, with which it builds."""
    subject = _Subject(agent_or_class)
    subject.names()
    subject.build()


def check_init_stores_only(agent_or_class: Agent | type[Agent]) -> None:
    """Check that ``__init__`` stores each hyperparameter unchanged, and nothing else."""
    subject = _Subject(agent_or_class)
    names, fresh, name = subject.names(), subject.build(), subject.name
    stored = vars(fresh)
    for param in names:
        if param not in stored:
            raise _fail(
                name,
                "init stores only",
                f"__init__ does not store {param} under its own name "
                f"(write `self.{param} = {param}`)",
            )
    extra = sorted(set(stored) - set(names))
    if extra:
        raise _fail(
            name,
            "init stores only",
            f"__init__ sets {', '.join('self.' + attribute for attribute in extra)}, which "
            "are not hyperparameters; __init__ only stores its arguments: create learned "
            "state (names ending in _, e.g. `self.w_`) in reset(), so every episode starts "
            "afresh",
        )
    if subject.instance is None:
        defaults = {
            param: value.default
            for param, value in inspect.signature(subject.cls.__init__).parameters.items()  # type: ignore[misc]
            if param in names
        }
        for param in names:
            if not (stored[param] is defaults[param] or _same(stored[param], defaults[param])):
                raise _fail(
                    name,
                    "init stores only",
                    f"{param} is {stored[param]!r} after {name}(), not its default "
                    f"{defaults[param]!r}: store hyperparameters unchanged",
                )


def check_constraints_table(agent_or_class: Agent | type[Agent]) -> None:
    """Check ``_parameter_constraints``: it names every hyperparameter, and the values pass."""
    subject = _Subject(agent_or_class)
    names, fresh, name, cls = subject.names(), subject.build(), subject.name, subject.cls
    table = set(cls._parameter_constraints)
    if table != set(names):
        missing, unknown = sorted(set(names) - table), sorted(table - set(names))
        raise _fail(
            name,
            "constraints table",
            f"_parameter_constraints must name every hyperparameter and nothing else; "
            f"missing {missing}, unknown {unknown}",
        )
    _run(
        name,
        "constraints table",
        lambda: validate_parameter_constraints(
            cls._parameter_constraints, fresh.get_params(deep=False), caller_name=name
        ),
    )


def check_set_params(agent_or_class: Agent | type[Agent]) -> None:
    """Check that ``set_params`` refuses an unknown hyperparameter with a ``ValueError``."""
    subject = _Subject(agent_or_class)
    fresh = subject.build()
    try:
        clone(fresh).set_params(no_such_hyperparameter=1)
    except ValueError:
        return
    raise _fail(subject.name, "set_params", "set_params(no_such_hyperparameter=1) was accepted")


def check_clone(agent_or_class: Agent | type[Agent]) -> None:
    """Check that ``sklearn.base.clone`` gives an equal agent (class, parameters, repr), twice."""
    subject = _Subject(agent_or_class)
    fresh, name = subject.build(), subject.name

    def clone_twice() -> tuple[Agent, Agent]:
        first = clone(fresh)
        return first, clone(first)

    for copy in _run(name, "clone", clone_twice):
        if type(copy) is not subject.cls or not _same(
            copy.get_params(deep=False), fresh.get_params(deep=False)
        ):
            raise _fail(name, "clone", f"clone gives {copy!r}, not {fresh!r}")
        if repr(copy) != repr(fresh):
            raise _fail(name, "clone", f"clone's repr {copy!r} differs from {fresh!r}")


@contextmanager
def _checking_env(
    env_id: str, env_kwargs: Mapping[str, Any] | None, steps: int
) -> Iterator[gym.Env]:
    """Make the env of a checking episode (at most ``steps`` steps); close it after the check."""
    # the id table only (agents stay below osfb_gym's envs); only episodes need it
    from envs_registry import register_all

    register_all()
    env = gym.make(env_id, max_episode_steps=steps, **dict(env_kwargs or {}))
    try:
        yield env
    finally:
        env.close()


def check_episode(
    agent_or_class: Agent | type[Agent],
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    steps: int = CHECK_STEPS,
) -> None:
    """Check that a seeded episode on ``env_id`` runs, every action in the action space.

    It changes no hyperparameter, and a clone taken after it keeps no learned state.
    """
    subject = _Subject(agent_or_class)
    fresh, name, check = subject.build(), subject.name, f"episode on {env_id}"
    agent = clone(fresh)
    before = agent.get_params(deep=False)
    with _checking_env(env_id, env_kwargs, steps) as env:
        actions, _ = _run(name, check, lambda: _episode(agent, env, seed=1))
    if not actions:
        raise _fail(name, check, "the episode had no step")
    if not _same(agent.get_params(deep=False), before):
        raise _fail(
            name,
            check,
            "the episode changed hyperparameters; keep what is learned in attributes ending in _",
        )
    learned = sorted(key for key in vars(clone(agent)) if key.endswith("_"))
    if learned:
        raise _fail(name, "clone", f"a clone after an episode keeps learned {learned}")


def check_reproducible(
    agent_or_class: Agent | type[Agent],
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    steps: int = CHECK_STEPS,
) -> None:
    """Check that two runs on ``env_id`` with the same seed give the same actions."""
    subject = _Subject(agent_or_class)
    fresh, name = subject.build(), subject.name
    check = f"reproducible on {env_id}"
    with _checking_env(env_id, env_kwargs, steps) as env:
        # (the first run is the episode check's: a failure in it is that check's)
        actions, _ = _run(name, f"episode on {env_id}", lambda: _episode(clone(fresh), env, seed=1))
        again, _ = _run(name, check, lambda: _episode(clone(fresh), env, seed=1))
    if len(again) != len(actions) or not all(
        _same(a, b) for a, b in zip(actions, again, strict=False)
    ):
        raise _fail(
            name,
            check,
            "two runs with seed 1 acted differently; draw randomness only from the "
            "generator reset(seed=...) makes (self.rng_)",
        )


def check_pickle(
    agent_or_class: Agent | type[Agent],
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    steps: int = CHECK_STEPS,
) -> None:
    """Check that a pickled copy taken mid-episode on ``env_id`` acts as the original."""
    subject = _Subject(agent_or_class)
    fresh, name = subject.build(), subject.name
    with _checking_env(env_id, env_kwargs, steps) as env:
        _run(name, f"pickle on {env_id}", lambda: _check_pickle(clone(fresh), env, steps))


_AGENT_FUNCTIONS: dict[str, Callable[[Any], None]] = {
    "hyperparameters": check_hyperparameters,
    "init stores only": check_init_stores_only,
    "constraints table": check_constraints_table,
    "set_params": check_set_params,
    "clone": check_clone,
}
_ENV_FUNCTIONS: dict[str, Callable[..., None]] = {
    "episode": check_episode,
    "reproducible": check_reproducible,
    "pickle": check_pickle,
}


#: The checks of the Agent contract, in the order :func:`check_agent` runs them:
#: (name, what passing means, whether ``require_constraints=False`` skips it).
#: The grader (:mod:`osfb_gym.grade.gradescope`) reports from this list.
AGENT_CHECKS: tuple[tuple[str, str, bool], ...] = (
    (
        "hyperparameters",
        "the class is built with no arguments: every hyperparameter has a default",
        False,
    ),
    (
        "init stores only",
        "__init__ stores each hyperparameter under its own name, nothing else",
        False,
    ),
    (
        "constraints table",
        "_parameter_constraints names every hyperparameter and nothing else; the values pass it",
        True,
    ),
    ("set_params", "set_params refuses an unknown hyperparameter", False),
    ("clone", "sklearn.base.clone gives an equal agent, twice over", False),
)
#: The checks run once per env id, named ``<name> on <env id>``: (name, what passing means).
ENV_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "episode",
        "a seeded episode runs, every action in the action space; it changes no "
        "hyperparameter and a clone after it keeps no learned state",
    ),
    ("reproducible", "two runs with the same seed give the same actions"),
    ("pickle", "a copy pickled mid-episode acts as the original"),
)


class NamedCheck:
    """One check of the Agent contract, callable on an agent (class or instance).

    ``name`` is the check's name as :class:`AgentContractError` reports it
    (``"clone"``, ``"episode on OneSidedLending-v0"``, ...); calling it
    returns None or raises :class:`AgentContractError`.
    """

    def __init__(self, name: str, function: Callable[..., None], **bound: Any) -> None:
        self.name, self._function, self._bound = name, function, bound

    def __call__(self, agent_or_class: Agent | type[Agent]) -> None:
        """Run the check on ``agent_or_class``: return None or raise :class:`AgentContractError`."""
        self._function(agent_or_class, **self._bound)

    def __repr__(self) -> str:
        return f"NamedCheck({self.name!r})"


def yield_checks(
    agent_or_class: Agent | type[Agent],
    *,
    env_ids: Sequence[str] | None = None,
    env_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    steps: int = CHECK_STEPS,
    require_constraints: bool = True,
) -> Iterator[NamedCheck]:
    """Yield the named checks of the Agent contract for an agent, in order.

    scikit-learn's ``_yield_all_checks`` and River's ``yield_checks``: each
    check is one rule and runs on its own (it builds the agent afresh), so a
    test can give each one its own id (:func:`parametrize_with_checks`) and
    the grader can report them one by one. :func:`check_agent` runs them
    all. The parameters are :func:`check_agent`'s.

    Examples
    --------
    >>> from agents.lending import Greedy
    >>> [check.name for check in yield_checks(Greedy, env_ids=())]
    ['hyperparameters', 'init stores only', 'constraints table', 'set_params', 'clone']
    """
    subject = _Subject(agent_or_class)
    name, cls = subject.name, subject.cls
    for check, _, optional in AGENT_CHECKS:
        if require_constraints or not optional:
            yield NamedCheck(check, _AGENT_FUNCTIONS[check])
    # (after the agent's own checks, as check_agent always reported them first)
    if env_ids is None:
        if not cls.env_ids:
            raise _fail(name, "env_ids", "declares no env_ids (the envs it is made for)")
        env_ids = cls.env_ids
    elif isinstance(env_ids, str) or not set(env_ids) <= set(cls.env_ids):
        raise ValueError(f"env_ids must be a list of ids among {name}.env_ids, got {env_ids!r}")
    kwargs_by_id = dict(env_kwargs or {})
    for env_id in env_ids:
        for check, _ in ENV_CHECKS:
            yield NamedCheck(
                f"{check} on {env_id}",
                _ENV_FUNCTIONS[check],
                env_id=env_id,
                env_kwargs=kwargs_by_id.get(env_id, {}),
                steps=steps,
            )


def parametrize_with_checks(
    agents: Sequence[Agent | type[Agent]],
    *,
    env_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    steps: int = CHECK_STEPS,
    require_constraints: bool = True,
) -> Any:
    """Return a ``pytest.mark.parametrize`` over (agent, check): one test id per pair.

    scikit-learn's ``parametrize_with_checks``: the test takes ``agent``
    and ``check`` and calls ``check(agent)``; ids read ``<Agent>-<check>``.
    Needs pytest (imported here only).

    Examples
    --------
    >>> from agents.lending import Greedy
    >>> @parametrize_with_checks([Greedy])  # doctest: +SKIP
    ... def test_contract(agent, check):
    ...     check(agent)
    """
    import pytest

    def label(agent: Any, check: NamedCheck) -> str:
        owner = agent.__name__ if isinstance(agent, type) else repr(agent)
        return f"{owner}-{check.name}"

    return pytest.mark.parametrize(
        ("agent", "check"),
        [
            pytest.param(agent, check, id=label(agent, check))
            for agent in agents
            for check in yield_checks(
                agent, env_kwargs=env_kwargs, steps=steps, require_constraints=require_constraints
            )
        ],
    )


def check_agent(
    agent_or_class: Agent | type[Agent],
    *,
    env_ids: Sequence[str] | None = None,
    env_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    steps: int = CHECK_STEPS,
    require_constraints: bool = True,
) -> Agent:
    """Check an agent (class or instance) against the Agent contract; raise on the first failure.

    River's ``check_estimator`` idea: one function runs every check (the
    named checks of :func:`yield_checks`, listed in :data:`AGENT_CHECKS` and
    :data:`ENV_CHECKS`; the module's docstring says what each asks), so the
    project's tests, the grader and a student's own tests check the same
    contract. For a class, the checks build it with its defaults; for an
    instance (e.g. a wrapper around a trained model), with its
    hyperparameters.

    Parameters
    ----------
    agent_or_class
        An :class:`Agent` subclass or instance.
    env_ids
        The envs to run episodes on (each among the class's ``env_ids``);
        None: every id of the class's ``env_ids`` (there must be one); empty:
        no episode, checks 1-5 only (what the grader checks before running
        its own episodes in a sandbox).
    env_kwargs
        Keyword arguments of ``gym.make`` per env id (e.g. small sizes);
        ids not named get the registered defaults.
    steps
        Most steps of each checking episode.
    require_constraints
        Whether the ``constraints table`` check runs (the project's agents:
        yes; a student's agent may leave the table out).

    Returns
    -------
    Agent
        The checked agent, built from the class's defaults (or the
        instance's hyperparameters), never run.

    Raises
    ------
    AgentContractError
        An ``AssertionError`` naming the agent and the failed check.

    Examples
    --------
    >>> from agents.lending import Greedy
    >>> check_agent(Greedy, env_kwargs={"OneSidedLending-v0": {"horizon": 20}})
    Greedy()
    >>> class Forgetful(Greedy):
    ...     def __init__(self, l2: float = 1.0, solver: str = "incremental"):
    ...         self.l2 = l2
    >>> check_agent(Forgetful)
    Traceback (most recent call last):
    ...
    agents.checks.AgentContractError: check_agent(Forgetful): init stores only: __init__ does not \
store solver under its own name (write `self.solver = solver`)
    """
    subject = _Subject(agent_or_class)
    for check in yield_checks(
        agent_or_class,
        env_ids=env_ids,
        env_kwargs=env_kwargs,
        steps=steps,
        require_constraints=require_constraints,
    ):
        check(agent_or_class)
    return subject.build()


def _run(name: str, check: str, body: Callable[[], Any]) -> Any:
    try:
        return body()
    except AgentContractError:
        raise
    except Exception as error:  # noqa: BLE001  (any failure is the check's diagnosis)
        raise _fail(name, check, f"{type(error).__name__}: {error}") from error


def _check_pickle(agent: Agent, env: gym.Env, steps: int) -> None:
    """Pickle ``agent`` mid-episode; the copy must act as the original on the next observation."""
    _, observation = _episode(agent, env, seed=2, steps=max(1, min(5, steps - 1)))
    copy = pickle.loads(pickle.dumps(agent))
    if not _same(agent.act(observation), copy.act(observation)):
        raise AssertionError("a pickled copy acts differently from the original")
