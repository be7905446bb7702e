"""The settings of the ``jiang-*`` suites and the paper's methods and fits.

:class:`JiangSuite` is both tables' settings (its fields are the ``--set`` keys);
:class:`LinearSettings` and :class:`LogisticSettings` fix the link.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from osfb_gym.bench.driver import POWERS_OF_TWO
from osfb_gym.core.validation import check_int
from osfb_gym.data.registry import SPECS, get_spec

#: the lending paper's datasets, in its tables' order: those whose spec has its row count
LENDING_DATASETS = tuple(spec.name for spec in SPECS if "paper_rows" in spec.metadata)
#: the paper's columns in its order: the agent and its tuned hyperparameter ("ours" = Adaptive)
AGENTS: dict[str, tuple[str, str | None]] = {
    "greedy": ("Greedy", None),
    "eps-greedy": ("EpsilonGreedy", "alpha"),
    "os-eps-greedy": ("OneSidedEpsilonGreedy", "alpha"),
    "noise": ("Noise", "alpha"),
    "os-noise": ("OneSidedNoise", "alpha"),
    "margin": ("Margin", "alpha"),
    "ours": ("Adaptive", "rho"),
}
METHODS = tuple(AGENTS)
METHOD_OF = {name: method for method, (name, _) in AGENTS.items()}
#: env and learner arguments per fit (why each: docs/reproductions/jiang.md)
FITS: dict[str, dict[str, dict[str, Any]]] = {
    "paper": {
        "env": {"encoding": "native", "scaling": "robust"},
        "linear": {"l2": 1e-6},
        "logistic": {"l2": 1.0, "design_l2": 1e-6, "free_intercept": True},
        "ours": {"rho_schedule": "sqrt_log_t", "per_applicant_A": True},
    },
    "legacy": {"env": {}, "linear": {}, "logistic": {}, "ours": {}},
}


@dataclass(frozen=True)
class JiangSuite:
    """A table of Jiang et al.: datasets, cutoffs, splits, grid and fit; a field a ``--set`` key.

    ``seeds`` is the number of the paper's random splits (seeds 0..seeds-1).
    """

    name: ClassVar[str] = "jiang"
    link: ClassVar[str] = "linear"
    description: ClassVar[str] = ""
    methods: ClassVar[tuple[str, ...]] = METHODS

    #: the paper's random splits: seeds 0..seeds-1 (the --seeds flag)
    seeds: int = 10
    #: truncate every stream to this many steps (None: the whole split; not the paper's)
    horizon: int | None = None
    #: folder of the dataset files (the --data-home flag)
    data_home: str | None = None
    #: the datasets to run (of those found under the data home)
    datasets: tuple[str, ...] = LENDING_DATASETS
    #: the grid of every method's alpha (Adaptive's rho), LOW:HIGH as powers of 2
    alphas: tuple[float, ...] = field(
        default=tuple(2.0**k for k in range(-10, 4)), metadata=POWERS_OF_TWO
    )
    #: the learners' fit: "paper" or "legacy" (the fit before the fidelity work)
    fit: str = "paper"
    #: the cutoff quantiles of the tables' columns
    cutoffs: tuple[float, ...] = (0.5, 0.7)

    def __post_init__(self) -> None:
        check_int(self.seeds, "seeds", minimum=1)
        if self.horizon is not None:
            check_int(self.horizon, "horizon", minimum=1)
        if self.fit not in FITS:
            raise ValueError(f"fit must be one of {sorted(FITS)}, got {self.fit!r}")
        if not self.datasets:
            raise ValueError("datasets must name at least one dataset")
        for name in self.datasets:
            get_spec(name)  # an unknown name raises naming the registry's
        if not self.alphas or not self.cutoffs:
            raise ValueError("alphas and cutoffs must each name at least one value")

    @property
    def grid(self) -> tuple[float, ...]:
        """Return every tuned method's alpha grid: ``alphas`` with 0 added (no exploration).

        At alpha = 0 each method is greedy, so tuning can always switch exploration
        off: no method is forced to explore by the grid's floor (issue 34).
        """
        return tuple(sorted({0.0, *self.alphas}))

    @property
    def grid_size(self) -> int:
        """Cells of one (dataset, cutoff, split): greedy once, every other method at each alpha."""
        return sum(len(self.grid) if AGENTS[method][1] else 1 for method in self.methods)

    def batch_size(self, dataset: str) -> int:
        """Return the paper's batch size for ``dataset`` under this suite's link."""
        return 1 if self.link == "linear" else 1000 if dataset in ("adult", "bank", "eeg") else 100

    def needs(self) -> tuple[str, ...]:
        """Return the datasets the run reads."""
        return self.datasets

    def without(self, missing: dict[str, str]) -> JiangSuite | None:
        """Return these settings without the ``missing`` datasets (None: none left)."""
        found = tuple(d for d in self.datasets if d not in missing)
        return replace(self, datasets=found) if found else None


@dataclass(frozen=True)
class LinearSettings(JiangSuite):
    """Table 1: least squares, batch size 1."""

    name: ClassVar[str] = "jiang-linear"
    link: ClassVar[str] = "linear"
    description: ClassVar[str] = (
        "Table 1 of Jiang, Jiang and Pacchiano (2021): least squares, batch size 1."
    )


@dataclass(frozen=True)
class LogisticSettings(JiangSuite):
    """Table 2: logistic regression, batch size 1000 (Adult, Bank, EEG) or 100."""

    name: ClassVar[str] = "jiang-logistic"
    link: ClassVar[str] = "logistic"
    description: ClassVar[str] = (
        "Table 2 of Jiang, Jiang and Pacchiano (2021): logistic regression, batch "
        "size 1000 (Adult, Bank, EEG) or 100."
    )


#: both tables' settings by suite name
JIANG_SUITES: dict[str, type[JiangSuite]] = {
    cls.name: cls for cls in (LinearSettings, LogisticSettings)
}
