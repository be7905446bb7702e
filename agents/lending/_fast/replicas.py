"""Many cutoff agents in lockstep, one per sub-env of a lending vector env.

A paper's grid is the same few agents at many hyperparameters, each on the
same streams. Run one at a time, most of the time goes to the loop around
the learning (an env step, the runner, a decision) rather than to the
learning itself. :class:`CutoffReplicas` makes every decision of a step at
once, for all the agents, and leaves to each agent only its own learning
from its own revealed outcomes: each ``update`` is the agent's own.

The decisions are the agents' own too: the score ``mu(x . beta_) - c``
for all of them in one product, plus each agent's exploration term, drawn
from the agent's own generator in the order it would draw alone
(:class:`~agents.lending.exploration._DecayingExploration` declares its
draws), the uncertainty bonus ``bonus_scale() * width`` of an agent that has
one (Adaptive: its own scale, the widths of its shared state), or, for any
other :class:`~agents.lending.base.CutoffAgent`, by calling its own
``exploration``; an agent with its own ``act`` or ``update`` (Passive, SGD)
is simply called. Whether an agent's learning is shared with others
(:func:`shares_state`) its class declares
(:attr:`~agents.lending.base.CutoffAgent.replica_fit`).
Running an agent as a replica or alone gives the same decisions and
metrics (tested against :func:`osfb_gym.runner.run_episode`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import check_finite
from agents.lending._fast.row_log import LoggedGLMEstimator, RowLog
from agents.lending._fast.shared_rls import SharedRLS
from agents.lending.base import OUTCOME_RANGE, CutoffAgent
from agents.lending.exploration import (
    _DecayingExploration,
)
from agents.lending.glm import GLMEstimator

_BLOCK = 512  # applicants whose uniforms are drawn (and perturbations computed) at once per agent


def shares_state(agent: CutoffAgent) -> bool:
    """Whether ``agent`` (reset) can learn in :class:`~agents.lending._fast.shared_rls.SharedRLS`.

    Its class declares the hyperparameter values with which it can
    (:attr:`~agents.lending.base.CutoffAgent.replica_fit`,
    :meth:`~agents.lending.base.CutoffAgent.replica_fit_refusal`); the shared
    state itself needs the linear link's incremental fit (recursive least squares).
    """
    if agent.replica_fit_refusal() is not None:
        return False
    if agent.solver != "incremental" or agent.link_.name != "linear":
        return False
    return type(agent.model_) is GLMEstimator and agent.model_._rls


def _width_bonus(agent: CutoffAgent) -> bool:
    """Whether ``agent``'s exploration is CutoffAgent's bonus ``bonus_scale() * width``."""
    return not agent._own_exploration and _overrides(agent, "bonus_scale")


class _DrawGroup:
    """Agents of one exploration class: their alphas and pre-drawn uniforms."""

    def __init__(
        self, cls: type[_DecayingExploration], members: list[int], batch: int, block: int
    ) -> None:
        self.cls = cls
        self.members = np.array(members, dtype=np.intp)
        self.batch = batch
        self.uniforms = np.empty((len(members), block, cls.n_uniforms, batch))

    def block(self, agents: Sequence[CutoffAgent]) -> np.ndarray:
        """Return the uniforms of the next ``block`` decisions, shape (members, block, n, batch).

        Generator.random fills in order, so a block of draws equals each agent's
        successive draws of shape (n_uniforms, batch).
        """
        for row, index in enumerate(self.members):
            agents[index].rng_.random(out=self.uniforms[row])
        return self.uniforms


class CutoffReplicas:
    """Run cutoff agents in lockstep, agent ``i`` on sub-env ``i`` of a vector env.

    Parameters
    ----------
    agents
        :class:`~agents.lending.base.CutoffAgent` instances (Greedy, the
        exploration baselines, Adaptive, ...), each reset here with its
        own seed; they may be of different classes and hyperparameters.
    share
        Let the linear, incremental agents of the grid (:func:`shares_state`)
        learn in one :class:`~agents.lending._fast.shared_rls.SharedRLS`: one
        state per distinct revealed history, the revealed rows kept once
        (the same decisions, less time and memory). False: every agent
        learns on its own (the reference path).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from agents.lending import Adaptive, Greedy, Margin
    >>> from osfb_gym.runner import run_vector_episode
    >>> replicas = CutoffReplicas([Greedy(), Margin(alpha=1.0), Adaptive(rho=0.5)])
    >>> envs = gym.make_vec("OneSidedLending-v0", num_envs=3, horizon=200, lockstep=True)
    >>> [t.metrics["approval_rate"] for t in run_vector_episode(envs, replicas, seed=0)]
    [0.15, 0.365, 0.37]
    """

    def __init__(self, agents: Sequence[CutoffAgent], *, share: bool = True) -> None:
        agents = list(agents)
        if not agents:
            raise ValueError("agents must hold at least one CutoffAgent, got none")
        for index, agent in enumerate(agents):
            if not isinstance(agent, CutoffAgent):
                raise TypeError(
                    f"agents[{index}] must be a CutoffAgent (a lending agent that scores "
                    f"mu(x . beta) - c), got {type(agent).__name__}"
                )
        self.agents = agents
        self.share = share

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seeds: Sequence[int | None],
        feedback: dict[str, Any],
    ) -> None:
        """Reset agent ``i`` with ``seeds[i]`` and sub-env ``i``'s reset feedback.

        ``observation_space`` and ``action_space`` are a single sub-env's;
        ``feedback`` is the vector env's (arrays with a leading sub-env axis).
        """
        if len(seeds) != len(self.agents):
            raise ValueError(
                f"seeds must give one seed per agent ({len(self.agents)}), got {len(seeds)}"
            )
        self.shared_: SharedRLS | None = None
        self.log_: RowLog | None = None
        self._shared_list: list[int] = []
        self._logged: set[int] = set()
        self._warm_logged: list[tuple[np.ndarray, int]] = []
        for index, agent in enumerate(self.agents):
            own = _sub_env(feedback, index)
            agent.reset(observation_space, action_space, seed=seeds[index], feedback=own)
            self._share(agent, index, own, observation_space)
        self._index_shared()
        links = {agent.link_.name for agent in self.agents}
        if len(links) != 1:
            raise ValueError(f"every sub-env must share one link, got {sorted(links)}")
        self.link_ = self.agents[0].link_
        self._outcome_range = OUTCOME_RANGE[self.link_.name]
        self.t_ = 0
        self._seen: tuple[Any, np.ndarray, bool] = (None, np.empty(0), False)
        # agents with their own act (Passive, SGD) decide alone; the rest are scored at once
        self.own_act_, self.own_update_ = (
            frozenset(i for i, agent in enumerate(self.agents) if _overrides(agent, method))
            for method in ("act", "update")
        )
        scored = [i for i in range(len(self.agents)) if i not in self.own_act_]
        self.betas_ = np.zeros((len(self.agents), self.agents[0].model_.dim))
        for index in scored:
            self.betas_[index] = self.agents[index].beta_
        for index in self._shared_list:
            # a shared agent's beta_ is its row of betas_, kept up to date in place
            self.agents[index].beta_ = self.betas_[index]
        self.cutoffs_ = np.array([[agent.cutoff_] for agent in self.agents])
        batch = action_space.shape[0] if action_space.shape else 1
        by_class: dict[type[_DecayingExploration], list[int]] = {}
        self.own_exploration_: list[int] = []
        for index in scored:
            agent = self.agents[index]
            if isinstance(agent, _DecayingExploration):
                by_class.setdefault(type(agent), []).append(index)
            elif _overrides(agent, "exploration") or _overrides(agent, "bonus_scale"):
                self.own_exploration_.append(index)
        # decisions per block: about _BLOCK applicants (at least one decision)
        self._block = max(1, _BLOCK // batch)
        self.groups_ = [
            _DrawGroup(cls, members, batch, self._block) for cls, members in by_class.items()
        ]
        # every agent's perturbation of the next decisions, a block at a time (zero where
        # an agent has none): its draws and alpha / sqrt(t) do not depend on what it learns
        self._perturbations = np.zeros((len(self.agents), self._block, batch))
        self._block_start = 1  # t of the block's first decision
        self._block_filled = False
        self._shared_adaptive_agents = [self.agents[i] for i in self._shared_adaptive.tolist()]
        self._own_exploration_apart = [
            i for i in self.own_exploration_ if i not in self._shared_adaptive_set
        ]
        # shared bonus agents whose bonus, off the one-applicant path, is their own call
        # (Algorithm 2's in-batch A)
        self._own_bonus = frozenset(
            index
            for index in self._shared_adaptive.tolist()
            if batch > 1 and self.agents[index].bonus_grows_in_batch()
        )
        self._alphas = [
            np.array([[self.agents[i].alpha] for i in group.members]) for group in self.groups_
        ]

    def act(self, observations: np.ndarray) -> np.ndarray:
        """Return every agent's approvals, shape (agents, batch)."""
        x = np.asarray(observations, dtype=float)
        check_finite(x, "observations", type(self).__name__)
        # update() gets the same observations: their float64 view and whether every
        # agent sees one batch are kept for it
        same_batch = bool((x == x[0]).all())
        self._seen = (observations, x, same_batch)
        self.t_ += 1
        mu = np.asarray(self.link_.mean(np.einsum("kbd,kd->kb", x, self.betas_)), dtype=float)
        score = mu - self.cutoffs_
        if self.groups_:
            score += self._perturbation()
        widths: dict[int, np.ndarray] = {}
        same = self._shared_adaptive.size > 0 and same_batch
        own = self.own_exploration_
        if same and x.shape[1] == 1:
            # one applicant for everyone: each shared state's bonus once, in one pass
            for agent in self._shared_adaptive_agents:
                agent.t_ = self.t_
            score[self._adaptive_rows, 0] += self._shared_bonuses(x[0])
            own = self._own_exploration_apart
        for index in own:
            agent = self.agents[index]
            agent.t_ = self.t_
            if index in self._own_bonus:
                # Algorithm 2's in-batch A: the agent's own bonus, on its shared state
                score[index] += agent.exploration(x[index])
            elif self.shared_ is not None and index in self._shared_adaptive_set:
                # the bonus of a shared state is computed once for all its agents
                slot = int(self.shared_.slot[self._shared_position[index]])
                width = widths.get(slot) if same else None
                if width is None:
                    width = widths[slot] = self.shared_.widths(slot, x[index])
                score[index] += agent.bonus_scale() * width
            else:
                score[index] += agent.exploration(x[index])
        actions = (score > 0).view(np.int8)  # the comparison's 0/1 bytes, read as int8
        for index in self.own_act_:
            actions[index] = self.agents[index].act(observations[index])
        return actions

    def _perturbation(self) -> np.ndarray:
        """Every agent's exploration perturbation of decision ``t_``, shape (agents, batch).

        The exploration classes' own ``perturbation(alpha / sqrt(t), u)`` on each
        agent's own uniforms, computed for a block of decisions at once: the same
        operations on the same values as one decision at a time (``alpha / sqrt(t)``
        with ``math.sqrt(t)``; an element-wise formula). An
        agent without one gets 0.0, which leaves the sign of its score, all that
        is read of it, unchanged.
        """
        position = self.t_ - self._block_start
        if not self._block_filled or position >= self._block:
            self._block_start, position = self.t_, 0
            self._block_filled = True
            root_t = np.array([math.sqrt(t) for t in range(self.t_, self.t_ + self._block)])
            for group, alphas in zip(self.groups_, self._alphas, strict=True):
                # the group's uniforms of the block's decisions, (members, block, n, batch)
                uniforms = group.block(self.agents)
                scale = (alphas / root_t)[:, :, None]
                self._perturbations[group.members] = group.cls.perturbation(scale, uniforms)
        return self._perturbations[:, position]

    def _shared_bonuses(self, x: np.ndarray) -> np.ndarray:
        """Each shared bonus agent's ``bonus_scale() * sqrt(x^T A^{-1} x)`` for one applicant ``x``.

        The scale is each agent's own call; the products are :meth:`SharedRLS.widths`'s,
        one per distinct state (the same BLAS call on the same operands), the rest
        stacked across states.
        """
        assert self.shared_ is not None
        slots = self.shared_.slot[self._adaptive_positions]
        # a stacked matmul runs the same BLAS call per state as x @ A_inv[slot]; agents
        # of one state get the same product (at d^2 flops each, cheaper than grouping them)
        products = np.matmul(x, self.shared_.A_inv[slots])[:, 0, :]
        rows = x.repeat(len(slots), axis=0)
        widths = np.sqrt(np.maximum(np.einsum("ij,ij->i", products, rows), 0.0))
        scales = np.array([agent.bonus_scale() for agent in self._shared_adaptive_agents])
        return scales * widths

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        feedback: dict[str, np.ndarray],
    ) -> None:
        """Let each agent that saw an outcome learn from its own (and only its own)."""
        revealed = np.asarray(feedback["revealed"], dtype=bool)
        outcomes = np.asarray(feedback["y"], dtype=float)
        seen, x, same_batch = self._seen
        self._seen = (None, x, False)  # used once: the next update needs the next act
        checked = seen is observations  # the batch act() decided on: its features are finite
        if not checked:
            x = np.asarray(observations, dtype=float)
            same_batch = bool((x == x[0]).all())
        elif same_batch and self._all_shared and revealed.shape[1] == 1:
            self._learn_one_applicant(observations, x, revealed, outcomes)
            return
        # one check of every agent's revealed outcomes (the agents' learn() checks nothing)
        self.agents[0]._check_revealed(
            x[:0] if checked else x[revealed],
            outcomes[revealed],
            "observations (revealed rows)",
            "feedback['y']",
        )
        any_revealed = np.asarray(revealed.any(axis=1))
        # a batch every logging agent saw (one stream) is logged once, when first needed
        base: int | None = None
        one_stream = (self.shared_ is not None or bool(self._logged)) and same_batch
        if one_stream and (any_revealed & self._logs).any():
            assert self.log_ is not None
            base = self.log_.append(np.asarray(observations[0]))
        if self.shared_ is not None:
            self._learn_shared(observations, x, revealed, outcomes, any_revealed, base)
        apart = np.flatnonzero(any_revealed & ~self._is_shared).tolist() if self._apart else []
        for index in apart:
            if index in self.own_update_:
                continue
            # what CutoffAgent.update does with a reveal, without its per-call checks
            agent = self.agents[index]
            mask = revealed[index]
            model = agent.model_
            if isinstance(model, LoggedGLMEstimator):
                assert self.log_ is not None
                first = self.log_.append(np.asarray(observations[index])) if base is None else base
                indices = first + np.flatnonzero(mask)
                model.add_logged(x[index][mask], outcomes[index][mask], indices)
                model.fit()
                agent.beta_ = agent.decision_beta()
            else:
                agent.learn(x[index][mask], outcomes[index][mask])
            self.betas_[index] = agent.beta_
        for index in self.own_update_:
            self.agents[index].update(
                observations[index],
                actions[index],
                float(rewards[index]),
                {"revealed": revealed[index], "y": outcomes[index]},
            )

    def _learn_one_applicant(
        self, observations: np.ndarray, x: np.ndarray, revealed: np.ndarray, outcomes: np.ndarray
    ) -> None:
        """:meth:`update` of a paper's grid step: every agent shared, one applicant for all.

        What :meth:`update` does in that case (the outcomes checked, the batch logged
        once, :meth:`SharedRLS.update_row` when every reveal has one outcome), with the
        agent indices as the shared positions (agent ``i`` is shared agent ``i``).
        """
        assert self.shared_ is not None and self.log_ is not None
        agents = revealed[:, 0].nonzero()[0]
        if not agents.size:
            return
        ys = outcomes[agents, 0]  # outcomes[revealed], in the same order
        shared = self.shared_
        one = float(ys[0])
        low, high = self._outcome_range
        # the features are the ones act() checked; the outcomes are checked here (one
        # outcome for all: checking it checks them; NaN equals nothing, so goes below)
        if (ys == one).all() and low <= one <= high:
            base = self.log_.append(np.asarray(observations[0]))
            shared.update_row(agents, x[0, 0], one, base)
        else:
            self.agents[0]._check_revealed(
                x[:0, 0], ys, "observations (revealed rows)", "feedback['y']"
            )
            # (outcomes in range that differ: those of one equal (state, row) learn together)
            first = np.full(agents.size, self.log_.append(np.asarray(observations[0])))
            shared.update(agents, revealed[agents], outcomes[agents], x[agents], first)
        self.betas_[agents] = shared.beta[shared.slot[agents]]

    def _share(self, agent: CutoffAgent, index: int, feedback: dict[str, Any], space: Any) -> None:
        """Move ``agent`` (just reset) into the shared states if :func:`shares_state` allows.

        An agent that learns on its own through :meth:`CutoffAgent.learn` (a logistic or
        exact fit) keeps its revealed rows as indices into the log instead.
        """
        if not self.share:
            return
        model = agent.model_
        if self.log_ is None:
            dtype = np.float32 if space.dtype == np.float32 else np.float64
            self.log_ = RowLog(model.dim, np.dtype(dtype))
        if not shares_state(agent):
            if type(model) is GLMEstimator and not any(
                _overrides(agent, method) for method in ("update", "learn")
            ):
                self._adopt(agent, index, feedback)
            return
        if self.shared_ is None:
            self.shared_ = SharedRLS(len(self.agents), model.dim, model.link, self.log_)
        warm = feedback.get("warm_start")
        rows = None if warm is None else np.asarray(warm["X"])
        if rows is None or not len(rows):
            rows = np.empty((0, model.dim), dtype=self.log_.dtype)
        position = self.shared_.add(model, rows)
        # the agent's own copy of its rows is dropped: its state is the shared one
        agent.model_ = self.shared_.view(position)  # type: ignore[assignment]
        self._shared_list.append(index)

    def _adopt(self, agent: CutoffAgent, index: int, feedback: dict[str, Any]) -> None:
        """Swap ``agent``'s estimator for one that keeps its rows in the log (same arithmetic)."""
        assert self.log_ is not None
        warm = feedback.get("warm_start")
        rows = np.empty((0, agent.model_.dim)) if warm is None else np.asarray(warm["X"])
        start = next(
            (
                first
                for logged, first in self._warm_logged
                if logged.shape == rows.shape and np.array_equal(logged, rows)
            ),
            None,
        )
        if start is None:
            start = self.log_.append(rows)
            self._warm_logged.append((rows, start))
        agent.model_ = LoggedGLMEstimator.adopt(agent.model_, self.log_, start)
        self._logged.add(index)

    def _index_shared(self) -> None:
        """Index the shared agents (in the order they were added)."""
        shared = self._shared_list
        self._is_shared = np.zeros(len(self.agents), dtype=bool)
        self._is_shared[shared] = True
        self._apart = not self._is_shared.all()  # agents that learn on their own
        # every agent shared, agent i at position i, none with its own update
        self._all_shared = (
            not self._apart
            and shared == list(range(len(self.agents)))
            and not any(_overrides(agent, "update") for agent in self.agents)
        )
        # the agents whose rows go to the log
        self._logs = self._is_shared.copy()
        self._logs[list(self._logged)] = True
        self.shared_agents_ = np.array(shared, dtype=np.intp)
        self._shared_position = {index: row for row, index in enumerate(shared)}
        self._position_of = np.full(len(self.agents), -1, dtype=np.intp)
        self._position_of[shared] = np.arange(len(shared))
        # the shared agents whose bonus is CutoffAgent's (Adaptive): computed stacked in act()
        adaptive = [i for i in shared if _width_bonus(self.agents[i])]
        self._shared_adaptive = np.array(adaptive, dtype=np.intp)
        self._shared_adaptive_set = frozenset(adaptive)
        # their rows of the scores: a slice when they are consecutive (a paper's grid)
        consecutive = bool(adaptive) and adaptive == list(range(adaptive[0], adaptive[-1] + 1))
        self._adaptive_rows: slice | np.ndarray = (
            slice(adaptive[0], adaptive[-1] + 1) if consecutive else self._shared_adaptive
        )
        self._adaptive_positions = self._position_of[self._shared_adaptive]

    def _learn_shared(
        self,
        observations: np.ndarray,
        x: np.ndarray,
        revealed: np.ndarray,
        outcomes: np.ndarray,
        any_revealed: np.ndarray,
        base: int | None,
    ) -> None:
        """Update the shared states of the shared agents that revealed anything.

        ``base``: the log index of the step's batch if every agent saw the same one.
        """
        assert self.shared_ is not None and self.log_ is not None
        agents = self.shared_agents_[any_revealed[self.shared_agents_]]
        if not agents.size:
            return
        batches = x[agents]
        positions = self._position_of[agents]
        if base is not None:
            ys = outcomes[agents]
            if ys.shape[1] == 1 and (ys == ys[0]).all():
                # one applicant, one outcome: every agent here revealed the same row
                self.shared_.update_row(positions, batches[0, 0], float(ys[0, 0]), base)
            else:
                first = np.full(agents.size, base)
                self.shared_.update(positions, revealed[agents], ys, batches, first)
        else:
            first = np.array([self.log_.append(np.asarray(observations[i])) for i in agents])
            self.shared_.update(positions, revealed[agents], outcomes[agents], batches, first)
        # the agents' beta_ are views of these rows (set in reset)
        self.betas_[agents] = self.shared_.beta[self.shared_.slot[positions]]


def _overrides(agent: CutoffAgent, method: str) -> bool:
    """Whether ``agent``'s class replaces CutoffAgent's ``method`` with its own."""
    return getattr(type(agent), method) is not getattr(CutoffAgent, method)


def _sub_env(feedback: dict[str, Any], index: int) -> dict[str, Any]:
    """Sub-env ``index``'s part of a vector env's (nested) feedback."""
    return {
        name: _sub_env(value, index) if isinstance(value, dict) else value[index]
        for name, value in feedback.items()
    }
