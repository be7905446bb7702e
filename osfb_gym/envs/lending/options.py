"""OneSidedLending's arguments: their defaults and the checks that turn them into a task.

Pure functions of the arguments (and of a dataset's fitted world), so the env's
constructor reads as the list of what it sets, and each rule is testable alone.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np

from osfb_gym.core.links import Link
from osfb_gym.core.validation import check_float, check_int
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
SYNTHETIC_ONLY = {
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


def resolve_cutoff(
    cutoff: float | None,
    cutoff_quantile: float | None,
    link: Link,
    *,
    data_mu: np.ndarray | None,
    beta_norm: float,
) -> float:
    """Return the cutoff ``c``: given, or a quantile of ``mu`` (a dataset's, or the Gaussian's)."""
    if cutoff is not None and cutoff_quantile is not None:
        raise ValueError(
            f"give at most one of cutoff and cutoff_quantile, got cutoff={cutoff!r} "
            f"and cutoff_quantile={cutoff_quantile!r}"
        )
    if cutoff is not None:
        if link.name == "logistic":
            return check_float(
                cutoff,
                "cutoff",
                low=0.0,
                high=1.0,
                low_inclusive=False,
                high_inclusive=False,
            )
        return check_float(cutoff, "cutoff")
    quantile = DEFAULT_CUTOFF_QUANTILE if cutoff_quantile is None else cutoff_quantile
    quantile = check_float(
        quantile,
        "cutoff_quantile",
        low=0.0,
        high=1.0,
        low_inclusive=False,
        high_inclusive=False,
    )
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
