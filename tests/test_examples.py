"""Every example runs in fast mode and saves its plot; the notebook's code cells run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import osfb_data, skip_reason

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# The real datasets, from $OSFB_DATA only (None when unset: the example skips).
SHARED_DATA = osfb_data("sms_spam")

# script -> (the plot it writes, extra arguments, slow)
SCRIPTS = {
    "quickstart.py": ("quickstart.png", [], False),
    "write_your_own_agent.py": ("own_agent.png", [], False),
    "reject_option_dsal.py": ("reject_option.png", [], False),
    "services_acquire.py": ("services_acquire.png", [], False),
    "reproduce_lending_tables.py": ("lending_table.png", [], False),
    "apple_tasting_spam.py": ("apple_tasting_spam.png", ["--data-home", str(SHARED_DATA)], False),
    "rl_vs_adaptive.py": ("rl_vs_adaptive.png", [], True),  # imports torch: ~10 s
}


def run_script(name: str, out: Path, extra: list[str]) -> str:
    # the worktree first on the path, so the examples use this checkout's packages
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--fast", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=out,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.slow] if slow else [])
        for name, (_, _, slow) in SCRIPTS.items()
    ],
)
def test_example_runs_fast_and_saves_its_plot(name, tmp_path):
    plot, extra, _ = SCRIPTS[name]
    if "--data-home" in extra and SHARED_DATA is None:
        pytest.skip(skip_reason("sms_spam"))
    printed = run_script(name, tmp_path, extra)
    assert (tmp_path / plot).read_bytes()[:4] == b"\x89PNG"
    assert "|---|" in printed or "|:--" in printed  # a results table was printed


def test_every_example_script_is_tested():
    assert {path.name for path in EXAMPLES.glob("*.py")} == set(SCRIPTS)


def test_quickstart_notebook_is_valid_and_its_code_runs(tmp_path, monkeypatch, capsys):
    notebook = json.loads((EXAMPLES / "quickstart.ipynb").read_text())
    assert notebook["nbformat"] == 4
    cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert cells and all(cell["outputs"] == [] for cell in cells)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for cell in cells:
        source = "".join(cell["source"]).replace("FAST = False", "FAST = True")
        exec(compile(source, "quickstart.ipynb", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "cumulative one-sided loss" in printed and "greedy trap" in printed
    assert (tmp_path / "examples-output" / "quickstart_notebook.png").exists()
