"""The rl-vs-principled verdicts on seeded synthetic points: paired by run, Holm, calibrated."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from osfb_gym.bench.suites.rl_vs_principled.analysis import verdicts


def points(runs: int, rl_shift: float, seed: int = 0) -> pd.DataFrame:
    """Two families x two regimes; PPO+O0 ``rl_shift`` above Adaptive plus a shared world effect."""
    rng = np.random.default_rng(seed)
    rows = []
    for family in ("lending", "apple"):
        for regime in ("fixed", "resampled"):
            world = rng.normal(0.5, 0.2, runs)  # run s: the same episodes for both agents
            for agent, kind, shift in (("Adaptive", "principled", 0.0), ("PPO+O0", "rl", rl_shift)):
                noise = rng.normal(0, 0.01, runs)
                for s in range(runs):
                    rows.append(
                        {
                            "family": family, "regime": regime, "agent": agent, "kind": kind,
                            "seed": s, "budget": 100, "normalised": world[s] + shift + noise[s],
                        }
                    )  # fmt: skip
    return pd.DataFrame(rows)


BEST = {(f, r, 100): "Adaptive" for f in ("lending", "apple") for r in ("fixed", "resampled")}


def verdict_words(frame: pd.DataFrame) -> list[str]:
    lines = [line for line in verdicts(frame, BEST) if line.startswith("- ")]
    return [line.rsplit("**", 2)[1] for line in lines]


def test_a_clear_effect_names_the_winner_after_holm():
    assert verdict_words(points(12, rl_shift=-0.1)) == ["RL better"] * 4
    assert verdict_words(points(12, rl_shift=0.1)) == ["principled better"] * 4


def test_a_null_effect_is_a_tie():
    assert set(verdict_words(points(12, rl_shift=0.0))) == {"tie (within noise)"}


@pytest.mark.parametrize("shift", [-1.0, 0.0, 1.0])
def test_five_runs_never_name_a_winner(shift):
    assert set(verdict_words(points(5, rl_shift=shift))) == {"cannot tell at n=5"}


def test_the_page_says_how_many_runs_a_winner_needs():
    lines = verdicts(points(5, rl_shift=-1.0), BEST)
    assert any("Holm's correction over the page's 4 comparisons" in line for line in lines)
    # 2 / 2^n * 4 <= 0.05 first at n = 8
    assert any("at least 8 runs per cell" in line for line in lines)


def test_pairs_are_matched_by_run_not_by_row_order():
    frame = points(12, rl_shift=-0.1)
    shuffled = frame.sample(frac=1.0, random_state=3)
    assert sorted(verdicts(shuffled, BEST)) == sorted(verdicts(frame, BEST))


def test_the_page_says_where_the_answer_depends_on_the_budget():
    early = points(12, rl_shift=-0.1)
    late = points(12, rl_shift=0.1, seed=1).assign(budget=200)
    best = BEST | {(f, r, 200): "Adaptive" for f, r, _ in BEST}
    lines = verdicts(pd.concat([early, late]), best)
    assert "- lending, fixed: the verdict depends on the budget." in lines
    table = lines[0]
    header = [c.strip() for c in table.splitlines()[0].split("|")[1:-1]]
    assert header == ["", "PPO"]  # one column per algorithm, one row per cell and budget
    assert "| lending, fixed, N=100 " in table and "| lending, fixed, N=200 " in table
    same = verdicts(early, BEST)
    assert "No cell's verdict depends on the algorithm, the view or the budget." in same


def test_a_capped_agent_leaves_its_later_budgets_blank_in_budget_order():
    from osfb_gym.bench.suites.rl_vs_principled.analysis import _chosen, _markdown

    table = {
        "RecurrentPPO+O2": {"N=10": "0.5", "N=100": "0.4", "signal": "env reward"},
        "PPO+O2": {"N=10": "0.6", "N=100": "0.3", "N=1,000": "0.2", "signal": "env reward"},
    }
    header = _markdown(table, ["N=10", "N=100", "N=1,000"]).splitlines()[0]
    assert [c.strip() for c in header.strip("|").split("|")][1:] == [
        "N=10", "N=100", "N=1,000", "signal"
    ]  # fmt: skip
    assert "nan" not in _markdown(table, ["N=10", "N=100", "N=1,000"])
    configs = pd.Series({10: '{"gamma": 0.9}', 100: '{"gamma": 0.9}', 1000: '{"gamma": 0.0}'})
    assert _chosen(configs) == 'N=10, 100: {"gamma": 0.9}; N=1,000: {"gamma": 0.0}'


def test_the_training_signal_names_one_gamma_only_where_every_budget_chose_it():
    from osfb_gym.bench.suites.rl_vs_principled.analysis import _signal

    # it named the largest budget's gamma for all, beside configurations choosing another
    mixed = pd.Series({10: '{"gamma": 0.9}', 100: '{"gamma": 0.0}'})
    assert _signal("PPO+O0", "lending", mixed) == "env reward, gamma as chosen at each budget"
    assert _signal("PPO+O0", "apple", mixed[:1]) == "env reward, gamma=0.9"
    assert _signal("Greedy", "lending", mixed) == "revealed outcomes (info['feedback'])"


def test_the_card_reads_a_capped_recurrent_ppo_at_its_own_largest_budget():
    from osfb_gym.bench.suites.rl_vs_principled.card import PRINCIPLED, card, card_scores

    rows = []
    for algorithm, kind, budgets in (
        ("PPO+O2", "rl", (10, 100)),
        ("RecurrentPPO+O2", "rl", (10,)),  # stopped at its cap
        ("Adaptive", "principled", (10, 100)),
    ):
        for budget in budgets:
            for run in range(3):
                rows.append(
                    {
                        "family": "lending", "regime": "resampled", "algorithm": algorithm,
                        "kind": kind, "budget": budget, "selected": True, "run": run,
                        "normalised": 0.5 if budget == 10 else 0.25,
                    }
                )  # fmt: skip
    scores = pd.DataFrame(rows)
    best = {("lending", "resampled", b): "Adaptive" for b in (10, 100)}
    table = card_scores(scores, best)
    adapting = table.loc["adapting within an episode to a new world"]
    # RecurrentPPO at N=10 (skill 0.5), the others at N=100 (0.75); it was left out
    assert adapting["RecurrentPPO"] == pytest.approx(0.5)
    assert adapting["PPO"] == adapting[PRINCIPLED] == pytest.approx(0.75)
    assert table.loc["scale", "PPO"] == pytest.approx(0.5)
    assert np.isnan(table.loc["scale", "RecurrentPPO"])  # one budget: no scale
    assert "RecurrentPPO at N=10: the largest it was trained to" in card(scores, best)[0]
