"""The grader's side of the process boundary: the submission as an Agent in another process.

:class:`SubmissionAgent` starts :mod:`osfb_gym.grade.sandbox` in a fresh
interpreter (spawned, not forked: it inherits no object of the grader),
in its own session and process group, with the resource limits of
:class:`Limits`. It is an :class:`~agents.base.Agent` whose ``reset``,
``act`` and ``update`` forward exactly what :func:`osfb_gym.runner.run_episode`
passes them (the spaces, the agent's seed, the reset feedback, the
observations, the action, reward and feedback of each step) through a
pipe, so the grader's loop is still ``run_episode`` and the runner stays
the only reader of the oracle.

What comes back is not trusted: replies are unpickled with no class
allowed (plain Python data only, so no code of the submission runs in
the grader), an action is rebuilt from its dtype, shape and bytes and must
lie in the action space, and the whole process group is killed when the
grading ends or a diagnosis stops it.

The clocks are the grader's own, in wall time: the interpreter's start
(until the sandbox says ``ready``, before any code of the submission
runs), loading (import and contract check), each episode, and the whole
grading. Nothing the submission writes moves them: the two progress
frames the sandbox sends while loading only name the stage, a third is a
frame the submission wrote itself and ends the grading, and every read
and every write on the pipe (a reader that stops reading included) gives
up at the deadline.

The agent's reset seed is not the runner's (which is derived from the
episode's seed): :meth:`SubmissionAgent.begin_episode` takes one from the
grader's own stream, so nothing the agent is given is a function of the
seed of the world.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import math
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import gymnasium as gym

import agents
from agents.base import Agent
from osfb_gym.grade.sandbox import Diagnosis
from osfb_gym.grade.wire import (
    decode_action,
    describe,
    dumps,
    loads_plain,
    read_message,
    write_message,
)

SANDBOX = Path(__file__).with_name("sandbox.py")
#: the user the agent's process runs as when the grader runs as root
PLAIN_USER = "nobody"
#: wall-clock seconds the agent's interpreter may take to start, before any of its code runs
STARTUP_SECONDS = 30.0
#: the progress frames the sandbox itself sends while loading (importing, checking)
LOADING_FRAMES = ("importing the file", "checking ")
#: the most of the submission's own text (an exception's message, its repr) a report shows
MESSAGE_CHARS, REPR_CHARS = 2000, 300


def _clip(text: Any, most: int) -> str:
    """``str(text)`` cut to ``most`` characters: the submission writes it, the grader prints it.

    Examples
    --------
    >>> _clip("x" * 10, 4), _clip("ok", 4)
    ('x...', 'ok')
    """
    text = str(text)
    return text if len(text) <= most else text[: most - 3] + "..."


_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4  # <linux/prctl.h>


@dataclass(frozen=True)
class Limits:
    """The limits of the agent's process.

    Attributes
    ----------
    time_limit
        Wall-clock seconds for each stage: loading (import and contract
        check), and each episode (the grader's own steps included); the
        whole grading gets ``time_limit`` times the stages. The grader's
        clocks: nothing the agent's process writes extends them.
    memory_limit
        Megabytes of address space (``RLIMIT_AS``).
    cpu_limit
        CPU seconds over the life of the process (``RLIMIT_CPU``).
    output_limit
        Bytes the process may write to any one file, its output included
        (``RLIMIT_FSIZE``).
    """

    time_limit: float = 30.0
    memory_limit: int = 2048
    cpu_limit: int = 330
    output_limit: int = 2**20


def _space_hint(space: gym.Space) -> str:
    if isinstance(space, gym.spaces.MultiBinary):
        return (
            f"a numpy array of {space.n} zeros and ones, e.g. `np.ones({space.n}, dtype=np.int8)`"
        )
    if isinstance(space, gym.spaces.Discrete):
        return f"an int from {space.start} to {space.start + space.n - 1}"
    if isinstance(space, gym.spaces.MultiDiscrete):
        return f"an integer numpy array below {space.nvec.tolist()}, e.g. `np.array([2, 1])`"
    return "a value for which `action_space.contains(action)` is True"


def unseeded(space: gym.Space) -> gym.Space:
    """Return a copy of ``space`` without its random generator (nor its subspaces').

    A space pickles its generator's state; the agent gets the space's shape
    and bounds, and seeds any sampling itself from its own ``seed``.

    Examples
    --------
    >>> space = gym.spaces.Discrete(3, seed=5)
    >>> unseeded(space)._np_random is None, space._np_random is None
    (True, False)
    """
    clean = copy.deepcopy(space)
    stack = [clean]
    while stack:
        current = stack.pop()
        current._np_random = None  # type: ignore[assignment]  # unseeded, as built
        inner = getattr(current, "spaces", None)
        if isinstance(inner, dict):
            stack.extend(inner.values())
        elif isinstance(inner, tuple | list):
            stack.extend(inner)
        feature = getattr(current, "feature_space", None)
        if isinstance(feature, gym.Space):
            stack.append(feature)
    return clean


def _plain_user() -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam(PLAIN_USER)
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def _prctl(option: int, value: int = 0) -> int | None:
    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0))
    except (OSError, AttributeError):  # not Linux
        return None


class SubmissionAgent(Agent):
    """The submission's agent, running in its own confined process, as an Agent.

    Use it as a context manager: :meth:`open` starts the process, loads
    the file and checks the Agent contract there (raising
    :class:`Diagnosis`), :meth:`begin_episode` starts the clock of an
    episode (and gives the agent's seed), and leaving the ``with`` block
    kills the process group.
    """

    abstract = True  # a proxy, not an agent to benchmark

    def open(
        self,
        path: str | Path,
        class_name: str | None,
        env: gym.Env,
        limits: Limits,
    ) -> str:
        """Start the agent's process, load ``path`` there; return the agent's repr."""
        file = Path(path)
        if not file.is_file():
            raise Diagnosis(
                "import", f"There is no file {path}. Pass the path of your agent's .py file."
            )
        try:
            source = file.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError) as error:
            raise Diagnosis(
                "import", f"{file.name} cannot be read as a UTF-8 Python file ({error})."
            ) from None
        self.limits_ = limits
        self.name_ = "the agent"
        self.grading_deadline_ = math.inf
        self.loading_frames_ = 0
        self.agent_seed_: int | None = None
        self.pending_: tuple[Any, ...] | None = None  # the update that goes with the next act
        self.fused_ = False
        # the interpreter's start is the grader's cost, not the student's: its own allowance,
        # spent before any code of the submission runs (the sandbox says "ready" first)
        self.stage_ = "starting"
        self.deadline_ = time.monotonic() + max(STARTUP_SECONDS, limits.time_limit)
        self._start(limits)
        env_id = env.spec.id if env.spec is not None else None
        observation, _ = env.reset(seed=0)  # a public seed: only the shape matters here
        self.loading_ = True
        self._expect("ready")
        self.ready_at_ = time.monotonic()
        self._restart_clock("loading the file")
        self._send(
            (
                "load",
                source,
                str(file.resolve()),
                class_name,
                env_id,
                unseeded(env.observation_space),
                unseeded(env.action_space),
                observation,
            )
        )
        reply = self._expect("loaded", str)
        self.loading_ = False
        name = _clip(reply[1], REPR_CHARS)
        self.name_ = name.split("(")[0]
        return name

    def _start(self, limits: Limits) -> None:
        self.closed_ = False
        self.cwd_ = tempfile.mkdtemp(prefix="osfb-grade-")
        user = _plain_user() if os.geteuid() == 0 else None
        if user is not None:
            os.chown(self.cwd_, *user)
        else:  # same user as the grader: keep our /proc/<pid>/mem, environ, maps closed to it
            self.dumpable_ = _prctl(_PR_GET_DUMPABLE)
            _prctl(_PR_SET_DUMPABLE, 0)
        self.output_ = tempfile.TemporaryFile()
        to_grader, self.writer_ = -1, -1
        self.reader_, to_grader = os.pipe()
        from_grader, self.writer_ = os.pipe()
        os.set_blocking(self.writer_, False)  # a full pipe waits on the grader's clock, not forever
        threads = {name: "1" for name in ("OMP", "OPENBLAS", "MKL", "NUMEXPR")}
        environment = {f"{name}_NUM_THREADS": value for name, value in threads.items()}
        environment.update(PATH=os.defpath, HOME=self.cwd_, LC_ALL="C.UTF-8")
        self.process_ = subprocess.Popen(  # noqa: S603  (our interpreter, our script)
            [sys.executable, "-I", "-B", str(SANDBOX), str(to_grader), str(from_grader)],
            pass_fds=(to_grader, from_grader),
            stdin=subprocess.DEVNULL,
            stdout=self.output_,
            stderr=self.output_,
            env=environment,  # none of the grader's variables (tokens, paths) leak in
            cwd=self.cwd_,
            start_new_session=True,  # its own session and process group, killed as one
        )
        os.close(to_grader)
        os.close(from_grader)
        root = str(Path(agents.__file__).resolve().parents[1])
        setup = {
            "path": [root],
            "limits": {
                "memory_bytes": limits.memory_limit * 2**20,
                "cpu_seconds": limits.cpu_limit,
                "output_bytes": limits.output_limit,
                "user": user,
                "parent": os.getpid(),
                "cwd": self.cwd_,
            },
        }
        self._send(setup)

    # ------------------------------------------------------------------ the pipe
    def _send(self, message: Any) -> None:
        payload = dumps(message)
        try:
            write_message(self.writer_, payload, self.deadline_)
        except TimeoutError:  # it stopped reading: the pipe stayed full until the deadline
            raise self._timeout() from None
        except OSError:  # it died (BrokenPipeError); the next read says how
            pass

    def _restart_clock(self, stage: str) -> None:
        """Name the stage and start its clock, never past the whole grading's."""
        self.stage_ = stage
        self.deadline_ = min(time.monotonic() + self.limits_.time_limit, self.grading_deadline_)

    def _timeout(self) -> Diagnosis:
        self.close()
        if self.stage_ == "starting":
            return Diagnosis(
                "timeout",
                f"The agent's interpreter did not start within {STARTUP_SECONDS:g} s, before "
                "any of the file's code ran (the process was stopped): the machine is "
                "overloaded; grade again.",
            )
        whole = time.monotonic() >= self.grading_deadline_
        limit = (
            f"the grading's time limit of {self.total_seconds_:g} s"
            if whole
            else f"the time limit of {self.limits_.time_limit:g} s"
        )
        return Diagnosis(
            "timeout",
            f"The agent ran past {limit} while {self.stage_} (the process was stopped). Look "
            "for a loop that never ends or a sleep at import or in act() or update(), or "
            "work that grows with every step; an episode of a reference agent takes about "
            "a second.",
        )

    def _reply(self) -> tuple[Any, ...]:
        """Wait for the next reply; turn a time-out, a death or junk into a Diagnosis."""
        while True:
            try:
                payload = read_message(self.reader_, self.deadline_)
            except TimeoutError:
                raise self._timeout() from None
            except EOFError:
                raise self._death() from None
            except ValueError:  # a length over the limit: junk, as below
                payload = b""
            try:
                message = loads_plain(payload)
            except Exception as error:  # noqa: BLE001  (anything unpicklable is junk)
                message = error
            if not isinstance(message, tuple) or not message or not isinstance(message[0], str):
                self.close()
                raise Diagnosis(
                    "raises",
                    f"The agent's process sent the grader something other than plain data "
                    f"while {self.stage_}: the grader accepts only what the Agent methods "
                    "return (an action, or None).",
                )
            if message[0] == "stage" and self.loading_:
                # a label for the diagnosis, never more time: the sandbox sends exactly two
                self.loading_frames_ += 1
                label = message[-1]
                if (
                    self.loading_frames_ > len(LOADING_FRAMES)
                    or len(message) != 2
                    or not isinstance(label, str)
                    or len(label) > 200
                    or not label.startswith(LOADING_FRAMES[self.loading_frames_ - 1])
                ):
                    self.close()
                    raise Diagnosis(
                        "raises",
                        f"The agent's process wrote to the grader's pipe itself while "
                        f"{self.stage_} (a progress frame the grader did not expect). Leave "
                        "the file descriptors you did not open alone.",
                    )
                self.stage_ = label
                continue
            return message

    def _expect(self, kind: str, *types: type) -> tuple[Any, ...]:
        reply = self._reply()
        if reply[0] == "diagnosis" and len(reply) == 3:
            self.close()
            diagnosed = reply[1] if reply[1] in Diagnosis.KINDS else "raises"
            raise Diagnosis(diagnosed, _clip(reply[2], MESSAGE_CHARS))
        if reply[0] == "raised" and len(reply) == 5:
            self.close()
            diagnosed = reply[1] if reply[1] in Diagnosis.KINDS else "raises"
            # in a fused step the update that raised is the previous step's
            where = self._where(self.step_ - 1 if reply[4] == "update" and self.fused_ else None)
            text = f"{_clip(reply[2], MESSAGE_CHARS)}, {where}.{_clip(reply[3], 400)}"
            raise Diagnosis(diagnosed, text)
        if (
            reply[0] != kind
            or len(reply) != 1 + len(types)
            or not all(isinstance(value, t) for value, t in zip(reply[1:], types, strict=True))
        ):
            self.close()
            raise Diagnosis(
                "raises", f"The agent's process answered out of turn while {self.stage_}."
            )
        return reply

    def _where(self, step: int | None = None) -> str:
        return f"on step {self.step_ if step is None else step} of episode {self.episode_}"

    def _death(self) -> Diagnosis:
        """Say how the agent's process ended, with the last lines it printed."""
        try:
            code = self.process_.wait(timeout=2)
        except subprocess.TimeoutExpired:  # it closed the pipe but lives on
            code = None
        self.close()
        limits = self.limits_
        if code == -signal.SIGXCPU or code == -signal.SIGKILL:
            kind, text = (
                "limit",
                f"The agent's process was stopped by {signal.Signals(-code).name} while "
                f"{self.stage_}: it used up its {limits.cpu_limit} s of CPU time, or its "
                f"memory ({limits.memory_limit} MB of address space).",
            )
        elif code == -signal.SIGXFSZ:
            kind, text = (
                "limit",
                f"The agent's process wrote more than {limits.output_limit} bytes to a file "
                f"or its output while {self.stage_}. Print less.",
            )
        elif code is None:
            kind, text = (
                "raises",
                f"The agent's process closed its pipe to the grader while {self.stage_} (the "
                "process was stopped). Leave the file descriptors you did not open alone.",
            )
        else:
            ended = f"exit code {code}" if code >= 0 else signal.Signals(-code).name
            kind, text = (
                "raises",
                f"The agent's process ended abruptly ({ended}) while {self.stage_}: a call "
                "such as os._exit() or sys.exit() in a thread, a crash in a compiled "
                "extension, or running out of memory.",
            )
        tail = self.printed_[-800:].strip()
        return Diagnosis(kind, text + (f" Its last output:\n{tail}" if tail else ""))

    # ------------------------------------------------------------------ the Agent
    def begin_episode(self, episode: int, n_episodes: int, agent_seed: int | None = None) -> None:
        """Start the clock of episode ``episode`` (1-based) of ``n_episodes``.

        ``agent_seed`` is the seed the agent's ``reset`` gets in place of the
        runner's, which is derived from the episode's seed (None: the
        runner's). The first episode also starts the whole grading's clock:
        loading and ``n_episodes`` stages of ``time_limit`` each, from the
        moment the agent's process was ready.
        """
        if self.grading_deadline_ == math.inf:
            self.total_seconds_ = self.limits_.time_limit * (1 + n_episodes)
            self.grading_deadline_ = self.ready_at_ + self.total_seconds_
        self.episode_ = f"{episode} of {n_episodes}"
        self.step_ = 0
        self.agent_seed_ = agent_seed
        self._restart_clock(f"running episode {self.episode_}")

    def end_episode(self) -> None:
        """Deliver the episode's last feedback and wait for the agent to learn it.

        :meth:`update` sends nothing: its arguments go with the next
        :meth:`act` (one round trip per step, the agent learning before it
        acts), and the episode's last ones go here, on the episode's clock.
        """
        if self.pending_ is not None:
            update, self.pending_ = self.pending_, None
            self.fused_ = False
            self._send(("update", *update))
            self._expect("ok")

    def reset(self, observation_space, action_space, *, seed=None, feedback=None):  # noqa: D102
        self.end_episode()  # a previous episode not ended by the caller
        self.action_space_ = action_space
        self.step_ = 0
        if self.agent_seed_ is not None:
            seed = self.agent_seed_
        message = ("reset", unseeded(observation_space), unseeded(action_space), seed, feedback)
        self._send(message)
        self._expect("ok")

    def act(self, observation):  # noqa: D102
        self.step_ += 1
        self.fused_ = self.pending_ is not None
        if self.pending_ is not None:
            update, self.pending_ = self.pending_, None
            self._send(("step", *update, observation))
        else:
            self._send(("act", observation))
        _, encoded, description = self._expect("action", tuple, str)
        action = None
        try:
            action = decode_action(encoded)
            valid = bool(self.action_space_.contains(action))
        except Exception:  # noqa: BLE001  (contains itself can fail on odd types)
            valid = False
        if not valid:
            self.close()
            if not description:  # a numpy action: described here, from its dtype, shape, bytes
                description = "an action that is no array" if action is None else describe(action)
            raise Diagnosis(
                "invalid_action",
                f"{self.name_}.act() returned {str(description)[:400]} {self._where()}, which "
                f"is not in the action space {self.action_space_}. Return "
                f"{_space_hint(self.action_space_)}.",
            )
        return action

    def update(self, observation, action, reward, feedback):  # noqa: D102
        self.end_episode()  # two updates in a row (no act between): the first goes now
        self.pending_ = (observation, action, reward, feedback)

    # ------------------------------------------------------------------ ending
    @property
    def printed_(self) -> str:
        """What the agent's process printed (stdout and stderr), as far as it got."""
        output = getattr(self, "output_", None)
        if output is None or output.closed:
            return getattr(self, "last_output_", "")
        output.seek(0)
        return output.read(self.limits_.output_limit).decode("utf-8", "replace")

    def close(self) -> None:
        """Kill the agent's process group and free the pipe, its folder and its output."""
        process = getattr(self, "process_", None)
        if process is None or getattr(self, "closed_", False):
            return
        self.closed_ = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # the group: any child it managed to start
        process.wait()
        self.last_output_ = self.printed_
        self.output_.close()
        for fd in (self.reader_, self.writer_):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.cwd_, ignore_errors=True)
        dumpable = getattr(self, "dumpable_", None)
        if dumpable:
            _prctl(_PR_SET_DUMPABLE, dumpable)

    def __enter__(self) -> SubmissionAgent:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
