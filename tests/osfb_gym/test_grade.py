"""The grader: a correct submission is graded, a broken one diagnosed, a cheat scores as it is.

Each grading spawns the agent's process (about a second here), so the
default run shares one graded run across the assertions about it and
grades every cheat at once; each cheat alone runs with ``-m slow``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import osfb_gym.runner
from agents.base import Agent
from osfb_gym.cli import main
from osfb_gym.envs.lending import OneSidedLendingEnv
from osfb_gym.grade import (
    FAMILIES,
    Diagnosis,
    grade,
    held_out_seeds,
    summary_table,
)
from osfb_gym.grade.integrity import impossible
from osfb_gym.grade.report import verdict_sentence as verdict
from osfb_gym.runner import Trajectory, evaluate, run_episode
from tests.osfb_gym.submissions.sources import CHEATS, SOURCES, cheat_source

GOOD = Path(__file__).parent / "submissions" / "good_agent.py"
SMALL = {"horizon": 60}
LENDING = "OneSidedLending-v0"
#: as root the agent runs as `nobody`, which cannot signal the grader; under one user it can
AS_ROOT = os.geteuid() == 0


class ApproveAll(Agent):
    """What every cheat falls back to: the honest score a failed cheat must get."""

    abstract = True  # a test helper, not an agent of the project

    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)


def write(folder: Path, name: str, source: str | None = None) -> Path:
    path = folder / f"{name}.py"
    path.write_text(SOURCES[name] if source is None else source)
    return path


def grade_source(tmp_path: Path, name: str, **options):
    """Grade the submission ``name`` of SOURCES: one short lending episode, no plot."""
    return grade(write(tmp_path, name), LENDING, n_seeds=1, env_kwargs=SMALL, out=None, **options)


@pytest.fixture(scope="module")
def good_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    return grade(GOOD, LENDING, n_seeds=2, env_kwargs=SMALL, out=out), out


def test_a_correct_submission_is_graded_beside_the_references(good_report):
    report, out = good_report
    assert report.agent == "BonusLending()"  # scikit-learn repr: only non-default values
    assert set(report.results["agent"]) == {"BonusLending (yours)", "Greedy", "Adaptive"}
    assert len(report.results) == 3 * 2
    seeds = set(report.results["seed"])
    assert len(seeds) == 2 and seeds.isdisjoint(range(1_000_000, 1_000_010))  # secret, fresh
    assert "cumulative_loss (mean ± s.e.)" in report.table
    assert "BonusLending (yours)" in report.table
    assert report.verdict.startswith("Your mean cumulative_loss is")
    assert report.suspicious == [] and "SUSPICIOUS" not in str(report)
    assert report.plot == out / "grade_good_agent_OneSidedLending-v0.png"  # one per submission
    assert report.plot.read_bytes()[:4] == b"\x89PNG"


def test_held_out_seeds_are_secret_unless_a_seed_reproduces_them():
    assert held_out_seeds(3) != held_out_seeds(3)
    assert held_out_seeds(3, seed=5) == held_out_seeds(3, seed=5)
    assert all(0 <= seed < 2**63 for seed in held_out_seeds(3))


def test_the_submission_never_sees_the_oracle(tmp_path):
    # Snoop raises if anything of the oracle reaches reset or update; graded means it never did.
    report = grade_source(tmp_path, "snoops_for_the_oracle")
    assert "Snoop (yours)" in report.table


# ---------------------------------------------------------------------------- cheats
def _cheat_run(names: list[str]):
    """Grade a submission running the cheats ``names`` (a lending episode, with a plot)."""
    # a folder the agent's process could write to, whatever user it runs as: the worst case
    folder = Path(tempfile.mkdtemp(prefix="osfb-cheat-"))
    folder.chmod(0o777)
    out, pid_path = folder / "out", folder / "daemon.pid"
    out.mkdir()
    out.chmod(0o777)
    plot = out / "grade_cheat_OneSidedLending-v0.png"
    source = cheat_source(names, RESULT_PATH=str(plot), PID_PATH=str(pid_path))
    try:
        report = grade(
            write(folder, "cheat", source), LENDING, n_seeds=2, env_kwargs=SMALL, out=out
        )
        daemon = int(pid_path.read_text()) if pid_path.exists() else None
        return report, report.plot.read_bytes(), report.plot.is_symlink(), daemon
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _scores_as_approve_all(run) -> None:
    report, plot_bytes, plot_is_link, daemon = run
    mine = report.results[report.results["agent"] == "Cheat (yours)"].sort_values("seed")
    seeds = [int(seed) for seed in mine["seed"]]
    honest = evaluate(LENDING, ApproveAll(), seeds, env_kwargs=SMALL)
    for column in ("cumulative_loss", "approval_rate", "bayes_agreement", "n_revealed"):
        assert mine[column].tolist() == honest[column].tolist(), column
    assert (mine["cumulative_loss"] > 0).all() and (mine["bayes_agreement"] < 1).all()
    assert report.suspicious == []
    assert plot_bytes[:4] == b"\x89PNG" and not plot_is_link  # the grader's plot, not the forgery
    assert daemon is None or not Path(f"/proc/{daemon}").exists()  # nothing outlives grading
    # the grader's own classes and loop are untouched
    assert OneSidedLendingEnv.step.__name__ == "step"
    assert osfb_gym.runner.run_episode.__module__ == "osfb_gym.runner"


def test_every_cheat_at_once_scores_as_the_honest_agent_it_falls_back_to():
    # patching the env and the metrics, gc, frames, sys.modules, /proc, rebuilding the world
    # from public seeds, forging the plot, a detached daemon (and, as root, signalling the
    # grader): each finds nothing, so the cheat approves everyone and is scored for exactly that
    names = [name for name in CHEATS if name != "signals_the_grader" or AS_ROOT]
    _scores_as_approve_all(_cheat_run(names))


@pytest.mark.parametrize(
    "name", ["finds_env_through_gc", "walks_frames_to_mu", "replays_the_world"]
)
def test_the_cheats_work_where_the_env_lives(name):
    # The same cheats, run in the grader's process on a public seed, reach the hidden truth and
    # decide exactly as the Bayes rule: only the process boundary (and the secret seeds) stop them.
    namespace: dict[str, object] = {"__name__": f"cheat_{name}"}
    exec(compile(cheat_source([name]), f"cheat_{name}.py", "exec"), namespace)
    agent = namespace["Cheat"]()
    trajectory = run_episode(gym.make(LENDING, horizon=15), agent, seed=1_000_000)
    assert trajectory.metrics["bayes_agreement"] == 1.0
    assert trajectory.metrics["cumulative_loss"] == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHEATS))
def test_each_cheat_alone_scores_as_the_honest_agent_it_falls_back_to(name):
    if name == "signals_the_grader" and not AS_ROOT:
        pytest.skip("under one user the agent's process can signal the grader (docs/grading.md)")
    _scores_as_approve_all(_cheat_run([name]))


def test_a_loss_below_the_bayes_floor_is_flagged(tmp_path, monkeypatch):
    # The old cheat's effect, done where it would count (in the grader's own env): a zero loss
    # for decisions that are not Bayes's is impossible, and the report says so.
    original = OneSidedLendingEnv.step

    def zero_loss(self, action):
        obs, reward, terminated, truncated, info = original(self, action)
        info["oracle"]["loss"] = 0.0
        return obs, reward, terminated, truncated, info

    monkeypatch.setattr(OneSidedLendingEnv, "step", zero_loss)
    report = grade(
        write(tmp_path, "cheat", cheat_source([])), LENDING, n_seeds=1, env_kwargs=SMALL, out=None
    )
    assert report.suspicious and "differed from the Bayes rule" in report.suspicious[0]
    assert "SUSPICIOUS" in str(report)


def _trajectory(losses, **metrics) -> Trajectory:
    losses = np.asarray(losses, dtype=float)
    metrics.setdefault("cumulative_loss", float(losses.sum()))
    metrics.setdefault("steps", float(losses.size))
    return Trajectory(
        rewards=np.zeros(losses.size),
        oracle_loss=losses,
        actions=np.zeros(losses.size),
        n_revealed=np.zeros(losses.size),
        metrics=metrics,
    )


@pytest.mark.parametrize(
    ("family", "trajectory", "phrase"),
    [
        ("lending", _trajectory([0.1, -0.2], wrongly_approved=1.0), "below 0"),
        ("lending", _trajectory([0.0], wrongly_denied=2.0), "differed from the Bayes rule"),
        ("lending", _trajectory([0.3], wrongly_denied=0.0), "every decision matched"),
        ("lending", _trajectory([0.3], cumulative_loss=0.0, wrongly_denied=1.0), "add up to"),
        ("apple", _trajectory([0.0] * 4, tp=1.0, fp=0.0, tn=1.0, fn=0.0), "do not add up"),
        ("apple", _trajectory([0.0] * 2, tp=1.0, fp=1.0, tn=0.0, fn=0.0, f1=1.0), "f1 is 1"),
        (
            "reject",
            _trajectory([0.0] * 2000, average_risk=0.0, bayes_risk=0.2),
            "below the Bayes risk",
        ),
        ("services", _trajectory([1.0], total_loss=-1.0), "never negative"),
        ("services", _trajectory([np.nan]), "not finite"),
    ],
)
def test_impossible_results_are_named(family, trajectory, phrase):
    reasons = impossible(family, trajectory)
    assert any(phrase in reason for reason in reasons), reasons


def test_possible_results_are_not_flagged():
    assert impossible("lending", _trajectory([0.2, 0.0], wrongly_approved=1.0)) == []
    assert impossible("lending", _trajectory([0.0, 0.0], wrongly_denied=0.0)) == []
    # a lucky run below the Bayes risk, within what chance allows over 2000 steps
    assert impossible("reject", _trajectory([0.0] * 2000, average_risk=0.15, bayes_risk=0.2)) == []
    assert (
        impossible("reject", _trajectory([0.0] * 10, average_risk=0.0, bayes_risk=math.nan)) == []
    )


# ---------------------------------------------------------------------------- verdicts
def _frame(**values) -> pd.DataFrame:
    rows = [
        {"agent": agent, "seed": seed, "loss": value}
        for agent, series in values.items()
        for seed, value in enumerate(series)
    ]
    return pd.DataFrame(rows)


def test_the_verdict_names_a_winner_only_when_the_paired_test_says_so():
    lending = dataclasses.replace(FAMILIES["lending"], objective="loss")
    mine = [1.0 + 0.1 * seed for seed in range(10)]
    frame = _frame(
        mine=mine,
        Close=[value + (0.05 if seed % 2 else -0.05) for seed, value in enumerate(mine)],
        Worse=[value + 4.0 for value in mine],
        Better=[value - 0.9 for value in mine],
    )
    text = verdict(frame, "mine", lending)
    assert "better than Worse" in text and "worse than Better" in text
    assert "a tie with Close (within noise)" in text
    assert "sign-flip" in text and "Holm over 3 references" in text
    # three seeds: no exact two-sided test at 0.05 can reject, so nothing is named
    few = verdict(_frame(mine=[1.0, 2.0, 3.0], Worse=[5.0, 6.0, 7.0]), "mine", lending)
    assert "a tie with Worse" in few and "too few to ever name a winner" in few


# ---------------------------------------------------------------------------- diagnoses
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
        ("exits_abruptly", "raises", ["ended abruptly (exit code 3)", "episode 1 of 1"]),
        ("memory_bomb", "limit", ["MemoryError", "memory limit", "line 10 of memory_bomb.py"]),
        ("forks", "limit", ["BlockingIOError", "may not start processes or threads"]),
        ("sends_junk", "raises", ["something other than plain data"]),
        ("prints_forever", "limit", ["File too large", "at most 1048576 bytes", "print less"]),
    ],
)
def test_each_broken_submission_gets_its_diagnosis(tmp_path, name, kind, phrases):
    with pytest.raises(Diagnosis) as caught:
        grade_source(tmp_path, name, time_limit=10, memory_limit=512)
    assert caught.value.kind == kind
    for phrase in phrases:
        assert phrase in caught.value.message
    assert "Traceback" not in str(caught.value)
    assert osfb_gym.runner.run_episode.__module__ == "osfb_gym.runner"  # nothing ran here


@pytest.mark.slow
def test_an_agent_that_never_returns_is_stopped_at_the_time_limit(tmp_path):
    with pytest.raises(Diagnosis) as caught:
        grade_source(tmp_path, "infinite_loop", time_limit=2)
    assert caught.value.kind == "timeout"
    assert "time limit of 2 s" in caught.value.message
    assert "running episode 1 of 1" in caught.value.message


def test_a_missing_file_and_a_wrong_env_are_diagnosed(tmp_path):
    with pytest.raises(Diagnosis, match="There is no file"):
        grade(tmp_path / "nope.py", LENDING, n_seeds=1, out=None)
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
    ("arguments", "error", "match"),
    [
        ({"env_id": "CartPole-v1"}, ValueError, "env_id must be a registered osfb-gym id"),
        ({"env_id": 5}, TypeError, "env_id"),
        ({"path": 5}, TypeError, "path must be a path"),
        ({"n_seeds": 0}, ValueError, "n_seeds"),
        ({"n_seeds": True}, TypeError, "n_seeds"),
        ({"time_limit": -1}, ValueError, "time_limit must be > 0"),
        ({"time_limit": 0}, ValueError, "time_limit must be > 0"),
        ({"time_limit": math.inf}, ValueError, "time_limit must be a finite number"),
        ({"time_limit": math.nan}, ValueError, "time_limit must be a finite number"),
        ({"time_limit": True}, TypeError, "time_limit must be a real number"),
        ({"time_limit": "30"}, TypeError, "time_limit must be a real number"),
        ({"memory_limit": 10}, ValueError, "memory_limit must be >= 256"),
        ({"memory_limit": 1024.0}, TypeError, "memory_limit must be an integer"),
        ({"env_kwargs": [("horizon", 5)]}, TypeError, "env_kwargs must be a dict"),
        ({"class_name": 5}, ValueError, "class_name"),
        ({"class_name": "My Agent"}, ValueError, "class_name"),
        ({"seed": -1}, ValueError, "seed must be >= 0"),
        ({"seed": 1.5}, TypeError, "seed must be an integer"),
        ({"out": 5}, TypeError, "out must be a path"),
    ],
)
def test_bad_arguments_name_the_parameter(arguments, error, match):
    options = {"path": GOOD, "env_id": LENDING, "n_seeds": 1, "out": None, **arguments}
    with pytest.raises(error, match=match):
        grade(**options)


def test_cli_grades_with_exit_0_and_diagnoses_with_exit_1(tmp_path, capsys):
    common = ["--env", LENDING, "--seeds", "1", "--env-kwargs", '{"horizon": 40}']
    assert main(["grade", str(GOOD), *common, "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "| BonusLending (yours)" in printed and "| Adaptive" in printed
    assert (tmp_path / "grade_good_agent_OneSidedLending-v0.png").exists()
    assert (
        main(["grade", str(write(tmp_path, "invalid_action")), *common, "--out", str(tmp_path)])
        == 1
    )
    captured = capsys.readouterr()
    assert captured.err.startswith("NOT GRADED: the agent returned an invalid action.")
    assert "Traceback" not in captured.err + captured.out


def test_cli_refuses_an_infinite_time_limit_instead_of_hanging(capsys):
    assert main(["grade", str(GOOD), "--env", LENDING, "--time-limit", "inf"]) == 2
    assert "time_limit must be a finite number" in capsys.readouterr().err


def test_summary_table_orders_best_first_for_scores():
    frame = pd.DataFrame({"agent": ["A", "A", "B", "B"], "f1": [0.2, 0.4, 0.9, 0.7]})
    table = summary_table(frame, "f1", higher_is_better=True)
    assert table.index("| B") < table.index("| A")


def test_the_students_template_runs_and_is_graded():
    template = (
        Path(__file__).resolve().parents[2] / "examples" / "assignments" / "template_agent.py"
    )
    report = grade(template, LENDING, n_seeds=1, env_kwargs=SMALL, out=None)
    # it approves everyone until the student fills it in
    mine = report.results[report.results["agent"] == "MyAgent (yours)"]
    assert (mine["approval_rate"] == 1.0).all()


@pytest.mark.parametrize(
    ("env_id", "env_kwargs", "objective", "references"),
    [
        (
            "AppleTasting-v0",
            {"horizon": 60},
            "cumulative_loss",
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
    assert report.suspicious == []


def test_cli_reports_a_bad_env_argument_as_a_usage_error(capsys):
    assert main(["grade", str(GOOD), "--env", LENDING, "--env-kwargs", '{"bogus": 1}']) == 2
    err = capsys.readouterr().err
    assert err.startswith("osfb-bench grade: error:") and "bogus" in err
    assert len(err.splitlines()) == 1


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its exit status waits to be read


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(fields[1]) == pid and b"sandbox.py" in command:
                found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_the_agents_process_dies_with_a_killed_grader(tmp_path):
    root = Path(__file__).resolve().parents[2]
    path = write(tmp_path, "infinite_loop")
    script = (
        f"from osfb_gym.grade import grade\n"
        f"grade({str(path)!r}, {LENDING!r}, n_seeds=1, env_kwargs={SMALL!r}, out=None,"
        " time_limit=300)\n"
    )
    grader = subprocess.Popen([sys.executable, "-c", script], cwd=root)
    try:
        deadline = time.monotonic() + 120
        workers: list[int] = []
        while not workers and time.monotonic() < deadline and grader.poll() is None:
            time.sleep(0.2)
            workers = _children(grader.pid)
        assert workers, "the grader never started the agent's process"
        time.sleep(1.0)  # into the episode: the agent is looping
        assert _alive(workers[0])
    finally:
        grader.kill()  # SIGKILL: the grader gets no chance to clean up
        grader.wait()
    deadline = time.monotonic() + 10
    while _alive(workers[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(workers[0])
