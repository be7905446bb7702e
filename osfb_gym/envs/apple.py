"""AppleTasting: predict positive to taste an example and see its label; reject and see nothing."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
from gymnasium import spaces
from scipy.stats import norm

from osfb_gym.core.channels import make_info
from osfb_gym.core.env import FeedbackEnv
from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.core.seeding import check_world_seed, world_rng
from osfb_gym.core.validation import check_choice, check_float, check_int

SCENARIOS = ("separable", "minority", "gappy", "striped")
ORDERS = ("random", "adversarial")
FEEDBACK_MODES = ("one_sided", "full")
DEFAULT_DIM = 20  # synthetic worlds; a tabular dataset has its own
DEFAULT_TEXT_DIM = 4096  # hashed character 4-grams of a text dataset
DEFAULT_HORIZON = 2000  # synthetic worlds; a dataset's episode is its whole stream
DEFAULT_POSITIVE_RATE = {"separable": 0.5, "minority": 0.05}
DEFAULT_GAP = (0.5, 1.0)  # gappy: (gap_offset, gap_width)
DEFAULT_STRIPE = (0.5, 0.5)  # striped: (stripe_offset, stripe_width)
# The band of the gappy and striped worlds must stay well inside the feature
# bound, so that the truncation below never touches their geometry.
MAX_BAND = 4.0
# Synthetic features are standard normal truncated at +-10 (the truncation moves
# a probability below 1e-22; the gappy shift adds at most MAX_BAND).
FEATURE_BOUND = 10.0
# Synthetic examples are drawn this many at a time: one vectorised draw instead
# of one per step, and an unbounded horizon still costs bounded memory.
CHUNK = 256

#: ``oracle["mistake"]`` codes
NO_MISTAKE, FALSE_POSITIVE, FALSE_NEGATIVE = 0, 1, 2


# --------------------------------------------------------------------------- helpers
def check_action(action: Any) -> int:
    """Return a ``Discrete(2)`` action as a Python ``int``, or raise naming ``action``.

    Integer scalars (Python or numpy) and 0-d integer arrays holding 0 or 1
    are accepted; floats, strings, booleans and sequences are rejected, not
    coerced.

    Examples
    --------
    >>> check_action(np.int64(1))
    1
    >>> check_action(0.5)
    Traceback (most recent call last):
    ...
    TypeError: action must be an integer 0 or 1 (Discrete(2)), got 0.5 (float)
    """
    value = action
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        value = value.item()
    if isinstance(value, bool | np.bool_) or not isinstance(value, Integral):
        raise TypeError(
            f"action must be an integer 0 or 1 (Discrete(2)), got {action!r} "
            f"({type(action).__name__})"
        )
    if value not in (0, 1):
        raise ValueError(f"action must be 0 (reject) or 1 (taste), got {int(value)}")
    return int(value)


def outcome(action: int, y: int, gain: float, cost_fp: float) -> tuple[float, int, float]:
    """Return ``(reward, mistake, loss)`` of deciding an example of label ``y``.

    Tasting a positive earns ``gain``; tasting a negative costs ``cost_fp``
    (a false positive); rejecting earns nothing, and rejecting a positive
    (a false negative) forgoes ``gain``. The loss is the cost-weighted
    mistake, so ``reward = gain * y - loss`` whatever the action.

    Examples
    --------
    >>> outcome(1, 0, gain=1.0, cost_fp=3.0)
    (-3.0, 1, 3.0)
    >>> outcome(0, 1, gain=2.0, cost_fp=3.0)
    (0.0, 2, 2.0)
    """
    if action == 1:
        if y == 1:
            return gain, NO_MISTAKE, 0.0
        return -cost_fp, FALSE_POSITIVE, cost_fp
    if y == 1:
        return 0.0, FALSE_NEGATIVE, gain
    return 0.0, NO_MISTAKE, 0.0


def adversarial_order(
    y: np.ndarray, score: np.ndarray | None, rng: np.random.Generator
) -> np.ndarray:
    """Order examples to ratchet a one-sided learner: every negative first, positives last.

    With ``score`` (a synthetic world's ``x . w*``), the negatives come by
    decreasing score, the most positive-looking first (label-noise flips
    beyond the boundary, then those just below it), and the positives by
    increasing score, the ones nearest the boundary first. Without a score
    (a dataset has no true ``w*``) each class comes in a random order.

    Examples
    --------
    >>> adversarial_order(np.array([1, 0, 1, 0]), np.array([3.0, -1.0, 0.5, -0.2]),
    ...                   np.random.default_rng(0)).tolist()
    [3, 1, 2, 0]
    """
    negatives = np.flatnonzero(y == 0)
    positives = np.flatnonzero(y == 1)
    if score is None:
        return np.concatenate([rng.permutation(negatives), rng.permutation(positives)])
    negatives = negatives[np.argsort(-score[negatives], kind="stable")]
    positives = positives[np.argsort(score[positives], kind="stable")]
    return np.concatenate([negatives, positives])


def move_first_positive_first(order: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Return ``order`` with its first positive example moved to the front.

    The other examples keep their relative order; an order without a
    positive is returned unchanged.

    Examples
    --------
    >>> move_first_positive_first(np.array([4, 2, 0, 1]), np.array([0, 1, 0, 0, 1])).tolist()
    [4, 2, 0, 1]
    >>> move_first_positive_first(np.array([2, 0, 4, 1]), np.array([0, 1, 0, 0, 1])).tolist()
    [4, 2, 0, 1]
    """
    positive = np.flatnonzero(y[order] == 1)
    if positive.size == 0 or positive[0] == 0:
        return order
    k = int(positive[0])
    return np.concatenate([order[k : k + 1], order[:k], order[k + 1 :]])


@dataclass(frozen=True)
class SyntheticWorld:
    """The hidden truth of a synthetic apple-tasting episode.

    The geometry lives along the hidden unit vector ``w``: an example's
    score ``s = x . w`` decides its clean label, the features orthogonal to
    ``w`` are standard normal noise.

    Attributes
    ----------
    w
        The hidden unit normal ``w*``.
    scenario
        One of :data:`SCENARIOS`.
    threshold
        Separable and minority worlds: ``y = 1{s > threshold}``.
    band
        Gappy: the empty score interval; striped: the interval of negatives
        inside the positive side. ``(low, high)``, else None.
    noise
        Probability that a label is flipped.
    """

    w: np.ndarray
    scenario: str
    threshold: float = 0.0
    band: tuple[float, float] | None = None
    noise: float = 0.0

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``n`` examples: ``float32`` features, ``int8`` labels and scores.

        Labels are computed from exactly the ``float32`` features observed.
        """
        dim = self.w.shape[0]
        x = rng.standard_normal((n, dim))
        if self.scenario == "gappy" and self.band is not None:
            low, high = self.band
            # move every score above the gap's start past its end: nothing lands inside
            shift = (high - low) * (x @ self.w > low)
            x += np.outer(shift, self.w)
        np.clip(x, -FEATURE_BOUND, FEATURE_BOUND, out=x)
        x32 = x.astype(np.float32)
        score = x32.astype(np.float64) @ self.w
        clean = score > self.threshold
        if self.scenario == "striped" and self.band is not None:
            low, high = self.band
            clean &= ~((score > low) & (score < high))
        flipped = rng.random(n) < self.noise
        return x32, (clean ^ flipped).astype(np.int8), score


def draw_world(
    dim: int,
    scenario: str,
    rng: np.random.Generator,
    *,
    positive_rate: float = 0.5,
    band: tuple[float, float] | None = None,
    noise: float = 0.0,
) -> SyntheticWorld:
    """Draw ``w*`` uniformly on the unit sphere and fix the scenario's geometry.

    Separable and minority worlds put the boundary at the
    ``1 - positive_rate`` quantile of the standard normal score, so
    ``P(clean y = 1) = positive_rate`` exactly; gappy and striped worlds
    put it at 0.
    """
    direction = rng.standard_normal(dim)
    w = direction / np.linalg.norm(direction)
    threshold = float(norm.ppf(1.0 - positive_rate)) if scenario in DEFAULT_POSITIVE_RATE else 0.0
    return SyntheticWorld(w=w, scenario=scenario, threshold=threshold, band=band, noise=noise)


class AppleMetrics(EpisodeMetrics):
    """Episode metrics of apple tasting: the confusion matrix, F1 and label requests.

    ``tp``, ``fp``, ``tn``, ``fn`` count tasted positives, tasted negatives,
    rejected negatives and rejected positives. ``precision = tp / (tp + fp)``,
    ``recall = tp / (tp + fn)`` and ``f1 = 2 tp / (2 tp + fp + fn)`` (the
    harmonic mean of the two) are 0 where their denominator is 0.
    ``label_requests`` counts tasted examples (``tp + fp``, whatever the
    feedback mode); ``tasted_negatives`` counts the label requests that were
    negatives (``fp``), the ones a one-sided learner pays for.
    ``error_rate`` is ``(fp + fn) / steps``.

    Examples
    --------
    >>> m = AppleMetrics()
    >>> for a, y in [(1, 1), (1, 0), (0, 1), (0, 0)]:
    ...     m.update(a, 0.0, {"revealed": a == 1}, {"y": y, "loss": 0.0})
    >>> {k: m.get()[k] for k in ("tp", "fp", "fn", "tn", "f1", "label_requests")}
    {'tp': 1.0, 'fp': 1.0, 'fn': 1.0, 'tn': 1.0, 'f1': 0.5, 'label_requests': 2.0}
    """

    def __init__(self) -> None:
        super().__init__()
        self.tp = self.fp = self.tn = self.fn = 0

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one decision."""
        super().update(action, reward, feedback, oracle)
        tasted = int(np.asarray(action)) == 1
        positive = int(oracle["y"]) == 1
        if tasted:
            if positive:
                self.tp += 1
            else:
                self.fp += 1
        elif positive:
            self.fn += 1
        else:
            self.tn += 1

    def get(self) -> dict[str, float]:
        """Return the episode summary."""
        summary = super().get()
        tp, fp, tn, fn = self.tp, self.fp, self.tn, self.fn
        summary.update(
            tp=float(tp),
            fp=float(fp),
            tn=float(tn),
            fn=float(fn),
            precision=tp / (tp + fp) if tp + fp else 0.0,
            recall=tp / (tp + fn) if tp + fn else 0.0,
            f1=2 * tp / (2 * tp + fp + fn) if tp else 0.0,
            label_requests=float(tp + fp),
            tasted_negatives=float(fp),
            error_rate=(fp + fn) / max(self.steps, 1),
        )
        return summary


# --------------------------------------------------------------------------- env
class AppleTastingEnv(FeedbackEnv):
    r"""Predict positive to taste an example and see its label; predict negative and see nothing.

    ## Description
    The apple-tasting setting of Helmbold, Littlestone and Long (2000), as
    Sculley (2007) studies it for spam filtering and document routing. A
    stream of examples ``(x, y)``, ``y`` in {0, 1}, arrives one at a time.
    For each the learner predicts positive (it *tastes* the apple: the
    message goes to the inbox, where the user labels it) or negative (the
    message goes to the spam box, which nobody reads). Only tasted examples
    reveal their label, so a false negative is never seen: a purely
    mistake-driven learner ratchets towards rejecting everything.

    ## Action Space
    ``Discrete(2)``: 1 = predict positive (taste: the label is revealed),
    0 = predict negative (nothing is revealed). Integer scalars and 0-d
    integer arrays are accepted.

    ## Observation Space
    ``Box(-B, B, (dim,), float32)``.

    | Index   | Observation                    |
    |---------|--------------------------------|
    | ``[j]`` | feature ``j`` of the example   |

    Synthetic worlds: ``B = 10``; features are standard normal truncated
    at +-10 (with the gappy scenario's shift along ``w*``).

    ## Feedback
    After a step, ``info["feedback"]`` is ``{"revealed": bool, "y": int}``:
    ``y`` is the label when ``revealed`` and 0 otherwise (a constant
    placeholder that carries nothing, with fixed types so that vector envs
    stack the infos). With ``feedback="one_sided"`` (default) a label is
    revealed exactly when the action is 1; ``feedback="full"`` reveals
    every label (the full-information comparison). At reset
    ``info["feedback"]`` holds the task's public terms,
    ``{"gain": gain, "cost_fp": cost_fp}``, and nothing else.

    ## Rewards
    ``+gain`` for a tasted positive, ``-cost_fp`` for a tasted negative,
    0 for a rejection whatever the hidden label.

    ## Info
    | key                      | channel        | content                                         |
    |--------------------------|----------------|-------------------------------------------------|
    | ``feedback["revealed"]`` | agent          | whether the label was revealed (step)           |
    | ``feedback["y"]``        | agent          | the label if revealed, else 0 (step)            |
    | ``feedback["gain"]``, ``["cost_fp"]`` | agent | the task's terms (reset)                |
    | ``oracle["y"]``          | evaluator only | the example's label (step)                      |
    | ``oracle["mistake"]``    | evaluator only | 0 none, 1 false positive, 2 false negative      |
    | ``oracle["loss"]``       | evaluator only | ``cost_fp`` if FP, ``gain`` if FN, else 0       |
    | ``oracle["w"]``          | evaluator only | the hidden unit normal ``w*`` (reset, synthetic) |

    The loss is the cost-weighted mistake, and each step
    ``reward = gain * y - loss``. Over an episode, ``return = gain * P -
    cumulative_loss`` with ``P`` the number of positives streamed: the
    cumulative loss is the regret to tasting exactly the positives.

    ## Starting State
    A synthetic world (the unit vector ``w*``) is drawn at each reset from
    the reset seed, or fixed across resets by ``world_seed``; the examples
    are drawn from the reset seed.

    ## Episode End
    Truncation after ``horizon`` steps; synthetic streams never terminate.

    ## Arguments
    | argument        | default       | meaning |
    |-----------------|---------------|------------------------------------------------------|
    | ``scenario``    | "separable"   | "separable", "minority", "gappy" or "striped" (S) |
    | ``dim``         | None (20)     | number of features (S) |
    | ``horizon``     | None (2000)   | steps per episode |
    | ``noise``       | 0.0           | label-noise rate in [0, 0.5] (S) |
    | ``positive_rate`` | None        | clean ``P(y = 1)``: 0.5 separable, 0.05 minority (S) |
    | ``gain``        | 1.0           | reward of a tasted positive (>= 0) |
    | ``cost_fp``     | 1.0           | cost of a tasted negative (>= 0) |
    | ``order``       | "random"      | "random" or "adversarial" |
    | ``world_seed``  | None          | fix ``w*`` across resets (S) |
    | ``feedback``    | "one_sided"   | "one_sided" or "full" |
    | ``render_mode`` | None          | "ansi" |

    ## References
    David P. Helmbold, Nicholas Littlestone, Philip M. Long. Apple Tasting.
    Information and Computation 161(2), 2000.

    D. Sculley. Practical Learning from One-Sided Feedback. KDD 2007.

    ## Version History
    - v0: initial version.

    ## Example
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = gym.make("AppleTasting-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.action_space, info["feedback"]
    ((20,), Discrete(2), {'gain': 1.0, 'cost_fp': 1.0})
    >>> obs, reward, terminated, truncated, info = env.step(1)
    >>> sorted(info["feedback"]), sorted(info["oracle"])
    (['revealed', 'y'], ['loss', 'mistake', 'y'])
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    metrics_class = AppleMetrics

    def __init__(
        self,
        scenario: str = "separable",
        dim: int | None = None,
        horizon: int | None = None,
        noise: float = 0.0,
        positive_rate: float | None = None,
        gain: float = 1.0,
        cost_fp: float = 1.0,
        order: str = "random",
        world_seed: int | None = None,
        feedback: str = "one_sided",
        render_mode: str | None = None,
    ) -> None:
        self.scenario = check_choice(scenario, "scenario", SCENARIOS)
        self.order = check_choice(order, "order", ORDERS)
        self.feedback_mode = check_choice(feedback, "feedback", FEEDBACK_MODES)
        self.world_seed = check_world_seed(world_seed)
        self.render_mode = check_choice(
            render_mode, "render_mode", (None, *self.metadata["render_modes"])
        )
        self.gain = check_float(gain, "gain", low=0.0)
        self.cost_fp = check_float(cost_fp, "cost_fp", low=0.0)
        self.noise = check_float(noise, "noise", low=0.0, high=0.5)
        self.positive_rate = self._resolve_positive_rate(positive_rate)
        self.band: tuple[float, float] | None = None
        self.dim = DEFAULT_DIM if dim is None else check_int(dim, "dim", minimum=1)
        self.horizon = (
            DEFAULT_HORIZON if horizon is None else check_int(horizon, "horizon", minimum=1)
        )
        #: steps until a dataset's stream runs out (None: synthetic, never)
        self.n_steps: int | None = None

        self.observation_space = spaces.Box(
            -FEATURE_BOUND, FEATURE_BOUND, shape=(self.dim,), dtype=np.float32
        )
        self.action_space = spaces.Discrete(2)

        self._world: SyntheticWorld | None = None
        self._x = np.empty((0, self.dim), dtype=np.float32)
        self._labels = np.empty(0, dtype=np.int8)
        self._pos = 0
        self._y: int | None = None
        self._t = 0
        self._last_line = ""

    # ------------------------------------------------------------------ configuration
    def _resolve_positive_rate(self, positive_rate: float | None) -> float:
        default = DEFAULT_POSITIVE_RATE.get(self.scenario)
        if positive_rate is None:
            return 0.5 if default is None else default
        if default is None:
            raise ValueError(
                f"positive_rate applies to scenario='separable' or 'minority'; the "
                f"{self.scenario!r} world has its boundary at score 0, got "
                f"positive_rate={positive_rate!r}"
            )
        return check_float(
            positive_rate,
            "positive_rate",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
        )

    # ------------------------------------------------------------------ dynamics
    def _refill(self) -> None:
        """Draw the next chunk of a synthetic random-order stream."""
        world = self._world
        if world is None:
            raise RuntimeError("call reset() before step()")
        self._x, self._labels, _ = world.sample(CHUNK, self.np_random)
        self._pos = 0

    def _advance(self) -> np.ndarray:
        """Move to the next example; return its observation."""
        if self._pos >= self._labels.shape[0]:
            if self.order == "adversarial":
                # the episode's examples are drawn at reset; stepping past the horizon
                self._y = None
                return np.zeros(self.dim, dtype=np.float32)
            self._refill()
        row = self._pos
        self._pos += 1
        self._y = int(self._labels[row])
        return self._x[row].copy()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw a world (unless fixed) and the first example."""
        super().reset(seed=seed)
        self._t = 0
        self._last_line = ""
        self._world = draw_world(
            self.dim,
            self.scenario,
            world_rng(self.world_seed, self.np_random),
            positive_rate=self.positive_rate,
            band=self.band,
            noise=self.noise,
        )
        if self.order == "adversarial":
            # the whole episode plus the example shown with the truncation
            x, labels, score = self._world.sample(self.horizon + 1, self.np_random)
            order = adversarial_order(labels, score, self.np_random)
            self._x, self._labels = x[order], labels[order]
            self._pos = 0
        else:
            self._labels = np.empty(0, dtype=np.int8)
            self._pos = 0
        obs = self._advance()
        feedback = {"gain": self.gain, "cost_fp": self.cost_fp}
        return obs, make_info(feedback, {"w": self._world.w.copy()})

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Decide the current example; reveal its label if tasted (or under full feedback)."""
        if self._world is None:
            raise RuntimeError("call reset() before step()")
        y = self._y
        if y is None:
            raise RuntimeError("the episode's examples are used up; call reset() for a new one")
        a = check_action(action)
        reward, mistake, loss = outcome(a, y, self.gain, self.cost_fp)
        revealed = a == 1 or self.feedback_mode == "full"
        feedback = {"revealed": revealed, "y": y if revealed else 0}
        oracle = {"y": y, "mistake": mistake, "loss": loss}
        self._t += 1
        if self.render_mode is not None:
            self._last_line = (
                f"t={self._t:5d}  {'taste ' if a else 'reject'}  "
                f"revealed y={y if revealed else '?'}  loss {loss:.3f}"
            )
        terminated = self.n_steps is not None and self._t >= self.n_steps
        truncated = not terminated and self._t >= self.horizon
        obs = self._advance()
        return obs, float(reward), terminated, truncated, make_info(feedback, oracle)

    def _override_hidden(self, action: Any, extreme: str) -> bool:
        if self.feedback_mode == "full" or int(np.asarray(action)) != 0 or self._y is None:
            return False
        self._y = 0 if extreme == "low" else 1
        return True

    def render(self) -> str | None:
        """Render the last step as a text line."""
        if self.render_mode == "ansi":
            return self._last_line
        return None
