"""What an environment family is, in one place: the :class:`Family` record.

Sweeps tune and rank on a family's objective, tables show its columns,
plots draw its curve, the grader and the RL comparison score its reference
agents, the tests make its env small, ``osfb-bench list`` shows it. None of
them restates any of this: they read :data:`FAMILIES`.

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


FAMILIES: dict[str, Family] = {
    "lending": Family(
        name="lending",
        env_id="OneSidedLending-v0",
        objective="cumulative_loss",
        lower_is_better=True,
        metrics="osfb_gym.envs.lending:LendingMetrics",
        reference_agents=("agents.lending:Greedy", "agents.lending:Adaptive"),
        columns=("approval_rate", "bayes_agreement"),
        small_kwargs={"horizon": 30, "batch_size": 4},
        oracle_keys=("mu", "y", "bayes_action", "loss"),
    ),
    "apple": Family(
        name="apple",
        env_id="AppleTasting-v0",
        objective="cumulative_loss",
        lower_is_better=True,
        metrics="osfb_gym.envs.apple:AppleMetrics",
        reference_agents=(
            "agents.apple:Perceptron",
            "agents.apple:MarginPerceptron",
            "agents.apple:LabelEfficient",
        ),
        columns=("f1", "label_requests"),
        small_kwargs={"horizon": 50},
        oracle_keys=("y", "mistake", "loss"),
    ),
    "reject": Family(
        name="reject",
        env_id="RejectOption-v0",
        objective="average_risk",
        lower_is_better=True,
        metrics="osfb_gym.envs.reject:RejectMetrics",
        reference_agents=("agents.reject:DSOL", "agents.reject:DRAL", "agents.reject:DSAL"),
        columns=("rejection_rate", "query_rate"),
        small_kwargs={"horizon": 50},
        grade_kwargs={"horizon": 2000},
        oracle_keys=("y", "loss", "risk", "misclassified", "rejected", "bayes_risk"),
    ),
    "services": Family(
        name="services",
        env_id="MultiServiceChoice-v0",
        objective="total_loss",
        lower_is_better=True,
        metrics="osfb_gym.envs.services:ServiceMetrics",
        reference_agents=("agents.services:Uniform", "agents.services:AcQUIre"),
        columns=("fairness", "approximation_ratio"),
        curve="loss",
        curve_label="total loss after k services",
        x_label="k (services placed)",
        log_x=False,
        small_kwargs={"n_users": 40, "n_services": 4, "reference_restarts": 1},
        # the approximation ratio's solver is most of the grading time
        grade_kwargs={"reference_restarts": 0},
        oracle_keys=("loss", "total_loss", "excess_loss", "fairness", "group_losses", "services"),
    ),
    "delayed_impact": Family(
        name="delayed_impact",
        env_id="DelayedImpactLending-v0",
        objective="cumulative_loss",
        lower_is_better=True,
        metrics="osfb_gym.envs.delayed_impact:ImpactMetrics",
        reference_agents=(
            "agents.delayed_impact:MaxProfit",
            "agents.delayed_impact:DemographicParity",
            "agents.delayed_impact:EqualOpportunity",
        ),
        columns=("approval_rate", "default_rate", "tpr_gap", "score_change_0"),
        small_kwargs={"horizon": 30, "batch_size": 4},
        oracle_keys=(
            "repay_prob",
            "y",
            "group",
            "bayes_action",
            "loss",
            "mean_score",
            "score_change",
            "pi",
        ),
    ),
}


def family_of(env_id: str) -> Family:
    """Return the :class:`Family` of a registered id; a ``ValueError`` names the known ids.

    A family's own ``env_id`` or any other id the registry lists under it.
    """
    for family in FAMILIES.values():
        if family.env_id == env_id:
            return family
    # another id of a family (a variant world such as MultiServiceChoice-Retention-v0):
    # the registry names its family (imported here: it imports nothing of osfb_gym)
    from envs_registry import ENVS

    for entry in ENVS:
        if entry.id == env_id and entry.family in FAMILIES:
            return FAMILIES[entry.family]
    known = ", ".join(family.env_id for family in FAMILIES.values())
    raise ValueError(f"env id {env_id!r} belongs to no family; known ids: {known}")
