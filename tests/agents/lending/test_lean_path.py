"""The lean path (agents/lending/_fast): its logistic refit, its checks of an update."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from agents.lending._fast import refit
from agents.lending.glm import GLMEstimator
from osfb_gym.core.links import get_link
from tests.helpers import assert_close


def _streamed(dim: int, n: int, seed: int, **options) -> GLMEstimator:
    """A logistic model that learnt ``n`` examples one by one (its refits the readable ones)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim))
    x[:, -1] = 1.0  # an intercept, as a dataset's stream has (free_intercept needs it)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x @ rng.standard_normal(dim)))).astype(float)
    model = GLMEstimator(get_link("logistic"), dim, 1.0, **options)
    model.add(x[:50], y[:50])
    model.fit()
    for i in range(50, n):
        model.learn_row(x[i].copy(), float(y[i]))
    return model


@pytest.mark.parametrize(
    "options", [{}, {"design_l2": 1e-6, "free_intercept": True}], ids=["default", "paper"]
)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.crossimpl
def test_the_lean_refit_is_the_readable_refit_within_round_off(options, seed):
    model = _streamed(12, 700, seed, **options)
    lean, readable = copy.deepcopy(model), copy.deepcopy(model)
    refit.refit(lean)
    readable._refit()
    assert lean.n_refits == readable.n_refits and lean._n_fitted == readable.n
    # the same Newton steps, products summed in another order (syrk, Cholesky, the scores
    # of a step as z - size * X step): round-off of the sums, a few 1e-14 relative on
    # these well-conditioned states; 1e-9 is the lean path's bound on the estimate
    # (tests/agents/lending/test_lending_agents.py)
    for name in ("beta", "_H", "_H_inv", "_s", "A_inv"):
        np.testing.assert_allclose(
            getattr(lean, name), getattr(readable, name), rtol=1e-9, atol=1e-12, err_msg=name
        )
    assert lean._beta_is_model is readable._beta_is_model is False
    assert not lean._H_pending
    # both continue alike: the next example's O(d) update reads the refit's state
    row, target = np.ones(12), 1.0
    lean.learn_row(row.copy(), target)
    readable.learn_row(row.copy(), target)
    np.testing.assert_allclose(lean.beta, readable.beta, rtol=1e-9, atol=1e-12)


def test_the_lean_refit_run_twice_is_bit_for_bit():
    model = _streamed(9, 400, 5)
    one, other = copy.deepcopy(model), copy.deepcopy(model)
    refit.refit(one)
    refit.refit(other)
    for name in ("beta", "_H", "_H_inv", "_s", "A_inv"):
        assert np.array_equal(getattr(one, name), getattr(other, name)), name


@pytest.mark.crossimpl
def test_the_compiled_pass_over_the_rows_gives_numpys_bits(monkeypatch):
    """R = diag(sqrt(w)) X and X^T c: the numba loop and NumPy's add.reduce, one order."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(4)
    x, w, c = rng.standard_normal((300, 11)), rng.random(300), rng.standard_normal(300)
    monkeypatch.setenv("OSFB_NUMBA", "1")
    compiled = refit.root_and_product(x, w, c)
    monkeypatch.setenv("OSFB_NUMBA", "0")
    numpy = refit.root_and_product(x, w, c)
    # one multiplication per entry, the rows added in their order: exact on any CPU (numba
    # compiles without fast-math, so nothing is fused or reassociated)
    for got, want in zip(compiled, numpy, strict=True):
        assert np.array_equal(got, want)
    assert_close(numpy[1], x.T @ c, ulps=0, atol=1e-12)


def test_the_gram_is_symmetric_and_spd_inverse_falls_back_where_cholesky_fails():
    rng = np.random.default_rng(6)
    root = rng.standard_normal((40, 5))
    gram = refit.gram(root)
    assert gram.flags.c_contiguous and np.array_equal(gram, gram.T)
    np.testing.assert_allclose(gram, root.T @ root, rtol=1e-12)
    spd = gram + np.eye(5)
    inverse = refit.spd_inverse(spd)
    assert np.array_equal(inverse, inverse.T)
    np.testing.assert_allclose(inverse @ spd, np.eye(5), atol=1e-12)
    indefinite = np.diag([1.0, -2.0, 3.0])  # Cholesky refuses it: np.linalg.inv's answer
    assert np.array_equal(refit.spd_inverse(indefinite), np.linalg.inv(indefinite))


def test_the_lean_path_refits_only_an_incremental_newton_logistic_fit():
    logistic = get_link("logistic")
    assert refit.takes(GLMEstimator(logistic, 3, 1.0), 1)
    assert not refit.takes(GLMEstimator(logistic, 3, 1.0, refit="expand"), 1)
    assert not refit.takes(GLMEstimator(logistic, 3, 1.0, solver="exact"), 1)
    assert not refit.takes(GLMEstimator(get_link("linear"), 3, 1.0), 1)
    model = _streamed(4, 200, 3)
    assert not refit.takes(model, model._n_at_refit + 1)  # no refit due yet


@pytest.mark.parametrize(
    ("action", "reward", "feedback", "error", "names"),
    [
        (np.array([2], dtype=np.int8), 0.0, None, ValueError, "action"),
        (np.array([1, 0], dtype=np.int8), 0.0, None, ValueError, "action"),
        (np.array([0.5]), 0.0, None, ValueError, "action"),
        (np.array([1], dtype=np.int8), float("nan"), None, ValueError, "reward"),
        (np.array([1], dtype=np.int8), "0.5", None, TypeError, "reward"),
        (np.array([1], dtype=np.int8), 0.0, {"y": np.zeros(1)}, ValueError, "feedback"),
        (np.array([1], dtype=np.int8), 0.0, [("revealed", 1)], TypeError, "feedback"),
    ],
)
def test_the_lean_update_checks_what_the_agents_own_check_does(
    action, reward, feedback, error, names
):
    """After act() on an array (the lean path), update() still names each bad argument."""
    import gymnasium as gym

    from agents.lending import Adaptive

    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", batch_size=1)
    agent = Adaptive()
    obs, info = env.reset(seed=0)
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    agent.act(obs)
    given = {"revealed": np.array([True]), "y": np.array([1.0])} if feedback is None else feedback
    with pytest.raises(error, match=names):
        agent.update(obs, action, reward, given)


@pytest.mark.parametrize(
    ("action", "reward"),
    [
        (np.array([1.0], dtype=np.float32), 0.5),  # as stable-baselines3 hands it over
        (np.array([True]), 0.5),
        (np.array([1], dtype=np.int8), np.float64(0.5)),
        (np.array([1], dtype=np.int8), 1),
    ],
)
def test_the_lean_update_learns_from_every_input_the_agents_own_check_accepts(action, reward):
    import gymnasium as gym

    from agents.lending import Adaptive

    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", batch_size=1)
    agent = Adaptive()
    obs, info = env.reset(seed=0)
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    n = agent.model_.n
    agent.act(obs)
    agent.update(obs, action, reward, {"revealed": np.array([True]), "y": np.array([1.0])})
    assert agent.model_.n == n + 1


def test_an_update_after_a_later_act_learns_its_own_observation():
    """The decision's rows are rewritten by each act: an older step's update reads its own row."""
    import gymnasium as gym

    from agents.lending import Adaptive

    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", batch_size=1)
    agent = Adaptive()
    first, info = env.reset(seed=0)
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    second = env.step(np.ones(1, dtype=np.int8))[0]
    assert not np.array_equal(first, second)
    action = agent.act(first)
    agent.act(second)  # overwrites the lean path's rows
    n = agent.model_.n
    agent.update(first, action, 0.5, {"revealed": np.array([True]), "y": np.array([1.0])})
    assert agent.model_.n == n + 1
    assert np.array_equal(agent.model_.X[-1], first[0].astype(float))
    # and the usual step after it learns the row it decided
    action = agent.act(second)
    agent.update(second, action, 0.5, {"revealed": np.array([True]), "y": np.array([0.0])})
    assert np.array_equal(agent.model_.X[-1], second[0].astype(float))
