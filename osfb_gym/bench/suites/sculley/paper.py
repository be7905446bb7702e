"""Sculley (2007) as printed: the paper's tables, its names and the learners' groups.

The paper's numbers are CSV files in ``osfb_gym/bench/papers/`` (``sculley_table1``,
``sculley_tables23``, ``sculley_topics``), read by :func:`osfb_gym.bench.suites.tables.published`;
the report (:mod:`~osfb_gym.bench.suites.sculley.analysis`) and the claims
(:mod:`~osfb_gym.bench.suites.sculley.claims`) both read them from here.
"""

from __future__ import annotations

import pandas as pd

from osfb_gym.bench.suites.tables import published

#: the ten topics of Tables 2-3 and the positive rate the paper prints beside each
PAPER_TOPICS: dict[str, float] = dict(published("sculley_topics").itertuples(index=False))
SPAM_CORPORA = {"trec05p-1": (92189, 0.43), "trec06p": (37822, 0.34)}  # size, ham rate (6.1)
LOCKUP_RECALL = 0.1  # an episode below this recall rejects (and so never sees) nearly all ham
NAMES = {
    "svm": "Online SVM",
    "margin_perceptron": "Perceptron with margins",
    "perceptron": "Perceptron",
    "perceptron_bias": "Perceptron with a bias (not in the paper)",
    "margins_only": "Marg. Only",
    "apple_tasting": "Apple T.",
    "label_efficient": "Label Eff.",
    "threshold": "Table 2 (threshold biasing)",
    "weight": "Table 3 (example weighting)",
}
SHORT = {"svm": "SVM", "margin_perceptron": "Pcpt. Mgn."}
MARGIN_LEARNERS = ("svm", "margin_perceptron")
PAPER_LEARNERS = (*MARGIN_LEARNERS, "perceptron")  # Table 1's
SAMPLERS = ("label_efficient", "apple_tasting")
METHODS = ("margins_only", "apple_tasting", "label_efficient")  # Tables 2-3's column order


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
