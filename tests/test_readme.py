"""The README's first two commands are what a new user runs: keep them true."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def test_the_readme_opens_with_an_install_and_demo_command_then_a_test_command():
    first, second = readme_commands()[:2]
    assert "pip install ." in first and first.endswith("m1nd demo")
    assert "pip install -e '.[test]'" in second and second.endswith("pytest")


def test_ci_runs_exactly_the_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_commands()[1] in ci_lines


def test_the_readme_test_command_creates_the_virtual_environment_it_uses():
    second = readme_commands()[1]
    assert second.startswith("python3 -m venv .venv && ")
