"""The README's Python example runs as printed, and its test command is the one CI runs."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(capsys):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README has no python example"
    exec(compile(blocks[0], "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "PML" in out and "LdpComparison" in out


def test_readme_commands_match_ci():
    text = (ROOT / "README.md").read_text()
    first_screen = text[:3000]
    assert 'pip install -e ".[test]" && pml-design demo' in first_screen
    test_cmd = "python -m pytest -n 2 -q"
    assert test_cmd in first_screen
    assert test_cmd in (ROOT / ".ci" / "run").read_text()
