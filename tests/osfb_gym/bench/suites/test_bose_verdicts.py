"""bose-services' verdicts on seeded synthetic rows: paired by seed, Holm over the page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from osfb_gym.bench.suites.bose import verdicts

AGENTS = ("AcQUIre", "Uniform", "Fair AcQUIre", "Group-balanced uniform")


def synthetic(n: int, effect: float, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Curves and fairness frames: AcQUIre (and Fair AcQUIre) ``effect`` below the baselines.

    Each seed (world) has its own level shared by every agent, plus small noise per agent.
    """
    rng = np.random.default_rng(seed)
    world = rng.normal(10.0, 3.0, n)
    curves, fairness = [], []
    for agent in AGENTS:
        shift = -effect if agent in ("AcQUIre", "Fair AcQUIre") else 0.0
        for s in range(n):
            if agent in AGENTS[:2]:
                curves.append(("pop", s, agent, 20, world[s] + shift + rng.normal(0, 0.1)))
            groups = world[s] / 10 + shift + rng.normal(0, 0.1, 2)
            fairness.append(("census, by sex", s, agent, 5, groups.max(), *groups))
    curve_columns = ["setting", "seed", "agent", "k", "total_loss"]
    fair_columns = ["setting", "seed", "agent", "k", "fairness", "group 0", "group 1"]
    return pd.DataFrame(curves, columns=curve_columns), pd.DataFrame(fairness, columns=fair_columns)


def readings(n: int, effect: float) -> tuple[list[str | None], str, str]:
    curves, fairness = synthetic(n, effect)
    page, tested = verdicts.build(curves, fairness, top=20)
    winners = [v.winner for v in page.verdicts]
    lines = "\n\n".join(verdicts.section(page, tested, {"census, by sex": ("Female", "Male")}))
    return winners, lines, verdicts.claims_table(page.verdicts, tested)


def test_a_clear_effect_names_acquire_the_winner_everywhere():
    winners, lines, table = readings(20, effect=1.0)
    # total loss, two groups, the fairness objective, Fair AcQUIre's fairness objective
    assert winners == ["AcQUIre"] * 4 + ["Fair AcQUIre"]
    assert "AcQUIre clearly lower for 2 of 2 groups, tied for 0" in lines
    assert "Holm's correction over the page's 5 comparisons" in lines
    assert table.count("| reproduced") == 4 and "not reproduced" not in table


def test_no_effect_is_a_tie_and_no_statement_is_reproduced():
    winners, lines, table = readings(20, effect=0.0)
    assert winners == [None] * 5
    assert "tied for 2 (Female, Male)" in lines
    assert "| reproduced" not in table and table.count("tie (within noise)") == 4


def test_the_opposite_effect_reads_not_reproduced():
    winners, _, table = readings(20, effect=-1.0)
    assert winners == ["Uniform"] * 4 + ["Group-balanced uniform"]
    assert table.count("not reproduced") == 4


@pytest.mark.parametrize("n", [3, 5])
def test_five_pairs_never_name_a_winner_however_large_the_effect(n):
    winners, lines, table = readings(n, effect=100.0)
    assert winners == [None] * 5
    assert "too few runs to ever name a winner" in lines
    assert table.count(f"cannot tell at n={n}") == 4


def test_a_seed_missing_for_one_side_is_left_out_of_the_pairs():
    curves, fairness = synthetic(12, effect=1.0)
    curves = curves.drop(index=curves.index[(curves["agent"] == "Uniform") & (curves["seed"] == 3)])
    page, _ = verdicts.build(curves, fairness, top=20)
    assert page.verdicts[0].n == 11 and page.verdicts[0].winner == "AcQUIre"
