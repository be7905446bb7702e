"""A fuzz of bad inputs: every env id, agent class, data loader, sweep spec, CLI flag and runner.

Each :class:`Case` is one bad input (or one that looks bad and is valid,
with the reason). :func:`classify` runs it and sorts the result into

- ``clear``: a ``ValueError``/``TypeError`` (or, for a call out of order, a
  ``RuntimeError``) whose message names what was wrong (one of ``names``);
  a CLI case: exit code 2 and one stderr line naming the flag or file;
- ``valid``: accepted, and the case says why that is right;
- ``silent``: accepted although it is bad (a defect);
- ``unclear``: refused with another exception type, or a message that names
  none of ``names`` (a defect);
- ``slow``: longer than :data:`SLOW` seconds (a defect: a refusal must be quick).

``tests/test_bad_inputs.py`` runs every case; ``benchmarks/fuzz_bad_inputs.py``
prints the counts. Cases are built lazily (:func:`all_cases`), so importing
this module imports no env.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: seconds a case may take before it counts as a hang
SLOW = 10.0
BAD_VALUES: dict[str, Any] = {
    "nan": float("nan"),
    "inf": float("inf"),
    "str": "x",
    "list": [1],
    "object": object(),
}


@dataclass(frozen=True)
class Case:
    """One input: ``call()`` runs it; a clear refusal names one of ``names``.

    ``valid`` is the reason an accepted input is right (None: it must be
    refused). ``cli`` marks a call returning an exit code with stderr.
    """

    id: str
    call: Callable[[], Any]
    names: tuple[str, ...]
    valid: str | None = None
    cli: bool = False
    #: other exception types that are this call's documented refusal (check_agent's)
    errors: tuple[type[BaseException], ...] = ()


@dataclass(frozen=True)
class Result:
    """How a case ended: its kind and what was said."""

    case: Case
    kind: str
    detail: str
    seconds: float


def classify(case: Case) -> Result:
    """Run ``case`` and sort its outcome (see the module docstring)."""
    start = time.perf_counter()
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            value = case.call()
    except (ValueError, TypeError, RuntimeError, *case.errors) as error:
        seconds = time.perf_counter() - start
        message = f"{type(error).__name__}: {error}"
        kind = "clear" if names_one(str(error), case.names) else "unclear"
        return Result(case, _slow(kind, seconds), message, seconds)
    except SystemExit as exit_:  # argparse
        value = exit_.code
    except Exception as error:  # noqa: BLE001  (any other type is an unclear message)
        seconds = time.perf_counter() - start
        return Result(case, _slow("unclear", seconds), f"{type(error).__name__}: {error}", seconds)
    seconds = time.perf_counter() - start
    if case.cli:
        text = stderr.getvalue().strip()
        if value == 2 and names_one(text, case.names) and "\n" not in text:
            return Result(case, _slow("clear", seconds), text, seconds)
        if value == 0:
            kind = "valid" if case.valid else "silent"
            return Result(case, _slow(kind, seconds), text, seconds)
        return Result(case, _slow("unclear", seconds), f"exit {value}: {text[-300:]}", seconds)
    kind = "valid" if case.valid else "silent"
    return Result(case, _slow(kind, seconds), repr(value)[:120], seconds)


def names_one(message: str, names: tuple[str, ...]) -> bool:
    """Whether ``message`` names one of ``names`` as a word (``m`` is not in ``must``)."""
    return any(
        re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", message.lower())
        for name in names
    )


def _slow(kind: str, seconds: float) -> str:
    return "slow" if seconds > SLOW else kind


# ---------------------------------------------------------------------------- envs
def _env_ids() -> list[str]:
    from envs_registry import register_all

    return register_all()


def _make(env_id: str, **kwargs: Any) -> Any:
    import gymnasium as gym

    import osfb_gym  # noqa: F401

    return gym.make(env_id, **kwargs)


#: small kwargs that make each env quick
SMALL: dict[str, dict[str, Any]] = {
    "OneSidedLending-v0": {"horizon": 3},
    "AppleTasting-v0": {"horizon": 3},
    "RejectOption-v0": {"horizon": 3},
    "MultiServiceChoice-v0": {"n_users": 6, "n_services": 3},
    "MultiServiceChoice-Retention-v0": {"n_users": 6, "n_services": 3, "horizon": 4},
    "DelayedImpactLending-v0": {"horizon": 3},
}
#: env arguments that are flags (True is a value for them)
FLAGS = {"render_truth", "reveal_groups", "first_positive_first", "replacement", "replace"}
#: env argument values that are valid although they look odd, with the reason
ENV_VALID: dict[tuple[str, str, str], str] = {
    ("MultiServiceChoice-v0", "reference_ks", "list"): "[1] is a list of service counts in "
    "[1, n_services], what reference_ks takes",
}


def _env_signature(env_id: str) -> list[str]:
    import gymnasium as gym

    from osfb_gym.core.family import load

    cls = load(str(gym.spec(env_id).entry_point))
    return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]


def _env_cases() -> Iterator[Case]:
    for env_id in _env_ids():
        small = SMALL.get(env_id, {})
        for argument in _env_signature(env_id):
            values = dict(BAD_VALUES)
            if argument not in FLAGS:
                values["bool"] = True
            else:
                values["int"] = 1
            for label, value in values.items():
                kwargs = {**small, argument: value}
                yield Case(
                    f"env {env_id} {argument}={label}",
                    lambda env_id=env_id, kwargs=kwargs: _make(env_id, **kwargs).reset(seed=0),
                    (argument,),
                    valid=ENV_VALID.get((env_id, argument, label)),
                )
        for argument in FLAGS & set(_env_signature(env_id)):
            yield Case(
                f"env {env_id} {argument}=numpy bool",
                lambda env_id=env_id, small=small, a=argument: _make(
                    env_id, **{**small, a: np.True_}
                ).reset(seed=0),
                (argument,),
                valid="a flag takes Python's or numpy's bool (as scikit-learn's 'boolean' does)",
            )
        for argument, good in _NUMPY_VALID.get(env_id, {}).items():
            yield Case(
                f"env {env_id} {argument}=numpy scalar",
                lambda env_id=env_id, small=small, a=argument, g=good: _make(
                    env_id, **{**small, a: g}
                ).reset(seed=0),
                (argument,),
                valid="a numpy scalar is the number it holds",
            )
        for argument in _SIZES.get(env_id, ()):
            for label, size in {"negative": -1, "zero": 0, "float": 2.5}.items():
                yield Case(
                    f"env {env_id} {argument}={label}",
                    lambda env_id=env_id, small=small, a=argument, v=size: _make(
                        env_id, **{**small, a: v}
                    ).reset(seed=0),
                    (argument,),
                )
        for label, seed in {
            "-1": -1,
            "str": "x",
            "float": 1.5,
            "bool": True,
            "nan": math.nan,
        }.items():
            yield Case(
                f"env {env_id} reset(seed={label})",
                lambda env_id=env_id, seed=seed, small=small: _make(env_id, **small).reset(
                    seed=seed
                ),
                ("seed",),
            )
        yield Case(
            f"env {env_id} reset(seed=np.int64)",
            lambda env_id=env_id, small=small: _make(env_id, **small).reset(seed=np.int64(3)),
            ("seed",),
            valid="a numpy integer is an integer seed (DESIGN 3)",
        )
        yield Case(
            f"env {env_id} reset(options=foo)",
            lambda env_id=env_id, small=small: _make(env_id, **small).reset(
                seed=0, options={"foo": 1}
            ),
            ("foo",),
        )
        yield Case(
            f"env {env_id} reset(options=str)",
            lambda env_id=env_id, small=small: _make(env_id, **small).reset(seed=0, options="x"),
            ("options",),
        )
        yield Case(
            f"env {env_id} render_mode=bogus",
            lambda env_id=env_id, small=small: _make(env_id, render_mode="bogus", **small),
            ("render_mode",),
        )
        yield Case(
            f"env {env_id} step before reset",
            lambda env_id=env_id, small=small: _make(env_id, **small).unwrapped.step(0),
            ("reset",),
        )
        yield Case(
            f"env {env_id} step after the end",
            lambda env_id=env_id, small=small: _step_past_end(env_id, small),
            ("reset",),
        )
        for label, action in {
            "out of space": 7,
            "negative": -1,
            "nan": math.nan,
            "str": "x",
            "None": None,
            "wrong shape": [[0, 1], [1, 0], [0, 0]],
            "object": object(),
        }.items():
            yield Case(
                f"env {env_id} step({label})",
                lambda env_id=env_id, action=action, small=small: _step(env_id, small, action),
                ("action",),
            )
        for label, size in _huge_sizes(env_id).items():
            yield Case(
                f"env {env_id} {label}=10**9",
                lambda env_id=env_id, size=size, small=small: _make(
                    env_id, **{**small, **size}
                ).reset(seed=0),
                tuple(size),
            )


#: each env's count arguments: -1, 0 and 2.5 must be refused
_SIZES = {
    "OneSidedLending-v0": ("dim", "batch_size", "horizon"),
    "AppleTasting-v0": ("dim", "horizon"),
    "RejectOption-v0": ("dim", "horizon"),
    "MultiServiceChoice-v0": ("n_users", "n_services", "dim", "n_groups", "samples_per_user"),
}
#: a valid value of some arguments, as a numpy scalar
_NUMPY_VALID: dict[str, dict[str, Any]] = {
    "OneSidedLending-v0": {"horizon": np.int64(4), "beta_norm": np.float64(1.5)},
    "AppleTasting-v0": {"horizon": np.int32(4), "noise": np.float32(0.25)},
    "RejectOption-v0": {"horizon": np.uint8(4), "d": np.float64(0.2)},
    "MultiServiceChoice-v0": {"n_services": np.int64(2), "group_correlation": np.float64(0.3)},
}


def _rl_cases() -> Iterator[Case]:
    """The RL-ready ids: what a library hands them."""
    from envs_registry import RL_ENVS

    for entry in RL_ENVS:
        env_id = entry.id
        small = SMALL.get(str(entry.kwargs["env_id"]), {})
        yield Case(
            f"env {env_id} reset(options=foo)",
            lambda env_id=env_id, small=small: _make(env_id, **small).reset(
                seed=0, options={"foo": 1}
            ),
            ("foo",),
        )
        yield Case(
            f"env {env_id} reset(seed=-1)",
            lambda env_id=env_id, small=small: _make(env_id, **small).reset(seed=-1),
            ("seed",),
        )
        yield Case(
            f"env {env_id} view=bogus",
            lambda env_id=env_id, small=small: _make(env_id, view="bogus", **small),
            ("view",),
        )
        yield Case(
            f"env {env_id} step(nan)",
            lambda env_id=env_id, small=small: _step(env_id, small, math.nan),
            ("action",),
        )
        yield Case(
            f"env {env_id} step after the end",
            lambda env_id=env_id, small=small: _step_past_end(env_id, small),
            ("reset",),
        )


def _huge_sizes(env_id: str) -> dict[str, dict[str, Any]]:
    sizes = {
        "OneSidedLending-v0": ["dim", "batch_size", "warm_start"],
        "AppleTasting-v0": ["dim"],
        "RejectOption-v0": ["dim"],
        "MultiServiceChoice-v0": ["n_users", "dim", "n_services"],
    }.get(env_id, [])
    return {name: {name: 10**9} for name in sizes}


def _step(env_id: str, small: dict[str, Any], action: Any) -> Any:
    env = _make(env_id, **small)
    env.reset(seed=0)
    return env.step(action)


def _step_past_end(env_id: str, small: dict[str, Any]) -> Any:
    env = _make(env_id, **small)
    env.reset(seed=0)
    result = None
    for _ in range(12):
        result = env.step(env.action_space.sample())
    return result


# ---------------------------------------------------------------------------- agents
def _agent_classes() -> list[type]:
    from agents.base import all_agents

    return [cls for cls in all_agents() if cls.__name__ != "SB3Agent"]


def _episode_start(cls: type, **params: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
    """An agent of ``cls`` reset on its first env (small): (agent, env, obs, info)."""
    env_id = cls.env_ids[0]
    env = _make(env_id, **SMALL.get(env_id, {}))
    obs, info = env.reset(seed=0)
    agent = cls(**params)
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    return agent, env, obs, info


def _bad_action(space: Any) -> Any:
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return int(space.n) + 5
    if isinstance(space, spaces.MultiDiscrete):
        return [int(n) + 3 for n in space.nvec]
    if isinstance(space, spaces.MultiBinary):
        return [2] * int(np.prod(space.shape))
    return [5, 1]


def _update(cls: type, what: str) -> Any:
    agent, env, obs, _ = _episode_start(cls)
    action = agent.act(obs)
    next_obs, reward, _, _, info = env.step(action)
    feedback = info["feedback"]
    if what == "action":
        return agent.update(obs, _bad_action(env.action_space), float(reward), feedback)
    if what == "action shape":
        return agent.update(obs, [[0, 1, 0]] * 2, float(reward), feedback)
    if what == "feedback None":
        return agent.update(obs, action, float(reward), None)
    if what == "feedback empty":
        return agent.update(obs, action, float(reward), {})
    if what == "feedback str":
        return agent.update(obs, action, float(reward), "x")
    if what == "reward nan":
        return agent.update(obs, action, math.nan, feedback)
    if what == "feedback of strings":
        return agent.update(obs, action, float(reward), {**feedback, "revealed": "x", "y": "x"})
    if what == "revealed y nan":
        revealed = np.ones_like(np.asarray(feedback["revealed"]), dtype=bool)
        y = np.full(np.shape(feedback["y"]), np.nan) if np.ndim(feedback["y"]) else math.nan
        return agent.update(obs, action, float(reward), {**feedback, "revealed": revealed, "y": y})
    if what == "observation str":
        return agent.update("x", action, float(reward), feedback)
    raise AssertionError(what)


def _act(cls: type, what: str) -> Any:
    agent, _, obs, _ = _episode_start(cls)
    observation: Any
    if what == "nan":
        observation = (
            np.full_like(np.asarray(obs, dtype=float), np.nan)
            if not isinstance(obs, dict)
            else {key: np.full(np.shape(value), np.nan) for key, value in obs.items()}
        )
    elif what == "str":
        observation = "x"
    elif what == "None":
        observation = None
    elif what == "wrong shape":
        observation = np.zeros((2, 3, 4))
    elif what == "dict missing keys":
        observation = {}
    else:
        raise AssertionError(what)
    return agent.act(observation)


def _reset_with(cls: type, what: str) -> Any:
    env_id = cls.env_ids[0]
    env = _make(env_id, **SMALL.get(env_id, {}))
    _, info = env.reset(seed=0)
    agent = cls()
    feedback = dict(info["feedback"])
    seed: Any = 0
    spaces = (env.observation_space, env.action_space)
    if what == "seed -1":
        seed = -1
    elif what == "seed str":
        seed = "x"
    elif what == "seed np.int64":
        seed = np.int64(5)
    elif what == "feedback str":
        feedback = "x"  # type: ignore[assignment]
    elif what == "feedback nan":
        feedback = {
            key: (
                math.nan
                if isinstance(value, float | int) and not isinstance(value, bool)
                else value
            )
            for key, value in feedback.items()
        }
    elif what == "spaces None":
        spaces = (None, None)
    elif what == "spaces swapped":
        spaces = (env.action_space, env.observation_space)
    else:
        raise AssertionError(what)
    return agent.reset(*spaces, seed=seed, feedback=feedback)


def _agent_cases() -> Iterator[Case]:
    from gymnasium import spaces as gym_spaces

    for cls in _agent_classes():
        name = cls.__name__
        defaults = cls().get_params(deep=False)
        for param, default in defaults.items():
            values = dict(BAD_VALUES)
            if not isinstance(default, bool):
                values["bool"] = True
            if isinstance(default, int | float) and not isinstance(default, bool):
                values["negative"] = -1
                values["huge"] = 10**9 if isinstance(default, int) else 1e300
            for label, value in values.items():
                yield Case(
                    f"agent {name}({param}={label})",
                    lambda cls=cls, param=param, value=value: _episode_start(cls, **{param: value}),
                    (param,),
                    valid=(
                        "a negative threshold is a valid decision offset"
                        if (name, param, label) in AGENT_VALID
                        else HUGE_VALID
                        if label == "huge"
                        else None
                    ),
                )
        for what in ("nan", "str", "None", "wrong shape"):
            yield Case(
                f"agent {name}.act({what})", lambda cls=cls, w=what: _act(cls, w), ("observation",)
            )
        yield Case(
            f"agent {name}.act before reset",
            lambda cls=cls: cls().act(np.zeros(3)),
            ("reset",),
        )
        yield Case(
            f"agent {name}.update before reset",
            lambda cls=cls: cls().update(np.zeros(3), 0, 0.0, {}),
            ("reset",),
        )
        for what, names in {
            "action": ("action",),
            "action shape": ("action",),
            "feedback None": ("feedback",),
            "feedback empty": ("feedback",),
            "feedback str": ("feedback",),
            "reward nan": ("reward",),
            "feedback of strings": ("feedback", "revealed", "y"),
            "revealed y nan": ("y", "feedback"),
            "observation str": ("observation",),
        }.items():
            if what == "revealed y nan" and "MultiServiceChoice-v0" in cls.env_ids:
                continue  # (services reveal no outcome y)
            yield Case(
                f"agent {name}.update({what})",
                lambda cls=cls, w=what: _update(cls, w),
                names,
                valid=(
                    "services agents read nothing of the observation or feedback in update "
                    "(they keep the acquired users from the action); feedback must be a dict"
                    if what in ("feedback empty", "feedback of strings", "observation str")
                    and "MultiServiceChoice-v0" in cls.env_ids
                    else None
                ),
            )
        for what, names in {
            "seed -1": ("seed",),
            "seed str": ("seed",),
            "feedback str": ("feedback",),
            "feedback nan": ("feedback",),
            "spaces None": ("observation_space", "action_space"),
            "spaces swapped": ("observation_space", "action_space"),
        }.items():
            yield Case(
                f"agent {name}.reset({what})",
                lambda cls=cls, w=what: _reset_with(cls, w),
                names,
            )
        yield Case(
            f"agent {name}.reset(seed=np.int64)",
            lambda cls=cls: _reset_with(cls, "seed np.int64"),
            ("seed",),
            valid="a numpy integer is an integer seed",
        )
    del gym_spaces


#: why a huge hyperparameter inside its documented interval is accepted
HUGE_VALID = (
    "a finite value inside the documented interval (0 or 1 to infinity): nothing is "
    "allocated from it, and arithmetic that overflows later is refused where it happens "
    "(a non-finite score raises naming the overflow)"
)
#: hyperparameter values that are valid although they look odd: (class, param, label)
AGENT_VALID = {
    (name, "threshold", "negative") for name in ("Perceptron", "MarginPerceptron", "OnlineSVM")
}


# ---------------------------------------------------------------------------- data
GERMAN_ROW = "A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 A201 1"
#: a second row, of the other class (a dataset needs both)
GERMAN_BAD_CREDIT = (
    "A12 48 A32 A43 5951 A61 A73 2 A92 A101 2 A121 22 A143 A152 1 A173 1 A191 A201 2"
)


def _german_copy(tmp: Path, row: str) -> Path:
    folder = tmp / "german_credit"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "german.data").write_text(f"{row}\n{GERMAN_ROW}\n{GERMAN_BAD_CREDIT}\n")
    return tmp


def _data_cases(tmp: Path) -> Iterator[Case]:
    from osfb_gym.data import load

    yield Case("data load('no_such')", lambda: load("no_such"), ("no_such",))
    yield Case("data load(5)", lambda: load(5), ("name",))  # type: ignore[arg-type]
    yield Case(
        "data load(download='no')",
        lambda: load("breast_cancer", download="no"),  # type: ignore[arg-type]
        ("download",),
    )
    yield Case(
        "data load(data_home=5)",
        lambda: load("german", data_home=5),  # type: ignore[arg-type]
        ("data_home",),
    )
    yield Case("data load(bogus=1)", lambda: load("german", bogus=1), ("bogus",))
    yield Case("data load(encoding='x')", lambda: load("german", encoding="x"), ("encoding",))
    yield Case(
        "data load(crime quantile=nan)", lambda: load("crime", quantile=math.nan), ("quantile",)
    )
    yield Case("data load(crime quantile=2)", lambda: load("crime", quantile=2.0), ("quantile",))
    yield Case("data load(crime gaps='x')", lambda: load("crime", gaps="x"), ("gaps",))
    yield Case(
        "data load(compas propublica_filter='yes')",
        lambda: load("compas", propublica_filter="yes"),
        ("propublica_filter",),
    )
    yield Case("data load(reuters topic='x')", lambda: load("reuters_r8", topic="x"), ("topic",))
    for label, code in {"A99": "A99", "A35": "A35", "A410x": "A4x"}.items():
        row = GERMAN_ROW.replace("A43", code, 1)
        yield Case(
            f"data german with code {label}",
            lambda row=row, label=label: load(
                "german", data_home=str(_german_copy(tmp / f"german_{label}", row)), download=False
            ),
            ("purpose",),
        )


# ---------------------------------------------------------------------------- sweep specs
def _spec(**changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "fuzz",
        "seeds": 2,
        "envs": [{"id": "OneSidedLending-v0", "kwargs": {"horizon": 3}}],
        "agents": [{"name": "LinUCB", "grid": {"alpha": [0.5, 1.0]}}],
    }
    for key, value in changes.items():
        if "." in key:
            part, field = key.split(".")
            spec[part] = [{**spec[part][0], field: value}]
        else:
            spec[key] = value
    return spec


def _sweep_cases() -> Iterator[Case]:
    from osfb_gym.bench.sweep import spec_from_dict

    bad: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
        "grid [1, 1.0]": (_spec(**{"agents.grid": {"alpha": [1, 1.0]}}), ("alpha",)),
        "grid [0.5, 0.5]": (_spec(**{"agents.grid": {"alpha": [0.5, 0.5]}}), ("alpha",)),
        "label = 5": (_spec(**{"envs.label": 5}), ("label",)),
        "description = 5": (_spec(description=5), ("description",)),
        "seeds = -1": (_spec(seeds=-1), ("seeds",)),
        "seeds = [0, 0]": (_spec(seeds=[0, 0]), ("seeds",)),
        "seeds = 'x'": (_spec(seeds="x"), ("seeds",)),
        "env id = 5": (_spec(**{"envs.id": 5}), ("id",)),
        "env id unknown": (_spec(**{"envs.id": "Nope-v0"}), ("Nope-v0",)),
        "env kwargs = 'x'": (_spec(**{"envs.kwargs": "x"}), ("kwargs",)),
        "env kwarg unknown": (_spec(**{"envs.kwargs": {"bogus": 1}}), ("bogus",)),
        "env kwarg bad value": (_spec(**{"envs.kwargs": {"horizon": -1}}), ("horizon",)),
        "agent name unknown": (_spec(**{"agents.name": "Nope"}), ("Nope",)),
        "agent param unknown": (_spec(**{"agents.params": {"bogus": 1}}), ("bogus",)),
        "agent param nan": (_spec(**{"agents.params": {"l2": math.nan}}), ("l2",)),
        "agent grid empty": (_spec(**{"agents.grid": {"alpha": []}}), ("alpha",)),
        "agent grid not list": (_spec(**{"agents.grid": {"alpha": 0.5}}), ("alpha",)),
        "agent envs = 'x'": (_spec(**{"agents.envs": "x"}), ("envs",)),
        "name with slash": (_spec(name="a/b"), ("name",)),
        "unknown key": (_spec(bogus=1), ("bogus",)),
        "envs not a list": (_spec(envs={"id": "OneSidedLending-v0"}), ("envs",)),
    }
    for label, (spec, names) in bad.items():
        yield Case(f"sweep {label}", lambda spec=spec: spec_from_dict(spec), names)


# ---------------------------------------------------------------------------- CLI
def _cli(*argv: str) -> int:
    from osfb_gym.cli import main

    return main(list(argv))


def _cli_cases(tmp: Path) -> Iterator[Case]:
    no_key = tmp / "no_key.csv"
    no_key.parent.mkdir(parents=True, exist_ok=True)
    no_key.write_text("a,b\n1,2\n")
    out = str(tmp / "out")
    cases: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
        "train --eval-seeds -3": (
            ("train", "OneSidedLending-v0", "--eval-seeds", "-3", "--total-timesteps", "1"),
            ("--eval-seeds",),
        ),
        "train --seed -1": (
            ("train", "OneSidedLending-v0", "--seed", "-1", "--total-timesteps", "1"),
            ("--seed",),
        ),
        "train --world-seed -1": (
            ("train", "OneSidedLending-v0", "--world-seed", "-1", "--total-timesteps", "1"),
            ("--world-seed",),
        ),
        "train unknown env": (("train", "Nope-v0", "--total-timesteps", "1"), ("Nope-v0",)),
        "train --env-kwargs bad json": (
            ("train", "OneSidedLending-v0", "--env-kwargs", "{x"),
            ("--env-kwargs",),
        ),
        "run --set alphas=-2000:2000": (
            ("run", "jiang-linear", "--set", "alphas=-2000:2000", "--out", out),
            ("alphas",),
        ),
        "run --set alphas=x": (
            ("run", "jiang-linear", "--set", "alphas=x", "--out", out),
            ("alphas",),
        ),
        "run --seeds huge": (
            ("run", "jiang-linear", "--seeds", "9" * 30, "--out", out),
            ("--seeds",),
        ),
        "run --set bogus=1": (("run", "quick", "--set", "bogus=1", "--out", out), ("bogus",)),
        "run unknown suite": (("run", "nope", "--out", out), ("nope",)),
        "run --seeds 0": (("run", "quick", "--seeds", "0"), ("--seeds",)),
        "run --workers -1": (("run", "quick", "--workers", "-1"), ("--workers",)),
        "run --horizon x": (("run", "quick", "--horizon", "x"), ("--horizon",)),
        "table without key column": (
            ("table", "jiang-linear", str(no_key), "--out", out),
            ("key", str(no_key)),
        ),
        "table missing file": (
            ("table", "jiang-linear", str(tmp / "nope.csv"), "--out", out),
            ("nope.csv",),
        ),
        "sweep missing file": (("sweep", str(tmp / "nope.toml")), ("nope.toml",)),
        "grade --time-limit nan": (
            ("grade", str(no_key), "--env", "OneSidedLending-v0", "--time-limit", "nan"),
            ("--time-limit", "time_limit"),
        ),
        "leaderboard add unknown module": (
            ("leaderboard", "add", "no_such_module:X", "--budget", "10", "--store", out),
            ("extra_agents", "no_such_module"),
        ),
        "leaderboard add --budget 0": (
            ("leaderboard", "add", "agents.lending:Greedy", "--budget", "0", "--store", out),
            ("--budget",),
        ),
        "grade --time-limit -1": (
            ("grade", str(no_key), "--env", "OneSidedLending-v0", "--time-limit", "-1"),
            ("--time-limit", "time_limit"),
        ),
    }
    for label, (argv, names) in cases.items():
        yield Case(f"cli {label}", lambda argv=argv: _cli(*argv), names, cli=True)


# ---------------------------------------------------------------------------- runner
def _runner_cases() -> Iterator[Case]:
    from agents.base import AgentContractError, check_agent
    from agents.lending import Greedy
    from osfb_gym.core.channels import HideOracle
    from osfb_gym.runner import evaluate, run_episode

    def env() -> Any:
        return _make("OneSidedLending-v0", horizon=3)

    cases: dict[str, tuple[Callable[[], Any], tuple[str, ...]]] = {
        "run_episode(env=None)": (lambda: run_episode(None, Greedy(), 0), ("env",)),  # type: ignore[arg-type]
        "run_episode(env=str)": (lambda: run_episode("OneSidedLending-v0", Greedy(), 0), ("env",)),  # type: ignore[arg-type]
        "run_episode(agent=None)": (lambda: run_episode(env(), None, 0), ("agent",)),  # type: ignore[arg-type]
        "run_episode(agent=object)": (lambda: run_episode(env(), object(), 0), ("agent",)),  # type: ignore[arg-type]
        "run_episode(agent=class)": (lambda: run_episode(env(), Greedy, 0), ("agent",)),  # type: ignore[arg-type]
        "run_episode(seed=-1)": (lambda: run_episode(env(), Greedy(), -1), ("seed",)),
        "run_episode(seed='x')": (lambda: run_episode(env(), Greedy(), "x"), ("seed",)),  # type: ignore[arg-type]
        "run_episode(max_steps=0)": (
            lambda: run_episode(env(), Greedy(), 0, max_steps=0),
            ("max_steps",),
        ),
        "run_episode(oracle hidden)": (
            lambda: run_episode(HideOracle(env()), Greedy(), 0),
            ("oracle",),
        ),
        "evaluate(seeds=5)": (lambda: evaluate(env(), Greedy(), 5), ("seeds",)),  # type: ignore[arg-type]
        "evaluate(seeds=[-1])": (lambda: evaluate(env(), Greedy(), [-1]), ("seed",)),
        "evaluate(env=5)": (lambda: evaluate(5, Greedy(), [0]), ("env",)),  # type: ignore[arg-type]
        "evaluate(agent=None)": (lambda: evaluate(env(), None, [0]), ("agent",)),  # type: ignore[arg-type]
        "evaluate(env_kwargs='x')": (
            lambda: evaluate("OneSidedLending-v0", Greedy(), [0], env_kwargs="x"),  # type: ignore[arg-type]
            ("env_kwargs",),
        ),
        "evaluate(keep_agent='yes')": (
            lambda: evaluate(env(), Greedy(), [0], keep_agent="yes"),  # type: ignore[call-overload]
            ("keep_agent",),
        ),
        "evaluate(return_trajectories=1)": (
            lambda: evaluate(env(), Greedy(), [0], return_trajectories=1),  # type: ignore[call-overload]
            ("return_trajectories",),
        ),
        "run_episode(reset_agent=1)": (
            lambda: run_episode(env(), Greedy(), 0, reset_agent=1),  # type: ignore[arg-type]
            ("reset_agent",),
        ),
        "check_agent(object)": (lambda: check_agent(object()), ("Agent",)),  # type: ignore[arg-type]
        "check_agent(env_ids='x')": (
            lambda: check_agent(Greedy, env_ids="OneSidedLending-v0"),
            ("env_ids",),
        ),
        "evaluate(wrong family agent)": (
            lambda: evaluate("AppleTasting-v0", Greedy(), [0], env_kwargs={"horizon": 3}),
            ("Greedy",),
        ),
    }
    for label, (call, names) in cases.items():
        # check_agent's refusal is documented: an AgentContractError naming the failed check
        errors = (AgentContractError,) if label.startswith("check_agent") else ()
        yield Case(f"runner {label}", call, names, errors=errors)


def all_cases(tmp: Path) -> list[Case]:
    """Every case; ``tmp`` is a scratch folder for files the cases write."""
    from tests.bad_vector_inputs import rl_vector_cases  # (it reads Case and SMALL here)

    return [
        *_env_cases(),
        *_rl_cases(),
        *rl_vector_cases(),
        *_agent_cases(),
        *_data_cases(tmp),
        *_sweep_cases(),
        *_cli_cases(tmp),
        *_runner_cases(),
    ]
