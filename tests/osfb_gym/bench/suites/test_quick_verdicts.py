"""quick's fixed-world verdicts on seeded synthetic runs: paired by run, Holm over the section."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from osfb_gym.bench.suites.quick.analysis import experience_verdicts


def runs(n: int, effect: float, seed: int = 0) -> pd.DataFrame:
    """Per-run rows of three agents at two experiences; Adaptive ``effect`` below the others.

    Each run (world) has its own level shared by its agents, plus small noise per agent.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for experience in (0, 1_000):
        world = rng.normal(20.0, 5.0, n)
        for agent, shift in (("Greedy", 0.0), ("Adaptive", -effect), ("PPO", 0.0)):
            loss = world + shift + rng.normal(0.0, 0.2, n)
            rows += [("w", agent, s, experience, loss[s]) for s in range(n)]
    return pd.DataFrame(rows, columns=["setting", "agent", "seed", "experience", "cumulative_loss"])


def test_a_clear_effect_names_the_clearly_lowest_agent_at_each_experience():
    text = experience_verdicts(runs(10, effect=2.0))
    assert text.count("clearly lowest: Adaptive") == 2
    assert "Holm's correction over the page's 4 comparisons" in text


def test_no_effect_leaves_a_tie_for_lowest():
    text = experience_verdicts(runs(10, effect=0.0))
    assert "clearly lowest" not in text and text.count("tied for lowest") == 2


@pytest.mark.parametrize("n", [2, 5])
def test_five_runs_never_name_a_winner(n):
    text = experience_verdicts(runs(n, effect=50.0))
    assert "clearly lowest" not in text
    assert text.count("too few runs to ever name a winner") >= 2


def test_one_agent_alone_gives_no_verdict():
    frame = runs(10, effect=1.0)
    assert experience_verdicts(frame[frame["agent"] == "Greedy"]) == ""
