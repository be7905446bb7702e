"""MultiServiceChoice's configs: two kinds of population, two frozen, validated types.

:class:`SyntheticServices` (drawn populations: clusters of users, or
linear models of users' samples) and :class:`DataServices` (a population
fixed by data: census cells, MovieLens viewers) share the task's terms
(:class:`ServicesConfig`); each checks its arguments when made.
:func:`services_config` builds one from the env's keyword arguments (what
``gym.make("MultiServiceChoice-v0", **kwargs)`` passes), with the errors
those arguments always had.

Examples
--------
>>> SyntheticServices(n_users=40).n_clusters
10
>>> services_config(population="census").dataset
'adult'
>>> SyntheticServices(n_users=3, n_services=4)
Traceback (most recent call last):
...
ValueError: n_services must be <= n_users (3): a service is placed at an acquired user's \
preference, got n_services=4
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from osfb_gym.core.seeding import check_world_seed
from osfb_gym.core.validation import check_bool, check_choice, check_float, check_int, check_memory
from osfb_gym.envs._config import given_config, set_checked
from osfb_gym.envs.services.populations import (
    CENSUS_GROUPINGS,
    census_population,
    draw_clusters,
    draw_linear,
    movielens_population,
)
from osfb_gym.envs.services.world import FAMILIES, Population

POPULATIONS = ("clusters", "linear", "census", "movielens")
SYNTHETIC_POPULATIONS = ("clusters", "linear")
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


@dataclass(frozen=True, kw_only=True)
class ServicesConfig:
    """The task's terms every population shares.

    Made through :class:`SyntheticServices` or :class:`DataServices`; see
    :class:`~osfb_gym.envs.services.MultiServiceChoiceEnv`'s Arguments for each field.
    """

    n_services: int = 10
    reveal_groups: bool = True
    dynamics_rounds: int = 0
    reference_restarts: int = 10
    reference_ks: Sequence[int] | None = None
    report: str = "loss"

    def __post_init__(self) -> None:
        """Check the shared terms, or raise naming the argument."""
        set_checked(self, "reveal_groups", check_bool(self.reveal_groups, "reveal_groups"))
        rounds = check_int(self.dynamics_rounds, "dynamics_rounds", minimum=0)
        set_checked(self, "dynamics_rounds", rounds)
        restarts = check_int(self.reference_restarts, "reference_restarts", minimum=0)
        set_checked(self, "reference_restarts", restarts)
        set_checked(self, "report", check_choice(self.report, "report", REPORTS))
        set_checked(self, "n_services", check_int(self.n_services, "n_services", minimum=1))

    def _check_reference_ks(self) -> None:
        set_checked(self, "reference_ks", check_reference_ks(self.reference_ks, self.n_services))


@dataclass(frozen=True, kw_only=True)
class SyntheticServices(ServicesConfig):
    """A drawn population: users in clusters, or linear models fitted on users' samples.

    ``n_users`` 500, ``dim`` 2, ``n_groups`` 2 and ``n_clusters``
    ``min(10, n_users)`` unless given. The defaults model a small service
    market: 500 users in 10 taste communities of very unequal sizes
    (Dirichlet(1) shares), in the plane so that worlds can be looked at;
    nothing in them is tuned to favour an agent.

    ``population="linear"`` (the paper's Section 4): ``n_users``
    subpopulations of linear predictors; a service is a regressor, a
    subpopulation's loss its empirical squared error on its
    ``samples_per_user`` private samples (OLS residual included), acquiring
    it fits OLS on them; ``loss`` must stay "squared" there. A
    subpopulation knows its floor (its own OLS residual, what
    ``report="excess"`` subtracts) because it can fit its private samples.
    """

    population: str = "clusters"
    n_users: int = DEFAULT_N_USERS
    dim: int = DEFAULT_DIM
    loss: str = "squared"
    n_clusters: int | None = None
    n_groups: int = DEFAULT_N_GROUPS
    group_correlation: float = 0.5
    outlier_fraction: float = 0.0
    samples_per_user: int = 50
    world_seed: int | None = None

    def __post_init__(self) -> None:
        """Check every argument and the world's size, or raise naming the argument."""
        super().__post_init__()
        population = check_choice(self.population, "population", SYNTHETIC_POPULATIONS)
        set_checked(self, "loss", check_choice(self.loss, "loss", FAMILIES))
        _check_shared_population(population, self.loss, self.outlier_fraction)
        correlation = check_float(self.group_correlation, "group_correlation", low=0, high=1)
        set_checked(self, "group_correlation", correlation)
        set_checked(self, "world_seed", check_world_seed(self.world_seed))
        users = check_int(self.n_users, "n_users", minimum=1)
        set_checked(self, "n_users", users)
        set_checked(self, "dim", check_int(self.dim, "dim", minimum=1))
        set_checked(self, "n_groups", check_int(self.n_groups, "n_groups", minimum=1))
        clusters = (
            min(DEFAULT_N_CLUSTERS, users)
            if self.n_clusters is None
            else check_int(self.n_clusters, "n_clusters", minimum=1, maximum=users)
        )
        set_checked(self, "n_clusters", clusters)
        # a subpopulation needs more samples than features for its OLS fit (Assumption 5)
        samples = check_int(
            self.samples_per_user,
            "samples_per_user",
            minimum=self.dim + 1 if population == "linear" else 1,
        )
        set_checked(self, "samples_per_user", samples)
        check_n_services(self.n_services, users)
        check_memory(self.world_bytes(), self.world_sizes())
        self._check_reference_ks()

    @property
    def service_dim(self) -> int:
        """The services' dimension: the preferences'."""
        return self.dim

    def world_bytes(self) -> float:
        """Estimate the bytes of a world and an episode's arrays (float64, a few copies).

        Per user: the preference (``dim``), a Mahalanobis matrix (``dim x dim``) or
        the linear population's samples (``samples_per_user x dim``), losses and
        choices; the services placed (``n_services x dim``).
        """
        per_user = self.dim + 16
        if self.loss == "mahalanobis":
            per_user += self.dim * self.dim
        if self.population == "linear":
            per_user += self.samples_per_user * (self.dim + 1)
        return 32.0 * (self.n_users * per_user + self.n_services * self.dim)

    def world_sizes(self) -> str:
        """Name the sizes :meth:`world_bytes` multiplies, for its error message."""
        sizes = f"n_users x dim = {self.n_users} x {self.dim}"
        if self.loss == "mahalanobis":
            sizes += " (x dim for loss='mahalanobis')"
        if self.population == "linear":
            sizes += f" (x samples_per_user = {self.samples_per_user})"
        return sizes

    def draw(self, rng: np.random.Generator, n_users: int | None = None) -> Population:
        """Draw a population from ``rng`` (of ``n_users``: by default the config's)."""
        assert self.n_clusters is not None  # set by the checks
        n = self.n_users if n_users is None else n_users
        if self.population == "linear":
            return draw_linear(
                n,
                self.dim,
                self.samples_per_user,
                self.n_clusters,
                self.n_groups,
                self.group_correlation,
                rng,
            )
        return draw_clusters(
            n,
            self.dim,
            self.loss,
            self.n_clusters,
            self.n_groups,
            self.group_correlation,
            rng,
            self.outlier_fraction,
        )


@dataclass(frozen=True, kw_only=True)
class DataServices(ServicesConfig):
    """A population fixed by data: census cells (Adult), or MovieLens viewers' clusters.

    Both are subpopulations of linear predictors, as ``"linear"`` in
    :class:`SyntheticServices` (the loss is the empirical squared error).
    Census: Adult's sex x race x occupation cells with at least 30 people,
    groups sex x race (or sex, or race: ``census_groups``), score
    ``log(hours-per-week)``, services in dimension ``dim + 1`` (an
    intercept). MovieLens 10M: ``n_users`` subpopulations of viewers
    clustered on their other ratings, a service predicts a rating for each
    of the ``dim`` most-rated movies, a subpopulation's loss is its mean
    squared error on its ratings of them (see
    :func:`osfb_gym.envs.services.populations.movielens_population`).

    ``population`` is ``"census"`` or ``"movielens"``; ``dataset`` None is
    the population's own (``"adult"``, ``"movielens"``); ``dim`` 10 SVD
    components (census) or the 50 most-rated movies (MovieLens) unless
    given; ``n_users`` is MovieLens' number of viewer clusters (200),
    census fixes its own. The data are read by :meth:`load`.
    """

    population: str
    dataset: str | None = None
    data_home: str | None = None
    dim: int | None = None
    n_users: int | None = None
    census_groups: str = "sex_race"

    def __post_init__(self) -> None:
        """Check every argument but the data's own (checked when loaded), or raise naming it."""
        super().__post_init__()
        population = check_choice(self.population, "population", tuple(DATA_POPULATIONS))
        groups = check_choice(self.census_groups, "census_groups", CENSUS_GROUPINGS)
        _check_census_groups(groups, population)
        if population == "census" and self.n_users is not None:
            raise ValueError(
                f"n_users shapes synthetic worlds only; the census population is fixed "
                f"by its data, got n_users={self.n_users!r}"
            )
        choices = DATA_POPULATIONS[population]
        dataset = choices[0] if self.dataset is None else self.dataset
        set_checked(self, "dataset", check_choice(dataset, "dataset", choices))
        if self.data_home is not None and not isinstance(self.data_home, str):
            raise TypeError(f"data_home must be a path (str) or None, got {self.data_home!r}")
        default_dim = DEFAULT_CENSUS_DIM if population == "census" else DEFAULT_MOVIES
        dim = default_dim if self.dim is None else self.dim
        set_checked(self, "dim", check_int(dim, "dim", minimum=1))
        if population == "movielens":
            users = DEFAULT_SUBPOPULATIONS if self.n_users is None else self.n_users
            users = check_int(users, "n_users", minimum=1)
            set_checked(self, "n_users", users)
            check_n_services(self.n_services, users)
        self._check_reference_ks()

    @property
    def service_dim(self) -> int:
        """The services' dimension: census services carry an intercept."""
        assert self.dim is not None  # set by the checks
        return self.dim + 1 if self.population == "census" else self.dim

    def load(self) -> Population:
        """Read the data and return the population they fix."""
        assert self.dataset is not None and self.dim is not None  # set by the checks
        if self.population == "census":
            return census_population(
                self.dataset, self.data_home, self.dim, CENSUS_MIN_SAMPLES, self.census_groups
            )
        assert self.n_users is not None
        return movielens_population(self.dataset, self.data_home, self.dim, self.n_users)


def check_n_services(n_services: int, n_users: int) -> None:
    """Raise unless ``n_services <= n_users`` (a service sits at an acquired user's preference)."""
    if n_services > n_users:
        raise ValueError(
            f"n_services must be <= n_users ({n_users}): a service is placed at an "
            f"acquired user's preference, got n_services={n_services}"
        )


def _check_census_groups(census_groups: str, population: str) -> None:
    if census_groups != "sex_race" and population != "census":
        raise ValueError(
            f"census_groups applies to population='census' only, got "
            f"census_groups={census_groups!r} with population={population!r}"
        )


def _check_shared_population(population: str, loss: str, outlier_fraction: Any) -> None:
    """Check the arguments whose meaning depends on the population (as given to the env)."""
    fraction = check_float(
        outlier_fraction, "outlier_fraction", low=0, high=1, high_inclusive=False
    )
    if fraction > 0 and population != "clusters":
        raise ValueError(
            f"outlier_fraction applies to population='clusters' only, got "
            f"outlier_fraction={outlier_fraction!r} with population={population!r}"
        )
    if population != "clusters" and loss != "squared":
        raise ValueError(
            f"loss is the empirical squared error for population={population!r}; got loss={loss!r}"
        )


#: arguments of a drawn population only, with their defaults (None: the default resolved)
SYNTHETIC_ONLY: dict[str, Any] = {
    "loss": "squared",
    "n_clusters": None,
    "n_groups": None,
    "group_correlation": 0.5,
    "outlier_fraction": 0.0,
    "samples_per_user": 50,
    "world_seed": None,
}
#: arguments of a data population only, with their defaults
DATA_ONLY: dict[str, Any] = {"dataset": None, "data_home": None, "census_groups": "sex_race"}
#: every argument a config takes (the env's keyword arguments but ``render_*`` and ``config``)
ARGUMENTS = tuple(
    dict.fromkeys(f.name for cls in (SyntheticServices, DataServices) for f in fields(cls))
)


def services_config(
    config: SyntheticServices | DataServices | None = None, **arguments: Any
) -> SyntheticServices | DataServices:
    """Return the config the env's keyword ``arguments`` describe, or ``config`` itself.

    ``population`` ``"clusters"`` or ``"linear"`` makes a
    :class:`SyntheticServices`, ``"census"`` or ``"movielens"`` a
    :class:`DataServices`; an argument of the other kind with a non-default
    value raises ``ValueError`` naming it. With ``config`` given, every
    argument must keep its default.
    """
    if config is not None:
        defaults = {**SYNTHETIC_ONLY, **DATA_ONLY, "n_users": None, "dim": None}
        defaults["population"] = "clusters"
        defaults.update({f.name: f.default for f in fields(ServicesConfig)})
        return given_config(config, (SyntheticServices, DataServices), arguments, defaults)
    population = check_choice(arguments.get("population", "clusters"), "population", POPULATIONS)
    loss = check_choice(arguments.get("loss", "squared"), "loss", FAMILIES)
    groups = check_choice(
        arguments.get("census_groups", "sex_race"), "census_groups", CENSUS_GROUPINGS
    )
    _check_census_groups(groups, population)
    check_float(arguments.get("group_correlation", 0.5), "group_correlation", low=0, high=1)
    _check_shared_population(population, loss, arguments.get("outlier_fraction", 0.0))
    check_world_seed(arguments.get("world_seed"))
    if population in DATA_POPULATIONS:
        return DataServices(**_data_arguments(population, arguments))
    dataset, data_home = arguments.pop("dataset", None), arguments.pop("data_home", None)
    if dataset is not None or data_home is not None:
        raise ValueError(
            f"dataset and data_home apply to population='census' or 'movielens' "
            f"only, got dataset={dataset!r}, data_home={data_home!r}"
        )
    arguments.pop("census_groups", None)
    for name, default in (("n_users", DEFAULT_N_USERS), ("dim", DEFAULT_DIM)):
        if arguments.get(name) is None:
            arguments[name] = default
    if arguments.get("n_groups") is None:
        arguments["n_groups"] = DEFAULT_N_GROUPS
    return SyntheticServices(**arguments)


def _data_arguments(population: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Refuse the arguments a data population fixes; return the rest."""
    fixed_by_data = ["n_clusters", "n_groups", "world_seed"]
    for name in fixed_by_data:
        value = arguments.pop(name, None)
        if value is not None:
            raise ValueError(
                f"{name} shapes synthetic worlds only; the {population} population "
                f"is fixed by its data, got {name}={value!r}"
            )
    for name in ("loss", "outlier_fraction", "group_correlation", "samples_per_user"):
        value = arguments.pop(name, SYNTHETIC_ONLY[name])
        if value != SYNTHETIC_ONLY[name]:
            raise ValueError(
                f"{name} shapes synthetic worlds only; the {population} population "
                f"is fixed by its data, got {name}={value!r}"
            )
    return arguments


#: the populations a replacement can be drawn from (a synthetic world has more users)
REPLACEABLE = ("clusters", "linear")


@dataclass(frozen=True, kw_only=True)
class RetentionConfig:
    """The retention world: a population's config, and how its users leave, return or are replaced.

    ``services`` is the world (any :class:`SyntheticServices` or
    :class:`DataServices` without learning dynamics; by default 500
    clustered users, no reference optimum); ``outside_loss`` None is
    ``tolerance``, ``horizon`` None is ``2 n_services``. See
    :class:`~osfb_gym.envs.services.MultiServiceChoiceRetentionEnv`'s Arguments.

    Examples
    --------
    >>> RetentionConfig(services=SyntheticServices(n_users=40, n_services=4)).horizon
    8
    """

    services: SyntheticServices | DataServices = field(
        default_factory=lambda: SyntheticServices(reference_restarts=0)
    )
    tolerance: float = 2.0
    leave_probability: float = 0.2
    return_probability: float = 0.0
    replace: bool = False
    # None: resolved when the config is made (never None after)
    outside_loss: float = None  # type: ignore[assignment]
    horizon: int = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        """Check every argument against the world, or raise naming the argument."""
        services = self.services
        if not isinstance(services, SyntheticServices | DataServices):
            raise TypeError(
                f"services must be a SyntheticServices or DataServices, got {services!r}"
            )
        _check_retention_world(services.dynamics_rounds, self.replace, services.population)
        tolerance = check_float(self.tolerance, "tolerance", low=0)
        set_checked(self, "tolerance", tolerance)
        leave = check_float(self.leave_probability, "leave_probability", low=0, high=1)
        set_checked(self, "leave_probability", leave)
        back = check_float(self.return_probability, "return_probability", low=0, high=1)
        set_checked(self, "return_probability", back)
        if not isinstance(self.replace, bool):
            raise TypeError(f"replace must be a bool, got {self.replace!r}")
        if self.replace and back > 0:
            raise ValueError(
                "replace and return_probability exclude each other (a replaced slot has no "
                f"departed user to return), got return_probability={self.return_probability!r}"
            )
        outside = self.outside_loss
        outside = tolerance if outside is None else check_float(outside, "outside_loss", low=0)
        set_checked(self, "outside_loss", outside)
        horizon = 2 * services.n_services if self.horizon is None else self.horizon
        set_checked(self, "horizon", check_int(horizon, "horizon", minimum=1))


def _check_retention_world(dynamics_rounds: Any, replace: Any, population: Any) -> None:
    if dynamics_rounds != 0:
        raise ValueError(
            "dynamics_rounds is not supported by the retention world (its rounds go on "
            f"to horizon), got dynamics_rounds={dynamics_rounds!r}"
        )
    if replace is True and population not in REPLACEABLE:  # (before any data is read)
        raise ValueError(
            f"replace needs a synthetic population {REPLACEABLE}, got population={population!r}"
        )


#: the retention world's own arguments (the env's keywords besides the population's)
RETENTION_ARGUMENTS = tuple(f.name for f in fields(RetentionConfig) if f.name != "services")


def retention_config(config: RetentionConfig | None = None, **arguments: Any) -> RetentionConfig:
    """Return the retention config the env's keyword ``arguments`` describe, or ``config``.

    The retention world's own arguments (:data:`RETENTION_ARGUMENTS`) make
    the :class:`RetentionConfig`; the others make its population's, as for
    ``MultiServiceChoice-v0`` (:func:`services_config`), with
    ``reference_restarts`` 0 by default.
    """
    if config is not None:
        defaults: dict[str, Any] = {f.name: f.default for f in fields(RetentionConfig)}
        defaults["reference_restarts"] = 0
        return given_config(config, (RetentionConfig,), arguments, defaults)
    own = {name: arguments.pop(name) for name in RETENTION_ARGUMENTS if name in arguments}
    _check_retention_world(
        arguments.get("dynamics_rounds", 0),
        own.get("replace", False),
        arguments.get("population", "clusters"),
    )
    arguments.setdefault("reference_restarts", 0)
    return RetentionConfig(services=services_config(**arguments), **own)


def check_reference_ks(reference_ks: Any, n_services: int) -> tuple[int, ...]:
    """Return ``reference_ks`` as a tuple of service counts in ``[1, n_services]``."""
    if reference_ks is None:
        return ()
    if isinstance(reference_ks, (str, bytes)) or not isinstance(reference_ks, Sequence):
        raise TypeError(f"reference_ks must be a list of ints, got {reference_ks!r}")
    return tuple(check_int(k, "reference_ks", minimum=1, maximum=n_services) for k in reference_ks)
