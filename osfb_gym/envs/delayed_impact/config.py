"""DelayedImpactLending's configs: two kinds of world, two frozen, validated types.

:class:`SyntheticImpact` (Liu et al.'s two groups, ml-fairness-gym's
clusters) and :class:`FicoImpact` (the FICO TransRisk tables) share the
lending terms and dynamics (:class:`ImpactConfig`); each checks its
arguments when made, and each ``None`` term becomes the world's own value
(Liu et al.'s for the synthetic and FICO worlds, ml-fairness-gym's for
``scenario="bin_shift"``). :func:`impact_config` builds one from the env's
keyword arguments, with the errors those arguments always had.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from osfb_gym.core.validation import check_choice, check_data_home, check_float, check_int
from osfb_gym.envs._config import given_config, set_checked
from osfb_gym.envs.delayed_impact.world import (
    ImpactWorld,
    fico_world,
    shift_world,
    synthetic_world,
)

SCENARIOS = ("two_groups", "bin_shift")
DATASETS = (None, "fico")
DYNAMICS = ("score_change", "bin_shift")
FEEDBACK_MODES = ("one_sided", "full")
#: Liu et al.'s pair of the TransRisk tables' groups (their group A and B)
FICO_GROUPS = ("Black", "White")
DEFAULT_HORIZON = 1000
#: ml-fairness-gym's cluster_shift_increment: each approved applicant stands for
#: 1% of their group's probability mass
DEFAULT_SHIFT_MASS = 0.01
# (loan_gain, default_loss, repay_change, default_change, dynamics) per world:
# Liu et al.'s FICO experiment (u+ = 1, u- = -4; +75 / -150 FICO points) and
# ml-fairness-gym's lending experiment (interest_rate = 1.0: +1 / -1; one cluster up / down)
LIU_TERMS = (1.0, 4.0, 75.0, -150.0, "score_change")
SHIFT_TERMS = (1.0, 1.0, 1.0, -1.0, "bin_shift")


@dataclass(frozen=True, kw_only=True)
class ImpactConfig:
    """The lending terms and dynamics every delayed-impact world shares.

    Made through :class:`SyntheticImpact` or :class:`FicoImpact`; see
    :class:`~osfb_gym.envs.delayed_impact.DelayedImpactLendingEnv`'s Arguments
    for each field. A ``None`` term becomes the world's own (Liu et al.'s,
    or ml-fairness-gym's for ``scenario="bin_shift"``) when the config is made.
    """

    batch_size: int = 1
    horizon: int = DEFAULT_HORIZON
    # None: the world's own, filled in when the config is made (never None after)
    loan_gain: float = None  # type: ignore[assignment]
    default_loss: float = None  # type: ignore[assignment]
    repay_score_change: float = None  # type: ignore[assignment]
    default_score_change: float = None  # type: ignore[assignment]
    dynamics: str = None  # type: ignore[assignment]
    shift_mass: float = DEFAULT_SHIFT_MASS
    feedback: str = "one_sided"

    def _own_terms(self) -> tuple[float, float, float, float, str]:
        """Return the world's own loan_gain, default_loss, score changes and dynamics."""
        return LIU_TERMS

    def __post_init__(self) -> None:
        """Check every term and fill the ``None`` ones from the world's own, or raise naming it."""
        gain, loss, up, down, mechanism = self._own_terms()
        dynamics = check_choice(
            mechanism if self.dynamics is None else self.dynamics, "dynamics", DYNAMICS
        )
        if dynamics != mechanism and (
            self.repay_score_change is None or self.default_score_change is None
        ):
            raise ValueError(
                f"dynamics={dynamics!r} measures score changes differently from this world's "
                f"own {mechanism!r}: give repay_score_change and default_score_change too"
            )
        up = up if self.repay_score_change is None else self.repay_score_change
        down = down if self.default_score_change is None else self.default_score_change
        up = check_float(up, "repay_score_change", low=0.0)
        down = check_float(down, "default_score_change", high=0.0)
        if dynamics == "bin_shift":
            for name, value in (("repay_score_change", up), ("default_score_change", down)):
                if value != int(value):
                    raise ValueError(
                        f"{name} counts bins with dynamics='bin_shift' and must be a whole "
                        f"number, got {value!r}"
                    )
        set_checked(self, "dynamics", dynamics)
        set_checked(self, "repay_score_change", up)
        set_checked(self, "default_score_change", down)
        set_checked(self, "batch_size", check_int(self.batch_size, "batch_size", minimum=1))
        set_checked(self, "horizon", check_int(self.horizon, "horizon", minimum=1))
        gain = gain if self.loan_gain is None else self.loan_gain
        loss = loss if self.default_loss is None else self.default_loss
        set_checked(self, "loan_gain", check_float(gain, "loan_gain", low=0.0, low_inclusive=False))
        loss = check_float(loss, "default_loss", low=0.0, low_inclusive=False)
        set_checked(self, "default_loss", loss)
        mass = check_float(self.shift_mass, "shift_mass", low=0.0, high=1.0, low_inclusive=False)
        set_checked(self, "shift_mass", mass)
        set_checked(self, "feedback", check_choice(self.feedback, "feedback", FEEDBACK_MODES))

    def world(self) -> ImpactWorld:
        """Return the world the config names (reading data where it names them)."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class SyntheticImpact(ImpactConfig):
    """A synthetic world: Liu et al.'s two groups, or ml-fairness-gym's clusters (``bin_shift``).

    Examples
    --------
    >>> SyntheticImpact().default_loss
    4.0
    >>> SyntheticImpact(scenario="bin_shift").dynamics
    'bin_shift'
    >>> SyntheticImpact(shift_mass=2.0)
    Traceback (most recent call last):
    ...
    ValueError: shift_mass must be <= 1.0, got 2.0
    """

    scenario: str = "two_groups"

    def _own_terms(self) -> tuple[float, float, float, float, str]:
        return SHIFT_TERMS if self.scenario == "bin_shift" else LIU_TERMS

    def __post_init__(self) -> None:
        """Check the scenario, then the terms."""
        set_checked(self, "scenario", check_choice(self.scenario, "scenario", SCENARIOS))
        super().__post_init__()

    def world(self) -> ImpactWorld:
        """Return the scenario's world."""
        return shift_world() if self.scenario == "bin_shift" else synthetic_world()


@dataclass(frozen=True, kw_only=True)
class FicoImpact(ImpactConfig):
    """The FICO TransRisk tables' world (Liu et al.'s experiment), between ``groups``."""

    #: the data this world reads
    dataset: ClassVar[str] = "fico"
    groups: tuple[str, ...] = FICO_GROUPS
    data_home: str | None = None

    def __post_init__(self) -> None:
        """Check the groups and the folder, then the terms."""
        set_checked(self, "groups", _check_groups(self.groups))
        check_data_home(self.data_home, self.dataset)
        super().__post_init__()

    def world(self) -> ImpactWorld:
        """Read the FICO tables and return their world."""
        from osfb_gym.data import load  # the data layer: only for the FICO world

        return fico_world(load("fico", data_home=self.data_home), self.groups)


#: every argument a config takes (the env's keyword arguments but ``render_*`` and ``config``)
ARGUMENTS = (
    "dataset",
    *dict.fromkeys(f.name for cls in (SyntheticImpact, FicoImpact) for f in fields(cls)),
)


def impact_config(
    config: SyntheticImpact | FicoImpact | None = None, **arguments: Any
) -> SyntheticImpact | FicoImpact:
    """Return the config the env's keyword ``arguments`` describe, or ``config`` itself.

    ``dataset`` None makes a :class:`SyntheticImpact`, ``"fico"`` a
    :class:`FicoImpact`; an argument of the other kind raises ``ValueError``
    naming it. With ``config`` given, every argument must keep its default.

    Examples
    --------
    >>> impact_config(dataset="fico", batch_size=4).groups
    ('Black', 'White')
    """
    if config is not None:
        defaults: dict[str, Any] = {f.name: f.default for f in fields(ImpactConfig)}
        defaults["scenario"] = "two_groups"
        return given_config(config, (SyntheticImpact, FicoImpact), arguments, defaults)
    dataset = check_choice(arguments.pop("dataset", None), "dataset", DATASETS)
    data_home = check_data_home(arguments.pop("data_home", None), dataset)
    scenario = check_choice(arguments.pop("scenario", "two_groups"), "scenario", SCENARIOS)
    groups = arguments.pop("groups", None)
    if dataset is not None:
        if scenario != "two_groups":
            raise ValueError(
                f"scenario shapes a synthetic world only; dataset={dataset!r} fixes the "
                f"groups and their scores, got scenario={scenario!r}"
            )
        groups = FICO_GROUPS if groups is None else groups
        return FicoImpact(groups=groups, data_home=data_home, **arguments)
    if groups is not None:
        raise ValueError(
            f"groups picks groups of the FICO tables (dataset='fico'); a synthetic world "
            f"has its own two, got groups={groups!r}"
        )
    return SyntheticImpact(scenario=scenario, **arguments)


def _check_groups(groups: Any) -> tuple[str, ...]:
    """Return ``groups`` as a tuple of two or more distinct names (the data check them later)."""
    if isinstance(groups, str) or not isinstance(groups, list | tuple):
        raise TypeError(f"groups must be a list of group names, got {groups!r}")
    if not all(isinstance(name, str) for name in groups):
        raise TypeError(f"groups must be a list of group names (str), got {groups!r}")
    if len(groups) < 2 or len(set(groups)) != len(groups):
        raise ValueError(f"groups must name at least two distinct groups, got {groups!r}")
    return tuple(groups)
