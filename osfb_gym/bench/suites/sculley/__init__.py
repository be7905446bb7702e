"""Sculley (2007), Tables 1-3, as sweep stages on the engine; the report: analysis.py.

``sculley-spam`` (Table 1) tunes Label Efficient's ``beta`` on a held-out quarter, then
runs every learner and variant; ``sculley-reuters`` (Tables 2-3) runs the R8 topics over
the paper's threshold biases and example weights. The protocol and where it differs
from the paper: docs/reproductions/sculley.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from math import nan
from typing import Any, ClassVar

import gymnasium as gym
import pandas as pd

from agents.base import Agent
from osfb_gym.bench.driver import RunInfo, Stage
from osfb_gym.bench.report import Report
from osfb_gym.bench.suites.sculley.analysis import (
    METHODS,
    PAPER_TOPICS,
    PERCEPTRON_WEIGHTS,
    THRESHOLD_BIASES,
    write_report,
)
from osfb_gym.bench.suites.tables import subset
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec, make_agent
from osfb_gym.core.validation import check_int
from osfb_gym.data.text import R8_TOPICS

ENV_ID = "AppleTasting-v0"
REUTERS_TOPICS = tuple(topic for topic in PAPER_TOPICS if topic in R8_TOPICS)
#: Table 3's C_neg with C_pos = 100, "from 0.001 to 128 in rough power of two increments":
#: 0.001 doubled up to 0.128, then 0.25 doubled up to 128 (18 values)
SVM_WEIGHTS_PAPER = tuple(0.001 * 2**k for k in range(8)) + tuple(2.0**k for k in range(-2, 8))
SVM_WEIGHTS = (0.064, 0.25, 1.0, 4.0, 16.0, 64.0, 128.0)  # below 0.064 the SVM tastes everything
SVM_C = 100.0
LEARNERS: dict[str, tuple[str, dict[str, Any]]] = {
    "svm": ("OnlineSVM", {"C": SVM_C, "buffer": 1000, "margin": 1.0}),
    "margin_perceptron": ("MarginPerceptron", {"m": 2.0, "eta": 1.0, "fit_intercept": False}),
    "perceptron": ("Perceptron", {"eta": 1.0, "fit_intercept": False}),
    "perceptron_bias": ("Perceptron", {"eta": 1.0}),  # supplementary, not in the paper
}
WRAPPERS = {"label_efficient": "LabelEfficient", "apple_tasting": "AppleTastingSampling"}
VARIANTS = ("one_sided", "label_efficient", "apple_tasting", "full")  # Table 1's row order
IDENTITY = ("key", "setting", "env_id", "env_kwargs", "agent", "params")  # the tags say it


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


SCULLEY_SUITES = {
    "sculley-spam": SculleySuite(
        "sculley-spam",
        "Table 1 of Sculley (2007): spam (ham positive) under one-sided feedback, "
        "unmodified / Label Efficient / Apple Tasting / full feedback; sms_spam, spambase.",
    ),
    "sculley-reuters": SculleySuite(
        "sculley-reuters",
        "Tables 2-3 of Sculley (2007): R8 topics one vs rest, best F1 over "
        "threshold biases and example weights; Online SVM and Perceptron with margins.",
        datasets=REUTERS_TOPICS,
        learners=("svm", "margin_perceptron"),
        betas=(1e-4,),
        text={"features": "counts", "dim": 4096},  # the paper's stemmed words are not built
        spam=False,
    ),
}


@dataclass(frozen=True)
class SpamSettings:
    """The settings of ``sculley-spam``; each field but the flags' is a ``--set`` key."""

    name: ClassVar[str] = "sculley-spam"

    #: runs (stream orders): seeds 0..seeds-1 (the --seeds flag)
    seeds: int = 5
    #: truncate every stream to this many steps (quick checks only; the --horizon flag)
    horizon: int | None = None
    #: folder of the dataset files (the --data-home flag)
    data_home: str | None = None
    #: the spam datasets to run
    datasets: tuple[str, ...] = SCULLEY_SUITES["sculley-spam"].datasets
    #: the learners to run
    learners: tuple[str, ...] = SCULLEY_SUITES["sculley-spam"].learners

    def __post_init__(self) -> None:
        check_int(self.seeds, "seeds", minimum=1)
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
class ReutersSettings:
    """The settings of ``sculley-reuters``; each field but the flags' is a ``--set`` key."""

    name: ClassVar[str] = "sculley-reuters"

    #: runs (stream orders): seeds 0..seeds-1 (the --seeds flag)
    seeds: int = 5
    #: truncate every stream to this many steps (quick checks only; the --horizon flag)
    horizon: int | None = None
    #: folder of the dataset files (the --data-home flag)
    data_home: str | None = None
    #: the R8 topics to run, each one vs the rest
    topics: tuple[str, ...] = SCULLEY_SUITES["sculley-reuters"].datasets
    #: the learners to run
    learners: tuple[str, ...] = SCULLEY_SUITES["sculley-reuters"].learners
    #: the Online SVM runs the first svm_seeds seeds
    svm_seeds: int = SCULLEY_SUITES["sculley-reuters"].svm_seeds
    #: run the SVM over the paper's whole C_neg grid
    full_grid: bool = False

    def __post_init__(self) -> None:
        check_int(self.seeds, "seeds", minimum=1)
        check_int(self.svm_seeds, "svm_seeds", minimum=1)
        subset(self.topics, R8_TOPICS, "topics")
        subset(self.learners, SCULLEY_SUITES[self.name].learners, "learners")

    def needs(self) -> tuple[str, ...]:
        """Return the dataset the run reads."""
        return ("reuters_r8",)


def protocol(settings: SpamSettings | ReutersSettings) -> SculleySuite:
    """Return the suite's protocol (:class:`SculleySuite`) under ``settings``."""
    base = SCULLEY_SUITES[settings.name]
    seeds = tuple(range(settings.seeds))
    if isinstance(settings, SpamSettings):
        return replace(base, seeds=seeds, datasets=settings.datasets, learners=settings.learners)
    return replace(
        base,
        seeds=seeds,
        datasets=settings.topics,
        learners=settings.learners,
        svm_seeds=settings.svm_seeds,
        svm_weights=SVM_WEIGHTS_PAPER if settings.full_grid else base.svm_weights,
    )


def learner_params(
    learner: str, strategy: str = "none", beta: float | None = None, **extra: Any
) -> tuple[str, dict]:
    """Return (agent name, params) of ``learner``, alone or wrapped by ``strategy``.

    ``beta`` is Label Efficient's (other strategies ignore it).

    >>> learner_params("perceptron", "label_efficient", beta=0.01)[1]["base__fit_intercept"]
    False
    """
    if learner not in LEARNERS:
        raise ValueError(f"learner must be one of {[*LEARNERS]}, got {learner!r}")
    name, params = LEARNERS[learner][0], {**LEARNERS[learner][1], **extra}
    if strategy == "none":
        return name, params
    if strategy not in WRAPPERS:
        raise ValueError(f"strategy must be 'none' or one of {[*WRAPPERS]}, got {strategy!r}")
    wrapped = {"base": name, **{f"base__{key}": value for key, value in params.items()}}
    if strategy == "label_efficient" and beta is None:
        raise ValueError("strategy='label_efficient' needs beta")
    return WRAPPERS[strategy], wrapped | ({"beta": beta} if strategy == "label_efficient" else {})


def make_learner(learner: str, strategy: str = "none", **extra: Any) -> Agent:
    """Build the agent of :func:`learner_params` (examples and benchmarks use it)."""
    return make_agent(*learner_params(learner, strategy, **extra))


def spam_env(dataset: str, feedback: str, suite: SculleySuite, **kwargs: Any) -> dict[str, Any]:
    """Env arguments of a spam stream: ham positive, unit rows (tabular) or the suite's text."""
    features = suite.text if dataset == "sms_spam" else {"features": "unit"}
    return {"dataset": dataset, "positive_class": 0, "feedback": feedback, **features, **kwargs}


def make_spam_env(dataset: str, *, feedback: str = "one_sided", **kwargs: Any) -> gym.Env:
    """Return the AppleTasting stream of a spam dataset as the suite runs it."""
    return gym.make(ENV_ID, **spam_env(dataset, feedback, SCULLEY_SUITES["sculley-spam"], **kwargs))


def _agent(tags: dict, envs: tuple[str, ...], learner: str, strategy: str, **extra: Any):
    return AgentSpec(*learner_params(learner, strategy, **extra), envs=envs, tags=tags)


def spam_stages(
    suite: SculleySuite, datasets: Sequence[str], env_extra: dict, beta: dict | None
) -> SweepSpec:
    """Table 1's stages: the tuning of ``beta`` (``beta`` None), else the reported episodes."""
    envs, agents, phase = [], [], "tune" if beta is None else "eval"
    for dataset in datasets:
        for fb in ("one_sided",) if beta is None else ("one_sided", "full"):
            kwargs = spam_env(dataset, fb, suite, **env_extra, rows=suite.rows[beta is not None])
            envs.append(EnvSpec(ENV_ID, f"{dataset} {fb}", kwargs, {"dataset": dataset}))
        for learner in suite.learners:
            if beta is None:  # Label Efficient at every beta of the grid
                runs = [("label_efficient", b) for b in suite.betas if learner != "perceptron_bias"]
            else:  # every variant, Label Efficient at its chosen beta
                variants = ("one_sided", "full") if learner == "perceptron_bias" else VARIANTS
                runs = [
                    (v, beta[dataset, learner] if v == "label_efficient" else nan) for v in variants
                ]
            for variant, b in runs:
                tag = {"learner": learner, "variant": variant, "phase": phase, "beta": b}
                env = f"{dataset} {'full' if variant == 'full' else 'one_sided'}"
                strategy = variant if variant in WRAPPERS else "none"
                agents.append(_agent(tag, (env,), learner, strategy, beta=b))
    seeds, name = (suite.tune_seeds if beta is None else suite.seeds), f"{suite.name}-{phase}"
    return SweepSpec(name, tuple(envs), tuple(agents), seeds, suite.description)


def reuters_grid(suite: SculleySuite, learner: str) -> list[tuple[str, float, dict[str, Any]]]:
    """Return ``learner``'s (weighting, value, params) grid: Table 2's biases, then Table 3's."""
    grid = [("threshold", b, {"threshold": -b}) for b in THRESHOLD_BIASES]
    if learner == "svm":  # C_neg = value with C_pos = SVM_C
        return grid + [("weight", w, {"class_weight": {0: w / SVM_C}}) for w in suite.svm_weights]
    return grid + [("weight", w, {"class_weight": {1: w}}) for w in PERCEPTRON_WEIGHTS]


def reuters_stages(suite: SculleySuite, topics: Sequence[str], env_extra: dict):
    """Tables 2-3: one stage per learner (the SVM runs only its first seeds)."""
    stream = {"dataset": "reuters_r8", "rows": "train", "first_positive_first": True}
    kwargs, labels = {**stream, **suite.text, **env_extra}, tuple(topics)
    envs = tuple(EnvSpec(ENV_ID, t, {**kwargs, "topic": t}, {"topic": t}) for t in topics)
    for learner in suite.learners:
        agents = []
        for weighting, value, params in reuters_grid(suite, learner):
            for method in METHODS:
                tag = {"learner": learner, "method": method, "weighting": weighting, "value": value}
                strategy = "none" if method == "margins_only" else method
                agents.append(_agent(tag, labels, learner, strategy, beta=suite.betas[0], **params))
        seeds = suite.seeds[: suite.svm_seeds] if learner == "svm" else suite.seeds
        yield SweepSpec(f"{suite.name}-{learner}", envs, tuple(agents), tuple(seeds))


def best_beta(tuning: pd.DataFrame) -> dict[tuple[str, str], float]:
    """Return the ``beta`` with the best mean F1 per (dataset, learner) (ties: the smaller).

    >>> best_beta(pd.DataFrame({"dataset": "d", "learner": "svm", "beta": [1.0, 1.0, 0.1, 0.1],
    ...                         "f1": [0.6, 0.6, 0.5, 0.7]}))
    {('d', 'svm'): 0.1}
    """
    means = tuning.groupby(["dataset", "learner", "beta"])["f1"].mean()  # beta ascending
    return {key[:2]: float(key[2]) for key in means.groupby(level=[0, 1]).idxmax()}


def _extra(settings: SpamSettings | ReutersSettings) -> dict[str, Any]:
    given = (("data_home", settings.data_home), ("horizon", settings.horizon))
    return {k: v for k, v in given if v is not None}


def _measured(rows: pd.DataFrame) -> pd.DataFrame:
    """Return a stage's rows as the report reads them: tags, seed and what was measured."""
    return rows.drop(columns=[*IDENTITY, *(c for c in rows if c.startswith("curve_"))])


def stages(settings: SpamSettings | ReutersSettings) -> list[Stage]:
    """Spam: the tuning of ``beta``, then every variant at it; Reuters: a stage per learner."""
    suite, extra = protocol(settings), _extra(settings)
    if not suite.spam:
        return [Stage(stage) for stage in reuters_stages(suite, suite.datasets, extra)]
    chosen = lambda rows: best_beta(_measured(rows[0]))  # noqa: E731
    return [
        Stage(spam_stages(suite, suite.datasets, extra, None)),
        Stage(lambda rows: spam_stages(suite, suite.datasets, extra, chosen(rows))),
    ]


def report(
    rows: Sequence[pd.DataFrame], settings: SpamSettings | ReutersSettings, run: RunInfo
) -> Report:
    """Summarise every stage's rows into the tables beside the paper's (:mod:`.analysis`)."""
    suite = protocol(settings)
    results = pd.concat([_measured(frame) for frame in rows])
    if suite.spam:
        order = {v: i for i, v in enumerate(("tune", *suite.datasets, *suite.learners, *VARIANTS))}
        by = ["phase", "dataset", "learner", "variant"]  # "eval" is not in order: last
        results = results.sort_values(by, kind="stable", key=lambda column: column.map(order))
    return write_report(
        suite,
        results.reset_index(drop=True),
        run.out,
        data_home=settings.data_home,
        missing=run.missing,
        horizon=settings.horizon,
        minutes=run.minutes,
    )
