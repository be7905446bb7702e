"""The lending vector env: each sub-env is a single env with its seed and actions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.envs.lending.vector import OneSidedLendingVectorEnv
from tests.helpers import EPS, assert_close, assert_episodes_agree, eps_of_largest

ID = "OneSidedLending-v0"

SETTINGS = [
    pytest.param(dict(horizon=40, batch_size=3), id="synthetic"),
    pytest.param(dict(horizon=40, link="linear", feedback="full"), id="synthetic-full"),
    pytest.param(dict(scenario="greedy_trap", horizon=30, batch_size=2), id="trap"),
    pytest.param(dict(dataset="breast_cancer", link="linear", batch_size=4), id="dataset"),
    # 541 rows: a padded last batch of 2 real rows, full feedback
    pytest.param(dict(dataset="breast_cancer", batch_size=7, feedback="full"), id="padded-full"),
]


def _sub_env(value, i):
    if isinstance(value, dict):
        return {key: _sub_env(item, i) for key, item in value.items()}
    return value[i]


def _assert_same(a, b) -> None:
    if isinstance(a, dict):
        assert set(a) == set(b)
        for key in a:
            _assert_same(a[key], b[key])
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


#: The vector env computes a batch of sub-envs' mu(x . beta*) in one product, a single env
#: its own: another BLAS kernel or SIMD width may sum the d terms in another order, or
#: fuse them: within a few ULPs, or 64 EPS of the largest value where a sum cancels
ULPS = 8


def _assert_agree(a, b, cutoff: float, path: str = "") -> None:
    """A sub-env's step against a single env's: data exact, what is computed within the bound.

    The Bayes decision 1{mu > c} is a threshold on a computed value: equal
    wherever mu lies farther from the cutoff than the bound; nearer, either
    rounding may decide (and the loss it adds is |mu - c|, within the bound).
    """
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for key in a:
            if key != "bayes_action":
                _assert_agree(a[key], b[key], cutoff, f"{path}.{key}")
        if "bayes_action" in a:
            mu = np.asarray(b["mu"])
            decided = np.abs(mu - cutoff) > eps_of_largest(mu, 64) + 2 * ULPS * EPS * abs(cutoff)
            np.testing.assert_array_equal(
                np.asarray(a["bayes_action"])[decided], np.asarray(b["bayes_action"])[decided]
            )
    else:
        assert_close(a, b, ulps=ULPS, atol=eps_of_largest(b, 64), path=path)


@pytest.mark.crossimpl
@pytest.mark.parametrize("kwargs", SETTINGS)
def test_each_sub_env_is_a_single_env_with_its_seed_and_actions(kwargs):
    seeds = [5, 5, 9]
    envs = gym.make_vec(ID, num_envs=3, lockstep=True, **kwargs)
    assert isinstance(envs, OneSidedLendingVectorEnv)
    singles = [gym.make(ID, **kwargs) for _ in seeds]
    obs, info = envs.reset(seed=seeds)
    cutoffs = []
    for i, (env, seed) in enumerate(zip(singles, seeds, strict=True)):
        single_obs, single_info = env.reset(seed=seed)
        cutoffs.append(single_info["feedback"]["cutoff"])
        _assert_same(obs[i], single_obs)  # drawn from the same stream: the data, exactly
        _assert_agree(_sub_env(info["feedback"], i), single_info["feedback"], cutoffs[i])
        _assert_agree(info["oracle"]["beta"][i], single_info["oracle"]["beta"], cutoffs[i])
    rng = np.random.default_rng(0)
    done = False
    while not done:
        actions = rng.integers(0, 2, envs.action_space.shape).astype(np.int8)
        obs, reward, terminated, truncated, info = envs.step(actions)
        for i, env in enumerate(singles):
            single = env.step(actions[i])
            _assert_same(obs[i], single[0])
            # the reward: a sum over the approved of y - c
            _assert_agree(reward[i], single[1], cutoffs[i], "reward")
            assert (terminated[i], truncated[i]) == single[2:4]
            for channel in ("feedback", "oracle"):
                _assert_agree(_sub_env(info[channel], i), single[4][channel], cutoffs[i], channel)
        done = bool((terminated | truncated).all())
        assert done == bool((terminated | truncated).any())  # lockstep episodes


def test_sub_envs_with_one_seed_share_one_stream_but_not_their_feedback():
    envs = OneSidedLendingVectorEnv(num_envs=4, horizon=20, batch_size=5)
    obs, _ = envs.reset(seed=[3, 3, 3, 4])
    assert len(envs._streams) == 2
    np.testing.assert_array_equal(obs[0], obs[2])
    assert not np.array_equal(obs[0], obs[3])
    actions = np.zeros((4, 5), dtype=np.int8)
    actions[1] = 1
    _, reward, _, _, info = envs.step(actions)
    revealed, outcomes = info["feedback"]["revealed"], info["feedback"]["y"]
    assert revealed[1].all() and not revealed[[0, 2, 3]].any()
    assert (outcomes[[0, 2]] == 0.0).all()  # sub-env 1 saw them; 0 and 2 did not
    assert reward[0] == reward[2] == 0.0 and reward[1] != 0.0


def test_an_int_seed_follows_gymnasiums_convention_and_none_continues_each_stream():
    envs = OneSidedLendingVectorEnv(num_envs=2, horizon=5)
    singles = [gym.make(ID, horizon=5) for _ in range(2)]
    obs, _ = envs.reset(seed=np.int64(10))  # numpy integers are seeds too
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset(seed=10 + i)[0])
    obs, _ = envs.reset()
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset()[0])


def test_every_episode_must_be_reset_and_ends_for_all_at_once():
    envs = OneSidedLendingVectorEnv(num_envs=2, horizon=2)
    actions = np.ones((2, 1), dtype=np.int8)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(actions)
    envs.reset(seed=0)
    envs.step(actions)
    *_, truncated, _ = envs.step(actions)
    assert truncated.all()
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(actions)
    envs.reset()
    envs.step(actions)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: OneSidedLendingVectorEnv(num_envs=0), "num_envs"),
        (lambda: OneSidedLendingVectorEnv(num_envs=2, batch_size=0), "batch_size"),
        (lambda: OneSidedLendingVectorEnv(num_envs=2, render_mode="ansi"), "render_mode"),
        (lambda: OneSidedLendingVectorEnv(num_envs=2).reset(seed=[1, 2, 3]), "seed"),
        (lambda: OneSidedLendingVectorEnv(num_envs=2).reset(seed=[1, 2.5]), "seed"),
        (lambda: OneSidedLendingVectorEnv(num_envs=2).reset(seed=-1), "seed"),
    ],
)
def test_bad_construction_or_reset_names_the_parameter(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


@pytest.mark.parametrize(
    "actions",
    [np.ones((2, 2), dtype=np.int8), np.full((3, 2), 2), np.full((3, 2), np.nan)],
    ids=["shape", "not-binary", "nan"],
)
def test_bad_actions_name_the_parameter(actions):
    envs = OneSidedLendingVectorEnv(num_envs=3, batch_size=2, horizon=3)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        envs.step(actions)


def test_nothing_a_sub_env_sees_depends_on_labels_it_did_not_reveal():
    """Labels hidden from every sub-env: changing them changes no obs, reward or feedback."""
    seen = []
    for extreme in ("low", "high"):
        envs = OneSidedLendingVectorEnv(num_envs=3, horizon=30, batch_size=4, link="linear")
        obs, _ = envs.reset(seed=[1, 1, 1])
        rng = np.random.default_rng(2)
        steps = []
        for _ in range(30):
            actions = rng.integers(0, 2, (3, 4)).astype(np.int8)
            hidden_from_all = ~actions.any(axis=0)
            stream = envs._streams[0]
            value = -1e3 if extreme == "low" else 1e3
            stream._y = np.where(hidden_from_all, value, stream._y)
            obs, reward, *_, info = envs.step(actions)
            steps.append((obs, reward, info["feedback"]))
        seen.append(steps)
    for (obs_a, reward_a, fb_a), (obs_b, reward_b, fb_b) in zip(*seen, strict=True):
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(reward_a, reward_b)
        _assert_same(fb_a, fb_b)


def test_the_default_vector_env_autoresets_and_lockstep_is_an_option():
    """``gym.make_vec(id)`` autoresets (NEXT_STEP) past the horizon; lockstep on request."""
    envs = gym.make_vec(ID, num_envs=4, horizon=20)
    assert isinstance(envs, gym.vector.SyncVectorEnv)
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    envs.reset(seed=0)
    actions = np.ones((4, 1), dtype=np.int8)
    for t in range(1, 46):
        _, reward, terminated, truncated, info = envs.step(actions)
        if t % 21 == 0:  # the step after the 20th: the autoreset, with the reset's info
            assert (reward == 0.0).all() and info["_feedback"].all()
            assert info["feedback"]["_warm_start"].all()
            assert "revealed" not in info["feedback"]
        else:
            assert truncated.all() == (t % 21 == 20) and not terminated.any()
    lockstep = gym.make_vec(ID, num_envs=2, horizon=5, lockstep=True)
    assert isinstance(lockstep, OneSidedLendingVectorEnv)
    assert lockstep.metadata["autoreset_mode"] == gym.vector.AutoresetMode.DISABLED
    with pytest.raises(TypeError, match="lockstep"):
        gym.make_vec(ID, num_envs=2, lockstep="yes")


@pytest.mark.crossimpl
def test_replicas_score_the_same_on_lockstep_and_on_gymnasiums_vector_env():
    """lockstep=True only shares the stream: every trajectory is the same as without it."""
    from agents.lending import Adaptive, Greedy
    from agents.lending._fast.replicas import CutoffReplicas
    from osfb_gym.runner import run_vector_episode

    runs = []
    for lockstep in (False, True):
        envs = gym.make_vec(ID, num_envs=2, horizon=50, batch_size=2, lockstep=lockstep)
        replicas = CutoffReplicas([Greedy(), Adaptive(rho=0.5)])
        runs.append(run_vector_episode(envs, replicas, seed=4))
    for plain, shared in zip(*runs, strict=True):
        assert_episodes_agree(plain, shared)  # two vector envs: within the episodes' bound


def _same_with_dtypes(a, b, cutoff: float) -> None:
    if isinstance(a, dict):
        assert set(a) == set(b)
        for key in a:
            x, y = np.asarray(a[key]), np.asarray(b[key])
            assert isinstance(a[key], dict) or (x.dtype == y.dtype and x.shape == y.shape), key
        _assert_agree(a, b, cutoff)
    else:
        x, y = np.asarray(a), np.asarray(b)
        assert x.dtype == y.dtype and x.shape == y.shape
        _assert_agree(x, y, cutoff)


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param(dict(horizon=40, link="linear"), id="one-applicant"),
        pytest.param(dict(horizon=30, batch_size=3), id="batch"),
        pytest.param(dict(horizon=30, feedback="full"), id="full"),
        # a padded last batch: that step takes the general path
        pytest.param(dict(dataset="breast_cancer", batch_size=7, feedback="full"), id="padded"),
    ],
)
@pytest.mark.parametrize("dtype", [np.int8, np.float32, bool])
@pytest.mark.crossimpl
def test_one_shared_stream_is_scored_as_the_general_path_scores_it(kwargs, dtype):
    """Seeds [5, 5, 5] share one stream (the fast step); [5, 5, 9] take the general step.

    Two codes of one step: dtypes and shapes equal, values within the bound
    (``_assert_agree``).
    """
    one = gym.make_vec(ID, num_envs=3, lockstep=True, **kwargs)
    two = gym.make_vec(ID, num_envs=3, lockstep=True, **kwargs)
    cutoffs = one.reset(seed=[5, 5, 5])[1]["feedback"]["cutoff"]
    two.reset(seed=[5, 5, 9])
    assert len(one.unwrapped._streams) == 1 and len(two.unwrapped._streams) == 2
    rng = np.random.default_rng(1)
    done = False
    while not done:
        actions = rng.integers(0, 2, one.action_space.shape).astype(dtype)
        fast, general = one.step(actions), two.step(actions.copy())
        for i in (0, 1):  # the sub-envs both read stream 5
            for a, b in zip(fast[:4], general[:4], strict=True):
                _same_with_dtypes(a[i], b[i], cutoffs[i])
            for channel in ("feedback", "oracle"):
                _same_with_dtypes(
                    _sub_env(fast[4][channel], i), _sub_env(general[4][channel], i), cutoffs[i]
                )
        done = bool(fast[2].all() or fast[3].all())
    assert bool(general[2].all() or general[3].all())


@pytest.mark.parametrize(
    "actions",
    [
        np.full((3, 1), -1, dtype=np.int8),
        np.full((3, 1), 2, dtype=np.int8),
        np.full((3, 1), 0.5),
        np.full((3, 1), 256, dtype=np.int16),
        np.full((3, 1), -1, dtype=np.int64),
        np.full((3, 1), 2, dtype=np.uint8),
    ],
    ids=["int8-negative", "int8-two", "half", "int16-256", "int64-negative", "uint8-two"],
)
def test_the_fast_action_check_rejects_what_the_validator_rejects(actions):
    envs = OneSidedLendingVectorEnv(num_envs=3, horizon=3)
    envs.reset(seed=[0, 0, 0])
    with pytest.raises(ValueError, match="actions"):
        envs.step(actions)


class _StepByStep:
    """LendingMetrics' sums of a vector episode as the earlier code made them, step by step."""

    def __init__(self, num_envs):
        from osfb_gym.core.metrics import EpisodeMetrics
        from osfb_gym.envs.lending.metrics import LendingMetrics

        self.base = LendingMetrics(num_envs)  # only its totals and _count are used

        self.EpisodeMetrics = EpisodeMetrics

    def update(self, action, reward, feedback, oracle):
        m = self.base
        self.EpisodeMetrics.update(m, action, reward, feedback, oracle)
        action, bayes, valid = np.asarray(action), oracle["bayes_action"], feedback.get("valid")
        if valid is None or np.all(valid):
            m.decisions += action.size // m.num_envs
            m.approvals += m._count(action == 1)
            m.wrongly_approved += m._count((action == 1) & (bayes == 0))
            m.wrongly_denied += m._count((action == 0) & (bayes == 1))
            return
        valid = np.asarray(valid, dtype=bool)
        m.decisions += int(np.count_nonzero(valid)) // m.num_envs
        m.approvals += m._count((action == 1) & valid)
        m.wrongly_approved += m._count((action == 1) & (bayes == 0) & valid)
        m.wrongly_denied += m._count((action == 0) & (bayes == 1) & valid)

    def get(self):
        from osfb_gym.envs.lending.metrics import LendingMetrics

        return LendingMetrics.get(self.base)


def _same_bits(a, b):
    assert set(a) == set(b)
    for key in a:
        x, y = np.asarray(a[key]), np.asarray(b[key])
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), key


@pytest.mark.parametrize("held", [3, 1 << 16])
@pytest.mark.parametrize("batch", [1, 3])
def test_vector_metrics_sum_as_step_by_step(batch, held, monkeypatch):
    """The held blocks give the sums of step-by-step updates, bit for bit.

    Bit for bit on any CPU: the blocks sum by ``np.add.accumulate``, strictly in the
    steps' order, the very additions the step-by-step reference makes, each exactly
    rounded by IEEE; no SIMD width or FMA reorders or fuses them.

    Rewards of mixed magnitudes (the additions' order shows in the last bits), padded
    steps, steps without ``valid``, actions of another dtype and lists mid-episode,
    ``get`` mid-episode, and blocks of 3 entries (a block closes every step or two).
    """
    from osfb_gym.envs.lending import metrics as module

    monkeypatch.setattr(module, "HELD_ENTRIES", held)
    rng = np.random.default_rng(3)
    held_metrics, reference = module.LendingMetrics(num_envs=4), _StepByStep(4)
    for step in range(120):
        action = rng.integers(0, 2, (4, batch)).astype(np.int8)
        if step % 7 == 3:
            action = action.astype(np.float32)
        elif step % 11 == 5:
            action = action.tolist()
        feedback = {"revealed": np.asarray(action) == 1}
        if step % 5 != 4:  # some steps have no mask at all
            valid = np.ones((4, batch), dtype=bool)
            if step % 9 == 8:
                valid[:, batch - 1] = False  # a padded last row
            feedback["valid"] = valid
        oracle = {
            "bayes_action": rng.integers(0, 2, (4, batch)).astype(np.int8),
            "loss": rng.random(4) * 10.0 ** rng.integers(-8, 8, 4),
        }
        reward = rng.standard_normal(4) * 10.0 ** rng.integers(-8, 8, 4)
        held_metrics.update(action, reward, feedback, oracle)
        reference.update(action, reward, feedback, oracle)
        if step in (0, 50, 51):
            _same_bits(held_metrics.get(), reference.get())
    _same_bits(held_metrics.get(), reference.get())
    assert held_metrics.get()["steps"] == 120.0


@pytest.mark.parametrize(
    "dtype",
    [bool, np.int8, np.uint8, np.int16, np.uint32, np.int64, np.float16, np.float32, np.float64],
)
def test_the_action_check_reads_every_binary_dtype_as_the_validator(dtype):
    from osfb_gym.core.validation import check_binary_array
    from osfb_gym.envs.lending.vector import _check_actions

    actions = np.array([[1], [0], [1]]).astype(dtype)
    checked = _check_actions(actions, (3, 1))
    expected = check_binary_array(actions, "actions", (3, 1))
    assert checked.dtype == expected.dtype == np.int8
    np.testing.assert_array_equal(checked, expected)
