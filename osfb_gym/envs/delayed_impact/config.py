"""DelayedImpactLending's arguments as one frozen, validated record.

:meth:`ImpactConfig.from_arguments` turns the env's keyword arguments into
the task: each check raises naming the argument, and each ``None`` default
becomes the scenario's own value (Liu et al.'s for the synthetic and FICO
worlds, ml-fairness-gym's for ``scenario="bin_shift"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from osfb_gym.core.validation import check_choice, check_data_home, check_float, check_int

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


@dataclass(frozen=True)
class ImpactConfig:
    """The checked arguments of a DelayedImpactLending env (see its docstring's Arguments)."""

    dataset: str | None
    data_home: str | None
    scenario: str
    groups: tuple[str, ...]
    batch_size: int
    horizon: int
    loan_gain: float
    default_loss: float
    repay_score_change: float
    default_score_change: float
    dynamics: str
    shift_mass: float
    feedback: str

    @classmethod
    def from_arguments(
        cls,
        *,
        dataset: Any = None,
        data_home: Any = None,
        scenario: Any = "two_groups",
        groups: Any = None,
        batch_size: Any = 1,
        horizon: Any = DEFAULT_HORIZON,
        loan_gain: Any = None,
        default_loss: Any = None,
        repay_score_change: Any = None,
        default_score_change: Any = None,
        dynamics: Any = None,
        shift_mass: Any = DEFAULT_SHIFT_MASS,
        feedback: Any = "one_sided",
    ) -> ImpactConfig:
        """Check every argument; fill the ``None`` defaults from the world's source.

        Examples
        --------
        >>> ImpactConfig.from_arguments().default_loss
        4.0
        >>> ImpactConfig.from_arguments(scenario="bin_shift").dynamics
        'bin_shift'
        >>> ImpactConfig.from_arguments(shift_mass=2.0)
        Traceback (most recent call last):
        ...
        ValueError: shift_mass must be <= 1.0, got 2.0
        """
        dataset = check_choice(dataset, "dataset", DATASETS)
        data_home = check_data_home(data_home, dataset)
        scenario = check_choice(scenario, "scenario", SCENARIOS)
        if dataset is not None and scenario != "two_groups":
            raise ValueError(
                f"scenario shapes a synthetic world only; dataset={dataset!r} fixes the "
                f"groups and their scores, got scenario={scenario!r}"
            )
        if groups is None:
            groups = FICO_GROUPS if dataset == "fico" else ()
        elif dataset is None:
            raise ValueError(
                f"groups picks groups of the FICO tables (dataset='fico'); a synthetic world "
                f"has its own two, got groups={groups!r}"
            )
        else:
            groups = _check_groups(groups)
        gain, loss, up, down, mechanism = SHIFT_TERMS if scenario == "bin_shift" else LIU_TERMS
        loan_gain = gain if loan_gain is None else loan_gain
        default_loss = loss if default_loss is None else default_loss
        dynamics = check_choice(mechanism if dynamics is None else dynamics, "dynamics", DYNAMICS)
        if dynamics != mechanism and (repay_score_change is None or default_score_change is None):
            raise ValueError(
                f"dynamics={dynamics!r} measures score changes differently from this world's "
                f"own {mechanism!r}: give repay_score_change and default_score_change too"
            )
        up = up if repay_score_change is None else repay_score_change
        down = down if default_score_change is None else default_score_change
        up = check_float(up, "repay_score_change", low=0.0)
        down = check_float(down, "default_score_change", high=0.0)
        if dynamics == "bin_shift":
            for name, value in (("repay_score_change", up), ("default_score_change", down)):
                if value != int(value):
                    raise ValueError(
                        f"{name} counts bins with dynamics='bin_shift' and must be a whole "
                        f"number, got {value!r}"
                    )
        return cls(
            dataset=dataset,
            data_home=data_home,
            scenario=scenario,
            groups=groups,
            batch_size=check_int(batch_size, "batch_size", minimum=1),
            horizon=check_int(horizon, "horizon", minimum=1),
            loan_gain=check_float(loan_gain, "loan_gain", low=0.0, low_inclusive=False),
            default_loss=check_float(default_loss, "default_loss", low=0.0, low_inclusive=False),
            repay_score_change=up,
            default_score_change=down,
            dynamics=dynamics,
            shift_mass=check_float(
                shift_mass, "shift_mass", low=0.0, high=1.0, low_inclusive=False
            ),
            feedback=check_choice(feedback, "feedback", FEEDBACK_MODES),
        )


def _check_groups(groups: Any) -> tuple[str, ...]:
    """Return ``groups`` as a tuple of two or more distinct names (the data check them later)."""
    if isinstance(groups, str) or not isinstance(groups, list | tuple):
        raise TypeError(f"groups must be a list of group names, got {groups!r}")
    if not all(isinstance(name, str) for name in groups):
        raise TypeError(f"groups must be a list of group names (str), got {groups!r}")
    if len(groups) < 2 or len(set(groups)) != len(groups):
        raise ValueError(f"groups must name at least two distinct groups, got {groups!r}")
    return tuple(groups)
