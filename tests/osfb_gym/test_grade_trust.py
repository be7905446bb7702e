"""The grader against attacks on its clocks, its seeds and public truth (issue 32).

Every stalling submission must be NOT GRADED within its time limit plus a
few seconds (the margin covers starting the agent's interpreter on a loaded
machine); every submission that reads public truth or searches a seed must
not be placed above the references. Each grading spawns the agent's
process, so the default run keeps one case of each kind and ``-m slow``
adds the rest.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from osfb_gym.core.seeding import spawn_seed
from osfb_gym.grade import Diagnosis, grade, run_submission
from osfb_gym.grade.boundary import unseeded
from osfb_gym.grade.integrity import IMPLAUSIBLE_FRACTION, implausible
from osfb_gym.grade.secret import bootstrap_dataset, grading_streams, secret_worlds
from tests.osfb_gym.submissions.attacks import (
    FLOODS_THE_REPORT,
    PUBLIC_TRUTH,
    SEARCHES_THE_SEED,
    SNOOPS_AROUND,
    STALLS,
)

LENDING = "OneSidedLending-v0"
SMALL = {"horizon": 60}
TIME_LIMIT = 2.0
#: seconds past the time limit a stalling submission may hold the grader, beyond the grader's
#: own cost of starting the agent's interpreter (measured below: seconds on a loaded machine)
MARGIN = 5.0
DATA_HOME = os.environ.get("OSFB_DATA", "")

HONEST = """\
import numpy as np

from agents.base import Agent


class ApprovesAll(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
"""


@pytest.fixture(scope="module")
def start_cost(tmp_path_factory):
    """Wall seconds to grade an honest agent's one-step episode: the grader's own overhead."""
    path = _write(tmp_path_factory.mktemp("honest"), "honest", HONEST)
    start = time.monotonic()
    grade(path, LENDING, n_seeds=1, env_kwargs={"horizon": 1}, out=None)
    return time.monotonic() - start


def _slow(*values):
    """A case run with ``-m slow`` only: each grading spawns a process (seconds)."""
    return pytest.param(*values, marks=pytest.mark.slow)


def _write(folder: Path, name: str, source: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(source)
    return path


# ---------------------------------------------------------------------------- clocks
@pytest.mark.parametrize(
    ("name", "kind", "phrase", "env_kwargs"),
    [
        ("sleeps_at_import", "timeout", "while importing the file", SMALL),
        _slow("sleeps_in_act", "timeout", "while running episode 1 of 1", SMALL),
        ("floods_stage_frames", "raises", "wrote to the grader's pipe itself", SMALL),
        # a forged frame that says what the sandbox would say is only a label: no more time
        _slow("one_forged_frame_then_sleeps", "timeout", "time limit of 2 s", SMALL),
        _slow("floods_output", "limit", "at most 1048576 bytes", SMALL),
        _slow("floods_the_pipe_with_junk", "raises", "something other than plain data", SMALL),
        ("never_answers", "timeout", "while running episode 1 of 1", SMALL),
        (
            "stops_reading_the_pipe",
            "timeout",
            "while running episode 1 of 1",
            {"horizon": 3, "batch_size": 4000},
        ),
    ],
)
def test_a_stalling_submission_is_not_graded_within_the_time_limit(
    tmp_path, start_cost, name, kind, phrase, env_kwargs
):
    path = _write(tmp_path, name, STALLS[name])
    start = time.monotonic()
    with pytest.raises(Diagnosis) as caught:
        grade(path, LENDING, n_seeds=1, env_kwargs=env_kwargs, out=None, time_limit=TIME_LIMIT)
    elapsed = time.monotonic() - start
    bound = TIME_LIMIT + MARGIN + start_cost
    assert elapsed < bound, f"{name} held the grader {elapsed:.1f} s (start: {start_cost:.1f} s)"
    assert caught.value.kind == kind, str(caught.value)
    assert phrase in caught.value.message
    assert str(caught.value).startswith("NOT GRADED: ")


def test_a_flood_of_text_is_cut_in_the_diagnosis(tmp_path):
    with pytest.raises(Diagnosis) as caught:
        grade(
            _write(tmp_path, "verbose", FLOODS_THE_REPORT),
            LENDING,
            n_seeds=1,
            env_kwargs=SMALL,
            out=None,
        )
    assert caught.value.kind == "raises" and "RuntimeError" in caught.value.message
    assert len(str(caught.value)) < 3000


def test_cli_refuses_a_public_world_seed(capsys):
    from osfb_gym.cli import main

    good = Path(__file__).parent / "submissions" / "good_agent.py"
    kwargs = '{"horizon": 10, "world_seed": 3}'
    assert main(["grade", str(good), "--env", LENDING, "--env-kwargs", kwargs]) == 2
    assert "world_seed" in capsys.readouterr().err


# ---------------------------------------------------------------------------- seeds
def test_the_agents_seed_is_not_derived_from_the_episodes_and_spaces_carry_no_state(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("OSFB_GRADER_SECRET", "a token of the grader's")
    folder = Path(tempfile.mkdtemp(prefix="osfb-snoop-"))
    folder.chmod(0o777)  # the agent's process may run as `nobody`
    report_path = folder / "found.jsonl"
    source = SNOOPS_AROUND.replace("REPORT_PATH", str(report_path))
    seeds, agent_seeds = [11, 12], [101, 102]
    _, trajectories = run_submission(
        _write(tmp_path, "snoop", source),
        LENDING,
        seeds=seeds,
        env_kwargs=SMALL,
        agent_seeds=agent_seeds,
    )
    found = [json.loads(line) for line in report_path.read_text().splitlines()]
    assert [entry["seed"] for entry in found] == agent_seeds  # the grader's, not the runner's
    derived = [spawn_seed(seed, 1) for seed in seeds]  # what the runner would have given
    assert not {entry["seed"] for entry in found} & set(derived)
    assert all(entry["unseeded"] == [True, True] for entry in found)
    for entry in found:  # none of the grader's variables, and its /proc is closed
        assert not {"OSFB_GRADER_SECRET", "OSFB_DATA", "PYTHONPATH"} & set(entry["variables"])
        assert entry["variables"]["HOME"] != os.environ.get("HOME")
        assert {entry[name] for name in ("environ", "mem", "maps")} == {"refused"}
    assert [t.seed for t in trajectories] == seeds


def test_grading_streams_are_independent_of_the_episode_seeds_and_reproducible():
    from osfb_gym.grade import held_out_seeds

    a, b = grading_streams(3, 7), grading_streams(3, 7)
    assert a.agent_seeds == b.agent_seeds and a.mode == "reproduction"
    episodes = held_out_seeds(3, 7)
    assert not set(a.agent_seeds) & {spawn_seed(seed, 1) for seed in episodes}
    assert not set(a.agent_seeds) & set(episodes)
    fresh = grading_streams(3, None)
    assert fresh.mode == "official" and fresh.agent_seeds != grading_streams(3, None).agent_seeds


@pytest.mark.slow
def test_a_seed_search_gains_nothing_in_an_official_grading(tmp_path):
    source = SEARCHES_THE_SEED.replace("N_SEEDS", "2")
    report = grade(
        _write(tmp_path, "search", source), LENDING, n_seeds=2, env_kwargs=SMALL, out=None
    )
    mine = report.results[report.results["agent"] == "SearchesTheSeed (yours)"]
    assert (mine["approval_rate"] == 1.0).all()  # it found nothing, so it approved everyone
    assert report.mode == "official" and "REPRODUCTION" not in str(report)


def test_a_seed_search_in_a_reproduction_is_suspicious_never_better(tmp_path):
    # a small seed can be searched (the grader's streams are public code): the cheat finds the
    # world and decides as Bayes, and the report says so instead of placing it
    source = SEARCHES_THE_SEED.replace("N_SEEDS", "2")
    report = grade(
        _write(tmp_path, "search", source), LENDING, n_seeds=2, env_kwargs=SMALL, out=None, seed=7
    )
    mine = report.results[report.results["agent"] == "SearchesTheSeed (yours)"]
    assert (mine["cumulative_loss"] == 0.0).all()  # the attack works on a small seed ...
    assert report.mode == "reproduction" and "REPRODUCTION" in str(report)
    assert report.suspicious and "shown every outcome" in report.suspicious[0]
    assert "better than" not in report.verdict and "SUSPICIOUS" in str(report)


# ---------------------------------------------------------------------------- public truth
def test_a_bootstrap_replicate_keeps_the_rows_and_changes_the_world():
    from osfb_gym.data import from_arrays

    rng = np.random.default_rng(0)
    data = from_arrays(rng.normal(size=(200, 3)), rng.integers(0, 2, 200), name="toy")
    copy = bootstrap_dataset(data, np.random.default_rng(1))
    assert copy.X.shape == data.X.shape and copy.name == "toy"
    rows = {tuple(row) for row in data.X}
    assert all(tuple(row) in rows for row in copy.X)
    assert len({tuple(row) for row in copy.X}) < 200  # drawn with replacement
    again = bootstrap_dataset(data, np.random.default_rng(1))
    assert np.array_equal(copy.X, again.X)  # the grader's entropy fixes it


def test_secret_worlds_refuse_a_public_world_seed_and_keep_synthetic_worlds():
    world = np.random.SeedSequence(0)
    with pytest.raises(ValueError, match="world_seed"):
        secret_worlds(LENDING, {"world_seed": 3}, world, 2)
    worlds, text = secret_worlds(LENDING, {"horizon": 5}, world, 2)
    assert worlds == [{"horizon": 5}] * 2 and "synthetic" in text


def test_secret_worlds_of_a_dataset_are_one_replicate_per_episode():
    from osfb_gym.data import from_arrays

    rng = np.random.default_rng(0)
    data = from_arrays(rng.normal(size=(50, 2)), rng.integers(0, 2, 50), name="toy")
    worlds, text = secret_worlds(LENDING, {"dataset": data}, np.random.SeedSequence(3), 3)
    replicates = [world["dataset"].X for world in worlds]
    assert not np.array_equal(replicates[0], replicates[1]) and "per episode" in text
    again, _ = secret_worlds(LENDING, {"dataset": data}, np.random.SeedSequence(3), 3)
    for first, second in zip(worlds, again, strict=True):  # the grader's entropy fixes them
        assert np.array_equal(first["dataset"].X, second["dataset"].X)


def test_unseeded_spaces_carry_no_generator_state():
    import gymnasium as gym

    space = gym.spaces.Dict({"a": gym.spaces.Discrete(2, seed=1), "b": gym.spaces.Box(0, 1)})
    space.seed(3)
    assert unseeded(space)["a"]._np_random is None and space["a"]._np_random is not None


def test_implausible_needs_every_episode_and_a_wide_margin():
    bound = {"Greedy (full)": {1: 10.0, 2: 10.0, 3: 10.0}}
    assert implausible({1: 1.0, 2: 2.0, 3: 0.0}, bound, lower_is_better=True)
    just_better = 10.0 * IMPLAUSIBLE_FRACTION + 0.1
    assert not implausible(
        {1: just_better, 2: just_better, 3: just_better}, bound, lower_is_better=True
    )
    assert not implausible({1: 0.0, 2: 0.0, 3: 11.0}, bound, lower_is_better=True)


needs_data = pytest.mark.skipif(
    not (Path(DATA_HOME) / "german_credit").is_dir() or not (Path(DATA_HOME) / "spambase").is_dir(),
    reason="needs the german_credit and spambase files under OSFB_DATA",
)


@needs_data
@pytest.mark.parametrize(
    ("name", "env_id", "dataset", "horizon"),
    [
        ("rebuilds_german_beta", LENDING, "german_credit", None),  # the whole stream
        _slow("looks_up_spambase_rows", "AppleTasting-v0", "spambase", 1000),  # 1000 of 4601
    ],
)
def test_public_truth_gets_no_better_than_honest_grade(tmp_path, name, env_id, dataset, horizon):
    # a seed keeps the test deterministic; the cheat does not use it (docs/grading.md gives the
    # measured spread over fresh gradings)
    source = PUBLIC_TRUTH[name].replace("DATA_HOME", DATA_HOME)
    report = grade(
        _write(tmp_path, name, source),
        env_id,
        n_seeds=4,
        env_kwargs={"dataset": dataset, "data_home": DATA_HOME, "horizon": horizon},
        out=None,
        time_limit=120,
        seed=2026,
    )
    assert "bootstrap replicate" in report.world
    assert "better than" not in report.verdict
    assert report.suspicious and "shown every outcome" in report.suspicious[-1]
