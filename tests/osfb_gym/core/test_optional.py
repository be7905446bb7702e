"""The core install works without the RL and Ray extras, and each missing extra is named.

A child process hides PyTorch, stable-baselines3, sb3-contrib, Ray and rich
behind a meta-path finder (what a ``pip install osfb-gym`` without extras
looks like to Python), then uses the package as a core user would.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from osfb_gym.core.optional import EXTRAS, missing_message, require, require_for_argument

ROOT = Path(__file__).resolve().parents[3]

BLOCK = """
import importlib.abc
import sys

HIDDEN = {"torch", "stable_baselines3", "sb3_contrib", "ray", "rich", "tensorboard"}


class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Hide())
"""


def run_without_extras(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_core_works_without_torch_sb3_ray_and_each_extra_is_named_in_one_line():
    # one child process for both checks: the imports are most of its cost
    printed = run_without_extras(
        """
        import gymnasium as gym

        import agents.apple, agents.lending, agents.reject, agents.services
        import osfb_gym, osfb_gym.bench.suites.rl_vs_principled, osfb_gym.cli, osfb_gym.wrappers
        from agents.lending import Adaptive
        from agents.rl import SB3Agent
        from osfb_gym.bench.executors import execute
        from osfb_gym.bench.rl import algorithm, train
        from osfb_gym.core.optional import require_for_argument
        from osfb_gym.runner import run_episode

        env = gym.make("OneSidedLending-v0", horizon=50)
        trajectory = run_episode(env, Adaptive(), seed=0)
        assert trajectory.actions.shape[0] == 50

        def message(call):
            try:
                call()
            except (ImportError, ValueError) as error:
                return f"{type(error).__name__}: {error}"
            raise AssertionError("no error")

        print(message(lambda: SB3Agent.load("PPO_x.zip")))
        print(message(lambda: train("AppleTasting-v0", "PPO", total_timesteps=10)))
        print(message(lambda: algorithm("RecurrentPPO")))
        print(message(lambda: execute([], print, executor="ray", workers=1)))
        print(message(lambda: require_for_argument("tensorboard", "tensorboard_log")))
        print(sorted(m for m in HIDDEN if m in sys.modules))

        # the CLI says the same in one line on stderr, exit code 2, no traceback
        import contextlib, io
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = osfb_gym.cli.main(["train", "OneSidedLending-v0", "--total-timesteps", "10"])
        print(code, stderr.getvalue().strip().splitlines())
        """
    )
    assert printed.splitlines() == [
        "MissingExtraError: SB3Agent needs stable-baselines3: pip install 'osfb-gym[rl]'",
        "MissingExtraError: PPO needs stable-baselines3: pip install 'osfb-gym[rl]'",
        "MissingExtraError: RecurrentPPO needs sb3-contrib: pip install 'osfb-gym[rl]'",
        "ValueError: executor='ray' needs ray: pip install 'osfb-gym[ray]'",
        "ValueError: tensorboard_log needs tensorboard: pip install 'osfb-gym[tensorboard]'",
        "[]",  # nothing of the extras was imported on the way
        "2 [\"osfb-bench train: error: PPO needs stable-baselines3: pip install 'osfb-gym[rl]'\"]",
    ]


def test_require_returns_the_module_and_chains_the_import_error():
    assert require("rich", "a test").__name__ == "rich"
    assert require_for_argument("rich", "a test").__name__ == "rich"
    assert set(EXTRAS) >= {"torch", "stable_baselines3", "sb3_contrib", "ray"}
    with pytest.raises(ValueError, match="module must be one of"):
        missing_message("numpy", "a test")
