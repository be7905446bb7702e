"""The released per-run data under docs/results: what the protocol page promises of it.

Every ``rl-vs-principled*-scores.csv`` there is read as a user reads it
(``read_scores``, then rliable's matrices), and its rows are checked against
the definitions of the columns: a file edited by hand, cut short, or written
by an older layout fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from osfb_gym.bench.suites.rl_vs_principled.scores import (
    COLUMNS,
    FORMAT_VERSION,
    KEY,
    read_scores,
    score_matrix,
)

RESULTS = Path(__file__).resolve().parents[4] / "docs" / "results"
RELEASED = sorted(RESULTS.glob("rl-vs-principled*-scores.csv"))


def test_the_released_files_are_found():
    assert RELEASED, f"no rl-vs-principled*-scores.csv under {RESULTS}"


@pytest.fixture(params=RELEASED, ids=[path.name for path in RELEASED], scope="module")
def released(request: pytest.FixtureRequest) -> pd.DataFrame:
    return read_scores(request.param)


def test_the_columns_and_versions_are_the_documented_ones(released):
    assert tuple(released.columns) == COLUMNS
    assert set(released["format_version"]) == {FORMAT_VERSION}
    assert released["protocol_version"].nunique() == 1
    assert not released.duplicated(list(KEY)).any()
    assert set(released["kind"]) <= {"rl", "principled", "extra"}
    assert set(released["regime"]) <= {"fixed", "resampled", "dynamic"}
    for config in released["config"]:
        assert isinstance(json.loads(config), dict)


def test_each_row_follows_the_definitions_of_its_columns(released):
    gap = released["constant_objective"] - released["oracle"]
    defined = released["normalised"].notna()
    ratio = (released["objective"] - released["oracle"]) / gap
    np.testing.assert_allclose(released.loc[defined, "normalised"], ratio[defined], rtol=1e-9)
    total = released["train_regret"] + released["regret"]
    np.testing.assert_allclose(released["total_regret"], total, rtol=1e-9, atol=1e-9)
    assert (released["budget"] <= released["trained_to"]).all()
    assert (released["train_regret"][released["budget"] == 0] == 0).all()


def test_every_cell_compares_the_same_runs_of_every_selected_agent(released):
    selected = released[released["selected"].astype(bool)]
    cells = selected.groupby(["family", "regime", "budget"])
    for cell, rows in cells:
        runs = rows.groupby("algorithm")["run"].apply(frozenset)
        assert runs.nunique() == 1, f"{cell}: agents scored on different runs {dict(runs)}"
        assert not rows.duplicated(["algorithm", "run"]).any(), cell


def test_rliable_reads_every_cell_as_the_page_documents(released):
    selected = released[released["selected"].astype(bool)]
    for (family, regime, budget), here in selected.groupby(["family", "regime", "budget"]):
        # runs with no normalised regret (the best constant as good as the oracle) count nowhere
        runs = len(here.pivot_table(index="run", columns="algorithm", values="normalised").dropna())
        matrices = score_matrix(
            released[released["family"] == family], int(budget), regimes=[regime]
        )
        assert set(matrices) == set(here["algorithm"]), (family, regime, budget)
        for name, matrix in matrices.items():
            assert matrix.shape == (runs, 1), (family, regime, budget, name)
            assert np.isfinite(matrix).all()
