"""`m1nd demo`: a throwaway workspace that shows the whole idea in one screen.

It builds its own home, two small git repositories and a spool copied from the
shipped fixtures, then runs real `m1nd` commands in subprocesses against them.  The
user's real home is never read or written: every command runs with M1ND_HOME
pointing inside the workspace.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEMO_SPOOL = "worked-example.jsonl"
DEMO_NOW = "2026-05-03T09:00:00Z"


def fixtures_dir() -> Path:
    """The shipped spools: package data in a wheel, `fixtures/spools` in a checkout."""
    packaged = Path(__file__).parent / "_data" / "spools"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "fixtures" / "spools"


@dataclass(frozen=True)
class Step:
    cwd: str  # relative to the workspace
    args: tuple[str, ...]
    note: str


STEPS = (
    Step(".", ("roster", "add", "repo-a"), "register the two repositories as roots"),
    Step(".", ("roster", "add", "repo-b"), ""),
    Step("repo-a", ("write", "--class", "bug", "--tool", "seek", "--what", "seek ignores the depth limit"),
         "an agent inside repo-a writes a letter (repo defaults to this repository)"),
    Step(".", ("write", "--repo", "repo-c", "--class", "bug", "--what", "build cache never expires"),
         "a letter for a repository this machine does not have: it will wait in the spool"),
    Step(".", ("distribute",), "file every letter into the one box that owns it"),
    Step(".", ("sweep",), "the union of the spool and every box, with fates derived from replies"),
    Step(".", ("box", "repo-a"), "one box, scoped to its own letters"),
    Step(".", ("doctor",), "health checks and the mailbox block"),
)


def build_workspace(root: Path) -> dict[str, str]:
    """Lay out home, spool and two git repositories; return the environment to run in."""
    home = root / "home"
    home.mkdir(mode=0o700)
    shutil.copyfile(fixtures_dir() / DEMO_SPOOL, home / "field-reports.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "M1ND_"))}
    env.update(M1ND_HOME=str(home), M1ND_AGENT="agent-a", M1ND_NOW=DEMO_NOW, COLUMNS=env.get("COLUMNS", "110"))
    for name in ("repo-a", "repo-b"):
        repo = root / name
        repo.mkdir()
        if shutil.which("git"):
            subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        else:  # still a work tree for m1nd's purposes
            (repo / ".git").mkdir()
    return env


def run_demo(keep: bool, echo) -> int:
    workspace = Path(tempfile.mkdtemp(prefix="m1nd-demo-")).resolve()
    status = 0
    try:
        env = build_workspace(workspace)
        echo(f"# m1nd demo — a throwaway workspace with its own home (M1ND_HOME={workspace}/home),")
        echo("# two git repositories (repo-a, repo-b) and a spool of five letters, at the fixed time "
             f"{DEMO_NOW}.\n")
        for step in STEPS:
            if step.note:
                echo(f"# {step.note}")
            where = f"cd {step.cwd} && " if step.cwd != "." else ""
            echo(f"$ {where}m1nd {shlex.join(step.args)}", flush=True)
            done = subprocess.run([sys.executable, "-m", "m1nd", *step.args], cwd=workspace / step.cwd, env=env)
            if done.returncode not in (0, 1) or (done.returncode == 1 and step.args[0] != "doctor"):
                echo(f"# step failed with exit code {done.returncode}")
                status = 1
                break
            echo("")
        if keep:
            echo(f"# the workspace is kept at {workspace}")
    finally:
        if not keep:
            shutil.rmtree(workspace, ignore_errors=True)
    return status
