"""The logistic refit's reused products equal the products they replace, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from agents.lending import glm
from agents.lending.glm import GLMEstimator, _newton, _sherman_morrison, fit_logistic_newton
from osfb_gym.core.links import get_link


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    x[:, -1] = 1.0
    beta = rng.standard_normal(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x @ beta))).astype(float)
    return x, y


@pytest.mark.parametrize("max_iter", [1, 2, 100])
@pytest.mark.parametrize("start", ["zero", "far"])
def test_newton_returns_the_scores_of_its_estimate(max_iter, start):
    x, y = _data(400, 7, seed=max_iter)
    # far from the optimum the first full step raises the objective: backtracking runs
    beta0 = None if start == "zero" else np.full(7, 8.0)
    beta, z = _newton(x, y, 0.5, beta0, max_iter=max_iter)
    assert np.array_equal(z, x @ beta)
    assert np.array_equal(beta, fit_logistic_newton(x, y, 0.5, beta0, max_iter=max_iter))


def _stream(model: GLMEstimator, x: np.ndarray, y: np.ndarray) -> GLMEstimator:
    model.add(x[:40], y[:40])
    model.fit()
    for i in range(40, len(y)):
        row = x[i].copy()
        u = model.A_inv.dot(row) if i % 2 else None  # with and without the decision's A^-1 x
        model.learn_row(row, float(y[i]), u)
    return model


def test_a_newton_refit_reusing_the_scores_equals_recomputing_them(monkeypatch):
    x, y = _data(900, 6, seed=3)
    reused = _stream(GLMEstimator(get_link("logistic"), 6, 1.0), x, y)
    assert reused.n_refits >= 10
    # the readable refit: the re-expansion computes x @ beta again
    monkeypatch.setattr(glm, "_newton", lambda *args, **kw: (_newton(*args, **kw)[0], None))
    recomputed = _stream(GLMEstimator(get_link("logistic"), 6, 1.0), x, y)
    assert reused.n_refits == recomputed.n_refits
    for name in ("beta", "A_inv", "_H", "_H_inv", "_s", "xty"):
        assert np.array_equal(getattr(reused, name), getattr(recomputed, name)), name


@pytest.mark.parametrize("given", [True, False])
def test_add_row_updates_A_inv_as_sherman_morrison(given):
    x, y = _data(60, 5, seed=8)
    model = GLMEstimator(get_link("logistic"), 5, 1.0)
    model.add(x[:20], y[:20])
    expected = model.A_inv.copy()
    for i in range(20, 60):
        u = model.A_inv.dot(x[i]) if given else None
        _sherman_morrison(expected, x[i], 1.0, None if u is None else u.copy())
        model.add_row(x[i], float(y[i]), u)
        assert np.array_equal(model.A_inv, expected)


def _episode(env_kwargs: dict, agent_kwargs: dict, seed: int, numba: str, monkeypatch) -> tuple:
    """One Adaptive episode at batch size one; the decisions and the final fit."""
    import gymnasium as gym

    from agents.lending import Adaptive

    monkeypatch.setenv("OSFB_NUMBA", numba)
    env = gym.make("OneSidedLending-v0", batch_size=1, **env_kwargs)
    agent = Adaptive(**agent_kwargs)
    obs, info = env.reset(seed=seed)
    agent.reset(env.observation_space, env.action_space, seed=seed, feedback=info["feedback"])
    actions, done = [], False
    while not done:
        action = agent.act(obs)
        obs_next, reward, terminated, truncated, info = env.step(action)
        agent.update(obs, action, float(reward), info["feedback"])
        actions.append(int(action[0]))
        obs, done = obs_next, terminated or truncated
    model = agent.model_
    state = [model.beta, model.A_inv, model.xty, model.hessian(), model._s, model._H_inv]
    state += [model.X, model.y, np.array(model.max_norm)]  # the kernel's bookkeeping too
    return agent._lean_blas, actions, [np.array(a, copy=True) for a in state], model.n_refits


@pytest.mark.parametrize(
    ("env_kwargs", "agent_kwargs"),
    [
        ({"link": "logistic", "horizon": 1500}, {}),
        ({"dataset": "breast_cancer", "link": "logistic", "horizon": 800}, {}),
        ({"link": "linear", "horizon": 600}, {}),
        ({"link": "logistic", "horizon": 600}, {"rho_schedule": "sqrt_log_t", "rho": 0.05}),
    ],
)
def test_the_compiled_per_step_path_decides_and_learns_as_numpy(
    env_kwargs, agent_kwargs, monkeypatch
):
    pytest.importorskip("numba")
    fast, actions, state, refits = _episode(env_kwargs, agent_kwargs, 3, "1", monkeypatch)
    slow, expected, want, want_refits = _episode(env_kwargs, agent_kwargs, 3, "0", monkeypatch)
    assert not slow
    from agents.lending._fast import blas_row

    monkeypatch.setenv("OSFB_NUMBA", "1")
    assert fast == blas_row.available(len(state[0]))  # this machine: the compiled path ran
    # the same BLAS calls and IEEE operations: the same bits (blas_row checks it at load;
    # where that check fails, both runs take NumPy's path)
    assert actions == expected and refits == want_refits
    for got, reference in zip(state, want, strict=True):
        assert np.array_equal(got, reference)
    assert 0 < sum(actions) < len(actions)


def test_the_compiled_products_refuse_arrays_that_are_not_contiguous():
    pytest.importorskip("numba")
    from numba.core.errors import TypingError

    from agents.lending._fast import blas_row

    fast = blas_row.kernels(4)
    if fast is None:
        pytest.skip("NumPy's BLAS is not its bundled OpenBLAS here")
    strided = np.ones((4, 8))[:, ::2]  # a view whose rows are not where lda = 4 puts them
    with pytest.raises(TypingError):
        fast.act(strided, np.ones(4), np.ones((1, 4)), np.empty(4), np.empty(4), True, 0.5, 0.25)


def test_the_compiled_logistic_mean_is_scipys_expit_bit_for_bit():
    pytest.importorskip("numba")
    from scipy.special import expit

    from agents.lending._fast import _blas_calls, blas_row

    assert blas_row._same_means(_blas_calls.logistic_mean)
    assert blas_row._same_means(lambda z: float(expit(z)))
    # the check sees a one-ulp difference (a mean computed otherwise is refused)
    assert not blas_row._same_means(lambda z: float(np.nextafter(expit(z), 2.0)))


def test_the_compiled_learning_step_takes_only_the_model_reset_made_for_it(monkeypatch):
    pytest.importorskip("numba")
    import copy

    import gymnasium as gym

    from agents.lending import Adaptive
    from agents.lending._fast import blas_row

    logistic = get_link("logistic")
    assert blas_row.learns(GLMEstimator(logistic, 4, 1.0)) == blas_row.available(4)
    assert not blas_row.learns(GLMEstimator(logistic, 4, 1.0, solver="exact"))
    assert not blas_row.learns(GLMEstimator(get_link("linear"), 4, 1.0))

    class Other(GLMEstimator):
        """A model of another class (as a benchmark's shadow learner swaps one in)."""

    assert not blas_row.learns(Other(logistic, 4, 1.0))
    taken: list[GLMEstimator] = []
    compiled_step = blas_row.learn_row

    def recording(model, *args):
        taken.append(model)
        return compiled_step(model, *args)

    monkeypatch.setattr(blas_row, "learn_row", recording)
    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", batch_size=1)
    agent = Adaptive()
    obs, info = env.reset(seed=0)
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    if not blas_row.available(agent.model_.dim):
        pytest.skip("the compiled path does not give NumPy's bits here")
    feedback = {"revealed": np.array([True]), "y": np.array([1.0])}
    original = agent.model_
    agent.update(obs, agent.act(obs), 0.5, feedback)
    assert taken == [original] and original.n == original._n_fitted
    swapped = agent.model_ = copy.deepcopy(original)  # not the model reset checked
    agent.update(obs, agent.act(obs), 0.5, feedback)
    assert taken == [original]  # the readable learner took the swapped model's step
    assert swapped.n == original.n + 1 and swapped._n_fitted == swapped.n
