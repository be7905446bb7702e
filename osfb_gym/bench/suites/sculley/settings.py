"""The settings of ``sculley-spam`` and ``sculley-reuters``: the protocols, grids and learners.

:data:`SCULLEY_SUITES` holds each table set's protocol (:class:`SculleySuite`),
:class:`SpamSettings` and :class:`ReutersSettings` the ``--set`` keys, and
:func:`protocol` the one under a run's settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from osfb_gym.bench.suites.sculley.paper import PAPER_TOPICS, PROTOCOL
from osfb_gym.bench.suites.tables import subset
from osfb_gym.core.validation import check_int
from osfb_gym.data.text import R8_TOPICS

ENV_ID = "AppleTasting-v0"
REUTERS_TOPICS = tuple(topic for topic in PAPER_TOPICS if topic in R8_TOPICS)
#: Table 3's C_neg with C_pos = 100, "from 0.001 to 128 in rough power of two increments":
#: 0.001 doubled up to 0.128, then 0.25 doubled up to 128 (18 values)
SVM_WEIGHTS_PAPER = tuple(0.001 * 2**k for k in range(8)) + tuple(2.0**k for k in range(-2, 8))
SVM_WEIGHTS = tuple(PROTOCOL["grids"]["svm_weights"])  # below 0.064 the SVM tastes everything
SVM_C: float = PROTOCOL["grids"]["svm_c"]
THRESHOLD_BIASES = tuple(PROTOCOL["grids"]["threshold_biases"])  # Table 3: threshold = -b
PERCEPTRON_WEIGHTS = tuple(PROTOCOL["grids"]["perceptron_weights"])  # c_pos, c_neg = 1
LEARNERS: dict[str, tuple[str, dict[str, Any]]] = {
    name: (learner["agent"], learner["params"]) for name, learner in PROTOCOL["learners"].items()
}
WRAPPERS: dict[str, str] = PROTOCOL["wrappers"]
VARIANTS: tuple[str, ...] = tuple(PROTOCOL["variants"])  # Table 1's row order


@dataclass(frozen=True)
class SculleySuite:
    """Either table set: its data, seeds and grids."""

    name: str
    description: str
    datasets: tuple[str, ...] = ("sms_spam", "spambase")  # Reuters: topics
    seeds: tuple[int, ...] = tuple(range(5))
    learners: tuple[str, ...] = ("svm", "margin_perceptron", "perceptron", "perceptron_bias")
    tune_seeds: tuple[int, ...] = (100, 101)  # spam: Label Efficient's beta is tuned on these
    betas: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)  # Reuters: one, the paper's
    rows: tuple[str, str] = ("test", "train")  # spam: (tuning rows, reported rows)
    svm_seeds: int = 2  # Reuters: the Online SVM runs the first svm_seeds seeds
    svm_weights: tuple[float, ...] = SVM_WEIGHTS  # Reuters: C_neg (SVM_WEIGHTS_PAPER: full grid)
    text: dict[str, Any] = field(default_factory=lambda: {"features": "binary", "dim": 2**18})
    spam: bool = True  # Table 1, else Tables 2-3


def _suite(name: str, fields: dict[str, Any]) -> SculleySuite:
    """Return ``protocol.toml``'s suite ``name`` (its lists as tuples; Reuters: its topics)."""
    read: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    if not read.get("spam", True):
        read["datasets"] = REUTERS_TOPICS
    return SculleySuite(name, **read)


SCULLEY_SUITES = {name: _suite(name, fields) for name, fields in PROTOCOL["suites"].items()}


@dataclass(frozen=True)
class _Flags:
    """The fields both suites take from the flags of ``osfb-bench run``."""

    name: ClassVar[str]

    #: runs (stream orders): seeds 0..seeds-1 (the --seeds flag)
    seeds: int = 5
    #: truncate every stream to this many steps (quick checks only; the --horizon flag)
    horizon: int | None = None
    #: folder of the dataset files (the --data-home flag)
    data_home: str | None = None

    def __post_init__(self) -> None:
        check_int(self.seeds, "seeds", minimum=1)


@dataclass(frozen=True)
class SpamSettings(_Flags):
    """The settings of ``sculley-spam``; each field but the flags' is a ``--set`` key."""

    name: ClassVar[str] = "sculley-spam"

    #: the spam datasets to run
    datasets: tuple[str, ...] = SCULLEY_SUITES["sculley-spam"].datasets
    #: the learners to run
    learners: tuple[str, ...] = SCULLEY_SUITES["sculley-spam"].learners

    def __post_init__(self) -> None:
        super().__post_init__()
        subset(self.datasets, SCULLEY_SUITES[self.name].datasets, "datasets")
        subset(self.learners, SCULLEY_SUITES[self.name].learners, "learners")

    def needs(self) -> tuple[str, ...]:
        """Return the datasets the run reads."""
        return self.datasets

    def without(self, missing: dict[str, str]) -> SpamSettings | None:
        """Return these settings without the ``missing`` datasets (None: none left)."""
        found = tuple(d for d in self.datasets if d not in missing)
        return replace(self, datasets=found) if found else None


@dataclass(frozen=True)
class ReutersSettings(_Flags):
    """The settings of ``sculley-reuters``; each field but the flags' is a ``--set`` key."""

    name: ClassVar[str] = "sculley-reuters"

    #: the R8 topics to run, each one vs the rest
    topics: tuple[str, ...] = SCULLEY_SUITES["sculley-reuters"].datasets
    #: the learners to run
    learners: tuple[str, ...] = SCULLEY_SUITES["sculley-reuters"].learners
    #: the Online SVM runs the first svm_seeds seeds
    svm_seeds: int = SCULLEY_SUITES["sculley-reuters"].svm_seeds
    #: run the SVM over the paper's whole C_neg grid
    full_grid: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int(self.svm_seeds, "svm_seeds", minimum=1)
        subset(self.topics, R8_TOPICS, "topics")
        subset(self.learners, SCULLEY_SUITES[self.name].learners, "learners")

    def needs(self) -> tuple[str, ...]:
        """Return the dataset the run reads."""
        return ("reuters_r8",)


def protocol(settings: SpamSettings | ReutersSettings) -> SculleySuite:
    """Return the suite's protocol (:class:`SculleySuite`) under ``settings``."""
    base = SCULLEY_SUITES[settings.name]
    given = replace(base, seeds=tuple(range(settings.seeds)), learners=settings.learners)
    if isinstance(settings, SpamSettings):
        return replace(given, datasets=settings.datasets)
    weights = SVM_WEIGHTS_PAPER if settings.full_grid else base.svm_weights
    return replace(
        given, datasets=settings.topics, svm_seeds=settings.svm_seeds, svm_weights=weights
    )


def reuters_grid(suite: SculleySuite, learner: str) -> list[tuple[str, float, dict[str, Any]]]:
    """Return ``learner``'s (weighting, value, params) grid: Table 2's biases, then Table 3's."""
    grid = [("threshold", b, {"threshold": -b}) for b in THRESHOLD_BIASES]
    if learner == "svm":  # C_neg = value with C_pos = SVM_C
        return grid + [("weight", w, {"class_weight": {0: w / SVM_C}}) for w in suite.svm_weights]
    return grid + [("weight", w, {"class_weight": {1: w}}) for w in PERCEPTRON_WEIGHTS]
