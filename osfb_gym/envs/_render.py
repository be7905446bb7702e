"""Rendering shared by the families: the ``render_truth`` rule and matplotlib (Agg) pictures.

A render shows what the agent was shown. Hidden truth (labels or outcomes
that were not revealed, the oracle's losses, hidden preferences) is drawn
or printed only when the env was made with ``render_truth=True``: a
picture fed to a policy (``gymnasium.wrappers.AddRenderObservation``) or a
video shown to a student must not give away what the setting hides.
matplotlib is imported only when an ``rgb_array`` frame is drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from osfb_gym.core.validation import check_choice

RENDER_MODES = ("ansi", "rgb_array")
#: recent steps an ``rgb_array`` frame shows
WINDOW = 400


def check_render(render_mode: Any, render_truth: Any) -> tuple[str | None, bool]:
    """Return ``(render_mode, render_truth)`` checked, or raise naming the argument.

    Examples
    --------
    >>> check_render("ansi", False)
    ('ansi', False)
    >>> check_render(None, 1)
    Traceback (most recent call last):
    ...
    TypeError: render_truth must be True or False, got 1
    """
    mode = check_choice(render_mode, "render_mode", (None, *RENDER_MODES))
    if not isinstance(render_truth, bool | np.bool_):  # (a flag: numpy's bool too)
        raise TypeError(f"render_truth must be True or False, got {render_truth!r}")
    return mode, bool(render_truth)


def context_text(values: Any, limit: int = 8) -> str:
    """Return ``values`` (a context the agent is shown) as one short line of text.

    Two decimals; a vector of more than ``limit`` numbers, or a matrix of
    more than 3 rows, is cut with ``...`` (a dataset's rows or a batch of
    applicants can be long).

    Examples
    --------
    >>> context_text(np.array([0.5, -1.254]))
    '[0.5, -1.25]'
    >>> context_text(np.arange(20.0))
    '[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, ... (20 values)]'
    >>> context_text(np.ones((5, 2)))
    '[[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], ... (5 rows)]'
    """
    array = np.asarray(values, dtype=np.float64)
    if array.ndim > 1:
        rows = [context_text(row, limit) for row in array[:3]]
        more = [f"... ({len(array)} rows)"] if len(array) > 3 else []
        return "[" + ", ".join(rows + more) + "]"
    items = [str(round(float(v), 2)) for v in array.ravel()[:limit]]
    if array.size > limit:
        items.append(f"... ({array.size} values)")
    return "[" + ", ".join(items) + "]"


def new_figure(ncols: int = 2, nrows: int = 1) -> tuple[Any, Any]:
    """Return an Agg ``Figure`` (no display, no global pyplot state) and its axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 3.2), dpi=80)
    FigureCanvasAgg(figure)
    # fixed margins: tight_layout would draw every frame twice
    figure.subplots_adjust(left=0.12, right=0.98, bottom=0.16, top=0.9, wspace=0.3)
    return figure, figure.subplots(nrows, ncols)


def figure_to_rgb(figure: Any) -> np.ndarray:
    """Draw ``figure`` and return its pixels as a ``(height, width, 3)`` ``uint8`` array."""
    figure.canvas.draw()
    return np.asarray(figure.canvas.buffer_rgba())[..., :3].copy()


def stream_image(
    title: str,
    rows: Sequence[tuple[str, np.ndarray, dict[int, tuple[str, str]]]],
    curves: Sequence[tuple[str, np.ndarray]],
) -> np.ndarray:
    """Draw a stream of decisions: one strip per row over the recent steps, curves beside.

    Parameters
    ----------
    title
        The left panel's title.
    rows
        ``(name, codes, legend)``: one integer code per step (all rows of
        one length), and for each code its ``(colour, label)``.
    curves
        ``(label, values)``: running totals over all steps, drawn on the right.
    """
    figure, (left, right) = new_figure()
    n_steps = len(rows[0][1]) if rows else 0
    if n_steps == 0:
        left.set_title("no decisions yet")
        right.axis("off")
        return figure_to_rgb(figure)
    start = max(0, n_steps - WINDOW)
    t = np.arange(start, n_steps) + 1
    for height, (_, codes, legend) in enumerate(reversed(rows)):
        recent = np.asarray(codes)[start:]
        for code, (colour, label) in legend.items():
            mask = recent == code
            if mask.any():
                left.scatter(
                    t[mask], np.full(mask.sum(), height), s=14, marker="|", c=colour, label=label
                )
    left.set_yticks(range(len(rows)), [name for name, _, _ in reversed(rows)])
    left.set_ylim(-0.7, len(rows) + 0.9)  # room above the strips for the legend
    left.set_xlabel("t")
    left.set_title(title, fontsize=9)
    left.legend(fontsize=6, loc="upper left", ncol=5, markerscale=1.5)
    for label, values in curves:
        right.plot(np.arange(1, len(values) + 1), values, label=label)
    right.set_xlabel("t")
    right.legend(fontsize=7)
    return figure_to_rgb(figure)


class StepTrace:
    """What a render of a stream env remembers of each step: integer codes and two totals.

    Kept only when the env renders; the ``truth`` codes and the loss are
    read only by a render made with ``render_truth=True``.
    """

    def __init__(self) -> None:
        self._codes: dict[str, list[int]] = {}
        self._rewards: list[float] = []
        self._losses: list[float] = []

    def add(self, reward: float, loss: float, **codes: int) -> None:
        """Append one step's reward, (oracle) loss and codes."""
        self._rewards.append(reward)
        self._losses.append(loss)
        for name, code in codes.items():
            self._codes.setdefault(name, []).append(code)

    def codes(self, name: str) -> np.ndarray:
        """Return the codes ``name`` of every step so far."""
        return np.asarray(self._codes.get(name, []), dtype=int)

    def total_reward(self) -> np.ndarray:
        """Return the running sum of the rewards."""
        return np.cumsum(self._rewards)

    def total_loss(self) -> np.ndarray:
        """Return the running sum of the oracle losses (``render_truth`` only)."""
        return np.cumsum(self._losses)
