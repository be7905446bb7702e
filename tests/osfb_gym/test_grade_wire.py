"""The grader's pipe: its frames, their limits, and one round trip per step."""

from __future__ import annotations

import os
import pickle
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.core.family import FAMILIES
from osfb_gym.grade import Diagnosis, run_submission
from osfb_gym.grade.wire import (
    HEADER,
    MAX_MESSAGE_BYTES,
    dumps,
    loads_plain,
    read_message,
    write_message,
)

DTYPES = ["?", "i1", "<i8", ">i4", "u1", "<u8", "<f2", "<f4", "<f8", ">f8", "<c16"]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (2, 0, 4), (1, 1, 1, 2)]


def _same_as_pickle(value):
    """What the agent's process unpickles from dumps is what it unpickled from pickle."""
    ours, theirs = pickle.loads(dumps(value)), pickle.loads(pickle.dumps(value, protocol=5))
    _same(ours, theirs)


def _same(ours, theirs):
    assert type(ours) is type(theirs)
    if isinstance(ours, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert ours.tobytes() == theirs.tobytes()
        for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE", "OWNDATA"):
            assert ours.flags[flag] == theirs.flags[flag], flag
    elif isinstance(ours, dict | tuple | list):
        items = list(ours.items() if isinstance(ours, dict) else enumerate(ours))
        assert len(items) == len(theirs)
        for key, value in items:
            _same(value, theirs[key])
    else:
        assert pickle.dumps(ours) == pickle.dumps(theirs)  # NaN and -0.0 too


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_array_reads_back_as_numpys_own_pickle_gives_it(dtype, shape):
    array = np.array(np.random.default_rng(0).standard_normal(shape) * 100).astype(dtype)
    if array.size and array.dtype.kind == "f":
        array.flat[0] = np.nan
    _same_as_pickle(array)
    _same_as_pickle(np.asfortranarray(array))  # not C-ordered: pickled as numpy does
    array.flags.writeable = False
    _same_as_pickle(array)  # read-only reads back read-only
    _same_as_pickle(("step", array, {"y": array[..., None]}, 0.5, -0.0))


@pytest.mark.parametrize(
    "value",
    [
        np.arange(6.0)[::2],
        np.ma.masked_array([1.0, 2.0], mask=[True, False]),
        np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]),
        np.array(["a", "b"]),
        np.array([None, 1], dtype=object),
        np.datetime64("2020-01-01"),
        np.float32(1.5),
        np.array([1.0], dtype=np.dtype(float, metadata={"unit": "m"})),
        gym.spaces.Box(-1.0, 1.0, (2, 3)),
        [np.ones(2), (np.zeros(1, dtype=np.int8),)],
    ],
)
def test_other_values_read_back_as_pickle_gives_them(value):
    if isinstance(value, gym.Space):
        assert pickle.loads(dumps(value)) == value
    else:
        _same_as_pickle(value)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_steps_of_every_family_read_back_as_pickle_gives_them(name):
    """What the runner hands an agent (obs, action, reward, feedback), as a step request."""
    family = FAMILIES[name]
    env = gym.make(family.env_id, **family.small_kwargs)
    observation, info = env.reset(seed=1)
    _same_as_pickle(("reset", 7, info["feedback"]))
    env.action_space.seed(2)
    for _ in range(3):
        action = env.action_space.sample()
        next_observation, reward, _, _, info = env.step(action)
        _same_as_pickle(
            ("step", observation, action, float(reward), info["feedback"], next_observation)
        )
        observation = next_observation
    env.close()


GOOD = pickle.dumps(("step", np.arange(6.0).reshape(2, 3), {"y": np.ones(2, bool)}, 0.5))


def test_an_oversized_frame_is_refused_before_it_is_read():
    """A length over the limit is refused from the header: not a byte of the body is read."""
    reader, writer = os.pipe()
    try:
        os.write(writer, HEADER.pack(MAX_MESSAGE_BYTES + 1) + b"x" * 16)
        with pytest.raises(ValueError, match="over the .* allowed"):
            read_message(reader, deadline=None)
        assert os.read(reader, 100) == b"x" * 16
        write_message(writer, GOOD)  # a frame within the limit reads back whole
        assert read_message(reader) == GOOD
    finally:
        os.close(reader)
        os.close(writer)


@pytest.mark.parametrize("cut", [0, 3, HEADER.size, HEADER.size + 5])
def test_a_frame_cut_short_is_refused(cut):
    """A writer gone half way through a frame: EOFError, never a partial message."""
    reader, writer = os.pipe()
    os.write(writer, (HEADER.pack(len(GOOD)) + GOOD)[:cut])
    os.close(writer)
    try:
        with pytest.raises(EOFError):
            read_message(reader)
    finally:
        os.close(reader)


@pytest.mark.parametrize(
    "reply",
    [pickle.dumps(np.ones(1)), pickle.dumps(("action", gym.spaces.Discrete(2))), b"\x80junk", b""],
)
def test_a_reply_that_is_not_plain_data_is_refused(reply):
    """The agent's side sends tuples of built-in values: a numpy array, any class, junk: refused."""
    with pytest.raises(Exception) as caught:
        loads_plain(reply)
    assert not isinstance(caught.value, AssertionError)


def _submission(tmp_path, body: str):
    path = tmp_path / "fused.py"
    path.write_text(
        "import numpy as np\nfrom agents.base import Agent\n\n\n" + textwrap.dedent(body)
    )
    return path


SMALL = {"horizon": 6, "batch_size": 2}


def test_the_agent_learns_each_step_before_it_acts_again(tmp_path):
    """One round trip per step carries the last step's update, and the agent runs it first."""
    path = _submission(
        tmp_path,
        """
        class Counts(Agent):
            def reset(self, observation_space, action_space, *, seed=None, feedback=None):
                super().reset(observation_space, action_space, seed=seed, feedback=feedback)
                self.acted_, self.learnt_ = 0, 0

            def act(self, observation):
                if self.learnt_ != self.acted_:
                    raise RuntimeError(f"acting at {self.acted_} having learnt {self.learnt_}")
                self.acted_ += 1
                return np.ones(len(observation), dtype=np.int8)

            def update(self, observation, action, reward, feedback):
                assert feedback["revealed"].all() and action.tolist() == [1, 1]
                self.learnt_ += 1
                if self.learnt_ == 6:  # the episode's last update is delivered too
                    print("learnt all six")
        """,
    )
    name, runs = run_submission(path, "OneSidedLending-v0", seeds=[3, 4], env_kwargs=SMALL)
    assert name == "Counts()" and [len(run.rewards) for run in runs] == [6, 6]


@pytest.mark.parametrize("step", [1, 4, 6])
def test_an_update_that_raises_is_reported_at_its_own_step(tmp_path, step):
    path = _submission(
        tmp_path,
        f"""
        class Fails(Agent):
            def act(self, observation):
                return np.ones(len(observation), dtype=np.int8)

            def update(self, observation, action, reward, feedback):
                self.n_ = getattr(self, "n_", 0) + 1
                if self.n_ == {step}:
                    raise ValueError("learning failed")
        """,
    )
    with pytest.raises(Diagnosis) as caught:
        run_submission(path, "OneSidedLending-v0", seeds=[3], env_kwargs=SMALL)
    assert caught.value.kind == "raises"
    assert "Fails.update() raised ValueError: learning failed" in caught.value.message
    assert f"on step {step} of episode 1 of 1" in caught.value.message


LEARNERS = {
    "OneSidedLending-v0": (
        "tests/osfb_gym/submissions/good_agent.py",  # acts on what it learnt
        {"horizon": 40, "batch_size": 3, "warm_start": 0},  # it acts on the feedback alone
    ),
    "AppleTasting-v0": (
        """
        class Learner(Agent):
            def reset(self, observation_space, action_space, *, seed=None, feedback=None):
                super().reset(observation_space, action_space, seed=seed, feedback=feedback)
                self.w_ = np.zeros(observation_space.shape[-1])

            def act(self, observation):
                score = float(np.ravel(observation) @ self.w_)
                return int(score > 0 or self.rng_.random() < 0.3)

            def update(self, observation, action, reward, feedback):
                self.w_ += 0.1 * reward * np.ravel(observation)
        """,
        {"horizon": 40},
    ),
}


@pytest.mark.parametrize("env_id", sorted(LEARNERS))
def test_an_agent_behind_the_pipe_runs_as_it_runs_in_process(tmp_path, env_id):
    """The same agent, seeds and env: the episode through the pipe is the episode in process.

    Actions exactly; rewards and metrics to 1e-12 relative (the agent's arithmetic runs in
    another process, same code and numpy, single-threaded BLAS in both).
    """
    import importlib.util

    from osfb_gym.core.seeding import spawn_seed
    from osfb_gym.runner import AGENT_STREAM, run_episode

    source, kwargs = LEARNERS[env_id]
    if source.endswith(".py"):
        path = Path(__file__).resolve().parents[2] / source
    else:
        path = _submission(tmp_path, source)
    seeds = [5, 6]
    agent_seeds = [spawn_seed(seed, AGENT_STREAM) for seed in seeds]
    _, piped = run_submission(path, env_id, seeds=seeds, env_kwargs=kwargs, agent_seeds=agent_seeds)
    spec = importlib.util.spec_from_file_location("learner", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    agent_class = next(
        value
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == "learner" and hasattr(value, "act")
    )
    env = gym.make(env_id, **kwargs)
    for seed, through_pipe in zip(seeds, piped, strict=True):
        here = run_episode(env, agent_class(), seed)
        np.testing.assert_array_equal(here.actions, through_pipe.actions)
        np.testing.assert_allclose(here.rewards, through_pipe.rewards, rtol=1e-12, atol=0)
        for name, value in here.metrics.items():
            np.testing.assert_allclose(value, through_pipe.metrics[name], rtol=1e-12, err_msg=name)
    env.close()
