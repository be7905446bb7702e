"""OneSidedLending: approve applicants above a cutoff, see outcomes of approvals only."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import make_info
from osfb_gym.core.env import FeedbackEnv
from osfb_gym.core.links import get_link
from osfb_gym.core.seeding import check_world_seed, world_rng
from osfb_gym.core.validation import (
    check_binary_array,
    check_choice,
    check_data_home,
    check_float,
    check_int,
)
from osfb_gym.envs._render import check_render
from osfb_gym.envs.lending.data import (
    SCALINGS,
    DatasetWorld,
    dataset_world,
    stratified_split,
)
from osfb_gym.envs.lending.metrics import (
    LendingMetrics,
)
from osfb_gym.envs.lending.world import (
    FEATURE_BOUND,
    LendingWorld,
    draw_gaussian_world,
    draw_trap_world,
    gaussian_score_cutoff,
)

if TYPE_CHECKING:
    from osfb_gym.data import Dataset

# the family's pieces live by concern in world (synthetic worlds), data
# (datasets), metrics (scoring) and render; their public names are importable
# from here and from the package

SCENARIOS = ("gaussian", "greedy_trap")
FEEDBACK_MODES = ("one_sided", "full")
DEFAULT_CUTOFF_QUANTILE = 0.7
DEFAULT_DIM = 5  # synthetic worlds; a dataset has its own
DEFAULT_HORIZON = 2000  # synthetic worlds; a dataset's episode is its whole stream
DEFAULT_WARM_START = 20  # synthetic worlds: the paper's initial K pairs
DEFAULT_WARM_FRACTION = 0.05  # datasets: the paper's 5% stratified split
# Arguments that shape a synthetic world only, with their defaults: a dataset
# fixes features, beta* and outcomes, so a non-default value is an error there.
SYNTHETIC_ONLY = {
    "dim": None,
    "noise_std": None,
    "beta_norm": 2.0,
    "scenario": "gaussian",
    "tau": 0.1,
    "trap_probability": 0.1,
    "world_seed": None,
}


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
    | ``feedback["warm_start"]`` | agent    | ``{"X": (K, d), "y": (K,)}`` (reset)      |
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

    A dataset's world is fixed by its rows: ``beta*`` and the cutoff are
    computed once, when the env is made, and do not depend on any seed.
    Each reset draws, from the reset seed, the warm-start split and the
    order in which the other rows arrive, so the same reset seed and the
    same actions give the same trajectory.

    ## Episode End
    Truncation after ``horizon`` steps. Synthetic streams never terminate.

    A dataset's stream terminates (``terminated=True``) when its rows run
    out, after ``n_steps = (rows - warm_start) // batch_size`` steps. The
    ``n_dropped = (rows - warm_start) % batch_size`` rows that would not
    fill a last batch are left out of the episode (the last rows of the
    shuffled order, so a different random few each reset); both counts are
    public attributes. The observation returned with ``terminated=True`` is
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
    | ``noise_std``     | None (1.0)   | std of the Gaussian noise, ``link="linear"`` only (S) |
    | ``beta_norm``     | 2.0          | ``||beta*||``: scores N(0, 4), a fair credit model (S) |
    | ``scenario``      | "gaussian"   | "gaussian" or "greedy_trap" (Theorem 1) (S) |
    | ``tau``           | 0.1          | greedy trap: ``mu(v . beta*) = c + tau`` (S) |
    | ``trap_probability`` | 0.1       | greedy trap: probability that an applicant is ``v`` (S) |
    | ``world_seed``    | None         | fix the world across resets (S) |
    | ``feedback``      | "one_sided"  | "one_sided" or "full" |
    | ``dataset``       | None         | a name ``osfb_gym.data.load`` knows, or a record |
    | ``data_home``     | None         | folder of the dataset files (default: ``OSFB_DATA``) |
    | ``render_mode``   | None         | "ansi" or "rgb_array" |
    | ``render_truth``  | False        | renders also show hidden truth (see Rendering) |
    | ``encoding``      | None         | categoricals: "onehot" (None) or "native" (D) |
    | ``scaling``       | "standard"   | "standard" or "robust" (median/IQR) (D) |

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
    ``render_mode="ansi"`` returns a line about the last step,
    ``"rgb_array"`` a ``(256, 640, 3)`` ``uint8`` frame (matplotlib, Agg).
    The frame shows the recent applicants at their revealed outcomes
    (denied ones on the cutoff, their outcome hidden) and, for ``dim ==
    2``, the applicants in feature space with the boundary the decisions
    imply, else the cumulative reward. A render shows what the agent was
    shown; the true ``mu`` of every applicant, the hidden outcomes of
    denied ones, the true boundary and the one-sided loss appear only with
    ``render_truth=True``, the argument every family uses for it.

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

    ## Version History
    - v0: initial version; dataset-backed worlds added later (synthetic
      worlds unchanged). Later, with the same dynamics and scores (seeded
      random-action trajectories compared bit for bit): the warm start
      moved to ``info["feedback"]["warm_start"]`` (it was ``feedback["X"]``
      / ``["y"]``, whose ``y`` clashed with the step's); the spec reports
      ``max_episode_steps = horizon``; ``gym.make_vec`` gives Gymnasium's
      ``SyncVectorEnv`` (the shared-stream replicas are ``lockstep=True``);
      renders hide the truth unless ``render_truth=True``; ``dataset``
      takes a :class:`~osfb_gym.data.Dataset` record.

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
    >>> env.unwrapped.n_steps, env.unwrapped.n_dropped, env.unwrapped.horizon
    (54, 1, 54)

    Gymnasium knows the horizon, and a render hides the truth unless asked:

    >>> env = gym.make("OneSidedLending-v0", horizon=5, render_mode="ansi")
    >>> env.spec.max_episode_steps, gym.wrappers.TimeAwareObservation(env).max_timesteps
    (5, 5)
    >>> _ = env.reset(seed=0)
    >>> _ = env.step([0])
    >>> "truth" in env.render()
    False
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012
    metrics_class = LendingMetrics

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
    ) -> None:
        self.link = get_link(link)
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        # scores are x . beta*; past 1e6 they stop meaning anything and overflow downstream
        self.beta_norm = check_float(beta_norm, "beta_norm", low=0.0, high=1e6, low_inclusive=False)
        self.scenario = check_choice(scenario, "scenario", SCENARIOS)
        self.feedback_mode = check_choice(feedback, "feedback", FEEDBACK_MODES)
        self.world_seed = check_world_seed(world_seed)
        self.render_mode, self.render_truth = check_render(render_mode, render_truth)
        self.tau = check_float(tau, "tau", low=0.0, low_inclusive=False)
        self.trap_probability = check_float(
            trap_probability,
            "trap_probability",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
        )
        check_data_home(data_home, dataset)
        self.scaling = check_choice(scaling, "scaling", SCALINGS)
        if dataset is None and (encoding is not None or scaling != "standard"):
            raise ValueError(
                "encoding and scaling apply to a dataset only; a synthetic world draws "
                f"standardised features, got encoding={encoding!r}, scaling={scaling!r}"
            )
        record = None if dataset is None else self._resolve_dataset(dataset, data_home, encoding)
        #: the dataset's name (a record's own name), None for a synthetic world
        self.dataset = None if record is None else record.name
        self.data_home = data_home
        # a dataset's world is fixed by its rows: its features, outcomes and beta*
        self._data: DatasetWorld | None = None
        self.feature_names: tuple[str, ...] | None = None
        self._stratify = False
        #: rows of the stream left out because they do not fill a whole batch
        self.n_dropped = 0
        #: steps until a dataset's stream runs out (None: synthetic, never)
        self.n_steps: int | None = None
        if dataset is None:
            self.dim = DEFAULT_DIM if dim is None else check_int(dim, "dim", minimum=1)
            self.noise_std = self._check_noise_std(noise_std)
            self.warm_start = self._resolve_warm_start(warm_start, None)
            self.horizon = (
                DEFAULT_HORIZON if horizon is None else check_int(horizon, "horizon", minimum=1)
            )
        else:
            given = {
                "dim": dim,
                "noise_std": noise_std,
                "beta_norm": beta_norm,
                "scenario": scenario,
                "tau": tau,
                "trap_probability": trap_probability,
                "world_seed": world_seed,
            }
            for name, value in given.items():
                if value != SYNTHETIC_ONLY[name]:
                    raise ValueError(
                        f"{name} shapes synthetic worlds only; with dataset={self.dataset!r} the "
                        f"data fix the features, outcomes and beta*, got {name}={value!r}"
                    )
            assert record is not None
            self._data = dataset_world(record, self.link, self.scaling)
            self.feature_names = self._data.feature_names
            self._stratify = self._data.binary
            self.dim = self._data.X.shape[1]
            self.noise_std = 0.0
            n_rows = self._data.X.shape[0]
            self.warm_start = self._resolve_warm_start(warm_start, n_rows)
            stream = n_rows - self.warm_start
            self.n_steps, self.n_dropped = divmod(stream, self.batch_size)
            self.horizon = (
                self.n_steps
                if horizon is None
                else min(check_int(horizon, "horizon", minimum=1), self.n_steps)
            )
        self.cutoff = self._resolve_cutoff(cutoff, cutoff_quantile)
        if self.scenario == "greedy_trap":
            if self.dim < 2:
                raise ValueError(f"dim must be >= 2 for scenario='greedy_trap', got {self.dim}")
            if self.link.name == "logistic" and self.cutoff + self.tau >= 1.0:
                raise ValueError(
                    f"tau must keep cutoff + tau below 1 for link='logistic'; "
                    f"cutoff is {self.cutoff:.4f}, got tau={self.tau}"
                )

        bound = FEATURE_BOUND if self._data is None else self._data.bound
        self.observation_space = spaces.Box(
            -bound, bound, shape=(self.batch_size, self.dim), dtype=np.float32
        )
        self.action_space = spaces.MultiBinary(self.batch_size)
        self._action_shape = (self.batch_size,)
        self._logistic = self.link.name == "logistic"

        self._world: LendingWorld | None = None
        self._order = np.empty((0, self.batch_size), dtype=np.intp)
        self._x = np.empty((0, self.dim))
        self._mu = np.empty(0)
        self._y = np.empty(0)
        self._t = 0
        self._history: list[_Step] = []
        self._last_line = ""

    # ------------------------------------------------------------------ configuration
    @staticmethod
    def _resolve_dataset(dataset: Any, data_home: str | None, encoding: str | None) -> Dataset:
        """Return the tabular record of ``dataset``: a name loaded, or a record of one's own."""
        # imported here: the data layer pulls in scikit-learn and pandas, which a
        # synthetic world never needs
        from osfb_gym.data import Dataset, load

        if isinstance(dataset, str):
            options: dict[str, Any] = {} if encoding is None else {"encoding": encoding}
            record = load(dataset, data_home=data_home, **options)
        elif encoding is not None:
            raise ValueError(
                "encoding applies to a dataset given by name (the loader encodes it); "
                f"a record is already numeric, got encoding={encoding!r}"
            )
        elif isinstance(dataset, Dataset):
            record = dataset
        else:
            raise TypeError(
                f"dataset must be a name (str), a Dataset record or None, got {dataset!r} "
                f"({type(dataset).__name__})"
            )
        if not isinstance(record, Dataset):
            raise ValueError(
                f"dataset {dataset!r} is not a table of features and outcomes "
                f"({type(record).__name__}); lending needs a tabular Dataset"
            )
        return record

    def _check_noise_std(self, noise_std: float | None) -> float:
        if noise_std is None:
            return 1.0 if self.link.name == "linear" else 0.0
        if self.link.name == "logistic":
            raise ValueError(
                "noise_std applies to link='linear' only; logistic outcomes are Bernoulli "
                f"draws with no extra noise, got noise_std={noise_std!r}"
            )
        return check_float(noise_std, "noise_std", low=0.0)

    def _resolve_warm_start(self, warm_start: int | float | None, n_rows: int | None) -> int:
        """Return ``K``; ``n_rows`` is the dataset's size, None for a synthetic world."""
        if warm_start is None:
            if n_rows is None:
                return DEFAULT_WARM_START
            warm_start = DEFAULT_WARM_FRACTION
        if isinstance(warm_start, bool) or not isinstance(warm_start, Real):
            raise TypeError(
                f"warm_start must be a count (int) or, with a dataset, a fraction (float), "
                f"got {warm_start!r} ({type(warm_start).__name__})"
            )
        if isinstance(warm_start, Integral):
            count = check_int(warm_start, "warm_start", minimum=0)
        elif n_rows is None:
            raise ValueError(
                "warm_start as a fraction (float) needs a dataset; a synthetic world "
                f"takes a count (int), got warm_start={warm_start!r}"
            )
        else:
            fraction = check_float(
                warm_start,
                "warm_start",
                low=0.0,
                high=1.0,
                low_inclusive=False,
                high_inclusive=False,
            )
            count = int(np.floor(fraction * n_rows))  # scikit-learn's train_size rounding
        if n_rows is not None and n_rows - count < self.batch_size:
            raise ValueError(
                f"warm_start must leave at least one batch of batch_size={self.batch_size} "
                f"of the {n_rows} rows of dataset {self.dataset!r} to stream, got "
                f"warm_start={warm_start!r} ({count} rows)"
            )
        return count

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
        if self._data is not None:
            return float(np.quantile(self._data.mu, quantile))
        cutoff = gaussian_score_cutoff(self.link, self.beta_norm, quantile)
        if self.link.name == "logistic" and not 0.0 < cutoff < 1.0:
            # expit saturates: every applicant would sit on one side of the cutoff
            raise ValueError(
                f"beta_norm={self.beta_norm!r} with cutoff_quantile={quantile!r} puts the "
                f"logistic cutoff at {cutoff!r}, where no applicant beats it; use a beta_norm "
                "of at most about 30 (scores of standard-normal features times beta_norm)"
            )
        return cutoff

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
        return self._draw_observed(n)[1:]

    def _draw_observed(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``n`` applicants: float32 features, float64 features, ``mu`` and ``y``."""
        world = self._world
        if world is None:
            raise RuntimeError("call reset() before step()")
        observed, x = world.sample_observed(n, self.np_random)
        mu = np.asarray(self.link.mean(x @ world.beta), dtype=float)
        if self._logistic:
            y = (self.np_random.random(n) < mu).astype(float)
        else:
            y = mu + self.noise_std * self.np_random.standard_normal(n)
        return observed, x, mu, y

    def _next_batch(self) -> np.ndarray:
        data = self._data
        if data is None:
            observed, self._x, self._mu, self._y = self._draw_observed(self.batch_size)
            return observed
        if self._t >= self._order.shape[0]:
            # the stream ran out: a placeholder inside the space, no applicant
            self._x = np.zeros((0, self.dim), dtype=np.float32)
            self._mu = self._y = np.empty(0)
            return np.zeros((self.batch_size, self.dim), dtype=np.float32)
        rows = self._order[self._t]
        self._x, self._mu, self._y = data.X[rows], data.mu[rows], data.y[rows]
        return self._x.copy()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw a world (unless fixed), the warm-start sample and the first batch."""
        super().reset(seed=seed, options=options)
        self._t = 0
        self._history = []
        self._last_line = ""
        data = self._data
        if data is None:
            self._world = self._draw_world(world_rng(self.world_seed, self.np_random))
            warm_x, _, warm_y = self._draw_applicants(self.warm_start)
            warm_x = warm_x.astype(np.float32)
        else:
            self._world = LendingWorld(beta=np.array(data.beta))
            warm, stream = stratified_split(
                data.y, self.warm_start, self.np_random, stratify=self._stratify
            )
            # the last n_dropped rows of the shuffled stream: a uniformly random subset
            steps = len(stream) // self.batch_size
            self._order = stream[: steps * self.batch_size].reshape(steps, self.batch_size)
            warm_x, warm_y = data.X[warm], data.y[warm]
        obs = self._next_batch()
        feedback = {
            "warm_start": {"X": warm_x, "y": warm_y},
            "cutoff": self.cutoff,
            "link": self.link.name,
        }
        return obs, make_info(feedback, {"beta": self._world.beta.copy()})

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Decide the current batch; reveal what the feedback mode reveals."""
        if self._world is None:
            raise RuntimeError("call reset() before step()")
        if self._mu.size == 0:
            raise RuntimeError(
                f"the stream of dataset {self.dataset!r} is exhausted; call reset() "
                "for a new episode"
            )
        action = self._check_action(action)
        # revealed_reward, bayes_decision and one_sided_loss, inlined: the same
        # arithmetic in fewer calls (this is every step of every episode)
        mu, y, cutoff = self._mu, self._y, self.cutoff
        approved = action == 1
        revealed = approved.copy() if self.feedback_mode == "one_sided" else np.ones_like(approved)
        if self.batch_size == 1:
            # one applicant: the same IEEE operations on Python floats (a sum of one
            # term is the term), without a dozen calls on arrays of one element
            one_mu, one_y, accept = mu.item(), y.item(), bool(approved[0])
            reward = one_y - cutoff if accept else 0.0
            bayes_one = one_mu > cutoff
            loss = abs(one_mu - cutoff) if bayes_one != accept else 0.0
            shown = one_y if revealed[0] else 0.0
            feedback = {"revealed": revealed, "y": np.array([shown])}
            bayes = np.array([bayes_one], dtype=np.int8)
        else:
            reward = float(np.where(approved, y - cutoff, 0.0).sum())
            above = mu > cutoff
            loss = float((np.abs(mu - cutoff) * (above != approved)).sum())
            feedback = {"revealed": revealed, "y": np.where(revealed, y, 0.0)}
            bayes = above.astype(np.int8)
        oracle = {"mu": mu, "y": y, "bayes_action": bayes, "loss": loss}
        if self.render_mode is not None:
            self._record(action, revealed, reward, loss)
        obs, terminated, truncated = self._advance()
        return obs, reward, terminated, truncated, make_info(feedback, oracle)

    def _check_action(self, action: Any) -> np.ndarray:
        """:func:`check_binary_array` of ``action``, with a fast path for integer arrays."""
        if (
            type(action) is np.ndarray
            and action.shape == self._action_shape
            and action.dtype.kind in "biu"
        ):
            if action.size == 1:
                if action.item() in (0, 1):
                    return action.astype(np.int8)
            elif ((action == 0) | (action == 1)).all():
                return action.astype(np.int8)
        return check_binary_array(action, "action", self._action_shape)

    def _advance(self) -> tuple[np.ndarray, bool, bool]:
        """Move on to the next batch: its observation, and (terminated, truncated)."""
        self._t += 1
        terminated = self.n_steps is not None and self._t >= self.n_steps
        truncated = not terminated and self._t >= self.horizon
        return self._next_batch(), terminated, truncated

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
    def _record(self, action: np.ndarray, revealed: np.ndarray, reward: float, loss: float) -> None:
        previous = self._history[-1] if self._history else None
        step = _Step(
            x=self._x,
            action=action,
            revealed=revealed,
            y=np.where(revealed, self._y, np.nan),
            total_reward=(previous.total_reward if previous else 0.0) + reward,
            # hidden truth, kept only for a render that asks for it
            mu=self._mu if self.render_truth else None,
            total_loss=(previous.total_loss if previous else 0.0) + loss * self.render_truth,
        )
        self._history.append(step)
        line = (
            f"t={self._t + 1:4d}  approved {int(action.sum()):3d}/{self.batch_size}  "
            f"revealed y={np.round(self._y[revealed], 2).tolist()}  "
            f"reward {reward:.3f}  cumulative {step.total_reward:.3f}"
        )
        if self.render_truth:
            line += (
                f"  | truth: hidden y={np.round(self._y[~revealed], 2).tolist()}  "
                f"one-sided loss {loss:.3f}  cumulative {step.total_loss:.3f}"
            )
        self._last_line = line

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


@dataclass(frozen=True)
class _Step:
    """One decided batch, as a render remembers it."""

    x: np.ndarray
    action: np.ndarray
    revealed: np.ndarray
    y: np.ndarray  # revealed outcomes, NaN where hidden
    total_reward: float
    mu: np.ndarray | None  # render_truth only
    total_loss: float
