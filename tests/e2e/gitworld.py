"""Shared helpers for the git-operation scenarios: real repositories, a shared remote,
real `git` runs with m1nd's shims installed, and the one invariant every scenario
checks: after a safe filing, every letter is in exactly the box it belongs to."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from pathlib import Path

import orjson

from conftest import write_spool
from m1nd.letters import letter_id


def git(repo, *args, check=True, env=None, input=None, cwd=None) -> subprocess.CompletedProcess:
    done = subprocess.run(["git", *args], cwd=cwd or repo, capture_output=True, text=True, env=env, input=input,
                          timeout=120)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def m1nd(*args, cwd, env=None) -> subprocess.CompletedProcess:
    """`m1nd ARGS` as a real process (what a user types)."""
    return subprocess.run([sys.executable, "-m", "m1nd", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


_serial = [0]


def letter(what: str, repo: str = "repo-a") -> dict:
    _serial[0] += 1
    return {"ts": f"2026-05-01T10:00:{_serial[0] % 60:02d}Z", "agent": "agent-a", "class": "bug", "repo": repo,
            "what": f"{what} #{_serial[0]}"}


def write_letters(spool: Path, *whats: str, repo: str = "repo-a") -> list[str]:
    """Append letters to the spool; returns their ids."""
    lines = [letter(w, repo) for w in whats]
    write_spool(spool, lines)
    return [letter_id(orjson.dumps(l)) for l in lines]


def box_path(repo: Path) -> Path:
    return repo / ".m1nd" / "inbox.jsonl"


def box_ids(repo: Path) -> collections.Counter:
    path = box_path(repo)
    if not path.exists():
        return collections.Counter()
    return collections.Counter(letter_id(l.rstrip(b"\r")) for l in path.read_bytes().split(b"\n") if l.strip())


def spool_ids(spool: Path, repo_label: str) -> list[str]:
    out = []
    if not spool.exists():
        return out
    for line in spool.read_bytes().split(b"\n"):
        if line.strip() and orjson.loads(line).get("repo") == repo_label:
            out.append(letter_id(line))
    return out


def assert_each_letter_once(repo: Path, ids, why: str = "") -> None:
    have = box_ids(repo)
    missing = [i for i in ids if have[i] == 0]
    twice = [i for i in ids if have[i] > 1]
    assert not missing and not twice, f"{why}: missing {missing}, twice {twice} in {repo}"


def clean(repo: Path) -> bool:
    return git(repo, "status", "--porcelain").stdout == ""


def commit_file(repo: Path, name: str, text: str, message: str) -> None:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-qm", message)


def consent(repo: Path, env=None) -> None:
    done = m1nd("init", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    git(repo, "add", ".m1nd", ".gitattributes")
    git(repo, "commit", "-qm", "m1nd: the box travels with the code")


def install_hooks(repo: Path, *extra: str, env=None) -> None:
    done = m1nd("hooks", "install", *extra, str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def other_home_env(tmp_path: Path, name: str) -> dict:
    """The environment of a second machine: its own m1nd home (and spool)."""
    home = tmp_path / f"m1nd-home-{name}"
    return {**os.environ, "M1ND_HOME": str(home)}
