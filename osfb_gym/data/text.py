"""Text datasets (SMS Spam, Reuters R8) as raw documents with a 0/1 label.

Both are spam/topic filtering streams from the apple-tasting literature
(Sculley 2007). They are returned as text, not features: the choice of
vectoriser (bag of words, TF-IDF, hashing) belongs to the experiment, e.g.
``sklearn.feature_extraction.text.TfidfVectorizer().fit_transform(data.texts)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from osfb_gym.core.validation import check_choice
from osfb_gym.data.checks import fail, read_text

R8_TOPICS = ("acq", "crude", "earn", "grain", "interest", "money-fx", "ship", "trade")
SMS_LABELS = ("ham", "spam")
# The R8 copy we know of carries an added header line; the originals do not.
_R8_HEADER = "Class\tExample"


@dataclass(frozen=True)
class TextDataset:
    """Documents and a 0/1 label, the text counterpart of :class:`~osfb_gym.data.Dataset`.

    Attributes
    ----------
    name
        The name ``load`` knows it by.
    texts
        One string per document.
    y
        0/1 labels (``float64``) of shape ``(n,)``.
    target
        What ``y = 1`` means, e.g. ``"spam"`` or ``"topic=earn"``.
    metadata
        Provenance, as for :class:`~osfb_gym.data.Dataset`.
    """

    name: str
    texts: tuple[str, ...]
    y: np.ndarray
    target: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_samples(self) -> int:
        """Number of documents."""
        return len(self.texts)


def _labelled_lines(
    path: Path, labels: Sequence[str], header: str | None = None
) -> list[tuple[str, str]]:
    """Return the ``(label, text)`` pairs of a ``label<TAB>text`` file, each line checked.

    Blank lines are skipped. ``header``, when given, is accepted as the
    file's first line (the R8 copy's added header) and nowhere else.

    Raises
    ------
    osfb_gym.data.checks.DataFormatError
        An empty or non-UTF-8 file, a line without a tab, a label not in
        ``labels`` or an empty text, by file and line.
    """
    expected_labels = "one of " + ", ".join(map(repr, labels))
    text = read_text(path, f"lines 'label<TAB>text' with the label {expected_labels}")
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or (number == 1 and line == header):
            continue
        label, tab, body = line.partition("\t")
        if not tab:
            fail(path, "no tab in the line", "'label<TAB>text'", line=number)
        if label not in labels:
            hint = "" if pairs else " (this file has no header line)"
            fail(path, f"label {label!r}", expected_labels + hint, line=number, column="label")
        if not body.strip():
            fail(path, "an empty text", "a text after the tab", line=number, column="text")
        pairs.append((label, body))
    if not pairs:
        fail(path, "no labelled lines", "lines 'label<TAB>text'")
    return pairs


def _record(
    name: str,
    pairs: Sequence[tuple[str, str]],
    positive: str,
    target: str,
    note: str,
    **extra: Any,
) -> TextDataset:
    labels = np.array([label == positive for label, _ in pairs], dtype=float)
    metadata = {"rows": len(pairs), "columns": 1, "preprocessing": note, **extra}
    return TextDataset(name, tuple(text for _, text in pairs), labels, target, metadata)


def read_sms_spam(paths: Sequence[Path]) -> TextDataset:
    """Read ``SMSSpamCollection``: y = 1 for spam, texts as written."""
    pairs = _labelled_lines(paths[0], SMS_LABELS)
    note = f"SMSSpamCollection, all {len(pairs)} messages; y = 1 for spam; texts unchanged."
    return _record("sms_spam", pairs, "spam", "spam", note)


def read_reuters_r8(paths: Sequence[Path], *, topic: str) -> TextDataset:
    """Read R8 train and test, concatenated in that order: y = 1 for ``topic``, one vs rest."""
    topic = check_choice(topic, "topic", R8_TOPICS)
    train, test = (_labelled_lines(path, R8_TOPICS, _R8_HEADER) for path in paths)
    note = (
        f"R8 train ({len(train)}) then test ({len(test)}) documents concatenated; "
        f"y = 1 for topic {topic!r}, 0 for the other 7; texts as Cardoso-Cachopo "
        "preprocessed them (lower case, no punctuation)."
    )
    return _record(
        "reuters_r8",
        [*train, *test],
        topic,
        f"topic={topic}",
        note,
        train_rows=len(train),
        test_rows=len(test),
    )
