"""AppleTasting's configs: two kinds of world, two frozen, validated types.

:class:`SyntheticApple` (drawn worlds: separable, minority, gappy,
striped) and :class:`DatasetApple` (a dataset's rows, in a seeded or
adversarial order) share the task's terms (:class:`AppleConfig`); each
checks its arguments when made. :func:`apple_config` builds one from the
env's keyword arguments (what ``gym.make("AppleTasting-v0", **kwargs)``
passes), with the errors those arguments always had.

Examples
--------
>>> SyntheticApple(scenario="gappy").band()
(0.5, 1.5)
>>> apple_config(dataset="breast_cancer").order
'random'
>>> SyntheticApple(noise=0.7)
Traceback (most recent call last):
...
ValueError: noise must be <= 0.5, got 0.7
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
)
from osfb_gym.envs._config import given_config, set_checked
from osfb_gym.envs._stream import DatasetStream
from osfb_gym.envs.apple.streams import ROWS, TABULAR_FEATURES, TEXT_FEATURES, apple_stream
from osfb_gym.envs.apple.world import CHUNK, SCENARIOS, resolve_band, resolve_positive_rate

if TYPE_CHECKING:
    from osfb_gym.data import Dataset, TextDataset

ORDERS = ("random", "adversarial")
FEEDBACK_MODES = ("one_sided", "full")
DEFAULT_DIM = 20  # synthetic worlds; a tabular dataset has its own
DEFAULT_HORIZON = 2000  # synthetic worlds; a dataset's episode is its whole stream
#: arguments that shape a synthetic world only, with their defaults
SYNTHETIC_ONLY: dict[str, Any] = {
    "scenario": "separable",
    "noise": 0.0,
    "positive_rate": None,
    "gap_offset": None,
    "gap_width": None,
    "stripe_offset": None,
    "stripe_width": None,
    "world_seed": None,
}
#: arguments that apply to a dataset only, with their defaults
DATASET_ONLY: dict[str, Any] = {
    "data_home": None,
    "topic": None,
    "first_positive_first": None,
    "positive_class": 1,
    "rows": "all",
    "features": None,
    "encoding": None,
}


@dataclass(frozen=True, kw_only=True)
class AppleConfig:
    """The task's terms every apple-tasting world shares.

    Made through :class:`SyntheticApple` or :class:`DatasetApple`; see
    :class:`~osfb_gym.envs.apple.AppleTastingEnv`'s Arguments for each field.
    """

    horizon: int | None = None
    gain: float = 1.0
    cost_fp: float = 1.0
    order: str = "random"
    feedback: str = "one_sided"

    def __post_init__(self) -> None:
        """Check the shared terms, or raise naming the argument."""
        set_checked(self, "order", check_choice(self.order, "order", ORDERS))
        set_checked(self, "feedback", check_choice(self.feedback, "feedback", FEEDBACK_MODES))
        set_checked(self, "gain", check_float(self.gain, "gain", low=0.0))
        set_checked(self, "cost_fp", check_float(self.cost_fp, "cost_fp", low=0.0))


@dataclass(frozen=True, kw_only=True)
class SyntheticApple(AppleConfig):
    """A drawn world: a linear boundary with label noise, or Sculley's gappy and striped ones.

    ``dim`` 20 and ``horizon`` 2000 unless given; ``positive_rate`` None is
    the scenario's default (:meth:`resolved_positive_rate`), the band the
    scenario's (:meth:`band`).
    """

    scenario: str = "separable"
    dim: int = DEFAULT_DIM
    noise: float = 0.0
    positive_rate: float | None = None
    gap_offset: float | None = None
    gap_width: float | None = None
    stripe_offset: float | None = None
    stripe_width: float | None = None
    world_seed: int | None = None

    def __post_init__(self) -> None:
        """Check every argument, or raise naming it."""
        set_checked(self, "scenario", check_choice(self.scenario, "scenario", SCENARIOS))
        set_checked(self, "world_seed", check_world_seed(self.world_seed))
        super().__post_init__()
        set_checked(self, "noise", check_float(self.noise, "noise", low=0.0, high=0.5))
        self.resolved_positive_rate()
        self.band()
        set_checked(self, "dim", check_int(self.dim, "dim", minimum=1))
        horizon = check_int(
            DEFAULT_HORIZON if self.horizon is None else self.horizon, "horizon", minimum=1
        )
        set_checked(self, "horizon", horizon)
        # a chunk of examples (float64 and float32 features) is drawn at once; the
        # adversarial order draws the whole episode at reset
        adversarial = self.order == "adversarial"
        check_memory(
            16 * (horizon + 1 if adversarial else CHUNK) * self.dim,
            f"horizon x dim = {horizon} x {self.dim} with order='adversarial'"
            if adversarial
            else f"dim = {self.dim} (x {CHUNK} examples a draw)",
        )

    def resolved_positive_rate(self) -> float:
        """Return the clean ``P(y = 1)`` (the scenario's default where not given)."""
        return resolve_positive_rate(self.scenario, self.positive_rate)

    def band(self) -> tuple[float, float] | None:
        """Return the gap's or stripe's score interval; None for the other scenarios."""
        return resolve_band(
            self.scenario, self.gap_offset, self.gap_width, self.stripe_offset, self.stripe_width
        )


@dataclass(frozen=True, kw_only=True)
class DatasetApple(AppleConfig):
    """A dataset's stream: its rows (one class the positive one) in a seeded or adversarial order.

    ``dataset`` is a name :func:`osfb_gym.data.load` knows or a record; it
    is loaded (and featurised: ``dim`` hashing buckets for text) by
    :meth:`load`. ``horizon`` None is the whole stream.
    """

    dataset: str | Dataset | TextDataset
    dim: int | None = None
    data_home: str | None = None
    topic: str | None = None
    first_positive_first: bool | None = None
    positive_class: int = 1
    rows: str = "all"
    features: str | None = None
    encoding: str | None = None

    def __post_init__(self) -> None:
        """Check every argument but the data's own (checked when loaded), or raise naming it."""
        super().__post_init__()
        check_data_home(self.data_home, self.dataset)
        if self.first_positive_first is not None:
            flag = check_bool(self.first_positive_first, "first_positive_first")
            set_checked(self, "first_positive_first", flag)
            if flag and self.order == "adversarial":
                raise ValueError(
                    "first_positive_first=True contradicts order='adversarial' (negatives first)"
                )
        check_positive_class(self.positive_class)
        check_choice(self.rows, "rows", ROWS)
        if self.features is not None:
            check_choice(self.features, "features", (*TEXT_FEATURES, *TABULAR_FEATURES))
        if self.horizon is not None:
            set_checked(self, "horizon", check_int(self.horizon, "horizon", minimum=1))

    @property
    def name(self) -> str | None:
        """The dataset's name (a record's own name)."""
        return (
            self.dataset if isinstance(self.dataset, str) else getattr(self.dataset, "name", None)
        )

    def load(self) -> DatasetStream:
        """Load the stream, then cut, relabel and featurise it as the arguments say."""
        return apple_stream(
            self.dataset,
            self.data_home,
            self.dim,
            self.topic,
            self.positive_class,
            self.rows,
            self.features,
            self.encoding,
        )

    def starts_with_a_positive(self, stream: DatasetStream) -> bool:
        """Return ``first_positive_first`` resolved: by default, Reuters in a random order."""
        if self.first_positive_first is None:
            return stream.name == "reuters_r8" and self.order == "random"
        return self.first_positive_first


def check_positive_class(positive_class: Any) -> None:
    """Raise unless ``positive_class`` is 0 or 1."""
    if positive_class not in (0, 1) or isinstance(positive_class, bool):
        raise ValueError(f"positive_class must be 0 or 1, got {positive_class!r}")


#: every argument a config takes (the env's keyword arguments but ``render_*`` and ``config``)
ARGUMENTS = tuple(
    dict.fromkeys(f.name for cls in (SyntheticApple, DatasetApple) for f in fields(cls))
)


def apple_config(
    config: SyntheticApple | DatasetApple | None = None, **arguments: Any
) -> SyntheticApple | DatasetApple:
    """Return the config the env's keyword ``arguments`` describe, or ``config`` itself.

    ``dataset`` None makes a :class:`SyntheticApple`, else a
    :class:`DatasetApple`; an argument of the other kind with a non-default
    value raises ``ValueError`` naming it. With ``config`` given, every
    argument must keep its default.
    """
    if config is not None:
        defaults: dict[str, Any] = {**SYNTHETIC_ONLY, **DATASET_ONLY, "dataset": None, "dim": None}
        defaults.update({f.name: f.default for f in fields(AppleConfig)})
        return given_config(config, (SyntheticApple, DatasetApple), arguments, defaults)
    dataset = arguments.pop("dataset", None)
    check_data_home(arguments.get("data_home"), dataset)
    if arguments.get("first_positive_first") is not None:
        check_bool(arguments["first_positive_first"], "first_positive_first")
    check_positive_class(arguments.get("positive_class", 1))
    check_choice(arguments.get("rows", "all"), "rows", ROWS)
    if dataset is not None:
        name = dataset if isinstance(dataset, str) else getattr(dataset, "name", None)
        for key, default in SYNTHETIC_ONLY.items():
            value = arguments.pop(key, default)
            if value != default:
                raise ValueError(
                    f"{key} shapes synthetic worlds only; with dataset={name!r} "
                    f"the data fix the examples and labels, got {key}={value!r}"
                )
        return DatasetApple(dataset=dataset, **arguments)
    _refuse_dataset_only(
        {key: arguments.pop(key, default) for key, default in DATASET_ONLY.items()}
    )
    if arguments.get("dim") is None:
        arguments["dim"] = DEFAULT_DIM
    return SyntheticApple(**arguments)


def _refuse_dataset_only(given: dict[str, Any]) -> None:
    for argument in ("positive_class", "rows", "features"):
        if given[argument] != DATASET_ONLY[argument]:
            raise ValueError(
                f"{argument} applies to datasets only; a synthetic world has no rows to "
                f"relabel, split or featurise, got {argument}={given[argument]!r}"
            )
    if given["topic"] is not None:
        raise ValueError(
            f"topic applies to dataset='reuters_r8' only, got topic={given['topic']!r}"
        )
    if given["encoding"] is not None:
        raise ValueError(f"encoding applies to a dataset only, got encoding={given['encoding']!r}")
    if given["first_positive_first"] is not None:
        raise ValueError(
            "first_positive_first applies to datasets only; a synthetic stream is drawn "
            f"example by example, got first_positive_first={given['first_positive_first']!r}"
        )
