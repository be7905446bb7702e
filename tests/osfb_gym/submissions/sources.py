"""Submissions as source text: one per kind of failure the grader must diagnose, and a snoop.

Kept as text (written to a temporary .py file by the tests) so that neither
pytest's module collection nor ruff trips over the deliberately broken code.
"""

SOURCES: dict[str, str] = {
    "bad_signature": """\
import numpy as np

from agents.base import Agent


class NoFeedback(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)

    def update(self, observation, action):  # the runner also passes reward and feedback
        pass
""",
    "import_error": """\
import numpy as np
import a_package_that_does_not_exist  # noqa: F401

from agents.base import Agent


class NeedsAPackage(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
""",
    "infinite_loop": """\
import numpy as np

from agents.base import Agent


class NeverReturns(Agent):
    def act(self, observation):
        while True:
            np.sqrt(2.0)
""",
    "invalid_action": """\
from agents.base import Agent


class ReturnsAFloat(Agent):
    def act(self, observation):
        return 0.7  # a probability, not an array of 0/1 decisions
""",
    "not_an_agent": """\
import numpy as np


class ApproveAll:
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
""",
    "raises_in_act": """\
import numpy as np

from agents.base import Agent


class Crashes(Agent):
    def act(self, observation):
        weights = np.zeros(3)
        return (observation @ weights > 0).astype(np.int8)  # shapes do not match
""",
    "state_in_init": """\
import numpy as np

from agents.base import Agent


class Stateful(Agent):
    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha
        self.weights_ = np.zeros(5)  # learned state belongs in reset()

    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
""",
    "syntax_error": """\
from agents.base import Agent


class Broken(Agent)
    def act(self, observation):
        return 1
""",
    "two_agents": """\
import numpy as np

from agents.base import Agent


class ApproveAll(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)


class DenyAll(Agent):
    def act(self, observation):
        return np.zeros(len(observation), dtype=np.int8)
""",
    "snoops_for_the_oracle": """\
import numpy as np

from agents.base import Agent


class Snoop(Agent):
    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        if "oracle" in (feedback or {}):
            raise RuntimeError("saw the oracle at reset")

    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)

    def update(self, observation, action, reward, feedback):
        if "oracle" in feedback or "mu" in feedback or "loss" in feedback:
            raise RuntimeError("saw the oracle")
""",
    "exits_abruptly": """\
import os

import numpy as np

from agents.base import Agent


class Quits(Agent):
    def act(self, observation):
        os._exit(3)
""",
    "random_any_env": """\
from agents.base import Agent


class RandomActions(Agent):
    # a legal action on any env: a draw from the action space, seeded in reset
    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        action_space.seed(seed)

    def act(self, observation):
        return self.action_space_.sample()
""",
}


# ---------------------------------------------------------------------------- cheats
# Each cheat is a snippet that may patch things at import and defines `truth_<name>(agent,
# observation)`: the Bayes decisions it found for the batch, or None. On the first step of an
# episode the cheating agent tries each cheat; it acts on the first that finds the truth and
# otherwise approves everyone, so a cheat that fails scores exactly as the honest ApproveAll.
# Placeholders: RESULT_PATH (the grader's plot file) and PID_PATH (where a detached grandchild
# would write its pid).
CHEATS: dict[str, str] = {
    "scans_sys_modules": """
import sys

# what the agent's process had loaded before this file ran: the grader's modules must be absent
LOADED_AT_START = sorted(name for name in sys.modules if name.startswith(("osfb_gym", "envs_reg")))


def truth_scans_sys_modules(agent, observation):
    if LOADED_AT_START:
        raise RuntimeError(f"the grader's modules are loaded: {LOADED_AT_START}")
    for module in list(sys.modules.values()):
        for value in list(vars(module).values()):
            if type(value).__name__ == "OneSidedLendingEnv" and hasattr(value, "_mu"):
                return value._mu > value.cutoff
    return None
""",
    "patches_env_step": """
from osfb_gym.envs.lending import OneSidedLendingEnv

original_step = OneSidedLendingEnv.step


def zero_loss_step(self, action):
    obs, reward, terminated, truncated, info = original_step(self, action)
    info["oracle"]["loss"] = 0.0
    info["oracle"]["bayes_action"] = action
    return obs, reward, terminated, truncated, info


OneSidedLendingEnv.step = zero_loss_step


def truth_patches_env_step(agent, observation):
    return None
""",
    "replaces_metrics_get": """
import osfb_gym.runner
from osfb_gym.core.metrics import EpisodeMetrics
from osfb_gym.envs.lending import LendingMetrics


def perfect(self):
    return {"steps": float(self.steps), "cumulative_loss": 0.0, "average_loss": 0.0,
            "bayes_agreement": 1.0, "approval_rate": 0.5}


EpisodeMetrics.get = perfect
LendingMetrics.get = perfect
osfb_gym.runner.run_episode = None


def truth_replaces_metrics_get(agent, observation):
    return None
""",
    "finds_env_through_gc": """
import gc


def truth_finds_env_through_gc(agent, observation):
    for value in gc.get_objects():
        if type(value).__name__ == "OneSidedLendingEnv" and getattr(value, "_world", None):
            if np.array_equal(getattr(value, "_x", None), observation):  # the env of this batch
                return value._mu > value.cutoff  # the hidden mu(x . beta*) against the cutoff
    return None
""",
    "walks_frames_to_mu": """
import inspect


def truth_walks_frames_to_mu(agent, observation):
    frame = inspect.currentframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            env = getattr(value, "unwrapped", None)
            if env is not None and getattr(env, "_mu", None) is not None:
                return env._mu > env.cutoff
        frame = frame.f_back
    return None
""",
    "reads_the_graders_proc": """
import os


def truth_reads_the_graders_proc(agent, observation):
    for name in ("environ", "mem", "maps"):  # secrets, and the memory holding beta*
        try:
            with open(f"/proc/{os.getppid()}/{name}", "rb") as stream:
                stream.read(1)
        except OSError:
            continue
        raise RuntimeError(f"read the grader's /proc/{os.getppid()}/{name}")
    return None
""",
    "replays_the_world": """
import gymnasium as gym

import osfb_gym  # noqa: F401  (registers the ids in this process)

REPLAY = {}


def truth_replays_the_world(agent, observation):
    # the old grader's held-out seeds were public: rebuild the world and read its mu
    if "env" not in REPLAY:
        REPLAY["env"] = None
        for seed in range(1_000_000, 1_000_010):
            env = gym.make("OneSidedLending-v0", horizon=60)
            first, _ = env.reset(seed=seed)
            if np.array_equal(first, observation):
                REPLAY["env"] = env
                break
    env = REPLAY["env"]
    if env is None:
        return None
    decision = (env.unwrapped._mu > env.unwrapped.cutoff).astype(np.int8)
    env.step(decision)
    return decision
""",
    "writes_the_result_file": """
import os


def truth_writes_the_result_file(agent, observation):
    try:
        with open("RESULT_PATH", "wb") as stream:
            stream.write(b"a forged grade")
    except OSError:
        pass
    return None
""",
    "forks_a_detached_child": """
import os
import time


def truth_forks_a_detached_child(agent, observation):
    try:
        child = os.fork()
    except OSError:
        return None
    if child == 0:  # a daemon: new session, second fork, outlives the grading
        os.setsid()
        if os.fork() == 0:
            with open("PID_PATH", "w") as stream:
                stream.write(str(os.getpid()))
            time.sleep(120)
        os._exit(0)
    os.waitpid(child, 0)
    return None
""",
    "signals_the_grader": """
import os
import signal


def truth_signals_the_grader(agent, observation):
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGSTOP, signal.SIGKILL):
        for target in (os.getppid(), -os.getpgid(os.getppid())):
            try:
                os.kill(target, number)
            except OSError:
                pass
    return None
""",
}

CHEAT_AGENT = """

class Cheat(Agent):
    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        self.finder_ = None
        self.tried_ = False

    def act(self, observation):
        if self.finder_ is not None:  # a cheat that worked: keep using it
            return np.asarray(self.finder_(self, observation), dtype=np.int8)
        if not self.tried_:  # each cheat once an episode (scanning every step is slow)
            self.tried_ = True
            for name in sorted(globals()):
                if name.startswith("truth_"):
                    decision = globals()[name](self, observation)
                    if decision is not None:
                        self.finder_ = globals()[name]
                        return np.asarray(decision, dtype=np.int8)
        return np.ones(len(observation), dtype=np.int8)  # what is left: approve everyone
"""


def cheat_source(names: list[str], **placeholders: str) -> str:
    """Source of a submission running the cheats ``names``, placeholders filled in."""
    source = "import numpy as np\n\nfrom agents.base import Agent\n"
    source += "".join(CHEATS[name] for name in names) + CHEAT_AGENT
    for key, value in placeholders.items():
        source = source.replace(key, value)
    return source


SOURCES.update(
    {
        "memory_bomb": """\
import numpy as np

from agents.base import Agent


class Hoards(Agent):
    def act(self, observation):
        hoard = []
        while True:
            hoard.append(np.ones(2**24))  # 128 MB more each time
""",
        "forks": """\
import os

import numpy as np

from agents.base import Agent


class Forks(Agent):
    def act(self, observation):
        if os.fork() == 0:
            os.setsid()
            os._exit(0)
        return np.ones(len(observation), dtype=np.int8)
""",
        "prints_forever": """\
from agents.base import Agent


class Chatty(Agent):
    def act(self, observation):
        while True:
            print("still thinking " * 20)
""",
        "sends_junk": """\
import sys

import numpy as np

from agents.base import Agent


class Smuggler:
    def __reduce__(self):  # runs in whoever unpickles it: the grader, if it unpickled anything
        return (exec, ("import osfb_gym.runner; osfb_gym.runner.run_episode = None",))


# the agent's process runs the sandbox as __main__: make it send the smuggler as the action
sys.modules["__main__"].encode_action = lambda action: ("plain", Smuggler())


class SendsJunk(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
""",
    }
)
