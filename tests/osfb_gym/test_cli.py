"""The osfb-bench command, run for real with tiny sizes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from osfb_gym.cli import main


@pytest.mark.slow
def test_quick_suite_writes_results_tables_and_plots(tmp_path, capsys):
    argv = "run quick --seeds 2 --horizon 20 --set total_timesteps=64 --no-progress".split()
    argv += ["--out", str(tmp_path)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    for family in ("lending", "apple", "reject", "services"):
        assert f"## {family}:" in printed
    for agent in ("Adaptive", "Greedy", "PPO", "MarginPerceptron", "DSAL", "AcQUIre"):
        assert f"| {agent} " in printed
    assert "alpha=" in printed  # the tuned OneSidedEpsilonGreedy reports its chosen alpha
    assert "cumulative_loss (mean ± s.e.)" in printed and "± std" not in printed
    results = pd.read_csv(tmp_path / "results.csv")
    # lending 2 settings x 2 agents + 2 x 4 alphas, apple 3, reject 3, services 4,
    # delayed impact 3
    assert len(results) == (4 + 8 + 3 + 3 + 4 + 3) * 2
    assert not results.duplicated(["key"]).any()
    horizon = results[results["env_id"] != "MultiServiceChoice-v0"]["steps"]
    assert set(horizon) == {20.0}
    # the fixed world: every agent scored after 0 and after 64 steps of its run's world
    experience = pd.read_csv(tmp_path / "experience.csv")
    assert len(experience) == 3 * 2 * 2  # agents x runs x checkpoints
    for _, block in experience.groupby("experience"):
        assert sorted(block["agent"]) == sorted(["Greedy", "Adaptive", "PPO"] * 2)
    assert set(experience["experience"]) == {0, 64}
    assert "| experience (env steps)" in printed.replace("|   experience", "| experience")
    assert (tmp_path / "report.md").read_text().startswith("# osfb-bench quick")
    for png in ("average_loss_lending", "average_loss_reject", "loss_vs_k_services"):
        assert (tmp_path / f"{png}.png").read_bytes()[:4] == b"\x89PNG"
    # a second run with --resume runs nothing and keeps every row
    assert main([*argv, "--resume"]) == 0
    assert "0 run now, 56 resumed" in capsys.readouterr().out
    assert pd.read_csv(tmp_path / "results.csv").equals(results)
    assert pd.read_csv(tmp_path / "experience.csv").equals(experience)


def test_quick_without_the_rl_extra_runs_the_rest_and_skips_ppo_in_one_line(tmp_path):
    from tests.osfb_gym.core.test_optional import run_without_extras

    printed = run_without_extras(
        f"""
        import contextlib, io
        from osfb_gym.cli import main

        stderr = io.StringIO()
        argv = ["run", "quick", "--seeds", "2", "--horizon", "10", "--set", "total_timesteps=30",
                "--no-progress", "--out", {str(tmp_path)!r}]
        with contextlib.redirect_stderr(stderr):
            code = main(argv)
        print("exit", code, repr(stderr.getvalue()))
        print(sorted(m for m in HIDDEN if m in sys.modules))
        """
    )
    lines = printed.splitlines()
    assert lines[-2:] == ["exit 0 ''", "[]"]
    assert "| PPO " not in printed
    skipped = [line for line in lines if "skipped" in line]
    assert skipped == [
        "The PPO row was skipped: PPO needs stable-baselines3: pip install 'osfb-gym[rl]' "
        "(in a clone: pip install -e '.[rl]')."
    ]
    experience = pd.read_csv(tmp_path / "experience.csv")
    assert set(experience["agent"]) == {"Greedy", "Adaptive"}
    assert set(experience["experience"]) == {0, 30}
    assert "## services:" in printed and "| lending fixed world (T=10)" in printed
    # 2 runs can never name a winner: the fixed world's verdicts say so
    assert printed.count("cannot tell the lowest:") == 2 and "clearly lowest" not in printed


def test_quick_gives_every_agent_of_the_fixed_world_the_same_experience_and_episodes():
    from osfb_gym.bench.suites.quick import Settings, fixed_world

    cells = fixed_world(Settings(total_timesteps=1_000, episodes=3), seeds=(0, 1, 2)).cells()
    assert sorted({cell.agent for cell in cells}) == ["Adaptive", "Greedy", "PPO"]
    for key in ("budgets", "episodes", "regime", "split"):
        assert len({repr(cell.params[key]) for cell in cells}) == 1, key
    assert {cell.params["budgets"][0] for cell in cells} == {1_000}
    assert {cell.seed for cell in cells} == {0, 1, 2}  # a run a seed, for every agent
    no_rl = fixed_world(Settings(), seeds=(0,), rl=False).cells()
    with pytest.raises(ValueError, match="total_timesteps"):
        Settings(total_timesteps=0)
    assert sorted(cell.agent for cell in no_rl) == ["Adaptive", "Greedy"]


def test_the_fixed_world_table_keeps_each_experience_apart_with_standard_errors():
    from osfb_gym.bench.suites.quick.analysis import experience_table

    frame = pd.DataFrame(
        {
            "setting": "w",
            "agent": ["Greedy", "PPO"] * 4,
            "seed": [0, 0, 1, 1] * 2,
            "experience": [0] * 4 + [100] * 4,
            "cumulative_loss": [1.0, 9.0, 3.0, 11.0, 0.5, 1.0, 0.5, 3.0],
            "approval_rate": 0.5,
        }
    )
    table = experience_table(frame).splitlines()
    assert "cumulative_loss (mean ± s.e.)" in table[0] and "runs" in table[0]
    rows = [[part.strip() for part in line.split("|")[1:-1]] for line in table[2:]]
    assert [row[1:3] for row in rows] == [
        ["0", "Greedy"],
        ["0", "PPO"],
        ["100", "Greedy"],
        ["100", "PPO"],
    ]
    assert [row[3] for row in rows] == ["2 ± 1", "10 ± 1", "0.5 ± 0", "2 ± 1"]


def test_list_names_suites_envs_and_agents(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    assert "quick" in printed and "OneSidedLending-v0" in printed and "Adaptive" in printed
    assert "RejectOption-v0          DRAL, DSAL, DSOL, PPO" in printed
    assert "reject-option -> shah-reject" in printed


def test_console_script_is_installed():
    done = subprocess.run(
        [sys.executable, "-m", "osfb_gym.cli", "list"], capture_output=True, text=True, check=True
    )
    assert "OneSidedLending-v0" in done.stdout


def test_train_saves_a_model_and_scores_it_on_held_out_episodes(tmp_path, capsys):
    argv = [
        "train",
        "RejectOption-v0",
        "--algo",
        "A2C",
        "--total-timesteps",
        "40",
        "--env-kwargs",
        '{"horizon": 20}',
        "--world-seed",
        "1",
        "--algo-kwargs",
        '{"n_steps": 8}',
        "--save",
        str(tmp_path),
        "--eval-seeds",
        "2",
        "--no-progress",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert (tmp_path / "A2C_RejectOption-v0_seed0.zip").is_file()
    assert "scored on 2 held-out episodes" in printed and "average_risk" in printed


@pytest.mark.parametrize(
    ("env_id", "algo"),
    [("AppleTasting-RL-Feedback-v0", "RecurrentPPO"), ("RejectOption-RL-Discrete-v0", "PPO")],
)
def test_train_on_an_rl_id_scores_it_through_its_view(env_id, algo, tmp_path, capsys):
    # an RL-ready id hides the oracle the scores read: training ended in an error after the
    # model was saved, on every RL-ready id with the default --eval-seeds
    argv = ["train", env_id, "--algo", algo, "--total-timesteps", "16", "--n-envs", "2"]
    argv += ["--env-kwargs", '{"horizon": 8}', "--algo-kwargs", '{"n_steps": 8, "batch_size": 8}']
    argv += ["--save", str(tmp_path), "--eval-seeds", "2", "--no-progress"]
    assert main(argv) == 0
    assert "scored on 2 held-out episodes" in capsys.readouterr().out


def test_tensorboard_without_its_package_is_explained(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("tensorboard") is not None:
        pytest.skip("tensorboard is installed here: the message is for machines without it")
    assert main(["train", "AppleTasting-v0", "--tensorboard", str(tmp_path), "--no-progress"]) == 2
    assert "osfb-gym[tensorboard]" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("alias", "suite"),
    [
        ("reject-option", "shah-reject"),
        ("acquire", "bose-services"),
        ("dean-services", "bose-services"),
        ("sculley-minority", "sculley-reuters"),
    ],
)
def test_the_old_and_the_issues_suite_names_run_the_paper_suites(alias, suite, monkeypatch):
    from osfb_gym.bench import driver

    seen = []
    monkeypatch.setattr(driver, "run", lambda entry, out, options: seen.append(entry.name) or "")
    assert main(["run", alias, "--no-progress"]) == 0
    assert seen == [suite]


def test_version_is_the_packages(capsys):
    import osfb_gym

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"osfb-bench {osfb_gym.__version__}"


def test_help_imports_nothing_heavy_and_shows_defaults():
    code = (
        "import sys\nfrom osfb_gym.cli import build_parser\n"
        "text = build_parser()._subparsers._group_actions[0].choices['run'].format_help()\n"
        "print(text)\nprint(sorted(m for m in ('pandas', 'sklearn', 'torch', 'agents') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("[]")  # none of them imported
    assert "(default: local)" in done.stdout and "(default: 1)" in done.stdout
    assert "bose-services" in "".join(done.stdout.split())  # argparse may wrap at a hyphen


USER_ERRORS = [
    (["run", "nope"], "unknown suite 'nope'"),
    (["run", "quick", "--seeds", "0"], "argument --seeds: expected a positive integer, got '0'"),
    (["run", "quick", "--horizon", "x"], "argument --horizon"),
    (["run", "shah-reject", "--workers", "0"], "argument --workers"),
    (["run", "quick", "--data-home", "/nonexistent"], "--data-home: /nonexistent: not found"),
    (["run", "quick", "--out", __file__], "--out"),
    (["run", "quick", "--data-home", str(Path(__file__).parent)], "--data-home does not apply"),
    (["run", "liu", "--seeds", "2"], "--seeds does not apply to liu-outcome-curves"),
    (["run", "quick", "--set", "nope=1"], "--set nope: suite quick has no such setting"),
    (["run", "quick", "--set", "total_timesteps=x"], "--set total_timesteps= expects"),
    (["run", "jiang-linear", "--set", "datasets=nosuch", "--no-progress"], "nosuch"),
    (["run", "jiang-linear", "--set", "alphas=1", "--no-progress"], "alphas= must read LOW:HIGH"),
    (["run", "quick", "--executor", "dask"], "argument --executor"),
    (["table", "jiang-linear", "/nonexistent.csv", "--out", "x"], "/nonexistent.csv"),
    (["sweep", "/nonexistent.toml"], "/nonexistent.toml: no such file; give a file"),
    (["sweep", str(Path(__file__).parent)], f"{Path(__file__).parent}: a folder; give a file"),
    (["train", "RejectOption-v0", "--env-kwargs", "[1]"], "--env-kwargs: expected a JSON object"),
    (
        ["train", "RejectOption-v0", "--algo-kwargs", '{"n_steps": 1}', "--no-progress"],
        "algo_kwargs: PPO refuses {'n_steps': 1}: `n_steps * n_envs` must be greater than 1",
    ),
    (
        ["train", "DelayedImpactLending-RL-v0", "--world-seed", "0"],
        "--world-seed: DelayedImpactLending-v0 takes no argument 'world_seed'; its arguments: ",
    ),
    (
        ["train", "MultiServiceChoice-v0", "--env-kwargs", '{"horizon": 3}'],
        "--env-kwargs: MultiServiceChoice-v0 takes no argument 'horizon'; its arguments: n_users",
    ),
    (["grade", "x.py", "--env", "AppleTasting-v0", "--env-kwargs", "{"], "--env-kwargs: expected"),
    (["train", "RejectOption-v0", "--env-kwargs", '{"d": 0.9}'], "d must be"),
    (["train", "NoSuchEnv-v0"], "NoSuchEnv"),
]


@pytest.mark.parametrize(("argv", "message"), USER_ERRORS)
def test_a_user_error_is_one_line_naming_the_flag_or_file_and_exit_code_2(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as exit_info:  # argparse's own errors
        code = exit_info.code
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


def test_a_spec_with_values_of_the_wrong_type_is_a_user_error(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text('[[envs]]\nid = "OneSidedLending-v0"\nkwargs = 5\n[[agents]]\nname = "Greedy"')
    assert main(["sweep", str(spec)]) == 2
    assert "envs[0].kwargs must be a table, got 5" in capsys.readouterr().err


def test_a_bug_shows_its_traceback_and_asks_for_a_report(monkeypatch, capsys):
    from osfb_gym.bench.suites import quick

    # a KeyError with no frame outside osfb-gym (a C method): osfb-gym's own bug
    monkeypatch.setattr(quick, "stages", {}.__getitem__)
    assert main(["run", "quick"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "KeyError: Settings(" in err and "please report it" in err


CRASHING_AGENT = """from agents.base import Agent
class Crash(Agent):
    env_ids = ('OneSidedLending-v0',)
    def act(self, observation):
        raise {error}('boom')
"""


def _add_crashing_agent(tmp_path, monkeypatch, error, *executor):
    # the agent's module sits in the current folder, as a user's would: no PYTHONPATH
    (tmp_path / "crashing.py").write_text(CRASHING_AGENT.format(error=error))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "crashing", raising=False)
    argv = ["leaderboard", "add", "crashing:Crash", "--budget", "10", "--seeds", "1"]
    argv += ["--horizon", "5", "--store", str(tmp_path / "store"), "--out", str(tmp_path / "b.csv")]
    argv += ["--set", "families=lending", "--set", "regimes=fixed", "--no-progress", *executor]
    return main(argv)


def test_an_error_in_a_users_agent_is_theirs_not_a_bug(tmp_path, monkeypatch, capsys):
    # a user's agent that raises (leaderboard add, extra_agents) was "a bug in osfb-bench"
    assert _add_crashing_agent(tmp_path, monkeypatch, "RuntimeError") == 1
    assert str(tmp_path) not in sys.path  # the folder is taken away after the command
    err = capsys.readouterr().err
    assert "RuntimeError: boom" in err
    assert f"raised in your code ({(tmp_path / 'crashing.py').resolve()}:5)" in err
    assert "please report it" not in err


@pytest.mark.slow
@pytest.mark.parametrize("error", ["RuntimeError", "ValueError"])
def test_an_error_in_a_users_agent_on_ray_reads_as_in_a_local_worker(
    error, tmp_path, monkeypatch, capsys
):
    # Ray wrapped it: a RuntimeError read as "a bug in osfb-bench", a ValueError's one line
    # was Ray's colored "ray::run_task() (pid=..., ip=...)"
    pytest.importorskip("ray")
    code = _add_crashing_agent(tmp_path, monkeypatch, error, "--executor", "ray", "--workers", "1")
    err = capsys.readouterr().err
    if error == "RuntimeError":
        assert code == 1 and "RuntimeError: boom" in err and "please report it" not in err
        assert f"raised in your code ({(tmp_path / 'crashing.py').resolve()}:5)" in err
    else:
        # (the last line: Ray's own logger may complain above it of an earlier test's stderr)
        last = err.strip().splitlines()[-1]
        assert code == 2 and "ray::" not in err
        assert last == (
            "osfb-bench leaderboard: error: crashing:Crash on OneSidedLending-v0 (setting "
            "lending, seed 0): boom"
        )


def test_the_train_command_offers_every_algorithm_and_vector_env_of_the_bench():
    from osfb_gym.bench.rl import ALGORITHMS, VEC_ENVS
    from osfb_gym.cli import ALGORITHMS as OFFERED
    from osfb_gym.cli import VEC_ENVS as VECS

    assert OFFERED == ALGORITHMS
    assert VECS == VEC_ENVS


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        (int, "1e4", 10_000),
        (tuple[int, ...], "20, 40", (20, 40)),
        (tuple[str, ...], "a,,b ", ("a", "b")),
        ("positive", "1,2.5", (1.0, 2.5)),
        ("powers", "-1:1", (0.5, 1.0, 2.0)),
        (bool, "TRUE", True),
        (int, "0", None),
        (int, "2.5", None),
        ("positive", "0,1", None),
        (bool, "yes", None),
        ("powers", "2:1", None),
    ],
)
def test_every_kind_of_setting_reads_its_text_or_refuses_it(kind, text, value):
    from osfb_gym.bench.driver import POSITIVE, POWERS_OF_TWO, READERS

    parse = {"positive": POSITIVE["read"], "powers": POWERS_OF_TWO["read"]}.get(kind)
    parse = parse or READERS[kind][0]
    if value is None:
        with pytest.raises(ValueError):
            parse(text)
    else:
        assert parse(text) == value


@pytest.mark.parametrize(
    "name", ["quick", "jiang-linear", "sculley-reuters", "shah-reject", "rl-vs-principled"]
)
def test_run_suite_help_lists_its_settings_with_types_defaults_and_the_measured_cost(name, capsys):
    from osfb_gym.bench.driver import settings_of
    from osfb_gym.bench.suites import SUITES

    with pytest.raises(SystemExit) as exit_info:
        main(["run", name, "--help"])
    assert exit_info.value.code == 0
    printed = capsys.readouterr().out
    assert "usage: osfb-bench run" in printed  # the flags first, then the suite's part
    settings = settings_of(SUITES[name])
    assert settings
    assert f"{name}: {SUITES[name].summary}" in printed
    for setting in settings.values():
        assert f"  {setting.key}" in printed and f"{setting.type} = {setting.text()}" in printed
    cost = [line for line in printed.splitlines() if line.startswith("cost of the default run:")]
    assert len(cost) == 1 and "docs/" in cost[0]  # a measured number, with where it is written


def test_the_settings_are_the_fields_of_each_suites_settings_dataclass():
    import dataclasses

    from osfb_gym.bench.driver import FLAGS, flags_of, settings_of
    from osfb_gym.bench.suites import SUITES
    from osfb_gym.bench.suites.quick import Settings
    from osfb_gym.bench.suites.rl_vs_principled import Protocol

    protocol = [f.name for f in dataclasses.fields(Protocol) if f.name not in FLAGS]
    assert list(settings_of(SUITES["rl-vs-principled"])) == protocol
    quick = settings_of(SUITES["quick"])
    defaults = {k: v for k, v in dataclasses.asdict(Settings()).items() if k not in FLAGS}
    assert {key: s.default for key, s in quick.items()} == defaults
    assert flags_of(SUITES["quick"]) == {"seeds": 10, "horizon": None}
    assert flags_of(SUITES["liu-outcome-curves"]) == {"data_home": None}
    assert quick["total_timesteps"].type == "int" and quick["total_timesteps"].text() == "10000"
    assert settings_of(SUITES["jiang-logistic"])["alphas"].text() == "-10:3"
    assert settings_of(SUITES["bose-services"]) == {}
    assert all("docs/" in suite.cost for suite in SUITES.values())  # each cost says its source


def test_every_default_shown_in_a_suites_help_reads_back_as_that_default():
    from osfb_gym.bench.driver import settings_of
    from osfb_gym.bench.suites import SUITES

    for suite in SUITES.values():
        for setting in settings_of(suite).values():
            read = setting.parse(setting.text())
            expected = setting.default
            if isinstance(expected, tuple) and not all(isinstance(x, str) for x in expected):
                assert read == pytest.approx(expected), (suite.name, setting.key)
            else:
                assert read == expected, (suite.name, setting.key)


def test_help_of_an_unknown_suite_is_the_one_line_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "nope", "--help"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "unknown suite 'nope'" in err
    assert len(err.strip().splitlines()) == 1


def test_chunk_size_reaches_the_engine_and_is_checked(tmp_path, monkeypatch, capsys):
    """``--chunk-size``: cells per task (rows are stored per task), a positive integer."""
    from osfb_gym.bench import executors

    seen: list[int | None] = []
    chunked = executors.chunked

    def spy(cells, workers, chunk_size=None, key=None):  # type: ignore[no-untyped-def]
        seen.append(chunk_size)
        return chunked(cells, workers, chunk_size, key)

    monkeypatch.setattr(executors, "chunked", spy)
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        'name = "tiny"\nseeds = 2\n[[envs]]\nid = "AppleTasting-v0"\nkwargs = { horizon = 5 }\n'
        '[[agents]]\nname = "Perceptron"\n'
    )
    argv = ["sweep", str(spec), "--out", str(tmp_path / "out"), "--no-progress"]
    assert main([*argv, "--chunk-size", "1"]) == 0
    assert seen == [1]
    assert len(list((tmp_path / "out" / "cells").iterdir())) == 2
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main([*argv, "--chunk-size", "0"])
    assert "--chunk-size: expected a positive integer, got '0'" in capsys.readouterr().err


def test_osfb_debug_shows_where_a_user_error_was_raised(monkeypatch, capsys):
    """An internal ValueError reads as the user's; OSFB_DEBUG=1 shows the frame that raised it."""
    monkeypatch.setenv("OSFB_DEBUG", "1")
    assert main(["train", "RejectOption-v0", "--env-kwargs", '{"d": 0.9}']) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].endswith("d must be < 0.5, got 0.9")
