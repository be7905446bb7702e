"""The settings of ``dynamic-lending``: its worlds, horizon, burn-in and seeds."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from osfb_gym.bench.driver import COUNT_OR_ZERO
from osfb_gym.core.validation import check_int

NAME = "dynamic-lending"
ENV = "DelayedImpactLending-v0"
AGENTS = ("MaxProfit", "EqualOpportunity")
#: the report's names of the agents (ml-fairness-gym's)
NAMES = {"MaxProfit": "max-reward", "EqualOpportunity": "equal-opportunity"}
#: each world: its env arguments, the dataset it needs, its disadvantaged group's index
#: and both groups' names (ml-fairness-gym's group 1 has the lower scores; Black is group 0)
WORLDS: dict[str, tuple[dict[str, Any], str | None, int, tuple[str, str]]] = {
    "bin_shift": ({"scenario": "bin_shift"}, None, 1, ("group 0", "group 1")),
    "fico": ({"dataset": "fico"}, "fico", 0, ("Black", "White")),
}


@dataclass(frozen=True)
class Settings:
    """The comparison's sizes; each field but ``seeds`` and ``horizon`` is a ``--set`` key."""

    #: runs: seeds 0..seeds-1, both agents on each (the --seeds flag)
    seeds: int = 20
    #: steps of one applicant each (ml-fairness-gym's experiment: 10,000 to 20,000)
    horizon: int = 5000
    #: folder of the dataset files (the --data-home flag)
    data_home: str | None = None
    #: the worlds to run: bin_shift (ml-fairness-gym's clusters), fico (Liu et al.'s tables)
    worlds: tuple[str, ...] = ("bin_shift", "fico")
    #: steps of approving everyone before the agents' thresholds apply (lending.py: 50;
    #: 0 for none); below the horizon
    burnin: int = dataclasses.field(default=50, metadata=COUNT_OR_ZERO)
    #: store the groups' mean scores every this many steps (the figure)
    stride: int = 50

    def __post_init__(self) -> None:
        check_int(self.horizon, "horizon", minimum=1)
        check_int(self.burnin, "burnin", minimum=0)
        if self.burnin >= self.horizon:
            raise ValueError(
                f"burnin ({self.burnin}) must be below horizon ({self.horizon}): every step "
                "would be burn-in, where both agents approve everyone and nothing is compared"
            )
        check_int(self.stride, "stride", minimum=1)
        if not self.worlds or any(w not in WORLDS for w in self.worlds):
            raise ValueError(
                f"worlds must be a non-empty subset of {list(WORLDS)}, got {list(self.worlds)}"
            )
        check_int(self.seeds, "seeds", minimum=1)

    def needs(self) -> tuple[str, ...]:
        """Return the datasets of the worlds that read one."""
        return tuple(data for world in self.worlds if (data := WORLDS[world][1]) is not None)

    def without(self, missing: dict[str, str]) -> Settings | None:
        """Return these settings without the worlds whose data are ``missing`` (None: none left)."""
        worlds = tuple(w for w in self.worlds if WORLDS[w][1] not in missing)
        return dataclasses.replace(self, worlds=worlds) if worlds else None
