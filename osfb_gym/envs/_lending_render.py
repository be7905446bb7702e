"""The ``rgb_array`` picture of OneSidedLending (matplotlib, imported lazily)."""

from __future__ import annotations

import numpy as np

from osfb_gym.core.links import Link

WINDOW = 400  # applicants shown


def _figure_to_rgb(figure) -> np.ndarray:  # type: ignore[no-untyped-def]
    figure.canvas.draw()
    image = np.asarray(figure.canvas.buffer_rgba())[..., :3].copy()
    return image


def render_rgb(
    history: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]],
    cutoff: float,
    link: Link,
    beta: np.ndarray | None,
) -> np.ndarray:
    """Draw the recent decisions against the truth.

    Left: the true ``mu(x . beta*)`` of the last applicants, approved ones
    filled, denied ones hollow, with the cutoff; points on the wrong side
    are the one-sided loss. Right, for ``dim == 2``: the applicants in
    feature space with the true boundary and the boundary the agent's own
    decisions imply (a logistic fit of decisions on features: the env sees
    the decisions, never the agent's model); otherwise the cumulative
    one-sided loss against t.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 3.2), dpi=80)
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    if not history:
        left.set_title("no decisions yet")
        right.axis("off")
        return _figure_to_rgb(figure)

    x = np.concatenate([h[0] for h in history])[-WINDOW:]
    mu = np.concatenate([h[1] for h in history])[-WINDOW:]
    action = np.concatenate([h[2] for h in history])[-WINDOW:]
    index = np.arange(mu.size)
    approved = action == 1
    left.scatter(index[approved], mu[approved], s=8, c="tab:green", label="approved")
    left.scatter(
        index[~approved],
        mu[~approved],
        s=8,
        facecolors="none",
        edgecolors="tab:red",
        label="denied",
    )
    left.axhline(cutoff, color="black", lw=1, label="cutoff c")
    left.set_xlabel("recent applicant")
    left.set_ylabel("true mu(x.beta*)")
    left.legend(fontsize=7, loc="upper right")

    if x.shape[1] == 2 and beta is not None:
        right.scatter(x[approved, 0], x[approved, 1], s=8, c="tab:green")
        right.scatter(
            x[~approved, 0], x[~approved, 1], s=8, facecolors="none", edgecolors="tab:red"
        )
        grid = np.linspace(x[:, 0].min(), x[:, 0].max(), 50)
        threshold = float(link.inverse(cutoff))
        if abs(beta[1]) > 1e-12:
            right.plot(grid, (threshold - beta[0] * grid) / beta[1], "k-", label="true boundary")
        if 0 < approved.sum() < approved.size:
            from sklearn.linear_model import LogisticRegression

            fit = LogisticRegression(C=100.0).fit(x, action)
            w, b = fit.coef_[0], fit.intercept_[0]
            if abs(w[1]) > 1e-12:
                right.plot(grid, -(b + w[0] * grid) / w[1], "b--", label="agent's boundary")
        right.set_ylim(x[:, 1].min() - 0.5, x[:, 1].max() + 0.5)
        right.legend(fontsize=7, loc="upper right")
        right.set_xlabel("x1")
        right.set_ylabel("x2")
    else:
        right.plot(np.arange(1, len(history) + 1), [h[3] for h in history])
        right.set_xlabel("t")
        right.set_ylabel("cumulative one-sided loss")
    figure.tight_layout()
    return _figure_to_rgb(figure)
