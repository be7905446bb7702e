"""What an apple-tasting render shows: the stream's strips and curves, and the ansi line."""

from __future__ import annotations

import numpy as np

from osfb_gym.envs._render import StepTrace, context_text, stream_image

#: colours and labels of the ``rgb_array`` strips
DECISION_LEGEND = {1: ("tab:blue", "taste"), 0: ("tab:gray", "reject")}
LABEL_LEGEND = {1: ("tab:green", "y=1"), 0: ("tab:red", "y=0")}
HIDDEN = ("lightgray", "hidden")


def reset_line(x: np.ndarray, gain: float, cost_fp: float) -> str:
    """Return the ``ansi`` line of a reset: the first example shown, and the payoffs."""
    return f"t={0:5d}  reset: first example x={context_text(x)}  gain {gain:g}  cost_fp {cost_fp:g}"


def step_line(
    t: int, action: int, y: int, revealed: bool, reward: float, loss: float, truth: bool
) -> str:
    """Return the ``ansi`` line of step ``t``: the hidden label and loss only with ``truth``."""
    line = (
        f"t={t:5d}  {'taste ' if action else 'reject'}  "
        f"revealed y={y if revealed else '?'}  reward {reward:+.3f}"
    )
    if truth:
        line += f"  | truth: y={y}  loss {loss:.3f}"
    return line


def stream_frame(trace: StepTrace, truth: bool) -> np.ndarray:
    """Return the ``rgb_array`` frame: decisions and revealed labels (true ones with ``truth``)."""
    rows = [
        ("decision", trace.codes("decision"), DECISION_LEGEND),
        ("revealed y", trace.codes("revealed"), {**LABEL_LEGEND, -1: HIDDEN}),
    ]
    curves = [("cumulative reward", trace.total_reward())]
    if truth:
        rows.append(("true y", trace.codes("truth"), LABEL_LEGEND))
        curves.append(("cumulative loss", trace.total_loss()))
    return stream_image("apple tasting: the stream and the decisions", rows, curves)
