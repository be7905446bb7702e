"""Submissions that attack the grader's clocks, seeds and public truth, as source text.

Kept as text (written to a temporary .py file by the tests), like
:mod:`tests.osfb_gym.submissions.sources`. Placeholders: DATA_HOME (the
folder of the public dataset files), N_SEEDS (episodes of the grading).
"""

_HEAD = "import numpy as np\n\nfrom agents.base import Agent\n"

_APPROVE_ALL = """

class Stalls(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
"""

#: each stalls or floods the grader; the grader must answer within its time limit plus seconds
STALLS: dict[str, str] = {
    "sleeps_at_import": _HEAD + "import time\n\ntime.sleep(3600)\n" + _APPROVE_ALL,
    "sleeps_in_act": _HEAD
    + """import time


class Stalls(Agent):
    def act(self, observation):
        time.sleep(3600)
""",
    # the old grader restarted its loading clock on every ("stage", ...) frame
    "floods_stage_frames": _HEAD
    + """import pickle
import sys
import time

from osfb_gym.grade.sandbox import write_message

_TO_GRADER = int(sys.argv[1])
_END = time.monotonic() + 3600
while time.monotonic() < _END:
    write_message(_TO_GRADER, pickle.dumps(("stage", "importing the file")))
    time.sleep(0.05)
"""
    + _APPROVE_ALL,
    "one_forged_frame_then_sleeps": _HEAD
    + """import pickle
import sys
import time

from osfb_gym.grade.sandbox import write_message

write_message(int(sys.argv[1]), pickle.dumps(("stage", "checking Stalls against the contract")))
time.sleep(3600)
"""
    + _APPROVE_ALL,
    "floods_output": _HEAD + "while True:\n    print('x' * 1000)\n" + _APPROVE_ALL,
    "floods_the_pipe_with_junk": _HEAD
    + """import os
import sys

while True:
    os.write(int(sys.argv[1]), b"\\x00" * 4096)
"""
    + _APPROVE_ALL,
    "never_answers": _HEAD
    + """import os
import signal


class Stalls(Agent):
    def act(self, observation):
        os.kill(os.getpid(), signal.SIGSTOP)  # stopped: no CPU time, no reply
""",
    # forged replies while it sleeps: the grader goes on and writes an observation larger than
    # the pipe holds to a process that never reads (the old grader blocked in write forever)
    "stops_reading_the_pipe": _HEAD
    + """import pickle
import sys
import time

from osfb_gym.grade.sandbox import encode_action, write_message

_TO_GRADER = int(sys.argv[1])
_ACTION = ("action", encode_action(np.ones(4000, dtype=np.int8)), "x")
for _reply in (("loaded", "Stalls()"), ("ok",), _ACTION, ("ok",)):
    write_message(_TO_GRADER, pickle.dumps(_reply))
time.sleep(3600)
"""
    + _APPROVE_ALL,
}

#: each reads the public truth of a dataset-backed world in its own process
PUBLIC_TRUTH: dict[str, str] = {
    # lending on German credit: rebuild the public env, read its fitted beta*, decide as Bayes
    "rebuilds_german_beta": _HEAD
    + """import gymnasium as gym

import osfb_gym  # noqa: F401  (registers the ids)

_PUBLIC = gym.make("OneSidedLending-v0", dataset="german_credit", data_home="DATA_HOME").unwrapped
_BETA, _CUTOFF = np.asarray(_PUBLIC._data.beta), float(_PUBLIC.cutoff)


class ReadsBeta(Agent):
    def act(self, observation):
        x = np.asarray(observation, dtype=float)
        return (1.0 / (1.0 + np.exp(-(x @ _BETA))) > _CUTOFF).astype(np.int8)
""",
    # apple tasting on spambase: find each example's row in the public file, taste its label
    "looks_up_spambase_rows": _HEAD
    + """import gymnasium as gym

import osfb_gym  # noqa: F401

_PUBLIC = gym.make("AppleTasting-v0", dataset="spambase", data_home="DATA_HOME").unwrapped
_ROWS, _LABELS = np.asarray(_PUBLIC._data.X, dtype=float), np.asarray(_PUBLIC._data.y)


class LooksUp(Agent):
    def act(self, observation):
        nearest = np.argmin(((_ROWS - np.asarray(observation, dtype=float)) ** 2).sum(axis=1))
        return int(_LABELS[nearest])
""",
}

#: searches the grading seed from its reset seed, rebuilds the world, decides as Bayes
SEARCHES_THE_SEED = (
    _HEAD
    + """import gymnasium as gym

import osfb_gym  # noqa: F401
from osfb_gym.core.seeding import spawn_seed
from osfb_gym.grade import held_out_seeds
from osfb_gym.grade.secret import grading_streams


def _episode_seed(agent_seed):
    for grading_seed in range(3000):
        episodes = held_out_seeds(N_SEEDS, grading_seed)
        for episode in episodes:  # the old grader: the agent's seed derived from the episode's
            if spawn_seed(episode, 1) == agent_seed:
                return episode
        agents = grading_streams(N_SEEDS, grading_seed).agent_seeds
        if agent_seed in agents:  # the grader's own agent stream, searched the same way
            return episodes[agents.index(agent_seed)]
    return None


class SearchesTheSeed(Agent):
    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        episode = _episode_seed(seed)
        self.env_ = None
        if episode is not None:
            self.env_ = gym.make("OneSidedLending-v0", horizon=60).unwrapped
            self.env_.reset(seed=episode)

    def act(self, observation):
        if self.env_ is None or not np.array_equal(self.env_._x, observation):
            return np.ones(len(observation), dtype=np.int8)
        decision = (self.env_._mu > self.env_.cutoff).astype(np.int8)
        self.env_.step(decision)
        return decision
"""
)

#: what the agent's process can read of its surroundings: written to REPORT_PATH
SNOOPS_AROUND = (
    _HEAD
    + """import json
import os


class SnoopsAround(Agent):
    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        spaces = (observation_space, action_space)
        found = {"variables": dict(os.environ), "seed": seed,
                 "unseeded": [space._np_random is None for space in spaces]}
        parent = os.getppid()
        for name in ("environ", "mem", "maps"):
            try:
                with open(f"/proc/{parent}/{name}", "rb") as stream:
                    stream.read(1)
                found[name] = "read"
            except OSError:
                found[name] = "refused"
        with open("REPORT_PATH", "a") as stream:
            stream.write(json.dumps(found) + "\\n")

    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
"""
)

#: floods the report instead of the pipe: an enormous message and repr
FLOODS_THE_REPORT = (
    _HEAD
    + """

class Verbose(Agent):
    def __repr__(self):
        return "Verbose(" + "x" * 10_000_000 + ")"

    def act(self, observation):
        raise RuntimeError("y" * 10_000_000)
"""
)
