"""Every id works with the tools its users bring: Gymnasium's, stable-baselines3's, no project code.

Modelled on Gymnasium's own ``tests/envs/test_envs.py`` (render modes,
pickling) and parametrised over the table of ``envs_registry`` plus the
documented variants (``cases.py``), so a new family is covered for free.
Gymnasium's ``check_env`` (with its render check), determinism and the
no-leak probe of the channels are in ``test_generic.py``; this module adds
the ecosystem: SB3's ``make_vec_env``, ``gym.make_vec`` (sync, async,
native), sub-envs out of step, ``TimeAwareObservation``, Gymnasium's
common and vector wrappers, and a cheater's walk over every public
attribute. moviepy is not a dependency, so ``RecordVideo`` is not run;
``RenderCollection`` checks the frames it would encode.
"""

from __future__ import annotations

import inspect
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import (
    FlattenObservation,
    NormalizeObservation,
    NormalizeReward,
    RecordEpisodeStatistics,
    RenderCollection,
    TimeAwareObservation,
)
from gymnasium.wrappers import vector as vector_wrappers
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from osfb_gym.core.channels import HideOracle
from osfb_gym.core.family import FAMILIES, load
from osfb_gym.wrappers import needs_flattening
from tests.helpers import assert_same, differs
from tests.osfb_gym.envs.cases import CASES, DEFAULTS, case_param
from tests.osfb_gym.envs.hidden import override_hidden

PARAMS = [case_param(c) for c in CASES]
DEFAULTS_PARAMS = [case_param(c) for c in CASES if c in DEFAULTS]
# rgb_array frames cost a matplotlib draw each (about 0.2 s here): every id's defaults in
# the default run, every variant with -m slow
RGB_PARAMS = [case_param(c, slow=c not in DEFAULTS) for c in CASES]
STEPS = 12  # below every variant's horizon: no settlement of hidden losses inside the walk


def make(case: tuple[str, dict[str, Any]], **extra: Any) -> gym.Env:
    env_id, kwargs = case
    return gym.make(env_id, **{**kwargs, **extra})


def has_horizon(case: tuple[str, dict[str, Any]]) -> bool:
    return "horizon" in inspect.signature(type(make(case).unwrapped)).parameters


def length_kwargs(case: tuple[str, dict[str, Any]], steps: int) -> dict[str, Any]:
    """Set the episode's length (``horizon``, or the services' ``k``)."""
    name = "horizon" if has_horizon(case) else "n_services"
    return {name: steps}


def flat(env: gym.Env) -> gym.Env:
    """Flatten a Dict or matrix observation, as any MLP policy needs."""
    return FlattenObservation(env) if needs_flattening(env.observation_space) else env


# ----------------------------------------------------------------------------- render modes
@pytest.mark.parametrize("case", PARAMS)
def test_ansi_render_is_a_line_of_text(case):
    env = make(case, render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)
    env.step(env.action_space.sample())
    assert isinstance(env.render(), str) and env.render()


@pytest.mark.parametrize("case", RGB_PARAMS)  # (every id's defaults; variants with -m slow)
def test_ansi_render_after_reset_shows_the_first_context(case):
    """Right after reset the line shows what the agent is shown first (Gymnasium's check)."""
    env = make(case, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    line = env.render()
    assert isinstance(line, str) and "reset" in line
    if isinstance(obs, np.ndarray):  # a stream's example or a lending batch: its first values
        first = str(round(float(np.ravel(obs)[0]), 2))
        assert any(f"{start}{first}" in line for start in ("x=[", "x=[[", ") [[")), line
    else:  # services: the users to serve
        assert f"{env.unwrapped.n_users} users" in line, line
    with_truth = make(case, render_mode="ansi", render_truth=True)
    with_truth.reset(seed=0)
    assert with_truth.render() == line  # nothing hidden is shown at reset


@pytest.mark.parametrize("case", DEFAULTS_PARAMS)
def test_render_truth_is_fixed_when_the_env_is_made(case):
    """A made env cannot be switched to draw the truth (a public attribute would leak it)."""
    for truth in (False, True):
        env = make(case, render_mode="ansi", render_truth=truth)
        with pytest.raises(AttributeError, match="render_truth"):
            env.unwrapped.render_truth = not truth
        assert env.unwrapped.render_truth is truth
        copy = pickle.loads(pickle.dumps(env))
        assert copy.unwrapped.render_truth is truth
        with pytest.raises(AttributeError, match="render_truth"):
            copy.unwrapped.render_truth = not truth


@pytest.mark.parametrize("case", RGB_PARAMS)
@pytest.mark.parametrize("truth", [False, True], ids=["no-truth", "truth"])
def test_both_modes_render_through_a_whole_episode(case, truth):
    """rgb and ansi after reset, after steps and at the episode's end, with and without truth.

    (Lending's rgb render once crashed when the truth was asked for after the
    steps it draws had been recorded without it.)
    """
    # a short episode; a dataset stream that ends within 12 steps is left to end itself
    natural = make(case).unwrapped
    short = getattr(natural, "horizon", 0) > 12
    for mode in ("ansi", "rgb_array"):
        extra = length_kwargs(case, 5) if short else {}
        env = make(case, render_mode=mode, render_truth=truth, **extra)
        env.reset(seed=0)
        env.action_space.seed(0)
        frames = [env.render()]
        done = False
        while not done:
            *_, terminated, truncated, _ = env.step(env.action_space.sample())
            done = terminated or truncated
            if mode == "ansi" or done or len(frames) == 1:  # (rgb: first step and end)
                frames.append(env.render())
        for frame in frames:
            if mode == "ansi":
                assert isinstance(frame, str) and frame
            else:
                assert isinstance(frame, np.ndarray) and frame.shape == frames[0].shape
        env.close()


@pytest.mark.parametrize("case", RGB_PARAMS)
def test_rgb_array_render_is_one_frame_size_throughout(case):
    """``rgb_array``: (H, W, 3) uint8 frames, all of one size (a video needs it)."""
    env = make(case, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    env.action_space.seed(0)
    for _ in range(3):
        env.step(env.action_space.sample())
    frame = env.render()
    for image in (first, frame):
        assert isinstance(image, np.ndarray) and image.dtype == np.uint8
        assert image.ndim == 3 and image.shape[2] == 3
    assert first.shape == frame.shape and frame.std() > 0


@pytest.mark.parametrize("case", PARAMS)
@pytest.mark.filterwarnings("ignore:.*render_mode")  # Gymnasium's own warning, before ours
def test_bad_render_arguments_name_the_parameter(case):
    with pytest.raises(TypeError, match="render_truth"):
        make(case, render_truth="yes")
    with pytest.raises(ValueError, match="render_mode"):
        make(case, render_mode="video").unwrapped  # noqa: B018


# ----------------------------------------------------------------------------- pickling
@pytest.mark.parametrize("case", PARAMS)
def test_pickled_env_continues_the_same_episode(case):
    env = make(case)
    env.reset(seed=5)
    env.action_space.seed(5)
    env.step(env.action_space.sample())
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(3):
        action = env.action_space.sample()
        assert_same(env.step(action), copy.step(action))


# ----------------------------------------------------------------------------- time limit
@pytest.mark.parametrize("case", PARAMS)
def test_time_aware_observation_knows_the_true_horizon(case):
    env = make(case)
    assert TimeAwareObservation(env).max_timesteps == env.unwrapped.horizon
    assert TimeAwareObservation(make(case, max_episode_steps=3)).max_timesteps == 3
    short = TimeAwareObservation(
        make(case, **length_kwargs(case, 4)), flatten=False, normalize_time=True
    )
    assert short.max_timesteps == short.unwrapped.horizon == 4
    obs, _ = short.reset(seed=0)
    times = [float(obs["time"][0])]
    done = False
    while not done:
        obs, _, terminated, truncated, _ = short.step(short.action_space.sample())
        times.append(float(obs["time"][0]))
        done = terminated or truncated
    assert times == [0.0, 0.25, 0.5, 0.75, 1.0]


@pytest.mark.parametrize("case", PARAMS)
def test_sub_envs_at_different_horizons_step_past_the_shorter_one(case):
    """Infos of sub-envs out of step (one resetting, one stepping) stack in a SyncVectorEnv."""
    if not has_horizon(case):
        pytest.skip("a services episode lasts n_services steps, which also sizes its spaces")
    fns = [lambda n=n: make(case, **length_kwargs(case, n)) for n in (2, 3)]
    envs = gym.vector.SyncVectorEnv(fns)
    envs.reset(seed=[0, 1])
    envs.action_space.seed(0)
    ended = np.zeros(2, dtype=int)
    for _ in range(9):
        _, _, terminated, truncated, info = envs.step(envs.action_space.sample())
        ended += terminated | truncated
        assert set(info) >= {"feedback", "_feedback"}
    assert ended.tolist() == [3, 2]  # episodes of 2 and 3 steps, each followed by its reset step


# ----------------------------------------------------------------------------- SB3
@pytest.mark.parametrize("case", PARAMS)
def test_sb3_make_vec_env_with_its_defaults(case):
    """``make_vec_env(id)`` asks for ``render_mode="rgb_array"`` and a DummyVecEnv."""
    env_id, kwargs = case
    venv = make_vec_env(env_id, n_envs=2, seed=0, env_kwargs=kwargs)
    assert isinstance(venv, DummyVecEnv) and venv.render_mode == "rgb_array"
    venv.reset()
    for _ in range(3):
        venv.step(np.stack([venv.action_space.sample() for _ in range(2)]))
    venv.close()


@pytest.mark.parametrize("env_id", ["AppleTasting-v0"])
def test_sb3_subproc_vec_env(env_id):
    venv = make_vec_env(
        env_id,
        n_envs=2,
        seed=0,
        env_kwargs={"horizon": 3},
        vec_env_cls=SubprocVecEnv,
        vec_env_kwargs={"start_method": "fork"},
    )
    venv.reset()
    for _ in range(7):  # past the horizon: SB3 resets the sub-envs itself
        _, _, dones, _ = venv.step(np.zeros(2, dtype=np.int64))
    assert len(dones) == 2
    venv.close()


# ----------------------------------------------------------------------------- gym.make_vec
@pytest.mark.parametrize("case", PARAMS)
def test_make_vec_sync_and_the_native_vector_env(case):
    """sync: Gymnasium's SyncVectorEnv; the default mode (lending's entry point) autoresets too."""
    env_id, kwargs = case
    extra = length_kwargs(case, 3)
    for mode in ("sync", None):
        envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, **{**kwargs, **extra})
        assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
        envs.reset(seed=0)
        for _ in range(8):
            envs.step(envs.action_space.sample())
        envs.close()


def test_make_vec_async_on_one_id():
    envs = gym.make_vec("RejectOption-v0", num_envs=2, vectorization_mode="async", horizon=3)
    envs.reset(seed=0)
    for _ in range(8):
        *_, info = envs.step(envs.action_space.sample())
    assert "feedback" in info
    envs.close()


@pytest.mark.slow
@pytest.mark.parametrize("case", PARAMS)
def test_make_vec_async(case):
    env_id, kwargs = case
    envs = gym.make_vec(
        env_id, num_envs=2, vectorization_mode="async", **{**kwargs, **length_kwargs(case, 3)}
    )
    envs.reset(seed=0)
    for _ in range(8):
        envs.step(envs.action_space.sample())
    envs.close()


def test_lending_native_vector_env_under_vector_wrappers():
    envs = gym.make_vec("OneSidedLending-v0", num_envs=4, horizon=20)
    envs = vector_wrappers.NormalizeObservation(vector_wrappers.RecordEpisodeStatistics(envs))
    envs.reset(seed=0)
    for _ in range(45):  # past two horizons: NEXT_STEP autoreset
        *_, info = envs.step(envs.action_space.sample())
    assert "feedback" in info


# ----------------------------------------------------------------------------- wrappers
@pytest.mark.parametrize("case", PARAMS)
def test_common_wrappers(case):
    """Gymnasium's common wrappers stacked on each other; frames collected on the way."""
    env = RenderCollection(make(case, render_mode="ansi"))
    env = NormalizeReward(NormalizeObservation(flat(RecordEpisodeStatistics(env))))
    env = TimeAwareObservation(env)
    env.reset(seed=0)
    for _ in range(3):
        obs, *_ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs.astype(env.observation_space.dtype))
    assert len(env.render()) == 4


@pytest.mark.parametrize("case", RGB_PARAMS)
def test_frames_collected_as_a_video_would_be(case):
    """What ``RecordVideo`` encodes (moviepy is not installed here): frames of one size."""
    env = RenderCollection(make(case, render_mode="rgb_array"))
    env.reset(seed=0)
    env.step(env.action_space.sample())
    frames = env.render()
    assert len(frames) == 2 and frames[0].shape == frames[1].shape


@pytest.mark.parametrize("case", PARAMS)
def test_vector_wrappers(case):
    env_id, kwargs = case
    envs = gym.make_vec(
        env_id,
        num_envs=2,
        vectorization_mode="sync",
        wrappers=[flat],
        **{**kwargs, **length_kwargs(case, 3)},
    )
    envs = vector_wrappers.RecordEpisodeStatistics(envs)
    envs = vector_wrappers.NormalizeReward(vector_wrappers.NormalizeObservation(envs))
    envs.reset(seed=0)
    episodes = 0
    for _ in range(8):
        *_, info = envs.step(envs.action_space.sample())
        episodes += int(info.get("_episode", np.zeros(2, dtype=bool)).sum())
    assert episodes >= 2


# ----------------------------------------------------------------------------- the cheater's walk
def public_state(env: gym.Env) -> list[tuple[str, str, Any]]:
    """Every public attribute and property of every wrapper layer, in a comparable form.

    Layers themselves (``env``, ``unwrapped``) are walked, not compared
    whole: their private state holds the truth the test changes.
    """
    state = []
    layer: Any = env
    while True:
        for name in dir(layer):
            if name.startswith("_"):
                continue
            try:
                value = getattr(layer, name)
            except Exception as error:  # a property may refuse (e.g. before reset)
                state.append((type(layer).__name__, name, type(error).__name__))
                continue
            if isinstance(value, gym.Env) or inspect.ismethod(value) or inspect.isroutine(value):
                continue
            try:
                value = pickle.dumps(value)
            except Exception:
                value = repr(value)
            state.append((type(layer).__name__, name, value))
        if not isinstance(layer, gym.Wrapper):
            return state
        layer = layer.env


def cheat(case: tuple[str, dict[str, Any]], extreme: str, **extra: Any) -> list:
    """A loop that reads every public attribute, with hidden outcomes set to ``extreme``."""
    env = flat(HideOracle(make(case, **extra)))
    env.reset(seed=13)
    env.action_space.seed(13)
    seen: list = [public_state(env)]
    for _ in range(STEPS):
        action = env.action_space.sample()
        override_hidden(env.unwrapped, action, extreme)
        *_, terminated, truncated, _ = env.step(action)
        frame = env.render() if env.render_mode == "ansi" else None
        seen.append((public_state(env), frame))
        if terminated or truncated:
            break
    if env.render_mode == "rgb_array":
        seen.append(env.render())
    return seen


@pytest.mark.parametrize("case", PARAMS)
def test_no_public_attribute_or_render_reveals_hidden_truth(case):
    """Attributes, properties and text renders are identical whatever the hidden outcomes are."""
    assert_same(cheat(case, "low", render_mode="ansi"), cheat(case, "high", render_mode="ansi"))
    probe = make(case).unwrapped
    if probe.feedback_mode == "one_sided":
        # the test has teeth: asked for the truth, the render does show it
        low = cheat(case, "low", render_mode="ansi", render_truth=True)
        assert differs(low, cheat(case, "high", render_mode="ansi", render_truth=True))


@pytest.mark.parametrize("case", RGB_PARAMS)
def test_no_rgb_frame_reveals_hidden_truth(case):
    low = cheat(case, "low", render_mode="rgb_array")
    assert_same(low, cheat(case, "high", render_mode="rgb_array"))


class KeepsOracle(gym.Wrapper):
    """A planted leak: a wrapper that keeps the last oracle public (as HideOracle once did)."""

    last_oracle: Any = None

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        self.last_oracle = result[4]["oracle"]
        return result


@pytest.mark.parametrize("case", DEFAULTS_PARAMS)
def test_the_walk_and_the_familys_probe_catch_a_planted_leak(case):
    """Every family's probe moves the truth a public attribute would leak, and the walk sees it.

    The family's probe comes from its record alone, so a family whose probe
    set nothing hidden (or the wrong thing) would pass the no-leak tests
    vacuously: this one would fail.
    """
    if make(case).unwrapped.feedback_mode == "full":
        pytest.skip("nothing is hidden under full feedback")

    def run(extreme: str) -> list:
        env = KeepsOracle(make(case))
        env.reset(seed=0)
        env.action_space.seed(0)
        states, hidden = [], 0
        for _ in range(STEPS):
            action = env.action_space.sample()
            hidden += override_hidden(env.unwrapped, action, extreme)
            *_, terminated, truncated, _ = env.step(action)
            states.append(public_state(env))
            if terminated or truncated:
                break
        assert hidden, "the probe found nothing hidden in the whole walk"
        return states

    assert differs(run("low"), run("high"))


def test_every_family_names_its_no_leak_probe_in_its_own_package():
    for name, record in FAMILIES.items():
        assert record.probe is not None, name
        assert record.probe.startswith(f"osfb_gym.envs.{name}."), record.probe
        assert callable(load(record.probe)), record.probe


def test_every_family_has_both_render_modes():
    for env_id, _ in CASES:
        assert set(gym.spec(env_id).make().metadata["render_modes"]) >= {"ansi", "rgb_array"}
