"""MultiServiceChoice-Retention: services whose badly served users leave, return or are replaced.

The world of :class:`~osfb_gym.envs.services.env.MultiServiceChoiceEnv`
with consequences (participation dynamics): after every round each active
user whose loss at its chosen service is above a tolerance leaves with some
probability, so which preferences the provider acquires early shapes the
population that remains. A subclass on the readable NumPy path; the
``-v0`` id and its compiled fast paths are untouched.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import make_info
from osfb_gym.envs.services.config import RetentionConfig, retention_config
from osfb_gym.envs.services.env import MultiServiceChoiceEnv
from osfb_gym.envs.services.metrics import ServiceMetrics, check_user
from osfb_gym.envs.services.render import reset_line, step_line
from osfb_gym.envs.services.world import GroupAverages, Population

__all__ = ["MultiServiceChoiceRetentionEnv", "RetentionMetrics"]

_Step = tuple[dict[str, Any], float, bool, bool, dict[str, Any]]


class MultiServiceChoiceRetentionEnv(MultiServiceChoiceEnv):
    r"""Acquire users' preferences to place services; users served badly leave.

    ## Description
    The services world of AcQUIre (Bose et al.) with participation
    dynamics. ``n`` users with hidden preferences and losses, in
    demographic groups. Each round the provider acquires one active
    user's preference: in the first ``n_services`` rounds a new service is
    launched there; afterwards (rounds ``k+1 .. horizon``) the service used
    by the fewest active users (ties: the lowest index) is relaunched
    there. Every user then takes its best service, and the *retention
    step* follows: each active user whose loss at its chosen service
    exceeds ``tolerance`` leaves with probability ``leave_probability``
    (one draw per user and round from the env's ``np_random``; the loss
    a user feels, also under ``report="excess"``, where it reports less). Variants:
    a departed user comes back with probability ``return_probability``
    each round (then chooses again), or, with ``replace=True``, its slot
    is taken at once by a new user drawn from the population, of the same
    demographic group (so the public group ids stay fixed).

    Users who are served badly early are likely gone before a service
    reaches them: a provider whose acquisitions neglect a group loses
    that group (Hashimoto et al. 2018 call this disparity amplification).

    ## Objective: departed users count at the outside option
    A departed user counts at a fixed outside-option loss
    ``outside_loss`` (default: ``tolerance``), not at 0. In the
    participation dynamics of Dean, Curmei, Ratliff, Morgenstern and
    Fazel a user minimises its own risk and one that leaves takes the
    option outside the services: its loss does not vanish. Counting it
    at 0 would reward a provider for driving users away (a badly served
    user's loss drops to 0 when it leaves). ``outside_loss=0`` gives that
    "remaining users only" objective when it is wanted; the remaining
    users' loss is reported apart (``oracle["active_loss"]``).

    ## Action Space
    ``Discrete(n)``: the user whose preference is acquired.
    ``info["action_mask"]`` (``int8``, 1 = active) says who can be
    acquired: acquiring a departed user is a no-op (nothing is launched,
    the round still passes, ``feedback["acted"]`` is False), as a survey
    sent to someone who left gets no answer. It is not an error, so that
    any policy (and a random one) can run.

    ## Observation Space
    A flat ``Dict``:

    | key            | space                          | content                            |
    |----------------|--------------------------------|------------------------------------|
    | ``losses``     | ``Box(0, F, (n,), float32)``   | loss at its service; 0: departed   |
    | ``choices``    | ``MultiDiscrete([k + 1] * n)`` | its service; ``k``: none, departed |
    | ``n_services`` | ``Discrete(k + 1)``            | services launched so far           |
    | ``active``     | ``MultiBinary(n)``             | who still uses the services        |
    | ``groups``     | ``MultiDiscrete([G] * n)``     | group ids (with ``reveal_groups``) |

    ## Feedback
    Bandit feedback as in ``MultiServiceChoice-v0``: ``info["feedback"]``
    holds ``"losses"``, ``"choices"``, ``"revealed"`` (the acquired user,
    none on a no-op), ``"active"``, ``"departed"`` (who left this round:
    the provider sees who stopped using its services), ``"returned"``,
    ``"replaced"`` (slots taken by newcomers this round) and ``"acted"``.
    A departed user reports nothing. At reset: ``"n_users"``,
    ``"n_services"``, ``"horizon"`` and, with ``reveal_groups``,
    ``"groups"``.

    No leak: the departures depend on the hidden world only through the
    losses, which are reported; the generic probe (a reflection of the
    whole hidden world that keeps every loss) proves it as for ``-v0``.

    ## Rewards
    The decrease of the counted total: the reported losses of the active
    users plus ``outside_loss`` per departed user (public: the departures
    are seen), 0 before the first service. The return is minus the final
    counted total.

    ## Info
    | key                          | channel   | content                                    |
    |------------------------------|-----------|--------------------------------------------|
    | ``action_mask``              | agent     | ``int8`` mask of active users              |
    | ``oracle["total_loss"]``     | evaluator | active's true loss + departed's outside |
    | ``oracle["active_loss"]``    | evaluator | the remaining users' true total loss       |
    | ``oracle["group_losses"]``   | evaluator | per group: average counted loss            |
    | ``oracle["group_active_losses"]`` | evaluator | per group: its active users' mean loss |
    | ``oracle["group_retention"]``| evaluator | per group: share of its users active       |
    | ``oracle["retention_rate"]`` | evaluator | share of all users active                  |
    | ``oracle["departures"]``     | evaluator | users who left this round                  |
    | ``oracle["fairness"]``       | evaluator | worst group's average counted loss         |
    | ``oracle["excess_loss"]``    | evaluator | ``total_loss`` minus the active's minimum  |
    | ``oracle["services"]``       | evaluator | ``(k, d)`` services; rows not launched 0.0 |

    :class:`RetentionMetrics` keeps the curves (departures and retention per
    round, overall and per group) and the episode's summary. The metrics
    compute no reference optimum by default (``reference_restarts=0``):
    the k-service optimum of the starting population says little once
    users have left.

    ## Starting State, Episode End
    As ``MultiServiceChoice-v0``: no service, every user active. The
    episode is truncated after ``horizon`` rounds (default
    ``2 * n_services``); it never terminates early.

    ## Arguments
    Every argument of ``MultiServiceChoice-v0`` except ``dynamics_rounds``,
    and:

    | argument             | default     | meaning |
    |----------------------|-------------|---------------------------------------------------------|
    | ``tolerance``        | 2.0         | a user above this loss may leave |
    | ``leave_probability`` | 0.2        | chance per round that a user above tolerance leaves |
    | ``return_probability`` | 0.0       | chance per round that a departed user returns |
    | ``replace``          | False       | a departed user's slot goes to a new user of its group |
    | ``outside_loss``     | None        | loss counted per departed user (None: ``tolerance``) |
    | ``horizon``          | None        | rounds per episode (None: ``2 k``; may be < ``k``) |
    | ``reference_restarts`` | 0         | as ``-v0``; 0: no reference optimum |
    | ``config``           | None        | a ``RetentionConfig`` instead of the arguments |

    ``replace`` needs a synthetic population (``"clusters"``,
    ``"linear"``): the world is drawn with ``2 n`` users, ``n`` of them
    (a random half) start, the others wait as newcomers, taken group by
    group in their drawn order; once a group's newcomers run out its
    slots stay empty (``world_seed`` fixes the ``2 n`` users; which half
    starts is drawn at each reset). It cannot be combined with
    ``return_probability``.
    The census population's groups (sex x race, ``census_groups``) are
    the groups of the per-group retention there.

    ## Rendering
    As ``MultiServiceChoice-v0``; the ``ansi`` line adds the active users.

    ## References
    Bose, Curmei, Jiang, Morgenstern, Dean, Ratliff, Fazel. "Initializing
    Services in Interactive ML Systems for Diverse Users", NeurIPS 2024.
    Dean, Curmei, Ratliff, Morgenstern, Fazel. "Emergent specialization
    from participation dynamics and multi-learner retraining", AISTATS
    2024 (arXiv:2206.02667). Hashimoto, Srivastava, Namkoong, Liang.
    "Fairness Without Demographics in Repeated Loss Minimization", ICML
    2018 (users leave when their expected loss is high).

    Examples
    --------
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = gym.make("MultiServiceChoice-Retention-v0", n_users=50, n_services=3)
    >>> obs, info = env.reset(seed=0)
    >>> env.unwrapped.horizon, int(info["action_mask"].sum())
    (6, 50)
    >>> obs, reward, terminated, truncated, info = env.step(7)
    >>> bool(obs["active"][7]), int(obs["n_services"])
    (True, 1)
    >>> bool(info["feedback"]["departed"].sum() == 50 - obs["active"].sum())
    True
    """

    def __init__(
        self,
        tolerance: float = 2.0,
        leave_probability: float = 0.2,
        return_probability: float = 0.0,
        replace: bool = False,
        outside_loss: float | None = None,
        horizon: int | None = None,
        reference_restarts: int = 0,
        *,
        config: RetentionConfig | None = None,
        **kwargs: Any,
    ) -> None:
        retention = {
            "tolerance": tolerance,
            "leave_probability": leave_probability,
            "return_probability": return_probability,
            "replace": replace,
            "outside_loss": outside_loss,
            "horizon": horizon,
        }
        render = {key: kwargs.pop(key) for key in ("render_mode", "render_truth") if key in kwargs}
        config = retention_config(
            config, reference_restarts=reference_restarts, **retention, **kwargs
        )
        super().__init__(config=config.services, **render)
        self.config: RetentionConfig = config  # type: ignore[assignment]
        self.tolerance, self.outside_loss = config.tolerance, config.outside_loss
        self.leave_probability = config.leave_probability
        self.return_probability = config.return_probability
        self.replace = config.replace
        k = self.n_services
        #: rounds per episode (``spec.max_episode_steps`` reports it; the env truncates there)
        self.horizon = config.horizon
        n = self.n_users
        parent = self.observation_space
        assert isinstance(parent, spaces.Dict)
        self.observation_space = spaces.Dict({**parent.spaces, "active": spaces.MultiBinary(n)})
        self.metrics_class = functools.partial(  # type: ignore[assignment,misc]
            RetentionMetrics,
            reference_restarts=self.reference_restarts,
            reference_ks=self.reference_ks,
        )
        self._active = np.ones(n, dtype=bool)
        self._table = np.zeros((n, k))  # each user's loss at each service launched
        self._m = 0  # services launched
        self._pool: Population | None = None  # replace: the whole drawn population
        self._slots = np.arange(n)
        self._queues: list[list[int]] = []
        self._counted = 0.0

    # ------------------------------------------------------------------ episode
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Draw a world as ``-v0`` does (twice the users with ``replace``); all users active."""
        n, k = self.n_users, self.n_services
        self._m = 0  # (the parent's reset reports through _reports: nothing launched yet)
        if self.replace:
            self.n_users = 2 * n  # the world builders draw this many users
            try:
                obs, info = super().reset(seed=seed, options=options)
            finally:
                self.n_users = n
            assert self._world is not None
            pool = self._world
            order = self.np_random.permutation(2 * n)
            self._pool, self._slots = pool, order[:n]
            waiting = order[n:]
            self._queues = [
                list(waiting[pool.groups[waiting] == g][::-1]) for g in range(self.n_groups)
            ]
            self._world = pool.take(self._slots)
            self._groups = self._world.groups
            self._minimum = self._world.minimum_loss()
            self._best, self._choice = np.zeros(n), np.full(n, k, dtype=np.int64)
            self._group_averages = None
        else:
            obs, info = super().reset(seed=seed, options=options)
        assert self._world is not None
        if self.render_mode is not None:  # the users the agent serves (not the waiting pool)
            self._last_line = reset_line(n, k, self.n_groups if self.reveal_groups else None)
        self._active = np.ones(n, dtype=bool)
        self._table = np.zeros((n, k))
        self._m = 0
        self._counted = 0.0
        feedback = {
            "n_users": n,
            "n_services": k,
            "horizon": self.horizon,
        }
        if self.reveal_groups:
            feedback["groups"] = self._world.groups.copy()
        oracle = {
            "preferences": self._world.preferences.copy(),
            "groups": self._world.groups.copy(),
        }
        info = make_info(feedback, oracle)
        info["action_mask"] = self._active.astype(np.int8)
        return self._obs(), info

    def step(self, action: Any) -> _Step:  # type: ignore[override]
        """Acquire user ``action`` (launch or relaunch a service there); users choose, leave."""
        world = self._world
        if world is None:
            raise RuntimeError("call reset() before step()")
        if self._t >= self.horizon:
            raise RuntimeError("the episode's horizon is reached; call reset() for a new episode")
        user = check_user(action, self.n_users)
        n, k = self.n_users, self.n_services
        acted = bool(self._active[user])
        revealed = np.zeros(n, dtype=bool)
        if acted:
            revealed[user] = True
            launched = self._m < k
            if launched:
                slot = self._m
                self._m += 1
            else:  # relaunch the service with the fewest active users
                counts = np.bincount(self._choice[self._active], minlength=k)
                slot = int(np.argmin(counts))
            theta = world.preferences[user]
            self._services[slot] = theta
            losses = self._table[:, slot] = world.loss_at(theta)
            if slot == 0 and launched:
                self._best, self._choice = losses.copy(), np.zeros(n, dtype=np.int64)
            elif launched:  # a new last column: np.argmin's choice, updated
                better = losses < self._best  # (ties keep the earlier service, as argmin)
                self._best = np.where(better, losses, self._best)
                self._choice = np.where(better, slot, self._choice)
            else:  # a relaunched service: every user chooses again
                self._choice = np.argmin(self._table[:, : self._m], axis=1).astype(np.int64)
                self._best = self._table[np.arange(n), self._choice]
        self._t += 1
        placed = self._m
        # the retention step: one uniform per user and round, whoever it concerns
        draws = self.np_random.random(n)
        departed = np.zeros(n, dtype=bool)
        returned = np.zeros(n, dtype=bool)
        replaced = np.zeros(n, dtype=bool)
        if placed:
            departed = (
                self._active & (self._best > self.tolerance) & (draws < self.leave_probability)
            )
            returned = ~self._active & (draws < self.return_probability)
            self._active = (self._active & ~departed) | returned
            if self.replace and departed.any():
                replaced = self._refill(departed)
        reported, counted = self._reports()
        previous, self._counted = self._counted, counted
        truncated = self._t >= self.horizon
        feedback = {
            "losses": reported,
            "choices": self._visible_choices(),
            "revealed": revealed,
            "active": self._active.copy(),
            "departed": departed,
            "returned": returned,
            "replaced": replaced,
            "acted": acted,
        }
        if self.render_mode is not None:
            preference = world.preferences[user] if self.render_truth and acted else None
            self._totals.append(counted)
            self._last_line = (
                step_line(self._m, k, user, counted, self._visible_choices(), preference)
                + f"  active {int(self._active.sum())}/{n}"
                + ("" if acted else "  (departed user: no-op)")
            )
        info = make_info(feedback, self._oracle(int(departed.sum())))
        info["action_mask"] = self._active.astype(np.int8)
        obs = self._obs(reported)
        return obs, float(previous - counted), False, bool(truncated), info

    def step_without_oracle(self, action: Any) -> _Step:  # type: ignore[override]
        """:meth:`step`, its oracle stripped (no fast path here)."""
        obs, reward, terminated, truncated, info = self.step(action)
        info.pop("oracle", None)
        return obs, reward, terminated, truncated, info

    def view_layout(self, plan: Any) -> None:
        """No compiled RL view path for this world: None."""
        return None

    def step_encoded(self, action: Any, view: tuple[Any, ...]) -> None:
        """No compiled step here: None, nothing stepped."""
        return None

    def render(self) -> str | np.ndarray | None:
        """Render as ``-v0`` does, from what the agent was shown (departed users: no service).

        With ``render_truth=True``, the hidden preferences and the services
        launched (``dim >= 2``) in the frame, the acquired preference in the text.
        """
        if self.render_mode == "rgb_array":
            from osfb_gym.envs.services.render import services_frame

            truth = None
            if self.render_truth and self._world is not None and self.service_dim >= 2:
                truth = (self._world.preferences, self._services[: self._m])
            groups = self._groups if self.reveal_groups and self._world is not None else None
            return services_frame(
                self._visible_choices(),
                self.n_services,
                self._reports()[0],
                self._totals,
                groups,
                truth,
            )
        return super().render()

    def _reported(self) -> np.ndarray:
        return self._reports()[0]

    # ------------------------------------------------------------------ pieces
    def _refill(self, departed: np.ndarray) -> np.ndarray:
        """Give each departed slot the next newcomer of its group; return the refilled mask."""
        assert self._pool is not None
        refilled = np.zeros(departed.size, dtype=bool)
        for slot in np.flatnonzero(departed):
            queue = self._queues[int(self._groups[slot])]
            if queue:
                self._slots[slot] = queue.pop()
                refilled[slot] = True
        if refilled.any():
            world = self._world = self._pool.take(self._slots)
            users = np.flatnonzero(refilled)
            self._minimum = world.minimum_loss()
            for s in range(self._m):
                self._table[users, s] = world.loss_at(self._services[s], users)
            self._choice = np.argmin(self._table[:, : self._m], axis=1).astype(np.int64)
            self._best = self._table[np.arange(self.n_users), self._choice]
            self._active |= refilled
        return refilled

    def _reports(self) -> tuple[np.ndarray, float]:
        """Return the reported losses (0 for departed users, or before a service) and the count."""
        if self._m == 0:
            return np.zeros(self.n_users), 0.0
        loss = self._best - self._minimum if self.report == "excess" else self._best
        reported = np.where(self._active, loss, 0.0)
        departed = self.n_users - int(self._active.sum())
        return reported, float(reported.sum()) + self.outside_loss * departed

    def _visible_choices(self) -> np.ndarray:
        choices = np.where(self._active, self._choice, self.n_services).astype(np.int64)
        if self._m == 0:
            choices[:] = self.n_services
        return choices

    def _obs(self, reported: np.ndarray | None = None) -> dict[str, Any]:
        if reported is None:
            reported = self._reports()[0]
        obs: dict[str, Any] = {
            "losses": reported.astype(np.float32),
            "choices": self._visible_choices(),
            "n_services": self._m,
            "active": self._active.astype(np.int8),
        }
        if self.reveal_groups:
            obs["groups"] = self._groups.copy()
        return obs

    def _oracle(self, departures: int) -> dict[str, Any]:
        assert self._world is not None
        active = self._active
        if self._m == 0:
            true = np.zeros(self.n_users)
        else:
            true = np.where(active, self._best, self.outside_loss)
        averages = self._group_averages
        if averages is None:
            averages = self._group_averages = GroupAverages(self._groups, self.n_groups)
        by_group = averages(true)
        retention = averages(active.astype(float))  # (NaN for an empty group)
        kept = np.bincount(self._groups, weights=active, minlength=self.n_groups)
        sums = np.bincount(
            self._groups, weights=np.where(active, true, 0.0), minlength=self.n_groups
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            by_group_active = np.where(kept > 0, sums / np.maximum(kept, 1), np.nan)
        total = float(true.sum())
        floor = float(self._minimum[active].sum()) if self._m else 0.0
        active_loss = float(true[active].sum())
        services = np.zeros(self._services.shape)
        services[: self._m] = self._services[: self._m]
        return {
            "loss": total,
            "total_loss": total,
            "excess_loss": total - floor,
            "active_loss": active_loss,
            "fairness": GroupAverages.worst(by_group),
            "group_losses": by_group,
            "group_retention": retention,
            "group_active_losses": by_group_active,
            "retention_rate": float(active.mean()),
            "departures": departures,
            "services": services,
        }


class RetentionMetrics(ServiceMetrics):
    """Episode metrics of the retention world: losses, retention overall and per group.

    The summary adds to :class:`ServiceMetrics`'s (``total_loss``: active
    users' loss plus the outside loss of the departed; ``fairness``):
    ``active_loss`` (the remaining users' loss), ``retention_rate``,
    ``retention_rate_g{g}``, ``group_loss_g{g}`` (counted) and
    ``active_loss_g{g}`` (the group's remaining users; final, per group) and
    ``departures`` (total over the episode). The curves add
    ``departures`` (per round), ``retention_rate`` and
    ``group_retention_{g}`` per round.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from agents.services import AcQUIre
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("MultiServiceChoice-Retention-v0", n_users=60, n_services=4)
    >>> trajectory = run_episode(env, AcQUIre(), seed=0)
    >>> trajectory.curves["departures"].shape, 0 <= trajectory.metrics["retention_rate"] <= 1
    ((8,), True)
    """

    def __init__(self, reference_restarts: int = 0, reference_ks: Any = ()) -> None:
        super().__init__(reference_restarts, reference_ks)
        self._departures: list[float] = []
        self._retention: list[float] = []
        self._group_retention: list[np.ndarray] = []

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Keep the round's departures and retention besides the losses."""
        super().update(action, reward, feedback, oracle)
        self._departures.append(float(oracle["departures"]))
        self._retention.append(float(oracle["retention_rate"]))
        self._group_retention.append(np.asarray(oracle["group_retention"], dtype=float))

    def curves(self) -> dict[str, np.ndarray]:
        """Per round: the losses of :class:`ServiceMetrics`, departures and retention."""
        curves = super().curves()
        curves["departures"] = np.asarray(self._departures)
        curves["retention_rate"] = np.asarray(self._retention)
        if self._group_retention:
            stacked = np.stack(self._group_retention)
            curves.update({f"group_retention_{g}": stacked[:, g] for g in range(stacked.shape[1])})
        return curves

    def get(self) -> dict[str, float]:
        """Return the episode summary."""
        summary = super().get()
        last = self.last
        if not last:
            return summary
        summary["active_loss"] = float(last["active_loss"])
        summary["retention_rate"] = float(last["retention_rate"])
        summary["departures"] = float(sum(self._departures))
        for g, value in enumerate(np.asarray(last["group_retention"], dtype=float)):
            summary[f"retention_rate_g{g}"] = float(value)
        for g, value in enumerate(np.asarray(last["group_losses"], dtype=float)):
            summary[f"group_loss_g{g}"] = float(value)
        for g, value in enumerate(np.asarray(last["group_active_losses"], dtype=float)):
            summary[f"active_loss_g{g}"] = float(value)
        return summary
