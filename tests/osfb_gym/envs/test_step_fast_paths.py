"""The one-applicant and action fast paths of the envs equal their general paths, bit for bit."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401
from osfb_gym.core.links import get_link
from osfb_gym.core.validation import check_binary_array
from osfb_gym.envs.apple.env import check_action as apple_action
from osfb_gym.envs.lending import world as lending_world
from osfb_gym.envs.lending.metrics import check_decisions, score_batch
from osfb_gym.envs.lending.world import LendingWorld, draw_gaussian_world
from osfb_gym.envs.reject.metrics import check_action as reject_action
from tests.helpers import EPS, assert_close


def reference_sample(world, link, noise_std, rng, bound):
    """``sample_batch(1, ...)`` as it was written before the one-applicant path."""
    observed, x = world.sample_observed(1, rng)  # clips at the patched FEATURE_BOUND (bound)
    mu = np.asarray(link.mean(x @ world.beta), dtype=float)
    if link.name == "logistic":
        y = (rng.random(1) < mu).astype(float)
    else:
        y = mu + noise_std * rng.standard_normal(1)
    return observed, x, mu, y


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("link", ["logistic", "linear"])
@pytest.mark.parametrize("dim", [1, 5, 31])
@pytest.mark.parametrize("bound", [lending_world.FEATURE_BOUND, 0.7])
@pytest.mark.crossimpl
def test_one_applicant_draw_equals_the_general_draw(monkeypatch, link, dim, bound):
    # a bound of 0.7 clips most draws: the branch taken only out of bounds is checked too
    monkeypatch.setattr(lending_world, "FEATURE_BOUND", bound)
    world = draw_gaussian_world(dim, 2.0, np.random.default_rng(dim))
    fast, slow = np.random.default_rng(3), np.random.default_rng(3)
    clipped = 0
    for _ in range(400):
        got = world.sample_batch(1, get_link(link), 0.7, fast)
        want = reference_sample(world, get_link(link), 0.7, slow, bound)
        # the draws exactly; mu = link(x . beta) by the fast path's product against
        # BLAS's: d terms summed in another order or fused, within 8 ULPs or 64 EPS of
        # the terms; a logistic y = 1{u < mu} flips only for u within that of mu
        # (~1e-14 per draw), the linear y = mu + noise within the same bound
        assert all(same(g, w) for g, w in zip(got[:2], want[:2], strict=True))
        terms = float(np.max(np.abs(want[1]) @ np.abs(world.beta)))
        for g, w in zip(got[2:], want[2:], strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert_close(g, w, ulps=8, atol=64 * EPS * max(terms, 1.0))
        clipped += int(np.any(np.abs(want[0]) == np.float32(bound)))
    assert (clipped > 0) == (bound < 1.0)
    assert fast.bit_generator.state == slow.bit_generator.state  # the same draws consumed


def test_one_applicant_scoring_equals_the_batch_scoring_on_every_outcome():
    cutoff = 0.4
    valid = np.ones(1, dtype=bool)
    for mu_value, y_value in [(0.7, 1.0), (0.7, 0.0), (0.2, 1.0), (0.2, 0.0), (0.4, 1.0)]:
        for action in (0, 1):
            for one_sided in (True, False):
                mu, y = np.array([mu_value]), np.array([y_value])
                act = np.array([action], dtype=np.int8)
                fast = score_batch(mu, y, cutoff, act, valid, one_sided, True)
                # the same batch as two rows scored by the general path, halved
                general = score_batch(
                    np.repeat(mu, 2),
                    np.repeat(y, 2),
                    cutoff,
                    np.repeat(act, 2),
                    np.ones(2, dtype=bool),
                    one_sided,
                    True,
                )
                # exact on any CPU: two equal terms sum to twice one, and halving is exact
                assert fast[0] == general[0] / 2 and fast[1] == general[1] / 2
                for key in ("revealed", "y", "valid"):
                    assert same(fast[2][key], general[2][key][:1])
                assert same(fast[3], general[3][:1])


def test_an_int_outcome_keeps_its_dtype_in_the_feedback():
    valid = np.ones(1, dtype=bool)
    _, _, feedback, _ = score_batch(
        np.array([0.9]), np.array([1]), 0.5, np.array([1], np.int8), valid, True, True
    )
    assert same(feedback["y"], np.array([1]))


@pytest.mark.parametrize(
    "action",
    [
        np.array([1.0], dtype=np.float32),
        np.array([0.0], dtype=np.float32),
        np.array([-0.0]),
        np.array([1], dtype=np.int64),
        np.array([True]),
        [1],
    ],
)
def test_lending_accepts_what_the_validator_accepts(action):
    checked = check_decisions(action, (1,))
    assert same(checked, check_binary_array(action, "action", (1,)))


@pytest.mark.parametrize(
    "action", [np.array([0.5]), np.array([np.nan]), np.array([2]), [0, 1], 1, np.array(1.0)]
)
def test_lending_rejects_what_the_validator_rejects_with_its_message(action):
    env = gym.make("OneSidedLending-v0", horizon=10)
    env.reset(seed=0)
    with pytest.raises((ValueError, TypeError), match="action"):
        env.step(action)
    with pytest.raises(ValueError, match="only 0 and 1"):
        check_decisions(np.array([1.0, 0.5, 0.0], dtype=np.float32), (3,))


def test_float_and_integer_actions_give_the_same_trajectory():
    runs = []
    for dtype in (np.int8, np.float32, bool):
        env = gym.make("OneSidedLending-v0", horizon=50)
        obs, _ = env.reset(seed=4)
        coins = np.random.default_rng(0).integers(0, 2, 50)
        steps = [obs.tobytes()]
        for coin in coins:
            obs, reward, _, _, info = env.step(np.array([coin], dtype=dtype))
            steps.append(
                (obs.tobytes(), reward, info["feedback"]["y"].tobytes(), info["oracle"]["loss"])
            )
        runs.append(steps)
    assert runs[0] == runs[1] == runs[2]


def test_the_checked_one_applicant_action_is_read_only():
    checked = check_decisions(np.array([1.0], dtype=np.float32), (1,))
    with pytest.raises(ValueError, match="read-only"):
        checked[0] = 0


def test_feedback_arrays_are_fresh_each_step():
    env = gym.make("OneSidedLending-v0", horizon=10)
    env.reset(seed=0)
    first = env.step(np.array([1]))[4]["feedback"]
    second = env.step(np.array([1]))[4]["feedback"]
    for key in ("revealed", "y", "valid"):
        assert first[key] is not second[key] and first[key].flags.writeable


@pytest.mark.parametrize("action", [np.int64(1), np.int32(0), 1, 0, True, np.array(1), np.bool_(1)])
def test_apple_integer_actions_read_as_the_general_path_reads_them(action):
    assert apple_action(action) == int(action) and type(apple_action(action)) is int


@pytest.mark.parametrize("action", [np.int64(2), -1, 1.0, np.float32(1.0)])
def test_apple_rejects_other_actions(action):
    with pytest.raises((ValueError, TypeError), match="action"):
        apple_action(action)


@pytest.mark.parametrize(
    "action", [np.array([2, 1]), np.array([0, 0], dtype=np.uint8), np.array([1, 1], np.int32)]
)
def test_reject_integer_arrays_read_as_python_ints(action):
    decision, query = reject_action(action)
    assert (decision, query) == tuple(int(v) for v in action)
    assert type(decision) is int and type(query) is int


@pytest.mark.parametrize("action", [np.array([3, 0]), np.array([0, 2]), np.array([-1, 0])])
def test_reject_fast_path_keeps_the_range_checks(action):
    with pytest.raises(ValueError, match="action"):
        reject_action(action)


def test_a_trap_world_keeps_the_general_draw():
    # the one-applicant path is the Gaussian world's; the greedy trap draws as before
    world = LendingWorld(beta=np.ones(3), trap_direction=np.array([1.0, 0.0, 0.0]))
    fast, slow = np.random.default_rng(1), np.random.default_rng(1)
    got = world.sample_batch(1, get_link("logistic"), 0.0, fast)
    observed, x = world.sample_observed(1, slow)
    assert same(got[0], observed) and same(got[1], x)
