"""The published numbers of Sculley (2007), Tables 1, 2 and 3, as printed.

Table 1 (spam filtering, ham is the positive class): for each TREC corpus,
learner and variant, F1, recall, precision and the counts of false
negatives (ham lost to the spam box) and false positives (spam in the
inbox, which is also every label request on a negative). The paper's text
extraction lists the table column by column; the rows below are the same
numbers regrouped one row per (corpus, learner, variant), and the test
suite checks that each F1 is the harmonic mean of its precision and recall.

Tables 2 and 3 (Reuters-21578 one-vs-rest topics, threshold biasing and
example weighting): the best F1 of each method over the paper's grid of
weights, per topic, and the printed average over the ten topics.
"""

from __future__ import annotations

import pandas as pd

#: learners of Table 1, in its row order
SPAM_LEARNERS = ("svm", "margin_perceptron", "perceptron")
#: variants of Table 1, in its row order (unmodified, the two wrappers, full feedback)
SPAM_VARIANTS = ("one_sided", "label_efficient", "apple_tasting", "full")
#: the two corpora of Table 1, with their sizes and ham (positive) rates from Section 6.1
SPAM_CORPORA = {"trec05p-1": (92189, 0.43), "trec06p": (37822, 0.34)}

# learner codes of the rows below: svm = Online SVM, mgn = Perceptron with margins,
# pcp = classical Perceptron
_LEARNER_CODES = {"svm": "svm", "mgn": "margin_perceptron", "pcp": "perceptron"}

_TABLE_1 = """
trec05p-1 svm one_sided 0.993 0.996 0.990 141 396
trec05p-1 svm label_efficient 0.991 0.997 0.985 135 609
trec05p-1 svm apple_tasting 0.989 0.996 0.981 145 757
trec05p-1 svm full 0.996 0.997 0.995 121 200
trec05p-1 mgn one_sided 0.990 0.998 0.983 68 697
trec05p-1 mgn label_efficient 0.989 0.998 0.980 68 785
trec05p-1 mgn apple_tasting 0.984 0.998 0.970 91 1211
trec05p-1 mgn full 0.994 0.996 0.992 153 318
trec05p-1 pcp one_sided 0.516 0.348 0.999 25686 2
trec05p-1 pcp label_efficient 0.960 0.964 0.956 1430 1748
trec05p-1 pcp apple_tasting 0.930 0.920 0.940 3143 2330
trec05p-1 pcp full 0.991 0.991 0.991 343 343
trec06p svm one_sided 0.988 0.996 0.981 51 253
trec06p svm label_efficient 0.984 0.995 0.973 67 362
trec06p svm apple_tasting 0.976 0.994 0.958 75 557
trec06p svm full 0.993 0.994 0.992 81 100
trec06p mgn one_sided 0.984 0.998 0.970 32 397
trec06p mgn label_efficient 0.983 0.997 0.968 35 423
trec06p mgn apple_tasting 0.975 0.997 0.953 44 627
trec06p mgn full 0.993 0.995 0.991 69 111
trec06p pcp one_sided 0.005 0.003 0.945 12875 2
trec06p pcp label_efficient 0.938 0.943 0.933 738 876
trec06p pcp apple_tasting 0.891 0.886 0.897 1475 1309
trec06p pcp full 0.986 0.987 0.986 174 180
"""

#: the ten topics of Tables 2-3 with the positive rate the paper prints beside each
PAPER_TOPICS = {
    "earn": 0.30,
    "acq": 0.17,
    "money-fx": 0.056,
    "grain": 0.045,
    "crude": 0.040,
    "trade": 0.038,
    "interest": 0.036,
    "wheat": 0.022,
    "ship": 0.020,
    "corn": 0.019,
}
#: learners and methods of Tables 2-3, in their column order
REUTERS_LEARNERS = ("svm", "margin_perceptron")
REUTERS_METHODS = ("margins_only", "apple_tasting", "label_efficient")
#: the cost weighting of each table
WEIGHTINGS = {"threshold": "Table 2 (threshold biasing)", "weight": "Table 3 (example weighting)"}

# one line per (table, learner, method): the ten topics in PAPER_TOPICS order, then
# the printed "Avg. F1"
_TABLES_2_3 = """
threshold svm margins_only 0.943 0.741 0.475 0.778 0.723 0.335 0.518 0.716 0.287 0.538 0.606
threshold svm apple_tasting 0.892 0.538 0.390 0.454 0.372 0.325 0.291 0.282 0.220 0.149 0.410
threshold svm label_efficient 0.941 0.723 0.611 0.763 0.692 0.351 0.485 0.699 0.291 0.504 0.608
weight svm margins_only 0.939 0.663 0.328 0.656 0.729 0.437 0.460 0.565 0.168 0.507 0.554
weight svm apple_tasting 0.923 0.781 0.471 0.515 0.433 0.287 0.482 0.375 0.181 0.204 0.460
weight svm label_efficient 0.937 0.658 0.658 0.640 0.706 0.183 0.658 0.560 0.165 0.499 0.561
threshold mgn margins_only 0.934 0.836 0.379 0.733 0.690 0.005 0.207 0.617 0.010 0.477 0.488
threshold mgn apple_tasting 0.902 0.734 0.410 0.362 0.304 0.232 0.258 0.179 0.112 0.108 0.360
threshold mgn label_efficient 0.933 0.814 0.322 0.728 0.682 0.215 0.516 0.582 0.010 0.480 0.528
weight mgn margins_only 0.932 0.834 0.574 0.735 0.687 0.646 0.606 0.690 0.512 0.586 0.680
weight mgn apple_tasting 0.899 0.734 0.547 0.559 0.539 0.443 0.433 0.421 0.367 0.389 0.536
weight mgn label_efficient 0.932 0.834 0.662 0.720 0.670 0.650 0.570 0.634 0.503 0.587 0.680
"""


def published_spam() -> pd.DataFrame:
    """Return Table 1: index ``(corpus, learner, variant)``, columns f1, recall, precision, fn, fp.

    Examples
    --------
    >>> table = published_spam()
    >>> table.loc[("trec06p", "perceptron", "one_sided"), ["recall", "fn"]].tolist()
    [0.003, 12875.0]
    """
    rows = []
    for line in _TABLE_1.strip().splitlines():
        corpus, learner, variant, *values = line.split()
        f1, recall, precision, fn, fp = map(float, values)
        rows.append(
            {
                "corpus": corpus,
                "learner": _LEARNER_CODES[learner],
                "variant": variant,
                "f1": f1,
                "recall": recall,
                "precision": precision,
                "fn": fn,
                "fp": fp,
            }
        )
    return pd.DataFrame(rows).set_index(["corpus", "learner", "variant"])


def published_reuters() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return Tables 2-3: best F1 per topic, and the printed averages.

    The first frame has index ``(weighting, learner, method)`` (weighting
    ``"threshold"`` is Table 2, ``"weight"`` Table 3) and one column per
    topic of :data:`PAPER_TOPICS`; the second holds the printed
    ``"Avg. F1"`` in a column ``avg`` with the same index.

    Examples
    --------
    >>> best, printed = published_reuters()
    >>> best.loc[("threshold", "margin_perceptron", "margins_only"), "ship"]
    np.float64(0.01)
    >>> printed.loc[("weight", "svm", "margins_only"), "avg"]
    np.float64(0.554)
    """
    rows, averages = [], []
    for line in _TABLES_2_3.strip().splitlines():
        weighting, learner, method, *values = line.split()
        *topics, avg = map(float, values)
        key = {"weighting": weighting, "learner": _LEARNER_CODES[learner], "method": method}
        rows.append({**key, **dict(zip(PAPER_TOPICS, topics, strict=True))})
        averages.append({**key, "avg": avg})
    index = ["weighting", "learner", "method"]
    return pd.DataFrame(rows).set_index(index), pd.DataFrame(averages).set_index(index)
