"""OneSidedLending: approve applicants above a cutoff, see outcomes of approvals only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from scipy.stats import norm

from osfb_gym.core.channels import make_info
from osfb_gym.core.env import FeedbackEnv
from osfb_gym.core.links import Link, get_link
from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.seeding import check_world_seed, world_rng
from osfb_gym.core.validation import (
    check_binary_array,
    check_choice,
    check_float,
    check_int,
)

SCENARIOS = ("gaussian", "greedy_trap")
FEEDBACK_MODES = ("one_sided", "full")
DEFAULT_CUTOFF_QUANTILE = 0.7
# Features are standard normal truncated at +-10 (Assumption 2 of the paper
# wants bounded covariates; the truncation moves a probability below 1e-22).
FEATURE_BOUND = 10.0


# --------------------------------------------------------------------------- helpers
def bayes_decision(mu: np.ndarray, cutoff: float) -> np.ndarray:
    """Return the Bayes-optimal decisions ``1{mu > c}`` as ``int8``.

    Examples
    --------
    >>> bayes_decision(np.array([0.2, 0.8]), 0.5)
    array([0, 1], dtype=int8)
    """
    return (np.asarray(mu) > cutoff).astype(np.int8)


def one_sided_loss(mu: np.ndarray, cutoff: float, action: np.ndarray) -> float:
    """One-sided loss of a batch, Definition 1 of Jiang, Jiang and Pacchiano (2021).

    ``r_t = sum_i |mu_i - c| * 1{1{mu_i > c} != a_i}``: each decision that
    disagrees with the Bayes rule costs the distance of its expected
    outcome to the cutoff. Its expectation is the regret of the reward.

    Examples
    --------
    >>> round(one_sided_loss(np.array([0.2, 0.8, 0.9]), 0.5, np.array([1, 0, 1])), 6)
    0.6
    """
    mu = np.asarray(mu, dtype=float)
    wrong = bayes_decision(mu, cutoff) != np.asarray(action)
    return float(np.sum(np.abs(mu - cutoff) * wrong))


def gaussian_score_cutoff(link: Link, beta_norm: float, quantile: float) -> float:
    """Cutoff at the ``quantile`` of ``mu(x . beta*)`` when the score is N(0, beta_norm^2).

    Both synthetic scenarios draw features so that the score of an ordinary
    applicant is exactly Gaussian, so the quantile is exact, not sampled.

    Examples
    --------
    >>> round(gaussian_score_cutoff(get_link("logistic"), 2.0, 0.5), 6)
    0.5
    """
    return float(link.mean(beta_norm * norm.ppf(quantile)))


@dataclass(frozen=True)
class LendingWorld:
    """The hidden truth of a synthetic lending episode.

    Attributes
    ----------
    beta
        The true parameter ``beta*``.
    trap_direction
        The Theorem 1 vector ``v`` (greedy-trap scenario), else None.
    trap_probability
        How often an applicant is exactly ``v``.
    """

    beta: np.ndarray
    trap_direction: np.ndarray | None = None
    trap_probability: float = 0.0

    def sample_features(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` applicants' features, rounded to float32 like the observation."""
        dim = self.beta.shape[0]
        x = rng.standard_normal((n, dim))
        if self.trap_direction is not None:
            unit = self.trap_direction / np.linalg.norm(self.trap_direction)
            x -= np.outer(x @ unit, unit)
            is_v = rng.random(n) < self.trap_probability
            x[is_v] = self.trap_direction
        np.clip(x, -FEATURE_BOUND, FEATURE_BOUND, out=x)
        # the observation is float32; truth is computed from exactly what is observed
        return x.astype(np.float32).astype(np.float64)


def draw_gaussian_world(dim: int, beta_norm: float, rng: np.random.Generator) -> LendingWorld:
    """Draw a world with standard-normal features and ``beta*`` uniform on a sphere.

    Features model standardised applicant attributes; ``||beta*|| = beta_norm``
    makes the score ``x . beta*`` exactly N(0, beta_norm^2).
    """
    direction = rng.standard_normal(dim)
    return LendingWorld(beta=beta_norm * direction / np.linalg.norm(direction))


def draw_trap_world(
    dim: int,
    beta_norm: float,
    link: Link,
    cutoff: float,
    tau: float,
    trap_probability: float,
    rng: np.random.Generator,
) -> LendingWorld:
    """Draw the construction of Theorem 1 (Jiang, Jiang and Pacchiano 2021).

    With probability ``trap_probability`` an applicant is exactly ``v`` (a
    random direction of norm sqrt(dim)); every other applicant is Gaussian
    in the subspace orthogonal to ``v``. ``beta*`` has norm ``beta_norm``
    in that subspace and a component along ``v`` chosen so that
    ``mu(v . beta*) = cutoff + tau``: ``v`` is worth approving, but only
    barely, so a greedy learner whose warm start underestimates it never
    looks at ``v`` again.
    """
    if dim < 2:
        raise ValueError(f"dim must be >= 2 for scenario='greedy_trap', got {dim}")
    unit_v = rng.standard_normal(dim)
    unit_v /= np.linalg.norm(unit_v)
    direction = rng.standard_normal(dim)
    direction -= (direction @ unit_v) * unit_v
    beta_perp = beta_norm * direction / np.linalg.norm(direction)
    v = np.clip(np.sqrt(dim) * unit_v, -FEATURE_BOUND, FEATURE_BOUND)
    v = v.astype(np.float32).astype(np.float64)
    score_v = float(link.inverse(cutoff + tau))
    beta = beta_perp + score_v * v / float(v @ v)
    return LendingWorld(beta=beta, trap_direction=v, trap_probability=trap_probability)


class LendingMetrics(EpisodeMetrics):
    """Episode metrics of lending: approvals and agreement with the Bayes rule."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0
        self.approvals = 0
        self.wrongly_approved = 0
        self.wrongly_denied = 0

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one batch of decisions."""
        super().update(action, reward, feedback, oracle)
        action = np.asarray(action)
        bayes = oracle["bayes_action"]
        self.decisions += action.size
        self.approvals += int(action.sum())
        self.wrongly_approved += int(np.sum((action == 1) & (bayes == 0)))
        self.wrongly_denied += int(np.sum((action == 0) & (bayes == 1)))

    def get(self) -> dict[str, float]:
        """Return the episode summary."""
        summary = super().get()
        decisions = max(self.decisions, 1)
        summary.update(
            approval_rate=self.approvals / decisions,
            bayes_agreement=1.0 - (self.wrongly_approved + self.wrongly_denied) / decisions,
            wrongly_approved=float(self.wrongly_approved),
            wrongly_denied=float(self.wrongly_denied),
        )
        return summary


# --------------------------------------------------------------------------- env
class OneSidedLendingEnv(FeedbackEnv):
    r"""Approve applicants whose expected outcome beats a cutoff; see only approved outcomes.

    ## Description
    The generalised-linear cutoff setting of Jiang, Jiang and Pacchiano
    (2021). Each step a lender sees a batch of ``batch_size`` applicants
    with features ``x`` and decides whom to approve. An applicant's outcome
    is ``y = mu(x . beta*) + eps``: for ``link="linear"`` a repayment
    amount with Gaussian noise, for ``link="logistic"`` a repaid (1) or
    defaulted (0) loan with ``P(y = 1) = mu(x . beta*)``. Approving costs
    the cutoff ``c``, so approving is right exactly when ``mu(x . beta*) > c``.
    The outcome of a denied applicant is never seen: the learner only
    hears "one side of the story".

    ## Action Space
    ``MultiBinary(batch_size)``: entry ``i`` is 1 to approve applicant
    ``i`` of the current batch, 0 to deny. Integer, boolean or float arrays
    are accepted if every entry is exactly 0 or 1.

    ## Observation Space
    ``Box(-10, 10, (batch_size, dim), float32)``.

    | Index     | Observation                        |
    |-----------|------------------------------------|
    | ``[i, j]``| feature ``j`` of applicant ``i``   |

    Features model standardised applicant attributes: standard normal,
    truncated at +-10 (bounded covariates, Assumption 2 of the paper).

    ## Feedback
    After a step, ``info["feedback"]`` holds ``"revealed"``, a boolean
    mask over the batch just decided, and ``"y"``, the batch's outcomes
    where revealed and 0.0 elsewhere: read ``y[revealed]``. The
    placeholder is a constant, so it carries nothing about the hidden
    outcome; it is not NaN because Gymnasium's checker compares infos
    with ``==`` (NaN != NaN), and arrays keep one shape so that vector
    envs can stack the infos. With
    ``feedback="one_sided"`` (default) an outcome is revealed exactly when
    the applicant was approved; ``feedback="full"`` reveals all of them
    (the full-information comparison). At reset ``info["feedback"]`` holds
    the warm-start sample, ``warm_start`` applicants approved at random
    before the episode, with their outcomes revealed (``"X"``, ``"y"``),
    and the task's public terms, ``"cutoff"`` and ``"link"``.

    ## Rewards
    The profit of the approved applicants, ``sum_{i: a_i = 1} (y_i - c)``.
    Denied applicants give 0, whatever their hidden outcome.

    ## Info
    | key                   | channel        | content                                   |
    |-----------------------|----------------|-------------------------------------------|
    | ``feedback["y"]``     | agent          | outcomes where revealed, 0 elsewhere      |
    | ``feedback["revealed"]`` | agent       | mask of revealed outcomes (step)          |
    | ``feedback["X"]``, ``["y"]`` | agent   | warm-start sample (reset)                 |
    | ``feedback["cutoff"]``, ``["link"]`` | agent | the task's terms (reset)          |
    | ``oracle["mu"]``      | evaluator only | ``mu(x . beta*)`` of the batch            |
    | ``oracle["y"]``       | evaluator only | every outcome of the batch                |
    | ``oracle["bayes_action"]`` | evaluator only | ``1{mu > c}``                       |
    | ``oracle["loss"]``    | evaluator only | one-sided loss ``r_t`` (Definition 1)     |
    | ``oracle["beta"]``    | evaluator only | ``beta*`` (reset)                         |

    ## Starting State
    A world (``beta*`` and, for ``scenario="greedy_trap"``, the direction
    ``v``) is drawn at each reset from the reset seed, or fixed by
    ``world_seed``. The first batch is drawn from the reset seed.

    ## Episode End
    Truncation after ``horizon`` steps. Synthetic streams never terminate.

    ## Arguments
    | argument          | default      | meaning |
    |-------------------|--------------|------------------------------------------------------------|
    | ``link``          | "logistic"   | "linear" (OLS world) or "logistic" (Bernoulli outcomes) |
    | ``dim``           | 5            | number of features ``d`` |
    | ``batch_size``    | 1            | applicants per step ``N`` (one application at a time) |
    | ``horizon``       | 2000         | steps per episode ``T`` |
    | ``cutoff``        | None         | the cutoff ``c`` as a value |
    | ``cutoff_quantile`` | None (0.7) | ``c`` at this quantile of ``mu`` (the paper's 50%/70%) |
    | ``warm_start``    | 20           | size ``K`` of the labelled warm-start sample |
    | ``noise_std``     | None (1.0)   | std of the Gaussian noise, ``link="linear"`` only |
    | ``beta_norm``     | 2.0          | ``||beta*||``, so scores are N(0, 4): a fair credit model |
    | ``scenario``      | "gaussian"   | "gaussian" or "greedy_trap" (Theorem 1) |
    | ``tau``           | 0.1          | greedy trap: ``mu(v . beta*) = c + tau`` |
    | ``trap_probability`` | 0.1       | greedy trap: probability that an applicant is ``v`` |
    | ``world_seed``    | None         | fix the world across resets |
    | ``feedback``      | "one_sided"  | "one_sided" or "full" |
    | ``render_mode``   | None         | "ansi" or "rgb_array" |

    Give at most one of ``cutoff`` and ``cutoff_quantile``; with neither,
    the cutoff is the 70% quantile of ``mu`` (the lender approves the best
    30%). In the greedy trap the quantile is taken over the ordinary
    applicants, so ``v``'s place above the cutoff is set by ``tau`` alone.
    ``horizon`` lives in the env rather than in ``max_episode_steps``
    because agents (the paper's ``rho_t``) may need ``T``.

    ## References
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021.

    ## Version History
    - v0: initial version.

    ## Example
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = gym.make("OneSidedLending-v0", batch_size=10)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.action_space
    ((10, 5), MultiBinary(10))
    >>> sorted(info["feedback"])
    ['X', 'cutoff', 'link', 'y']
    >>> obs, reward, terminated, truncated, info = env.step([1] * 5 + [0] * 5)
    >>> info["feedback"]["revealed"].tolist()
    [True, True, True, True, True, False, False, False, False, False]
    >>> sorted(info["oracle"])
    ['bayes_action', 'loss', 'mu', 'y']
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012
    metrics_class = LendingMetrics

    def __init__(
        self,
        link: str = "logistic",
        dim: int = 5,
        batch_size: int = 1,
        horizon: int = 2000,
        cutoff: float | None = None,
        cutoff_quantile: float | None = None,
        warm_start: int = 20,
        noise_std: float | None = None,
        beta_norm: float = 2.0,
        scenario: str = "gaussian",
        tau: float = 0.1,
        trap_probability: float = 0.1,
        world_seed: int | None = None,
        feedback: str = "one_sided",
        render_mode: str | None = None,
    ) -> None:
        self.link = get_link(link)
        self.dim = check_int(dim, "dim", minimum=1)
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        self.horizon = check_int(horizon, "horizon", minimum=1)
        self.warm_start = check_int(warm_start, "warm_start", minimum=0)
        self.beta_norm = check_float(beta_norm, "beta_norm", low=0.0, low_inclusive=False)
        self.scenario = check_choice(scenario, "scenario", SCENARIOS)
        self.feedback_mode = check_choice(feedback, "feedback", FEEDBACK_MODES)
        self.world_seed = check_world_seed(world_seed)
        self.render_mode = check_choice(
            render_mode, "render_mode", (None, *self.metadata["render_modes"])
        )
        self.noise_std = self._check_noise_std(noise_std)
        self.cutoff = self._resolve_cutoff(cutoff, cutoff_quantile)
        self.tau = check_float(tau, "tau", low=0.0, low_inclusive=False)
        self.trap_probability = check_float(
            trap_probability,
            "trap_probability",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
        )
        if self.scenario == "greedy_trap":
            if self.dim < 2:
                raise ValueError(f"dim must be >= 2 for scenario='greedy_trap', got {self.dim}")
            if self.link.name == "logistic" and self.cutoff + self.tau >= 1.0:
                raise ValueError(
                    f"tau must keep cutoff + tau below 1 for link='logistic'; "
                    f"cutoff is {self.cutoff:.4f}, got tau={self.tau}"
                )

        self.observation_space = spaces.Box(
            -FEATURE_BOUND, FEATURE_BOUND, shape=(self.batch_size, self.dim), dtype=np.float32
        )
        self.action_space = spaces.MultiBinary(self.batch_size)

        self._world: LendingWorld | None = None
        self._x = np.empty((0, self.dim))
        self._mu = np.empty(0)
        self._y = np.empty(0)
        self._t = 0
        self._history: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]] = []
        self._last_line = ""

    # ------------------------------------------------------------------ configuration
    def _check_noise_std(self, noise_std: float | None) -> float:
        if noise_std is None:
            return 1.0 if self.link.name == "linear" else 0.0
        if self.link.name == "logistic":
            raise ValueError(
                "noise_std applies to link='linear' only; logistic outcomes are Bernoulli "
                f"draws with no extra noise, got noise_std={noise_std!r}"
            )
        return check_float(noise_std, "noise_std", low=0.0)

    def _resolve_cutoff(self, cutoff: float | None, cutoff_quantile: float | None) -> float:
        if cutoff is not None and cutoff_quantile is not None:
            raise ValueError(
                f"give at most one of cutoff and cutoff_quantile, got cutoff={cutoff!r} "
                f"and cutoff_quantile={cutoff_quantile!r}"
            )
        if cutoff is not None:
            if self.link.name == "logistic":
                return check_float(
                    cutoff,
                    "cutoff",
                    low=0.0,
                    high=1.0,
                    low_inclusive=False,
                    high_inclusive=False,
                )
            return check_float(cutoff, "cutoff")
        quantile = DEFAULT_CUTOFF_QUANTILE if cutoff_quantile is None else cutoff_quantile
        quantile = check_float(
            quantile,
            "cutoff_quantile",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
        )
        return gaussian_score_cutoff(self.link, self.beta_norm, quantile)

    # ------------------------------------------------------------------ dynamics
    def _draw_world(self, rng: np.random.Generator) -> LendingWorld:
        if self.scenario == "greedy_trap":
            return draw_trap_world(
                self.dim,
                self.beta_norm,
                self.link,
                self.cutoff,
                self.tau,
                self.trap_probability,
                rng,
            )
        return draw_gaussian_world(self.dim, self.beta_norm, rng)

    def _draw_applicants(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        world = self._world
        if world is None:
            raise RuntimeError("call reset() before step()")
        x = world.sample_features(n, self.np_random)
        mu = np.asarray(self.link.mean(x @ world.beta), dtype=float)
        if self.link.name == "logistic":
            y = (self.np_random.random(n) < mu).astype(float)
        else:
            y = mu + self.noise_std * self.np_random.standard_normal(n)
        return x, mu, y

    def _next_batch(self) -> np.ndarray:
        self._x, self._mu, self._y = self._draw_applicants(self.batch_size)
        return self._x.astype(np.float32)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw a world (unless fixed), the warm-start sample and the first batch."""
        super().reset(seed=seed)
        self._world = self._draw_world(world_rng(self.world_seed, self.np_random))
        warm_x, _, warm_y = self._draw_applicants(self.warm_start)
        obs = self._next_batch()
        self._t = 0
        self._history = []
        self._last_line = ""
        feedback = {
            "X": warm_x.astype(np.float32),
            "y": warm_y,
            "cutoff": self.cutoff,
            "link": self.link.name,
        }
        return obs, make_info(feedback, {"beta": self._world.beta.copy()})

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Decide the current batch; reveal what the feedback mode reveals."""
        if self._world is None:
            raise RuntimeError("call reset() before step()")
        action = check_binary_array(action, "action", (self.batch_size,))
        approved = action == 1
        revealed = approved.copy() if self.feedback_mode == "one_sided" else np.ones_like(approved)
        reward = float(np.sum(self._y[approved] - self.cutoff))
        loss = one_sided_loss(self._mu, self.cutoff, action)
        feedback = {"revealed": revealed, "y": np.where(revealed, self._y, 0.0)}
        oracle = {
            "mu": self._mu,
            "y": self._y,
            "bayes_action": bayes_decision(self._mu, self.cutoff),
            "loss": loss,
        }
        if self.render_mode is not None:
            self._record(action, loss)
        self._t += 1
        truncated = self._t >= self.horizon
        obs = self._next_batch()
        return obs, reward, False, truncated, make_info(feedback, oracle)

    def _override_hidden(self, action: Any, extreme: str) -> bool:
        hidden = np.asarray(action) == 0
        if self.feedback_mode == "full" or not hidden.any():
            return False
        if self.link.name == "logistic":
            value = 0.0 if extreme == "low" else 1.0
        else:
            value = -1e3 if extreme == "low" else 1e3
        self._y = np.where(hidden, value, self._y)
        return True

    # ------------------------------------------------------------------ rendering
    def _record(self, action: np.ndarray, loss: float) -> None:
        total = (self._history[-1][3] if self._history else 0.0) + loss
        self._history.append((self._x, self._mu, action, total))
        self._last_line = (
            f"t={self._t + 1:4d}  approved {int(action.sum()):3d}/{self.batch_size}  "
            f"revealed y={np.round(self._y[action == 1], 2).tolist()}  "
            f"one-sided loss {loss:.3f}  cumulative {total:.3f}"
        )

    def render(self) -> str | np.ndarray | None:
        """Render the last step as a text line or an RGB image."""
        if self.render_mode == "ansi":
            return self._last_line
        if self.render_mode == "rgb_array":
            from osfb_gym.envs._lending_render import render_rgb

            beta = None if self._world is None else self._world.beta
            return render_rgb(self._history, self.cutoff, self.link, beta)
        return None
