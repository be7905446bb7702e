"""Sweep specs, the result store, the executors and resuming after a real kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from osfb_gym.bench import ResultStore, load_spec, run_sweep
from osfb_gym.bench.executors import execute
from osfb_gym.bench.sweep import agent_classes, agents_for
from osfb_gym.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "sweeps" / "lending_alpha.toml"
IDENTITY = ["key", "setting", "agent", "params", "seed"]

SPEC = """
name = "tiny"
seeds = 3

[[envs]]
id = "OneSidedLending-v0"
label = "lending"
kwargs = { horizon = 60 }
grid = { cutoff_quantile = [0.5, 0.8] }

[[envs]]
id = "AppleTasting-v0"
kwargs = { horizon = 60 }

[[agents]]
name = "OneSidedEpsilonGreedy"
grid = { alpha = [0.5, 2.0] }

[[agents]]
name = "Greedy"
params = { l2 = 2.0 }

[[agents]]
name = "LabelEfficient"
params = { base = "MarginPerceptron", beta = 0.5 }
"""


def tiny(tmp_path: Path, text: str = SPEC) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


def metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows without the wall-clock column, in key order (columns sorted by name).

    The order of the rows, so of the columns a DataFrame builds from them,
    follows the order in which chunks finish, which is not part of the result.
    """
    frame = frame.drop(columns="seconds")
    return frame[sorted(frame.columns)].sort_values("key").reset_index(drop=True)


def test_a_toml_spec_expands_into_settings_agents_grids_and_seeds(tmp_path):
    spec = load_spec(tiny(tmp_path))
    labels = [env.label for env in spec.envs]
    assert labels == [
        "lending cutoff_quantile=0.5",
        "lending cutoff_quantile=0.8",
        "AppleTasting-v0",
    ]
    cells = spec.cells()
    # lending: 2 settings x (2 alphas + Greedy) x 3 seeds; apple: LabelEfficient x 3 seeds
    assert len(cells) == 2 * 3 * 3 + 3
    assert len({cell.key for cell in cells}) == len(cells)
    assert {cell.params["alpha"] for cell in cells if cell.agent == "OneSidedEpsilonGreedy"} == {
        0.5,
        2.0,
    }
    assert all(cell.params == {"l2": 2.0} for cell in cells if cell.agent == "Greedy")


def test_the_example_spec_is_valid():
    spec = load_spec(EXAMPLE)
    assert spec.cells()


GOOD = '[[envs]]\nid = "OneSidedLending-v0"\n[[agents]]\nname = "Greedy"'
BAD = [
    (
        '[[envs]]\nid = "Lending-v9"\n[[agents]]\nname = "Greedy"',
        "Lending-v9",
        "OneSidedLending-v0",
    ),
    (
        '[[envs]]\nid = "OneSidedLending-v0"\nkwargs = { horizn = 3 }\n[[agents]]\nname = "Greedy"',
        "horizn",
        "horizon",
    ),
    (
        '[[envs]]\nid = "OneSidedLending-v0"\nkwargs = { dataset = "adlt" }\n[[agents]]\n'
        'name = "Greedy"',
        "adlt",
        "adult",
    ),
    ('[[envs]]\nid = "OneSidedLending-v0"\n[[agents]]\nname = "Greedie"', "Greedie", "Adaptive"),
    (
        '[[envs]]\nid = "OneSidedLending-v0"\n[[agents]]\nname = "Greedy"\ngrid = { alpha = [1] }',
        "alpha",
        "l2",
    ),
    (
        '[[envs]]\nid = "OneSidedLending-v0"\nlabel = "L"\n[[agents]]\nname = "DSAL"\nenvs = ["L"]',
        "DSAL",
        "Adaptive",
    ),
    ('[[envs]]\nid = "OneSidedLending-v0"\n[[agents]]\nname = "DSAL"', "no agent", "Adaptive"),
    (
        '[[envs]]\nid = "OneSidedLending-v0"\n[[agents]]\nname = "PPO"\nparams = { steps = 1 }',
        "steps",
        "total_timesteps",
    ),
    ('seed = 3\n[[envs]]\nid = "OneSidedLending-v0"', "seed", "seeds"),
    ('seeds = [-1]\n[[envs]]\nid = "OneSidedLending-v0"', "seeds", "non-negative"),
    (
        '[[envs]]\nid = "RejectOption-v0"\nkwargs = { d = 0.9 }\n[[agents]]\nname = "DSAL"',
        "d must be",
        "RejectOption-v0",
    ),
    # each seed, agent, grid value and setting once: a repeat would repeat (or hide) cells
    ("seeds = [0, 0, 1]\n" + GOOD, "seeds lists 0", "more than once"),
    (GOOD + '\n[[agents]]\nname = "Greedy"', "Greedy", "more than once"),
    (
        GOOD + '\n[[agents]]\nname = "Adaptive"\ngrid = { rho = [0.5, 0.5] }',
        "rho' lists 0.5",
        "more than once",
    ),
    (
        '[[envs]]\nid = "OneSidedLending-v0"\nlabel = "a"\n[[envs]]\nid = "OneSidedLending-v0"\n'
        'label = "b"\n[[agents]]\nname = "Greedy"',
        "'a' and 'b'",
        "same env",
    ),
    (
        '[[envs]]\nid = "OneSidedLending-v0"\nkwargs = { max_episode_steps = 50 }\n'
        '[[agents]]\nname = "Greedy"',
        "max_episode_steps is gym.make's argument",
        "an episode's length is the env's horizon",
    ),
    ('name = "../../x"\n' + GOOD, "../../x", "plain name"),
    ('name = ""\n' + GOOD, "''", "plain name"),
    ('name = ".."\n' + GOOD, "'..'", "plain name"),
]
BAD_TYPES = [
    (
        '[[envs]]\nid = "OneSidedLending-v0"\nkwargs = 5\n[[agents]]\nname = "Greedy"',
        "envs[0].kwargs must be a table, got 5",
    ),
    ('agents = [1, 2]\n[[envs]]\nid = "OneSidedLending-v0"', "agents[0] must be a table, got 1"),
    (GOOD + '\nparams = { l2 = "1.0" }', "'l2' parameter of Greedy must be a float"),
    ('envs = 3\n[[agents]]\nname = "Greedy"', "envs must be a list of tables"),
]


@pytest.mark.parametrize(("text", "message"), BAD_TYPES)
def test_values_of_the_wrong_type_are_named(tmp_path, text, message):
    with pytest.raises(TypeError) as error:
        load_spec(tiny(tmp_path, text))
    assert message in str(error.value)


@pytest.mark.parametrize(("text", "bad", "valid"), BAD)
def test_bad_specs_name_the_value_and_the_choices(tmp_path, text, bad, valid):
    with pytest.raises(ValueError) as error:
        load_spec(tiny(tmp_path, text))
    assert bad in str(error.value) and valid in str(error.value)


def test_a_bad_spec_fails_before_any_work(tmp_path, capsys):
    assert main(["sweep", str(tiny(tmp_path, BAD[3][0])), "--out", str(tmp_path / "out")]) == 2
    assert "Greedie" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_agents_for_lists_the_agents_declared_for_an_env():
    assert agents_for("RejectOption-v0")[:3] == ["DRAL", "DSAL", "DSOL"]
    assert "Greedy" not in agents_for("AppleTasting-v0")


def test_the_store_writes_atomically_and_reads_in_the_order_asked(tmp_path):
    store = ResultStore(tmp_path)
    (store.cells / ".stale.123.tmp").write_text("{half a row")
    store = ResultStore(tmp_path)  # reopening clears what a crash left half-written
    assert not list(store.cells.glob(".*"))
    for key in ("b", "a"):
        store.write({"key": key, "value": key.upper()})
    store.write({"key": "a", "value": "again"})  # same cell: replaced, never duplicated
    assert store.done() == {"a", "b"}
    assert store.read(["b", "a", "zzz"])["value"].tolist() == ["B", "again"]


def test_a_corrupt_or_mismatched_cell_file_is_named_and_computed_again(tmp_path):
    from osfb_gym.bench.store import CorruptCellWarning

    store = ResultStore(tmp_path)
    for key in ("a", "b", "c"):
        store.write({"key": key, "value": key})
    store.path("a").write_text('{"key": "a", "val')  # truncated
    store.path("b").write_text(store.path("c").read_text())  # another cell's row
    with pytest.warns(CorruptCellWarning) as caught:
        assert store.done() == {"c"}
    messages = " ".join(str(warning.message) for warning in caught)
    assert str(store.path("a")) in messages and str(store.path("b")) in messages
    with pytest.warns(CorruptCellWarning, match="not a whole JSON row"):
        assert store.rows(["a", "c"]) == [{"key": "c", "value": "c"}]


def _rewrite_row(path, edit):
    """Edit the row inside a cell file as a text editor would, leaving its checksum."""
    content = json.loads(path.read_text())
    edit(content["row"])
    path.write_text(json.dumps(content))


def test_an_edited_or_incomplete_cell_file_is_named_and_computed_again(tmp_path):
    from osfb_gym.bench.store import CorruptCellWarning

    store = ResultStore(tmp_path)
    for key in ("a", "b", "c", "d"):
        store.write({"key": key, "cumulative_loss": 1.25, "seed": 0})
    _rewrite_row(store.path("a"), lambda row: row.update(cumulative_loss=-999))
    _rewrite_row(store.path("b"), lambda row: row.pop("cumulative_loss"))
    _rewrite_row(store.path("c"), lambda row: row.update(extra=1))
    with pytest.warns(CorruptCellWarning) as caught:
        assert store.done() == {"d"}
    messages = [str(warning.message) for warning in caught]
    assert len(messages) == 3
    for key in "abc":
        assert any(str(store.path(key)) in m and "checksum" in m for m in messages), key
    with pytest.warns(CorruptCellWarning, match="does not match its checksum"):
        assert store.rows() == [{"key": "d", "cumulative_loss": 1.25, "seed": 0}]


def test_a_cell_file_without_a_checksum_is_named_and_computed_again(tmp_path):
    from osfb_gym.bench.store import CorruptCellWarning

    store = ResultStore(tmp_path)
    # osfb-gym 0.1.0's layout: the bare row; nothing tells an edit from the original
    store.path("old").write_text(json.dumps({"key": "old", "cumulative_loss": 1.0}))
    store.path("x").write_text(json.dumps({"format": 2, "row": {"key": "x"}}))
    store.path("y").write_text("[1, 2]")
    with pytest.warns(CorruptCellWarning) as caught:
        assert store.done() == set()
    messages = " ".join(str(warning.message) for warning in caught)
    assert f"{store.path('old')} has no checksum" in messages
    assert f"{store.path('x')} is not a cell file" in messages
    assert f"{store.path('y')} holds a JSON list" in messages


def test_rows_read_back_with_the_checksum_they_were_written_with(tmp_path):
    import numpy as np

    store = ResultStore(tmp_path)
    row = {
        "key": "k",
        "values": (np.float64(0.1), np.float32(1 / 3), -0.0, float("nan"), float("inf")),
        "n": np.int64(2**62),
        "nested": {"z": [1, 2], "a": None, "é": "ü"},
    }
    store.write(row)
    (back,) = store.rows()  # no warning: the checksum of what was read matches
    assert back["n"] == 2**62 and back["values"][:3] == [0.1, float(np.float32(1 / 3)), -0.0]
    assert np.isnan(back["values"][3]) and back["nested"]["é"] == "ü"


def test_resume_recomputes_an_edited_cell_and_its_true_value_reaches_the_results(tmp_path):
    from osfb_gym.bench.run import run_cells
    from osfb_gym.bench.store import CorruptCellWarning
    from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec

    spec = SweepSpec(
        "edited",
        (EnvSpec("AppleTasting-v0", "apple", {"horizon": 20}),),
        (AgentSpec("Perceptron"),),
        seeds=(0, 1),
    )
    rows, _ = run_cells(spec, tmp_path, progress=False)
    key = rows["key"][0]
    store = ResultStore(tmp_path)
    _rewrite_row(store.path(key), lambda row: row.update(cumulative_loss=-999))
    other = rows["key"][1]
    _rewrite_row(store.path(other), lambda row: row.pop("cumulative_loss"))
    with pytest.warns(CorruptCellWarning) as caught:
        again, ran = run_cells(spec, tmp_path, progress=False, resume=True)
    messages = " ".join(str(warning.message) for warning in caught)
    assert str(store.path(key)) in messages and str(store.path(other)) in messages
    assert ran == 2 and -999 not in again["cumulative_loss"].tolist()
    assert again["cumulative_loss"].tolist() == rows["cumulative_loss"].tolist()


def test_a_sweep_writes_tuned_tables_plots_and_one_file_per_cell(tmp_path):
    result = run_sweep(load_spec(tiny(tmp_path)), tmp_path / "out", progress=False)
    assert len(result.results) == 21 and len(list((tmp_path / "out/cells").glob("*.json"))) == 21
    assert "## lending: cumulative_loss" in result.table and "## apple:" in result.table
    assert "alpha=" in result.table  # the chosen alpha is reported
    best = result.results.groupby(["setting", "agent", "params"])["cumulative_loss"].mean()
    for setting in ("lending cutoff_quantile=0.5", "lending cutoff_quantile=0.8"):
        chosen = best[setting]["OneSidedEpsilonGreedy"].idxmin()
        assert f"alpha={json.loads(chosen)['alpha']}" in result.table
    assert (tmp_path / "out/average_loss_lending.png").read_bytes()[:4] == b"\x89PNG"
    assert "21 cells (21 run now, 0 resumed" in result.text


def test_local_processes_give_the_same_rows_as_one_process(tmp_path):
    spec = load_spec(tiny(tmp_path))
    alone, pooled = [], []
    execute(spec.cells(), alone.extend)
    execute(spec.cells(), pooled.extend, workers=2, chunk_size=4)
    assert metrics(pd.DataFrame(alone)).equals(metrics(pd.DataFrame(pooled)))


@pytest.mark.slow
def test_ray_gives_the_same_rows_as_local_processes(tmp_path):
    pytest.importorskip("ray")
    spec = load_spec(tiny(tmp_path))
    local, remote = [], []
    execute(spec.cells(), local.extend)
    execute(spec.cells(), remote.extend, executor="ray", workers=2, chunk_size=4)
    assert metrics(pd.DataFrame(local)).equals(metrics(pd.DataFrame(remote)))


KILL_SPEC = """
name = "kill"
seeds = 20

[[envs]]
id = "OneSidedLending-v0"
kwargs = { horizon = 400 }

[[agents]]
name = "OneSidedEpsilonGreedy"
grid = { alpha = [0.25, 0.5, 1.0, 2.0] }
"""


def _children(pid: int) -> set[int]:
    """The live child processes of ``pid`` (Linux /proc)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="finds the pool's workers through /proc")
def test_resume_after_kill_9_loses_and_duplicates_no_cell_and_leaves_no_worker(tmp_path):
    spec_path = tiny(tmp_path, KILL_SPEC)
    out = tmp_path / "killed"
    command = [
        sys.executable,
        "-m",
        "osfb_gym.cli",
        "sweep",
        str(spec_path),
        "--out",
        str(out),
        "--no-progress",
        "--workers",
        "2",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, cwd=ROOT)
    cells = out / "cells"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(cells.glob("*.json"))) < 20:
        time.sleep(0.02)
    assert process.poll() is None, "the sweep finished before it could be killed"
    workers = _children(process.pid)
    assert len(workers) >= 2  # the pool (and its resource tracker)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(map(_alive, workers)):
        time.sleep(0.05)
    survivors = [pid for pid in workers if _alive(pid)]
    for pid in survivors:  # leave no stray process behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not survivors, "pool workers outlived their parent"
    before = {path.name: path.read_bytes() for path in cells.glob("*.json")}
    assert 20 <= len(before) < 80
    subprocess.run([*command, "--resume"], env=env, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    after = {path.name: path.read_bytes() for path in cells.glob("*.json")}
    assert len(after) == 80 and all(after[name] == data for name, data in before.items())
    resumed = pd.read_csv(out / "results.csv")
    assert not resumed.duplicated(IDENTITY).any()
    fresh = run_sweep(load_spec(spec_path), tmp_path / "fresh", progress=False).results
    assert metrics(resumed).equals(metrics(pd.read_csv(tmp_path / "fresh" / "results.csv")))
    assert len(fresh) == 80


@pytest.mark.slow
def test_quick_on_ray_with_its_ppo_gives_the_rows_of_one_process(tmp_path):
    pytest.importorskip("ray")
    common = "run quick --seeds 2 --horizon 20 --set total_timesteps=64 --no-progress".split()
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    assert (
        main([*common, "--out", str(tmp_path / "ray"), "--executor", "ray", "--workers", "2"]) == 0
    )
    local, remote = (pd.read_csv(tmp_path / name / "results.csv") for name in ("local", "ray"))
    assert metrics(local).equals(metrics(remote))
    # the fixed world's runs, PPO's training among them, give the same scores on Ray
    local, remote = (pd.read_csv(tmp_path / name / "experience.csv") for name in ("local", "ray"))
    assert "PPO" in set(local["agent"])
    by = ["agent", "seed", "experience"]
    assert local.sort_values(by, ignore_index=True).equals(
        remote.sort_values(by, ignore_index=True)
    )


def test_the_readme_spec_is_valid(tmp_path):
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [
        block
        for page in pages
        for block in re.findall(r"```toml\n(.*?)```", page.read_text(), re.S)
    ]
    assert blocks
    for block in blocks:
        spec = load_spec(tiny(tmp_path, block))
        assert {"OneSidedEpsilonGreedy", "PPO"} <= {agent.name for agent in spec.agents}


def test_the_cli_can_override_the_specs_seeds(tmp_path, capsys):
    out = tmp_path / "out"
    assert (
        main(["sweep", str(tiny(tmp_path)), "--seeds", "1", "--out", str(out), "--no-progress"])
        == 0
    )
    results = pd.read_csv(out / "results.csv")
    assert set(results["seed"]) == {0} and len(results) == 7  # 21 cells over 3 seeds, now 1


@pytest.mark.crossimpl
def test_lending_grids_run_as_replicas_with_the_rows_of_one_episode_each(tmp_path):
    from osfb_gym.bench.executors import replica_groups, run_cell, run_task

    cells = load_spec(tiny(tmp_path)).cells()
    ordered = sorted(cells, key=lambda cell: (cell.setting, cell.seed))
    groups = replica_groups(ordered)
    # per lending setting and seed: OneSidedEpsilonGreedy at 2 alphas and Greedy together
    assert sorted(len(group) for group in groups) == [1] * 3 + [3] * 6
    together = pd.DataFrame(run_task((ordered, {})))
    alone = pd.DataFrame([run_cell(cell) for cell in ordered])
    # replicas are another implementation of each agent: the rows agree within the
    # episodes' bound (tests.helpers.EPISODE_RTOL says why), not bit for bit
    from tests.helpers import EPISODE_RTOL, assert_close

    got, want = metrics(together), metrics(alone)
    assert list(got.columns) == list(want.columns)
    for mine, theirs in zip(got.to_dict("records"), want.to_dict("records"), strict=True):
        assert_close(mine, theirs, ulps=0, rtol=EPISODE_RTOL, path=str(theirs["key"]))


def test_two_agent_classes_with_one_name_are_an_error_not_a_shadow(monkeypatch):
    import agents.base
    from agents.apple import Perceptron
    from agents.lending import Greedy

    twin = type("Greedy", (Perceptron,), {"__module__": "agents.apple.twin"})
    monkeypatch.setattr(agents.base, "all_agents", lambda: [Greedy, twin])
    discover = agent_classes.__wrapped__  # the cached result stays the real one
    with pytest.raises(RuntimeError, match="two agent classes are named 'Greedy'"):
        discover()


def test_a_custom_cell_runs_through_the_engine_and_is_stored(tmp_path):
    from osfb_gym.bench.run import run_cells
    from osfb_gym.bench.sweep import AgentSpec, Cell, EnvSpec, SweepSpec

    runner = "osfb_gym.bench.suites.experience:constant_cell"
    params = {"regime": "fixed", "split": "test", "budgets": [10], "episodes": 2}
    spec = SweepSpec(
        "custom",
        (EnvSpec("OneSidedLending-v0", "lending", {"horizon": 5}),),
        (AgentSpec("constant", params, envs=("lending",), runner=runner),),
        seeds=(0, 1),
    )
    rows, ran = run_cells(spec, tmp_path, progress=False)
    assert ran == 2 and list(rows["seed"]) == [0, 1] and set(rows["agent"]) == {"constant"}
    assert [len(c) for c in rows["constants"]] == [2, 2]  # deny all, approve all
    again, ran = run_cells(spec, tmp_path, progress=False, resume=True)
    assert ran == 0 and again["constants"].tolist() == rows["constants"].tolist()
    # the runner is part of what a cell computes, so of its key; plain cells keep theirs
    plain = Cell("lending", "OneSidedLending-v0", {"horizon": 5}, "constant", params, 0)
    assert plain.key != spec.cells()[0].key
    from osfb_gym.bench.store import stable_key

    assert plain.key == stable_key("OneSidedLending-v0", {"horizon": 5}, "constant", params, 0)


def test_custom_cells_are_checked_before_any_work():
    from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec, validate

    env = (EnvSpec("OneSidedLending-v0", "lending", {"horizon": 5}),)
    nowhere = AgentSpec("c", envs=("lending",), runner="nowhere:nothing")
    with pytest.raises(ValueError, match="runner 'nowhere:nothing'"):
        validate(SweepSpec("x", env, (nowhere,)))
    unplaced = AgentSpec("c", runner="osfb_gym.bench.suites.experience:rl_cell")
    with pytest.raises(ValueError, match="must name its settings"):
        validate(SweepSpec("x", env, (unplaced,)))


def test_tags_name_the_rows_without_changing_what_is_stored(tmp_path):
    from osfb_gym.bench.run import run_cells
    from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec

    def spec(env_tags: dict, agent_tags: dict) -> SweepSpec:
        env = EnvSpec("AppleTasting-v0", "apple", {"horizon": 5}, env_tags)
        return SweepSpec("t", (env,), (AgentSpec("Perceptron", tags=agent_tags),), seeds=(0, 1))

    plain, _ = run_cells(spec({}, {}), tmp_path / "plain", progress=False)
    tagged = spec({"world": "w1"}, {"learner": "p", "world": "w2"})
    assert [c.key for c in tagged.cells()] == list(plain["key"])  # tags are not in the key
    rows, _ = run_cells(tagged, tmp_path / "tagged", progress=False)
    assert list(rows.columns[:2]) == ["world", "learner"] and set(rows["world"]) == {"w2"}
    assert rows.drop(columns=["world", "learner", "seconds"]).equals(plain.drop(columns="seconds"))
    stored = json.loads(next((tmp_path / "tagged" / "cells").glob("*.json")).read_text())
    assert "learner" not in stored and "world" not in stored
    with pytest.raises(ValueError, match=r"tags \['seed'\] name columns of the rows"):
        run_cells(spec({"seed": 1}, {}), tmp_path / "tagged", progress=False, resume=True)


def test_cells_that_run_alone_are_bounded_by_the_chunk_size():
    """A setting's seed stays in one task only where its cells may run as replicas."""
    from osfb_gym.bench.executors import _group, chunked
    from osfb_gym.bench.sweep import Cell

    def cell(agent: str, value: int, runner: str | None = None) -> Cell:
        return Cell("s", "OneSidedLending-v0", {}, agent, {"v": value}, 0, runner=runner)

    custom = [cell("x", v, runner="osfb_gym.bench.suites.experience:rl_cell") for v in range(5)]
    rl = [cell("PPO", v) for v in range(3)]
    grid = [cell("Greedy", v) for v in range(4)]
    assert [len(c) for c in chunked(custom + rl, 1, 1, key=_group)] == [1] * 8
    assert [len(c) for c in chunked(grid, 1, 1, key=_group)] == [4]  # one replica group
    ordered = sorted(custom + rl + grid, key=_group)  # one key type: sortable
    assert len(ordered) == 12


def test_a_cells_error_names_the_agent_env_and_seed():
    """A user's agent failing inside a task: the one-line error says which cell it was."""
    from osfb_gym.bench.executors import run_task
    from osfb_gym.bench.sweep import Cell

    cell = Cell("lending", "OneSidedLending-v0", {"horizon": -5}, "Greedy", {}, 3)
    with pytest.raises(
        (ValueError, TypeError), match=r"Greedy on OneSidedLending-v0 \(setting lending, seed 3\): "
    ):
        run_task(([cell], {}))
