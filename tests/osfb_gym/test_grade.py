"""The grader: a correct submission is graded, each kind of broken one gets its diagnosis."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from osfb_gym.cli import main
from osfb_gym.grade import Diagnosis, grade, summary_table
from tests.osfb_gym.submissions.sources import SOURCES

GOOD = Path(__file__).parent / "submissions" / "good_agent.py"
SMALL = {"horizon": 60}


def write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCES[name])
    return path


def grade_source(tmp_path: Path, name: str, **options):
    """Grade the submission ``name`` of SOURCES: one short lending episode, no plot."""
    return grade(
        write(tmp_path, name),
        "OneSidedLending-v0",
        n_seeds=1,
        env_kwargs=SMALL,
        out=None,
        **options,
    )


def test_a_correct_submission_is_graded_beside_the_references(tmp_path):
    report = grade(GOOD, "OneSidedLending-v0", n_seeds=2, env_kwargs=SMALL, out=tmp_path)
    assert report.agent == "BonusLending(alpha=0.5, l2=1.0)"
    assert set(report.results["agent"]) == {"BonusLending (yours)", "Greedy", "Adaptive"}
    assert len(report.results) == 3 * 2
    assert set(report.results["seed"]) == {1_000_000, 1_000_001}  # held-out seeds
    assert (
        "cumulative_loss (mean ± s.e.)" in report.table and "BonusLending (yours)" in report.table
    )
    assert report.verdict.startswith("Your mean cumulative_loss is")
    assert report.plot is not None and report.plot.read_bytes()[:4] == b"\x89PNG"


def test_the_submission_never_sees_the_oracle(tmp_path):
    # Snoop raises if anything of the oracle reaches reset or update; graded means it never did.
    report = grade_source(tmp_path, "snoops_for_the_oracle")
    assert "Snoop (yours)" in report.table


@pytest.mark.parametrize(
    ("name", "kind", "phrases"),
    [
        ("syntax_error", "import", ["syntax error at line 4", "class Broken(Agent)"]),
        ("import_error", "import", ["ModuleNotFoundError", "a_package_that_does_not_exist"]),
        ("not_an_agent", "contract", ["ApproveAll", "does not subclass agents.base.Agent"]),
        ("two_agents", "contract", ["ApproveAll, DenyAll", "--agent NAME"]),
        ("state_in_init", "contract", ["self.weights_", "reset()"]),
        (
            "bad_signature",
            "contract",
            ["NoFeedback.update", "update(self, observation, action, reward, feedback)"],
        ),
        (
            "raises_in_act",
            "raises",
            ["Crashes.act() raised ValueError", "line 9 of raises_in_act.py", "step 1"],
        ),
        (
            "invalid_action",
            "invalid_action",
            ["returned 0.7 (a float)", "MultiBinary(1)", "np.ones(1, dtype=np.int8)"],
        ),
        ("exits_abruptly", "raises", ["ended abruptly (exit code 3)", "seed 1000000"]),
        (
            "infinite_loop",
            "timeout",
            ["time limit of 2 s", "running the episode with seed 1000000"],
        ),
    ],
)
def test_each_broken_submission_gets_its_diagnosis(tmp_path, name, kind, phrases):
    with pytest.raises(Diagnosis) as caught:
        grade_source(tmp_path, name, time_limit=2)
    assert caught.value.kind == kind
    for phrase in phrases:
        assert phrase in caught.value.message
    assert "Traceback" not in str(caught.value)


def test_a_missing_file_and_a_wrong_env_are_diagnosed(tmp_path):
    with pytest.raises(Diagnosis, match="There is no file"):
        grade(tmp_path / "nope.py", "OneSidedLending-v0", n_seeds=1, out=None)
    with pytest.raises(Diagnosis, match="does not include AppleTasting-v0") as caught:
        grade(GOOD, "AppleTasting-v0", n_seeds=1, env_kwargs={"horizon": 20}, out=None)
    assert caught.value.kind == "contract"


def test_the_agent_option_picks_one_of_several_classes(tmp_path):
    report = grade_source(tmp_path, "two_agents", class_name="DenyAll")
    # denying everyone reveals nothing: its loss is every good applicant it turned away
    assert (
        report.results.loc[report.results["agent"] == "DenyAll (yours)", "n_revealed"] == 0
    ).all()


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ({"env_id": "CartPole-v1"}, "env_id must be a registered osfb-gym id"),
        ({"n_seeds": 0}, "n_seeds"),
        ({"time_limit": -1}, "time_limit"),
    ],
)
def test_bad_arguments_name_the_parameter(arguments, match):
    options = {"env_id": "OneSidedLending-v0", "n_seeds": 1, "out": None, **arguments}
    with pytest.raises(ValueError, match=match):
        grade(GOOD, **options)


def test_cli_grades_with_exit_0_and_diagnoses_with_exit_1(tmp_path, capsys):
    common = ["--env", "OneSidedLending-v0", "--seeds", "1", "--env-kwargs", '{"horizon": 40}']
    assert main(["grade", str(GOOD), *common, "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "| BonusLending (yours)" in printed and "| Adaptive" in printed
    assert (tmp_path / "grade_OneSidedLending-v0.png").exists()
    assert (
        main(["grade", str(write(tmp_path, "invalid_action")), *common, "--out", str(tmp_path)])
        == 1
    )
    captured = capsys.readouterr()
    assert captured.err.startswith("NOT GRADED: the agent returned an invalid action.")
    assert "Traceback" not in captured.err + captured.out


def test_summary_table_orders_best_first_for_scores():
    frame = pd.DataFrame({"agent": ["A", "A", "B", "B"], "f1": [0.2, 0.4, 0.9, 0.7]})
    table = summary_table(frame, "f1", higher_is_better=True)
    assert table.index("| B") < table.index("| A")


def test_the_students_template_runs_and_is_graded(tmp_path):
    template = (
        Path(__file__).resolve().parents[2] / "examples" / "assignments" / "template_agent.py"
    )
    report = grade(template, "OneSidedLending-v0", n_seeds=1, env_kwargs=SMALL, out=None)
    # it approves everyone until the student fills it in
    mine = report.results[report.results["agent"] == "MyAgent (yours)"]
    assert (mine["approval_rate"] == 1.0).all()


@pytest.mark.parametrize(
    ("env_id", "env_kwargs", "objective", "references"),
    [
        (
            "AppleTasting-v0",
            {"horizon": 60},
            "f1",
            {"Perceptron", "MarginPerceptron", "LabelEfficient"},
        ),
        ("RejectOption-v0", {"horizon": 60}, "average_risk", {"DSOL", "DRAL", "DSAL"}),
        (
            "MultiServiceChoice-v0",
            {"n_users": 30, "n_services": 3, "reference_restarts": 0},
            "total_loss",
            {"Uniform", "AcQUIre"},
        ),
    ],
)
def test_every_family_is_graded_on_its_objective_beside_its_references(
    tmp_path, env_id, env_kwargs, objective, references
):
    path = write(tmp_path, "random_any_env")
    report = grade(path, env_id, n_seeds=2, env_kwargs=env_kwargs, out=None)
    assert set(report.results["agent"]) == references | {"RandomActions (yours)"}
    assert f"{objective} (mean ± s.e.)" in report.table
    assert report.results[objective].notna().all()


def test_cli_reports_a_bad_env_argument_as_a_usage_error(capsys):
    with pytest.raises(SystemExit, match="osfb-bench grade: .*bogus"):
        main(["grade", str(GOOD), "--env", "OneSidedLending-v0", "--env-kwargs", '{"bogus": 1}'])
