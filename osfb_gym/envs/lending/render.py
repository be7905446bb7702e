"""What a render of OneSidedLending shows: the step record, its text line, the RGB frame.

matplotlib (Agg) is imported only when a frame is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from osfb_gym.core.links import Link
from osfb_gym.envs._render import WINDOW, context_text, figure_to_rgb, new_figure


@dataclass(frozen=True)
class Step:
    """One decided batch, as a render remembers it (real applicants only, no padding)."""

    x: np.ndarray
    action: np.ndarray
    revealed: np.ndarray
    y: np.ndarray  # revealed outcomes, NaN where hidden
    total_reward: float
    mu: np.ndarray | None  # render_truth only
    total_loss: float


def record_step(
    history: list[Step],
    t: int,
    batch: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    action: np.ndarray,
    revealed: np.ndarray,
    reward: float,
    loss: float,
    truth: bool,
) -> str:
    """Append step ``t``'s record to ``history`` and return its text line.

    ``batch`` is ``(x, mu, y, valid)`` of the decided batch: the padding of
    a partial last batch (``valid`` False) is left out. ``mu``, the hidden
    outcomes and the loss are kept and shown only with ``truth``.
    """
    x, mu, y, valid = batch
    x, mu, y, action, revealed = x[valid], mu[valid], y[valid], action[valid], revealed[valid]
    previous = history[-1] if history else None
    step = Step(
        x=x,
        action=action,
        revealed=revealed,
        y=np.where(revealed, y, np.nan),
        total_reward=(previous.total_reward if previous else 0.0) + reward,
        # hidden truth, kept only for a render that asks for it
        mu=mu if truth else None,
        total_loss=(previous.total_loss if previous else 0.0) + loss * truth,
    )
    history.append(step)
    line = (
        f"t={t:4d}  approved {int(action.sum()):3d}/{action.size}  "
        f"revealed y={np.round(y[revealed], 2).tolist()}  "
        f"reward {reward:.3f}  cumulative {step.total_reward:.3f}"
    )
    if truth:
        line += (
            f"  | truth: hidden y={np.round(y[~revealed], 2).tolist()}  "
            f"one-sided loss {loss:.3f}  cumulative {step.total_loss:.3f}"
        )
    return line


def reset_line(obs: np.ndarray, n_warm: int, cutoff: float) -> str:
    """Return the ``ansi`` line of a reset: the first batch shown, the warm start's size."""
    return (
        f"t={0:4d}  reset: {len(obs)} applicant(s) to decide, x={context_text(obs)}  "
        f"warm start: {n_warm} labelled  cutoff {cutoff:.3f}"
    )


def render_rgb(
    history: list[Step],
    cutoff: float,
    link: Link,
    beta: np.ndarray | None,
    truth: bool,
) -> np.ndarray:
    """Draw the recent decisions: what the agent saw, and the truth when asked.

    Left: the last applicants in arrival order. Without ``truth``, an
    approved applicant sits at its revealed outcome (filled) and a denied
    one, whose outcome stays hidden, on the cutoff line (a red cross);
    with ``truth``, every applicant sits at its true ``mu(x . beta*)``
    (approved filled, denied hollow), so points on the wrong side of the
    cutoff are the one-sided loss. Right, for ``dim == 2``: the applicants
    in feature space and the boundary the agent's own decisions imply (a
    logistic fit of decisions on features: the env sees the decisions,
    never the agent's model), plus the true boundary with ``truth``;
    otherwise the cumulative revealed reward against t (and the cumulative
    one-sided loss with ``truth``).
    """
    figure, (left, right) = new_figure()
    if not history:
        left.set_title("no decisions yet")
        right.axis("off")
        return figure_to_rgb(figure)

    x = np.concatenate([h.x for h in history])[-WINDOW:]
    action = np.concatenate([h.action for h in history])[-WINDOW:]
    index = np.arange(action.size)
    approved = action == 1
    if truth:
        mu = np.concatenate([h.mu for h in history if h.mu is not None])[-WINDOW:]
        left.scatter(index[approved], mu[approved], s=8, c="tab:green", label="approved")
        left.scatter(
            index[~approved],
            mu[~approved],
            s=8,
            facecolors="none",
            edgecolors="tab:red",
            label="denied",
        )
        left.set_ylabel("true mu(x.beta*)")
    else:
        y = np.concatenate([h.y for h in history])[-WINDOW:]
        revealed = ~np.isnan(y)
        left.scatter(index[revealed], y[revealed], s=8, c="tab:green", label="revealed y")
        hidden = ~revealed
        left.scatter(
            index[hidden],
            np.full(hidden.sum(), cutoff),
            s=10,
            marker="x",
            c="tab:red",
            label="denied (y hidden)",
        )
        left.set_ylabel("revealed outcome")
    left.axhline(cutoff, color="black", lw=1, label="cutoff c")
    left.set_xlabel("recent applicant")
    left.legend(fontsize=7, loc="upper right")

    if x.shape[1] == 2:
        _feature_space(right, x, approved, cutoff, link, beta)
    else:
        t = np.arange(1, len(history) + 1)
        right.plot(t, [h.total_reward for h in history], label="cumulative reward")
        if truth:
            right.plot(t, [h.total_loss for h in history], label="cumulative one-sided loss")
        right.set_xlabel("t")
        right.legend(fontsize=7)
    return figure_to_rgb(figure)


def _feature_space(
    axes: Any,
    x: np.ndarray,
    approved: np.ndarray,
    cutoff: float,
    link: Link,
    beta: np.ndarray | None,
) -> None:
    axes.scatter(x[approved, 0], x[approved, 1], s=8, c="tab:green")
    axes.scatter(x[~approved, 0], x[~approved, 1], s=8, facecolors="none", edgecolors="tab:red")
    grid = np.linspace(x[:, 0].min(), x[:, 0].max(), 50)
    if beta is not None and abs(beta[1]) > 1e-12:
        threshold = float(link.inverse(cutoff))
        axes.plot(grid, (threshold - beta[0] * grid) / beta[1], "k-", label="true boundary")
    if 0 < approved.sum() < approved.size:
        from sklearn.linear_model import LogisticRegression

        fit = LogisticRegression(C=100.0).fit(x, approved.astype(int))
        w, b = fit.coef_[0], fit.intercept_[0]
        if abs(w[1]) > 1e-12:
            axes.plot(grid, -(b + w[0] * grid) / w[1], "b--", label="agent's boundary")
    axes.set_ylim(x[:, 1].min() - 0.5, x[:, 1].max() + 0.5)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize=7, loc="upper right")
    axes.set_xlabel("x1")
    axes.set_ylabel("x2")
