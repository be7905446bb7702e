"""What an environment family is, in one place: the :class:`Family` record.

Sweeps tune and rank on a family's objective, tables show its columns,
plots draw its curve, the grader and the RL comparison score its reference
agents, the tests make its env small, ``osfb-bench list`` shows it. None of
them restates any of this: they read :data:`FAMILIES`.

Each record lives in its family's package (``osfb_gym/envs/<family>/family.py``,
exported as ``osfb_gym.envs.<family>.FAMILY``) and the env registry names it
(:data:`envs_registry.FAMILY_RECORDS`); this module keeps the type and the
lazy mapping, so the core contract imports no environment.

Agents and metrics are named by ``"module:Class"`` strings, so this module
(part of the core contract, imported by every env) imports neither.

One definition of the objective per family. Apple tasting is tuned and
ranked on its episode loss (``cumulative_loss``: gain lost on a missed
positive, cost paid on a tasted negative; lower is better), the quantity
the env's oracle defines; F1 is a secondary column. (Before this record one
table tuned it on the loss while two others scored it on F1, with opposite
polarity flags.)

Examples
--------
>>> FAMILIES["apple"].objective, FAMILIES["apple"].lower_is_better
('cumulative_loss', True)
>>> family_of("RejectOption-v0").name
'reject'
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


# eq=False: one record per family, hashed by identity (its kwargs are dicts)
@dataclass(frozen=True, eq=False)
class Family:
    """One environment family (the paper's setting).

    Attributes
    ----------
    name
        The family's name, as in the env registry (``EnvEntry.family``).
    env_id
        Its registered Gymnasium id.
    objective
        The episode metric agents are tuned and ranked on.
    lower_is_better
        Whether a lower ``objective`` is better.
    metrics
        ``"module:Class"`` of its :class:`~osfb_gym.core.metrics.EpisodeMetrics`.
    reference_agents
        ``"module:Class"`` of the papers' agents a submission is compared with.
    columns
        Metrics shown beside the objective in tables (means over seeds).
    curve
        The per-step curve reports plot: ``"average_loss"`` (``R_t / t``,
        the papers' figures) or ``"loss"`` (the oracle's per-step loss, e.g.
        the total loss after k services).
    curve_label, x_label
        Axis labels of that curve's plot.
    log_x
        Whether the plot's step axis is logarithmic.
    small_kwargs
        Env arguments that make an episode short, for tests.
    grade_kwargs
        Env arguments the grader uses by default.
    oracle_keys
        What ``info["oracle"]`` holds at a step (read only by the runner).
    oracle_objective_metric
        The episode metric holding the value of the objective under the best
        policy the oracle exposes, in the objective's units (reject:
        ``"bayes_risk"``, Chow's rule's risk; apple: ``"bayes_loss"``, the
        Bayes decision's expected loss, NaN on a dataset, where 0 is taken,
        a lower bound); None where that value is 0 (lending's Bayes decision
        has no one-sided loss). The RL comparison's regret is ``objective -
        oracle_objective_metric``, times the steps where
        ``objective_per_step``.
    objective_per_step
        Whether the objective is a per-step average (reject's ``average_risk``)
        rather than an episode's total.
    views
        ``"module:Class"`` of the family's :class:`~osfb_gym.core.views.FamilyViews`:
        the feedback block and estimator features of the RL observation views;
        None where the family has only the plain view.
    probe
        ``"module:function"`` of the family's no-leak probe,
        ``probe(env, action, extreme) -> bool``: before ``env.step(action)``, it sets
        every outcome ``action`` would leave hidden to an ``"low"`` or ``"high"``
        extreme (through the private attributes the env's "Hidden State" section
        documents) and says whether any was hidden. The generic tests run every
        episode twice, low and high, and require all an agent sees to be equal;
        None: the family cannot be checked, and those tests fail saying so.
    """

    name: str
    env_id: str
    objective: str
    lower_is_better: bool
    metrics: str
    reference_agents: tuple[str, ...]
    columns: tuple[str, ...] = ()
    curve: str = "average_loss"
    curve_label: str = "average loss R_t / t"
    x_label: str = "t"
    log_x: bool = True
    small_kwargs: dict[str, Any] = field(default_factory=dict)
    grade_kwargs: dict[str, Any] = field(default_factory=dict)
    oracle_keys: tuple[str, ...] = ("loss",)
    oracle_objective_metric: str | None = None
    objective_per_step: bool = False
    views: str | None = None
    probe: str | None = None

    @property
    def direction(self) -> str:
        """``"lower"`` or ``"higher"``: which way the objective improves."""
        return "lower" if self.lower_is_better else "higher"

    def metrics_class(self) -> type:
        """Import and return the family's metrics class."""
        return load(self.metrics)

    def reference_classes(self) -> list[type]:
        """Import and return the family's reference agent classes."""
        return [load(path) for path in self.reference_agents]


def load(path: str) -> Any:
    """Import ``"module:Name"`` and return the object.

    Examples
    --------
    >>> load("osfb_gym.core.family:Family").__name__
    'Family'
    """
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class _Families(Mapping[str, Family]):
    """The records :data:`envs_registry.FAMILY_RECORDS` names, imported on first use.

    Each family's package holds its record (``osfb_gym.envs.<family>:FAMILY``);
    the registry names where. Importing them here, at module level, would pull
    every environment into the core contract, so a record is imported (by its
    ``"module:Name"`` string, as metrics and agents are) when read; the
    registry's table and the package's record are read at every lookup, so
    nothing here can go stale (a test may add a family or change a record).
    """

    @staticmethod
    def _paths() -> dict[str, str]:
        from envs_registry import FAMILY_RECORDS

        return FAMILY_RECORDS

    def __getitem__(self, name: str) -> Family:
        path = self._paths()[name]
        record = load(path)  # (an imported module: a lookup in sys.modules)
        if not isinstance(record, Family) or record.name != name:
            raise TypeError(f"{path} must be the Family record named {name!r}, got {record!r}")
        return record

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._paths()))

    def __len__(self) -> int:
        return len(self._paths())

    def __repr__(self) -> str:
        return f"FAMILIES({', '.join(self._paths())})"


#: family name -> its :class:`Family` record (read from the family's package)
FAMILIES: Mapping[str, Family] = _Families()


def family_of(env_id: str) -> Family:
    """Return the :class:`Family` of a registered id; a ``ValueError`` names the known ids.

    The registry names each id's family (a family's own ``env_id`` or another
    id listed under it, such as ``MultiServiceChoice-Retention-v0``).
    """
    from envs_registry import ENVS

    for entry in ENVS:
        if entry.id == env_id and entry.family in FAMILIES:
            return FAMILIES[entry.family]
    known = ", ".join(entry.id for entry in ENVS)
    raise ValueError(f"env id {env_id!r} belongs to no family; known ids: {known}")
