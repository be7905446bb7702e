"""Every example runs in fast mode and saves its plot, or says in one line what it needs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import skip_reason

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# the real datasets, where a copy is: $OSFB_DATA (CI sets it)
DATA = Path(os.environ.get("OSFB_DATA", ROOT / "no-data"))

# script -> (the plot it writes, extra arguments, slow)
SCRIPTS = {
    "quickstart.py": ("quickstart.png", [], False),
    "write_your_own_agent.py": ("own_agent.png", [], False),
    "reject_option_dsal.py": ("reject_option.png", [], False),
    "services_acquire.py": ("services_acquire.png", [], False),
    "reproduce_lending_tables.py": ("lending_table.png", [], False),
    "delayed_impact_lending.py": ("delayed_impact.png", [], False),
    # the paper's 2^18 text features: ~45 s
    "apple_tasting_spam.py": ("apple_tasting_spam.png", ["--data-home", str(DATA)], True),
    "rl_vs_adaptive.py": ("rl_vs_adaptive.png", [], True),  # imports torch: ~10 s
}


def run_script(
    name: str, out: Path, extra: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # the worktree first on the path, so the examples use this checkout's packages
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--fast", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=out,
        timeout=300,
    )


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.slow] if slow else [])
        for name, (_, _, slow) in SCRIPTS.items()
    ],
)
def test_example_runs_fast_and_saves_its_plot(name, tmp_path):
    plot, extra, _ = SCRIPTS[name]
    if "--data-home" in extra and not (DATA / "sms_spam").exists():
        pytest.skip(skip_reason("sms_spam"))
    done = run_script(name, tmp_path, extra)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / plot).read_bytes()[:4] == b"\x89PNG"
    assert "|---|" in done.stdout or "|:--" in done.stdout  # a results table was printed


def test_every_example_script_is_tested():
    assert {path.name for path in EXAMPLES.glob("*.py")} == set(SCRIPTS)


@pytest.mark.slow  # a child process that imports the bench: ~4 s of CPU
def test_an_example_without_its_dataset_says_what_it_needs(tmp_path):
    empty = tmp_path / "data"
    empty.mkdir()
    # no local copy anywhere it looks (and no download cache); offline, or with the
    # download refused, the script must stop before its table with one line
    env = {"OSFB_DATA": str(empty), "SCIKIT_LEARN_DATA": str(empty)}
    done = run_script("apple_tasting_spam.py", tmp_path, ["--data-home", str(empty)], env)
    if done.returncode == 0:
        pytest.skip("sms_spam was downloaded: this machine is online")
    assert done.stdout == ""  # not half a table
    assert done.stderr.startswith("apple_tasting_spam.py needs the sms_spam dataset: ")
    assert "Traceback" not in done.stderr
