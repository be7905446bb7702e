"""The rl-vs-principled protocol, run for real at a tiny size (seconds), and its pieces."""

import dataclasses
import json

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from agents.rl import ALGORITHMS  # noqa: E402
from osfb_gym.bench.driver import RunOptions  # noqa: E402
from osfb_gym.bench.store import ResultStore  # noqa: E402
from osfb_gym.bench.suites import get, run  # noqa: E402
from osfb_gym.bench.suites.experience import principled_cell, regret  # noqa: E402
from osfb_gym.bench.suites.rl_vs_principled import (  # noqa: E402
    Protocol,
    stages,
    validation_spec,
)
from osfb_gym.bench.sweep import Cell  # noqa: E402
from osfb_gym.core.family import FAMILIES  # noqa: E402
from osfb_gym.runner import EpisodeRecorder, evaluate  # noqa: E402

TINY = Protocol(
    families=("lending",),
    budgets=(20, 40),
    seeds=2,
    episodes=2,
    horizon=10,
    n_steps=(10,),
    batch_size=10,
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("rl")
    changes = {k: getattr(TINY, k) for k in TINY.__dataclass_fields__}
    text = run("rl-vs-principled", out, RunOptions(progress=False), **changes).text
    return out, text


def test_tiny_protocol_writes_the_report(tiny):
    out, text = tiny
    assert text.startswith((out / "report.md").read_text().rstrip())  # then what ran
    for section in ("## Verdicts", "## Deployment score", "## Total regret", "## Figures"):
        assert section in text
    for name in ("curves", "total_regret", "profiles"):
        assert (out / f"rl_vs_principled_{name}.png").stat().st_size > 1000
    # every RL view against the validation-best principled agent, each regime
    assert text.count("- lending, fixed, N=40: PPO+O0") == 1
    assert "- lending, resampled, N=40: PPO+O1" in text


def test_tiny_protocol_points_are_consistent(tiny):
    import pandas as pd

    out, _ = tiny
    points = pd.read_csv(out / "points.csv")
    cells = points.groupby(["regime", "agent"])
    # every cell has >= 2 runs and the checkpoints 0, 20, 40
    assert set(cells["seed"].nunique()) == {2}
    assert set(points["budget"]) == {0, 20, 40}
    # normalised regret is (metric - oracle) / (best constant - oracle)
    expected = (points["objective"] - points["oracle"]) / (
        points["constant_objective"] - points["oracle"]
    )
    np.testing.assert_allclose(points["normalised"], expected)
    # experience costs regret: nothing before training, more the longer it runs
    rl = points[points["agent"].str.startswith("PPO")]
    assert (rl[rl["budget"] == 0]["train_regret"] == 0).all()
    by = rl.pivot_table(index=["regime", "agent", "seed"], columns="budget", values="train_regret")
    assert (by[40] >= by[20]).all() and (by[20] > 0).all()
    # the constant's normalised regret would be 1 by construction; the oracle's is 0
    assert (points["constant_objective"] >= points["oracle"]).all()


def test_resume_runs_nothing_again(tiny):
    out, text = tiny
    store = ResultStore(out)
    before = {path: path.stat().st_mtime_ns for path in store.cells.glob("*.json")}
    changes = {k: getattr(TINY, k) for k in TINY.__dataclass_fields__}
    again = run("rl-vs-principled", out, RunOptions(progress=False, resume=True), **changes).text
    assert again.rsplit("osfb-bench rl-vs-principled:", 1)[0] == text.rsplit("osfb", 1)[0]
    assert "(0 run now" in again
    after = {path: path.stat().st_mtime_ns for path in store.cells.glob("*.json")}
    assert after == before


def test_principled_agents_keep_their_state_in_a_fixed_world():
    # N = 20 steps of a fixed world = two 10-step episodes played by one agent, as
    # evaluate(keep_agent=True) plays them; its regret is what the cell counts
    from agents.lending import Greedy
    from osfb_gym.bench.suites.experience import TRAIN_BASE

    params = {
        "regime": "fixed",
        "split": "test",
        "budgets": [20],
        "episodes": 2,
        "agent": "Greedy",
        "agent_params": {},
    }
    cell = Cell("lending", "OneSidedLending-v0", {"horizon": 10}, "Greedy", params, 3)
    points = principled_cell(cell)["points"]
    kwargs = {"horizon": 10, "world_seed": 3}
    played = evaluate(
        "OneSidedLending-v0",
        Greedy(),
        [TRAIN_BASE + 30_000, TRAIN_BASE + 30_001],
        env_kwargs=kwargs,
        keep_agent=True,
    )
    assert points[1]["train_regret"] == pytest.approx(played["cumulative_loss"].sum())
    assert points[1]["train_episodes"] == 2
    # with no experience every test episode starts afresh
    fresh = evaluate("OneSidedLending-v0", Greedy(), [10_006, 10_007], env_kwargs=kwargs)
    assert points[0]["objective"] == pytest.approx(fresh["cumulative_loss"].tolist())


def test_episode_recorder_scores_as_the_runner_does():
    seen = []
    env = EpisodeRecorder(gym.make("RejectOption-v0", horizon=5), seen.append)
    _, info = env.reset(seed=4)
    assert "oracle" not in info
    for _ in range(5):
        _, _, _, _, info = env.step(np.array([2, 1]))
        assert "oracle" not in info
    assert len(seen) == 1 and seen[0]["steps"] == 5
    assert regret(FAMILIES["reject"], seen[0]) >= -1e-12
    with pytest.raises(TypeError, match="on_episode"):
        EpisodeRecorder(gym.make("RejectOption-v0"), None)  # type: ignore[arg-type]


def test_regret_is_against_the_oracle_objective_in_the_objective_s_units():
    apple, reject, lending = FAMILIES["apple"], FAMILIES["reject"], FAMILIES["lending"]
    # apple: totals over the episode, the Bayes decision's loss subtracted (0 on a dataset)
    assert regret(apple, {"cumulative_loss": 7.0, "bayes_loss": 2.5, "steps": 10}) == 4.5
    assert regret(apple, {"cumulative_loss": 7.0, "bayes_loss": float("nan"), "steps": 10}) == 7
    # reject: per-step averages, so times the steps
    episode = {"average_risk": 0.3, "bayes_risk": 0.1, "steps": 10}
    assert regret(reject, episode) == pytest.approx(2.0)
    assert regret(lending, {"cumulative_loss": 3.0, "steps": 10}) == 3.0


def test_validation_keeps_its_worlds_and_seeds_apart():
    spec = validation_spec(TINY)
    params = [agent.params for agent in spec.agents]
    assert {p["split"] for p in params} == {"validation"}
    rl = [p for p in params if "algo" in p]
    # gamma {0, 0.99} x n_steps {10}, views O0 (fixed), O0 and O1 (resampled)
    assert len(rl) == 2 * 3
    assert {json.dumps(p["algo_kwargs"]["gamma"]) for p in rl} == {"0.0", "0.99"}


def test_settings_are_checked(tmp_path):
    chosen = Protocol(budgets=(10_000, 30_000, 100_000), families=("reject",))
    assert chosen.budgets == (10_000, 30_000, 100_000) and chosen.families == ("reject",)
    assert chosen.seeds == 10  # runs per verdict cell: a winner can be named under Holm
    with pytest.raises(ValueError, match="families"):
        Protocol(families=("poker",))
    with pytest.raises(ValueError, match="views"):
        Protocol(resampled_views=("pixels",))
    with pytest.raises(ValueError, match="budgets"):
        run("rl-vs-principled", tmp_path, RunOptions(settings={"budgets": "many"}))
    from osfb_gym.bench.driver import settings_of

    cap = settings_of(get("rl-vs-principled"))["recurrent_budget"]
    assert cap.read("0") == 0 and cap.read("1e5") == 100_000  # 0: no cap
    with pytest.raises(ValueError, match="or 0 for no cap"):
        cap.parse("-3")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"budgets": (20, 10)}, "budgets must be increasing, each once .* got 20,10"),
        ({"budgets": (10, 10)}, "budgets must be increasing, each once"),
        ({"ent_coef": (0.0, -0.1)}, r"ent_coef must be >= 0"),
        # PPO and TRPO assert these inside the run (a crash after validation), RecurrentPPO's
        # loss turns NaN
        ({"n_steps": (1,)}, r"PPO needs rollouts of at least 2 steps .* n_steps=1 x n_envs=1"),
        ({"algos": ("TRPO",), "n_steps": (1, 8)}, "TRPO needs rollouts of at least 2 steps"),
        ({"batch_size": 1}, "batch_size must be at least 2 for PPO"),
        ({"extra_agents": ("agents.lending:Greedy",) * 2}, "lists agents.lending:Greedy more"),
    ],
)
def test_settings_that_would_fail_inside_the_run_are_refused_first(changes, message):
    with pytest.raises(ValueError, match=message):
        Protocol(**changes)


def test_a2c_takes_rollouts_of_one_step():
    assert Protocol(algos=("A2C",), n_steps=(1,), batch_size=1).n_steps == (1,)
    assert Protocol(algos=("PPO",), n_steps=(1,), n_envs=2).n_envs == 2  # 2 steps a rollout


def test_old_name_is_an_alias():
    assert get("rl-vs-bandit").name == "rl-vs-principled"


def test_agents_do_not_import_the_bench():
    import subprocess
    import sys

    code = "import sys, agents.rl; assert 'osfb_gym.bench' not in sys.modules, 'cycle'"
    subprocess.run([sys.executable, "-c", code], check=True)


TINY_CLI = (
    "--seeds 2 --horizon 10 --no-progress --set families=lending --set budgets=20,40 "
    "--set episodes=2 --set n_steps=10 --set batch_size=10"
).split()


def _measured(out):
    """Each stored cell's measurements, by key (timings left out)."""
    rows = ResultStore(out).rows()
    return {row["key"]: {k: v for k, v in row.items() if k != "seconds"} for row in rows}


@pytest.mark.slow
def test_kill_9_then_resume_gives_the_cells_of_an_uninterrupted_run(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[4]
    out = tmp_path / "killed"
    arguments = ["run", "rl-vs-principled", "--out", str(out), "--workers", "2", *TINY_CLI]
    command = [sys.executable, "-m", "osfb_gym.cli", *arguments]
    env = {**os.environ, "PYTHONPATH": str(root)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, cwd=root)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list((out / "cells").glob("*.json"))) < 4:
        time.sleep(0.05)
    assert process.poll() is None, "the run finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    before = _measured(out)
    assert before
    subprocess.run([*command, "--resume"], env=env, check=True, stdout=subprocess.DEVNULL, cwd=root)
    after = _measured(out)
    assert all(after[key] == row for key, row in before.items())  # kept, not recomputed
    from osfb_gym.cli import main

    assert main(["run", "rl-vs-principled", "--out", str(tmp_path / "fresh"), *TINY_CLI]) == 0
    assert after == _measured(tmp_path / "fresh")  # training and scoring are seeded


@pytest.mark.slow
def test_ray_gives_the_cells_of_local_processes(tmp_path):
    pytest.importorskip("ray")
    from osfb_gym.cli import main

    assert main(["run", "rl-vs-principled", "--out", str(tmp_path / "local"), *TINY_CLI]) == 0
    ray = ["--executor", "ray", "--workers", "2", *TINY_CLI]
    assert main(["run", "rl-vs-principled", "--out", str(tmp_path / "ray"), *ray]) == 0
    assert _measured(tmp_path / "local") == _measured(tmp_path / "ray")


@pytest.mark.parametrize("algo", ALGORITHMS)
def test_each_algorithm_gets_a_grid_it_accepts(algo):
    from osfb_gym.bench.rl import algorithm, algorithm_info
    from osfb_gym.bench.suites.rl_vs_principled import rl_configs
    from osfb_gym.wrappers import rl_env

    env = rl_env("RejectOption-v0", horizon=10, discrete_actions=True)
    policy = "MlpLstmPolicy" if algorithm_info(algo).recurrent else "MlpPolicy"
    protocol = dataclasses.replace(TINY, learning_rate=(3e-4,), ent_coef=(0.0, 0.01))
    configs = rl_configs(protocol, "reject", algo)
    assert configs and all(c["learning_rate"] == 3e-4 for c in configs)
    for config in configs:
        algorithm(algo)(policy, env, device="cpu", **config)  # no unknown argument
    if algorithm_info(algo).tunes == ("gamma", "learning_rate"):  # value-based: no rollouts
        assert [c["gamma"] for c in configs] == [0.99, 1.0]


def test_an_algorithm_has_one_colour_in_every_panel_and_a_view_one_marker(tmp_path, monkeypatch):
    import pandas as pd

    from osfb_gym.bench.suites.rl_vs_principled import analysis as module

    # PPO+O1 only in the resampled panel: index-based colours gave it PPO+O0's elsewhere
    rows = [
        {
            "family": "lending",
            "regime": regime,
            "agent": agent,
            "budget": budget,
            "seed": s,
            "normalised": 0.1 * s + budget / 1000,
        }
        for regime, agents in (
            ("fixed", ["Greedy", "PPO+O0"]),
            ("resampled", ["PPO+O1", "Greedy", "PPO+O0"]),
        )
        for agent in agents
        for budget in (0, 10)
        for s in range(3)
    ]
    figures = []
    monkeypatch.setattr(module, "save", lambda figure, path: figures.append(figure) or path)
    module.plot_curves(pd.DataFrame(rows), tmp_path / "c.png", "normalised", "regret", "mean")
    colours: dict[str, set] = {}
    markers: dict[str, set] = {}
    for axis in figures[0].axes:
        for line in axis.get_lines()[:-1]:  # the last line is the constant's level at 1
            colours.setdefault(line.get_label(), set()).add(line.get_color())
            markers.setdefault(line.get_label(), set()).add(line.get_marker())
    assert set(colours) == {"Greedy", "PPO+O0", "PPO+O1"}
    assert all(len(found) == 1 for found in (*colours.values(), *markers.values()))
    # one colour per algorithm (PPO on either view), a marker per view
    assert colours["PPO+O0"] == colours["PPO+O1"] != colours["Greedy"]
    assert markers["PPO+O0"] != markers["PPO+O1"]


def test_a_family_without_a_regime_leaves_its_panel_blank(tmp_path, monkeypatch):
    """Lending has a dynamic world and apple none: 5 panels on a 2 x 3 grid, one blank."""
    import pandas as pd

    from osfb_gym.bench.suites.rl_vs_principled import analysis as module

    cells = [("lending", r) for r in ("fixed", "resampled", "dynamic")]
    cells += [("apple", r) for r in ("fixed", "resampled")]
    rows = [
        {"family": f, "regime": r, "agent": "PPO+O0", "budget": b, "seed": s, "normalised": s}
        for f, r in cells
        for b in (0, 10_000, 100_000, 1_000_000)
        for s in range(3)
    ]
    figures = []
    monkeypatch.setattr(module, "save", lambda figure, path: figures.append(figure) or path)
    module.plot_curves(pd.DataFrame(rows), tmp_path / "c.png", "normalised", "regret", "mean")
    axes = figures[0].axes
    titles = [axis.get_title() for axis in axes if axis.axison]
    assert len(axes) == 6 and len(titles) == 5 and "apple, resampled world" in titles
    assert not axes[5].axison  # apple's dynamic world: none
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["0", "10k", "100k", "1M"]
    assert axes[0].get_xscale() == "symlog"


def test_a_narrowed_run_holds_the_same_cells_as_the_full_one():
    # the docs' way to check released rows: fewer families, regimes, algorithms and runs
    full = Protocol(
        families=("lending", "apple"), regimes=("fixed", "resampled", "dynamic"),
        algos=("PPO", "A2C", "DQN"), resampled_views=("feedback",), seeds=12,
    )  # fmt: skip
    narrow = dataclasses.replace(
        full, families=("apple",), regimes=("fixed",), algos=("A2C",), seeds=2
    )

    def keys(protocol):
        return {cell.key for cell in validation_spec(protocol).cells()}

    assert keys(narrow) and keys(narrow) <= keys(full)


def test_sensitivity_only_runs_the_cells_the_full_protocol_stores_for_its_table():
    only = Protocol(families=("lending", "apple"), regimes=("fixed", "dynamic"), sensitivity="only")
    [stage] = stages(only)
    keys = {cell.key for cell in stage.spec.cells()}
    full = validation_spec(dataclasses.replace(only, sensitivity=True))
    assert keys < {cell.key for cell in full.cells()}  # a store holds them for either
    params = [cell.params for cell in stage.spec.cells()]
    # 3 (family, regime) cells x 7 settings x 2 validation runs, and the constants
    assert sum(p.get("purpose") == "sensitivity" for p in params) == 3 * 7 * 2
    assert sum(cell.agent == "constant" for cell in stage.spec.cells()) == 3 * 2
    assert len(stages(dataclasses.replace(only, sensitivity=True))) == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"algos": ("PPO", "A2C")}, r"A2C \(of algos\) would not run"),
        ({"extra_agents": ("agents.lending:Greedy",)}, r"Greedy \(of extra_agents\) would not"),
    ],
)
def test_sensitivity_only_refuses_agents_it_would_not_run(changes, message):
    with pytest.raises(ValueError, match=message):
        Protocol(sensitivity="only", **changes)


def test_the_sensitivity_setting_reads_true_false_or_only(tmp_path):
    from osfb_gym.bench.driver import settings_of

    setting = settings_of(get("rl-vs-principled"))["sensitivity"]
    assert [setting.parse(t) for t in ("true", "False", "only")] == [True, False, "only"]
    with pytest.raises(ValueError, match="--set sensitivity= expects true, false or only"):
        setting.parse("alone")


def test_sensitivity_only_writes_the_table_and_its_runs(tmp_path, monkeypatch):
    import pandas as pd

    from osfb_gym.bench.suites import rl_vs_principled
    from osfb_gym.bench.suites.rl_vs_principled.scores import read_scores

    monkeypatch.setattr(rl_vs_principled, "SENSITIVITY", {"ent_coef": (0.0, 0.1)})
    changes = dict(
        families=("lending",), regimes=("fixed",), budgets=(20, 600), seeds=2, episodes=2,
        horizon=10, batch_size=64, sensitivity="only",
    )  # fmt: skip
    report = run("rl-vs-principled", tmp_path, RunOptions(progress=False), **changes)
    assert "nothing chosen or tested, so no verdicts" in report.text
    assert "## Verdicts" not in report.text and "| ent_coef=0.1 " in report.text
    scores = read_scores(tmp_path / "scores.csv")
    # 2 settings x 2 validation runs x the checkpoints 0, 20, 600; none chosen
    assert len(scores) == 2 * 2 * 3 and not scores["selected"].any()
    expected = (scores["objective"] - scores["oracle"]) / (
        scores["constant_objective"] - scores["oracle"]
    )
    np.testing.assert_allclose(scores["normalised"], expected)
    # the table's numbers are the means of these rows (a 512-step rollout trained by N=600)
    row = scores[(scores["budget"] == 600) & scores["config"].str.contains('"ent_coef": 0.1')]
    text = report.text.split("| ent_coef=0.1 ")[1].splitlines()[0]
    assert f"{row['normalised'].mean():.3g}" in text
    assert isinstance(pd.read_csv(tmp_path / "points.csv"), pd.DataFrame)
