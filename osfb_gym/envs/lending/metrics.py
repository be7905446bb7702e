"""OneSidedLending's scoring: the Bayes decision, the one-sided loss, the episode metrics."""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.validation import check_binary_array

# one applicant's feedback and Bayes action are copies of these (read-only: never handed out);
# a checked decision of one applicant is _ABOVE or _BELOW itself (the env only reads it)
_TRUE, _FALSE = np.ones(1, dtype=bool), np.zeros(1, dtype=bool)
_ABOVE, _BELOW = np.ones(1, dtype=np.int8), np.zeros(1, dtype=np.int8)
_ZERO = np.zeros(1)
for _constant in (_TRUE, _FALSE, _ABOVE, _BELOW, _ZERO):
    _constant.flags.writeable = False


def check_decisions(action: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Check decisions of ``shape`` as :func:`~osfb_gym.core.validation.check_binary_array` does.

    An array of the action's shape whose dtype is boolean, integer or
    floating (stable-baselines3 hands MultiBinary actions over as float32)
    and whose entries are exactly 0 or 1 is converted here without the
    validator's general checks; one applicant's decision comes back as a
    read-only ``int8`` constant (the env only reads it). Anything else goes
    to the validator, which raises the error naming ``action``.
    """
    if type(action) is np.ndarray and action.shape == shape and action.dtype.kind in "biuf":
        if action.size == 1:
            value = action.item()  # NaN equals neither
            if value == 1:
                return _ABOVE
            if value == 0:
                return _BELOW
        elif ((action == 0) | (action == 1)).all():
            return action.astype(np.int8)
    return check_binary_array(action, "action", shape)


def bayes_decision(mu: np.ndarray, cutoff: float) -> np.ndarray:
    """Return the Bayes-optimal decisions ``1{mu > c}`` as ``int8``.

    Examples
    --------
    >>> bayes_decision(np.array([0.2, 0.8]), 0.5)
    array([0, 1], dtype=int8)
    """
    return (np.asarray(mu) > cutoff).astype(np.int8)


def one_sided_loss(mu: np.ndarray, cutoff: float, action: np.ndarray) -> Any:
    """One-sided loss of a batch, Definition 1 of Jiang, Jiang and Pacchiano (2021).

    ``r_t = sum_i |mu_i - c| * 1{1{mu_i > c} != a_i}``: each decision that
    disagrees with the Bayes rule costs the distance of its expected
    outcome to the cutoff. Its expectation is the regret of the reward.
    Summed over the last axis: one loss per batch of a vector env's sub-envs.

    Examples
    --------
    >>> round(float(one_sided_loss(np.array([0.2, 0.8, 0.9]), 0.5, np.array([1, 0, 1]))), 6)
    0.6
    """
    mu = np.asarray(mu, dtype=float)
    wrong = bayes_decision(mu, cutoff) != np.asarray(action)
    return np.sum(np.abs(mu - cutoff) * wrong, axis=-1)


def revealed_reward(y: np.ndarray, cutoff: float, approved: np.ndarray) -> Any:
    """Sum of ``y - c`` over the approved applicants (per batch: the last axis).

    Examples
    --------
    >>> float(revealed_reward(np.array([1.0, 0.0, 1.0]), 0.5, np.array([True, False, False])))
    0.5
    """
    return np.where(approved, np.asarray(y) - cutoff, 0.0).sum(axis=-1)


def score_batch(
    mu: np.ndarray,
    y: np.ndarray,
    cutoff: float,
    action: np.ndarray,
    valid: np.ndarray,
    one_sided: bool,
    all_valid: bool,
) -> tuple[float, float, dict[str, Any], np.ndarray]:
    """Score one decided batch: ``(reward, one-sided loss, feedback, Bayes action)``.

    :func:`revealed_reward`, :func:`one_sided_loss` and :func:`bayes_decision`
    inlined (every step of every episode runs this), plus the feedback:
    ``revealed`` (approved, or every real row with full feedback), ``y``
    where revealed (0.0 elsewhere) and ``valid``. Rows where ``valid`` is
    False (the padding of a partial last batch; ``all_valid`` says there is
    none) are never approved, revealed, rewarded or scored, whatever the
    action.

    Examples
    --------
    >>> mu, y = np.array([0.9, 0.2, 0.0]), np.array([1.0, 0.0, 0.0])
    >>> valid = np.array([True, True, False])
    >>> reward, loss, feedback, bayes = score_batch(
    ...     mu, y, 0.5, np.array([1, 1, 1], np.int8), valid, True, False)
    >>> reward, round(loss, 6), feedback["revealed"].tolist(), bayes.tolist()
    (0.0, 0.3, [True, True, False], [1, 0, 0])
    """
    if all_valid and action.size == 1:
        # one applicant: the same IEEE operations on Python floats (a sum of one
        # term is the term), without a dozen calls on arrays of one element
        one_mu, one_y, accept = mu.item(), y.item(), action.item() == 1
        bayes_one = one_mu > cutoff
        shown = accept or not one_sided
        # fresh arrays each step (a caller may keep or modify them), copied from
        # constants: cheaper than building them from lists
        feedback = {
            "revealed": (_TRUE if shown else _FALSE).copy(),
            # np.array([one_y]): a float64 copy of a float y, an int64 one of an int y
            "y": (y.astype(np.float64) if y.dtype.kind == "f" else np.array([one_y]))
            if shown
            else _ZERO.copy(),
            "valid": valid.copy(),
        }
        return (
            one_y - cutoff if accept else 0.0,
            abs(one_mu - cutoff) if bayes_one != accept else 0.0,
            feedback,
            (_ABOVE if bayes_one else _BELOW).copy(),
        )
    approved = action == 1
    if not all_valid:
        approved &= valid
        revealed = approved.copy() if one_sided else valid.copy()
        reward = float(np.where(approved, y - cutoff, 0.0).sum())
        above = (mu > cutoff) & valid
        wrong = (above != (action == 1)) & valid
        loss = float((np.abs(mu - cutoff) * wrong).sum())
        feedback = {"revealed": revealed, "y": np.where(revealed, y, 0.0), "valid": valid.copy()}
        return reward, loss, feedback, above.astype(np.int8)
    revealed = approved.copy() if one_sided else valid.copy()
    reward = float(np.where(approved, y - cutoff, 0.0).sum())
    above = mu > cutoff
    loss = float((np.abs(mu - cutoff) * (above != approved)).sum())
    feedback = {"revealed": revealed, "y": np.where(revealed, y, 0.0), "valid": valid.copy()}
    return reward, loss, feedback, above.astype(np.int8)


#: entries (steps x envs x applicants) a vector episode's metrics hold before summing them
HELD_ENTRIES = 1 << 16


class _HeldSteps:
    """A vector episode's steps, copied into blocks that :class:`LendingMetrics` sums at once.

    Row 0 of ``reward`` and ``loss`` is where the running totals go before a
    block's rows are added to them in order. ``bayes`` and ``valid`` are kept in
    the action's shape (``valid`` all True when a step has none).
    """

    def __init__(
        self,
        num_envs: int,
        action: np.ndarray,
        bayes: np.ndarray,
        revealed: np.ndarray,
        valid: np.ndarray | None,
    ) -> None:
        self.kind = _kind(action, bayes, revealed, valid)
        self.rows = max(1, HELD_ENTRIES // max(action.size, 1))
        self.n = 0
        self.reward = np.empty((self.rows + 1, num_envs))
        self.loss = np.empty((self.rows + 1, num_envs))
        self.action = np.empty((self.rows, *action.shape), dtype=action.dtype)
        self.bayes = np.empty((self.rows, *action.shape), dtype=bayes.dtype)
        self.revealed = np.empty((self.rows, *revealed.shape), dtype=bool)
        self.valid = np.ones((self.rows, *action.shape), dtype=bool)


def _kind(
    action: np.ndarray, bayes: np.ndarray, revealed: np.ndarray, valid: np.ndarray | None
) -> tuple[Any, ...]:
    """Return what a step's arrays must share with the held ones to join their block."""
    return (action.dtype, action.shape, bayes.dtype, revealed.shape, valid is None)


class LendingMetrics(EpisodeMetrics):
    """Episode metrics of lending: approvals and agreement with the Bayes rule.

    Each step's arrays are copied into a block and summed a block at a time
    (at most :data:`HELD_ENTRIES` entries, and whenever :meth:`get` is
    called): the same sums as step by step (the return and the loss added in
    step order, by ``np.add.accumulate``; the counts are integers), with a
    handful of calls per block instead of a dozen per step. With ``num_envs``
    (a vector env's lockstep episodes) every step carries a leading axis of
    that length. Read the metrics with :meth:`get`.
    """

    def __init__(self, num_envs: int | None = None) -> None:
        super().__init__(num_envs)
        self.decisions = 0
        self.approvals = self._zeros()
        self.wrongly_approved = self._zeros()
        self.wrongly_denied = self._zeros()
        self._held: _HeldSteps | None = None

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one batch of decisions (one per env of a vector env).

        Rows that ``feedback["valid"]`` marks False (the padding of a partial
        last batch) are not decisions: they count nowhere.
        """
        self._hold(action, reward, feedback, oracle)

    def _hold(
        self, action: Any, reward: Any, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Copy a step into the held block (summed by :meth:`_fold`)."""
        self.steps += 1
        if type(action) is not np.ndarray:
            action = np.asarray(action)
        bayes, revealed = oracle["bayes_action"], feedback["revealed"]
        valid = feedback.get("valid")
        if type(bayes) is not np.ndarray:
            bayes = np.asarray(bayes)
        if type(revealed) is not np.ndarray:
            revealed = np.asarray(revealed)
        if valid is not None and type(valid) is not np.ndarray:
            valid = np.asarray(valid)
        held = self._held
        if held is None or held.kind != _kind(action, bayes, revealed, valid):
            self._fold()
            held = self._held = _HeldSteps(self.num_envs or 1, action, bayes, revealed, valid)
        row = held.n
        held.reward[row + 1] = reward
        held.loss[row + 1] = oracle["loss"]
        held.action[row] = action
        held.bayes[row] = bayes
        held.revealed[row] = revealed
        if valid is not None:
            held.valid[row] = valid
        held.n = row + 1
        if held.n == held.rows:
            self._fold()

    def _fold(self) -> None:
        """Add the held steps to the totals, in step order; empty the block."""
        held = self._held
        if held is None or not held.n:
            return
        n, envs = held.n, self.num_envs or 1
        single = self.num_envs is None  # totals are Python numbers, as EpisodeMetrics keeps them
        for name, values in (("episode_return", held.reward), ("cumulative_loss", held.loss)):
            values[0] = getattr(self, name)
            # total + step 1 + step 2 + ...: the additions step by step, in order
            total = np.add.accumulate(values[: n + 1], axis=0)[n]
            setattr(self, name, float(total[0]) if single else total.copy())
        action, bayes, valid = held.action[:n], held.bayes[:n], held.valid[:n]

        def per_env(mask: np.ndarray) -> Any:
            counts = mask.reshape(n, envs, -1).sum(axis=(0, 2))
            return int(counts[0]) if single else counts

        approved = (action == 1) & valid
        self.n_revealed += per_env(held.revealed[:n])
        self.approvals += per_env(approved)
        self.wrongly_approved += per_env(approved & (bayes == 0))
        self.wrongly_denied += per_env((action == 0) & (bayes == 1) & valid)
        # the envs share one stream length: each step's decisions are its valid rows / envs
        self.decisions += int((valid.reshape(n, -1).sum(axis=1) // envs).sum())
        held.n = 0

    def get(self) -> dict[str, Any]:
        """Return the episode summary."""
        self._fold()
        summary = super().get()
        decisions = max(self.decisions, 1)
        wrong = self._value(self.wrongly_approved + self.wrongly_denied)
        summary.update(
            approval_rate=self._value(self.approvals) / decisions,
            bayes_agreement=1.0 - wrong / decisions,
            wrongly_approved=self._value(self.wrongly_approved),
            wrongly_denied=self._value(self.wrongly_denied),
        )
        return summary
