"""Episode metrics of MultiServiceChoice: the loss against k, fairness, dynamics, the reference.

The runner feeds :class:`ServiceMetrics` every step's oracle (agents never
see it). Besides the episode's summary they keep the per-step curves a
report draws (total and excess loss, the fairness objective and each
group's average loss after each service), and, only when they are made to
ask for it, the reference optimum from the hidden world the last step's
oracle carries (:func:`~osfb_gym.envs.services.reference.cached_reference_loss`,
one solve per world).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.validation import INTEGER_TYPES, check_int

#: the per-step oracle values kept as curves
CURVE_KEYS = ("total_loss", "excess_loss", "fairness")


class ServiceMetrics(EpisodeMetrics):
    """Episode metrics of MultiServiceChoice: final total loss, fairness, dynamics, ratio.

    ``total_loss`` is the objective (after the dynamics, when they run).
    The inherited ``cumulative_loss`` sums ``oracle["loss"] = L(Theta_t)``
    over the steps: the area under the loss-against-k curve, not the
    objective.

    Parameters
    ----------
    reference_restarts
        Restarts of the reference solver; 0 (the default) computes no
        reference. The env makes its metrics with its own
        ``reference_restarts`` (``env.metrics_class``).
    reference_ks
        The numbers of services at which the reference is solved; each
        gives ``reference_loss_k{k}`` and ``approximation_ratio_k{k}`` (the
        loss right after the ``k``-th service over it). Empty: the
        episode's ``k`` alone, as ``reference_loss`` and
        ``approximation_ratio`` (the final loss over it).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from agents.services import Uniform
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("MultiServiceChoice-v0", n_users=40, n_services=4, reference_ks=[2, 4])
    >>> trajectory = run_episode(env, Uniform(), seed=0)
    >>> sorted(trajectory.curves)[:3], trajectory.curves["total_loss"].shape
    (['excess_loss', 'fairness', 'group_loss_0'], (4,))
    >>> trajectory.metrics["approximation_ratio_k2"] >= 1.0
    True
    """

    def __init__(self, reference_restarts: int = 0, reference_ks: Sequence[int] = ()) -> None:
        super().__init__()
        self.reference_restarts = check_int(reference_restarts, "reference_restarts", minimum=0)
        self.reference_ks = tuple(check_int(k, "reference_ks", minimum=1) for k in reference_ks)
        self.last: dict[str, Any] = {}
        self._curves: dict[str, list[float]] = {key: [] for key in CURVE_KEYS}
        self._groups: list[np.ndarray] = []

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Keep the step's curve values; the episode's figures are those of its last step."""
        super().update(action, reward, feedback, oracle)
        for key, values in self._curves.items():
            values.append(float(oracle[key]))
        self._groups.append(np.asarray(oracle["group_losses"], dtype=float))
        self.last = oracle

    def curves(self) -> dict[str, np.ndarray]:
        """Per step: total and excess loss, fairness, and ``group_loss_{g}`` for each group."""
        curves = {key: np.asarray(values) for key, values in self._curves.items()}
        if self._groups:
            groups = np.stack(self._groups)
            curves.update({f"group_loss_{g}": groups[:, g] for g in range(groups.shape[1])})
        return curves

    def _references(self, world: Any) -> dict[str, float]:
        from osfb_gym.envs.services.reference import cached_reference_loss

        out: dict[str, float] = {}
        k_final = int(np.asarray(self.last["services"]).shape[0])
        losses = self._curves["total_loss"]
        for k in self.reference_ks or (k_final,):
            if k > min(k_final, world.n):
                raise ValueError(
                    f"reference_ks holds {k}, more than the episode's {k_final} services"
                )
            reference = cached_reference_loss(world, k, restarts=self.reference_restarts)
            if self.reference_ks:
                out[f"reference_loss_k{k}"] = reference
                out[f"approximation_ratio_k{k}"] = losses[k - 1] / reference
            else:
                out["reference_loss"] = reference
                out["approximation_ratio"] = float(self.last["total_loss"]) / reference
        return out

    def get(self) -> dict[str, float]:
        """Return the episode summary."""
        summary = super().get()
        last = self.last
        for key in (
            "total_loss",
            "excess_loss",
            "fairness",
            "loss_before_dynamics",
            "loss_after_dynamics",
        ):
            if key in last:
                summary[key] = float(last[key])
        if self.reference_restarts > 0 and "world" in last:
            summary.update(self._references(last["world"]))
        return summary


def check_user(action: Any, n_users: int) -> int:
    """Return the user ``action`` acquires, or raise naming ``action``."""
    # the common cases first (a Python int, a numpy integer as RL libraries pass it)
    if type(action) in INTEGER_TYPES:
        user = int(action)
        if 0 <= user < n_users:
            return user
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    return check_int(action, "action", minimum=0, maximum=n_users - 1)
