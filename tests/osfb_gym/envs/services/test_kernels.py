"""The services world's kernels at scale: compiled loops against the NumPy path, bit for bit."""

from __future__ import annotations

import pickle
import subprocess
import sys
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401
from agents.services import AcQUIre, FairAcQUIre
from osfb_gym.envs.services import kernels
from osfb_gym.envs.services.populations import draw_clusters
from osfb_gym.envs.services.world import FAMILIES, GroupAverages, Population, group_losses
from osfb_gym.runner import run_episode

numba = pytest.importorskip("numba")  # the compiled loops need the `fast` extra


@pytest.fixture(autouse=True)
def compiled_for_small_worlds(monkeypatch):
    """The compiled loops at any size (by default only from 10,000 users), to test them small.

    Also on under a developer's ``OSFB_NUMBA=0``: these tests switch it themselves.
    """
    monkeypatch.setattr(kernels, "COMPILED_MIN_USERS", 0)
    monkeypatch.delenv("OSFB_NUMBA", raising=False)


def worlds(family: str, dim: int):
    """Seeded worlds of many sizes: tiny ones, uneven matrix blocks, singleton matrices."""
    for seed, n in enumerate((1, 2, 3, 7, 40, 301, 2000)):
        rng = np.random.default_rng(100 * dim + seed)
        world = draw_clusters(n, dim, family, min(n, 1 + seed), 2, 0.5, rng, 0.05)
        yield world, rng
        if family == "mahalanobis" and n > 3:
            # blocks of 1, 2, 3, ... users per matrix, in a shuffled user order
            m = world.matrices.shape[0]
            index = rng.permutation(np.repeat(np.arange(m), np.arange(1, m + 1))[:n])
            index = np.concatenate([index, rng.integers(0, m, n - index.size)])
            yield (
                Population(
                    family,
                    world.preferences,
                    world.weights,
                    world.groups,
                    matrices=world.matrices,
                    matrix_index=index,
                ),
                rng,
            )


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dim", [1, 2])
def test_each_compiled_kernel_equals_the_numpy_kernel_and_the_reference_bit_for_bit(family, dim):
    loops = kernels.compiled_loops(1)
    assert loops is not None
    for world, rng in worlds(family, dim):
        compiled = kernels._compiled_kernel(world, loops)
        numpy = kernels.numpy_kernel(world)
        assert compiled is not None
        thetas = [*world.preferences[:60], rng.normal(size=dim) * 3]
        if family != "cosine":
            thetas.append(np.zeros(dim))
        for theta in thetas:
            got = compiled(world, theta)
            # bit for bit: the bytes, so that -0.0 against +0.0 would count
            assert got.tobytes() == numpy(world, theta).tobytes()
            assert got.tobytes() == world.loss_at_reference(theta).tobytes()
        assert world.loss_at(thetas[-1]).tobytes() == world.loss_at_reference(thetas[-1]).tobytes()


def test_the_compiled_mahalanobis_kernel_keeps_negative_zero_differences_exact():
    negative_zero = Population(
        "mahalanobis",
        np.full((3, 2), -0.0),
        np.ones(3),
        np.zeros(3, dtype=np.int64),
        matrices=np.eye(2)[None],
        matrix_index=np.zeros(3, dtype=np.int64),
    )
    kernel = kernels._compiled_kernel(negative_zero, kernels.compiled_loops(1))
    assert kernel is not None
    got = kernel(negative_zero, np.zeros(2))
    assert got.tobytes() == negative_zero.loss_at_reference(np.zeros(2)).tobytes()


def test_a_world_takes_the_compiled_kernel_only_where_it_is_checked_and_enabled(monkeypatch):
    world = draw_clusters(500, 2, "mahalanobis", 5, 2, 0.5, np.random.default_rng(0))
    assert kernels.pick(world).__name__ == "<lambda>"  # the compiled loop's closure
    three = draw_clusters(500, 3, "mahalanobis", 5, 2, 0.5, np.random.default_rng(0))
    assert kernels.pick(three) is kernels.mahalanobis_loss  # d > 2: NumPy's
    monkeypatch.setenv("OSFB_NUMBA", "0")
    assert kernels.pick(world) is kernels.mahalanobis_loss
    monkeypatch.delenv("OSFB_NUMBA")
    # a BLAS that rounded otherwise: the check at the world's preferences sees it
    real = kernels.compiled_loops(1)

    def off_by_one_bit(*args):
        out = real.mahalanobis(*args)
        out[-1] = np.nextafter(out[-1], np.inf)
        return out

    fake = SimpleNamespace(mahalanobis=off_by_one_bit)
    monkeypatch.setattr(kernels, "compiled_loops", lambda n: fake)
    assert kernels.pick(world) is kernels.mahalanobis_loss
    for family in ("squared", "huber"):  # no BLAS product: no check needed
        plain = draw_clusters(50, 2, family, 3, 2, 0.5, np.random.default_rng(1))
        monkeypatch.setattr(kernels, "compiled_loops", lambda n: real)
        assert kernels.pick(plain).__name__ == "<lambda>"


def test_small_worlds_keep_the_numpy_path_unless_told_or_numba_is_loaded(monkeypatch):
    monkeypatch.setattr(kernels, "COMPILED_MIN_USERS", 10_000)
    monkeypatch.setattr(kernels, "numba_loaded", lambda: False)
    assert kernels.compiled_loops(9_999) is None
    assert kernels.compiled_loops(10_000) is not None
    world = draw_clusters(500, 2, "huber", 5, 2, 0.5, np.random.default_rng(0))
    assert kernels.pick(world) is kernels.huber_loss
    assert kernels.pick_settle(world) is None and world._settle is kernels.settle
    assert GroupAverages(world.groups, 2)._loops is None
    # numba already imported (an RL view's writers): the loops cost nothing to load
    monkeypatch.setattr(kernels, "numba_loaded", lambda: True)
    assert kernels.compiled_loops(9_999) is not None
    world = draw_clusters(500, 2, "huber", 5, 2, 0.5, np.random.default_rng(0))
    assert kernels.pick(world) is not kernels.huber_loss
    assert world._settle is not kernels.settle
    monkeypatch.setenv("OSFB_NUMBA", "0")
    assert kernels.compiled_loops(10_000) is None


def test_a_small_world_in_a_fresh_process_imports_no_numba():
    """The default env (500 users) alone: NumPy's path, numba not imported (~0.5 s, ~100 MB)."""
    code = (
        "import sys, gymnasium as gym, osfb_gym\n"
        "env = gym.make('MultiServiceChoice-v0', reference_restarts=0)\n"
        "env.reset(seed=0)\n"
        "for a in range(10): env.step(a)\n"
        "print(env.unwrapped._world._settle.__name__, 'numba' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["settle", "False"]


def test_update_best_is_copyto_where_less_then_minimum_nan_included(monkeypatch):
    rng = np.random.default_rng(0)
    for n in (1, 5, 1000):
        best = rng.exponential(size=n)
        losses = np.where(rng.random(n) < 0.5, best, rng.exponential(size=n))
        losses[rng.random(n) < 0.1] = np.nan
        best[rng.random(n) < 0.1] = np.nan
        choice = rng.integers(0, 3, n)
        results = []
        for enabled in ("1", "0"):
            monkeypatch.setenv("OSFB_NUMBA", enabled)
            b, c = best.copy(), choice.copy()
            kernels.update_best(losses, b, c, 7)
            results.append((b.tobytes(), c.tolist()))
        assert results[0] == results[1]
        expected = choice.copy()
        np.copyto(expected, 7, where=losses < best)
        assert results[1] == (np.minimum(best, losses).tobytes(), expected.tolist())


@pytest.mark.parametrize("enabled", ["1", "0"])
def test_group_averages_equal_bincount_for_any_number_of_groups(monkeypatch, enabled):
    monkeypatch.setenv("OSFB_NUMBA", enabled)
    rng = np.random.default_rng(1)
    for n_groups in (1, 2, 3, 5, 10):
        for n in (1, 7, 3000):
            groups = rng.integers(0, n_groups, n)
            averages = GroupAverages(groups, n_groups)
            assert (averages._loops is None) == (enabled == "0")
            for _ in range(3):
                losses = rng.exponential(size=n) * rng.choice([1e-3, 1.0, 1e6], size=n)
                got = averages(losses)
                assert got.tobytes() == group_losses(losses, groups, n_groups).tobytes()
    losses = np.array([np.inf, 1.0, np.nan, 2.0])
    got = GroupAverages(np.array([0, 2, 3, 2]), 5)(losses)
    assert got.tobytes() == group_losses(losses, np.array([0, 2, 3, 2]), 5).tobytes()


def test_a_world_pickles_without_its_kernel_and_computes_it_again():
    world = draw_clusters(300, 2, "cosine", 4, 2, 0.5, np.random.default_rng(3))
    theta = world.preferences[7]
    before = world.loss_at(theta)
    assert "_kernel" in world.__dict__
    copy = pickle.loads(pickle.dumps(world))
    assert copy == world and "_kernel" not in copy.__dict__
    assert copy.loss_at(theta).tobytes() == before.tobytes()


@pytest.mark.parametrize("loss", FAMILIES)
def test_episodes_are_the_same_with_and_without_the_compiled_loops(monkeypatch, loss):
    """Env, agents and metrics end to end: every reward, action and metric, both paths."""
    runs = []
    for enabled in ("1", "0"):
        monkeypatch.setenv("OSFB_NUMBA", enabled)
        dynamics = 1 if loss == "huber" else 0
        env = gym.make(
            ENV,
            n_users=3000,
            n_services=12,
            loss=loss,
            n_groups=3,
            reference_restarts=0,
            dynamics_rounds=dynamics,
        )
        episodes = []
        for agent in (AcQUIre(), FairAcQUIre()):
            t = run_episode(env, agent, seed=5)
            curves = {key: value.tobytes() for key, value in t.curves.items()}
            episodes.append((t.rewards.tobytes(), t.actions.tolist(), t.metrics, curves))
        runs.append(episodes)
    assert runs[0] == runs[1]


ENV = "MultiServiceChoice-v0"


def bits(value):
    """Bytes of arrays and floats (-0.0 against +0.0 and NaN payloads count), nested."""
    if isinstance(value, dict):
        return {key: bits(item) for key, item in value.items() if key != "world"}
    if isinstance(value, list | tuple):
        return [bits(item) for item in value]
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, float | np.floating):
        return ("float", np.float64(value).tobytes())
    return (type(value).__name__, repr(value))


def test_the_compiled_pairwise_sum_is_numpys_add_reduce_on_many_sizes():
    """NumPy's pairwise summation: blocks of 8 sums up to 128 values, halves above."""
    loops = kernels.compiled_loops(1)
    rng = np.random.default_rng(7)
    sizes = [*range(300), 383, 500, 1024, 1031, 4096, 8191, 8192, 8193, 65_537, 100_003]
    for n in sizes:
        values = rng.exponential(size=n) * rng.choice([1e-9, 1.0, 1e9], size=n)
        values[rng.random(n) < 0.3] *= -1.0
        assert bits(loops.pairwise_sum(values)) == bits(np.add.reduce(values)), n
    for values in (
        np.full(9, -0.0),
        np.full(200, -0.0),
        np.array([-0.0]),
        np.zeros(0),
        np.array([1.0, np.nan, 2.0] * 50),
        np.array([np.inf, 1.0] * 70),
        np.array([np.inf, -np.inf] * 70),
        np.array([1e308] * 130),
    ):
        with np.errstate(invalid="ignore", over="ignore"):
            assert bits(loops.pairwise_sum(values)) == bits(np.add.reduce(values)), values


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_the_compiled_settle_equals_numpys_settle_bit_for_bit(family, dim):
    """The env's step after its checks in one call: services, best, choices, reports, totals."""
    cases = list(worlds(family, dim))
    if family == "squared":
        # weights other than 1 (the loop always multiplies: 1.0 * r is r), a NaN preference
        rng = np.random.default_rng(dim)
        prefs = rng.normal(size=(40, dim))
        prefs[3] = np.nan
        weights = np.where(rng.random(40) < 0.5, 1.0, rng.exponential(size=40))
        groups = rng.integers(0, 2, 40)
        cases.append((Population("squared", prefs, weights, groups), rng))
        cases.append((Population("squared", prefs, np.ones(40), groups), rng))
    for world, rng in cases:
        compiled = kernels.pick_settle(world)
        assert compiled is not None and world._settle is not kernels.settle
        n = world.n
        for excess in (False, True):
            minimum = rng.exponential(size=n) * 0.1 if excess else np.zeros(n)
            # before t = 0: best and choices hold anything (the first step writes them all)
            states = [
                (np.full(n, 7.0), np.full(n, 99), np.full((6, dim), np.nan)) for _ in range(2)
            ]
            for t, user in enumerate(rng.integers(0, n, 6)):
                if t == 4 and n > 2:  # NaN among the best losses
                    for best, _, _ in states:
                        best[: n // 2] = np.nan
                got = [
                    settle(world, int(user), best, choice, t, minimum, excess, services)
                    for settle, (best, choice, services) in zip(
                        (compiled, kernels.settle), states, strict=True
                    )
                ]
                assert bits(got[0]) == bits(got[1]), (t, excess)
                assert bits(states[0]) == bits(states[1]), (t, excess)
                reported, reported32, choices, revealed = got[0][:4]
                assert (reported32.dtype, choices.dtype, revealed.dtype) == (
                    np.float32,
                    np.int64,
                    bool,
                )
                assert not np.shares_memory(reported, states[0][0])
                assert not np.shares_memory(choices, states[0][1])


STEP_CONFIGS = [
    {},
    {"loss": "mahalanobis", "n_groups": 3},
    {"loss": "huber", "dynamics_rounds": 2},
    {"loss": "cosine", "dim": 3},
    {"report": "excess", "population": "linear", "dim": 2},
    {"report": "excess", "population": "linear", "dim": 3, "dynamics_rounds": 1},
    {"reveal_groups": False, "render_mode": "ansi", "world_seed": 4},
]


@pytest.mark.parametrize("kwargs", STEP_CONFIGS, ids=str)
def test_env_steps_are_the_same_with_and_without_the_compiled_step(monkeypatch, kwargs):
    """Observations, rewards, feedback and oracle of ``step`` and ``step_without_oracle``."""
    runs = []
    for enabled in ("1", "0"):
        monkeypatch.setenv("OSFB_NUMBA", enabled)
        env = gym.make(ENV, n_users=60, n_services=6, reference_restarts=0, **kwargs).unwrapped
        record = []
        for seed in (0, 1):
            record.append(bits(env.reset(seed=seed)))
            settle = env._world._settle
            assert (settle is kernels.settle) == (enabled == "0")
            for t, user in enumerate(np.random.default_rng(seed).integers(0, 60, 6)):
                step = env.step_without_oracle if t % 2 else env.step
                record.append(bits(step(int(user))))
                record.append(env.render())
        runs.append(record)
    assert runs[0] == runs[1]


@pytest.mark.parametrize("kwargs", STEP_CONFIGS, ids=str)
def test_step_encoded_writes_the_plain_views_vector_of_step_without_oracle(kwargs):
    """The RL plain view's vector written by the step's loop: the view's own bits, the rest too."""
    from osfb_gym.wrappers.views import make_view

    raws = [
        gym.make(ENV, n_users=60, n_services=6, reference_restarts=0, **kwargs).unwrapped
        for _ in range(2)
    ]
    view = make_view(raws[0], "plain")
    layout = raws[0].view_layout(view.plan)
    assert layout is not None and layout[0] == view.observation_space.shape[0]
    fallbacks = 0
    for seed in (0, 1):
        for raw in raws:
            raw.reset(seed=seed)
        for t, user in enumerate(np.random.default_rng(seed).integers(0, 60, 6)):
            got = raws[0].step_encoded(int(user), layout)
            if got is None:  # the last step of learning dynamics: no such loop
                assert kwargs.get("dynamics_rounds") and t == 5
                fallbacks += 1
                got = raws[0].step_without_oracle(int(user))
                got = (view.encode(got[0]), *got[1:])
            want = raws[1].step_without_oracle(int(user))
            assert bits(got) == bits((view.encode(want[0]), *want[1:])), t
            assert raws[0].render() == raws[1].render()
    assert fallbacks == (2 if kwargs.get("dynamics_rounds") else 0)


def test_view_layout_takes_only_this_envs_observation():
    from osfb_gym.envs.services import MultiServiceChoiceEnv
    from osfb_gym.wrappers.views import make_view

    env = gym.make(ENV, n_users=30, n_services=4)
    other = gym.make(ENV, n_users=31, n_services=4)
    no_groups = gym.make(ENV, n_users=30, n_services=4, reveal_groups=False)
    plan = make_view(env, "plain").plan
    assert env.unwrapped.view_layout(plan) is not None
    assert other.unwrapped.view_layout(plan) is None  # other sizes
    assert no_groups.unwrapped.view_layout(plan) is None  # groups it does not show
    assert env.unwrapped.view_layout(make_view(no_groups, "plain").plan) is None

    class Stepped(MultiServiceChoiceEnv):
        def step(self, action):
            return super().step(action)

    assert Stepped(n_users=30, n_services=4).view_layout(plan) is None  # its step is kept
    numpy_world = gym.make(ENV, n_users=30, n_services=4).unwrapped
    numpy_world.reset(seed=0)
    numpy_world._world.__dict__["_settle"] = kernels.settle  # NumPy's lines: no such loop
    assert numpy_world.step_encoded(3, numpy_world.view_layout(plan)) is None
    assert numpy_world._t == 0  # nothing stepped


def test_an_env_pickles_mid_episode_with_the_compiled_loops():
    """The group averages' loops (a module) are not pickled; the copy steps the same."""
    env = gym.make(ENV, n_users=50, n_services=5, reference_restarts=0)
    env.reset(seed=2)
    env.step(3)
    assert env.unwrapped._group_averages._loops is not None
    copy = pickle.loads(pickle.dumps(env))
    for user in (7, 11, 12):
        assert bits(env.step(user)) == bits(copy.step(user))
    assert copy.unwrapped._group_averages._loops is not None
