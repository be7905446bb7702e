"""AppleTasting: predict positive to taste an example and see its label; reject and see nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import make_info
from osfb_gym.core.env import FeedbackEnv, episode_over
from osfb_gym.core.seeding import world_rng
from osfb_gym.core.validation import (
    RenderModes,
)
from osfb_gym.envs._render import RENDER_MODES, StepTrace, check_render
from osfb_gym.envs._stream import DatasetStream
from osfb_gym.envs.apple.config import (
    ARGUMENTS,
    SYNTHETIC_ONLY,
    DatasetApple,
    SyntheticApple,
    apple_config,
)
from osfb_gym.envs.apple.metrics import AppleMetrics, check_action, outcome
from osfb_gym.envs.apple.render import reset_line, step_line, stream_frame
from osfb_gym.envs.apple.streams import (
    adversarial_order,
    move_first_positive_first,
)
from osfb_gym.envs.apple.world import (
    CHUNK,
    FEATURE_BOUND,
    SyntheticWorld,
    draw_world,
)

if TYPE_CHECKING:
    from osfb_gym.data import Dataset, TextDataset


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
    mistake-driven learner ratchets towards rejecting everything
    (Sculley's Figure 1).

    Synthetic worlds (``scenario``) are built around a hidden unit vector
    ``w*``: features are standard normal, and an example's score
    ``s = x . w*`` decides its clean label; each label is then flipped with
    probability ``noise``.

    - ``"separable"``: ``y = 1{s > t}`` with ``t`` the ``1 - positive_rate``
      quantile of N(0, 1), so ``P(y = 1) = positive_rate`` exactly before
      noise (0.5 by default: ``t = 0``, a hyperplane through the origin).
    - ``"minority"``: the same with ``positive_rate = 0.05`` by default, the
      rare-positive streams of Sculley's Section 5 (Reuters topics of
      2%-30%).
    - ``"gappy"`` (Sculley's Figure 8, left): ``y = 1{s > 0}``, but no
      example has a score in the gap ``(gap_offset, gap_offset +
      gap_width)`` inside the positive class: every score above
      ``gap_offset`` is moved ``gap_width`` further along ``w*``. The data
      stay linearly separable (the class sizes are unchanged), but a
      margin learner whose hyperplane sits past the gap finds no example
      between it and its exploration hyperplane and stalls, rejecting the
      thin slab of positives ``(0, gap_offset]`` (19% of the stream, 38%
      of the positives, by default).
    - ``"striped"`` (Figure 8, right): ``y = 1{s > 0}`` except a stripe
      ``stripe_offset < s < stripe_offset + stripe_width`` of negatives
      inside the positive side; not linearly separable. With the defaults
      (stripe 15% of the stream, the positive slab before it 19%), the
      best hyperplane is still ``s = 0``, but a learner exploring from the
      positive side meets the stripe's negatives first and is pulled back
      by their cost.

    Measured (Perceptron with margins, ``m = 2``, ``eta = 1``, defaults,
    2000 steps, seeds and world seeds 0-4; recall one-sided against full): with
    a bias term, from ``w = 0``, gappy 0.68 against 0.91 and striped 0.13
    against 0.60: both stall. Without a bias (Sculley's Figure 5 learner)
    the hyperplane is pinned through ``s = 0``, the true boundary, so it
    can never sit past the gap: gappy 0.90 against 0.92, striped 0.71
    against 0.75, no stall (the test suite checks both).
    With ``dataset`` set the stream is a real dataset's rows in a seeded
    random order: tabular data (``"breast_cancer"``, ``"spambase"``, a
    record of your own from ``osfb_gym.data.from_arrays``/``from_csv``),
    or text, as in Sculley's experiments: ``"sms_spam"`` (spam = 1) and
    ``"reuters_r8"`` one topic against the rest (``topic``, default
    ``"earn"``), as hashed character 4-grams.

    ## Action Space
    ``Discrete(2)``: 1 = predict positive (taste: the label is revealed),
    0 = predict negative (nothing is revealed). Integer or boolean scalars
    (Python or numpy) and 0-d arrays of them are accepted; floats, strings
    and sequences raise.

    ## Observation Space
    ``Box(-B, B, (dim,), float32)``.

    | Index   | Observation                    |
    |---------|--------------------------------|
    | ``[j]`` | feature ``j`` of the example   |

    Synthetic worlds: ``B = 10``; features are standard normal truncated
    at +-10 (after the gappy shift along ``w*``): the truncation moves a
    probability below 1e-22 per feature, below 1e-8 with the largest
    gappy shift. Labels are computed from the ``float32`` features
    exactly as observed. No constant feature is included: the
    minority world's boundary ``s = t`` has an offset, so a linear learner
    needs its own bias term, as the paper's learners have.

    Tabular datasets: every column is standardised over all rows (mean 0,
    standard deviation 1; a constant column becomes 0) and a constant
    column ``"intercept"`` of ones is appended last, so ``dim`` is the
    dataset's number of features plus one (``feature_names`` lists them);
    ``B`` is the largest ``|feature|`` of the data.

    Text datasets (``features="binary"``, the default): Sculley's Section
    6.1 features, the set of contiguous character 4-grams of the first
    3000 characters of the text, case preserved, as a binary vector
    hashed into ``dim`` buckets (default ``2**18``, where about 0.6% of a
    long message's 4-grams share a bucket) and normalised to unit
    Euclidean length (:func:`osfb_gym.envs._text.hash_char_4grams`).
    ``features="counts"`` gives the featurisation of version 0 before
    this option: lower-cased 4-gram counts, ``dim`` default 4096 (kept
    for comparison; RejectOption-v0 still uses it). ``B = 1``. No intercept
    is appended (rows stay unit-norm). The matrix is built once per
    dataset, ``features`` and ``dim`` and kept sparse; each observation is
    the dense ``float32`` row of the current example.

    ## Feedback
    After a step, ``info["feedback"]`` is ``{"revealed": bool, "y": int}``:
    ``y`` is the label when ``revealed`` and 0 otherwise (a constant
    placeholder that carries nothing, with fixed types so that vector envs
    stack the infos). With ``feedback="one_sided"`` (default) a label is
    revealed exactly when the action is 1; ``feedback="full"`` reveals
    every label (the full-information comparison). At reset
    ``info["feedback"]`` holds the task's public terms,
    ``{"gain": gain, "cost_fp": cost_fp}``, and nothing else: there is no
    labelled warm start.

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
    | ``oracle["w"]``          | evaluator only | ``w*`` (reset, synthetic worlds only)           |
    | ``oracle["bayes_loss"]`` | evaluator only | the Bayes decision's expected loss (synthetic) |

    The loss is the cost-weighted mistake: each step
    ``reward = gain * y - loss``, so over an episode
    ``return = gain * P - cumulative_loss`` with ``P`` the number of
    positives decided: the cumulative loss is the regret to tasting
    exactly the positives. The episode metrics (:class:`AppleMetrics`) add
    the confusion matrix, precision, recall, F1 and the label requests.

    ## Hidden State
    The current example's label ``_y`` (None before a reset). Private and
    documented as the seam of the no-leak probe
    (``tests/osfb_gym/envs/hidden.py``), which overwrites an untasted label
    before a step to prove that nothing the agent sees depends on it.

    ## Starting State
    A synthetic world (``w*``) is drawn at each reset from the reset seed,
    or fixed across resets by ``world_seed``; the examples are drawn from
    the reset seed. A dataset is fixed when the env is made; each reset
    draws the order of its rows from the reset seed.

    ``order="adversarial"`` replaces the random order by one that ratchets
    one-sided learners (Sculley's Section 4.5 "malicious orderings"):
    every negative first, then every positive. In a synthetic world the
    ``horizon + 1`` examples of the episode (the last one is shown with
    the truncation) are drawn at reset; the negatives come by decreasing
    score, the most positive-looking first (label-noise flips beyond the
    boundary, then those just below it), and the positives by increasing
    score, those nearest the boundary first (so memory grows with
    ``horizon x dim``). A dataset has no true
    ``w*``: its negatives, then its positives, each in a random order.

    ``first_positive_first`` (default: on for ``"reuters_r8"``) moves the
    first positive of the random order to the front, so the stream opens
    with a positive, which a rare topic would otherwise make the learner
    wait for; the rest keep their order.

    ## Episode End
    Truncation after ``horizon`` steps (``truncated=True``). Synthetic
    streams never terminate; stepping on past the horizon works in random
    order and raises ``RuntimeError`` once the adversarial order's
    examples are used up.

    A dataset's stream terminates (``terminated=True``) when its rows run
    out, after ``n_steps`` = its number of rows; the observation returned
    then is all zeros, and stepping again raises ``RuntimeError``. A
    ``horizon`` shorter than the stream truncates the episode there with
    the next real example as the observation; a longer one is capped at
    ``n_steps``.

    ## Arguments
    | argument          | default       | meaning |
    |-------------------|---------------|------------------------------------------------------|
    | ``scenario``      | "separable"   | "separable", "minority", "gappy" or "striped" (S) |
    | ``dim``           | None          | 20 synthetic (S); text: 2^18 buckets ("counts": 4096) |
    | ``horizon``       | None          | steps per episode: 2000, or a whole dataset |
    | ``noise``         | 0.0           | label-flip probability in [0, 0.5] (S) |
    | ``positive_rate`` | None          | clean ``P(y = 1)``: 0.5 separable, 0.05 minority (S) |
    | ``gap_offset``    | None (0.5)    | gappy: the gap starts at this score (S) |
    | ``gap_width``     | None (1.0)    | gappy: width of the gap in score units (S) |
    | ``stripe_offset`` | None (0.5)    | striped: the stripe starts at this score (S) |
    | ``stripe_width``  | None (0.5)    | striped: width of the stripe in score units (S) |
    | ``gain``          | 1.0           | reward of a tasted positive (>= 0) |
    | ``cost_fp``       | 1.0           | cost of a tasted negative (>= 0) |
    | ``order``         | "random"      | "random" or "adversarial" |
    | ``world_seed``    | None          | fix ``w*`` across resets (S) |
    | ``feedback``      | "one_sided"   | "one_sided" or "full" |
    | ``dataset``       | None          | a name ``osfb_gym.data.load`` knows, or a record |
    | ``data_home``     | None          | folder of the dataset files (default: ``OSFB_DATA``) |
    | ``topic``         | None ("earn") | ``"reuters_r8"``: the positive topic |
    | ``encoding``      | None          | table categoricals: "onehot" (None) or "native" |
    | ``first_positive_first`` | None   | move the first positive to the front (datasets) |
    | ``positive_class`` | 1            | the label tasted: 0 makes spam data ham-positive (D) |
    | ``rows``          | "all"         | "all", "train" or "test" part of a dataset (D) |
    | ``features``      | None          | text "binary"/"counts", tabular "standardized"/"unit" (D)|
    | ``render_mode``   | None          | "ansi" or "rgb_array" |
    | ``render_truth``  | False         | renders also show hidden labels and losses |
    | ``config``        | None          | a ``SyntheticApple`` or ``DatasetApple`` instead |

    Scores are in units of the feature's standard deviation along ``w*``
    (N(0, 1) before the gappy shift). Offsets are >= 0 and widths > 0,
    with offset + width <= 4. Giving ``positive_rate`` in a gappy or
    striped world, or the gap (stripe) arguments in another scenario,
    raises ``ValueError``. Arguments marked (S) shape a synthetic world
    only: with ``dataset`` they raise ``ValueError`` (``dim`` is allowed
    for text, where it is the hashing dimension). ``dataset`` also takes
    a :class:`~osfb_gym.data.Dataset` or
    :class:`~osfb_gym.data.TextDataset` record of your own; its labels
    must be 0/1. Arguments marked (D) apply to datasets only.
    ``rows="train"``/``"test"`` cut a dataset with a split of its own where
    it has one (Reuters R8: the ModApte training / test documents); any
    other dataset's "test" part is its rows ``i`` with ``i mod 4 == 3``, a
    quarter spread over the file, and "train" the rest.
    ``features="unit"`` (tabular) drops the intercept column and scales
    each standardised row to unit length, as Sculley's learners expect.
    ``horizon`` lives in the env rather than in
    ``max_episode_steps`` because agents (e.g. a label budget) may need it.

    The arguments build a frozen, checked config
    (:mod:`osfb_gym.envs.apple.config`): ``SyntheticApple`` without
    ``dataset``, ``DatasetApple`` with it; ``env.config`` is it, and
    ``config=`` takes one made beforehand (every other argument then keeps
    its default).

    ## Rendering
    ``render_mode="ansi"`` returns a line about the last step (right after
    a reset: what the agent is shown first, the first example and the payoffs),
    ``"rgb_array"`` a ``(256, 640, 3)`` ``uint8`` frame (matplotlib, Agg).
    The frame shows the recent stream as strips (the decision, the
    revealed label) and the cumulative reward. A render shows what the
    agent was shown; the labels of rejected (untasted) examples and the
    loss appear only with ``render_truth=True``, the argument every family
    uses for it (fixed when the env is made: ``env.render_truth`` is read-only).

    ## Time Limit and Vector Envs
    ``horizon`` is an argument (agents may read ``T``) and the env
    truncates there itself; ``env.spec.max_episode_steps`` reports it, so
    ``gym.wrappers.TimeAwareObservation(gym.make(id, horizon=h))``
    normalises by ``h`` with no ``TimeLimit`` added. A dataset's stream
    that runs out first still ends with ``terminated=True``. Every info
    value has a shape fixed by the arguments, so the infos of sub-envs out
    of step stack in ``gym.make_vec`` (sync or async) and SB3's vector
    envs.

    ## References
    David P. Helmbold, Nicholas Littlestone, Philip M. Long. Apple Tasting.
    Information and Computation 161(2), 85-139, 2000.

    D. Sculley. Practical Learning from One-Sided Feedback. KDD 2007.

    Examples
    --------
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = gym.make("AppleTasting-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.action_space, info["feedback"]
    ((20,), Discrete(2), {'gain': 1.0, 'cost_fp': 1.0})
    >>> obs, reward, terminated, truncated, info = env.step(1)
    >>> info["feedback"]["revealed"], sorted(info["oracle"])
    (True, ['bayes_loss', 'loss', 'mistake', 'y'])
    >>> reward == (1.0 if info["oracle"]["y"] else -1.0)
    True

    A dataset-backed stream (scikit-learn's breast-cancer data, 569 rows,
    y = 1 for benign):

    >>> env = gym.make("AppleTasting-v0", dataset="breast_cancer")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.unwrapped.feature_names[-1], env.unwrapped.n_steps
    ((31,), 'intercept', 569)
    """

    metadata = {"render_modes": RenderModes(RENDER_MODES), "render_fps": 4}  # noqa: RUF012
    metrics_class = AppleMetrics
    #: the dataset's name (a record's own name), None for a synthetic world
    dataset: str | None
    data_home: str | None

    def __init__(
        self,
        scenario: str = "separable",
        dim: int | None = None,
        horizon: int | None = None,
        noise: float = 0.0,
        positive_rate: float | None = None,
        gap_offset: float | None = None,
        gap_width: float | None = None,
        stripe_offset: float | None = None,
        stripe_width: float | None = None,
        gain: float = 1.0,
        cost_fp: float = 1.0,
        order: str = "random",
        world_seed: int | None = None,
        feedback: str = "one_sided",
        dataset: str | Dataset | TextDataset | None = None,
        data_home: str | None = None,
        topic: str | None = None,
        first_positive_first: bool | None = None,
        positive_class: int = 1,
        rows: str = "all",
        features: str | None = None,
        render_mode: str | None = None,
        render_truth: bool = False,
        encoding: str | None = None,
        *,
        config: SyntheticApple | DatasetApple | None = None,
    ) -> None:
        # the keyword arguments build the config (or must keep their defaults beside one)
        arguments = {name: value for name, value in locals().items() if name in ARGUMENTS}
        self.config = config = apple_config(config, **arguments)
        self.order, self.feedback_mode = config.order, config.feedback
        self.gain, self.cost_fp = config.gain, config.cost_fp
        self.render_mode, self.render_truth = check_render(render_mode, render_truth)
        #: column names of a tabular dataset (the intercept last); None otherwise
        self.feature_names: tuple[str, ...] | None = None
        #: steps until a dataset's stream runs out (None: synthetic, never)
        self.n_steps: int | None = None
        if isinstance(config, DatasetApple):
            bound = self._set_dataset_world(config)
        else:
            bound = self._set_synthetic_world(config)
        self.observation_space = spaces.Box(-bound, bound, shape=(self.dim,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)

        self._world: SyntheticWorld | None = None
        self._started = False
        self._over = False
        self._x = np.empty((0, self.dim), dtype=np.float32)
        self._labels = np.empty(0, dtype=np.int8)
        self._bayes = np.empty(0)  # a synthetic chunk's Bayes expected losses (the oracle's)
        self._order: np.ndarray | None = None
        self._n_rows = 0
        self._pos = 0
        self._y: int | None = None
        self._t = 0
        self._last_line = ""
        self._trace = StepTrace()
        if self._data is not None:
            self._labels = self._data.y
            self._n_rows = self._data.n_rows

    # ------------------------------------------------------------------ configuration
    def _set_synthetic_world(self, config: SyntheticApple) -> float:
        """Set the terms of a drawn world (the config checked them all); return the bound."""
        self.scenario, self.world_seed, self.noise = (
            config.scenario,
            config.world_seed,
            config.noise,
        )
        self.dataset = self.data_home = None
        self._data: DatasetStream | None = None
        self.positive_rate: float | None = config.resolved_positive_rate()
        self.band = config.band()
        self.dim, self.horizon = config.dim, int(config.horizon)  # type: ignore[arg-type]
        self.first_positive_first = False
        return FEATURE_BOUND

    def _set_dataset_world(self, config: DatasetApple) -> float:
        """Load the dataset's stream; return its bound."""
        self.scenario, self.world_seed = SYNTHETIC_ONLY["scenario"], None
        self.noise = SYNTHETIC_ONLY["noise"]
        #: the dataset's name (a record's own name), None for a synthetic world
        self.dataset, self.data_home = config.name, config.data_home
        self.positive_rate = None
        self.band = None
        self._data = config.load()
        self.feature_names = self._data.feature_names
        self.dim = self._data.X.shape[1]
        self.n_steps = self._data.n_rows
        self.horizon = self.n_steps if config.horizon is None else min(config.horizon, self.n_steps)
        self.first_positive_first = config.starts_with_a_positive(self._data)
        return self._data.bound

    # ------------------------------------------------------------------ dynamics
    def _advance(self) -> np.ndarray:
        """Move to the next example; return its observation."""
        if self._pos >= self._n_rows:
            if self._data is not None or self.order == "adversarial":
                # the stream ran out: a placeholder inside the space, no example
                self._y = None
                return np.zeros(self.dim, dtype=np.float32)
            world = self._world
            if world is None:
                raise RuntimeError("call reset() before step()")
            self._x, self._labels, score = world.sample(CHUNK, self.np_random)
            self._bayes = world.bayes_loss(score, self.gain, self.cost_fp)
            self._n_rows, self._pos = CHUNK, 0
        i = self._pos if self._order is None else int(self._order[self._pos])
        self._pos += 1
        self._y = int(self._labels[i])
        if self._data is not None:
            return self._data.row(i)
        return self._x[i].copy()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw a world (unless fixed) or a dataset's order, and the first example."""
        super().reset(seed=seed, options=options)
        self._started = True
        self._over = False
        self._t = 0
        self._pos = 0
        self._last_line = ""
        self._trace = StepTrace()
        data = self._data
        oracle: dict[str, Any] = {}
        if data is None:
            self._world = draw_world(
                self.dim,
                self.scenario,
                world_rng(self.world_seed, self.np_random),
                positive_rate=self.positive_rate if self.positive_rate is not None else 0.5,
                band=self.band,
                noise=self.noise,
            )
            oracle["w"] = self._world.w.copy()
            if self.order == "adversarial":
                # the whole episode plus the example shown with the truncation
                x, labels, score = self._world.sample(self.horizon + 1, self.np_random)
                order = adversarial_order(labels, score, self.np_random)
                self._x, self._labels = x[order], labels[order]
                self._bayes = self._world.bayes_loss(score[order], self.gain, self.cost_fp)
                self._n_rows = self.horizon + 1
            else:
                self._n_rows = 0  # the first step draws a chunk
        else:
            if self.order == "adversarial":
                order = adversarial_order(data.y, None, self.np_random)
            else:
                order = self.np_random.permutation(data.n_rows)
                if self.first_positive_first:
                    order = move_first_positive_first(order, data.y)
            self._order = order
        obs = self._advance()
        feedback = {"gain": self.gain, "cost_fp": self.cost_fp}
        if self.render_mode is not None:
            self._last_line = reset_line(obs, self.gain, self.cost_fp)
        return obs, make_info(feedback, oracle)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Decide the current example; reveal its label if tasted (or under full feedback)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        y = self._y
        if y is None:
            raise RuntimeError("the episode's examples are used up; call reset() for a new episode")
        if self._over:
            raise RuntimeError(episode_over(self._t, self._t == self.n_steps))
        a = check_action(action)
        reward, mistake, loss = outcome(a, y, self.gain, self.cost_fp)
        revealed = a == 1 or self.feedback_mode == "full"
        feedback = {"revealed": revealed, "y": y if revealed else 0}
        oracle = {"y": y, "mistake": mistake, "loss": loss}
        if self._data is None:
            oracle["bayes_loss"] = float(self._bayes[self._pos - 1])
        self._t += 1
        if self.render_mode is not None:
            self._trace.add(reward, loss, decision=a, revealed=y if revealed else -1, truth=y)
            line = step_line(self._t, a, y, revealed, reward, loss, self.render_truth)
            self._last_line = line
        terminated = self.n_steps is not None and self._t >= self.n_steps
        truncated = not terminated and self._t >= self.horizon
        self._over = terminated or truncated
        obs = self._advance()
        return obs, float(reward), terminated, truncated, make_info(feedback, oracle)

    def render(self) -> str | np.ndarray | None:
        """Render the last step as a text line, or the recent stream as an RGB image.

        What the agent was shown: each decision, the labels it revealed and
        the reward; the labels of rejected examples and the loss only with
        ``render_truth=True``.
        """
        if self.render_mode == "ansi":
            return self._last_line
        if self.render_mode == "rgb_array":
            return stream_frame(self._trace, self.render_truth)
        return None
