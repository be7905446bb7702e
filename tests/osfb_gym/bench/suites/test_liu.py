"""Liu et al.'s outcome curves: exact computations on the tables, claims, the missing-data path."""

from __future__ import annotations

import numpy as np
import pytest

from osfb_gym.bench import driver
from osfb_gym.bench.driver import RunOptions
from osfb_gym.bench.suites import get, liu, run
from osfb_gym.data.fico import FicoTables
from osfb_gym.envs.delayed_impact import outcome_curve, synthetic_world
from osfb_gym.envs.delayed_impact.world import ImpactWorld
from tests.helpers import needs_osfb_data, osfb_data


def _tables() -> FicoTables:
    """Four made-up groups on a 0-100 grid: the shapes of the TransRisk tables, no data."""
    scores = np.linspace(0.0, 100.0, 41)
    repay = 1.0 / (1.0 + np.exp(-(scores - 45.0) / 8.0))
    cdf = np.stack([np.clip((scores / 100.0) ** p, 0, 1) for p in (0.5, 2.0, 1.0, 3.0)])
    return FicoTables(
        "fico", scores, ("White", "Black", "Hispanic", "Asian"), cdf, np.tile(repay, (4, 1)),
        np.array([800, 100, 60, 40]),
    )  # fmt: skip


def test_operating_points_match_their_definitions_on_a_small_world():
    world = synthetic_world()
    points = liu.operating_points(world, 4.0, rates=401).set_index(["criterion", "group"])
    low, high = world.group_names
    # MaxUtil approves exactly where rho > 0.8, each group alone
    approve = world.rho > 0.8
    for g, group in enumerate(world.group_names):
        assert points.loc[("MaxUtil", group), "selection_rate"] == pytest.approx(
            world.pi[g] @ approve[g]
        )
    dp, eo = points.xs("DemParity"), points.xs("EqOpt")
    assert dp.loc[low, "selection_rate"] == pytest.approx(dp.loc[high, "selection_rate"])
    assert eo.loc[low, "tpr"] == pytest.approx(eo.loc[high, "tpr"], abs=1e-9)
    # each point lies on its group's outcome curve
    for group, g in ((low, 0), (high, 1)):
        rate = dp.loc[group, "selection_rate"]
        rates, delta = outcome_curve(world.scores, world.pi[g], world.rho[g], rates=[rate])
        assert dp.loc[group, "delta_mu"] == pytest.approx(delta[0])


def test_the_fair_points_depend_on_the_population_and_max_util_does_not():
    world = synthetic_world()
    skewed = ImpactWorld(world.scores, world.pi, world.rho, np.array([0.1, 0.9]), world.group_names)
    a = liu.operating_points(world, 4.0, rates=401).set_index(["criterion", "group"])
    b = liu.operating_points(skewed, 4.0, rates=401).set_index(["criterion", "group"])
    assert np.allclose(a.xs("MaxUtil")["selection_rate"], b.xs("MaxUtil")["selection_rate"])
    assert not np.allclose(a.xs("DemParity")["selection_rate"], b.xs("DemParity")["selection_rate"])


def test_compute_and_claims_on_made_up_tables():
    settings = liu.Settings(rates=201)
    frames = liu.compute(_tables(), settings)
    assert set(frames["curves"]["group"]) == {"Black", "White", "Hispanic", "Asian"}
    assert len(frames["curves"]) == 4 * 201
    assert len(frames["points"]) == 2 * 3 * 2  # ratios x criteria x the pair
    assert set(frames["points"]["impact"]) <= {
        "active harm", "relative harm", "relative improvement", "as MaxUtil"
    }  # fmt: skip
    found = liu.claims(frames, settings)
    assert len(found) == 1 + 5 * len(settings.loss_ratios)
    for claim in found:
        assert "Delta mu" in claim.measured or "selection rates" in claim.measured
        assert isinstance(claim.holds, bool)


def test_the_suite_refuses_seeds_and_names_the_data_when_absent(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="--seeds"):
        run("liu-outcome-curves", tmp_path, RunOptions(seeds=1))
    monkeypatch.delenv("OSFB_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="OSFB_DATA") as error:
        run("liu-outcome-curves", tmp_path, RunOptions(data_home=str(tmp_path / "none")))
    assert "--data-home" in str(error.value)
    with pytest.raises(ValueError, match="score_changes"):
        liu.Settings(score_changes=(75.0,))


def test_the_catalog_reads_its_settings():
    keys = driver.settings_of(get("liu-outcome-curves"))
    assert set(keys) == {"loss_ratios", "score_changes", "groups", "rates"}
    assert get("delayed-impact").name == "liu-outcome-curves"


@needs_osfb_data("fico")
def test_on_the_real_tables_the_black_curve_turns_to_harm_and_the_white_does_not(tmp_path):
    report = run("liu-outcome-curves", tmp_path, RunOptions(data_home=str(osfb_data("fico"))))
    landmarks = report.landmarks.set_index("group")
    # the tables determine these exactly: the Black group's curve has a region of
    # active harm, the White group's stays positive up to selecting everyone
    assert landmarks.loc["Black", "peak_delta_mu"] > 0
    assert 0 < landmarks.loc["Black", "peak_rate"] < landmarks.loc["Black", "harm_from"] < 1
    assert np.isnan(landmarks.loc["White", "harm_from"])
    assert landmarks.loc["White", "delta_mu_at_1"] > 0
    points = report.points.set_index(["loss_ratio", "criterion", "group"])
    for ratio in (4.0, 10.0):  # fairness criteria select more of the Black group than MaxUtil
        mu = points.loc[(ratio, "MaxUtil", "Black"), "selection_rate"]
        assert points.loc[(ratio, "DemParity", "Black"), "selection_rate"] > mu
        assert points.loc[(ratio, "EqOpt", "Black"), "selection_rate"] > mu
    assert (tmp_path / "outcome_curves.png").stat().st_size > 0
    assert "| claim" in (tmp_path / "report.md").read_text()
