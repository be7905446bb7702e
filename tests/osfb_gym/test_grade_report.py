"""The grader's report: reproduced gradings, paired comparisons, hints, the cache, Gradescope.

The trust boundary and the diagnoses are tested in ``test_grade.py``; here
the report a student and an instructor read. Gradings are small (short
episodes, few seeds) except the slow end-to-end ones.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.cli import main
from osfb_gym.grade import (
    CONSTANT_POLICIES,
    FAMILIES,
    TIE_RULE,
    ConstantPolicy,
    Diagnosis,
    grade,
    gradescope_results,
    paired_comparisons,
    write_gradescope,
)
from osfb_gym.grade import cache as grade_cache
from osfb_gym.grade.gradescope import CONTRACT_CHECKS, VISIBILITIES, failed_check
from osfb_gym.grade.references import run_agents as run_references
from osfb_gym.grade.report import hint_line as make_hint
from osfb_gym.runner import evaluate, run_episode

HERE = Path(__file__).parent
GOOD = HERE / "submissions" / "good_agent.py"
STEP_ONE = HERE / "submissions" / "lending_step1.py"
TEMPLATE = HERE.parents[1] / "examples" / "assignments" / "template_agent.py"
LENDING = "OneSidedLending-v0"
SMALL = {"horizon": 40}


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every grading here caches in its own folder, never the user's."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("OSFB_GRADE_CACHE", str(folder))
    return folder


# ---------------------------------------------------------------------------- reproducing
def test_grading_twice_with_the_same_seed_prints_the_same_report(tmp_path, capsys):
    arguments = ["grade", str(GOOD), "--env", LENDING, "--seeds", "2"]
    arguments += ["--env-kwargs", json.dumps(SMALL), "--out", str(tmp_path), "--seed", "123"]
    assert main(arguments) == 0
    first = capsys.readouterr().out
    assert main(arguments) == 0  # the references' scores now come from the cache
    second = capsys.readouterr().out
    assert first == second
    assert (tmp_path / "grade_good_agent_OneSidedLending-v0.png").exists()
    assert "REPRODUCTION, not an official grading" in first and "--seed 123" in first
    assert "| BonusLending (yours)" in first and "yours − this, paired (± s.e.)" in first
    assert TIE_RULE in first


def test_a_fresh_grading_says_so_and_leaves_the_cache_alone(private_cache):
    fresh = grade(GOOD, LENDING, n_seeds=2, env_kwargs={"horizon": 20}, out=None)
    assert fresh.mode == "official" and "drawn fresh and kept secret" in str(fresh)
    assert fresh.seed is None and len(fresh.seeds) == 2
    assert fresh.cached is None and not private_cache.exists()


def test_the_api_reproduces_a_grading_with_and_without_the_cache(private_cache):
    options = {"n_seeds": 2, "env_kwargs": SMALL, "out": None, "seed": 9}
    computed = grade(GOOD, LENDING, **options)
    cached = grade(GOOD, LENDING, **options)
    uncached = grade(GOOD, LENDING, cache=False, **options)
    assert computed.mode == "reproduction" and computed.cached is None
    assert cached.cached is not None and cached.cached.parent == private_cache
    assert uncached.cached is None
    for report in (cached, uncached):
        pd.testing.assert_frame_equal(report.results, computed.results)
        assert str(report) == str(computed)


# ---------------------------------------------------------------------------- the cache
def run_agents(env_id, agents, seeds, kwargs, folder):
    """The references' runner with one public world for every episode (what the cache keeps)."""
    return run_references(env_id, agents, seeds, [kwargs] * len(seeds), folder)


def test_the_cache_is_never_reused_across_kwargs_seeds_or_code(tmp_path, monkeypatch):
    agents = {"deny": ConstantPolicy(value=0)}
    first, source = run_agents(LENDING, agents, [1, 2], {"horizon": 5}, tmp_path)
    assert source is None and len(list(tmp_path.glob("*.json"))) == 1
    hit, source = run_agents(LENDING, agents, [1, 2], {"horizon": 5}, tmp_path)
    assert source is not None and hit["deny"]["rows"] == first["deny"]["rows"]
    np.testing.assert_array_equal(hit["deny"]["curve"], first["deny"]["curve"])
    for kwargs, seeds in [({"horizon": 6}, [1, 2]), ({"horizon": 5}, [1, 3])]:
        _, source = run_agents(LENDING, agents, seeds, kwargs, tmp_path)
        assert source is None
    _, source = run_agents(
        LENDING, {"deny": ConstantPolicy(value=1)}, [1, 2], {"horizon": 5}, tmp_path
    )
    assert source is None  # another agent (its hyperparameters are in the key)
    monkeypatch.setattr(grade_cache, "_CODE_VERSION", "another version of the code")
    _, source = run_agents(LENDING, agents, [1, 2], {"horizon": 5}, tmp_path)
    assert source is None


def test_a_damaged_cache_entry_is_recomputed(tmp_path):
    agents = {"deny": ConstantPolicy(value=0)}
    first, _ = run_agents(LENDING, agents, [4], {"horizon": 5}, tmp_path)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json")
    again, source = run_agents(LENDING, agents, [4], {"horizon": 5}, tmp_path)
    assert source is None and again["deny"]["rows"] == first["deny"]["rows"]


def test_a_bad_cache_argument_is_named():
    with pytest.raises(TypeError, match="cache must be a path"):
        grade(GOOD, LENDING, n_seeds=1, out=None, cache=5)  # type: ignore[arg-type]


def test_the_code_version_covers_every_source_file():
    version = grade_cache.code_version()
    assert len(version) == 64 and version == grade_cache.code_version()


# ---------------------------------------------------------------------------- comparisons
def _pair_frame(mine, theirs):
    seeds = list(range(len(mine)))
    return pd.DataFrame(
        {
            "agent": ["me"] * len(mine) + ["B"] * len(theirs),
            "seed": seeds * 2,
            "loss": [*mine, *theirs],
        }
    )


def test_the_verdicts_come_from_the_calibrated_paired_test():
    from osfb_gym.stats import paired

    def verdict(mine, theirs, lower_is_better=True):
        frame = _pair_frame(mine, theirs)
        return paired_comparisons(frame, "me", "loss", lower_is_better=lower_is_better).iloc[0]

    ten = np.arange(10.0)
    assert verdict(ten, ten + 1).verdict == "better"
    assert verdict(ten + 1, ten).verdict == "worse"
    assert verdict(ten, ten + 1, lower_is_better=False).verdict == "worse"
    # five seeds: the exact two-sided test's smallest p is 2/32 > 0.05, never a winner
    assert verdict(ten[:5], ten[:5] + 1).verdict == "tied"
    # one outlier widens the standard error past the mean (the old 2-s.e. rule: a tie), while
    # the exact test sees 9 of 10 seeds worse
    mine = np.array([3.0, 0.2, 0.1, 0.3, 0.2, 0.1, -0.1, 0.2, 0.1, 0.2])
    row = verdict(mine, np.zeros(10))
    assert row.mean_difference < 2 * row.standard_error and row.verdict == "worse"
    expected = paired(mine, np.zeros(10), lower_is_better=True, names=("me", "B"))
    assert row.p_value == pytest.approx(expected.p_value)
    noisy = np.array([1.0, -1.2, 0.9, -0.8, 1.1, -1.0, 0.7, -0.9, 1.2, -1.1])
    assert verdict(noisy, np.zeros(10)).verdict == "tied"
    assert "sign-flip" in TIE_RULE and "Holm" in TIE_RULE


def test_the_table_shows_the_paired_differences_the_verdict_uses(good_report_small):
    report = good_report_small
    wide = report.results.pivot_table(index="seed", columns="agent", values="cumulative_loss")
    for row in report.comparisons.itertuples():
        differences = wide[report.yours] - wide[row.agent]
        assert math.isclose(row.mean_difference, differences.mean())
        assert math.isclose(row.standard_error, differences.sem())
        assert row.verdict == "tied"  # three seeds: no exact test at 0.05 can reject
        assert f"{row.mean_difference:+.4g} ± {row.standard_error:.2g}" in report.table
        prefix = {"better": "better than", "tied": "a tie with", "worse": "worse than"}
        segment = report.verdict.split(prefix[row.verdict], 1)[1].split(";")[0]
        assert row.agent in segment
    lines = str(report).splitlines()
    assert lines[lines.index(report.table.splitlines()[-1]) + 2] == TIE_RULE


@pytest.fixture(scope="module")
def good_report_small():
    # a fixed seed: what the report says below does not depend on the draw
    return grade(
        GOOD, LENDING, n_seeds=3, env_kwargs={"horizon": 60}, out=None, seed=2024, cache=False
    )


def test_paired_comparisons_use_only_the_shared_seeds():
    frame = pd.DataFrame(
        {
            "agent": ["me", "me", "me", "B", "B"],
            "seed": [0, 1, 2, 0, 1],
            "loss": [1.0, 2.0, 100.0, 2.0, 4.0],
        }
    )
    (row,) = paired_comparisons(frame, "me", "loss", lower_is_better=True).itertuples()
    assert row.seeds == 2 and row.mean_difference == -1.5
    assert row.verdict == "tied"  # two pairs: too few for any exact test to name a winner


# ---------------------------------------------------------------------------- hints
@pytest.mark.parametrize("family", sorted(CONSTANT_POLICIES))
def test_every_constant_policy_plays_valid_actions(family):
    record = FAMILIES[family]
    env = gym.make(record.env_id, **record.small_kwargs)
    for value in CONSTANT_POLICIES[family].values():
        trajectory = run_episode(env, ConstantPolicy(value=value), seed=0)
        assert np.all(np.isfinite(trajectory.oracle_loss))
        assert trajectory.actions.shape[0] == trajectory.oracle_loss.size


def test_the_template_is_told_a_policy_that_learns_nothing_beats_it():
    report = grade(TEMPLATE, LENDING, n_seeds=2, env_kwargs={"horizon": 100}, out=None)
    baselines = report.baselines.groupby("agent")["cumulative_loss"].mean()
    mine = report.results.loc[report.results["agent"] == report.yours, "cumulative_loss"]
    # the first constant policy beats it: the others need not run
    assert list(baselines.index) == ["deny everyone"]
    assert baselines["deny everyone"] < mine.mean()
    # the template approves everyone: the other constant policy, on the same seeds
    approve = evaluate(LENDING, ConstantPolicy(value=1), report.seeds, env_kwargs={"horizon": 100})
    assert approve["cumulative_loss"].tolist() == mine.tolist()
    assert report.hint.startswith("Hint: a policy that learns nothing, 'deny everyone'")
    assert "intercept" in report.hint and "\n" not in report.hint
    assert report.hint in str(report)


def _frame(mine: list[float], **references: list[float]) -> pd.DataFrame:
    rows = [{"agent": "me", "seed": seed, "loss": value} for seed, value in enumerate(mine)]
    for agent, values in references.items():
        rows += [{"agent": agent, "seed": seed, "loss": value} for seed, value in enumerate(values)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("mine", "baseline", "phrase"),
    [
        ([1.0, 1.2, 0.9], None, ""),  # better than the references: no constant policy runs
        ([30.0, 31.0, 29.0], [20.0, 21.0, 19.0], "'deny everyone', scores 20"),
        ([30.0, 31.0, 29.0], [40.0, 41.0, 39.0], "8.57 times the nearest reference's (B, 3.5)"),
        ([5.0, 6.0, 4.0], [40.0, 41.0, 39.0], ""),  # worse, but not far: no hint
        ([5.0, 6.0, 4.0], [5.0, 6.0, 4.0], "scored exactly as 'deny everyone'"),
    ],
)
def test_the_hint_names_a_better_constant_policy_or_the_distance(mine, baseline, phrase):
    lending = dataclasses.replace(FAMILIES["lending"], objective="loss")
    results = _frame(mine, A=[3.0, 3.1, 2.9], B=[3.5, 3.6, 3.4])
    comparisons = paired_comparisons(results, "me", "loss", lower_is_better=True)
    baselines = (
        pd.DataFrame(columns=["agent", "seed", "loss"])
        if baseline is None
        else _frame(baseline).assign(agent="deny everyone")
    )
    text = make_hint(results, baselines, comparisons, "me", lending)
    assert (phrase in text and text.startswith("Hint: ")) if phrase else text == ""


def _step_one_losses(intercept: bool) -> float:
    namespace: dict[str, object] = {"__name__": "step_one"}
    exec(compile(STEP_ONE.read_text(), str(STEP_ONE), "exec"), namespace)
    agent = namespace["StepOne"](intercept=intercept)  # type: ignore[operator]
    frame = evaluate(LENDING, agent, [11, 12, 13], env_kwargs={"horizon": 1000})
    return float(frame["cumulative_loss"].mean())


def test_lending_step_one_followed_literally_works_only_with_the_intercept():
    # lending.md, step 1: least squares, approve when the score beats c; the observation has
    # no constant column, so without the intercept the score is centred on 0 below c
    greedy_class = FAMILIES["lending"].reference_classes()[0]
    frame = evaluate(LENDING, greedy_class(), [11, 12, 13], env_kwargs={"horizon": 1000})
    greedy = frame["cumulative_loss"].mean()
    with_intercept, without = _step_one_losses(True), _step_one_losses(False)
    assert with_intercept < 3 * greedy < without


@pytest.mark.slow
def test_the_grader_explains_a_lending_fit_without_the_intercept(tmp_path):
    source = STEP_ONE.read_text()
    bare = tmp_path / "bare.py"
    bare.write_text(source.replace("intercept: bool = True", "intercept: bool = False"))
    options = {"n_seeds": 4, "env_kwargs": {"horizon": 1000}, "seed": 3, "out": None}
    missing = grade(bare, LENDING, **options)
    fitted = grade(STEP_ONE, LENDING, **options)
    assert "far from every reference" in missing.hint and "intercept column" in missing.hint
    assert (missing.comparisons["mean_difference"] > 0).all()
    # four seeds: no exact paired test at 0.05 can name a winner, so the verdict is a tie
    assert (missing.comparisons["verdict"] == "tied").all()
    assert fitted.hint == ""
    mine = fitted.results.loc[fitted.results["agent"] == fitted.yours, "cumulative_loss"].mean()
    bare_mine = missing.results.loc[
        missing.results["agent"] == missing.yours, "cumulative_loss"
    ].mean()
    assert mine < bare_mine / 2


# ---------------------------------------------------------------------------- Gradescope
#: the fields Gradescope's Autograder Specifications document for results.json
#: (https://gradescope-autograders.readthedocs.io/en/latest/specs/)
TOP_LEVEL = {
    "score",
    "execution_time",
    "output",
    "output_format",
    "test_output_format",
    "test_name_format",
    "visibility",
    "stdout_visibility",
    "extra_data",
    "tests",
    "leaderboard",
}
TEST_FIELDS = {
    "score",
    "max_score",
    "status",
    "name",
    "name_format",
    "number",
    "output",
    "output_format",
    "tags",
    "visibility",
    "extra_data",
}
LEADERBOARD_FIELDS = {"name", "value", "order"}


def check_gradescope(data: dict) -> None:
    """Assert ``data`` uses only the documented fields, with the documented types and values."""
    assert set(data) <= TOP_LEVEL
    assert "score" in data or all("score" in test for test in data["tests"])
    assert isinstance(data["score"], float) and math.isfinite(data["score"])
    assert isinstance(data["execution_time"], int | float) and data["execution_time"] >= 0
    assert isinstance(data["output"], str)
    assert data["visibility"] in VISIBILITIES and data["stdout_visibility"] in VISIBILITIES
    for test in data["tests"]:
        assert set(test) <= TEST_FIELDS
        assert isinstance(test["name"], str) and test["name"]
        assert test["status"] in ("passed", "failed")
        assert test.get("visibility", "visible") in VISIBILITIES
        if "score" in test:
            assert 0 <= test["score"] <= test["max_score"]
    assert math.isclose(data["score"], sum(test.get("score", 0.0) for test in data["tests"]))
    for entry in data["leaderboard"]:
        assert set(entry) <= LEADERBOARD_FIELDS and isinstance(entry["name"], str)
        assert isinstance(entry["value"], int | float | str)
        assert entry.get("order", "desc") in ("asc", "desc")


def test_a_grading_becomes_gradescope_results(good_report_small, tmp_path):
    report = good_report_small
    path = write_gradescope(report, tmp_path / "results" / "results.json", max_score=10)
    data = json.loads(path.read_text())  # strict JSON: no NaN
    check_gradescope(data)
    names = [test["name"] for test in data["tests"]]
    assert names[: len(CONTRACT_CHECKS)] == [f"contract: {name}" for name, _ in CONTRACT_CHECKS]
    assert all(test["status"] == "passed" for test in data["tests"][: len(CONTRACT_CHECKS)])
    compared = data["tests"][len(CONTRACT_CHECKS) :]
    assert [test["name"] for test in compared] == [
        f"cumulative_loss against {agent}" for agent in report.comparisons["agent"]
    ]
    for test, row in zip(compared, report.comparisons.itertuples(), strict=True):
        assert test["max_score"] == 5.0
        assert (test["score"] == 5.0) == (row.verdict in ("better", "tied"))
    mine = report.results.loc[report.results["agent"] == report.yours, "cumulative_loss"].mean()
    assert data["leaderboard"] == [{"name": "cumulative_loss", "value": mine, "order": "asc"}]
    assert data["output"] == str(report)


def test_a_submission_not_graded_becomes_failed_gradescope_results():
    diagnosis = Diagnosis("contract", "Forgetful: init stores only: __init__ does not store l2.")
    data = gradescope_results(diagnosis, references=("Greedy", "Adaptive"))
    check_gradescope(data)
    status = {test["name"]: test["status"] for test in data["tests"]}
    assert status["contract: loads"] == "passed" and status["contract: hyperparameters"] == "passed"
    assert status["contract: init stores only"] == "failed"
    assert status["contract: episodes"] == "failed"  # not run
    assert data["score"] == 0.0 and data["leaderboard"] == []
    assert "init stores only" in data["output"]


@pytest.mark.parametrize(
    ("kind", "message", "check"),
    [
        ("import", "broken.py has a syntax error at line 4", "loads"),
        ("contract", "broken.py defines no subclass of agents.base.Agent.", "loads"),
        ("contract", "A.env_ids is ('AppleTasting-v0',), which does not include X", "env_ids"),
        ("raises", "A: init raises: A() raised ValueError", "hyperparameters"),
        ("contract", "A: clone: clone gives A(x=2), not A()", "clone"),
        (
            "contract",
            "A.update has the signature update(self), which cannot be called",
            "signatures",
        ),
        ("raises", "A.act() raised ValueError: no, on step 1 of episode 1 of 2.", "episodes"),
        ("timeout", "ran past the time limit of 2 s while importing the file", "loads"),
        ("timeout", "ran past the time limit of 2 s while running episode 1 of 1", "episodes"),
        ("limit", "The agent's process was stopped by SIGKILL while running episode 2", "episodes"),
    ],
)
def test_each_diagnosis_names_the_check_it_failed(kind, message, check):
    assert failed_check(Diagnosis(kind, message)) == check


def test_gradescope_options_are_checked(good_report_small):
    with pytest.raises(ValueError, match="visibility must be one of"):
        gradescope_results(good_report_small, visibility="public")
    with pytest.raises(ValueError, match="max_score must be > 0"):
        gradescope_results(good_report_small, max_score=0)
    with pytest.raises(TypeError, match="path must be a path"):
        write_gradescope(good_report_small, 5)  # type: ignore[arg-type]


def test_the_cli_writes_gradescope_results_graded_or_not(tmp_path, capsys):
    results = tmp_path / "autograder" / "results" / "results.json"
    common = ["--env", LENDING, "--seeds", "1", "--env-kwargs", json.dumps(SMALL)]
    out = tmp_path / "plots"
    arguments = ["--out", str(out), "--no-plot", "--gradescope", str(results)]
    assert main(["grade", str(GOOD), *common, *arguments]) == 0
    assert not out.exists()  # --no-plot
    graded = json.loads(results.read_text())
    check_gradescope(graded)
    assert graded["leaderboard"] and graded["output"] == capsys.readouterr().out.rstrip("\n")
    broken = tmp_path / "broken.py"
    broken.write_text("import numpy\nclass Nothing:\n    pass\n")
    assert main(["grade", str(broken), *common, "--gradescope", str(results)]) == 1
    failed = json.loads(results.read_text())
    check_gradescope(failed)
    assert failed["score"] == 0.0
    assert [test["name"] for test in failed["tests"] if "against" in test["name"]] == [
        "against Greedy",
        "against Adaptive",
    ]
    assert failed["output"].startswith("NOT GRADED")


# ---------------------------------------------------------------------------- the template
@pytest.mark.parametrize(
    ("env_id", "action"),
    [
        ("OneSidedLending-v0", None),
        ("AppleTasting-v0", "return 1"),
        ("RejectOption-v0", "return np.array([2, 1])"),
        ("MultiServiceChoice-v0", "return int(self.rng_.integers(40))"),
    ],
)
def test_the_template_runs_on_every_family_as_the_readme_says(env_id, action):
    # README step 1: for the families other than lending, change env_ids and what act returns
    source = TEMPLATE.read_text().replace(
        'env_ids = ("OneSidedLending-v0",)', f"env_ids = ({env_id!r},)"
    )
    if action is not None:
        returned = "return np.ones(len(observation), dtype=np.int8)"
        assert returned in source
        source = source.replace(returned, action)
    namespace: dict[str, object] = {"__name__": "my_agent"}
    exec(compile(source, "my_agent.py", "exec"), namespace)
    family = next(record for record in FAMILIES.values() if record.env_id == env_id)
    agent = namespace["MyAgent"]()  # type: ignore[operator]
    trajectory = run_episode(gym.make(env_id, **family.small_kwargs), agent, seed=0)
    assert trajectory.oracle_loss.size > 0
    if env_id == "OneSidedLending-v0":
        # every row stored with its intercept column: the warm start and the approved
        assert {row.shape for row in agent.X_} == {(6,)} and all(row[-1] == 1 for row in agent.X_)
        assert len(agent.X_) == len(agent.y_) > 0


def test_the_cli_refuses_a_negative_seed(capsys):
    with pytest.raises(SystemExit) as stopped:  # argparse's own error: one line, exit code 2
        main(["grade", str(GOOD), "--env", LENDING, "--seed", "-3"])
    assert stopped.value.code == 2
    assert "--seed: expected an integer >= 0" in capsys.readouterr().err


def test_the_cli_reads_the_seed_from_standard_input_off_the_command_line(
    tmp_path, capsys, monkeypatch
):
    """``--seed -``: the agent can read the grader's command line, not its standard input."""
    import io

    arguments = ["grade", str(GOOD), "--env", LENDING, "--seeds", "2", "--no-plot"]
    arguments += ["--env-kwargs", json.dumps(SMALL), "--out", str(tmp_path)]
    assert main([*arguments, "--seed", "123"]) == 0
    given = capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("123\n"))
    assert main([*arguments, "--seed", "-"]) == 0
    assert capsys.readouterr().out == given
    monkeypatch.setattr("sys.stdin", io.StringIO("abc\n"))
    with pytest.raises(SystemExit) as stopped:
        main([*arguments, "--seed", "-"])
    assert stopped.value.code == 2
    assert "expected an integer >= 0 on standard input, got 'abc'" in capsys.readouterr().err
