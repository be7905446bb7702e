"""Progress bars say what they count and end at their total."""

from __future__ import annotations

import re

import pytest

from osfb_gym.bench.run import run_cells
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec


def _last_frame(err: str) -> str:
    """The last state tqdm drew (it redraws with carriage returns)."""
    return [frame for frame in re.split(r"[\r\n]", err) if frame.strip()][-1]


def test_a_training_bar_names_its_run_counts_steps_and_ends_at_the_steps_taken(capsys):
    pytest.importorskip("stable_baselines3")
    from osfb_gym.bench.rl import train

    model = train(
        "OneSidedLending-v0",
        "PPO",
        total_timesteps=100,
        env_kwargs={"horizon": 20},
        algo_kwargs={"n_steps": 64, "batch_size": 32, "n_epochs": 1},
        progress_bar=True,
    )
    err = capsys.readouterr().err
    counts = [(int(n), int(total)) for n, total in re.findall(r"(\d+)/(\d+) ", err)]
    assert counts and all(n <= total == 128 for n, total in counts)  # never past its total
    last = _last_frame(err)
    assert model.num_timesteps == 128  # two whole rollouts of 64
    assert last.startswith("training PPO on OneSidedLending-v0: 100%")
    assert "128/128" in last and "step" in last


def test_the_steps_a_training_run_takes_are_whole_rollouts_on_policy():
    from types import SimpleNamespace

    from osfb_gym.bench.rl import steps_taken

    assert steps_taken(SimpleNamespace(n_steps=2048, n_envs=1), 10_000) == 10_240
    assert steps_taken(SimpleNamespace(n_steps=512, n_envs=2), 1_024) == 1_024
    assert steps_taken(SimpleNamespace(n_envs=1), 10_000) == 10_000  # DQN: no rollouts


def test_the_cells_bar_is_labelled_and_counts_cells(tmp_path, capsys):
    env = EnvSpec("OneSidedLending-v0", "lending", {"horizon": 5})
    spec = SweepSpec("bars", (env,), (AgentSpec("Greedy"),), seeds=(0, 1, 2))
    rows, ran = run_cells(spec, tmp_path, label="bars, one stage")
    last = _last_frame(capsys.readouterr().err)
    assert ran == len(rows) == 3
    assert last.startswith("bars, one stage: 100%") and "3/3" in last and "cell" in last
