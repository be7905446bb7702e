"""What a render of DelayedImpactLending shows: the step record, its text line, the RGB frame.

A render shows what the agent was shown: applicants (group, score), the
decisions, the revealed outcomes, the reward, and the mean score of the
applicants seen so far per group. The hidden outcomes of denied
applicants, the one-sided loss and the groups' true mean scores appear
only with ``render_truth=True``. matplotlib (Agg) is imported only when a
frame is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from osfb_gym.envs._render import WINDOW, figure_to_rgb, new_figure


@dataclass
class Trace:
    """What the render remembers of an episode (kept only when the env renders)."""

    n_groups: int
    group: list[np.ndarray] = field(default_factory=list)
    score: list[np.ndarray] = field(default_factory=list)
    action: list[np.ndarray] = field(default_factory=list)
    shown: list[np.ndarray] = field(default_factory=list)  # revealed outcome, NaN hidden
    seen_mean: list[np.ndarray] = field(default_factory=list)  # (G,) mean score seen so far
    true_mean: list[np.ndarray] = field(default_factory=list)  # render_truth only
    total_reward: float = 0.0
    total_loss: float = 0.0
    _sums: np.ndarray | None = None

    def add(
        self,
        t: int,
        batch: tuple[np.ndarray, np.ndarray, np.ndarray],
        action: np.ndarray,
        revealed: np.ndarray,
        reward: float,
        loss: float,
        true_mean: np.ndarray | None,
    ) -> str:
        """Record step ``t`` and return its text line (the truth only with ``true_mean``)."""
        group, score, repaid = batch
        sums = np.stack(
            [
                np.bincount(group, weights=score, minlength=self.n_groups),
                np.bincount(group, minlength=self.n_groups).astype(float),
            ]
        )
        if self._sums is not None:
            sums += self._sums
        self._sums = sums
        with np.errstate(invalid="ignore", divide="ignore"):
            self.seen_mean.append(sums[0] / sums[1])
        self.group.append(group)
        self.score.append(score)
        self.action.append(action)
        self.shown.append(np.where(revealed, repaid, np.nan))
        self.total_reward += reward
        outcomes = ["repaid" if y == 1 else "default" for y in repaid[revealed]]
        line = (
            f"t={t:4d}  applicants (group, score) "
            f"{[(int(g), round(float(s))) for g, s in zip(group, score, strict=True)]}  "
            f"approved {int(action.sum())}/{action.size}  revealed {outcomes}  "
            f"reward {reward:.2f}  cumulative {self.total_reward:.2f}"
        )
        if true_mean is not None:
            self.total_loss += loss
            self.true_mean.append(true_mean)
            hidden = ["repaid" if y == 1 else "default" for y in repaid[~revealed]]
            line += (
                f"  | truth: hidden {hidden}  one-sided loss {loss:.2f}  "
                f"cumulative {self.total_loss:.2f}  group mean scores "
                f"{np.round(true_mean, 1).tolist()}"
            )
        return line


def render_rgb(trace: Trace, truth: bool) -> np.ndarray:
    """Draw the recent applicants and decisions (left) and the groups' mean scores (right).

    Left: each recent applicant at its score, coloured by group, filled if
    approved and hollow if denied; a revealed default is a black cross.
    Right: the mean score of the applicants seen so far per group (what the
    agent saw) and, with ``truth``, each group's true mean score (the
    distribution the decisions move).
    """
    figure, (left, right) = new_figure()
    if not trace.group:
        left.set_title("no decisions yet")
        right.axis("off")
        return figure_to_rgb(figure)
    group = np.concatenate(trace.group)[-WINDOW:]
    score = np.concatenate(trace.score)[-WINDOW:]
    approved = np.concatenate(trace.action)[-WINDOW:] == 1
    shown = np.concatenate(trace.shown)[-WINDOW:]
    index = np.arange(group.size)
    colours = ("tab:orange", "tab:blue", "tab:green", "tab:purple")
    for g in np.unique(group):
        colour = colours[int(g) % len(colours)]
        mine = group == g
        left.scatter(index[mine & approved], score[mine & approved], s=8, c=colour, label=f"g{g}")
        left.scatter(
            index[mine & ~approved],
            score[mine & ~approved],
            s=8,
            facecolors="none",
            edgecolors=colour,
        )
    defaulted = shown == 0.0
    left.scatter(index[defaulted], score[defaulted], s=12, marker="x", c="black", label="default")
    left.set_xlabel("recent applicant")
    left.set_ylabel("score")
    left.legend(fontsize=7, loc="upper right")
    t = np.arange(1, len(trace.seen_mean) + 1)
    seen = np.stack(trace.seen_mean)
    for g in range(seen.shape[1]):
        colour = colours[g % len(colours)]
        right.plot(t, seen[:, g], color=colour, ls="--", label=f"g{g} seen")
        if truth and trace.true_mean:
            right.plot(t, np.stack(trace.true_mean)[:, g], color=colour, label=f"g{g} true")
    right.set_xlabel("t")
    right.set_ylabel("mean score")
    right.legend(fontsize=7)
    return figure_to_rgb(figure)
