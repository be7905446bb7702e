"""The services world's kernels at scale: compiled loops against the NumPy path.

Two implementations agree within a stated bound (``tests.helpers.assert_close``):
numba's LLVM and NumPy's SIMD loops or BLAS may fuse a multiply-add or sum in
another order depending on the CPU (an AVX-512 machine rounds the 2-d
Mahalanobis and cosine losses up to 3 ULPs away from the reference). Exact
operations (a minimum, a comparison, a sum of zeros) stay exact; the same path
run twice stays bit for bit.
"""

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
from osfb_gym.envs.services._fast import kernels
from osfb_gym.envs.services.populations import draw_clusters
from osfb_gym.envs.services.world import FAMILIES, GroupAverages, Population, group_losses
from osfb_gym.runner import run_episode
from tests.helpers import EPS, assert_close, eps_of_largest

numba = pytest.importorskip("numba")  # the compiled loops need the `fast` extra
pytestmark = pytest.mark.crossimpl  # .ci/run runs these again under another SIMD dispatch

#: a loss is a few products and sums of d <= 2 coordinates: a fused multiply-add or another
#: order rounds each of them at most once otherwise, so two paths agree within a few ULPs of
#: the result (3 measured on AVX-512); where a loss cancels to near zero (the cosine loss
#: 1 - cos at a user's own preference, a Mahalanobis form of a tiny difference) ULPs of the
#: result mean nothing, and the bound is a few EPS of the largest loss at that service
ULPS = 8

loss_bound = eps_of_largest  # the absolute part: 16 EPS of the largest loss at a service


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
def test_each_compiled_kernel_equals_the_numpy_kernel_and_the_reference(family, dim):
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
            reference = world.loss_at_reference(theta)
            atol = loss_bound(reference)
            assert_close(got, numpy(world, theta), ulps=ULPS, atol=atol)
            assert_close(got, reference, ulps=ULPS, atol=atol)
        reference = world.loss_at_reference(thetas[-1])
        assert_close(world.loss_at(thetas[-1]), reference, ulps=ULPS, atol=loss_bound(reference))


def test_the_compiled_mahalanobis_kernel_keeps_negative_zero_differences_exact():
    # exact on any CPU: products and sums of zeros round nowhere, fused or not, and IEEE
    # fixes the sign of each zero; so the bytes
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
    # the compiled loop's closure where it gives NumPy's bytes at the world's three checked
    # preferences (it does on the CPUs tried), else NumPy's kernel: the check is per CPU
    compiled = kernels._compiled_kernel(world, kernels.compiled_loops(1))
    checked = [np.asarray(world.preferences[i], dtype=float) for i in (0, world.n // 2, -1)]
    exact = all(
        compiled(world, t).tobytes() == kernels.mahalanobis_loss(world, t).tobytes()
        for t in checked
    )
    picked = kernels.pick(world)
    assert picked.__name__ == "<lambda>" if exact else picked is kernels.mahalanobis_loss
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
    # exact on any CPU: a comparison and a minimum round nothing, so the bytes
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
                # sums of n positive terms: any two orders agree within 2 n EPS of the sum
                # (recursive summation's bound); the loop adds in bincount's order, so equal
                # where no compiler reorders
                want = group_losses(losses, groups, n_groups)
                assert_close(got, want, ulps=0, atol=2 * n * EPS * float(np.nanmax(want)))
    losses = np.array([np.inf, 1.0, np.nan, 2.0])
    got = GroupAverages(np.array([0, 2, 3, 2]), 5)(losses)
    # inf, NaN, empty groups and one-term sums round nothing: exact on any CPU
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
            episodes.append((t.rewards, t.actions, t.metrics, t.curves))
        runs.append(episodes)
    for compiled, numpy in zip(*runs, strict=True):
        # The agents draw users with probability proportional to their losses: a draw
        # flips only if the uniform lands within the bound below of a cumulative boundary,
        # about 1e-12 per episode, so the actions are equal.
        np.testing.assert_array_equal(compiled[1], numpy[1])
        # Totals are pairwise sums of 3,000 losses, each within ULPS: within (ULPS + 12)
        # EPS of the total; rewards and metrics are differences and averages of totals:
        # within twice that of the episode's largest total.
        scale = float(np.max(np.abs(np.cumsum(numpy[0]))))
        atol = 2 * (ULPS + 12) * EPS * scale
        assert_close(compiled[0], numpy[0], ulps=ULPS, atol=atol, path="rewards")
        assert_close(compiled[2:], numpy[2:], ulps=ULPS, atol=atol, path="metrics, curves")


def assert_choices_agree(world, services, got, want, atol):
    """Two paths' choices of service: equal, or a tie within the bound.

    Each user takes the service of lowest loss; where two services' losses are
    within rounding of each other, another rounding may pick the other. So
    where the choices differ, the user's losses at both services must agree
    within the losses' bound: a wrong choice (a margin beyond rounding) fails.
    """
    for user in np.flatnonzero(got != want):
        at = [
            world.loss_at_reference(services[c], np.array([user]))[0]
            for c in (got[user], want[user])
        ]
        assert_close(at[0], at[1], ulps=ULPS, atol=atol, path=f"tie of user {user}")


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
        # The loop writes out NumPy's order; a NumPy built for another SIMD width may sum
        # in other blocks. Two pairwise sums agree within 2 (16 + log2 n) EPS of the sum of
        # the magnitudes (16 terms per accumulator in a block, log2 n levels above).
        bound = 2 * (16 + np.log2(n + 1)) * EPS * float(np.abs(values).sum())
        assert_close(loops.pairwise_sum(values), np.add.reduce(values), ulps=0, atol=bound)
    # zeros' signs, NaN, infinities and overflow round nothing: the same bits on any CPU
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
def test_the_compiled_settle_equals_numpys_settle(family, dim):
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
                # losses within ULPS (a few EPS of the largest where a report best - minimum
                # cancels); totals are sums of n of them: within (ULPS + log2 n) EPS of the
                # sum of their magnitudes; choices equal or tied (assert_choices_agree)
                best = states[1][0]
                atol = loss_bound(np.concatenate([best, minimum]))
                with np.errstate(invalid="ignore"):
                    scale = float(np.nansum(np.abs(best)) + np.sum(minimum))
                total_atol = (ULPS + np.log2(n + 1)) * EPS * scale
                reported, reported32, choices, revealed = got[0][:4]
                assert_close(got[0][:2], got[1][:2], ulps=ULPS, atol=atol, path=f"t={t}")
                np.testing.assert_array_equal(revealed, got[1][3])
                assert_close(got[0][4:], got[1][4:], ulps=ULPS, atol=total_atol, path=f"t={t}")
                assert_close(states[0][0], best, ulps=ULPS, atol=atol, path=f"best t={t}")
                assert_close(states[0][2], states[1][2], ulps=0, path=f"services t={t}")
                for pair in ((choices, got[1][2]), (states[0][1], states[1][1])):
                    assert_choices_agree(world, states[1][2], *pair, atol)
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
    """Observations, rewards, feedback and oracle of ``step`` and ``step_without_oracle``.

    The two envs step in lockstep, each under its own ``OSFB_NUMBA``, so that a
    choice tied within rounding (which another CPU may break the other way) is
    checked as a tie, and the steps after it still compared.
    """
    envs = {}

    def under(enabled, method, *args, **kwargs):
        monkeypatch.setenv("OSFB_NUMBA", enabled)
        return getattr(envs[enabled], method)(*args, **kwargs)

    for enabled in ("1", "0"):
        monkeypatch.setenv("OSFB_NUMBA", enabled)
        envs[enabled] = gym.make(
            ENV, n_users=60, n_services=6, reference_restarts=0, **kwargs
        ).unwrapped
    numpy_env = envs["0"]
    for seed in (0, 1):
        resets = [under(e, "reset", seed=seed) for e in ("1", "0")]
        # the world drawn (its draws compiled or NumPy's lines): within test_reset's bound
        preferences = resets[1][1]["oracle"]["preferences"]
        assert_close(resets[0], resets[1], ulps=ULPS, atol=eps_of_largest(preferences))
        for enabled in ("1", "0"):
            monkeypatch.setenv("OSFB_NUMBA", enabled)  # the world picks its settle at first use
            assert (envs[enabled]._world._settle is kernels.settle) == (enabled == "0")
        scale = 0.0
        for t, user in enumerate(np.random.default_rng(seed).integers(0, 60, 6)):
            name = "step_without_oracle" if t % 2 else "step"
            got, want = (under(e, name, int(user)) for e in ("1", "0"))
            feedback = want[4]["feedback"]
            scale = max(scale, float(np.nansum(np.abs(feedback["losses"]))))
            # users' losses within ULPS (or a few EPS of the largest); the reward and the
            # oracle's totals and group averages are sums of 60 of them, and differences
            # of such sums: within 2 (ULPS + log2 60) EPS of the largest total so far
            atol = 2 * (ULPS + 6) * EPS * scale
            world, services = numpy_env._world, numpy_env._services
            for pair in ((got[0], want[0]), (got[4]["feedback"], feedback)):
                assert_choices_agree(world, services, pair[0]["choices"], pair[1]["choices"], atol)
            tied = not np.array_equal(got[0]["choices"], want[0]["choices"])
            for part in (got[0], got[4]["feedback"]):
                part["choices"] = want[0]["choices"]  # compared above, as ties
            assert_close(got, want, ulps=ULPS, atol=atol, path=f"seed {seed} t={t}")
            # the ansi frame prints 3 decimals of the totals: they print alike unless within
            # the bound of a rounding boundary (~1e-12 per frame), or a tie moved a user
            if not tied:
                assert under("1", "render") == numpy_env.render()


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
            # the vector: the step's compiled loop against view.encode's NumPy, two codes of
            # one float32 of a float64 expression: within 2 float32 ULPs where the float64s
            # round apart; the rest is one path (the same compiled settle) run twice
            assert_close(got[0], view.encode(want[0]), ulps=2, path=f"vector t={t}")
            assert bits(got[1:]) == bits(want[1:]), t
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
