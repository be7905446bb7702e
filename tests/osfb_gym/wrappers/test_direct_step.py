"""A view steps the raw env once the layers below it are spent, with the same results."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import PassiveEnvChecker

import osfb_gym  # noqa: F401
from osfb_gym.core.channels import HideOracle, strip_oracle
from osfb_gym.wrappers import apply_view, rl_env
from osfb_gym.wrappers._fast.writers import make_writer
from osfb_gym.wrappers.views import encode, make_view
from tests.helpers import assert_close, eps_of_largest
from tests.osfb_gym.envs.hidden import override_hidden

CASES = [
    ("OneSidedLending-v0", {"horizon": 25}),
    ("OneSidedLending-v0", {"batch_size": 3, "link": "linear", "horizon": 25}),
    ("AppleTasting-v0", {"horizon": 25}),
    ("RejectOption-v0", {"horizon": 25}),
    ("MultiServiceChoice-v0", {"n_users": 20, "n_services": 4}),
]


class Counting(gym.Wrapper):
    """A wrapper the view does not know: it must be stepped every time."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.calls = 0

    def step(self, action: Any) -> Any:
        self.calls += 1
        return self.env.step(action)


def frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: frozen(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return (type(value).__name__, repr(value))


def rollout(env: gym.Env, encoder: Any, seed: int, steps: int = 60) -> list:
    """Copies of what each reset and step returned (a writer may reuse its buffer)."""
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    seen = [copy.deepcopy([encoder(obs), info])]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        seen.append(copy.deepcopy([encoder(obs), reward, terminated, truncated, info]))
        if terminated or truncated:
            obs, info = env.reset(seed=seed + 1)
            seen.append(copy.deepcopy([encoder(obs), info]))
    return seen


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
@pytest.mark.parametrize("view", ["plain", "feedback"])
@pytest.mark.crossimpl
def test_rl_env_gives_what_the_full_stack_gives(env_id, kwargs, view):
    """Through its whole wrapper stack, every step: the same observations, rewards and infos."""
    fast = rl_env(env_id, view=view, **kwargs)
    # the reference: HideOracle and Gymnasium's wrappers stepped every time, the view
    # applied outside the env by hand
    slow = HideOracle(gym.make(env_id, **kwargs))
    shown = make_view(slow, view)

    def by_hand(obs: Any) -> Any:
        return shown.encode(obs)

    class ByHand(gym.Wrapper):
        def reset(self, **options: Any) -> Any:
            obs, info = self.env.reset(**options)
            shown.reset(info["feedback"], seed=options.get("seed"))
            self._last = obs
            return obs, info

        def step(self, action: Any) -> Any:
            obs, reward, terminated, truncated, info = self.env.step(action)
            shown.update(self._last, action, float(reward), info["feedback"])
            self._last = obs
            return obs, reward, terminated, truncated, info

    # Two codes of one step (the env's direct step and its view's compiled writer against
    # the wrappers and encode): the float32 vectors within 2 float32 ULPs; the rewards
    # (differences of totals, for services) within 8 ULPs or 64 EPS of the largest reward
    got, want = rollout(fast, lambda obs: obs, 5), rollout(ByHand(slow), by_hand, 5)
    rewards = [step[1] for step in want if len(step) == 5]
    assert_close(got, want, ulps=8, atol=eps_of_largest(rewards, 64))
    assert fast._direct is fast.unwrapped  # the fast path was taken


def test_the_layers_below_are_stepped_until_their_checks_are_done():
    env = rl_env("AppleTasting-v0", horizon=30)
    checker = env.env
    while not isinstance(checker, PassiveEnvChecker):
        checker = checker.env
    env.reset(seed=0)
    env.step(1)
    assert checker.checked_step and env._direct is not env.unwrapped
    env.step(1)  # the checker's data-reuse check
    assert checker.checked_data_reuse
    env.step(1)
    assert env._direct is env.unwrapped


def test_an_unknown_wrapper_below_is_stepped_every_time():
    counting = Counting(HideOracle(gym.make("RejectOption-v0", horizon=40)))
    env = apply_view(counting, "plain")
    env.reset(seed=0)
    for _ in range(10):
        env.step(np.array([1, 1]))
    assert counting.calls == 10


def test_the_oracle_stays_hidden_on_the_direct_path():
    env = rl_env("OneSidedLending-v0", horizon=30)
    env.reset(seed=0)
    infos = [env.step(np.array([1.0], dtype=np.float32))[4] for _ in range(20)]
    assert env._direct is env.unwrapped
    assert all("oracle" not in info and "feedback" in info for info in infos)


def test_the_oracle_stays_for_the_evaluator_without_hide_oracle():
    env = apply_view(gym.make("OneSidedLending-v0", horizon=30), "plain")
    env.reset(seed=0)
    infos = [env.step(np.array([1]))[4] for _ in range(10)]
    assert env._direct is env.unwrapped
    assert all("oracle" in info for info in infos)
    assert strip_oracle(infos[-1]).keys() == {"feedback"}


@pytest.mark.parametrize(
    "obs",
    [
        np.arange(10, dtype=np.float32).reshape(2, 5) / 3,
        np.linspace(-9, 9, 7),
        np.array([[1, 2], [3, 4]]),
        [0.25, 0.5],
    ],
)
def test_the_plain_views_cast_equals_encode(obs):
    shape = np.asarray(obs).shape
    space = gym.spaces.Box(-10.0, 10.0, shape, dtype=np.float32)
    env = gym.make("OneSidedLending-v0")
    env.observation_space = space
    view = make_view(env, "plain")
    got, want = view.encode(obs), encode(space, obs)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    if isinstance(obs, np.ndarray):
        assert not np.shares_memory(got, obs)


def test_the_direct_path_steps_the_env_without_its_oracle():
    """Under HideOracle the view calls step_without_oracle (or step_encoded, which writes
    the plain view's vector in the step: compiled, numba loaded); without it, step."""
    from osfb_gym.wrappers._fast.compiled import kernels

    encoded = "step_encoded" if kernels() is not None else "step_without_oracle"
    for hide, expected in ((True, encoded), (False, "step")):
        env = apply_view(
            HideOracle(gym.make("MultiServiceChoice-v0", n_users=20, n_services=8))
            if hide
            else gym.make("MultiServiceChoice-v0", n_users=20, n_services=8),
            "plain",
        )
        env.reset(seed=0)
        raw = env.unwrapped
        calls: list[str] = []
        for name in ("step", "step_without_oracle", "step_encoded"):
            method = getattr(raw, name)

            def counted(
                *args: Any, method: Any = method, name: str = name, calls: list = calls
            ) -> Any:
                calls.append(name)
                return method(*args)

            setattr(raw, name, counted)  # an instance attribute: what the view looks up
        infos = [env.step(user)[4] for user in range(8)]
        assert env._direct is raw
        assert calls[-5:] == [expected] * 5
        assert all(("oracle" in info) is not hide for info in infos)


def test_the_public_state_shows_nothing_hidden_on_the_path_without_the_oracle():
    """The cheater's walk (every public attribute of every layer) through rl_env's stack."""
    from tests.osfb_gym.envs.test_ecosystem import public_state

    def walk(extreme: str) -> list:
        env = rl_env("MultiServiceChoice-v0", n_users=30, n_services=5)
        env.reset(seed=3)
        seen = []
        for user in range(5):  # the direct path from the third step on
            override_hidden(env.unwrapped, user, extreme)
            seen.append((frozen(env.step(user)), public_state(env)))
        assert env._direct is env.unwrapped
        return seen

    assert walk("low") == walk("high")


SPACES = [
    gym.spaces.Dict(
        {
            "losses": gym.spaces.Box(0.0, np.finfo(np.float32).max, (6,), dtype=np.float32),
            "choices": gym.spaces.MultiDiscrete(np.full(6, 4)),
            "n": gym.spaces.Discrete(4),
            "groups": gym.spaces.MultiDiscrete(np.full(6, 3)),
        }
    ),
    gym.spaces.Dict(
        {
            "x": gym.spaces.Box(-1.0, 1.0, (2, 3), dtype=np.float64),
            "k": gym.spaces.Discrete(5, start=-2),
            "m": gym.spaces.MultiDiscrete([3, 5, 2], start=[1, 0, -1]),
            "b": gym.spaces.MultiBinary(4),
            "inner": gym.spaces.Dict({"u": gym.spaces.Box(-np.inf, np.inf, (3,))}),
        }
    ),
    gym.spaces.MultiDiscrete([[7, 7], [7, 7]]),
    gym.spaces.Box(-np.inf, np.inf, (5,), dtype=np.float32),
    gym.spaces.Discrete(1),
]


@pytest.mark.parametrize("space", SPACES, ids=lambda space: type(space).__name__)
def test_the_writer_writes_what_encode_returns(space):
    """Bit for bit, for samples and for awkward values (large, negative, out of range)."""
    space.seed(0)
    samples = [space.sample() for _ in range(20)]

    def awkward(sub: Any, value: Any) -> Any:
        if isinstance(sub, gym.spaces.Dict):
            return {key: awkward(sub[key], value[key]) for key in sub.spaces}
        if isinstance(sub, gym.spaces.MultiDiscrete):
            odd = np.asarray(value).copy().reshape(-1)
            odd[0], odd[-1] = -1, 3 * int(sub.nvec.max())  # outside the codes' table
            return odd.reshape(np.shape(value))
        if isinstance(sub, gym.spaces.Box):
            return np.full(sub.shape, 3e38, dtype=sub.dtype) * -1
        return value

    cases = [*samples, *(awkward(space, value) for value in samples[:3])]
    if isinstance(space, gym.spaces.MultiDiscrete):
        cases += [samples[0].astype(np.int32), samples[0].astype(np.float64) + 0.5]
    size, write = make_writer(space)
    for value in cases:
        out = np.full(size, np.nan, dtype=np.float32)
        write(value, out)
        want = encode(space, value)
        assert_close(out, want, ulps=2, path=f"{value}")  # as in assert_writes_alike


def test_a_negative_code_among_codes_in_range_is_not_read_from_the_table():
    """-1 with no other code out of range: as an index it would read the table's last entry."""
    space = gym.spaces.MultiDiscrete(np.full(4, 11))
    size, write = make_writer(space)
    for value in (np.array([1, -1, 2, 10]), np.array([-3, 0, 0, 0]), np.array([0, 1, 2, 10])):
        out = np.full(size, np.nan, dtype=np.float32)
        write(value, out)
        assert_close(out, encode(space, value), ulps=2, path=f"{value}")


@pytest.mark.crossimpl
def test_the_compiled_writers_give_the_numpy_writers(monkeypatch):
    """numba's loops (the default where numba is installed) against NumPy alone, awkward values."""
    from osfb_gym.wrappers._fast import compiled as _compiled
    from osfb_gym.wrappers._fast import writers

    pytest.importorskip("numba")  # the loops need the `fast` extra
    monkeypatch.delenv("OSFB_NUMBA", raising=False)  # on, also under a developer's OSFB_NUMBA=0
    loops = _compiled.kernels.__wrapped__()  # not the cached answer of an earlier OSFB_NUMBA=0
    assert loops is not None
    monkeypatch.setattr(writers, "kernels", lambda: loops)
    space = gym.spaces.Dict(
        {
            "losses": gym.spaces.Box(0.0, np.finfo(np.float32).max, (6,), dtype=np.float32),
            "codes": gym.spaces.MultiDiscrete(np.full(6, 11)),
        }
    )
    losses = np.array([0.0, -0.0, 3e38, np.inf, np.nan, 1e-45], dtype=np.float32)
    cases = [
        {"losses": losses, "codes": np.array([0, 10, 3, 3, 1, 2])},
        {"losses": losses.astype(np.float64), "codes": np.array([0, -1, 3, 3, 1, 2])},
        {"losses": -losses, "codes": np.array([0, 11, 3, 3, 1, 2])},
        {"losses": losses[::-1].copy(), "codes": np.array([[5, 4, 3], [2, 1, 0]]).ravel()},
    ]
    size, compiled = make_writer(space)
    monkeypatch.setattr(writers, "kernels", lambda: None)
    _, plain = make_writer(space)
    assert_writes_alike(space, size, compiled, plain, cases)


FUSED_SPACES = {
    "services": gym.spaces.Dict(
        {
            "losses": gym.spaces.Box(0.0, np.finfo(np.float32).max, (7,), dtype=np.float32),
            "choices": gym.spaces.MultiDiscrete(np.full(7, 5)),
            "n_services": gym.spaces.Discrete(5),
            "groups": gym.spaces.MultiDiscrete(np.full(7, 3)),
        }
    ),
    "two squashed, shifted count": gym.spaces.Dict(
        {
            "a": gym.spaces.Box(-np.inf, np.inf, (3,)),
            "b": gym.spaces.Discrete(4, start=-2),
            "c": gym.spaces.MultiDiscrete(np.full(2, 9)),
            "d": gym.spaces.Box(-np.inf, np.inf, (4,)),
        }
    ),
}


@pytest.mark.parametrize("name", FUSED_SPACES)
@pytest.mark.crossimpl
def test_a_dicts_entries_in_one_compiled_call_give_the_entry_writers(monkeypatch, name):
    """The fused writer against the entries' own writers and encode, awkward values too."""
    from osfb_gym.wrappers._fast import compiled as _compiled
    from osfb_gym.wrappers._fast import writers

    pytest.importorskip("numba")
    monkeypatch.delenv("OSFB_NUMBA", raising=False)
    loops = _compiled.kernels.__wrapped__()
    monkeypatch.setattr(writers, "kernels", lambda: loops)
    space = FUSED_SPACES[name]
    size, fused = make_writer(space)
    assert fused.__name__ == "write_fused"
    monkeypatch.setattr(writers, "kernels", lambda: None)
    _, plain = make_writer(space)
    assert plain.__name__ == "write_dict"
    space.seed(1)
    cases = [space.sample() for _ in range(10)]
    for value in cases[:6]:
        odd = dict(value)
        for key, sub in space.spaces.items():
            item = np.asarray(value[key])
            if isinstance(sub, gym.spaces.Box):
                special = np.array([-0.0, 3e38, np.inf, np.nan, 1e-45, -5.0, 0.5, 2.0])
                odd[key] = special[: item.size].astype(item.dtype)
            elif isinstance(sub, gym.spaces.MultiDiscrete):
                odd[key] = item.copy()
                odd[key].setflags(write=False)  # the services' choices are read-only
        cases.append(odd)
    box = next(key for key, sub in space.spaces.items() if isinstance(sub, gym.spaces.Box))
    codes = next(k for k, sub in space.spaces.items() if isinstance(sub, gym.spaces.MultiDiscrete))
    base = cases[0]
    cases += [
        {**base, codes: np.where(np.arange(base[codes].size) == 1, -1, base[codes])},  # -1
        {**base, codes: base[codes] + 40},  # beyond the table
        {**base, codes: base[codes].astype(np.int32)},  # another dtype
        {**base, codes: np.repeat(base[codes], 2)[::2]},  # not contiguous
        {**base, box: base[box].astype(np.float64) * 1e30},  # not the Box's dtype
        {**base, box: np.repeat(base[box], 2)[::2]},
        {**base, box: base[box].tolist()},  # not an array
    ]
    assert_writes_alike(space, size, fused, plain, cases)


def test_a_dict_the_compiled_call_cannot_take_keeps_the_entry_writers(monkeypatch):
    from osfb_gym.wrappers._fast import compiled as _compiled
    from osfb_gym.wrappers._fast import writers

    pytest.importorskip("numba")
    monkeypatch.delenv("OSFB_NUMBA", raising=False)
    loops = _compiled.kernels.__wrapped__()
    monkeypatch.setattr(writers, "kernels", lambda: loops)
    inf = np.inf
    for space in (
        SPACES[1],  # a matrix, offsets, MultiBinary, a Dict inside
        gym.spaces.Dict({"a": gym.spaces.Box(-inf, inf, (3,))}),  # nothing coded
        gym.spaces.Dict({"c": gym.spaces.MultiDiscrete([3, 3]), "n": gym.spaces.Discrete(2)}),
        gym.spaces.Dict({"c": gym.spaces.MultiDiscrete([3, 4]), "a": gym.spaces.Box(-inf, inf)}),
        gym.spaces.Dict(  # two float dtypes among the squashed Boxes
            {
                "a": gym.spaces.Box(-inf, inf, (2,), dtype=np.float32),
                "b": gym.spaces.Box(-inf, inf, (2,), dtype=np.float64),
                "c": gym.spaces.MultiDiscrete([3, 3]),
            }
        ),
    ):
        assert make_writer(space)[1].__name__ == "write_dict", space


def assert_writes_alike(space, size, writer, plain, cases):
    """Both writers write ``encode``'s bytes of every case (over a buffer of 7s)."""
    for value in cases:
        a, b = (np.full(size, 7.0, dtype=np.float32) for _ in range(2))
        with np.errstate(invalid="ignore"):  # inf / inf: NumPy warns, numba does not
            writer(value, a)
            plain(value, b)
            want = encode(space, value)
        # compiled against NumPy: one float32 of each encoded value, rounded from float64
        # arithmetic that another compiler or SIMD width may fuse: within 2 float32 ULPs
        assert_close(a, want, ulps=2, path=f"{value}")
        assert_close(b, want, ulps=2, path=f"{value}")
