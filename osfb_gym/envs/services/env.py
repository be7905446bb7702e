"""MultiServiceChoice: acquire users' preferences to place services; users pick their best one."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import FEEDBACK, make_info
from osfb_gym.core.env import FeedbackEnv
from osfb_gym.core.seeding import world_rng
from osfb_gym.core.validation import (
    RenderModes,
)
from osfb_gym.envs._render import RENDER_MODES, check_render
from osfb_gym.envs.services._fast.kernels import report, settle
from osfb_gym.envs.services.config import (
    ARGUMENTS,
    DATA_ONLY,
    LOSS_BOUND,
    SYNTHETIC_ONLY,
    DataServices,
    SyntheticServices,
    check_n_services,
    services_config,
)
from osfb_gym.envs.services.metrics import ServiceMetrics, check_user
from osfb_gym.envs.services.render import reset_line, step_line
from osfb_gym.envs.services.world import (
    GroupAverages,
    Population,
    learning_dynamics,
)

__all__ = ["MultiServiceChoiceEnv", "ServiceMetrics"]
# (the observation: a dict; step_encoded's, the RL plain view's vector)
_Step = tuple[Any, float, bool, bool, dict[str, Any]]

# the family's pieces live by concern: world (losses, choice, dynamics),
# populations (synthetic and data worlds), options (arguments), metrics and
# reference (the evaluator's), render


class MultiServiceChoiceEnv(FeedbackEnv):
    r"""Place services at acquired users' preferences; each user takes its best service.

    ## Description
    The setting of "Initializing Services in Interactive ML Systems for
    Diverse Users" (AcQUIre). ``n`` users (or subpopulations) have hidden
    preferences ``phi_i``, hidden losses ``f_i(theta) >= 0`` minimised only
    at ``phi_i`` (family ``loss``) and demographic groups. Each step the
    provider acquires one user's preference (a survey, an incentive) and
    launches a service there; then every user takes the service with the
    lowest loss for them and reports that loss (bandit feedback: the loss
    at the chosen service only). After ``n_services`` services the episode
    ends, optionally after ``dynamics_rounds`` rounds of learning dynamics
    (users re-choose, each service refits to minimise its users' total
    loss), whose effect is scored in the last reward.

    ## Action Space
    ``Discrete(n)``: the user whose preference is acquired. Acquiring a
    user twice adds a duplicate service (allowed, useless).

    ## Observation Space
    A flat ``Dict`` (stable-baselines3's ``MultiInputPolicy`` takes it):

    | key            | space                          | content                               |
    |----------------|--------------------------------|---------------------------------------|
    | ``losses``     | ``Box(0, F, (n,), float32)``   | each user's loss at its chosen service |
    | ``choices``    | ``MultiDiscrete([k + 1] * n)`` | its chosen service; ``k``: none yet   |
    | ``n_services`` | ``Discrete(k + 1)``            | services placed so far                |
    | ``groups``     | ``MultiDiscrete([G] * n)``     | group ids (with ``reveal_groups``)    |

    ``F`` is float32's largest value.
    Before the first service the losses read 0 and every choice reads ``k``.

    ## Feedback
    ``info["feedback"]`` after a step: ``"losses"`` (float64, the same
    reported losses as the observation), ``"choices"``, and ``"revealed"``,
    the mask of the user whose preference was acquired this step. The
    acquired preference itself is held by the provider's new service, not
    reported to the agent: the agents of the paper never need it, and
    leaving it out makes the observation a function of reported losses and
    choices alone. At reset: ``"n_users"``, ``"n_services"`` and, with
    ``reveal_groups``, ``"groups"``.

    ## Rewards
    The decrease of the total reported loss, the loss before any service
    counted as 0: the first reward is ``-L(Theta_1)``, then
    ``L(Theta_{t-1}) - L(Theta_t)``, so the return is minus the final total
    loss (after the learning dynamics, when they run).

    ## Info
    | key                                   | channel   | content                        |
    |---------------------------------------|-----------|--------------------------------|
    | ``feedback["losses"]``, ``["choices"]`` | agent   | reported losses, choices (step) |
    | ``feedback["revealed"]``              | agent     | mask of the acquired user (step) |
    | ``feedback["groups"]``                | agent     | group ids, ``reveal_groups`` (reset) |
    | ``oracle["loss"]``, ``["total_loss"]`` | evaluator | ``L(Theta_t)`` after the step  |
    | ``oracle["excess_loss"]``             | evaluator | ``L`` minus every user's own minimum |
    | ``oracle["fairness"]``                | evaluator | max group average loss, eq. (3) |
    | ``oracle["group_losses"]``            | evaluator | average loss per group         |
    | ``oracle["services"]``                | evaluator | ``(k, d)``: services; rows >= t 0.0 |
    | ``oracle["loss_before_dynamics"]``    | evaluator | last step                      |
    | ``oracle["loss_after_dynamics"]``     | evaluator | last step                      |
    | ``oracle["world"]``                   | evaluator | last step: the hidden population |
    | ``oracle["preferences"]``, ``["groups"]`` | evaluator | the hidden world (reset)   |

    The env computes no reference optimum: its metrics do
    (:class:`~osfb_gym.envs.services.ServiceMetrics`), only when asked
    (``reference_restarts > 0``, the default 10; ``reference_ks``), from
    the world of the last step's oracle: ``reference_loss`` and
    ``approximation_ratio``, the best total loss Lloyd-style alternating
    minimisation finds from ``reference_restarts`` seeded restarts (an
    upper bound on the optimum, so the ratio is a lower bound on the true
    one). Stepping the env outside the runner (RL training) never solves it.

    ## Hidden State
    The world ``_world`` (preferences, loss geometries, groups) and the
    services placed ``_services`` (the retention world adds its newcomers,
    ``_pool``): private, the seam of the no-leak probe
    (``tests/osfb_gym/envs/hidden.py``). Nothing the agent sees depends on
    the hidden preferences except through reported losses: the probe
    rotates the whole hidden world, preferences, services and loss
    geometries alike (``phi -> Q phi``, ``M -> Q M Q^T``), which keeps every
    loss at every service and changes every preference, so the no-leak
    test proves that no preference coordinate reaches the agent
    (``tests/osfb_gym/envs/test_services.py`` adds that moving one
    unacquired user changes that user's entries only).

    ## Starting State
    No service. The world (population) is drawn at each reset from the
    reset seed, or fixed by ``world_seed``; the census population is fixed
    by its data, its cells listed in an order drawn from the reset seed.
    The episode has no other randomness: with the world
    fixed, the same actions give the same trajectory whatever the seed.

    ## Episode End
    Terminates after ``n_services`` steps.

    ## Arguments
    | argument             | default     | meaning |
    |----------------------|-------------|---------------------------------------------------------|
    | ``n_users``          | None (500)  | users (subpopulations for "linear"); census: its cells |
    | ``n_services``       | 10          | ``k``, services per episode, ``1 <= k <= n`` |
    | ``dim``              | None (2)    | preference dimension; census: SVD components (10) |
    | ``loss``             | "squared"   | "squared", "mahalanobis", "huber", "cosine" (clusters) |
    | ``population``       | "clusters"  | "clusters", "linear" (Sec. 4), "census", "movielens" |
    | ``n_clusters``       | None (10)   | preference clusters (synthetic) |
    | ``n_groups``         | None (2)    | demographic groups (synthetic) |
    | ``group_correlation`` | 0.5        | chance a user's group is its cluster's (synthetic) |
    | ``outlier_fraction`` | 0.0         | share of loners far from every cluster (clusters) |
    | ``reveal_groups``    | True        | group ids in the observation (public demographics) |
    | ``dynamics_rounds``  | 0           | learning-dynamics rounds after the last service |
    | ``samples_per_user`` | 50          | samples of each "linear" subpopulation (> dim) |
    | ``dataset``          | None        | census: "adult"; movielens: "movielens" (defaults) |
    | ``data_home``        | None        | census, movielens: folder of the data files |
    | ``world_seed``       | None        | fix the synthetic world across resets |
    | ``reference_restarts`` | 10        | restarts of the metrics' reference solver; 0: none |
    | ``reference_ks``     | None        | the ks of the metrics' reference (None: ``n_services``) |
    | ``report``           | "loss"      | users report their "loss" or their "excess" (Eq. 4) |
    | ``census_groups``    | "sex_race"  | census groups: "sex_race" (10), "sex" or "race" |
    | ``render_mode``      | None        | "ansi" or "rgb_array" |
    | ``render_truth``     | False       | renders also show hidden preferences and services |
    | ``config``           | None        | a ``SyntheticServices`` or ``DataServices`` instead |

    The arguments build a frozen, checked config
    (:mod:`osfb_gym.envs.services.config`): ``SyntheticServices`` for the
    drawn populations ("clusters", "linear"), ``DataServices`` for those
    fixed by data ("census", "movielens"), whose docstrings say what each
    population is; ``env.config`` is it, and ``config=`` takes one made
    beforehand (every other argument then keeps its default).
    ``report="excess"`` makes every user report its loss minus its own
    minimum ``f_i(phi_i)`` (0 for the synthetic clusters), the "excess
    error" of the paper's Eq. 4; users still choose by their loss, and the
    oracle's ``total_loss`` and ``excess_loss`` are unchanged.

    Groups are revealed by default, as demographics a provider records;
    the paper's AcQUIre ignores them, Fair AcQUIre needs them. With
    ``reveal_groups=False`` the reset observation carries nothing that
    varies with the seed (no service, no group), as in the paper.

    The feedback is always the paper's bandit feedback
    (``feedback_mode = "one_sided"``): there is no full-information mode.

    ## Rendering
    ``render_mode="ansi"`` returns a line about the last step (right after
    a reset: what the agent is shown first, the users to serve),
    ``"rgb_array"`` a ``(256, 640, 3)`` ``uint8`` frame (matplotlib, Agg).
    The frame shows each user's reported loss against the service it chose
    (coloured by group when groups are revealed) and the total loss after
    each step. A render shows what the agent was shown; the hidden
    preferences (and the services placed among them, for ``dim >= 2``) and
    the acquired preference appear only with ``render_truth=True``, the
    argument every family uses for it (fixed when the env is made:
    ``env.render_truth`` is read-only).

    ## Time Limit and Vector Envs
    An episode lasts ``n_services`` steps: ``horizon`` and
    ``env.spec.max_episode_steps`` report it, so
    ``gym.wrappers.TimeAwareObservation(gym.make(id))`` works with no
    ``TimeLimit`` added. Every info value has a shape fixed by the
    arguments, so infos stack in ``gym.make_vec`` (sync or async) and
    SB3's vector envs.

    ## References
    Bose, Curmei, Jiang, Morgenstern, Dean, Ratliff, Fazel. "Initializing
    Services in Interactive ML Systems for Diverse Users" (AcQUIre),
    NeurIPS 2024, arXiv:2312.11846: Algorithms 1 and 2, Sections 4 and 5.

    Examples
    --------
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = gym.make("MultiServiceChoice-v0", n_users=50, n_services=3)
    >>> obs, info = env.reset(seed=0)
    >>> sorted(obs), env.action_space
    (['choices', 'groups', 'losses', 'n_services'], Discrete(50))
    >>> obs["losses"].sum(), obs["n_services"]
    (np.float32(0.0), 0)
    >>> obs, reward, terminated, truncated, info = env.step(7)
    >>> bool(obs["losses"][7] == 0), set(obs["choices"].tolist()), terminated
    (True, {0}, False)
    >>> round(reward, 6) == round(-float(info["feedback"]["losses"].sum()), 6)
    True
    """

    metadata = {"render_modes": RenderModes(RENDER_MODES), "render_fps": 4}  # noqa: RUF012
    metrics_class = ServiceMetrics
    feedback_mode = "one_sided"

    def __init__(
        self,
        n_users: int | None = None,
        n_services: int = 10,
        dim: int | None = None,
        loss: str = "squared",
        population: str = "clusters",
        n_clusters: int | None = None,
        n_groups: int | None = None,
        group_correlation: float = 0.5,
        outlier_fraction: float = 0.0,
        reveal_groups: bool = True,
        dynamics_rounds: int = 0,
        samples_per_user: int = 50,
        dataset: str | None = None,
        data_home: str | None = None,
        world_seed: int | None = None,
        reference_restarts: int = 10,
        reference_ks: Sequence[int] | None = None,
        report: str = "loss",
        census_groups: str = "sex_race",
        render_mode: str | None = None,
        render_truth: bool = False,
        *,
        config: SyntheticServices | DataServices | None = None,
    ) -> None:
        # the keyword arguments build the config (or must keep their defaults beside one)
        arguments = {name: value for name, value in locals().items() if name in ARGUMENTS}
        self.config = self._population = config = services_config(config, **arguments)
        self.render_mode, self.render_truth = check_render(render_mode, render_truth)
        self.population, self.report = config.population, config.report
        self.reveal_groups, self.dynamics_rounds = config.reveal_groups, config.dynamics_rounds
        self.reference_restarts = config.reference_restarts
        self.n_services, self.dim, self.service_dim = (
            config.n_services,
            int(config.dim),  # type: ignore[arg-type]  # resolved by the config
            config.service_dim,
        )
        if isinstance(config, DataServices):
            self._set_data_population(config)
        else:
            self._set_synthetic_population(config)
        #: steps per episode: one service a step (``spec.max_episode_steps``)
        self.horizon = self.n_services
        self.reference_ks: tuple[int, ...] = tuple(config.reference_ks or ())
        #: the runner's metrics for this env: they ask for the reference when configured to
        self.metrics_class = functools.partial(  # type: ignore[assignment,misc]
            ServiceMetrics,
            reference_restarts=self.reference_restarts,
            reference_ks=self.reference_ks,
        )
        n, k = self.n_users, self.n_services
        observation = {
            "losses": spaces.Box(0.0, LOSS_BOUND, shape=(n,), dtype=np.float32),
            "choices": spaces.MultiDiscrete(np.full(n, k + 1)),
            "n_services": spaces.Discrete(k + 1),
        }
        if self.reveal_groups:
            observation["groups"] = spaces.MultiDiscrete(np.full(n, self.n_groups))
        self.observation_space = spaces.Dict(observation)
        self.action_space = spaces.Discrete(n)
        self._world: Population | None = None
        self._seeded_world: Population | None = None  # the world world_seed fixes, once drawn
        self._services = np.empty((0, self.service_dim))
        self._best = np.zeros(n)
        self._choice = np.full(n, k, dtype=np.int64)
        self._t = 0
        self._floor = 0.0
        self._reported_total = 0.0
        self._minimum = np.zeros(n)  # each user's own minimum f_i(phi_i)
        self._totals: list[float] = []  # the total reported loss after each step (renders)
        self._last_line = ""

    def _set_synthetic_population(self, config: SyntheticServices) -> None:
        """Set the terms of a drawn population (the config checked them all)."""
        self._fixed: Population | None = None
        self.dataset: str | None = None
        self.data_home: str | None = None
        self.census_groups = DATA_ONLY["census_groups"]
        self.loss, self.world_seed = config.loss, config.world_seed
        self.group_correlation = config.group_correlation
        self.outlier_fraction = config.outlier_fraction
        self.samples_per_user = config.samples_per_user
        self.n_users, self.n_groups = config.n_users, config.n_groups
        self.n_clusters: int | None = config.n_clusters

    def _set_data_population(self, config: DataServices) -> None:
        """Read the data: the population they fix, its users and groups."""
        self._fixed = config.load()
        self.dataset, self.data_home = config.dataset, config.data_home
        self.census_groups = config.census_groups
        self.loss, self.world_seed = SYNTHETIC_ONLY["loss"], None
        self.group_correlation = SYNTHETIC_ONLY["group_correlation"]
        self.outlier_fraction = SYNTHETIC_ONLY["outlier_fraction"]
        self.samples_per_user = SYNTHETIC_ONLY["samples_per_user"]
        self.n_users, self.n_groups, self.n_clusters = self._fixed.n, self._fixed.n_groups, None
        check_n_services(self.n_services, self.n_users)

    @property
    def group_names(self) -> tuple[str, ...] | None:
        """Names of the group ids (census: its sex / race labels); None for synthetic groups.

        Public metadata, like the group ids it names: it depends on the
        arguments alone, never on a hidden world.
        """
        return None if self._fixed is None else self._fixed.group_names

    # ------------------------------------------------------------------ dynamics
    def _draw_world(self, rng: np.random.Generator) -> Population:
        if self._fixed is not None:
            # the census cells are fixed by the data; their order (the action
            # indices) is drawn per reset, as a dataset's stream order is
            return self._fixed.take(self.np_random.permutation(self._fixed.n))
        assert isinstance(self._population, SyntheticServices)
        return self._population.draw(rng, self.n_users)  # (the retention world may draw more)

    def _observation(
        self, losses: np.ndarray | None = None, choices: np.ndarray | None = None
    ) -> dict[str, Any]:
        # losses: the reported losses as a new float32 array (a step has made them)
        obs: dict[str, Any] = {
            "losses": self._reported().astype(np.float32) if losses is None else losses,
            "choices": self._choice.copy() if choices is None else choices,
            "n_services": self._t,
        }
        if self.reveal_groups:
            # a new copy each time, constant as it is: Gymnasium's checker (and any user
            # who keeps observations) wants no object shared between two calls
            obs["groups"] = self._groups.copy()
        return obs

    @functools.cached_property
    def _blank(self) -> tuple[np.ndarray, np.ndarray]:
        """A reset's services (``nan``) and choices (``k``: none yet), read-only, made once."""
        services = np.full((self.n_services, self.service_dim), np.nan)
        choices = np.full(self.n_users, self.n_services, dtype=np.int64)
        services.setflags(write=False)
        choices.setflags(write=False)
        return services, choices

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Draw a world (unless fixed); no service yet."""
        super().reset(seed=seed, options=options)
        if self._fixed is None and self.world_seed is not None:
            # a synthetic world fixed by world_seed: drawn from world_seed alone (not
            # from np_random), so the first draw is every reset's; kept, with the
            # constants its loss kernels compute on first use
            if self._seeded_world is None:
                self._seeded_world = self._draw_world(world_rng(self.world_seed, self.np_random))
            self._world = self._seeded_world
        else:
            self._world = self._draw_world(world_rng(self.world_seed, self.np_random))
        services, choices = self._blank  # (copies of arrays made once: one call each)
        self._services = services.copy()
        self._best = np.zeros(self.n_users)
        self._choice = choices.copy()
        self._t = 0
        self._reported_total = 0.0
        self._totals = []
        self._last_line = ""
        self._minimum = self._world.minimum_loss()
        # the oracle's group averages, made on the first step that computes an oracle
        self._group_averages: GroupAverages | None = None
        # the oracle's excess loss subtracts it; 0.0 without offsets
        self._floor = 0.0 if self._world.offsets is None else float(self._minimum.sum())
        self._groups = self._world.groups
        feedback: dict[str, Any] = {"n_users": self.n_users, "n_services": self.n_services}
        if self.reveal_groups:
            feedback["groups"] = self._world.groups.copy()
        oracle = {
            "preferences": self._world.preferences.copy(),
            "groups": self._world.groups.copy(),
        }
        if self.render_mode is not None:
            groups = self.n_groups if self.reveal_groups else None
            self._last_line = reset_line(self.n_users, self.n_services, groups)
        return self._observation(), make_info(feedback, oracle)

    def step(self, action: Any) -> _Step:
        """Acquire user ``action``, place a service there, let every user choose."""
        return self._step(action, True)

    def step_without_oracle(self, action: Any) -> _Step:
        """:meth:`step` with no oracle computed (a subclass's own ``step`` is kept)."""
        if type(self).step is not MultiServiceChoiceEnv.step:
            return super().step_without_oracle(action)
        return self._step(action, False)

    def view_layout(self, plan: Any) -> tuple[Any, ...] | None:
        """Return where an RL plain view puts this env's observation, for :meth:`step_encoded`.

        ``plan`` is a :class:`osfb_gym.wrappers._fast.writers.DictPlan` of this
        env's observation space (which entries are squashed, coded, counted,
        where). Returns ``(size, layout, count)``: the vector's size, where
        the losses, choices and groups go (with the codes' tables and
        divisors) and where and how the count of services is coded; None if
        the plan is not this env's observation (its keys, sizes and kinds)
        or a subclass overrides :meth:`step`.
        """
        if type(self).step is not MultiServiceChoiceEnv.step:
            return None
        n = self.n_users
        squashed = {key: (at, shape) for key, at, shape in plan.squashed}
        coded = {key: (at, shape, table, divisor) for key, at, shape, table, divisor in plan.coded}
        counted = {key: (at, start, scale) for key, at, start, scale in plan.discrete}
        groups = ["groups"] if self.reveal_groups else []
        if (
            set(squashed) != {"losses"}
            or set(coded) != {"choices", *groups}
            or set(counted) != {"n_services"}
            or any(shape != (n,) for _, shape in squashed.values())
            or any(shape != (n,) for _, shape, _, _ in coded.values())
        ):
            return None
        losses_at = squashed["losses"][0]
        choices_at, _, choice_table, choice_divisor = coded["choices"]
        groups_at, group_table, group_divisor = -1, choice_table, 1.0
        if self.reveal_groups:
            groups_at, _, group_table, group_divisor = coded["groups"]
        layout = (
            losses_at,
            choice_table,
            choice_divisor,
            choices_at,
            group_table,
            group_divisor,
            groups_at,
            counted["n_services"][0],
        )
        return plan.size, layout, counted["n_services"]

    def step_encoded(self, action: Any, view: tuple[Any, ...]) -> _Step | None:
        """:meth:`step_without_oracle` with the observation as an RL plain view's vector.

        ``view`` from :meth:`view_layout`. The first item returned is the
        ``float32`` vector that the view's writer would make of
        :meth:`step_without_oracle`'s observation (the same bits, tested),
        written in the step's own compiled loop; the rest is
        :meth:`step_without_oracle`'s. None, with nothing stepped, where the
        step has no such loop (the NumPy path; the last step when learning
        dynamics run): step with :meth:`step_without_oracle` then.
        """
        world = self._world
        if (
            world is None
            or world._settle is settle
            or (self.dynamics_rounds > 0 and self._t + 1 >= self.n_services)
        ):
            return None
        return self._step(action, False, view)

    def _step(self, action: Any, with_oracle: bool, view: tuple[Any, ...] | None = None) -> _Step:
        world = self._world
        if world is None:
            raise RuntimeError("call reset() before step()")
        t = self._t
        if t >= self.n_services:
            raise RuntimeError("all n_services are placed; call reset() for a new episode")
        user = check_user(action, self.n_users)
        # the last step's reported total (0.0 before the first service): the same sum
        previous = self._reported_total
        excess = self.report == "excess"
        # the service at the user's preference, the losses there, each user's best
        # service, what users report, the totals: one compiled call where numba is
        # loaded, else NumPy's lines
        state = (world, user, self._best, self._choice, t, self._minimum, excess, self._services)
        if view is None:
            reported, losses32, choices, revealed, total, reported_total = world._settle(*state)
        else:  # (step_encoded) the view's vector in place of the float32 losses
            reported, vector, choices, revealed, total, reported_total = world._settle(*state, view)
        self._t = t = t + 1
        terminated = t >= self.n_services
        finish = None
        if terminated:
            finish = self._finish(world, with_oracle)
            if self.dynamics_rounds > 0:
                # the dynamics changed the choices and losses: they are reported after them
                reported, losses32, choices, total, reported_total = report(
                    self._best, self._choice, self._minimum, excess
                )
        self._reported_total = reported_total
        # one read-only copy of the choices for the observation and the feedback
        choices.setflags(write=False)
        feedback = {"losses": reported, "choices": choices, "revealed": revealed}
        if self.render_mode is not None:
            self._record(user, reported_total)
        if view is not None:  # (n_services written in the loop, as the view's writer codes it)
            return vector, previous - reported_total, terminated, False, {FEEDBACK: feedback}
        obs = self._observation(losses32, choices)
        if not with_oracle:
            return obs, previous - reported_total, terminated, False, {FEEDBACK: feedback}
        averages = self._group_averages
        if averages is None:
            averages = self._group_averages = GroupAverages(world.groups, world.n_groups)
        by_group = averages(self._best)
        services = np.zeros(self._services.shape)  # rows not placed yet read 0.0
        services[:t] = self._services[:t]
        oracle: dict[str, Any] = {} if finish is None else finish
        oracle.update(
            loss=total,
            total_loss=total,
            excess_loss=total - self._floor,
            fairness=GroupAverages.worst(by_group),  # eq. (3)
            group_losses=by_group,
            services=services,
        )
        return obs, previous - reported_total, terminated, False, make_info(feedback, oracle)

    def _reported(self) -> np.ndarray:
        """Return what users report: their loss, or (``report="excess"``) its excess."""
        if self.report == "excess" and self._t > 0:
            return self._best - self._minimum
        return self._best

    def _finish(self, world: Population, with_oracle: bool = True) -> dict[str, Any]:
        """Run the learning dynamics after the last service; hand the world to the metrics."""
        out: dict[str, Any] = {}
        if with_oracle:
            out["loss_before_dynamics"] = float(self._best.sum())
        if self.dynamics_rounds > 0:
            services, choice, losses = learning_dynamics(
                world, self._services, self.dynamics_rounds
            )
            self._services, self._choice, self._best = services, choice.astype(np.int64), losses
        if not with_oracle:
            return out
        out["loss_after_dynamics"] = float(self._best.sum())
        # the evaluator's reference solver reads it (ServiceMetrics), never the env
        out["world"] = world
        return out

    # ------------------------------------------------------------------ rendering
    def _record(self, user: int, total: float) -> None:
        self._totals.append(total)
        assert self._world is not None
        preference = self._world.preferences[user] if self.render_truth else None
        self._last_line = step_line(self._t, self.n_services, user, total, self._choice, preference)

    def render(self) -> str | np.ndarray | None:
        """Render the last step as a text line, or the users and services as an RGB image.

        What the agent was shown: the acquired user, each user's reported
        loss and chosen service (and group, with ``reveal_groups``), the
        total loss over the steps. With ``render_truth=True`` and
        preferences of two or more dimensions, the users' hidden
        preferences and the services in preference space (first two
        coordinates) instead, and the acquired preference in the text.
        """
        if self.render_mode == "ansi":
            return self._last_line
        if self.render_mode == "rgb_array":
            from osfb_gym.envs.services.render import services_frame

            world, truth = self._world, None
            if self.render_truth and world is not None and self.service_dim >= 2:
                truth = (world.preferences, self._services[: self._t])
            groups = world.groups if self.reveal_groups and world else None
            return services_frame(
                self._choice, self.n_services, self._reported(), self._totals, groups, truth
            )
        return None
