"""What the engine asks of the runner: an agent kept across the episodes of a fixed world."""

from __future__ import annotations

import gymnasium as gym
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from agents.lending import Greedy
from osfb_gym.runner import evaluate, run_episode

FIXED = {"horizon": 20, "world_seed": 0}


def test_a_kept_agent_plays_on_with_what_it_learned():
    frame = evaluate("OneSidedLending-v0", Greedy(), [0, 1, 2], env_kwargs=FIXED, keep_agent=True)
    env = gym.make("OneSidedLending-v0", **FIXED)
    agent = Greedy()
    by_hand = [run_episode(env, agent, seed, reset_agent=seed == 0).metrics for seed in (0, 1, 2)]
    assert frame["cumulative_loss"].tolist() == [m["cumulative_loss"] for m in by_hand]
    fresh = evaluate("OneSidedLending-v0", Greedy(), [0, 1, 2], env_kwargs=FIXED)
    assert frame["cumulative_loss"].iloc[0] == fresh["cumulative_loss"].iloc[0]
    assert frame["cumulative_loss"].tolist() != fresh["cumulative_loss"].tolist()


def test_keeping_an_agent_across_resampled_worlds_is_refused():
    with pytest.raises(ValueError, match="keep_agent=True needs a fixed world"):
        evaluate("OneSidedLending-v0", Greedy(), [0, 1], env_kwargs={"horizon": 5}, keep_agent=True)
    with pytest.raises(TypeError, match="reset_agent must be True or False"):
        run_episode(gym.make("OneSidedLending-v0", horizon=5), Greedy(), 0, reset_agent=1)
