"""DelayedImpactLending: lending whose decisions move the groups' score distributions."""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import FEEDBACK, make_info
from osfb_gym.core.env import FeedbackEnv, episode_over
from osfb_gym.core.validation import RenderModes, check_binary_array
from osfb_gym.envs._render import check_render
from osfb_gym.envs.delayed_impact.config import (
    ARGUMENTS,
    DEFAULT_HORIZON,
    DEFAULT_SHIFT_MASS,
    FicoImpact,
    SyntheticImpact,
    impact_config,
)
from osfb_gym.envs.delayed_impact.metrics import ImpactMetrics, score_batch
from osfb_gym.envs.delayed_impact.render import Trace
from osfb_gym.envs.delayed_impact.world import (
    break_even,
    move_targets,
)

_Step = tuple[np.ndarray, float, bool, bool, dict[str, Any]]


class DelayedImpactLendingEnv(FeedbackEnv):
    r"""Lend to groups' applicants; a repayment raises the group's scores, a default lowers them.

    ## Description
    The delayed-impact setting of Liu, Dean, Rolf, Simchowitz and Hardt
    (2018), run over time as in ml-fairness-gym's lending environment
    (D'Amour et al. 2020). Applicants come from groups; each group has a
    distribution over a grid of credit scores, and a member of group ``g``
    with score ``x`` repays a loan with probability ``rho_g(x)``. Each step
    the lender sees a batch of ``batch_size`` applicants, each drawn as a
    group (by the groups' shares) and then a score (from that group's
    current distribution), and approves or denies each. An approved
    applicant repays or defaults, and the lender sees which; a denied
    applicant's outcome is never seen.

    The world reacts: each approved loan moves ``shift_mass`` of its
    group's probability from the applicant's score to the score a repayment
    (``+repay_score_change``, Liu et al.'s +75 FICO points) or a default
    (``default_score_change``, -150) leads to, so the groups' score
    distributions drift as the lender decides. A lender that approves
    where repayment is unlikely lowers a group's mean score (Liu et al.'s
    *active harm*), one that approves only likely repayers raises it, and a
    denied applicant changes nothing. Nothing about the future is in the
    reward: a lender that plans has to learn the consequence.

    Worlds (``dataset`` and ``scenario``):

    - ``scenario="two_groups"`` (default, no data needed): two groups of
      equal size on a FICO-like grid (300 to 850 in steps of 25), modelled on
      the TransRisk tables' Black and White groups (see
      :func:`~osfb_gym.envs.delayed_impact.world.synthetic_world`). It is the
      default because it needs no files, so the registered id runs (and
      its tests pass) on any machine.
    - ``dataset="fico"``: the TransRisk tables (Hardt, Price and Srebro
      2016; :func:`osfb_gym.data.load` ``("fico")``), Liu et al.'s
      experiment: ``groups`` (default ``("Black", "White")``, Liu et al.'s
      pair) with their score distributions, repayment probabilities and
      shares of the tables' totals, scores mapped to 300-850 as Liu et al.
      do (:func:`~osfb_gym.data.fico.transrisk_to_fico`).
    - ``scenario="bin_shift"``: ml-fairness-gym's ``DelayedImpactEnv``: seven
      credit clusters (scores 0 to 6), two groups of equal size, the
      repayment probabilities of ``lending_params.py``; a repayment moves
      the applicant's mass one cluster up and a default one down
      (``dynamics="bin_shift"``), and a repaid loan gains 1 and a default
      loses 1 (their lending experiment's ``interest_rate=1.0``). Two
      differences: the cluster is observed as its index (theirs is one-hot),
      and the bank's cash is not modelled (their episode also ends when it
      runs out; here at ``horizon``).

    ## Action Space
    ``MultiBinary(batch_size)``: entry ``i`` is 1 to approve applicant ``i``
    of the current batch, 0 to deny. Integer, boolean or float arrays whose
    entries are exactly 0 or 1 are accepted.

    ## Observation Space
    ``Box(low, high, (batch_size, 2), float32)``:

    | Index      | Observation                               | Min           | Max            |
    |------------|-------------------------------------------|---------------|----------------|
    | ``[i, 0]`` | applicant ``i``'s group (0, 1, ...)        | 0             | ``G - 1``      |
    | ``[i, 1]`` | applicant ``i``'s score (a grid point)     | lowest score  | highest score  |

    The score grid is in the reset's ``info["feedback"]["scores"]``.

    ## Feedback
    After a step, ``info["feedback"]`` holds ``"revealed"``, a boolean mask
    over the batch, and ``"y"``, the outcomes where revealed (1.0 repaid,
    0.0 defaulted) and 0.0 elsewhere (read ``y[revealed]``; the placeholder
    is a constant, so it carries nothing about the hidden outcome). With
    ``feedback="one_sided"`` (default) an outcome is revealed exactly when
    the applicant was approved; ``feedback="full"`` reveals every outcome
    (the full-information comparison; the dynamics are the same: only
    approved loans move scores). At reset ``info["feedback"]`` holds the
    task's public terms: ``"scores"`` (the grid, ``(B,)``), ``"n_groups"``,
    ``"loan_gain"``, ``"default_loss"`` and ``"break_even"``, the repayment
    probability above which a loan pays (``loss / (gain + loss)``, 0.8 by
    default). The score distributions and repayment probabilities are not
    given: an agent learns them from the applicants it sees and the
    outcomes revealed.

    ## Rewards
    The profit of the approved loans: ``+loan_gain`` for each repaid,
    ``-default_loss`` for each default (defaults: Liu et al.'s bank utility,
    ``u+ = 1``, ``u- = -4``: a default loses four times what a repayment
    earns, so a loan pays when ``rho > 0.8``). Denied applicants give 0,
    whatever their hidden outcome.

    ## Info
    | key                      | channel        | content                                        |
    |--------------------------|----------------|------------------------------------------------|
    | ``feedback["revealed"]`` | agent          | mask of revealed outcomes ``(N,)`` (step)      |
    | ``feedback["y"]``        | agent          | outcomes where revealed, 0 elsewhere (step)    |
    | ``feedback["scores"]``   | agent          | the score grid ``(B,)`` (reset)                 |
    | ``feedback["n_groups"]`` | agent          | the number of groups ``G`` (reset)              |
    | ``feedback["loan_gain"]``, ``["default_loss"]`` | agent | the loan's terms (reset) |
    | ``feedback["break_even"]`` | agent        | ``loss / (gain + loss)`` (reset)                |
    | ``oracle["repay_prob"]`` | evaluator only | ``rho_g(x)`` of the batch ``(N,)``              |
    | ``oracle["y"]``          | evaluator only | every outcome of the batch ``(N,)``             |
    | ``oracle["group"]``      | evaluator only | the batch's groups ``(N,)`` (for the metrics)   |
    | ``oracle["bayes_action"]`` | evaluator only | ``1{rho gain - (1 - rho) loss > 0}`` ``(N,)`` |
    | ``oracle["loss"]``       | evaluator only | one-sided loss of the step (see below)          |
    | ``oracle["mean_score"]`` | evaluator only | each group's mean score after the step ``(G,)`` |
    | ``oracle["score_change"]`` | evaluator only | the step's change of it ``(G,)``              |
    | ``oracle["pi"]``         | evaluator only | the score distributions after it ``(G, B)``   |
    | ``oracle["pi"]``, ``["rho"]``, ``["mean_score"]`` | evaluator only | the world at reset |

    The one-sided loss charges each decision that disagrees with the Bayes
    (expected-profit) decision of the current step the size of its expected
    profit, ``|rho gain - (1 - rho) loss|``, as Jiang, Jiang and Pacchiano's
    Definition 1 charges ``|mu - c|``; its sum is the expected regret of
    the profit against a lender that knows ``rho`` and is myopic. (It does
    not score the future: a lender can have a low one-sided loss and still
    harm a group's scores, which ``score_change_g`` of the metrics shows.)

    ## Hidden State
    The current batch's outcomes ``_y`` (repaid 1 or defaulted 0, for every
    applicant). Private and documented as the seam of the no-leak probe
    (``tests/osfb_gym/envs/hidden.py``), which overwrites the denied
    applicants' outcomes before a step to prove that nothing the agent sees
    depends on them.

    ## Starting State
    The world is fixed by the arguments (the synthetic grid, the tables, or
    ml-fairness-gym's clusters): every reset starts from the same
    distributions, so there is no ``world_seed``. The applicants (groups,
    scores and outcomes) are drawn from the reset seed.

    ## Episode End
    Truncation after ``horizon`` steps; the world never terminates.

    ## Arguments
    | argument            | default        | meaning |
    |---------------------|----------------|---------|
    | ``dataset``         | None           | None (synthetic) or ``"fico"`` (the TransRisk tables) |
    | ``data_home``       | None           | folder of ``fico/`` (default: ``OSFB_DATA``) |
    | ``scenario``        | "two_groups"   | ``"two_groups"`` or ``"bin_shift"`` (ml-fairness-gym) |
    | ``groups``          | None           | FICO groups (default ``["Black", "White"]``) |
    | ``batch_size``      | 1              | applicants per step ``N`` |
    | ``horizon``         | 1000           | steps per episode |
    | ``loan_gain``       | None (1.0)     | profit of a repaid loan |
    | ``default_loss``    | None (4.0)     | loss on a default (``bin_shift``: 1.0) |
    | ``repay_score_change`` | None (75)   | score change on repayment (``bin_shift``: 1 bin) |
    | ``default_score_change`` | None (-150) | score change on default (``bin_shift``: -1 bin) |
    | ``dynamics``        | None           | ``"score_change"`` (Liu et al.) or ``"bin_shift"`` |
    | ``shift_mass``      | 0.01           | probability mass one approved loan moves |
    | ``feedback``        | "one_sided"    | ``"one_sided"`` or ``"full"`` |
    | ``render_mode``     | None           | ``"ansi"`` or ``"rgb_array"`` |
    | ``render_truth``    | False          | renders also show hidden truth |
    | ``config``          | None           | a ``SyntheticImpact`` or ``FicoImpact`` instead |

    ``dynamics="score_change"`` moves the mass to the grid score nearest to
    the score plus the change, clipped to the grid's range (as Liu et al.'s
    code clips to 300-850); ``"bin_shift"`` moves it by a whole number of
    grid cells. Giving ``dynamics`` other than the world's own needs both
    score changes in its unit. ``shift_mass`` is ml-fairness-gym's
    ``cluster_shift_increment``: an approved applicant stands for 1% of
    their group, so 1,000 steps move the distributions visibly; at most
    the mass the applicant's score holds moves.

    The arguments build a frozen, checked config
    (:mod:`osfb_gym.envs.delayed_impact.config`): ``SyntheticImpact``
    without ``dataset``, ``FicoImpact`` with ``dataset="fico"``;
    ``env.config`` is it, and ``config=`` takes one made beforehand (every
    other argument then keeps its default).

    ## Rendering
    ``"ansi"`` returns a line about the last step (after a reset, the first
    applicants); ``"rgb_array"`` a
    ``(256, 640, 3)`` ``uint8`` frame: the recent applicants by score and
    group (approved filled, denied hollow, revealed defaults crossed) and
    the mean score of the applicants seen per group. The hidden outcomes,
    the one-sided loss and the groups' true mean scores appear only with
    ``render_truth=True``.

    ## References
    Lydia T. Liu, Sarah Dean, Esther Rolf, Max Simchowitz, Moritz Hardt.
    Delayed Impact of Fair Machine Learning. ICML 2018 (the model, the
    FICO experiment, the score changes and utilities; their code,
    github.com/lydiatliu/delayedimpact, for the score conversion and the
    clipping to 300-850).

    Alexander D'Amour, Hansa Srinivasan, James Atwood, Pallavi Baljekar,
    D. Sculley, Yoni Halpern. Fairness is Not Static: Deeper Understanding
    of Long Term Fairness via Simulation Studies. FAT* 2020
    (google/ml-fairness-gym: ``environments/lending.py`` and
    ``lending_params.py`` for the bin-shift world, ``experiments/lending.py``
    for its terms).

    Moritz Hardt, Eric Price, Nathan Srebro. Equality of Opportunity in
    Supervised Learning. NeurIPS 2016 (the TransRisk tables).

    Examples
    --------
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = gym.make("DelayedImpactLending-v0", batch_size=4)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.action_space, info["feedback"]["break_even"]
    ((4, 2), MultiBinary(4), 0.8)
    >>> obs, reward, terminated, truncated, info = env.step([1, 1, 0, 0])
    >>> info["feedback"]["revealed"].tolist()
    [True, True, False, False]
    >>> sorted(info["oracle"])
    ['bayes_action', 'group', 'loss', 'mean_score', 'pi', 'repay_prob', 'score_change', 'y']
    """

    metadata = {"render_modes": RenderModes(["ansi", "rgb_array"]), "render_fps": 4}  # noqa: RUF012
    metrics_class = ImpactMetrics
    #: draw one applicant by :meth:`_draw_one` (tests compare it with the batch path)
    _scalar_path = True

    def __init__(
        self,
        dataset: str | None = None,
        data_home: str | None = None,
        scenario: str = "two_groups",
        groups: list[str] | tuple[str, ...] | None = None,
        batch_size: int = 1,
        horizon: int = DEFAULT_HORIZON,
        loan_gain: float | None = None,
        default_loss: float | None = None,
        repay_score_change: float | None = None,
        default_score_change: float | None = None,
        dynamics: str | None = None,
        shift_mass: float = DEFAULT_SHIFT_MASS,
        feedback: str = "one_sided",
        render_mode: str | None = None,
        render_truth: bool = False,
        *,
        config: SyntheticImpact | FicoImpact | None = None,
    ) -> None:
        # the keyword arguments build the config (or must keep their defaults beside one)
        arguments = {name: value for name, value in locals().items() if name in ARGUMENTS}
        self.config = impact_config(config, **arguments)
        self.render_mode, self.render_truth = check_render(render_mode, render_truth)
        config = self.config
        self.batch_size = config.batch_size
        self.horizon = config.horizon
        self.feedback_mode = config.feedback
        self._initial = config.world()
        self.group_names = self._initial.group_names
        self.n_groups = self._initial.n_groups
        #: the score grid (public: the reset feedback gives it too)
        self.scores = self._initial.scores.copy()
        self.scores.flags.writeable = False
        low = np.tile([0.0, self.scores[0]], (self.batch_size, 1))
        high = np.tile([self.n_groups - 1.0, self.scores[-1]], (self.batch_size, 1))
        self.observation_space = spaces.Box(
            low.astype(np.float32), high.astype(np.float32), dtype=np.float32
        )
        self.action_space = spaces.MultiBinary(self.batch_size)
        self._action_shape = (self.batch_size,)
        self._up = move_targets(self.scores, config.repay_score_change, config.dynamics)
        self._down = move_targets(self.scores, config.default_score_change, config.dynamics)
        self._group_cdf = np.cumsum(self._initial.proportions)
        # the one-applicant path (_draw_one): Python copies, a cumulative distribution per
        # group kept until a loan moves the group's mass
        self._group_shares = self._group_cdf.tolist()
        self._score_list = self.scores.tolist()
        self._last, self._top = self.n_groups - 1, self.scores.size - 1
        self._cdf: list[np.ndarray | None] = [None] * self.n_groups
        self._rho = self._initial.rho
        self._pi = self._initial.pi.copy()
        self._group = np.zeros(self.batch_size, dtype=np.intp)
        self._bin = np.zeros(self.batch_size, dtype=np.intp)
        self._y = np.zeros(self.batch_size)
        self._t = 0
        self._started = False
        self._trace = Trace(self.n_groups)
        self._last_line = ""

    # ------------------------------------------------------------------ dynamics
    def _draw_batch(self) -> np.ndarray:
        """Draw the next applicants from the current distributions; return their observation."""
        if self.batch_size == 1 and self._scalar_path:
            return self._draw_one()
        rng = self.np_random
        n = self.batch_size
        group = np.minimum(
            np.searchsorted(self._group_cdf, rng.random(n) * self._group_cdf[-1], side="right"),
            self.n_groups - 1,
        )
        cdf = np.cumsum(self._pi[group], axis=1)
        draws = rng.random(n) * cdf[:, -1]
        bins = np.minimum((cdf <= draws[:, None]).sum(axis=1), self.scores.size - 1)
        self._y = (rng.random(n) < self._rho[group, bins]).astype(np.float64)
        self._group, self._bin = group, bins
        return np.stack([group.astype(np.float32), self.scores[bins].astype(np.float32)], axis=1)

    def _draw_one(self) -> np.ndarray:
        """:meth:`_draw_batch` of one applicant: the same draws and values, fewer NumPy calls.

        ``rng.random()`` is the value ``rng.random(1)`` holds, ``bisect`` and
        ``searchsorted(side="right")`` count the same cumulative shares below
        a draw as the batch path's comparison does, and a group's cumulative
        distribution is kept until a loan moves its mass (``np.cumsum`` of
        the same row gives the same values). Tested equal, step by step, to
        the batch path.
        """
        rng = self.np_random
        g = min(bisect_right(self._group_shares, rng.random() * self._group_shares[-1]), self._last)
        cdf = self._cdf[g]
        if cdf is None:
            cdf = self._cdf[g] = np.cumsum(self._pi[g])
        b = min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), self._top)
        repaid = rng.random() < self._rho[g, b]
        self._y = np.array([1.0 if repaid else 0.0])
        self._group, self._bin = np.array([g]), np.array([b])
        self._one = (g, b, bool(repaid))
        return np.array([[g, self._score_list[b]]], dtype=np.float32)

    def _score_one(self, approved: bool) -> tuple[np.ndarray, float, float, np.ndarray]:
        """:func:`score_batch` and :meth:`_move_mass` of one applicant, on Python scalars.

        The same IEEE operations as the batch path (tested equal to it).
        Returns the applicant's repayment probability (as an array), the
        reward, the one-sided loss and the Bayes action; moves the mass of
        an approved applicant.
        """
        gain, lose = self.config.loan_gain, self.config.default_loss
        g, b, repaid = self._one
        rho = float(self._rho[g, b])
        profit = rho * gain - (1.0 - rho) * lose
        bayes = profit > 0
        if approved:
            reward = gain if repaid else -lose
            # the applicant's move (what _move_mass does for a batch)
            target = self._up[b] if repaid else self._down[b]
            moved = min(self.config.shift_mass, self._pi[g, b])
            self._pi[g, b] -= moved
            self._pi[g, target] += moved
            self._cdf[g] = None
        else:
            reward = 0.0
        loss = abs(profit) if bayes != approved else 0.0
        return np.array([rho]), reward, loss, np.array([bayes], dtype=np.int8)

    def _move_mass(self, approved: np.ndarray) -> None:
        """Move ``shift_mass`` of each approved applicant's group from its score to its new one."""
        if not approved.any():
            return
        mass = self.config.shift_mass
        for i in np.flatnonzero(approved):
            g, b = self._group[i], self._bin[i]
            target = self._up[b] if self._y[i] == 1.0 else self._down[b]
            moved = min(mass, self._pi[g, b])
            self._pi[g, b] -= moved
            self._pi[g, target] += moved
            self._cdf[g] = None

    def _means(self) -> np.ndarray:
        return self._pi @ self.scores

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Restore the initial distributions and draw the first batch."""
        super().reset(seed=seed, options=options)
        self._pi = self._initial.pi.copy()
        self._cdf = [None] * self.n_groups
        self._t = 0
        self._started = True
        self._trace = Trace(self.n_groups)
        obs = self._draw_batch()
        applicants = np.round(obs.astype(float), 2).tolist()
        self._last_line = (
            f"t=   0  reset: {len(applicants)} applicant(s) to decide, "
            f"x=(group, score) {applicants}"
        )
        config = self.config
        feedback = {
            "scores": self.scores.copy(),
            "n_groups": self.n_groups,
            "loan_gain": config.loan_gain,
            "default_loss": config.default_loss,
            "break_even": break_even(config.loan_gain, config.default_loss),
        }
        oracle = {"pi": self._pi.copy(), "rho": self._rho.copy(), "mean_score": self._means()}
        return obs, make_info(feedback, oracle)

    def step(self, action: Any) -> _Step:
        """Decide the batch; reveal the approved outcomes; move the groups' distributions."""
        return self._step(action, True)

    def step_without_oracle(self, action: Any) -> _Step:
        """:meth:`step` with no oracle built (a subclass's own ``step`` is kept)."""
        if type(self).step is not DelayedImpactLendingEnv.step:
            return super().step_without_oracle(action)
        return self._step(action, False)

    def _step(self, action: Any, with_oracle: bool) -> _Step:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._t >= self.horizon:
            raise RuntimeError(episode_over(self._t, False))
        if (
            type(action) is np.ndarray
            and action.shape == self._action_shape
            and action.dtype.kind in "biuf"
            and ((action == 0) | (action == 1)).all()
        ):
            decisions = action.astype(np.int8)
        else:
            decisions = check_binary_array(action, "action", self._action_shape)
        approved = decisions == 1
        config = self.config
        group, bins, y = self._group, self._bin, self._y
        before = self._means() if with_oracle or self.render_mode is not None else None
        if self.batch_size == 1 and self._scalar_path:
            rho, reward, loss, bayes = self._score_one(bool(approved[0]))  # moves the mass too
        else:
            rho = self._rho[group, bins]
            reward, loss, bayes = score_batch(
                rho, y, approved, config.loan_gain, config.default_loss
            )
            self._move_mass(approved)
        revealed = approved.copy() if self.feedback_mode == "one_sided" else np.ones_like(approved)
        feedback = {"revealed": revealed, "y": np.where(revealed, y, 0.0)}
        after = self._means() if before is not None else None
        if self.render_mode is not None:
            self._last_line = self._trace.add(
                self._t + 1,
                (group, self.scores[bins], y),
                decisions,
                revealed,
                reward,
                loss,
                after if self.render_truth else None,
            )
        self._t += 1
        truncated = self._t >= self.horizon
        obs = self._draw_batch()
        if not with_oracle:
            return obs, reward, False, truncated, {FEEDBACK: feedback}
        assert before is not None and after is not None
        oracle = {
            "repay_prob": rho,
            "y": y,
            "group": group,
            "bayes_action": bayes,
            "loss": loss,
            "mean_score": after,
            "score_change": after - before,
            "pi": self._pi.copy(),
        }
        return obs, reward, False, truncated, make_info(feedback, oracle)

    # ------------------------------------------------------------------ rendering
    def render(self) -> str | np.ndarray | None:
        """Render the last step as a text line or the recent ones as an RGB image.

        What the agent was shown; the hidden outcomes, the one-sided loss and
        the groups' true mean scores only with ``render_truth=True``.
        """
        if self.render_mode == "ansi":
            return self._last_line
        if self.render_mode == "rgb_array":
            from osfb_gym.envs.delayed_impact.render import render_rgb

            return render_rgb(self._trace, self.render_truth)
        return None
