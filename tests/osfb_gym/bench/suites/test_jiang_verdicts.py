"""Jiang's cells read with paired verdicts on seeded synthetic losses (issue 34)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from osfb_gym.bench import suites
from osfb_gym.bench.driver import RunOptions
from osfb_gym.bench.suites.jiang import METHODS
from osfb_gym.bench.suites.jiang.verdicts import (
    cell_text,
    cell_verdicts,
    grid_note,
    grid_text,
    power_note,
    tally,
)
from osfb_gym.stats.paired import pairs_needed
from tests.helpers import needs_osfb_data

SHARED = Path(os.environ.get("OSFB_DATA", "/nonexistent"))


def tuned_rows(splits: int, gap: float, cells: int = 2, seed: int = 0) -> pd.DataFrame:
    """Every method's per-split loss in ``cells`` cells; "ours" ``gap`` below the others.

    A shared split effect (the stream) plus small per-method noise: paired data.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for cell in range(cells):
        stream = rng.normal(100, 10, splits)
        for method in METHODS:
            noise = rng.normal(0, 0.5, splits)
            for s in range(splits):
                loss = stream[s] + noise[s] - (gap if method == "ours" else 0.0)
                rows.append(
                    {"dataset": f"d{cell}", "cutoff": 0.5, "method": method, "seed": s,
                     "cumulative_loss": loss}
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_a_clear_gap_is_clearly_lowest_and_counted():
    page, index = cell_verdicts(tuned_rows(14, gap=5.0))
    bests = page.bests
    assert [b.best for b in bests] == ["ours", "ours"] and all(b.clear for b in bests)
    assert cell_text(bests[0]).startswith("clearly lowest: ours (ours - ")
    assert "2 have a clearly lowest method and 0 are ties" in tally(page, METHODS)
    assert "Adaptive (ours) clearly lowest in 2, tied for lowest in 0" in tally(page, METHODS)
    assert set(index) == {("d0", 0.5), ("d1", 0.5)}


def test_no_gap_is_a_tie_within_noise():
    page, _ = cell_verdicts(tuned_rows(14, gap=0.0))
    assert not any(b.clear for b in page.bests)
    assert all(cell_text(b).startswith("tied (within noise): ") for b in page.bests)
    assert "0 have a clearly lowest method and 2 are ties" in tally(page, METHODS)


@pytest.mark.parametrize("splits", [5, 10])
def test_too_few_splits_for_the_pages_holm_family_never_name_a_winner(splits):
    # 2 cells x 6 comparisons: 2 / 2^n x 12 <= 0.05 needs n >= 9; 5 splits never, and
    # 10 splits can, so only 5 is forced to a tie
    page, _ = cell_verdicts(tuned_rows(splits, gap=50.0))
    clear = [b.clear for b in page.bests]
    assert clear == ([False, False] if splits == 5 else [True, True])
    assert f"the fewest splits that can: {pairs_needed(12)}" in power_note(page)
    assert ("cannot be clearly lowest" in power_note(page)) == (splits == 5)
    # forced, not found: neither cell is called a tie
    texts = [cell_text(b) for b in page.bests]
    assert all(t.startswith("cannot tell (too few splits") for t in texts) == (splits == 5)
    counted = "0 are ties (within noise), 2 cannot be told" in tally(page, METHODS)
    assert counted == (splits == 5)


def test_pairs_follow_the_split_not_the_row_order():
    rows = tuned_rows(12, gap=1.0)
    shuffled = rows.sample(frac=1.0, random_state=2)
    first, _ = cell_verdicts(rows)
    second, _ = cell_verdicts(shuffled.sort_values(["dataset"], kind="stable"))
    assert [cell_text(b) for b in first.bests] == [cell_text(b) for b in second.bests]


def test_the_grid_note_says_whether_exploration_can_be_switched_off():
    floor = tuple(2.0**k for k in range(-10, 4))
    assert "floor is 2^-10, not 0" in grid_note(floor, ["eps-greedy", "ours"])
    assert "none is forced to explore" in grid_note((0.0, *floor), ["eps-greedy", "ours"])
    assert grid_text((0.0, 0.5, 2.0)) == "{0, 2^-1, 2^1}"


@pytest.mark.slow
@needs_osfb_data("german_credit")
def test_alpha_zero_makes_every_method_greedy(tmp_path):
    # the grid floor the page asks for: at alpha = 0 no method explores
    options = RunOptions(seeds=2, data_home=str(SHARED), progress=False)
    suites.run("jiang-linear", tmp_path, options, datasets=("german",), alphas=(1.0,), horizon=60)
    rows = pd.read_csv(tmp_path / "results.csv")
    floor = rows[(rows["alpha"] == 0) | rows["alpha"].isna()]
    losses = floor.pivot_table("cumulative_loss", ["cutoff", "seed"], "method")
    assert set(losses.columns) == set(METHODS)
    assert np.allclose(losses.to_numpy(), losses[["greedy"]].to_numpy(), rtol=0, atol=1e-12)
    assert "none is forced to explore" in (tmp_path / "report.md").read_text()
