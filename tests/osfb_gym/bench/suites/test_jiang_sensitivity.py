"""The sensitivity table of Jiang's unstated choices: variants, the table, a tiny real run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from osfb_gym.bench import suites
from osfb_gym.bench.driver import RunOptions
from osfb_gym.bench.suites.jiang import FITS, METHODS
from osfb_gym.bench.suites.jiang.sensitivity import (
    VARIANTS,
    main,
    register,
    run_variant,
    sensitivity_summary,
    sensitivity_table,
    variant_fit,
)
from tests.helpers import needs_osfb_data

SHARED = Path(os.environ.get("OSFB_DATA", "/nonexistent"))
AGENT = {
    "greedy": "Greedy",
    "eps-greedy": "EpsilonGreedy",
    "os-eps-greedy": "OneSidedEpsilonGreedy",
    "noise": "Noise",
    "os-noise": "OneSidedNoise",
    "margin": "Margin",
    "ours": "Adaptive",
}


def test_every_unstated_choice_has_a_variant_changing_only_it():
    choices = {v.choice for v in VARIANTS}
    for choice in ("encoding", "scaling", "solver", "alpha range", "width scaling", "A's ridge"):
        assert choice in choices
    paper = FITS["paper"]
    for variant in VARIANTS:
        fit = variant_fit(paper, variant)
        changed = {
            (part, key)
            for part in fit
            for key in fit[part]
            if fit[part].get(key) != paper[part].get(key)
        }
        assert changed == {(p, k) for p, opts in variant.changes.items() for k in opts}
    assert FITS["paper"]["env"]["encoding"] == "native"  # the base is not mutated
    fits = {"paper": FITS["paper"]}
    register(fits)
    assert set(fits) == {"paper", *(v.name for v in VARIANTS if v.changes)}


def engine_rows(gap: float, splits: int = 12, seed: int = 0) -> pd.DataFrame:
    """Engine-like rows of one cell: every method at one alpha, "ours" ``gap`` below."""
    rng = np.random.default_rng(seed)
    stream = rng.normal(100, 10, splits)
    env = json.dumps({"dataset": "german", "cutoff_quantile": 0.5})
    rows = []
    for method in METHODS:
        params = json.dumps({} if method == "greedy" else {"alpha": 1.0})
        for s in range(splits):
            loss = stream[s] + rng.normal(0, 0.5) - (gap if method == "ours" else 0.0)
            rows.append(
                {"key": f"{method}-{s}", "setting": "german 50%", "env_kwargs": env,
                 "agent": AGENT[method], "params": params, "seed": s, "cumulative_loss": loss}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_the_table_says_which_variant_moves_which_cell():
    paper = engine_rows(gap=5.0)
    table = sensitivity_table(paper, {"onehot": engine_rows(0.0, seed=1), "standard": paper})
    onehot, standard = table.iloc[0], table.iloc[1]
    assert onehot["verdict (paper fit)"] == "clearly ours" and onehot["moved"] == "yes"
    assert onehot["verdict (variant)"].startswith("tied: ")
    assert standard["moved"] == "" and standard["greedy (variant / paper fit)"] == "x1.00"
    assert onehot["choice"] == "encoding" and onehot["cell"] == "german 50%"
    with pytest.raises(ValueError, match="named after VARIANTS"):
        sensitivity_table(paper, {"tuned-to-the-paper": paper})


@pytest.mark.slow
@needs_osfb_data("german_credit")
def test_a_variant_runs_as_a_fit_on_a_tiny_slice(tmp_path):
    tiny = {"datasets": ("german",), "alphas": (0.5, 1.0), "horizon": 30}
    options = RunOptions(seeds=2, data_home=str(SHARED), progress=False)
    base = run_variant("jiang-linear", "constant-rho", tmp_path / "v", options, **tiny)
    assert '"rho_schedule": "constant"' in base.text
    paper = suites.run("jiang-linear", tmp_path / "p", options, **tiny)
    table = sensitivity_table(
        pd.read_csv(tmp_path / "p" / "results.csv"),
        {"constant-rho": pd.read_csv(tmp_path / "v" / "results.csv")},
    )
    assert len(table) == 2 and set(table["cell"]) == {"german 50%", "german 70%"}
    assert paper.text != base.text


def test_a_verdict_word_keeps_the_tied_methods():
    from osfb_gym.bench.suites.jiang.sensitivity import _verdict_word

    tied = (
        "tied (within noise): ours with margin, eps-greedy (ours - margin -0.2 [-1, 0.5] (0.95 CI"
    )
    assert (
        _verdict_word(tied + " of this pair alone), Holm p=1)") == "tied: eps-greedy, margin, ours"
    )
    clear = (
        "clearly lowest: ours (ours - margin -20 [-23, -17] (0.95 CI of this pair alone), p=0.01)"
    )
    assert _verdict_word(clear) == "clearly ours"


def test_a_variant_on_some_datasets_meets_the_paper_fit_on_the_same_ones():
    german, crime = engine_rows(gap=5.0), engine_rows(gap=5.0, seed=3)
    crime["env_kwargs"] = crime["env_kwargs"].str.replace("german", "crime")
    crime["key"] = "crime-" + crime["key"]
    paper = pd.concat([german, crime], ignore_index=True)
    table = sensitivity_table(paper, {"ridge-A": engine_rows(0.0, seed=1)})
    assert list(table["cell"]) == ["german 50%"]  # crime: not run by the variant
    summary = sensitivity_summary(table)
    assert summary.loc[0, "cells moved"] == "1 of 1"
    assert summary.loc[0, "clearly ours"] == "1 -> 0"
    assert summary.loc[0, "another method clearly lowest"] == "none"
    assert summary.loc[0, "ours no longer among the lowest"] == "none"


def test_the_command_prints_both_tables_and_names_a_missing_store(tmp_path, capsys):
    engine_rows(gap=5.0).to_csv(tmp_path / "results.csv", index=False)
    (tmp_path / "v").mkdir()
    engine_rows(0.0, seed=1).to_csv(tmp_path / "v" / "results.csv", index=False)
    assert main([str(tmp_path), f"onehot={tmp_path / 'v'}", "--csv", str(tmp_path / "t.csv")]) == 0
    out = capsys.readouterr().out
    assert "| onehot" in out and "cells moved" in out and "german 50%" in out
    assert pd.read_csv(tmp_path / "t.csv")["moved"].tolist() == ["yes"]
    with pytest.raises(SystemExit):
        main([str(tmp_path), f"onehot={tmp_path / 'nowhere'}"])
    err = capsys.readouterr().err
    assert "no results.csv in" in err and "nowhere" in err
    with pytest.raises(SystemExit):
        main([str(tmp_path), f"tuned={tmp_path / 'v'}"])
    assert "named after VARIANTS" in capsys.readouterr().err
