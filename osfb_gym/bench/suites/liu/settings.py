"""The settings of ``liu-outcome-curves``: the bank's utility and the applicants' impact."""

from __future__ import annotations

from dataclasses import dataclass

from osfb_gym.core.validation import check_int

NAME = "liu-outcome-curves"
#: Liu et al.'s pair: the protected group first
PAIR = ("Black", "White")
CRITERIA = ("MaxUtil", "DemParity", "EqOpt")
#: where the claims come from: the paper's FICO section as summarised in issue 35 (the
#: paper's own sentences could not be retrieved to check their wording)
STATED = "Sec. 6, FICO, u-/u+ = -4 (paraphrased)"


@dataclass(frozen=True)
class Settings:
    """The utility and impact of Liu et al.'s FICO experiment; each field is a ``--set`` key."""

    #: the bank's loss on a default per unit of profit on a repaid loan (Liu et al.: 4, and 10)
    loss_ratios: tuple[float, ...] = (4.0, 10.0)
    #: FICO points an applicant gains on repaying and loses on defaulting (Liu et al.: 75,-150)
    score_changes: tuple[float, ...] = (75.0, -150.0)
    #: groups of the tables whose outcome curves are drawn (the pair's operating points aside)
    groups: tuple[str, ...] = ("Black", "White", "Hispanic", "Asian")
    #: selection (and true-positive) rates on the grid the operating points are searched on
    rates: int = 2001
    #: folder of the dataset files (the --data-home flag)
    data_home: str | None = None

    def __post_init__(self) -> None:
        if not self.loss_ratios or min(self.loss_ratios) <= 0:
            raise ValueError(f"loss_ratios must be positive numbers, got {self.loss_ratios!r}")
        if len(self.score_changes) != 2:
            raise ValueError(
                f"score_changes must be two numbers (repay, default), got {self.score_changes!r}"
            )
        up, down = self.score_changes
        if up < 0 or down > 0:
            raise ValueError(
                f"score_changes must be a gain >= 0 and a loss <= 0, got {self.score_changes!r}"
            )
        if len(self.groups) < 1:
            raise ValueError(f"groups must name at least one group, got {self.groups!r}")
        check_int(self.rates, "rates", minimum=11)

    def needs(self) -> tuple[str, ...]:
        """Return the dataset the computation reads: the FICO tables."""
        return ("fico",)
