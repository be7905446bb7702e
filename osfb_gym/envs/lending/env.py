"""OneSidedLending: approve applicants above a cutoff, see outcomes of approvals only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import FEEDBACK, make_info
from osfb_gym.core.env import FeedbackEnv, episode_over
from osfb_gym.core.seeding import world_rng
from osfb_gym.core.validation import (
    RenderModes,
)
from osfb_gym.envs._render import check_render
from osfb_gym.envs.lending.config import (
    ARGUMENTS,
    DATASET_ONLY,
    SYNTHETIC_ONLY,
    DatasetLending,
    SyntheticLending,
    lending_config,
    resolve_cutoff,
    resolve_warm_start,
)
from osfb_gym.envs.lending.data import (
    DatasetWorld,
    dataset_batch,
    dataset_world,
    stratified_split,
    stream_batches,
    stream_steps,
)
from osfb_gym.envs.lending.metrics import LendingMetrics, check_decisions, score_batch
from osfb_gym.envs.lending.render import Step, record_step, reset_line
from osfb_gym.envs.lending.world import (
    FEATURE_BOUND,
    LendingWorld,
    draw_world,
)

if TYPE_CHECKING:
    from osfb_gym.data import Dataset

_Step = tuple[np.ndarray, float, bool, bool, dict[str, Any]]

# the family's pieces live by concern: world (synthetic worlds), data (datasets,
# the stream's batches), options (arguments and their checks), metrics (scoring)
# and render; their public names are importable from the package


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

    With ``dataset`` set, the world is a real dataset, as in Section 8 of
    the paper: the applicants are its rows in a seeded random order, the
    outcomes are its labels, and ``beta*`` is the model (OLS or logistic)
    fitted on every row, so ``mu(x . beta*)`` and the cutoff are measured
    against the best linear model of the data.

    ## Action Space
    ``MultiBinary(batch_size)``: entry ``i`` is 1 to approve applicant
    ``i`` of the current batch, 0 to deny. Integer, boolean or float arrays
    are accepted if every entry is exactly 0 or 1.

    ## Observation Space
    ``Box(-B, B, (batch_size, dim), float32)``.

    | Index     | Observation                        |
    |-----------|------------------------------------|
    | ``[i, j]``| feature ``j`` of applicant ``i``   |

    Synthetic worlds: ``B = 10``. Features model standardised applicant
    attributes: standard normal, truncated at +-10 (bounded covariates,
    Assumption 2 of the paper).

    Datasets: every column of the data is standardised over all rows
    (mean 0, standard deviation 1; a constant column becomes 0) and a
    constant column ``"intercept"`` of ones is appended last, so ``dim`` is
    the dataset's number of features plus one (``feature_names`` lists
    them). The agents fit ``mu(x . beta)`` with no separate intercept, and
    the paper's scikit-learn fits had one: the ones column carries it.
    ``B`` is the largest ``|feature|`` of the dataset, so every row fits:
    a rare one-hot category standardises far beyond 10 (about
    ``sqrt(n)`` for a category seen once). The bound is finite, which
    Gymnasium's and stable-baselines3's checkers accept without warning.

    ## Feedback
    After a step, ``info["feedback"]`` holds ``"revealed"``, a boolean
    mask over the batch just decided, ``"y"``, the batch's outcomes
    where revealed and 0.0 elsewhere (read ``y[revealed]``), and
    ``"valid"``, a boolean mask of the rows that are real applicants: all
    True except in a dataset's last, partial batch (see Episode End). The
    placeholder is a constant, so it carries nothing about the hidden
    outcome; it is not NaN because Gymnasium's checker compares infos
    with ``==`` (NaN != NaN), and arrays keep one shape so that vector
    envs can stack the infos. With
    ``feedback="one_sided"`` (default) an outcome is revealed exactly when
    the applicant was approved; ``feedback="full"`` reveals all of them
    (the full-information comparison). At reset ``info["feedback"]`` holds
    the warm-start sample, ``warm_start`` applicants approved at random
    before the episode, with their outcomes revealed, under its own key:
    ``"warm_start": {"X": (K, dim) float32, "y": (K,) float64}``, and the
    task's public terms, ``"cutoff"`` and ``"link"``. Every value has a
    shape fixed by the arguments, so the infos of sub-envs out of step
    stack in any vector env. For a
    dataset the warm-start sample is the paper's stratified split: a
    random ``warm_start`` share of the rows (5% by default) with the same
    share of each class; those rows are never streamed.

    ## Rewards
    The profit of the approved applicants, ``sum_{i: a_i = 1} (y_i - c)``.
    Denied applicants give 0, whatever their hidden outcome.

    ## Info
    | key                   | channel        | content                                   |
    |-----------------------|----------------|-------------------------------------------|
    | ``feedback["y"]``     | agent          | outcomes where revealed, 0 elsewhere      |
    | ``feedback["revealed"]`` | agent       | mask of revealed outcomes (step)          |
    | ``feedback["valid"]`` | agent          | mask of real applicants, False on padding (step) |
    | ``feedback["warm_start"]`` | agent    | ``{"X": (K, d), "y": (K,)}`` (reset)      |
    | ``feedback["cutoff"]``, ``["link"]`` | agent | the task's terms (reset)          |
    | ``oracle["mu"]``      | evaluator only | ``mu(x . beta*)`` of the batch            |
    | ``oracle["y"]``       | evaluator only | every outcome of the batch                |
    | ``oracle["bayes_action"]`` | evaluator only | ``1{mu > c}``                       |
    | ``oracle["loss"]``    | evaluator only | one-sided loss ``r_t`` (Definition 1)     |
    | ``oracle["beta"]``    | evaluator only | ``beta*`` (reset)                         |

    ## Hidden State
    The current batch's outcomes ``_y`` (all of them, revealed or not) and
    ``mu(x . beta*)`` ``_mu``, set when the batch is drawn. They are private
    and documented as the seam of the no-leak probe
    (``tests/osfb_gym/envs/hidden.py``), which overwrites the unapproved
    outcomes in ``_y`` before a step to prove that nothing the agent sees
    depends on them.

    ## Starting State
    A world (``beta*`` and, for ``scenario="greedy_trap"``, the direction
    ``v``) is drawn at each reset from the reset seed, or fixed by
    ``world_seed``. The first batch is drawn from the reset seed.

    A dataset's world is fixed by its rows: ``beta*`` and the cutoff are
    computed once, when the env is made, and do not depend on any seed.
    Each reset draws, from the reset seed, the warm-start split and the
    order in which the other rows arrive, so the same reset seed and the
    same actions give the same trajectory.

    ## Episode End
    Truncation after ``horizon`` steps. Synthetic streams never terminate.

    A dataset's stream terminates (``terminated=True``) when its rows run
    out, after ``n_steps = ceil((rows - warm_start) / batch_size)`` steps:
    every row but the warm start is decided once, as in the paper. When
    ``batch_size`` does not divide ``rows - warm_start``, the last batch is
    partial: its real applicants come first, then ``n_padded`` rows of
    padding (all-zero features) that fill the fixed observation and action
    shapes. Padding is never revealed (even with ``feedback="full"``),
    never rewarded and never scored (no one-sided loss, not counted by the
    metrics), whatever the action; ``feedback["valid"]`` is False on it,
    so an agent can ignore it (an agent that learns from revealed rows
    only ignores it already). ``last_batch="drop"`` leaves those rows out
    instead, the behaviour before this option (``n_steps`` is then
    ``(rows - warm_start) // batch_size`` and ``n_dropped`` the rows left
    out, the last of the shuffled order, so a different random few each
    reset). ``n_steps``, ``n_padded`` and ``n_dropped`` are public
    attributes. The observation returned with ``terminated=True`` is
    all zeros, there being no applicant left; stepping again raises
    ``RuntimeError``. A ``horizon`` shorter than the stream truncates the
    episode there (``truncated=True``) with the next real batch as the
    observation; a longer one is capped at ``n_steps``, so ``horizon`` is
    always the episode's length.

    ## Arguments
    | argument          | default      | meaning |
    |-------------------|--------------|------------------------------------------------------------|
    | ``link``          | "logistic"   | "linear" (OLS world) or "logistic" (Bernoulli outcomes) |
    | ``dim``           | None (5)     | number of features ``d`` (S) |
    | ``batch_size``    | 1            | applicants per step ``N`` (one application at a time) |
    | ``horizon``       | None         | steps per episode ``T``: 2000, or a whole dataset |
    | ``cutoff``        | None         | the cutoff ``c`` as a value |
    | ``cutoff_quantile`` | None (0.7) | ``c`` at this quantile of ``mu`` (the paper's 50%/70%) |
    | ``warm_start``    | None         | warm-start sample: 20 rows, or 5% of a dataset |
    | ``noise_std``     | None (1.0)   | Gaussian noise std (<= 1e6), ``link="linear"`` only (S) |
    | ``beta_norm``     | 2.0          | ``||beta*||``: scores N(0, 4), a fair credit model (S) |
    | ``scenario``      | "gaussian"   | "gaussian" or "greedy_trap" (Theorem 1) (S) |
    | ``tau``           | 0.1          | greedy trap only: ``mu(v . beta*) = c + tau`` (S) |
    | ``trap_probability`` | 0.1       | greedy trap only: probability of applicant ``v`` (S) |
    | ``world_seed``    | None         | fix the world across resets (S) |
    | ``feedback``      | "one_sided"  | "one_sided" or "full" |
    | ``dataset``       | None         | a name ``osfb_gym.data.load`` knows, or a record |
    | ``data_home``     | None         | folder of the dataset files (default: ``OSFB_DATA``) |
    | ``render_mode``   | None         | "ansi" or "rgb_array" |
    | ``render_truth``  | False        | renders also show hidden truth (see Rendering) |
    | ``encoding``      | None         | categoricals: "onehot" (None) or "native" (D) |
    | ``scaling``       | "standard"   | "standard" or "robust" (median/IQR) (D) |
    | ``last_batch``    | "pad"        | a partial last batch: "pad" it or "drop" its rows (D) |
    | ``config``        | None         | a ``SyntheticLending`` or ``DatasetLending`` instead |

    The arguments build a frozen, checked config
    (:mod:`osfb_gym.envs.lending.config`): ``SyntheticLending`` without
    ``dataset`` (arguments (S)), ``DatasetLending`` with it (arguments
    (D)); ``env.config`` is it, and ``config=`` takes one made beforehand
    (every other argument then keeps its default).

    Give at most one of ``cutoff`` and ``cutoff_quantile``; with neither,
    the cutoff is the 70% quantile of ``mu`` (the lender approves the best
    30%). In the greedy trap the quantile is taken over the ordinary
    applicants, so ``v``'s place above the cutoff is set by ``tau`` alone;
    for a dataset it is ``np.quantile`` of ``mu(x . beta*)`` over all rows.
    ``horizon`` lives in the env rather than in ``max_episode_steps``
    because agents (the paper's ``rho_t``) may need ``T``.

    ``warm_start`` is a count of rows (int) or, with a dataset, a fraction
    of its rows (float in (0, 1), rounded down as scikit-learn's
    ``train_size`` is); the default is 20 rows for a synthetic world and
    0.05 for a dataset.

    With a dataset, ``beta*`` is fitted on all rows (:func:`fit_beta`):
    by least squares for ``link="linear"`` (on the labels, as the paper's
    Table 1; the minimum-norm solution copes with one-hot columns
    collinear with the intercept), and by scikit-learn's
    ``LogisticRegression`` with its defaults (L2, ``C=1.0``, unpenalised
    intercept) for ``link="logistic"``: the paper's own fit. Arguments
    marked (S) shape a synthetic world only; giving one a
    non-default value together with ``dataset`` raises ``ValueError``,
    ``world_seed`` included, since the data fix the world. An unknown
    dataset name raises the loader's error. Arguments marked (D) apply to a
    dataset only: ``encoding`` is the loader's option (one 0/1 column per
    category, or one integer-code column per categorical attribute; see
    :func:`osfb_gym.data.tabular.encode`), for a dataset given by name;
    ``scaling="robust"`` centres each column at its median and divides it
    by its interquartile range, so a few outliers (EEG) do not squeeze the
    bulk of a column towards 0 as they do a standard deviation.

    ## Rendering
    ``render_mode="ansi"`` returns a line about the last step (right after
    a reset: what the agent is shown first, the first batch of applicants,
    the warm start's size and the cutoff),
    ``"rgb_array"`` a ``(256, 640, 3)`` ``uint8`` frame (matplotlib, Agg).
    The frame shows the recent applicants at their revealed outcomes
    (denied ones on the cutoff, their outcome hidden) and, for ``dim ==
    2``, the applicants in feature space with the boundary the decisions
    imply, else the cumulative reward. A render shows what the agent was
    shown; the true ``mu`` of every applicant, the hidden outcomes of
    denied ones, the true boundary and the one-sided loss appear only with
    ``render_truth=True``, the argument every family uses for it
    (fixed when the env is made: ``env.render_truth`` is read-only).

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
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021.

    Examples
    --------
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = gym.make("OneSidedLending-v0", batch_size=10)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.action_space
    ((10, 5), MultiBinary(10))
    >>> sorted(info["feedback"]), info["feedback"]["warm_start"]["X"].shape
    (['cutoff', 'link', 'warm_start'], (20, 5))
    >>> obs, reward, terminated, truncated, info = env.step([1] * 5 + [0] * 5)
    >>> info["feedback"]["revealed"].tolist()
    [True, True, True, True, True, False, False, False, False, False]
    >>> sorted(info["oracle"])
    ['bayes_action', 'loss', 'mu', 'y']

    A dataset-backed world (scikit-learn's breast-cancer data, 569 rows):

    >>> env = gym.make("OneSidedLending-v0", dataset="breast_cancer", batch_size=10)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, info["feedback"]["warm_start"]["X"].shape, env.unwrapped.feature_names[-1]
    ((10, 31), (28, 31), 'intercept')
    >>> env.unwrapped.n_steps, env.unwrapped.n_padded, env.unwrapped.horizon
    (55, 9, 55)

    Gymnasium knows the horizon, and a render hides the truth unless asked:

    >>> env = gym.make("OneSidedLending-v0", horizon=5, render_mode="ansi")
    >>> env.spec.max_episode_steps, gym.wrappers.TimeAwareObservation(env).max_timesteps
    (5, 5)
    >>> _ = env.reset(seed=0)
    >>> _ = env.step([0])
    >>> "truth" in env.render()
    False
    """

    metadata = {"render_modes": RenderModes(["ansi", "rgb_array"]), "render_fps": 4}  # noqa: RUF012
    metrics_class = LendingMetrics
    #: the dataset's name (a record's own name), None for a synthetic world
    dataset: str | None
    data_home: str | None
    scaling: str
    last_batch: str

    def __init__(
        self,
        link: str = "logistic",
        dim: int | None = None,
        batch_size: int = 1,
        horizon: int | None = None,
        cutoff: float | None = None,
        cutoff_quantile: float | None = None,
        warm_start: int | float | None = None,
        noise_std: float | None = None,
        beta_norm: float = 2.0,
        scenario: str = "gaussian",
        tau: float = 0.1,
        trap_probability: float = 0.1,
        world_seed: int | None = None,
        feedback: str = "one_sided",
        dataset: str | Dataset | None = None,
        data_home: str | None = None,
        render_mode: str | None = None,
        render_truth: bool = False,
        encoding: str | None = None,
        scaling: str = "standard",
        last_batch: str = "pad",
        *,
        config: SyntheticLending | DatasetLending | None = None,
    ) -> None:
        # the keyword arguments build the config (or must keep their defaults beside one)
        arguments = {name: value for name, value in locals().items() if name in ARGUMENTS}
        self.config = config = lending_config(config, **arguments)
        self.link = config.link_function
        self.batch_size = config.batch_size
        self.feedback_mode = config.feedback
        self.render_mode, self.render_truth = check_render(render_mode, render_truth)
        #: rows of the stream left out because they do not fill a whole batch
        #: (``last_batch="drop"``; 0 with the default ``"pad"``)
        self.n_dropped = 0
        #: padding rows in a dataset's last, partial batch (``last_batch="pad"``)
        self.n_padded = 0
        #: steps until a dataset's stream runs out (None: synthetic, never)
        self.n_steps: int | None = None
        if isinstance(config, DatasetLending):
            self._set_dataset_world(config)
        else:
            self._set_synthetic_world(config)
        bound = FEATURE_BOUND if self._data is None else self._data.bound
        self.observation_space = spaces.Box(
            -bound, bound, shape=(self.batch_size, self.dim), dtype=np.float32
        )
        self.action_space = spaces.MultiBinary(self.batch_size)
        self._action_shape = (self.batch_size,)
        self._logistic = self.link.name == "logistic"
        self._one_sided = self.feedback_mode == "one_sided"
        # every batch but a padded last one: all rows real (shared, read-only)
        self._all_valid = np.ones(self.batch_size, dtype=bool)
        self._all_valid.flags.writeable = False

        self._world: LendingWorld | None = None
        self._order = np.empty((0, self.batch_size), dtype=np.intp)
        self._last_rows = np.empty(0, dtype=np.intp)
        self._x = np.empty((0, self.dim))
        self._mu = np.empty(0)
        self._y = np.empty(0)
        self._valid = self._all_valid
        self._t = 0
        self._over = False
        self._history: list[Step] = []
        self._last_line = ""

    def _set_synthetic_world(self, config: SyntheticLending) -> None:
        """Set the terms of a drawn world (the config checked them all)."""
        self.beta_norm, self.scenario, self.world_seed = (
            config.beta_norm,
            config.scenario,
            config.world_seed,
        )
        self.tau, self.trap_probability = config.tau, config.trap_probability
        self.dataset = self.data_home = None
        self.scaling, self.last_batch = DATASET_ONLY["scaling"], DATASET_ONLY["last_batch"]
        self._data: DatasetWorld | None = None
        self.feature_names: tuple[str, ...] | None = None
        self._stratify = False
        self.dim, self.noise_std = config.dim, config.outcome_noise()
        self.warm_start = int(config.warm_start)  # type: ignore[arg-type]  # a count, checked
        self.horizon: int = config.horizon  # type: ignore[assignment]  # resolved by the config
        self.cutoff = config.resolved_cutoff()

    def _set_dataset_world(self, config: DatasetLending) -> None:
        """Load the dataset and fit its world: ``beta*``, the cutoff, the stream's length."""
        # the synthetic worlds' terms, at their defaults (the data fix the world)
        self.beta_norm, self.scenario, self.world_seed = (
            SYNTHETIC_ONLY["beta_norm"],
            SYNTHETIC_ONLY["scenario"],
            None,
        )
        self.tau, self.trap_probability = SYNTHETIC_ONLY["tau"], SYNTHETIC_ONLY["trap_probability"]
        self.scaling, self.last_batch = config.scaling, config.last_batch
        record = config.load()
        self.dataset, self.data_home = record.name, config.data_home
        # a dataset's world is fixed by its rows: its features, outcomes and beta*
        self._data = dataset_world(record, self.link, self.scaling)
        self.feature_names = self._data.feature_names
        self._stratify = self._data.binary
        self.dim = self._data.X.shape[1]
        self.noise_std = 0.0
        n_rows = self._data.X.shape[0]
        self.warm_start = resolve_warm_start(
            config.warm_start,
            n_rows,
            batch_size=self.batch_size,
            last_batch=self.last_batch,
            dataset=self.dataset,
        )
        self.n_steps, self.n_dropped, self.n_padded = stream_steps(
            n_rows - self.warm_start, self.batch_size, self.last_batch
        )
        self.horizon = self.n_steps if config.horizon is None else min(config.horizon, self.n_steps)
        self.cutoff = resolve_cutoff(
            config.cutoff,
            config.cutoff_quantile,
            self.link,
            data_mu=self._data.mu,
            beta_norm=self.beta_norm,
        )

    # ------------------------------------------------------------------ dynamics
    def _next_batch(self) -> np.ndarray:
        data = self._data
        if data is None:
            assert self._world is not None
            observed, self._x, self._mu, self._y = self._world.sample_batch(
                self.batch_size, self.link, self.noise_std, self.np_random
            )
            return observed
        self._x, self._mu, self._y, valid = dataset_batch(
            data, self._order, self._last_rows, self._t, self.batch_size
        )
        self._valid = self._all_valid if valid is None else valid
        if self._mu.size == 0:
            # the stream ran out: a placeholder inside the space, no applicant
            return np.zeros((self.batch_size, self.dim), dtype=np.float32)
        # a fresh copy of the rows (dataset_batch's own): the render's copy only if it keeps one
        return self._x if self.render_mode is None else self._x.copy()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw a world (unless fixed), the warm-start sample and the first batch."""
        super().reset(seed=seed, options=options)
        self._t = 0
        self._over = False
        self._history = []
        self._last_line = ""
        self._valid = self._all_valid
        data = self._data
        if data is None:
            self._world = draw_world(
                self.scenario,
                self.dim,
                self.beta_norm,
                self.link,
                self.cutoff,
                self.tau,
                self.trap_probability,
                world_rng(self.world_seed, self.np_random),
            )
            warm_x, _, _, warm_y = self._world.sample_batch(
                self.warm_start, self.link, self.noise_std, self.np_random
            )
        else:
            self._world = LendingWorld(beta=np.array(data.beta))
            warm, stream = stratified_split(
                data.y, self.warm_start, self.np_random, stratify=self._stratify
            )
            # the last rows of the shuffled stream (partial batch, or dropped): a
            # uniformly random subset
            self._order, self._last_rows = stream_batches(stream, self.batch_size, self.last_batch)
            warm_x, warm_y = data.X[warm], data.y[warm]
        obs = self._next_batch()
        feedback = {
            "warm_start": {"X": warm_x, "y": warm_y},
            "cutoff": self.cutoff,
            "link": self.link.name,
        }
        if self.render_mode is not None:
            self._last_line = reset_line(obs, len(warm_y), self.cutoff)
        return obs, make_info(feedback, {"beta": self._world.beta.copy()})

    def step(self, action: Any) -> _Step:
        """Decide the current batch; reveal what the feedback mode reveals."""
        return self._step(action, True)

    def step_without_oracle(self, action: Any) -> _Step:
        """:meth:`step` with no oracle built (a subclass's own ``step`` is kept)."""
        if type(self).step is not OneSidedLendingEnv.step:
            return super().step_without_oracle(action)
        return self._step(action, False)

    def _step(self, action: Any, with_oracle: bool) -> _Step:
        if self._world is None:
            raise RuntimeError("call reset() before step()")
        if self._mu.size == 0:
            raise RuntimeError(
                f"the stream of dataset {self.dataset!r} is exhausted; call reset() "
                "for a new episode"
            )
        if self._over:
            raise RuntimeError(episode_over(self._t, self._t == self.n_steps))
        action = check_decisions(action, self._action_shape)
        mu, y, valid = self._mu, self._y, self._valid
        reward, loss, feedback, bayes = score_batch(
            mu, y, self.cutoff, action, valid, self._one_sided, valid is self._all_valid
        )
        if self.render_mode is not None:
            self._last_line = record_step(
                self._history,
                self._t + 1,
                (self._x, mu, y, valid),
                action,
                feedback["revealed"],
                reward,
                loss,
                self.render_truth,
            )
        obs, terminated, truncated = self._advance()
        self._over = terminated or truncated
        if not with_oracle:
            return obs, reward, terminated, truncated, {FEEDBACK: feedback}
        oracle = {"mu": mu, "y": y, "bayes_action": bayes, "loss": loss}
        return obs, reward, terminated, truncated, make_info(feedback, oracle)

    def _advance(self) -> tuple[np.ndarray, bool, bool]:
        """Move on to the next batch: its observation, and (terminated, truncated)."""
        self._t += 1
        terminated = self.n_steps is not None and self._t >= self.n_steps
        truncated = not terminated and self._t >= self.horizon
        return self._next_batch(), terminated, truncated

    # ------------------------------------------------------------------ rendering
    def render(self) -> str | np.ndarray | None:
        """Render the last step as a text line or the recent ones as an RGB image.

        What the agent was shown (the applicants, the decisions, the revealed
        outcomes, the reward); the true ``mu``, ``beta*`` and one-sided loss
        only with ``render_truth=True``.
        """
        if self.render_mode == "ansi":
            return self._last_line
        if self.render_mode == "rgb_array":
            from osfb_gym.envs.lending.render import render_rgb

            beta = None if self._world is None or not self.render_truth else self._world.beta
            return render_rgb(self._history, self.cutoff, self.link, beta, self.render_truth)
        return None
