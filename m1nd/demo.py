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
    notes: tuple[str, ...] = ()  # comment lines shown before the command (new words explained here)
    program: str = "m1nd"  # or "git"
    capture: str = ""  # remember the command's output (a letter id) under this name

    def shown(self, values: dict[str, str] | None = None) -> str:
        args = [a.format(**values) if values else a for a in self.args]
        where = f"cd {self.cwd} && " if self.cwd != "." else ""
        return f"$ {where}{self.program} {shlex.join(args)}"


STEPS = (
    Step(".", ("roster", "add", "repo-a"), (
        "Two git repositories, repo-a and repo-b. A root is a repository m1nd may file",
        "letters into; the roster lists the roots of this machine.")),
    Step(".", ("roster", "add", "repo-b")),
    Step("repo-a", ("write", "--class", "bug", "--tool", "seek", "--what", "seek ignores the depth limit"), (
        "A letter is one line of JSON that an agent appends to the spool, one file that",
        "every agent on this machine writes to. Inside repo-a, the letter names repo-a.",
        "It prints the letter's id: the first 12 hex digits of the sha256 of its bytes."),
        capture="seek"),
    Step(".", ("write", "--repo", "repo-c", "--class", "bug", "--what", "build cache never expires"), (
        "A letter for a repository this machine does not have: it will wait.",)),
    Step(".", ("distribute",), (
        "distribute files each letter into exactly one box: repo-a's box is",
        "repo-a/.m1nd/inbox.jsonl. Letters that name no project go to the medulla box,",
        "a box private to this home. A letter for an unknown repository waits in the",
        "spool, filed once that repository is known.")),
    Step(".", ("sweep",), (
        "sweep reads the spool and every box. A letter's fate comes from its replies:",
        "open (nobody has replied), in flight (someone picked it up), answered (closed",
        "by a receipt: a reply of class triage), external (about a foreign tool, not",
        "ours to fix). The 'waiting to be filed' row counts letters still in the spool:",
        "waiting for their repository, or held (a letter that seems to carry a secret",
        "never goes into a project box). Misdelivered counts letters of class",
        "memory_misdelivery (a note that reached the wrong place).")),
    Step(".", ("show", "{seek}"), (
        "show prints one letter whole: every field, its box, its fate and its replies.",)),
    Step("repo-a", ("pickup", "{seek}", "--what", "looking into it"), (
        "pickup writes a reply that says someone is on it: the letter is in flight.",)),
    Step("repo-a", ("answer", "{seek}", "--what", "fixed in abc123", "--disposition", "fixed"), (
        "answer writes a receipt: the letter is answered.",
        "Replies are work done: they are listed under their letter, never as open work.")),
    Step(".", ("distribute",), (
        "Replies are letters too: distribute files them where their letter is.",)),
    Step(".", ("box", "repo-a", "--state", "all"), (
        "One box, scoped to its own letters: every letter, whatever its fate.",)),
    Step("repo-a", ("init",), (
        "Consent: until a repository runs m1nd init, its box stays out of git. After",
        "it, the box is committed with the code and travels to every clone.")),
    Step("repo-a", ("add", ".m1nd", ".gitattributes"), program="git"),
    Step("repo-a", ("commit", "-qm", "m1nd: the box travels with the code"), program="git"),
    Step("repo-a", ("hooks", "install"), (
        "Hooks file new letters after every checkout, merge and rebase, and say in one",
        "line when this repository's box has open letters.")),
    Step(".", ("write", "--repo", "repo-a", "--class", "ux", "--what", "the hook line is easy to miss"), (
        "Another letter arrives in the spool; then a branch switch in repo-a:",)),
    Step("repo-a", ("switch", "-q", "-c", "topic"), program="git"),
    Step(".", ("doctor",), (
        "doctor checks the spool, the boxes, the roster, waiting and held letters, and",
        "git. Its cases line counts fingerprints (the same symptom reported again) and",
        "kindless letters: letters with no symptom kind, which cases leave out.")),
)

START = (
    "# What next: your own repository in five minutes (the README section of that",
    "# name shows what each command prints). With m1nd on your PATH",
    "# (source .venv/bin/activate in the m1nd checkout):",
    "#",
    "#   cd ~/src/your-repo",
    "#   m1nd init                  # consent: its box travels with the code",
    "#   m1nd hooks install --stage # file letters on checkout, merge, rebase, commit",
    "#   m1nd write --what 'TEXT'   # agents may also append to the spool themselves,",
    "#                              # ~/.m1nd/field-reports.jsonl, one line per write",
    "#   m1nd sweep                 # read: open letters of every box, newest first",
    "#   m1nd show ID               # one letter whole",
    "#   m1nd help                  # every command, with examples",
)


def build_workspace(root: Path) -> dict[str, str]:
    """Lay out home, spool and two git repositories; return the environment to run in."""
    home = root / "home"
    home.mkdir(mode=0o700)
    shutil.copyfile(fixtures_dir() / DEMO_SPOOL, home / "field-reports.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "M1ND_"))}
    env.update(M1ND_HOME=str(home), M1ND_AGENT="agent-a", M1ND_NOW=DEMO_NOW, COLUMNS="80", NO_COLOR="1",
               GIT_AUTHOR_NAME="agent-a", GIT_AUTHOR_EMAIL="agent-a@example.invalid",
               GIT_COMMITTER_NAME="agent-a", GIT_COMMITTER_EMAIL="agent-a@example.invalid",
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, M1ND_PAGER="")
    for name in ("repo-a", "repo-b"):
        repo = root / name
        repo.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
        (repo / "README.md").write_text(f"# {name}\n")
        subprocess.run(["git", "add", "README.md"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "start"], cwd=repo, check=True, env=env)
    return env


def run_demo(keep: bool, echo) -> int:
    workspace = Path(tempfile.mkdtemp(prefix="m1nd-demo-")).resolve()
    status = 0
    values: dict[str, str] = {}
    try:
        if not shutil.which("git"):
            echo("# the demo needs git on PATH")
            return 1
        env = build_workspace(workspace)
        echo("# m1nd demo: a mailbox for the field reports coding agents write.")
        echo(f"# A throwaway workspace ({workspace}) with its own home, two")
        echo(f"# repositories and a spool of five letters, at the time {DEMO_NOW}.")
        echo("")
        for step in STEPS:
            for note in step.notes:
                echo(f"# {note}")
            echo(step.shown(values), flush=True)
            args = [a.format(**values) for a in step.args]
            argv = ["git", *args] if step.program == "git" else [sys.executable, "-m", "m1nd", *args]
            if step.capture:
                done = subprocess.run(argv, cwd=workspace / step.cwd, env=env, stdout=subprocess.PIPE)
                out = done.stdout.decode()
                echo(out.rstrip("\n"))
                values[step.capture] = out.strip()
            else:
                done = subprocess.run(argv, cwd=workspace / step.cwd, env=env)
            if done.returncode not in (0, 1) or (done.returncode == 1 and step.args[0] != "doctor"):
                echo(f"# step failed with exit code {done.returncode}")
                status = 1
                break
            echo("")
        if not status:
            for line in START:
                echo(line)
        if keep:
            echo(f"# the workspace is kept at {workspace}")
    finally:
        if not keep:
            shutil.rmtree(workspace, ignore_errors=True)
    return status
