"""rl-vs-principled's released data: scores.csv, rliable's matrices, the leaderboard, the card.

A tiny real run (seconds): lending in the fixed, resampled and dynamic regimes, PPO,
two budgets, and a user's agent through ``extra_agents``.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("stable_baselines3")

from agents.rl import ALGORITHMS  # noqa: E402
from osfb_gym.bench.driver import RunOptions  # noqa: E402
from osfb_gym.bench.suites import run  # noqa: E402
from osfb_gym.bench.suites.rl_vs_principled import (  # noqa: E402
    Protocol,
    rl_configs,
    validation_spec,
)
from osfb_gym.bench.suites.rl_vs_principled.card import CAPABILITIES, card_scores  # noqa: E402
from osfb_gym.bench.suites.rl_vs_principled.scores import (  # noqa: E402
    COLUMNS,
    FORMAT_VERSION,
    append_leaderboard,
    read_scores,
    score_matrix,
)
from osfb_gym.cli import main  # noqa: E402
from osfb_gym.stats import aggregates  # noqa: E402

TINY = dict(
    families=("lending",),
    regimes=("fixed", "resampled", "dynamic"),
    budgets=(20, 40),
    seeds=2,
    validation_seeds=1,
    episodes=2,
    horizon=10,
    n_steps=(10,),
    batch_size=10,
    extra_agents=("agents.lending:Greedy",),
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("scores")
    text = run("rl-vs-principled", out, RunOptions(progress=False), **TINY).text
    return out, text, read_scores(out / "scores.csv")


def test_scores_csv_is_tidy_and_versioned(tiny):
    _, _, scores = tiny
    assert tuple(scores.columns) == COLUMNS
    assert set(scores["format_version"]) == {FORMAT_VERSION}
    assert set(scores["regime"]) == {"fixed", "resampled", "dynamic"}
    assert set(scores["budget"]) == {0, 20, 40}
    # one row per (cell, algorithm, config, run, checkpoint)
    key = ["family", "regime", "algorithm", "config", "run", "budget"]
    assert not scores.duplicated(key).any()
    # the dynamic regime plays the world with consequences, with its own principled agents
    dynamic = scores[scores["regime"] == "dynamic"]
    assert set(dynamic["env_id"]) == {"DelayedImpactLending-v0"}
    assert {"MaxProfit", "PPO+O0"} <= set(dynamic["algorithm"])
    # normalised regret is (objective - oracle) / (best constant - oracle)
    expected = (scores["objective"] - scores["oracle"]) / (
        scores["constant_objective"] - scores["oracle"]
    )
    np.testing.assert_allclose(scores["normalised"], expected)
    # a user's agent is a row of its own kind
    assert set(scores.loc[scores["algorithm"] == "agents.lending:Greedy", "kind"]) == {"extra"}


def test_score_matrix_is_rliables_dict_of_arrays(tiny):
    _, _, scores = tiny
    lending = ("PPO+O0", "Greedy", "agents.lending:Greedy")
    matrices = score_matrix(scores, 40, algorithms=lending)
    # the tasks every one of them has: fixed and resampled (Greedy has no dynamic world)
    assert set(matrices) == set(lending) and {m.shape for m in matrices.values()} == {(2, 2)}
    with pytest.raises(ValueError, match="no .family, regime. task is shared"):
        score_matrix(scores, 40)  # MaxProfit plays only the dynamic world, Greedy never
    only = score_matrix(scores, 40, algorithms=("PPO+O0", "MaxProfit"))
    assert only["PPO+O0"].shape == (2, 1)
    # the matrix holds the rows: run s, task s (fixed, then resampled: sorted)
    rows = scores[(scores["algorithm"] == "PPO+O0") & (scores["budget"] == 40)]
    rows = rows[rows["selected"].astype(bool) & (rows["regime"] == "fixed")]
    np.testing.assert_allclose(matrices["PPO+O0"][:, 0], rows.sort_values("run")["normalised"])
    # an aggregate of rliable's shape reads it (the stratified bootstrap over tasks)
    value, low, high = aggregates.interval(matrices["PPO+O0"], "mean")
    assert low <= value <= high
    with pytest.raises(ValueError, match=r"budget 7 .* the budgets are \[0, 20, 40\]"):
        score_matrix(scores, 7)


def test_report_has_the_card_and_the_verdicts_per_budget(tiny):
    _, text, scores = tiny
    assert "## Report card" in text and "No rows (not run): credit for hidden losses" in text
    for budget in (20, 40):
        assert f"- lending, dynamic, N={budget}: PPO+O0" in text
    best = {("lending", "fixed", 40): "Greedy", ("lending", "dynamic", 40): "MaxProfit"}
    table = card_scores(scores, best)
    assert list(table.index) == [*CAPABILITIES, "scale"]
    # exploring = lending's fixed world at the largest budget: mean of clip(1 - normalised)
    fixed = scores[
        (scores["regime"] == "fixed") & (scores["budget"] == 40) & scores["selected"].astype(bool)
    ]
    ppo = fixed[fixed["algorithm"] == "PPO+O0"]["normalised"]
    expected = (1 - ppo).clip(0, 1).mean()
    assert table.loc["exploring under one-sided feedback", "PPO"] == pytest.approx(expected)
    assert table.loc["credit for hidden losses that arrive late"].isna().all()


def test_a_run_whose_best_constant_is_optimal_has_no_normalised_score(tiny, tmp_path):
    # a world where one action always is optimal (a short episode of applicants all worth
    # denying, say): the best constant has no gap to the oracle to normalise by
    from osfb_gym.bench.store import ResultStore
    from osfb_gym.bench.suites.rl_vs_principled.analysis import report

    out, _, _ = tiny
    rows = ResultStore(out, read_only=True).read()
    rows["params"] = rows["params"].map(lambda p: json.dumps(p, sort_keys=True))  # as run_cells
    split = rows["params"].map(lambda p: json.loads(p)["split"])
    test, validation = rows[split == "test"].copy(), rows[split == "validation"].copy()
    regime = test["params"].map(lambda p: json.loads(p)["regime"])
    for frame in (test, validation):  # run 1 of the fixed world: every constant is the oracle
        where = (frame["agent"] == "constant") & (frame["seed"] == 1)
        where &= frame["params"].map(lambda p: json.loads(p)["regime"]) == "fixed"
        for index in frame.index[where]:
            oracle = 0.0  # lending's oracle objective (the Bayes decision has no regret)
            frame.at[index, "constants"] = [
                {**entry, "objective": [oracle] * len(entry["objective"]),
                 "regret": [0.0] * len(entry["regret"])}
                for entry in frame.at[index, "constants"]
            ]  # fmt: skip
    assert (regime == "fixed").any()
    page = tmp_path / "page"
    page.mkdir()
    text = report(test, validation, Protocol(**TINY), page).text
    assert "Undefined: in 1 of the 6 (family, regime, run)s" in text
    assert "(lending, fixed: run 1)" in text
    scores = read_scores(page / "scores.csv")
    gone = (scores["regime"] == "fixed") & (scores["run"] == 1)
    assert scores.loc[gone, ["normalised", "total_normalised"]].isna().all().all()
    assert scores.loc[~gone, ["normalised", "total_normalised"]].notna().all().all()
    assert np.isfinite(scores.loc[gone, "regret"]).all()  # the raw regret stays
    # the fixed world's verdicts rest on the other run only
    assert "lending, fixed, N=40: PPO+O0" in text and "n=1 pairs" in text


def test_leaderboard_appends_and_refuses_another_protocol(tiny, tmp_path):
    _, _, scores = tiny
    board = tmp_path / "board.csv"
    mine = scores[scores["kind"] == "extra"]
    assert len(append_leaderboard(mine, board)) == len(mine)
    # the same rows again replace themselves (a re-run), another agent's add up
    assert len(append_leaderboard(mine, board)) == len(mine)
    other = mine.assign(algorithm="mine:Other")
    assert len(append_leaderboard(other, board)) == 2 * len(mine)
    with pytest.raises(ValueError, match="protocol"):
        append_leaderboard(mine.assign(protocol_version=1), board)
    with pytest.raises(ValueError, match="missing"):
        append_leaderboard(mine.drop(columns=["run"]), board)


def test_leaderboard_command_runs_a_users_agent(tmp_path, capsys):
    board, store = tmp_path / "board.csv", tmp_path / "store"
    argv = ["leaderboard", "add", "agents.lending:Adaptive", "--budget", "20", "--out", str(board)]
    argv += ["--store", str(store), "--seeds", "2", "--horizon", "10", "--no-progress"]
    argv += ["--set", "families=lending", "--set", "regimes=fixed", "--set", "episodes=2"]
    argv += ["--set", "validation_seeds=1"]
    assert main(argv) == 0
    assert "rows appended to" in capsys.readouterr().out
    rows = read_scores(board)
    assert set(rows["algorithm"]) == {"agents.lending:Adaptive"}
    assert set(rows["run"]) == {0, 1} and set(rows["budget"]) == {0, 20}
    rows.assign(protocol_version=1).to_csv(board, index=False)
    assert main(argv + ["--resume"]) == 2
    assert "a leaderboard compares one protocol only" in capsys.readouterr().err


def test_a_users_agent_that_plays_none_of_the_worlds_is_refused():
    with pytest.raises(ValueError, match="agents.apple:MarginPerceptron plays none of this run"):
        Protocol(families=("lending",), extra_agents=("agents.apple:MarginPerceptron",))
    Protocol(families=("lending", "apple"), extra_agents=("agents.apple:MarginPerceptron",))


def test_each_side_gets_the_same_tuning_budget():
    protocol = Protocol(
        families=("apple",), n_steps=(64, 128), ent_coef=(0.0, 0.01), tuning=3, validation_seeds=2
    )
    spec = validation_spec(protocol)
    counts = {}
    for agent in spec.agents:
        if agent.runner.endswith("constant_cell"):
            continue
        params = agent.params
        name = (params["regime"], params.get("algo", params.get("agent")), params.get("view"))
        counts[name] = counts.get(name, 0) + 1
    # PPO's grid has 2 x 2 x 2 = 8 configurations, subsampled to 3; the principled grids have 3
    assert set(counts.values()) == {3}
    assert spec.seeds == (0, 1)
    # the subsample is a seeded draw: the same every time, and stored in grid order
    first = rl_configs(protocol, "apple", "PPO")
    assert first == rl_configs(protocol, "apple", "PPO") and len(first) == 3
    whole = rl_configs(dataclasses.replace(protocol, tuning=100), "apple", "PPO")
    places = [whole.index(config) for config in first]
    assert len(whole) == 8 and places == sorted(places)


def test_recurrent_ppo_needs_the_feedback_view_and_dqn_the_discrete_twin():
    with pytest.raises(ValueError, match="RecurrentPPO, which runs on the feedback view"):
        Protocol(algos=("RecurrentPPO",))
    # the feedback view of a regime the run does not have gives RecurrentPPO no cell either
    with pytest.raises(
        ValueError,
        match=r"no regime of the run \(fixed\) has it: add feedback to "
        "fixed_views$",
    ):
        Protocol(algos=("RecurrentPPO",), regimes=("fixed",), resampled_views=("feedback",))
    protocol = Protocol(algos=("PPO", "RecurrentPPO"), resampled_views=("features", "feedback"))
    assert protocol.views_of("RecurrentPPO", "resampled") == ("feedback",)
    assert protocol.views_of("RecurrentPPO", "fixed") == ()
    from osfb_gym.bench.rl import train

    with pytest.raises(ValueError, match="OneSidedLending-RL-Discrete-v0"):
        train("OneSidedLending-RL-v0", "DQN", total_timesteps=8, env_kwargs={"horizon": 4})
    with pytest.raises(ValueError, match="QRDQN needs Discrete ones: use 'RejectOption-RL-Dis"):
        train("RejectOption-RL-v0", "QRDQN", total_timesteps=8, env_kwargs={"horizon": 4})
    with pytest.raises(ValueError, match="extra_agents must read module:Class"):
        Protocol(extra_agents=("Greedy",))


def test_recurrent_ppo_stops_at_its_budget_cap():
    from osfb_gym.bench.suites.rl_vs_principled import validation_spec

    protocol = Protocol(
        families=("apple",), regimes=("resampled",), algos=("PPO", "RecurrentPPO"),
        resampled_views=("feedback",), budgets=(100, 1_000, 10_000), recurrent_budget=1_000,
    )  # fmt: skip
    assert protocol.budgets_of("RecurrentPPO") == (100, 1_000)
    assert protocol.budgets_of("PPO") == (100, 1_000, 10_000)
    cells = validation_spec(protocol).cells()
    budgets = {c.params.get("algo"): c.params["budgets"] for c in cells}
    assert budgets["RecurrentPPO"] == [100, 1_000] and budgets["PPO"] == [100, 1_000, 10_000]
    widths = {
        c.params["algo_kwargs"].get("policy_kwargs", {}).get("lstm_hidden_size")
        for c in cells
        if c.params.get("algo") == "RecurrentPPO"
    }
    assert widths == {64}  # the MLP layers' width, every configuration
    below = dataclasses.replace(protocol, recurrent_budget=10)  # below every budget: not run
    assert "RecurrentPPO" not in {c.params.get("algo") for c in validation_spec(below).cells()}
    from osfb_gym.bench.suites.rl_vs_principled.analysis import _header

    def words(p: Protocol) -> str:
        return _header(p, pd.DataFrame({"seconds": [1.0]}), pd.DataFrame({"seconds": [1.0]}))[2]

    assert "RecurrentPPO is trained and scored up to N = 1,000 only" in words(protocol)
    assert "RecurrentPPO is not run: `recurrent_budget` (10) is below every budget" in words(below)
    uncapped = dataclasses.replace(protocol, recurrent_budget=0)
    assert uncapped.budgets_of("RecurrentPPO") == (100, 1_000, 10_000)
    with pytest.raises(ValueError, match="recurrent_budget"):
        Protocol(recurrent_budget=-1)


def test_a_protocol_without_cells_names_the_settings():
    with pytest.raises(ValueError, match="regimes=dynamic leaves no cell to run.*lending"):
        Protocol(families=("reject",), regimes=("dynamic",))


def test_an_rl_cell_with_several_env_copies_scores_every_checkpoint():
    from osfb_gym.bench.suites.experience import rl_cell
    from osfb_gym.bench.sweep import Cell

    params = dict(
        regime="fixed", split="test", budgets=[20, 40], episodes=2, algo="PPO", view="plain",
        algo_kwargs={"n_steps": 5, "batch_size": 10}, n_envs=2,
    )  # fmt: skip
    cell = Cell("lending", "OneSidedLending-v0", {"horizon": 10}, "PPO", params, 0)
    points = rl_cell(cell)["points"]
    assert [p["budget"] for p in points] == [0, 20, 40]
    # two copies pay for their experience: 40 steps are 4 episodes of 10
    assert points[-1]["train_episodes"] == 4 and points[0]["train_regret"] == 0


def test_the_sensitivity_table_names_the_setting_each_row_varies():
    from osfb_gym.bench.suites.rl_vs_principled.analysis import sensitivity_table

    common = dict(setting="lending", seed=0, env_id="OneSidedLending-v0")

    def row(config, regret, purpose="sensitivity"):
        params = dict(
            regime="fixed", split="validation", budgets=[100], algo="PPO", view="plain",
            algo_kwargs={"gamma": 0.0, **config}, purpose=purpose,
        )  # fmt: skip
        point = dict(budget=100, objective=[regret], oracle=[0.0], regret=[regret],
                     train_regret=1.0, steps=10.0)  # fmt: skip
        return dict(agent="PPO", params=json.dumps(params), points=[point], **common)

    # the best constant's objective, 2 above the oracle's, is the unit of the table
    constants = [{"action": 1, "objective": [2.0], "regret": [2.0]}]
    params = json.dumps(dict(regime="fixed", split="validation", budgets=[100]))
    constant = dict(agent="constant", params=params, constants=constants, **common)
    base = {"learning_rate": 3e-4, "n_steps": 512, "ent_coef": 0.0}
    rows = [row(base, 0.5), row(base | {"n_steps": 128}, 0.25), row(base, 9.0, "tune")]
    text = "\n".join(sensitivity_table(pd.DataFrame([*rows, constant])))
    assert "| base " in text and "| n_steps=128 " in text
    assert "|   0.25  |" in text and "|   0.125 |" in text  # regret over the constant's
    assert "4.5" not in text.split("|---")[-1]  # the tuning run is not a row
    assert sensitivity_table(pd.DataFrame([row(base, 1.0, "tune"), constant])) == []
    # a budget one setting did not run to is blank, not "nan"
    longer = row(base | {"ent_coef": 0.1}, 0.5)
    longer["points"] = [*longer["points"], dict(longer["points"][0], budget=200)]
    text = "\n".join(sensitivity_table(pd.DataFrame([*rows, longer, constant])))
    assert "N=200" in text and "nan" not in text


def test_recurrent_ppo_trains_on_the_feedback_view_in_a_cell():
    pytest.importorskip("sb3_contrib")
    from osfb_gym.bench.suites.experience import rl_cell
    from osfb_gym.bench.sweep import Cell

    params = dict(
        regime="resampled", split="test", budgets=[16], episodes=1, algo="RecurrentPPO",
        view="feedback", algo_kwargs={"n_steps": 16, "batch_size": 16},
    )  # fmt: skip
    cell = Cell("lending", "OneSidedLending-v0", {"horizon": 8}, "RecurrentPPO", params, 0)
    points = rl_cell(cell)["points"]
    assert [p["budget"] for p in points] == [0, 16] and points[-1]["train_episodes"] == 2


def test_dqn_trains_to_its_largest_budget_on_test_as_on_validation():
    """DQN's exploration decays over a tenth of the run: stopped at N it is not a run of N."""
    from osfb_gym.bench.suites.rl_vs_principled import test_spec

    protocol = Protocol(families=("lending",), regimes=("fixed",), algos=("PPO", "DQN"),
                        budgets=(20, 40, 80), seeds=2)  # fmt: skip
    picks = [("PPO+O0", "a", [20]), ("PPO+O0", "b", [40, 80]), ("DQN+O0", "c", [20]),
             ("DQN+O0", "d", [40, 80]), ("Greedy", "e", [20, 40, 80])]  # fmt: skip
    chosen = pd.DataFrame(
        [
            dict(
                family="lending",
                regime="fixed",
                agent=agent,
                budget=b,
                kind="principled" if agent == "Greedy" else "rl",
                config=json.dumps({"tag": tag}),
                regret=0.0,
            )  # fmt: skip
            for agent, tag, at in picks
            for b in at
        ]
    )
    trained = {}
    for cell in test_spec(protocol, chosen).cells():
        config = cell.params.get("algo_kwargs", cell.params.get("agent_params", {}))
        if cell.seed == 0 and "tag" in config:
            trained[config["tag"]] = (cell.params["budgets"], cell.params.get("chosen_at"))
    assert trained == {
        "a": ([20], None),  # PPO's schedules are constant: a run of 20 steps is the same
        "b": ([20, 40, 80], [40, 80]),
        "c": ([20, 40, 80], [20]),  # DQN: the whole run, as validated; scored where chosen
        "d": ([20, 40, 80], [40, 80]),
        "e": ([20, 40, 80], None),
    }


@pytest.mark.parametrize("algo", ALGORITHMS)
def test_planned_says_which_algorithms_schedule_over_the_whole_run(algo):
    """Only an exploration schedule follows the run's length; every other default is constant."""
    from osfb_gym.bench.rl import algorithm, algorithm_info
    from osfb_gym.wrappers import rl_env

    env = rl_env("AppleTasting-v0", horizon=10)
    policy = "MlpLstmPolicy" if algorithm_info(algo).recurrent else "MlpPolicy"
    model = algorithm(algo)(policy, env, device="cpu")
    assert algorithm_info(algo).planned == hasattr(model, "exploration_schedule")
    assert model.lr_schedule(1.0) == model.lr_schedule(0.0)
    if hasattr(model, "clip_range"):
        assert model.clip_range(1.0) == model.clip_range(0.0)
