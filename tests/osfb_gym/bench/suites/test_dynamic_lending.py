"""The long-run lending comparison: a spec on the engine, a tiny paired run, its verdicts."""

from __future__ import annotations

import numpy as np
import pytest

from osfb_gym.bench import driver
from osfb_gym.bench.driver import RunOptions
from osfb_gym.bench.suites import dynamic_lending as dl
from osfb_gym.bench.suites import get, run
from tests.helpers import needs_osfb_data, osfb_data


def test_the_spec_runs_both_agents_on_each_world_with_the_same_seeds():
    settings = dl.Settings(seeds=3, horizon=100, stride=10, data_home="/x")
    spec = dl.sweep_spec(settings)
    assert [env.label for env in spec.envs] == ["bin_shift", "fico"]
    assert spec.envs[0].kwargs == {"scenario": "bin_shift", "horizon": 100}
    assert spec.envs[1].kwargs == {"dataset": "fico", "horizon": 100, "data_home": "/x"}
    assert {a.name for a in spec.agents} == {"MaxProfit", "EqualOpportunity"}
    assert spec.seeds == (0, 1, 2) and spec.curve_stride == 10
    cells = spec.cells()
    assert len(cells) == 2 * 2 * 3


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"worlds": ("mars",)}, "worlds"),
        ({"horizon": 0}, "horizon"),
        ({"stride": 0}, "stride"),
        ({"burnin": -1}, "burnin"),
        ({"burnin": 100, "horizon": 100}, r"burnin \(100\) must be below horizon \(100\)"),
    ],
)
def test_bad_settings_name_the_setting(kwargs, name):
    with pytest.raises(ValueError, match=name):
        dl.Settings(**kwargs)


def test_a_tiny_run_pairs_by_seed_and_decides_every_claim(tmp_path, monkeypatch):
    monkeypatch.delenv("OSFB_DATA", raising=False)  # the FICO world is left out, and said so
    options = RunOptions(seeds=4, horizon=120, data_home=str(tmp_path / "none"), progress=False)
    report = run("dynamic-lending", tmp_path, options, stride=20, burnin=10)
    frame = report.per_seed
    assert set(frame["world"]) == {"bin_shift"}
    assert len(frame) == 2 * 4  # two agents, the same four seeds each
    assert (frame.groupby("agent")["seed"].apply(sorted) == [[0, 1, 2, 3]] * 2).all()
    assert np.all((frame["approval_disadvantaged"] >= 0) & (frame["approval_disadvantaged"] <= 1))
    assert len(report.claims) == len(dl.FINDINGS)
    for claim in report.claims:  # every claim carries the numbers and a paired verdict
        assert "mean over seeds" in claim.measured and "paired sign-flip" in claim.measured
        # 4 pairs can never reject after Holm: no claim may be called reproduced
        assert claim.holds is False and claim.why == "no winner within noise"
    text = (tmp_path / "report.md").read_text()
    assert "Holm" in text and "Not run: fico" in text and "OSFB_DATA" in text
    rows = report.rows
    assert len(rows["curve_t"].iloc[0]) == len(rows["curve_mean_score_0"].iloc[0]) == 6
    assert (tmp_path / "mean_scores.png").stat().st_size > 0


def test_the_catalog_reads_its_settings():
    keys = driver.settings_of(get("dynamic-lending"))
    assert set(keys) == {"worlds", "burnin", "stride"}
    assert keys["burnin"].parse("0") == 0  # no burn-in is a setting, not an error
    with pytest.raises(ValueError, match="--set burnin= must be a whole number"):
        keys["burnin"].parse("-3")


@needs_osfb_data("fico")
def test_on_the_fico_tables_the_black_group_is_the_disadvantaged_one(tmp_path):
    options = RunOptions(seeds=2, horizon=60, data_home=str(osfb_data("fico")), progress=False)
    report = run("dynamic-lending", tmp_path, options, stride=30, burnin=10, worlds=("fico",))
    frame = report.per_seed
    assert set(frame["world"]) == {"fico"} and len(frame) == 4
    # the White group starts about 135 FICO points above the Black group (the tables)
    assert np.allclose(frame["initial_score_gap"], frame["initial_score_gap"].iloc[0])
    assert 100 < frame["initial_score_gap"].iloc[0] < 170
    assert "Not run" not in (tmp_path / "report.md").read_text()
