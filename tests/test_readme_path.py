"""The README's "Your own repository in five minutes", run literally: every command of its
console block, in a fresh home and repository, prints what the README says it prints.

What differs from machine to machine is mapped, never ignored: the home directory prints
as `~`, each letter id the README shows stands for the id this run got (the same README id
always for the same real one), and the time of day of a letter is today's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
ID = re.compile(r"\b[0-9a-f]{12}\b")
MINUTE = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d\b")


def five_minute_steps() -> list[tuple[str, str]]:
    text = (PROJECT / "README.md").read_text()
    section = text[text.index("## Your own repository in five minutes"):]
    block = re.search(r"```console\n(.*?)```", section, re.S)[1]
    steps = []
    for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
        command, _, expected = chunk.partition("\n")
        steps.append((command, expected))
    return steps


def test_the_five_minute_path_prints_what_the_readme_says(tmp_path):
    home = tmp_path / "home"
    repo = home / "src" / "repo-a"
    repo.mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # `m1nd` on PATH, as `source .venv/bin/activate` puts it there.
    (bin_dir / "m1nd").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m m1nd "$@"\n')
    (bin_dir / "m1nd").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("M1ND_", "GIT_"))}
    env.update(HOME=str(home), PATH=f"{bin_dir}:{env['PATH']}", PYTHONPATH=str(PROJECT), COLUMNS="80",
               M1ND_AGENT="agent-a", M1ND_RULE_CACHE=str(tmp_path / "rules"), GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="agent-a", GIT_AUTHOR_EMAIL="agent-a@example.invalid",
               GIT_COMMITTER_NAME="agent-a", GIT_COMMITTER_EMAIL="agent-a@example.invalid")
    env.pop("NO_COLOR", None)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "start"], cwd=repo, check=True, env=env)

    ids: dict[str, str] = {}  # the README's id (or prefix) -> this run's id
    cwd = home
    steps = five_minute_steps()
    assert [c.split()[0] for c, _ in steps].count("m1nd") >= 6
    for command, expected in steps:
        if command.startswith("cd "):
            cwd = Path(command[3:].strip().replace("~", str(home), 1))
            assert expected == ""
            continue
        for shown, real in ids.items():
            command = re.sub(rf"\b{shown[:4]}[0-9a-f]*\b", real[:len(shown)] if len(shown) < 12 else real, command)
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr)
        printed = (done.stdout + done.stderr).replace(str(home), "~")
        for shown, real in zip(ID.findall(expected), ID.findall(printed)):
            assert ids.setdefault(shown, real) == real, command
        for shown, real in ids.items():
            printed = printed.replace(real, shown)
        printed = MINUTE.sub("TIME", printed)
        assert printed == MINUTE.sub("TIME", expected), command
    assert subprocess.run(["git", "status", "--short"], cwd=repo, env=env, capture_output=True,
                          text=True).stdout == "", "the commit carried the box"
