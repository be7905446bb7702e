"""MultiServiceChoice's arguments: their defaults and the checks that turn them into a task.

:func:`resolve_population` settles what the population argument fixes (a data
population fixes its users, groups and, for census, their number; a synthetic one
takes them from the arguments), so the env's constructor reads as the list of
what it sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from osfb_gym.core.validation import check_choice, check_int
from osfb_gym.envs.services.populations import census_population, movielens_population
from osfb_gym.envs.services.world import Population

POPULATIONS = ("clusters", "linear", "census", "movielens")
#: what users report: their loss, or their excess loss over their own minimum (Eq. 4)
REPORTS = ("loss", "excess")
# populations built from a data set, and the data sets each accepts (first: default)
DATA_POPULATIONS = {"census": ("adult",), "movielens": ("movielens",)}
DEFAULT_N_USERS = 500
DEFAULT_DIM = 2  # synthetic worlds: preferences in the plane, easy to look at
DEFAULT_CENSUS_DIM = 10  # the paper's 10 SVD components
DEFAULT_N_CLUSTERS = 10
DEFAULT_N_GROUPS = 2
CENSUS_MIN_SAMPLES = 30
DEFAULT_MOVIES = 50  # movielens: the most-rated movies a service predicts
DEFAULT_SUBPOPULATIONS = 200  # movielens: k-means clusters of viewers
# float32's largest value: losses are unbounded in principle, finite in every world here
LOSS_BOUND = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class PopulationShape:
    """What a population's arguments resolve to."""

    n_users: int
    dim: int
    service_dim: int
    n_groups: int
    n_clusters: int | None
    dataset: str | None
    data_home: str | None
    fixed: Population | None  # a data population, fixed by its data


def resolve_population(
    population: str,
    *,
    n_users: int | None,
    dim: int | None,
    n_clusters: int | None,
    n_groups: int | None,
    world_seed: int | None,
    dataset: str | None,
    data_home: str | None,
    census_groups: str,
) -> PopulationShape:
    """Check the arguments ``population`` takes and build a data population once."""
    if population not in DATA_POPULATIONS:
        if dataset is not None or data_home is not None:
            raise ValueError(
                f"dataset and data_home apply to population='census' or 'movielens' "
                f"only, got dataset={dataset!r}, data_home={data_home!r}"
            )
        users = DEFAULT_N_USERS if n_users is None else check_int(n_users, "n_users", minimum=1)
        d = DEFAULT_DIM if dim is None else check_int(dim, "dim", minimum=1)
        return PopulationShape(
            n_users=users,
            dim=d,
            service_dim=d,
            n_groups=(
                DEFAULT_N_GROUPS if n_groups is None else check_int(n_groups, "n_groups", minimum=1)
            ),
            n_clusters=(
                min(DEFAULT_N_CLUSTERS, users)
                if n_clusters is None
                else check_int(n_clusters, "n_clusters", minimum=1, maximum=users)
            ),
            dataset=None,
            data_home=None,
            fixed=None,
        )
    fixed_by_data = ["n_clusters", "n_groups", "world_seed"]
    if population == "census":
        fixed_by_data.append("n_users")
    given = {
        "n_users": n_users,
        "n_clusters": n_clusters,
        "n_groups": n_groups,
        "world_seed": world_seed,
    }
    for name in fixed_by_data:
        if given[name] is not None:
            raise ValueError(
                f"{name} shapes synthetic worlds only; the {population} population "
                f"is fixed by its data, got {name}={given[name]!r}"
            )
    choices = DATA_POPULATIONS[population]
    name = check_choice(choices[0] if dataset is None else dataset, "dataset", choices)
    if data_home is not None and not isinstance(data_home, str):
        raise TypeError(f"data_home must be a path (str) or None, got {data_home!r}")
    if population == "census":
        d = DEFAULT_CENSUS_DIM if dim is None else check_int(dim, "dim", minimum=1)
        fixed = census_population(name, data_home, d, CENSUS_MIN_SAMPLES, census_groups)
        service_dim = d + 1
    else:
        d = DEFAULT_MOVIES if dim is None else check_int(dim, "dim", minimum=1)
        subpopulations = (
            DEFAULT_SUBPOPULATIONS if n_users is None else check_int(n_users, "n_users", minimum=1)
        )
        fixed = movielens_population(name, data_home, d, subpopulations)
        service_dim = d
    return PopulationShape(
        n_users=fixed.n,
        dim=d,
        service_dim=service_dim,
        n_groups=fixed.n_groups,
        n_clusters=None,
        dataset=name,
        data_home=data_home,
        fixed=fixed,
    )


def check_reference_ks(reference_ks: Any, n_services: int) -> tuple[int, ...]:
    """Return ``reference_ks`` as a tuple of service counts in ``[1, n_services]``."""
    if reference_ks is None:
        return ()
    if isinstance(reference_ks, (str, bytes)) or not isinstance(reference_ks, Sequence):
        raise TypeError(f"reference_ks must be a list of ints, got {reference_ks!r}")
    return tuple(check_int(k, "reference_ks", minimum=1, maximum=n_services) for k in reference_ks)
