"""Scoring an apple-tasting decision: the reward and loss of one step, the episode metrics."""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.validation import INTEGER_TYPES

#: ``oracle["mistake"]`` codes
NO_MISTAKE, FALSE_POSITIVE, FALSE_NEGATIVE = 0, 1, 2


def check_action(action: Any) -> int:
    """Return a ``Discrete(2)`` action as a Python ``int``, or raise naming ``action``.

    Integer or boolean scalars (Python or numpy) and 0-d integer or boolean
    arrays holding 0 or 1 are accepted; floats, strings and sequences are
    rejected, not coerced.

    Examples
    --------
    >>> check_action(np.int64(1)), check_action(np.array(False))
    (1, 0)
    >>> check_action(0.5)
    Traceback (most recent call last):
    ...
    TypeError: action must be an integer 0 or 1 (Discrete(2)), got 0.5 (float)
    """
    if type(action) in INTEGER_TYPES and (action == 0 or action == 1):
        return int(action)  # what RL libraries hand over, without the general checks
    value = action
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "biu":
        value = value.item()
    if isinstance(value, np.bool_):
        value = bool(value)
    if not isinstance(value, Integral):
        raise TypeError(
            f"action must be an integer 0 or 1 (Discrete(2)), got {action!r} "
            f"({type(action).__name__})"
        )
    if value not in (0, 1):
        raise ValueError(f"action must be 0 (reject) or 1 (taste), got {int(value)}")
    return int(value)


def outcome(action: int, y: int, gain: float, cost_fp: float) -> tuple[float, int, float]:
    """Return ``(reward, mistake, loss)`` of deciding an example of label ``y``.

    Tasting a positive earns ``gain``; tasting a negative costs ``cost_fp``
    (a false positive); rejecting earns nothing, and rejecting a positive
    (a false negative) forgoes ``gain``. The loss is the cost-weighted
    mistake, so ``reward = gain * y - loss`` whatever the action.

    Examples
    --------
    >>> outcome(1, 0, gain=1.0, cost_fp=3.0)
    (-3.0, 1, 3.0)
    >>> outcome(0, 1, gain=2.0, cost_fp=3.0)
    (0.0, 2, 2.0)
    """
    if action == 1:
        if y == 1:
            return gain, NO_MISTAKE, 0.0
        return -cost_fp, FALSE_POSITIVE, cost_fp
    if y == 1:
        return 0.0, FALSE_NEGATIVE, gain
    return 0.0, NO_MISTAKE, 0.0


class AppleMetrics(EpisodeMetrics):
    """Episode metrics of apple tasting: the confusion matrix, F1 and label requests.

    ``tp``, ``fp``, ``tn``, ``fn`` count tasted positives, tasted negatives,
    rejected negatives and rejected positives. ``precision = tp / (tp + fp)``,
    ``recall = tp / (tp + fn)`` and ``f1 = 2 tp / (2 tp + fp + fn)`` (the
    harmonic mean of the two) are 0 where their denominator is 0.
    ``label_requests`` counts tasted examples (``tp + fp``, whatever the
    feedback mode); ``tasted_negatives`` counts the label requests that were
    negatives (``fp``), the ones a one-sided learner pays for.
    ``error_rate`` is ``(fp + fn) / steps``. ``bayes_loss`` is the Bayes
    decision's expected loss summed over the episode's examples (the
    oracle's ``bayes_loss``; 0 in a noise-free world), NaN where the world
    does not define it (a dataset).

    Examples
    --------
    >>> m = AppleMetrics()
    >>> for a, y in [(1, 1), (1, 0), (0, 1), (0, 0)]:
    ...     m.update(a, 0.0, {"revealed": a == 1}, {"y": y, "loss": 0.0})
    >>> {k: m.get()[k] for k in ("tp", "fp", "fn", "tn", "f1", "label_requests")}
    {'tp': 1.0, 'fp': 1.0, 'fn': 1.0, 'tn': 1.0, 'f1': 0.5, 'label_requests': 2.0}
    """

    def __init__(self) -> None:
        super().__init__()
        self.tp = self.fp = self.tn = self.fn = 0
        self.bayes = 0.0

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one decision."""
        super().update(action, reward, feedback, oracle)
        tasted = int(np.asarray(action)) == 1
        positive = int(oracle["y"]) == 1
        self.bayes += oracle.get("bayes_loss", float("nan"))
        if tasted:
            if positive:
                self.tp += 1
            else:
                self.fp += 1
        elif positive:
            self.fn += 1
        else:
            self.tn += 1

    def get(self) -> dict[str, float]:
        """Return the episode summary."""
        summary = super().get()
        tp, fp, tn, fn = self.tp, self.fp, self.tn, self.fn
        summary.update(
            tp=float(tp),
            fp=float(fp),
            tn=float(tn),
            fn=float(fn),
            precision=tp / (tp + fp) if tp + fp else 0.0,
            recall=tp / (tp + fn) if tp + fn else 0.0,
            f1=2 * tp / (2 * tp + fp + fn) if tp else 0.0,
            label_requests=float(tp + fp),
            tasted_negatives=float(fp),
            error_rate=(fp + fn) / max(self.steps, 1),
            bayes_loss=float(self.bayes),
        )
        return summary
