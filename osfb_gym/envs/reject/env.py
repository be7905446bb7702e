"""RejectOption: classify, reject, and pay to see a label; unseen losses are settled at the end.

The env (:class:`RejectOptionEnv`); its synthetic worlds are in
:mod:`osfb_gym.envs.reject.world`, the dataset mode in
:mod:`osfb_gym.envs.reject.data`, ``L_d`` and the metrics in
:mod:`osfb_gym.envs.reject.metrics`. Every public name of those is
importable from here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import make_info
from osfb_gym.core.env import FeedbackEnv
from osfb_gym.core.seeding import world_rng
from osfb_gym.core.validation import (
    RenderModes,
)
from osfb_gym.envs._render import (
    RENDER_MODES,
    StepTrace,
    check_render,
    context_text,
    stream_image,
)
from osfb_gym.envs._stream import DatasetStream
from osfb_gym.envs.reject.config import (
    ARGUMENTS,
    SYNTHETIC_ONLY,
    DatasetReject,
    SyntheticReject,
    reject_config,
)
from osfb_gym.envs.reject.data import draw_order
from osfb_gym.envs.reject.metrics import (
    PREDICT_NEGATIVE,
    PREDICT_POSITIVE,
    REJECT,
    RejectMetrics,
    check_action,
    decision_loss,
)
from osfb_gym.envs.reject.world import (
    CHUNK,
    FEATURE_BOUND,
    SyntheticWorld,
    chow_risk,
    draw_world,
)

if TYPE_CHECKING:
    from osfb_gym.data import Dataset, TextDataset


#: colours and labels of the ``rgb_array`` strips
DECISION_LEGEND = {
    PREDICT_NEGATIVE: ("tab:red", "predict -1"),
    REJECT: ("tab:orange", "reject"),
    PREDICT_POSITIVE: ("tab:green", "predict +1"),
}
QUERY_LEGEND = {1: ("tab:blue", "ask"), 0: ("lightgray", "skip")}
LABEL_LEGEND = {1: ("tab:green", "y=+1"), -1: ("tab:red", "y=-1")}
HIDDEN = ("lightgray", "hidden")


# --------------------------------------------------------------------------- env
class RejectOptionEnv(FeedbackEnv):
    r"""Predict -1, reject or predict +1; ask for the label at a price; hidden losses settle late.

    ## Description
    Online reject-option classification with active learning (Shah and
    Manwani, 2020). A stream of examples ``(x, y)``, ``y`` in {-1, +1},
    arrives one at a time. For each the learner decides (predict -1,
    reject, predict +1) and whether to ask for the label. A
    misclassification costs 1 and a rejection ``d`` (``L_d``, eq. 2 of the
    paper); the learner sees the label, and so the loss it incurred, only
    when it asks. A doctor who can defer a diagnosis to a specialist and
    order a test to learn the truth is the paper's example.

    Synthetic worlds (``scenario``) are built around a hidden unit vector
    ``w*`` and the score ``s = x . w*``:

    - ``"overlap"`` (default): two Gaussian classes with identity
      covariance and equal priors whose means sit ``+-separation / 2``
      along ``w*``. The classes overlap, so ``P(y = +1 | x) =
      sigmoid(separation * s)`` and there is a band where rejecting is the
      Bayes decision: the regime the reject option is for. The default
      ``separation = 2`` puts each class one standard deviation from the
      boundary (a Bayes error of 15.9% without rejection; Chow's rule with
      ``d = 0.25`` rejects 26.5% of the examples and reaches a risk of
      0.127, with ``d = 0.1`` it rejects 52.1% for 0.070, with ``d = 0.4``
      9.8% for 0.154: computed from the normal distribution).
    - ``"separable"``: standard normal features and ``y = sign(s)``; with
      ``noise = 0`` nothing needs rejecting.

    In either, each label is then flipped with probability ``noise``.

    With ``dataset`` set the stream is a real dataset's rows (the paper's
    ``"phishing"`` and ``"guide"``, any binary dataset of the data layer, a
    record of your own): label 1 becomes +1 and 0 becomes -1; tabular
    features are standardised with an intercept column appended, text is
    hashed character 4-grams (as in AppleTasting-v0). By default the rows
    come once each in a seeded random order; ``replacement=True`` draws
    them independently and uniformly instead, the paper's "sample x_t in
    S" with ``T = 10,000`` trials (more than Guide's 7,089 rows).

    ## Action Space
    ``MultiDiscrete([3, 2])``: ``(decision, query)``. ``decision``: 0 =
    predict -1, 1 = reject, 2 = predict +1; ``query``: 1 = ask for the
    label. Sequences and arrays of two integers are accepted; floats,
    strings and other shapes raise.

    ## Observation Space
    ``Box(-B, B, (dim,), float32)``: the example's features. Synthetic:
    ``B = 12`` (Gaussian features truncated there, a probability below
    1e-15 moved); no constant feature (the Bayes boundary passes through
    the origin). Datasets: ``B`` is the data's largest ``|feature|``.

    ## Feedback
    After a step, ``info["feedback"]`` is ``{"revealed": bool, "y": int,
    "settled": float}``: ``y`` is the label (+-1) when ``revealed``, else 0;
    ``settled`` is the lump of hidden losses paid on the episode's last
    step (0.0 on every other step). With ``feedback="one_sided"``
    (default) a label is revealed exactly when it is asked for;
    ``feedback="full"`` reveals every label. At reset ``info["feedback"]``
    holds the task's public terms, ``{"d": d, "query_cost": query_cost}``.

    ## Rewards
    A step whose label is revealed pays ``-(L_d + query_cost * query)``: the
    loss of the decision, which the label shows, and the price of asking.
    A step whose label stays hidden pays 0, whatever the decision cost:
    no reward depends on a hidden label. With ``settle="episode_end"``
    (default) the hidden losses are paid as one lump with the last
    step's reward, so the episode's return is minus the true objective
    ``sum_t (L_d + query_cost * query)``; ``settle="never"`` leaves them
    out of the reward altogether (the oracle still counts them).

    ## Info
    | key                       | channel        | content                                        |
    |---------------------------|----------------|------------------------------------------------|
    | ``feedback["revealed"]``  | agent          | whether the label was revealed (step)          |
    | ``feedback["y"]``         | agent          | the label if revealed, else 0 (step)           |
    | ``feedback["settled"]``   | agent          | hidden losses paid now (last step; else 0.0)   |
    | ``feedback["d"]``, ``["query_cost"]`` | agent | the task's terms (reset)                   |
    | ``oracle["y"]``           | evaluator only | the label (step)                               |
    | ``oracle["risk"]``        | evaluator only | ``L_d`` of the decision                        |
    | ``oracle["loss"]``        | evaluator only | ``L_d + query_cost * query``                   |
    | ``oracle["misclassified"]``, ``["rejected"]`` | evaluator only | the decision's outcome |
    | ``oracle["bayes_risk"]``  | evaluator only | Chow's rule's conditional risk (synthetic)     |
    | ``oracle["w"]``           | evaluator only | ``w*`` (reset, synthetic worlds only)          |

    The episode metrics (:class:`RejectMetrics`) give the average risk,
    the fraction of labels asked for, the misclassification and rejection
    rates, and each as a curve over t.

    ## Hidden State
    The current example's label ``_y`` (-1 or +1; None before a reset).
    Private and documented as the seam of the no-leak probe
    (``tests/osfb_gym/envs/hidden.py``), which overwrites an unqueried label
    before a step to prove that nothing the agent sees depends on it.

    ## Starting State
    A synthetic world (``w*``) is drawn at each reset from the reset seed,
    or fixed across resets by ``world_seed``; the examples are drawn from
    the reset seed. A dataset is fixed when the env is made; each reset
    draws its order (or its sample) from the reset seed.

    ## Episode End
    Synthetic worlds and ``replacement=True``: truncation after
    ``horizon`` steps (default 10,000, the paper's T). A dataset streamed
    without replacement terminates when its rows run out (the observation
    then is all zeros), or truncates at a shorter ``horizon``. Stepping
    after the end raises ``RuntimeError``: the losses are settled.

    ## Arguments
    | argument       | default       | meaning |
    |----------------|---------------|------------------------------------------------------|
    | ``d``          | 0.25          | cost of a rejection, in (0, 0.5) |
    | ``query_cost`` | 0.0           | price of asking for a label (>= 0) |
    | ``settle``     | "episode_end" | "episode_end" or "never": when hidden losses are paid |
    | ``scenario``   | "overlap"     | "overlap" or "separable" (S) |
    | ``dim``        | None          | features: 10 synthetic (S), hashing dimension of text |
    | ``horizon``    | None          | 10,000 steps, or a whole dataset |
    | ``separation`` | None (2.0)    | overlap: distance of the class means, in (0, 8] (S) |
    | ``noise``      | 0.0           | label-flip probability in [0, 0.5] (S) |
    | ``world_seed`` | None          | fix ``w*`` across resets (S) |
    | ``feedback``   | "one_sided"   | "one_sided" or "full" |
    | ``dataset``    | None          | a name ``osfb_gym.data.load`` knows, or a record |
    | ``data_home``  | None          | folder of the dataset files |
    | ``topic``      | None          | ``"reuters_r8"``: the positive topic |
    | ``encoding``   | None          | table categoricals: "onehot" (None) or "native" |
    | ``replacement``| False         | draw dataset rows independently (datasets only) |
    | ``render_mode``| None          | "ansi" or "rgb_array" |
    | ``render_truth``| False        | renders also show unasked labels and losses |
    | ``config``     | None          | a ``SyntheticReject`` or ``DatasetReject`` instead |

    Arguments marked (S) shape a synthetic world only and raise
    ``ValueError`` with ``dataset`` (``dim`` is allowed for text).

    The arguments build a frozen, checked config
    (:mod:`osfb_gym.envs.reject.config`): ``SyntheticReject`` without
    ``dataset``, ``DatasetReject`` with it; ``env.config`` is it, and
    ``config=`` takes one made beforehand (every other argument then keeps
    its default).

    ## Rendering
    ``render_mode="ansi"`` returns a line about the last step (right after
    a reset: what the agent is shown first, the first example and the costs),
    ``"rgb_array"`` a ``(256, 640, 3)`` ``uint8`` frame (matplotlib, Agg).
    The frame shows the recent stream as strips (the decision, the query,
    the revealed label) and the cumulative reward. A render shows what the
    agent was shown; the labels that were not asked for and the losses
    ``L_d`` appear only with ``render_truth=True``, the argument every
    family uses for it (fixed when the env is made: ``env.render_truth`` is
    read-only).

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
    Kulin Shah, Naresh Manwani. Online Active Learning of Reject Option
    Classifiers. AAAI 2020.

    C. K. Chow. On optimum recognition error and reject tradeoff. IEEE
    Transactions on Information Theory 16(1), 41-46, 1970.

    Examples
    --------
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = gym.make("RejectOption-v0", horizon=3)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.action_space, info["feedback"]
    ((10,), MultiDiscrete([3 2]), {'d': 0.25, 'query_cost': 0.0})
    >>> _, reward, *_ = env.step([1, 0])   # reject, do not ask: nothing shown
    >>> reward
    0.0
    >>> _, reward, *_ = env.step([1, 1])   # reject and ask: the rejection's cost
    >>> reward
    -0.25
    >>> _, reward, terminated, truncated, info = env.step([1, 0])
    >>> reward, info["feedback"]["settled"], truncated   # the two hidden rejections, settled
    (-0.5, 0.5, True)
    """

    metadata = {"render_modes": RenderModes(RENDER_MODES), "render_fps": 4}  # noqa: RUF012
    metrics_class = RejectMetrics
    #: the dataset's name (a record's own name), None for a synthetic world
    dataset: str | None
    data_home: str | None

    def __init__(
        self,
        d: float = 0.25,
        query_cost: float = 0.0,
        settle: str = "episode_end",
        scenario: str = "overlap",
        dim: int | None = None,
        horizon: int | None = None,
        separation: float | None = None,
        noise: float = 0.0,
        world_seed: int | None = None,
        feedback: str = "one_sided",
        dataset: str | Dataset | TextDataset | None = None,
        data_home: str | None = None,
        topic: str | None = None,
        replacement: bool = False,
        render_mode: str | None = None,
        render_truth: bool = False,
        encoding: str | None = None,
        *,
        config: SyntheticReject | DatasetReject | None = None,
    ) -> None:
        # the keyword arguments build the config (or must keep their defaults beside one)
        arguments = {name: value for name, value in locals().items() if name in ARGUMENTS}
        self.config = config = reject_config(config, **arguments)
        self.d, self.query_cost, self.settle = config.d, config.query_cost, config.settle
        self.feedback_mode = config.feedback
        self.render_mode, self.render_truth = check_render(render_mode, render_truth)
        #: column names of a tabular dataset (the intercept last); None otherwise
        self.feature_names: tuple[str, ...] | None = None
        if isinstance(config, DatasetReject):
            bound = self._set_dataset_world(config)
        else:
            bound = self._set_synthetic_world(config)
        #: steps until a dataset streamed without replacement runs out (None otherwise)
        self.n_steps = (
            self._data.n_rows if self._data is not None and not self.replacement else None
        )

        self.observation_space = spaces.Box(-bound, bound, shape=(self.dim,), dtype=np.float32)
        self.action_space = spaces.MultiDiscrete([3, 2])

        self._world: SyntheticWorld | None = None
        self._started = False
        self._x = np.empty((0, self.dim), dtype=np.float32)
        self._labels = np.empty(0, dtype=np.int8)
        self._chow = np.empty(0)  # Chow's conditional risk of each drawn example
        self._order: np.ndarray | None = None
        self._n_rows = 0
        self._pos = 0
        self._y: int | None = None
        self._bayes = float("nan")
        self._t = 0
        self._hidden = 0.0
        self._over = False
        self._last_line = ""
        self._trace = StepTrace()

    # ------------------------------------------------------------------ configuration
    def _set_synthetic_world(self, config: SyntheticReject) -> float:
        """Set the terms of a drawn world (the config checked them all); return the bound."""
        self.scenario, self.world_seed, self.noise = (
            config.scenario,
            config.world_seed,
            config.noise,
        )
        self.separation: float | None = config.separation
        self.dataset = self.data_home = None
        self.replacement = False
        self._data: DatasetStream | None = None
        self.dim, self.horizon = config.dim, int(config.horizon)  # type: ignore[arg-type]
        return FEATURE_BOUND

    def _set_dataset_world(self, config: DatasetReject) -> float:
        """Load the dataset's stream; return its bound."""
        self.scenario, self.world_seed = SYNTHETIC_ONLY["scenario"], None
        self.noise, self.separation = SYNTHETIC_ONLY["noise"], None
        #: the dataset's name (a record's own name), None for a synthetic world
        self.dataset, self.data_home = config.name, config.data_home
        self.replacement = config.replacement
        self._data, self.horizon = config.load()
        self.feature_names = self._data.feature_names
        self.dim = self._data.dim
        return self._data.bound

    # ------------------------------------------------------------------ dynamics
    def _advance(self) -> np.ndarray:
        """Move to the next example; return its observation."""
        data = self._data
        if data is not None:
            order = self._order
            if order is None or self._pos >= order.size:
                self._y = None  # the stream ran out: a placeholder inside the space
                return np.zeros(self.dim, dtype=np.float32)
            i = int(order[self._pos])
            self._pos += 1
            self._y = 1 if data.y[i] == 1 else -1
            return data.row(i)
        if self._pos >= self._n_rows:
            world = self._world
            if world is None:
                raise RuntimeError("call reset() before step()")
            self._x, self._labels, posterior = world.sample(CHUNK, self.np_random)
            self._chow = chow_risk(posterior, self.d)  # once per chunk, not per step
            self._n_rows, self._pos = CHUNK, 0
        i = self._pos
        self._pos += 1
        self._y = int(self._labels[i])
        self._bayes = float(self._chow[i])
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
        self._hidden = 0.0
        self._last_line = ""
        self._trace = StepTrace()
        oracle: dict[str, Any] = {}
        data = self._data
        if data is None:
            self._world = draw_world(
                self.dim,
                self.scenario,
                world_rng(self.world_seed, self.np_random),
                separation=self.separation if self.separation is not None else 0.0,
                noise=self.noise,
            )
            self._n_rows = 0  # the first step draws a chunk
            oracle["w"] = self._world.w.copy()
        else:
            self._order = draw_order(data, self.np_random, self.replacement, self.horizon)
        obs = self._advance()
        if self.render_mode is not None:
            self._last_line = (
                f"t={0:5d}  reset: first example x={context_text(obs)}  "
                f"d {self.d:g}  query_cost {self.query_cost:g}"
            )
        return obs, make_info({"d": self.d, "query_cost": self.query_cost}, oracle)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Decide the current example; reveal its label if asked for (or under full feedback)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._over:
            raise RuntimeError("the episode is over and its losses are settled; call reset()")
        decision, query = check_action(action)
        y = self._y
        if y is None:  # pragma: no cover - the episode ends with the last example
            raise RuntimeError("the episode's examples are used up; call reset()")
        risk = decision_loss(decision, y, self.d)
        loss = risk + self.query_cost * query
        revealed = query == 1 or self.feedback_mode == "full"
        if revealed:
            reward = -loss
        else:
            reward = 0.0
            self._hidden += loss
        self._t += 1
        terminated = self.n_steps is not None and self._t >= self.n_steps
        truncated = not terminated and self._t >= self.horizon
        settled = 0.0
        if (terminated or truncated) and self.settle == "episode_end":
            settled = self._hidden
            reward -= settled
        self._over = terminated or truncated
        feedback = {"revealed": revealed, "y": y if revealed else 0, "settled": settled}
        oracle = {
            "y": y,
            "loss": loss,
            "risk": risk,
            "misclassified": risk == 1.0,
            "rejected": decision == REJECT,
        }
        if self._data is None:
            oracle["bayes_risk"] = self._bayes
        if self.render_mode is not None:
            verdict = {PREDICT_NEGATIVE: "predict -1", REJECT: "reject    "}.get(
                decision, "predict +1"
            )
            line = (
                f"t={self._t:5d}  {verdict}  {'ask ' if query else 'skip'}  "
                f"y={y if revealed else '?':>2}  reward {reward:+.3f}"
            )
            if self.render_truth:
                line += f"  | truth: y={y:+d}  L_d {risk:.2f}"
            self._last_line = line
            self._trace.add(
                reward, loss, decision=decision, query=query, revealed=y if revealed else 0, truth=y
            )
        obs = self._advance()
        return obs, float(reward), terminated, truncated, make_info(feedback, oracle)

    def render(self) -> str | np.ndarray | None:
        """Render the last step as a text line, or the recent stream as an RGB image.

        What the agent was shown: each decision and query, the labels it
        asked for and the reward (with the settled lump at the end); the
        labels it did not ask for and the losses ``L_d`` only with
        ``render_truth=True``.
        """
        if self.render_mode == "ansi":
            return self._last_line
        if self.render_mode == "rgb_array":
            rows = [
                ("decision", self._trace.codes("decision"), DECISION_LEGEND),
                ("query", self._trace.codes("query"), QUERY_LEGEND),
                ("revealed y", self._trace.codes("revealed"), {**LABEL_LEGEND, 0: HIDDEN}),
            ]
            curves = [("cumulative reward", self._trace.total_reward())]
            if self.render_truth:
                rows.append(("true y", self._trace.codes("truth"), LABEL_LEGEND))
                curves.append(("cumulative loss", self._trace.total_loss()))
            return stream_image("reject option: the stream and the decisions", rows, curves)
        return None
