"""Sculley (2007) as printed: the paper's tables, its names and the learners' groups.

The paper's numbers are CSV files in ``osfb_gym/bench/papers/`` (``sculley_table1``,
``sculley_tables23``, ``sculley_topics``), read by :func:`osfb_gym.bench.suites.tables.published`;
the suites' protocols, grids, learners and the pages' names are ``protocol.toml`` beside
this module (:data:`PROTOCOL`). The settings, the report
(:mod:`~osfb_gym.bench.suites.sculley.analysis`) and the claims
(:mod:`~osfb_gym.bench.suites.sculley.claims`) all read them from here.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from osfb_gym.bench.suites.tables import package_toml, published

#: ``protocol.toml``: the suites' protocols, grids, learners and the pages' words
PROTOCOL: dict[str, Any] = package_toml("osfb_gym.bench.suites.sculley", "protocol.toml")

#: the ten topics of Tables 2-3 and the positive rate the paper prints beside each
PAPER_TOPICS: dict[str, float] = dict(published("sculley_topics").itertuples(index=False))
SPAM_CORPORA = {name: tuple(v) for name, v in PROTOCOL["spam_corpora"].items()}
LOCKUP_RECALL: float = PROTOCOL["lockup_recall"]
NAMES: dict[str, str] = PROTOCOL["names"]
SHORT: dict[str, str] = PROTOCOL["short"]
PAGE: dict[str, str] = PROTOCOL["page"]  # the pages' paragraphs, filled in by the report
MARGIN_LEARNERS = ("svm", "margin_perceptron")
PAPER_LEARNERS = (*MARGIN_LEARNERS, "perceptron")  # Table 1's
SAMPLERS = ("label_efficient", "apple_tasting")
METHODS: tuple[str, ...] = tuple(PROTOCOL["methods"])  # Tables 2-3's column order


def published_spam() -> pd.DataFrame:
    """Table 1, index ``(corpus, learner, variant)``: f1, recall, precision, fn, fp.

    >>> published_spam().loc[("trec06p", "perceptron", "one_sided"), ["recall", "fn"]].tolist()
    [0.003, 12875.0]
    """
    return published("sculley_table1", ["corpus", "learner", "variant"]).astype(float)


def published_reuters() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables 2-3 (index weighting, learner, method; a column per topic) and the printed averages.

    >>> published_reuters()[1].loc[("weight", "svm", "margins_only"), "avg"]
    np.float64(0.554)
    """
    table = published("sculley_tables23", ["weighting", "learner", "method"])
    return table[list(PAPER_TOPICS)], table[["avg"]]


def paper_values(learner: str, column: str, *variants: str) -> str:
    """Return the paper's ``column`` for ``learner``'s ``variants``: "a / b against c / d"."""
    digits = ".0f" if column in ("fn", "fp") else ".3f"
    values = [published_spam().loc[(slice(None), learner, v), column] for v in variants]
    return " against ".join(" / ".join(f"{x:{digits}}" for x in row) for row in values)
