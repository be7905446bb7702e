"""DelayedImpactLending's scoring: a step's reward and loss, the episode's per-group metrics."""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.metrics import EpisodeMetrics


def score_batch(
    rho: np.ndarray,
    repaid: np.ndarray,
    approved: np.ndarray,
    loan_gain: float,
    default_loss: float,
) -> tuple[float, float, np.ndarray]:
    """Score one decided batch: ``(reward, one-sided loss, Bayes action)``.

    The reward is the profit of the approved loans, ``+loan_gain`` for each
    repaid and ``-default_loss`` for each default; denied applicants give 0.
    The Bayes action approves exactly when the expected profit
    ``rho * gain - (1 - rho) * loss`` is positive, and the one-sided loss
    charges each decision that disagrees with it its expected profit's
    size (Jiang, Jiang and Pacchiano's Definition 1 with the lender's
    profit as the outcome): the expected regret of the reward.

    Examples
    --------
    >>> reward, loss, bayes = score_batch(
    ...     np.array([0.9, 0.5]), np.array([1.0, 0.0]), np.array([True, True]), 1.0, 4.0)
    >>> reward, round(loss, 6), bayes.tolist()
    (-3.0, 1.5, [1, 0])
    """
    profit = rho * loan_gain - (1.0 - rho) * default_loss
    bayes = profit > 0
    reward = float(np.where(approved, np.where(repaid == 1.0, loan_gain, -default_loss), 0.0).sum())
    loss = float(np.abs(profit)[bayes != approved].sum())
    return reward, loss, bayes.astype(np.int8)


class ImpactMetrics(EpisodeMetrics):
    """Episode metrics of delayed-impact lending: profit, one-sided loss, and per group.

    ``get()`` adds to the shared ones (``return`` is the lender's cumulative
    profit, ``cumulative_loss`` the one-sided loss): the overall
    ``approval_rate`` and ``default_rate`` (defaults among approved loans),
    the ``tpr_gap`` (largest minus smallest true-positive rate over the
    groups: approved repayers among all who would have repaid, an oracle
    quantity) and, for each group ``g``, ``approval_rate_g``,
    ``default_rate_g``, ``tpr_g`` and ``score_change_g`` (Delta mu: the
    change of the group's mean score over the episode). A rate with nothing
    to count (no applicant, no approval, no repayer) is NaN.
    :meth:`curves` gives ``mean_score_g``, each group's mean score after
    every step, and ``score_distribution_g``, ``(T, B)``: the group's whole
    distribution over the score grid after every step (the population's
    drift, for a figure).

    With ``num_envs`` (the lockstep episodes of a vector env, as
    :func:`osfb_gym.runner.run_vector_episode` runs them) each sub-env's
    episode is followed by its own metrics and :meth:`get` returns an array
    per metric (:meth:`split` gives one summary per episode, each what
    :func:`osfb_gym.runner.run_episode` reports).
    """

    def __init__(self, num_envs: int | None = None) -> None:
        super().__init__(num_envs)
        self._episodes = None if num_envs is None else [ImpactMetrics() for _ in range(num_envs)]
        self._counts: np.ndarray | None = None  # (5, G): seen, approved, defaults, repayers, TP
        self._means: list[np.ndarray] = []
        self._distributions: list[np.ndarray] = []
        self._start: np.ndarray | None = None

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one batch of decisions (one per sub-env with ``num_envs``)."""
        if self._episodes is not None:
            self.steps += 1
            rewards = np.asarray(reward, dtype=float)
            actions = np.asarray(action)
            for i, episode in enumerate(self._episodes):
                episode.update(
                    actions[i],
                    float(rewards[i]),
                    {key: np.asarray(value)[i] for key, value in feedback.items()},
                    {key: np.asarray(value)[i] for key, value in oracle.items()},
                )
            return
        super().update(action, reward, feedback, oracle)
        group = np.asarray(oracle["group"], dtype=np.intp)
        repaid = np.asarray(oracle["y"]) == 1.0
        approved = np.asarray(action).reshape(-1) == 1
        mean = np.asarray(oracle["mean_score"], dtype=float)
        if self._counts is None:
            self._counts = np.zeros((5, mean.size))
            self._start = mean - np.asarray(oracle["score_change"], dtype=float)
        for row, mask in enumerate(
            (np.ones_like(approved), approved, approved & ~repaid, repaid, approved & repaid)
        ):
            self._counts[row] += np.bincount(group, weights=mask, minlength=mean.size)
        self._means.append(mean)
        self._distributions.append(np.asarray(oracle["pi"], dtype=float))

    def curves(self) -> dict[str, np.ndarray]:
        """Per step: ``mean_score_g`` and ``score_distribution_g`` (``(T, B)``) of each group."""
        if not self._means:
            return {}
        means = np.stack(self._means)
        distributions = np.stack(self._distributions)
        curves = {f"mean_score_{g}": means[:, g] for g in range(means.shape[1])}
        for g in range(means.shape[1]):
            curves[f"score_distribution_{g}"] = distributions[:, g]
        return curves

    def get(self) -> dict[str, Any]:
        """Return the episode summary (arrays over the sub-envs with ``num_envs``)."""
        if self._episodes is not None:
            summaries = [episode.get() for episode in self._episodes]
            return {key: np.array([s[key] for s in summaries]) for key in summaries[0]}
        summary = super().get()
        if self._counts is None or self._start is None:
            return summary
        seen, approved, defaults, repayers, hits = self._counts
        with np.errstate(divide="ignore", invalid="ignore"):
            approval = approved / seen
            default = defaults / approved
            tpr = hits / repayers
        known = tpr[np.isfinite(tpr)]
        summary.update(
            approval_rate=float(approved.sum() / max(seen.sum(), 1.0)),
            default_rate=float(defaults.sum() / approved.sum()) if approved.sum() else np.nan,
            tpr_gap=float(known.max() - known.min()) if known.size else np.nan,
        )
        change = self._means[-1] - self._start
        for g in range(seen.size):
            summary[f"approval_rate_{g}"] = float(approval[g])
            summary[f"default_rate_{g}"] = float(default[g])
            summary[f"tpr_{g}"] = float(tpr[g])
            summary[f"score_change_{g}"] = float(change[g])
        return summary
