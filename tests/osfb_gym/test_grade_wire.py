"""The grader's pipe: its frames, their limits, and one round trip per step."""

from __future__ import annotations

import os
import pickle
import textwrap

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.grade import Diagnosis, run_submission
from osfb_gym.grade.wire import HEADER, MAX_MESSAGE_BYTES, loads_plain, read_message, write_message

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
