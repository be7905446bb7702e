"""The AcQUIre reproduction: a tiny run through the CLI, and its statements."""

from __future__ import annotations

import pandas as pd
import pytest

from osfb_gym.bench.suites.bose import uniform_services_to_match
from osfb_gym.cli import main


@pytest.mark.slow
def test_cli_runs_a_tiny_reproduction_and_writes_tables_and_plot(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OSFB_DATA", raising=False)  # no MovieLens: the synthetic settings
    (tmp_path / "no-data").mkdir()
    argv = ["run", "dean-services", "--seeds", "2", "--horizon", "5", "--out", str(tmp_path),
            "--data-home", str(tmp_path / "no-data"), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "## Total loss against k" in printed and "## Learning dynamics" in printed
    curves = pd.read_csv(tmp_path / "curves.csv")
    assert set(curves["k"]) == set(range(1, 6)) and set(curves["seed"]) == {0, 1}
    assert set(curves["agent"]) == {"AcQUIre", "Uniform", "Greedy"}
    # same world, same agent seed, and a uniform first pick for all three: the same first
    # user, so the curves are paired from k = 1 on; they part afterwards
    first = curves[curves["k"] == 1].groupby(["setting", "seed"])["total_loss"].nunique()
    last = curves[curves["k"] == 5].groupby(["setting", "seed"])["total_loss"].nunique()
    assert first.max() == 1 and last.min() > 1
    references = pd.read_csv(tmp_path / "references.csv")
    assert set(references["k"]) == {5}
    joined = curves.merge(references, on=["setting", "seed", "k"])
    assert (joined["total_loss"] >= joined["reference_loss"] * (1 - 1e-6)).mean() > 0.9
    dynamics = pd.read_csv(tmp_path / "dynamics.csv")
    assert (dynamics["after_dynamics"] <= dynamics["after_initialisation"] * (1 + 1e-9)).all()
    assert (tmp_path / "total_loss.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "report.md").read_text().startswith("# osfb-bench dean-services")


def test_uniform_match_reports_more_than_the_range_when_never_matched():
    frame = pd.DataFrame({"setting": "s", "seed": 0, "agent": ["AcQUIre"] * 2 + ["Uniform"] * 2,
                          "k": [1, 2] * 2, "total_loss": [5.0, 1.0, 5.0, 4.0]})  # fmt: skip
    assert uniform_services_to_match(frame, k=2)["uniform_services"].tolist() == ["> 2"]


@pytest.mark.slow
def test_movielens_runs_when_its_ratings_are_found(tmp_path):
    from osfb_gym.bench.suites.bose import DEAN_SUITES, run_dean
    from tests.osfb_gym.envs.test_services import write_ratings

    home = write_ratings(tmp_path / "data", users=260, movies=80)
    result = run_dean(DEAN_SUITES["dean-services"], tmp_path / "out", seeds=[0], data_home=home,
                      max_services=3, progress=False)  # fmt: skip
    assert "MovieLens 10M (200 subpopulations, 50 movies)" in set(result.curves["setting"])
    movielens = result.curves[result.curves["setting"].str.startswith("MovieLens")]
    assert len(movielens) == 3 * 3 and (movielens["excess_loss"] >= 0).all()


@pytest.mark.slow
def test_resume_runs_only_the_cells_a_killed_run_did_not_finish(tmp_path, monkeypatch):
    from osfb_gym.bench.store import ResultStore
    from osfb_gym.bench.suites import bose as dean

    monkeypatch.delenv("OSFB_DATA", raising=False)  # the synthetic settings only
    options = dict(seeds=[0, 1], max_services=3, progress=False, data_home=str(tmp_path / "none"))
    first = dean.run_dean(dean.DEAN_SUITES["dean-services"], tmp_path, **options)
    store = ResultStore(tmp_path)
    cells = sorted(store.cells.glob("*.json"))
    assert len(cells) == 2 * (2 * len(dean.SYNTHETIC) + 1)  # curves, dynamics; one fair setting
    lost = cells[::5]
    for path in lost:  # as if the run had been killed before these cells finished
        path.unlink()
    calls = []
    run_cell = dean.run_cell
    monkeypatch.setattr(dean, "run_cell", lambda *a: calls.append(a[:3]) or run_cell(*a))
    again = dean.run_dean(dean.DEAN_SUITES["dean-services"], tmp_path, resume=True, **options)
    assert len(calls) == len(lost)
    pd.testing.assert_frame_equal(again.curves, first.curves)
    pd.testing.assert_frame_equal(again.references, first.references)
    pd.testing.assert_frame_equal(again.fairness, first.fairness)
    pd.testing.assert_frame_equal(again.dynamics, first.dynamics)
