"""The README's Python example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})
    assert "cumulative one-sided loss" in capsys.readouterr().out


def test_readme_quickstart_names_the_two_commands():
    text = README.read_text()
    assert 'pip install -e ".[test]" && osfb-bench run quick' in text
    assert "python -m pytest" in text
