"""The RGB frame of MultiServiceChoice: what the agent was shown, or the truth when asked."""

from __future__ import annotations

import numpy as np


def reset_line(n_users: int, n_services: int, n_groups: int | None) -> str:
    """Return the ``ansi`` line of a reset: the users to serve, no service yet."""
    groups = "" if n_groups is None else f" in {n_groups} groups"
    return (
        f"k={0:3d}/{n_services}  reset: {n_users} users{groups} to serve, no service yet "
        "(reported losses 0)"
    )


def step_line(
    t: int,
    n_services: int,
    user: int,
    total: float,
    choice: np.ndarray,
    preference: np.ndarray | None,
) -> str:
    """Return the ``ansi`` line of step ``t``; the acquired ``preference`` only when given."""
    counts = np.bincount(choice, minlength=n_services + 1)[:n_services]
    line = (
        f"k={t:3d}/{n_services}  acquired user {user:4d}  "
        f"total reported loss {total:.3f}  users per service {counts[:t].tolist()}"
    )
    if preference is not None:
        line += f"  | truth: its preference {np.round(preference, 3).tolist()}"
    return line


def services_frame(
    choice: np.ndarray,
    n_services: int,
    reported: np.ndarray,
    totals: list[float],
    groups: np.ndarray | None,
    truth: tuple[np.ndarray, np.ndarray] | None,
) -> np.ndarray:
    """Return a ``(256, 640, 3)`` frame: users (left) and the total reported loss per step.

    Left: each user's reported loss against the service it chose
    (coloured by group when ``groups`` are given), or, with ``truth =
    (preferences, services placed)``, the hidden preferences and the
    services in preference space (first two coordinates).
    """
    from osfb_gym.envs._render import figure_to_rgb, new_figure

    figure, (left, right) = new_figure()
    placed = choice < n_services
    colour = choice if len(totals) else np.zeros(choice.size)
    if truth is not None:
        points, services = truth
        left.scatter(points[:, 0], points[:, 1], s=8, c=colour, cmap="tab10")
        left.scatter(services[:, 0], services[:, 1], s=120, marker="*", c="black", label="services")
        left.set_title("truth: preferences (colour: chosen service)", fontsize=9)
        if len(services):
            left.legend(fontsize=7)
    else:
        jitter = (np.arange(choice.size) % 7 - 3) / 10
        x = np.where(placed, choice, -1) + jitter
        if groups is None:
            left.scatter(x, reported, s=8, c="tab:blue")
        else:
            left.scatter(x, reported, s=8, c=groups, cmap="tab10")
        left.set_xlabel("chosen service (-1: none yet)")
        left.set_ylabel("reported loss")
        left.set_title("users' reported losses (colour: group)", fontsize=9)
    right.plot(np.arange(1, len(totals) + 1), totals, marker="o")
    right.set_xlabel("services placed")
    right.set_ylabel("total reported loss")
    return figure_to_rgb(figure)
