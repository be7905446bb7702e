"""The Agent contract on scikit-learn's ``BaseEstimator``: the one module agents import from.

An agent stores its hyperparameters in ``__init__`` and nothing else;
learned state (trailing underscore) is created in :meth:`Agent.reset`.
``BaseEstimator`` gives ``get_params(deep=True)``, nested ``set_params``
(``LabelEfficient(MarginPerceptron()).set_params(base__m=5)``),
``sklearn.base.clone`` and the HTML repr in notebooks; a declarative table,
``_parameter_constraints`` (scikit-learn's own format), says what each
hyperparameter may be and is checked once per episode, at ``reset``.
:func:`check_agent` is the whole contract as one function, used by the
project's tests and by the grader.

The code lives in three modules, by responsibility, and every name is
re-exported here (``from agents.base import Agent, Interval, check_agent``):

- :mod:`agents.agent`: :class:`Agent`, :class:`NotResetError`, :func:`all_agents`;
- :mod:`agents.validation`: ``Interval`` and the other constraint types,
  and the checks of a step's inputs (:func:`check_finite`, :class:`SpaceCheck`, ...);
- :mod:`agents.checks`: the contract's named checks (:func:`check_agent`,
  :func:`yield_checks`, :func:`parametrize_with_checks`, :data:`AGENT_CHECKS`).
"""

from __future__ import annotations

from agents.agent import Agent, NotResetError, all_agents
from agents.checks import (
    AGENT_CHECKS,
    CHECK_STEPS,
    ENV_CHECKS,
    AgentContractError,
    NamedCheck,
    check_agent,
    check_clone,
    check_constraints_table,
    check_episode,
    check_hyperparameters,
    check_init_stores_only,
    check_pickle,
    check_reproducible,
    check_set_params,
    parametrize_with_checks,
    yield_checks,
)
from agents.validation import (
    Integral,
    Interval,
    Options,
    Real,
    SpaceCheck,
    StrOptions,
    check_finite,
    check_finite_numbers,
    check_seed,
    example_dim,
    float_array,
)

__all__ = [
    "AGENT_CHECKS",
    "CHECK_STEPS",
    "ENV_CHECKS",
    "Agent",
    "AgentContractError",
    "Integral",
    "Interval",
    "NamedCheck",
    "NotResetError",
    "Options",
    "Real",
    "SpaceCheck",
    "StrOptions",
    "all_agents",
    "check_agent",
    "check_clone",
    "check_constraints_table",
    "check_episode",
    "check_finite",
    "check_finite_numbers",
    "check_hyperparameters",
    "check_init_stores_only",
    "check_pickle",
    "check_reproducible",
    "check_seed",
    "check_set_params",
    "example_dim",
    "float_array",
    "parametrize_with_checks",
    "yield_checks",
]
