"""The grader's pipe: binary frames, framing limits, and one round trip per step."""

from __future__ import annotations

import os
import pickle
import struct
import textwrap

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.core.family import FAMILIES
from osfb_gym.grade import Diagnosis, run_submission
from osfb_gym.grade.wire import (
    FRAME_DEPTH,
    FRAME_TAG,
    HEADER,
    MAX_MESSAGE_BYTES,
    pack,
    read_message,
    unpack,
    write_message,
)

DTYPES = ["?", "i1", "<i8", ">i4", "u1", "<u8", "<f4", "<f8", ">f8", "<c16"]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (2, 0, 4), (1, 1, 1, 2)]


def _same(a, b):
    """Equal values of equal types; arrays of equal dtype, shape and bytes, writeable."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, np.ndarray | np.generic):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        if isinstance(b, np.ndarray):
            assert b.flags.writeable and b.flags.c_contiguous and b.flags.owndata
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, float):
        assert struct.pack("<d", a) == struct.pack("<d", b)  # NaN, -0.0 and inf too
    else:
        assert a == b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_array_round_trips_bit_for_bit(dtype, shape):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal(shape) * 100).astype(dtype)
    if np.dtype(dtype).kind == "f" and array.size:
        array.flat[0] = np.nan
    _same(array, unpack(pack(array)))
    _same(("step", array, {"y": array}), unpack(pack(("step", array, {"y": array}))))


def test_plain_values_and_numpy_scalars_keep_their_types():
    message = (
        "step",
        None,
        True,
        False,
        -(2**63),
        2**63 - 1,
        0.1,
        -0.0,
        float("inf"),
        float("nan"),
        "δ text",
        b"\x00\xff",
        (),
        {},
        {"nested": {"deeper": (1, np.float32(2.5), np.int64(-3), np.bool_(True))}},
        np.float64(1.5),
        np.complex64(1 - 2j),
    )
    _same(message, unpack(pack(message)))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_steps_of_every_family_round_trip_as_the_pickle_does(name):
    """What the runner hands an agent (obs, action, reward, feedback) survives both encodings.

    Where a binary frame cannot carry a value the grader pickles that message:
    lending's steps, the hot path of the default grading, must be binary.
    """
    family = FAMILIES[name]
    env = gym.make(family.env_id, **family.small_kwargs)
    observation, info = env.reset(seed=1)
    env.action_space.seed(2)
    for _ in range(3):
        action = env.action_space.sample()
        next_observation, reward, _, _, info = env.step(action)
        message = ("step", observation, action, float(reward), info["feedback"], next_observation)
        frame = pack(message)
        if name == "lending":
            assert frame is not None
        if frame is not None:
            _same(pickle.loads(pickle.dumps(message)), unpack(frame))
        observation = next_observation
    env.close()


@pytest.mark.parametrize(
    "value",
    [
        [1, 2],  # a list: the spaces read it as an array, pickle keeps it a list
        np.array(["a", "b"]),
        np.array([object()], dtype=object),
        np.zeros((3, 4), order="F"),
        np.zeros(6)[::2],
        np.ma.masked_array([1.0, 2.0]),
        np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]),
        np.datetime64("2020-01-01"),
        2**63,
        {1: "a key that is no str"},
        {1.5},
        gym.spaces.Discrete(2),
    ],
)
def test_values_without_a_binary_form_are_left_to_pickle(value):
    assert pack(("step", value)) is None


def test_nesting_deeper_than_the_limit_is_left_to_pickle():
    deep: tuple = ()
    for _ in range(FRAME_DEPTH + 1):
        deep = (deep,)
    assert pack(deep) is None


GOOD = pack(("step", np.arange(6.0).reshape(2, 3), {"y": np.ones(2, bool)}, 0.5, "ok"))


def _array_frame(code: bytes, shape: tuple[int, ...], data: bytes) -> bytes:
    dims = struct.pack(f"<{len(shape)}Q", *shape)
    return FRAME_TAG + b"a" + bytes((len(code),)) + code + bytes((len(shape),)) + dims + data


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\x80\x05junk", id="no tag"),
        pytest.param(FRAME_TAG + b"Q", id="unknown type byte"),
        pytest.param(GOOD + b"\x00", id="trailing bytes"),
        pytest.param(FRAME_TAG + b"s" + struct.pack("<I", 2) + b"\xff\xfe", id="no utf-8"),
        pytest.param(FRAME_TAG + b"d" + struct.pack("<I", 1) + b"i" + bytes(8) + b"N", id="key"),
        pytest.param(_array_frame(b"|O", (1,), bytes(8)), id="object dtype"),
        pytest.param(_array_frame(b"<M8[s]", (1,), bytes(8)), id="datetime dtype"),
        pytest.param(_array_frame(b"zz", (1,), bytes(8)), id="no dtype"),
        pytest.param(_array_frame(b"<f8", (2,), bytes(8)), id="data cut short"),
        pytest.param(_array_frame(b"<f8", (2**40, 2**20), bytes(8)), id="huge shape"),
        pytest.param(_array_frame(b"<f8", (2**63, 0, 2**62), b""), id="empty huge shape"),
        pytest.param(FRAME_TAG + b"g\x03<f8\x01" + struct.pack("<Q", 1) + bytes(8), id="scalar"),
        pytest.param(FRAME_TAG + b"t" * 40 + struct.pack("<I", 1) * 40, id="too deep"),
    ],
)
def test_a_malformed_frame_is_refused_with_a_clear_error(frame):
    with pytest.raises(ValueError, match="malformed frame"):
        unpack(frame)


def test_every_truncation_of_a_frame_is_refused():
    for cut in range(len(GOOD)):
        with pytest.raises(ValueError, match="malformed frame"):
            unpack(GOOD[:cut])


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
