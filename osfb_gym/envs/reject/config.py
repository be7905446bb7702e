"""RejectOption's configs: two kinds of world, two frozen, validated types.

:class:`SyntheticReject` (drawn worlds: overlapping Gaussians or a
separable boundary with label noise) and :class:`DatasetReject` (a
dataset's rows, each once or drawn with replacement) share the task's terms
(:class:`RejectConfig`); each checks its arguments when made.
:func:`reject_config` builds one from the env's keyword arguments (what
``gym.make("RejectOption-v0", **kwargs)`` passes), with the errors those
arguments always had.

Examples
--------
>>> SyntheticReject().separation, SyntheticReject(scenario="separable").separation
(2.0, None)
>>> reject_config(dataset="breast_cancer", d=0.1).d
0.1
>>> SyntheticReject(d=0.5)
Traceback (most recent call last):
...
ValueError: d must be < 0.5, got 0.5
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from osfb_gym.core.seeding import check_world_seed
from osfb_gym.core.validation import (
    check_bool,
    check_choice,
    check_data_home,
    check_float,
    check_int,
    check_memory,
    check_rejection_cost,
)
from osfb_gym.envs._config import given_config, set_checked
from osfb_gym.envs._stream import DatasetStream
from osfb_gym.envs.reject.data import DEFAULT_HORIZON, open_dataset
from osfb_gym.envs.reject.world import (
    CHUNK,
    DEFAULT_DIM,
    DEFAULT_SEPARATION,
    MAX_SEPARATION,
    SCENARIOS,
)

if TYPE_CHECKING:
    from osfb_gym.data import Dataset, TextDataset

FEEDBACK_MODES = ("one_sided", "full")
SETTLE_MODES = ("episode_end", "never")
#: arguments that shape a synthetic world only, with their defaults
SYNTHETIC_ONLY: dict[str, Any] = {
    "scenario": "overlap",
    "separation": None,
    "noise": 0.0,
    "world_seed": None,
}
#: arguments that apply to a dataset only, with their defaults
DATASET_ONLY: dict[str, Any] = {
    "data_home": None,
    "topic": None,
    "replacement": False,
    "encoding": None,
}


@dataclass(frozen=True, kw_only=True)
class RejectConfig:
    """The task's terms every reject-option world shares.

    Made through :class:`SyntheticReject` or :class:`DatasetReject`; see
    :class:`~osfb_gym.envs.reject.RejectOptionEnv`'s Arguments for each field.
    """

    d: float = 0.25
    query_cost: float = 0.0
    settle: str = "episode_end"
    horizon: int | None = None
    feedback: str = "one_sided"

    def __post_init__(self) -> None:
        """Check the shared terms, or raise naming the argument."""
        set_checked(self, "d", check_rejection_cost(self.d))
        set_checked(self, "query_cost", check_float(self.query_cost, "query_cost", low=0.0))
        set_checked(self, "settle", check_choice(self.settle, "settle", SETTLE_MODES))
        set_checked(self, "feedback", check_choice(self.feedback, "feedback", FEEDBACK_MODES))


@dataclass(frozen=True, kw_only=True)
class SyntheticReject(RejectConfig):
    """A drawn world: two overlapping Gaussian classes, or a separable boundary.

    ``dim`` 10 and ``horizon`` 10,000 (the paper's ``T``) unless given;
    ``separation`` None is 2.0 in the overlap scenario (and stays None in
    the separable one, which has no class means).
    """

    scenario: str = "overlap"
    dim: int = DEFAULT_DIM
    separation: float | None = None
    noise: float = 0.0
    world_seed: int | None = None

    def __post_init__(self) -> None:
        """Check every argument, or raise naming it."""
        super().__post_init__()
        set_checked(self, "scenario", check_choice(self.scenario, "scenario", SCENARIOS))
        set_checked(self, "world_seed", check_world_seed(self.world_seed))
        set_checked(self, "noise", check_float(self.noise, "noise", low=0.0, high=0.5))
        if self.separation is not None and self.scenario != "overlap":
            raise ValueError(
                f"separation applies to scenario='overlap' only, got separation="
                f"{self.separation!r} with scenario={self.scenario!r}"
            )
        if self.scenario == "overlap":
            separation = DEFAULT_SEPARATION if self.separation is None else self.separation
            separation = check_float(
                separation, "separation", low=0.0, low_inclusive=False, high=MAX_SEPARATION
            )
            set_checked(self, "separation", separation)
        dim = check_int(self.dim, "dim", minimum=1)
        set_checked(self, "dim", dim)
        # a chunk of examples (features in float64 and float32, scores) is drawn at once
        check_memory(16 * CHUNK * dim, f"dim = {dim} (x {CHUNK} examples a draw)")
        horizon = DEFAULT_HORIZON if self.horizon is None else self.horizon
        set_checked(self, "horizon", check_int(horizon, "horizon", minimum=1))


@dataclass(frozen=True, kw_only=True)
class DatasetReject(RejectConfig):
    """A dataset's stream, labels in {-1, +1}: each row once, or ``horizon`` draws with replacement.

    ``dataset`` is a name :func:`osfb_gym.data.load` knows or a record; it
    is loaded by :meth:`load`. ``horizon`` None is the whole dataset (10,000
    draws with ``replacement``).
    """

    dataset: str | Dataset | TextDataset
    dim: int | None = None
    data_home: str | None = None
    topic: str | None = None
    replacement: bool = False
    encoding: str | None = None

    def __post_init__(self) -> None:
        """Check every argument but the data's own (checked when loaded), or raise naming it."""
        super().__post_init__()
        set_checked(self, "replacement", check_bool(self.replacement, "replacement"))
        check_data_home(self.data_home, self.dataset)
        if self.horizon is not None:
            steps = check_int(self.horizon, "horizon", minimum=1)
            set_checked(self, "horizon", steps)
            if self.replacement:  # the episode's row order is drawn at reset
                check_memory(8 * steps, f"horizon = {steps} with replacement=True (row draws)")

    @property
    def name(self) -> str | None:
        """The dataset's name (a record's own name)."""
        dataset = self.dataset
        return dataset if isinstance(dataset, str) else getattr(dataset, "name", None)

    def load(self) -> tuple[DatasetStream, int]:
        """Load the stream; return it and the episode's horizon."""
        return open_dataset(
            self.dataset,
            data_home=self.data_home,
            dim=self.dim,
            topic=self.topic,
            horizon=self.horizon,
            replacement=self.replacement,
            encoding=self.encoding,
        )


#: every argument a config takes (the env's keyword arguments but ``render_*`` and ``config``)
ARGUMENTS = tuple(
    dict.fromkeys(f.name for cls in (SyntheticReject, DatasetReject) for f in fields(cls))
)


def reject_config(
    config: SyntheticReject | DatasetReject | None = None, **arguments: Any
) -> SyntheticReject | DatasetReject:
    """Return the config the env's keyword ``arguments`` describe, or ``config`` itself.

    ``dataset`` None makes a :class:`SyntheticReject`, else a
    :class:`DatasetReject`; an argument of the other kind with a
    non-default value raises ``ValueError`` naming it. With ``config``
    given, every argument must keep its default.
    """
    if config is not None:
        defaults: dict[str, Any] = {**SYNTHETIC_ONLY, **DATASET_ONLY, "dataset": None}
        defaults.update({f.name: f.default for f in fields(RejectConfig)}, dim=None)
        return given_config(config, (SyntheticReject, DatasetReject), arguments, defaults)
    dataset = arguments.pop("dataset", None)
    replacement = check_bool(arguments.get("replacement", False), "replacement")
    check_data_home(arguments.get("data_home"), dataset)
    if dataset is not None:
        name = dataset if isinstance(dataset, str) else getattr(dataset, "name", None)
        for key, default in SYNTHETIC_ONLY.items():
            value = arguments.pop(key, default)
            if value != default:
                raise ValueError(
                    f"{key} shapes synthetic worlds only; with dataset={name!r} "
                    f"the data fix the examples and labels, got {key}={value!r}"
                )
        return DatasetReject(dataset=dataset, **arguments)
    given = {key: arguments.pop(key, default) for key, default in DATASET_ONLY.items()}
    given["replacement"] = replacement or None
    for key in ("topic", "replacement", "encoding"):
        if given[key] is not None:
            raise ValueError(f"{key} applies to datasets only, got {key}={given[key]!r}")
    if arguments.get("dim") is None:
        arguments["dim"] = DEFAULT_DIM
    return SyntheticReject(**arguments)
