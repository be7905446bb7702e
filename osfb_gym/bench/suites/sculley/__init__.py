"""Sculley (2007), Tables 1-3, as sweep stages on the engine.

Settings and protocols: settings.py; learners: learners.py; the report: analysis.py.

``sculley-spam`` (Table 1) tunes Label Efficient's ``beta`` on a held-out quarter, then
runs every learner and variant; ``sculley-reuters`` (Tables 2-3) runs the R8 topics over
the paper's threshold biases and example weights. The protocol and where it differs
from the paper: docs/reproductions/sculley.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import nan
from typing import Any

import pandas as pd

from osfb_gym.bench.driver import Stage
from osfb_gym.bench.suites.sculley.analysis import measured, report
from osfb_gym.bench.suites.sculley.learners import (
    learner_params,
    make_learner,
    make_spam_env,
    spam_env,
)
from osfb_gym.bench.suites.sculley.paper import METHODS
from osfb_gym.bench.suites.sculley.settings import (
    ENV_ID,
    VARIANTS,
    WRAPPERS,
    ReutersSettings,
    SculleySuite,
    SpamSettings,
    protocol,
    reuters_grid,
)
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec

__all__ = ["ReutersSettings", "SpamSettings", "make_learner", "make_spam_env", "report", "stages"]


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


def stages(settings: SpamSettings | ReutersSettings) -> list[Stage]:
    """Spam: the tuning of ``beta``, then every variant at it; Reuters: a stage per learner."""
    suite, extra = protocol(settings), _extra(settings)
    if not suite.spam:
        return [Stage(stage) for stage in reuters_stages(suite, suite.datasets, extra)]
    chosen = lambda rows: best_beta(measured(rows[0]))  # noqa: E731
    return [
        Stage(spam_stages(suite, suite.datasets, extra, None)),
        Stage(lambda rows: spam_stages(suite, suite.datasets, extra, chosen(rows))),
    ]
