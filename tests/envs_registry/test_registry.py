from __future__ import annotations

import subprocess
import sys

import gymnasium as gym

from envs_registry import ENVS, env_ids, register_all


def test_registration_is_idempotent():
    before = dict(gym.registry)
    assert register_all() == register_all() == [entry.id for entry in ENVS]
    assert dict(gym.registry).keys() == before.keys() | set(env_ids())


def test_entry_points_are_strings_and_import_lazily():
    code = (
        "import sys, gymnasium as gym, envs_registry; envs_registry.register_all(); "
        "assert 'osfb_gym.envs.lending' not in sys.modules; "
        "gym.make('OneSidedLending-v0'); assert 'osfb_gym.envs.lending' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert all(isinstance(entry.entry_point, str) for entry in ENVS)


def test_module_prefix_make_needs_no_prior_import():
    code = "import gymnasium as gym; gym.make('osfb_gym:OneSidedLending-v0').reset(seed=0)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_families():
    assert env_ids("lending") == ["OneSidedLending-v0"]
    assert env_ids("apple") == ["AppleTasting-v0"]
    assert env_ids("no-such-family") == []
