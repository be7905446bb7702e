"""The dataset streams of apple tasting: orders, the train/test parts, relabelling, features."""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.validation import check_choice
from osfb_gym.envs._stream import DatasetStream, load_stream
from osfb_gym.envs._text import TEXT_FEATURES


def adversarial_order(
    y: np.ndarray, score: np.ndarray | None, rng: np.random.Generator
) -> np.ndarray:
    """Order examples to ratchet a one-sided learner: every negative first, positives last.

    With ``score`` (a synthetic world's ``x . w*``), the negatives come by
    decreasing score, the most positive-looking first (label-noise flips
    beyond the boundary, then those just below it), and the positives by
    increasing score, the ones nearest the boundary first. Without a score
    (a dataset has no true ``w*``) each class comes in a random order.

    Examples
    --------
    >>> adversarial_order(np.array([1, 0, 1, 0]), np.array([3.0, -1.0, 0.5, -0.2]),
    ...                   np.random.default_rng(0)).tolist()
    [3, 1, 2, 0]
    """
    negatives = np.flatnonzero(y == 0)
    positives = np.flatnonzero(y == 1)
    if score is None:
        return np.concatenate([rng.permutation(negatives), rng.permutation(positives)])
    negatives = negatives[np.argsort(-score[negatives], kind="stable")]
    positives = positives[np.argsort(score[positives], kind="stable")]
    return np.concatenate([negatives, positives])


def move_first_positive_first(order: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Return ``order`` with its first positive example moved to the front.

    The other examples keep their relative order; an order without a
    positive is returned unchanged.

    Examples
    --------
    >>> move_first_positive_first(np.array([4, 2, 0, 1]), np.array([0, 1, 0, 0, 1])).tolist()
    [4, 2, 0, 1]
    >>> move_first_positive_first(np.array([2, 0, 4, 1]), np.array([0, 1, 0, 0, 1])).tolist()
    [4, 2, 0, 1]
    """
    positive = np.flatnonzero(y[order] == 1)
    if positive.size == 0 or positive[0] == 0:
        return order
    k = int(positive[0])
    return np.concatenate([order[k : k + 1], order[:k], order[k + 1 :]])


#: ``rows`` of a dataset without a split of its own: these rows (i mod 4 == 3) are "test"
TEST_EVERY = 4
ROWS = ("all", "train", "test")
TABULAR_FEATURES = ("standardized", "unit")
#: a text dataset's featurisation when ``features`` is None: the paper's (Section 6.1)
DEFAULT_TEXT_FEATURES = "binary"


def split_rows(n_rows: int, rows: str, train_rows: int | None) -> np.ndarray | None:
    """Return the indices of part ``rows`` of a dataset's ``n_rows`` rows (None: all of them).

    A dataset with a split of its own (``train_rows`` in its metadata: the
    Reuters R8 ModApte training documents come first) is cut there; any
    other has rows ``i`` with ``i mod 4 == 3`` as its "test" quarter, spread
    over the file (a file sorted by class stays stratified), the rest
    "train".

    Examples
    --------
    >>> split_rows(8, "test", None).tolist(), split_rows(5, "train", 3).tolist()
    ([3, 7], [0, 1, 2])
    """
    if rows == "all":
        return None
    if train_rows is not None:
        cut = int(train_rows)
        return np.arange(cut) if rows == "train" else np.arange(cut, n_rows)
    test = np.arange(n_rows) % TEST_EVERY == TEST_EVERY - 1
    return np.flatnonzero(test if rows == "test" else ~test)


def unit_rows(X: np.ndarray) -> np.ndarray:
    """Drop a standardised table's intercept column and scale each row to unit length.

    Sculley's learners work on unit-length vectors: the perceptron's margin
    ``m`` and the SVM's ``C`` are measured in units of ``w . x`` with
    ``||x|| = 1``; the learners keep their own bias. A zero row stays zero.

    Examples
    --------
    >>> unit_rows(np.array([[3.0, 4.0, 1.0], [0.0, 0.0, 1.0]], dtype=np.float32)).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    out = np.empty((X.shape[0], X.shape[1] - 1), dtype=np.float32)
    for i in range(X.shape[0]):  # row by row: the same rounding as scaling one observation
        z = np.asarray(X[i, :-1], dtype=np.float64)
        norm = float(np.linalg.norm(z))
        out[i] = z / norm if norm > 0.0 else z
    return out


def derive_stream(
    data: DatasetStream,
    *,
    positive_class: int,
    rows: str,
    train_rows: int | None,
    features: str | None,
) -> DatasetStream:
    """Return ``data`` cut to part ``rows``, relabelled and (tabular ``"unit"``) row-normalised.

    ``positive_class=0`` makes the dataset's 0 label the tasted class
    (Sculley's Table 1: ham, ``y = 0`` of a spam dataset, goes to the
    inbox). Arrays are shared with ``data`` where nothing changes.
    """
    index = split_rows(data.n_rows, rows, train_rows)
    X, y = data.X, data.y
    if index is not None:
        X, y = X[index], y[index]
    if positive_class == 0:
        y = (1 - y).astype(np.int8)
    names = data.feature_names
    if features == "unit":
        X, names = unit_rows(np.asarray(X)), names[:-1] if names else names
    if X is data.X and y is data.y:
        return data
    for array in (X, y) if isinstance(X, np.ndarray) else (y,):
        array.flags.writeable = False
    bound = float(np.max(np.abs(X))) if isinstance(X, np.ndarray) and X.size else data.bound
    return DatasetStream(data.name, X, y, bound, names)


def apple_stream(
    dataset: Any,
    data_home: str | None,
    dim: int | None,
    topic: str | None,
    positive_class: int,
    rows: str,
    features: str | None,
    encoding: str | None = None,
) -> DatasetStream:
    """Load ``dataset``'s stream, then cut, relabel and featurise it as the arguments say."""
    if features is not None:
        check_choice(features, "features", (*TEXT_FEATURES, *TABULAR_FEATURES))
    text_features = features if features in TEXT_FEATURES else DEFAULT_TEXT_FEATURES
    stream = load_stream(
        dataset,
        data_home=data_home,
        dim=dim,
        topic=topic,
        setting="apple tasting",
        text_features=text_features,
        encoding=encoding,
    )
    text = stream.feature_names is None
    if features is not None and (features in TEXT_FEATURES) != text:
        kind, valid = ("text", TEXT_FEATURES) if text else ("tabular", TABULAR_FEATURES)
        raise ValueError(
            f"features={features!r} does not apply to {kind} dataset {stream.name!r}; "
            f"choose one of {', '.join(valid)}"
        )
    train_rows = None
    if rows != "all":
        from osfb_gym.data import load

        options = {} if topic is None else {"topic": topic}
        record: Any = (
            load(dataset, data_home=data_home, **options)  # type: ignore[call-overload]
            if isinstance(dataset, str)
            else dataset
        )
        train_rows = record.metadata.get("train_rows")
    return derive_stream(
        stream,
        positive_class=positive_class,
        rows=rows,
        train_rows=train_rows,
        features=None if text else features,
    )
