"""OneSidedLending's configs: two kinds of world, two frozen, validated types.

:class:`SyntheticLending` (drawn worlds: Gaussian or the greedy trap) and
:class:`DatasetLending` (a dataset's rows, outcomes and fitted ``beta*``)
share the task's terms (:class:`LendingConfig`); each checks its arguments
when made, so an env is built from a config that is known to be valid.
:func:`lending_config` builds one from the env's keyword arguments (what
``gym.make("OneSidedLending-v0", **kwargs)`` passes), with the errors those
arguments always had. The rest are pure functions of the arguments (and of a
dataset's fitted world), each rule testable alone.

Examples
--------
>>> SyntheticLending(link="linear", batch_size=4).horizon
2000
>>> lending_config(dataset="breast_cancer", batch_size=10)  # doctest: +ELLIPSIS
DatasetLending(link='logistic', batch_size=10, ..., dataset='breast_cancer', ...)
>>> SyntheticLending(batch_size=0)
Traceback (most recent call last):
...
ValueError: batch_size must be >= 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np

from osfb_gym.core.links import Link, get_link
from osfb_gym.core.seeding import check_world_seed
from osfb_gym.core.validation import (
    check_choice,
    check_data_home,
    check_float,
    check_int,
    check_memory,
)
from osfb_gym.envs._config import given_config, set_checked
from osfb_gym.envs.lending.data import SCALINGS
from osfb_gym.envs.lending.world import gaussian_score_cutoff

if TYPE_CHECKING:
    from osfb_gym.data import Dataset

SCENARIOS = ("gaussian", "greedy_trap")
FEEDBACK_MODES = ("one_sided", "full")
#: what a dataset's stream does with the rows that do not fill a last batch
LAST_BATCH = ("pad", "drop")
DEFAULT_CUTOFF_QUANTILE = 0.7
DEFAULT_DIM = 5  # synthetic worlds; a dataset has its own
DEFAULT_HORIZON = 2000  # synthetic worlds; a dataset's episode is its whole stream
DEFAULT_WARM_START = 20  # synthetic worlds: the paper's initial K pairs
DEFAULT_WARM_FRACTION = 0.05  # datasets: the paper's 5% stratified split
# Arguments that shape a synthetic world only, with their defaults: a dataset
# fixes features, beta* and outcomes, so a non-default value is an error there.
SYNTHETIC_ONLY: dict[str, Any] = {
    "dim": None,
    "noise_std": None,
    "beta_norm": 2.0,
    "scenario": "gaussian",
    "tau": 0.1,
    "trap_probability": 0.1,
    "world_seed": None,
}


def resolve_dataset(dataset: Any, data_home: str | None, encoding: str | None) -> Dataset:
    """Return the tabular record of ``dataset``: a name loaded, or a record of one's own."""
    # imported here: the data layer pulls in scikit-learn and pandas, which a
    # synthetic world never needs
    from osfb_gym.data import Dataset, load

    if isinstance(dataset, str):
        options: dict[str, Any] = {} if encoding is None else {"encoding": encoding}
        record = load(dataset, data_home=data_home, **options)
    elif encoding is not None:
        raise ValueError(
            "encoding applies to a dataset given by name (the loader encodes it); "
            f"a record is already numeric, got encoding={encoding!r}"
        )
    elif isinstance(dataset, Dataset):
        record = dataset
    else:
        raise TypeError(
            f"dataset must be a name (str), a Dataset record or None, got {dataset!r} "
            f"({type(dataset).__name__})"
        )
    if not isinstance(record, Dataset):
        raise ValueError(
            f"dataset {dataset!r} is not a table of features and outcomes "
            f"({type(record).__name__}); lending needs a tabular Dataset"
        )
    return record


def check_synthetic_only(dataset: str | None, given: dict[str, Any]) -> None:
    """Raise if an argument that shapes synthetic worlds only has a non-default value."""
    for name, value in given.items():
        if value != SYNTHETIC_ONLY[name]:
            raise ValueError(
                f"{name} shapes synthetic worlds only; with dataset={dataset!r} the "
                f"data fix the features, outcomes and beta*, got {name}={value!r}"
            )


#: arguments of one scenario only, with their defaults: another scenario would ignore them
SCENARIO_ONLY = {"tau": ("greedy_trap", 0.1), "trap_probability": ("greedy_trap", 0.1)}
#: the largest outcome noise: past it outcomes mean nothing, and their squares in a fit overflow
MAX_NOISE_STD = 1e6


def check_scenario_arguments(scenario: str, given: dict[str, Any]) -> None:
    """Raise if an argument of another scenario has a non-default value (it would be ignored).

    Examples
    --------
    >>> check_scenario_arguments("gaussian", {"tau": 0.3})
    Traceback (most recent call last):
    ...
    ValueError: tau applies to scenario='greedy_trap' only; scenario='gaussian' would ignore it, \
got tau=0.3
    """
    for name, value in given.items():
        owner, default = SCENARIO_ONLY[name]
        if scenario != owner and value != default:
            raise ValueError(
                f"{name} applies to scenario={owner!r} only; scenario={scenario!r} would "
                f"ignore it, got {name}={value!r}"
            )


def check_noise_std(noise_std: float | None, link: Link) -> float:
    """Return the outcome noise: 1.0 by default for the linear link, none for the logistic.

    At most :data:`MAX_NOISE_STD`: ``noise_std=1e308`` would draw infinite
    outcomes and NaN in every fit.
    """
    if noise_std is None:
        return 1.0 if link.name == "linear" else 0.0
    if link.name == "logistic":
        raise ValueError(
            "noise_std applies to link='linear' only; logistic outcomes are Bernoulli "
            f"draws with no extra noise, got noise_std={noise_std!r}"
        )
    return check_float(noise_std, "noise_std", low=0.0, high=MAX_NOISE_STD)


def resolve_warm_start(
    warm_start: int | float | None,
    n_rows: int | None,
    *,
    batch_size: int,
    last_batch: str,
    dataset: str | None,
) -> int:
    """Return ``K``; ``n_rows`` is the dataset's size, None for a synthetic world.

    A dataset must keep rows to stream: one with ``last_batch="pad"`` (a
    batch may be partial), a whole batch with ``"drop"``.
    """
    if warm_start is None:
        if n_rows is None:
            return DEFAULT_WARM_START
        warm_start = DEFAULT_WARM_FRACTION
    if isinstance(warm_start, bool) or not isinstance(warm_start, Real):
        raise TypeError(
            f"warm_start must be a count (int) or, with a dataset, a fraction (float), "
            f"got {warm_start!r} ({type(warm_start).__name__})"
        )
    if isinstance(warm_start, Integral):
        count = check_int(warm_start, "warm_start", minimum=0)
    elif n_rows is None:
        raise ValueError(
            "warm_start as a fraction (float) needs a dataset; a synthetic world "
            f"takes a count (int), got warm_start={warm_start!r}"
        )
    else:
        fraction = check_float(
            warm_start,
            "warm_start",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
        )
        count = int(np.floor(fraction * n_rows))  # scikit-learn's train_size rounding
    least = batch_size if last_batch == "drop" else 1
    if n_rows is not None and n_rows - count < least:
        what = f"one batch of batch_size={batch_size}" if least > 1 else "one row"
        raise ValueError(
            f"warm_start must leave at least {what} of the {n_rows} rows of dataset "
            f"{dataset!r} to stream, got warm_start={warm_start!r} ({count} rows)"
        )
    return count


def check_cutoff(cutoff: Any, cutoff_quantile: Any, link: Link) -> tuple[float | None, float]:
    """Return ``(cutoff, quantile)`` checked: at most one given, each in its range.

    ``cutoff`` None means the cutoff is the ``quantile`` of ``mu`` (0.7 by default).
    """
    if cutoff is not None and cutoff_quantile is not None:
        raise ValueError(
            f"give at most one of cutoff and cutoff_quantile, got cutoff={cutoff!r} "
            f"and cutoff_quantile={cutoff_quantile!r}"
        )
    if cutoff is not None:
        if link.name == "logistic":
            cutoff = check_float(
                cutoff,
                "cutoff",
                low=0.0,
                high=1.0,
                low_inclusive=False,
                high_inclusive=False,
            )
            return cutoff, DEFAULT_CUTOFF_QUANTILE
        return check_float(cutoff, "cutoff"), DEFAULT_CUTOFF_QUANTILE
    quantile = DEFAULT_CUTOFF_QUANTILE if cutoff_quantile is None else cutoff_quantile
    quantile = check_float(
        quantile,
        "cutoff_quantile",
        low=0.0,
        high=1.0,
        low_inclusive=False,
        high_inclusive=False,
    )
    return None, quantile


def resolve_cutoff(
    cutoff: float | None,
    cutoff_quantile: float | None,
    link: Link,
    *,
    data_mu: np.ndarray | None,
    beta_norm: float,
) -> float:
    """Return the cutoff ``c``: given, or a quantile of ``mu`` (a dataset's, or the Gaussian's)."""
    value, quantile = check_cutoff(cutoff, cutoff_quantile, link)
    if value is not None:
        return value
    if data_mu is not None:
        return float(np.quantile(data_mu, quantile))
    value = gaussian_score_cutoff(link, beta_norm, quantile)
    if link.name == "logistic" and not 0.0 < value < 1.0:
        # expit saturates: every applicant would sit on one side of the cutoff
        raise ValueError(
            f"beta_norm={beta_norm!r} with cutoff_quantile={quantile!r} puts the "
            f"logistic cutoff at {value!r}, where no applicant beats it; use a beta_norm "
            "of at most about 30 (scores of standard-normal features times beta_norm)"
        )
    return value


@dataclass(frozen=True, kw_only=True)
class LendingConfig:
    """The task's terms every lending world shares (the env's arguments of the same names).

    Made through :class:`SyntheticLending` or :class:`DatasetLending`.
    """

    link: str = "logistic"
    batch_size: int = 1
    horizon: int | None = None
    cutoff: float | None = None
    cutoff_quantile: float | None = None
    warm_start: int | float | None = None
    feedback: str = "one_sided"

    def __post_init__(self) -> None:
        """Check the shared terms, or raise naming the argument."""
        link = get_link(self.link)
        set_checked(self, "batch_size", check_int(self.batch_size, "batch_size", minimum=1))
        set_checked(self, "feedback", check_choice(self.feedback, "feedback", FEEDBACK_MODES))
        check_cutoff(self.cutoff, self.cutoff_quantile, link)

    @property
    def link_function(self) -> Link:
        """The :class:`~osfb_gym.core.links.Link` named by ``link``."""
        return get_link(self.link)


@dataclass(frozen=True, kw_only=True)
class SyntheticLending(LendingConfig):
    """A drawn world: Gaussian applicants, or the greedy trap of Theorem 1.

    ``horizon`` is 2000 steps and ``warm_start`` 20 rows unless given;
    ``noise_std`` None is 1.0 for the linear link and none for the logistic
    (:meth:`outcome_noise`). See :class:`~osfb_gym.envs.lending.OneSidedLendingEnv`'s
    Arguments for each field.
    """

    dim: int = DEFAULT_DIM
    noise_std: float | None = None
    beta_norm: float = 2.0
    scenario: str = "gaussian"
    tau: float = 0.1
    trap_probability: float = 0.1
    world_seed: int | None = None

    def __post_init__(self) -> None:
        """Check every argument and the world they draw, or raise naming the argument."""
        super().__post_init__()
        # scores are x . beta*; past 1e6 they stop meaning anything and overflow downstream
        beta_norm = check_float(self.beta_norm, "beta_norm", low=0.0, high=1e6, low_inclusive=False)
        set_checked(self, "beta_norm", beta_norm)
        set_checked(self, "scenario", check_choice(self.scenario, "scenario", SCENARIOS))
        set_checked(self, "world_seed", check_world_seed(self.world_seed))
        set_checked(self, "tau", check_float(self.tau, "tau", low=0.0, low_inclusive=False))
        probability = check_float(
            self.trap_probability,
            "trap_probability",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
        )
        set_checked(self, "trap_probability", probability)
        check_scenario_arguments(self.scenario, {"tau": self.tau, "trap_probability": probability})
        set_checked(self, "dim", check_int(self.dim, "dim", minimum=1))
        self.outcome_noise()
        warm_start = resolve_warm_start(
            self.warm_start, None, batch_size=self.batch_size, last_batch="pad", dataset=None
        )
        set_checked(self, "warm_start", warm_start)
        # a batch's features, scores and outcomes (a few float64 copies each), and the
        # warm-start sample, are drawn at once
        check_memory(
            32 * self.batch_size * (self.dim + 2),
            f"batch_size x dim = {self.batch_size} x {self.dim}",
        )
        check_memory(
            32 * warm_start * (self.dim + 2), f"warm_start x dim = {warm_start} x {self.dim}"
        )
        horizon = DEFAULT_HORIZON if self.horizon is None else self.horizon
        set_checked(self, "horizon", check_int(horizon, "horizon", minimum=1))
        self._check_trap(self.resolved_cutoff())

    def outcome_noise(self) -> float:
        """Return the outcome noise's standard deviation (``noise_std`` resolved by the link)."""
        return check_noise_std(self.noise_std, self.link_function)

    def resolved_cutoff(self) -> float:
        """Return the cutoff ``c``: ``cutoff``, or the quantile of the Gaussian's ``mu``."""
        return resolve_cutoff(
            self.cutoff,
            self.cutoff_quantile,
            self.link_function,
            data_mu=None,
            beta_norm=self.beta_norm,
        )

    def _check_trap(self, cutoff: float) -> None:
        if self.scenario != "greedy_trap":
            return
        if self.dim < 2:
            raise ValueError(f"dim must be >= 2 for scenario='greedy_trap', got {self.dim}")
        if self.link == "logistic" and cutoff + self.tau >= 1.0:
            raise ValueError(
                f"tau must keep cutoff + tau below 1 for link='logistic'; "
                f"cutoff is {cutoff:.4f}, got tau={self.tau}"
            )


@dataclass(frozen=True, kw_only=True)
class DatasetLending(LendingConfig):
    """A dataset's world: its rows streamed in a seeded order, ``beta*`` fitted on all of them.

    ``dataset`` is a name :func:`osfb_gym.data.load` knows (read from
    ``data_home``, with the loader's ``encoding``) or a
    :class:`~osfb_gym.data.Dataset` record; the dataset is loaded when the
    env is made. ``horizon`` None is the whole stream and ``warm_start``
    None the paper's 5% stratified split. See
    :class:`~osfb_gym.envs.lending.OneSidedLendingEnv`'s Arguments for each field.
    """

    dataset: str | Dataset
    data_home: str | None = None
    encoding: str | None = None
    scaling: str = "standard"
    last_batch: str = "pad"

    def __post_init__(self) -> None:
        """Check every argument but the data's own (checked when loaded), or raise naming it."""
        super().__post_init__()
        set_checked(self, "scaling", check_choice(self.scaling, "scaling", SCALINGS))
        set_checked(self, "last_batch", check_choice(self.last_batch, "last_batch", LAST_BATCH))
        check_data_home(self.data_home, self.dataset)
        if self.horizon is not None:
            set_checked(self, "horizon", check_int(self.horizon, "horizon", minimum=1))
        if not isinstance(self.dataset, str):
            from osfb_gym.data import Dataset  # the data layer: only for a record

            if not isinstance(self.dataset, Dataset):
                raise TypeError(
                    f"dataset must be a name (str), a Dataset record or None, got "
                    f"{self.dataset!r} ({type(self.dataset).__name__})"
                )
            if self.encoding is not None:
                raise ValueError(
                    "encoding applies to a dataset given by name (the loader encodes it); "
                    f"a record is already numeric, got encoding={self.encoding!r}"
                )

    def load(self) -> Dataset:
        """Return the tabular record: the named dataset loaded, or the record given."""
        return resolve_dataset(self.dataset, self.data_home, self.encoding)


#: the dataset-only arguments, with their defaults: a synthetic world has none of them
DATASET_ONLY: dict[str, Any] = {"encoding": None, "scaling": "standard", "last_batch": "pad"}
#: every argument a config takes (the env's keyword arguments but ``render_*`` and ``config``)
ARGUMENTS = tuple(
    dict.fromkeys(f.name for cls in (SyntheticLending, DatasetLending) for f in fields(cls))
)


def lending_config(
    config: SyntheticLending | DatasetLending | None = None, **arguments: Any
) -> SyntheticLending | DatasetLending:
    """Return the config the env's keyword ``arguments`` describe, or ``config`` itself.

    ``dataset`` None makes a :class:`SyntheticLending`, else a
    :class:`DatasetLending`; an argument of the other kind with a
    non-default value raises ``ValueError`` naming it. With ``config``
    given, every argument must keep its default.
    """
    if config is not None:
        defaults: dict[str, Any] = {**SYNTHETIC_ONLY, **DATASET_ONLY, "dataset": None}
        defaults.update({f.name: f.default for f in fields(LendingConfig)})
        return given_config(config, (SyntheticLending, DatasetLending), arguments, defaults)
    dataset = arguments.pop("dataset", None)
    check_data_home(arguments.get("data_home"), dataset)
    for name in ("scaling", "last_batch"):
        if name in arguments:
            check_choice(arguments[name], name, SCALINGS if name == "scaling" else LAST_BATCH)
    if dataset is None:
        given = {name: arguments.pop(name, default) for name, default in DATASET_ONLY.items()}
        arguments.pop("data_home", None)
        if tuple(given.values()) != tuple(DATASET_ONLY.values()):
            raise ValueError(
                "encoding, scaling and last_batch apply to a dataset only; a synthetic world "
                "draws standardised features without end, got "
                + ", ".join(f"{name}={value!r}" for name, value in given.items())
            )
        if arguments.get("dim") is None:
            arguments["dim"] = DEFAULT_DIM
        return SyntheticLending(**arguments)
    synthetic = {name: arguments.pop(name) for name in SYNTHETIC_ONLY if name in arguments}
    check_synthetic_only(getattr(dataset, "name", dataset), synthetic)
    return DatasetLending(dataset=dataset, **arguments)
