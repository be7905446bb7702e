"""RejectOption's loss and metrics: the decisions, ``L_d`` and the episode summary with curves.

The one loss the risk is measured in, ``L_d`` (Shah and Manwani, 2020,
eq. 2): 1 for a misclassification, ``d`` for a rejection, 0 otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.metrics import EpisodeMetrics

#: decisions, the first entry of an action
PREDICT_NEGATIVE, REJECT, PREDICT_POSITIVE = 0, 1, 2
DECISION_LABEL = {PREDICT_NEGATIVE: -1, PREDICT_POSITIVE: 1}


def check_action(action: Any) -> tuple[int, int]:
    """Return a ``MultiDiscrete([3, 2])`` action as ``(decision, query)``, or raise naming it.

    Sequences and arrays of two integers (or booleans) are accepted;
    floats, strings and other shapes are rejected, not coerced.

    Examples
    --------
    >>> check_action([2, 1]), check_action(np.array([1, 0]))
    ((2, 1), (1, 0))
    >>> check_action([3, 0])
    Traceback (most recent call last):
    ...
    ValueError: action[0] (the decision) must be 0 (predict -1), 1 (reject) or 2 (predict +1), got 3
    """
    if type(action) is np.ndarray and action.shape == (2,) and action.dtype.kind in "iu":
        # what RL libraries hand over: an integer array, read as Python ints at once
        decision, query = action.tolist()
    else:
        try:
            array = np.asarray(action)
        except Exception as error:  # ragged lists and the like
            raise TypeError(f"action must be a pair (decision, query), got {action!r}") from error
        if array.shape != (2,):
            raise ValueError(
                f"action must be a pair (decision, query) of shape (2,), got shape {array.shape}"
            )
        if array.dtype.kind not in "biu":
            raise TypeError(
                f"action must hold integers (MultiDiscrete([3, 2])), got {action!r} "
                f"(dtype {array.dtype})"
            )
        decision, query = (int(v) for v in array)
    if decision not in (0, 1, 2):
        raise ValueError(
            "action[0] (the decision) must be 0 (predict -1), 1 (reject) or 2 (predict +1), "
            f"got {decision}"
        )
    if query not in (0, 1):
        raise ValueError(f"action[1] (the query) must be 0 or 1 (ask for the label), got {query}")
    return decision, query


def decision_loss(decision: int, y: int, d: float) -> float:
    """Return ``L_d`` of ``decision`` on an example of label ``y`` (+-1).

    Examples
    --------
    >>> decision_loss(REJECT, 1, 0.25), decision_loss(PREDICT_NEGATIVE, 1, 0.25)
    (0.25, 1.0)
    """
    if decision == REJECT:
        return d
    return 0.0 if DECISION_LABEL[decision] == y else 1.0


class RejectMetrics(EpisodeMetrics):
    """Episode metrics of reject-option classification, with their curves over t.

    ``average_risk`` is the mean ``L_d`` of the decisions (the paper's
    risk), ``query_rate`` the fraction of labels asked for,
    ``misclassification_rate`` and ``rejection_rate`` the fractions of
    examples misclassified and rejected (so ``average_risk =
    misclassification_rate + d * rejection_rate``). ``n_queries`` counts
    the labels asked for. ``bayes_risk`` is the mean conditional risk of
    the Bayes rule on the same examples (synthetic worlds; NaN for a
    dataset, whose posterior is unknown). :meth:`curves` gives each rate as
    a running average over t, the paper's plots.

    Examples
    --------
    >>> m = RejectMetrics()
    >>> for action, risk in [((2, 1), 0.0), ((1, 0), 0.25), ((0, 1), 1.0)]:
    ...     m.update(action, 0.0, {"revealed": action[1] == 1},
    ...              {"loss": risk, "risk": risk, "misclassified": risk == 1.0,
    ...               "rejected": action[0] == 1})
    >>> {k: round(m.get()[k], 3) for k in ("average_risk", "query_rate", "rejection_rate")}
    {'average_risk': 0.417, 'query_rate': 0.667, 'rejection_rate': 0.333}
    >>> m.curves()["risk"].round(3).tolist()
    [0.0, 0.125, 0.417]
    """

    def __init__(self) -> None:
        super().__init__()
        self._risk: list[float] = []
        self._queried: list[bool] = []
        self._misclassified: list[bool] = []
        self._rejected: list[bool] = []
        self._bayes: list[float] = []

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one decision."""
        super().update(action, reward, feedback, oracle)
        self._risk.append(float(oracle["risk"]))
        self._queried.append(bool(np.asarray(action)[1] == 1))
        self._misclassified.append(bool(oracle["misclassified"]))
        self._rejected.append(bool(oracle["rejected"]))
        self._bayes.append(float(oracle.get("bayes_risk", np.nan)))

    def get(self) -> dict[str, float]:
        """Return the episode summary."""
        summary = super().get()
        steps = max(self.steps, 1)
        summary.update(
            average_risk=sum(self._risk) / steps,
            query_rate=sum(self._queried) / steps,
            n_queries=float(sum(self._queried)),
            misclassification_rate=sum(self._misclassified) / steps,
            rejection_rate=sum(self._rejected) / steps,
            bayes_risk=sum(self._bayes) / steps if self.steps else float("nan"),
        )
        return summary

    def curves(self) -> dict[str, np.ndarray]:
        """Return the running averages over ``t = 1..T`` and the labels asked for up to ``t``."""
        t = np.arange(1, self.steps + 1)
        queried = np.cumsum(self._queried)
        return {
            "risk": np.cumsum(self._risk) / t,
            "query_rate": queried / t,
            "misclassification_rate": np.cumsum(self._misclassified) / t,
            "rejection_rate": np.cumsum(self._rejected) / t,
            "n_queries": queried.astype(float),
        }
